/* onnx_wire.c - the protobuf wire decoder of the ONNX reader (see onnx_wire.h): splits a
 * serialized ModelProto from its main graph's elements, and unpacks those one at a time, reading
 * nodes and usual initializers straight from the wire. Translating them is onnx_import.c's job. */
#include "onnx_wire.h"

#include <string.h>

static void *wire_alloc(fp_onnx_wire_mem *a, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (size <= a->cap - a->used) {
        void *p = a->buf + a->used;
        a->used += size;
        return p;
    }
    return fp_arena_alloc_raw(a->more, size);
}

static void *arena_alloc(void *arena, size_t size) { return fp_arena_alloc(arena, size); }
static void arena_free(void *arena, void *p)
{
    (void)arena;
    (void)p;
}

#define WIRE_MEM (64 * 1024)

void fp_onnx_wire_init(fp_onnx_wire *wg, fp_pbskel_reader *r)
{
    *wg = (fp_onnx_wire){.reader = r, .keep = fp_arena_new(), .scratch = fp_arena_new()};
    wg->keep_alloc = (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = wg->keep};
    wg->alloc = (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = wg->scratch};
    wg->mem = (fp_onnx_wire_mem){.buf = g_malloc(WIRE_MEM), .cap = WIRE_MEM, .more = wg->scratch};
}

void fp_onnx_wire_clear(fp_onnx_wire *wg)
{
    if (wg->model_rest)
        g_byte_array_free(wg->model_rest, TRUE);
    if (wg->graph_rest)
        g_byte_array_free(wg->graph_rest, TRUE);
    g_free(wg->mem.buf);
    fp_arena_free(wg->scratch);
    fp_arena_free(wg->keep);
}

/* GraphProto fields (numbers from onnx.proto) read element by element, else NULL. */
static const ProtobufCMessageDescriptor *element_descriptor(uint32_t field)
{
    switch (field) {
    case 1: /* node */
        return &onnx__node_proto__descriptor;
    case 5: /* initializer */
        return &onnx__tensor_proto__descriptor;
    case 11: /* input */
    case 12: /* output */
    case 13: /* value_info */
        return &onnx__value_info_proto__descriptor;
    case 15: /* sparse_initializer */
        return &onnx__sparse_tensor_proto__descriptor;
    default:
        return NULL;
    }
}

/* ---- NodeProto read straight from the wire: protobuf-c's generic unpack costs some 4k instructions
 * per node, most of a large graph's load. Only the usual shape is read here (fields input, output,
 * name, op_type, attribute, doc_string, domain with their wire types, and attributes holding
 * scalars, strings, ints and floats); the result is the same struct protobuf-c would give, so the
 * importer takes both alike. Anything else (an unknown field, a wrong wire type, a tensor or graph
 * attribute, an odd varint) is left to protobuf-c: a whole attribute, or the whole node. */

static char *wire_str(fp_onnx_wire_mem *a, const fp_pbskel_field *f)
{
    static char empty[1]; /* never written: the strings of a NodeProto are only read */
    if (!f->len)          /* most nodes' domain */
        return empty;
    char *s = wire_alloc(a, f->len + 1);
    memcpy(s, f->payload, f->len);
    s[f->len] = 0;
    return s;
}

/* Counts into *n the values of field f of a repeated varint field (ints, dims): one (wire type 0)
 * or a packed run (wire type 2); false on another wire type or a bad varint in the run. */
static inline bool wire_count_varints(const fp_pbskel_field *f, size_t *n)
{
    if (f->wire == 0) {
        (*n)++;
        return true;
    }
    if (f->wire != 2)
        return false;
    const uint8_t *r = f->payload, *rend = f->payload + f->len;
    uint64_t v;
    while (r < rend)
        if (!fp_pbskel_varint_inline(&r, rend, &v))
            return false;
        else
            (*n)++;
    return true;
}

/* Appends the values of field f, checked by wire_count_varints, to out[*n...], counting them. */
static inline void wire_read_varints(const fp_pbskel_field *f, int64_t *out, size_t *n)
{
    if (f->wire == 0) {
        out[(*n)++] = (int64_t)f->value;
        return;
    }
    const uint8_t *r = f->payload, *rend = f->payload + f->len;
    uint64_t v;
    while (r < rend && fp_pbskel_varint_inline(&r, rend, &v))
        out[(*n)++] = (int64_t)v;
}

/* Bytes field f as protobuf-c leaves it: an empty one without a data pointer. */
static inline ProtobufCBinaryData wire_bytes(const fp_pbskel_field *f)
{
    return (ProtobufCBinaryData){.len = f->len, .data = f->len ? (uint8_t *)f->payload : NULL};
}

/* Whether the AttributeProto at [p, end) holds only name, doc_string, ref_attr_name, type, f, i,
 * s, floats and ints, each of its wire type; counts the elements of its lists into *n_ints and
 * *n_floats. */
static bool attr_wire_check(const uint8_t *p, const uint8_t *end, size_t *n_ints, size_t *n_floats)
{
    fp_pbskel_field f;
    while (p < end) {
        if (!fp_pbskel_next_field_inline(&p, end, &f))
            return false;
        switch (f.number) {
        case 1:
        case 4:
        case 13:
        case 21: /* name, s, doc_string, ref_attr_name */
            if (f.wire != 2)
                return false;
            break;
        case 2: /* f */
            if (f.wire != 5)
                return false;
            break;
        case 3: /* i */
            if (f.wire != 0)
                return false;
            break;
        case 20: /* type (enum): a plain int32 */
            if (f.wire != 0 || f.value > INT32_MAX)
                return false;
            break;
        case 7: /* floats, one or packed */
            if (f.wire == 5)
                (*n_floats)++;
            else if (f.wire == 2 && f.len % 4 == 0)
                *n_floats += f.len / 4;
            else
                return false;
            break;
        case 8: /* ints, one or packed */
            if (!wire_count_varints(&f, n_ints))
                return false;
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Fills ap (a copy of the template, its lists allocated) from the AttributeProto at [p, end),
 * checked by attr_wire_check. */
static void attr_wire_fill(fp_onnx_wire_mem *a, const uint8_t *p, const uint8_t *end, Onnx__AttributeProto *ap)
{
    fp_pbskel_field f;
    while (p < end && fp_pbskel_next_field_inline(&p, end, &f)) { /* every field reads: checked */
        uint32_t w = (uint32_t)f.value;                           /* f and floats: the float's bits */
        switch (f.number) {
        case 1:
            ap->name = wire_str(a, &f);
            break;
        case 21:
            ap->ref_attr_name = wire_str(a, &f);
            break;
        case 13:
            ap->doc_string = wire_str(a, &f);
            break;
        case 4:
            ap->has_s = 1;
            ap->s = wire_bytes(&f);
            break;
        case 2:
            ap->has_f = 1;
            memcpy(&ap->f, &w, 4);
            break;
        case 3:
            ap->has_i = 1;
            ap->i = (int64_t)f.value;
            break;
        case 20:
            ap->has_type = 1;
            ap->type = (Onnx__AttributeProto__AttributeType)(int32_t)f.value;
            break;
        case 7:
            if (f.wire == 5) {
                memcpy(&ap->floats[ap->n_floats++], &w, 4);
            } else {
                memcpy(&ap->floats[ap->n_floats], f.payload, f.len);
                ap->n_floats += f.len / 4;
            }
            break;
        case 8:
            wire_read_varints(&f, ap->ints, &ap->n_ints);
            break;
        default: /* not reached: checked by attr_wire_check */
            break;
        }
    }
}

/* The AttributeProto at [p, p+len) into *ap when it holds only name, doc_string, ref_attr_name, type,
 * f, i, s, floats, ints; false (ap undefined) otherwise. */
static bool attr_from_wire(fp_onnx_wire_mem *a, const uint8_t *p, size_t len, Onnx__AttributeProto *ap)
{
    size_t n_ints = 0, n_floats = 0;
    if (!attr_wire_check(p, p + len, &n_ints, &n_floats))
        return false;
    static const Onnx__AttributeProto attr_init = ONNX__ATTRIBUTE_PROTO__INIT;
    memcpy(ap, &attr_init, sizeof *ap); /* a copy of a template: no slow `rep stos` to clear it first */
    if (n_ints)
        ap->ints = wire_alloc(a, n_ints * sizeof *ap->ints);
    if (n_floats)
        ap->floats = wire_alloc(a, n_floats * sizeof *ap->floats);
    attr_wire_fill(a, p, p + len, ap);
    return true;
}

#define WIRE_MARKERS 4

/* Whether the TensorProto at [p, end) holds only dims, data_type, name, doc_string, raw_data and
 * at most WIRE_MARKERS skeleton markers, each of its wire type; counts its dims and markers. */
static bool tensor_wire_check(const uint8_t *p, const uint8_t *end, size_t *n_dims, size_t *n_markers)
{
    fp_pbskel_field f;
    while (p < end) {
        if (!fp_pbskel_next_field_inline(&p, end, &f))
            return false;
        switch (f.number) {
        case 1: /* dims, one or packed */
            if (!wire_count_varints(&f, n_dims))
                return false;
            break;
        case 2: /* data_type: a plain int32 */
            if (f.wire != 0 || f.value > INT32_MAX)
                return false;
            break;
        case 8:
        case 9:
        case 12: /* name, raw_data, doc_string */
            if (f.wire != 2)
                return false;
            break;
        case FP_PBSKEL_MARKER_FIELD: /* kept by protobuf-c as an unknown field, length prefix included */
            if (f.wire != 2 || f.len != 20 || f.payload[-1] != 20 || *n_markers == WIRE_MARKERS)
                return false;
            (*n_markers)++;
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Fills tp (a copy of the template, its dims and unknown fields allocated) from the TensorProto at
 * [p, end), checked by tensor_wire_check. */
static void tensor_wire_fill(fp_onnx_wire_mem *a, const uint8_t *p, const uint8_t *end, Onnx__TensorProto *tp)
{
    fp_pbskel_field f;
    while (p < end && fp_pbskel_next_field_inline(&p, end, &f)) { /* every field reads: checked */
        switch (f.number) {
        case 1:
            wire_read_varints(&f, tp->dims, &tp->n_dims);
            break;
        case 2:
            tp->has_data_type = 1;
            tp->data_type = (int32_t)f.value;
            break;
        case 8:
            tp->name = wire_str(a, &f);
            break;
        case 9:
            tp->has_raw_data = 1;
            tp->raw_data = wire_bytes(&f);
            break;
        case 12: /* doc_string: not imported */
            break;
        case FP_PBSKEL_MARKER_FIELD:
            tp->base.unknown_fields[tp->base.n_unknown_fields++] = (ProtobufCMessageUnknownField){
                .tag = FP_PBSKEL_MARKER_FIELD,
                .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
                .len = f.len + 1,
                .data = (uint8_t *)f.payload - 1,
            };
            break;
        default: /* not reached: checked by tensor_wire_check */
            break;
        }
    }
}

/* The TensorProto at [p, p+len) as protobuf-c would unpack it, when it holds only dims, data_type,
 * name, doc_string, raw_data and skeleton markers (an initializer whose payload was stripped, or a
 * small one in raw_data); else NULL (the caller unpacks it with protobuf-c). */
static Onnx__TensorProto *tensor_from_wire(fp_onnx_wire_mem *a, const uint8_t *p, size_t len)
{
    size_t n_dims = 0, n_markers = 0;
    if (!tensor_wire_check(p, p + len, &n_dims, &n_markers))
        return NULL;
    Onnx__TensorProto *tp = wire_alloc(a, sizeof *tp);
    static const Onnx__TensorProto tensor_init = ONNX__TENSOR_PROTO__INIT;
    memcpy(tp, &tensor_init, sizeof *tp); /* (as attr_from_wire's) */
    if (n_dims)
        tp->dims = wire_alloc(a, n_dims * sizeof *tp->dims);
    if (n_markers)
        tp->base.unknown_fields = wire_alloc(a, n_markers * sizeof *tp->base.unknown_fields);
    tensor_wire_fill(a, p, p + len, tp);
    return tp;
}

/* The bytes of string field f up to its first NUL, if any (as its C string would end). */
static size_t name_len(const fp_pbskel_field *f)
{
    const void *nul = memchr(f->payload, 0, f->len);
    return nul ? (size_t)((const uint8_t *)nul - f->payload) : f->len;
}

/* The NodeProto at [p, p+len) as protobuf-c would unpack it, in scratch arena a, except that its
 * input and output names are left in place, not NUL-terminated: their lengths are in *lens, inputs
 * then outputs (fp_onnx_sink.element). NULL when the node is not of the usual shape (the caller unpacks it
 * with protobuf-c), or, with *malformed set, when one of its attributes does not unpack. */
static Onnx__NodeProto *node_from_wire(fp_onnx_wire_mem *a, ProtobufCAllocator *alloc, const uint8_t *p, size_t len,
                                       size_t **lens, bool *malformed)
{
    const uint8_t *q = p, *end = p + len;
    fp_pbskel_field f;
    size_t n_in = 0, n_out = 0, n_attr = 0;
    while (q < end) {
        if (!fp_pbskel_next_field_inline(&q, end, &f) || f.wire != 2 || f.number > 7)
            return NULL;
        n_in += f.number == 1;
        n_out += f.number == 2;
        n_attr += f.number == 5;
    }
    Onnx__NodeProto *np = wire_alloc(a, sizeof *np);
    static const Onnx__NodeProto node_init = ONNX__NODE_PROTO__INIT;
    memcpy(np, &node_init, sizeof *np); /* (as attr_from_wire's) */
    if (n_in)
        np->input = wire_alloc(a, n_in * sizeof(char *));
    if (n_out)
        np->output = wire_alloc(a, n_out * sizeof(char *));
    if (n_attr)
        np->attribute = wire_alloc(a, n_attr * sizeof(Onnx__AttributeProto *));
    *lens = wire_alloc(a, MAX(n_in + n_out, 1) * sizeof(size_t));
    for (q = p; q < end;) {
        (void)fp_pbskel_next_field_inline(&q, end, &f);
        switch (f.number) {
        case 1:
            (*lens)[np->n_input] = name_len(&f);
            np->input[np->n_input++] = (char *)f.payload;
            break;
        case 2:
            (*lens)[n_in + np->n_output] = name_len(&f);
            np->output[np->n_output++] = (char *)f.payload;
            break;
        case 3:
            np->name = wire_str(a, &f);
            break;
        case 4:
            np->op_type = wire_str(a, &f);
            break;
        case 6: /* doc_string: not imported */
            break;
        case 7:
            np->domain = wire_str(a, &f);
            break;
        case 5: {
            Onnx__AttributeProto *ap = wire_alloc(a, sizeof *ap);
            if (!attr_from_wire(a, f.payload, f.len, ap)) {
                ap = (Onnx__AttributeProto *)protobuf_c_message_unpack(&onnx__attribute_proto__descriptor, alloc, f.len,
                                                                       f.payload);
                if (!ap || !fp_pbskel_numbers_valid(&ap->base)) {
                    *malformed = true;
                    return NULL;
                }
            }
            np->attribute[np->n_attribute++] = ap;
            break;
        }
        default: /* field 0 is not valid, fields above 7 were rejected */
            return NULL;
        }
    }
    return np;
}

/* Unpacks element f (of GraphProto field f->number) in wg's scratch arena: a node or an initializer
 * of the usual shape read straight from the wire (a node's name lengths in *lens), anything else by
 * protobuf-c. NULL, with *malformed set, when it does not unpack. */
static const ProtobufCMessage *element_unpack(fp_onnx_wire *wg, const fp_pbskel_field *f, size_t **lens,
                                              bool *malformed)
{
    ProtobufCMessage *msg = NULL;
    wg->mem.used = 0;
    if (f->number == FP_ONNX_WIRE_NODE)
        msg = (ProtobufCMessage *)node_from_wire(&wg->mem, &wg->alloc, f->payload, f->len, lens, malformed);
    else if (f->number == FP_ONNX_WIRE_INITIALIZER)
        msg = (ProtobufCMessage *)tensor_from_wire(&wg->mem, f->payload, f->len);
    bool fast = msg != NULL; /* read from the wire: the field numbers are checked */
    if (!msg && !*malformed)
        msg = protobuf_c_message_unpack(element_descriptor(f->number), &wg->alloc, f->len, f->payload);
    if (!msg || (!fast && !fp_pbskel_numbers_valid(msg))) {
        *malformed = true;
        return NULL;
    }
    return msg;
}

/* Unpacks element number `index` of field f->number and hands it to sink; the scratch arena is
 * reset after. */
static bool element(fp_onnx_wire *wg, const fp_pbskel_field *f, size_t index, const fp_onnx_sink *sink, bool *malformed)
{
    size_t *lens = NULL; /* of a node read from the wire */
    const ProtobufCMessage *msg = element_unpack(wg, f, &lens, malformed);
    bool ok = msg && sink->element(sink->data, f->number, index, msg, lens);
    fp_arena_reset(wg->scratch);
    return ok;
}

/* Shows sink->ahead the names that the element of field `field` at pos (before end) will look up,
 * when it is a node or an initializer that wg's reader holds already: the importer prefetches their
 * part of its table of names, so that the lookups of the next element find it in the cache. A hint:
 * whatever is odd or not at hand is left alone. */
static void prefetch_element(fp_onnx_wire *wg, uint32_t field, uint64_t pos, uint64_t end, const fp_onnx_sink *sink)
{
    if ((field != 1 && field != 5) || !sink->ahead)
        return;
    uint64_t hlen = MIN(end - pos, (uint64_t)20); /* a tag and a length */
    const uint8_t *head = fp_pbskel_reader_peek(wg->reader, pos, hlen), *q = head, *qend;
    fp_pbskel_field f;
    if (!head || !fp_pbskel_next_field_head(&q, head + hlen, &f) || f.number != field || f.wire != 2 ||
        !(q = fp_pbskel_reader_peek(wg->reader, pos + (uint64_t)(q - head), f.len)))
        return;
    /* writers put fields in the order of their numbers: the names come first in a node (input 1,
     * output 2, name 3), and a tensor's name (8) comes before its data */
    uint32_t last = field == 1 ? 3 : 8;
    fp_pbskel_field out = {0}; /* a node's last output: its name is often the node's */
    for (qend = q + f.len; q < qend;) {
        if (!fp_pbskel_next_field_inline(&q, qend, &f) || f.number > last)
            return;
        if (f.wire != 2 || (field == 5 && f.number != 8) ||
            (f.number == 3 && out.payload && f.len == out.len && memcmp(f.payload, out.payload, f.len) == 0))
            continue;
        sink->ahead(sink->data, (const char *)f.payload, f.len);
        if (f.number == 2)
            out = f;
    }
}

/* fp_onnx_wire_elements from wg->reader: each element's skeleton is built when it is walked. */
static bool elements_read(fp_onnx_wire *wg, uint32_t field, size_t *index, const fp_onnx_sink *sink, bool *malformed)
{
    uint64_t pos = wg->rfrom[field], end = wg->rto[field], payload;
    fp_pbskel_field f;
    while (pos < end) {
        if (!fp_pbskel_reader_field(wg->reader, &pos, end, &f, &payload)) {
            *malformed = true;
            return false;
        }
        if (f.number != field)
            continue;
        fp_pbskel_field e = {.number = field, .wire = 2};
        if (!fp_pbskel_reader_build(wg->reader, element_descriptor(field), payload, f.len, 2, NULL, NULL, &e.payload,
                                    &e.len)) {
            *malformed = true;
            return false;
        }
        if (pos < end)
            prefetch_element(wg, field, pos, end, sink);
        if (!element(wg, &e, (*index)++, sink, malformed))
            return false;
    }
    return true;
}

bool fp_onnx_wire_elements(fp_onnx_wire *wg, uint32_t field, size_t *index, const fp_onnx_sink *sink, bool *malformed)
{
    if (wg->reader)
        return elements_read(wg, field, index, sink, malformed);
    const uint8_t *p = wg->from[field], *end = wg->to[field];
    fp_pbskel_field f;
    if (!p)
        return true;
    while (p < end && fp_pbskel_next_field_inline(&p, end, &f))
        if (f.number == field && !element(wg, &f, (*index)++, sink, malformed))
            return false;
    return true;
}

bool fp_onnx_wire_elements_valid(fp_onnx_wire *wg)
{
    if (wg->reader)
        return true;
    const uint8_t *p = wg->data, *end = wg->data + wg->len;
    fp_pbskel_field f;
    bool ok = true;
    while (ok && p < end && fp_pbskel_next_field_inline(&p, end, &f)) {
        const ProtobufCMessageDescriptor *d = element_descriptor(f.number);
        if (d) {
            const ProtobufCMessage *msg = protobuf_c_message_unpack(d, &wg->alloc, f.len, f.payload);
            ok = msg && fp_pbskel_numbers_valid(msg);
            fp_arena_reset(wg->scratch);
        }
    }
    return ok;
}

/* Copies the fields of message [data, data+len) into `rest`, except those of number `number`:
 * exactly one is required, length-delimited, whose payload goes to *payload / *plen. False when
 * the message is not that simple (the caller then unpacks it whole, with protobuf-c's verdict). */
static bool split_one(const uint8_t *data, size_t len, uint32_t number, GByteArray *rest, const uint8_t **payload,
                      size_t *plen)
{
    const uint8_t *p = data, *end = data + len;
    unsigned found = 0;
    while (p < end) {
        const uint8_t *start = p;
        fp_pbskel_field f;
        if (!fp_pbskel_next_field_inline(&p, end, &f))
            return false;
        if (f.number != number) {
            g_byte_array_append(rest, start, (guint)(p - start));
            continue;
        }
        if (f.wire != 2 || found++)
            return false;
        *payload = f.payload;
        *plen = f.len;
    }
    return found == 1;
}

/* Counts an element of field `number` of the main graph into wg->n_node and wg->n_values. */
static void count_element(fp_onnx_wire *wg, uint32_t number)
{
    wg->n_node += number == FP_ONNX_WIRE_NODE;
    wg->n_values += number == FP_ONNX_WIRE_NODE || number == FP_ONNX_WIRE_INITIALIZER || number == FP_ONNX_WIRE_INPUT ||
                    number == FP_ONNX_WIRE_SPARSE_INITIALIZER;
}

/* Splits the main graph's fields: elements stay in place (wg->data), the others go to `rest`. */
static bool split_graph(fp_onnx_wire *wg, GByteArray *rest)
{
    const uint8_t *p = wg->data, *end = wg->data + wg->len;
    while (p < end) {
        const uint8_t *start = p;
        fp_pbskel_field f;
        if (!fp_pbskel_next_field_inline(&p, end, &f))
            return false;
        if (!element_descriptor(f.number)) {
            g_byte_array_append(rest, start, (guint)(p - start));
            continue;
        }
        if (f.wire != 2)
            return false;
        count_element(wg, f.number);
        if (!wg->from[f.number])
            wg->from[f.number] = start;
        wg->to[f.number] = p;
    }
    return true;
}

bool fp_onnx_wire_open(fp_onnx_wire *wg, const uint8_t *data, size_t len, const Onnx__ModelProto **mp)
{
    Onnx__ModelProto *m = NULL;
    wg->model_rest = g_byte_array_new();
    wg->graph_rest = g_byte_array_new();
    if (split_one(data, len, 7 /* ModelProto.graph */, wg->model_rest, &wg->data, &wg->len) &&
        split_graph(wg, wg->graph_rest)) {
        m = onnx__model_proto__unpack(&wg->keep_alloc, wg->model_rest->len, wg->model_rest->data);
        wg->head = m ? onnx__graph_proto__unpack(&wg->keep_alloc, wg->graph_rest->len, wg->graph_rest->data) : NULL;
    }
    bool ok = m && wg->head && fp_pbskel_numbers_valid(&m->base) && fp_pbskel_numbers_valid(&wg->head->base);
    *mp = ok ? m : NULL;
    return ok;
}

const Onnx__ModelProto *fp_onnx_wire_whole(fp_onnx_wire *wg, const uint8_t *data, size_t len)
{
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&wg->keep_alloc, len, data);
    return mp && fp_pbskel_numbers_valid(&mp->base) ? mp : NULL;
}

/* ---------------------------------------------------------------- from a reader */

typedef struct {
    unsigned n_graph;
    bool odd;
    uint64_t offset, len; /* ModelProto.graph's payload */
} model_split;

/* fp_pbskel_skip_fn: leaves ModelProto.graph out, noting where it is. */
static bool skip_graph(void *data, uint32_t number, uint32_t wire, uint64_t start, uint64_t payload, uint64_t len)
{
    (void)start;
    model_split *ms = data;
    if (number != 7)
        return false;
    ms->n_graph++;
    if (wire != 2) {
        ms->odd = true;
        return false;
    }
    ms->offset = payload;
    ms->len = len;
    return true;
}

/* fp_pbskel_skip_fn: leaves the elements of a GraphProto out, noting where they are (split_graph). */
static bool skip_elements(void *data, uint32_t number, uint32_t wire, uint64_t start, uint64_t payload, uint64_t len)
{
    fp_onnx_wire *wg = data;
    if (!element_descriptor(number))
        return false;
    if (wire != 2) {
        wg->odd = true;
        return false;
    }
    count_element(wg, number);
    if (!wg->rto[number])
        wg->rfrom[number] = start;
    wg->rto[number] = payload + len;
    return true;
}

bool fp_onnx_wire_open_reader(fp_onnx_wire *wg, uint64_t size, const Onnx__ModelProto **mp)
{
    const uint8_t *data;
    size_t len;
    model_split ms = {0};
    *mp = NULL;
    if (!fp_pbskel_reader_build(wg->reader, &onnx__model_proto__descriptor, 0, size, 0, skip_graph, &ms, &data, &len) ||
        ms.n_graph != 1 || ms.odd)
        return false;
    Onnx__ModelProto *m = onnx__model_proto__unpack(&wg->keep_alloc, len, data);
    if (!m || !fp_pbskel_numbers_valid(&m->base) ||
        !fp_pbskel_reader_build(wg->reader, &onnx__graph_proto__descriptor, ms.offset, ms.len, 1, skip_elements, wg,
                                &data, &len) ||
        wg->odd)
        return false;
    wg->head = onnx__graph_proto__unpack(&wg->keep_alloc, len, data);
    if (!wg->head || !fp_pbskel_numbers_valid(&wg->head->base))
        return false;
    *mp = m;
    return true;
}
