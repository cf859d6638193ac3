/* float16.c - float16 compute ops run in float32 between Casts (float16.h), as ONNX Runtime's
 * InsertCastTransformer does on its CPU EP (measured on the fusion cases: a float16 Conv and Relu
 * run in float32 with a Cast on every float16 input and output). */
#include "passes/float16.h"

#include <string.h>

fp_float16_stage fp_float16_stage_of(const fp_target *t)
{
    g_autofree char *v = g_key_file_get_string(t->keyfile, "target", "float16", NULL);
    if (!v)
        return FP_FLOAT16_NONE;
    g_strstrip(v);
    return strcmp(v, "cast_before_fusion") == 0 ? FP_FLOAT16_BEFORE_FUSION : FP_FLOAT16_AFTER_FUSION;
}

bool fp_float16_value_ok(const char *value)
{
    return strcmp(value, "cast_after_fusion") == 0 || strcmp(value, "cast_before_fusion") == 0;
}

/* Whether n computes (an EP without float16 kernels runs it in float32): not data movement, a
 * view, a Cast, a shape op, control flow or an op fuseplan does not know. */
static bool computes(const fp_node *n)
{
    switch (fp_op_fuse_kind(n->op)) {
    case FP_FK_EW:
    case FP_FK_ACT:
    case FP_FK_CONV:
    case FP_FK_GEMM:
    case FP_FK_MATMUL:
    case FP_FK_NORM:
    case FP_FK_POOL:
    case FP_FK_REDUCE:
    case FP_FK_SOFTMAX:
        return !fp_op_has(n->op, FP_OPF_VIEW) && !fp_op_has(n->op, FP_OPF_CTRL);
    default:
        return false;
    }
}

static bool reads_or_writes_half(const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && n->inputs[k]->dtype == FP_DT_FLOAT16)
            return true;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->dtype == FP_DT_FLOAT16)
            return true;
    return false;
}

/* A Cast of `from` to dtype `to`, written to `out` (a new value named after `from` when NULL). */
static fp_value *cast(fp_model *m, fp_value *from, fp_dtype to, fp_value *out, bool folded)
{
    fp_graph *g = from->graph;
    g_autofree char *name = g_strdup_printf("%s/to_%s", from->name, to == FP_DT_FLOAT ? "float" : "float16");
    if (!out)
        out = fp_graph_value_like(g, name, from, to);
    out->dtype = to;
    fp_node *c = fp_node_new_attrs(g, FP_OP_CAST, "Cast", "", name, 1, 1, 1);
    c->attrs[0] = (fp_attr){.name = fp_intern(m, "to", -1), .type = FP_ATTR_INT, .u.i = to};
    c->inputs[0] = from;
    fp_node_set_output(c, 0, out);
    if (folded)
        c->flags |= FP_NODE_FOLDED;
    return out;
}

/* Output v of a converted node: float32; where an op that stays float16 or the graph reads it,
 * the converted readers read a float32 copy and a Cast writes v back in float16. */
static uint32_t convert_output(fp_model *m, fp_value *v, const uint8_t *conv)
{
    bool others = v->is_output;
    for (uint32_t u = 0; u < v->n_uses && !others; u++)
        others = !conv[v->uses[u].node->id];
    if (!others) {
        v->dtype = FP_DT_FLOAT;
        return 0;
    }
    g_autofree char *name = g_strdup_printf("%s/float", v->name);
    fp_value *inner = fp_graph_value_like(v->graph, name, v, FP_DT_FLOAT);
    fp_node_set_output(v->producer, v->producer_port, inner);
    for (uint32_t u = 0; u < v->n_uses; u++) {
        fp_node *r = v->uses[u].node;
        if (conv[r->id] && v->uses[u].port != UINT32_MAX)
            r->inputs[v->uses[u].port] = inner;
    }
    cast(m, inner, FP_DT_FLOAT16, v, false);
    return 1;
}

uint32_t fp_pass_float16(fp_model *m, const fp_target *t, fp_float16_stage stage, fp_diag *diag)
{
    if (stage == FP_FLOAT16_NONE || fp_float16_stage_of(t) != stage)
        return 0;
    fp_graph *g = m->main;
    guint nn = g->nodes->len;
    g_autofree uint8_t *conv = g_new0(uint8_t, nn + 1);
    uint32_t n_conv = 0, casts = 0;
    for (guint i = 0; i < nn; i++) {
        const fp_node *n = g->nodes->pdata[i];
        conv[i] = !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) && computes(n) && reads_or_writes_half(n);
        n_conv += conv[i];
    }
    if (!n_conv)
        return 0;
    for (guint i = 0; i < nn; i++) /* outputs first: a converted reader then sees float32 */
        for (uint32_t k = 0; conv[i] && k < ((fp_node *)g->nodes->pdata[i])->n_outputs; k++) {
            fp_value *v = ((fp_node *)g->nodes->pdata[i])->outputs[k];
            if (v && v->dtype == FP_DT_FLOAT16)
                casts += convert_output(m, v, conv);
        }
    g_autoptr(GHashTable) to_float = g_hash_table_new(NULL, NULL); /* value -> its float32 Cast */
    for (guint i = 0; i < nn; i++) {
        fp_node *n = g->nodes->pdata[i];
        for (uint32_t k = 0; conv[i] && k < n->n_inputs; k++) {
            fp_value *v = n->inputs[k], *f;
            if (!v || v->dtype != FP_DT_FLOAT16)
                continue;
            if (!(f = g_hash_table_lookup(to_float, v))) {
                bool weight = fp_value_is_weight(v);
                f = cast(m, v, FP_DT_FLOAT, NULL, weight && stage == FP_FLOAT16_BEFORE_FUSION);
                g_hash_table_insert(to_float, v, f);
                casts += !(f->producer->flags & FP_NODE_FOLDED);
            }
            n->inputs[k] = f;
        }
    }
    if (diag)
        fp_diag_add(diag, FP_DIAG_INFO, "float16", "float16-casts", NULL,
                    "%u float16 ops run in float32 on %s (no float16 kernels): %u Casts inserted", n_conv, t->name,
                    casts);
    fp_model_link(m);
    return casts;
}
