#include "internal.h"

#include <stdbool.h>
#include <stdlib.h>

// The part of giflib 5's API used here, declared by hand so that no header
// is needed to build; the structs are giflib 5's public layout.
typedef unsigned char gif_byte;
typedef struct {
    gif_byte red, green, blue;
} gif_color;
typedef struct {
    int count;
    int bits_per_pixel;
    bool sort_flag;
    gif_color *colors;
} gif_color_map;
typedef struct {
    int left, top, width, height;
    bool interlace;
    gif_color_map *color_map;
} gif_image_desc;
typedef struct gif_file {
    int width, height, color_resolution, background;
    gif_byte aspect;
    gif_color_map *color_map;
    int image_count;
    gif_image_desc image;
    void *saved_images;
    int extension_block_count;
    void *extension_blocks;
    int error;
    void *user_data;
    void *private_data;
} gif_file;
typedef int (*gif_input_fn)(gif_file *, gif_byte *, int);

enum { GIF_OK = 1, IMAGE_DESC_RECORD_TYPE = 2, EXTENSION_RECORD_TYPE = 3, TERMINATE_RECORD_TYPE = 4 };
enum { GRAPHICS_EXT_FUNC_CODE = 0xF9 };

typedef struct {
    cit_library base;
    gif_file *(*open)(void *, gif_input_fn, int *);
    int (*close)(gif_file *, int *);
    int (*get_record_type)(gif_file *, int *);
    int (*get_image_desc)(gif_file *);
    int (*get_line)(gif_file *, gif_byte *, int);
    int (*get_extension)(gif_file *, int *, gif_byte **);
    int (*get_extension_next)(gif_file *, gif_byte **);
} gif_library;

cit_library *cit_gif_open(const char *name, char *message, size_t message_size) {
    void *handle = cit_dlopen(name, message, message_size);
    if (!handle) return NULL;
    gif_library *gif = calloc(1, sizeof *gif);
    if (!gif) {
        dlclose(handle);
        return NULL;
    }
    gif->base.kind = CIT_GIF;
    gif->base.handle = handle;
    CIT_RESOLVE(gif, open, "DGifOpen", 1, message, message_size);
    CIT_RESOLVE(gif, close, "DGifCloseFile", 1, message, message_size);
    CIT_RESOLVE(gif, get_record_type, "DGifGetRecordType", 1, message, message_size);
    CIT_RESOLVE(gif, get_image_desc, "DGifGetImageDesc", 1, message, message_size);
    CIT_RESOLVE(gif, get_line, "DGifGetLine", 1, message, message_size);
    CIT_RESOLVE(gif, get_extension, "DGifGetExtension", 1, message, message_size);
    CIT_RESOLVE(gif, get_extension_next, "DGifGetExtensionNext", 1, message, message_size);
    return &gif->base;
}

typedef struct {
    cit_input input;
    long long offset;
    long reads;
    int late;
} gif_reading;

static int gif_read_input(gif_file *file, gif_byte *buffer, int count) {
    gif_reading *reading = file->user_data;
    // The deadline holds outside the rows too (endless extension blocks
    // before the first frame): past it, the input reads as ended.
    if (reading->late || cit_past_deadline(reading->input, ++reading->reads)) {
        reading->late = 1;
        return 0;
    }
    int done = 0;
    while (done < count) {
        ssize_t read = cit_input_read(reading->input, buffer + done, (size_t)(count - done), reading->offset);
        if (read <= 0) break;
        done += (int)read;
        reading->offset += read;
    }
    return done;
}

// The row of the frame that its `index`-th line is, interlaced or not.
static int frame_row(int index, int height, bool interlaced) {
    if (!interlaced) return index;
    static const int first[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; pass++) {
        int rows = height > first[pass] ? (height - first[pass] + step[pass] - 1) / step[pass] : 0;
        if (index < rows) return first[pass] + index * step[pass];
        index -= rows;
    }
    return -1;
}

int cit_gif_thumbnail(const cit_library *library, cit_input input, int max_side, cit_image *out) {
    memset(out, 0, sizeof *out);
    if (!library || library->kind != CIT_GIF || max_side <= 0) return CIT_FAILED;
    const gif_library *gif = (const gif_library *)library;
    gif_reading reading = {.input = input, .offset = 0};
    int error = 0;
    gif_file *file = gif->open(&reading, gif_read_input, &error);
    // (giflib reads a colour map 3 bytes at a time: the deadline may pass in there.)
    if (!file) return reading.late ? CIT_TIMED_OUT : CIT_FAILED;
    int status = CIT_FAILED;
    int transparent = -1;
    gif_byte *indices = NULL;
    unsigned char *rgba = NULL;
    cit_scaler scaler = {0};
    long canvas_width = file->width, canvas_height = file->height;
    out->declared_width = canvas_width;
    out->declared_height = canvas_height;
    if (canvas_width <= 0 || canvas_height <= 0) goto done;
    if (canvas_width * canvas_height > CIT_MAX_STREAMED_PIXELS) {
        status = CIT_TOO_COSTLY;
        goto done;
    }
    // The first frame only: what comes before it is extensions (its
    // transparent colour among them).
    for (;;) {
        int type = 0;
        if (gif->get_record_type(file, &type) != GIF_OK || type == TERMINATE_RECORD_TYPE) goto done;
        if (type == EXTENSION_RECORD_TYPE) {
            int code = 0;
            gif_byte *block = NULL;
            if (gif->get_extension(file, &code, &block) != GIF_OK) goto done;
            if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4 && (block[1] & 1)) transparent = block[4];
            while (block) {
                if (gif->get_extension_next(file, &block) != GIF_OK) goto done;
            }
            continue;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) break;
    }
    if (gif->get_image_desc(file) != GIF_OK) goto done;
    gif_image_desc frame = file->image;
    gif_color_map *map = frame.color_map ? frame.color_map : file->color_map;
    if (!map || !map->colors || frame.width <= 0 || frame.height <= 0) goto done;
    if ((long)frame.width * frame.height > CIT_MAX_STREAMED_PIXELS) {
        out->declared_width = frame.width;
        out->declared_height = frame.height;
        status = CIT_TOO_COSTLY;
        goto done;
    }
    // A frame's row of indices and of RGBA, the scaler's column map: 9 bytes a column.
    out->memory = (uint64_t)(frame.width > canvas_width ? frame.width : canvas_width) * 9;
    // The canvas outside the frame is left white.
    if (cit_scaler_init(&scaler, canvas_width, canvas_height, max_side) != 0) goto done;
    indices = malloc((size_t)frame.width);
    rgba = malloc((size_t)frame.width * 4);
    if (!indices || !rgba) goto done;
    int rows = 0;
    for (int line = 0; line < frame.height; line++) {
        if (cit_past_deadline(input, line)) {
            status = CIT_TIMED_OUT;  // too slow: the icon, not half a picture
            goto done;
        }
        if (gif->get_line(file, indices, frame.width) != GIF_OK) break;  // cut short: keep the rows read
        for (int x = 0; x < frame.width; x++) {
            int index = indices[x];
            int known = index < map->count;
            rgba[x * 4] = known ? map->colors[index].red : 0;
            rgba[x * 4 + 1] = known ? map->colors[index].green : 0;
            rgba[x * 4 + 2] = known ? map->colors[index].blue : 0;
            rgba[x * 4 + 3] = index == transparent ? 0 : 255;
        }
        long y = (long)frame.top + frame_row(line, frame.height, frame.interlace);
        long first = frame.left, count = frame.width;
        if (first < canvas_width) cit_scaler_add_rgba(&scaler, y, rgba, first, 1, count);
        rows++;
    }
    if (reading.late) status = CIT_TIMED_OUT;
    else if (rows > 0) status = cit_scaler_finish(&scaler, out);
done:
    if (status == CIT_FAILED && reading.late) status = CIT_TIMED_OUT;
    if (status != CIT_MADE) cit_scaler_free(&scaler);
    free(indices);
    free(rgba);
    gif->close(file, &error);
    return status;
}
