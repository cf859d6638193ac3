/* cost.c - roofline cost model: per op time = max(FLOPs / (peak x efficiency[class]), bytes /
 * (bandwidth x bw_efficiency)) + launch overhead[class] (Williams, Waterman, Patterson, CACM 2009),
 * with the bandwidth of the cache level the op's traffic fits in when the profile has [cache]
 * (passes/roofline.h), per fused kernel after the fusion pass; the total adds the time a runtime
 * spends per inference outside its kernels ([device] run_overhead). Formulas of FLOPs and bytes:
 * docs/metrics.md; the model and its parameters: docs/devices.md. */
#include <math.h>
#include <string.h>

#include "passes/cost.h"

#include "passes/denormal.h"
#include "passes/layout.h"
#include "passes/memory/ortplan.h"
#include "passes/metrics.h"
#include "passes/reuse.h"

/* True when n has a `dilations` attribute with an entry above 1. */
static bool dilated(const fp_node *n)
{
    const fp_attr *a = fp_node_attr(n, "dilations");
    if (!a)
        return false;
    if (a->type == FP_ATTR_INT)
        return a->u.i > 1;
    for (uint32_t i = 0; a->type == FP_ATTR_INTS && i < a->n; i++)
        if (a->u.ints[i] > 1)
            return true;
    return false;
}

/* True when INTS attribute `name` of n is absent or every entry of it equals v. */
static bool attr_all(const fp_node *n, const char *name, int64_t v)
{
    const fp_attr *a = fp_node_attr(n, name);
    if (!a)
        return true;
    if (a->type == FP_ATTR_INT)
        return a->u.i == v;
    for (uint32_t i = 0; a->type == FP_ATTR_INTS && i < a->n; i++)
        if (a->u.ints[i] != v)
            return false;
    return a->type == FP_ATTR_INTS;
}

/* The innermost (width) entry of n's `strides`, 1 without one. */
static int64_t width_stride(const fp_node *n)
{
    const fp_attr *a = fp_node_attr(n, "strides");
    if (a && a->type == FP_ATTR_INTS && a->n)
        return a->u.ints[a->n - 1];
    return a && a->type == FP_ATTR_INT ? a->u.i : 1;
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The share of one spatial dim's taps (out windows of k taps, stride s, dilation d, pb padding
 * before) that read inside an input of `in` along it: for tap t, the windows o with 0 <= o*s - pb + t*d < in. */
static double dim_inside(int64_t in, int64_t k, int64_t out, int64_t s, int64_t d, int64_t pb)
{
    int64_t inside = 0;
    for (int64_t t = 0; t < k; t++) {
        int64_t lo = MAX(0, floor_div(pb - t * d + s - 1, s)), hi = MIN(out - 1, floor_div(in - 1 + pb - t * d, s));
        inside += MAX(0, hi - lo + 1);
    }
    return (double)inside / ((double)out * (double)k);
}

/* Whether v is in 1..2^24: a size, stride, dilation or padding inside_rows works with (no product
 * of two overflows; a kernel loop stays short). */
static bool in_range(int64_t v) { return v >= 1 && v <= (int64_t)1 << 24; }

/* The share of a 2-D convolution n's kernel rows, over all its output rows, that fall inside its
 * input rather than on the padding above or below it: 1 without such padding, 2/5 for a 5x5
 * kernel over a map two rows high padded to keep its size (each output row reads 2 of the
 * kernel's 5 rows). MLAS's blocked depthwise kernel runs each output row with the kernel rows
 * that are inside (it steps through padded columns); its im2col copies only those (and zeroes
 * the rest). 1 for other ranks and when a shape, the kernel size or an attribute is unknown or
 * out of range. */
static double inside_rows(const fp_node *n)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs || !n->outputs[0])
        return 1;
    const fp_shape *x = &n->inputs[0]->shape, *w = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4)
        return 1;
    const char *auto_pad = fp_node_attr_string(n, "auto_pad", "NOTSET");
    fp_dim in = x->dims[2], k = w->dims[2], out = y->dims[2];
    int64_t s = fp_node_attr_ints_at(n, "strides", 0, 1), d = fp_node_attr_ints_at(n, "dilations", 0, 1);
    int64_t pb = strcmp(auto_pad, "VALID") == 0 ? 0 : fp_node_attr_ints_at(n, "pads", 0, 0);
    if (!fp_dim_known(in) || !fp_dim_known(k) || !fp_dim_known(out) || !in_range(in.value) || !in_range(k.value) ||
        !in_range(out.value) || !in_range(s) || !in_range(d) || !in_range(pb + 1))
        return 1;
    if (g_str_has_prefix(auto_pad, "SAME_")) {
        int64_t total = MAX(0, (out.value - 1) * s + (k.value - 1) * d + 1 - in.value);
        pb = strcmp(auto_pad, "SAME_LOWER") == 0 ? total - total / 2 : total / 2;
    }
    return dim_inside(in.value, k.value, out.value, s, d, pb);
}

/* An NCHW Conv that MLAS runs as one GEMM on its input as it is (its GemmDirect algorithm, no
 * im2col): group 1, a 1x1... kernel, stride 1, no padding (auto_pad SAME gives none at 1x1). */
static bool pointwise(const fp_node *n, const fp_value *w)
{
    if ((n->op != FP_OP_CONV && n->op != FP_OP_FUSED_CONV) || fp_node_attr_int(n, "group", 1) != 1 || !w ||
        w->shape.rank < 3)
        return false;
    for (int32_t i = 2; i < w->shape.rank; i++)
        if (!fp_dim_known(w->shape.dims[i]) || w->shape.dims[i].value != 1)
            return false;
    return attr_all(n, "strides", 1) && attr_all(n, "pads", 0);
}

/* The class of a convolution: ONNX Runtime's blocked NCHWc kernels (domain com.microsoft.nchwc) or
 * its NCHW ones; either way a depthwise one (one input channel a group) apart: the NCHW one runs
 * per channel a one-row GEMM (grouped_conv; strided_depthwise with a width stride above 1, where
 * MLAS's im2col, MlasConvIm2Col in onnxruntime/core/mlas/lib/convolve.cpp, copies one input at a
 * time instead of four: a stride along the height alone keeps the fast copy), the blocked one a
 * kernel of its own. An NCHW 1x1
 * convolution MLAS runs without im2col is pointwise_conv; any other NCHW conv, grouped or not, is
 * conv: each group one dense GEMM, its saturation from that GEMM's shape. */
static fp_op_class conv_class(const fp_node *n)
{
    const fp_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
    bool depthwise = fp_node_attr_int(n, "group", 1) > 1 && w && w->shape.rank >= 2 && fp_dim_known(w->shape.dims[1]) &&
                     w->shape.dims[1].value == 1;
    if (strcmp(n->domain, "com.microsoft.nchwc") == 0)
        return depthwise ? FP_CLASS_NCHWC_DEPTHWISE : FP_CLASS_NCHWC_CONV;
    if (depthwise)
        return width_stride(n) > 1 ? FP_CLASS_STRIDED_DEPTHWISE : FP_CLASS_GROUPED_CONV;
    return pointwise(n, w) ? FP_CLASS_POINTWISE_CONV : FP_CLASS_CONV;
}

/* True when ONNX Runtime runs MatMul-like n as one GEMM over all rows of its output: a Gemm (its
 * output a matrix; an output of higher rank in the IR is the fused MatMul + Add whose Reshapes
 * ONNX Runtime's MatMulAddFusion inserts around it), or a MatMul (also MatMulInteger,
 * QLinearMatMul, FusedMatMul without transA or transBatchA) whose B is one matrix ([K, N], or
 * [1, ..., 1, K, N] of a rank at most A's): MatMulComputeHelper
 * (onnxruntime/core/providers/cpu/math/matmul_helper.h) folds A's leading dims into M, so
 * A [L, 1, K] x B [K, N] is one GEMM of L rows, not L GEMVs. */
static bool folds_rows(const fp_node *n)
{
    if (n->op == FP_OP_GEMM || n->op == FP_OP_FUSED_GEMM)
        return true;
    uint32_t bi = n->op == FP_OP_QLINEAR_MATMUL ? 3 : 1;
    bool matmul = n->op == FP_OP_MATMUL || n->op == FP_OP_MATMUL_INTEGER || n->op == FP_OP_QLINEAR_MATMUL ||
                  (n->op == FP_OP_FUSED_MATMUL && !fp_node_attr_int(n, "transA", 0) &&
                   !fp_node_attr_int(n, "transBatchA", 0));
    if (!matmul || n->n_inputs <= bi || !n->inputs[0] || !n->inputs[bi])
        return false;
    const fp_shape *a = &n->inputs[0]->shape, *b = &n->inputs[bi]->shape;
    if (a->rank < 2 || b->rank < 2 || a->rank < b->rank)
        return false;
    for (int32_t i = 0; i < b->rank - 2; i++)
        if (!fp_dim_known(b->dims[i]) || b->dims[i].value != 1)
            return false;
    return true;
}

/* True when the GEMM ONNX Runtime runs for float MatMul or Gemm n has one row (M = 1: its
 * output's second-to-last dim, or every dim but the last when it folds A's rows, or a vector). */
static bool one_row(const fp_node *n)
{
    const fp_shape *y = &n->outputs[0]->shape;
    int32_t from = y->rank == 1 ? 1 : folds_rows(n) ? 0 : y->rank - 2;
    for (int32_t i = from; i < y->rank - 1; i++)
        if (!fp_dim_known(y->dims[i]) || y->dims[i].value != 1)
            return false;
    return true;
}

/* True when ONNX Runtime packs n's B once, at session creation: a 2-D weight (GemmPackBFp32 of
 * onnxruntime/core/providers/cpu/math/gemm_matmul_common.cc, which MatMul, FusedMatMul and Gemm
 * prepack with, refuses any other rank). Any other B, an activation or a batch of matrices, is
 * packed again on every call or read where it lies. */
static bool packed_once(const fp_node *n)
{
    const fp_value *b = n->n_inputs > 1 ? n->inputs[1] : NULL;
    return b && fp_value_is_constant(b) && b->shape.rank == 2;
}

/* True when MLAS may take its one-row kernels (MlasSgemmKernelM1, M1TransposeB) for n: only for
 * alpha 1 and beta 0 or 1 (MlasSgemmOperation, onnxruntime/core/mlas/lib/sgemm.cpp). A FusedMatMul
 * that ONNX Runtime's MatMulScaleFusion gave a scale packs B and runs the general kernel. */
static bool one_row_kernel(const fp_node *n)
{
    if (n->op != FP_OP_FUSED_MATMUL && n->op != FP_OP_GEMM && n->op != FP_OP_FUSED_GEMM)
        return true;
    double beta = n->op == FP_OP_FUSED_MATMUL ? 0 : fp_node_attr_float(n, "beta", 1.0);
    return fp_node_attr_float(n, "alpha", 1.0) == 1.0 && (beta == 0.0 || beta == 1.0);
}

/* A fused attention op (contrib Attention, MultiHeadAttention, GroupQueryAttention) is attention; a
 * MatMulNBits at accuracy_level 4 (int8 compute) matmul_nbits. A float MatMul or Gemm whose B is
 * packed once (packed_once): gemv with one row, else matmul. Any other float one: gemv_rt with one
 * row on MLAS's one-row kernels (a pass over B where it lies), else matmul_rt (B packed on every
 * call). Any other product: matmul. */
static fp_op_class matmul_class(const fp_node *n)
{
    if (n->op == FP_OP_ATTENTION || n->op == FP_OP_GROUP_QUERY_ATTENTION || n->op == FP_OP_MULTI_HEAD_ATTENTION)
        return FP_CLASS_ATTENTION;
    if (n->op == FP_OP_MATMUL_NBITS && fp_node_attr_int(n, "accuracy_level", 0) == 4)
        return FP_CLASS_MATMUL_NBITS;
    bool float_op = n->op == FP_OP_MATMUL || n->op == FP_OP_GEMM || n->op == FP_OP_FUSED_MATMUL ||
                    n->op == FP_OP_FUSED_GEMM;
    if (!float_op || !n->n_outputs || !n->outputs[0] || n->outputs[0]->shape.rank < 1)
        return FP_CLASS_MATMUL;
    if (packed_once(n))
        return one_row(n) ? FP_CLASS_GEMV : FP_CLASS_MATMUL;
    return one_row(n) && one_row_kernel(n) ? FP_CLASS_GEMV_RT : FP_CLASS_MATMUL_RT;
}

fp_op_class fp_cost_class(const fp_node *n)
{
    if (fp_op_has(n->op, FP_OPF_VIEW))
        return FP_CLASS_VIEW;
    switch (fp_op_fuse_kind(n->op)) {
    case FP_FK_CONV:
        return conv_class(n);
    case FP_FK_GEMM:
    case FP_FK_MATMUL:
        return matmul_class(n);
    case FP_FK_EW:
    case FP_FK_ACT:
        return fp_op_has(n->op, FP_OPF_TRANSC) ? FP_CLASS_TRANSCENDENTAL : FP_CLASS_EW;
    case FP_FK_NORM:
        return n->op == FP_OP_SKIP_LAYER_NORM || n->op == FP_OP_SKIP_SIMPLIFIED_LAYER_NORM ? FP_CLASS_SKIP_NORM
                                                                                           : FP_CLASS_NORM;
    case FP_FK_POOL: /* a global pooling reduces each channel to one value: a reduction */
        if (n->op == FP_OP_GLOBAL_AVG_POOL || n->op == FP_OP_GLOBAL_MAX_POOL || n->op == FP_OP_GLOBAL_LP_POOL)
            return FP_CLASS_GLOBAL_POOL;
        return dilated(n) ? FP_CLASS_DILATED_POOL : FP_CLASS_POOL;
    case FP_FK_REDUCE:
        return FP_CLASS_REDUCE;
    case FP_FK_SOFTMAX:
        return FP_CLASS_SOFTMAX;
    case FP_FK_LAYOUT:
    case FP_FK_DATA: /* a reorder to and from NCHWc is a transpose into channel blocks */
        if (n->op == FP_OP_TRANSPOSE || n->op == FP_OP_REORDER_INPUT || n->op == FP_OP_REORDER_OUTPUT)
            return FP_CLASS_TRANSPOSE;
        return n->op == FP_OP_CONCAT || n->op == FP_OP_SPLIT || n->op == FP_OP_SLICE || n->op == FP_OP_TILE
                   ? FP_CLASS_COPY
                   : FP_CLASS_DATA;
    default:
        return FP_CLASS_OTHER;
    }
}

/* The dtype n's arithmetic runs in, whose peak its FLOPs take: its output's, but for the integer
 * products with a float output: MatMulIntegerToFloat multiplies its 8-bit inputs (input 0's dtype),
 * MatMulNBits at accuracy_level 4 quantizes A to int8 block by block and multiplies int8
 * (docs/ContribOperators.md of microsoft/onnxruntime: "4 (int8)"). */
static fp_dtype compute_dtype(const fp_node *n)
{
    if (n->op == FP_OP_MATMUL_INTEGER_TO_FLOAT && n->n_inputs && n->inputs[0])
        return n->inputs[0]->dtype;
    if (n->op == FP_OP_MATMUL_NBITS && fp_node_attr_int(n, "accuracy_level", 0) == 4)
        return FP_DT_INT8;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->dtype != FP_DT_UNDEFINED)
            return n->outputs[k]->dtype;
    return n->n_inputs && n->inputs[0] ? n->inputs[0]->dtype : FP_DT_FLOAT;
}

/* The rows an NCHW convolution n (of class c, `parts` groups) has MLAS's im2col copy
 * (fp_kernel.rows): images x input channels x kernel taps x output rows, each a loop over one
 * output row's pixels with its padding checked and copied one at a time (MlasConvIm2Col,
 * onnxruntime/core/mlas/lib/convolve.cpp). A depthwise one's (class grouped_conv or
 * strided_depthwise), a grouped one's (class conv) and a dense float one's (class conv; a
 * ConvTranspose's GEMM precedes a col2im instead, an integer convolution copies its own way). 0 for
 * any other op or unknown shapes. */
static uint64_t im2col_rows(const fp_node *n, fp_op_class c, uint64_t parts)
{
    const fp_value *w = n->n_inputs > 1 ? n->inputs[1] : NULL, *y = n->n_outputs ? n->outputs[0] : NULL;
    bool dense = c == FP_CLASS_CONV && n->op != FP_OP_CONV_TRANSPOSE && compute_dtype(n) == FP_DT_FLOAT;
    bool copied = c == FP_CLASS_GROUPED_CONV || c == FP_CLASS_STRIDED_DEPTHWISE || (c == FP_CLASS_CONV && parts > 1) ||
                  dense;
    if (!copied || !w || !y || w->shape.rank < 3 || y->shape.rank != w->shape.rank)
        return 0;
    if (!fp_dim_known(y->shape.dims[0]))
        return 0;
    uint64_t rows = (uint64_t)y->shape.dims[0].value * parts; /* images x groups */
    for (int32_t i = 1; i < w->shape.rank; i++)               /* channels a group x the kernel's taps */
        if (fp_dim_known(w->shape.dims[i]))
            rows *= (uint64_t)w->shape.dims[i].value;
        else
            return 0;
    for (int32_t i = 2; i < y->shape.rank - 1; i++) /* the output's rows: all its dims but the last */
        if (fp_dim_known(y->shape.dims[i]))
            rows *= (uint64_t)y->shape.dims[i].value;
        else
            return 0;
    return rows;
}

/* FLOPs' worth of one element MLAS's im2col copies for a convolution of class conv (its
 * padding checked and the element stored one at a time, MlasConvIm2Col), on top of the GEMM's
 * FLOPs and [launch] im2col_row a row. The copy is paid once per input channel x tap x output
 * pixel, the GEMM's FLOPs once more per output channel: a convolution of few output channels is
 * slower per FLOP. Fitted to 18 dense 3x3 convolutions of 8 to 512 channels at 7x7 to 28x28
 * pixels timed as chains with ONNX Runtime 1.31.1 on one core of an AVX-512 host (docs/devices.md,
 * "conv"): rms log error 0.044, against 0.54 for FLOPs alone. */
#define IM2COL_ELEMENT 32.0

/* A copied element at a width stride above 1 costs IM2COL_STRIDED times IM2COL_ELEMENT, but for the
 * first IM2COL_ROW_HEAD elements of each output row, which cost IM2COL_ELEMENT either way:
 * MlasConvIm2Col copies a row's inside elements four at a time at a width stride of 1 and one at
 * a time at any other (a stride along the height alone keeps the fast copy), and on rows of a few
 * elements the unit stride's set-up and remainder cost as much. Fitted to nine strided
 * convolutions (dense 1-D at strides 2 and 4, dense and grouped 2-D at stride 2; 32 to 256
 * channels, rows of 7 to 1000), each against the same convolution at stride 1 on the same
 * output, timed as fans of five with ONNX Runtime 1.31.1 on one core of an AVX-512 host
 * (docs/devices.md, "Strided im2col"): geometric mean 0.997 of the stride-1 twin's ratio, rms
 * 1.8%; five held out (1-D strides 2 and 5, 5x5, 16 channels at 112 wide, 55 groups at 7 wide):
 * 0.998, rms 2.5%; the unit cost gave 0.82, rms 23%. */
#define IM2COL_STRIDED 2.4
#define IM2COL_ROW_HEAD 8

/* The times a blocked convolution's fused HardSwish or HardSigmoid counts its output's bytes in its
 * activation's pass (post_bytes): MlasActivation evaluates them at half a stream's rate. Measured
 * with ONNX Runtime 1.31.1 on one core of an AVX-512 host, chains of five against one at
 * ORT_ENABLE_ALL, a fused HardSwish against none: 2.0-2.1 times the pass's streaming time on
 * pointwise 96 channels at 28x28 and on depthwise 3x3 of 16 at 112x112 and 64 at 56x56, 2.6-4.6 on
 * depthwise ones of 240 at 28x28 to 7x7 (one call a row of a channel block, 14 ns each); a
 * HardSigmoid 1.6 and 2.5; a Clip (ReLU6) 1.5-1.7 and a LeakyRelu 2.1, left at 1 (docs/devices.md,
 * "A fused activation's own pass"). */
#define POST_HARD 2

/* The output bytes kernel n (of class c) passes over again on d (fp_kernel.post): a blocked (NCHWc)
 * convolution's whose fused activation MLAS applies in a pass of its own over the rows the kernel
 * wrote (any but Relu, which its kernels apply in registers: MLAS_CONV_KERNEL_FLAG_RELU_ACTIVATION
 * against _OTHER_ACTIVATION, onnxruntime/core/mlas/lib/snchwc.cpp; a HardSwish's or HardSigmoid's
 * POST_HARD times); on a blocked (MLAS) profile, an NCHW convolution's with a bias or a fused
 * activation, Relu too: MLAS adds the bias and applies the activation in a pass of its own over
 * each GEMM's output, none when there is neither (MlasActivation, onnxruntime/core/mlas/lib/activate.cpp,
 * called by MlasConv; docs/devices.md, "A convolution's bias"); and on a blocked profile a Gemm's
 * with a C and beta not 0: ONNX Runtime writes C, broadcast, into the output, then
 * MLAS's GEMM reads it back with beta (GemmBroadcastBias, onnxruntime/core/providers/cpu/math/gemm.cc;
 * measured: a bias made ConvNeXt-T's 3136x96 by 96x384 product 287 us slower, its 4.8 MB output past
 * the L2, and one of 0.6 MB 20-29 us; docs/devices.md, "A Gemm's bias"); 0 for any other op. */
static uint64_t post_bytes(const fp_node *n, fp_op_class c, const fp_device *d)
{
    if (!n->n_outputs || !n->outputs[0] || !n->metrics_known)
        return 0;
    uint64_t out = n->metrics.bytes_out;
    if ((n->op == FP_OP_GEMM || n->op == FP_OP_FUSED_GEMM) && d->nchwc_block && n->n_inputs > 2 && n->inputs[2] &&
        fp_node_attr_float(n, "beta", 1.0) != 0)
        return out;
    const fp_attr *a = fp_node_attr(n, "activation");
    const char *act = a && a->type == FP_ATTR_STRING ? a->u.s : NULL;
    uint64_t times = act && (strcmp(act, "HardSwish") == 0 || strcmp(act, "HardSigmoid") == 0) ? POST_HARD : 1;
    if (c == FP_CLASS_NCHWC_CONV || c == FP_CLASS_NCHWC_DEPTHWISE)
        return act && strcmp(act, "Relu") != 0 ? times * out : 0;
    bool biased = n->n_inputs > 2 && n->inputs[2];
    if (d->nchwc_block && (n->op == FP_OP_CONV || n->op == FP_OP_FUSED_CONV) && (biased || act))
        return times * out;
    return 0;
}

/* The known dims of value v (rank > 0, every dim known) into d (at most 8); its rank, else -1. */
static int known_dims(const fp_value *v, uint64_t *d)
{
    if (!v || v->shape.rank <= 0 || v->shape.rank > 8)
        return -1;
    for (int32_t i = 0; i < v->shape.rank; i++) {
        if (!fp_dim_known(v->shape.dims[i]))
            return -1;
        d[i] = (uint64_t)v->shape.dims[i].value;
    }
    return v->shape.rank;
}

/* The rows M and columns N of the matrix ONNX Runtime's Transpose hands MLAS (MlasTranspose, 4x4
 * blocks of 4-byte elements) per loop for permutation p of dims x (rank r), and the loops: a
 * permutation that moves one axis, either the last out (p = 0..to-1, from, to..from-1) or one axis
 * in to the last place (p = 0..from-1, from+1..r-1, from); ORT tries the outward move first
 * (TransposeSingleAxisOutwards / Inwards, onnxruntime/core/providers/cpu/tensor/transpose.cc). False
 * for any other permutation (block copies or its element-wise loop). */
static bool mlas_transpose(const int64_t *p, int r, const uint64_t *x, uint64_t *m, uint64_t *n, uint64_t *loops)
{
    int at = 0;
    while (at < r && p[at] == at)
        at++;
    if (at >= r - 1)
        return false;
    bool out = p[at] == r - 1, in = true;
    for (int i = at; i < r; i++) {
        out = out && (i == at || p[i] == i - 1);
        in = in && p[i] == (i == r - 1 ? at : i + 1);
    }
    if (!out && !in)
        return false;
    *loops = *m = 1;
    for (int i = 0; i < at; i++)
        *loops *= x[i];
    for (int i = at; i < r - 1; i++)
        *m *= x[i + (out ? 0 : 1)];
    *n = out ? x[r - 1] : x[at];
    if (!out) { /* inward: rows are the moved axis, columns the dims after it */
        uint64_t t = *m;
        *m = *n, *n = t;
    }
    return true;
}

/* The bytes Transpose n re-reads on d (fp_kernel.reread): MLAS transposes 4 columns at a time down
 * all M rows, one 16-byte piece of each row's line per pass. Where the M lines a pass touches
 * outgrow what the L1 can hold at their stride (its ways, L1 / 4 KB, times the sets the stride
 * reaches: an x86 L1's 64 sets repeat every 4 KB), each pass loads them again: ceil(N / 4) loads of
 * each row's lines instead of one per line. 0 on a profile without MLAS (nchwc_block) or [cache],
 * for another op, dtype or permutation, or rows of under 16 elements. */
static uint64_t transpose_rereads(const fp_node *n, const fp_device *d)
{
    uint64_t x[FP_MAX_RANK], m, cols, loops;
    int64_t p[FP_MAX_RANK];
    int r;
    uint64_t l1 = d->cache[0].bytes;
    if (n->op != FP_OP_TRANSPOSE || !d->nchwc_block || l1 < 4096 || l1 % 4096 || !n->n_inputs || !n->inputs[0] ||
        fp_dtype_bits(n->inputs[0]->dtype) != 32 || known_dims(n->inputs[0], x) < 2 || !fp_layout_perm(n, p, &r) ||
        r != n->inputs[0]->shape.rank || !mlas_transpose(p, r, x, &m, &cols, &loops) || cols < 16)
        return 0;
    uint64_t row = cols * 4, stride = row & (~row + 1); /* the stride's largest power-of-two factor */
    uint64_t sets = 4096 / MIN(MAX(stride, 64), 4096), lines = row / 64 + (row % 64 != 0);
    if (m <= l1 / 4096 * sets)
        return 0;
    return loops * m * ((cols + 3) / 4 - lines) * 64;
}

/* count x (M K + K N + M N), saturating at UINT64_MAX; 0 when a factor is 0. */
static uint64_t gemm_elems(uint64_t count, uint64_t m, uint64_t n, uint64_t k)
{
    uint64_t mk, kn, mn, sum, out;
    if (!g_uint64_checked_mul(&mk, m, k) || !g_uint64_checked_mul(&kn, k, n) || !g_uint64_checked_mul(&mn, m, n) ||
        !g_uint64_checked_add(&sum, mk, kn) || !g_uint64_checked_add(&sum, sum, mn) ||
        !g_uint64_checked_mul(&out, sum, count))
        return UINT64_MAX;
    return m && n && k ? out : 0;
}

/* a x b, saturating at UINT64_MAX (absurd dims from a broken file must not wrap). */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t p;
    return g_uint64_checked_mul(&p, a, b) ? p : UINT64_MAX;
}

static uint64_t product(const uint64_t *d, int from, int to)
{
    uint64_t p = 1;
    for (int i = from; i < to; i++)
        p = mul_sat(p, d[i]);
    return p;
}

/* The GEMMs ONNX Runtime runs for a product n whose B is not packed once: one per matrix of the
 * output's batch dims (every dim but the last two, their product saturating), or one when it folds
 * A's rows (folds_rows), an output dim is unknown or the batch is empty. */
static uint64_t batch_gemms(const fp_node *n)
{
    uint64_t y[8];
    int ry = n->n_outputs > 0 ? known_dims(n->outputs[0], y) : -1;
    return ry < 3 || folds_rows(n) ? 1 : MAX(product(y, 0, ry - 2), 1);
}

/* fp_cost_parts of n, whose class (fp_cost_class) is c. */
static uint64_t class_parts(const fp_node *n, fp_op_class c)
{
    if (c == FP_CLASS_MATMUL_RT || c == FP_CLASS_GEMV_RT)
        return batch_gemms(n);
    if (!fp_op_class_nchw_conv(c))
        return 1;
    return (uint64_t)MAX(fp_node_attr_int(n, "group", 1), 1);
}

uint64_t fp_cost_parts(const fp_node *n) { return class_parts(n, fp_cost_class(n)); }

/* Convolutions: im2col + one GEMM per image and group (ConvTranspose: GEMM + col2im). */
static uint64_t conv_operands(const fp_node *n)
{
    uint64_t x[8], w[8], y[8];
    uint32_t wi = n->op == FP_OP_QLINEAR_CONV ? 3 : 1;
    int rx = n->n_inputs > 0 ? known_dims(n->inputs[0], x) : -1;
    int rw = n->n_inputs > wi ? known_dims(n->inputs[wi], w) : -1;
    int ry = n->n_outputs > 0 ? known_dims(n->outputs[0], y) : -1;
    uint64_t g = (uint64_t)MAX(fp_node_attr_int(n, "group", 1), 1);
    if (rx < 3 || rw != rx || ry != rx)
        return 0;
    if (n->op == FP_OP_CONV_TRANSPOSE) /* W [C, M/g, k...]: (M/g k) x (C/g) times (C/g) x pixels_in */
        return gemm_elems(mul_sat(x[0], g), mul_sat(w[1], product(w, 2, rw)), product(x, 2, rx), w[0] / g);
    return gemm_elems(mul_sat(y[0], g), w[0] / g, product(y, 2, ry), product(w, 1, rw));
}

/* MatMulNBits and MatMulIntegerToFloat, Y [..., M, N] from A [..., M, K]: one GEMM per batch of
 * M x K, K x N (dequantized) and M x N elements (their FLOPs hold more than the products). */
static uint64_t quant_operands(const fp_node *n)
{
    uint64_t a[8], y[8];
    int ra = n->n_inputs > 0 ? known_dims(n->inputs[0], a) : -1;
    int ry = n->n_outputs > 0 ? known_dims(n->outputs[0], y) : -1;
    if (ra < 1 || ry != ra)
        return 0;
    uint64_t m = ry >= 2 ? y[ry - 2] : 1, mn = mul_sat(m, y[ry - 1]), numel = product(y, 0, ry);
    return mn ? gemm_elems(numel / mn, m, y[ry - 1], a[ra - 1]) : 0;
}

uint64_t fp_cost_gemm_operands(const fp_node *n)
{
    switch (n->op) {
    case FP_OP_CONV:
    case FP_OP_CONV_INTEGER:
    case FP_OP_QLINEAR_CONV:
    case FP_OP_FUSED_CONV:
    case FP_OP_CONV_TRANSPOSE:
        return conv_operands(n);
    case FP_OP_MATMUL_NBITS:
    case FP_OP_MATMUL_INTEGER_TO_FLOAT:
        return quant_operands(n);
    case FP_OP_GEMM:
    case FP_OP_FUSED_GEMM:
    case FP_OP_MATMUL:
    case FP_OP_MATMUL_INTEGER:
    case FP_OP_QLINEAR_MATMUL:
    case FP_OP_FUSED_MATMUL: {
        /* Y [..., M, N]: K from the FLOPs (2 x |Y| x K, docs/metrics.md; Gemm's bias adds |Y|) */
        uint64_t y[8];
        int ry = n->n_outputs > 0 ? known_dims(n->outputs[0], y) : -1;
        if (ry < 1 || !n->metrics_known)
            return 0;
        uint64_t numel = product(y, 0, ry), nn = y[ry - 1];
        uint64_t m = folds_rows(n) ? product(y, 0, ry - 1) : ry >= 2 ? y[ry - 2] : 1, mn = mul_sat(m, nn);
        uint64_t twice = mul_sat(numel, 2);
        if (numel == 0 || numel == UINT64_MAX || mn == 0 || twice == UINT64_MAX || n->metrics.flops < twice)
            return 0;
        return gemm_elems(numel / mn, m, nn, n->metrics.flops / twice);
    }
    case FP_OP_ATTENTION: /* its surface: the scores its softmax passes over, head by head */
    case FP_OP_GROUP_QUERY_ATTENTION:
    case FP_OP_MULTI_HEAD_ATTENTION:
        return n->metrics_known ? fp_metrics_attention_scores(n) : 0;
    default:
        return 0;
    }
}

/* Whether ONNX Runtime's kernel of n moves no data: a Cast to the type it reads copies only when its
 * output has a buffer of its own (cast_op.cc), and its MayInplace(0, 0) lets the allocation planner
 * hand the input's buffer to the output when n is the input's last reader; that holds for a node's
 * output that n alone reads and that is no graph output (the planner keeps graph inputs and outputs
 * out of place). */
static bool inplace_copy(const fp_node *n)
{
    if (n->op != FP_OP_CAST || n->n_inputs < 1 || n->n_outputs < 1 || !n->inputs[0] || !n->outputs[0])
        return false;
    const fp_value *x = n->inputs[0], *y = n->outputs[0];
    return x->dtype == y->dtype && x->producer && x->kind == FP_VALUE_INTERMEDIATE && x->n_uses == 1 && !x->is_output &&
           !y->is_output;
}

/* Float bytes under a dtype what-if (FP_DT_UNDEFINED: as they are). */
static uint64_t float_scaled(uint64_t bytes, fp_dtype what_if)
{
    return what_if == FP_DT_UNDEFINED ? bytes : (uint64_t)((double)bytes * fp_dtype_bits(what_if) / 32.0);
}

/* `bytes` of n's traffic under a dtype what-if (float32 tensors rescaled). */
static uint64_t scaled(const fp_node *n, fp_dtype what_if, uint64_t bytes)
{
    return compute_dtype(n) == FP_DT_FLOAT ? float_scaled(bytes, what_if) : bytes;
}

/* Bytes of n's traffic under a dtype what-if. */
static uint64_t scaled_bytes(const fp_node *n, fp_dtype what_if)
{
    return scaled(n, what_if, n->metrics.bytes_act + n->metrics.bytes_weight + n->metrics.bytes_out);
}

/* The bytes kernel n moves under a dtype what-if (fp_op_cost.bytes): none for a Cast ONNX Runtime
 * runs in place (inplace_copy). */
static uint64_t kernel_bytes(const fp_node *n, fp_dtype what_if)
{
    return inplace_copy(n) ? 0 : scaled_bytes(n, what_if);
}

/* Whether node n of a graph runs as a kernel of its own that the cost model times by its traffic. */
static bool costed_kernel(const fp_node *n)
{
    return !(n->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) && !fp_op_has(n->op, FP_OPF_VIEW) &&
           !fp_op_has(n->op, FP_OPF_CTRL);
}

/* Bytes of graph input v, a float one under a dtype what-if scaled to it; 0 when unknown. */
static uint64_t input_bytes(const fp_value *v, fp_dtype what_if)
{
    uint64_t bytes = fp_value_bytes(v);
    return v->dtype == FP_DT_FLOAT ? float_scaled(bytes, what_if) : bytes;
}

double fp_cost_cold_fraction(const fp_graph *g, const fp_device *d, fp_dtype what_if)
{
    uint64_t capacity = fp_device_last_level(d), weights = 0, act = 0;
    for (guint i = 0; capacity && i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        if (!costed_kernel(n))
            continue;
        weights += scaled(n, what_if, n->metrics.bytes_weight);
        act += scaled(n, what_if, n->metrics.bytes_out);
    }
    return fp_roofline_lost((double)(weights + act), (double)capacity, fp_device_last_from(d));
}

uint64_t fp_cost_kept_bytes(const fp_graph *g, fp_dtype what_if)
{
    uint64_t bytes = 0;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        if (costed_kernel(n))
            bytes += scaled(n, what_if, n->metrics.bytes_weight);
    }
    for (guint i = 0; i < g->inputs->len; i++)
        bytes += input_bytes(g_ptr_array_index(g->inputs, i), what_if);
    return bytes;
}

/* The bytes kernel n reads from graph inputs, directly or through views, under a dtype what-if. */
static uint64_t graph_input_reads(const fp_node *n, fp_dtype what_if)
{
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        while (v && v->producer && fp_op_has(v->producer->op, FP_OPF_VIEW) && v->producer->n_inputs)
            v = v->producer->inputs[0];
        if (v && v->kind == FP_VALUE_INPUT)
            bytes += fp_value_bytes(n->inputs[k]);
    }
    return scaled(n, what_if, bytes);
}

/* c rounded up to a multiple of block (block 0: c). */
static uint64_t round_up(uint64_t c, uint64_t block) { return block ? (c + block - 1) / block * block : c; }

/* The work of one FLOP of a SkipSimplifiedLayerNormalization in units of its class skip_norm's, a
 * SkipLayerNormalization's FLOP: ONNX Runtime runs both through one kernel (skip_layer_norm.cc,
 * `simplified` without the mean and beta), 6 FLOPs an element against 9 (docs/metrics.md). Measured
 * with ONNX Runtime 1.31.1 on one core of the Intel Xeon VM, chains of 9 against 1, ns an element
 * (simplified, full): 128 x 768 0.71 and 4.46, 1 x 2048 0.85 and 4.62, 1 x 896 1.05 and 4.84: a FLOP
 * of the simplified form 0.24-0.33 of the full one's (docs/devices.md, "skip_norm"). */
#define SKIP_SIMPLIFIED_WORK 0.27

/* The work of one FLOP of a float16 or bfloat16 attention op (class attention) in units of a float
 * one's, on a profile without a peak of its own for that type (a CPU): ONNX Runtime's CPU kernels
 * (GroupQueryAttention, MultiHeadAttention) widen each head's keys and values to float before their
 * products. Measured with ONNX Runtime 1.31.1 on one core of the Intel Xeon VM, GroupQueryAttention
 * of one new token, four of them in a run, float16 against float32 with their data in the L2
 * (heads, KV heads, head size, past): 4,2,16,127 1.09; 4,2,64,127 1.23; 8,2,64,127 1.50; 8,2,64,255
 * 1.46; 16,4,64,63 1.46; 8,2,128,127 1.53 of the time; with the factor the estimates of all eight
 * shapes timed lie at 0.86-1.00 of the measured times, 0.72-0.82 without (docs/devices.md,
 * "attention"). */
#define HALF_ATTENTION_WORK 1.35

/* The work of one element of ONNX Runtime's NCHWc reorders (ReorderInput, ReorderOutput: MLAS's
 * MlasReorderInputNchw and MlasReorderOutputNchw, whole 16-float blocks) in units of one of class
 * transpose's, whose [efficiency] the calibration fits to Transpose ops (MlasTranspose, 4 floats a
 * step). Measured with ONNX Runtime 1.31.1 on one core of the Intel Xeon VM: in PP-OCRv4 det's run
 * at ORT_ENABLE_ALL 8.3-9.6 us for a 0.31 MB tensor against 12.9 estimated at the transpose rate;
 * chains of a ReorderInput and a ReorderOutput of one tensor, 0.41 and 0.82 MB: 9.2 and 19.6 us
 * each, 0.53-0.57 of that rate (docs/devices.md, "transpose"). */
#define REORDER_WORK 0.7

/* The work of one FLOP of transcendental op n (docs/metrics.md: one per element, eight for the
 * Gelu family), in units of one element of MLAS's Logistic (Sigmoid) and Tanh kernels
 * (onnxruntime/core/mlas/lib/logistic.cpp, tanh.cpp: one rational evaluation each). Measured with
 * ONNX Runtime 1.31.1 on one core of an AVX-512 host, compute-bound chains of 200K elements, ns an
 * element: Sigmoid 0.26-0.27, Tanh 0.24, Exp 0.11 (one polynomial, no division), Erf 0.35 (both
 * branches' polynomials and an exp for every element), QuickGelu 0.15, Gelu 0.45, FastGelu 0.42,
 * BiasGelu 0.96, Sqrt, Reciprocal and Div 0.17-0.22 (the divider's throughput), Pow 0.30 by a
 * constant 2, 0.49 by 3 and 4.4 by any other exponent (docs/devices.md, "transcendental"). */
static double transcendental_work(const fp_node *n)
{
    double e = 0;
    switch (n->op) {
    case FP_OP_EXP:
        return 0.42;
    case FP_OP_ERF:
        return 1.4;
    case FP_OP_QUICK_GELU:
        return 0.6 / 8;
    case FP_OP_GELU:
        return 1.7 / 8;
    case FP_OP_FAST_GELU:
        return 1.6 / 8;
    case FP_OP_BIAS_GELU:
        return 3.7 / 8;
    case FP_OP_SQRT:
    case FP_OP_RECIPROCAL:
    case FP_OP_DIV:
        return 0.72;
    case FP_OP_POW:
        if (n->n_inputs > 1 && n->inputs[1] && fp_value_scalar(n->inputs[1], &e) && (e == 2 || e == 3))
            return e == 2 ? 1.1 : 1.8;
        return 16.2;
    default:
        return 1;
    }
}

/* The columns of the float GEMM (MLAS's SGEMM) kernel n of class cls runs as (the N of C[M,N] =
 * A[M,K] B[K,N]): a MatMul's or Gemm's last output dim, a convolution's output pixels (its im2col
 * GEMM multiplies the weights by one column per pixel), a ConvTranspose's input pixels (its GEMM
 * multiplies the transposed weights by the input, then scatters the columns to the output); 0 for
 * other classes, another dtype (the integer GEMMs block otherwise) or an unknown shape. */
static uint64_t gemm_columns(const fp_node *n, fp_op_class cls)
{
    bool matmul = cls == FP_CLASS_MATMUL || cls == FP_CLASS_MATMUL_RT;
    if ((!matmul && cls != FP_CLASS_CONV && cls != FP_CLASS_POINTWISE_CONV) || compute_dtype(n) != FP_DT_FLOAT)
        return 0;
    const fp_value *v = n->op == FP_OP_CONV_TRANSPOSE ? (n->n_inputs ? n->inputs[0] : NULL)
                                                      : (n->n_outputs ? n->outputs[0] : NULL);
    if (!v)
        return 0;
    const fp_shape *y = &v->shape;
    int32_t from = matmul ? y->rank - 1 : 2;
    if (y->rank < 1 || from < 0 || from >= y->rank)
        return 0;
    uint64_t cols = 1;
    for (int32_t i = from; i < y->rank; i++) {
        if (!fp_dim_known(y->dims[i]) || y->dims[i].value <= 0)
            return 0;
        cols *= (uint64_t)y->dims[i].value;
    }
    return cols;
}

/* FLOPs' worth of what MLAS's blocked depthwise kernel (MLAS_NCHWC_CONV_DEPTHWISE_ALGORITHM,
 * onnxruntime/core/mlas/lib/snchwc.cpp) does besides its multiply-adds (two FLOPs a tap of an
 * output that falls inside the input's rows, inside_rows): per output, clearing its accumulator
 * and storing it, as much as DW_OUTPUT of its taps; per call, one output row of one channel block
 * (its effective kernel height and its padded columns one vector at a time), as much as DW_ROW
 * taps of an output. Fitted to twenty convolutions of 3x3, 5x5 and 7x7, square maps of 7x7 to
 * 112x112 and maps of 1 to 32 rows of 96, timed as chains with ONNX Runtime 1.31.1 on one core of
 * an AVX-512 host (docs/devices.md, "nchwc_depthwise"): rms log error 0.096, against 0.34 with
 * every tap counted. */
#define DW_OUTPUT 1.5
#define DW_ROW 1650.0

/* The work of a blocked depthwise convolution (output y, `blocks` channel blocks, f its padded
 * channels over its channels): its FLOPs plus its per output and per row share (DW_OUTPUT,
 * DW_ROW), all on the padded channels. */
static uint64_t depthwise_work(uint64_t flops, const fp_shape *y, double f, uint64_t blocks)
{
    uint64_t outputs = 0, rows = blocks;
    if (y->rank < 3 || !fp_shape_numel(y, &outputs))
        return (uint64_t)((double)flops * f);
    for (int32_t i = 0; i < y->rank - 1; i++)
        rows *= i == 1 ? 1 : (uint64_t)y->dims[i].value; /* images x output rows (x depth) */
    return (uint64_t)(((double)flops + 2 * DW_OUTPUT * (double)outputs) * f + 2 * DW_ROW * (double)rows);
}

/* The fewest elements of K whose work a MatMulNBits at accuracy_level 4 (class matmul_nbits) does
 * per output: MLAS's int8 kernel for block-quantized weights (SQNBitGemm, CompInt8) sets up and
 * reduces each output column whatever its K. Measured with ONNX Runtime 1.31.1 on one core of an
 * AVX-512 host, one row (fans of nine against one, 4 bits in blocks of 32): K = 64 over N = 32 to
 * 512, 3.1 ns a column; K = 128 as K = 64; from K = 256 on, the time grows with N x K
 * (docs/devices.md, "matmul_nbits"). */
#define NBITS_MIN_K 128

/* FLOPs' worth of one filter vector (one channel block of one input channel and tap) that MLAS's
 * convolution of an NCHW input into blocked output (MLAS_NCHWC_CONV_NCHW_ALGORITHM, snchwc.cpp)
 * loads for one output row: it walks the whole filter once per output row, a load that the few
 * output columns of a patch embedding's row do not hide once the filter is past the L1. Measured
 * with ONNX Runtime 1.31.1 on one core of an AVX-512 host, chains of four convolutions of 3
 * channels with 16x16 and 32x32 kernels of stride 16 and 32 (docs/devices.md, "A patch
 * embedding"): 0.30-0.32 ns a vector past the FLOPs, about 84 FLOPs at nchwc_conv's rate. */
#define NCHW_FILTER_LOAD 84.0

/* The filter vectors a blocked convolution n reading an NCHW input (cin channels, fewer than d's
 * block b) loads past d's L1 (NCHW_FILTER_LOAD): images x output rows x its filter's vectors,
 * when its filter, output channels padded to b, exceeds d's L1; else 0 (unknown shapes too). */
static uint64_t nchw_filter_loads(const fp_node *n, uint64_t cin, uint64_t b, const fp_device *d)
{
    uint64_t w[8], y[8];
    int rw = n->n_inputs > 1 ? known_dims(n->inputs[1], w) : -1;
    int ry = n->n_outputs ? known_dims(n->outputs[0], y) : -1;
    if (rw < 3 || ry != rw || !d->cache[0].bytes)
        return 0;
    uint64_t vectors = mul_sat(round_up(w[0], b) / b, mul_sat(cin, product(w, 2, rw)));
    if (mul_sat(vectors, b * sizeof(float)) <= d->cache[0].bytes)
        return 0;
    return mul_sat(vectors, mul_sat(y[0], product(y, 2, ry - 1))); /* x images x output rows */
}

/* Elements' worth of work a row-wise kernel spends on each row besides its elements (ONNX
 * Runtime's LayerNormalization and Softmax kernels loop over rows, each with its own setup and
 * its reductions' tails). Measured with ONNX Runtime 1.31.1 on one core of an AVX-512 host,
 * chains of five over 460,800 elements in rows of 16 to 768 (docs/devices.md, "Rows of a norm
 * or a softmax"): LayerNormalization 22 ns a row and 0.41 ns an element; Softmax 9.4 ns a row and
 * 0.19 ns an element, and 12-14 ns more a row whose length is not a whole number of vectors. The
 * skip forms' kernel (skip_norm) shows no such share: over 12,288 elements in rows of 16 to 768,
 * SkipLayerNormalization 4.6 ns an element and none a row, the simplified one 0.62 ns an element
 * and 4 ns a row (where its row of 54 elements would be 33 ns); they count their FLOPs alone. */
#define NORM_ROW 54.0
#define SOFTMAX_ROW 49.0
#define SOFTMAX_TAIL 68.0

/* Whether n is a Softmax or a LogSoftmax. */
static bool softmax_op(const fp_node *n) { return n->op == FP_OP_SOFTMAX || n->op == FP_OP_LOG_SOFTMAX; }

/* The length of the rows row-wise op n (a LayerNormalization-like norm or a Softmax) works
 * along: the product of its input's dims from `axis` on (a Softmax from opset 13: the last dim
 * when `axis` is the last); 0 when it has none or they are not known. */
static uint64_t row_length(const fp_node *n)
{
    const fp_shape *x = n->n_inputs && n->inputs[0] ? &n->inputs[0]->shape : NULL;
    bool softmax = softmax_op(n);
    if (!x || x->rank < 1)
        return 0;
    int64_t axis = fp_node_attr_int(n, "axis", softmax && n->opset > 0 && n->opset < 13 ? 1 : -1);
    axis = axis < 0 ? axis + x->rank : axis;
    if (axis < 0 || axis >= x->rank || (softmax && n->opset >= 13 && axis != x->rank - 1))
        return 0;
    uint64_t len = 1;
    for (int32_t i = (int32_t)axis; i < x->rank; i++) {
        if (!fp_dim_known(x->dims[i]) || x->dims[i].value <= 0)
            return 0;
        len *= (uint64_t)x->dims[i].value;
    }
    return len;
}

/* The work of row-wise op n with `flops` FLOPs on d: its FLOPs plus its rows' share (NORM_ROW,
 * SOFTMAX_ROW, and SOFTMAX_TAIL when a row is not a whole number of d's vectors of nchwc_block
 * floats), priced at its FLOPs an element: per element, the row's share over its length. */
static uint64_t row_work(const fp_node *n, uint64_t flops, const fp_device *d)
{
    uint64_t len = row_length(n);
    if (!len)
        return flops;
    double per_row = softmax_op(n) ? SOFTMAX_ROW + (d->nchwc_block && len % d->nchwc_block ? SOFTMAX_TAIL : 0)
                                   : NORM_ROW;
    return (uint64_t)((double)flops * (1 + per_row / (double)len));
}

/* Elements' worth of work ONNX Runtime's broadcast loop spends on each span of a binary
 * elementwise op beyond the first, and the factor on its elements' work when both inputs vary
 * along a span (its `general` span function, against one input read as a scalar a span): its
 * Broadcaster splits the output into spans of the innermost dims over which neither input changes
 * between broadcast and not, and BroadcastLooper calls one span function per span
 * (onnxruntime/core/providers/cpu/math/element_wise_ops.h). Measured with ONNX Runtime 1.31.1 on
 * one core of an AVX-512 host, chains of Add over 301,056 elements (docs/devices.md, "Spans of a
 * broadcast"): a bias of 768, 384, 96, 24 and 8 along the last dim costs 1.37, 1.31, 2.0, 4.1 and
 * 10 times the same Add of two equal shapes. */
#define BCAST_SPAN 70.0
#define BCAST_GENERAL 1.2

/* The spans ONNX Runtime's broadcast loop splits binary op n's output into (BCAST_SPAN), with
 * *general set when both inputs vary along a span; 1 for one span (equal shapes, a scalar input,
 * one input broadcast along the whole output's inner dims) or unknown shapes. Output dims of 1
 * are skipped, as its Broadcaster does. */
static uint64_t broadcast_spans(const fp_node *n, bool *general)
{
    *general = false;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs || !n->outputs[0])
        return 1;
    const fp_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    uint64_t total = 0, span = 0;
    if (!fp_shape_static(a) || !fp_shape_static(b) || !fp_shape_numel(y, &total) || total == 0)
        return 1;
    bool one_a = false, one_b = false;
    for (int32_t i = 1; i <= y->rank; i++) {
        int64_t o = y->dims[y->rank - i].value;
        if (o == 1)
            continue;
        bool ea = i > a->rank || a->dims[a->rank - i].value == 1, eb = i > b->rank || b->dims[b->rank - i].value == 1;
        if (!span) {
            one_a = ea, one_b = eb, span = (uint64_t)o;
        } else if (ea == one_a && eb == one_b) {
            span *= (uint64_t)o;
        } else {
            break;
        }
    }
    if (!span || span >= total)
        return 1;
    *general = !one_a && !one_b;
    return total / span;
}

/* The work of binary elementwise op n of `work` on ONNX Runtime's CPU kernels: `work` plus its
 * broadcast loop's (BCAST_SPAN a span beyond the first; BCAST_GENERAL on `work` when both inputs
 * vary along its spans). Only ops through that loop: ai.onnx's binary broadcasting ops, not
 * Where (a ternary loop of its own). */
static uint64_t broadcast_work(const fp_node *n, uint64_t work)
{
    bool general = false;
    uint64_t spans = fp_op_has(n->op, FP_OPF_EW) && n->op != FP_OP_WHERE ? broadcast_spans(n, &general) : 1;
    if (spans <= 1)
        return work;
    return (uint64_t)((double)work * (general ? BCAST_GENERAL : 1) + BCAST_SPAN * (double)(spans - 1));
}

/* The elements n's im2col copy moves (its `rows`, im2col_rows, times its output rows' length)
 * when its work on d counts them (kernel_work): a float convolution of class conv on a blocked
 * (MLAS) profile; else 0. The copy, the K N of its GEMM's M K + K N + M N operands, is then that
 * GEMM's surface, and its saturation is that of its size alone (graph_cost leaves its operands
 * out): the surface term would count the copy twice and charge the weights (M K), which MLAS
 * multiplies in place, as well. */
static uint64_t counted_copies(const fp_node *n, fp_op_class cls, uint64_t rows, const fp_device *d)
{
    if (cls != FP_CLASS_CONV || !rows || !d->nchwc_block || !gemm_columns(n, cls))
        return 0;
    const fp_shape *y = &n->outputs[0]->shape; /* rows > 0: a known output of im2col_rows's rank */
    return fp_dim_known(y->dims[y->rank - 1]) ? rows * (uint64_t)MAX(y->dims[y->rank - 1].value, 0) : 0;
}

/* What the `copies` elements n's im2col moves cost more, in elements, at a width stride above 1
 * (IM2COL_STRIDED - 1 times each, but for each output row's first IM2COL_ROW_HEAD); else 0. */
static double strided_copies(const fp_node *n, uint64_t copies)
{
    if (!copies || width_stride(n) <= 1)
        return 0;
    const fp_shape *y = &n->outputs[0]->shape; /* copies > 0: a known output (counted_copies) */
    double width = (double)y->dims[y->rank - 1].value;
    return (IM2COL_STRIDED - 1) * (double)copies * MAX(0, width - IM2COL_ROW_HEAD) / width;
}

/* Elements n writes, over all its outputs; `unknown` when a shape is not static. */
static uint64_t output_elements(const fp_node *n, uint64_t unknown)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        uint64_t elems = 0;
        if (!n->outputs[i] || !fp_shape_numel(&n->outputs[i]->shape, &elems))
            return unknown;
        total += elems;
    }
    return total;
}

/* The work of one element a Tile writes on ONNX Runtime's general path, in units of class copy's
 * (a Concat's block copies): tile.cc copies one row of the last dim at a time unless the tiling is
 * copies of whole blocks (IsTileMemcpy: no dim above 1 before the first tiled axis, but the first).
 * Measured with ONNX Runtime 1.31.1 on one core of the Intel Xeon VM, chains of 9 against 1: a
 * grouped-query decoder's Tile of [1, 2, 1, 128, 16] by [1, 1, 2, 1, 1] 1.45 us, a Concat of the
 * same 8192 elements 0.87 us (docs/devices.md, "copy"). */
#define TILE_ROW_WORK 1.67

/* Whether Tile n takes ONNX Runtime's general path (TILE_ROW_WORK): a dim above 1 other than the
 * first lies before its first tiled axis; false when its input's dims or repeats are unknown. */
static bool tile_by_rows(const fp_node *n)
{
    uint64_t x[FP_MAX_RANK];
    int64_t reps[FP_MAX_RANK];
    int r = n->op == FP_OP_TILE && n->n_inputs >= 2 && n->inputs[0] ? known_dims(n->inputs[0], x) : -1;
    if (r < 1 || !n->inputs[1] || fp_value_ints(n->inputs[1], reps, FP_MAX_RANK) != r)
        return false;
    int tiled = 0;
    while (tiled < r && reps[tiled] == 1)
        tiled++;
    for (int i = 1; i < tiled; i++)
        if (x[i] > 1)
            return true;
    return false;
}

/* The work kernel n of class cls does on d (fp_op_cost.work): its FLOPs, but a GEMM's on its
 * columns rounded up to d's nchwc_block (MLAS's SGEMM kernels compute the output in whole vectors
 * of columns: 16 floats with AVX-512F, 8 with AVX2, the NCHWc block of the same ISA) and a
 * convolution's with the `copies` elements its im2col moves (counted_copies; IM2COL_ELEMENT
 * each, more at a width stride above 1: strided_copies), a blocked NCHWc convolution's on
 * its channels padded to d's block (ONNX Runtime pads the output channels, and the input channels
 * of one that reads a blocked input, with zeros: passes/nchwc.c keeps the logical shapes; a
 * depthwise one's with its per output and per row work, depthwise_work), a transpose's or a
 * copy's (class copy) output elements (they have no FLOPs; their class's efficiency is then the
 * rate of a strided gather or of block copies; an NCHWc reorder's times REORDER_WORK, a Tile's on
 * ONNX Runtime's general path times TILE_ROW_WORK), a float16 attention op's FLOPs times
 * HALF_ATTENTION_WORK on a profile without a float16 peak, a transcendental op's its elements times
 * its transcendental_work (and a binary one's broadcast loop on a blocked profile), an elementwise
 * op's on a blocked (MLAS) profile with its broadcast loop's share (broadcast_work), and a row-wise
 * norm's or softmax's with its rows' share (row_work; a SkipSimplifiedLayerNormalization's times
 * SKIP_SIMPLIFIED_WORK; a fused skip norm's on its op's own FLOPs, fp_metrics_op_flops, which
 * ONNX Runtime's kernel does whatever members it replaced), a blocked convolution of an NCHW input's
 * with its filter's loads past the L1 (nchw_filter_loads). */
static uint64_t kernel_work(const fp_node *n, fp_op_class cls, uint64_t copies, const fp_device *d)
{
    uint64_t flops = n->metrics.flops;
    uint64_t cols = gemm_columns(n, cls);
    if (cols && d->nchwc_block)
        return (uint64_t)((double)flops * (double)round_up(cols, d->nchwc_block) / (double)cols +
                          IM2COL_ELEMENT * ((double)copies + strided_copies(n, copies)));
    if (n->op == FP_OP_REORDER_INPUT || n->op == FP_OP_REORDER_OUTPUT)
        return (uint64_t)((double)output_elements(n, flops) * REORDER_WORK);
    if (tile_by_rows(n))
        return (uint64_t)((double)output_elements(n, flops) * TILE_ROW_WORK);
    if (cls == FP_CLASS_TRANSPOSE || cls == FP_CLASS_COPY)
        return output_elements(n, flops);
    if (cls == FP_CLASS_ATTENTION && fp_dtype_bits(compute_dtype(n)) == 16 && d->peak_flops[compute_dtype(n)] <= 0)
        return (uint64_t)((double)flops * HALF_ATTENTION_WORK);
    if (cls == FP_CLASS_TRANSCENDENTAL) /* a binary one (Pow) through the broadcast loop too */
        return (uint64_t)((double)flops * transcendental_work(n)) +
               (d->nchwc_block ? broadcast_work(n, flops) - flops : 0);
    if (cls == FP_CLASS_EW && fp_op_has(n->op, FP_OPF_UNARY)) /* Clip's bounds: no pass of their own */
        return output_elements(n, flops);
    if (cls == FP_CLASS_EW)
        return d->nchwc_block ? broadcast_work(n, flops) : flops;
    uint64_t own = cls == FP_CLASS_SKIP_NORM && (n->flags & FP_NODE_FUSED) ? fp_metrics_op_flops(n) : 0;
    if (own) /* the kernel's own count, not its members' */
        flops = own;
    if (n->op == FP_OP_SKIP_SIMPLIFIED_LAYER_NORM) /* skip_norm's kernel, less work an element */
        return (uint64_t)((double)flops * SKIP_SIMPLIFIED_WORK);
    if (cls == FP_CLASS_SOFTMAX || n->op == FP_OP_LAYER_NORM || n->op == FP_OP_SIMPLIFIED_LAYER_NORM)
        return row_work(n, flops, d);
    if (cls == FP_CLASS_GROUPED_CONV)
        return (uint64_t)((double)flops * (1 + inside_rows(n)) / 2);
    int64_t k = cls == FP_CLASS_MATMUL_NBITS ? fp_node_attr_int(n, "K", 0) : 0;
    if (k > 0 && k < NBITS_MIN_K) /* its products and dequantization on K raised to NBITS_MIN_K */
        return (uint64_t)((double)flops * NBITS_MIN_K / (double)k);
    if ((cls != FP_CLASS_NCHWC_CONV && cls != FP_CLASS_NCHWC_DEPTHWISE) || !d->nchwc_block || n->n_inputs < 2)
        return flops;
    const fp_shape *x = &n->inputs[0]->shape, *w = &n->inputs[1]->shape;
    if (x->rank < 2 || w->rank < 2 || !fp_dim_known(x->dims[1]) || !fp_dim_known(w->dims[0]) || w->dims[0].value <= 0)
        return flops;
    uint64_t cin = (uint64_t)x->dims[1].value, cout = (uint64_t)w->dims[0].value, b = d->nchwc_block;
    double f = (double)round_up(cout, b) / (double)cout;
    if (cls == FP_CLASS_NCHWC_DEPTHWISE && n->n_outputs && n->outputs[0])
        return depthwise_work((uint64_t)((double)flops * inside_rows(n)), &n->outputs[0]->shape, f,
                              round_up(cout, b) / b);
    if (cls == FP_CLASS_NCHWC_CONV && cin >= b)
        f *= (double)round_up(cin, b) / (double)cin;
    double loads = cls == FP_CLASS_NCHWC_CONV && cin < b ? (double)nchw_filter_loads(n, cin, b, d) : 0;
    return (uint64_t)((double)flops * f + NCHW_FILTER_LOAD * loads);
}

/* What a run of a graph moves from and to memory past the caches: a fraction of every kernel's
 * weights (fp_cost_cold_fraction) and, per node of its fp_graph_order, activation bytes
 * (fp_reuse_cold; NULL: none); and the fraction of its graph-input reads that come back from the
 * last level (fp_cost_kept_bytes). */
typedef struct {
    double weights;
    const uint64_t *activations;
    double kept;       /* the fraction of graph-input reads that come from the last level */
    uint64_t resident; /* the run's footprint (fp_cost_kept_bytes and the replayed plan's buffers), at
                          least past the levels before the last (the bytes `kept` says they lose come
                          from the last, fp_roofline_evicted) and at most the last level's capacity */
} cold_bytes;

static double graph_cost(const fp_graph *g, const fp_device *d, fp_dtype what_if, unsigned flags,
                         const cold_bytes *cold, GArray *out, uint32_t *unknown);

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

static double control_cost(const fp_node *n, const fp_device *d, fp_dtype what_if, unsigned flags, uint32_t *unknown)
{
    double best = 0, sum = 0;
    for (uint32_t k = 0; k < n->n_subgraphs; k++) {
        double c = graph_cost(n->subgraphs[k], d, what_if, flags, NULL, NULL, unknown);
        best = MAX(best, c);
        sum += c;
    }
    return n->op == FP_OP_IF ? best : trips(n) * sum;
}

/* Whether graph_cost leaves n out: removed by a pass, or folded at analysis time unless `flags` has
 * FP_COST_RUN_FOLDED (a Constant never runs). */
static bool not_run(const fp_node *n, unsigned flags)
{
    if (n->flags & FP_NODE_REMOVED)
        return true;
    return (n->flags & FP_NODE_FOLDED) && (!(flags & FP_COST_RUN_FOLDED) || n->op == FP_OP_CONSTANT);
}

/* The bytes each of the n nodes of `order` moves when it runs as a kernel on its own (graph_cost's
 * fp_op_cost.bytes; 0 for a view), FP_REUSE_SKIP when it does not run or is control flow. */
static uint64_t *run_traffic(fp_node *const *order, uint32_t n, fp_dtype what_if, unsigned flags)
{
    uint64_t *t = g_new0(uint64_t, MAX(n, 1));
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *node = order[i];
        if (not_run(node, flags) || fp_op_has(node->op, FP_OPF_CTRL))
            t[i] = FP_REUSE_SKIP;
        else if (!fp_op_has(node->op, FP_OPF_VIEW))
            t[i] = kernel_bytes(node, what_if);
    }
    return t;
}

#define LIFE_ROUNDS 3 /* the run's time and the weights it loses each found this often from the other */

double fp_cost_lost_in(const fp_device *d, double seconds)
{
    return d->last_life > 0 && seconds > 0 ? -expm1(-seconds / d->last_life) : 0;
}

/* Adds to cold->weights the weights the last level loses to other processes between two runs of
 * g on d (fp_cost_lost_in: a run's time apart), those of them past the levels before the last
 * (cold->kept); the run's time and the weights lost each found from the other, from the time
 * without them. Nothing on a profile without [cache] last_life or [device]
 * weight_bandwidth. */
static void with_life(const fp_graph *g, const fp_device *d, fp_dtype what_if, unsigned flags, cold_bytes *cold)
{
    if (d->last_life <= 0 || d->weight_bandwidth <= 0 || cold->kept <= 0)
        return;
    double by_bytes = cold->weights;
    for (int i = 0; i < LIFE_ROUNDS; i++) {
        uint32_t unknown = 0;
        double lost = cold->kept * fp_cost_lost_in(d, graph_cost(g, d, what_if, flags, cold, NULL, &unknown));
        cold->weights = 1 - (1 - by_bytes) * (1 - lost);
    }
}

/* The time of m's main graph on d (its ops appended to out when given): a fraction of every
 * kernel's weight bytes read from memory (fp_cost_cold_fraction) and, on a profile with [cache],
 * the activation bytes fp_reuse_cold finds past its last level streamed from memory
 * (fp_op_cost.far) and, with two levels or more, graph-input bytes read back from the last
 * (fp_op_cost.kept). */
static double main_cost(const fp_model *m, const fp_device *d, fp_dtype what_if, unsigned flags, GArray *out,
                        uint32_t *unknown)
{
    const fp_graph *g = m->main;
    uint64_t capacity = fp_device_last_level(d), arena = 0;
    cold_bytes cold = {.weights = fp_cost_cold_fraction(g, d, what_if)};
    g_autofree uint64_t *activations = NULL;
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    if (order && capacity) {
        g_autofree uint64_t *traffic = run_traffic(order, n, what_if, flags);
        cold.activations = activations = fp_reuse_cold(g, order, n, traffic, capacity, &arena);
        uint64_t footprint = fp_cost_kept_bytes(g, what_if) + float_scaled(arena, what_if),
                 below = fp_device_private_levels(d);
        cold.kept = fp_roofline_evicted((double)footprint, (double)below);
        cold.resident = MIN(MAX(footprint, below + 1), capacity);
        with_life(g, d, what_if, flags, &cold);
    }
    return graph_cost(g, d, what_if, flags, &cold, out, unknown);
}

/* Sets c's bytes that a run whose footprint outgrows the levels before the last (cold->kept > 0)
 * reads from the last: of a GEMM with prepacked weights (class matmul) and of a dense convolution
 * (a class whose parent is conv), that fraction of its weights not cold (fp_op_cost.spill); of its
 * graph-input reads, and of the weights not cold of a product that streams them (gemv: a one-row
 * one; gemv_rt and matmul_rt: B not packed once, read or packed where it lies on every call), that
 * fraction (fp_op_cost.kept), from the level holding the run's footprint. */
static void past_l2(fp_op_cost *c, const cold_bytes *cold, fp_dtype what_if)
{
    uint64_t weights = scaled(c->node, what_if, c->node->metrics.bytes_weight) - c->cold;
    if (c->cls == FP_CLASS_MATMUL || fp_op_class_parent(c->cls) == FP_CLASS_CONV)
        c->spill = (uint64_t)(cold->kept * (double)weights);
    bool streamed = c->cls == FP_CLASS_GEMV || c->cls == FP_CLASS_GEMV_RT || c->cls == FP_CLASS_MATMUL_RT;
    uint64_t reads = graph_input_reads(c->node, what_if) + (streamed ? weights : 0);
    c->kept = MIN((uint64_t)(cold->kept * (double)reads), c->bytes - c->cold - c->far);
    c->resident = cold->resident;
}

/* The Reshapes ONNX Runtime dispatches around Gemm n when its A has more than two dims (its
 * MatMulAddFusion flattens A to 2-D before the Gemm and restores the N-D shape after it; fuseplan's
 * graph keeps the N-D Gemm): one before unless A comes from a Reshape it alone reads, one after
 * unless its output's one reader is a Reshape, which ORT merges into the inserted one (ViT-Tiny's
 * graph at ORT_ENABLE_ALL: 12 N-D Gemms, 16 Reshapes added and 8 of its 9 merged; tiny-random
 * GPT-2's 5 Gemms 10 added, none merged; ONNX Runtime 1.31.1's saved graphs). Else 0. */
static uint64_t gemm_reshapes(const fp_node *n)
{
    if (n->op != FP_OP_GEMM || !n->n_inputs || !n->inputs[0] || n->inputs[0]->shape.rank <= 2 || !n->n_outputs ||
        !n->outputs[0])
        return 0;
    const fp_value *a = n->inputs[0], *y = n->outputs[0];
    bool before = !(a->producer && a->producer->op == FP_OP_RESHAPE && a->n_uses == 1);
    bool after = !(!y->is_output && y->n_uses == 1 && y->uses[0].node->op == FP_OP_RESHAPE);
    return (uint64_t)before + (uint64_t)after;
}

/* n's outputs past its first (omitted optional ones not counted): the runtime allocates each,
 * whether an op reads it or not. */
static uint64_t extra_outputs(const fp_node *n)
{
    uint64_t outputs = 0;
    for (uint32_t i = 0; i < n->n_outputs; i++)
        outputs += n->outputs[i] != NULL;
    return outputs > 1 ? outputs - 1 : 0;
}

/* Whether the kernels of the n ops of order that run (not_run) are of FP_MIXED_CLASSES classes or
 * more (views and control flow are no kernels). */
static bool mixed_classes(fp_node *const *order, uint32_t n, unsigned flags)
{
    bool seen[FP_CLASS_COUNT] = {false};
    int classes = 0;
    for (uint32_t i = 0; order && i < n && classes < FP_MIXED_CLASSES; i++) {
        const fp_node *node = order[i];
        if (not_run(node, flags) || fp_op_has(node->op, FP_OPF_VIEW) || fp_op_has(node->op, FP_OPF_CTRL))
            continue;
        fp_op_class c = fp_cost_class(node);
        classes += !seen[c];
        seen[c] = true;
    }
    return classes >= FP_MIXED_CLASSES;
}

/* Whether ONNX Runtime, the runtime of d's target, writes n's output 0 over the input it may
 * take in place (fp_ort_inplace_input): an activation read by n alone, of the output's shape. */
static bool runs_in_place(const fp_node *n, const fp_device *d)
{
    int32_t in = d->target && g_str_has_prefix(d->target, "ort-cpu") ? fp_ort_inplace_input(n) : -1;
    if (in < 0 || (uint32_t)in >= n->n_inputs || !n->n_outputs)
        return false;
    const fp_value *x = n->inputs[in];
    return x && x->kind == FP_VALUE_INTERMEDIATE && x->n_uses == 1 && !x->is_output &&
           fp_ort_same_size(NULL, x, n->outputs[0]);
}

/* The time of g's ops on d (each appended to out when given), with the bytes `cold` says a run
 * reads from memory (NULL: none; control-flow bodies count theirs cached). */
static double graph_cost(const fp_graph *g, const fp_device *d, fp_dtype what_if, unsigned flags,
                         const cold_bytes *cold, GArray *out, uint32_t *unknown)
{
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    bool mixed = mixed_classes(order, n, flags);
    double total = 0;
    for (uint32_t i = 0; order && i < n; i++) {
        fp_node *node = order[i];
        if (not_run(node, flags))
            continue;
        fp_op_cost c = {.node = node, .cls = fp_cost_class(node), .mixed = mixed};
        c.parts = class_parts(node, c.cls);
        c.rows = im2col_rows(node, c.cls, c.parts);
        uint64_t copies = counted_copies(node, c.cls, c.rows, d);
        c.operands = copies ? 0 : fp_cost_gemm_operands(node);
        c.post = post_bytes(node, c.cls, d);
        c.dtype = what_if != FP_DT_UNDEFINED && compute_dtype(node) == FP_DT_FLOAT ? what_if : compute_dtype(node);
        c.kernel = !fp_op_has(node->op, FP_OPF_VIEW);
        if (fp_op_has(node->op, FP_OPF_CTRL)) {
            c.rl = fp_roofline_eval(d, 0, 0, c.dtype, c.cls);
            c.rl.time_s += control_cost(node, d, what_if, flags, unknown);
        } else if (!c.kernel) {
            /* an alias: no kernel, no traffic; a runtime that dispatches it pays [launch] view */
            double launch = fp_device_launch(d, FP_CLASS_VIEW);
            c.rl = (fp_roofline){.bound = FP_BOUND_MEMORY, .launch_s = launch, .time_s = launch};
        } else {
            if (!node->metrics_known)
                (*unknown)++;
            c.flops = node->metrics.flops;
            c.work = kernel_work(node, c.cls, copies, d);
            c.denormal = fp_denormal_events(node);
            c.reread = transpose_rereads(node, d);
            c.outputs = extra_outputs(node);
            c.views = gemm_reshapes(node);
            c.inplace = runs_in_place(node, d);
            c.bytes = kernel_bytes(node, what_if);
            double weights = cold ? cold->weights * (double)scaled(node, what_if, node->metrics.bytes_weight) : 0;
            c.cold = MIN((uint64_t)weights, c.bytes);
            c.far = cold && cold->activations ? MIN(scaled(node, what_if, cold->activations[i]), c.bytes - c.cold) : 0;
            if (cold && cold->kept > 0)
                past_l2(&c, cold, what_if);
            fp_kernel k = fp_cost_kernel(&c);
            c.rl = fp_roofline_kernel(d, &k);
        }
        total += c.rl.time_s;
        if (out)
            g_array_append_val(out, c);
    }
    return total;
}

fp_kernel fp_cost_kernel(const fp_op_cost *c)
{
    if (!c->kernel)
        return (fp_kernel){.dtype = c->dtype, .cls = FP_CLASS_VIEW};
    return (fp_kernel){.flops = c->work,
                       .bytes = c->bytes,
                       .dtype = c->dtype,
                       .cls = c->cls,
                       .parts = c->parts,
                       .operands = c->operands,
                       .cold = c->cold,
                       .spill = c->spill,
                       .rows = c->rows,
                       .post = c->post,
                       .denormal = c->denormal,
                       .far = c->far,
                       .kept = c->kept,
                       .resident = c->resident,
                       .reread = c->reread,
                       .outputs = c->outputs,
                       .views = c->views,
                       .mixed = c->mixed,
                       .inplace = c->inplace};
}

static bool body_kernels(const fp_graph *g, const fp_device *d, GArray *out, guint max);

/* Appends control-flow op n's own kernel (its launch) and its body's kernels to out. */
static bool control_kernels(const fp_node *n, const fp_device *d, fp_dtype t, GArray *out, guint max)
{
    fp_kernel self = {.dtype = t, .cls = fp_cost_class(n)};
    g_array_append_val(out, self);
    if (n->op == FP_OP_IF) { /* the dearer branch, as graph_cost counts it */
        const fp_graph *dear = NULL;
        double best = -1;
        uint32_t unknown = 0;
        for (uint32_t k = 0; k < n->n_subgraphs; k++) {
            double c = graph_cost(n->subgraphs[k], d, FP_DT_UNDEFINED, 0, NULL, NULL, &unknown);
            if (c > best) {
                best = c;
                dear = n->subgraphs[k];
            }
        }
        return !dear || body_kernels(dear, d, out, max);
    }
    double reps = trips(n);
    for (double r = 0; r < reps; r++) {
        guint before = out->len;
        for (uint32_t k = 0; k < n->n_subgraphs; k++)
            if (!body_kernels(n->subgraphs[k], d, out, max))
                return false;
        if (out->len == before) /* a body without kernels: nothing to repeat */
            break;
    }
    return true;
}

/* Appends the kernels of graph g (control flow expanded) to out; false once out would pass max. */
static bool body_kernels(const fp_graph *g, const fp_device *d, GArray *out, guint max)
{
    uint32_t unknown = 0;
    g_autoptr(GArray) ops = g_array_new(FALSE, TRUE, sizeof(fp_op_cost));
    graph_cost(g, d, FP_DT_UNDEFINED, 0, NULL, ops, &unknown);
    for (guint i = 0; i < ops->len; i++) {
        const fp_op_cost *c = &g_array_index(ops, fp_op_cost, i);
        if (out->len >= max)
            return false;
        if (fp_op_has(c->node->op, FP_OPF_CTRL)) {
            if (!control_kernels(c->node, d, c->dtype, out, max))
                return false;
            continue;
        }
        fp_kernel k = fp_cost_kernel(c);
        g_array_append_val(out, k);
    }
    return out->len <= max;
}

bool fp_cost_control_kernels(const fp_node *n, const fp_device *d, GArray *out, guint max)
{
    g_assert(fp_op_has(n->op, FP_OPF_CTRL));
    guint at = out->len;
    if (control_kernels(n, d, compute_dtype(n), out, max))
        return true;
    g_array_set_size(out, at);
    return false;
}

/* What a run of g spends on d outside its kernels: the profile's run_overhead (a run of one input
 * and one output) and its input_overhead and output_overhead for each graph input and output past
 * the first (an ONNX Runtime run checks each feed and hands back each fetch). */
static double run_overhead(const fp_graph *g, const fp_device *d)
{
    guint in = g->inputs->len, out = g->outputs->len;
    return d->run_overhead + (in > 1 ? in - 1 : 0) * d->input_overhead + (out > 1 ? out - 1 : 0) * d->output_overhead;
}

fp_cost_result *fp_pass_cost(const fp_model *m, const fp_device *d, fp_dtype what_if, unsigned flags, fp_diag *diag)
{
    fp_cost_result *r = g_new0(fp_cost_result, 1);
    /* room for every node at once, then trimmed: no copies while it grows and no unused capacity
     * kept (the final stage's array lives until the report is written) */
    GArray *ops = g_array_sized_new(FALSE, FALSE, sizeof(fp_op_cost), m->main->nodes->len + 1);
    r->total_s = main_cost(m, d, what_if, flags, ops, &r->unknown);
    r->n_ops = ops->len;
    r->ops = g_renew(fp_op_cost, g_array_free(ops, FALSE), MAX(r->n_ops, 1));
    for (uint32_t i = 0; i < r->n_ops; i++) {
        r->kernels += r->ops[i].kernel;
        r->flops += r->ops[i].flops;
        r->bytes += r->ops[i].bytes;
    }
    r->total_s += run_overhead(m->main, d);
    fp_cost_warn_unknown(r, diag);
    return r;
}

double fp_cost_total(const fp_model *m, const fp_device *d, fp_dtype what_if, unsigned flags)
{
    uint32_t unknown = 0;
    return main_cost(m, d, what_if, flags, NULL, &unknown) + run_overhead(m->main, d);
}

void fp_cost_warn_unknown(const fp_cost_result *r, fp_diag *diag)
{
    if (r->unknown)
        fp_diag_add(diag, FP_DIAG_WARNING, "cost", "cost-unknown", NULL,
                    "%u ops have unknown shapes: counted at their launch overhead only (bind --input / --batch)",
                    r->unknown);
}

void fp_cost_result_free(fp_cost_result *r)
{
    if (!r)
        return;
    g_free(r->ops);
    g_free(r);
}
