/* pbskel.h - protobuf wire-format skeletons: a copy of a serialized message without its bulk
 * payloads, so that weights are never copied or even touched.
 *
 * The walk is generic over protobuf-c message descriptors. A caller-supplied predicate names the
 * length-delimited fields to strip (e.g. onnx.TensorProto.raw_data over 4 KiB); each stripped
 * field is replaced by one unknown field FP_PBSKEL_MARKER_FIELD in the same message, whose payload
 * is an fp_pbskel_marker (little-endian) locating the original bytes in the input. After
 * unpacking the skeleton with protobuf-c, fp_pbskel_markers() reads them back.
 */
#ifndef FP_PBSKEL_H
#define FP_PBSKEL_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

#define FP_PBSKEL_ERROR (fp_pbskel_error_quark())
GQuark fp_pbskel_error_quark(void);
enum { FP_PBSKEL_ERROR_MALFORMED, FP_PBSKEL_ERROR_DEPTH, FP_PBSKEL_ERROR_IO };

/* Field number of the marker (below 2^29, unused by the schemas we read). */
#define FP_PBSKEL_MARKER_FIELD 536870000u
#define FP_PBSKEL_MAX_DEPTH 100

typedef struct {
    uint32_t field;  /* number of the stripped field */
    uint64_t offset; /* offset of its payload in the input buffer */
    uint64_t length; /* payload length in bytes */
} fp_pbskel_marker;

/* True when field `f` of message `d`, with a payload of `len` bytes, must be stripped. */
typedef bool (*fp_pbskel_strip_fn)(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                                   size_t len);

/* Builds the skeleton of the message of type `d` serialized in data[0..len). On success returns
 * a new GBytes the caller unrefs. On malformed input returns NULL and sets FP_PBSKEL_ERROR with the
 * byte offset and the message/field being read. Never reads outside [data, data+len). */
GBytes *fp_pbskel_build(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                        fp_pbskel_strip_fn strip, GError **error);

/* The same, reading the first `size` bytes of the open file `fd` through a small window with
 * pread(): stripped payloads are skipped, never read, so they never enter the process's memory.
 * I/O errors and short reads fail with FP_PBSKEL_ERROR_IO. */
GBytes *fp_pbskel_build_fd(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                           GError **error);

/* The markers found among an unpacked message's unknown fields; returns how many were written
 * (at most max). */
unsigned fp_pbskel_markers(const ProtobufCMessage *msg, fp_pbskel_marker *out, unsigned max);

#endif
