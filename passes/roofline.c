/* roofline.c - roofline arithmetic of one kernel on one device profile (see roofline.h). */
#include "roofline.h"

#include <math.h>

double fp_roofline_intensity(uint64_t flops, uint64_t bytes)
{
    if (flops == 0)
        return 0;
    if (bytes == 0)
        return INFINITY;
    return (double)flops / (double)bytes;
}

double fp_roofline_ridge(const fp_device *d, fp_dtype t)
{
    return fp_device_peak(d, t) / d->bandwidth;
}

double fp_roofline_ridge_effective(const fp_device *d, fp_dtype t, fp_op_class c)
{
    g_assert((unsigned)c < FP_CLASS_COUNT);
    return fp_device_peak(d, t) * d->efficiency[c] / (d->bandwidth * d->bw_efficiency);
}

fp_roofline fp_roofline_eval(const fp_device *d, uint64_t flops, uint64_t bytes, fp_dtype t, fp_op_class c)
{
    g_assert((unsigned)c < FP_CLASS_COUNT);
    fp_roofline r;
    r.compute_s = flops ? (double)flops / (fp_device_peak(d, t) * d->efficiency[c]) : 0;
    r.memory_s = bytes ? (double)bytes / (d->bandwidth * d->bw_efficiency) : 0;
    r.launch_s = d->launch_overhead;
    r.bound = r.compute_s > r.memory_s ? FP_BOUND_COMPUTE : FP_BOUND_MEMORY;
    r.time_s = fmax(r.compute_s, r.memory_s) + r.launch_s;
    r.intensity = fp_roofline_intensity(flops, bytes);
    return r;
}

const char *fp_bound_name(fp_bound b)
{
    return b == FP_BOUND_COMPUTE ? "compute" : "memory";
}
