#include "CJPEGThumbnail.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// The part of the TurboJPEG API (turbojpeg.h of libjpeg-turbo 1.4 and
// later) used here, declared by hand so that no header is needed to build:
// its handles are opaque and its functions take plain C types, so these
// declarations are the stable ABI the library's symbol versions promise.
typedef void *tj_handle;
typedef struct { int num; int denom; } tj_scaling_factor;

enum { TJ_SAMP_420 = 2, TJ_SAMP_GRAY = 3 };
enum { TJ_PF_RGB = 0, TJ_PF_GRAY = 6 };
enum { TJ_CS_GRAY = 2, TJ_CS_CMYK = 3, TJ_CS_YCCK = 4 };
// TJFLAG_LIMITSCANS (libjpeg-turbo 2.1 and later; an older library ignores
// it): more than 500 scans is an error.
enum { TJ_FLAG_FASTDCT = 2048, TJ_FLAG_PROGRESSIVE = 16384, TJ_FLAG_LIMITSCANS = 32768 };
enum { TJ_ERR_WARNING = 0 };

struct cjt_codec {
    void *library;
    tj_handle (*init_decompress)(void);
    int (*decompress_header3)(tj_handle, const unsigned char *, unsigned long, int *, int *, int *, int *);
    tj_scaling_factor *(*scaling_factors)(int *);
    int (*decompress2)(tj_handle, const unsigned char *, unsigned long, unsigned char *, int, int, int, int, int);
    tj_handle (*init_compress)(void);
    int (*compress2)(tj_handle, const unsigned char *, int, int, int, int, unsigned char **, unsigned long *, int,
                     int, int);
    void (*free_buffer)(unsigned char *);
    int (*destroy)(tj_handle);
    // libjpeg-turbo 2.0 and later; without it every failure counts as fatal.
    int (*error_code)(tj_handle);
};


static void copy_message(char *message, size_t size, const char *text) {
    if (!message || size == 0) return;
    if (!text) text = "unknown error";
    size_t length = strlen(text);
    if (length >= size) length = size - 1;
    memcpy(message, text, length);
    message[length] = 0;
}

cjt_codec *cjt_codec_open(const char *name, char *message, size_t message_size) {
    copy_message(message, message_size, "");
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        copy_message(message, message_size, dlerror());
        return NULL;
    }
    cjt_codec *codec = calloc(1, sizeof *codec);
    if (!codec) {
        dlclose(library);
        copy_message(message, message_size, strerror(ENOMEM));
        return NULL;
    }
    codec->library = library;
    // dlsym's object pointer becomes a function pointer through memcpy, the
    // conversion POSIX guarantees and strict C leaves alone.
#define CJT_RESOLVE(field, symbol, required)                                                                           \
    do {                                                                                                               \
        void *address = dlsym(library, symbol);                                                                        \
        if (!address && (required)) {                                                                                  \
            copy_message(message, message_size, dlerror());                                                            \
            cjt_codec_close(codec);                                                                                    \
            return NULL;                                                                                               \
        }                                                                                                              \
        memcpy(&codec->field, &address, sizeof address);                                                               \
    } while (0)
    CJT_RESOLVE(init_decompress, "tjInitDecompress", 1);
    CJT_RESOLVE(decompress_header3, "tjDecompressHeader3", 1);
    CJT_RESOLVE(scaling_factors, "tjGetScalingFactors", 1);
    CJT_RESOLVE(decompress2, "tjDecompress2", 1);
    CJT_RESOLVE(init_compress, "tjInitCompress", 1);
    CJT_RESOLVE(compress2, "tjCompress2", 1);
    CJT_RESOLVE(free_buffer, "tjFree", 1);
    CJT_RESOLVE(destroy, "tjDestroy", 1);
    CJT_RESOLVE(error_code, "tjGetErrorCode", 0);
#undef CJT_RESOLVE
    return codec;
}

void cjt_codec_close(cjt_codec *codec) {
    if (!codec) return;
    if (codec->library) dlclose(codec->library);
    free(codec);
}

// The whole file, which TurboJPEG decodes from memory.
static unsigned char *read_file(int fd, unsigned long *size) {
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0 || info.st_size > CJT_MAX_INPUT) {
        return NULL;
    }
    size_t length = (size_t)info.st_size;
    unsigned char *bytes = malloc(length);
    if (!bytes) return NULL;
    size_t done = 0;
    while (done < length) {
        ssize_t count = pread(fd, bytes + done, length - done, (off_t)done);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;  // the file shrank: decode what there is
        done += (size_t)count;
    }
    *size = (unsigned long)done;
    return bytes;
}

static int has_factor(const cjt_codec *codec, int denominator) {
    int count = 0;
    tj_scaling_factor *factors = codec->scaling_factors(&count);
    for (int i = 0; factors && i < count; i++) {
        if (factors[i].num == 1 && factors[i].denom == denominator) return 1;
    }
    return denominator == 1;
}

// Compresses `pixels` into a malloc'ed buffer (TurboJPEG's own must be
// freed with tjFree, which callers in Swift should not need to know).
static int compress(const cjt_codec *codec, const unsigned char *pixels, int width, int height, int format,
                    int subsampling, int quality, int flags, unsigned char **out, unsigned long *out_size) {
    tj_handle handle = codec->init_compress();
    if (!handle) return -1;
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    int status = codec->compress2(handle, pixels, width, 0, height, format, &jpeg, &size, subsampling, quality, flags);
    codec->destroy(handle);
    if (status != 0 || !jpeg || size == 0) {
        if (jpeg) codec->free_buffer(jpeg);
        return -1;
    }
    *out = malloc(size);
    if (*out) {
        memcpy(*out, jpeg, size);
        *out_size = size;
    }
    codec->free_buffer(jpeg);
    return *out ? 0 : -1;
}

int cjt_encode_rgb(const cjt_codec *codec, const unsigned char *pixels, unsigned int width, unsigned int height,
                   int quality, int progressive, unsigned char **out, unsigned long *out_size) {
    *out = NULL;
    *out_size = 0;
    if (!codec || width == 0 || height == 0 || width > 65535 || height > 65535) return -1;
    return compress(codec, pixels, (int)width, (int)height, TJ_PF_RGB, TJ_SAMP_420, quality,
                    progressive ? TJ_FLAG_PROGRESSIVE : 0, out, out_size);
}

// The memory a decode at 1/`denominator` scale takes besides the file:
// the coefficient buffers, the output, and the rows libjpeg works in (for
// each component an MCU row's blocks a few times over, jdmainct.c and
// jdsample.c), counted generously.
static uint64_t decode_memory(const cjt_frame *frame, int denominator, int scaled_width, int scaled_height) {
    uint64_t output = (uint64_t)scaled_width * (uint64_t)scaled_height * 3;
    uint64_t block_side = (uint64_t)(8 / denominator);
    uint64_t mcu_rows = (uint64_t)frame->max_v * block_side;
    uint64_t rows = (uint64_t)(scaled_width + 2 * frame->max_h * 8) * mcu_rows * 4 * (uint64_t)frame->components;
    return frame->coefficient_bytes + output + rows;
}

cjt_status cjt_decode(const cjt_codec *codec, int fd, const unsigned char *bytes, unsigned long size, int max_side,
                      unsigned char **pixels, int *width, int *height, cjt_frame *frame) {
    *pixels = NULL;
    *width = 0;
    *height = 0;
    cjt_frame own_frame;
    if (!frame) frame = &own_frame;
    memset(frame, 0, sizeof *frame);
    if (!codec || max_side <= 0) return CJT_NOT_DECODABLE;
    unsigned char *owned = NULL;
    const unsigned char *jpeg = bytes;
    if (!jpeg) {
        struct stat info;
        if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > CJT_MAX_INPUT) return CJT_TOO_LARGE;
        owned = read_file(fd, &size);
        jpeg = owned;
    } else if (size > CJT_MAX_INPUT) {
        return CJT_TOO_LARGE;
    }
    if (!jpeg || size == 0) {
        free(owned);
        return CJT_NOT_DECODABLE;
    }
    cjt_status status = CJT_NOT_DECODABLE;
    tj_handle handle = NULL;
    // Judged from the headers before the library allocates anything for the image.
    if (cjt_inspect(jpeg, size, frame) != 0) goto done;
    if ((uint64_t)frame->width * (uint64_t)frame->height > (uint64_t)CJT_MAX_DECLARED_PIXELS) {
        status = CJT_TOO_LARGE;
        goto done;
    }
    unsigned int longer = (unsigned int)(frame->width > frame->height ? frame->width : frame->height);
    int denominator = 1;
    // The smallest scale still at least max_side: the box filter after it does the rest.
    while (denominator < 8 && longer / (unsigned int)(denominator * 2) >= (unsigned int)max_side) denominator *= 2;
    while (!has_factor(codec, denominator)) denominator /= 2;
    int scaled_width = (frame->width + denominator - 1) / denominator;
    int scaled_height = (frame->height + denominator - 1) / denominator;
    frame->memory = decode_memory(frame, denominator, scaled_width, scaled_height);
    // Each block's inverse DCT, upsampling and colour conversion at that scale: a unit a pixel.
    frame->work += frame->blocks * (uint64_t)(8 / denominator) * (uint64_t)(8 / denominator);
    if (frame->memory > (uint64_t)CJT_MAX_MEMORY) {
        status = CJT_TOO_MUCH_MEMORY;
        goto done;
    }
    if (frame->scans > CJT_MAX_SCANS || frame->work > (uint64_t)CJT_MAX_WORK) {
        status = CJT_TOO_MUCH_WORK;
        goto done;
    }
    handle = codec->init_decompress();
    if (!handle) goto done;
    int full_width = 0, full_height = 0, subsampling = 0, colorspace = 0;
    if (codec->decompress_header3(handle, jpeg, size, &full_width, &full_height, &subsampling, &colorspace) != 0)
        goto done;
    if (colorspace == TJ_CS_CMYK || colorspace == TJ_CS_YCCK) goto done;
    // The library read the same frame: a file it reads otherwise is not judged by the wrong one.
    if (full_width != frame->width || full_height != frame->height) goto done;
    // Zeroed: TurboJPEG reports a fatal error after a warning as a warning
    // (tjGetErrorCode), and a progressive file that fails before its output
    // pass writes no row; the picture is then black, never the heap's old contents.
    *pixels = calloc((size_t)scaled_width * (size_t)scaled_height, 3);
    if (!*pixels) goto done;
    int decoded = codec->decompress2(handle, jpeg, size, *pixels, scaled_width, 0, scaled_height, TJ_PF_RGB,
                                     TJ_FLAG_FASTDCT | TJ_FLAG_LIMITSCANS);
    // A warning (a truncated file, say) still leaves a picture worth showing.
    if (decoded != 0 && !(codec->error_code && codec->error_code(handle) == TJ_ERR_WARNING)) goto done;
    *width = scaled_width;
    *height = scaled_height;
    status = CJT_DECODED;
done:
    if (status != CJT_DECODED) {
        free(*pixels);
        *pixels = NULL;
    }
    if (handle) codec->destroy(handle);
    free(owned);
    return status;
}
