#include "CJPEGThumbnail.h"

#include <string.h>

// The JPEG's markers read the way libjpeg reads them (jdmarker.c), so that
// what is counted here is what the decoder will do: bytes between marker
// segments that are not a marker are skipped, a scan's entropy-coded data
// runs to the first 0xFF followed by a byte other than 0x00 (a stuffed
// 0xFF), another 0xFF (fill) or a restart marker.

enum {
    M_SOI = 0xD8, M_EOI = 0xD9, M_SOS = 0xDA, M_TEM = 0x01,
    M_RST0 = 0xD0, M_RST7 = 0xD7,
};

// The most components libjpeg decodes (MAX_COMPONENTS in jmorecfg.h).
#define CJT_MAX_COMPONENTS 10

static unsigned read16(const unsigned char *at) { return (unsigned)at[0] << 8 | at[1]; }

static int is_frame_marker(unsigned marker) {
    // SOF0-3, 5-7, 9-11, 13-15; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

static unsigned long ceil_div(unsigned long a, unsigned long b) { return (a + b - 1) / b; }

// A component's blocks: its share of the image in 8×8 blocks, rounded up
// to whole MCUs (what jdcoefct.c allocates and an interleaved scan visits).
static uint64_t component_blocks(const cjt_frame *frame, const unsigned char *sampling) {
    unsigned h = sampling[0], v = sampling[1];
    unsigned long width = ceil_div(ceil_div((unsigned long)frame->width * h, frame->max_h), 8);
    unsigned long height = ceil_div(ceil_div((unsigned long)frame->height * v, frame->max_v), 8);
    return (uint64_t)(ceil_div(width, h) * h) * (uint64_t)(ceil_div(height, v) * v);
}

// The position just past a scan's entropy-coded data: the 0xFF of the marker that ends it, or `size`.
static unsigned long skip_scan_data(const unsigned char *bytes, unsigned long size, unsigned long at) {
    while (at < size) {
        const unsigned char *found = memchr(bytes + at, 0xFF, size - at);
        if (!found) return size;
        unsigned long next = (unsigned long)(found - bytes) + 1;
        while (next < size && bytes[next] == 0xFF) next++;  // fill bytes
        if (next >= size) return size;
        unsigned byte = bytes[next];
        if (byte != 0x00 && !(byte >= M_RST0 && byte <= M_RST7)) return next - 1;
        at = next + 1;
    }
    return size;
}

int cjt_inspect(const unsigned char *bytes, unsigned long size, cjt_frame *frame) {
    memset(frame, 0, sizeof *frame);
    if (!bytes || size < 4 || bytes[0] != 0xFF || bytes[1] != M_SOI) return -1;
    // Each component's id and sampling factors, in the frame's order.
    unsigned char ids[CJT_MAX_COMPONENTS];
    unsigned char sampling[CJT_MAX_COMPONENTS][2];
    uint64_t blocks[CJT_MAX_COMPONENTS];
    int have_frame = 0;
    unsigned long at = 2;
    for (;;) {
        // The next marker: libjpeg skips anything before an 0xFF, then fill bytes,
        // and an 0xFF followed by 0x00 is no marker.
        while (at < size && bytes[at] != 0xFF) at++;
        while (at + 1 < size && bytes[at + 1] == 0xFF) at++;
        if (at + 1 >= size) break;  // cut short: the decoder stops here too
        unsigned marker = bytes[at + 1];
        at += 2;
        if (marker == 0x00 || marker == M_TEM || (marker >= M_RST0 && marker <= M_RST7)) continue;
        if (marker == M_EOI) break;
        if (marker == M_SOI) return -1;  // two SOI markers: libjpeg refuses the file
        if (at + 2 > size) break;
        unsigned length = read16(bytes + at);
        if (length < 2) return -1;
        const unsigned char *body = bytes + at + 2;
        unsigned long body_length = length - 2;
        if (at + length > size) {
            // A segment cut short: the decoder fails on it, except a scan's header that is whole.
            if (marker != M_SOS) break;
        }
        if (is_frame_marker(marker)) {
            if (have_frame || body_length < 6) return -1;
            frame->marker = (int)marker;
            frame->precision = body[0];
            frame->height = (int)read16(body + 1);
            frame->width = (int)read16(body + 3);
            frame->components = body[5];
            if (frame->components < 1 || frame->components > CJT_MAX_COMPONENTS) return -1;
            if (body_length < 6 + 3 * (unsigned long)frame->components) return -1;
            frame->max_h = 1;
            frame->max_v = 1;
            for (int c = 0; c < frame->components; c++) {
                ids[c] = body[6 + 3 * c];
                sampling[c][0] = body[7 + 3 * c] >> 4;
                sampling[c][1] = body[7 + 3 * c] & 15;
                if (sampling[c][0] < 1 || sampling[c][0] > 4 || sampling[c][1] < 1 || sampling[c][1] > 4) return -1;
                if (sampling[c][0] > frame->max_h) frame->max_h = sampling[c][0];
                if (sampling[c][1] > frame->max_v) frame->max_v = sampling[c][1];
            }
            // SOF2, 6, 10 and 14 are progressive; 9-11 and 13-15 arithmetic-coded.
            frame->progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
            frame->arithmetic = marker >= 0xC9;
            // libjpeg learns the height of a frame declaring 0 from a DNL marker, which libjpeg-turbo refuses.
            if (frame->width == 0 || frame->height == 0) return -1;
            for (int c = 0; c < frame->components; c++) blocks[c] = component_blocks(frame, sampling[c]);
            have_frame = 1;
        } else if (marker == M_SOS) {
            if (!have_frame || body_length < 1) return -1;
            unsigned count = body[0];
            if (count < 1 || count > 4 || body_length < 4 + 2 * (unsigned long)count || at + length > size) return -1;
            unsigned start = body[1 + 2 * count], end = body[2 + 2 * count], high = body[3 + 2 * count] >> 4;
            // A block costs CJT_WORK_PER_BLOCK in every scan that holds it,
            // and each coefficient of its band where that costs no data: a
            // progressive refinement scan walks the band of every block an
            // end-of-band run skips (jdphuff.c), and an arithmetic decoder
            // may take thousands of decisions from one byte. Other
            // coefficients are paid for by their bits, at most the file's.
            unsigned band = end >= start ? end - start + 1 : 1;
            int walked = frame->arithmetic || (frame->progressive && start > 0 && high != 0);
            for (unsigned s = 0; s < count; s++) {
                for (int c = 0; c < frame->components; c++) {
                    if (ids[c] != body[1 + 2 * s]) continue;
                    frame->work += blocks[c] * (CJT_WORK_PER_BLOCK + (walked ? band : 0));
                }
            }
            // Whole-image coefficient buffers (jdcoefct.c) unless the file is
            // one sequential scan with every component (jdinput.c's
            // has_multiple_scans): progressive, or components in scans of their own.
            if (frame->scans == 0 && (frame->progressive || count < (unsigned)frame->components)) {
                frame->whole_image = 1;
            }
            frame->scans++;
            at = skip_scan_data(bytes, size, at + length);
            continue;
        }
        at += length;
    }
    if (!have_frame || frame->scans == 0) return -1;
    for (int c = 0; c < frame->components; c++) frame->blocks += blocks[c];
    if (frame->whole_image) frame->coefficient_bytes = frame->blocks * 128;  // 64 shorts a block
    return 0;
}
