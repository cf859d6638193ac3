/* micro_models.h - the micro-models `fuseplan calibrate --runtime` runs: per case, a chain of K
 * identical ops (each consuming the previous one's output, each with weights of its own, as a
 * network's layers have) ending in a ReduceMax to one element,
 * and the same chain of one op; their time difference over K - 1 is one kernel's time, free of
 * the runtime's per-run work. The cases cover the cost model's classes (passes/cost.h): dense,
 * pointwise (1x1), strided, grouped and depthwise convolutions on and off the NCHWc block, MatMul
 * and Gemm from one row (the GEMV path) to square matrices, batched MatMul (B packed on every call
 * or read where it lies; one row, or scaled as MatMulScaleFusion writes it), Softmax and
 * Transposes of attention's heads and keys, a decoder step's GroupQueryAttention, simple and
 * transcendental elementwise ops (Relu, Add; Sigmoid, Tanh, Erf, Exp) with and without
 * broadcast, a copy (a Gather of every channel), BatchNormalization and LayerNormalization, max,
 * average, global and dilated pooling, reductions, views, one tiny case per class for its
 * launch overhead, a MatMul chain whose weights overflow the L2 beside its twin that shares one
 * weight the L2 holds, and a batched MatMul of attention weights and a Softmax of attention logits
 * on denormal floats (read, written) beside their twins on normal ones, and a chain of small ops of
 * several classes in turn, as a decoder's token runs them. Built in memory as ONNX bytes
 * (frontends/onnx/onnx_write.h). */
#ifndef FP_MICRO_MODELS_H
#define FP_MICRO_MODELS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define FP_MICRO_MAX_RANK 4

enum {
    FP_MICRO_ALL = 1u << 0,      /* also run at ORT_ENABLE_ALL (convolutions: its NCHWc kernels) */
    FP_MICRO_TINY = 1u << 1,     /* a few elements: the class's launch overhead (and the run's) */
    FP_MICRO_CONTRIB = 1u << 2,  /* the op is ONNX Runtime's (domain com.microsoft) */
    FP_MICRO_COLD = 1u << 3,     /* the long chain's weights overflow the caches, the short one's do not:
                                   the rate of weights read from memory (fp_device.weight_bandwidth) */
    FP_MICRO_FAN = 1u << 4,      /* a fan, not a chain: every op reads x0 (a reduction's output, fed to
                                   the next op, would leave it no work); ONNX Runtime runs the ops whose
                                   output no one reads at ORT_DISABLE_ALL, the only level such a case
                                   is timed at (its levels above merge them as common subexpressions) */
    FP_MICRO_DENORMAL = 1u << 5, /* x0 scaled (fp_micro_case.scale) so that the op reads denormal floats
                                    (a MatMul) or writes them (a Softmax), a fan like the case before it,
                                    its twin on the unscaled x0: their kernels' difference gives the
                                    profile's denormal_mac_s or denormal_exp_s (passes/denormal.h);
                                    fuseplan costs it as the twin, so it is no point of the fit */
    FP_MICRO_SHARED = 1u << 6,   /* every op of the chain reads one copy of the weights, which the L2 holds
                                    (fuseplan counts a weight once per op that reads it, so it is no point of
                                    the fit): the twin of the FP_MICRO_SPILL case after it */
    FP_MICRO_SPILL = 1u << 7,    /* a MatMul chain like the case before it, each op with weights of its own,
                                    their sum past any L2: the two kernels' difference gives the rate at which
                                    a GEMM reads packed weights past the L2 (the profile's weight_l3_bandwidth,
                                    passes/roofline.h); a point of the fit */
    FP_MICRO_OUTPUTS = 1u << 8,  /* the case before it, each op with fp_micro_case.outputs more outputs that no
                                    op reads: the two kernels' difference per output is what the runtime spends
                                    allocating and releasing one (the profile's [launch] output); no point of
                                    the fit */
    FP_MICRO_MIXED = 1u << 9,    /* a chain that cycles through the ops of fp_micro_case.cycle, of several classes
                                    (devices/device.h, FP_MIXED_CLASSES), each with weights of its own as a
                                    network's: its time per kernel less what the classes' own chains fit for
                                    its kernels is the profile's [launch] mixed; no point of the fit */
};

typedef struct {
    char *name;  /* "conv3x3_c64_28" */
    char *op;    /* the chain's op type */
    char *extra; /* protobuf text inside each chain node after its input: more inputs, attributes */
    char *inits; /* protobuf text of the graph's initializers (float ones without data: filled) */
    int rank;    /* the input x0's shape */
    int64_t dims[FP_MICRO_MAX_RANK];
    int chain;    /* K, the long chain's ops (>= 2) */
    int outputs;  /* each op's outputs after the one the next op reads (never read) */
    double scale; /* x0's fill: the runner's pattern times this (fp_ort_pattern); 0: 1 */
    unsigned flags;
    GArray *cycle; /* the ops a chain cycles through (fp_micro_case: op, extra, inits and FP_MICRO_CONTRIB
                      each; a FP_MICRO_MIXED case's each keep x0's shape, a bottleneck's two go to
                      more channels and back): op i of its chain is cycle[i mod len]; NULL in a
                      chain of one op (`op`) */
} fp_micro_case;

/* Every case, in a fixed order (an array of fp_micro_case; freeing it frees their strings). */
GArray *fp_micro_cases(void);

/* The ONNX protobuf text of case c's chain of n ops (opset 17; com.microsoft 1 for a contrib op):
 * input "x0", output "y"; op i (of a case with a cycle, its cycle's op i mod len) reads x(i) (x0
 * in a FP_MICRO_FAN case) and its own copy of each
 * initializer of the case, NAME_i (in a FP_MICRO_SHARED case every op the one NAME), and writes
 * x(i+1) and c->outputs more (x(i+1)_1, ...), read by no op; the ReduceMax reads x(n). Caller
 * frees. */
char *fp_micro_text(const fp_micro_case *c, int n);

/* The same as the bytes of a .onnx file; NULL with the writer's error (a bug in a case). */
GBytes *fp_micro_bytes(const fp_micro_case *c, int n, GError **error);

/* Adds in the run-overhead models: a0 = x0, then a(i) = a(i-1) + x(i) for i = 1..FP_MICRO_IO_OPS on
 * [1, 16] floats, x(i) graph inputs x0..x(FP_MICRO_IO_OPS) when `inputs`, else every x(i) is x0;
 * graph outputs a1..a(FP_MICRO_IO_OPS) when `outputs`, else the last alone. Between the four the
 * kernels are the same: their times differ by FP_MICRO_IO_OPS graph inputs, or by
 * FP_MICRO_IO_OPS - 1 outputs, of a run (the device's input_overhead and output_overhead). ONNX
 * protobuf text (opset 17); caller frees. */
#define FP_MICRO_IO_OPS 9
char *fp_micro_io_text(bool inputs, bool outputs);

#endif
