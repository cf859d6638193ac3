/* ge_import.c - translate an unpacked ge.proto.ModelDef (protobuf-c) into fuseplan's IR.
 *
 * graph[0] is the main graph; an op's subgraph_name entries name the graphs it owns. Every op
 * becomes a node (op_type = the GE type). Output port k of op N is the value "N:k", typed by
 * N's output_desc[k]. A Data op reads a graph input value named after it; NetOutput's data inputs
 * are the graph outputs. Edges are "src:k"; "src:-1" is a control edge (fp_node_ext.ctrl); "" is an
 * unconnected optional input that keeps its port. The protobuf structs never leave this file.
 */
#include "ge_internal.h"

#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(fp-ge-error-quark, fp_ge_error);

typedef struct {
    fp_model *m;
    const Ge__Proto__ModelDef *md;
    const fp_ge_locator *loc;
    GError **error;
    GHashTable *graph_index; /* GraphDef name -> index + 1 in md->graph */
    guint8 *graph_used;      /* per md->graph: already imported */
    /* compressed .om (model attr om_compress_version = 1): attribute names are "\0" + digits
     * indexing names[]; where use_string[k], int values index values[] (docs/ge.md) */
    const ProtobufCBinaryData *names, *values;
    size_t n_names, n_values, n_use_string;
    const protobuf_c_boolean *use_string;
} importer;

/* A converted TensorDescriptor. */
typedef struct {
    fp_dtype dtype;
    fp_shape shape;
    const char *layout, *origin_layout;
    fp_shape *origin_shape;
} ge_desc;

static bool import_graph(importer *im, const Ge__Proto__GraphDef *gd, fp_graph *g);

static bool fail(importer *im, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool fail(importer *im, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fp_pbskel_fail_va(im->error, FP_GE_ERROR, code, fmt, ap);
    va_end(ap);
    return false;
}

/* s[0..len) (not NUL-terminated: protobuf bytes) interned; with an embedded NUL it is no name
 * and gets a private copy. */
static const char *intern_bytes(importer *im, const char *s, size_t len)
{
    if (!s)
        return fp_intern(im->m, "", 0);
    if (memchr(s, 0, len))
        return fp_arena_strndup(im->m->arena, s, len);
    return fp_intern(im->m, s, (gssize)len);
}

static const char *intern_nonempty(importer *im, const char *s, size_t len)
{
    return s && len ? intern_bytes(im, s, len) : NULL;
}

/* An attribute's name (decompressed, interned) and whether its int values stand for strings. */
static const char *attr_name(importer *im, const ProtobufCBinaryData *key, bool *str_val)
{
    *str_val = false;
    const uint8_t *k = key->data;
    if (im->names && key->len >= 2 && key->len <= 5 && k[0] == 0) {
        /* "\0", then base-127 digits, least significant first, each stored plus one */
        uint64_t pos = 0, scale = 1;
        bool ok = true;
        for (size_t i = 1; i < key->len; i++, scale *= 127)
            ok = ok && k[i] >= 1 && k[i] <= 127 && ((pos += (uint64_t)(k[i] - 1) * scale), true);
        if (ok && pos < im->n_names) {
            *str_val = pos < im->n_use_string && im->use_string[pos];
            const ProtobufCBinaryData *n = &im->names[pos];
            return intern_bytes(im, (const char *)n->data, n->len);
        }
    }
    return intern_bytes(im, (const char *)k, key->len);
}

/* The value of attribute `key` among entries e[0..n), or NULL; *str_val as for attr_name. */
static const Ge__Proto__AttrDef *find_attr(importer *im, Ge__Proto__AttrMapEntry *const *e, size_t n, const char *key,
                                           bool *str_val)
{
    bool sv = false;
    const char *want = fp_intern(im->m, key, -1);
    const Ge__Proto__AttrDef *found = NULL;
    for (size_t i = 0; i < n; i++) /* the last entry wins, as in a protobuf map */
        if (e[i]->value && attr_name(im, &e[i]->key, &sv) == want) {
            found = e[i]->value;
            if (str_val)
                *str_val = sv;
        }
    return found;
}

static const Ge__Proto__AttrDef *op_attr(importer *im, const Ge__Proto__OpDef *op, const char *key)
{
    return find_attr(im, op->attr, op->n_attr, key, NULL);
}

/* Entry i of a compressed-value table as a C string (arena copy), or NULL when out of range. */
static const char *table_string(importer *im, int64_t i)
{
    if (i < 0 || (uint64_t)i >= im->n_values)
        return NULL;
    const ProtobufCBinaryData *v = &im->values[i];
    return fp_arena_strndup(im->m->arena, v->data ? (const char *)v->data : "", v->len);
}

/* Integer value of an int (or bool) attribute, else dflt. */
static int64_t attr_int(const Ge__Proto__AttrDef *a, int64_t dflt)
{
    if (!a)
        return dflt;
    if (a->value_case == GE__PROTO__ATTR_DEF__VALUE_I)
        return a->i;
    if (a->value_case == GE__PROTO__ATTR_DEF__VALUE_B)
        return a->b;
    return dflt;
}

/* A string attribute (also a compressed one: an int that indexes the value table), interned. */
static const char *attr_str(importer *im, const Ge__Proto__AttrDef *a, bool str_val)
{
    if (a && a->value_case == GE__PROTO__ATTR_DEF__VALUE_S)
        return intern_nonempty(im, (const char *)a->s.data, a->s.len);
    if (a && a->value_case == GE__PROTO__ATTR_DEF__VALUE_I && str_val) {
        const char *s = table_string(im, a->i);
        return s ? intern_nonempty(im, s, strlen(s)) : NULL;
    }
    return NULL;
}

/* ---------------------------------------------------------------- tensor descriptors */

/* GE dims: -1 an unknown dim, a lone -2 an unknown rank. */
static bool convert_dims(importer *im, const int64_t *dims, size_t n, fp_shape *out, const char *what, const char *name)
{
    if (n == 1 && dims[0] == -2) {
        out->rank = -1;
        out->dims = NULL;
        return true;
    }
    if (n > FP_MAX_RANK)
        return fail(im, FP_GE_ERROR_LIMIT, "%s '%s': rank %zu exceeds the limit of %d", what, name, n, FP_MAX_RANK);
    out->rank = (int32_t)n;
    out->dims = fp_arena_calloc(im->m->arena, n ? n : 1, sizeof(fp_dim));
    for (size_t i = 0; i < n; i++)
        out->dims[i].value = dims[i] >= 0 ? dims[i] : -1;
    return true;
}

/* Converts td (NULL: an absent descriptor, all unknown) for messages about `what` `name`. */
static bool convert_desc(importer *im, const Ge__Proto__TensorDescriptor *td, ge_desc *out, const char *what,
                         const char *name)
{
    memset(out, 0, sizeof *out);
    out->shape.rank = -1;
    if (!td)
        return true;
    out->dtype = fp_ge_dtype_from_proto(td->dtype);
    /* an absent ShapeDef is GE's default shape: a scalar */
    if (!convert_dims(im, td->shape ? td->shape->dim : NULL, td->shape ? td->shape->n_dim : 0, &out->shape, what, name))
        return false;
    out->layout = intern_nonempty(im, td->layout, td->layout ? strlen(td->layout) : 0);
    bool sv = false;
    const Ge__Proto__AttrDef *of = find_attr(im, td->attr, td->n_attr, "origin_format", &sv);
    out->origin_layout = attr_str(im, of, sv);
    const Ge__Proto__AttrDef *os = find_attr(im, td->attr, td->n_attr, "origin_shape", NULL);
    if (os && os->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST && os->list) {
        out->origin_shape = fp_arena_alloc(im->m->arena, sizeof(fp_shape));
        if (!convert_dims(im, os->list->i, os->list->n_i, out->origin_shape, what, name))
            return false;
    }
    return true;
}

/* Gives value v the type of a descriptor (and records it as declared). */
static void apply_desc(fp_value *v, const ge_desc *d)
{
    v->type = FP_TYPE_TENSOR;
    v->declared = true;
    v->dtype = v->decl_dtype = d->dtype;
    v->shape = v->decl_shape = d->shape;
    fp_value_set_layout(v, d->layout, d->origin_layout, d->origin_shape);
}

/* ---------------------------------------------------------------- tensors and attributes */

/* A TensorDef as metadata: dtype and shape from its descriptor, payload inline when small,
 * else its location (a skeleton marker, or an .om weights range), else nothing. */
static fp_tensor *convert_tensor(importer *im, const Ge__Proto__TensorDef *td, const char *what, const char *name)
{
    fp_tensor *t = fp_arena_alloc(im->m->arena, sizeof *t);
    ge_desc d;
    if (!convert_desc(im, td->desc, &d, what, name))
        return NULL;
    t->dtype = d.dtype;
    t->shape = d.shape;
    if (t->shape.rank < 0) {
        t->shape.rank = 0;
        t->shape.dims = fp_arena_calloc(im->m->arena, 1, sizeof(fp_dim));
    }
    uint64_t numel = 0;
    if (fp_shape_numel(&t->shape, &numel) && !fp_dtype_bytes(t->dtype, numel, &t->nbytes))
        t->nbytes = 0;
    fp_pbskel_marker mk[2];
    uint64_t base = im->loc ? im->loc->base : 0;
    if (fp_pbskel_markers(&td->base, mk, G_N_ELEMENTS(mk)) > 0) {
        t->where = FP_DATA_FILE;
        t->offset = base + mk[0].offset;
        t->length = mk[0].length;
    } else if (td->data.len > 0) {
        if (td->data.len <= fp_inline_max(t->dtype) && td->data.len == t->nbytes) {
            t->where = FP_DATA_INLINE;
            t->data = fp_arena_memdup(im->m->arena, td->data.data, td->data.len);
        }
    } else if (td->desc && td->desc->weight_size > 0 && td->desc->data_offset >= 0 && im->loc &&
               im->loc->weights_size > 0 && (uint64_t)td->desc->data_offset <= im->loc->weights_size &&
               (uint64_t)td->desc->weight_size <= im->loc->weights_size - (uint64_t)td->desc->data_offset) {
        t->where = FP_DATA_FILE;
        t->offset = im->loc->weights_base + (uint64_t)td->desc->data_offset;
        t->length = (uint64_t)td->desc->weight_size;
    }
    return t;
}

static uint32_t count32(size_t n) { return (uint32_t)MIN(n, (size_t)G_MAXUINT32); }

static const char **copy_bytes_list(importer *im, const ProtobufCBinaryData *b, uint32_t n)
{
    const char **out = fp_arena_calloc(im->m->arena, n ? n : 1, sizeof(char *));
    for (uint32_t i = 0; i < n; i++)
        out[i] = fp_arena_strndup(im->m->arena, (const char *)(b[i].data ? b[i].data : (uint8_t *)""), b[i].len);
    return out;
}

static int64_t *copy_ints(importer *im, const int64_t *v, uint32_t n)
{
    return fp_arena_memdup(im->m->arena, v ? (const void *)v : (const void *)"", (size_t)n * sizeof(int64_t));
}

/* A list attribute; its type from val_type, or (VT_LIST_NONE) from the one field that holds
 * elements. Returns 0 to drop an empty untyped list (as GE does), 1 ok, -1 error. */
/* The val_type of an untyped list (VT_LIST_NONE): the one field that holds elements; 0 for none. */
static int list_type(const Ge__Proto__AttrDef__ListValue *lv)
{
    const size_t counts[] = {0,        lv->n_s, lv->n_i, lv->n_f,  lv->n_b, lv->n_bt,
                             lv->n_td, lv->n_t, lv->n_g, lv->n_na, lv->n_dt};
    for (int vt = 1; vt < (int)G_N_ELEMENTS(counts); vt++)
        if (counts[vt])
            return vt;
    return 0;
}

static int convert_list(importer *im, const Ge__Proto__AttrDef__ListValue *lv, fp_attr *a)
{
    fp_model *m = im->m;
    int vt = lv->val_type;
    if (vt == GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_NONE && !(vt = list_type(lv)))
        return 0;
    switch (vt) {
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING:
        a->type = FP_ATTR_STRINGS;
        a->n = count32(lv->n_s);
        a->u.strings = copy_bytes_list(im, lv->s, a->n);
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_BYTES:
        a->type = FP_ATTR_STRINGS;
        a->n = count32(lv->n_bt);
        a->u.strings = copy_bytes_list(im, lv->bt, a->n);
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT:
        a->type = FP_ATTR_INTS;
        a->n = count32(lv->n_i);
        a->u.ints = copy_ints(im, lv->i, a->n);
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_FLOAT:
        a->type = FP_ATTR_FLOATS;
        a->n = count32(lv->n_f);
        a->u.floats = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(double));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.floats[i] = lv->f[i];
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_BOOL:
        a->type = FP_ATTR_INTS;
        a->n = count32(lv->n_b);
        a->u.ints = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(int64_t));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.ints[i] = lv->b[i] ? 1 : 0;
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_DATA_TYPE:
        a->type = FP_ATTR_INTS; /* as fp_dtype (= ONNX) numbers, not C++ ge::DataType ones */
        a->n = count32(lv->n_dt);
        a->u.ints = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(int64_t));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.ints[i] = fp_ge_dtype_from_cpp(lv->dt[i]);
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_TENSOR:
        a->type = FP_ATTR_TENSORS;
        a->n = count32(lv->n_t);
        a->u.tensors = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(fp_tensor *));
        for (uint32_t i = 0; i < a->n; i++)
            if (!(a->u.tensors[i] = convert_tensor(im, lv->t[i], "attribute tensor", a->name)))
                return -1;
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_NAMED_ATTRS:
        a->type = FP_ATTR_STRINGS; /* the function names */
        a->n = count32(lv->n_na);
        a->u.strings = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(char *));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.strings[i] = fp_intern(m, lv->na[i]->name ? lv->na[i]->name : "", -1);
        break;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_TENSOR_DESC:
        a->type = FP_ATTR_TYPES;
        a->n = count32(lv->n_td);
        break;
    default: /* graphs (not imported) and val_type values newer than this reader */
        a->type = FP_ATTR_UNDEFINED;
        a->n = count32(lv->n_g);
        break;
    }
    return 1;
}

/* Converts one attribute. Returns 0 for an attribute GE itself drops (no value), 1 ok, -1 error. */
static int convert_attr(importer *im, const char *name, bool str_val, const Ge__Proto__AttrDef *ad, fp_attr *a)
{
    fp_model *m = im->m;
    a->name = name;
    const char *table = str_val && ad->value_case == GE__PROTO__ATTR_DEF__VALUE_I ? table_string(im, ad->i) : NULL;
    if (table) {
        a->type = FP_ATTR_STRING; /* compressed: the int indexes the value table */
        a->u.s = table;
        a->n = (uint32_t)strlen(table);
        return 1;
    }
    if (str_val && ad->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST && ad->list && ad->list->n_i) {
        a->type = FP_ATTR_STRINGS;
        a->n = count32(ad->list->n_i);
        a->u.strings = fp_arena_calloc(m->arena, a->n, sizeof(char *));
        for (uint32_t i = 0; i < a->n; i++) {
            const char *v = table_string(im, ad->list->i[i]);
            a->u.strings[i] = v ? v : "";
        }
        return 1;
    }
    switch (ad->value_case) {
    case GE__PROTO__ATTR_DEF__VALUE_LIST:
        return ad->list ? convert_list(im, ad->list, a) : 0;
    case GE__PROTO__ATTR_DEF__VALUE_S:
    case GE__PROTO__ATTR_DEF__VALUE_BT:
    case GE__PROTO__ATTR_DEF__VALUE_EXPRESSION: {
        const ProtobufCBinaryData *b = ad->value_case == GE__PROTO__ATTR_DEF__VALUE_S    ? &ad->s
                                       : ad->value_case == GE__PROTO__ATTR_DEF__VALUE_BT ? &ad->bt
                                                                                         : &ad->expression;
        a->type = FP_ATTR_STRING;
        a->n = count32(b->len);
        a->u.s = fp_arena_strndup(m->arena, (const char *)(b->data ? b->data : (uint8_t *)""), a->n);
        return 1;
    }
    case GE__PROTO__ATTR_DEF__VALUE_I:
        a->type = FP_ATTR_INT;
        a->u.i = ad->i;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_B:
        a->type = FP_ATTR_INT;
        a->u.i = ad->b ? 1 : 0;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_F:
        a->type = FP_ATTR_FLOAT;
        a->u.f = ad->f;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_DT:
        a->type = FP_ATTR_INT; /* as an fp_dtype (= ONNX) number */
        a->u.i = fp_ge_dtype_from_cpp(ad->dt);
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_FUNC:
        a->type = FP_ATTR_STRING; /* the function's name */
        a->u.s = fp_intern(m, ad->func && ad->func->name ? ad->func->name : "", -1);
        a->n = (uint32_t)strlen(a->u.s);
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_TD:
        a->type = FP_ATTR_TYPE;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_T:
        a->type = FP_ATTR_TENSOR;
        return (a->u.t = convert_tensor(im, ad->t, "attribute tensor", a->name)) ? 1 : -1;
    case GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_INT:
        a->type = FP_ATTR_UNDEFINED; /* nested lists have no IR type; the count is kept */
        a->n = ad->list_list_int ? count32(ad->list_list_int->n_list_list_i) : 0;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_FLOAT:
        a->type = FP_ATTR_UNDEFINED;
        a->n = ad->list_list_float ? count32(ad->list_list_float->n_list_list_f) : 0;
        return 1;
    case GE__PROTO__ATTR_DEF__VALUE_G:
        a->type = FP_ATTR_UNDEFINED; /* graphs held in attributes are not imported */
        return 1;
    default:
        return 0;
    }
}

/* The node's attributes, plus "to" (fp_dtype) on Cast, whose dst_type is a C++ ge::DataType. */
static bool convert_op_attrs(importer *im, const Ge__Proto__OpDef *op, fp_node *n)
{
    bool cast = n->op == FP_OP_CAST && !op_attr(im, op, "to");
    n->attrs = fp_arena_calloc(im->m->arena, op->n_attr + 1, sizeof(fp_attr));
    uint32_t k = 0;
    for (size_t i = 0; i < op->n_attr; i++) {
        const Ge__Proto__AttrMapEntry *e = op->attr[i];
        if (!e->value)
            continue;
        bool str_val = false;
        const char *name = attr_name(im, &e->key, &str_val);
        int r = convert_attr(im, name, str_val, e->value, &n->attrs[k]);
        if (r < 0)
            return false;
        k += (uint32_t)r;
    }
    if (cast) {
        const Ge__Proto__AttrDef *dst = op_attr(im, op, "dst_type");
        fp_dtype to = FP_DT_UNDEFINED;
        if (dst && dst->value_case == GE__PROTO__ATTR_DEF__VALUE_I)
            to = fp_ge_dtype_from_cpp(dst->i);
        else if (dst && dst->value_case == GE__PROTO__ATTR_DEF__VALUE_DT)
            to = fp_ge_dtype_from_cpp(dst->dt);
        else if (op->n_output_desc)
            to = fp_ge_dtype_from_proto(op->output_desc[0]->dtype);
        if (to != FP_DT_UNDEFINED) {
            n->attrs[k].name = fp_intern(im->m, "to", -1);
            n->attrs[k].type = FP_ATTR_INT;
            n->attrs[k++].u.i = to;
        }
    }
    n->n_attrs = k;
    return true;
}

/* ---------------------------------------------------------------- ops */

/* Eltwise and Pooling pick their kind from attributes; others from the table. */
static fp_op op_kind(importer *im, const Ge__Proto__OpDef *op, size_t n_data_inputs)
{
    const char *type = op->type;
    if (strcmp(type, "Eltwise") == 0) {
        /* mode 0 product, 1 sum (default), 2 max; `coeff` weights a sum */
        const Ge__Proto__AttrDef *coeff = op_attr(im, op, "coeff");
        if (coeff && coeff->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST && coeff->list)
            for (size_t i = 0; i < coeff->list->n_f; i++)
                if (coeff->list->f[i] != 1.0f)
                    return FP_OP_OPAQUE;
        int64_t mode = attr_int(op_attr(im, op, "mode"), 1);
        if (n_data_inputs == 2)
            return mode == 0 ? FP_OP_MUL : mode == 1 ? FP_OP_ADD : mode == 2 ? FP_OP_MAX : FP_OP_OPAQUE;
        if (n_data_inputs > 2)
            return mode == 1 ? FP_OP_SUM : mode == 2 ? FP_OP_MAX : FP_OP_OPAQUE;
        return FP_OP_OPAQUE;
    }
    if (strcmp(type, "Pooling") == 0) {
        /* mode 0 max (default), 1 average; global_pooling covers the whole plane */
        int64_t mode = attr_int(op_attr(im, op, "mode"), 0);
        bool global = attr_int(op_attr(im, op, "global_pooling"), 0) != 0;
        if (mode == 0)
            return global ? FP_OP_GLOBAL_MAX_POOL : FP_OP_MAX_POOL;
        if (mode == 1)
            return global ? FP_OP_GLOBAL_AVG_POOL : FP_OP_AVERAGE_POOL;
        return FP_OP_OPAQUE;
    }
    return fp_ge_op_kind(type);
}

/* One parsed OpDef.input entry. */
typedef struct {
    enum { EDGE_EMPTY, EDGE_DATA, EDGE_CTRL, EDGE_SKIP } kind;
    uint32_t src; /* op index in the graph */
    uint32_t port;
} ge_edge;

/* A graph input found on a Data op, with its sort key. */
typedef struct {
    int64_t key;
    size_t order;
    fp_value *v;
} input_row;

/* Per-graph state. */
typedef struct {
    const Ge__Proto__GraphDef *gd;
    fp_graph *g;
    GHashTable *op_index; /* op name -> index + 1 */
    ge_edge **edges;      /* per op: its parsed inputs */
    int64_t *max_port;    /* per op: highest output port referenced, -1 if none */
    fp_node **nodes;
    guint8 *is_data; /* per op: a Data op that reads a graph input */
} graph_ctx;

/* Parses "src:k" (split at the last ':', as GE does). */
static bool parse_edge(importer *im, graph_ctx *c, const Ge__Proto__OpDef *op, size_t i, const char *s, ge_edge *e)
{
    if (!s || !*s) {
        e->kind = EDGE_EMPTY;
        return true;
    }
    const char *colon = strrchr(s, ':');
    if (!colon) {
        e->kind = EDGE_SKIP; /* GE skips such entries with a warning */
        return true;
    }
    g_autofree char *src = g_strndup(s, (gsize)(colon - s));
    char *end = NULL;
    gint64 port = g_ascii_strtoll(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port < -1 || port > G_MAXUINT16)
        return fail(im, FP_GE_ERROR_INVALID, "graph '%s': op '%s' (%s): input %zu '%s' has an invalid port", c->g->name,
                    op->name, op->type, i, s);
    gpointer idx = g_hash_table_lookup(c->op_index, src);
    if (!idx)
        return fail(im, FP_GE_ERROR_INVALID, "graph '%s': op '%s' (%s): input %zu '%s' names no op of this graph",
                    c->g->name, op->name, op->type, i, s);
    e->src = (uint32_t)(GPOINTER_TO_SIZE(idx) - 1);
    e->kind = port < 0 ? EDGE_CTRL : EDGE_DATA;
    e->port = port < 0 ? 0 : (uint32_t)port;
    if (port >= 0 && port > c->max_port[e->src])
        c->max_port[e->src] = port;
    return true;
}

static bool is_data_type(const char *type) { return strcmp(type, "Data") == 0 || strcmp(type, "RefData") == 0; }

static size_t count_data_edges(const Ge__Proto__OpDef *op, const ge_edge *edges)
{
    size_t n = 0;
    for (size_t i = 0; i < op->n_input; i++)
        n += edges[i].kind == EDGE_DATA || edges[i].kind == EDGE_EMPTY;
    return n;
}

/* A Const's output: the tensor of its "value" attribute, or its descriptor's metadata. */
static bool const_output(importer *im, const Ge__Proto__OpDef *op, fp_node *n, fp_value *out, const ge_desc *d)
{
    out->kind = FP_VALUE_CONSTANT;
    const Ge__Proto__AttrDef *val = op_attr(im, op, "value");
    if (val && val->value_case == GE__PROTO__ATTR_DEF__VALUE_T && val->t) {
        if (!(out->tensor = convert_tensor(im, val->t, "constant", n->name)))
            return false;
    } else if (d && d->shape.rank >= 0) {
        fp_tensor *t = fp_arena_alloc(im->m->arena, sizeof *t);
        t->dtype = d->dtype;
        t->shape = d->shape;
        uint64_t numel = 0;
        if (fp_shape_numel(&t->shape, &numel) && !fp_dtype_bytes(t->dtype, numel, &t->nbytes))
            t->nbytes = 0;
        out->tensor = t;
    }
    if (out->type == FP_TYPE_UNKNOWN && out->tensor) {
        out->type = FP_TYPE_TENSOR;
        out->dtype = out->decl_dtype = out->tensor->dtype;
        out->shape = out->decl_shape = out->tensor->shape;
    }
    return true;
}

/* Creates the subgraphs an op owns and imports them. */
static bool import_subgraphs(importer *im, const Ge__Proto__OpDef *op, fp_node *n)
{
    if (!op->n_subgraph_name)
        return true;
    if (op->n_subgraph_name > FP_MAX_GRAPHS) /* fp_node.n_subgraphs counts up to it */
        return fail(im, FP_GE_ERROR_LIMIT, "graph '%s': op '%s' (%s): %zu subgraphs, more than the limit of %d graphs",
                    n->graph->name, n->name, n->op_type, op->n_subgraph_name, FP_MAX_GRAPHS);
    n->subgraphs = fp_arena_calloc(im->m->arena, op->n_subgraph_name, sizeof(fp_graph *));
    for (size_t i = 0; i < op->n_subgraph_name; i++) {
        const char *name = op->subgraph_name[i] ? op->subgraph_name[i] : "";
        if (!*name)
            continue; /* GE leaves unset subgraph slots empty */
        gpointer idx = g_hash_table_lookup(im->graph_index, name);
        if (!idx)
            return fail(im, FP_GE_ERROR_INVALID,
                        "graph '%s': op '%s' (%s): subgraph '%s' is not among the model's graphs", n->graph->name,
                        n->name, n->op_type, name);
        size_t gi = GPOINTER_TO_SIZE(idx) - 1;
        if (gi == 0 || im->graph_used[gi])
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': op '%s' (%s): subgraph '%s' %s", n->graph->name, n->name,
                        n->op_type, name, gi == 0 ? "is the main graph" : "already belongs to another op");
        im->graph_used[gi] = 1;
        fp_graph *sg = fp_graph_new(im->m, name, n->graph, n);
        n->subgraphs[n->n_subgraphs++] = sg;
        if (!import_graph(im, im->md->graph[gi], sg))
            return false;
    }
    return true;
}

/* Creates the node for op i with its output values, attributes and subgraphs. */
static bool create_node(importer *im, graph_ctx *c, size_t i, GArray *data_inputs)
{
    const Ge__Proto__OpDef *op = c->gd->op[i];
    fp_graph *g = c->g;
    size_t n_data = count_data_edges(op, c->edges[i]), n_connected = 0;
    for (size_t k = 0; k < op->n_input; k++)
        n_connected += c->edges[i][k].kind == EDGE_DATA;
    /* a Data op's input anchor is left unconnected (""): it reads a graph input */
    bool data = is_data_type(op->type) && n_connected == 0;
    bool netout = strcmp(op->type, "NetOutput") == 0;
    size_t n_out = netout ? 0 : op->n_output_desc;
    n_out = MAX(n_out, (size_t)(c->max_port[i] + 1));
    size_t n_in = data ? 1 : MAX(n_data, op->n_input_desc);
    if (n_out > G_MAXUINT16 || n_in > G_MAXUINT16)
        return fail(im, FP_GE_ERROR_LIMIT, "graph '%s': op '%s' has too many inputs or outputs", g->name, op->name);
    fp_node *n = fp_node_new(g, data ? FP_OP_IDENTITY : op_kind(im, op, n_data), op->type, "", op->name, (uint32_t)n_in,
                             (uint32_t)n_out);
    c->nodes[i] = n;
    c->is_data[i] = data;
    for (size_t k = 0; k < n_out; k++) {
        g_autofree char *vname = g_strdup_printf("%s:%zu", op->name, k);
        fp_value *v = fp_graph_value(g, vname);
        if (v->producer || v->kind != FP_VALUE_INTERMEDIATE)
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': value '%s' of op '%s' clashes with another value",
                        g->name, vname, op->name);
        v->producer = n;
        v->producer_port = (uint32_t)k;
        n->outputs[k] = v;
        ge_desc d;
        bool has_desc = k < op->n_output_desc;
        if (has_desc) {
            if (!convert_desc(im, op->output_desc[k], &d, "output of op", op->name))
                return false;
            apply_desc(v, &d);
        }
        if (n->op == FP_OP_CONSTANT && k == 0 && !const_output(im, op, n, v, has_desc ? &d : NULL))
            return false;
    }
    if (data) {
        if (fp_graph_find(g, op->name))
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': Data op '%s': its input's name clashes with a value",
                        g->name, op->name);
        fp_value *in = fp_graph_value(g, op->name);
        in->kind = FP_VALUE_INPUT;
        ge_desc d;
        const Ge__Proto__TensorDescriptor *td = op->n_input_desc    ? op->input_desc[0]
                                                : op->n_output_desc ? op->output_desc[0]
                                                                    : NULL;
        if (!convert_desc(im, td, &d, "input of Data op", op->name))
            return false;
        if (td)
            apply_desc(in, &d);
        n->inputs[0] = in;
        /* graph input order: the Data's "index" (main graph) or "_parent_node_index" (subgraph) */
        int64_t key = attr_int(op_attr(im, op, "index"), attr_int(op_attr(im, op, "_parent_node_index"), G_MAXINT32));
        input_row row = {key, data_inputs->len, in};
        g_array_append_val(data_inputs, row);
    }
    if (!convert_op_attrs(im, op, n))
        return false;
    return import_subgraphs(im, op, n);
}

/* Connects op i's inputs and control edges. */
static bool wire_node(importer *im, graph_ctx *c, size_t i)
{
    const Ge__Proto__OpDef *op = c->gd->op[i];
    fp_node *n = c->nodes[i];
    const ge_edge *edges = c->edges[i];
    uint32_t port = 0, n_ctrl = 0;
    for (size_t k = 0; k < op->n_input; k++)
        n_ctrl += edges[k].kind == EDGE_CTRL;
    fp_node_ext *x = n_ctrl ? fp_node_ext_ensure(n) : NULL;
    if (n_ctrl)
        x->ctrl = fp_arena_calloc(im->m->arena, n_ctrl, sizeof(fp_node *));
    bool is_data = c->is_data[i]; /* has control edges only */
    for (size_t k = 0; k < op->n_input; k++) {
        const ge_edge *e = &edges[k];
        if (e->kind == EDGE_SKIP)
            continue;
        if (e->kind == EDGE_CTRL) {
            fp_node *src = c->nodes[e->src];
            bool dup = false;
            for (uint32_t j = 0; j < x->n_ctrl; j++)
                dup = dup || x->ctrl[j] == src;
            if (!dup)
                x->ctrl[x->n_ctrl++] = src;
            continue;
        }
        if (is_data)
            continue;
        if (e->kind == EDGE_DATA) {
            fp_value *v = c->nodes[e->src]->outputs[e->port];
            n->inputs[port] = v;
            if (v->type == FP_TYPE_UNKNOWN && port < op->n_input_desc) {
                ge_desc d; /* no output_desc on the producer: the consumer's view */
                if (!convert_desc(im, op->input_desc[port], &d, "input of op", op->name))
                    return false;
                apply_desc(v, &d);
            }
        }
        port++;
    }
    return true;
}

static int cmp_input_row(const void *a, const void *b)
{
    const input_row *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Graph outputs: NetOutput's data inputs, else GraphDef.output ("node:k"). */
static bool graph_outputs(importer *im, graph_ctx *c)
{
    fp_graph *g = c->g;
    bool netout = false;
    for (size_t i = 0; i < c->gd->n_op; i++) {
        fp_node *n = c->nodes[i];
        if (strcmp(n->op_type, "NetOutput") != 0)
            continue;
        netout = true;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            fp_value *v = n->inputs[k];
            if (!v)
                continue;
            v->is_output = true;
            g_ptr_array_add(g->outputs, v);
        }
    }
    if (netout)
        return true;
    for (size_t i = 0; i < c->gd->n_output; i++) {
        const char *s = c->gd->output[i] ? c->gd->output[i] : "";
        const char *colon = strrchr(s, ':');
        g_autofree char *src = colon ? g_strndup(s, (gsize)(colon - s)) : g_strdup(s);
        char *end = NULL;
        gint64 port = colon ? g_ascii_strtoll(colon + 1, &end, 10) : 0;
        gpointer idx = g_hash_table_lookup(c->op_index, src);
        fp_node *n = idx ? c->nodes[GPOINTER_TO_SIZE(idx) - 1] : NULL;
        if (!n || (colon && (end == colon + 1 || *end)) || port < 0 || port >= n->n_outputs)
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': output %zu '%s' names no output of an op", g->name, i, s);
        fp_value *v = n->outputs[port];
        v->is_output = true;
        g_ptr_array_add(g->outputs, v);
    }
    return true;
}

static void graph_ctx_clear(graph_ctx *c)
{
    if (c->edges)
        for (size_t i = 0; i < c->gd->n_op; i++)
            g_free(c->edges[i]);
    g_free(c->edges);
    g_free(c->max_port);
    g_free(c->nodes);
    g_free(c->is_data);
    if (c->op_index)
        g_hash_table_destroy(c->op_index);
}

static bool import_graph_ops(importer *im, graph_ctx *c)
{
    const Ge__Proto__GraphDef *gd = c->gd;
    fp_graph *g = c->g;
    size_t nop = gd->n_op;
    for (size_t i = 0; i < nop; i++) {
        const Ge__Proto__OpDef *op = gd->op[i];
        if (!op->name || !*op->name)
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': op %zu has no name", g->name, i);
        if (!op->type || !*op->type)
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': op '%s' has no type", g->name, op->name);
        if (g_hash_table_contains(c->op_index, op->name))
            return fail(im, FP_GE_ERROR_INVALID, "graph '%s': two ops are named '%s'", g->name, op->name);
        g_hash_table_insert(c->op_index, op->name, GSIZE_TO_POINTER(i + 1));
    }
    for (size_t i = 0; i < nop; i++) {
        const Ge__Proto__OpDef *op = gd->op[i];
        c->edges[i] = g_new0(ge_edge, op->n_input ? op->n_input : 1);
        for (size_t k = 0; k < op->n_input; k++)
            if (!parse_edge(im, c, op, k, op->input[k], &c->edges[i][k]))
                return false;
    }
    g_autoptr(GArray) data_inputs = g_array_new(FALSE, FALSE, sizeof(input_row));
    for (size_t i = 0; i < nop; i++)
        if (!create_node(im, c, i, data_inputs))
            return false;
    for (size_t i = 0; i < nop; i++)
        if (!wire_node(im, c, i))
            return false;
    g_array_sort(data_inputs, cmp_input_row);
    for (guint i = 0; i < data_inputs->len; i++)
        g_ptr_array_add(g->inputs, g_array_index(data_inputs, input_row, i).v);
    return graph_outputs(im, c);
}

static bool import_graph(importer *im, const Ge__Proto__GraphDef *gd, fp_graph *g)
{
    if (g->depth > FP_MAX_GRAPH_DEPTH)
        return fail(im, FP_GE_ERROR_LIMIT, "graph '%s': subgraphs nested deeper than %d", g->name, FP_MAX_GRAPH_DEPTH);
    if (gd->n_op > fp_max_nodes(im->m->file_size))
        return fail(im, FP_GE_ERROR_LIMIT, "graph '%s': %zu ops, more than the limit of %" G_GUINT64_FORMAT, g->name,
                    gd->n_op, fp_max_nodes(im->m->file_size));
    graph_ctx c = {.gd = gd, .g = g};
    c.op_index = g_hash_table_new(g_str_hash, g_str_equal);
    c.edges = g_new0(ge_edge *, gd->n_op ? gd->n_op : 1);
    c.max_port = g_new(int64_t, gd->n_op ? gd->n_op : 1);
    for (size_t i = 0; i < gd->n_op; i++)
        c.max_port[i] = -1;
    c.nodes = g_new0(fp_node *, gd->n_op ? gd->n_op : 1);
    c.is_data = g_new0(guint8, gd->n_op ? gd->n_op : 1);
    bool ok = import_graph_ops(im, &c);
    graph_ctx_clear(&c);
    return ok;
}

/* ---------------------------------------------------------------- model */

/* The list of a model attribute, or NULL. */
static const Ge__Proto__AttrDef__ListValue *model_list(importer *im, const char *key)
{
    const Ge__Proto__AttrDef *a = find_attr(im, im->md->attr, im->md->n_attr, key, NULL);
    return a && a->value_case == GE__PROTO__ATTR_DEF__VALUE_LIST ? a->list : NULL;
}

/* Reads the name and value tables of a compressed .om. */
static void compression_tables(importer *im)
{
    const Ge__Proto__AttrDef *v = find_attr(im, im->md->attr, im->md->n_attr, "om_compress_version", NULL);
    const Ge__Proto__AttrDef__ListValue *names = model_list(im, "attr_name_enum");
    if (attr_int(v, 0) != 1 || !names)
        return;
    const Ge__Proto__AttrDef__ListValue *values = model_list(im, "attr_value_enum");
    const Ge__Proto__AttrDef__ListValue *use = model_list(im, "attrs_use_string_value");
    im->names = names->s;
    im->n_names = names->n_s;
    im->values = values ? values->s : NULL;
    im->n_values = values ? values->n_s : 0;
    im->use_string = use ? use->b : NULL;
    im->n_use_string = use ? use->n_b : 0;
}

static void model_header(importer *im)
{
    fp_model *m = im->m;
    const Ge__Proto__ModelDef *md = im->md;
    m->ir_version = md->version;
    m->producer_name = fp_intern(m, "GE", -1);
    bool sv = false;
    const char *ver = md->custom_version && *md->custom_version ? md->custom_version : NULL;
    const char *atc = attr_str(im, find_attr(im, md->attr, md->n_attr, "atc_version", &sv), sv);
    m->producer_version = fp_intern(m, ver ? ver : atc ? atc : "", -1);
    m->domain = fp_intern(m, "", 0);
    m->doc = fp_intern(m, "", 0);
    m->opsets = fp_arena_calloc(m->arena, 1, sizeof(fp_opset));
    m->n_opsets = 0;
}

fp_model *fp_ge_from_model_def(const char *path, const char *format, const Ge__Proto__ModelDef *md, uint64_t file_size,
                               const fp_ge_locator *loc, GError **error)
{
    if (md->n_graph == 0) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "not a GE model: ModelDef has no graph");
        return NULL;
    }
    g_autoptr(fp_model) m = fp_model_new(path, format);
    m->file_size = file_size;
    importer im = {.m = m, .md = md, .loc = loc, .error = error};
    compression_tables(&im);
    model_header(&im);
    im.graph_index = g_hash_table_new(g_str_hash, g_str_equal);
    im.graph_used = g_new0(guint8, md->n_graph);
    bool ok = true;
    for (size_t i = 0; i < md->n_graph && ok; i++) {
        const char *name = md->graph[i]->name ? md->graph[i]->name : "";
        if (g_hash_table_contains(im.graph_index, name))
            ok = fail(&im, FP_GE_ERROR_INVALID, "two graphs are named '%s'", name);
        else
            g_hash_table_insert(im.graph_index, (gpointer)name, GSIZE_TO_POINTER(i + 1));
    }
    if (ok) {
        const char *main_name = md->graph[0]->name && *md->graph[0]->name ? md->graph[0]->name : "main";
        im.graph_used[0] = 1;
        ok = import_graph(&im, md->graph[0], fp_graph_new(m, main_name, NULL, NULL));
    }
    /* graphs no op claims: imported as top-level graphs of their own */
    for (size_t i = 1; i < md->n_graph && ok; i++)
        if (!im.graph_used[i]) {
            im.graph_used[i] = 1;
            ok = import_graph(&im, md->graph[i], fp_graph_new(m, md->graph[i]->name, NULL, NULL));
        }
    g_hash_table_destroy(im.graph_index);
    g_free(im.graph_used);
    if (!ok)
        return NULL;
    fp_model_link(m);
    return g_steal_pointer(&m);
}
