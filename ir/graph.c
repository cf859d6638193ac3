/* graph.c - construction of models, graphs, nodes and values; interning; attribute lookup. */
#include "graph.h"

#include <string.h>

G_DEFINE_QUARK(fp-ir-error-quark, fp_ir_error)

/* The intern table of fp_intern_blob: open addressing with linear probing, at most half full;
 * slot i holds a blob of the arena (NULL: empty) and its hash. */
struct fp_blobs {
    size_t cap, n; /* cap a power of two */
    uint64_t *hash;
    const void **data;
    size_t *size;
};

static uint64_t blob_hash(const void *p, size_t size)
{
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ size, w;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) { /* 8 bytes a step: dims are 16 bytes each */
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < size; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static void blobs_init(struct fp_blobs *t, size_t cap)
{
    t->cap = cap;
    t->n = 0;
    t->hash = g_new(uint64_t, cap);
    t->data = g_new0(const void *, cap);
    t->size = g_new(size_t, cap);
}

static void blobs_clear(struct fp_blobs *t)
{
    g_free(t->hash);
    g_free(t->data);
    g_free(t->size);
}

/* The slot of (p, size, h): where it is, or the empty slot where it goes. */
static size_t blobs_find(const struct fp_blobs *t, const void *p, size_t size, uint64_t h)
{
    size_t i = (size_t)h & (t->cap - 1);
    while (t->data[i] &&
           (t->hash[i] != h || t->size[i] != size || (size && memcmp(t->data[i], p, size) != 0)))
        i = (i + 1) & (t->cap - 1);
    return i;
}

static void blobs_grow(struct fp_blobs *t)
{
    struct fp_blobs old = *t;
    blobs_init(t, old.cap * 2);
    for (size_t i = 0; i < old.cap; i++)
        if (old.data[i]) {
            size_t j = blobs_find(t, old.data[i], old.size[i], old.hash[i]);
            t->hash[j] = old.hash[i];
            t->data[j] = old.data[i];
            t->size[j] = old.size[i];
            t->n++;
        }
    blobs_clear(&old);
}

fp_model *fp_model_new(const char *path, const char *format)
{
    fp_model *m = g_new0(fp_model, 1);
    m->arena = fp_arena_new();
    m->strings = g_hash_table_new(g_str_hash, g_str_equal);
    m->blobs = g_new(struct fp_blobs, 1);
    blobs_init(m->blobs, 256);
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
    g_hash_table_destroy(g->by_name);
    g_free(g->use_pool);
}

void fp_model_free(fp_model *m)
{
    if (!m)
        return;
    for (guint i = 0; i < m->graphs->len; i++)
        graph_free_indexes(g_ptr_array_index(m->graphs, i));
    g_ptr_array_free(m->graphs, TRUE);
    g_hash_table_destroy(m->strings);
    blobs_clear(m->blobs);
    g_free(m->blobs);
    fp_arena_free(m->arena);
    g_free(m);
}

const char *fp_intern(fp_model *m, const char *s, gssize len)
{
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    if (len >= 0 && memchr(s, 0, n)) /* embedded NUL: never a name, keep a private copy */
        return fp_arena_strndup(m->arena, s, n);
    char stackbuf[256];
    const char *key = s;
    char *heap = NULL;
    if (len >= 0) {
        if (n < sizeof stackbuf) {
            memcpy(stackbuf, s, n);
            stackbuf[n] = 0;
            key = stackbuf;
        } else {
            key = heap = g_strndup(s, n);
        }
    }
    const char *found = g_hash_table_lookup(m->strings, key);
    if (!found) {
        char *copy = fp_arena_strndup(m->arena, key, n);
        g_hash_table_add(m->strings, copy);
        found = copy;
    }
    g_free(heap);
    return found;
}

const void *fp_intern_blob(fp_model *m, const void *p, size_t size)
{
    struct fp_blobs *t = m->blobs;
    uint64_t h = blob_hash(p, size);
    size_t i = blobs_find(t, p, size, h);
    if (t->data[i])
        return t->data[i];
    if (2 * (t->n + 1) > t->cap) {
        blobs_grow(t);
        i = blobs_find(t, p, size, h);
    }
    t->hash[i] = h;
    t->size[i] = size;
    t->data[i] = fp_arena_memdup(m->arena, p, size);
    t->n++;
    return t->data[i];
}

fp_dim *fp_intern_dims(fp_model *m, const fp_dim *dims, int32_t rank)
{
    static const fp_dim none = {0, NULL}; /* scalars: some readers copy MAX(rank, 1) dims */
    if (rank < 0)
        return NULL;
    return (fp_dim *)fp_intern_blob(m, rank ? dims : &none, sizeof *dims * (size_t)MAX(rank, 1));
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
    g->by_name = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_ptr_array_add(m->graphs, g);
    if (!m->main)
        m->main = g;
    return g;
}

fp_value *fp_graph_find(const fp_graph *g, const char *name)
{
    const char *key = g_hash_table_lookup(g->model->strings, name);
    return key ? g_hash_table_lookup(g->by_name, key) : NULL;
}

fp_value *fp_graph_lookup(const fp_graph *g, const char *name)
{
    for (; g; g = g->parent) {
        fp_value *v = fp_graph_find(g, name);
        if (v)
            return v;
    }
    return NULL;
}

fp_value *fp_graph_value(fp_graph *g, const char *name)
{
    const char *key = fp_intern(g->model, name, -1);
    fp_value *v = g_hash_table_lookup(g->by_name, key);
    if (v)
        return v;
    v = fp_arena_alloc(g->model->arena, sizeof *v);
    v->id = g->values->len;
    v->name = key;
    v->graph = g;
    v->kind = FP_VALUE_INTERMEDIATE;
    v->type = FP_TYPE_UNKNOWN;
    v->dtype = FP_DT_UNDEFINED;
    v->shape.rank = -1;
    v->decl_shape.rank = -1;
    v->n_sval = -1;
    v->n_elems = -1;
    g_ptr_array_add(g->values, v);
    g_hash_table_insert(g->by_name, (gpointer)key, v);
    return v;
}

fp_node *fp_node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                     uint32_t n_inputs, uint32_t n_outputs)
{
    fp_model *m = g->model;
    fp_node *n = fp_arena_alloc(m->arena, sizeof *n);
    n->id = g->nodes->len;
    n->op = op;
    n->op_type = fp_intern(m, op_type ? op_type : fp_op_name(op), -1);
    n->domain = fp_intern(m, domain ? domain : "", -1);
    n->opset = fp_model_opset(m, n->domain);
    if (name && *name) {
        n->name = fp_intern(m, name, -1);
    } else {
        char buf[96];
        g_snprintf(buf, sizeof buf, "%.60s_%u", n->op_type, n->id);
        n->name = fp_intern(m, buf, -1);
    }
    n->graph = g;
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->inputs = fp_arena_calloc(m->arena, n_inputs ? n_inputs : 1, sizeof(fp_value *));
    n->outputs = fp_arena_calloc(m->arena, n_outputs ? n_outputs : 1, sizeof(fp_value *));
    g_ptr_array_add(g->nodes, n);
    return n;
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

int64_t fp_node_attr_int(const fp_node *n, const char *name, int64_t dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_INT ? a->u.i : dflt;
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
