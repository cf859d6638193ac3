/* fuse_rewrite.c - the rewrites of the fusion pass: what an applied match of each kind of rule
 * (fold, fuse, eliminate, absorb, split, pad) does to the graph (fuse_internal.h). */
#include <string.h>

#include "passes/fusion/fuse_internal.h"

static void set_dirty(fp_fuser *fz, const fp_node *n) { fz->dirty[fp_node_index(n)] = fz->pass; }

/* Marks the nodes of mt, their consumers and their producers dirty: not matched again in this rule
 * pass (their inputs are rewired). An elimination marks its anchor only: what reads it reads its
 * input instead, whole, and may go in the same pass (a chain of no-op Casts goes at once, as ONNX
 * Runtime's rewrite rules remove it). */
static void mark_dirty(fp_fuser *fz, const fp_match *mt)
{
    if (mt->rule->rewrite == FP_RW_ELIMINATE) {
        set_dirty(fz, mt->nodes[0]);
        return;
    }
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        set_dirty(fz, n);
        /* consumers of the outputs get rewired inputs: keep them out of this sweep too */
        for (uint32_t k = 0; k < n->n_outputs; k++)
            for (uint32_t u = 0; n->outputs[k] && u < n->outputs[k]->n_uses; u++)
                set_dirty(fz, n->outputs[k]->uses[u].node);
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] && n->inputs[k]->producer)
                set_dirty(fz, n->inputs[k]->producer);
    }
}

/* The last node folds into the anchor (its parameters become the anchor's weights/bias). */
static void rewrite_fold(fp_fuser *fz, const fp_match *mt)
{
    fp_node *a = mt->nodes[0], *last = mt->nodes[mt->n - 1];
    fp_value *old = a->outputs[0], *out = last->outputs[0];
    /* a BN or a bias Add leaves a per-channel bias behind */
    bool adds_bias = last->op == FP_OP_BATCH_NORM || last->op == FP_OP_ADD;
    if (adds_bias && (a->n_inputs < 3 || !a->inputs[2])) {
        fp_value *bias = NULL;
        if (last->op == FP_OP_BATCH_NORM && last->n_inputs > 2)
            bias = last->inputs[2];
        for (uint32_t i = 0; !bias && i < last->n_inputs; i++)
            if (last->inputs[i] && last->inputs[i] != old)
                bias = last->inputs[i];
        fp_value **in = fp_arena_calloc(fz->m->arena, 3, sizeof(fp_value *));
        memcpy(in, a->inputs, sizeof(fp_value *) * MIN(a->n_inputs, 3));
        in[2] = bias;
        a->inputs = in;
        a->n_inputs = 3;
    }
    fp_node_set_output(a, 0, out);
    old->producer = NULL;
    last->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 1; k < last->n_outputs; k++)
        if (last->outputs[k])
            last->outputs[k]->producer = NULL;
}

/* The domain of r's fused op as the target writes it: ONNX's for Gemm, LayerNormalization, Div, the
 * QLinear ops and SimplifiedLayerNormalization (ONNX Runtime registers that one in the ONNX domain),
 * the GE and TensorRT ops; com.microsoft for the other ONNX Runtime contrib ops. */
static const char *fused_domain(const fp_rule *r)
{
    if (r->rewrite == FP_RW_QDQ) /* QLinearConv and QLinearMatMul are ONNX ops, the others ONNX Runtime's */
        return r->fused_kind == FP_OP_QLINEAR_CONV || r->fused_kind == FP_OP_QLINEAR_MATMUL ? "" : "com.microsoft";
    if (g_str_has_prefix(r->id, "ge_") || g_str_has_prefix(r->id, "trt_") || r->fused_kind == FP_OP_GEMM ||
        r->fused_kind == FP_OP_LAYER_NORM || r->fused_kind == FP_OP_SIMPLIFIED_LAYER_NORM || r->fused_kind == FP_OP_DIV)
        return "";
    return "com.microsoft";
}

/* n becomes rule r's fused op (its kind, type and domain, interned once per rule) and FP_NODE_FUSED. */
static void retype(fp_fuser *fz, fp_node *n, const fp_rule *r)
{
    size_t ri = (size_t)(r - fp_rules);
    if (!fz->op_name[ri]) {
        fz->op_name[ri] = fp_intern(fz->m, r->fused_op, -1);
        fz->domain[ri] = fp_intern(fz->m, fused_domain(r), -1);
    }
    n->op = r->fused_kind;
    n->op_type = fz->op_name[ri];
    n->domain = fz->domain[ri];
    n->flags |= FP_NODE_FUSED;
}

/* Whether the fused op of r takes its activation first and its bias last (ONNX Runtime's contrib
 * ops: SkipLayerNormalization(input, skip, gamma, beta, bias), SkipSimplifiedLayerNormalization,
 * BiasGelu(A, B)), however the anchor's bias Add orders its operands (torch writes Add(bias, x)). */
static bool bias_last(const fp_rule *r)
{
    return r->fused_kind == FP_OP_SKIP_LAYER_NORM || r->fused_kind == FP_OP_SKIP_SIMPLIFIED_LAYER_NORM ||
           r->fused_kind == FP_OP_BIAS_GELU;
}

/* Moves the fixed values among the first n of ins (the anchor's inputs) to the end, the order of
 * the others kept. */
static void anchor_fixed_last(GPtrArray *ins, uint32_t n)
{
    fp_value *fixed[8];
    uint32_t nf = 0, w = 0;
    for (uint32_t i = 0; i < n && i < ins->len; i++) {
        fp_value *v = ins->pdata[i];
        if (v && fp_value_is_fixed(v) && nf < G_N_ELEMENTS(fixed))
            fixed[nf++] = v;
        else
            ins->pdata[w++] = v;
    }
    if (!nf)
        return;
    memmove(ins->pdata + w, ins->pdata + n, sizeof(gpointer) * (ins->len - n));
    memcpy(ins->pdata + ins->len - nf, fixed, sizeof(gpointer) * nf);
}

/* The fused node's inputs into ins: the rule's operands (fp_rule.operands) where it names them,
 * else the match's inputs from outside it, the anchor's first. */
static void fused_inputs(const fp_match *mt, GPtrArray *ins)
{
    const fp_rule *r = mt->rule;
    for (int j = 0; j < r->n_operands; j++) {
        int k = r->operands[j];
        g_ptr_array_add(ins, k == FP_PAT_X ? mt->x : fp_fuse_other_input(mt, mt->nodes[k]));
    }
    for (int i = 0; i < mt->n && !r->n_operands; i++) {
        const fp_node *n = mt->nodes[i];
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            fp_value *v = n->inputs[k];
            if (i == 0 ? true
                       : (v && !(v->producer && fp_fuse_in_match(mt, v->producer)) && !g_ptr_array_find(ins, v, NULL)))
                g_ptr_array_add(ins, v);
        }
    }
    if (bias_last(r) || r->x_input)
        anchor_fixed_last(ins, mt->nodes[0]->n_inputs);
}

static void set_float_attr(fp_fuser *fz, fp_node *n, const char *name, double v);

/* All nodes become the anchor, retyped as the fused op, reading the match's external inputs (its
 * operands) and producing its external outputs. */
static void rewrite_fuse(fp_fuser *fz, const fp_match *mt)
{
    fp_model *m = fz->m;
    fp_node *a = mt->nodes[0];
    GPtrArray *ins = fz->ins, *outs = fz->outs;
    g_ptr_array_set_size(ins, 0);
    g_ptr_array_set_size(outs, 0);
    uint64_t flops = 0;
    for (int i = 0; i < mt->n; i++)
        flops += mt->nodes[i]->metrics.flops;
    fused_inputs(mt, ins);
    double scale = 1;
    if (a->op == FP_OP_MATMUL && mt->rule->fused_kind == FP_OP_FUSED_MATMUL && mt->n == 2) {
        /* MatMul + a scalar Mul/Div: its factor into alpha (ORT's MatMulScaleFusion), the scalar
         * no input of the FusedMatMul */
        int k = fp_fuse_scale_operand(mt->nodes[1], &scale);
        g_assert(k >= 0);
        g_ptr_array_remove(ins, mt->nodes[1]->inputs[k]);
    }
    for (int i = 0; i < mt->n; i++) { /* outputs only now: producers of internal values are cleared */
        fp_node *n = mt->nodes[i];
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            fp_value *v = n->outputs[k];
            if (!v)
                continue;
            bool escapes = v->is_output || i == mt->n - 1;
            for (uint32_t u = 0; u < v->n_uses && !escapes; u++)
                escapes = !fp_fuse_in_match(mt, v->uses[u].node);
            if (escapes)
                g_ptr_array_add(outs, v);
            else
                v->producer = NULL; /* internal: never materialized */
        }
    }
    a->n_inputs = ins->len;
    a->inputs = fp_arena_memdup(m->arena, ins->pdata, sizeof(fp_value *) * MAX(ins->len, 1));
    a->n_outputs = outs->len;
    a->outputs = fp_arena_calloc(m->arena, MAX(outs->len, 1), sizeof(fp_value *));
    for (guint k = 0; k < outs->len; k++)
        fp_node_set_output(a, k, outs->pdata[k]);
    const fp_rule *r = mt->rule;
    retype(fz, a, r);
    if (scale != 1)
        set_float_attr(fz, a, "alpha", scale);
    if (r->act_node >= 0 && r->act_node < mt->n) { /* FusedConv/FusedGemm carry the activation's name */
        const char *act = mt->nodes[r->act_node]->op_type;
        fp_node_set_attr(
            m, a, (fp_attr){.name = "activation", .type = FP_ATTR_STRING, .u.s = act, .n = (uint32_t)strlen(act)});
    }
    a->flags |= FP_NODE_FUSED;
    a->metrics.flops = flops;
    uint32_t gid = ++fz->groups;
    for (int i = 0; i < mt->n; i++) {
        mt->nodes[i]->group = gid;
        if (i > 0)
            mt->nodes[i]->flags |= FP_NODE_REMOVED;
    }
}

static void set_int_attr(fp_fuser *fz, fp_node *n, const char *name, int64_t v);

/* Whether DequantizeLinear dq of match mt stays after the rewrite: a reader outside the match, or
 * the graph, reads it too. */
static bool dq_stays(const fp_match *mt, const fp_node *dq)
{
    const fp_value *v = dq->outputs[0];
    bool other = v->is_output;
    for (uint32_t u = 0; u < v->n_uses && !other; u++)
        other = !fp_fuse_in_match(mt, v->uses[u].node);
    return other;
}

/* Appends the tensor, scale and zero point (NULL when absent) DequantizeLinear or QuantizeLinear
 * q reads to ins. */
static void add_quantized(GPtrArray *ins, const fp_node *q)
{
    for (uint32_t k = 0; k < 3; k++)
        g_ptr_array_add(ins, k < q->n_inputs ? q->inputs[k] : NULL);
}

/* MatMulNBits' attributes of a unit made from DequantizeLinear dq of a [K, N] weight: K, N, bits
 * and block_size (the weight's own quantization), and accuracy_level 4 (int8 compute: ONNX
 * Runtime's DQMatMulToMatMulNBitsAction sets session.qdq_matmulnbits_accuracy_level, default 4). */
static void nbits_attrs(fp_fuser *fz, fp_node *a, const fp_node *dq)
{
    const fp_value *w = dq->inputs[0];
    set_int_attr(fz, a, "K", w->shape.rank == 2 ? w->shape.dims[0].value : 0);
    set_int_attr(fz, a, "N", w->shape.rank == 2 ? w->shape.dims[1].value : 0);
    set_int_attr(fz, a, "bits", fp_dtype_bits(w->dtype));
    set_int_attr(fz, a, "block_size", fp_node_attr_int(dq, "block_size", 0));
    set_int_attr(fz, a, "accuracy_level", 4);
}

/* A QDQ node unit becomes its kernel (FP_RW_QDQ). The anchor reads, in its inputs' order, each
 * dequantized input as its quantized tensor, scale and zero point (the op's own tensor alone when
 * the rule keeps the op: fused_op NULL), then the output's scale and zero point when a
 * QuantizeLinear ends the unit, whose output it writes. The unit's DequantizeLinears and
 * QuantizeLinear go, but those that something else reads. */
static void rewrite_qdq(fp_fuser *fz, const fp_match *mt)
{
    fp_node *a = mt->nodes[0], *q = NULL;
    const fp_rule *r = mt->rule;
    bool keep_op = !r->fused_op;
    GPtrArray *ins = fz->ins;
    g_ptr_array_set_size(ins, 0);
    for (int i = 1; i < mt->n; i++)
        if (mt->nodes[i]->op == FP_OP_QUANTIZE_LINEAR && mt->nodes[i]->inputs[0] == a->outputs[0])
            q = mt->nodes[i];
    for (uint32_t k = 0; k < a->n_inputs; k++) {
        const fp_node *dq = fp_fuse_unit_dq(mt, a->inputs[k]);
        if (!dq)
            g_ptr_array_add(ins, a->inputs[k]);
        else if (keep_op)
            g_ptr_array_add(ins, dq->inputs[0]);
        else
            add_quantized(ins, dq);
    }
    if (q && !keep_op) {
        add_quantized(ins, q);
        g_ptr_array_remove_index(ins, ins->len - 3); /* the QuantizeLinear's input is the anchor's output */
    }
    const fp_node *w = a->n_inputs > 1 ? fp_fuse_unit_dq(mt, a->inputs[1]) : NULL;
    if (r->fused_kind == FP_OP_MATMUL_NBITS && w)
        nbits_attrs(fz, a, w);
    uint64_t flops = a->metrics.flops;
    uint32_t gid = ++fz->groups;
    for (int i = 1; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        if (n->op == FP_OP_DEQUANTIZE_LINEAR && dq_stays(mt, n))
            continue;
        flops += n->metrics.flops;
        n->flags |= FP_NODE_REMOVED;
        n->group = gid;
        if (n != q)
            n->outputs[0]->producer = NULL;
    }
    a->n_inputs = ins->len;
    a->inputs = fp_arena_memdup(fz->m->arena, ins->pdata, sizeof(fp_value *) * MAX(ins->len, 1));
    if (q) {
        a->outputs[0]->producer = NULL; /* internal: never materialized */
        fp_node_set_output(a, 0, q->outputs[0]);
    }
    a->group = gid;
    a->flags |= FP_NODE_QUANTIZED;
    if (keep_op)
        return;
    retype(fz, a, r);
    a->metrics.flops = flops;
}

static void set_int_attr(fp_fuser *fz, fp_node *n, const char *name, int64_t v)
{
    fp_node_set_attr(fz->m, n, (fp_attr){.name = name, .type = FP_ATTR_INT, .u.i = v});
}

static void set_float_attr(fp_fuser *fz, fp_node *n, const char *name, double v)
{
    fp_node_set_attr(fz->m, n, (fp_attr){.name = name, .type = FP_ATTR_FLOAT, .u.f = v});
}

/* Node 1 absorbs the anchor (FP_RW_ABSORB) and becomes the rule's fused op: a Transpose (it reads
 * the Transpose's input at the port that read its output, transA/transB and transBatchA/B flipped
 * as fp_fuse_transpose_flags says) or a scalar Mul/Div (its factor into alpha); the anchor goes
 * when nothing else reads it. Of Div(1, x1) under a Mul(x2, .) the Div stays instead, as
 * Div(x2, x1) writing the Mul's output, and the Mul goes. */
static void rewrite_absorb(fp_fuser *fz, const fp_match *mt)
{
    fp_node *t = mt->nodes[0], *mm = mt->nodes[1];
    fp_value *out = t->outputs[0];
    uint32_t port = mm->inputs[0] == out ? 0 : 1;
    if (t->op == FP_OP_TRANSPOSE) {
        bool trans = false, batch = false;
        const char *why;
        fp_fuse_transpose_flags(t, &trans, &batch, &why);
        mm->inputs[port] = t->inputs[0];
        const char *tr = port ? "transB" : "transA", *tb = port ? "transBatchB" : "transBatchA";
        set_int_attr(fz, mm, tr, fp_node_attr_int(mm, tr, 0) ^ trans);
        set_int_attr(fz, mm, tb, fp_node_attr_int(mm, tb, 0) ^ batch);
    } else if (t->op == FP_OP_DIV && mm->op == FP_OP_MUL && mt->rule->fused_kind == FP_OP_DIV) {
        /* 1 / x1 * x2: the Div reads x2 and writes the Mul's output, the Mul goes (ORT's
         * DivMulFusion::Apply, graph_utils::FinalizeNodeFusion: the Div node stays) */
        t->inputs[0] = mm->inputs[port ? 0 : 1];
        fp_node_set_output(t, 0, mm->outputs[0]);
        out->producer = NULL;
        t->flags |= FP_NODE_FUSED;
        t->group = ++fz->groups;
        mm->flags |= FP_NODE_REMOVED;
        return;
    } else { /* a scalar Mul or Div: its factor into alpha */
        double f = 1;
        int k = fp_fuse_scale_operand(t, &f);
        g_assert(k >= 0);
        mm->inputs[port] = t->inputs[1 - k];
        set_float_attr(fz, mm, "alpha", fp_node_attr_float(mm, "alpha", 1.0) * f);
    }
    retype(fz, mm, mt->rule);
    mm->group = ++fz->groups;
    if (out->n_uses > 1 || out->is_output) /* read by others still: it stays (the use lists are updated after) */
        return;
    t->flags |= FP_NODE_REMOVED;
    out->producer = NULL;
}

/* A Split output that a Squeeze of `axis` follows (the Split's anchor was a Gather of a scalar). */
typedef struct {
    fp_node *split;
    uint32_t port;
    int64_t axis;
} split_squeeze;

/* Node g becomes the Squeeze of `axis` that writes `out` (a view, as ONNX Runtime's
 * GatherSliceToSplitFusion adds after the piece of a Gather of a scalar index) from a new value: the
 * piece of x the Split yields, the axis kept with size 1. The piece; g's output stays the caller's. */
static fp_value *gather_to_squeeze(fp_fuser *fz, fp_node *g, int64_t axis, const fp_value *x, const fp_value *out)
{
    fp_model *m = fz->m;
    g_autofree char *name = g_strdup_printf("%s/split_piece", g->name);
    fp_value *piece = fp_graph_value_like(g->graph, name, out, FP_DT_UNDEFINED);
    fp_dim *dims = fp_arena_memdup(m->arena, x->shape.dims, sizeof(fp_dim) * (size_t)x->shape.rank);
    dims[axis] = (fp_dim){1, NULL};
    piece->shape = (fp_shape){x->shape.rank, fp_intern_dims(m, dims, x->shape.rank)};
    fp_value **ins = fp_arena_calloc(m->arena, 2, sizeof(fp_value *));
    ins[0] = piece;
    g->n_attrs = 0;
    if (g->opset >= 13) {
        g_autofree char *axes_name = g_strdup_printf("%s/squeeze_axes", g->name);
        ins[1] = fp_graph_int64_initializer(g->graph, axes_name, &axis, 1);
    } else {
        g->attrs = fp_arena_calloc(m->arena, 1, sizeof(fp_attr));
        g->attrs[0] = (fp_attr){.name = fp_intern(m, "axes", -1),
                                .type = FP_ATTR_INTS,
                                .u.ints = fp_arena_memdup(m->arena, &axis, sizeof axis),
                                .n = 1};
        g->n_attrs = 1;
    }
    g->inputs = ins;
    g->n_inputs = g->opset >= 13 ? 2 : 1;
    g->op = FP_OP_SQUEEZE;
    g->op_type = fp_intern(m, "Squeeze", -1);
    return piece;
}

/* The Slices and Gathers of one tensor become one Split (FP_RW_SPLIT; split_intervals checked that
 * they cover its axis once): the anchor, retyped, reads the tensor and the sizes and yields the
 * pieces in the order of their starts; the other members go, but a Gather of a scalar index, which
 * becomes the Squeeze after its piece. */
static void rewrite_split(fp_fuser *fz, const fp_match *mt)
{
    fp_node *a = mt->nodes[0];
    int64_t axis, start[FP_PAT_MAX + 8], end[FP_PAT_MAX + 8], sizes[FP_PAT_MAX + 8];
    fp_node *by[FP_PAT_MAX + 8];
    bool squeeze[FP_PAT_MAX + 8];
    int n = mt->n;
    for (int i = 0; i < n; i++) {
        fp_fuse_split_member(mt->nodes[i], &axis, &start[i], &end[i], &squeeze[i]);
        by[i] = mt->nodes[i];
    }
    for (int i = 1; i < n; i++) /* by start: a few nodes */
        for (int j = i; j > 0 && start[j - 1] > start[j]; j--) {
            int64_t s0 = start[j], e0 = end[j];
            fp_node *b0 = by[j];
            bool q0 = squeeze[j];
            start[j] = start[j - 1], end[j] = end[j - 1], by[j] = by[j - 1], squeeze[j] = squeeze[j - 1];
            start[j - 1] = s0, end[j - 1] = e0, by[j - 1] = b0, squeeze[j - 1] = q0;
        }
    fp_value **outs = fp_arena_calloc(fz->m->arena, (size_t)n, sizeof(fp_value *));
    for (int i = 0; i < n; i++) {
        sizes[i] = end[i] - start[i];
        outs[i] = squeeze[i] && by[i] != a ? gather_to_squeeze(fz, by[i], axis, mt->x, by[i]->outputs[0])
                                           : by[i]->outputs[0];
        if (squeeze[i] && by[i] == a) /* the anchor is the Split: its Squeeze comes at the end of the pass */
            g_array_append_val(fz->squeezes, ((split_squeeze){a, (uint32_t)i, axis}));
    }
    fp_value **ins = fp_arena_calloc(fz->m->arena, 2, sizeof(fp_value *));
    ins[0] = mt->x;
    g_autofree char *sizes_name = g_strdup_printf("%s/split_sizes", a->name);
    ins[1] = fp_graph_int64_initializer(a->graph, sizes_name, sizes, (uint32_t)n);
    a->inputs = ins;
    a->n_inputs = 2;
    a->outputs = outs;
    a->n_outputs = (uint32_t)n;
    for (int i = 0; i < n; i++)
        fp_node_set_output(a, (uint32_t)i, outs[i]);
    a->attrs = fp_arena_calloc(fz->m->arena, 1, sizeof(fp_attr));
    a->attrs[0] = (fp_attr){.name = fp_intern(fz->m, "axis", -1), .type = FP_ATTR_INT, .u.i = axis};
    a->n_attrs = 1;
    a->op = FP_OP_SPLIT;
    a->op_type = fp_intern(fz->m, "Split", -1);
    a->domain = fp_intern(fz->m, "", -1);
    for (int i = 1; i < n; i++)
        if (mt->nodes[i]->op != FP_OP_SQUEEZE)
            mt->nodes[i]->flags |= FP_NODE_REMOVED;
}

/* The Squeezes split_squeeze asked for: output `port` of the Split becomes a new value (the axis
 * kept, of size 1), which a new Squeeze reads to write the old one. Links m again when it made any. */
void fp_fuse_rewrite_squeezes(fp_fuser *fz)
{
    fp_model *m = fz->m;
    for (guint i = 0; i < fz->squeezes->len; i++) {
        const split_squeeze *q = &g_array_index(fz->squeezes, split_squeeze, i);
        fp_node *sp = q->split;
        fp_value *out = sp->outputs[q->port];
        g_autofree char *name = g_strdup_printf("%s/squeeze", out->name);
        fp_node *sq = fp_node_new(sp->graph, FP_OP_SQUEEZE, "Squeeze", "", name, 1, 1);
        sq->opset = sp->opset;
        fp_value *piece = gather_to_squeeze(fz, sq, q->axis, sp->inputs[0], out);
        fp_node_set_output(sp, q->port, piece);
        fp_node_set_output(sq, 0, out);
    }
    if (fz->squeezes->len)
        fp_model_link(m);
}

static void rewrite_eliminate(const fp_match *mt);

/* The anchor Pad goes (FP_RW_PAD; pad_foldable and explicit_pads checked it): its reader reads its
 * input, the Conv or pool last in the match takes its spatial padding in its pads, and a Cast
 * between them now has the Pad input's shape. */
static void rewrite_pad(fp_fuser *fz, const fp_match *mt)
{
    fp_node *pad = mt->nodes[0], *last = mt->nodes[mt->n - 1];
    int64_t pads[2 * FP_MAX_RANK], now[2 * FP_MAX_RANK];
    int np;
    fp_fuse_pad_pads(pad, pads, &np);
    const fp_attr *a = fp_node_attr(last, "pads");
    int half = np / 2, spatial = (int)a->n / 2;
    for (int i = 0; i < spatial; i++) {
        now[i] = a->u.ints[i] + (2 + i < half ? pads[2 + i] : 0);
        now[spatial + i] = a->u.ints[spatial + i] + (2 + i < half ? pads[half + 2 + i] : 0);
    }
    fp_node_set_attr(fz->m, last,
                     (fp_attr){.name = fp_intern(fz->m, "pads", -1),
                               .type = FP_ATTR_INTS,
                               .u.ints = fp_arena_memdup(fz->m->arena, now, sizeof(int64_t) * a->n),
                               .n = a->n});
    if (mt->n == 3)
        mt->nodes[1]->outputs[0]->shape = pad->inputs[0]->shape;
    rewrite_eliminate(mt);
}

/* The anchor disappears: its consumers read its data input instead (input 0; input 1 of an
 * arithmetic no-op written constant first, 1 * x); where its output is a graph output (an Identity,
 * identity_output), the input's producer writes that output instead. */
static void rewrite_eliminate(const fp_match *mt)
{
    fp_node *n = mt->nodes[0];
    bool arith = n->op == FP_OP_ADD || n->op == FP_OP_MUL || n->op == FP_OP_SUB || n->op == FP_OP_DIV;
    fp_value *in = arith && n->n_inputs == 2 && fp_value_is_constant(n->inputs[0]) ? n->inputs[1] : n->inputs[0];
    fp_value *out = n->outputs[0];
    if (out && out->is_output && in->producer) {
        fp_node_set_output(in->producer, in->producer_port, out);
        in->producer = NULL;
        in->n_uses = 0;
    } else if (out) {
        fp_value_move_readers(out, in);
    }
    n->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->producer == n)
            n->outputs[k]->producer = NULL;
}

void fp_fuse_rewrite(fp_fuser *fz, const fp_match *mt)
{
    mark_dirty(fz, mt);
    switch (mt->rule->rewrite) {
    case FP_RW_FOLD:
        rewrite_fold(fz, mt);
        break;
    case FP_RW_FUSE:
        rewrite_fuse(fz, mt);
        break;
    case FP_RW_ELIMINATE:
        rewrite_eliminate(mt);
        break;
    case FP_RW_ABSORB:
        rewrite_absorb(fz, mt);
        break;
    case FP_RW_SPLIT:
        rewrite_split(fz, mt);
        break;
    case FP_RW_PAD:
        rewrite_pad(fz, mt);
        break;
    case FP_RW_QDQ:
        rewrite_qdq(fz, mt);
        break;
    }
}

void fp_fuse_rewrite_init(fp_fuser *fz)
{
    fz->squeezes = g_array_new(FALSE, FALSE, sizeof(split_squeeze));
    fz->op_name = g_new0(const char *, fp_n_rules + 1);
    fz->domain = g_new0(const char *, fp_n_rules + 1);
    fz->ins = g_ptr_array_new();
    fz->outs = g_ptr_array_new();
}

void fp_fuse_rewrite_free(fp_fuser *fz)
{
    g_array_free(fz->squeezes, TRUE);
    g_free(fz->op_name);
    g_free(fz->domain);
    g_ptr_array_free(fz->ins, TRUE);
    g_ptr_array_free(fz->outs, TRUE);
}
