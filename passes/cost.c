/* cost.c - roofline cost model: per op time = max(FLOPs / (peak x efficiency), bytes /
 * (bandwidth x bw_efficiency)) + launch overhead (Williams, Waterman, Patterson, CACM 2009), per
 * fused kernel after the fusion pass. Formulas of FLOPs and bytes: docs/metrics.md. */
#include <string.h>

#include "passes/cost.h"

fp_op_class fp_cost_class(const fp_node *n)
{
    switch (fp_op_fuse_kind(n->op)) {
    case FP_FK_CONV: return FP_CLASS_CONV;
    case FP_FK_GEMM: case FP_FK_MATMUL: return FP_CLASS_MATMUL;
    case FP_FK_EW: case FP_FK_ACT: return FP_CLASS_EW;
    case FP_FK_NORM: return FP_CLASS_NORM;
    case FP_FK_POOL: return FP_CLASS_POOL;
    case FP_FK_REDUCE: return FP_CLASS_REDUCE;
    case FP_FK_SOFTMAX: return FP_CLASS_SOFTMAX;
    case FP_FK_LAYOUT: case FP_FK_DATA: return FP_CLASS_DATA;
    default: return FP_CLASS_OTHER;
    }
}

static fp_dtype compute_dtype(const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->dtype != FP_DT_UNDEFINED)
            return n->outputs[k]->dtype;
    return n->n_inputs && n->inputs[0] ? n->inputs[0]->dtype : FP_DT_FLOAT;
}

/* Bytes of n's traffic under a dtype what-if (float32 tensors rescaled). */
static uint64_t scaled_bytes(const fp_node *n, fp_dtype what_if)
{
    uint64_t total = n->metrics.bytes_act + n->metrics.bytes_weight + n->metrics.bytes_out;
    if (what_if == FP_DT_UNDEFINED || compute_dtype(n) != FP_DT_FLOAT)
        return total;
    return (uint64_t)((double)total * fp_dtype_bits(what_if) / 32.0);
}

static double graph_cost(const fp_graph *g, const fp_device *d, fp_dtype what_if, GArray *out, uint32_t *unknown);

/* Trip count of a Loop (input M) or Scan (scan axis length), 1 when unknown. */
static double trips(const fp_node *n)
{
    if (n->op == FP_OP_LOOP && n->n_inputs && n->inputs[0] && n->inputs[0]->n_sval == 1 && !n->inputs[0]->sval[0].sym)
        return (double)MAX(n->inputs[0]->sval[0].value, 0);
    if (n->op == FP_OP_SCAN && n->n_outputs && n->outputs[n->n_outputs - 1]) {
        const fp_shape *s = &n->outputs[n->n_outputs - 1]->shape;
        if (s->rank > 0 && fp_dim_known(s->dims[0]))
            return (double)s->dims[0].value;
    }
    return 1;
}

static double control_cost(const fp_node *n, const fp_device *d, fp_dtype what_if, uint32_t *unknown)
{
    double best = 0, sum = 0;
    for (uint32_t k = 0; k < n->n_subgraphs; k++) {
        double c = graph_cost(n->subgraphs[k], d, what_if, NULL, unknown);
        best = MAX(best, c);
        sum += c;
    }
    return n->op == FP_OP_IF ? best : trips(n) * sum;
}

static double graph_cost(const fp_graph *g, const fp_device *d, fp_dtype what_if, GArray *out, uint32_t *unknown)
{
    uint32_t n = 0;
    g_autofree fp_node **order = fp_graph_topo(g, &n, NULL);
    double total = 0;
    for (uint32_t i = 0; order && i < n; i++) {
        fp_node *node = order[i];
        if (node->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED))
            continue;
        fp_op_cost c = {.node = node, .cls = fp_cost_class(node)};
        c.dtype = what_if != FP_DT_UNDEFINED && compute_dtype(node) == FP_DT_FLOAT ? what_if : compute_dtype(node);
        c.kernel = !fp_op_has(node->op, FP_OPF_VIEW);
        if (fp_op_has(node->op, FP_OPF_CTRL)) {
            c.rl = fp_roofline_eval(d, 0, 0, c.dtype, c.cls);
            c.rl.time_s += control_cost(node, d, what_if, unknown);
        } else if (!c.kernel) {
            c.rl = (fp_roofline){.bound = FP_BOUND_MEMORY}; /* an alias: no kernel, no time */
        } else {
            if (!node->metrics.known)
                (*unknown)++;
            c.flops = node->metrics.flops;
            c.bytes = scaled_bytes(node, what_if);
            c.rl = fp_roofline_eval(d, c.flops, c.bytes, c.dtype, c.cls);
        }
        total += c.rl.time_s;
        if (out)
            g_array_append_val(out, c);
    }
    return total;
}

fp_cost_result *fp_pass_cost(const fp_model *m, const fp_device *d, fp_dtype what_if, fp_diag *diag)
{
    fp_cost_result *r = g_new0(fp_cost_result, 1);
    GArray *ops = g_array_new(FALSE, TRUE, sizeof(fp_op_cost));
    r->total_s = graph_cost(m->main, d, what_if, ops, &r->unknown);
    r->n_ops = ops->len;
    r->ops = (fp_op_cost *)g_array_free(ops, FALSE);
    for (uint32_t i = 0; i < r->n_ops; i++) {
        r->kernels += r->ops[i].kernel;
        r->flops += r->ops[i].flops;
        r->bytes += r->ops[i].bytes;
    }
    if (r->unknown)
        fp_diag_add(diag, FP_DIAG_WARNING, "cost", "cost-unknown", NULL,
                    "%u ops have unknown shapes: counted at their launch overhead only (bind --input / --batch)",
                    r->unknown);
    return r;
}

void fp_cost_result_free(fp_cost_result *r)
{
    if (!r)
        return;
    g_free(r->ops);
    g_free(r);
}
