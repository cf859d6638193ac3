/* storage.c - the per-op traffic at the bytes a what-if stores values in (storage.h). */
#include "passes/storage.h"

struct fp_storage {
    GHashTable *of; /* const fp_value * -> stored * */
};

typedef struct {
    uint64_t bytes; /* fixed bytes, when dtype is FP_DT_UNDEFINED */
    fp_dtype dtype;
} stored;

fp_storage *fp_storage_new(void)
{
    fp_storage *s = g_new0(fp_storage, 1);
    s->of = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    return s;
}

void fp_storage_free(fp_storage *s)
{
    if (!s)
        return;
    g_hash_table_unref(s->of);
    g_free(s);
}

void fp_storage_set_bytes(fp_storage *s, const fp_value *v, uint64_t bytes)
{
    stored *x = g_new(stored, 1);
    *x = (stored){bytes, FP_DT_UNDEFINED};
    g_hash_table_insert(s->of, (gpointer)v, x);
}

void fp_storage_set_dtype(fp_storage *s, const fp_value *v, fp_dtype dtype)
{
    stored *x = g_new(stored, 1);
    *x = (stored){0, dtype};
    g_hash_table_insert(s->of, (gpointer)v, x);
}

bool fp_storage_any(const fp_storage *s) { return s && g_hash_table_size(s->of) > 0; }

/* *field moved from v's bytes as inferred to its stored bytes; nothing when v is not stored
 * otherwise or a size is unknown. */
static void move(const fp_storage *s, const fp_value *v, uint64_t *field)
{
    const stored *x = v ? g_hash_table_lookup(s->of, v) : NULL;
    uint64_t numel = 0, now = 0, then = 0;
    if (!x || !fp_shape_numel(&v->shape, &numel) || !fp_dtype_bytes(v->dtype, numel, &now))
        return;
    if (x->dtype == FP_DT_UNDEFINED)
        then = x->bytes;
    else if (!fp_dtype_bytes(x->dtype, numel, &then))
        return;
    *field = *field >= now ? *field - now + then : then;
}

void fp_pass_storage(fp_model *m, const fp_storage *s)
{
    if (!fp_storage_any(s))
        return;
    const fp_graph *g = m->main;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (!n->metrics_known || (n->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) || fp_op_has(n->op, FP_OPF_VIEW) ||
            fp_op_has(n->op, FP_OPF_CTRL))
            continue;
        fp_metrics *mt = &n->metrics;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const fp_value *v = n->inputs[k];
            bool weight = v && fp_value_is_weight(v);
            move(s, v, weight ? &mt->bytes_weight : &mt->bytes_act);
        }
        for (uint32_t k = 0; k < n->n_outputs; k++)
            move(s, n->outputs[k], &mt->bytes_out);
    }
}
