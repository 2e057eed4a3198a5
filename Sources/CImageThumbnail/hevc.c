#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

// libheif decodes an image at the size its HEVC stream says (the sequence
// parameter set, SPS), not the size the file declares (ispe), which is
// all its API shows and all cit_heif_thumbnail can judge beforehand: a
// file declaring 64×64 whose stream says 65535×65535 would have libde265
// allocate gigabytes. So every decoder libheif uses goes through the one
// below: it reads the picture size of each SPS the stream carries, in the
// codec configuration and in the image's data alike, and refuses to decode
// a picture whose memory is over the budget. Other codecs (AV1, JPEG in a
// HEIF) are refused: their sizes are not checked.

// The part of libheif's plugin API (heif_plugin.h, 1.x) used here.
typedef struct {
    int code;
    int subcode;
    const char *message;
} plugin_error;

typedef struct heif_decoder_plugin {
    int plugin_api_version;
    const char *(*get_plugin_name)(void);
    void (*init_plugin)(void);
    void (*deinit_plugin)(void);
    int (*does_support_format)(int format);
    plugin_error (*new_decoder)(void **decoder);
    void (*free_decoder)(void *decoder);
    plugin_error (*push_data)(void *decoder, const void *data, size_t size);
    plugin_error (*decode_image)(void *decoder, void **out_image);
    // Version 2.
    void (*set_strict_decoding)(void *decoder, int flag);
    // Version 3.
    const char *id_name;
} heif_decoder_plugin;

enum { FORMAT_HEVC = 1, ERROR_OK = 0, ERROR_UNSUPPORTED_FEATURE = 4, ERROR_MEMORY = 6, ERROR_PLUGIN = 7 };
enum { SUBERROR_UNSPECIFIED = 0, SUBERROR_END_OF_DATA = 100, SUBERROR_UNSUPPORTED_CODEC = 3000 };

// The HEVC decoder wrapped, found once per load of libheif.
static const heif_decoder_plugin *inner_plugin;
static const void *wrapped_library;
static pthread_mutex_t wrapping = PTHREAD_MUTEX_INITIALIZER;

// One decode: the decoder wrapped and the largest picture its stream declared.
typedef struct {
    void *inner;
    uint64_t largest_memory;
    int unreadable;
} checked_decoder;

// The bits of an SPS, emulation prevention bytes (00 00 03) taken out.
typedef struct {
    const unsigned char *bytes;
    size_t size;
    size_t position;  // in bits, of the payload without emulation prevention
    size_t byte;      // the next byte to read
    int zeros;        // zero bytes just read
    unsigned current;
    int bits_left;
    int failed;
} bit_reader;

static unsigned read_bit(bit_reader *reader) {
    if (reader->bits_left == 0) {
        if (reader->byte >= reader->size) {
            reader->failed = 1;
            return 0;
        }
        unsigned next = reader->bytes[reader->byte++];
        if (reader->zeros >= 2 && next == 3) {
            reader->zeros = 0;
            if (reader->byte >= reader->size) {
                reader->failed = 1;
                return 0;
            }
            next = reader->bytes[reader->byte++];
        }
        reader->zeros = next == 0 ? reader->zeros + 1 : 0;
        reader->current = next;
        reader->bits_left = 8;
    }
    reader->bits_left--;
    return (reader->current >> reader->bits_left) & 1;
}

static uint64_t read_bits(bit_reader *reader, int count) {
    uint64_t value = 0;
    for (int i = 0; i < count; i++) value = value << 1 | read_bit(reader);
    return value;
}

// ue(v): Exp-Golomb, at most 32 leading zeros.
static uint64_t read_unsigned(bit_reader *reader) {
    int zeros = 0;
    while (!reader->failed && read_bit(reader) == 0) {
        if (++zeros > 32) {
            reader->failed = 1;
            return 0;
        }
    }
    return ((uint64_t)1 << zeros) - 1 + read_bits(reader, zeros);
}

int cit_hevc_picture(const unsigned char *nal, size_t size, uint64_t *width, uint64_t *height, int *bit_depth) {
    // The NAL unit's header: type 33 is a sequence parameter set.
    if (size < 3 || ((nal[0] >> 1) & 0x3F) != 33) return -1;
    bit_reader reader = {.bytes = nal + 2, .size = size - 2};
    read_bits(&reader, 4);  // sps_video_parameter_set_id
    int sub_layers = (int)read_bits(&reader, 3);
    read_bits(&reader, 1);  // sps_temporal_id_nesting_flag
    // profile_tier_level: the general profile (88 bits) and level (8).
    read_bits(&reader, 88);
    read_bits(&reader, 8);
    int profile_present[8] = {0}, level_present[8] = {0};
    for (int i = 0; i < sub_layers; i++) {
        profile_present[i] = (int)read_bits(&reader, 1);
        level_present[i] = (int)read_bits(&reader, 1);
    }
    if (sub_layers > 0) {
        for (int i = sub_layers; i < 8; i++) read_bits(&reader, 2);
    }
    for (int i = 0; i < sub_layers; i++) {
        if (profile_present[i]) read_bits(&reader, 88);
        if (level_present[i]) read_bits(&reader, 8);
    }
    read_unsigned(&reader);  // sps_seq_parameter_set_id
    uint64_t chroma = read_unsigned(&reader);
    if (chroma == 3) read_bits(&reader, 1);  // separate_colour_plane_flag
    *width = read_unsigned(&reader);
    *height = read_unsigned(&reader);
    if (read_bits(&reader, 1)) {  // conformance_window_flag: four offsets
        for (int i = 0; i < 4; i++) read_unsigned(&reader);
    }
    *bit_depth = 8 + (int)read_unsigned(&reader);
    return reader.failed ? -1 : 0;
}

// The memory libheif takes for a picture of this size, as cit_heif_thumbnail counts it.
static uint64_t picture_memory(uint64_t width, uint64_t height, int bit_depth) {
    uint64_t bytes = width * height * CIT_HEIF_BYTES_PER_PIXEL;
    return bit_depth > 8 ? bytes * 2 : bytes;
}

static const char *checked_name(void) { return "fileshare's size check around HEVC"; }

static int checked_supports(int format) {
    // HEVC, before the decoder it wraps; anything else, before any decoder: refused.
    if (format == FORMAT_HEVC) return inner_plugin->does_support_format(format) + 1;
    return format > 0 ? 1000 : 0;
}

static plugin_error checked_new(void **decoder) {
    checked_decoder *checked = calloc(1, sizeof *checked);
    if (!checked) return (plugin_error){ERROR_MEMORY, SUBERROR_UNSPECIFIED, "out of memory"};
    plugin_error error = inner_plugin->new_decoder(&checked->inner);
    if (error.code != ERROR_OK) {
        free(checked);
        return error;
    }
    *decoder = checked;
    return error;
}

static void checked_free(void *decoder) {
    checked_decoder *checked = decoder;
    if (!checked) return;
    if (checked->inner) inner_plugin->free_decoder(checked->inner);
    free(checked);
}

// libheif pushes the codec configuration's NAL units, then the image's
// data, each NAL unit after its size in 4 bytes, as the wrapped decoder
// reads them (libheif 1.x).
static plugin_error checked_push(void *decoder, const void *data, size_t size) {
    checked_decoder *checked = decoder;
    const unsigned char *bytes = data;
    size_t at = 0;
    while (at + 4 <= size) {
        size_t length = (size_t)bytes[at] << 24 | (size_t)bytes[at + 1] << 16 | (size_t)bytes[at + 2] << 8 | bytes[at + 3];
        at += 4;
        if (length > size - at) break;  // the decoder below says what is wrong
        uint64_t width = 0, height = 0;
        int depth = 8;
        if (length >= 3 && ((bytes[at] >> 1) & 0x3F) == 33) {
            if (cit_hevc_picture(bytes + at, length, &width, &height, &depth) != 0) {
                checked->unreadable = 1;
            } else {
                uint64_t memory = picture_memory(width, height, depth);
                if (memory > checked->largest_memory) checked->largest_memory = memory;
            }
        }
        at += length;
    }
    return inner_plugin->push_data(checked->inner, data, size);
}

static plugin_error checked_decode(void *decoder, void **image) {
    checked_decoder *checked = decoder;
    if (checked->unreadable) {
        return (plugin_error){ERROR_PLUGIN, SUBERROR_END_OF_DATA, "a sequence parameter set that cannot be read"};
    }
    if (checked->largest_memory > (uint64_t)CIT_MAX_HEIF_MEMORY) {
        return (plugin_error){ERROR_MEMORY, CIT_HEIF_SECURITY_LIMIT,
                              "the HEVC stream declares a picture larger than a thumbnail may decode"};
    }
    return inner_plugin->decode_image(checked->inner, image);
}

static void checked_strict(void *decoder, int flag) {
    checked_decoder *checked = decoder;
    if (inner_plugin->plugin_api_version >= 2 && inner_plugin->set_strict_decoding) {
        inner_plugin->set_strict_decoding(checked->inner, flag);
    }
}

// Any other codec: refused.
static plugin_error refused_new(void **decoder) {
    *decoder = NULL;
    return (plugin_error){ERROR_UNSUPPORTED_FEATURE, SUBERROR_UNSUPPORTED_CODEC,
                          "only HEVC images are decoded for thumbnails"};
}

static const heif_decoder_plugin checked_plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = checked_name,
    .does_support_format = checked_supports,
    .new_decoder = checked_new,
    .free_decoder = checked_free,
    .push_data = checked_push,
    .decode_image = checked_decode,
    .set_strict_decoding = checked_strict,
    .id_name = "fileshare-checked-hevc",
};

static int refused_supports(int format) { return format > 0 && format != FORMAT_HEVC ? 1000 : 0; }

static const heif_decoder_plugin refused_plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = checked_name,
    .does_support_format = refused_supports,
    .new_decoder = refused_new,
    .free_decoder = checked_free,
    .push_data = checked_push,
    .decode_image = checked_decode,
    .set_strict_decoding = checked_strict,
    .id_name = "fileshare-refused-codec",
};

int cit_heif_wrap_decoders(void *handle, char *message, size_t message_size) {
    int (*descriptors)(int, const void **, int) = NULL;
    const char *(*descriptor_name)(const void *) = NULL;
    plugin_error (*register_plugin)(const heif_decoder_plugin *) = NULL;
    void *address = dlsym(handle, "heif_get_decoder_descriptors");
    memcpy(&descriptors, &address, sizeof address);
    address = dlsym(handle, "heif_decoder_descriptor_get_name");
    memcpy(&descriptor_name, &address, sizeof address);
    address = dlsym(handle, "heif_register_decoder_plugin");
    memcpy(&register_plugin, &address, sizeof address);
    if (!descriptors || !descriptor_name || !register_plugin) {
        cit_copy_message(message, message_size, "libheif lacks its decoder plugin functions");
        return -1;
    }
    pthread_mutex_lock(&wrapping);
    int status = 0;
    // Once per load of libheif (its registry is its own).
    if (wrapped_library != address) {
        // libheif 1.x's descriptor is its plugin (heif.cc casts one to the
        // other); checked by its name and version before it is trusted.
        const void *found = NULL;
        int count = descriptors(FORMAT_HEVC, &found, 1);
        const heif_decoder_plugin *plugin = found;
        if (count < 1 || !plugin || plugin->plugin_api_version < 1 || plugin->plugin_api_version > 4 ||
            !plugin->get_plugin_name || plugin->get_plugin_name() != descriptor_name(found) ||
            plugin == &checked_plugin) {
            cit_copy_message(message, message_size, "libheif's HEVC decoder is not one whose sizes can be checked");
            status = -1;
        } else {
            inner_plugin = plugin;
            if (register_plugin(&checked_plugin).code != ERROR_OK ||
                register_plugin(&refused_plugin).code != ERROR_OK) {
                cit_copy_message(message, message_size, "libheif refused fileshare's size check around HEVC");
                status = -1;
            } else {
                wrapped_library = address;
            }
        }
    }
    pthread_mutex_unlock(&wrapping);
    return status;
}
