/* saved.c - the tensors autograd saves for backward (saved.h). In topological order: which values
 * require grad (they depend on a parameter), which decomposed fused ops the export spelled out,
 * then per op the saves its derivative formula makes (PyTorch's derivatives.yaml, restated in
 * shared/ref/training_memory_facts.md section 2), conditional ones only where the other operand
 * requires grad; an op none of whose inputs requires grad records nothing. Views (Reshape,
 * Transpose, Slice, ...) share their base's storage, which a saved view keeps alive whole. */
#include "passes/training/saved.h"

#include <string.h>

typedef struct {
    const fp_model *m;
    const fp_graph *g;
    const fp_train_opts *o;
    fp_train_saved *s;
    uint8_t *seen;     /* per value id: storage counted */
    GHashTable *kinds; /* decomposed kind -> count, for the notes */
} pass;

/* ---------------------------------------------------------------- values */

bool fp_train_is_parameter(const fp_value *v)
{
    uint64_t n = 0;
    if (!v || v->kind != FP_VALUE_INITIALIZER || !fp_dtype_is_float(v->dtype) || !fp_shape_numel(&v->shape, &n) ||
        n < 2)
        return false;
    for (uint32_t u = 0; u < v->n_uses; u++)
        if (v->uses[u].node->op == FP_OP_BATCH_NORM && (v->uses[u].port == 3 || v->uses[u].port == 4))
            return false;
    return true;
}

/* Whether v is trained in the step: a parameter that the options do not name frozen. */
static bool trained(const pass *p, const fp_value *v)
{
    return fp_train_is_parameter(v) && !(p->o->frozen && g_strv_contains((const char *const *)p->o->frozen, v->name));
}

/* Whether v is an activation: computed by the forward pass or fed to it (not a weight). */
static bool activation(const fp_value *v) { return v && !fp_value_is_fixed(v); }

static bool rg(const pass *p, const fp_value *v) { return v && v->graph == p->g && p->s->requires_grad[v->id]; }

uint64_t fp_train_value_bytes(const fp_train_saved *s, const fp_value *v, bool *known)
{
    uint64_t n = 0, b = 0;
    bool half = s->half && v->graph->parent == NULL && s->half[v->id];
    *known = fp_shape_numel(&v->shape, &n) && fp_dtype_bytes(half ? FP_DT_FLOAT16 : v->dtype, n, &b);
    return *known ? b : 0;
}

/* Whether every dim of x before `axis` is 1: a slice or select along `axis` then keeps x's layout. */
static bool leading_ones(const fp_value *x, int64_t axis)
{
    if (!x || x->shape.rank <= 0)
        return false;
    if (axis < 0)
        axis += x->shape.rank;
    for (int64_t d = 0; d < axis && d < x->shape.rank; d++)
        if (!fp_dim_known(x->shape.dims[d]) || x->shape.dims[d].value != 1)
            return false;
    return true;
}

/* The axis a Slice cuts when it cuts one (its constant axes input, else axis 0), or -1. */
static int64_t slice_axis(const fp_node *n)
{
    const fp_value *axes = n->n_inputs > 3 ? n->inputs[3] : NULL;
    const fp_tensor *t = axes ? (axes->tensor ? axes->tensor : fp_value_fold(axes)) : NULL;
    if (!axes)
        return 0;
    if (!t || t->where != FP_DATA_INLINE || t->nbytes != 8 || t->dtype != FP_DT_INT64)
        return -1;
    int64_t a;
    memcpy(&a, t->data, 8);
    return a;
}

/* How PyTorch makes n's output from its input 0: no view; a reshape (Reshape, Flatten: a view of
 * a contiguous input, else a copy); a view keeping the input's strides (Identity, Squeeze,
 * Unsqueeze, a Slice, Split or select of a leading axis: contiguous when the input is); or a
 * strided view (Transpose, Expand, a Slice, Split or select of an inner axis). */
typedef enum { NOT_VIEW, VIEW_RESHAPE, VIEW_SAME, VIEW_STRIDED } view_kind;

static view_kind view_of(const fp_node *n)
{
    const fp_value *x = n->n_inputs ? n->inputs[0] : NULL;
    int64_t a;
    switch (n->op) {
    case FP_OP_RESHAPE:
    case FP_OP_FLATTEN:
        return VIEW_RESHAPE;
    case FP_OP_SQUEEZE:
    case FP_OP_UNSQUEEZE:
    case FP_OP_IDENTITY:
        return VIEW_SAME;
    case FP_OP_CAST: /* to its own dtype: PyTorch's x.to(x.dtype) returns x itself */
        return x && n->n_outputs && n->outputs[0] && n->outputs[0]->dtype == x->dtype ? VIEW_SAME : NOT_VIEW;
    case FP_OP_TRANSPOSE:
    case FP_OP_EXPAND:
        return VIEW_STRIDED;
    case FP_OP_SPLIT:
        return leading_ones(x, fp_node_attr_int(n, "axis", 0)) ? VIEW_SAME : VIEW_STRIDED;
    case FP_OP_SLICE:
        return (a = slice_axis(n)) >= 0 && leading_ones(x, a) ? VIEW_SAME : VIEW_STRIDED;
    case FP_OP_GATHER: /* a constant scalar index: select, a view */
        if (n->n_inputs < 2 || !n->inputs[1] || !fp_value_is_constant(n->inputs[1]) || n->inputs[1]->shape.rank != 0)
            return NOT_VIEW;
        return leading_ones(x, fp_node_attr_int(n, "axis", 0)) ? VIEW_SAME : VIEW_STRIDED;
    default:
        return NOT_VIEW;
    }
}

/* Whether v's elements lie in memory order: a strided view's do not, a reshape's do (of a strided
 * view it is a copy). */
static bool contiguous(const fp_value *v)
{
    for (int hops = 0; v && v->producer && hops < 64; hops++) {
        view_kind k = view_of(v->producer);
        if (k != VIEW_SAME)
            return k != VIEW_STRIDED;
        v = v->producer->inputs[0];
    }
    return true;
}

const fp_value *fp_train_storage_of(const fp_value *v)
{
    for (int hops = 0; v && v->producer && hops < 64; hops++) {
        const fp_node *n = v->producer;
        view_kind k = view_of(n);
        if (k == NOT_VIEW || !n->n_inputs || !n->inputs[0])
            break;
        if (k == VIEW_RESHAPE && !contiguous(n->inputs[0]))
            break; /* reshaping a strided view copies it */
        v = n->inputs[0];
    }
    return v;
}

/* requires_grad: a trained parameter, or a float output of an op reading a value that requires it (a
 * parameter transposed at export, which analysis folded, is the parameter to PyTorch). */
static void propagate(pass *p, fp_node *const *order, uint32_t n)
{
    for (guint i = 0; i < p->g->values->len; i++)
        p->s->requires_grad[i] = trained(p, p->g->values->pdata[i]);
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *nd = order[i];
        bool any = false;
        for (uint32_t k = 0; k < nd->n_inputs && !any; k++)
            any = rg(p, nd->inputs[k]);
        for (uint32_t k = 0; k < nd->n_outputs; k++) {
            const fp_value *y = nd->outputs[k];
            if (y && y->graph == p->g)
                p->s->requires_grad[y->id] = any && fp_dtype_is_float(y->dtype); /* a folded Transpose of a
                                                                                  weight too */
        }
    }
}

/* ---------------------------------------------------------------- AMP */

bool fp_train_is_product(fp_op op)
{
    return op == FP_OP_CONV || op == FP_OP_CONV_TRANSPOSE || op == FP_OP_MATMUL || op == FP_OP_GEMM ||
           op == FP_OP_EINSUM;
}

/* Ops autocast runs in float32 (their 16-bit inputs cast up). */
static bool amp_fp32(fp_op op)
{
    switch (op) {
    case FP_OP_SOFTMAX:
    case FP_OP_LOG_SOFTMAX:
    case FP_OP_LAYER_NORM:
    case FP_OP_GROUP_NORM:
    case FP_OP_EXP:
    case FP_OP_LOG:
    case FP_OP_POW:
    case FP_OP_REDUCE_SUM:
    case FP_OP_REDUCE_PROD:
    case FP_OP_REDUCE_L1:
    case FP_OP_REDUCE_L2:
    case FP_OP_REDUCE_LOG_SUM_EXP:
    case FP_OP_SOFTPLUS:
    case FP_OP_RECIPROCAL:
    case FP_OP_CUM_SUM:
    case FP_OP_NLL_LOSS:
    case FP_OP_SOFTMAX_CE_LOSS:
    case FP_OP_LP_NORM:
        return true;
    default:
        return false;
    }
}

/* Which float32 values autocast holds in 16 bits: outputs of the 16-bit ops, and of the ops that
 * follow their inputs' type when every float activation input is 16-bit. */
static void amp_types(pass *p, fp_node *const *order, uint32_t n)
{
    if (p->o->precision == FP_TRAIN_FP32)
        return;
    p->s->half = g_new0(uint8_t, p->g->values->len);
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *nd = order[i];
        bool half = fp_train_is_product(nd->op), any = false; /* autocast runs these in 16 bits */
        if (!half && !amp_fp32(nd->op)) {
            half = true;
            for (uint32_t k = 0; k < nd->n_inputs; k++) {
                const fp_value *v = nd->inputs[k];
                if (!activation(v) || v->graph != p->g || !fp_dtype_is_float(v->dtype))
                    continue;
                any = true;
                half &= p->s->half[v->id];
            }
            half &= any;
        }
        for (uint32_t k = 0; k < nd->n_outputs; k++) {
            const fp_value *y = nd->outputs[k];
            if (y && y->graph == p->g)
                p->s->half[y->id] = half && y->dtype == FP_DT_FLOAT;
        }
    }
}

/* ---------------------------------------------------------------- saving */

/* Records that node n saves v (an activation: its storage counted once). Weights are not
 * recorded: they are parameters or constants, counted apart. */
static void save(pass *p, const fp_node *n, const fp_value *v, const char *what, const char *why)
{
    if (!activation(v))
        return;
    const fp_value *st = fp_train_storage_of(v);
    bool known = false;
    uint64_t bytes = fp_train_value_bytes(p->s, st, &known);
    fp_saved_item it = {.node = n, .value = v, .storage = st, .what = what, .why = why, .bytes = bytes};
    if (!known) {
        p->s->unknown++;
    } else if (st->graph == p->g && !p->seen[st->id]) {
        p->seen[st->id] = 1;
        it.counted = true;
        p->s->saved_bytes += bytes;
    }
    g_array_append_val(p->s->items, it);
}

/* Records an auxiliary tensor n makes for its backward: `numel` elements of `dtype`. */
static void save_aux(pass *p, const fp_node *n, uint64_t numel, fp_dtype dtype, const char *what, const char *why)
{
    uint64_t bytes = 0;
    fp_dtype_bytes(dtype, numel, &bytes);
    fp_saved_item it = {.node = n, .what = what, .why = why, .bytes = bytes, .counted = true};
    p->s->saved_bytes += bytes;
    g_array_append_val(p->s->items, it);
}

static const fp_value *in(const fp_node *n, uint32_t k) { return k < n->n_inputs ? n->inputs[k] : NULL; }
static const fp_value *out0(const fp_node *n) { return n->n_outputs ? n->outputs[0] : NULL; }

static uint64_t numel_of(const fp_value *v)
{
    uint64_t e = 0;
    return v && fp_shape_numel(&v->shape, &e) ? e : 0;
}

/* Elements of x's dims before `axis` (LayerNorm's rows; negative axis from the end). */
static uint64_t rows_before(const fp_value *x, int64_t axis)
{
    if (!x || x->shape.rank <= 0)
        return 0;
    if (axis < 0)
        axis += x->shape.rank;
    uint64_t m = 1;
    for (int64_t d = 0; d < axis && d < x->shape.rank; d++)
        m *= fp_dim_known(x->shape.dims[d]) ? (uint64_t)x->shape.dims[d].value : 0;
    return m;
}

/* A binary product's saves: each operand when the other requires grad. */
static void save_product(pass *p, const fp_node *n, const char *why_a, const char *why_b)
{
    if (rg(p, in(n, 1)))
        save(p, n, in(n, 0), "input 0", why_b);
    if (rg(p, in(n, 0)))
        save(p, n, in(n, 1), "input 1", why_a);
}

/* Dropout's saves: on a CUDA device the fused kernel's 1-byte mask; elsewhere a noise tensor of
 * X's dtype (Dropout.cpp's _dropout_impl, x * noise); nothing at ratio 0. */
static void save_dropout(pass *p, const fp_node *n)
{
    const fp_value *x = in(n, 0), *r = in(n, 1);
    double ratio = fp_node_attr_float(n, "ratio", 0.5);
    const fp_tensor *t = r ? fp_value_fold(r) : NULL;
    if (r && r->tensor && r->tensor->where == FP_DATA_INLINE)
        t = r->tensor;
    if (t && t->where == FP_DATA_INLINE && t->dtype == FP_DT_FLOAT && t->nbytes >= 4) {
        float f;
        memcpy(&f, t->data, 4);
        ratio = f;
    }
    if (ratio <= 0)
        return;
    bool half = p->s->half && x && x->graph == p->g && p->s->half[x->id];
    if (p->o->gpu)
        save_aux(p, n, numel_of(x), FP_DT_BOOL, "mask", "native_dropout's mask (1 byte an element)");
    else if (x)
        save_aux(p, n, numel_of(x), half ? FP_DT_FLOAT16 : x->dtype, "dropout noise",
                 "x * noise on a CPU: the noise, in x's dtype");
}

/* Normalizations: X and their per-row statistics (float32, two vectors). */
static void save_norm(pass *p, const fp_node *n)
{
    const fp_value *x = in(n, 0);
    uint64_t stats = 0;
    const char *what = "mean, inverse std";
    switch (n->op) {
    case FP_OP_BATCH_NORM:
    case FP_OP_INSTANCE_NORM:
        stats = x && x->shape.rank >= 2 && fp_dim_known(x->shape.dims[1]) ? (uint64_t)x->shape.dims[1].value : 0;
        if (n->op == FP_OP_INSTANCE_NORM && x && fp_dim_known(x->shape.dims[0]))
            stats *= (uint64_t)x->shape.dims[0].value;
        break;
    case FP_OP_GROUP_NORM:
        stats = x && x->shape.rank >= 1 && fp_dim_known(x->shape.dims[0]) ? (uint64_t)x->shape.dims[0].value : 0;
        stats *= (uint64_t)MAX(1, fp_node_attr_int(n, "num_groups", 1));
        break;
    default: /* LayerNorm, RMSNorm: one value per row */
        stats = rows_before(x, fp_node_attr_int(n, "axis", -1));
        what = n->op == FP_OP_LAYER_NORM ? "mean, inverse std" : "inverse std";
        break;
    }
    save(p, n, x, "input 0", "the normalized input, for every gradient");
    save_aux(p, n, stats * (n->op == FP_OP_SIMPLIFIED_LAYER_NORM ? 1 : 2), FP_DT_FLOAT, what,
             "per-row statistics, in float32");
}

/* Pools that pick a maximum keep the input and int64 indices of the output's shape. */
static void save_max_pool(pass *p, const fp_node *n)
{
    save(p, n, in(n, 0), "input 0", "max_pool2d_with_indices saves its input");
    save_aux(p, n, numel_of(out0(n)), FP_DT_INT64, "indices", "where each maximum came from (int64)");
}

/* The saves of one op whose inputs require grad (a recognized decomposed group: its fused op's). */
/* Whether op's backward reads its output (1), its input 0 (0), or neither of them alone (-1). */
static int reads_one(fp_op op)
{
    switch (op) {
    case FP_OP_RELU:
    case FP_OP_SIGMOID:
    case FP_OP_TANH:
    case FP_OP_SOFTMAX:
    case FP_OP_LOG_SOFTMAX:
    case FP_OP_SQRT:
    case FP_OP_EXP:
    case FP_OP_RECIPROCAL:
        return 1;
    case FP_OP_LEAKY_RELU:
    case FP_OP_ELU:
    case FP_OP_SELU:
    case FP_OP_CELU:
    case FP_OP_GELU:
    case FP_OP_ERF:
    case FP_OP_HARD_SIGMOID:
    case FP_OP_HARD_SWISH:
    case FP_OP_SOFTPLUS:
    case FP_OP_MISH:
    case FP_OP_CLIP:
    case FP_OP_LOG:
    case FP_OP_ABS:
    case FP_OP_SIN:
    case FP_OP_COS:
    case FP_OP_POW:
    case FP_OP_AVERAGE_POOL:
    case FP_OP_PRELU:
    case FP_OP_QUICK_GELU:
    case FP_OP_FAST_GELU:
    case FP_OP_SOFTSIGN:
        return 0;
    default:
        return -1;
    }
}

/* Whether ReduceMean n is PyTorch's mean over given dims (mean.dim): axes as its attribute or
 * second input; without them it is mean() over everything, which keeps sizes only. */
static bool mean_dim(const fp_node *n) { return fp_node_attr(n, "axes") != NULL || (n->n_inputs > 1 && n->inputs[1]); }

static void save_op(pass *p, const fp_node *n)
{
    int one = reads_one(n->op);
    if (one == 1)
        save(p, n, out0(n), "output", "its backward reads its output");
    else if (one == 0)
        save(p, n, in(n, 0), "input 0", "its backward reads its input");
    if (one >= 0)
        return;
    switch (n->op) {
    case FP_OP_CONV:
    case FP_OP_CONV_TRANSPOSE:
        save(p, n, in(n, 0), "input 0", "convolution_backward reads the input and the weight");
        return;
    case FP_OP_MATMUL:
    case FP_OP_GEMM:
    case FP_OP_EINSUM:
        save_product(p, n, "for the gradient of input 0", "for the gradient of input 1 (the weight)");
        return;
    case FP_OP_MUL:
        save_product(p, n, "for the gradient of input 0", "for the gradient of input 1");
        return;
    case FP_OP_DIV:
        if (rg(p, in(n, 0)) || rg(p, in(n, 1)))
            save(p, n, in(n, 1), "input 1", "the divisor, for both gradients");
        if (rg(p, in(n, 1)))
            save(p, n, in(n, 0), "input 0", "the dividend, for the divisor's gradient");
        return;
    case FP_OP_GLOBAL_AVG_POOL:
        save(p, n, in(n, 0), "input 0", "adaptive_avg_pool2d keeps its input");
        return;
    case FP_OP_BATCH_NORM:
    case FP_OP_LAYER_NORM:
    case FP_OP_GROUP_NORM:
    case FP_OP_INSTANCE_NORM:
    case FP_OP_SIMPLIFIED_LAYER_NORM:
        save_norm(p, n);
        return;
    case FP_OP_MAX_POOL:
    case FP_OP_GLOBAL_MAX_POOL:
        save_max_pool(p, n);
        return;
    case FP_OP_DROPOUT:
        save_dropout(p, n);
        return;
    case FP_OP_WHERE:
        save(p, n, in(n, 0), "condition", "where's condition selects the gradients");
        return;
    case FP_OP_GATHER:
        if (!rg(p, in(n, 1)) && activation(in(n, 1)))
            save(p, n, in(n, 1), "indices", "the rows to scatter the gradient to");
        return;
    case FP_OP_GATHER_ELEMENTS:
        save(p, n, in(n, 0), "input 0", "gather's formula takes the whole input");
        save(p, n, in(n, 1), "indices", "where to scatter the gradient");
        return;
    case FP_OP_REDUCE_MEAN:
        if (p->o->autograd == FP_TRAIN_AUTOGRAD_1_13 && mean_dim(n))
            save(p, n, in(n, 0), "input 0", "mean(dim) keeps its input in PyTorch 1.13 (MeanBackward1)");
        return;
    case FP_OP_REDUCE_MAX:
    case FP_OP_REDUCE_MIN:
        save(p, n, in(n, 0), "input 0", "amax/amin compare the input with the result");
        save(p, n, out0(n), "output", "amax/amin compare the input with the result");
        return;
    default: /* sizes only: Add, Sub, views, Concat, Split, pads, resizes, reductions, Cast */
        return;
    }
}

/* ---------------------------------------------------------------- decomposed ops */

bool fp_train_records(const fp_train_saved *s, const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        if (v && v->graph->parent == NULL && s->requires_grad[v->id])
            return true;
    }
    return false;
}

static bool records(const pass *p, const fp_node *n) { return fp_train_records(p->s, n); }

/* The one op reading v, or NULL (several, none, or a graph output). */
static const fp_node *sole_use(const fp_value *v)
{
    return v && v->n_uses == 1 && !v->is_output && v->uses[0].port != UINT32_MAX ? v->uses[0].node : NULL;
}

/* n's input that is not `v` (a binary op), or NULL. */
static const fp_value *other(const fp_node *n, const fp_value *v)
{
    return n->n_inputs == 2 ? (n->inputs[0] == v ? n->inputs[1] : n->inputs[1] == v ? n->inputs[0] : NULL) : NULL;
}

/* x * f(x), f = Sigmoid (SiLU) or HardSigmoid (HardSwish), starting at f: the Mul, or NULL. */
static const fp_node *gated(const fp_node *f)
{
    const fp_node *mul = sole_use(out0(f));
    return mul && mul->op == FP_OP_MUL && other(mul, out0(f)) == in(f, 0) ? mul : NULL;
}

/* Erf-form GELU from its Div: Div(x, c), Erf, Add(c), then Mul by x and Mul by a constant in either
 * order; its last four ops in group[], or false. */
static bool erf_gelu(const fp_node *d, const fp_node **group)
{
    const fp_value *x = in(d, 0);
    const fp_node *e = sole_use(out0(d)), *a = e && e->op == FP_OP_ERF ? sole_use(out0(e)) : NULL;
    if (d->op != FP_OP_DIV || !fp_value_is_constant(in(d, 1)) || !a || a->op != FP_OP_ADD ||
        !fp_value_is_constant(other(a, out0(e))))
        return false;
    const fp_node *m1 = sole_use(out0(a)), *m2 = m1 && m1->op == FP_OP_MUL ? sole_use(out0(m1)) : NULL;
    if (!m2 || m2->op != FP_OP_MUL)
        return false;
    const fp_value *o1 = other(m1, out0(a)), *o2 = other(m2, out0(m1));
    if (!((o1 == x && fp_value_is_constant(o2)) || (fp_value_is_constant(o1) && o2 == x)))
        return false;
    group[0] = e, group[1] = a, group[2] = m1, group[3] = m2;
    return true;
}

/* rsqrt as torch.onnx exports it, from its Sqrt: Div(a constant, Sqrt(x)); the Div, or NULL. */
static const fp_node *rsqrt_div(const fp_node *sq)
{
    const fp_node *d = sole_use(out0(sq));
    return sq->op == FP_OP_SQRT && d && d->op == FP_OP_DIV && fp_value_is_constant(in(d, 0)) && in(d, 1) == out0(sq)
               ? d
               : NULL;
}

/* The op reading v that is of kind op, when v has exactly two readers (a LayerNorm's centred x:
 * Pow and Div), or NULL. */
static const fp_node *reader_of(const fp_value *v, fp_op op)
{
    if (!v || v->n_uses != 2 || v->is_output)
        return NULL;
    for (uint32_t u = 0; u < 2; u++)
        if (v->uses[u].node->op == op)
            return v->uses[u].node;
    return NULL;
}

/* A LayerNorm spelled out from its first ReduceMean: Sub(x, mean), Pow(., 2), ReduceMean, Add(eps),
 * Sqrt, Div(centred, .), Mul(gamma), Add(beta); its last eight ops in group[], or false. */
static bool ln_chain(const fp_node *m, const fp_node **group)
{
    const fp_value *x = in(m, 0);
    const fp_node *sub = sole_use(out0(m));
    if (m->op != FP_OP_REDUCE_MEAN || !sub || sub->op != FP_OP_SUB || in(sub, 0) != x || in(sub, 1) != out0(m))
        return false;
    const fp_node *pw = reader_of(out0(sub), FP_OP_POW), *dv = reader_of(out0(sub), FP_OP_DIV);
    const fp_node *var = pw ? sole_use(out0(pw)) : NULL, *eps = var ? sole_use(out0(var)) : NULL;
    const fp_node *sq = eps ? sole_use(out0(eps)) : NULL;
    if (!pw || !dv || !var || var->op != FP_OP_REDUCE_MEAN || !eps || eps->op != FP_OP_ADD || !sq ||
        sq->op != FP_OP_SQRT || sole_use(out0(sq)) != dv || in(dv, 0) != out0(sub))
        return false;
    const fp_node *mul = sole_use(out0(dv)), *add = mul && mul->op == FP_OP_MUL ? sole_use(out0(mul)) : NULL;
    if (!add || add->op != FP_OP_ADD || !fp_value_is_fixed(other(mul, out0(dv))) ||
        !fp_value_is_fixed(other(add, out0(mul))))
        return false;
    const fp_node *g[8] = {sub, pw, var, eps, sq, dv, mul, add};
    memcpy(group, g, sizeof g);
    return true;
}

/* Counts a recognized decomposed op of `kind` and marks its later members; whether the group
 * records (one of its ops reads a value that requires grad: a LayerNorm's gamma does). */
static bool grouped(pass *p, const fp_node *head, const char *kind, const fp_node *const *members, int n)
{
    bool any = records(p, head);
    for (int i = 0; i < n; i++) {
        p->s->in_group[members[i]->id] = 1;
        any |= records(p, members[i]);
    }
    p->s->decomposed++;
    gpointer c = g_hash_table_lookup(p->kinds, kind);
    g_hash_table_insert(p->kinds, (gpointer)kind, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(c) + 1));
    return any;
}

/* When n starts a decomposed fused op: its saves (the fused op's, when it records) made and true. */
static bool save_decomposed(pass *p, const fp_node *n)
{
    const fp_node *group[8];
    if (n->op == FP_OP_REDUCE_MEAN && ln_chain(n, group)) {
        if (grouped(p, n, "LayerNorm as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add", group, 8)) {
            save(p, n, in(n, 0), "input 0",
                 "LayerNorm (exported as ReduceMean, Sub, Pow, ..., Div, Mul, Add) saves its input");
            save_aux(p, n, 2 * rows_before(in(n, 0), -1), FP_DT_FLOAT, "mean, inverse std",
                     "per-row statistics, in float32");
        }
        return true;
    }
    if ((n->op == FP_OP_SIGMOID || n->op == FP_OP_HARD_SIGMOID) && (group[0] = gated(n))) {
        bool silu = n->op == FP_OP_SIGMOID;
        if (grouped(p, n, silu ? "SiLU as Sigmoid * Mul" : "HardSwish as HardSigmoid * Mul", group, 1))
            save(p, n, in(n, 0), "input 0",
                 silu ? "SiLU (exported as Sigmoid * Mul) saves its input"
                      : "HardSwish (exported as HardSigmoid * Mul) saves its input");
        return true;
    }
    if ((group[0] = rsqrt_div(n))) {
        if (grouped(p, n, "rsqrt as Sqrt, Div(1, .)", group, 1))
            save(p, n, out0(group[0]), "output", "rsqrt (exported as Sqrt, Div(1, .)) saves its result");
        return true;
    }
    if (n->op == FP_OP_DIV && erf_gelu(n, group)) {
        if (grouped(p, n, "GELU as Div, Erf, Add, Mul, Mul", group, 4))
            save(p, n, in(n, 0), "input 0", "GELU (exported as Div, Erf, Add, Mul, Mul) saves its input");
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- entry */

/* The cross-entropy of a causal LM on its logits (PyTorch's cross_entropy: log_softmax, then
 * nll_loss on one row per token): log_softmax's output, float32 as autocast runs it, and the
 * labels nll_loss reads back (int64, one per row), as auxiliaries of the op making the logits. */
static void save_loss(pass *p)
{
    const fp_value *y = p->o->loss_logits;
    if (!y || y->graph != p->g || !y->producer || !rg(p, y) || y->shape.rank < 2)
        return;
    uint64_t numel = numel_of(y);
    int64_t vocab = y->shape.dims[y->shape.rank - 1].value;
    if (!numel || !fp_dim_known(y->shape.dims[y->shape.rank - 1]) || vocab <= 0) {
        p->s->unknown++;
        return;
    }
    save_aux(p, y->producer, numel, FP_DT_FLOAT, "cross-entropy", "log_softmax of the logits, for the loss's gradient");
    save_aux(p, y->producer, numel / (uint64_t)vocab, FP_DT_INT64, "labels", "the targets nll_loss reads back");
}

static gint by_text(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void parameters(pass *p)
{
    for (guint i = 0; i < p->g->values->len; i++) {
        const fp_value *v = p->g->values->pdata[i];
        uint64_t b = 0;
        if (v->kind != FP_VALUE_INITIALIZER || !fp_dtype_is_float(v->dtype) || !fp_shape_numel(&v->shape, &b) ||
            !fp_dtype_bytes(v->dtype, b, &b))
            continue;
        if (trained(p, v)) {
            p->s->parameter_bytes += b;
            p->s->parameters += numel_of(v);
        } else if (numel_of(v) > 1) {
            p->s->buffer_bytes += b;
        }
    }
}

void fp_train_saved_run(const fp_model *m, const fp_train_opts *o, fp_train_saved *out)
{
    memset(out, 0, sizeof *out);
    const fp_graph *g = m->main;
    pass p = {.m = m,
              .g = g,
              .o = o,
              .s = out,
              .seen = g_new0(uint8_t, g->values->len),
              .kinds = g_hash_table_new(g_str_hash, g_str_equal)};
    out->items = g_array_new(FALSE, FALSE, sizeof(fp_saved_item));
    out->requires_grad = g_new0(uint8_t, g->values->len);
    out->in_group = g_new0(uint8_t, g->nodes->len);
    out->notes = g_ptr_array_new_with_free_func(g_free);
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    if (order) {
        propagate(&p, order, n);
        amp_types(&p, order, n);
        parameters(&p);
        for (uint32_t i = 0; i < n; i++) {
            const fp_node *nd = order[i];
            if ((nd->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) || out->in_group[nd->id] || save_decomposed(&p, nd))
                continue;
            if (records(&p, nd))
                save_op(&p, nd);
        }
        save_loss(&p);
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, p.kinds);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_add(out->notes, g_strdup_printf("%zu %s, counted as the fused op (its saves)", GPOINTER_TO_SIZE(v),
                                                    (const char *)k));
    g_ptr_array_sort(out->notes, by_text);
    g_hash_table_unref(p.kinds);
    g_free(p.seen);
}

uint32_t *fp_train_last_reads(const fp_graph *g, fp_node *const *order, uint32_t n)
{
    uint32_t *last = g_new0(uint32_t, g->values->len);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < order[i]->n_outputs; k++)
            if (order[i]->outputs[k])
                last[order[i]->outputs[k]->id] = i;
        for (uint32_t k = 0; k < order[i]->n_inputs; k++) {
            const fp_value *v = order[i]->inputs[k];
            const fp_value *st = v ? fp_train_storage_of(v) : NULL;
            if (st && st->graph == g)
                last[st->id] = MAX(last[st->id], i);
        }
    }
    return last;
}

static gint by_bytes(gconstpointer a, gconstpointer b)
{
    const fp_saved_item *x = *(const fp_saved_item *const *)a, *y = *(const fp_saved_item *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

GPtrArray *fp_train_saved_counted(const fp_train_saved *s)
{
    GPtrArray *rows = g_ptr_array_new();
    for (guint i = 0; i < s->items->len; i++)
        if (g_array_index(s->items, fp_saved_item, i).counted)
            g_ptr_array_add(rows, &g_array_index(s->items, fp_saved_item, i));
    g_ptr_array_sort(rows, by_bytes);
    return rows;
}

void fp_train_saved_clear(fp_train_saved *s)
{
    if (s->items)
        g_array_free(s->items, TRUE);
    g_free(s->requires_grad);
    g_free(s->in_group);
    g_free(s->half);
    if (s->notes)
        g_ptr_array_free(s->notes, TRUE);
    memset(s, 0, sizeof *s);
}
