/* roofline.c - roofline arithmetic of one kernel on one device profile (see roofline.h). */
#include "roofline.h"

#include <math.h>

/* A run's footprint that a private level (an L2) starts to lose at EVICTED_FROM times its capacity
 * and has lost at EVICTED_TO times (fp_roofline_evicted). Measured with ONNX Runtime 1.31.1 on one
 * core of the Intel Xeon VM (2 MB L2): chains of 5 one-row MatMuls on batched weights of their own,
 * 1.25 to 6.25 MB in all, read at 73 GB/s from the L2 and 27.9 GB/s from the L3; the L3's share
 * 0.02 at 0.63 of the L2, 0.11 at 0.78, 0.28 at 0.94, 0.49 at 1.09, 0.66 at 1.25, 0.90 at 1.56,
 * 0.99 at 1.88 (docs/devices.md, "Graph inputs past the L2"). */
#define EVICTED_FROM 0.7
#define EVICTED_TO 1.6

double fp_roofline_intensity(uint64_t flops, uint64_t bytes)
{
    if (flops == 0)
        return 0;
    if (bytes == 0)
        return INFINITY;
    return (double)flops / (double)bytes;
}

double fp_roofline_ridge(const fp_device *d, fp_dtype t) { return fp_device_peak(d, t) / d->bandwidth; }

double fp_roofline_ridge_effective(const fp_device *d, fp_dtype t, fp_op_class c)
{
    g_assert((unsigned)c < FP_CLASS_COUNT);
    return fp_device_peak(d, t) * d->efficiency[c] / (d->bandwidth * d->bw_efficiency);
}

double fp_roofline_efficiency(const fp_device *d, const fp_kernel *k)
{
    g_assert((unsigned)k->cls < FP_CLASS_COUNT);
    double e = d->efficiency[k->cls], h = d->half_work[k->cls];
    if (h <= 0 || k->flops == 0)
        return e;
    double w = (double)k->flops;
    if (k->operands) /* the GEMM's own surface to volume (roofline.h) */
        return e / (1 + cbrt(h / 2) / 1.5 * (double)k->operands / w);
    return e / (1 + cbrt(h * (double)MAX(k->parts, 1) / w));
}

double fp_roofline_ridge_at(const fp_device *d, const fp_kernel *k)
{
    return fp_device_peak(d, k->dtype) * fp_roofline_efficiency(d, k) /
           (fp_device_bandwidth_for(d, k->bytes, NULL) * d->bw_efficiency);
}

fp_roofline fp_roofline_eval(const fp_device *d, uint64_t flops, uint64_t bytes, fp_dtype t, fp_op_class c)
{
    fp_kernel k = {.flops = flops, .bytes = bytes, .dtype = t, .cls = c};
    return fp_roofline_kernel(d, &k);
}

/* The share of `bytes` past a level of `capacity`: 0 up to `from` times the capacity, rising linearly
 * to 1 at `to` times it. */
static double ramp(double bytes, double capacity, double from, double to)
{
    return capacity > 0 ? CLAMP((bytes / capacity - from) / (to - from), 0, 1) : 0;
}

double fp_roofline_past(double bytes, double capacity) { return ramp(bytes, capacity, 1, 2); }

double fp_roofline_lost(double bytes, double capacity, double from) { return ramp(bytes, capacity, from, from + 1); }

double fp_roofline_evicted(double bytes, double capacity) { return ramp(bytes, capacity, EVICTED_FROM, EVICTED_TO); }

/* The time of kernel k's reread bytes on d (roofline.h, "Transposes past the L1"). */
static double reread_time(const fp_device *d, const fp_kernel *k)
{
    if (!k->reread)
        return 0;
    int level = 0;
    double near = fp_device_bandwidth_for(d, k->bytes / 2, &level);
    if (level == 0) /* its input is past every cache level */
        return (double)k->reread / near;
    uint64_t cap = d->cache[level - 1].bytes;
    double f = fp_roofline_past((double)k->bytes, (double)cap);
    return (double)k->reread * ((1 - f) / near + f / fp_device_bandwidth_for(d, cap + 1, NULL));
}

/* The rate at which kernel k reads its spill bytes on d (roofline.h, "Weights past the L2"): a
 * GEMM's packed panels at [device] weight_l3_bandwidth, a convolution's weights at the bandwidth
 * of the level that holds the run's footprint. */
static double spill_rate(const fp_device *d, const fp_kernel *k)
{
    if (k->cls == FP_CLASS_MATMUL)
        return d->weight_l3_bandwidth;
    return fp_device_bandwidth_for(d, MAX(k->resident, k->bytes), NULL);
}

/* The time of kernel k's post pass on d (2 x post bytes, read and written): an NCHW convolution's
 * (its bias and activation, MlasActivation over each GEMM's output as MLAS leaves it) at the rate of
 * the levels before the last however large its output (measured 3-41 us a MB of output, 19 on
 * average over nine chains with outputs of 0.25 to 5.6 MB, within and past the L2; docs/devices.md,
 * "A convolution's bias"); any other's at the rate of the level its post bytes fit. */
static double post_time(const fp_device *d, const fp_kernel *k)
{
    if (!k->post)
        return 0;
    uint64_t span = k->post, below = fp_device_private_levels(d);
    if (fp_op_class_nchw_conv(k->cls) && below)
        span = MIN(span, below);
    return 2.0 * (double)k->post / (fp_device_bandwidth_for(d, span, NULL) * d->bw_efficiency);
}

/* The share of kernel k's lesser roofline term (compute or memory) that d adds to its larger
 * (fp_device_phased): all of it for a phased class; for a convolution phased on a blocked profile
 * the share of its bytes past the levels before the last (fp_roofline_past: none within them, all
 * from twice their capacity; none on a profile without two levels, which cannot tell); else none. */
static double phase_share(const fp_device *d, const fp_kernel *k)
{
    if (!fp_device_phased(d, k->cls))
        return 0;
    if (fp_op_class_phased(k->cls))
        return 1;
    uint64_t below = fp_device_private_levels(d);
    return below ? fp_roofline_past((double)k->bytes, (double)below) : 0;
}

fp_roofline fp_roofline_kernel(const fp_device *d, const fp_kernel *k)
{
    g_assert((unsigned)k->cls < FP_CLASS_COUNT);
    uint64_t parts = MAX(k->parts, 1);
    uint64_t cold = d->weight_bandwidth > 0 ? MIN(k->cold, k->bytes) : 0;
    uint64_t spill = d->weight_l3_bandwidth > 0 ? MIN(k->spill, k->bytes - cold) : 0;
    uint64_t far = MIN(k->far, k->bytes - cold - spill), warm = k->bytes - cold - spill - far;
    fp_roofline r;
    uint64_t kept = MIN(k->kept, warm);
    double bw = fp_device_bandwidth_for(d, warm, &r.level);
    double kept_bw = kept && k->resident > warm ? fp_device_bandwidth_for(d, k->resident, NULL) : bw;
    r.compute_s = k->flops ? (double)k->flops / (fp_device_peak(d, k->dtype) * fp_roofline_efficiency(d, k)) : 0;
    r.memory_s = warm ? (double)warm / (bw * d->bw_efficiency) : 0;
    if (k->inplace) { /* no write-allocate reads of its output's lines */
        r.memory_s *= FP_ROOFLINE_INPLACE;
        r.compute_s *= k->cls == FP_CLASS_EW ? FP_ROOFLINE_INPLACE : 1;
    }
    /* none where a profile's outer level is the faster */
    r.kept_s = fmax(0, (double)kept * (1 / kept_bw - 1 / bw) / d->bw_efficiency);
    r.cold_s = cold ? (double)cold / d->weight_bandwidth : 0;
    r.spill_s = spill ? (double)spill / spill_rate(d, k) : 0;
    r.far_s = far ? (double)far / (d->bandwidth * d->bw_efficiency) : 0;
    r.post_s = post_time(d, k);
    r.launch_s = fp_device_launch(d, k->cls) + (parts > 1 ? (double)parts * d->launch_group : 0) +
                 (double)k->rows * d->launch_row + (double)k->outputs * d->launch_output +
                 (double)k->views * fp_device_launch(d, FP_CLASS_VIEW) + (k->mixed ? d->launch_mixed : 0);
    r.denormal_s = (double)k->denormal * (k->cls == FP_CLASS_SOFTMAX ? d->denormal_exp_s : d->denormal_mac_s);
    r.reread_s = reread_time(d, k);
    r.bound = r.compute_s > r.memory_s + r.cold_s + r.spill_s + r.far_s + r.kept_s + r.reread_s ? FP_BOUND_COMPUTE
                                                                                                : FP_BOUND_MEMORY;
    double body = fmax(r.compute_s, r.memory_s) + phase_share(d, k) * fmin(r.compute_s, r.memory_s);
    r.time_s = body + r.cold_s + r.spill_s + r.far_s + r.kept_s + r.post_s + r.denormal_s + r.reread_s + r.launch_s;
    r.intensity = fp_roofline_intensity(k->flops, k->bytes);
    return r;
}

const char *fp_bound_name(fp_bound b) { return b == FP_BOUND_COMPUTE ? "compute" : "memory"; }

const char *fp_roofline_level_name(int level)
{
    static const char *const names[] = {"memory", "L1", "L2", "L3"};
    G_STATIC_ASSERT(G_N_ELEMENTS(names) == FP_CACHE_LEVELS + 1);
    return level >= 1 && level <= FP_CACHE_LEVELS ? names[level] : names[0];
}
