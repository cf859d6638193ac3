/* device.h - device profiles: what a target chip can do (GKeyFile .ini files in devices/).
 *
 * A profile is looked up by name (devices/<name>.ini, from the source tree or the directory in
 * $FUSEPLAN_DEVICES) or given as a path to an .ini file. Every number in the shipped profiles
 * is cited in docs/devices.md.
 */
#ifndef FP_DEVICE_H
#define FP_DEVICE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/dtype.h"

#define FP_DEVICE_ERROR (fp_device_error_quark())
GQuark fp_device_error_quark(void);
typedef enum { FP_DEVICE_ERROR_NOT_FOUND, FP_DEVICE_ERROR_INVALID } fp_device_error_code;

/* Op classes with their own efficiency factor (fraction of peak a kernel of that class reaches) and
 * launch overhead; a class a profile gives no value for takes its parent's (the third column; a
 * class that is its own parent takes `other`'s efficiency and the default launch overhead).
 * GROUPED_CONV is a convolution with group > 1 (depthwise ones included) in NCHW: ONNX Runtime's
 * expand-then-GEMM per group. NCHWC_CONV and NCHWC_DEPTHWISE are ONNX Runtime's blocked NCHWc
 * kernels (direct convolution, vectorized over a block of channels; passes/nchwc.c), which need
 * no im2col. DILATED_POOL is a pooling with a dilation > 1 (runtimes' vectorized pooling kernels
 * have none: ONNX Runtime runs it in its generic loop). VIEW is an op that moves no data (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout): it costs only its [launch] view, which is 0
 * unless the profile gives one (a runtime that dispatches views as kernels, as ONNX Runtime
 * does).
 *
 * The fourth column marks a refinement: a kernel of its parent's that runs a different code path
 * in ONNX Runtime's MLAS, so that its rates differ, and that a profile written before the class
 * existed counts as its parent. A refinement the profile gives no value for takes every value of
 * its parent, its [saturation] half work included (other classes take none). POINTWISE_CONV is an
 * NCHW 1x1 convolution of stride 1 without padding or groups (MLAS's GemmDirect: one GEMM on the
 * input as it is, no im2col). STRIDED_DEPTHWISE is an NCHW depthwise convolution with a stride
 * above 1: MLAS's im2col copies its inputs one at a time where a stride of 1 copies four at a
 * time, and a depthwise one's GEMM (one row) is too small to hide it. GEMV is a MatMul or Gemm of
 * one row by a 2-D weight, which ONNX Runtime packs once. MATMUL_RT and GEMV_RT are a float MatMul
 * or Gemm whose B is not packed once (an activation, a batch of matrices): MLAS packs that B on
 * every call (MATMUL_RT), except for one row with alpha 1, which its one-row kernels read where it
 * lies (GEMV_RT). ATTENTION is a fused attention op of ONNX Runtime's contrib domain (Attention,
 * MultiHeadAttention, GroupQueryAttention): its CPU kernel loops over batch and heads with a small
 * GEMM each, a softmax and the KV cache's concatenation, a fixed cost per call that a decoder's
 * step, tiny in FLOPs, pays in full. MATMUL_NBITS is ONNX Runtime's MatMulNBits at accuracy_level
 * 4: MLAS quantizes A to int8 block by block and multiplies it with the 4-bit weights unpacked to
 * int8 (its SQNBitGemm kernels), a path of its own whatever the dtype's peak. TRANSCENDENTAL is an
 * elementwise op that evaluates a polynomial or a table
 * per element (Sigmoid, Tanh, Erf, Exp, Log, Gelu and their kin: ir/ops.def's TRANSC trait)
 * rather than one instruction, or waits on the divider (Div, Sqrt, Reciprocal) or on pow (Pow).
 * SKIP_NORM is ONNX Runtime's SkipLayerNormalization and SkipSimplifiedLayerNormalization (the
 * residual Add and LayerNormalization its level-2 fusion makes one op): its CPU kernel runs
 * scalar loops several times slower per element than the LayerNormalization kernel's. TRANSPOSE is
 * a Transpose (a strided gather per element, slower than the copies of the data class). COPY is a
 * Concat, Split, Slice or Tile: ONNX Runtime's kernels for them work out a copy plan on every call
 * (the blocks each input or output gives, their strides), which makes a tiny one cost more than a
 * Gather of the data class, and move each output element at a rate of their own (fp_op_cost.work:
 * the output elements).
 * GLOBAL_POOL is a global pooling (GlobalAveragePool and its kin): a reduction of each channel's
 * image, which ONNX Runtime's kernel runs at about half the rate per element of a ReduceMean over
 * a row of a matrix (docs/devices.md, "Global pooling").
 *
 * The fifth column marks a phased class: its kernel moves its data and computes one after the
 * other, so that its roofline adds the two times where others take the larger. ATTENTION is: for
 * each head, ONNX Runtime's CPU kernels copy the past key and value into the present ones
 * (ConcatStateChunkGQA in contrib_ops/cpu/bert/gqa_attention_base.h, ConcatStateChunk in
 * attention_helper.h), then run that head's GEMMs and softmax on them. CONV and POINTWISE_CONV
 * run in phases on a blocked (MLAS) profile alone, past its L2: fp_device_phased. */
#define FP_OP_CLASSES(X)                                                 \
    X(CONV, "conv", CONV, false, false)                                  \
    X(GROUPED_CONV, "grouped_conv", CONV, false, false)                  \
    X(NCHWC_CONV, "nchwc_conv", CONV, false, false)                      \
    X(NCHWC_DEPTHWISE, "nchwc_depthwise", GROUPED_CONV, false, false)    \
    X(POINTWISE_CONV, "pointwise_conv", CONV, true, false)               \
    X(STRIDED_DEPTHWISE, "strided_depthwise", GROUPED_CONV, true, false) \
    X(MATMUL, "matmul", MATMUL, false, false)                            \
    X(GEMV, "gemv", MATMUL, true, false)                                 \
    X(MATMUL_RT, "matmul_rt", MATMUL, true, false)                       \
    X(GEMV_RT, "gemv_rt", GEMV, true, false)                             \
    X(ATTENTION, "attention", MATMUL, true, true)                        \
    X(MATMUL_NBITS, "matmul_nbits", MATMUL, true, false)                 \
    X(EW, "elementwise", EW, false, false)                               \
    X(TRANSCENDENTAL, "transcendental", EW, true, false)                 \
    X(NORM, "norm", NORM, false, false)                                  \
    X(SKIP_NORM, "skip_norm", NORM, true, false)                         \
    X(POOL, "pool", POOL, false, false)                                  \
    X(DILATED_POOL, "dilated_pool", POOL, false, false)                  \
    X(REDUCE, "reduce", REDUCE, false, false)                            \
    X(GLOBAL_POOL, "global_pool", REDUCE, true, false)                   \
    X(SOFTMAX, "softmax", SOFTMAX, false, false)                         \
    X(DATA, "data", DATA, false, false)                                  \
    X(COPY, "copy", DATA, true, false)                                   \
    X(TRANSPOSE, "transpose", DATA, true, false)                         \
    X(VIEW, "view", VIEW, false, false)                                  \
    X(OTHER, "other", OTHER, false, false)

typedef enum {
#define X(id, name, parent, refines, phased) FP_CLASS_##id,
    FP_OP_CLASSES(X)
#undef X
        FP_CLASS_COUNT
} fp_op_class;

const char *fp_op_class_name(fp_op_class c);

/* [cache] last_from at most: a share of the last level's capacity */
#define FP_DEVICE_MAX_LAST_FROM 4.0

/* A graph whose kernels are of this many classes or more costs [launch] mixed on each kernel: a
 * kernel costs ONNX Runtime more in such a graph than in a chain of its own op (a micro-model's:
 * its class, the ReduceMax's, at level all a reorder's), whatever the order of its kernels. Measured
 * on the development VM (2026-12-07, ONNX Runtime 1.31.1, level disabled): a chain cycling through
 * nine ops of seven classes took 0.05 us a kernel more than its ops' own chains, one cycling through
 * twelve elementwise ops of two classes 0.00-0.02 us; four is between (docs/devices.md). */
#define FP_MIXED_CLASSES 4
/* The class whose values class c takes when a profile gives none for it (c itself: none). */
fp_op_class fp_op_class_parent(fp_op_class c);
/* True when class c is a refinement of its parent (the fourth column above). */
bool fp_op_class_refines(fp_op_class c);
/* True when a kernel of class c moves its data and computes in phases one after the other (the
 * fifth column above): its roofline adds the memory time to the compute time. */
bool fp_op_class_phased(fp_op_class c);
/* True when class c is an NCHW convolution's (conv, pointwise_conv, grouped_conv, strided_depthwise):
 * ONNX Runtime runs it through MlasConv, one GEMM a group (passes/cost.c, conv_class), where the
 * NCHWc classes run MLAS's blocked kernels. */
bool fp_op_class_nchw_conv(fp_op_class c);

/* Cache levels of a hierarchical (cache-aware) roofline: [cache] l1_*, l2_*, l3_*. */
#define FP_CACHE_LEVELS 3

typedef struct {
    uint64_t bytes;   /* capacity one kernel's traffic may take to stream at `bandwidth`; 0 = no level */
    double bandwidth; /* bytes/s of a streaming kernel whose traffic fits (STREAM triad convention) */
} fp_cache_level;

typedef struct {
    char *name;                        /* profile name ("a100") */
    char *description;                 /* one line */
    char *path;                        /* file it was read from */
    char *target;                      /* default fusion rule set ("ort-cpu", "cuda", "ascend910b") */
    double peak_flops[FP_DT_COUNT];    /* FLOP/s per dtype; 0 = not supported */
    double bandwidth;                  /* bytes/s of device memory */
    double weight_bandwidth;           /* bytes/s at which a kernel reads weights no cache holds between
                                runs (a model whose weights and activations overflow the last cache level:
                                passes/cost.h), on top of its roofline time; 0 = none (the roofline alone) */
    double weight_l3_bandwidth;        /* bytes/s at which a GEMM with prepacked weights (class matmul) reads
                                those past the L2 (a run whose footprint overflows the levels before the last:
                                passes/cost.h), on top of its roofline time; 0 = none */
    double denormal_mac_s;             /* seconds a product's multiply-add on a denormal operand takes beyond a
                                normal one's (x86 microcode assists; passes/denormal.h); 0 = none costed */
    double denormal_exp_s;             /* seconds more per denormal float a Softmax writes (its exp() of a masked
                                logit; passes/denormal.h); 0 = none costed */
    uint64_t memory_bytes;             /* device memory capacity */
    double launch_overhead;            /* seconds per kernel launch (classes without their own [launch] value) */
    double run_overhead;               /* seconds per inference outside every kernel (session set-up, input
                                checks, handing outputs over); 0 = none */
    double input_overhead;             /* seconds per inference per graph input past the first, and */
    double output_overhead;            /* per graph output past the first, that the runtime binds or
                                          hands back (an ONNX Runtime run's feeds and fetches:
                                          calibrate --runtime measures both; 0: none) */
    uint64_t align_bytes;              /* buffer alignment of the memory planner */
    uint64_t nchwc_block;              /* channels per block of ONNX Runtime's NCHWc kernels on this CPU (MLAS:
                                8 with AVX2, 16 with AVX-512F); 0: none (not a CPU, or not known) */
    uint64_t threads;                  /* threads the profile's rates are for (the runtime's intra-op threads;
                                `fuseplan calibrate --threads`); 0: not said */
    double efficiency[FP_CLASS_COUNT]; /* 0 < e <= 1; compute efficiency per op class */
    double bw_efficiency;              /* fraction of peak bandwidth reached by streaming kernels */
    double half_work[FP_CLASS_COUNT];  /* [saturation] per class: work (FLOP) of one kernel at which it
                                        reaches half its efficiency; 0 = efficiency independent of work */
    double launch[FP_CLASS_COUNT];     /* [launch] per class, seconds; used where launch_own[c] */
    bool launch_own[FP_CLASS_COUNT];   /* false: the class takes launch_overhead (grouped_conv: conv's) */
    double launch_group;               /* [launch] group: overhead per group of a grouped convolution, seconds
                                (one sub-kernel per group, as ONNX Runtime runs them); 0 = none */
    double launch_row;                 /* [launch] im2col_row: overhead per row a grouped convolution's im2col copies
                          (fp_kernel.rows), seconds; 0 = none */
    double launch_output;              /* [launch] output: overhead per output of a kernel past its first (the
                          runtime allocates and releases each; fp_kernel.outputs), seconds; 0 = none */
    double launch_mixed;               /* [launch] mixed: overhead per kernel of a graph whose kernels are of
                          FP_MIXED_CLASSES classes or more (fp_kernel.mixed), seconds; 0 = none */
    fp_cache_level cache[FP_CACHE_LEVELS]; /* [cache] l1..l3, innermost first; bytes 0 = absent */
    double last_from;                      /* [cache] last_from: the share of the last level's capacity at
                                              which a run's footprint starts to lose it (all lost one
                                              capacity further; passes/cost.h fp_cost_cold_fraction);
                                              0: not said, taken as 1 */
    double last_life;                      /* [cache] last_life: seconds the last level keeps a run's weights
                                              against other processes' traffic, a mean life (a weight read
                                              again after t is lost with probability 1 - exp(-t / life);
                                              passes/cost.h fp_cost_lost_in); 0: kept for good */
    GKeyFile *keyfile;                     /* the whole file: other groups ([rule.*]) are read by their passes */
} fp_device;

/* Loads a profile by name or .ini path. Errors name the file and the group/key at fault. */
fp_device *fp_device_load(const char *name_or_path, GError **error);
void fp_device_free(fp_device *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_device, fp_device_free)
/* Names of the shipped profiles (sorted); caller g_strfreev()s. */
char **fp_device_list(void);
/* Peak FLOP/s for dtype t, falling back to fp32 when t has none. Before fp32, a dtype without a
 * peak of its own takes its sibling's: uint8 -> int8, uint4 -> int4, float8e5m2 -> float8e4m3fn,
 * the *fnuz float8 types -> their fn/e5m2 counterparts. */
double fp_device_peak(const fp_device *d, fp_dtype t);
/* Launch overhead of a kernel of class c: its [launch] value, else (grouped_conv) conv's,
 * (dilated_pool) pool's, else [device] launch_overhead; a view without its own value costs 0. */
double fp_device_launch(const fp_device *d, fp_op_class c);
/* The capacity of d's last cache level; 0 without [cache]. */
uint64_t fp_device_last_level(const fp_device *d);
/* The capacity of the level before d's last (a core's own: the L2 of a server); 0 with fewer than
 * two levels. */
uint64_t fp_device_private_levels(const fp_device *d);
/* True when a kernel of class c runs in phases on d, its roofline adding some of the lesser of its
 * compute and memory times to the larger: a phased class (fp_op_class_phased: all of it) anywhere,
 * and on a blocked (MLAS) profile (nchwc_block > 0) CONV and POINTWISE_CONV too (the share of their
 * bytes past the levels before the last, none without two cache levels: passes/roofline.c).
 * MLAS's GEMM on NCHW data (an im2col's columns, or a pointwise convolution's input itself) reads
 * and writes activations that outgrow the L2 at the next level's rate on top of its compute, where
 * the NCHWc kernels (NCHWC_CONV) hide it (docs/devices.md, "Convolutions past the L2"). */
bool fp_device_phased(const fp_device *d, fp_op_class c);
/* Bandwidth (bytes/s, before bw_efficiency) of a kernel moving `bytes`: the first cache level whose
 * capacity holds them, else device memory. *level receives 1..FP_CACHE_LEVELS for a cache level, 0
 * for device memory (may be NULL). A profile without [cache] always gives `bandwidth`. */
double fp_device_bandwidth_for(const fp_device *d, uint64_t bytes, int *level);
/* The share of the last [cache] level's capacity at which a run's footprint starts to lose it:
 * [cache] last_from, 1 when the profile does not say. */
double fp_device_last_from(const fp_device *d);

/* ---- helpers for the CLI, calibrate and the cost model ---- */

/* The dtypes a profile may give a peak for, in display order (fp64, fp32, fp16, bf16, fp8e4m3,
 * fp8e5m2, int8, int4); *n receives the count. */
const fp_dtype *fp_device_peak_dtypes(size_t *n);
/* The [peak] key of dtype t ("fp32"), or NULL when t has no key of its own. */
const char *fp_device_peak_key(fp_dtype t);
/* Valid values of [device] target, NULL-terminated ("ort-cpu", "cuda", "ascend910b", "ascend310p"). */
const char *const *fp_device_targets(void);
/* Builds a profile from a parsed key file (the profile takes a reference on kf) and validates it
 * as fp_device_load does. `path` names the file in errors; the profile's name is its basename
 * without ".ini". */
fp_device *fp_device_from_keyfile(GKeyFile *kf, const char *path, GError **error);
/* A new key file holding d's [device], [peak] and [efficiency] groups, [saturation] (classes with
 * a half work), [launch] (the classes with launch_own) and [cache] (the levels present) when not
 * empty, followed by every other group of
 * d->keyfile (when set) unchanged. Caller g_key_file_unref()s. */
GKeyFile *fp_device_to_keyfile(const fp_device *d);
/* Gives every refinement class (FP_OP_CLASSES) its parent's efficiency and half work, and no
 * launch overhead of its own (it takes its parent's): a profile built in memory whose refinements
 * were not measured then estimates them as its parent. */
void fp_device_refine_from_parents(fp_device *d);
/* Why d's NCHWc block is what it is, one line for the report's notes: the host ISA `fuseplan
 * calibrate` found ([calibration] isa), else the profile's nchwc_block and the ISA ONNX Runtime's
 * MLAS gives that block on; what another ISA would give. NULL when d has no block. Caller frees. */
char *fp_device_nchwc_reason(const fp_device *d);
/* Directories searched for profiles by name: $FUSEPLAN_DEVICES (when set and non-empty), then
 * the source tree's devices/. Caller g_strfreev()s. */
char **fp_device_dirs(void);

#endif
