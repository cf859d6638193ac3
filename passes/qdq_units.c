/* qdq_units.c - ONNX Runtime's level-1 rewrites of QDQ graphs (qdq_units.h): WeightBiasQuantization
 * (onnxruntime/core/optimizer/qdq_transformer/weight_bias_quantization.cc) for a dequantized weight
 * and a float bias, and EnsureUniqueDQForNodeUnit (ensure_unique_dq_for_node_unit.cc). */
#include "passes/qdq_units.h"

#include <string.h>

/* Whether n is a live DequantizeLinear (ONNX's or com.microsoft's, as QDQ::MatchDQNode). */
static bool is_dq(const fp_node *n) { return fp_node_live(n) && n->op == FP_OP_DEQUANTIZE_LINEAR; }

/* The DequantizeLinear that writes v, or NULL. */
static const fp_node *dq_of(const fp_value *v) { return v && is_dq(v->producer) ? v->producer : NULL; }

/* Whether v is a scalar (ORT's optimizer_utils::IsScalar: rank 0, or one element of rank 1). */
static bool scalar(const fp_value *v)
{
    return v && (v->shape.rank == 0 || (v->shape.rank == 1 && v->shape.dims[0].value == 1));
}

/* Whether v is a constant initializer (graph_utils::IsInitializer with check_outer_scope, not one a
 * run may override). */
static bool const_initializer(const fp_value *v) { return v && v->kind == FP_VALUE_INITIALIZER && !v->overridable; }

/* The live nodes that read v (each once). */
static uint32_t readers(const fp_value *v, const fp_node **first)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < v->n_uses; i++) {
        const fp_node *r = v->uses[i].node;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = v->uses[j].node == r;
        if (!fp_node_live(r) || seen)
            continue;
        if (!count++)
            *first = r;
    }
    return count;
}

/* Whether n's output reaches a QuantizeLinear through single-reader Relu or Clip nodes only
 * (IsNoBranchPathToQuantizeLinear). */
static bool no_branch_to_q(const fp_node *n)
{
    for (const fp_node *cur = n;;) {
        const fp_node *next = NULL;
        if (cur->n_outputs != 1 || !cur->outputs[0] || readers(cur->outputs[0], &next) != 1)
            return false;
        if (next->op == FP_OP_QUANTIZE_LINEAR)
            return true;
        if (next->op != FP_OP_RELU && next->op != FP_OP_CLIP)
            return false;
        cur = next;
    }
}

/* Whether weight DQ w's scale suits a bias of `channels`: per tensor, or per channel on the axis
 * the anchor's weight has its outputs on (0; 1 for a Gemm without transB), without blocks. */
static bool weight_scale_ok(const fp_node *n, const fp_node *w, int64_t channels)
{
    const fp_value *s = w->n_inputs > 1 ? w->inputs[1] : NULL;
    if (!s)
        return false;
    if (scalar(s))
        return true;
    if (s->shape.rank != 1 || s->shape.dims[0].value != channels || fp_node_attr_int(w, "block_size", 0) != 0)
        return false;
    int64_t axis = fp_node_attr_int(w, "axis", 1), rank = w->inputs[0]->shape.rank;
    if (axis < 0)
        axis += rank;
    int64_t expected = n->op == FP_OP_GEMM && !fp_node_attr_int(n, "transB", 0) ? 1 : 0;
    return axis == expected;
}

/* The bias n takes a DequantizeLinear for (WeightBiasQuantization's conditions, its weight
 * dequantized), or NULL. */
static fp_value *quantizable_bias(const fp_node *n)
{
    if (!fp_node_live(n) || (n->op != FP_OP_CONV && n->op != FP_OP_CONV_TRANSPOSE && n->op != FP_OP_GEMM) ||
        n->n_inputs < 3 || !n->inputs[2])
        return NULL;
    const fp_node *in = dq_of(n->inputs[0]), *w = dq_of(n->inputs[1]);
    fp_value *b = n->inputs[2];
    if (!in || in->n_inputs < 2 || !scalar(in->inputs[1]) || !w || !const_initializer(b) || b->shape.rank != 1 ||
        !fp_dtype_is_float(b->dtype) || !no_branch_to_q(n))
        return NULL;
    return weight_scale_ok(n, w, b->shape.dims[0].value) ? b : NULL;
}

/* A new node of n's graph, folded at load (ORT's ConstantFolding: its inputs are constants), op
 * `op` of type op_type named `name` reading a and b (NULL: none), writing a new value `name` of a's
 * shape (`like`'s when given) and `dtype`. */
static fp_value *folded(fp_model *m, const fp_node *n, fp_op op, const char *op_type, const char *name, fp_value *a,
                        fp_value *b, const fp_value *like, fp_dtype dtype)
{
    fp_graph *g = n->graph;
    fp_node *f = fp_node_new_attrs(g, op, op_type, "", name, b ? 2 : 1, 1, op == FP_OP_CAST);
    f->inputs[0] = a;
    if (b)
        f->inputs[1] = b;
    if (op == FP_OP_CAST)
        f->attrs[0] = (fp_attr){.name = fp_intern(m, "to", -1), .type = FP_ATTR_INT, .u.i = dtype};
    f->opset = n->opset;
    f->flags |= FP_NODE_FOLDED;
    fp_value *out = fp_graph_value_like(g, name, like ? like : a, dtype);
    fp_node_set_output(f, 0, out);
    return out;
}

/* n reads a new DequantizeLinear "<n>_bias_dq" instead of bias b: of b quantized to int32
 * ("<n>_bias_int32", a folded Cast standing for ORT's Cast(Round(Div)) of b) at the scale input
 * scale x weight scale ("<n>_bias_scale", a folded Mul of the weight scale's shape), axis 0 per
 * channel. Both are folded at load, so they are no weights of the file. */
static void quantize_bias(fp_model *m, fp_node *n, fp_value *b)
{
    fp_graph *g = n->graph;
    fp_value *in_scale = n->inputs[0]->producer->inputs[1], *ws = n->inputs[1]->producer->inputs[1];
    g_autofree char *qname = g_strdup_printf("%s_bias_int32", n->name);
    g_autofree char *sname = g_strdup_printf("%s_bias_scale", n->name);
    g_autofree char *dname = g_strdup_printf("%s_bias_dq", n->name);
    fp_value *s = folded(m, n, FP_OP_MUL, "Mul", sname, in_scale, ws, ws, FP_DT_FLOAT);
    fp_value *q = folded(m, n, FP_OP_CAST, "Cast", qname, b, NULL, NULL, FP_DT_INT32);
    fp_value *out = fp_graph_value_like(g, dname, b, FP_DT_UNDEFINED);
    bool per_channel = !scalar(ws);
    fp_node *dq = fp_node_new_attrs(g, FP_OP_DEQUANTIZE_LINEAR, "DequantizeLinear", "", dname, 2, 1, per_channel);
    dq->inputs[0] = q;
    dq->inputs[1] = s;
    dq->opset = n->inputs[1]->producer->opset;
    fp_node_set_output(dq, 0, out);
    if (per_channel)
        dq->attrs[0] = (fp_attr){.name = fp_intern(m, "axis", -1), .type = FP_ATTR_INT, .u.i = 0};
    n->inputs[2] = out;
}

/* A copy of DequantizeLinear d (inputs, attributes, opset) writing a new value, which input
 * `port` of reader r reads instead of d's output. */
static void copy_dq(fp_node *d, fp_node *r, uint32_t port, uint32_t nth)
{
    fp_graph *g = d->graph;
    const fp_value *v = d->outputs[0];
    g_autofree char *suffix = nth > 1 ? g_strdup_printf("/duplicated_%u", nth) : g_strdup("/duplicated");
    g_autofree char *vname = g_strconcat(v->name, suffix, NULL);
    g_autofree char *nname = g_strconcat(d->name, suffix, NULL);
    fp_node *c = fp_node_new_attrs(g, d->op, d->op_type, d->domain, nname, d->n_inputs, 1, d->n_attrs);
    memcpy(c->inputs, d->inputs, sizeof(fp_value *) * d->n_inputs);
    if (d->n_attrs)
        memcpy(c->attrs, d->attrs, sizeof(fp_attr) * d->n_attrs);
    c->opset = d->opset;
    fp_value *out = fp_graph_value_like(g, vname, v, FP_DT_UNDEFINED);
    fp_node_set_output(c, 0, out);
    r->inputs[port] = out;
}

/* EnsureUniqueDQForEachExplicitOutputEdge on d: the copies made. */
static uint32_t unique_dq(fp_node *d)
{
    const fp_value *v = d->n_outputs ? d->outputs[0] : NULL;
    if (!v)
        return 0;
    uint32_t n_uses = v->n_uses, edges = 0, made = 0;
    g_autofree fp_use *uses = g_memdup2(v->uses, sizeof(fp_use) * n_uses);
    for (uint32_t i = 0; i < n_uses; i++)
        edges += fp_node_live(uses[i].node) && uses[i].port != UINT32_MAX;
    if (!edges || (edges == 1 && !v->is_output))
        return 0;
    bool reuse = !v->is_output; /* the first reader keeps the original */
    for (uint32_t i = 0; i < n_uses; i++) {
        if (!fp_node_live(uses[i].node) || uses[i].port == UINT32_MAX)
            continue;
        if (reuse) {
            reuse = false;
            continue;
        }
        copy_dq(d, uses[i].node, uses[i].port, ++made);
    }
    return made;
}

uint32_t fp_pass_qdq_units(fp_model *m, const fp_target *t, bool unoptimized, fp_diag *diag)
{
    if (!t || !t->keyfile || !g_key_file_get_boolean(t->keyfile, "layout", "qdq_units", NULL))
        return 0;
    fp_graph *g = m->main;
    uint32_t n = 0, biases = 0, copies = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    if (!order)
        return 0;
    g_autofree fp_node **nodes = g_memdup2(order, sizeof(fp_node *) * n);
    for (uint32_t i = 0; i < n && !unoptimized; i++) {
        fp_value *b = quantizable_bias(nodes[i]);
        if (b) {
            quantize_bias(m, nodes[i], b);
            biases++;
        }
    }
    if (biases)
        fp_model_link(m);
    guint len = g->nodes->len; /* the DQs added above, in order after their readers' inputs */
    for (guint i = 0; i < len; i++)
        if (is_dq(g->nodes->pdata[i]))
            copies += unique_dq(g->nodes->pdata[i]);
    if (!biases && !copies)
        return 0;
    if (diag)
        fp_diag_add(diag, FP_DIAG_INFO, "qdq_units", "qdq-level1", NULL,
                    "%u float biases dequantized from int32 (WeightBiasQuantization) and %u DequantizeLinear copies "
                    "for their readers (EnsureUniqueDQForNodeUnit), as %s does at load",
                    biases, copies, t->name);
    fp_model_link(m);
    return biases + copies;
}
