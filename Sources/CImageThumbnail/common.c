#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t cit_clock(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t cit_now(void) { return cit_clock(CLOCK_THREAD_CPUTIME_ID); }

int64_t cit_wall_now(void) { return cit_clock(CLOCK_MONOTONIC); }

int cit_past_deadline(cit_input input, long row) {
    if (row % 64 != 0) return 0;
    return (input.deadline > 0 && cit_now() > input.deadline)
        || (input.wall_deadline > 0 && cit_wall_now() > input.wall_deadline);
}

void cit_copy_message(char *message, size_t size, const char *text) {
    if (!message || size == 0) return;
    if (!text) text = "unknown error";
    size_t length = strlen(text);
    if (length >= size) length = size - 1;
    memcpy(message, text, length);
    message[length] = 0;
}

void *cit_dlopen(const char *name, char *message, size_t message_size) {
    cit_copy_message(message, message_size, "");
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) cit_copy_message(message, message_size, dlerror());
    return handle;
}

void cit_library_close(cit_library *library) {
    if (!library) return;
    if (library->kind == CIT_HEIF) cit_heif_release(library);
    if (library->handle) dlclose(library->handle);
    free(library);
}

void cit_image_free(cit_image *image) {
    if (!image) return;
    free(image->pixels);
    free(image->exif);
    image->pixels = NULL;
    image->exif = NULL;
}

long long cit_input_size(cit_input input) {
    if (input.bytes) return (long long)input.size;
    struct stat info;
    if (fstat(input.fd, &info) != 0 || !S_ISREG(info.st_mode)) return -1;
    return (long long)info.st_size;
}

ssize_t cit_input_read(cit_input input, void *buffer, size_t count, long long offset) {
    if (offset < 0) return -1;
    if (input.bytes) {
        if ((unsigned long long)offset >= input.size) return 0;
        size_t left = input.size - (size_t)offset;
        if (count > left) count = left;
        memcpy(buffer, input.bytes + offset, count);
        return (ssize_t)count;
    }
    for (;;) {
        ssize_t read = pread(input.fd, buffer, count, (off_t)offset);
        if (read < 0 && errno == EINTR) continue;
        return read;
    }
}

unsigned char *cit_input_whole(cit_input input, size_t *size, int *owned) {
    *owned = 0;
    long long length = cit_input_size(input);
    if (length <= 0 || length > CIT_MAX_INPUT) return NULL;
    if (input.bytes) {
        *size = input.size;
        return (unsigned char *)input.bytes;
    }
    unsigned char *bytes = malloc((size_t)length);
    if (!bytes) return NULL;
    size_t done = 0;
    while (done < (size_t)length) {
        ssize_t count = cit_input_read(input, bytes + done, (size_t)length - done, (long long)done);
        if (count <= 0) break;  // the file shrank: decode what there is
        done += (size_t)count;
    }
    *size = done;
    *owned = 1;
    return bytes;
}

void cit_fit(long width, long height, int max_side, int *out_width, int *out_height) {
    if (width <= 0 || height <= 0 || max_side <= 0) {
        *out_width = 0;
        *out_height = 0;
        return;
    }
    long longer = width > height ? width : height;
    if (longer <= max_side) {
        *out_width = (int)width;
        *out_height = (int)height;
        return;
    }
    // Rounded to the nearest pixel, the longer side exactly max_side.
    long w = (width * max_side * 2 + longer) / (longer * 2);
    long h = (height * max_side * 2 + longer) / (longer * 2);
    *out_width = (int)(w < 1 ? 1 : w);
    *out_height = (int)(h < 1 ? 1 : h);
}

int cit_scaler_init(cit_scaler *scaler, long source_width, long source_height, int max_side) {
    memset(scaler, 0, sizeof *scaler);
    // The column map (4 bytes a column) and a decoder's row stay a few MiB.
    if (source_width <= 0 || source_height <= 0 || source_width > CIT_MAX_WIDTH || source_height > 0x7FFFFFFF) return -1;
    cit_fit(source_width, source_height, max_side, &scaler->width, &scaler->height);
    if (scaler->width <= 0 || scaler->height <= 0) return -1;
    scaler->source_width = (int)source_width;
    scaler->source_height = (int)source_height;
    scaler->sums = calloc((size_t)scaler->width * (size_t)scaler->height * 4, sizeof(uint64_t));
    scaler->columns = malloc((size_t)source_width * sizeof(int));
    if (!scaler->sums || !scaler->columns) {
        cit_scaler_free(scaler);
        return -1;
    }
    for (long x = 0; x < source_width; x++) {
        scaler->columns[x] = (int)(x * scaler->width / source_width);
    }
    return 0;
}

void cit_scaler_add_rgba(cit_scaler *scaler, long y, const unsigned char *pixels, long first_x, int step_x, long count) {
    if (y < 0 || y >= scaler->source_height) return;
    uint64_t *row = scaler->sums + (size_t)(y * scaler->height / scaler->source_height) * (size_t)scaler->width * 4;
    long x = first_x;
    for (long i = 0; i < count && x < scaler->source_width; i++, x += step_x) {
        const unsigned char *p = pixels + i * 4;
        unsigned alpha = p[3];
        uint64_t *sum = row + (size_t)scaler->columns[x] * 4;
        // Composed over white: a transparent area shows as the page does.
        sum[0] += (p[0] * alpha + 255 * (255 - alpha) + 127) / 255;
        sum[1] += (p[1] * alpha + 255 * (255 - alpha) + 127) / 255;
        sum[2] += (p[2] * alpha + 255 * (255 - alpha) + 127) / 255;
        sum[3] += 1;
    }
}

void cit_scaler_add_rgb(cit_scaler *scaler, long y, const unsigned char *pixels, long count) {
    if (y < 0 || y >= scaler->source_height) return;
    uint64_t *row = scaler->sums + (size_t)(y * scaler->height / scaler->source_height) * (size_t)scaler->width * 4;
    if (count > scaler->source_width) count = scaler->source_width;
    for (long x = 0; x < count; x++) {
        const unsigned char *p = pixels + x * 3;
        uint64_t *sum = row + (size_t)scaler->columns[x] * 4;
        sum[0] += p[0];
        sum[1] += p[1];
        sum[2] += p[2];
        sum[3] += 1;
    }
}

int cit_scaler_finish(cit_scaler *scaler, cit_image *out) {
    // Only the pixels: a decoder may have put the image's EXIF there already.
    out->pixels = NULL;
    out->width = 0;
    out->height = 0;
    size_t count = (size_t)scaler->width * (size_t)scaler->height;
    out->pixels = malloc(count * 3);
    if (!out->pixels) {
        cit_scaler_free(scaler);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        const uint64_t *sum = scaler->sums + i * 4;
        for (int c = 0; c < 3; c++) {
            out->pixels[i * 3 + c] = sum[3] ? (unsigned char)((sum[c] + sum[3] / 2) / sum[3]) : 255;
        }
    }
    out->width = scaler->width;
    out->height = scaler->height;
    cit_scaler_free(scaler);
    return 0;
}

void cit_scaler_free(cit_scaler *scaler) {
    free(scaler->sums);
    free(scaler->columns);
    scaler->sums = NULL;
    scaler->columns = NULL;
}

int cit_scale_rgb(const unsigned char *pixels, int width, int height, int max_side, cit_image *out) {
    memset(out, 0, sizeof *out);
    cit_scaler scaler;
    if (!pixels || cit_scaler_init(&scaler, width, height, max_side) != 0) return -1;
    for (int y = 0; y < height; y++) {
        cit_scaler_add_rgb(&scaler, y, pixels + (size_t)y * (size_t)width * 3, width);
    }
    return cit_scaler_finish(&scaler, out);
}
