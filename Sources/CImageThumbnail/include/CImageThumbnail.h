// Thumbnails of PNG, WebP, GIF and HEIF images, and the inflating of ZIP
// entries, with libpng16, libwebp, giflib, libheif and zlib loaded at run
// time with dlopen: building needs no image header or library, and a
// machine without one of them makes every thumbnail but that kind's.
//
// Every decoder writes into a box-filter scaler (`cit_scaler`) that keeps
// one sum per thumbnail pixel, never the whole image: PNG and GIF are read
// row by row, WebP is decoded at the thumbnail's size by libwebp's own
// scaler. HEIF, which libheif decodes whole, and a lossless WebP hold a
// full image. Each decode is judged from the image's header first, its
// declared pixels and the memory its decoder will take against the budgets
// below; PNG and GIF are given up at a deadline. Corrupt input returns an
// error, never exits.
#ifndef CIMAGE_THUMBNAIL_H
#define CIMAGE_THUMBNAIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the thumbnail functions return.
enum {
    /// The thumbnail is made.
    CIT_MADE = 0,
    /// Not an image the library decodes, or damaged before its first row.
    CIT_FAILED = -1,
    /// Refused before decoding: the image declares more than a budget
    /// below allows (`cit_image.declared_*` and `memory` say what).
    CIT_TOO_COSTLY = -2,
    /// Given up at the input's deadline (PNG and GIF, read in rows).
    CIT_TIMED_OUT = -3,
};

/// The most pixels an image read row by row (PNG, GIF, lossy WebP) may
/// declare: a 60000×60000 decompression bomb is refused before any row.
#define CIT_MAX_STREAMED_PIXELS 268435456L // 256 Mi
/// The widest image scaled: its rows and column map stay a few MiB.
#define CIT_MAX_WIDTH 1048576L
/// The most memory a decode may take besides the file itself (and besides
/// the thumbnail's sums, 32 bytes a thumbnail pixel): its rows, and for the
/// kinds decoded whole (HEIF, lossless WebP, a WebP's alpha plane, a small
/// interlaced PNG) the whole image, as each decoder lays it out. The same
/// budget as a JPEG's (`CJT_MAX_MEMORY`): a lossless WebP of 20 megapixels
/// (4 bytes a pixel), a lossy one with an alpha plane of 40.
#define CIT_MAX_MEMORY 83886080L // 80 MiB
/// What libheif holds for a pixel of an image it decodes whole, at its
/// peak, 8 bits a sample (twice that at 10 or 12 bits): the HEVC decoder's
/// picture and its per-block data, libheif's copy, the RGB image it
/// converts that to. Measured: a 4000×3000 HEIC without a thumbnail raised
/// a process's peak by 117 MiB, 10 MiB of it the file's data.
#define CIT_HEIF_BYTES_PER_PIXEL 10
/// The most memory a HEIF decode may take besides the file: more than the
/// others' `CIT_MAX_MEMORY`, for libheif decodes whole what has no embedded
/// thumbnail, and a phone's 12-megapixel photo (4032×3024) needs 116 MiB.
#define CIT_MAX_HEIF_MEMORY 134217728L // 128 MiB
/// The largest file or ZIP entry read into memory (WebP, HEIF).
#define CIT_MAX_INPUT 67108864L // 64 MiB

/// Where an image is read from: the file open at `fd` (from offset 0), or
/// `size` bytes in memory at `bytes` when `bytes` is not NULL; and when a
/// decode read row by row (PNG, GIF) gives up, so a slow image holds a
/// decode slot for a bounded time: at `deadline` on the decoding thread's
/// CPU clock (see `cit_now`), or at `wall_deadline` on the monotonic clock
/// (see `cit_wall_now`), in nanoseconds (0: never). The CPU clock is the
/// bound that matters: a file that is costly to decode spends CPU, and a
/// machine loaded by other work does not make a good file fail; the wall
/// clock is the backstop for reads that wait.
typedef struct cit_input {
    int fd;
    const unsigned char *bytes;
    size_t size;
    int64_t deadline;
    int64_t wall_deadline;
} cit_input;

/// The calling thread's CPU time, in nanoseconds: what `cit_input.deadline`
/// is read against (the decode runs on the thread that calls it).
int64_t cit_now(void);

/// The monotonic clock, in nanoseconds: what `cit_input.wall_deadline` is read against.
int64_t cit_wall_now(void);

/// A thumbnail's pixels: RGB, 3 bytes each, rows top to bottom, allocated
/// with malloc. `exif` is the TIFF block of a PNG's eXIf chunk, if any (for
/// its orientation), also malloc'ed.
typedef struct cit_image {
    unsigned char *pixels;
    int width;
    int height;
    unsigned char *exif;
    size_t exif_size;
    /// The size the image declares, once read (for the message of a refusal).
    long declared_width;
    long declared_height;
    /// The memory the decode would take besides the file (see `CIT_MAX_MEMORY`), once known.
    uint64_t memory;
    /// Why a refusal was made, when the size declared does not say it (a
    /// static string, for a person).
    const char *refusal;
} cit_image;

/// Frees what `image` holds (not `image` itself).
void cit_image_free(cit_image *image);

/// The thumbnail's size for an image of `width`×`height` whose longer side
/// must be at most `max_side`: the image's own size when it is smaller (no
/// enlarging), else scaled to fit with its aspect kept, at least 1×1.
void cit_fit(long width, long height, int max_side, int *out_width, int *out_height);

/// Box-filters RGB pixels (3 bytes each) down to fit `max_side`.
/// Returns 0, or -1 when out of memory.
int cit_scale_rgb(const unsigned char *pixels, int width, int height, int max_side, cit_image *out);

/// A loaded library: which one is told by the function that opened it.
typedef struct cit_library cit_library;

/// Loads one of the libraries (`name`: a file name the dynamic linker
/// searches for, or a path) and resolves its functions. Returns NULL when
/// the library or a function is missing, with the dynamic linker's reason
/// in `message` (at most `message_size` bytes, NUL-terminated).
cit_library *cit_png_open(const char *name, char *message, size_t message_size);
cit_library *cit_webp_open(const char *name, char *message, size_t message_size);
cit_library *cit_gif_open(const char *name, char *message, size_t message_size);
cit_library *cit_heif_open(const char *name, char *message, size_t message_size);
cit_library *cit_zlib_open(const char *name, char *message, size_t message_size);

/// Releases a library from one of the `cit_*_open` functions.
void cit_library_close(cit_library *library);

/// Thumbnails whose longer side is at most `max_side`, from a library of
/// the matching kind. Each returns `CIT_MADE`, `CIT_FAILED` when the input
/// is not an image that library decodes or is damaged before its first
/// row, `CIT_TOO_COSTLY` when it declares more than the budgets above
/// allow, `CIT_TIMED_OUT` past its deadline. A PNG or GIF cut short keeps
/// the rows it had.
int cit_png_thumbnail(const cit_library *png, cit_input input, int max_side, cit_image *out);
int cit_webp_thumbnail(const cit_library *webp, cit_input input, int max_side, cit_image *out);
int cit_gif_thumbnail(const cit_library *gif, cit_input input, int max_side, cit_image *out);
/// HEIF and HEIC: the largest embedded thumbnail whose longer side is at
/// least `max_side`, or else the primary image decoded whole (within
/// `CIT_MAX_HEIF_MEMORY`, on the calling thread: libheif starts no thread
/// of its own for a grid's tiles). The size the file declares is judged
/// first, then each HEVC picture's own size before it is decoded (libheif
/// decodes at the latter); only HEVC is decoded. Its rotation and
/// mirroring (irot, imir) are applied by libheif.
int cit_heif_thumbnail(const cit_library *heif, cit_input input, int max_side, cit_image *out);

/// Inflates the raw DEFLATE data of `compressed_size` bytes at `offset` in
/// the file open at `fd`, read 64 KiB at a time, into `out`: `capacity`
/// bytes, the size the entry declares, so the content is held once. The
/// bytes written go in `out_size`. Returns 0, or -1 when the data is
/// damaged, ends early, or inflates to more than `capacity` bytes (a bomb
/// stops there).
int cit_inflate(const cit_library *zlib, int fd, int64_t offset, int64_t compressed_size, unsigned char *out,
                size_t capacity, size_t *out_size);

/// Test support: encodes RGB pixels as a HEIC with libheif's HEVC encoder,
/// with `orientation` (1 to 8, as EXIF's) stored as irot/imir, and, when
/// `thumbnail_pixels` is not NULL, a thumbnail of `thumbnail_side` pixels
/// made from those pixels (of the same size as the image). Returns 0, or
/// -1 when libheif has no HEVC encoder.
int cit_heif_encode(const cit_library *heif, const unsigned char *pixels, int width, int height, int orientation,
                    const unsigned char *thumbnail_pixels, int thumbnail_side, const char *path);

#ifdef __cplusplus
}
#endif
#endif
