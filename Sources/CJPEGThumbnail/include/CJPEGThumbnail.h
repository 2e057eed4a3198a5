// Downscaled JPEG thumbnails with libjpeg(-turbo): decoded at 1/2, 1/4 or 1/8
// scale (the DCT does the scaling, so a large photo costs little), encoded
// again at quality 80. Corrupt input returns an error, never exits.
#ifndef CJPEG_THUMBNAIL_H
#define CJPEG_THUMBNAIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Reads the JPEG open at `fd` (from its current offset) and writes a
/// thumbnail whose longer side is at most about `max_side` pixels (at most
/// twice that for images smaller than 8 times `max_side`) into a buffer
/// allocated with malloc. Returns 0, or -1 when the input is not a JPEG
/// libjpeg can decode.
int cjt_thumbnail(int fd, int max_side, unsigned char **out, unsigned long *out_size);

/// Encodes RGB pixels (3 bytes each, rows top to bottom) as a JPEG into a
/// buffer allocated with malloc. Returns 0, or -1 on failure.
int cjt_encode_rgb(const unsigned char *pixels, unsigned int width, unsigned int height, int quality,
                   unsigned char **out, unsigned long *out_size);

#ifdef __cplusplus
}
#endif
#endif
