// JPEG decoding at reduced scale and encoding with libjpeg-turbo's TurboJPEG
// library, loaded at run time with dlopen: building needs no JPEG header or
// library, and a machine without libturbojpeg runs everything else. Decoded
// at 1/2, 1/4 or 1/8 scale (the DCT does the scaling, so a large photo costs
// little). Corrupt input returns an error, never exits.
#ifndef CJPEG_THUMBNAIL_H
#define CJPEG_THUMBNAIL_H

#include <stddef.h>

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

/// Decodes the JPEG open at `fd` (from offset 0, at most 64 MiB), or the
/// `size` bytes at `bytes` when `bytes` is not NULL, to RGB pixels (3 bytes
/// each) at the smallest of 1/1, 1/2, 1/4 or 1/8 scale whose longer side is
/// still at least `max_side` (the DCT does the scaling), into a buffer
/// allocated with malloc. Returns 0, or -1 when the input is not a JPEG the
/// library can decode to RGB (CMYK is not), or is too large.
int cjt_decode(const cjt_codec *codec, int fd, const unsigned char *bytes, unsigned long size, int max_side,
               unsigned char **pixels, int *width, int *height);

/// Encodes RGB pixels (3 bytes each, rows top to bottom) as a JPEG into a
/// buffer allocated with malloc. Returns 0, or -1 on failure.
int cjt_encode_rgb(const cjt_codec *codec, const unsigned char *pixels, unsigned int width, unsigned int height,
                   int quality, unsigned char **out, unsigned long *out_size);

#ifdef __cplusplus
}
#endif
#endif
