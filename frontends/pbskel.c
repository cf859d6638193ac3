/* pbskel.c - protobuf wire-format skeleton builder (see pbskel.h).
 *
 * The walk works on absolute positions in a source that is either a memory buffer or a file
 * read through a small pread() window; payloads to strip are skipped by position only. */
#include "pbskel.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(fp-pbskel-error-quark, fp_pbskel_error)

#define WINDOW (64 * 1024)

typedef struct {
    /* source: mem != NULL, or fd with a window buf[0..buf_len) holding bytes from buf_off */
    const uint8_t *mem;
    int fd;
    uint64_t size;
    uint8_t *buf;
    uint64_t buf_off;
    size_t buf_len;
    fp_pbskel_strip_fn strip;
    GByteArray *level[FP_PBSKEL_MAX_DEPTH + 1]; /* output per nesting depth */
    GError **error;
} skel;

/* Pointer to bytes [pos, pos+n) of the source; n <= WINDOW and pos+n <= size. NULL on I/O error. */
static const uint8_t *src_at(skel *s, uint64_t pos, size_t n)
{
    if (s->mem)
        return s->mem + pos;
    if (pos >= s->buf_off && pos + n <= s->buf_off + s->buf_len)
        return s->buf + (pos - s->buf_off);
    size_t want = (size_t)MIN((uint64_t)WINDOW, s->size - pos);
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->fd, s->buf + got, want - got, (off_t)(pos + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_IO, "read failed at byte %" G_GUINT64_FORMAT ": %s",
                        pos + got, r < 0 ? g_strerror(errno) : "file shrank while reading");
            return NULL;
        }
        got += (size_t)r;
    }
    s->buf_off = pos;
    s->buf_len = got;
    return s->buf;
}

/* Appends source bytes [pos, pos+n) to out. */
static bool src_copy(skel *s, uint64_t pos, uint64_t n, GByteArray *out)
{
    while (n > 0) {
        size_t chunk = (size_t)MIN(n, (uint64_t)WINDOW);
        const uint8_t *p = src_at(s, pos, chunk);
        if (!p)
            return false;
        g_byte_array_append(out, p, (guint)chunk);
        pos += chunk;
        n -= chunk;
    }
    return true;
}

/* Decodes a varint at *pos (before end). 0 ok, 1 truncated/overlong, -1 I/O error. */
static int src_varint(skel *s, uint64_t *pos, uint64_t end, uint64_t *v)
{
    size_t avail = (size_t)MIN(end - *pos, (uint64_t)10);
    const uint8_t *p = src_at(s, *pos, avail);
    if (!p)
        return -1;
    uint64_t r = 0;
    for (size_t i = 0; i < avail; i++) {
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *pos += i + 1;
            *v = r;
            return 0;
        }
    }
    return 1;
}

static void put_varint(GByteArray *out, uint64_t v)
{
    uint8_t buf[10];
    unsigned n = 0;
    do {
        buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    g_byte_array_append(out, buf, n);
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static bool fail(skel *s, uint64_t at, const ProtobufCMessageDescriptor *d, const char *field, const char *what)
{
    if (s->error && *s->error) /* an I/O error is already set */
        return false;
    g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_MALFORMED, "%s at byte %" G_GUINT64_FORMAT " (in %s%s%s)",
                what, at, d->name, field ? "." : "", field ? field : "");
    return false;
}

/* Copies message `d` in [p, end) into level[depth], stripping and recursing as described. */
static bool walk(skel *s, const ProtobufCMessageDescriptor *d, uint64_t p, uint64_t end, unsigned depth)
{
    if (depth >= FP_PBSKEL_MAX_DEPTH) {
        g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_DEPTH,
                    "messages nested deeper than %d at byte %" G_GUINT64_FORMAT " (in %s)", FP_PBSKEL_MAX_DEPTH, p,
                    d->name);
        return false;
    }
    GByteArray *out = s->level[depth];
    while (p < end) {
        uint64_t start = p, tag, len;
        if (src_varint(s, &p, end, &tag))
            return fail(s, start, d, NULL, "truncated field tag");
        uint32_t wire = (uint32_t)(tag & 7);
        uint64_t num = tag >> 3;
        if (num == 0 || num > 0x1fffffff)
            return fail(s, start, d, NULL, "invalid field number");
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)num);
        const char *fname = f ? f->name : NULL;
        switch (wire) {
        case 0:
            if (src_varint(s, &p, end, &len))
                return fail(s, start, d, fname, "truncated varint");
            break;
        case 1:
        case 5: {
            uint64_t w = wire == 1 ? 8 : 4;
            if (end - p < w)
                return fail(s, start, d, fname, wire == 1 ? "truncated fixed64" : "truncated fixed32");
            p += w;
            break;
        }
        case 2: {
            if (src_varint(s, &p, end, &len))
                return fail(s, start, d, fname, "truncated length");
            if (len > end - p)
                return fail(s, start, d, fname, "length runs past the end of the data");
            uint64_t payload = p;
            p += len;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (!s->level[depth + 1])
                    s->level[depth + 1] = g_byte_array_new();
                GByteArray *child = s->level[depth + 1];
                g_byte_array_set_size(child, 0);
                if (!walk(s, f->descriptor, payload, p, depth + 1))
                    return false;
                /* re-emit with the new length: the child may have shrunk */
                put_varint(out, tag);
                put_varint(out, child->len);
                g_byte_array_append(out, child->data, child->len);
                continue;
            }
            if (f && s->strip && s->strip(d, f, (size_t)MIN(len, (uint64_t)SIZE_MAX))) {
                uint8_t m[4 + 8 + 8];
                put_le(m, num, 4);
                put_le(m + 4, payload, 8);
                put_le(m + 12, len, 8);
                put_varint(out, ((uint64_t)FP_PBSKEL_MARKER_FIELD << 3) | 2);
                put_varint(out, sizeof m);
                g_byte_array_append(out, m, sizeof m);
                continue;
            }
            break;
        }
        default:
            return fail(s, start, d, fname, "unsupported wire type (group or invalid)");
        }
        if (p - start > G_MAXUINT - out->len)
            return fail(s, start, d, fname, "message too large");
        if (!src_copy(s, start, p - start, out))
            return false;
    }
    return true;
}

static GBytes *build(skel *s, const ProtobufCMessageDescriptor *d)
{
    GBytes *result = NULL;
    s->level[0] = g_byte_array_sized_new((guint)MIN(s->size, (uint64_t)(1u << 20)));
    if (walk(s, d, 0, s->size, 0))
        result = g_byte_array_free_to_bytes(g_steal_pointer(&s->level[0]));
    for (int i = 0; i <= FP_PBSKEL_MAX_DEPTH; i++)
        if (s->level[i])
            g_byte_array_free(s->level[i], TRUE);
    g_free(s->buf);
    return result;
}

GBytes *fp_pbskel_build(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                        fp_pbskel_strip_fn strip, GError **error)
{
    skel s = {.mem = data, .fd = -1, .size = len, .strip = strip, .error = error};
    if (!data)
        s.mem = (const uint8_t *)"";
    return build(&s, d);
}

GBytes *fp_pbskel_build_fd(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                           GError **error)
{
    skel s = {.fd = fd, .size = size, .strip = strip, .error = error, .buf = g_malloc(WINDOW)};
    return build(&s, d);
}

unsigned fp_pbskel_markers(const ProtobufCMessage *msg, fp_pbskel_marker *out, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < msg->n_unknown_fields && n < max; i++) {
        const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
        if (u->tag != FP_PBSKEL_MARKER_FIELD || u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
            continue;
        /* protobuf-c keeps the length prefix in an unknown field's data: 0x14, then 20 bytes */
        if (u->len != 21 || u->data[0] != 20)
            continue;
        const uint8_t *p = u->data + 1;
        out[n].field = (uint32_t)get_le(p, 4);
        out[n].offset = get_le(p + 4, 8);
        out[n].length = get_le(p + 12, 8);
        n++;
    }
    return n;
}
