/* roofline.h - roofline arithmetic of one kernel on one device profile (pure functions).
 *
 * A kernel of op class c doing `flops` operations on `bytes` of memory traffic takes
 *   time = max(flops / (peak(dtype) * eff_c), bytes / (bandwidth(bytes) * bw_efficiency))
 *        + launch(c)
 *   eff_c = efficiency[c] / (1 + sat_c)              (efficiency[c] when the class has no half work)
 * and is compute-bound when the first term is the larger, memory-bound otherwise (ties, and a
 * kernel that does nothing, count as memory-bound). bandwidth(bytes) is the hierarchical
 * (cache-aware) memory roof: the bandwidth of the first [cache] level whose capacity holds the
 * kernel's traffic, else the device memory's (fp_device_bandwidth_for); a profile without [cache]
 * has the one roof. launch(c) is the class's [launch] value, else the device's launch overhead
 * (fp_device_launch).
 *
 * sat_c is the surface-to-volume overhead of a GEMM-like kernel (convolution, matmul): besides its
 * multiply-adds (W = 2 M N K per GEMM), a blocked GEMM packs and moves its operands (M K + K N +
 * M N elements, D), so time = W / (peak * efficiency) + a * D. With h = half_work[c], the work at
 * which a cubic GEMM (M = N = K) reaches half its efficiency:
 *   sat_c = (h / 2)^(1/3) / 1.5 * D / W     when the kernel's GEMM operands D are known
 *   sat_c = (h / W_part)^(1/3)               else (the cubic case: D / W = 1.5 / n, W = 2 n^3)
 * so skinny GEMMs (a 3x3 convolution with 16 output channels, a matmul of 8 rows) saturate later
 * than square ones of the same work. A kernel made of `parts` sub-kernels (a grouped convolution:
 * one per group, as ONNX Runtime's MLAS runs it; a batched product whose B is not packed once: one
 * GEMM per matrix) saturates with the work of one part (when its operands are unknown) and pays
 * [launch] group per part on top of launch(c) (one call into MLAS each), and [launch] im2col_row
 * per row its im2col copies (`rows`). The cost model sums these per fused kernel. A fused
 * activation or bias the runtime applies in a pass of its own over the output the kernel wrote
 * (`post` bytes) adds that pass's memory time, streaming from the level the output fits (an NCHW
 * convolution's from the levels before the last: passes/roofline.c, post_time).
 *
 * Cold weights: on a profile with [device] weight_bandwidth, the kernel's `cold` bytes (weights
 * evicted between runs) leave the roofline's traffic and add cold / weight_bandwidth to its time:
 * a CPU kernel reads such weights from memory at that rate while it computes, not overlapped with
 * it (a 1x1 convolution of 440 channels at 7x7 in ONNX Runtime: 220 us with its 774 KB of weights
 * in the cache, 270 us without; docs/benchmarks.md).
 *
 * Weights past the L2: on a profile with [device] weight_l3_bandwidth, the kernel's `spill` bytes
 * (a GEMM's prepacked weights or a dense convolution's that a run whose footprint outgrows the
 * levels before the last finds in the last, passes/cost.h) leave the roofline's traffic too and
 * add spill / weight_l3_bandwidth for a GEMM, spill / the bandwidth of the level holding the
 * footprint for a convolution (ResNet-50's 3x3 convolutions in ONNX Runtime: 2.4 and 9.4 MB of
 * weights 15-26 GB/s slower than 147 KB at equal FLOPs; docs/devices.md), not overlapped: MLAS
 * streams each panel of its packed B from where it lies as it starts on it
 * (ONNX Runtime on an Intel Xeon with a 2 MB L2: MatMuls of 32 and 64 rows by 0.6 and 1 MB weights,
 * each op its own, 6-14% slower than reading one shared weight, 83-118 GB/s of weights;
 * docs/devices.md, "Weights past the L2").
 *
 * Far activations: the kernel's `far` bytes (activations whose buffer the last cache level lost
 * since their last touch, passes/reuse.h) leave the roofline's traffic too and add far /
 * (bandwidth * bw_efficiency), memory's roof, not overlapped either (docs/devices.md,
 * "Activations past the last level").
 *
 * Graph inputs past the L2: the kernel's `kept` bytes (graph inputs, bound again for every run and
 * last touched a run ago, and a one-row product's weights, which it streams once) come from the
 * level that holds the run's footprint `resident`, not from the one the kernel's own bytes fit. Where that level is further out, the difference of the two
 * levels' times for those bytes is added, not overlapped (`kept_s`): four transposes of 384 KB graph
 * inputs in ONNX Runtime took 2.3 us more each when the inputs outgrew the L2 together than when
 * they were one, the L2's and L3's rates on that host 2.25 us (docs/devices.md, "Graph inputs past
 * the L2").
 *
 * Transposes past the L1: a transpose's `reread` bytes (lines MLAS loads into the L1 again on every
 * pass of four columns, where a pass's lines outgrow the L1 at their stride, passes/cost.c) add
 * their time at the rate of the level that holds its input, the next level's for the share of its
 * traffic past that level's capacity (0 at it, all at twice it), not overlapped and without
 * bw_efficiency (line loads alone; ONNX Runtime on an Intel Xeon, NHWC to NCHW at 96, 192 and 384
 * channels: 39, 18 and 8.8 us more than NCHW to NHWC, these 38, 15 and 7.6; docs/devices.md,
 * "Transposes past the L1").
 *
 * Outputs in place: a kernel writing a buffer of its own makes the CPU read each of the output's
 * lines before it writes it (write-allocate), one transfer more per output byte; one writing over
 * the input it has just read does not. A unary kernel in place thus moves 2 bytes where one out of
 * place moves 3: an `inplace` kernel's memory term, and an elementwise one's compute term (its
 * per-element streaming cost), are FP_ROOFLINE_INPLACE of the same kernel's out of place (ONNX
 * Runtime on an Intel Xeon, chains of 0.8 and 4.8 MB: Relu and Clip, in place, 0.60-0.75 of the
 * time of Neg and Abs, which are not; docs/devices.md, "Outputs in place").
 *
 * Denormal floats: each of the kernel's `denormal` operations adds, not overlapped, the time of
 * the microcode assist the CPU makes for it: a Softmax's denormal results (exp() of masked logits,
 * passes/denormal.h) [device] denormal_exp_s each, a product's multiply-adds on a denormal operand
 * (the weights those make) denormal_mac_s each (Swin-T in ONNX Runtime on an Intel Xeon: both
 * alike per operation in its three stages, whose shares of denormal weights are 12, 23 and 43%;
 * docs/benchmarks.md).
 */
#ifndef FP_PASS_ROOFLINE_H
#define FP_PASS_ROOFLINE_H

#include <stdint.h>

#include "devices/device.h"

typedef enum { FP_BOUND_COMPUTE, FP_BOUND_MEMORY } fp_bound;

#define FP_ROOFLINE_INPLACE (2.0 / 3.0) /* an in-place unary kernel's traffic over an out-of-place one's */

/* One kernel's work, as the cost model and the fit see it. */
typedef struct {
    uint64_t flops, bytes;
    fp_dtype dtype; /* it computes in */
    fp_op_class cls;
    uint64_t parts;    /* sub-kernels: the groups of a grouped convolution, the GEMMs of a batched
                          product (passes/cost.h, fp_cost_parts); 0 or 1 = one */
    uint64_t operands; /* elements of the GEMM operands it lowers to, summed over its sub-GEMMs
                          (M K + K N + M N each); 0 = not a GEMM or unknown */
    uint64_t cold;     /* of bytes: weight bytes no cache holds between runs (passes/cost.h) */
    uint64_t spill;    /* of bytes: weight bytes read from the last level (passes/cost.h) */
    uint64_t rows;     /* rows a grouped convolution's im2col copies (passes/cost.c), else 0 */
    uint64_t post;     /* bytes of its output a fused activation or a bias reads and writes again in
                          a pass of its own (passes/cost.c), else 0 */
    uint64_t far;      /* of bytes: activation bytes past the last cache level (passes/reuse.h) */
    uint64_t kept;     /* of bytes: graph-input bytes (and a one-row product's weights) that come from the
                          level holding `resident` */
    uint64_t resident; /* bytes: the run's footprint (passes/cost.h, fp_cost_kept_bytes) */
    uint64_t denormal; /* denormal operations (passes/denormal.h, fp_denormal_events): a product's
                          multiply-adds with a denormal operand, a Softmax's denormal results */
    uint64_t reread;   /* bytes a transpose loads again into the L1, pass after pass (passes/cost.c) */
    uint64_t outputs;  /* its outputs past the first, each allocated whether read or not ([launch] output) */
    uint64_t views;    /* Reshapes the runtime dispatches around it, each at [launch] view (an N-D Gemm's,
                          passes/cost.c) */
    bool mixed;        /* its graph's kernels are of FP_MIXED_CLASSES classes or more ([launch] mixed) */
    bool inplace;      /* its output takes over its input's buffer (above, "Outputs in place") */
} fp_kernel;

typedef struct {
    double compute_s;  /* flops / (peak(dtype) * eff_class) */
    double memory_s;   /* bytes / (bandwidth(bytes) * bw_efficiency) */
    double launch_s;   /* the class's launch overhead (+ the per-group one per part) */
    double cold_s;     /* cold / weight_bandwidth, where the profile has one (else 0: cold in memory_s) */
    double spill_s;    /* spill at its rate (above), where the profile has weight_l3_bandwidth (else 0:
                          in memory_s) */
    double far_s;      /* far / (bandwidth * bw_efficiency): activations past the last cache level */
    double post_s;     /* 2 x post / (bandwidth(span) * bw_efficiency): the activation's or bias's
                          pass (span: post, capped at the levels before the last for an NCHW
                          convolution; passes/roofline.c, post_time) */
    double kept_s;     /* kept x (1 / bandwidth(resident) - 1 / bandwidth(bytes)) / bw_efficiency */
    double denormal_s; /* denormal x denormal_exp_s (a Softmax) or denormal_mac_s: microcode assists */
    double reread_s;   /* reread at the rate of the level its input fits, ramping to the next's */
    double time_s;     /* max(compute_s, memory_s) + cold_s + spill_s + far_s + kept_s + post_s + denormal_s +
                      reread_s + launch_s */
    double intensity;  /* fp_roofline_intensity(flops, bytes) */
    fp_bound bound;    /* FP_BOUND_COMPUTE when compute_s > memory_s + cold_s + spill_s + far_s + kept_s */
    int level;         /* where the traffic streams from: 1..FP_CACHE_LEVELS a cache level, 0 memory */
} fp_roofline;

/* Roofline estimate of kernel k (peak per fp_device_peak). */
fp_roofline fp_roofline_kernel(const fp_device *d, const fp_kernel *k);
/* The same for a single kernel of op class c computing in dtype t whose GEMM operands are unknown. */
fp_roofline fp_roofline_eval(const fp_device *d, uint64_t flops, uint64_t bytes, fp_dtype t, fp_op_class c);
/* eff_c of kernel k: efficiency[class], lowered by the class's [saturation] half work when the
 * profile has one (see above). */
double fp_roofline_efficiency(const fp_device *d, const fp_kernel *k);
/* The share of `bytes`, touched in turn run after run, that a cache level of `capacity` does not
 * keep: 0 while they fit, rising linearly to 1 at twice the capacity; 0 for a capacity of 0 (a
 * transpose's rereads past its level: passes/cost.h). */
double fp_roofline_past(double bytes, double capacity);
/* The share of a run's footprint of `bytes` that a last cache level of `capacity` does not keep
 * from one run to the next: 0 up to `from` times the capacity, rising linearly to 1 one capacity
 * further ([cache] last_from, which calibrate measures; fp_device.last_from); 0 for a capacity of
 * 0 (cold weights: passes/cost.h). */
double fp_roofline_lost(double bytes, double capacity, double from);
/* The share of a run's footprint of `bytes` that a private cache level of `capacity` (the L2) does
 * not keep from one run to the next: a run's footprint starts to lose the level before it fills it
 * (other data, the code, a replacement that is not LRU): 0 up to 0.7 times the capacity, rising
 * linearly to 1 at 1.6 times it (measured, roofline.c); 0 for a capacity of 0 (graph inputs and
 * streamed weights read back from the last level: passes/cost.h). */
double fp_roofline_evicted(double bytes, double capacity);
/* Arithmetic intensity flops / bytes in FLOP/byte; 0 when flops is 0, INFINITY when only bytes is 0. */
double fp_roofline_intensity(uint64_t flops, uint64_t bytes);
/* Ridge point peak(t) / bandwidth in FLOP/byte: the datasheet intensity where the roofs meet. */
double fp_roofline_ridge(const fp_device *d, fp_dtype t);
/* The ridge with efficiencies applied, (peak(t) * efficiency[c]) / (bandwidth * bw_efficiency),
 * against device memory: a kernel of class c whose traffic fits no cache level is compute-bound
 * exactly when its intensity is above this. */
double fp_roofline_ridge_effective(const fp_device *d, fp_dtype t, fp_op_class c);
/* The same for kernel k: its saturated efficiency against the roof its traffic streams from (a
 * cache level when it fits one): the ridge that decides fp_roofline_kernel's bound for it. */
double fp_roofline_ridge_at(const fp_device *d, const fp_kernel *k);
/* "compute" or "memory". */
const char *fp_bound_name(fp_bound b);
/* Short name of a memory level for reports: "L1", "L2", "L3", or "memory" for 0. */
const char *fp_roofline_level_name(int level);

#endif
