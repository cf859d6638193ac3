/* conv_add_act.c - ONNX Runtime's ConvAddActivationFusion (conv_add_act.h): Conv + Add [+ activation]
 * into one FusedConv whose fourth input (Z) the kernel adds before the activation. */
#include "passes/conv_add_act.h"

#include <string.h>

/* v's one reader when exactly one node input reads it (ORT's one output edge: a graph output is
 * none), else NULL. */
static fp_node *edge_reader(const fp_value *v)
{
    if (!v || v->n_uses != 1 || v->uses[0].port == UINT32_MAX)
        return NULL;
    return fp_node_live(v->uses[0].node) ? v->uses[0].node : NULL;
}

/* edge_reader of v when it is no graph output too (ORT's GetLoneConsumerNode), else NULL. */
static fp_node *lone_reader(const fp_value *v) { return v && !v->is_output ? edge_reader(v) : NULL; }

/* Whether dims a and b are one size as ONNX Runtime's shape inference shows it: one known size,
 * or one symbol. */
static bool same_dim(fp_dim a, fp_dim b)
{
    if (fp_dim_known(a) && fp_dim_known(b))
        return a.value == b.value;
    return a.sym && b.sym && strcmp(a.sym, b.sym) == 0;
}

/* Whether Add n has two 4-D inputs of one shape, each dim of the first a known size above 0 or a
 * symbol (ConvAddActivationSelector::SelectProducerConv: no broadcasting). */
static bool add_same_shape(const fp_node *n)
{
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1])
        return false;
    const fp_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape;
    if (a->rank != 4 || b->rank != 4)
        return false;
    for (int i = 0; i < 4; i++)
        if (!((fp_dim_known(a->dims[i]) && a->dims[i].value > 0) || a->dims[i].sym) ||
            !same_dim(a->dims[i], b->dims[i]))
            return false;
    return true;
}

/* Whether n is a live ONNX Conv with no activation attribute. */
static bool plain_conv(const fp_node *n)
{
    return fp_node_live(n) && n->op == FP_OP_CONV && (!n->domain || !*n->domain) && !fp_node_attr(n, "activation");
}

/* The Conv Add a takes (NULL: none): of a's operands' producers in node order, the first plain
 * Conv of at most 3 inputs, a bias among them, whose output only a reads (SelectProducerConv). ORT
 * tests that Conv for one output edge only, so it takes one whose output a graph output also is
 * too (and leaves that output unwritten: fuse). */
static fp_node *producer_conv(const fp_node *a)
{
    fp_node *best = NULL;
    for (uint32_t k = 0; k < 2; k++) {
        fp_node *c = a->inputs[k]->producer;
        if (c && plain_conv(c) && c->n_inputs == 3 && c->inputs[2] && edge_reader(c->outputs[0]) == a &&
            (!best || c->id < best->id))
            best = c;
    }
    return best;
}

/* Whether n is an activation ONNX Runtime's CPU FusedConv takes (SelectActivation): a Clip only with
 * constant bounds. */
static bool fusable_activation(const fp_node *n)
{
    switch (n->op) {
    case FP_OP_RELU:
    case FP_OP_SIGMOID:
    case FP_OP_TANH:
    case FP_OP_LEAKY_RELU:
    case FP_OP_HARD_SIGMOID:
        return true;
    case FP_OP_CLIP:
        for (uint32_t k = 1; k < n->n_inputs; k++)
            if (n->inputs[k] && !fp_value_is_constant(n->inputs[k]))
                return false;
        return true;
    default:
        return false;
    }
}

/* A graph output that c's output also was, which no node writes once c is fused: ONNX Runtime 1.30
 * leaves it unwritten (measured: its optimized graph lists the output, produced by no node), so it
 * is no graph output here; a warning in diag names it. */
static void drop_unwritten_output(fp_node *c, fp_value *v, fp_diag *diag)
{
    g_ptr_array_remove(c->graph->outputs, v);
    v->is_output = false;
    if (diag)
        fp_diag_add(diag, FP_DIAG_WARNING, "layout", "conv-add-act-output", c->name,
                    "graph output %s: ONNX Runtime's ConvAddActivationFusion fuses its Conv %s into the Add "
                    "after it and leaves the output unwritten",
                    v->name, c->name);
}

/* Conv c becomes the FusedConv of c, Add a and activation act (NULL: none): it reads its own
 * inputs, a's other operand, then a Clip's bounds; it writes the last node's output. */
static void fuse(fp_model *m, fp_node *c, fp_node *a, fp_node *act, fp_diag *diag)
{
    if (c->outputs[0]->is_output)
        drop_unwritten_output(c, c->outputs[0], diag);
    fp_node *last = act ? act : a;
    uint32_t extra = act && act->op == FP_OP_CLIP ? act->n_inputs - 1 : 0;
    fp_value **ins = fp_arena_calloc(m->arena, 4 + extra, sizeof(fp_value *));
    memcpy(ins, c->inputs, sizeof(fp_value *) * 3);
    ins[3] = a->inputs[a->inputs[0] == c->outputs[0] ? 1 : 0];
    for (uint32_t k = 0; k < extra; k++)
        ins[4 + k] = act->inputs[1 + k];
    c->inputs = ins;
    c->n_inputs = 4 + extra;
    uint64_t flops = c->metrics.flops + a->metrics.flops + (act ? act->metrics.flops : 0);
    c->outputs[0]->producer = NULL;
    fp_node_set_output(c, 0, last->outputs[0]);
    if (act) {
        fp_node_set_attr(m, c,
                         (fp_attr){.name = "activation",
                                   .type = FP_ATTR_STRING,
                                   .u.s = act->op_type,
                                   .n = (uint32_t)strlen(act->op_type)});
        act->flags |= FP_NODE_REMOVED;
    }
    c->op = FP_OP_FUSED_CONV;
    c->op_type = fp_intern(m, "FusedConv", -1);
    c->domain = fp_intern(m, "com.microsoft", -1);
    c->flags |= FP_NODE_FUSED;
    c->metrics.flops = flops;
    a->flags |= FP_NODE_REMOVED;
}

/* The Add that float32 Conv n's output alone feeds and the Conv it takes (ConvAddActivationSelector:
 * the selector runs from each Conv, the Conv it fuses is the Add's first fit operand); false when
 * none. */
static bool select_unit(fp_node *n, fp_node **add, fp_node **conv)
{
    if (!plain_conv(n) || n->n_inputs < 2 || !n->inputs[0] || n->inputs[0]->dtype != FP_DT_FLOAT || !n->outputs[0])
        return false;
    fp_node *a = lone_reader(n->outputs[0]);
    if (!a || a->op != FP_OP_ADD || (a->domain && *a->domain) || !add_same_shape(a))
        return false;
    *add = a;
    *conv = producer_conv(a);
    return *conv != NULL;
}

uint32_t fp_pass_conv_add_act(fp_model *m, const fp_target *t, fp_diag *diag)
{
    if (!g_key_file_get_boolean(t->keyfile, "layout", "conv_add_activation", NULL))
        return 0;
    uint32_t n = 0, fused = 0;
    fp_node *const *o = fp_graph_order(m->main, &n, NULL);
    g_autofree fp_node **order = o ? g_memdup2(o, sizeof(fp_node *) * n) : NULL;
    for (uint32_t i = 0; order && i < n; i++) {
        fp_node *a, *c;
        if (!select_unit(order[i], &a, &c))
            continue;
        fp_node *act = lone_reader(a->outputs[0]);
        if (act && !fusable_activation(act))
            act = NULL;
        if (diag)
            fp_diag_add(diag, FP_DIAG_INFO, "layout", "conv-add-act", c->name,
                        "level 3: Conv %s + Add %s%s%s -> FusedConv (the Add's other operand its Sum input)", c->name,
                        a->name, act ? " + " : "", act ? act->op_type : "");
        fuse(m, c, a, act, diag);
        fused++;
    }
    if (fused)
        fp_model_link(m);
    return fused;
}
