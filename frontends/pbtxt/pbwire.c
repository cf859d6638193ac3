/* pbwire.c - protobuf wire-format writer (see pbwire.h). */
#include "pbwire.h"

#include <string.h>

#include "frontends/pbskel.h"

/* Messages larger than this are refused (protobuf's own limit is 2 GiB). */
#define WIRE_MAX ((guint)G_MAXINT32)

struct fp_pbwire {
    GByteArray *level[FP_PBWIRE_MAX_DEPTH + 1];
    unsigned depth;
    bool overflow;
};

fp_pbwire *fp_pbwire_new(void)
{
    fp_pbwire *w = g_new0(fp_pbwire, 1);
    w->level[0] = g_byte_array_new();
    return w;
}

void fp_pbwire_free(fp_pbwire *w)
{
    if (!w)
        return;
    for (unsigned i = 0; i <= FP_PBWIRE_MAX_DEPTH; i++)
        if (w->level[i])
            g_byte_array_free(w->level[i], TRUE);
    g_free(w);
}

unsigned fp_pbwire_depth(const fp_pbwire *w) { return w->depth; }

static GByteArray *cur(fp_pbwire *w) { return w->level[w->depth]; }

/* Appends n bytes to the current level unless that would pass WIRE_MAX. */
static void put(fp_pbwire *w, const void *p, size_t n)
{
    GByteArray *b = cur(w);
    if (w->overflow || n > WIRE_MAX - b->len) {
        w->overflow = true;
        return;
    }
    g_byte_array_append(b, p, (guint)n);
}

static void put_raw_varint(fp_pbwire *w, uint64_t v)
{
    uint8_t buf[10];
    put(w, buf, fp_pbskel_put_varint(buf, v));
}

static void put_tag(fp_pbwire *w, uint32_t field, unsigned wire) { put_raw_varint(w, ((uint64_t)field << 3) | wire); }

void fp_pbwire_begin(fp_pbwire *w)
{
    g_assert(w->depth < FP_PBWIRE_MAX_DEPTH);
    w->depth++;
    if (!w->level[w->depth])
        w->level[w->depth] = g_byte_array_new();
    g_byte_array_set_size(w->level[w->depth], 0);
}

bool fp_pbwire_end(fp_pbwire *w, uint32_t field)
{
    g_assert(w->depth > 0);
    GByteArray *child = w->level[w->depth];
    w->depth--;
    put_tag(w, field, 2);
    put_raw_varint(w, child->len);
    put(w, child->data, child->len);
    return !w->overflow;
}

void fp_pbwire_varint(fp_pbwire *w, uint32_t field, uint64_t v)
{
    put_tag(w, field, 0);
    put_raw_varint(w, v);
}

void fp_pbwire_fixed32(fp_pbwire *w, uint32_t field, uint32_t v)
{
    uint8_t b[4];
    fp_pbskel_put_le(b, v, 4);
    put_tag(w, field, 5);
    put(w, b, 4);
}

void fp_pbwire_fixed64(fp_pbwire *w, uint32_t field, uint64_t v)
{
    uint8_t b[8];
    fp_pbskel_put_le(b, v, 8);
    put_tag(w, field, 1);
    put(w, b, 8);
}

void fp_pbwire_bytes(fp_pbwire *w, uint32_t field, const void *data, size_t len)
{
    put_tag(w, field, 2);
    put_raw_varint(w, len);
    put(w, data, len);
}

bool fp_pbwire_int(fp_pbwire *w, const ProtobufCFieldDescriptor *f, bool neg, uint64_t mag)
{
    if (neg && mag == 0)
        neg = false;
    /* signed range [-2^(bits-1), 2^(bits-1)-1], unsigned [0, 2^bits-1] */
    bool is_signed = false;
    unsigned bits = 64;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        is_signed = true;
        bits = 32;
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        is_signed = true;
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        bits = 32;
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        break;
    case PROTOBUF_C_TYPE_BOOL:
        if (neg || mag > 1)
            return false;
        fp_pbwire_varint(w, f->id, mag);
        return true;
    default:
        return false;
    }
    if (is_signed) {
        uint64_t limit = (uint64_t)1 << (bits - 1); /* |min| */
        if (neg ? mag > limit : mag >= limit)
            return false;
    } else if (neg || (bits == 32 && mag > G_MAXUINT32)) {
        return false;
    }
    uint64_t twos = neg ? (uint64_t)0 - mag : mag; /* two's complement of the 64-bit value */
    int64_t sv = (int64_t)twos;
    switch (f->type) {
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64:
        fp_pbwire_varint(w, f->id, ((uint64_t)sv << 1) ^ (uint64_t)(sv >> 63));
        break;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
        fp_pbwire_fixed32(w, f->id, (uint32_t)twos);
        break;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
        fp_pbwire_fixed64(w, f->id, twos);
        break;
    default: /* int32/enum are sign-extended to 64 bits on the wire */
        fp_pbwire_varint(w, f->id, twos);
        break;
    }
    return true;
}

bool fp_pbwire_real(fp_pbwire *w, const ProtobufCFieldDescriptor *f, double v)
{
    if (f->type == PROTOBUF_C_TYPE_FLOAT) {
        float x = (float)v;
        uint32_t bits;
        memcpy(&bits, &x, 4);
        fp_pbwire_fixed32(w, f->id, bits);
        return true;
    }
    if (f->type == PROTOBUF_C_TYPE_DOUBLE) {
        uint64_t bits;
        memcpy(&bits, &v, 8);
        fp_pbwire_fixed64(w, f->id, bits);
        return true;
    }
    return false;
}

bool fp_pbwire_ok(const fp_pbwire *w) { return !w->overflow; }

ProtobufCMessage *fp_pbwire_unpack(fp_pbwire *w, const ProtobufCMessageDescriptor *d)
{
    g_assert(w->depth == 0);
    if (w->overflow)
        return NULL;
    bool over = false; /* a text of many tiny messages ("op{}") unpacks to far more memory */
    ProtobufCMessage *msg = fp_pbskel_unpack(d, w->level[0]->data, w->level[0]->len, &over);
    w->overflow = over;
    return msg;
}

const uint8_t *fp_pbwire_data(const fp_pbwire *w, size_t *len)
{
    *len = w->level[0]->len;
    return w->level[0]->data;
}
