#include "internal.h"

#include <stdlib.h>

// The part of libheif's C API (1.x) used here, declared by hand so that no
// header is needed to build. Its handles are opaque; `heif_error` is
// returned by value, as the library's ABI has it.
typedef struct heif_context heif_context;
typedef struct heif_image_handle heif_image_handle;
typedef struct heif_image heif_image;
typedef struct heif_encoder heif_encoder;
typedef uint32_t heif_item_id;
typedef struct {
    int code;
    int subcode;
    const char *message;
} heif_error;

typedef struct {
    int reader_api_version;
    int64_t (*get_position)(void *userdata);
    int (*read)(void *data, size_t size, void *userdata);
    int (*seek)(int64_t position, void *userdata);
    int (*wait_for_file_size)(int64_t target_size, void *userdata);
} heif_reader;

// The head of heif_encoding_options, up to the orientation (version 5).
typedef struct {
    uint8_t version;
    uint8_t save_alpha_channel;
    uint8_t macos_workaround;
    uint8_t save_two_colr_boxes;
    void *output_nclx_profile;
    uint8_t macos_workaround_no_nclx;
    int image_orientation;
} heif_encoding_options_head;

enum { HEIF_OK = 0, HEIF_COLORSPACE_RGB = 1, HEIF_CHROMA_RGB = 10 };
enum { HEIF_CHANNEL_INTERLEAVED = 10, HEIF_COMPRESSION_HEVC = 1 };
enum { HEIF_GROW_SIZE_REACHED = 0, HEIF_GROW_BEYOND_EOF = 2 };
enum { HEIF_SUBERROR_SECURITY_LIMIT = CIT_HEIF_SECURITY_LIMIT };

typedef struct {
    cit_library base;
    heif_context *(*context_alloc)(void);
    void (*context_free)(heif_context *);
    heif_error (*read_from_reader)(heif_context *, const heif_reader *, void *, const void *);
    void (*set_maximum_image_size_limit)(heif_context *, int);
    heif_error (*primary_image_handle)(heif_context *, heif_image_handle **);
    void (*handle_release)(const heif_image_handle *);
    int (*handle_width)(const heif_image_handle *);
    int (*handle_height)(const heif_image_handle *);
    int (*number_of_thumbnails)(const heif_image_handle *);
    int (*thumbnail_ids)(const heif_image_handle *, heif_item_id *, int);
    heif_error (*thumbnail)(const heif_image_handle *, heif_item_id, heif_image_handle **);
    heif_error (*decode)(const heif_image_handle *, heif_image **, int, int, const void *);
    const uint8_t *(*plane_readonly)(const heif_image *, int, int *);
    int (*image_width)(const heif_image *, int);
    int (*image_height)(const heif_image *, int);
    void (*image_release)(const heif_image *);
    // Encoding, for tests' samples; absent from a decoder-only build.
    heif_error (*encoder_for_format)(heif_context *, int, heif_encoder **);
    void (*encoder_release)(heif_encoder *);
    heif_error (*encoder_set_quality)(heif_encoder *, int);
    heif_error (*image_create)(int, int, int, int, heif_image **);
    heif_error (*image_add_plane)(heif_image *, int, int, int, int);
    uint8_t *(*image_plane)(heif_image *, int, int *);
    void *(*encoding_options_alloc)(void);
    void (*encoding_options_free)(void *);
    heif_error (*encode_image)(heif_context *, const heif_image *, heif_encoder *, const void *, heif_image_handle **);
    heif_error (*encode_thumbnail)(heif_context *, const heif_image *, const heif_image_handle *, heif_encoder *,
                                   const void *, int, heif_image_handle **);
    heif_error (*write_to_file)(heif_context *, const char *);
    // Set-up and its end (1.13 and later; absent before).
    heif_error (*init)(const void *);
    void (*deinit)(void);
    // Tiles decoded on the calling thread (absent before 1.4: then libheif's own threads).
    void (*set_max_decoding_threads)(heif_context *, int);
    int (*luma_bits)(const heif_image_handle *);
    int (*has_alpha)(const heif_image_handle *);
} heif_library;

cit_library *cit_heif_open(const char *name, char *message, size_t message_size) {
    void *handle = cit_dlopen(name, message, message_size);
    if (!handle) return NULL;
    heif_library *heif = calloc(1, sizeof *heif);
    if (!heif) {
        dlclose(handle);
        return NULL;
    }
    heif->base.kind = CIT_HEIF;
    heif->base.handle = handle;
    CIT_RESOLVE(heif, context_alloc, "heif_context_alloc", 1, message, message_size);
    CIT_RESOLVE(heif, context_free, "heif_context_free", 1, message, message_size);
    CIT_RESOLVE(heif, read_from_reader, "heif_context_read_from_reader", 1, message, message_size);
    CIT_RESOLVE(heif, set_maximum_image_size_limit, "heif_context_set_maximum_image_size_limit", 0, message,
                message_size);
    CIT_RESOLVE(heif, primary_image_handle, "heif_context_get_primary_image_handle", 1, message, message_size);
    CIT_RESOLVE(heif, handle_release, "heif_image_handle_release", 1, message, message_size);
    CIT_RESOLVE(heif, handle_width, "heif_image_handle_get_width", 1, message, message_size);
    CIT_RESOLVE(heif, handle_height, "heif_image_handle_get_height", 1, message, message_size);
    CIT_RESOLVE(heif, number_of_thumbnails, "heif_image_handle_get_number_of_thumbnails", 1, message, message_size);
    CIT_RESOLVE(heif, thumbnail_ids, "heif_image_handle_get_list_of_thumbnail_IDs", 1, message, message_size);
    CIT_RESOLVE(heif, thumbnail, "heif_image_handle_get_thumbnail", 1, message, message_size);
    CIT_RESOLVE(heif, decode, "heif_decode_image", 1, message, message_size);
    CIT_RESOLVE(heif, plane_readonly, "heif_image_get_plane_readonly", 1, message, message_size);
    CIT_RESOLVE(heif, image_width, "heif_image_get_width", 1, message, message_size);
    CIT_RESOLVE(heif, image_height, "heif_image_get_height", 1, message, message_size);
    CIT_RESOLVE(heif, image_release, "heif_image_release", 1, message, message_size);
    CIT_RESOLVE(heif, encoder_for_format, "heif_context_get_encoder_for_format", 0, message, message_size);
    CIT_RESOLVE(heif, encoder_release, "heif_encoder_release", 0, message, message_size);
    CIT_RESOLVE(heif, encoder_set_quality, "heif_encoder_set_lossy_quality", 0, message, message_size);
    CIT_RESOLVE(heif, image_create, "heif_image_create", 0, message, message_size);
    CIT_RESOLVE(heif, image_add_plane, "heif_image_add_plane", 0, message, message_size);
    CIT_RESOLVE(heif, image_plane, "heif_image_get_plane", 0, message, message_size);
    CIT_RESOLVE(heif, encoding_options_alloc, "heif_encoding_options_alloc", 0, message, message_size);
    CIT_RESOLVE(heif, encoding_options_free, "heif_encoding_options_free", 0, message, message_size);
    CIT_RESOLVE(heif, encode_image, "heif_context_encode_image", 0, message, message_size);
    CIT_RESOLVE(heif, encode_thumbnail, "heif_context_encode_thumbnail", 0, message, message_size);
    CIT_RESOLVE(heif, write_to_file, "heif_context_write_to_file", 0, message, message_size);
    CIT_RESOLVE(heif, init, "heif_init", 0, message, message_size);
    CIT_RESOLVE(heif, deinit, "heif_deinit", 0, message, message_size);
    CIT_RESOLVE(heif, set_max_decoding_threads, "heif_context_set_max_decoding_threads", 0, message, message_size);
    CIT_RESOLVE(heif, luma_bits, "heif_image_handle_get_luma_bits_per_pixel", 1, message, message_size);
    CIT_RESOLVE(heif, has_alpha, "heif_image_handle_has_alpha_channel", 1, message, message_size);
    // Without heif_init, libheif sets itself up (its colour conversions,
    // its codecs) on first use, and not safely from several threads at once
    // (libheif issue 950): thumbnails and samples made in parallel crashed
    // the test process once, jumping to address 0 while x265 encoded. Here
    // it is set up once, under libheif's own lock, before any use; the calls
    // are counted, and cit_heif_release ends this one.
    if (heif->init && heif->deinit && heif->init(NULL).code != HEIF_OK) {
        cit_copy_message(message, message_size, "heif_init failed");
        heif->init = NULL;
        cit_library_close(&heif->base);
        return NULL;
    }
    // Without the check on the stream's own picture size, no HEIF is decoded: fail closed.
    if (cit_heif_wrap_decoders(handle, message, message_size) != 0) {
        cit_library_close(&heif->base);
        return NULL;
    }
    return &heif->base;
}

void cit_heif_release(cit_library *library) {
    heif_library *heif = (heif_library *)library;
    if (heif->init && heif->deinit) heif->deinit();
}

// libheif reads through these: bounded reads of the input, never the
// whole file unless the image's data is that large.
typedef struct {
    cit_input input;
    long long size;
    long long position;
} heif_reading;

static int64_t heif_position(void *userdata) { return ((heif_reading *)userdata)->position; }

static int heif_read(void *data, size_t size, void *userdata) {
    heif_reading *reading = userdata;
    size_t done = 0;
    while (done < size) {
        ssize_t read = cit_input_read(reading->input, (unsigned char *)data + done, size - done, reading->position);
        if (read <= 0) return -1;
        done += (size_t)read;
        reading->position += read;
    }
    return 0;
}

static int heif_seek(int64_t position, void *userdata) {
    heif_reading *reading = userdata;
    if (position < 0 || position > reading->size) return -1;
    reading->position = position;
    return 0;
}

static int heif_wait(int64_t target, void *userdata) {
    return target <= ((heif_reading *)userdata)->size ? HEIF_GROW_SIZE_REACHED : HEIF_GROW_BEYOND_EOF;
}

// The memory libheif takes to decode `handle` whole (see CIT_HEIF_BYTES_PER_PIXEL).
static uint64_t heif_memory(const heif_library *heif, const heif_image_handle *handle) {
    uint64_t pixels = (uint64_t)heif->handle_width(handle) * (uint64_t)heif->handle_height(handle);
    uint64_t bytes = pixels * CIT_HEIF_BYTES_PER_PIXEL;
    if (heif->luma_bits(handle) > 8) bytes *= 2;
    // An alpha plane is an image of its own, decoded beside it (one sample a pixel).
    if (heif->has_alpha(handle)) bytes += bytes / 3;
    return bytes;
}

int cit_heif_thumbnail(const cit_library *library, cit_input input, int max_side, cit_image *out) {
    memset(out, 0, sizeof *out);
    if (!library || library->kind != CIT_HEIF || max_side <= 0) return CIT_FAILED;
    const heif_library *heif = (const heif_library *)library;
    heif_reading reading = {.input = input, .size = cit_input_size(input), .position = 0};
    if (reading.size <= 0) return CIT_FAILED;
    static const heif_reader reader = {1, heif_position, heif_read, heif_seek, heif_wait};
    heif_context *context = heif->context_alloc();
    if (!context) return CIT_FAILED;
    // libheif refuses larger images itself; below its limit, the size an
    // image declares is judged here, against the budget.
    if (heif->set_maximum_image_size_limit) heif->set_maximum_image_size_limit(context, 65535);
    // One decode, one thread: a grid's tiles one after the other, each in
    // the memory counted for it, on the thread whose decodes are bounded.
    if (heif->set_max_decoding_threads) heif->set_max_decoding_threads(context, 0);
    int status = CIT_FAILED;
    heif_image_handle *primary = NULL, *chosen = NULL;
    heif_image *image = NULL;
    heif_error read = heif->read_from_reader(context, &reader, &reading, NULL);
    if (read.code != HEIF_OK) {
        // An image declaring a side longer than libheif's limit: over budget, its size not known.
        if (read.subcode == HEIF_SUBERROR_SECURITY_LIMIT) {
            out->declared_width = -1;
            out->declared_height = -1;
            status = CIT_TOO_COSTLY;
        }
        goto done;
    }
    if (heif->primary_image_handle(context, &primary).code != HEIF_OK) goto done;
    // The largest embedded thumbnail, if it is at least the size asked for.
    int count = heif->number_of_thumbnails(primary);
    if (count > 0 && count <= 16) {
        heif_item_id ids[16];
        count = heif->thumbnail_ids(primary, ids, count);
        long best = 0;
        for (int i = 0; i < count; i++) {
            heif_image_handle *candidate = NULL;
            if (heif->thumbnail(primary, ids[i], &candidate).code != HEIF_OK) continue;
            long w = heif->handle_width(candidate), h = heif->handle_height(candidate);
            long longer = w > h ? w : h;
            if (longer >= max_side && longer > best && heif_memory(heif, candidate) <= (uint64_t)CIT_MAX_HEIF_MEMORY) {
                if (chosen) heif->handle_release(chosen);
                chosen = candidate;
                best = longer;
            } else {
                heif->handle_release(candidate);
            }
        }
    }
    const heif_image_handle *source = chosen ? chosen : primary;
    long width = heif->handle_width(source), height = heif->handle_height(source);
    if (width <= 0 || height <= 0) goto done;
    out->declared_width = width;
    out->declared_height = height;
    out->memory = heif_memory(heif, source);
    if (out->memory > (uint64_t)CIT_MAX_HEIF_MEMORY) {
        status = CIT_TOO_COSTLY;
        goto done;
    }
    // A grid's canvas (or an overlay's) is made at the size its grid says,
    // 3 bytes a pixel, not at the one declared above: no side of it may be
    // longer than the longer side declared, nor than a square canvas within
    // the budget (6,687 pixels) allows. Each tile is checked on its own (hevc.c).
    long side = width > height ? width : height;
    long square = 6687;  // floor(sqrt(CIT_MAX_HEIF_MEMORY / 3))
    if (heif->set_maximum_image_size_limit) heif->set_maximum_image_size_limit(context, (int)(side < square ? side : square) + 1);
    // With no options libheif applies the image's rotation and mirroring.
    // RGB, 3 bytes a pixel: the whole image is held, so no alpha byte.
    heif_error decoded = heif->decode(source, &image, HEIF_COLORSPACE_RGB, HEIF_CHROMA_RGB, NULL);
    if (decoded.code != HEIF_OK) {
        if (decoded.subcode == HEIF_SUBERROR_SECURITY_LIMIT) {
            out->refusal = "its HEVC stream declares a larger picture than the file does, more than a thumbnail may decode";
            status = CIT_TOO_COSTLY;
        }
        goto done;
    }
    int stride = 0;
    const uint8_t *plane = heif->plane_readonly(image, HEIF_CHANNEL_INTERLEAVED, &stride);
    int decoded_width = heif->image_width(image, HEIF_CHANNEL_INTERLEAVED);
    int decoded_height = heif->image_height(image, HEIF_CHANNEL_INTERLEAVED);
    if (!plane || decoded_width <= 0 || decoded_height <= 0 || stride < decoded_width * 3) goto done;
    cit_scaler scaler;
    if (cit_scaler_init(&scaler, decoded_width, decoded_height, max_side) != 0) goto done;
    for (int y = 0; y < decoded_height; y++) {
        cit_scaler_add_rgb(&scaler, y, plane + (size_t)y * (size_t)stride, decoded_width);
    }
    status = cit_scaler_finish(&scaler, out);
done:
    if (image) heif->image_release(image);
    if (chosen) heif->handle_release(chosen);
    if (primary) heif->handle_release(primary);
    heif->context_free(context);
    return status;
}

static heif_image *make_image(const heif_library *heif, const unsigned char *pixels, int width, int height) {
    heif_image *image = NULL;
    if (heif->image_create(width, height, HEIF_COLORSPACE_RGB, HEIF_CHROMA_RGB, &image).code != HEIF_OK) return NULL;
    if (heif->image_add_plane(image, HEIF_CHANNEL_INTERLEAVED, width, height, 8).code != HEIF_OK) {
        heif->image_release(image);
        return NULL;
    }
    int stride = 0;
    uint8_t *plane = heif->image_plane(image, HEIF_CHANNEL_INTERLEAVED, &stride);
    for (int y = 0; plane && y < height; y++) {
        memcpy(plane + (size_t)y * (size_t)stride, pixels + (size_t)y * (size_t)width * 3, (size_t)width * 3);
    }
    return image;
}

int cit_heif_encode(const cit_library *library, const unsigned char *pixels, int width, int height, int orientation,
                    const unsigned char *thumbnail_pixels, int thumbnail_side, const char *path) {
    if (!library || library->kind != CIT_HEIF || width <= 0 || height <= 0) return -1;
    const heif_library *heif = (const heif_library *)library;
    if (!heif->encoder_for_format || !heif->encode_image || !heif->write_to_file || !heif->image_create ||
        !heif->encoding_options_alloc || !heif->encode_thumbnail)
        return -1;
    heif_context *context = heif->context_alloc();
    heif_encoder *encoder = NULL;
    heif_image *image = NULL, *thumbnail = NULL;
    heif_image_handle *handle = NULL, *thumbnail_handle = NULL;
    heif_encoding_options_head *options = NULL;
    int status = -1;
    if (!context || heif->encoder_for_format(context, HEIF_COMPRESSION_HEVC, &encoder).code != HEIF_OK) goto done;
    heif->encoder_set_quality(encoder, 90);
    image = make_image(heif, pixels, width, height);
    if (!image) goto done;
    options = heif->encoding_options_alloc();
    if (!options) goto done;
    if (orientation > 1) {
        if (options->version < 5) goto done;
        options->image_orientation = orientation;
    }
    if (heif->encode_image(context, image, encoder, options, &handle).code != HEIF_OK) goto done;
    if (thumbnail_pixels) {
        thumbnail = make_image(heif, thumbnail_pixels, width, height);
        if (!thumbnail || heif->encode_thumbnail(context, thumbnail, handle, encoder, options, thumbnail_side,
                                                 &thumbnail_handle).code != HEIF_OK)
            goto done;
    }
    if (heif->write_to_file(context, path).code != HEIF_OK) goto done;
    status = 0;
done:
    if (options) heif->encoding_options_free(options);
    if (thumbnail_handle) heif->handle_release(thumbnail_handle);
    if (handle) heif->handle_release(handle);
    if (thumbnail) heif->image_release(thumbnail);
    if (image) heif->image_release(image);
    if (encoder) heif->encoder_release(encoder);
    if (context) heif->context_free(context);
    return status;
}
