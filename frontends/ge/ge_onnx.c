/* ge_onnx.c - GE-written ONNX (ge_onnx_*.pbtxt dumps) back into the ModelDef it came from.
 *
 * GE's ONNX dump writes each op as a NodeProto with op_type "ge:<type>", the same "node:k" /
 * "node:-1" input strings, and its tensor descriptors flattened into attributes
 * ("output_desc_dtype:0", "input_desc_shape:1", ...). Each subgraph is a NodeProto of op_type
 * "subgraph" holding a GRAPH attribute; the dump does not say which op calls it, so that node is
 * kept as an op of type "subgraph" that owns the graph. The rebuilt ModelDef (written as wire
 * bytes, pbwire.h) then goes through the one GE importer, so both dump kinds map alike.
 */
#include "ge_internal.h"

#include <string.h>

#include "frontends/pbtxt/pbwire.h"

typedef struct {
    fp_pbwire *w;
    GPtrArray *graphs; /* const Onnx__GraphProto*: the ModelDef graphs, main first */
    GPtrArray *names;  /* their names (borrowed) */
    GError **error;
} conv;

/* Field number of `name` in d (the schema is ours: a missing name is a bug). */
static uint32_t fid(const ProtobufCMessageDescriptor *d, const char *name)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    g_assert(f);
    return f->id;
}

#define OP(name) fid(&ge__proto__op_def__descriptor, name)
#define ATTR(name) fid(&ge__proto__attr_def__descriptor, name)
#define LIST(name) fid(&ge__proto__attr_def__list_value__descriptor, name)
#define DESC(name) fid(&ge__proto__tensor_descriptor__descriptor, name)

bool fp_ge_onnx_is_ge(const Onnx__ModelProto *mp)
{
    if (mp->producer_name && strcmp(mp->producer_name, "GE") == 0)
        return true;
    const Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; g && i < g->n_node; i++)
        if (g->node[i]->op_type && g_str_has_prefix(g->node[i]->op_type, "ge:"))
            return true;
    return false;
}

static void put_str(fp_pbwire *w, uint32_t field, const char *s) { fp_pbwire_bytes(w, field, s, strlen(s)); }

/* ---------------------------------------------------------------- descriptors */

/* The flattened attributes of one descriptor. */
typedef struct {
    const Onnx__AttributeProto *dtype, *shape, *layout, *origin_shape, *origin_layout, *origin_dtype, *size,
        *device_type;
} flat_desc;

/* If `name` is "<prefix><key>:<index>", returns key's length and sets *index. */
static size_t desc_key(const char *name, const char *prefix, uint32_t *index)
{
    if (!g_str_has_prefix(name, prefix))
        return 0;
    const char *key = name + strlen(prefix), *colon = strrchr(key, ':');
    guint64 v = 0;
    if (!colon || colon == key || !g_ascii_string_to_unsigned(colon + 1, 10, 0, G_MAXUINT16, &v, NULL))
        return 0;
    *index = (uint32_t)v;
    return (size_t)(colon - key);
}

static void set_flat(flat_desc *d, const char *key, size_t n, const Onnx__AttributeProto *a)
{
#define K(s) (n == strlen(s) && strncmp(key, s, n) == 0)
    if (K("dtype"))
        d->dtype = a;
    else if (K("shape"))
        d->shape = a;
    else if (K("layout"))
        d->layout = a;
    else if (K("origin_shape"))
        d->origin_shape = a;
    else if (K("origin_layout"))
        d->origin_layout = a;
    else if (K("origin_dtype"))
        d->origin_dtype = a;
    else if (K("size"))
        d->size = a;
    else if (K("device_type"))
        d->device_type = a;
#undef K
}

/* A STRING attribute's bytes as a NUL-terminated string in buf (truncated to its size), or NULL. */
static const char *attr_s(const Onnx__AttributeProto *a, char *buf, size_t size)
{
    if (!a || !a->has_s || !a->s.data)
        return NULL;
    size_t n = MIN(a->s.len, size - 1);
    memcpy(buf, a->s.data, n);
    buf[n] = 0;
    return buf;
}

/* A map entry {key, value: AttrDef{s}} into the current message's field `field`. */
static void put_attr_s(fp_pbwire *w, uint32_t field, const char *key, const char *s)
{
    fp_pbwire_begin(w);
    put_str(w, 1, key);
    fp_pbwire_begin(w);
    put_str(w, ATTR("s"), s);
    fp_pbwire_end(w, 2);
    fp_pbwire_end(w, field);
}

/* ShapeDef.dim entries from an INTS attribute. */
static void put_dims(fp_pbwire *w, const Onnx__AttributeProto *a)
{
    for (size_t i = 0; i < a->n_ints; i++)
        fp_pbwire_varint(w, 1, (uint64_t)a->ints[i]);
}

/* Writes one TensorDescriptor (as field `field` of the OpDef) from its flattened attributes. */
static void put_desc(fp_pbwire *w, uint32_t field, const flat_desc *d)
{
    char buf[256];
    fp_pbwire_begin(w);
    const char *dt = attr_s(d->dtype, buf, sizeof buf);
    const ProtobufCEnumValue *ev =
        dt ? protobuf_c_enum_descriptor_get_value_by_name(&ge__proto__data_type__descriptor, dt) : NULL;
    if (ev)
        fp_pbwire_varint(w, DESC("dtype"), (uint64_t)(int64_t)ev->value);
    fp_pbwire_begin(w); /* ShapeDef; without a shape attribute: unknown rank ([-2]) */
    if (d->shape)
        put_dims(w, d->shape);
    else
        fp_pbwire_varint(w, 1, (uint64_t)(int64_t)-2);
    fp_pbwire_end(w, DESC("shape"));
    if (attr_s(d->layout, buf, sizeof buf))
        put_str(w, DESC("layout"), buf);
    if (attr_s(d->device_type, buf, sizeof buf))
        put_str(w, DESC("device_type"), buf);
    if (d->size && d->size->has_i)
        fp_pbwire_varint(w, DESC("size"), (uint64_t)d->size->i);
    if (attr_s(d->origin_layout, buf, sizeof buf))
        put_attr_s(w, DESC("attr"), "origin_format", buf);
    if (attr_s(d->origin_dtype, buf, sizeof buf))
        put_attr_s(w, DESC("attr"), "origin_data_type", buf);
    if (d->origin_shape) {
        fp_pbwire_begin(w);
        put_str(w, 1, "origin_shape");
        fp_pbwire_begin(w); /* AttrDef */
        fp_pbwire_begin(w); /* ListValue */
        for (size_t i = 0; i < d->origin_shape->n_ints; i++)
            fp_pbwire_varint(w, LIST("i"), (uint64_t)d->origin_shape->ints[i]);
        fp_pbwire_varint(w, LIST("val_type"), GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT);
        fp_pbwire_end(w, ATTR("list"));
        fp_pbwire_end(w, 2);
        fp_pbwire_end(w, DESC("attr"));
    }
    fp_pbwire_end(w, field);
}

/* ---------------------------------------------------------------- attributes */

/* OpDef fields GE flattens into attributes; the importer does not use them. */
static bool is_op_field(const char *name)
{
    static const char *const fields[] =
        {"id",       "stream_id", "input_i",  "output_i",  "workspace",  "workspace_bytes", "is_input_const",
         "src_name", "src_index", "dst_name", "dst_index", "input_name", "input_desc_nums", "output_desc_nums",
         NULL};
    for (const char *const *f = fields; *f; f++)
        if (strcmp(name, *f) == 0)
            return true;
    return false;
}

/* An ONNX attribute as an AttrDef map entry of the OpDef; tensors and graphs are left out. */
static void put_attr(fp_pbwire *w, const Onnx__AttributeProto *a)
{
    int type = a->has_type ? (int)a->type : 0;
    if (!type) /* IR 0.0.1 style: the type is the field that is present */
        type = a->has_i       ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
               : a->has_f     ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
               : a->has_s     ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
               : a->n_ints    ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
               : a->n_floats  ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
               : a->n_strings ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS
                              : 0;
    fp_pbwire_begin(w);
    put_str(w, 1, a->name ? a->name : "");
    fp_pbwire_begin(w); /* AttrDef */
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        fp_pbwire_varint(w, ATTR("i"), (uint64_t)a->i);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        fp_pbwire_real(w, protobuf_c_message_descriptor_get_field_by_name(&ge__proto__attr_def__descriptor, "f"), a->f);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        fp_pbwire_bytes(w, ATTR("s"), a->s.data, a->s.len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        fp_pbwire_begin(w);
        int vt;
        if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
            vt = GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT;
            for (size_t i = 0; i < a->n_ints; i++)
                fp_pbwire_varint(w, LIST("i"), (uint64_t)a->ints[i]);
        } else if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
            vt = GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_FLOAT;
            const ProtobufCFieldDescriptor *lf =
                protobuf_c_message_descriptor_get_field_by_name(&ge__proto__attr_def__list_value__descriptor, "f");
            for (size_t i = 0; i < a->n_floats; i++)
                fp_pbwire_real(w, lf, a->floats[i]);
        } else {
            vt = GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING;
            for (size_t i = 0; i < a->n_strings; i++)
                fp_pbwire_bytes(w, LIST("s"), a->strings[i].data, a->strings[i].len);
        }
        fp_pbwire_varint(w, LIST("val_type"), (uint64_t)vt);
        fp_pbwire_end(w, ATTR("list"));
        break;
    }
    default:
        break; /* an AttrDef without a value: the importer drops it, as GE does */
    }
    fp_pbwire_end(w, 2);
    fp_pbwire_end(w, OP("attr"));
}

/* ---------------------------------------------------------------- ops and graphs */

static const Onnx__GraphProto *subgraph_of(const Onnx__NodeProto *np)
{
    if (!np->op_type || strcmp(np->op_type, "subgraph") != 0)
        return NULL;
    for (size_t i = 0; i < np->n_attribute; i++)
        if (np->attribute[i]->g)
            return np->attribute[i]->g;
    return NULL;
}

/* Writes the descriptors of one direction ("input_desc_" / "output_desc_") as OpDef field `field`. */
static bool put_descs(conv *c, const Onnx__NodeProto *np, const char *prefix, uint32_t field)
{
    g_autofree char *nums_key = g_strdup_printf("%snums", prefix);
    uint32_t n = 0;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        uint32_t idx = 0;
        if (a->name && strcmp(a->name, nums_key) == 0 && a->has_i)
            n = (uint32_t)CLAMP(a->i, 0, G_MAXUINT16);
        else if (a->name && desc_key(a->name, prefix, &idx))
            n = MAX(n, idx + 1);
    }
    if (!n)
        return true;
    flat_desc *d = g_new0(flat_desc, n);
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        uint32_t idx = 0;
        size_t klen = a->name ? desc_key(a->name, prefix, &idx) : 0;
        if (klen && idx < n)
            set_flat(&d[idx], a->name + strlen(prefix), klen, a);
    }
    for (uint32_t i = 0; i < n; i++)
        put_desc(c->w, field, &d[i]);
    g_free(d);
    return true;
}

static bool put_op(conv *c, const Onnx__NodeProto *np)
{
    fp_pbwire *w = c->w;
    const char *type = np->op_type ? np->op_type : "";
    if (g_str_has_prefix(type, "ge:"))
        type += 3;
    fp_pbwire_begin(w);
    if (np->name)
        put_str(w, OP("name"), np->name);
    put_str(w, OP("type"), type);
    for (size_t i = 0; i < np->n_input; i++)
        put_str(w, OP("input"), np->input[i] ? np->input[i] : "");
    const Onnx__GraphProto *sub = subgraph_of(np);
    if (sub) {
        const char *name = sub->name && *sub->name ? sub->name : np->name ? np->name : "";
        put_str(w, OP("subgraph_name"), name);
        g_ptr_array_add(c->graphs, (gpointer)sub);
        g_ptr_array_add(c->names, (gpointer)name);
    }
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        const char *an = a->name ? a->name : "";
        if (sub || is_op_field(an) || g_str_has_prefix(an, "input_desc_") || g_str_has_prefix(an, "output_desc_"))
            continue;
        put_attr(w, a);
    }
    if (!put_descs(c, np, "input_desc_", OP("input_desc")) || !put_descs(c, np, "output_desc_", OP("output_desc")))
        return false;
    fp_pbwire_end(w, fid(&ge__proto__graph_def__descriptor, "op"));
    return true;
}

fp_model *fp_ge_from_onnx(const char *path, const Onnx__ModelProto *mp, uint64_t file_size, GError **error)
{
    if (!mp->graph) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "GE ONNX: ModelProto.graph is missing");
        return NULL;
    }
    conv c = {.w = fp_pbwire_new(), .graphs = g_ptr_array_new(), .names = g_ptr_array_new(), .error = error};
    g_ptr_array_add(c.graphs, mp->graph);
    g_ptr_array_add(c.names, mp->graph->name && *mp->graph->name ? mp->graph->name : "main");
    bool ok = true;
    /* graphs are appended while their "subgraph" nodes are written: a breadth-first walk */
    for (guint gi = 0; gi < c.graphs->len && ok; gi++) {
        const Onnx__GraphProto *gp = c.graphs->pdata[gi];
        fp_pbwire_begin(c.w);
        put_str(c.w, fid(&ge__proto__graph_def__descriptor, "name"), c.names->pdata[gi]);
        for (size_t i = 0; i < gp->n_node && ok; i++)
            ok = put_op(&c, gp->node[i]);
        if (ok && !fp_pbwire_end(c.w, fid(&ge__proto__model_def__descriptor, "graph"))) {
            g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "GE ONNX: model larger than 2 GiB");
            ok = false;
        }
    }
    fp_model *m = NULL;
    Ge__Proto__ModelDef *md = NULL;
    if (ok && !(md = (Ge__Proto__ModelDef *)fp_pbwire_unpack(c.w, &ge__proto__model_def__descriptor)))
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "GE ONNX: model larger than 2 GiB");
    if (md) {
        m = fp_ge_from_model_def(path, "ge-onnx-text", md, file_size, NULL, error);
        ge__proto__model_def__free_unpacked(md, NULL);
    }
    fp_pbwire_free(c.w);
    g_ptr_array_free(c.graphs, TRUE);
    g_ptr_array_free(c.names, TRUE);
    return m;
}
