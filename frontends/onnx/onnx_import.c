/* onnx_import.c - translate an unpacked onnx.ModelProto (protobuf-c) into fuseplan's IR.
 *
 * The protobuf structs never leave this file: everything is copied into the model's arena and
 * the caller frees the protobuf afterwards. Tensor payloads stripped by the skeleton reader are
 * recorded as file ranges (FP_DATA_FILE); small payloads are kept inline for shape inference.
 */
#include "onnx_internal.h"

#include <string.h>

G_DEFINE_QUARK(fp-onnx-error-quark, fp_onnx_error)

/* The error message when protobuf-c cannot unpack a (skeleton of a) ModelProto. */
#define MALFORMED_MESSAGE "not a valid ONNX protobuf: a field has the wrong wire type for onnx.ModelProto"

/* An op kind seen before: its strings as interned, and what fp_op_from_onnx said. */
typedef struct {
    const char *op_type, *domain; /* NULL: empty entry */
    fp_op op;
} op_memo;

#define OP_MEMO 64

typedef struct {
    fp_model *m;
    GError **error;
    op_memo ops[OP_MEMO]; /* a small cache of op kinds (direct-mapped on the op_type's length and ends) */
    /* outer-scope reads discovered while resolving subgraphs: owner node -> GPtrArray of values */
    GHashTable *implicit;
    GHashTable *implicit_set; /* owner node -> set of the values in its `implicit` list */
    uint64_t n_nodes;         /* imported so far, all graphs */
    uint64_t max_nodes;       /* fp_max_nodes of the file's size */
    /* import_node's arrays of a node's input and output names, lengths and values (g_malloc) */
    const char **io_names;
    size_t *io_lens;
    fp_value **io_vals;
    size_t io_cap;
} importer;

static bool import_graph(importer *im, const Onnx__GraphProto *gp, fp_graph *g);

static bool fail(importer *im, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool fail(importer *im, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fp_pbskel_fail_va(im->error, FP_ONNX_ERROR, code, fmt, ap);
    va_end(ap);
    return false;
}

/* ---------------------------------------------------------------- shapes and types */

/* Shapes are interned (fp_intern_dims): the tensors and values of a model share a few shapes. */
static bool convert_dims_list(importer *im, const int64_t *dims, size_t n, fp_shape *out, const char *what,
                              const char *name)
{
    if (n > FP_MAX_RANK)
        return fail(im, FP_ONNX_ERROR_LIMIT, "%s '%s': rank %zu exceeds the limit of %d", what, name, n,
                    FP_MAX_RANK);
    fp_dim d[FP_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0)
            return fail(im, FP_ONNX_ERROR_INVALID, "%s '%s': dimension %zu is negative (%" G_GINT64_FORMAT ")",
                        what, name, i, dims[i]);
        d[i] = (fp_dim){dims[i], NULL};
    }
    out->rank = (int32_t)n;
    out->dims = fp_intern_dims(im->m, d, out->rank);
    return true;
}

static bool convert_shape_proto(importer *im, const Onnx__TensorShapeProto *sp, fp_shape *out, const char *name)
{
    if (!sp) {
        out->rank = -1;
        out->dims = NULL;
        return true;
    }
    if (sp->n_dim > FP_MAX_RANK)
        return fail(im, FP_ONNX_ERROR_LIMIT, "value '%s': rank %zu exceeds the limit of %d", name, sp->n_dim,
                    FP_MAX_RANK);
    fp_dim dims[FP_MAX_RANK];
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        dims[i] = (fp_dim){-1, NULL};
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
            dims[i].value = d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                 *d->dim_param)
            dims[i].sym = fp_intern(im->m, d->dim_param, -1);
    }
    out->rank = (int32_t)sp->n_dim;
    out->dims = fp_intern_dims(im->m, dims, out->rank); /* shared, as convert_dims_list's */
    return true;
}

static fp_dtype convert_dtype(int32_t t) { return fp_dtype_valid(t) ? (fp_dtype)t : FP_DT_UNDEFINED; }

/* Sets v's dtype and shape from a TypeProto (inputs, outputs, value_info). */
static bool apply_type_inner(importer *im, fp_value *v, const Onnx__TypeProto *tp);

/* Applies a declared TypeProto to value v and remembers it as the declaration. */
static bool apply_type(importer *im, fp_value *v, const Onnx__TypeProto *tp)
{
    if (!apply_type_inner(im, v, tp))
        return false;
    v->decl_dtype = v->dtype;
    v->decl_shape = v->shape;
    return true;
}

static bool apply_type_inner(importer *im, fp_value *v, const Onnx__TypeProto *tp)
{
    v->declared = true;
    if (!tp)
        return true;
    const Onnx__TypeProto *elem = tp;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        v->type = FP_TYPE_TENSOR;
        v->dtype = convert_dtype(tp->tensor_type->elem_type);
        return convert_shape_proto(im, tp->tensor_type->shape, &v->shape, v->name);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        v->type = FP_TYPE_SPARSE;
        v->dtype = convert_dtype(tp->sparse_tensor_type->elem_type);
        return convert_shape_proto(im, tp->sparse_tensor_type->shape, &v->shape, v->name);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        v->type = FP_TYPE_SEQUENCE;
        elem = tp->sequence_type->elem_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        v->type = FP_TYPE_OPTIONAL;
        v->elem_kind = FP_TYPE_TENSOR;
        elem = tp->optional_type->elem_type;
        if (elem && elem->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
            v->elem_kind = FP_TYPE_SEQUENCE;
            elem = elem->sequence_type->elem_type;
        }
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        v->type = FP_TYPE_MAP;
        return true;
    default:
        return true;
    }
    /* sequence/optional: record the element's dtype and shape when it is a tensor */
    if (elem && elem->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        v->dtype = convert_dtype(elem->tensor_type->elem_type);
        return convert_shape_proto(im, elem->tensor_type->shape, &v->shape, v->name);
    }
    return true;
}

/* ---------------------------------------------------------------- tensors */

/* Packs the typed repeated fields of a small TensorProto into little-endian bytes of its dtype.
 * Returns NULL when the tensor has no such field or the element count does not match. */
static void *pack_typed(importer *im, const Onnx__TensorProto *tp, fp_dtype dt, uint64_t numel, uint64_t nbytes)
{
    unsigned bits = fp_dtype_bits(dt);
    if (nbytes > fp_inline_max(dt) || bits < 8)
        return NULL;
    uint8_t *buf = fp_arena_alloc(im->m->arena, nbytes ? nbytes : 1);
    size_t esz = bits / 8;
    if (tp->n_float_data && (dt == FP_DT_FLOAT || dt == FP_DT_COMPLEX64)) {
        if (tp->n_float_data * 4 != nbytes)
            return NULL;
        memcpy(buf, tp->float_data, nbytes);
    } else if (tp->n_double_data && (dt == FP_DT_DOUBLE || dt == FP_DT_COMPLEX128)) {
        if (tp->n_double_data * 8 != nbytes)
            return NULL;
        memcpy(buf, tp->double_data, nbytes);
    } else if (tp->n_int64_data && dt == FP_DT_INT64) {
        if (tp->n_int64_data != numel)
            return NULL;
        memcpy(buf, tp->int64_data, nbytes);
    } else if (tp->n_uint64_data && (dt == FP_DT_UINT64 || dt == FP_DT_UINT32)) {
        if (tp->n_uint64_data != numel)
            return NULL;
        for (size_t i = 0; i < numel; i++) {
            uint64_t x = tp->uint64_data[i];
            memcpy(buf + i * esz, &x, esz); /* little-endian host: low bytes first */
        }
    } else if (tp->n_int32_data) {
        if (tp->n_int32_data != numel || esz > 4)
            return NULL;
        for (size_t i = 0; i < numel; i++) {
            int32_t x = tp->int32_data[i];
            memcpy(buf + i * esz, &x, esz);
        }
    } else {
        return numel == 0 ? buf : NULL;
    }
    return buf;
}

/* Fills t from a TensorProto (initializer, Constant value, attribute tensor). */
static bool convert_tensor(importer *im, const Onnx__TensorProto *tp, fp_tensor *t, const char *what,
                           const char *name)
{
    t->dtype = convert_dtype(tp->data_type);
    if (tp->has_data_type && !fp_dtype_valid(tp->data_type))
        return fail(im, FP_ONNX_ERROR_INVALID, "%s '%s': unknown data_type %d", what, name, tp->data_type);
    if (!convert_dims_list(im, tp->dims, tp->n_dims, &t->shape, what, name))
        return false;
    uint64_t numel = 0;
    if (!fp_shape_numel(&t->shape, &numel))
        return fail(im, FP_ONNX_ERROR_LIMIT, "%s '%s': element count overflows 64 bits", what, name);
    if (!fp_dtype_bytes(t->dtype, numel, &t->nbytes))
        t->nbytes = 0; /* strings/undefined: size unknown, or overflow */
    if (t->dtype != FP_DT_STRING && fp_dtype_bits(t->dtype) && t->nbytes == 0 && numel != 0)
        return fail(im, FP_ONNX_ERROR_LIMIT, "%s '%s': byte size overflows 64 bits", what, name);

    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        t->where = FP_DATA_EXTERNAL;
        for (size_t i = 0; i < tp->n_external_data; i++) {
            const Onnx__StringStringEntryProto *e = tp->external_data[i];
            const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";
            if (strcmp(k, "location") == 0)
                t->location = fp_intern(im->m, v, -1);
            else if (strcmp(k, "offset") == 0)
                t->offset = g_ascii_strtoull(v, NULL, 10);
            else if (strcmp(k, "length") == 0)
                t->length = g_ascii_strtoull(v, NULL, 10);
        }
        if (!t->location)
            return fail(im, FP_ONNX_ERROR_INVALID, "%s '%s': external data without a 'location' entry", what,
                        name);
        return true;
    }
    fp_pbskel_marker mk[4];
    unsigned nm = fp_pbskel_markers(&tp->base, mk, G_N_ELEMENTS(mk));
    if (nm > 0) {
        t->where = FP_DATA_FILE;
        t->offset = mk[0].offset;
        t->length = mk[0].length;
        return true;
    }
    if (tp->has_raw_data) {
        if (tp->raw_data.len <= fp_inline_max(t->dtype) && tp->raw_data.len == t->nbytes) {
            t->where = FP_DATA_INLINE;
            t->data = fp_arena_memdup(im->m->arena, tp->raw_data.data, tp->raw_data.len);
        } else if (tp->raw_data.len != t->nbytes && t->nbytes) {
            return fail(im, FP_ONNX_ERROR_INVALID,
                        "%s '%s': raw_data holds %zu bytes but %s dims need %" G_GUINT64_FORMAT, what, name,
                        tp->raw_data.len, fp_dtype_name(t->dtype), t->nbytes);
        }
        return true;
    }
    if (t->dtype == FP_DT_STRING) {
        /* small string tensors keep their values as an array of NUL-terminated strings */
        size_t total = 0;
        for (size_t i = 0; i < tp->n_string_data; i++)
            total += tp->string_data[i].len;
        if (tp->n_string_data == numel && total <= FP_INLINE_MAX) {
            const char **strs = fp_arena_calloc(im->m->arena, numel ? numel : 1, sizeof(char *));
            for (size_t i = 0; i < numel; i++)
                strs[i] = fp_arena_strndup(im->m->arena, (const char *)tp->string_data[i].data, tp->string_data[i].len);
            t->where = FP_DATA_INLINE;
            t->data = strs;
        }
        return true;
    }
    void *packed = pack_typed(im, tp, t->dtype, numel, t->nbytes);
    if (packed) {
        t->where = FP_DATA_INLINE;
        t->data = packed;
    }
    return true;
}

static fp_tensor *new_tensor(importer *im, const Onnx__TensorProto *tp, const char *what, const char *name)
{
    fp_tensor *t = fp_arena_alloc(im->m->arena, sizeof *t);
    return convert_tensor(im, tp, t, what, name) ? t : NULL;
}

/* A sparse tensor as metadata: dense dims, payload = values + indices bytes. */
static fp_tensor *new_sparse_tensor(importer *im, const Onnx__SparseTensorProto *sp, const char *what,
                                    const char *name)
{
    fp_tensor *t = fp_arena_alloc(im->m->arena, sizeof *t);
    fp_tensor vals = {0}, idx = {0};
    if (sp->values && !convert_tensor(im, sp->values, &vals, what, name))
        return NULL;
    if (sp->indices && !convert_tensor(im, sp->indices, &idx, what, name))
        return NULL;
    t->dtype = vals.dtype;
    if (!convert_dims_list(im, sp->dims, sp->n_dims, &t->shape, what, name))
        return NULL;
    t->nbytes = vals.nbytes + idx.nbytes;
    t->where = FP_DATA_NONE;
    return t;
}

/* ---------------------------------------------------------------- attributes */

/* ap's type; an IR 0.0.1 attribute has none, it is then the type of the field present. */
static int attr_type(const Onnx__AttributeProto *ap)
{
    int type = ap->has_type ? (int)ap->type : 0;
    if (type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return type;
    if (ap->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (ap->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (ap->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (ap->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (ap->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (ap->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (ap->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (ap->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (ap->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (ap->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    return type;
}

/* Sets a from ap for the types of plain values (FLOAT, INT, STRING, FLOATS, INTS, STRINGS);
 * false, a untouched, for any other type. */
static bool convert_plain_attr(fp_model *m, const Onnx__AttributeProto *ap, int type, fp_attr *a)
{
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        a->type = FP_ATTR_FLOAT;
        a->u.f = ap->f;
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        a->type = FP_ATTR_INT;
        a->u.i = ap->i;
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        a->type = FP_ATTR_STRING;
        a->n = (uint32_t)MIN(ap->s.len, G_MAXUINT32);
        a->u.s = fp_arena_strndup(m->arena, (const char *)(ap->s.data ? ap->s.data : (uint8_t *)""), a->n);
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        a->type = FP_ATTR_FLOATS;
        a->n = (uint32_t)ap->n_floats;
        a->u.floats = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(double));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.floats[i] = ap->floats[i];
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        a->type = FP_ATTR_INTS;
        a->n = (uint32_t)ap->n_ints;
        /* shared by every attribute of the same values (kernel_shape, pads, strides...): never written */
        a->u.ints = (int64_t *)fp_intern_blob(m, ap->ints, ap->n_ints * sizeof(int64_t));
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        a->type = FP_ATTR_STRINGS;
        a->n = (uint32_t)ap->n_strings;
        a->u.strings = fp_arena_calloc(m->arena, a->n ? a->n : 1, sizeof(char *));
        for (uint32_t i = 0; i < a->n; i++)
            a->u.strings[i] = fp_arena_strndup(m->arena, (const char *)ap->strings[i].data, ap->strings[i].len);
        return true;
    default:
        return false;
    }
}

/* Sets a from ap for type TENSOR, SPARSE_TENSOR, TENSORS or SPARSE_TENSORS (the tensors made in
 * m's arena); false, with the error, when a tensor does not convert or a TENSOR has none. */
static bool convert_tensor_attr(importer *im, const fp_node *n, const Onnx__AttributeProto *ap, int type, fp_attr *a)
{
    bool sparse = type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR ||
                  type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR) {
        a->type = FP_ATTR_TENSOR;
        if (!ap->t)
            return fail(im, FP_ONNX_ERROR_INVALID, "node '%s' (%s): attribute '%s' of type TENSOR has no tensor",
                        n->name, n->op_type, a->name);
        return (a->u.t = new_tensor(im, ap->t, "attribute tensor", a->name)) != NULL;
    }
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR) {
        a->type = FP_ATTR_SPARSE_TENSOR;
        return !ap->sparse_tensor || (a->u.t = new_sparse_tensor(im, ap->sparse_tensor, "attribute tensor", a->name));
    }
    a->type = sparse ? FP_ATTR_SPARSE_TENSORS : FP_ATTR_TENSORS;
    a->n = (uint32_t)(sparse ? ap->n_sparse_tensors : ap->n_tensors);
    a->u.tensors = fp_arena_calloc(im->m->arena, a->n ? a->n : 1, sizeof(fp_tensor *));
    for (uint32_t i = 0; i < a->n; i++) {
        a->u.tensors[i] = sparse ? new_sparse_tensor(im, ap->sparse_tensors[i], "attribute tensor", a->name)
                                 : new_tensor(im, ap->tensors[i], "attribute tensor", a->name);
        if (!a->u.tensors[i])
            return false;
    }
    return true;
}

/* Sets a from ap for type GRAPH or GRAPHS, importing each graph as a new subgraph of n's graph
 * owned by n; false, with the error, when one does not import or a GRAPH has none. */
static bool convert_graph_attr(importer *im, fp_node *n, const Onnx__AttributeProto *ap, int type, fp_attr *a)
{
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH) {
        a->type = FP_ATTR_GRAPH;
        if (!ap->g)
            return fail(im, FP_ONNX_ERROR_INVALID, "node '%s' (%s): attribute '%s' of type GRAPH has no graph",
                        n->name, n->op_type, a->name);
        g_autofree char *gname = g_strdup_printf("%s/%s", n->name, a->name);
        a->u.g = fp_graph_new(im->m, gname, n->graph, n);
        return import_graph(im, ap->g, a->u.g);
    }
    a->type = FP_ATTR_GRAPHS;
    a->n = (uint32_t)ap->n_graphs;
    a->u.graphs = fp_arena_calloc(im->m->arena, a->n ? a->n : 1, sizeof(fp_graph *));
    for (uint32_t i = 0; i < a->n; i++) {
        g_autofree char *gname = g_strdup_printf("%s/%s[%u]", n->name, a->name, i);
        a->u.graphs[i] = fp_graph_new(im->m, gname, n->graph, n);
        if (!import_graph(im, ap->graphs[i], a->u.graphs[i]))
            return false;
    }
    return true;
}

/* Translates attribute ap of node n into a (its graphs imported as subgraphs of n); false with the
 * error on an attribute of unknown type (unless it refers to a function's attribute) or one whose
 * tensor or graph does not convert. */
static bool convert_attr(importer *im, fp_node *n, const Onnx__AttributeProto *ap, fp_attr *a)
{
    fp_model *m = im->m;
    a->name = fp_intern(m, ap->name ? ap->name : "", -1);
    if (ap->ref_attr_name && *ap->ref_attr_name)
        a->ref_attr_name = fp_intern(m, ap->ref_attr_name, -1);
    int type = attr_type(ap);
    if (convert_plain_attr(m, ap, type, a))
        return true;
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
        return convert_tensor_attr(im, n, ap, type, a);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
        return convert_graph_attr(im, n, ap, type, a);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
        a->type = FP_ATTR_TYPE;
        return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        a->type = FP_ATTR_TYPES;
        a->n = (uint32_t)ap->n_type_protos;
        return true;
    default:
        if (a->ref_attr_name)
            return true;
        return fail(im, FP_ONNX_ERROR_INVALID, "node '%s' (%s): attribute '%s' has unknown type %d", n->name,
                    n->op_type, a->name, type);
    }
}

/* Collects the graphs held by n's attributes into n->subgraphs. Each of them was imported, within
 * the graph limit (begin_graph): their count fits fp_node.n_subgraphs. */
static void collect_subgraphs(importer *im, fp_node *n)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < n->n_attrs; i++)
        count += n->attrs[i].type == FP_ATTR_GRAPH ? 1 : n->attrs[i].type == FP_ATTR_GRAPHS ? n->attrs[i].n : 0;
    if (!count)
        return;
    g_assert(count <= FP_MAX_GRAPHS);
    n->subgraphs = fp_arena_calloc(im->m->arena, count, sizeof(fp_graph *));
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const fp_attr *a = &n->attrs[i];
        if (a->type == FP_ATTR_GRAPH)
            n->subgraphs[n->n_subgraphs++] = a->u.g;
        else if (a->type == FP_ATTR_GRAPHS)
            for (uint32_t k = 0; k < a->n; k++)
                n->subgraphs[n->n_subgraphs++] = a->u.graphs[k];
    }
}

/* ---------------------------------------------------------------- nodes and graphs */

/* A Constant node's output carries the tensor of its `value*` attribute. */
static void constant_output(importer *im, fp_node *n)
{
    fp_value *out = n->n_outputs ? n->outputs[0] : NULL;
    if (!out)
        return;
    out->kind = FP_VALUE_CONSTANT;
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const fp_attr *a = &n->attrs[i];
        fp_tensor *t = NULL;
        if (a->type == FP_ATTR_TENSOR || a->type == FP_ATTR_SPARSE_TENSOR) {
            t = a->u.t;
        } else if (a->type == FP_ATTR_FLOAT || a->type == FP_ATTR_INT || a->type == FP_ATTR_FLOATS ||
                   a->type == FP_ATTR_INTS) {
            bool scalar = a->type == FP_ATTR_FLOAT || a->type == FP_ATTR_INT;
            bool isf = a->type == FP_ATTR_FLOAT || a->type == FP_ATTR_FLOATS;
            uint32_t cnt = scalar ? 1 : a->n;
            t = fp_arena_alloc(im->m->arena, sizeof *t);
            t->dtype = isf ? FP_DT_FLOAT : FP_DT_INT64;
            t->shape.rank = scalar ? 0 : 1;
            t->shape.dims = fp_arena_calloc(im->m->arena, 1, sizeof(fp_dim));
            t->shape.dims[0].value = cnt;
            t->nbytes = (uint64_t)cnt * (isf ? 4 : 8);
            if (t->nbytes <= fp_inline_max(t->dtype)) {
                uint8_t *buf = fp_arena_alloc(im->m->arena, t->nbytes ? t->nbytes : 1);
                for (uint32_t k = 0; k < cnt; k++) {
                    if (isf) {
                        float f = (float)(scalar ? a->u.f : a->u.floats[k]);
                        memcpy(buf + 4 * k, &f, 4);
                    } else {
                        int64_t x = scalar ? a->u.i : a->u.ints[k];
                        memcpy(buf + 8 * k, &x, 8);
                    }
                }
                t->where = FP_DATA_INLINE;
                t->data = buf;
            }
        } else if (a->type == FP_ATTR_STRING || a->type == FP_ATTR_STRINGS) {
            t = fp_arena_alloc(im->m->arena, sizeof *t);
            t->dtype = FP_DT_STRING;
            t->shape.rank = a->type == FP_ATTR_STRING ? 0 : 1;
            t->shape.dims = fp_arena_calloc(im->m->arena, 1, sizeof(fp_dim));
            t->shape.dims[0].value = a->type == FP_ATTR_STRING ? 1 : a->n;
        }
        if (t) {
            out->tensor = t;
            out->type = FP_TYPE_TENSOR;
            out->dtype = t->dtype;
            out->shape = t->shape;
            return;
        }
    }
}

/* The memo of (domain, op_type), made when absent: a node of a kind seen before costs two short
 * compares instead of two interns and an op lookup. */
static const op_memo *op_kind(importer *im, const char *domain, const char *op_type)
{
    size_t lo = strlen(op_type), ld = strlen(domain);
    unsigned h = (unsigned)(lo * 31 + ld * 17 + (uint8_t)op_type[0] * 7 + (lo ? (uint8_t)op_type[lo - 1] : 0));
    op_memo *e = &im->ops[h % OP_MEMO];
    if (e->op_type && strcmp(e->op_type, op_type) == 0 && strcmp(e->domain, domain) == 0)
        return e;
    e->op_type = fp_intern(im->m, op_type, -1);
    e->domain = fp_intern(im->m, domain, -1);
    e->op = fp_op_from_onnx(domain, op_type);
    return e;
}

/* Sets im's io arrays to hold n names. */
static void io_reserve(importer *im, size_t n)
{
    if (n <= im->io_cap)
        return;
    im->io_cap = MAX(n, 2 * im->io_cap);
    im->io_names = g_renew(const char *, im->io_names, im->io_cap);
    im->io_lens = g_renew(size_t, im->io_lens, im->io_cap);
    im->io_vals = g_renew(fp_value *, im->io_vals, im->io_cap);
}

static void io_clear(importer *im)
{
    g_free(im->io_names);
    g_free(im->io_lens);
    g_free(im->io_vals);
}

/* np's name interned, NULL when it has none; after its outputs were looked up into im->io_vals
 * (a node is often called as one of its outputs, whose name is interned already). */
static const char *node_name(importer *im, const Onnx__NodeProto *np)
{
    if (!np->name || !*np->name)
        return NULL;
    for (size_t i = 0; i < np->n_output; i++) {
        const fp_value *v = im->io_vals[np->n_input + i];
        if (v && strcmp(v->name, np->name) == 0)
            return v->name;
    }
    return fp_intern(im->m, np->name, -1);
}

/* Imports node np into g. lens: NULL, or the lengths of np->input[0..n_input) followed by those
 * of np->output[0..n_output), which then need not be NUL-terminated (names read from the wire; a
 * name that holds a NUL ends there, as its C string would). */
static bool import_node(importer *im, const Onnx__NodeProto *np, const size_t *lens, fp_graph *g)
{
    const char *op_type = np->op_type ? np->op_type : "";
    const char *domain = np->domain ? np->domain : "";
    if (!*op_type)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': node %u ('%s') has no op_type", g->name,
                    g->nodes->len, np->name ? np->name : "");
    if (++im->n_nodes > im->max_nodes)
        return fail(im, FP_ONNX_ERROR_LIMIT,
                    "graph '%s': more than %" G_GUINT64_FORMAT " nodes in the model (all graphs), the limit", g->name,
                    im->max_nodes);
    if (np->n_input > G_MAXUINT16 * 16 || np->n_output > G_MAXUINT16 * 16)
        return fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': node '%s' has too many inputs or outputs", g->name,
                    np->name ? np->name : "");
    /* the values first, all at once (fp_graph_values_len), inputs before outputs as one by one */
    size_t n_io = np->n_input + np->n_output;
    io_reserve(im, n_io);
    for (size_t i = 0; i < n_io; i++) {
        const char *s = i < np->n_input ? np->input[i] : np->output[i - np->n_input];
        size_t len = !s ? 0 : lens ? lens[i] : strlen(s);
        im->io_names[i] = len ? s : NULL; /* an empty name: no value */
        im->io_lens[i] = len;
    }
    fp_graph_values_len(g, n_io, im->io_names, im->io_lens, im->io_vals);
    const op_memo *kind = op_kind(im, domain, op_type);
    fp_node *n = fp_node_new_interned(g, kind->op, kind->op_type, kind->domain, node_name(im, np),
                                      (uint32_t)np->n_input, (uint32_t)np->n_output,
                                      (uint32_t)MIN(np->n_attribute, UINT32_MAX));
    if (np->n_input) /* (io_vals may be NULL) */
        memcpy(n->inputs, im->io_vals, np->n_input * sizeof *n->inputs);
    for (size_t i = 0; i < np->n_output; i++) {
        fp_value *v = im->io_vals[np->n_input + i];
        if (!v)
            continue;
        if (v->producer)
            return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': value '%s' is produced by both node '%s' and node '%s'",
                        g->name, v->name, v->producer->name, n->name);
        if (v->kind == FP_VALUE_INPUT || v->kind == FP_VALUE_INITIALIZER)
            return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': node '%s' (%s) writes '%s', which is a graph %s",
                        g->name, n->name, n->op_type, v->name, v->kind == FP_VALUE_INPUT ? "input" : "initializer");
        v->producer = n;
        v->producer_port = (uint32_t)i;
        n->outputs[i] = v;
    }
    for (size_t i = 0; i < np->n_attribute; i++)
        if (!convert_attr(im, n, np->attribute[i], &n->attrs[i]))
            return false;
    collect_subgraphs(im, n);
    if (n->op == FP_OP_CONSTANT)
        constant_output(im, n);
    return true;
}

/* Initializer number i of g: a TensorProto (tp) or, when sp is set, a SparseTensorProto. */
static bool import_initializer(importer *im, fp_graph *g, size_t i, const Onnx__TensorProto *tp,
                               const Onnx__SparseTensorProto *sp)
{
    bool sparse = sp != NULL;
    const char *name = sparse ? (sp->values && sp->values->name ? sp->values->name : "") : (tp->name ? tp->name : "");
    if (!*name)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': initializer %zu has no name", g->name, i);
    bool existed;
    fp_value *v = fp_graph_value_ex(g, name, strlen(name), &existed);
    if (existed)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': duplicate initializer '%s'", g->name, name);
    v->kind = FP_VALUE_INITIALIZER;
    v->tensor = sparse ? new_sparse_tensor(im, sp, "initializer", name) : new_tensor(im, tp, "initializer", name);
    if (!v->tensor)
        return false;
    v->type = sparse ? FP_TYPE_SPARSE : FP_TYPE_TENSOR;
    v->dtype = v->tensor->dtype;
    v->shape = v->tensor->shape;
    g_ptr_array_add(g->initializers, v);
    return true;
}

static bool import_input(importer *im, fp_graph *g, size_t i, const Onnx__ValueInfoProto *vi)
{
    if (!vi->name || !*vi->name)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': input %zu has no name", g->name, i);
    fp_value *v = fp_graph_find(g, vi->name);
    if (v && v->kind == FP_VALUE_INITIALIZER) {
        v->overridable = true; /* an initializer listed as input: it stays an initializer */
        return true;
    }
    if (v)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': duplicate input '%s'", g->name, vi->name);
    v = fp_graph_value(g, vi->name);
    v->kind = FP_VALUE_INPUT;
    if (!apply_type(im, v, vi->type))
        return false;
    g_ptr_array_add(g->inputs, v);
    return true;
}

static bool import_output(importer *im, fp_graph *g, size_t i, const Onnx__ValueInfoProto *vi)
{
    if (!vi->name || !*vi->name)
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': output %zu has no name", g->name, i);
    fp_value *v = fp_graph_value(g, vi->name);
    v->is_output = true;
    fp_shape inferred = v->shape;
    fp_dtype dt = v->dtype;
    if (!apply_type(im, v, vi->type))
        return false;
    if (v->kind != FP_VALUE_INTERMEDIATE && v->tensor) { /* an output that is a weight: keep its own type */
        v->shape = inferred;
        v->dtype = dt;
    }
    g_ptr_array_add(g->outputs, v);
    return true;
}

static bool import_value_info(importer *im, fp_graph *g, const Onnx__ValueInfoProto *vi)
{
    fp_value *v = vi->name ? fp_graph_find(g, vi->name) : NULL;
    return !(v && v->kind == FP_VALUE_INTERMEDIATE && !apply_type(im, v, vi->type));
}

/* Depth and count limits; the main graph takes the name the file gives it. */
static bool begin_graph(importer *im, fp_graph *g, const char *name)
{
    if (g->depth > FP_MAX_GRAPH_DEPTH)
        return fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': subgraphs nested deeper than %d", g->name,
                    FP_MAX_GRAPH_DEPTH);
    if (im->m->graphs->len > FP_MAX_GRAPHS)
        return fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': more than %d graphs in the model (subgraphs included), the limit",
                    g->name, FP_MAX_GRAPHS);
    if (name && *name && !g->parent)
        g->name = fp_intern(im->m, name, -1);
    return true;
}

static bool import_graph(importer *im, const Onnx__GraphProto *gp, fp_graph *g)
{
    if (!begin_graph(im, g, gp->name))
        return false;
    /* initializers first: they may also be listed as inputs (IR < 4) */
    for (size_t i = 0; i < gp->n_initializer + gp->n_sparse_initializer; i++) {
        bool sparse = i >= gp->n_initializer;
        if (!import_initializer(im, g, i, sparse ? NULL : gp->initializer[i],
                                sparse ? gp->sparse_initializer[i - gp->n_initializer] : NULL))
            return false;
    }
    for (size_t i = 0; i < gp->n_input; i++)
        if (!import_input(im, g, i, gp->input[i]))
            return false;
    if (gp->n_node > im->max_nodes)
        return fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': %zu nodes, more than the limit of %" G_GUINT64_FORMAT,
                    g->name, gp->n_node, im->max_nodes);
    for (size_t i = 0; i < gp->n_node; i++)
        if (!import_node(im, gp->node[i], NULL, g))
            return false;
    for (size_t i = 0; i < gp->n_output; i++)
        if (!import_output(im, g, i, gp->output[i]))
            return false;
    for (size_t i = 0; i < gp->n_value_info; i++)
        if (!import_value_info(im, g, gp->value_info[i]))
            return false;
    return true;
}

/* ---------------------------------------------------------------- outer-scope resolution */

static void add_implicit(importer *im, fp_node *owner, fp_value *v)
{
    GPtrArray *list = g_hash_table_lookup(im->implicit, owner);
    GHashTable *set = g_hash_table_lookup(im->implicit_set, owner);
    if (!list) {
        list = g_ptr_array_new();
        g_hash_table_insert(im->implicit, owner, list);
        set = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(im->implicit_set, owner, set);
    }
    if (g_hash_table_add(set, v)) /* a list scan would be quadratic in the outer values read */
        g_ptr_array_add(list, v);
}

/* Replaces, in subgraph g, every placeholder (a value nobody produces) whose name is visible in
 * an enclosing graph with that outer value, and records the outer read on each owner node up to
 * the graph that defines it. Parents are resolved before children (graph creation order). */
static void resolve_outer(importer *im, fp_graph *g)
{
    GHashTable *subst = NULL;
    GPtrArray *vals = g->values;
    guint keep = 0;
    for (guint i = 0; i < vals->len; i++) {
        fp_value *v = vals->pdata[i];
        fp_value *outer = NULL;
        if (!v->producer && v->kind == FP_VALUE_INTERMEDIATE)
            outer = fp_graph_lookup(g->parent, v->name);
        if (!outer) {
            v->id = keep;
            vals->pdata[keep++] = v;
            continue;
        }
        if (!subst)
            subst = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(subst, v, outer);
        fp_graph_forget(g, v);
        if (v->declared && outer->type == FP_TYPE_UNKNOWN) {
            outer->type = v->type;
            outer->dtype = v->dtype;
            outer->shape = v->shape;
        }
    }
    g_ptr_array_set_size(vals, keep);
    if (!subst)
        return;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            fp_value *outer = n->inputs[k] ? g_hash_table_lookup(subst, n->inputs[k]) : NULL;
            if (!outer)
                continue;
            n->inputs[k] = outer;
            for (fp_graph *x = g; x->owner; x = x->owner->graph) {
                add_implicit(im, x->owner, outer);
                if (x->owner->graph == outer->graph)
                    break;
            }
        }
    }
    for (guint i = 0; i < g->outputs->len; i++) {
        fp_value *outer = g_hash_table_lookup(subst, g->outputs->pdata[i]);
        if (!outer)
            continue;
        g->outputs->pdata[i] = outer;
        for (fp_graph *x = g; x->owner; x = x->owner->graph) {
            add_implicit(im, x->owner, outer);
            if (x->owner->graph == outer->graph)
                break;
        }
    }
    g_hash_table_destroy(subst);
}

static void finish_implicit(importer *im)
{
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, im->implicit);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        fp_node *n = key;
        GPtrArray *list = val;
        if (!list->len)
            continue;
        fp_node_ext *e = fp_node_ext_ensure(n);
        e->n_implicit = list->len;
        e->implicit = fp_arena_memdup(im->m->arena, list->pdata, list->len * sizeof(fp_value *));
    }
}

fp_tensor *fp_onnx_tensor_from_proto(fp_model *m, const Onnx__TensorProto *tp, GError **error)
{
    importer im = {.m = m, .error = error};
    return new_tensor(&im, tp, "tensor", tp->name ? tp->name : "");
}

/* ---------------------------------------------------------------- streaming import of a skeleton */

/* The structs node_from_wire makes for one node: carved from a reused buffer, and from the scratch
 * arena when it is full. Not zeroed. */
typedef struct {
    uint8_t *buf;
    size_t used, cap;
    fp_arena *more;
} wire_mem;

static void *wire_alloc(wire_mem *a, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (size <= a->cap - a->used) {
        void *p = a->buf + a->used;
        a->used += size;
        return p;
    }
    return fp_arena_alloc_raw(a->more, size);
}

/* A skeleton's main graph is imported one element at a time: every node, initializer, input,
 * output and value_info is unpacked on its own into a scratch arena, translated and dropped, so
 * the unpacked protobuf of a large graph (bigger than the IR it becomes) never exists whole. */
typedef struct {
    const uint8_t *data; /* the GraphProto's fields, serialized */
    size_t len;
    const Onnx__GraphProto *head; /* its other fields (name, doc_string, ...), unpacked */
    size_t n_node, n_values; /* nodes, and initializers + inputs + nodes: a lower bound of the values */
    const uint8_t *from[16], *to[16]; /* per element field (numbers below 16): from its first element
                                         to the end of its last one (split_graph); NULL when none */
    fp_pbskel_reader *reader; /* else elements are read from here, at these offsets of its source */
    uint64_t rfrom[16], rto[16]; /* (rto 0: none) */
    bool odd;                    /* an element field that is not length-delimited */
    fp_arena *scratch; /* one element at a time */
    ProtobufCAllocator alloc;
    wire_mem mem; /* node_from_wire's, one node at a time */
} wire_graph;

static void *arena_alloc(void *arena, size_t size) { return fp_arena_alloc(arena, size); }
static void arena_free(void *arena, void *p)
{
    (void)arena;
    (void)p;
}

#define WIRE_MEM (64 * 1024)

/* Sets up wg's allocators (wg->scratch is set). */
static void wire_graph_init(wire_graph *wg)
{
    wg->alloc = (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = wg->scratch};
    wg->mem = (wire_mem){.buf = g_malloc(WIRE_MEM), .cap = WIRE_MEM, .more = wg->scratch};
}

static void wire_graph_clear(wire_graph *wg)
{
    g_free(wg->mem.buf);
    fp_arena_free(wg->scratch);
}

/* GraphProto fields (numbers from onnx.proto) imported element by element, else NULL. */
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
 * scalars, strings, ints and floats); the result is the same struct protobuf-c would give, so
 * import_node is shared. Anything else (an unknown field, a wrong wire type, a tensor or graph
 * attribute, an odd varint) is left to protobuf-c: a whole attribute, or the whole node. */

static char *wire_str(wire_mem *a, const fp_pbskel_field *f)
{
    static char empty[1]; /* never written: the strings of a NodeProto are only read */
    if (!f->len) /* most nodes' domain */
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
        case 1: case 4: case 13: case 21: /* name, s, doc_string, ref_attr_name */
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
static void attr_wire_fill(wire_mem *a, const uint8_t *p, const uint8_t *end, Onnx__AttributeProto *ap)
{
    fp_pbskel_field f;
    while (p < end && fp_pbskel_next_field_inline(&p, end, &f)) { /* every field reads: checked */
        uint32_t w = (uint32_t)f.value; /* f and floats: the float's bits */
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
static bool attr_from_wire(wire_mem *a, const uint8_t *p, size_t len, Onnx__AttributeProto *ap)
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
        case 8: case 9: case 12: /* name, raw_data, doc_string */
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
static void tensor_wire_fill(wire_mem *a, const uint8_t *p, const uint8_t *end, Onnx__TensorProto *tp)
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
static Onnx__TensorProto *tensor_from_wire(wire_mem *a, const uint8_t *p, size_t len)
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
 * then outputs (import_node). NULL when the node is not of the usual shape (the caller unpacks it
 * with protobuf-c), or, with *malformed set, when one of its attributes does not unpack. */
static Onnx__NodeProto *node_from_wire(wire_mem *a, ProtobufCAllocator *alloc, const uint8_t *p, size_t len,
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
                ap = (Onnx__AttributeProto *)protobuf_c_message_unpack(&onnx__attribute_proto__descriptor, alloc,
                                                                       f.len, f.payload);
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

/* Unpacks element number `index` of field `field` and imports it into g. */
static bool import_element(importer *im, wire_graph *wg, fp_graph *g, const fp_pbskel_field *f, size_t index,
                           bool *malformed)
{
    ProtobufCMessage *msg = NULL;
    size_t *lens = NULL; /* of a node read from the wire */
    wg->mem.used = 0;
    if (f->number == 1)
        msg = (ProtobufCMessage *)node_from_wire(&wg->mem, &wg->alloc, f->payload, f->len, &lens, malformed);
    else if (f->number == 5)
        msg = (ProtobufCMessage *)tensor_from_wire(&wg->mem, f->payload, f->len);
    bool fast = msg != NULL; /* read from the wire: the field numbers are checked */
    if (!msg && !*malformed)
        msg = protobuf_c_message_unpack(element_descriptor(f->number), &wg->alloc, f->len, f->payload);
    bool ok = false;
    if (!msg || (!fast && !fp_pbskel_numbers_valid(msg)))
        *malformed = true;
    else if (f->number == 1)
        ok = import_node(im, (const Onnx__NodeProto *)msg, lens, g);
    else if (f->number == 5)
        ok = import_initializer(im, g, index, (const Onnx__TensorProto *)msg, NULL);
    else if (f->number == 15)
        ok = import_initializer(im, g, index, NULL, (const Onnx__SparseTensorProto *)msg);
    else if (f->number == 11)
        ok = import_input(im, g, index, (const Onnx__ValueInfoProto *)msg);
    else if (f->number == 12)
        ok = import_output(im, g, index, (const Onnx__ValueInfoProto *)msg);
    else
        ok = import_value_info(im, g, (const Onnx__ValueInfoProto *)msg);
    fp_arena_reset(wg->scratch);
    return ok;
}

/* Prefetches (fp_intern_prefetch) the names that the element of field `field` at pos (before end)
 * will look up, when it is a node or an initializer that wg's reader holds already: the lookups of
 * the next element then find their part of the intern table in the cache. A hint: whatever is odd
 * or not at hand is left alone. */
static void prefetch_element(importer *im, wire_graph *wg, uint32_t field, uint64_t pos, uint64_t end)
{
    if (field != 1 && field != 5)
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
        fp_intern_prefetch(im->m, (const char *)f.payload, f.len);
        if (f.number == 2)
            out = f;
    }
}

/* import_elements from wg->reader: each element's skeleton is built when it is imported. */
static bool import_elements_read(importer *im, wire_graph *wg, fp_graph *g, uint32_t field, size_t *index,
                                 bool *malformed)
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
            prefetch_element(im, wg, field, pos, end);
        if (!import_element(im, wg, g, &e, (*index)++, malformed))
            return false;
    }
    return true;
}

/* Imports every element of field `field` in file order; *index counts them. */
static bool import_elements(importer *im, wire_graph *wg, fp_graph *g, uint32_t field, size_t *index,
                            bool *malformed)
{
    if (wg->reader)
        return import_elements_read(im, wg, g, field, index, malformed);
    const uint8_t *p = wg->from[field], *end = wg->to[field];
    fp_pbskel_field f;
    if (!p)
        return true;
    while (p < end && fp_pbskel_next_field_inline(&p, end, &f))
        if (f.number == field && !import_element(im, wg, g, &f, (*index)++, malformed))
            return false;
    return true;
}

/* Whether every element unpacks (as a whole-graph unpack would require). */
static bool elements_valid(wire_graph *wg)
{
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

/* import_graph over a wire_graph, in the same order and with the same errors; a malformed element
 * anywhere is reported as such even after an earlier element's import error, as unpacking the
 * whole graph first would. */
static bool import_graph_wire(importer *im, wire_graph *wg, fp_graph *g)
{
    bool malformed = false;
    size_t n_init = 0, n_in = 0, n_node = 0, n_out = 0, n_vi = 0;
    if (wg->n_node <= im->max_nodes)
        fp_graph_reserve(g, (uint32_t)wg->n_node, (uint32_t)MIN(wg->n_values, 4 * im->max_nodes));
    bool ok = begin_graph(im, g, wg->head->name) && import_elements(im, wg, g, 5, &n_init, &malformed) &&
              import_elements(im, wg, g, 15, &n_init, &malformed) && import_elements(im, wg, g, 11, &n_in, &malformed);
    if (ok && wg->n_node > im->max_nodes)
        ok = fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': %zu nodes, more than the limit of %" G_GUINT64_FORMAT,
                  g->name, wg->n_node, im->max_nodes);
    ok = ok && import_elements(im, wg, g, 1, &n_node, &malformed) && import_elements(im, wg, g, 12, &n_out, &malformed) &&
         import_elements(im, wg, g, 13, &n_vi, &malformed);
    if (!ok && (malformed || (!wg->reader && !elements_valid(wg)))) {
        g_clear_error(im->error);
        g_set_error_literal(im->error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, MALFORMED_MESSAGE);
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

/* Splits the main graph's fields: elements stay in place (wg->data), the others go to `rest`. */
static bool split_graph(wire_graph *wg, GByteArray *rest)
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
        wg->n_node += f.number == 1;
        wg->n_values += f.number == 1 || f.number == 5 || f.number == 11 || f.number == 15;
        if (!wg->from[f.number])
            wg->from[f.number] = start;
        wg->to[f.number] = p;
    }
    return true;
}

/* ---------------------------------------------------------------- model */

/* Translates mp; its main graph is mp->graph, or wg when mp was unpacked without it. */
static fp_model *import_model(const char *path, const char *format, const Onnx__ModelProto *mp, wire_graph *wg,
                              uint64_t file_size, GError **error)
{
    g_autoptr(fp_model) m = fp_model_new(path, format);
    importer im = {.m = m, .error = error, .max_nodes = fp_max_nodes(file_size)};
    m->file_size = file_size;
    if (!mp->graph && !wg) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED,
                    "not an ONNX model: ModelProto.graph is missing");
        return NULL;
    }
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    m->model_version = mp->has_model_version ? mp->model_version : 0;
    m->producer_name = fp_intern(m, mp->producer_name ? mp->producer_name : "", -1);
    m->producer_version = fp_intern(m, mp->producer_version ? mp->producer_version : "", -1);
    m->domain = fp_intern(m, mp->domain ? mp->domain : "", -1);
    m->doc = fp_intern(m, mp->doc_string ? mp->doc_string : "", -1);
    m->n_opsets = (uint32_t)MIN(mp->n_opset_import, 4096);
    m->opsets = fp_arena_calloc(m->arena, m->n_opsets ? m->n_opsets : 1, sizeof(fp_opset));
    for (uint32_t i = 0; i < m->n_opsets; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        m->opsets[i].domain = fp_intern(m, os->domain ? os->domain : "", -1);
        m->opsets[i].version = os->has_version ? os->version : 0;
    }
    if (m->n_opsets == 0) { /* IR version 1/2 models: the default domain at opset 1 */
        m->opsets = fp_arena_calloc(m->arena, 1, sizeof(fp_opset));
        m->opsets[0].domain = fp_intern(m, "", 0);
        m->opsets[0].version = 1;
        m->n_opsets = 1;
    }
    im.implicit = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
    im.implicit_set = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_hash_table_unref);
    fp_graph *g = fp_graph_new(m, "main", NULL, NULL);
    bool ok = wg ? import_graph_wire(&im, wg, g) : import_graph(&im, mp->graph, g);
    if (ok) {
        for (guint i = 1; i < m->graphs->len; i++)
            resolve_outer(&im, g_ptr_array_index(m->graphs, i));
        finish_implicit(&im);
        fp_model_link(m);
    }
    g_hash_table_destroy(im.implicit);
    g_hash_table_destroy(im.implicit_set);
    io_clear(&im);
    return ok ? g_steal_pointer(&m) : NULL;
}

fp_model *fp_onnx_from_proto(const char *path, const char *format, const Onnx__ModelProto *mp, uint64_t file_size,
                             GError **error)
{
    return import_model(path, format, mp, NULL, file_size, error);
}

fp_model *fp_onnx_from_skeleton(const char *path, const char *format, const uint8_t *data, size_t len,
                                uint64_t file_size, GError **error)
{
    fp_arena *keep = fp_arena_new();
    ProtobufCAllocator alloc = {.alloc = arena_alloc, .free = arena_free, .allocator_data = keep};
    wire_graph wg = {.scratch = fp_arena_new()};
    wire_graph_init(&wg);
    GByteArray *model_rest = g_byte_array_new(), *graph_rest = g_byte_array_new();
    Onnx__ModelProto *mp = NULL;
    if (split_one(data, len, 7 /* ModelProto.graph */, model_rest, &wg.data, &wg.len) && split_graph(&wg, graph_rest)) {
        mp = onnx__model_proto__unpack(&alloc, model_rest->len, model_rest->data);
        wg.head = mp ? onnx__graph_proto__unpack(&alloc, graph_rest->len, graph_rest->data) : NULL;
    }
    fp_model *m = NULL;
    if (mp && wg.head && fp_pbskel_numbers_valid(&mp->base) && fp_pbskel_numbers_valid(&wg.head->base)) {
        m = import_model(path, format, mp, &wg, file_size, error);
    } else { /* not the usual layout (or malformed): protobuf-c unpacks it whole and judges */
        mp = onnx__model_proto__unpack(&alloc, len, data);
        if (mp && fp_pbskel_numbers_valid(&mp->base))
            m = import_model(path, format, mp, NULL, file_size, error);
        else
            g_set_error_literal(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, MALFORMED_MESSAGE);
    }
    g_byte_array_free(model_rest, TRUE);
    g_byte_array_free(graph_rest, TRUE);
    wire_graph_clear(&wg);
    fp_arena_free(keep);
    return m;
}

/* ---------------------------------------------------------------- import from a reader */

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
    wire_graph *wg = data;
    if (!element_descriptor(number))
        return false;
    if (wire != 2) {
        wg->odd = true;
        return false;
    }
    wg->n_node += number == 1;
    wg->n_values += number == 1 || number == 5 || number == 11 || number == 15;
    if (!wg->rto[number])
        wg->rfrom[number] = start;
    wg->rto[number] = payload + len;
    return true;
}

fp_model *fp_onnx_from_reader(const char *path, const char *format, fp_pbskel_reader *r, uint64_t size,
                              uint64_t file_size, GError **error)
{
    const uint8_t *data;
    size_t len;
    model_split ms = {0};
    if (!fp_pbskel_reader_build(r, &onnx__model_proto__descriptor, 0, size, 0, skip_graph, &ms, &data, &len) ||
        ms.n_graph != 1 || ms.odd)
        return NULL;
    fp_arena *keep = fp_arena_new();
    ProtobufCAllocator alloc = {.alloc = arena_alloc, .free = arena_free, .allocator_data = keep};
    wire_graph wg = {.scratch = fp_arena_new(), .reader = r};
    wire_graph_init(&wg);
    fp_model *m = NULL;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc, len, data);
    if (mp && fp_pbskel_numbers_valid(&mp->base) &&
        fp_pbskel_reader_build(r, &onnx__graph_proto__descriptor, ms.offset, ms.len, 1, skip_elements, &wg, &data,
                               &len) &&
        !wg.odd) {
        wg.head = onnx__graph_proto__unpack(&alloc, len, data);
        if (wg.head && fp_pbskel_numbers_valid(&wg.head->base))
            m = import_model(path, format, mp, &wg, file_size, error);
    }
    wire_graph_clear(&wg);
    fp_arena_free(keep);
    return m;
}
