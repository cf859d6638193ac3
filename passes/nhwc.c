/* nhwc.c - ONNX Runtime's NhwcTransformer on int8 kernels (nhwc.h), as its result looks after the
 * transpose optimizer ran (which runs again after this pass: analysis/pipeline.c): the nodes in
 * topological order; a 4-D QLinearConv of an 8-bit tensor runs
 * channels-last (com.microsoft QLinearConv, channels_last 1), and so does a kernel whose tensor
 * inputs are all channels-last and that the optimizer has a handler for (MaxPool of an 8-bit
 * tensor becomes NhwcMaxPool, the QLinear pools take channels_last, QLinearAdd/Mul and the QLinear
 * activations run as they are). A tensor entering such a node from NCHW gets one Transpose. Such a
 * node writes a new value (the transpose optimizer's node outputs are new); any other reader of it,
 * or the graph, reads the model's value, which one Transpose back writes. Shapes stay logical. */
#include "passes/nhwc.h"

#include <string.h>

typedef struct {
    fp_model *m;
    fp_graph *g;
    uint8_t *last; /* per value id of g (grown as values are added): channels-last */
    uint32_t cap;
    GHashTable *to_last;     /* value -> its Transpose to NHWC (made once) */
    GHashTable *model_value; /* a converted node's new output -> the model's value it stands for */
    const char *ms;          /* "com.microsoft", interned */
    fp_nhwc_result *res;
} nhwc;

static int64_t to_nhwc_perm[4] = {0, 2, 3, 1}, to_nchw_perm[4] = {0, 3, 1, 2}; /* never written */

/* Grows the per-value array to g's value count. */
static void fit(nhwc *z)
{
    uint32_t n = z->g->values->len;
    if (n <= z->cap)
        return;
    z->last = g_realloc(z->last, n);
    memset(z->last + z->cap, 0, n - z->cap);
    z->cap = n;
}

static bool is_last(const nhwc *z, const fp_value *v)
{
    return v && v->graph == z->g && v->id < z->cap && z->last[v->id];
}

/* A new Transpose `name` of `in` into `out` (to NHWC when to_last, else back), counted. */
static fp_node *new_transpose(nhwc *z, const char *name, fp_value *in, fp_value *out, bool to_last)
{
    fp_node *t = fp_node_new_attrs(z->g, FP_OP_TRANSPOSE, "Transpose", "", name, 1, 1, 1);
    t->attrs[0] = (fp_attr){.name = fp_intern(z->m, "perm", -1),
                            .type = FP_ATTR_INTS,
                            .u.ints = to_last ? to_nhwc_perm : to_nchw_perm,
                            .n = 4};
    t->inputs[0] = in;
    fp_node_set_output(t, 0, out);
    z->res->transposes++;
    return t;
}

/* A new Transpose of v to NHWC, its output like v (shapes stay logical). */
static fp_value *transpose_to_last(nhwc *z, fp_value *v)
{
    g_autofree char *name = g_strdup_printf("%s/nhwc", v->name);
    fp_value *out = fp_graph_value_like(z->g, name, v, FP_DT_UNDEFINED);
    new_transpose(z, name, v, out, true);
    fit(z);
    z->last[out->id] = 1;
    return out;
}

/* v channels-last (v, or its Transpose made once) / channels-first. */
static fp_value *as_last(nhwc *z, fp_value *v)
{
    if (is_last(z, v))
        return v;
    fp_value *r = g_hash_table_lookup(z->to_last, v);
    if (!r)
        g_hash_table_insert(z->to_last, v, r = transpose_to_last(z, v));
    return r;
}

/* v channels-first: v, or the model's value that a converted node's output v stands for, which
 * one Transpose back (made on the first call) writes. Only a converted node's output is
 * channels-last where an NCHW reader or the graph reads it: a Transpose to NHWC feeds converted
 * nodes alone. */
static fp_value *as_first(nhwc *z, fp_value *v)
{
    if (!is_last(z, v))
        return v;
    fp_value *mv = g_hash_table_lookup(z->model_value, v);
    g_assert(mv);
    if (!mv->producer) {
        g_autofree char *name = g_strdup_printf("%s/nchw", mv->name);
        new_transpose(z, name, v, mv, false);
    }
    return mv;
}

static bool eight_bit(const fp_value *v) { return v && (v->dtype == FP_DT_UINT8 || v->dtype == FP_DT_INT8); }

/* Whether n is a QDQ unit's 4-D QLinearConv of an 8-bit tensor: NhwcTransformer's conv table. */
static bool nhwc_conv(const fp_node *n)
{
    return n->op == FP_OP_QLINEAR_CONV && eight_bit(n->inputs[0]) && n->outputs[0]->shape.rank == 4;
}

/* Whether the transpose optimizer pushes a channels-last Transpose through n: a MaxPool of an 8-bit
 * tensor (HandleMaxPool: NhwcMaxPool), a QLinear pool (HandleQLinearPoolOp), QLinearAdd/Mul
 * (HandleQLinearBinaryOp) or a QLinear activation, whose 4-D tensor inputs are all channels-last. */
static bool pushable(const nhwc *z, const fp_node *n)
{
    bool quantized = n->flags & FP_NODE_QUANTIZED;
    switch (n->op) {
    case FP_OP_MAX_POOL:
        return eight_bit(n->inputs[0]) && is_last(z, n->inputs[0]);
    case FP_OP_AVERAGE_POOL:
    case FP_OP_GLOBAL_AVG_POOL:
    case FP_OP_SIGMOID:
    case FP_OP_LEAKY_RELU:
        return quantized && (n->flags & FP_NODE_FUSED) && is_last(z, n->inputs[0]);
    case FP_OP_ADD:
    case FP_OP_MUL: {
        bool all = quantized && (n->flags & FP_NODE_FUSED) && is_last(z, n->inputs[0]);
        for (uint32_t k = 1; all && k < n->n_inputs; k++) /* QLinearAdd: A at 0, B at 3 */
            all = !n->inputs[k] || n->inputs[k]->shape.rank != 4 || is_last(z, n->inputs[k]);
        return all;
    }
    default:
        return false;
    }
}

/* n's attribute `channels_last` set to 1 (added: the fused kernels carry none). */
static void set_channels_last(nhwc *z, fp_node *n)
{
    fp_node_set_attr(z->m, n, (fp_attr){.name = "channels_last", .type = FP_ATTR_INT, .u.i = 1});
}

/* n runs channels-last: its 4-D inputs as such, its output channels-last; a MaxPool becomes
 * NhwcMaxPool, a QLinearConv or QLinear pool the com.microsoft op with channels_last 1. */
static void convert(nhwc *z, fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && n->inputs[k]->shape.rank == 4 && !fp_value_is_fixed(n->inputs[k]))
            n->inputs[k] = as_last(z, n->inputs[k]);
    if (n->op == FP_OP_MAX_POOL) {
        n->op_type = fp_intern(z->m, "NhwcMaxPool", -1);
        n->domain = z->ms;
    } else if (n->op == FP_OP_QLINEAR_CONV || n->op == FP_OP_AVERAGE_POOL || n->op == FP_OP_GLOBAL_AVG_POOL) {
        n->domain = z->ms;
        set_channels_last(z, n);
    }
    fp_value *v = n->outputs[0];
    g_autofree char *name = g_strdup_printf("%s/nhwc_out", v->name);
    fp_value *inner = fp_graph_value_like(z->g, name, v, FP_DT_UNDEFINED);
    fp_value_move_readers(v, inner); /* not visited yet: their inputs and v's use list agree */
    fp_node_set_output(n, 0, inner);
    v->producer = NULL;
    fit(z);
    z->last[inner->id] = 1;
    g_hash_table_insert(z->model_value, inner, v);
    if (v->is_output)
        as_first(z, inner);
}

/* Walks g's nodes in order: each channels-last where it can be, else its channels-last inputs
 * transposed back. */
static void walk(nhwc *z, fp_node *const *order, uint32_t n_order)
{
    for (uint32_t i = 0; i < n_order; i++) {
        fp_node *n = order[i];
        if ((n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) || !n->n_inputs || !n->n_outputs || !n->outputs[0])
            continue;
        bool conv = nhwc_conv(n);
        if (conv || pushable(z, n)) {
            convert(z, n);
            (conv ? &z->res->converted : &z->res->pushed)[0]++;
            continue;
        }
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k])
                n->inputs[k] = as_first(z, n->inputs[k]);
    }
}

bool fp_pass_nhwc(fp_model *m, const fp_target *t, fp_nhwc_result *res, fp_diag *diag)
{
    memset(res, 0, sizeof *res);
    if (!g_key_file_get_boolean(t->keyfile, "layout", "nhwc", NULL))
        return false;
    nhwc z = {.m = m, .g = m->main, .res = res, .ms = fp_intern(m, "com.microsoft", -1)};
    z.to_last = g_hash_table_new(g_direct_hash, g_direct_equal);
    z.model_value = g_hash_table_new(g_direct_hash, g_direct_equal);
    fit(&z);
    uint32_t n = 0;
    fp_node *const *o = fp_graph_order(z.g, &n, NULL);
    g_autofree fp_node **order = o ? g_memdup2(o, sizeof(fp_node *) * n) : NULL; /* the walk adds nodes */
    if (order)
        walk(&z, order, n);
    g_free(z.last);
    g_hash_table_unref(z.to_last);
    g_hash_table_unref(z.model_value);
    if (!res->converted)
        return false;
    fp_diag_add(diag, FP_DIAG_INFO, "layout", "nhwc", NULL,
                "NhwcTransformer: %u QLinearConv channels-last, %u kernels after them too, %u Transposes",
                res->converted, res->pushed, res->transposes);
    fp_model_link(m);
    return true;
}
