/* reshape_chain.c - ONNX Runtime's fusion of contiguous Reshapes (reshape_chain.h), as its level-1
 * ReshapeFusion has it (onnxruntime/core/optimizer/reshape_fusion.cc, FuseContiguousReshapes): a
 * Reshape, then Reshapes, Squeezes and Unsqueezes, each the only reader of the one before and no
 * graph output but the last, become one Reshape to the last one's shape, when ONNX Runtime knows
 * every dim of it. Facts: docs/rules.md. */
#include "passes/reshape_chain.h"

#include <string.h>

enum { MAX_DIMS = FP_MAX_RANK };

/* The one live node reading v through one edge, or NULL (none, several, a graph output). */
static fp_node *only_reader(const fp_value *v)
{
    fp_node *r = NULL;
    if (!v || v->is_output)
        return NULL;
    for (uint32_t i = 0; i < v->n_uses; i++) {
        fp_node *n = v->uses[i].node;
        if (!fp_node_live(n))
            continue;
        if (r)
            return NULL;
        r = n;
    }
    return r;
}

static bool is_view(const fp_node *n)
{
    return (!*n->domain || strcmp(n->domain, "ai.onnx") == 0) &&
           (n->op == FP_OP_RESHAPE || n->op == FP_OP_SQUEEZE || n->op == FP_OP_UNSQUEEZE);
}

/* v's dims into dims when ONNX Runtime knows them all when it optimizes (on a target that
 * optimizes on the declared dims, the shape recorded then); its rank, else -1. */
static int known_dims(const fp_target *t, const fp_value *v, int64_t *dims)
{
    const fp_shape *s = t->fold_declared ? fp_value_opt_shape(v) : &v->shape;
    if (s->rank < 0 || s->rank > MAX_DIMS || !fp_shape_static(s))
        return -1;
    for (int32_t i = 0; i < s->rank; i++)
        dims[i] = s->dims[i].value;
    return s->rank;
}

/* The chain from Reshape r joined into r when it is one; how many nodes went. */
static uint32_t join(fp_graph *g, const fp_target *t, fp_node *r)
{
    fp_node *chain[64];
    uint32_t n = 1;
    chain[0] = r;
    for (fp_node *next; n < G_N_ELEMENTS(chain) && (next = only_reader(chain[n - 1]->outputs[0])) && is_view(next);)
        chain[n++] = next;
    int64_t dims[MAX_DIMS];
    fp_value *out = chain[n - 1]->outputs[0];
    int rank = n > 1 && r->n_inputs == 2 && r->inputs[0] ? known_dims(t, out, dims) : -1;
    if (rank < 0)
        return 0;
    g_autofree char *base = g_strdup_printf("%s_new_shape", r->name);
    g_autofree char *name = g_strdup(base);
    for (uint32_t k = 0; fp_graph_find(g, name); k++) {
        g_free(name);
        name = g_strdup_printf("%s_%u", base, k);
    }
    r->inputs[1] = fp_graph_int64_initializer(g, name, dims, (uint32_t)rank);
    r->n_attrs = 0;
    r->outputs[0]->producer = NULL;
    for (uint32_t i = 1; i < n; i++) {
        chain[i]->flags |= FP_NODE_REMOVED;
        for (uint32_t k = 0; k < chain[i]->n_outputs; k++)
            if (chain[i]->outputs[k] && chain[i]->outputs[k]->producer == chain[i])
                chain[i]->outputs[k]->producer = NULL;
    }
    fp_node_set_output(r, 0, out);
    return n - 1;
}

/* g's chains, in topological order; how many nodes went. */
static uint32_t chains_of(fp_graph *g, const fp_target *t)
{
    uint32_t n = 0, removed = 0;
    fp_node *const *o = fp_graph_order(g, &n, NULL);
    g_autofree fp_node **order = o ? g_memdup2(o, sizeof(fp_node *) * n) : NULL;
    for (uint32_t i = 0; order && i < n; i++) {
        fp_node *r = order[i];
        if (fp_node_live(r) && r->op == FP_OP_RESHAPE && is_view(r) && r->opset >= 5 && r->n_outputs == 1)
            removed += join(g, t, r);
    }
    return removed;
}

uint32_t fp_pass_reshape_chain(fp_model *m, const fp_target *t, fp_diag *diag)
{
    if (!t || !t->keyfile || !g_key_file_get_boolean(t->keyfile, "layout", "contiguous_reshapes", NULL))
        return 0;
    uint32_t removed = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        uint32_t here = chains_of(m->graphs->pdata[gi], t);
        if (here)
            fp_model_link(m); /* the next graph's order reads the use lists */
        removed += here;
    }
    if (removed)
        fp_diag_add(diag, FP_DIAG_INFO, "reshape_chain", "reshapes-joined", NULL,
                    "ONNX Runtime's ReshapeFusion: %u Reshapes, Squeezes and Unsqueezes joined into the Reshape before "
                    "them",
                    removed);
    return removed;
}
