/* onnx_import.c - translate an unpacked onnx.ModelProto (protobuf-c) into fuseplan's IR: whole, or
 * its main graph one element at a time as the wire decoder (onnx_wire.c) unpacks them.
 *
 * The protobuf structs never leave frontends/: everything is copied into the model's arena and
 * the caller frees the protobuf afterwards. Tensor payloads stripped by the skeleton reader are
 * recorded as file ranges (FP_DATA_FILE); small payloads are kept inline for shape inference.
 */
#include "onnx_internal.h"
#include "onnx_wire.h"

#include <string.h>

G_DEFINE_QUARK(fp-onnx-error-quark, fp_onnx_error);

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
        return fail(im, FP_ONNX_ERROR_LIMIT, "%s '%s': rank %zu exceeds the limit of %d", what, name, n, FP_MAX_RANK);
    fp_dim d[FP_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0)
            return fail(im, FP_ONNX_ERROR_INVALID, "%s '%s': dimension %zu is negative (%" G_GINT64_FORMAT ")", what,
                        name, i, dims[i]);
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
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param && *d->dim_param)
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
static bool convert_tensor(importer *im, const Onnx__TensorProto *tp, fp_tensor *t, const char *what, const char *name)
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
            return fail(im, FP_ONNX_ERROR_INVALID, "%s '%s': external data without a 'location' entry", what, name);
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
static fp_tensor *new_sparse_tensor(importer *im, const Onnx__SparseTensorProto *sp, const char *what, const char *name)
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
    if (ap->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (ap->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (ap->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (ap->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (ap->g)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (ap->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (ap->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (ap->n_strings)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (ap->n_tensors)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (ap->n_graphs)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
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
            return fail(im, FP_ONNX_ERROR_INVALID, "node '%s' (%s): attribute '%s' of type GRAPH has no graph", n->name,
                        n->op_type, a->name);
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
        return fail(im, FP_ONNX_ERROR_INVALID, "graph '%s': node %u ('%s') has no op_type", g->name, g->nodes->len,
                    np->name ? np->name : "");
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
        return fail(im, FP_ONNX_ERROR_LIMIT,
                    "graph '%s': more than %d graphs in the model (subgraphs included), the limit", g->name,
                    FP_MAX_GRAPHS);
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

/* ---------------------------------------------------------------- the main graph element by element */

/* What the main graph's elements are imported with (the data of import_graph_wire's fp_onnx_sink). */
typedef struct {
    importer *im;
    fp_graph *g;
} element_ctx;

/* fp_onnx_sink.element: imports one element of the main graph. */
static bool import_element(void *data, uint32_t field, size_t index, const ProtobufCMessage *msg, const size_t *lens)
{
    element_ctx *ec = data;
    importer *im = ec->im;
    fp_graph *g = ec->g;
    switch (field) {
    case FP_ONNX_WIRE_NODE:
        return import_node(im, (const Onnx__NodeProto *)msg, lens, g);
    case FP_ONNX_WIRE_INITIALIZER:
        return import_initializer(im, g, index, (const Onnx__TensorProto *)msg, NULL);
    case FP_ONNX_WIRE_SPARSE_INITIALIZER:
        return import_initializer(im, g, index, NULL, (const Onnx__SparseTensorProto *)msg);
    case FP_ONNX_WIRE_INPUT:
        return import_input(im, g, index, (const Onnx__ValueInfoProto *)msg);
    case FP_ONNX_WIRE_OUTPUT:
        return import_output(im, g, index, (const Onnx__ValueInfoProto *)msg);
    default:
        return import_value_info(im, g, (const Onnx__ValueInfoProto *)msg);
    }
}

/* fp_onnx_sink.ahead: the names the next element looks up, prefetched in the intern table. */
static void prefetch_name(void *data, const char *name, size_t len)
{
    fp_intern_prefetch(((element_ctx *)data)->im->m, name, len);
}

/* import_graph over an opened fp_onnx_wire, in the same order and with the same errors; a malformed
 * element anywhere is reported as such even after an earlier element's import error, as unpacking
 * the whole graph first would. */
static bool import_graph_wire(importer *im, fp_onnx_wire *wg, fp_graph *g)
{
    element_ctx ec = {im, g};
    const fp_onnx_sink sink = {import_element, prefetch_name, &ec};
    bool malformed = false;
    size_t n_init = 0, n_in = 0, n_node = 0, n_out = 0, n_vi = 0;
    if (wg->n_node <= im->max_nodes)
        fp_graph_reserve(g, (uint32_t)wg->n_node, (uint32_t)MIN(wg->n_values, 4 * im->max_nodes));
    bool ok = begin_graph(im, g, wg->head->name) &&
              fp_onnx_wire_elements(wg, FP_ONNX_WIRE_INITIALIZER, &n_init, &sink, &malformed) &&
              fp_onnx_wire_elements(wg, FP_ONNX_WIRE_SPARSE_INITIALIZER, &n_init, &sink, &malformed) &&
              fp_onnx_wire_elements(wg, FP_ONNX_WIRE_INPUT, &n_in, &sink, &malformed);
    if (ok && wg->n_node > im->max_nodes)
        ok = fail(im, FP_ONNX_ERROR_LIMIT, "graph '%s': %zu nodes, more than the limit of %" G_GUINT64_FORMAT, g->name,
                  wg->n_node, im->max_nodes);
    ok = ok && fp_onnx_wire_elements(wg, FP_ONNX_WIRE_NODE, &n_node, &sink, &malformed) &&
         fp_onnx_wire_elements(wg, FP_ONNX_WIRE_OUTPUT, &n_out, &sink, &malformed) &&
         fp_onnx_wire_elements(wg, FP_ONNX_WIRE_VALUE_INFO, &n_vi, &sink, &malformed);
    if (!ok && (malformed || !fp_onnx_wire_elements_valid(wg))) {
        g_clear_error(im->error);
        g_set_error_literal(im->error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, MALFORMED_MESSAGE);
    }
    return ok;
}

/* ---------------------------------------------------------------- model */

/* Translates mp; its main graph is mp->graph, or wg when mp was unpacked without it. */
static fp_model *import_model(const char *path, const char *format, const Onnx__ModelProto *mp, fp_onnx_wire *wg,
                              uint64_t file_size, GError **error)
{
    g_autoptr(fp_model) m = fp_model_new(path, format);
    importer im = {.m = m, .error = error, .max_nodes = fp_max_nodes(file_size)};
    m->file_size = file_size;
    if (!mp->graph && !wg) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, "not an ONNX model: ModelProto.graph is missing");
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
    fp_onnx_wire wg;
    fp_onnx_wire_init(&wg, NULL);
    const Onnx__ModelProto *mp;
    fp_model *m = NULL;
    if (fp_onnx_wire_open(&wg, data, len, &mp))
        m = import_model(path, format, mp, &wg, file_size, error);
    else if ((mp = fp_onnx_wire_whole(&wg, data, len))) /* not the usual layout: protobuf-c unpacks it whole */
        m = import_model(path, format, mp, NULL, file_size, error);
    else
        g_set_error_literal(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, MALFORMED_MESSAGE);
    fp_onnx_wire_clear(&wg);
    return m;
}

fp_model *fp_onnx_from_reader(const char *path, const char *format, fp_pbskel_reader *r, uint64_t size,
                              uint64_t file_size, GError **error)
{
    fp_onnx_wire wg;
    fp_onnx_wire_init(&wg, r);
    const Onnx__ModelProto *mp;
    fp_model *m = NULL;
    if (fp_onnx_wire_open_reader(&wg, size, &mp))
        m = import_model(path, format, mp, &wg, file_size, error);
    fp_onnx_wire_clear(&wg);
    return m;
}
