/* float16.c - float16 ops on an execution provider without float16 kernels (float16.h), as ONNX
 * Runtime 1.30's CPU EP runs them. The EP registers float16 kernels for few ops (half_kernel). A
 * float16 node of another op is assigned to no EP: ORT's constant folding leaves it (unfold), the
 * partitioner inlines the op's ONNX function body where the schema has one at the model's opset
 * (inline_node), or the contrib op's (inline_contrib), and InsertCastTransformer runs the rest in
 * float32 between Casts (convert), the float16-kernel nodes between them too (isolated), then
 * removes Cast pairs, the model's own too, at every level (remove_casts). Measured with
 * onnxruntime-node on one-node float16 models and Cast-pair probes; the ORT functions each step
 * follows are cited in docs/rules.md. */
#include "passes/float16.h"

#include <math.h>
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

/* Whether the CPU EP has a float16 kernel for contrib op `op` (contrib_ops/cpu/cpu_contrib_kernels.cc
 * registers MLFloat16 for these outside `MLAS_F16VEC_INTRINSICS_SUPPORTED`; measured: a float16
 * node of each runs without Casts). Attention, MultiHeadAttention, EmbedLayerNormalization and the
 * Gelu family have float kernels only. */
static bool contrib_half_kernel(fp_op op)
{
    switch (op) {
    case FP_OP_SKIP_LAYER_NORM:
    case FP_OP_SIMPLIFIED_LAYER_NORM:
    case FP_OP_SKIP_SIMPLIFIED_LAYER_NORM:
    case FP_OP_GROUP_QUERY_ATTENTION:
    case FP_OP_ROTARY_EMBEDDING:
    case FP_OP_MATMUL_NBITS:
        return true;
    default:
        return false;
    }
}

/* Whether the CPU EP has a float16 kernel for op (cpu_execution_provider.cc registers MLFloat16 for
 * these, and for the data movement ops whose kernels take any type; measured: a float16 node of
 * each runs without Casts). */
static bool half_kernel(fp_op op)
{
    switch (op) {
    case FP_OP_CAST:
    case FP_OP_CONSTANT:
    case FP_OP_CLIP:
    case FP_OP_MAX:
    case FP_OP_MIN:
    case FP_OP_SIGN:
    case FP_OP_ROUND:
    case FP_OP_MOD:
    case FP_OP_LAYER_NORM:
    case FP_OP_TRANSPOSE:
    case FP_OP_CONCAT:
    case FP_OP_SLICE:
    case FP_OP_SPLIT:
    case FP_OP_GATHER:
    case FP_OP_GATHER_ELEMENTS:
    case FP_OP_EXPAND:
    case FP_OP_IDENTITY:
    case FP_OP_RESHAPE:
    case FP_OP_SQUEEZE:
    case FP_OP_UNSQUEEZE:
    case FP_OP_FLATTEN:
    case FP_OP_SHAPE:
    case FP_OP_SIZE:
        return true;
    default:
        return contrib_half_kernel(op);
    }
}

/* Whether n, without a float16 kernel, runs in float32 (ORT has float32 kernels for all of them):
 * a compute op, or a data movement op measured without a float16 kernel. Not control flow, nor an
 * op fuseplan does not know. */
static bool float_kernel(const fp_node *n)
{
    if (fp_op_has(n->op, FP_OPF_CTRL) || half_kernel(n->op))
        return false;
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
        return !fp_op_has(n->op, FP_OPF_VIEW);
    default:
        break;
    }
    switch (n->op) {
    case FP_OP_DROPOUT:
    case FP_OP_TILE:
    case FP_OP_PAD:
    case FP_OP_RESIZE:
    case FP_OP_DEPTH_TO_SPACE:
    case FP_OP_CUM_SUM:
        return true;
    default:
        return false;
    }
}

static bool reads_half(const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && n->inputs[k]->dtype == FP_DT_FLOAT16)
            return true;
    return false;
}

bool fp_float16_unassigned(const fp_node *n)
{
    return !(n->flags & FP_NODE_REMOVED) && float_kernel(n) && reads_half(n);
}

/* ORT's constant folding (level 1, before partitioning) computes a node only with a CPU kernel for
 * its types: an unassigned node stays, and so does every node that reads what one writes. Undoes
 * the shape pass's folding of those, in topological order (the Concat ReshapeFusion makes
 * constant whatever its inputs, FP_NODE_RESHAPE_CONST, stays folded); returns how many. */
static uint32_t unfold(fp_graph *g)
{
    uint32_t n_order = 0, count = 0;
    fp_node *const *order = fp_graph_order(g, &n_order, NULL);
    for (uint32_t i = 0; order && i < n_order; i++) {
        fp_node *n = order[i];
        if (!(n->flags & FP_NODE_FOLDED) || (n->flags & FP_NODE_RESHAPE_CONST) || n->op == FP_OP_CONSTANT ||
            fp_op_has(n->op, FP_OPF_SHAPEOF))
            continue; /* Shape and Size fold on a static shape alone; ReshapeFusion's constant, on its own */
        bool keep = fp_float16_unassigned(n);
        for (uint32_t k = 0; k < n->n_inputs && !keep; k++) {
            const fp_value *v = n->inputs[k];
            keep = v && v->producer && fp_node_live(v->producer);
        }
        if (!keep)
            continue;
        n->flags &= ~(uint16_t)FP_NODE_FOLDED;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                fp_value_set_fold(n->outputs[k], NULL);
        count++;
    }
    return count;
}

/* Float16 constant w (a weight or a folded result), held inline, folded to float32 into out (as ORT's initializer folding makes a
 * float32 initializer of it): the rules read its values. */
static void fold_float(fp_model *m, const fp_value *w, fp_value *out)
{
    const fp_tensor *t = w->tensor ? w->tensor : fp_value_fold(w);
    uint64_t n = 0;
    if (!t || t->where != FP_DATA_INLINE || t->dtype != FP_DT_FLOAT16 || !fp_shape_numel(&t->shape, &n) ||
        t->nbytes < 2 * n)
        return;
    float *f = fp_arena_calloc(m->arena, MAX(n, 1), sizeof(float));
    for (uint64_t k = 0; k < n; k++) {
        uint16_t h;
        memcpy(&h, (const uint8_t *)t->data + 2 * k, 2);
        f[k] = (float)fp_half_to_double(h);
    }
    fp_tensor *ft = fp_arena_calloc(m->arena, 1, sizeof(fp_tensor));
    *ft = (fp_tensor){.dtype = FP_DT_FLOAT, .where = FP_DATA_INLINE, .shape = t->shape, .nbytes = 4 * n, .data = f};
    fp_value_set_fold(out, ft);
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
    if (folded) {
        c->flags |= FP_NODE_FOLDED;
        fold_float(m, from, out);
    }
    return out;
}

/* A float32 scalar initializer of n's graph named after n and `what`, holding x (a constant of a
 * function body: CastLike(Constant, X) reads it). */
static fp_value *scalar(const fp_node *n, const char *what, float x)
{
    g_autofree char *name = g_strdup_printf("%s/%s", n->name, what);
    fp_value *v = fp_graph_initializer(n->graph, name, FP_DT_FLOAT, (fp_shape){0, NULL}, &x, sizeof x);
    v->overridable = true; /* no constant to the rules: ORT inlines after its level-1 rules ran */
    return v;
}

/* A body constant x as the body reads it: CastLike to float16, a Cast ORT keeps where a float16
 * kernel (Max, Min) reads it; where only float32 nodes read it, ORT's RemoveDuplicateCastTransformer
 * removes that Cast with the one InsertCastTransformer puts after it, and the float32 scalar is read. */
static fp_value *body_const(fp_model *m, const fp_node *n, const char *what, float x, bool half)
{
    fp_value *v = scalar(n, what, x);
    return half ? cast(m, v, FP_DT_FLOAT16, NULL, false) : v;
}

/* A new node of n's graph of op `op` (type name `type`) named after n and `what`, reading ins[0..k)
 * and writing one new value shaped as `like` (or `shape` when not NULL) of dtype dt. */
static fp_value *body_node(fp_model *m, const fp_node *n, fp_op op, const char *type, const char *what,
                           fp_value *const *ins, uint32_t k, const fp_value *like, const fp_shape *shape, fp_dtype dt)
{
    g_autofree char *name = g_strdup_printf("%s/%s", n->name, what);
    fp_node *b = fp_node_new_attrs(n->graph, op, type, "", name, k, 1, 1);
    memcpy(b->inputs, ins, k * sizeof *ins);
    b->opset = n->opset;
    b->attrs[0] = (fp_attr){.name = fp_intern(m, "keepdims", -1), .type = FP_ATTR_INT, .u.i = 1};
    b->n_attrs = (op == FP_OP_REDUCE_MAX || op == FP_OP_REDUCE_SUM) ? 1 : 0;
    fp_value *out = fp_graph_value_like(n->graph, name, like, dt);
    if (shape)
        out->shape = *shape;
    fp_node_set_output(b, 0, out);
    return out;
}

/* n becomes the last node of its body: op `op` reading ins[0..k), writing what n wrote. */
static void retype(fp_model *m, fp_node *n, fp_op op, const char *type, fp_value *const *ins, uint32_t k)
{
    n->inputs = fp_arena_calloc(m->arena, k, sizeof(fp_value *));
    memcpy(n->inputs, ins, k * sizeof *ins);
    n->n_inputs = k;
    n->n_attrs = 0;
    n->op = op;
    n->op_type = fp_intern(m, type, -1);
    n->domain = fp_intern(m, "", -1);
}

/* Softmax-13's body: Div(Exp(Sub(x, ReduceMax(x))), ReduceSum(Exp(...))) over `axis`, kept dims. */
static void inline_softmax(fp_model *m, fp_node *n)
{
    fp_value *x = n->inputs[0];
    int64_t axis = fp_node_attr_int(n, "axis", -1);
    if (axis < 0)
        axis += x->shape.rank;
    g_autofree char *aname = g_strdup_printf("%s/axes", n->name);
    fp_value *axes = fp_graph_int64_initializer(n->graph, aname, &axis, 1);
    fp_shape red = x->shape;
    if (axis >= 0 && axis < red.rank) {
        red.dims = fp_arena_memdup(m->arena, x->shape.dims, (size_t)red.rank * sizeof(fp_dim));
        red.dims[axis] = (fp_dim){1, NULL};
    }
    fp_value *mx = body_node(m, n, FP_OP_REDUCE_MAX, "ReduceMax", "max", (fp_value *[]){x, axes}, 2, x, &red, x->dtype);
    fp_value *sub = body_node(m, n, FP_OP_SUB, "Sub", "sub", (fp_value *[]){x, mx}, 2, x, NULL, x->dtype);
    fp_value *ex = body_node(m, n, FP_OP_EXP, "Exp", "exp", (fp_value *[]){sub}, 1, x, NULL, x->dtype);
    fp_value *sum = body_node(m, n, FP_OP_REDUCE_SUM, "ReduceSum", "sum", (fp_value *[]){ex, axes}, 2, x, &red,
                              x->dtype);
    retype(m, n, FP_OP_DIV, "Div", (fp_value *[]){ex, sum}, 2);
}

/* The function body of float16 node n as ORT 1.30 inlines it (Relu-14, LeakyRelu-16 and
 * HardSigmoid-6 at the opsets measured, Softmax-13 from 13): its nodes added, n retyped as the
 * last of them. Returns whether n had one. */
static bool inline_node(fp_model *m, fp_node *n)
{
    fp_value *x = n->inputs[0];
    fp_dtype h = FP_DT_FLOAT16;
    if (n->op == FP_OP_RELU && n->opset == 18) {
        retype(m, n, FP_OP_MAX, "Max", (fp_value *[]){x, body_const(m, n, "zero", 0, true)}, 2);
    } else if (n->op == FP_OP_LEAKY_RELU && n->opset >= 16 && n->opset <= 18) {
        float alpha = (float)fp_node_attr_float(n, "alpha", 0.01);
        fp_value *lt = body_node(m, n, FP_OP_LESS, "Less", "less",
                                 (fp_value *[]){x, body_const(m, n, "zero", 0, false)}, 2, x, NULL, FP_DT_BOOL);
        fp_value *mul = body_node(m, n, FP_OP_MUL, "Mul", "mul",
                                  (fp_value *[]){body_const(m, n, "alpha", alpha, false), x}, 2, x, NULL, h);
        retype(m, n, FP_OP_WHERE, "Where", (fp_value *[]){lt, mul, x}, 3);
    } else if (n->op == FP_OP_HARD_SIGMOID && n->opset == 18) {
        float alpha = (float)fp_node_attr_float(n, "alpha", 0.2), beta = (float)fp_node_attr_float(n, "beta", 0.5);
        fp_value *mul = body_node(m, n, FP_OP_MUL, "Mul", "mul",
                                  (fp_value *[]){x, body_const(m, n, "alpha", alpha, false)}, 2, x, NULL, h);
        fp_value *add = body_node(m, n, FP_OP_ADD, "Add", "add",
                                  (fp_value *[]){mul, body_const(m, n, "beta", beta, false)}, 2, x, NULL, h);
        fp_value *mn = body_node(m, n, FP_OP_MIN, "Min", "min", (fp_value *[]){add, body_const(m, n, "one", 1, true)},
                                 2, x, NULL, h);
        retype(m, n, FP_OP_MAX, "Max", (fp_value *[]){mn, body_const(m, n, "zero", 0, true)}, 2);
    } else if (n->op == FP_OP_SOFTMAX && n->opset >= 13) {
        inline_softmax(m, n);
    } else {
        return false;
    }
    return true;
}

/* Gelu-20's body at opset 20 on (onnx/defs/math/defs.cc, BuildContextDependentFunctionBodyGelu):
 * approximate "none": Mul(Mul(Half, X), Sum(One, Erf(Div(X, Sqrt(Two))))); "tanh":
 * Mul(Mul(Half, X), Sum(One, Tanh(Mul(Sqrt(TwoOverPi), Sum(X, Mul(C0, Pow(X, Three))))))). Its
 * constants pass through CastLike, as body_const says; the Sqrt of one, which nothing folds after
 * the level-1 loop, reads and writes float32. Returns whether n is such a Gelu. */
static bool inline_gelu(fp_model *m, fp_node *n)
{
    if (n->op != FP_OP_GELU || strcmp(n->domain, "") != 0 || n->opset < 20)
        return false;
    fp_value *x = n->inputs[0], *t, *s;
    fp_dtype h = FP_DT_FLOAT16;
    const fp_shape scalar = {0, NULL};
    bool approx = strcmp(fp_node_attr_string(n, "approximate", "none"), "tanh") == 0;
    fp_value *half_x = body_node(m, n, FP_OP_MUL, "Mul", "MultX",
                                 (fp_value *[]){body_const(m, n, "Half", 0.5f, false), x}, 2, x, NULL, h);
    if (approx) {
        t = body_node(m, n, FP_OP_POW, "Pow", "XCubed", (fp_value *[]){x, body_const(m, n, "Three", 3, false)}, 2, x,
                      NULL, h);
        t = body_node(m, n, FP_OP_MUL, "Mul", "XCubedC0", (fp_value *[]){body_const(m, n, "C0", 0.044715f, false), t},
                      2, x, NULL, h);
        t = body_node(m, n, FP_OP_SUM, "Sum", "XC0XCubed", (fp_value *[]){x, t}, 2, x, NULL, h);
        s = body_node(m, n, FP_OP_SQRT, "Sqrt", "SqrtTwoOverPi",
                      (fp_value *[]){body_const(m, n, "TwoOverPi", (float)M_2_PI, false)}, 1, x, &scalar, FP_DT_FLOAT);
        t = body_node(m, n, FP_OP_MUL, "Mul", "TanhInput", (fp_value *[]){s, t}, 2, x, NULL, h);
        t = body_node(m, n, FP_OP_TANH, "Tanh", "ErfApprox", (fp_value *[]){t}, 1, x, NULL, h);
    } else {
        s = body_node(m, n, FP_OP_SQRT, "Sqrt", "SqrtTwo", (fp_value *[]){body_const(m, n, "Two", 2, false)}, 1, x,
                      &scalar, FP_DT_FLOAT);
        t = body_node(m, n, FP_OP_DIV, "Div", "XSqrt", (fp_value *[]){x, s}, 2, x, NULL, h);
        t = body_node(m, n, FP_OP_ERF, "Erf", "ErfXSqrt", (fp_value *[]){t}, 1, x, NULL, h);
    }
    t = body_node(m, n, FP_OP_SUM, "Sum", "Phi", (fp_value *[]){body_const(m, n, "One", 1, false), t}, 2, x, NULL, h);
    retype(m, n, FP_OP_MUL, "Mul", (fp_value *[]){half_x, t}, 2);
    return true;
}

/* A float16 scalar initializer of n's graph named after n and `what`, holding x: a constant of a
 * contrib op's function body, which builds it in the input's type (`ToTensor(x, elem_type)`) and
 * ORT's inliner makes an initializer; level 4 folds its Cast like a weight's. */
static fp_value *half_scalar(const fp_node *n, const char *what, float x)
{
    g_autofree char *name = g_strdup_printf("%s/%s", n->name, what);
    uint16_t h = fp_double_to_half(x);
    return fp_graph_initializer(n->graph, name, FP_DT_FLOAT16, (fp_shape){0, NULL}, &h, sizeof h);
}

/* body_node for a contrib op's body, whose nodes are of the model's ai.onnx opset. */
static fp_value *contrib_body_node(fp_model *m, const fp_node *n, fp_op op, const char *type, const char *what,
                                   fp_value *const *ins, uint32_t k)
{
    fp_value *out = body_node(m, n, op, type, what, ins, k, n->inputs[0], NULL, FP_DT_FLOAT16);
    out->producer->opset = (int16_t)fp_model_opset(m, "");
    return out;
}

/* FastGelu-1's body (onnxruntime/core/graph/contrib_ops/bert_defs.cc): X_bias = Add(X, bias), or
 * Identity(X) without one; a * X_bias * (one + Tanh(X_bias * (b + c * X_bias * X_bias))). */
static void inline_fast_gelu(fp_model *m, fp_node *n)
{
    fp_value *x = n->inputs[0], *bias = n->n_inputs > 1 ? n->inputs[1] : NULL;
    fp_value *xb = bias ? contrib_body_node(m, n, FP_OP_ADD, "Add", "X_bias", (fp_value *[]){x, bias}, 2)
                        : contrib_body_node(m, n, FP_OP_IDENTITY, "Identity", "X_bias", (fp_value *[]){x}, 1);
    fp_value *a = half_scalar(n, "a", 0.5f), *b = half_scalar(n, "b", 0.797885f);
    fp_value *c = half_scalar(n, "c", 0.035677f), *one = half_scalar(n, "one", 1.0f);
    fp_value *t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "T1", (fp_value *[]){xb, xb}, 2);
    t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "T2", (fp_value *[]){c, t}, 2);
    t = contrib_body_node(m, n, FP_OP_ADD, "Add", "T3", (fp_value *[]){b, t}, 2);
    t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "T4", (fp_value *[]){xb, t}, 2);
    t = contrib_body_node(m, n, FP_OP_TANH, "Tanh", "T5", (fp_value *[]){t}, 1);
    t = contrib_body_node(m, n, FP_OP_ADD, "Add", "T6", (fp_value *[]){one, t}, 2);
    t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "T7", (fp_value *[]){xb, t}, 2);
    retype(m, n, FP_OP_MUL, "Mul", (fp_value *[]){a, t}, 2);
}

/* Gelu-1's body (com.microsoft; onnxruntime/core/graph/contrib_ops/contrib_defs.cc):
 * Mul(X, Mul(Add(Erf(Mul(C, X)), One), Half)), C = sqrt(1/2). */
static void inline_ms_gelu(fp_model *m, fp_node *n)
{
    fp_value *x = n->inputs[0], *c = half_scalar(n, "C", (float)M_SQRT1_2);
    fp_value *t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "CX", (fp_value *[]){c, x}, 2);
    t = contrib_body_node(m, n, FP_OP_ERF, "Erf", "ERFCX", (fp_value *[]){t}, 1);
    t = contrib_body_node(m, n, FP_OP_ADD, "Add", "ERFCXPlus1", (fp_value *[]){t, half_scalar(n, "One", 1.0f)}, 2);
    t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "PhiX", (fp_value *[]){t, half_scalar(n, "Half", 0.5f)}, 2);
    retype(m, n, FP_OP_MUL, "Mul", (fp_value *[]){x, t}, 2);
}

/* QuickGelu-1's body (contrib_defs.cc): Mul(X, Sigmoid(Mul(Alpha, X))), Alpha the attribute. */
static void inline_quick_gelu(fp_model *m, fp_node *n)
{
    fp_value *x = n->inputs[0], *alpha = half_scalar(n, "Alpha", (float)fp_node_attr_float(n, "alpha", 1.702));
    fp_value *t = contrib_body_node(m, n, FP_OP_MUL, "Mul", "CX", (fp_value *[]){alpha, x}, 2);
    t = contrib_body_node(m, n, FP_OP_SIGMOID, "Sigmoid", "SIGMOIDCX", (fp_value *[]){t}, 1);
    retype(m, n, FP_OP_MUL, "Mul", (fp_value *[]){x, t}, 2);
}

/* The function body of float16 contrib node n as ORT 1.30 inlines it (FastGelu, Gelu and QuickGelu
 * of com.microsoft: their schemas build one for any input type, and the CPU EP has no float16
 * kernel for them; BiasGelu and FusedMatMul have no body and run in float32): its nodes added, n
 * retyped as the last of them. Returns whether n had one. */
static bool inline_contrib(fp_model *m, fp_node *n)
{
    if (strcmp(n->domain, "com.microsoft") != 0)
        return false;
    if (n->op == FP_OP_FAST_GELU)
        inline_fast_gelu(m, n);
    else if (n->op == FP_OP_GELU)
        inline_ms_gelu(m, n);
    else if (n->op == FP_OP_QUICK_GELU)
        inline_quick_gelu(m, n);
    else
        return false;
    n->opset = (int16_t)fp_model_opset(m, "");
    return true;
}

/* What ORT's partitioner does to float16 nodes before its level-2 fusions: the function bodies it
 * inlines. Returns the nodes changed; m linked again when any. */
static uint32_t partition(fp_model *m)
{
    fp_graph *g = m->main;
    uint32_t count = 0;
    guint nn = g->nodes->len; /* the body nodes added here are not inlined again */
    for (guint i = 0; i < nn; i++) {
        fp_node *n = g->nodes->pdata[i];
        if (fp_node_live(n) && n->n_inputs >= 1 && n->inputs[0] && n->inputs[0]->dtype == FP_DT_FLOAT16 &&
            (inline_node(m, n) || inline_gelu(m, n) || inline_contrib(m, n)))
            count++;
    }
    if (count)
        fp_model_link(m);
    return count;
}

/* Whether input k of n is one InsertCastTransformer's IsIsolatedFp16NodeOnCpu looks at: it takes
 * the first input of each formal parameter of the schema, so of a variadic op (Max, Min, Sum,
 * Mean, Concat) the first only. */
static bool formal_first(const fp_node *n, uint32_t k)
{
    switch (n->op) {
    case FP_OP_MAX:
    case FP_OP_MIN:
    case FP_OP_SUM:
    case FP_OP_MEAN:
    case FP_OP_CONCAT:
        return k == 0;
    default:
        return true;
    }
}

/* Whether live node n, which has a float16 kernel, runs in float32 too (IsIsolatedFp16NodeOnCpu):
 * it reads a node's output, writes no graph output, the float16 inputs it looks at (formal_first)
 * come from nodes that run in float32 or from no node, and every node that reads a float16 output
 * of it runs in float32. */
static bool isolated(const fp_node *n, const uint8_t *conv)
{
    if (!half_kernel(n->op) || n->op == FP_OP_CAST || n->op == FP_OP_CONSTANT || fp_op_has(n->op, FP_OPF_CTRL))
        return false;
    bool edge = false, half_in = false, half_out = false;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        bool from_node = v && v->producer && fp_node_live(v->producer);
        edge |= from_node;
        if (!v || v->dtype != FP_DT_FLOAT16 || !formal_first(n, k))
            continue;
        half_in = true;
        if (from_node && !conv[v->producer->id])
            return false;
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const fp_value *v = n->outputs[k];
        if (v && v->is_output)
            return false;
        for (uint32_t u = 0; v && v->dtype == FP_DT_FLOAT16 && u < v->n_uses; u++) {
            half_out = true;
            if (!conv[v->uses[u].node->id])
                return false;
        }
    }
    return edge && half_in && half_out;
}

/* Output v of a converted node: a float32 value of a name of its own that the converted readers
 * read (InsertCastTransformer names the float32 output anew, whoever reads it); where an op that
 * stays float16 or the graph reads v, a Cast writes v from it in float16, else v goes. */
static uint32_t convert_output(fp_model *m, fp_value *v, const uint8_t *conv)
{
    bool others = v->is_output; /* a folded reader (a Shape) is no edge */
    for (uint32_t u = 0; u < v->n_uses && !others; u++)
        others = !conv[v->uses[u].node->id] && fp_node_live(v->uses[u].node);
    g_autofree char *name = g_strdup_printf("%s/float", v->name);
    fp_value *inner = fp_graph_value_like(v->graph, name, v, FP_DT_FLOAT);
    fp_node_set_output(v->producer, v->producer_port, inner);
    for (uint32_t u = 0; u < v->n_uses; u++) { /* with no Cast back, the folded readers too */
        fp_node *r = v->uses[u].node;
        if ((conv[r->id] || !others) && v->uses[u].port != UINT32_MAX)
            r->inputs[v->uses[u].port] = inner;
    }
    if (!others) {
        v->producer = NULL;
        return 0;
    }
    cast(m, inner, FP_DT_FLOAT16, v, false);
    return 1;
}

/* The float32 value a float32 reader of v reads instead of v when a Cast to float16 of a float32
 * value writes v: RemoveDuplicateCastTransformer removes that Cast with the one back that
 * InsertCastTransformer adds, and the Cast too when only float32 nodes read v. Not when that
 * Cast reads a Cast from float16: the remover, in node order, cancels that earlier pair first
 * (remove_cast_pairs), and the inserted Cast then reads the float16 value. The same through an
 * Identity fuseplan keeps where ORT's transpose optimizer removed an identity Transpose (its
 * producer then writes the Identity's output). Else NULL. */
static fp_value *cast_pair(fp_value *v, const uint8_t *conv)
{
    fp_node *c = v->producer;
    if (c && c->op == FP_OP_IDENTITY && fp_node_live(c) && c->inputs[0] && c->inputs[0]->producer &&
        c->inputs[0]->producer->op == FP_OP_CAST)
        c = c->inputs[0]->producer;
    else if (!c || c->op != FP_OP_CAST)
        return NULL;
    if (!fp_node_live(c) || !c->inputs[0] || c->inputs[0]->dtype != FP_DT_FLOAT)
        return NULL;
    const fp_node *p = c->inputs[0]->producer;
    if (p && p->op == FP_OP_CAST && fp_node_live(p) && p->inputs[0] && p->inputs[0]->dtype == v->dtype &&
        !c->outputs[0]->is_output)
        return NULL; /* p, before the inserted Cast, cancels c: the inserted Cast reads p's input */
    bool others = v->is_output || v != c->outputs[0];
    for (uint32_t u = 0; u < v->n_uses && !others; u++)
        others = !conv[v->uses[u].node->id];
    if (!others)
        c->flags |= FP_NODE_REMOVED;
    return c->inputs[0];
}

/* The nodes of g that run in float32 (conv[id] = 1): the unassigned ones, then, in node order, the
 * isolated float16-kernel ones (each one found counts for the next). Returns how many. */
static uint32_t mark(const fp_graph *g, uint8_t *conv)
{
    uint32_t n_conv = 0;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        conv[i] = fp_node_live(n) && fp_float16_unassigned(n);
        n_conv += conv[i];
    }
    for (guint i = 0; n_conv && i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        if (!conv[i] && fp_node_live(n) && isolated(n, conv)) {
            conv[i] = 1;
            n_conv++;
        }
    }
    return n_conv;
}

/* The float16 constants the nodes that run in float32 read, each with the count of those inputs
 * (value -> count): the output edges of the one Cast InsertCastTransformer puts after each. */
static GHashTable *half_constant_reads(const fp_graph *g, const uint8_t *conv)
{
    GHashTable *reads = g_hash_table_new(NULL, NULL);
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        for (uint32_t k = 0; conv[i] && k < n->n_inputs; k++) {
            const fp_value *v = n->inputs[k];
            if (v && v->dtype == FP_DT_FLOAT16 && fp_value_is_constant(v))
                g_hash_table_insert(reads, (gpointer)v,
                                    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(reads, v)) + 1));
        }
    }
    return reads;
}

/* Whether ORT's level-4 initializer folding (FuseInitializersTransformer) folds the Cast of a
 * float16 constant of `reads` (half_constant_reads): one of one output edge. It then changes the
 * graph and ORT's loop runs the fusions again on the float32 ops; without one they ran before the
 * Casts. */
static bool folds_a_cast(GHashTable *reads)
{
    GHashTableIter it;
    gpointer count;
    g_hash_table_iter_init(&it, reads);
    while (g_hash_table_iter_next(&it, NULL, &count))
        if (GPOINTER_TO_UINT(count) == 1)
            return true;
    return false;
}

/* The type groups of RemoveDuplicateCastTransformer's UnsafeCast (insert_cast_transformer.cc). */
typedef enum { CAST_UNKNOWN, CAST_BOOL, CAST_SIGNED, CAST_UNSIGNED, CAST_FLOAT } cast_group;

static cast_group group_of(fp_dtype t)
{
    switch (t) {
    case FP_DT_BOOL:
        return CAST_BOOL;
    case FP_DT_INT8:
    case FP_DT_INT16:
    case FP_DT_INT32:
    case FP_DT_INT64:
        return CAST_SIGNED;
    case FP_DT_UINT8:
    case FP_DT_UINT16:
    case FP_DT_UINT32:
    case FP_DT_UINT64:
        return CAST_UNSIGNED;
    case FP_DT_FLOAT16:
    case FP_DT_BFLOAT16:
    case FP_DT_FLOAT:
    case FP_DT_DOUBLE:
        return CAST_FLOAT;
    default:
        return CAST_UNKNOWN;
    }
}

/* Whether Cast c from dtype `from` to `to` loses precision as RemoveDuplicateCastTransformer's
 * UnsafeCast sees it: a type outside its groups; a signed or float type to an unsigned one; a
 * float to a non-float; an unsigned to a signed or any integer to a float type no wider; float16
 * to bfloat16 and back; else a narrower type, unless InsertCastTransformer put c in (node id
 * `inserted` on). Bool counts one bit. */
static bool lossy(const fp_node *c, fp_dtype from, fp_dtype to, uint32_t inserted)
{
    cast_group f = group_of(from), g = group_of(to);
    unsigned fb = from == FP_DT_BOOL ? 1 : fp_dtype_bits(from), tb = to == FP_DT_BOOL ? 1 : fp_dtype_bits(to);
    if (f == CAST_UNKNOWN || g == CAST_UNKNOWN || (f != CAST_BOOL && f != CAST_UNSIGNED && g == CAST_UNSIGNED) ||
        (f == CAST_FLOAT && g != CAST_FLOAT))
        return true;
    if ((f == CAST_UNSIGNED && g == CAST_SIGNED) || ((f == CAST_SIGNED || f == CAST_UNSIGNED) && g == CAST_FLOAT))
        return tb <= fb;
    if ((from == FP_DT_FLOAT16 && to == FP_DT_BFLOAT16) || (from == FP_DT_BFLOAT16 && to == FP_DT_FLOAT16))
        return true;
    return fb > tb && c->id < inserted;
}

/* Whether n is in the graph: none of the flags `skip` set. */
static bool present(const fp_node *n, unsigned skip) { return n && !(n->flags & skip); }

/* Whether the Cast readers of a's output (present: none of `skip`) all pair with a as
 * RemoveDuplicateCastTransformer needs: when a loses precision, none of them undoes a lossy cast. */
static bool pairs_ok(const fp_node *a, uint32_t inserted, unsigned skip)
{
    const fp_value *x = a->inputs[0], *y = a->outputs[0];
    if (!lossy(a, x->dtype, y->dtype, inserted))
        return true;
    for (uint32_t u = 0; u < y->n_uses; u++) {
        const fp_node *b = y->uses[u].node;
        if (b->op == FP_OP_CAST && present(b, skip) && b->outputs[0] &&
            lossy(b, b->outputs[0]->dtype, y->dtype, inserted))
            return false;
    }
    return true;
}

/* RemoveDuplicateCastTransformer, in node order, on the nodes without the flags `skip`: of a Cast
 * a, each Cast reader b back to a's input type that writes no graph output goes (its readers read
 * a's input); a goes too when only Casts read it and it writes no graph output (the kept ones read
 * its input), unless a loses precision and a kept one casts to bool. Nodes of id `inserted` on are
 * InsertCastTransformer's. Returns the Casts removed; with `dry`, those it would remove, g
 * unchanged (0 exactly when it would remove none). */
static uint32_t remove_cast_pairs(fp_graph *g, uint32_t inserted, unsigned skip, bool dry)
{
    uint32_t removed = 0;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *a = g->nodes->pdata[i];
        if (a->op != FP_OP_CAST || !present(a, skip) || !a->inputs[0] || !a->outputs[0] || !pairs_ok(a, inserted, skip))
            continue;
        fp_value *x = a->inputs[0], *y = a->outputs[0];
        uint32_t casts = 0, readers = 0; /* of the present readers (a skipped one is no edge) */
        bool kept_bool = false;          /* a kept reader casts to bool */
        for (uint32_t u = 0; u < y->n_uses; u++) {
            fp_node *b = y->uses[u].node;
            bool here = present(b, skip);
            readers += here;
            if (b->op != FP_OP_CAST || !here || !b->outputs[0] || y->uses[u].port == UINT32_MAX)
                continue;
            casts++;
            if (!b->outputs[0]->is_output && b->outputs[0]->dtype == x->dtype) {
                if (!dry) {
                    fp_value_move_readers(b->outputs[0], x);
                    b->flags |= FP_NODE_REMOVED;
                }
                removed++;
            } else
                kept_bool |= b->outputs[0]->dtype == FP_DT_BOOL;
        }
        if (!readers || casts < readers || y->is_output || (kept_bool && lossy(a, x->dtype, y->dtype, inserted)))
            continue;
        if (!dry) {
            fp_value_move_readers(y, x);
            a->flags |= FP_NODE_REMOVED;
        }
        removed++;
    }
    return removed;
}

/* remove_cast_pairs until none goes, m linked again after each round that removed some (ORT
 * rewires the edges as it removes, so a later Cast sees the readers an earlier removal gave it);
 * the Casts removed. */
static uint32_t remove_casts(fp_model *m, uint32_t inserted, unsigned skip)
{
    uint32_t removed = 0, now = 0;
    for (int round = 0; round < 8 && (now = remove_cast_pairs(m->main, inserted, skip, false)); round++) {
        removed += now;
        fp_model_link(m);
    }
    return removed;
}

/* InsertCastTransformer: the marked nodes run in float32, their float16 inputs through one Cast
 * each (an initializer's folded at `stage` BEFORE when one input reads it: FuseInitializers-
 * Transformer's IsCastNodeWithConstraints wants one output edge), a Cast back where others read an
 * output. At BEFORE, m linked again and RemoveDuplicateCastTransformer then (remove_casts); at the
 * other stages fp_pass_float16 does both after it. */
static uint32_t convert(fp_model *m, const fp_target *t, fp_float16_stage stage, fp_diag *diag)
{
    fp_graph *g = m->main;
    guint nn = g->nodes->len;
    g_autofree uint8_t *conv = g_new0(uint8_t, nn + 1);
    uint32_t n_conv = mark(g, conv), casts = 0;
    if (!n_conv)
        return 0;
    g_autoptr(GHashTable) reads = half_constant_reads(g, conv);
    if (stage == FP_FLOAT16_BEFORE_FUSION && !folds_a_cast(reads))
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
            if (!(f = g_hash_table_lookup(to_float, v)) && !(f = cast_pair(v, conv))) {
                /* an initializer after constant folding, its Cast of one output edge */
                bool fold = GPOINTER_TO_UINT(g_hash_table_lookup(reads, v)) == 1;
                f = cast(m, v, FP_DT_FLOAT, NULL, fold && stage == FP_FLOAT16_BEFORE_FUSION);
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
    if (stage == FP_FLOAT16_BEFORE_FUSION) { /* at the others fp_pass_float16 links m and runs it next */
        fp_model_link(m);
        remove_casts(m, nn, FP_NODE_REMOVED | FP_NODE_FOLDED);
    }
    return casts;
}

uint32_t fp_pass_float16(fp_model *m, const fp_target *t, fp_float16_stage stage, fp_diag *diag)
{
    fp_float16_stage when = fp_float16_stage_of(t);
    if (stage == FP_FLOAT16_NONE || when == FP_FLOAT16_NONE)
        return 0;
    if (stage == FP_FLOAT16_CONSTANT_FOLDING) {
        uint32_t count = unfold(m->main);
        if (count)
            fp_model_link(m);
        return count;
    }
    /* at level disabled ORT runs the shape computations: their Casts too */
    if (stage == FP_FLOAT16_LOAD)
        return remove_cast_pairs(m->main, m->main->nodes->len, FP_NODE_REMOVED, true);
    if (stage == FP_FLOAT16_UNOPTIMIZED) { /* a folded reader is a kernel when no constant folding runs */
        uint32_t nn = m->main->nodes->len, changed = partition(m) + convert(m, t, stage, diag);
        fp_model_link(m);
        return changed + remove_casts(m, nn, FP_NODE_REMOVED);
    }
    uint32_t nn = m->main->nodes->len, changed = stage == FP_FLOAT16_BEFORE_FUSION ? partition(m) : 0;
    /* at AFTER, the Casts BEFORE left for after the fusions too (convert finds none else) */
    if (when == stage || stage == FP_FLOAT16_AFTER_FUSION)
        changed += convert(m, t, stage, diag);
    if (stage == FP_FLOAT16_AFTER_FUSION || stage == FP_FLOAT16_REMOVE_CASTS) { /* the inserted and the model's */
        fp_model_link(m);
        remove_casts(m, nn, FP_NODE_REMOVED | FP_NODE_FOLDED);
    }
    return changed;
}
