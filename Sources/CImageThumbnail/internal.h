// What the decoders share: how a library is loaded and its functions
// resolved, the reading of an input, and the box-filter scaler.
#ifndef CIT_INTERNAL_H
#define CIT_INTERNAL_H

#include "CImageThumbnail.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/types.h>

enum cit_kind { CIT_PNG = 1, CIT_WEBP, CIT_GIF, CIT_HEIF, CIT_ZLIB };

/// The head of every kind's library struct, which follows it in memory:
/// `cit_library_close` needs only this.
struct cit_library {
    enum cit_kind kind;
    void *handle;
};

void cit_copy_message(char *message, size_t size, const char *text);

/// Ends what cit_heif_open set up in libheif (before its handle is closed).
void cit_heif_release(cit_library *library);

/// libheif's suberror for a security limit exceeded.
#define CIT_HEIF_SECURITY_LIMIT 1000

/// Puts a size check around the HEVC decoder of the libheif loaded at
/// `handle` (once per load), and a refusal before any other codec's
/// (hevc.c). Returns 0, or -1 with the reason in `message`.
int cit_heif_wrap_decoders(void *handle, char *message, size_t message_size);

/// The picture size and luma bit depth an HEVC sequence parameter set (a
/// NAL unit of `size` bytes, its 2-byte header first) declares. Returns 0,
/// or -1 when it is no SPS or ends too soon.
int cit_hevc_picture(const unsigned char *nal, size_t size, uint64_t *width, uint64_t *height, int *bit_depth);

/// dlopen with the message on failure.
void *cit_dlopen(const char *name, char *message, size_t message_size);

/// Resolves `symbol` in `library->base.handle` into the function pointer
/// `field`; on a missing required symbol, closes the library and returns
/// NULL from the enclosing open function. dlsym's object pointer becomes a
/// function pointer through memcpy, the conversion POSIX guarantees and
/// strict C leaves alone.
#define CIT_RESOLVE(library, field, symbol, required, message, message_size)                                           \
    do {                                                                                                               \
        void *address = dlsym((library)->base.handle, symbol);                                                         \
        if (!address && (required)) {                                                                                  \
            cit_copy_message(message, message_size, dlerror());                                                        \
            cit_library_close(&(library)->base);                                                                       \
            return NULL;                                                                                               \
        }                                                                                                              \
        memcpy(&(library)->field, &address, sizeof address);                                                           \
    } while (0)

/// The input's size in bytes, or -1 when it is not a regular file.
long long cit_input_size(cit_input input);

/// Reads up to `count` bytes at `offset`; the bytes read, 0 at the end, -1 on error.
ssize_t cit_input_read(cit_input input, void *buffer, size_t count, long long offset);

/// Whether the input's deadline has passed (checked every 64 rows: a
/// clock read per row would cost more than the row).
int cit_past_deadline(cit_input input, long row);

/// The whole input, at most CIT_MAX_INPUT bytes, malloc'ed (or the bytes
/// in memory themselves, not copied: then `*owned` is 0).
unsigned char *cit_input_whole(cit_input input, size_t *size, int *owned);

/// Sums of source pixels for each thumbnail pixel: memory in proportion to
/// the thumbnail, whatever the image's size, and rows in any order (GIF's
/// interlacing, PNG's last Adam7 pass).
typedef struct cit_scaler {
    int source_width, source_height;
    int width, height;
    uint64_t *sums;  // red, green, blue, count for each thumbnail pixel
    int *columns;    // the thumbnail column of each source column
} cit_scaler;

int cit_scaler_init(cit_scaler *scaler, long source_width, long source_height, int max_side);

/// Adds `count` pixels of source row `y` (4 bytes each, RGBA, composed
/// over white by their alpha) at columns first_x, first_x + step_x, ….
void cit_scaler_add_rgba(cit_scaler *scaler, long y, const unsigned char *pixels, long first_x, int step_x, long count);

/// Adds `count` RGB pixels (3 bytes each) of source row `y` from column 0.
void cit_scaler_add_rgb(cit_scaler *scaler, long y, const unsigned char *pixels, long count);

/// The averages (white where no source pixel fell); frees the sums.
int cit_scaler_finish(cit_scaler *scaler, cit_image *out);

void cit_scaler_free(cit_scaler *scaler);

#endif
