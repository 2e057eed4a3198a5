#include "internal.h"

#include <stdlib.h>

// zlib's z_stream, as zlib.h lays it out (unchanged since zlib 1.0), and
// the functions used here, declared by hand so that no header is needed.
typedef struct {
    const unsigned char *next_in;
    unsigned int avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned int avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc;
    void *zfree;
    void *opaque;
    int data_type;
    unsigned long adler;
    unsigned long reserved;
} z_stream;

enum { Z_OK = 0, Z_STREAM_END = 1, Z_NO_FLUSH = 0, Z_BUF_ERROR = -5 };

typedef struct {
    cit_library base;
    const char *(*version)(void);
    int (*init)(z_stream *, int, const char *, int);
    int (*inflate)(z_stream *, int);
    int (*end)(z_stream *);
} zlib_library;

cit_library *cit_zlib_open(const char *name, char *message, size_t message_size) {
    void *handle = cit_dlopen(name, message, message_size);
    if (!handle) return NULL;
    zlib_library *zlib = calloc(1, sizeof *zlib);
    if (!zlib) {
        dlclose(handle);
        return NULL;
    }
    zlib->base.kind = CIT_ZLIB;
    zlib->base.handle = handle;
    CIT_RESOLVE(zlib, version, "zlibVersion", 1, message, message_size);
    CIT_RESOLVE(zlib, init, "inflateInit2_", 1, message, message_size);
    CIT_RESOLVE(zlib, inflate, "inflate", 1, message, message_size);
    CIT_RESOLVE(zlib, end, "inflateEnd", 1, message, message_size);
    return &zlib->base;
}

int cit_inflate(const cit_library *library, int fd, int64_t offset, int64_t compressed_size, unsigned char *out,
                size_t capacity, size_t *out_size) {
    *out_size = 0;
    if (!library || library->kind != CIT_ZLIB || offset < 0 || compressed_size < 0 || capacity > UINT32_MAX) return -1;
    const zlib_library *zlib = (const zlib_library *)library;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    // Raw DEFLATE, as ZIP stores it: no zlib header.
    if (zlib->init(&stream, -15, zlib->version(), (int)sizeof stream) != Z_OK) return -1;
    enum { CHUNK = 64 * 1024 };
    unsigned char *input = malloc(CHUNK);
    // Where a byte past `capacity` would go: a bomb, or a lie about the size.
    unsigned char spare;
    int past = capacity == 0;
    int status = -1;
    int64_t consumed = 0;
    cit_input file = {.fd = fd};
    if (!input) goto done;
    stream.next_out = past ? &spare : out;
    stream.avail_out = past ? 1 : (unsigned int)capacity;
    for (;;) {
        if (stream.avail_in == 0 && consumed < compressed_size) {
            size_t want = compressed_size - consumed < CHUNK ? (size_t)(compressed_size - consumed) : CHUNK;
            ssize_t read = cit_input_read(file, input, want, offset + consumed);
            if (read <= 0) goto done;  // the archive ends early
            consumed += read;
            stream.next_in = input;
            stream.avail_in = (unsigned int)read;
        }
        if (stream.avail_out == 0) {
            if (past) goto done;  // a byte more than declared
            past = 1;
            stream.next_out = &spare;
            stream.avail_out = 1;
        }
        int result = zlib->inflate(&stream, Z_NO_FLUSH);
        if (result == Z_STREAM_END) break;
        if (result != Z_OK && !(result == Z_BUF_ERROR && stream.avail_out == 0)) goto done;
        if (result == Z_BUF_ERROR && consumed >= compressed_size && stream.avail_in == 0) goto done;
    }
    if (past && stream.avail_out == 0) goto done;  // its last byte was one more than declared
    *out_size = past ? capacity : capacity - stream.avail_out;
    status = 0;
done:
    zlib->end(&stream);
    free(input);
    return status;
}
