/* ortplan.c - the ORT allocation pass: ONNX Runtime's CPU arena running a graph. Its sequential
 * planner's buffer reuse replayed over its execution order, the BFC arena replayed over the first
 * run's requests, the memory pattern of later runs, and the initializers it keeps. Rules and their
 * sources in ORT: docs/memory.md, "ONNX Runtime's allocation". */
#include "ortplan.h"

#include <string.h>

#include "passes/memory/liveness.h"
#include "passes/memory/memplan.h"

/* Rounds up to a multiple of `to`, saturating. */
static uint64_t round_to(uint64_t bytes, uint64_t to)
{
    uint64_t r;
    return fp_memplan_align(bytes, to, &r) ? r : UINT64_MAX;
}

static void add_sat(uint64_t *sum, uint64_t bytes)
{
    if (!g_uint64_checked_add(sum, *sum, bytes))
        *sum = UINT64_MAX;
}

/* Initializers under this many bytes stay in the session's arena; larger ones are held by the
 * loaded graph outside it (ORT keeps tensors above 127 bytes as in-memory external data). */
#define ORT_SMALL_INITIALIZER 128u

/* Whether n is a Gemm: ONNX's, or the FusedGemm (com.microsoft) of a Gemm and its activation that
 * ORT's level-2 fusion makes, whose kernel packs as Gemm's. */
static bool is_gemm(const fp_node *n)
{
    return (!n->domain[0] && strcmp(n->op_type, "Gemm") == 0) ||
           (strcmp(n->domain, "com.microsoft") == 0 && strcmp(n->op_type, "FusedGemm") == 0);
}

/* Whether n is the FusedMatMul (com.microsoft) of a MatMul and its transposes or scale that ORT's
 * level-2 fusion makes; its CPU kernel is MatMul's, which packs B under its transB. */
static bool is_fused_matmul(const fp_node *n)
{
    return strcmp(n->domain, "com.microsoft") == 0 && strcmp(n->op_type, "FusedMatMul") == 0;
}

/* Whether input `port` of n is a float GEMM's B that MLAS pre-packs: input 1 of a MatMul, a
 * FusedMatMul or a Gemm (is_gemm), float and 2-D (GemmPackBFp32 packs only a 2-D matrix). */
static bool packs_as_gemm_b(const fp_node *n, uint32_t port, const fp_value *w)
{
    if (port != 1 || w->dtype != FP_DT_FLOAT || w->shape.rank != 2 || !fp_shape_static(&w->shape))
        return false;
    return (!n->domain[0] && strcmp(n->op_type, "MatMul") == 0) || is_fused_matmul(n) || is_gemm(n);
}

/* Bytes of MLAS's packed copy of w, the B input of n (packs_as_gemm_b): K rows of N floats, N
 * rounded up to 16 (MlasGemmPackBSize); B is N x K under a Gemm's or FusedMatMul's transB. */
static uint64_t gemm_b_packed(const fp_node *n, const fp_value *w)
{
    bool tb = (is_gemm(n) || is_fused_matmul(n)) && fp_node_attr_int(n, "transB", 0) != 0;
    uint64_t k = (uint64_t)w->shape.dims[tb ? 1 : 0].value, cols = (uint64_t)w->shape.dims[tb ? 0 : 1].value;
    return k * round_to(cols, 16) * 4;
}

/* Bytes of the packed copy MatMulNBits n makes of its weight w (input 1) and of its scales at
 * accuracy_level 4 (int8 compute, 4 bits): the quantized data, the scales, one block sum per
 * column (rounded to 16) and K block, and two 64-byte alignments (MlasQNBitGemmPackQuantBDataSize);
 * 0 for other levels and widths, whose layout was not measured. */
static uint64_t nbits_packed(const fp_node *n, const fp_value *w)
{
    if (strcmp(n->op_type, "MatMulNBits") != 0 || strcmp(n->domain, "com.microsoft") != 0 ||
        fp_node_attr_int(n, "accuracy_level", 0) != 4 || fp_node_attr_int(n, "bits", 4) != 4 || !w->tensor)
        return 0;
    int64_t kk = fp_node_attr_int(n, "K", 0), nn = fp_node_attr_int(n, "N", 0),
            blk = fp_node_attr_int(n, "block_size", 0);
    if (kk <= 0 || nn <= 0 || blk <= 0)
        return 0;
    uint64_t blocks = ((uint64_t)kk + (uint64_t)blk - 1) / (uint64_t)blk;
    return w->tensor->nbytes + (uint64_t)nn * blocks * 4 + round_to((uint64_t)nn, 16) * blocks * 4 + 2 * 63;
}

/* Bytes of the packed copies com.microsoft Attention n makes of its weight w (input 1, float,
 * in x (q + k + v)): for each of Q, K and V (qkv_hidden_sizes, else a third of the columns each)
 * one GEMM B of K `in` by N the head size (rounded to 16, MlasGemmPackBSize) per head
 * (Attention<float>::PrePack); 0 for a shape it does not pack. */
static uint64_t attention_packed(const fp_node *n, const fp_value *w)
{
    if (strcmp(n->op_type, "Attention") != 0 || strcmp(n->domain, "com.microsoft") != 0 || w->dtype != FP_DT_FLOAT ||
        w->shape.rank != 2 || !fp_shape_static(&w->shape))
        return 0;
    int64_t in = w->shape.dims[0].value, cols = w->shape.dims[1].value, heads = fp_node_attr_int(n, "num_heads", 0);
    int64_t qkv[3] = {cols / 3, cols / 3, cols / 3};
    for (int k = 0; k < 3; k++)
        qkv[k] = fp_node_attr_ints_at(n, "qkv_hidden_sizes", (uint32_t)k, qkv[k]);
    uint64_t bytes = 0;
    for (int k = 0; k < 3; k++) {
        if (heads <= 0 || qkv[k] <= 0 || qkv[k] % heads != 0 || qkv[0] + qkv[1] + qkv[2] != cols)
            return 0;
        add_sat(&bytes, (uint64_t)heads * round_to((uint64_t)(qkv[k] / heads), 16) * (uint64_t)in * 4);
    }
    return bytes;
}

/* Bytes of the arena that weight w, of `bytes`, takes at session creation with pre-packing: a GEMM's
 * B its packed copy (one, the largest, when several kernels read it), an Attention's weight its
 * packed copies, a ConvTranspose's float filter its transposed copy, a MatMulNBits weight its
 * packed copy (scales included), nothing for the inputs MatMulNBits packs with it (scales, zero
 * points) or for what is held outside the arena; else its bytes when it is small. */
static uint64_t prepacked_weight(const fp_value *w, uint64_t bytes, bool *outside)
{
    uint64_t packed = 0;
    bool folded_in = false;
    for (uint32_t k = 0; k < w->n_uses; k++) {
        const fp_node *n = w->uses[k].node;
        uint32_t port = w->uses[k].port;
        if (packs_as_gemm_b(n, port, w))
            packed = MAX(packed, gemm_b_packed(n, w));
        else if (port == 1 && attention_packed(n, w))
            packed = MAX(packed, attention_packed(n, w));
        else if (port == 1 && strcmp(n->op_type, "ConvTranspose") == 0 && !n->domain[0] && w->dtype == FP_DT_FLOAT)
            packed = MAX(packed, bytes); /* its filter transposed (ConvTranspose::PrePack) */
        else if (port == 1 && nbits_packed(n, w))
            packed = MAX(packed, nbits_packed(n, w));
        else if (port >= 2 && strcmp(n->op_type, "MatMulNBits") == 0 && nbits_packed(n, n->inputs[1]))
            folded_in = true;
    }
    *outside = !packed && (folded_in || bytes >= ORT_SMALL_INITIALIZER);
    return packed ? packed : *outside ? 0 : bytes;
}

/* Whether n is a Cast of a float16 weight to float32 that passes/float16.c folded: ORT's initializer
 * folding makes its output a float32 initializer. */
static bool folded_cast(const fp_node *n)
{
    return n && n->op == FP_OP_CAST && (n->flags & FP_NODE_FOLDED) && n->n_inputs == 1 && n->inputs[0] &&
           fp_value_is_weight(n->inputs[0]) && n->inputs[0]->dtype == FP_DT_FLOAT16 && n->outputs[0] &&
           n->outputs[0]->dtype == FP_DT_FLOAT;
}

/* Whether ORT holds v at session creation, and its bytes into *bytes: an initializer or a Constant
 * (not when only folded Casts read it: ORT drops it once folded), or the float32 initializer a
 * folded Cast of a float16 weight becomes; false for any other value or one nothing reads. */
static bool held(const fp_value *v, uint64_t *bytes)
{
    if (v->n_uses == 0)
        return false;
    if (v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT) {
        if (!v->tensor)
            return false;
        *bytes = v->tensor->nbytes;
        for (uint32_t k = 0; k < v->n_uses; k++)
            if (!folded_cast(v->uses[k].node))
                return true;
        return false;
    }
    uint64_t n;
    if (!folded_cast(v->producer) || !fp_shape_numel(&v->shape, &n))
        return false;
    *bytes = n * 4;
    return true;
}

/* The weights of g ORT keeps in its arena (held: used ones, and the float32 copies its
 * constant folding makes of float16 weights). With pre-packing (opts->prepack, ORT's default): the
 * small ones at their bytes and the packed copies of GEMM, Attention and MatMulNBits weights
 * (prepacked_weight), the rest held outside the arena (weight_outside); without: all of them, each
 * aligned as the pattern aligns them and the block rounded by the arena. */
static void weights(const fp_graph *g, const fp_ort_memory_opts *opts, fp_ort_memory_result *out)
{
    uint64_t block = 0;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        uint64_t bytes;
        if (!held(v, &bytes))
            continue;
        bool outside = false;
        if (opts->prepack) {
            add_sat(&out->weight_arena, prepacked_weight(v, bytes, &outside));
            if (outside)
                add_sat(&out->weight_outside, bytes);
        } else
            add_sat(&block, round_to(bytes, FP_ORT_PATTERN_ALIGN));
    }
    if (block)
        out->weight_arena = round_to(block, FP_ORT_ARENA_ROUND);
}

/* MLAS's working buffer per thread (MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK floats). */
#define MLAS_CONV_WORKING_FLOATS 16384u

/* Whether Conv node n pads nothing (its pads, or an auto_pad that adds none). */
static bool no_padding(const fp_node *n, uint32_t rank)
{
    const char *ap = fp_node_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0)
        return false;
    for (uint32_t i = 0; i < 2 * rank; i++)
        if (fp_node_attr_ints_at(n, "pads", i, 0) != 0)
            return false;
    return true;
}

/* Whether n is a float convolution of the default domain named op (Conv, ConvTranspose) with static
 * input, filter and output shapes of one rank, at least 3. */
static bool static_float_conv(const fp_node *n, const char *op)
{
    if (strcmp(n->op_type, op) != 0 || n->domain[0] || n->n_inputs < 2 || !n->n_outputs || !n->inputs[0] ||
        !n->inputs[1] || !n->outputs[0] || n->outputs[0]->dtype != FP_DT_FLOAT)
        return false;
    const fp_shape *x = &n->inputs[0]->shape, *w = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    return fp_shape_static(x) && fp_shape_static(w) && fp_shape_static(y) && x->rank >= 3 && w->rank == x->rank &&
           y->rank == x->rank;
}

/* Bytes of the working buffer ORT's float Conv takes from the arena while it runs, on one thread
 * (MlasConvPrepare's WorkingBufferSize): none for a pointwise convolution without stride or
 * padding, the whole im2col matrix (output pixels x C/group x kernel) when a group's filters
 * outnumber the output pixels, else one thread's slice, whatever the batch and the groups (as ORT
 * 1.30 was measured to allocate). A ConvTranspose's column buffer: C_out/group x kernel x input
 * pixels (ConvTranspose::DoConvTranspose). 0 for other nodes or unknown shapes. */
static uint64_t conv_scratch(const fp_node *n)
{
    bool transposed = static_float_conv(n, "ConvTranspose");
    if (!transposed && !static_float_conv(n, "Conv"))
        return 0;
    const fp_shape *x = &n->inputs[0]->shape, *w = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    uint32_t rank = (uint32_t)x->rank - 2;
    uint64_t groups = (uint64_t)MAX(fp_node_attr_int(n, "group", 1), 1), out = 1, in = 1, kernel = 1;
    bool unit = no_padding(n, rank), pointwise = true;
    for (uint32_t i = 0; i < rank; i++) {
        out *= (uint64_t)y->dims[2 + i].value;
        in *= (uint64_t)x->dims[2 + i].value;
        kernel *= (uint64_t)w->dims[2 + i].value;
        unit = unit && fp_node_attr_ints_at(n, "strides", i, 1) == 1;
        pointwise = pointwise && w->dims[2 + i].value == 1;
    }
    uint64_t floats;
    if (transposed)
        floats = (uint64_t)w->dims[1].value * kernel * in; /* W is C_in x C_out/group x kernel */
    else if (unit && pointwise)
        return 0;
    else if ((uint64_t)w->dims[0].value / groups > out)
        floats = out * (uint64_t)w->dims[1].value * kernel;
    else
        floats = MLAS_CONV_WORKING_FLOATS;
    return round_to(floats * 4, FP_ORT_ARENA_ROUND);
}

/* The input of n from which ORT's shape inference takes output dims as data (a Reshape's shape, an
 * Expand's, a Slice's starts, ...): from it on, every input counts; UINT32_MAX when none does. ORT
 * propagates no data through shape inference (its InferenceContextImpl::getSymbolicInput gives
 * nothing), so such a shape is unknown unless that input is an initializer. */
static uint32_t shape_data_input(const fp_node *n)
{
    static const struct {
        const char *op;
        uint32_t from;
    } ops[] = {{"Reshape", 1},   {"Expand", 1}, {"Tile", 1},   {"ConstantOfShape", 0}, {"Range", 0},
               {"Slice", 1},     {"Pad", 1},    {"Resize", 1}, {"Upsample", 1},        {"Squeeze", 1},
               {"Unsqueeze", 1}, {"Split", 1},  {"TopK", 1},   {"OneHot", 1},          {"NonZero", 0}};
    if (n->domain[0])
        return UINT32_MAX;
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        if (strcmp(n->op_type, ops[i].op) == 0)
            return ops[i].from;
    return UINT32_MAX;
}

/* Whether n is a Reshape to a constant shape of positive sizes only, which gives every output dim
 * whatever ORT knows of the input's (a 0 copies an input dim, a -1 divides its size). */
static bool full_reshape(const fp_node *n)
{
    int64_t d[FP_MAX_RANK];
    int k = strcmp(n->op_type, "Reshape") == 0 && n->n_inputs >= 2 && n->inputs[1] &&
                    (n->inputs[1]->kind == FP_VALUE_INITIALIZER || n->inputs[1]->kind == FP_VALUE_CONSTANT)
                ? fp_value_ints(n->inputs[1], d, FP_MAX_RANK)
                : -1;
    for (int i = 0; i < k; i++)
        if (d[i] <= 0)
            return false;
    return k > 0;
}

/* Whether a graph input of g declares a dim that is not a number (a symbol or nothing). */
static bool declares_symbolic_dims(const fp_graph *g)
{
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->inputs, i);
        for (int32_t d = 0; d < v->decl_shape.rank; d++)
            if (v->decl_shape.dims[d].sym || v->decl_shape.dims[d].value < 0)
                return true;
    }
    return false;
}

/* Whether ORT's shape inference knows the values of n's outputs (its data propagation: the
 * shape computations Shape, Size, Gather, Squeeze, Unsqueeze, Concat and the four arithmetic ops, and
 * as ORT 1.30 was measured to know them ConstantOfShape, Equal, Where, Expand and Split, over
 * initializers and the shapes of tensors whose dims are all numbers): `known` is per value id. */
static bool data_known(const fp_node *n, const uint8_t *known, const uint8_t *unknown, bool symbolic)
{
    static const char *const ops[] = {"Gather", "Squeeze", "Unsqueeze",       "Concat", "Mul",    "Add",  "Sub",
                                      "Div",    "Equal",   "ConstantOfShape", "Where",  "Expand", "Split"};
    if (n->domain[0] || !n->n_inputs || !n->inputs[0])
        return false;
    if (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0)
        return !symbolic && !unknown[n->inputs[0]->id];
    bool ok = false;
    for (size_t i = 0; i < G_N_ELEMENTS(ops) && !ok; i++)
        ok = strcmp(n->op_type, ops[i]) == 0;
    for (uint32_t k = 0; k < n->n_inputs && ok; k++)
        ok = !n->inputs[k] || known[n->inputs[k]->id];
    return ok;
}

/* unknown (per value id of g) receives which values' shapes ORT's planner does not know: the
 * outputs of a node whose shape-giving input (shape_data_input) holds values ORT's data
 * propagation does not give (data_known; initializers and Constants it has), NonZero's, and what
 * other ops compute from such a value, a Slice's, Expand's, ... data input included (only a shape
 * of known data that names every dim makes the dims known again: ConstantOfShape, Range,
 * full_reshape). A graph input's symbolic dims are known, as symbols, but
 * not as the values of its Shape. False with an error on a cycle. */
static bool ort_unknown_shapes(const fp_graph *g, uint8_t *unknown, GError **error)
{
    uint32_t n;
    fp_node *const *order = fp_graph_order(g, &n, error);
    if (!order)
        return false;
    bool symbolic = declares_symbolic_dims(g);
    g_autofree uint8_t *known = g_new0(uint8_t, g->values->len + 1);
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        known[v->id] = v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT;
    }
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *nd = order[i];
        if (nd->flags & FP_NODE_REMOVED)
            continue;
        uint32_t from = shape_data_input(nd);
        bool unk = strcmp(nd->op_type, "NonZero") == 0 && !nd->domain[0];
        bool resets = from != UINT32_MAX && (from == 0 || full_reshape(nd));
        for (uint32_t k = 0; k < nd->n_inputs && !unk; k++) {
            const fp_value *in = nd->inputs[k];
            unk = in && (from == UINT32_MAX || k < from ? !resets && unknown[in->id] : !known[in->id]);
        }
        bool dk = data_known(nd, known, unknown, symbolic);
        for (uint32_t k = 0; k < nd->n_outputs; k++)
            if (nd->outputs[k]) {
                unknown[nd->outputs[k]->id] = unk;
                known[nd->outputs[k]->id] |= dk;
            }
    }
    return true;
}

/* Whether s names every dim: a number or a symbol. */
static bool dims_named(const fp_shape *s)
{
    for (int32_t d = 0; s->rank >= 0 && d < s->rank; d++)
        if (!fp_dim_known(s->dims[d]) && !s->dims[d].sym)
            return false;
    return s->rank >= 0;
}

/* unknown (per value id of g) as an optimized session's planner knows shapes: a value whose load
 * shape (fp_value_load_shape: the shapes ORT's constant folding and ReshapeFusion leave, recorded
 * by analysis/declared.c, the view the fusion conditions read) does not name every dim; a value
 * without one (written by a later pass: a fused node's, a reorder's) is unknown when an input of
 * its producer is; none is unknown when no load shape was recorded (static dims and no shape
 * computation: the inferred shapes are the runtime's). False with an error on a cycle. */
static bool loaded_unknown_shapes(const fp_graph *g, uint8_t *unknown, GError **error)
{
    uint32_t n;
    fp_node *const *order = fp_graph_order(g, &n, error);
    if (!order)
        return false;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        const fp_shape *ls = fp_value_load_shape(v);
        unknown[v->id] = ls && !dims_named(ls);
    }
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *nd = order[i];
        bool unk = false;
        for (uint32_t k = 0; k < nd->n_inputs && !unk; k++)
            unk = nd->inputs[k] && unknown[nd->inputs[k]->id];
        for (uint32_t k = 0; k < nd->n_outputs; k++)
            if (nd->outputs[k] && !fp_value_load_shape(nd->outputs[k]))
                unknown[nd->outputs[k]->id] = unk;
    }
    return true;
}

/* Whether ORT's CPU kernel of n declares MayInplace(0, 0): its activations (Relu, Sigmoid, Tanh,
 * Clip, LeakyRelu, HardSigmoid, Elu, ... and Softmax) and Cast (cast_op.cc; the planner's size
 * check keeps it to casts between types of one size), not its math ops (Exp, Erf, Sqrt, Neg, ...)
 * nor binary ones, as ORT 1.30 was measured to behave (docs/memory.md). HardSwish is not a kernel
 * of its own there: ORT runs its function body. */
static bool ort_may_inplace(const fp_node *n)
{
    if (n->op == FP_OP_SOFTMAX || n->op == FP_OP_CAST)
        return true;
    return fp_op_has(n->op, FP_OPF_UNARY) && fp_op_has(n->op, FP_OPF_ACT) && n->op != FP_OP_HARD_SWISH &&
           n->op != FP_OP_SHRINK && n->op != FP_OP_MISH && n->op != FP_OP_GELU && n->domain[0] == '\0';
}

int32_t fp_ort_inplace_input(const fp_node *n)
{
    if (ort_may_inplace(n))
        return 0;
    bool fused = n->op == FP_OP_FUSED_CONV || (n->op == FP_OP_CONV && strcmp(n->domain, "com.microsoft.nchwc") == 0);
    return fused && n->n_inputs > 3 && n->inputs[3] ? 3 : -1;
}

bool fp_ort_same_size(const uint8_t *unknown, const fp_value *a, const fp_value *b)
{
    if (!a || !b || (unknown && (unknown[a->id] || unknown[b->id])) || a->shape.rank < 0 ||
        a->shape.rank != b->shape.rank || fp_dtype_bits((fp_dtype)a->dtype) != fp_dtype_bits((fp_dtype)b->dtype))
        return false;
    for (int32_t i = 0; i < a->shape.rank; i++)
        if (a->shape.dims[i].sym || a->shape.dims[i].value < 0 || a->shape.dims[i].value != b->shape.dims[i].value)
            return false;
    return true;
}

/* One request to the arena in the first run: an allocation (bytes > 0) or the free (bytes 0) of
 * `key`: a slot k, an output (n_bufs + i) or a kernel's working buffer (n_bufs + outs_cap + step). */
typedef struct {
    uint32_t key, step;
    uint64_t bytes;
} arena_event;

/* The planner's state: per buffer of the memgraph its slot (an allocation of the plan) and the
 * readers still to run; per slot its lifetime, size and the buffer holding it now; the free slots,
 * the most recently freed last. */
typedef struct {
    const fp_liveness *lv;
    const fp_memgraph *mg;
    int32_t *slot_of;
    uint32_t *remaining;
    fp_membuf *slots;
    uint32_t *holder;
    uint32_t *first_buf; /* per slot: the buffer it was allocated for */
    uint32_t n_slots;
    fp_membuf *outs; /* the graph outputs: allocated apart, held to the end */
    uint32_t n_outs, outs_cap;
    fp_membuf *scratch; /* kernels' working buffers, live at their step alone */
    uint32_t n_scratch;
    GArray *events;   /* arena_event: the first run's allocations (and working buffers' frees), in order */
    bool *freed;      /* per slot: released for good (a freed slot taken again is held on) */
    uint8_t *unknown; /* per value id: a shape ORT's planner does not know (ort_unknown_shapes) */
    uint32_t *free_list;
    uint32_t n_free;
} planner;

/* Bytes node v (memgraph numbering) holds besides its output because ORT runs it as its function
 * body: HardSwish is HardSigmoid then Mul, the HardSigmoid's output as large as v's. */
static uint64_t function_scratch(const planner *p, uint32_t v)
{
    const fp_node *n = p->lv->nodes[v];
    if (n->op != FP_OP_HARD_SWISH || !n->outputs[0] || p->lv->value_buf[n->outputs[0]->id] < 0)
        return 0;
    return round_to(p->mg->bytes[p->lv->value_buf[n->outputs[0]->id]], FP_ORT_ARENA_ROUND);
}

/* Frees buffer b's slot after step s when b holds it (a buffer taken over in place holds it no more). */
static void release(planner *p, uint32_t b, uint32_t s)
{
    int32_t k = p->slot_of[b];
    if (k < 0 || p->holder[k] != b)
        return;
    p->slots[k].last = s;
    p->free_list[p->n_free++] = (uint32_t)k;
    p->freed[k] = true;
}

/* A free slot whose first value has buffer b's shape (ORT's FindReusableTensor: SameSize), the most
 * recently freed first, taken off the free list; -1 when none. */
static int32_t take_free(planner *p, uint32_t b)
{
    for (uint32_t i = p->n_free; i-- > 0;) {
        uint32_t k = p->free_list[i];
        if (fp_ort_same_size(p->unknown, p->lv->buf_value[p->first_buf[k]], p->lv->buf_value[b])) {
            memmove(p->free_list + i, p->free_list + i + 1, (p->n_free - i - 1) * sizeof *p->free_list);
            p->n_free--;
            p->freed[k] = false;
            return (int32_t)k;
        }
    }
    return -1;
}

/* Gives buffer b, defined by node v at step s, its slot: the input fp_ort_inplace_input names, in
 * place, when b is v's output 0, v reads that input last and the shapes match; else a freed slot of
 * its shape; else a new one. */
static void assign(planner *p, uint32_t v, uint32_t b, uint32_t s, fp_ort_memory_result *out)
{
    const fp_memgraph *mg = p->mg;
    const fp_node *n = p->lv->nodes[v];
    int32_t a = -1, in = fp_ort_inplace_input(n);
    if (in >= 0 && (uint32_t)in < n->n_inputs && n->inputs[in] && n->outputs[0] &&
        p->lv->value_buf[n->outputs[0]->id] == (int32_t)b)
        a = p->lv->value_buf[n->inputs[in]->id];
    if (a >= 0 && p->slot_of[a] >= 0 && p->remaining[a] == 1 &&
        fp_ort_same_size(p->unknown, p->lv->buf_value[a], p->lv->buf_value[b])) {
        p->slot_of[b] = p->slot_of[a];
        p->holder[p->slot_of[b]] = b;
        out->n_inplace++;
        return;
    }
    int32_t k = take_free(p, b);
    if (k >= 0) {
        out->n_reused++;
        p->slots[k].last = s;
    } else {
        k = (int32_t)p->n_slots++;
        p->slots[k] = (fp_membuf){.size = mg->bytes[b], .first = s, .last = s};
        p->first_buf[k] = b;
        g_array_append_val(p->events, ((arena_event){(uint32_t)k, s, mg->bytes[b]}));
    }
    p->slot_of[b] = k;
    p->holder[k] = b;
}

/* Orders memgraph nodes by their IR node's ORT index (ORT's NodeCompare: the node's index in the file,
 * or the one an ORT pass gave the node it made anew: fp_node_ort_index). */
static gint cmp_ort_index(gconstpointer a, gconstpointer b, gpointer data)
{
    const fp_liveness *lv = data;
    uint32_t x = fp_node_ort_index(lv->nodes[*(const uint32_t *)a]);
    uint32_t y = fp_node_ort_index(lv->nodes[*(const uint32_t *)b]);
    return (x > y) - (x < y);
}

/* ORT's sequential order (GraphViewer's nodes_in_topological_order_, Graph::ReverseDFSFrom): a
 * depth-first walk up from the leaves (nodes no node reads), which are pushed in file order; at a
 * node, its producers are pushed in file order, so the last one is walked first; a node is emitted
 * when the walk leaves it. order receives the n_nodes memgraph nodes. */
static void ort_order(const fp_liveness *lv, uint32_t *order)
{
    const fp_memgraph *mg = &lv->mg;
    uint32_t n = mg->n_nodes, np = mg->pred_start[n], emitted = 0, top = 0;
    g_autofree uint32_t *readers = g_new0(uint32_t, n + 1);
    g_autofree uint8_t *seen = g_new0(uint8_t, n + 1);
    g_autofree uint32_t *stack = g_new(uint32_t, 2 * (size_t)n + np + 1); /* node << 1 | leaving */
    for (uint32_t k = 0; k < np; k++)
        readers[mg->preds[k]]++;
    g_autofree uint32_t *leaves = g_new(uint32_t, n + 1);
    uint32_t nl = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!readers[v])
            leaves[nl++] = v;
    g_qsort_with_data(leaves, (gint)nl, sizeof *leaves, cmp_ort_index, (gpointer)lv);
    for (uint32_t i = 0; i < nl; i++)
        stack[top++] = leaves[i] << 1;
    while (top) {
        uint32_t e = stack[--top], v = e >> 1;
        if (e & 1) {
            order[emitted++] = v;
            continue;
        }
        if (seen[v])
            continue;
        seen[v] = 1;
        stack[top++] = v << 1 | 1;
        uint32_t first = top;
        for (uint32_t k = mg->pred_start[v]; k < mg->pred_start[v + 1]; k++)
            if (!seen[mg->preds[k]])
                stack[top++] = mg->preds[k];
        g_qsort_with_data(stack + first, (gint)(top - first), sizeof *stack, cmp_ort_index, (gpointer)lv);
        for (uint32_t k = first; k < top; k++)
            stack[k] <<= 1;
    }
    g_assert(emitted == n);
}

/* The graph outputs of p's graph that hold a constant (an initializer, a Constant's or a folded
 * value) and no buffer of the plan: ONNX Runtime copies each into an arena buffer of its own as the
 * run starts, held to its end (measured on ORT 1.31.1: a 1 MiB initializer listed as an output
 * takes 1 MiB of the arena at both levels, beside the activations then live; a graph input listed
 * as an output takes none). Recorded as step 0's first requests. */
static void constant_outputs(planner *p, uint32_t last)
{
    const fp_graph *g = p->lv->graph;
    for (guint i = 0; i < g->outputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->outputs, i);
        uint64_t bytes = fp_value_bytes(v);
        if (!fp_value_is_constant(v) || p->lv->value_buf[v->id] >= 0 || !bytes)
            continue;
        g_array_append_val(p->events, ((arena_event){p->mg->n_bufs + p->n_outs, 0, bytes}));
        p->outs[p->n_outs++] = (fp_membuf){.size = bytes, .first = 0, .last = last};
    }
}

/* Replays the planner over `order`: slots and their lifetimes (in steps of the order), and the
 * outputs held apart (constant ones first), into p. */
static void replay(planner *p, const uint32_t *order, fp_ort_memory_result *out)
{
    const fp_memgraph *mg = p->mg;
    uint32_t last = mg->n_nodes ? mg->n_nodes - 1 : 0;
    constant_outputs(p, last);
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        p->remaining[b] = mg->reader_start[b + 1] - mg->reader_start[b];
    for (uint32_t s = 0; s < mg->n_nodes; s++) {
        uint32_t v = order[s];
        for (uint32_t k = mg->def_start[v]; k < mg->def_start[v + 1]; k++) {
            uint32_t b = mg->defs[k];
            if (mg->flags[b] & FP_BUF_OUTPUT) {
                if (mg->bytes[b]) /* an event of 0 bytes is a free: an output of unknown size allocates none */
                    g_array_append_val(p->events, ((arena_event){mg->n_bufs + p->n_outs, s, mg->bytes[b]}));
                p->outs[p->n_outs++] = (fp_membuf){.size = mg->bytes[b], .first = s, .last = last};
            } else if (mg->bytes[b] && !(mg->flags[b] & FP_BUF_INPUT))
                assign(p, v, b, s, out);
        }
        uint64_t ws = conv_scratch(p->lv->nodes[v]) + function_scratch(p, v);
        if (ws) {
            p->scratch[p->n_scratch++] = (fp_membuf){.size = ws, .first = s, .last = s};
            uint32_t key = mg->n_bufs + p->outs_cap + s;
            g_array_append_val(p->events, ((arena_event){key, s, ws}));
            g_array_append_val(p->events, ((arena_event){key, s, 0}));
        }
        for (uint32_t k = mg->use_start[v]; k < mg->use_start[v + 1]; k++)
            if (--p->remaining[mg->uses[k]] == 0)
                release(p, mg->uses[k], s);
        for (uint32_t k = mg->def_start[v]; k < mg->def_start[v + 1]; k++)
            if (p->remaining[mg->defs[k]] == 0)
                release(p, mg->defs[k], s); /* never read: freed right after its node */
    }
    for (uint32_t k = 0; k < p->n_slots; k++)
        if (p->holder[k] != UINT32_MAX && p->remaining[p->holder[k]] > 0)
            p->slots[k].last = last;
}

/* ---- the BFC arena (ORT's bfc_arena.cc), replayed over the first run's requests ---- */

#define BFC_INITIAL_REGION (1u << 20)             /* initial_chunk_size_bytes */
#define BFC_MAX_DEAD_BYTES ((uint64_t)128u << 20) /* max_dead_bytes_per_chunk */

typedef struct {
    uint64_t off, size;
    uint32_t region;
    int32_t prev, next; /* neighbours in the region, -1 at its ends */
    bool used, dead;    /* dead: merged into a neighbour */
} bfc_chunk;

typedef struct {
    GArray *chunks; /* bfc_chunk */
    uint64_t region_bytes, in_use, peak;
    uint32_t regions;
} bfc;

static bfc_chunk *chunk_at(bfc *a, int32_t h) { return &g_array_index(a->chunks, bfc_chunk, h); }

/* A new region (Extend, kNextPowerOfTwo): the region size doubles until it holds `bytes`, and
 * doubles again after a region of the size it had; one free chunk spans it. */
static int32_t bfc_extend(bfc *a, uint64_t bytes)
{
    bool grew = false;
    while (bytes > a->region_bytes) {
        a->region_bytes *= 2;
        grew = true;
    }
    bfc_chunk c = {.size = a->region_bytes, .region = a->regions++, .prev = -1, .next = -1};
    if (!grew)
        a->region_bytes *= 2;
    g_array_append_val(a->chunks, c);
    return (int32_t)a->chunks->len - 1;
}

/* Allocates `bytes` as FindChunkPtr does: the smallest free chunk that holds them rounded to
 * 256 (lowest region and offset on ties), split only when it is at least twice the request or
 * wastes max_dead_bytes_per_chunk; the whole chunk counts as in use. Returns its handle. */
static int32_t bfc_alloc(bfc *a, uint64_t bytes)
{
    uint64_t r = MAX(round_to(bytes, FP_ORT_ARENA_ROUND), (uint64_t)FP_ORT_ARENA_ROUND);
    int32_t best = -1;
    for (guint h = 0; h < a->chunks->len; h++) {
        const bfc_chunk *c = chunk_at(a, (int32_t)h);
        if (c->used || c->dead || c->size < r)
            continue;
        const bfc_chunk *b = best < 0 ? NULL : chunk_at(a, best);
        if (!b || c->size < b->size ||
            (c->size == b->size && (c->region < b->region || (c->region == b->region && c->off < b->off))))
            best = (int32_t)h;
    }
    if (best < 0)
        best = bfc_extend(a, r);
    bfc_chunk *c = chunk_at(a, best);
    if (c->size >= 2 * r || c->size - r >= BFC_MAX_DEAD_BYTES) {
        bfc_chunk rest = {.off = c->off + r, .size = c->size - r, .region = c->region, .prev = best, .next = c->next};
        c->size = r;
        g_array_append_val(a->chunks, rest);
        int32_t h = (int32_t)a->chunks->len - 1;
        c = chunk_at(a, best);
        if (c->next >= 0)
            chunk_at(a, c->next)->prev = h;
        c->next = h;
    }
    c->used = true;
    a->in_use += c->size;
    a->peak = MAX(a->peak, a->in_use);
    return best;
}

/* Merges chunk h2, h1's next neighbour, into h1. */
static void bfc_merge(bfc *a, int32_t h1, int32_t h2)
{
    bfc_chunk *c1 = chunk_at(a, h1), *c2 = chunk_at(a, h2);
    c1->size += c2->size;
    c1->next = c2->next;
    c2->dead = true;
    if (c1->next >= 0)
        chunk_at(a, c1->next)->prev = h1;
}

/* Frees chunk h and coalesces it with free neighbours (FreeAndMaybeCoalesce). */
static void bfc_free(bfc *a, int32_t h)
{
    bfc_chunk *c = chunk_at(a, h);
    c->used = false;
    a->in_use -= c->size;
    if (c->next >= 0 && !chunk_at(a, c->next)->used)
        bfc_merge(a, h, c->next);
    c = chunk_at(a, h);
    if (c->prev >= 0 && !chunk_at(a, c->prev)->used)
        bfc_merge(a, c->prev, h);
}

/* The freed slots of p bucketed by their last step: by_last[start[s] .. start[s + 1]) (caller
 * frees both). */
static void slots_by_last(const planner *p, uint32_t **by_last, uint32_t **start)
{
    uint32_t n = p->mg->n_nodes;
    *by_last = g_new(uint32_t, p->n_slots + 1);
    *start = g_new0(uint32_t, n + 2);
    for (uint32_t k = 0; k < p->n_slots; k++)
        (*start)[p->slots[k].last + 1] += p->freed[k];
    for (uint32_t s = 0; s < n; s++)
        (*start)[s + 1] += (*start)[s];
    g_autofree uint32_t *fill = g_memdup2(*start, (n + 1) * sizeof **start);
    for (uint32_t k = 0; k < p->n_slots; k++)
        if (p->freed[k])
            (*by_last)[fill[p->slots[k].last]++] = k;
}

/* The number of arena_event keys of p (and one more). */
static size_t key_count(const planner *p) { return (size_t)p->mg->n_bufs + p->outs_cap + p->mg->n_nodes + 1; }

/* One run through arena a: at each step its allocations and working buffers in order, then, in the
 * first run, the frees of the slots released there for good (a slot reused by a later value stays
 * allocated in between: the plan hands the buffer over without freeing it); a later run allocates
 * the memory-pattern block first and the slots no more. Everything still held is freed at the end
 * (the caller releases the outputs). Returns the run's peak in use. */
static uint64_t run_arena(bfc *a, const planner *p, uint64_t block, int32_t *held)
{
    g_autofree uint32_t *by_last = NULL, *start = NULL;
    g_autofree bool *live = g_new0(bool, key_count(p));
    slots_by_last(p, &by_last, &start);
    a->peak = a->in_use;
    int32_t block_chunk = block ? bfc_alloc(a, block) : -1;
    guint i = 0;
    for (uint32_t s = 0; s < MAX(p->mg->n_nodes, 1); s++) { /* step 0 even without nodes */
        for (; i < p->events->len && g_array_index(p->events, arena_event, i).step == s; i++) {
            const arena_event *e = &g_array_index(p->events, arena_event, i);
            if (block && e->key < p->mg->n_bufs)
                continue; /* a slot: in the pattern block */
            if (e->bytes)
                held[e->key] = bfc_alloc(a, e->bytes);
            else
                bfc_free(a, held[e->key]);
            live[e->key] = e->bytes > 0;
        }
        for (uint32_t j = start[s]; !block && j < start[s + 1]; j++) {
            bfc_free(a, held[by_last[j]]);
            live[by_last[j]] = false;
        }
    }
    for (uint32_t k = 0; k < key_count(p); k++)
        if (live[k])
            bfc_free(a, held[k]);
    if (block_chunk >= 0)
        bfc_free(a, block_chunk);
    return a->peak;
}

/* The arena's figures from p's replay: the first run's peak in use (every request through the BFC
 * arena), the memory-pattern block and the second run's peak in the arena the first one left, the
 * outputs and the largest working buffer. False on a 64-bit overflow. */
static bool arena_figures(const planner *p, fp_ort_memory_result *out, GError **error)
{
    for (uint32_t i = 0; i < p->n_outs; i++)
        add_sat(&out->outputs, round_to(p->outs[i].size, FP_ORT_ARENA_ROUND));
    for (uint32_t i = 0; i < p->n_scratch; i++)
        out->scratch = MAX(out->scratch, p->scratch[i].size);
    g_autofree uint64_t *off = g_new(uint64_t, p->n_slots + 1);
    fp_memplan_result pr;
    if (!fp_memplan_plan(p->slots, p->n_slots, FP_ORT_PATTERN_ALIGN, FP_MEMPLAN_BEST_FIT, off, &pr, error))
        return false;
    out->pattern = pr.arena ? round_to(pr.arena, FP_ORT_ARENA_ROUND) : 0;
    bfc a = {.chunks = g_array_new(FALSE, FALSE, sizeof(bfc_chunk)), .region_bytes = BFC_INITIAL_REGION};
    g_autofree int32_t *held = g_new(int32_t, key_count(p));
    out->first_run = run_arena(&a, p, 0, held);
    out->second_run = out->pattern ? run_arena(&a, p, out->pattern, held) : out->first_run;
    g_array_free(a.chunks, TRUE);
    return true;
}

bool fp_pass_ort_memory(const fp_graph *g, const fp_ort_memory_opts *opts, fp_ort_memory_result *out, fp_diag *diag,
                        GError **error)
{
    memset(out, 0, sizeof *out);
    fp_liveness_opts lo = {.outputs_apart = true};
    g_autoptr(fp_liveness) lv = fp_liveness_build(g, NULL, &lo, diag, error);
    g_autofree uint8_t *unknown = g_new0(uint8_t, g->values->len + 1);
    if (!lv || !(opts->folded ? loaded_unknown_shapes(g, unknown, error) : ort_unknown_shapes(g, unknown, error)))
        return false;
    const fp_memgraph *mg = &lv->mg;
    size_t nb = (size_t)mg->n_bufs + 1;
    uint32_t outs_cap = (uint32_t)nb + g->outputs->len; /* output buffers and constant outputs */
    planner p = {.lv = lv,
                 .mg = mg,
                 .slot_of = g_new(int32_t, nb),
                 .remaining = g_new(uint32_t, nb),
                 .slots = g_new(fp_membuf, nb),
                 .holder = g_new(uint32_t, nb),
                 .free_list = g_new(uint32_t, nb),
                 .first_buf = g_new(uint32_t, nb),
                 .outs = g_new(fp_membuf, outs_cap),
                 .outs_cap = outs_cap,
                 .scratch = g_new(fp_membuf, mg->n_nodes + 1),
                 .events = g_array_new(FALSE, FALSE, sizeof(arena_event)),
                 .freed = g_new0(bool, nb),
                 .unknown = unknown};
    memset(p.slot_of, 0xff, nb * sizeof *p.slot_of);
    memset(p.holder, 0xff, nb * sizeof *p.holder);
    g_autofree uint32_t *order = g_new(uint32_t, mg->n_nodes + 1);
    ort_order(lv, order);
    replay(&p, order, out);
    bool ok = arena_figures(&p, out, error);
    if (ok) {
        out->n_buffers = p.n_slots;
        out->n_views = lv->n_views;
        out->n_unknown = lv->n_unknown;
        weights(g, opts, out);
        out->total_first = out->weight_arena;
        add_sat(&out->total_first, out->first_run);
        out->total_steady = out->weight_arena;
        add_sat(&out->total_steady, out->second_run);
    }
    g_free(p.outs);
    g_free(p.scratch);
    g_array_free(p.events, TRUE);
    g_free(p.freed);
    g_free(p.first_buf);
    g_free(p.slot_of);
    g_free(p.remaining);
    g_free(p.slots);
    g_free(p.holder);
    g_free(p.free_list);
    return ok;
}
