/* cost.h - roofline cost model (passes/cost.c): every runtime op's estimated time on a device
 * profile, its bound, and the total. Needs shapes and metrics (and fusion/layout when run). */
#ifndef FP_PASS_COST_H
#define FP_PASS_COST_H

#include "devices/device.h"
#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/roofline.h"

typedef struct { /* fields ordered for size: one per runtime op of a graph of any size */
    fp_node *node;
    uint64_t flops, bytes;
    uint64_t work;     /* the work the roofline counts (fp_kernel.flops): flops, but a blocked
                          convolution's on its channels padded to the block, a transpose's elements */
    uint64_t parts;    /* sub-kernels it runs as (fp_cost_parts): groups, a batch's GEMMs, else 1 */
    uint64_t operands; /* GEMM operand elements (fp_cost_gemm_operands), 0 when not a GEMM */
    uint64_t cold;     /* of bytes: weight bytes read from memory (fp_cost_cold_fraction of its weights) */
    uint64_t spill;    /* of bytes: a GEMM's packed weight bytes (class matmul) or a dense convolution's
                          read from the last cache level: of those not cold, the fraction of the
                          run's footprint past the L2
                          (fp_cost_kept_bytes and the plan's buffers against the levels before the last) */
    uint64_t rows;     /* rows its im2col copies when an NCHW convolution (passes/cost.c) */
    uint64_t post;     /* output bytes a fused activation or a bias passes over again (passes/cost.c) */
    uint64_t far;      /* of bytes: activation bytes past the last cache level (passes/reuse.h) */
    uint64_t kept;     /* of bytes: graph-input bytes, and a streaming product's weight bytes not cold,
                          read from the last cache level (fp_kernel.kept) */
    uint64_t resident; /* the run's footprint they come back from (fp_kernel.resident) */
    uint64_t denormal; /* denormal operations (fp_denormal_events) */
    uint64_t reread;   /* bytes a transpose loads into the L1 again (fp_kernel.reread) */
    uint64_t outputs;  /* its outputs past the first (fp_kernel.outputs) */
    uint64_t views;    /* Reshapes the runtime dispatches around it (fp_kernel.views) */
    fp_roofline rl;    /* time_s includes the class's launch overhead */
    fp_op_class cls;
    fp_dtype dtype; /* dtype it computes in (after a --dtype what-if) */
    bool kernel;    /* launches a kernel (views and folded ops do not; a view still costs the
                          device's [launch] view, 0 unless the runtime dispatches views) */
    bool mixed;     /* its graph's kernels are of FP_MIXED_CLASSES classes or more (fp_kernel.mixed) */
    bool inplace;   /* ONNX Runtime writes its output over its input (fp_kernel.inplace) */
} fp_op_cost;

typedef struct {
    fp_op_cost *ops; /* runtime ops of the main graph in topological order */
    uint32_t n_ops;
    uint32_t kernels;
    uint32_t unknown; /* ops whose metrics are unknown: costed at their launch overhead */
    double total_s;   /* sum over ops (sequential execution), control flow included, + the device's
                          run_overhead */
    uint64_t flops, bytes;
} fp_cost_result;

/* Class of an op for the device's efficiency factors and launch overheads (a convolution with
 * group > 1 is grouped_conv, an NCHW 1x1 one MLAS runs without im2col pointwise_conv, a one-row
 * MatMul or Gemm gemv, one whose B is not a 2-D weight gemv_rt or matmul_rt, a contrib Attention,
 * MultiHeadAttention or GroupQueryAttention attention, an op with the TRANSC trait
 * transcendental, a Transpose transpose, a pooling with a dilation > 1 dilated_pool, a global
 * pooling reduce, a view op view; devices/device.h). */
fp_op_class fp_cost_class(const fp_node *n);
/* The fraction of its weights a run of g reads from memory rather than a cache on d: a runtime
 * reads every kernel's weights once per run and writes every activation, cyclically; with the
 * footprint F (the weight bytes and the output bytes of g's kernels: an arena need not hand an
 * activation the lines an earlier one had) against the capacity C of d's last cache level, 0 while
 * F <= a C, rising linearly to 1 at F = (a + 1) C, a the profile's [cache] last_from (1 when it has
 * none; fp_roofline_lost). Measured: chains of one-row MatMuls of 4 MB weights each in ONNX Runtime
 * on a 16 MB L3 read them at the L3's rate up to 13 MB, a third of the way to memory's at 21 MB, at
 * memory's from 34 MB (a = 1); on a VM's shared 300 MB L3, from about 0.66 of it (docs/devices.md,
 * "Cold weights"). 0 on a profile without [cache]. The cost model
 * (fp_op_cost.cold) and the roofline (fp_kernel.cold) take that fraction of every kernel's weights
 * from memory. */
double fp_cost_cold_fraction(const fp_graph *g, const fp_device *d, fp_dtype what_if);
/* The fraction of a cache level's contents the other processes of d's host evict in `seconds`: 1 -
 * exp(-seconds / L), L the profile's [cache] last_life (0 without one: kept for good). A run's
 * weights held by the last level, past those before it, are read again a run's time later, and
 * that fraction of them comes from memory (at [device] weight_bandwidth). Measured on the VM of
 * docs/devices.md ("Weights the last level loses in time"): a chain of 64 MB of one-row MatMul weights
 * read at the L3's rate run after run, at memory's with a sleep of 16 ms or more between runs. */
double fp_cost_lost_in(const fp_device *d, double seconds);
/* The bytes a run of g reads that outlive it, under a dtype what-if: its kernels' weight bytes
 * (a weight read by two kernels counted twice) and its graph inputs' bytes, which a caller binds
 * again for every run. With the bytes of the buffers ONNX Runtime's plan hands out (fp_reuse_cold's
 * arena) they make the run's footprint F: against the capacity P of d's levels before the last
 * (its L2), a fraction fp_roofline_evicted(F, P) of every graph-input read, and of the weights of
 * a product that streams them (a one-row one, class gemv, and one whose B is not packed once,
 * classes gemv_rt and matmul_rt), comes from the last level (fp_op_cost.kept; measured:
 * whisper-shaped 384 KB key inputs, each transposed and multiplied, 2.3 us more each in ONNX
 * Runtime when four of them outgrew the L2 than when all four were one; one-row MatMuls by 1 MB
 * weights of their own, 5 MB in all, 39.5 us each on an Intel Xeon with a 2 MB L2, the L3's rate,
 * by 256 KB ones, 1.3 MB in all, 2.3 us; docs/devices.md, "Graph inputs past the L2"), and of a
 * GEMM's prepacked weights (class matmul) and of a dense convolution's (a class whose parent is
 * conv) the same fraction is its spill (fp_op_cost.spill). */
uint64_t fp_cost_kept_bytes(const fp_graph *g, fp_dtype what_if);
/* Sub-kernels op n runs as (fp_kernel.parts): a grouped convolution's group count; for a float
 * product whose B is not packed once (matmul_rt, gemv_rt), the GEMMs of its batch (MLAS is called
 * once per matrix: a decoder's attention, one per head); else 1. */
uint64_t fp_cost_parts(const fp_node *n);
/* Elements of the GEMM operands op n lowers to, summed over its sub-GEMMs (M K + K N + M N each:
 * a convolution per image and group as im2col + GEMM, M = output channels, K = input channels x
 * kernel, N = output pixels; a ConvTranspose as GEMM + col2im; Gemm; MatMul per batch matrix), for
 * the shape-aware saturation of passes/roofline.h; for a fused attention op (class attention) its
 * scores (fp_metrics_attention_scores), which ONNX Runtime's kernel writes, scales, normalizes and
 * reads back head by head at a cost per score its FLOPs do not tell (a GroupQueryAttention step:
 * 3.3 us + 0.053 ns a FLOP + 4.8 ns a score within 15% over 12 shapes, docs/benchmarks.md). 0 for
 * other ops and unknown shapes. */
uint64_t fp_cost_gemm_operands(const fp_node *n);

/* fp_pass_cost's flags. FP_COST_RUN_FOLDED: the shape computations shape inference evaluated
 * (FP_NODE_FOLDED) run as kernels, each at its class's launch (their tensors are a few integers),
 * as in a runtime that folds nothing: ONNX Runtime at ORT_DISABLE_ALL, whose constant folding is a
 * level-1 rewrite; a Constant is an initializer to every runtime. */
enum { FP_COST_RUN_FOLDED = 1u << 0 };

/* Costs the main graph on device d. `what_if` != FP_DT_UNDEFINED runs the what-if of computing in
 * that dtype: float32 tensors scale their bytes by bits(what_if)/32 and use its peak. If/Loop/Scan
 * cost their bodies (If: the dearer branch; Loop/Scan: the trip count, 1 when unknown). `flags`:
 * FP_COST_* above. Caller frees with fp_cost_result_free. */
fp_cost_result *fp_pass_cost(const fp_model *m, const fp_device *d, fp_dtype what_if, unsigned flags, fp_diag *diag);
void fp_cost_result_free(fp_cost_result *r);
/* fp_pass_cost(m, d, what_if, flags, NULL)->total_s, without the per-op array (a stage that keeps
 * only its total). */
double fp_cost_total(const fp_model *m, const fp_device *d, fp_dtype what_if, unsigned flags);
/* Adds the warning fp_pass_cost gives when ops have unknown shapes (r computed without a diag). */
void fp_cost_warn_unknown(const fp_cost_result *r, fp_diag *diag);
/* The kernel of op cost c as the roofline sees it (a view: class view, no work). */
fp_kernel fp_cost_kernel(const fp_op_cost *c);
/* The kernels control-flow op n (If, Loop, Scan) costs on d, as fp_kernel (views: class view, no
 * work), appended to out: n's own (its class's launch), then its body's as the cost model counts
 * them (If: the dearer branch on d; Loop/Scan: the body trip-count times; nested control flow
 * expanded alike), in the body's topological order. The sum of their roofline times is the op's
 * estimate. False, with out unchanged, when out would hold more than max kernels. */
bool fp_cost_control_kernels(const fp_node *n, const fp_device *d, GArray *out, guint max);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_cost_result, fp_cost_result_free)

#endif
