/* graph.c - construction of models, graphs, nodes and values; values by name; attribute lookup. */
#include "graph.h"

#include "intern_internal.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(fp-ir-error-quark, fp_ir_error);

/* What graph.c keeps per model for making nodes and values: the slab values are cut from, VALUE_SLAB
 * at a time, and a cache of fp_model_opset. */
#define VALUE_SLAB 64

struct fp_model_cache {
    fp_value *slab; /* values not handed out yet */
    uint32_t slab_left;
    const char *opset_domain; /* fp_node_new's last domain and its opset ... */
    int64_t opset_version;
    const fp_opset *opset_of; /* ... as found in this array of n_opset_of */
    uint32_t n_opset_of;
};

/* The lanes of the model's arena (fp_arena_lane) that hold its nodes and its values' slabs: each
 * kind next to its own, which the walks over them read one after the other. */
enum { LANE_NODES, LANE_VALUES };
G_STATIC_ASSERT(LANE_VALUES < FP_ARENA_LANES);

fp_model *fp_model_new(const char *path, const char *format)
{
    fp_model *m = g_new0(fp_model, 1);
    m->arena = fp_arena_new();
    fp_intern_tables_new(m);
    m->cache = g_new0(struct fp_model_cache, 1);
    m->graphs = g_ptr_array_new();
    m->path = fp_intern(m, path ? path : "", -1);
    m->format = fp_intern(m, format ? format : "", -1);
    m->producer_name = m->producer_version = m->domain = m->doc = fp_intern(m, "", 0);
    return m;
}

static void graph_free_indexes(fp_graph *g)
{
    g_ptr_array_free(g->nodes, TRUE);
    g_ptr_array_free(g->values, TRUE);
    g_ptr_array_free(g->inputs, TRUE);
    g_ptr_array_free(g->outputs, TRUE);
    g_ptr_array_free(g->initializers, TRUE);
    if (g->folded)
        g_ptr_array_free(g->folded, TRUE);
    if (g->by_name)
        g_hash_table_destroy(g->by_name);
    g_free(g->use_pool);
    g_free(g->topo);
}

void fp_model_free(fp_model *m)
{
    if (!m)
        return;
    for (guint i = 0; i < m->graphs->len; i++)
        graph_free_indexes(g_ptr_array_index(m->graphs, i));
    g_ptr_array_free(m->graphs, TRUE);
    fp_intern_tables_free(m);
    g_free(m->cache);
    fp_arena_free(m->arena);
    g_free(m);
}

fp_graph *fp_graph_new(fp_model *m, const char *name, fp_graph *parent, fp_node *owner)
{
    fp_graph *g = fp_arena_alloc(m->arena, sizeof *g);
    g->name = fp_intern(m, name ? name : "", -1);
    g->model = m;
    g->parent = parent;
    g->owner = owner;
    g->depth = parent ? parent->depth + 1 : 0;
    g->nodes = g_ptr_array_new();
    g->values = g_ptr_array_new();
    g->inputs = g_ptr_array_new();
    g->outputs = g_ptr_array_new();
    g->initializers = g_ptr_array_new();
    g_ptr_array_add(m->graphs, g);
    if (!m->main)
        m->main = g;
    return g;
}

void fp_graph_reserve(fp_graph *g, uint32_t n_nodes, uint32_t n_values)
{
    if (!g->nodes->len && n_nodes > 64) {
        g_ptr_array_free(g->nodes, TRUE);
        g->nodes = g_ptr_array_sized_new(n_nodes);
    }
    if (!g->values->len && n_values > 64) {
        g_ptr_array_free(g->values, TRUE);
        g->values = g_ptr_array_sized_new(n_values);
    }
    fp_intern_reserve(g->model, n_values);
}

/* The value of entry e in g, or NULL. */
static fp_value *entry_value(const fp_graph *g, const fp_intern_entry *e)
{
    if (e->val && e->val->graph == g)
        return e->val;
    return g->by_name ? g_hash_table_lookup(g->by_name, e->s) : NULL;
}

fp_value *fp_graph_find(const fp_graph *g, const char *name)
{
    const fp_intern_entry *e = fp_intern_entry_of(g->model, name, strlen(name), false);
    return e ? entry_value(g, e) : NULL;
}

fp_value *fp_graph_lookup(const fp_graph *g, const char *name)
{
    const fp_intern_entry *e = fp_intern_entry_of(g->model, name, strlen(name), false);
    if (!e)
        return NULL;
    for (; g; g = g->parent) {
        fp_value *v = entry_value(g, e);
        if (v)
            return v;
    }
    return NULL;
}

void fp_graph_forget(fp_graph *g, fp_value *v)
{
    fp_intern_entry *e = fp_intern_entry_of(g->model, v->name, strlen(v->name), false);
    if (e && e->val == v)
        e->val = NULL;
    else if (g->by_name)
        g_hash_table_remove(g->by_name, v->name);
}

/* The value of entry e in g, created when absent (*existed says which). */
static fp_value *entry_value_add(fp_graph *g, fp_intern_entry *e, bool *existed)
{
    fp_value *v = entry_value(g, e);
    *existed = v != NULL;
    if (v)
        return v;
    fp_model *m = g->model;
    struct fp_model_cache *t = m->cache;
    if (!t->slab_left) {
        t->slab = fp_arena_alloc(fp_arena_lane(m->arena, LANE_VALUES), VALUE_SLAB * sizeof *v);
        t->slab_left = VALUE_SLAB;
    }
    v = t->slab++;
    t->slab_left--;
    v->id = g->values->len;
    v->name = e->s;
    v->graph = g;
    v->kind = FP_VALUE_INTERMEDIATE;
    v->type = FP_TYPE_UNKNOWN;
    v->dtype = FP_DT_UNDEFINED;
    v->shape.rank = -1;
    v->decl_shape.rank = -1;
    v->n_sval = -1;
    g_ptr_array_add(g->values, v);
    if (!e->val) {
        e->val = v;
    } else {
        if (!g->by_name)
            g->by_name = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(g->by_name, (gpointer)e->s, v);
    }
    return v;
}

fp_value *fp_graph_value_ex(fp_graph *g, const char *name, size_t len, bool *existed)
{
    return entry_value_add(g, fp_intern_entry_of(g->model, name, len, true), existed);
}

fp_value *fp_graph_value_len(fp_graph *g, const char *name, size_t len)
{
    bool existed;
    return fp_graph_value_ex(g, name, len, &existed);
}

/* fp_graph_values_len takes names by batches: a batch is hashed and the slots its lookups read
 * first are prefetched, so that the batch waits for memory about once instead of once a name (a
 * large model's table of names is far bigger than the caches). */
#define VALUES_BATCH 16

void fp_graph_values_len(fp_graph *g, size_t n, const char *const *names, const size_t *lens, fp_value **out)
{
    uint64_t h[VALUES_BATCH];
    bool existed;
    for (size_t b = 0; b < n; b += VALUES_BATCH) {
        size_t k = MIN(n - b, (size_t)VALUES_BATCH);
        for (size_t i = 0; i < k; i++) {
            if (!names[b + i])
                continue;
            h[i] = fp_intern_hash(names[b + i], lens[b + i]);
            fp_intern_prefetch_hash(g->model, h[i]);
        }
        /* in order, each after the one before: a name may come twice, and the table may grow */
        for (size_t i = 0; i < k; i++)
            out[b + i] = names[b + i]
                             ? entry_value_add(g,
                                               fp_intern_entry_hashed(g->model, names[b + i], lens[b + i], h[i], true),
                                               &existed)
                             : NULL;
    }
}

fp_value *fp_graph_value(fp_graph *g, const char *name) { return fp_graph_value_len(g, name, strlen(name)); }

fp_value *fp_graph_value_like(fp_graph *g, const char *name, const fp_value *like, fp_dtype dtype)
{
    fp_value *v = fp_graph_value(g, name);
    v->type = FP_TYPE_TENSOR;
    v->dtype = dtype != FP_DT_UNDEFINED ? dtype : like->dtype;
    v->shape = like->shape;
    return v;
}

void fp_node_set_output(fp_node *n, uint32_t port, fp_value *v)
{
    n->outputs[port] = v;
    v->producer = n;
    v->producer_port = port;
}

void fp_value_move_readers(const fp_value *from, fp_value *to)
{
    for (uint32_t u = 0; u < from->n_uses; u++) {
        fp_node *r = from->uses[u].node;
        for (uint32_t k = 0; k < r->n_inputs; k++)
            if (r->inputs[k] == from)
                r->inputs[k] = to;
        for (uint32_t k = 0; k < fp_node_n_implicit(r); k++)
            if (r->ext->implicit[k] == from)
                r->ext->implicit[k] = to;
    }
}

fp_value *fp_graph_initializer(fp_graph *g, const char *name, fp_dtype dtype, fp_shape shape, const void *data,
                               uint64_t nbytes)
{
    fp_model *m = g->model;
    fp_value *v = fp_graph_value(g, name);
    fp_tensor *t = fp_arena_calloc(m->arena, 1, sizeof(fp_tensor));
    *t = (fp_tensor){.dtype = dtype,
                     .where = FP_DATA_INLINE,
                     .shape = shape,
                     .nbytes = nbytes,
                     .data = fp_arena_memdup(m->arena, data, (size_t)nbytes)};
    v->kind = FP_VALUE_INITIALIZER;
    v->type = FP_TYPE_TENSOR;
    v->dtype = v->decl_dtype = dtype;
    v->shape = v->decl_shape = shape;
    v->tensor = t;
    v->declared = true;
    return v;
}

fp_value *fp_graph_int64_initializer(fp_graph *g, const char *name, const int64_t *vals, uint32_t n)
{
    fp_model *m = g->model;
    fp_dim *dims = fp_arena_calloc(m->arena, 1, sizeof(fp_dim));
    dims[0] = (fp_dim){n, NULL};
    fp_value *v = fp_graph_initializer(g, name, FP_DT_INT64, (fp_shape){1, dims}, vals, 8 * (uint64_t)n);
    fp_dim *sval = fp_arena_calloc(m->arena, MAX(n, 1), sizeof(fp_dim));
    for (uint32_t i = 0; i < n; i++)
        sval[i] = (fp_dim){vals[i], NULL};
    v->sval = sval;
    v->n_sval = (int32_t)n;
    return v;
}

/* The inline tensor holding constant v's contents (its own, or folded) when it has at most max
 * elements, their count in *numel; else NULL. */
static const fp_tensor *inline_constant(const fp_value *v, int max, uint64_t *numel)
{
    if (!fp_value_is_constant(v))
        return NULL;
    const fp_tensor *t = v->tensor && v->tensor->where == FP_DATA_INLINE ? v->tensor : fp_value_fold(v);
    if (!t || t->where != FP_DATA_INLINE || !fp_shape_numel(&t->shape, numel) || *numel > (uint64_t)max)
        return NULL;
    return t;
}

int fp_value_floats(const fp_value *v, float *out, int max)
{
    uint64_t numel = 0;
    const fp_tensor *t = inline_constant(v, max, &numel);
    if (!t || t->dtype != FP_DT_FLOAT || t->nbytes < 4 * numel)
        return -1;
    memcpy(out, t->data, 4 * numel);
    return (int)numel;
}

int fp_value_ints(const fp_value *v, int64_t *out, int max)
{
    uint64_t numel = 0;
    const fp_tensor *t = inline_constant(v, max, &numel);
    if (!t)
        return -1;
    unsigned size = t->dtype == FP_DT_INT64 ? 8 : t->dtype == FP_DT_INT32 ? 4 : 0;
    if (!size || t->nbytes < size * numel)
        return -1;
    for (uint64_t i = 0; i < numel; i++) {
        if (size == 8) {
            memcpy(&out[i], (const uint8_t *)t->data + 8 * i, 8);
        } else {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + 4 * i, 4);
            out[i] = x;
        }
    }
    return (int)numel;
}

fp_value *fp_value_interpose(fp_graph *g, fp_value *v, const char *name, fp_dtype dtype,
                             bool (*keeps)(const fp_node *reader))
{
    fp_value *inner = fp_graph_value_like(g, name, v, dtype);
    fp_node_set_output(v->producer, v->producer_port, inner);
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        if ((n->flags & FP_NODE_REMOVED) || (keeps && keeps(n)))
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v)
                n->inputs[k] = inner;
    }
    return inner;
}

G_STATIC_ASSERT(G_ALIGNOF(fp_tensor) > 1); /* fp_value.rare tags a fold by its low bit */

fp_value_ext *fp_value_ext_ensure(fp_value *v)
{
    fp_value_ext *e = fp_value_ext_get(v);
    if (!e) {
        e = fp_arena_alloc(v->graph->model->arena, sizeof *e);
        e->n_elems = -1;
        e->fold = fp_value_fold(v);
        v->rare = (uintptr_t)e;
    }
    return e;
}

void fp_value_set_layout(fp_value *v, const char *layout, const char *origin_layout, const fp_shape *origin_shape)
{
    if (!layout && !origin_layout && !origin_shape && !fp_value_ext_get(v))
        return;
    fp_value_ext *e = fp_value_ext_ensure(v);
    e->layout = layout;
    e->origin_layout = origin_layout;
    e->origin_shape = origin_shape;
}

/* fp_model_opset of the domain of a new node: the same as the last node's in almost every model. */
static int64_t node_opset(fp_model *m, const char *domain)
{
    struct fp_model_cache *t = m->cache;
    if (t->opset_domain != domain || t->opset_of != m->opsets || t->n_opset_of != m->n_opsets) {
        t->opset_domain = domain;
        t->opset_version = fp_model_opset(m, domain);
        t->opset_of = m->opsets;
        t->n_opset_of = m->n_opsets;
    }
    return t->opset_version;
}

/* fp_node_new_attrs; op_type, domain and a non-empty name already interned when `interned`. */
static fp_node *node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, bool interned,
                         const char *name, uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    fp_model *m = g->model;
    /* one block: the node, its input and output arrays (at least one entry each), its attributes;
     * in the arena's lane, where the nodes follow each other (the walks over them stream) */
    size_t n_in = n_inputs ? n_inputs : 1, n_out = n_outputs ? n_outputs : 1;
    size_t bytes = sizeof(fp_node) + (n_in + n_out) * sizeof(fp_value *);
    g_assert(n_attrs <= (SIZE_MAX - bytes) / sizeof(fp_attr));
    fp_node *n = fp_arena_alloc(fp_arena_lane(m->arena, LANE_NODES), bytes + (size_t)n_attrs * sizeof(fp_attr));
    n->inputs = (fp_value **)(n + 1);
    n->outputs = n->inputs + n_in;
    n->attrs = (fp_attr *)(n->outputs + n_out); /* n_attrs 0: a valid pointer to no attribute */
    n->n_attrs = n_attrs;
    n->id = g->nodes->len;
    n->op = op;
    n->op_type = interned ? op_type : fp_intern(m, op_type ? op_type : fp_op_name(op), -1);
    n->domain = interned ? domain : fp_intern(m, domain ? domain : "", -1);
    n->opset = (int16_t)CLAMP(node_opset(m, n->domain), INT16_MIN, INT16_MAX); /* fp_node.opset */
    if (name && *name) {
        n->name = interned ? name : fp_intern(m, name, -1);
    } else {
        char buf[96];
        g_snprintf(buf, sizeof buf, "%.60s_%u", n->op_type, n->id);
        n->name = fp_intern(m, buf, -1);
    }
    n->graph = g;
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    g_ptr_array_add(g->nodes, n);
    g_clear_pointer(&g->topo, g_free); /* fp_graph_order's cache */
    return n;
}

fp_node *fp_node_new_attrs(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                           uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    return node_new(g, op, op_type, domain, false, name, n_inputs, n_outputs, n_attrs);
}

fp_node *fp_node_new_interned(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                              uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    return node_new(g, op, op_type, domain, true, name, n_inputs, n_outputs, n_attrs);
}

fp_node *fp_node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                     uint32_t n_inputs, uint32_t n_outputs)
{
    return fp_node_new_attrs(g, op, op_type, domain, name, n_inputs, n_outputs, 0);
}

fp_node_ext *fp_node_ext_ensure(fp_node *n)
{
    if (!n->ext)
        n->ext = fp_arena_alloc(n->graph->model->arena, sizeof *n->ext);
    return n->ext;
}

fp_node *fp_node_lookup(const fp_model *m, const char *name)
{
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_node *n = g->nodes->pdata[i];
            if (strcmp(n->name, name) == 0)
                return n;
        }
    }
    return NULL;
}

const fp_attr *fp_node_attr(const fp_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++) /* the first letter spares most strcmp calls */
        if (n->attrs[i].name[0] == name[0] && strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

void fp_node_set_attr(fp_model *m, fp_node *n, fp_attr a)
{
    a.name = fp_intern(m, a.name, -1);
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, a.name) == 0) {
            n->attrs[i] = a;
            return;
        }
    fp_attr *attrs = fp_arena_calloc(m->arena, n->n_attrs + 1, sizeof(fp_attr));
    if (n->n_attrs)
        memcpy(attrs, n->attrs, sizeof(fp_attr) * n->n_attrs);
    attrs[n->n_attrs] = a;
    n->attrs = attrs;
    n->n_attrs++;
}

int64_t fp_node_attr_int(const fp_node *n, const char *name, int64_t dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_INT ? a->u.i : dflt;
}

int64_t fp_node_attr_ints_at(const fp_node *n, const char *name, uint32_t i, int64_t dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_INTS && i < a->n ? a->u.ints[i] : dflt;
}

double fp_node_attr_float(const fp_node *n, const char *name, double dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    if (a && a->type == FP_ATTR_FLOAT)
        return a->u.f;
    if (a && a->type == FP_ATTR_INT)
        return (double)a->u.i;
    return dflt;
}

const char *fp_node_attr_string(const fp_node *n, const char *name, const char *dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_STRING ? a->u.s : dflt;
}

int64_t fp_model_opset(const fp_model *m, const char *domain)
{
    if (!domain)
        domain = "";
    for (uint32_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        if (strcmp(d, domain) == 0 || (!*domain && strcmp(d, "ai.onnx") == 0) ||
            (!*d && strcmp(domain, "ai.onnx") == 0))
            return m->opsets[i].version;
    }
    return 0;
}

void fp_model_get_stats(const fp_model *m, fp_model_stats *st)
{
    memset(st, 0, sizeof *st);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = g_ptr_array_index(m->graphs, gi);
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g_ptr_array_index(g->nodes, i);
            st->nodes += !(n->flags & FP_NODE_REMOVED);
        }
        for (guint i = 0; i < g->initializers->len; i++) {
            const fp_value *v = g_ptr_array_index(g->initializers, i);
            uint64_t numel = 0;
            if (v->tensor && fp_shape_numel(&v->tensor->shape, &numel)) {
                st->params += numel;
                st->param_bytes += v->tensor->nbytes;
            }
        }
    }
}

bool fp_tensor_number(const fp_tensor *t, uint64_t k, double *out)
{
    const uint8_t *p = t->data;
    if (t->dtype == FP_DT_FLOAT) {
        float f;
        memcpy(&f, p + 4 * k, 4);
        *out = f;
    } else if (t->dtype == FP_DT_DOUBLE) {
        memcpy(out, p + 8 * k, 8);
    } else if (t->dtype == FP_DT_FLOAT16) {
        uint16_t h;
        memcpy(&h, p + 2 * k, 2);
        *out = fp_half_to_double(h);
    } else if (t->dtype == FP_DT_INT64) {
        int64_t i;
        memcpy(&i, p + 8 * k, 8);
        *out = (double)i;
    } else if (t->dtype == FP_DT_INT32) {
        int32_t i;
        memcpy(&i, p + 4 * k, 4);
        *out = i;
    } else {
        return false;
    }
    return true;
}

bool fp_value_scalar(const fp_value *v, double *out)
{
    const fp_tensor *t = fp_value_fold(v);
    if (!t && v->tensor && v->tensor->where == FP_DATA_INLINE)
        t = v->tensor;
    uint64_t n;
    return t && t->data && fp_shape_numel(&t->shape, &n) && n == 1 && fp_tensor_number(t, 0, out) && !isnan(*out);
}
