/* pbskel.c - protobuf wire-format skeleton builder (see pbskel.h). */
#include "pbskel.h"

#include <string.h>

G_DEFINE_QUARK(fp-pbskel-error-quark, fp_pbskel_error)

typedef struct {
    const uint8_t *base;
    fp_pbskel_strip_fn strip;
    GByteArray *level[FP_PBSKEL_MAX_DEPTH + 1]; /* scratch output per nesting depth */
    GError **error;
} skel;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
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

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool fail(skel *s, const uint8_t *at, const ProtobufCMessageDescriptor *d, const char *field,
                 const char *what)
{
    g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_MALFORMED, "%s at byte %td (in %s%s%s)", what,
                at - s->base, d->name, field ? "." : "", field ? field : "");
    return false;
}

static bool walk(skel *s, const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
                 unsigned depth)
{
    if (depth >= FP_PBSKEL_MAX_DEPTH) {
        g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_DEPTH,
                    "messages nested deeper than %d at byte %td (in %s)", FP_PBSKEL_MAX_DEPTH, p - s->base,
                    d->name);
        return false;
    }
    GByteArray *out = s->level[depth];
    while (p < end) {
        const uint8_t *start = p;
        uint64_t tag;
        if (!read_varint(&p, end, &tag))
            return fail(s, start, d, NULL, "truncated field tag");
        uint32_t wire = (uint32_t)(tag & 7);
        uint64_t num = tag >> 3;
        if (num == 0 || num > 0x1fffffff)
            return fail(s, start, d, NULL, "invalid field number");
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)num);
        const char *fname = f ? f->name : NULL;
        uint64_t len;
        switch (wire) {
        case 0:
            if (!read_varint(&p, end, &len))
                return fail(s, start, d, fname, "truncated varint");
            break;
        case 1:
            if (end - p < 8)
                return fail(s, start, d, fname, "truncated fixed64");
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return fail(s, start, d, fname, "truncated fixed32");
            p += 4;
            break;
        case 2: {
            if (!read_varint(&p, end, &len))
                return fail(s, start, d, fname, "truncated length");
            if (len > (uint64_t)(end - p))
                return fail(s, start, d, fname, "length runs past the end of the data");
            const uint8_t *payload = p;
            p += len;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (!s->level[depth + 1])
                    s->level[depth + 1] = g_byte_array_new();
                GByteArray *child = s->level[depth + 1];
                g_byte_array_set_size(child, 0);
                if (!walk(s, f->descriptor, payload, payload + len, depth + 1))
                    return false;
                /* re-emit with the new length: the child may have shrunk */
                put_varint(out, tag);
                put_varint(out, child->len);
                g_byte_array_append(out, child->data, child->len);
                continue;
            }
            if (f && s->strip && s->strip(d, f, (size_t)len)) {
                uint8_t m[4 + 8 + 8];
                m[0] = (uint8_t)num;
                m[1] = (uint8_t)(num >> 8);
                m[2] = (uint8_t)(num >> 16);
                m[3] = (uint8_t)(num >> 24);
                put_le64(m + 4, (uint64_t)(payload - s->base));
                put_le64(m + 12, len);
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
        g_byte_array_append(out, start, (guint)(p - start));
    }
    return true;
}

GBytes *fp_pbskel_build(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                        fp_pbskel_strip_fn strip, GError **error)
{
    if (len > G_MAXUINT) {
        g_set_error(error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_MALFORMED, "message of %zu bytes is too large", len);
        return NULL;
    }
    skel s = {.base = data, .strip = strip, .error = error};
    /* level[0] is the result; deeper scratch buffers are created as the walk reaches them */
    GBytes *result = NULL;
    s.level[0] = g_byte_array_sized_new((guint)MIN(len, 1u << 20));
    if (walk(&s, d, data, data + len, 0))
        result = g_byte_array_free_to_bytes(g_steal_pointer(&s.level[0]));
    for (int i = 0; i <= FP_PBSKEL_MAX_DEPTH; i++)
        if (s.level[i])
            g_byte_array_free(s.level[i], TRUE);
    return result;
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

unsigned fp_pbskel_markers(const ProtobufCMessage *msg, fp_pbskel_marker *out, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < msg->n_unknown_fields && n < max; i++) {
        const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
        if (u->tag != FP_PBSKEL_MARKER_FIELD || u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
            continue;
        /* protobuf-c keeps the length prefix in an unknown field's data */
        const uint8_t *p = u->data, *end = u->data + u->len;
        uint64_t plen = 0;
        if (!read_varint(&p, end, &plen) || plen != 20 || end - p != 20)
            continue;
        out[n].field = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        out[n].offset = get_le64(p + 4);
        out[n].length = get_le64(p + 12);
        n++;
    }
    return n;
}
