#include "internal.h"

#include <stdlib.h>

// The part of libwebp's decoding API (decode.h, ABI 2.x: libwebp 0.5 and
// later) used here, declared by hand so that no header is needed to build.
// The structs are the library's own layout, which its ABI version fixes.
enum { WEBP_DECODER_ABI_VERSION = 0x0209, MODE_RGBA = 1, VP8_STATUS_OK = 0, WEBP_FORMAT_LOSSLESS = 2 };

typedef struct {
    int width, height, has_alpha, has_animation, format;
    uint32_t pad[5];
} webp_features;

typedef struct {
    int colorspace;
    int width, height;
    int is_external_memory;
    union {
        struct {
            uint8_t *rgba;
            int stride;
            size_t size;
        } RGBA;
        struct {
            uint8_t *y, *u, *v, *a;
            int y_stride, u_stride, v_stride, a_stride;
            size_t y_size, u_size, v_size, a_size;
        } YUVA;
    } u;
    uint32_t pad[4];
    uint8_t *private_memory;
} webp_buffer;

typedef struct {
    int bypass_filtering, no_fancy_upsampling;
    int use_cropping, crop_left, crop_top, crop_width, crop_height;
    int use_scaling, scaled_width, scaled_height;
    int use_threads, dithering_strength, flip, alpha_dithering_strength;
    uint32_t pad[5];
} webp_options;

typedef struct {
    webp_features input;
    webp_buffer output;
    webp_options options;
} webp_config;

typedef struct {
    cit_library base;
    int (*init_config)(webp_config *, int);
    int (*get_features)(const uint8_t *, size_t, webp_features *, int);
    int (*decode)(const uint8_t *, size_t, webp_config *);
    void (*free_buffer)(webp_buffer *);
} webp_library;

cit_library *cit_webp_open(const char *name, char *message, size_t message_size) {
    void *handle = cit_dlopen(name, message, message_size);
    if (!handle) return NULL;
    webp_library *webp = calloc(1, sizeof *webp);
    if (!webp) {
        dlclose(handle);
        return NULL;
    }
    webp->base.kind = CIT_WEBP;
    webp->base.handle = handle;
    CIT_RESOLVE(webp, init_config, "WebPInitDecoderConfigInternal", 1, message, message_size);
    CIT_RESOLVE(webp, get_features, "WebPGetFeaturesInternal", 1, message, message_size);
    CIT_RESOLVE(webp, decode, "WebPDecode", 1, message, message_size);
    CIT_RESOLVE(webp, free_buffer, "WebPFreeDecBuffer", 1, message, message_size);
    return &webp->base;
}

int cit_webp_thumbnail(const cit_library *library, cit_input input, int max_side, cit_image *out) {
    memset(out, 0, sizeof *out);
    if (!library || library->kind != CIT_WEBP || max_side <= 0) return CIT_FAILED;
    const webp_library *webp = (const webp_library *)library;
    long long input_size = cit_input_size(input);
    if (input_size > CIT_MAX_INPUT) return CIT_TOO_COSTLY;
    size_t size = 0;
    int owned = 0;
    unsigned char *data = cit_input_whole(input, &size, &owned);
    if (!data) return CIT_FAILED;
    int status = CIT_FAILED;
    webp_config config;
    if (!webp->init_config(&config, WEBP_DECODER_ABI_VERSION)) goto done;
    if (webp->get_features(data, size, &config.input, WEBP_DECODER_ABI_VERSION) != VP8_STATUS_OK) goto done;
    long width = config.input.width, height = config.input.height;
    if (width <= 0 || height <= 0) goto done;
    out->declared_width = width;
    out->declared_height = height;
    // What libwebp allocates (src/dec): a lossless image is decoded whole,
    // 4 bytes a pixel, with 32 rows of cache (vp8l_dec.c); a lossy one in
    // rows of macroblocks, some 40 bytes a column with its scaler
    // (frame_dec.c), and its alpha plane whole, a byte a pixel, and another
    // when that plane is itself compressed losslessly (alpha_dec.c).
    if (config.input.format == WEBP_FORMAT_LOSSLESS) {
        out->memory = (uint64_t)width * (uint64_t)height * 4 + (uint64_t)width * 32 * 4;
    } else {
        out->memory = (uint64_t)width * 40 + (config.input.has_alpha ? (uint64_t)width * (uint64_t)height * 2 : 0);
    }
    if (width * height > CIT_MAX_STREAMED_PIXELS || out->memory > (uint64_t)CIT_MAX_MEMORY) {
        status = CIT_TOO_COSTLY;
        goto done;
    }
    int fit_width = 0, fit_height = 0;
    cit_fit(width, height, max_side, &fit_width, &fit_height);
    // libwebp scales while it decodes, a few rows at a time.
    config.options.use_scaling = 1;
    config.options.scaled_width = fit_width;
    config.options.scaled_height = fit_height;
    config.output.colorspace = MODE_RGBA;
    if (webp->decode(data, size, &config) != VP8_STATUS_OK) goto done;
    cit_scaler scaler;
    if (config.output.width != fit_width || config.output.height != fit_height ||
        cit_scaler_init(&scaler, fit_width, fit_height, max_side) != 0) {
        webp->free_buffer(&config.output);
        goto done;
    }
    for (int y = 0; y < fit_height; y++) {
        cit_scaler_add_rgba(&scaler, y, config.output.u.RGBA.rgba + (size_t)y * (size_t)config.output.u.RGBA.stride,
                            0, 1, fit_width);
    }
    webp->free_buffer(&config.output);
    status = cit_scaler_finish(&scaler, out);
done:
    if (owned) free(data);
    return status;
}
