// JPEG decoding at reduced scale and encoding with libjpeg-turbo's TurboJPEG
// library, loaded at run time with dlopen: building needs no JPEG header or
// library, and a machine without libturbojpeg runs everything else. Decoded
// at 1/2, 1/4 or 1/8 scale (the DCT does the scaling, so a large photo costs
// little). Corrupt input returns an error, never exits.
//
// TurboJPEG 2.x can neither bound a decode's memory nor stop it on time, so
// every decode is judged first from the file's own headers (`cjt_inspect`):
// its declared pixels, the memory libjpeg will allocate for it (a
// progressive or multi-scan file keeps whole-image coefficient buffers, 2
// bytes a sample whatever the DCT scale) and the work its scans ask for,
// each against a budget below; a file over one is refused before the
// library sees it.
#ifndef CJPEG_THUMBNAIL_H
#define CJPEG_THUMBNAIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The TurboJPEG functions of one loaded library. Immutable once loaded;
/// every call makes its own TurboJPEG handles, so any number of threads may
/// use one codec at once.
typedef struct cjt_codec cjt_codec;

/// Loads the TurboJPEG library `name` (a file name the dynamic linker
/// searches for, or a path) and resolves the functions used here. Returns
/// NULL when the library or one of its functions is missing, with the
/// dynamic linker's reason in `message` (at most `message_size` bytes,
/// NUL-terminated).
cjt_codec *cjt_codec_open(const char *name, char *message, size_t message_size);

/// Releases a codec from `cjt_codec_open` (the library stays loaded while
/// another codec holds it).
void cjt_codec_close(cjt_codec *codec);

/// The largest JPEG read into memory (TurboJPEG decodes from memory).
#define CJT_MAX_INPUT 67108864L // 64 MiB
/// The most pixels a JPEG may declare, as for the kinds read row by row
/// (16384×16384): a baseline file decodes in rows at 1/8 scale, and its
/// time grows with its blocks.
#define CJT_MAX_DECLARED_PIXELS 268435456L
/// The most memory a decode may allocate besides the file itself: the
/// whole-image coefficient buffers of a progressive or multi-scan file, the
/// scaled output and its working rows. 80 MiB holds a progressive photo of
/// 27 megapixels with the usual 4:2:0 chroma (3 bytes a pixel), 13 with full
/// chroma (6 bytes), 41 in greyscale; a baseline file needs none of it but
/// its output (at most 12 MiB at 1/8 scale).
#define CJT_MAX_MEMORY 83886080L // 80 MiB
/// What a block costs in a scan besides the coefficients walked, in the
/// units of `cjt_frame.work` (one coefficient walked). Measured with
/// libjpeg-turbo 2.1.5: a block costs 10 to 23 ns in a scan that skips it,
/// refines one coefficient or decodes its DC, 19 ns in a baseline file at
/// 1/8 scale, and about 1 ns more for each coefficient a refinement scan
/// walks (71 ns for a band of 63): a unit is at most about 1 ns.
#define CJT_WORK_PER_BLOCK 24
/// The most work a decode may ask for: 2^30 units, about a second of CPU
/// (a 2,000×2,000 file of 400 refinement scans, 2.0 × 2^30 units, took 1.8 s
/// here); seven times or more what the largest progressive photo within
/// `CJT_MAX_MEMORY` needs with libjpeg's usual 10 scans (a 12-megapixel
/// one: 0.06 × 2^30), three times a baseline 16384×16384 file with full chroma.
#define CJT_MAX_WORK 1073741824LL // 2^30
/// The most scans, as libjpeg-turbo's own `TJFLAG_LIMITSCANS` (also passed):
/// a progressive file of libjpeg's making has about 10.
#define CJT_MAX_SCANS 500

/// What a JPEG's headers declare and what decoding it will cost, read from
/// its markers alone (no decoding): its frame (SOF), its scans (SOS) and
/// the memory and work they imply.
typedef struct cjt_frame {
    /// The frame marker's second byte: 0xC0 baseline, 0xC2 progressive, 0xC9 arithmetic…
    int marker;
    int precision;
    int width;
    int height;
    int components;
    int max_h;
    int max_v;
    int progressive;
    int arithmetic;
    /// Whether libjpeg keeps whole-image coefficient buffers: a progressive
    /// file, or one whose first scan lacks a component.
    int whole_image;
    int scans;
    /// The image's 8×8 blocks, all components, rounded up to whole MCUs.
    uint64_t blocks;
    /// The whole-image coefficient buffers' size, in bytes (0 when the file streams).
    uint64_t coefficient_bytes;
    /// The decoding work its scans ask for, summed over the scans: each
    /// block a scan holds weighs `CJT_WORK_PER_BLOCK`, plus its band's
    /// coefficients where the decoder walks them without data (a
    /// progressive refinement scan, arithmetic coding). `cjt_decode` adds
    /// each block's inverse DCT at the scale chosen, a unit a pixel.
    uint64_t work;
    /// Filled by `cjt_decode`: the memory the decode would take (see `CJT_MAX_MEMORY`).
    uint64_t memory;
} cjt_frame;

/// Reads the markers of the JPEG in `bytes` (`size` bytes), as libjpeg
/// will, into `frame`. Returns 0, or -1 when it is not a JPEG libjpeg could
/// decode: no SOI, a second SOI or frame, no frame before the first scan,
/// a size of 0, a component count or sampling factor out of range.
int cjt_inspect(const unsigned char *bytes, unsigned long size, cjt_frame *frame);

/// What `cjt_decode` did.
typedef enum cjt_status {
    CJT_DECODED = 0,
    /// Not a JPEG the library can decode to RGB (CMYK is not), or damaged.
    CJT_NOT_DECODABLE = -1,
    /// Refused before decoding: over `CJT_MAX_INPUT` or `CJT_MAX_DECLARED_PIXELS`.
    CJT_TOO_LARGE = -2,
    /// Refused before decoding: over `CJT_MAX_MEMORY`.
    CJT_TOO_MUCH_MEMORY = -3,
    /// Refused before decoding: over `CJT_MAX_WORK` or `CJT_MAX_SCANS`.
    CJT_TOO_MUCH_WORK = -4,
} cjt_status;

/// Decodes the JPEG open at `fd` (from offset 0, at most `CJT_MAX_INPUT`),
/// or the `size` bytes at `bytes` when `bytes` is not NULL, to RGB pixels
/// (3 bytes each) at the smallest of 1/1, 1/2, 1/4 or 1/8 scale whose
/// longer side is still at least `max_side` (the DCT does the scaling),
/// into a buffer allocated with malloc, once its headers are within every
/// budget above. `frame` (which may be NULL) gets what the headers declare
/// and the memory the decode would take.
cjt_status cjt_decode(const cjt_codec *codec, int fd, const unsigned char *bytes, unsigned long size, int max_side,
                      unsigned char **pixels, int *width, int *height, cjt_frame *frame);

/// Encodes RGB pixels (3 bytes each, rows top to bottom) as a JPEG (4:2:0;
/// progressive when `progressive` is not 0, libjpeg's usual 10 scans) into a
/// buffer allocated with malloc. Returns 0, or -1 on failure.
int cjt_encode_rgb(const cjt_codec *codec, const unsigned char *pixels, unsigned int width, unsigned int height,
                   int quality, int progressive, unsigned char **out, unsigned long *out_size);

#ifdef __cplusplus
}
#endif
#endif
