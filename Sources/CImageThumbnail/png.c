#include "internal.h"

#include <setjmp.h>
#include <stdlib.h>

// The part of libpng 1.6's API used here, declared by hand so that no
// header is needed to build. Its structs are opaque behind these calls.
typedef void *png_ptr;
typedef void *png_info;
typedef void (*png_error_fn)(png_ptr, const char *);
typedef void (*png_rw_fn)(png_ptr, unsigned char *, size_t);

enum { PNG_INTERLACE_ADAM7 = 1, PNG_FILLER_AFTER = 1, PNG_INFO_eXIf = 0x10000 };

typedef struct {
    cit_library base;
    const char *(*get_libpng_ver)(png_ptr);
    png_ptr (*create_read_struct)(const char *, void *, png_error_fn, png_error_fn);
    png_info (*create_info_struct)(png_ptr);
    void (*destroy_read_struct)(png_ptr *, png_info *, png_info *);
    void (*set_read_fn)(png_ptr, void *, png_rw_fn);
    void *(*get_io_ptr)(png_ptr);
    void *(*get_error_ptr)(png_ptr);
    void (*read_info)(png_ptr, png_info);
    uint32_t (*get_IHDR)(png_ptr, png_info, uint32_t *, uint32_t *, int *, int *, int *, int *, int *);
    void (*set_expand)(png_ptr);
    void (*set_strip_16)(png_ptr);
    void (*set_gray_to_rgb)(png_ptr);
    void (*set_add_alpha)(png_ptr, uint32_t, int);
    int (*set_interlace_handling)(png_ptr);
    void (*read_update_info)(png_ptr, png_info);
    size_t (*get_rowbytes)(png_ptr, png_info);
    unsigned char (*get_channels)(png_ptr, png_info);
    void (*read_row)(png_ptr, unsigned char *, unsigned char *);
    void (*set_user_limits)(png_ptr, uint32_t, uint32_t);
    // libpng 1.6.31 and later; without it a PNG's orientation is not read.
    uint32_t (*get_eXIf_1)(png_ptr, png_info, uint32_t *, unsigned char **);
} png_library;

cit_library *cit_png_open(const char *name, char *message, size_t message_size) {
    void *handle = cit_dlopen(name, message, message_size);
    if (!handle) return NULL;
    png_library *png = calloc(1, sizeof *png);
    if (!png) {
        dlclose(handle);
        return NULL;
    }
    png->base.kind = CIT_PNG;
    png->base.handle = handle;
    CIT_RESOLVE(png, get_libpng_ver, "png_get_libpng_ver", 1, message, message_size);
    CIT_RESOLVE(png, create_read_struct, "png_create_read_struct", 1, message, message_size);
    CIT_RESOLVE(png, create_info_struct, "png_create_info_struct", 1, message, message_size);
    CIT_RESOLVE(png, destroy_read_struct, "png_destroy_read_struct", 1, message, message_size);
    CIT_RESOLVE(png, set_read_fn, "png_set_read_fn", 1, message, message_size);
    CIT_RESOLVE(png, get_io_ptr, "png_get_io_ptr", 1, message, message_size);
    CIT_RESOLVE(png, get_error_ptr, "png_get_error_ptr", 1, message, message_size);
    CIT_RESOLVE(png, read_info, "png_read_info", 1, message, message_size);
    CIT_RESOLVE(png, get_IHDR, "png_get_IHDR", 1, message, message_size);
    CIT_RESOLVE(png, set_expand, "png_set_expand", 1, message, message_size);
    CIT_RESOLVE(png, set_strip_16, "png_set_strip_16", 1, message, message_size);
    CIT_RESOLVE(png, set_gray_to_rgb, "png_set_gray_to_rgb", 1, message, message_size);
    CIT_RESOLVE(png, set_add_alpha, "png_set_add_alpha", 1, message, message_size);
    CIT_RESOLVE(png, set_interlace_handling, "png_set_interlace_handling", 1, message, message_size);
    CIT_RESOLVE(png, read_update_info, "png_read_update_info", 1, message, message_size);
    CIT_RESOLVE(png, get_rowbytes, "png_get_rowbytes", 1, message, message_size);
    CIT_RESOLVE(png, get_channels, "png_get_channels", 1, message, message_size);
    CIT_RESOLVE(png, read_row, "png_read_row", 1, message, message_size);
    CIT_RESOLVE(png, set_user_limits, "png_set_user_limits", 1, message, message_size);
    CIT_RESOLVE(png, get_eXIf_1, "png_get_eXIf_1", 0, message, message_size);
    return &png->base;
}

// One decode's state, reached from libpng's callbacks. The scaler lives
// here, in memory libpng holds a pointer to, so a longjmp finds it intact.
typedef struct {
    cit_input input;
    long long offset;
    long reads;
    cit_scaler scaler;
    jmp_buf jump;
} png_reading;

// Why a decode jumped back: libpng's error, the input cut short, the deadline.
enum { PNG_JUMP_ERROR = 1, PNG_JUMP_CUT = 2, PNG_JUMP_LATE = 3 };

// The library of the decode running on this thread, for the callbacks,
// which libpng gives only its own struct.
static _Thread_local const png_library *current_library;

// libpng's errors must not return: back to the decode's setjmp.
static void png_failed(png_ptr ptr, const char *text) {
    (void)text;
    png_reading *reading = current_library->get_error_ptr(ptr);
    longjmp(reading->jump, PNG_JUMP_ERROR);
}

static void png_warned(png_ptr ptr, const char *text) {
    (void)ptr;
    (void)text;
}

static void png_read_input(png_ptr ptr, unsigned char *buffer, size_t count) {
    png_reading *reading = current_library->get_io_ptr(ptr);
    // The deadline holds outside the rows too: a file of endless chunks
    // before its image data is read here, in libpng's own loop.
    if (cit_past_deadline(reading->input, ++reading->reads)) longjmp(reading->jump, PNG_JUMP_LATE);
    size_t done = 0;
    while (done < count) {
        ssize_t read = cit_input_read(reading->input, buffer + done, count - done, reading->offset);
        if (read <= 0) longjmp(reading->jump, PNG_JUMP_CUT);  // cut short: keep the rows already added
        done += (size_t)read;
        reading->offset += read;
    }
}

// The Adam7 passes: first column and row, and steps.
static const int adam7_x[7] = {0, 4, 0, 2, 0, 1, 0}, adam7_y[7] = {0, 0, 4, 0, 2, 0, 1};
static const int adam7_dx[7] = {8, 8, 4, 4, 2, 2, 1}, adam7_dy[7] = {8, 8, 8, 4, 4, 2, 2};

static long pass_count(long size, int first, int step) { return size > first ? (size - first + step - 1) / step : 0; }

int cit_png_thumbnail(const cit_library *library, cit_input input, int max_side, cit_image *out) {
    memset(out, 0, sizeof *out);
    if (!library || library->kind != CIT_PNG || max_side <= 0) return CIT_FAILED;
    const png_library *png = (const png_library *)library;
    current_library = png;
    png_reading reading = {.input = input, .offset = 0};
    png_ptr ptr = png->create_read_struct(png->get_libpng_ver(NULL), &reading, png_failed, png_warned);
    if (!ptr) return CIT_FAILED;
    png_info info = png->create_info_struct(ptr);
    // Changed after setjmp, read after a longjmp: volatile.
    unsigned char *volatile row = NULL;
    unsigned char *volatile whole = NULL;
    volatile int started = 0;
    volatile int status = CIT_FAILED;
    switch (setjmp(reading.jump)) {
    case 0: break;
    case PNG_JUMP_LATE: status = CIT_TIMED_OUT; goto done;  // too slow: the icon, not half a picture
    default:
        // A file cut short, or damaged, after rows were added: those rows are the picture.
        if (started) status = cit_scaler_finish(&reading.scaler, out);
        goto done;
    }
    if (!info) goto done;
    png->set_user_limits(ptr, 0x7FFFFFFF, 0x7FFFFFFF);
    png->set_read_fn(ptr, &reading, png_read_input);
    png->read_info(ptr, info);
    uint32_t width = 0, height = 0;
    int depth = 0, color = 0, interlace = 0, compression = 0, filter = 0;
    png->get_IHDR(ptr, info, &width, &height, &depth, &color, &interlace, &compression, &filter);
    if (width == 0 || height == 0) goto done;
    out->declared_width = width;
    out->declared_height = height;
    int fit_width = 0, fit_height = 0;
    cit_fit(width, height, max_side, &fit_width, &fit_height);
    // An interlaced image is read through its last pass with rows at full
    // width (the odd rows) when every thumbnail row takes two rows or more;
    // a smaller one is read whole.
    int last_pass_only = interlace == PNG_INTERLACE_ADAM7 && height >= 2 * (uint32_t)fit_height;
    int read_whole = interlace == PNG_INTERLACE_ADAM7 && !last_pass_only;
    // Our row and column map (4 bytes a column each), libpng's row and the
    // one before it (up to 8 bytes a column: 16-bit RGBA), and the image
    // itself when it is read whole.
    out->memory = (uint64_t)width * 24 + (read_whole ? (uint64_t)width * height * 4 : 0);
    if ((uint64_t)width * height > (uint64_t)CIT_MAX_STREAMED_PIXELS || width > (uint32_t)CIT_MAX_WIDTH ||
        out->memory > (uint64_t)CIT_MAX_MEMORY) {
        status = CIT_TOO_COSTLY;
        goto done;
    }
    if (png->get_eXIf_1) {
        uint32_t exif_size = 0;
        unsigned char *exif = NULL;
        if (png->get_eXIf_1(ptr, info, &exif_size, &exif) && exif && exif_size > 0 && exif_size <= 65536) {
            out->exif = malloc(exif_size);
            if (out->exif) {
                memcpy(out->exif, exif, exif_size);
                out->exif_size = exif_size;
            }
        }
    }
    // Whatever the format: 8-bit RGBA.
    png->set_expand(ptr);
    png->set_strip_16(ptr);
    png->set_gray_to_rgb(ptr);
    png->set_add_alpha(ptr, 0xFF, PNG_FILLER_AFTER);
    int passes = 1;
    if (read_whole) passes = png->set_interlace_handling(ptr);
    png->read_update_info(ptr, info);
    if (png->get_channels(ptr, info) != 4 || png->get_rowbytes(ptr, info) != (size_t)width * 4) goto done;
    if (cit_scaler_init(&reading.scaler, width, height, max_side) != 0) goto done;
    row = malloc((size_t)width * 4);
    if (!row) goto done;
    if (last_pass_only) {
        for (int pass = 0; pass < 7; pass++) {
            long columns = pass_count(width, adam7_x[pass], adam7_dx[pass]);
            long rows = pass_count(height, adam7_y[pass], adam7_dy[pass]);
            if (columns == 0) continue;  // libpng skips an empty pass
            for (long y = 0; y < rows; y++) {
                if (cit_past_deadline(input, y)) {
                    status = CIT_TIMED_OUT;
                    goto done;
                }
                png->read_row(ptr, row, NULL);
                if (pass == 6) {
                    cit_scaler_add_rgba(&reading.scaler, adam7_y[6] + y * adam7_dy[6], row, 0, 1, columns);
                    started = 1;
                }
            }
        }
    } else if (passes > 1) {
        whole = malloc((size_t)width * height * 4);
        if (!whole) goto done;
        for (int pass = 0; pass < passes; pass++) {
            for (uint32_t y = 0; y < height; y++) png->read_row(ptr, whole + (size_t)y * width * 4, NULL);
        }
        for (uint32_t y = 0; y < height; y++) cit_scaler_add_rgba(&reading.scaler, y, whole + (size_t)y * width * 4, 0, 1, width);
        started = 1;
    } else {
        for (uint32_t y = 0; y < height; y++) {
            if (cit_past_deadline(input, y)) {
                status = CIT_TIMED_OUT;  // too slow: the icon, not half a picture
                goto done;
            }
            png->read_row(ptr, row, NULL);
            cit_scaler_add_rgba(&reading.scaler, y, row, 0, 1, width);
            started = 1;
        }
    }
    status = cit_scaler_finish(&reading.scaler, out);
done:
    if (status != CIT_MADE) {
        cit_scaler_free(&reading.scaler);
        cit_image_free(out);
    }
    free(row);
    free(whole);
    png->destroy_read_struct(&ptr, info ? &info : NULL, NULL);
    current_library = NULL;
    return status;
}
