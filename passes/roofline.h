/* roofline.h - roofline arithmetic of one kernel on one device profile (pure functions).
 *
 * A kernel doing `flops` operations on `bytes` of device memory traffic takes
 *   time = max(flops / (peak(dtype) * efficiency[class]), bytes / (bandwidth * bw_efficiency))
 *        + launch_overhead
 * and is compute-bound when the first term is the larger, memory-bound otherwise (ties, and a
 * kernel that does nothing, count as memory-bound). The cost model sums these per fused kernel.
 */
#ifndef FP_PASS_ROOFLINE_H
#define FP_PASS_ROOFLINE_H

#include <stdint.h>

#include "devices/device.h"

typedef enum { FP_BOUND_COMPUTE, FP_BOUND_MEMORY } fp_bound;

typedef struct {
    double compute_s; /* flops / (peak(dtype) * efficiency[class]) */
    double memory_s;  /* bytes / (bandwidth * bw_efficiency) */
    double launch_s;  /* the device's launch overhead */
    double time_s;    /* max(compute_s, memory_s) + launch_s */
    fp_bound bound;   /* FP_BOUND_COMPUTE when compute_s > memory_s */
    double intensity; /* fp_roofline_intensity(flops, bytes) */
} fp_roofline;

/* Roofline estimate of one kernel of op class c computing in dtype t (peak per fp_device_peak). */
fp_roofline fp_roofline_eval(const fp_device *d, uint64_t flops, uint64_t bytes, fp_dtype t, fp_op_class c);
/* Arithmetic intensity flops / bytes in FLOP/byte; 0 when flops is 0, INFINITY when only bytes is 0. */
double fp_roofline_intensity(uint64_t flops, uint64_t bytes);
/* Ridge point peak(t) / bandwidth in FLOP/byte: the datasheet intensity where the roofs meet. */
double fp_roofline_ridge(const fp_device *d, fp_dtype t);
/* The ridge with efficiencies applied, (peak(t) * efficiency[c]) / (bandwidth * bw_efficiency):
 * a kernel of class c is compute-bound exactly when its intensity is above this. */
double fp_roofline_ridge_effective(const fp_device *d, fp_dtype t, fp_op_class c);
/* "compute" or "memory". */
const char *fp_bound_name(fp_bound b);

#endif
