#include "CJPEGThumbnail.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <jpeglib.h>

struct error_manager {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void on_error(j_common_ptr info) {
    struct error_manager *manager = (struct error_manager *)info->err;
    longjmp(manager->jump, 1);
}

static void quiet(j_common_ptr info, int level) { (void)info; (void)level; }

int cjt_thumbnail(int fd, int max_side, unsigned char **out, unsigned long *out_size) {
    *out = NULL;
    *out_size = 0;
    int copy = dup(fd);
    if (copy < 0) return -1;
    FILE *file = fdopen(copy, "rb");
    if (!file) { close(copy); return -1; }

    struct jpeg_decompress_struct in;
    struct jpeg_compress_struct outinfo;
    struct error_manager in_errors, out_errors;
    JSAMPLE *volatile pixels = NULL;
    volatile int compressing = 0;

    in.err = jpeg_std_error(&in_errors.pub);
    in_errors.pub.error_exit = on_error;
    in_errors.pub.emit_message = quiet;
    if (setjmp(in_errors.jump)) {
        jpeg_destroy_decompress(&in);
        fclose(file);
        free(pixels);
        return -1;
    }
    jpeg_create_decompress(&in);
    jpeg_stdio_src(&in, file);
    jpeg_read_header(&in, TRUE);
    unsigned int longer = in.image_width > in.image_height ? in.image_width : in.image_height;
    unsigned int denominator = 1;
    while (denominator < 8 && longer / denominator > (unsigned int)max_side * 2) denominator *= 2;
    in.scale_num = 1;
    in.scale_denom = denominator;
    in.out_color_space = in.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    in.dct_method = JDCT_IFAST;
    jpeg_start_decompress(&in);
    size_t row = (size_t)in.output_width * (size_t)in.output_components;
    pixels = malloc(row * in.output_height);
    if (!pixels) longjmp(in_errors.jump, 1);
    while (in.output_scanline < in.output_height) {
        JSAMPROW line = pixels + row * in.output_scanline;
        jpeg_read_scanlines(&in, &line, 1);
    }
    unsigned int width = in.output_width, height = in.output_height;
    int components = in.output_components;
    J_COLOR_SPACE space = in.out_color_space;
    jpeg_finish_decompress(&in);
    jpeg_destroy_decompress(&in);
    fclose(file);

    outinfo.err = jpeg_std_error(&out_errors.pub);
    out_errors.pub.error_exit = on_error;
    out_errors.pub.emit_message = quiet;
    if (setjmp(out_errors.jump)) {
        if (compressing) jpeg_destroy_compress(&outinfo);
        free(pixels);
        free(*out);
        *out = NULL;
        return -1;
    }
    jpeg_create_compress(&outinfo);
    compressing = 1;
    jpeg_mem_dest(&outinfo, out, out_size);
    outinfo.image_width = width;
    outinfo.image_height = height;
    outinfo.input_components = components;
    outinfo.in_color_space = space;
    jpeg_set_defaults(&outinfo);
    jpeg_set_quality(&outinfo, 80, TRUE);
    jpeg_start_compress(&outinfo, TRUE);
    while (outinfo.next_scanline < outinfo.image_height) {
        JSAMPROW line = pixels + row * outinfo.next_scanline;
        jpeg_write_scanlines(&outinfo, &line, 1);
    }
    jpeg_finish_compress(&outinfo);
    jpeg_destroy_compress(&outinfo);
    free(pixels);
    return 0;
}

int cjt_encode_rgb(const unsigned char *pixels, unsigned int width, unsigned int height, int quality,
                   unsigned char **out, unsigned long *out_size) {
    struct jpeg_compress_struct info;
    struct error_manager errors;
    *out = NULL;
    *out_size = 0;
    info.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = on_error;
    errors.pub.emit_message = quiet;
    if (setjmp(errors.jump)) {
        jpeg_destroy_compress(&info);
        free(*out);
        *out = NULL;
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, out, out_size);
    info.image_width = width;
    info.image_height = height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW line = (JSAMPROW)(pixels + (size_t)width * 3 * info.next_scanline);
        jpeg_write_scanlines(&info, &line, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return 0;
}
