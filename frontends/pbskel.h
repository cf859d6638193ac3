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
#include <stdarg.h>
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

/* Varint fields numbered below this are remembered per message for the strip predicate. */
#define FP_PBSKEL_SEEN 16

/* True when field `f` of message `d`, with a payload of `len` bytes, must be stripped. `seen[n]`
 * is the value of the message's varint field n (n < FP_PBSKEL_SEEN) read before `f`, UINT64_MAX
 * when none was (so a TensorProto's payload can be judged by its data_type, which protobuf writers
 * put first). `seen` NULL: the walk asks whether the field may be stripped in some message: answer
 * for the context that strips the most. */
typedef bool (*fp_pbskel_strip_fn)(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f, size_t len,
                                   const uint64_t *seen);

/* Builds the skeleton of the message of type `d` serialized in data[0..len). On success returns
 * a new GBytes the caller unrefs. On malformed input returns NULL and sets FP_PBSKEL_ERROR with the
 * byte offset and the message/field being read. Never reads outside [data, data+len). */
GBytes *fp_pbskel_build(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len, fp_pbskel_strip_fn strip,
                        GError **error);

/* The same, reading the first `size` bytes of the open file `fd` through a small window with
 * pread(): stripped payloads are skipped, never read, so they never enter the process's memory.
 * I/O errors and short reads fail with FP_PBSKEL_ERROR_IO. */
GBytes *fp_pbskel_build_fd(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                           GError **error);

/* Opens `path` for the readers of serialized models: returns a descriptor (O_CLOEXEC) of a
 * non-empty regular file and its size in *size, or -1 with an error in `domain`: `io_code`
 * "cannot read: <reason>" when it cannot be opened or stat'ed, `malformed_code` "empty file" or
 * "not a regular file". The caller closes the descriptor. */
int fp_pbskel_open(const char *path, GQuark domain, int io_code, int malformed_code, uint64_t *size, GError **error);

/* Sets *error to the message fmt formats from ap, in `domain` with `code`, unless error is NULL
 * or already set (the first fault stands): the body of a reader's own variadic fail(). */
void fp_pbskel_fail_va(GError **error, GQuark domain, int code, const char *fmt, va_list ap) G_GNUC_PRINTF(4, 0);

/* Flags of fp_pbskel_build_ex / fp_pbskel_build_fd_ex. */
enum {
    /* A length-delimited sub-message too short to hold any field `strip` strips, and to nest
     * FP_PBSKEL_MAX_DEPTH deep, is copied as it is instead of walked: much faster on graphs of
     * many small messages. Requires `strip` to be monotonic in len (what it strips at len bytes it
     * strips at any greater length). Malformed bytes inside such a sub-message are left to
     * whoever unpacks the skeleton; without the flag the walk reports them with their offset. */
    FP_PBSKEL_FAST = 1u << 0,
};

/* fp_pbskel_build / fp_pbskel_build_fd with flags (0 = the same behaviour). */
GBytes *fp_pbskel_build_ex(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                           fp_pbskel_strip_fn strip, unsigned flags, GError **error);
GBytes *fp_pbskel_build_fd_ex(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                              unsigned flags, GError **error);

/* Whether every field number in an unpacked message and its sub-messages is valid: protobuf-c
 * keeps a field numbered above 2^29 - 1 as unknown where the exact walk rejects it, so a skeleton
 * built with FP_PBSKEL_FAST must pass this check to be judged as the exact walk would. */
bool fp_pbskel_numbers_valid(const ProtobufCMessage *msg);

/* One field of a serialized message, as read by fp_pbskel_next_field. */
typedef struct {
    uint32_t number;        /* field number */
    uint32_t wire;          /* wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    const uint8_t *payload; /* wire type 2: first byte of the payload, else NULL */
    size_t len;             /* wire type 2: payload length, else 0 */
    uint64_t value;         /* wire type 0: the varint; 1 and 5: the fixed64 / fixed32 (little-endian) */
} fp_pbskel_field;

/* Reads the field that starts at *p (before end) into *f and moves *p past it, so that a caller
 * can visit a message's fields in order without unpacking it (e.g. a skeleton's repeated fields
 * one at a time). False, *p unchanged, on a truncated or invalid field or a group. */
bool fp_pbskel_next_field(const uint8_t **p, const uint8_t *end, fp_pbskel_field *f);

/* Decodes the varint at *p (before end) into *v and moves *p past it: as protobuf-c reads one (up
 * to 10 bytes, bits past the 64th dropped). False, *p unchanged, when truncated or longer. */
bool fp_pbskel_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* Inline versions of fp_pbskel_varint and fp_pbskel_next_field, for loops over many small fields. */
static inline __attribute__((always_inline)) bool fp_pbskel_varint_inline(const uint8_t **p, const uint8_t *end,
                                                                          uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < end && !(q[0] & 0x80)) { /* one byte: tags and short lengths */
        *v = q[0];
        *p = q + 1;
        return true;
    }
    uint64_t r = 0;
    for (unsigned i = 0; i < 10 && q + i < end; i++) {
        r |= (uint64_t)(q[i] & 0x7f) << (7 * i);
        if (!(q[i] & 0x80)) {
            *p = q + i + 1;
            *v = r;
            return true;
        }
    }
    return false;
}

/* The `bytes`-byte little-endian integer at p. */
static inline uint64_t fp_pbskel_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Writes v as a varint at buf (room for 10 bytes: enough for any value); returns its length. */
static inline unsigned fp_pbskel_put_varint(uint8_t *buf, uint64_t v)
{
    unsigned n = 0;
    do {
        buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Writes the low `bytes` bytes of v at p, little-endian (the inverse of fp_pbskel_le). */
static inline void fp_pbskel_put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The head of the field at *p: number, wire type, and for wire type 2 the payload's length (not
 * checked against end: f->payload is not set), for 0, 1 and 5 the value. Moves *p past the head
 * (for wire type 2, to the payload). */
static inline __attribute__((always_inline)) bool fp_pbskel_next_field_head(const uint8_t **p, const uint8_t *end,
                                                                            fp_pbskel_field *f)
{
    const uint8_t *q = *p;
    uint64_t tag, v = 0;
    if (!fp_pbskel_varint_inline(&q, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return false;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    f->payload = NULL;
    f->len = 0;
    f->value = 0;
    switch (f->wire) {
    case 0:
        if (!fp_pbskel_varint_inline(&q, end, &f->value))
            return false;
        break;
    case 1:
    case 5:
        if ((size_t)(end - q) < (f->wire == 1 ? 8u : 4u))
            return false;
        f->value = fp_pbskel_le(q, f->wire == 1 ? 8 : 4);
        q += f->wire == 1 ? 8 : 4;
        break;
    case 2:
        if (!fp_pbskel_varint_inline(&q, end, &v))
            return false;
        f->len = (size_t)v;
        if ((uint64_t)f->len != v)
            return false;
        break;
    default:
        return false;
    }
    *p = q;
    return true;
}

static inline __attribute__((always_inline)) bool fp_pbskel_next_field_inline(const uint8_t **p, const uint8_t *end,
                                                                              fp_pbskel_field *f)
{
    const uint8_t *q = *p;
    if (!fp_pbskel_next_field_head(&q, end, f))
        return false;
    if (f->wire == 2) {
        if (f->len > (size_t)(end - q))
            return false;
        f->payload = q;
        q += f->len;
    }
    *p = q;
    return true;
}

/* ---- readers: the skeletons of parts of a source, one at a time ----
 * A message too large to hold whole in memory as a skeleton (a graph of a million nodes) can be
 * read one element at a time: its other fields first, then each element's skeleton when it is
 * wanted, into one reused buffer. Offsets are absolute in the source, as in markers. */
typedef struct fp_pbskel_reader fp_pbskel_reader;

/* A reader of the first `size` bytes of mem, or (mem NULL) of the open file fd, for messages
 * reachable from `root` with the strip predicate and flags of fp_pbskel_build_ex. */
fp_pbskel_reader *fp_pbskel_reader_new(const ProtobufCMessageDescriptor *root, const uint8_t *mem, int fd,
                                       uint64_t size, fp_pbskel_strip_fn strip, unsigned flags);
void fp_pbskel_reader_free(fp_pbskel_reader *r);

/* Shown each field of the message that fp_pbskel_reader_build walks (start: offset of its tag;
 * payload, len: its payload, for wire type 2, else 0); true leaves a wire-type-2 field out. */
typedef bool (*fp_pbskel_skip_fn)(void *data, uint32_t number, uint32_t wire, uint64_t start, uint64_t payload,
                                  uint64_t len);

/* The skeleton of message d at [offset, offset+len) of the source, nested `depth` deep (as in the
 * whole walk: a sub-message the fast walk would copy as it is, is copied; with `skip`, it is always
 * walked, and the fields `skip` names are left out). *out / *out_len: the skeleton, valid until the
 * next call. False on malformed input or an I/O error (no message: the caller builds the whole
 * skeleton to have one). */
bool fp_pbskel_reader_build(fp_pbskel_reader *r, const ProtobufCMessageDescriptor *d, uint64_t offset, uint64_t len,
                            unsigned depth, fp_pbskel_skip_fn skip, void *skip_data, const uint8_t **out,
                            size_t *out_len);

/* The field whose tag is at *pos (before end) of the source, as fp_pbskel_next_field reads it, but
 * without reading its payload: *payload receives its offset (wire type 2), and f->payload is NULL.
 * Moves *pos past it; false when truncated or invalid. */
bool fp_pbskel_reader_field(fp_pbskel_reader *r, uint64_t *pos, uint64_t end, fp_pbskel_field *f, uint64_t *payload);

/* Bytes [pos, pos+len) of the source when the reader holds them already (in its window, or a
 * buffer source), else NULL: nothing is read, so what the last fp_pbskel_reader_build gave stays
 * valid. For a look ahead. */
const uint8_t *fp_pbskel_reader_peek(const fp_pbskel_reader *r, uint64_t pos, uint64_t len);

/* The markers found among an unpacked message's unknown fields; returns how many were written
 * (at most max). */
unsigned fp_pbskel_markers(const ProtobufCMessage *msg, fp_pbskel_marker *out, unsigned max);

/* Memory an unpacked message may take: a message of many tiny sub-messages (an empty OpDef is 2
 * bytes serialized, some 400 unpacked) must not turn a small file into gigabytes. */
#define FP_PBSKEL_MAX_UNPACKED ((size_t)512 << 20)

/* protobuf_c_message_unpack(d, NULL, len, data) within FP_PBSKEL_MAX_UNPACKED bytes. The message
 * is freed as usual with protobuf_c_message_free_unpacked(msg, NULL). NULL when protobuf-c
 * rejects the bytes, or (*over_budget set, may be NULL) when the budget ran out. */
ProtobufCMessage *fp_pbskel_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                                   bool *over_budget);

#endif
