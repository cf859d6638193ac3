/* calibrate_cache.c - the cache sweep of `fuseplan calibrate` (calibrate.h): the triad over growing
 * working sets, the cache sizes the OS reports, and the cache levels of a cache-aware roofline
 * derived from the two. */
#include "calibrate_internal.h"

#include "calibration/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SWEEP_MIN ((uint64_t)16 << 10)             /* smallest working set of the sweep */
#define SWEEP_MAX ((uint64_t)512 << 20)            /* largest */
#define SWEEP_UNIT_BYTES (32.0 * FP_CALIBRATE_MIB) /* triad traffic per unit of work: small arrays repeat */
#define SWEEP_SHARE 8                              /* each point measures for --seconds / SWEEP_SHARE */
#define SWEEP_PASSES 3        /* passes over the working sets; a point's best counts (another load only slows it) */
#define LEVEL_OVER_MEMORY 1.5 /* a working set streams from a cache above this x memory */
#define LEVEL_PLATEAU 0.5     /* half a level's size still streams at this x its best */
#define LEVEL_HELD 0.25       /* having gone at most this share of the way to memory's rate */
#define LEVEL_DISTINCT 1.1    /* a level is kept when this much faster than the next */
#define LOST_SETTLED 0.05     /* a point this near the last level's rate or memory's says nothing of the loss */
#define LOST_FROM_MIN 0.25    /* the least fp_calibrate_last_from gives */

void fp_calibrate_reported_caches(int threads, uint64_t out[FP_CALIBRATE_LEVELS])
{
    static const int names[FP_CALIBRATE_LEVELS] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
                                                   _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++) {
        long v = sysconf(names[i]);
        uint64_t per = v > 0 ? (uint64_t)v : 0;
        out[i] = i < 2 ? per * (uint64_t)MAX(threads, 1) : per; /* L1d and L2 are private to a core */
    }
}

/* The share of the way from bandwidth `top` to memory's that a point at `bw` has gone, in time per
 * byte (0 at top, 1 at memory; 0 when memory is not the slower). */
static double lost_share(double bw, double top, double memory_bw)
{
    return memory_bw < top ? (1 / bw - 1 / top) / (1 / memory_bw - 1 / top) : 0;
}

/* Capacity of a level reported as `size` after level `prev`: the size, when half of it still
 * streams at LEVEL_PLATEAU x the level's fastest point or more, having gone at most LEVEL_HELD of
 * the way to memory's rate (lost_share: a VM's L3, whose best is twice memory's, is past half its
 * best only at memory's rate); else (a VM reporting its host's cache, a socket's cache shared by
 * many cores) the working set at which the sweep falls through the geometric mean of that point
 * and memory (the edge), between the last point above it and the next (linear in bandwidth,
 * geometric in size), or the last point above it when none beyond falls. 0 when the sweep says
 * nothing. */
static uint64_t level_capacity(const fp_calibrate_point *sw, size_t n, uint64_t size, uint64_t prev, double memory_bw)
{
    const fp_calibrate_point *half = NULL;
    double top = 0;
    for (size_t k = 0; k < n && sw[k].bytes <= size; k++) {
        if (sw[k].bytes <= prev)
            continue;
        top = MAX(top, sw[k].bandwidth);
        if (sw[k].bytes * 2 <= size)
            half = &sw[k];
    }
    if (top == 0)
        return 0;
    if (half && half->bandwidth >= LEVEL_PLATEAU * top && lost_share(half->bandwidth, top, memory_bw) <= LEVEL_HELD)
        return size;
    double edge = sqrt(top * memory_bw);
    const fp_calibrate_point *above = NULL, *below = NULL;
    for (size_t k = 0; k < n && sw[k].bytes <= size; k++) {
        if (sw[k].bytes > prev && sw[k].bandwidth >= edge)
            above = &sw[k], below = NULL;
        else if (above && !below)
            below = &sw[k];
    }
    if (!above)
        return 0;
    if (!below)
        return above->bytes;
    double t = (above->bandwidth - edge) / (above->bandwidth - below->bandwidth);
    return (uint64_t)((double)above->bytes * pow((double)below->bytes / (double)above->bytes, t));
}

void fp_calibrate_cache_levels(const fp_calibrate_point *sweep, size_t n, const uint64_t reported[FP_CALIBRATE_LEVELS],
                               double memory_bw, fp_calibrate_point out[FP_CALIBRATE_LEVELS])
{
    memset(out, 0, sizeof(fp_calibrate_point) * FP_CALIBRATE_LEVELS);
    g_autofree double *inside = g_new(double, n + 1);
    uint64_t prev = 0;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++) {
        if (reported[i] <= prev)
            continue;
        uint64_t cap = level_capacity(sweep, n, reported[i], prev, memory_bw);
        if (cap <= prev)
            continue;
        /* the level's bandwidth: median of the points well inside it, (2 prev, cap / 2], else the
         * largest point inside it at all */
        size_t m = 0;
        const fp_calibrate_point *largest = NULL; /* the sweep is in ascending order */
        for (size_t k = 0; k < n; k++) {
            if (sweep[k].bytes > prev && sweep[k].bytes <= cap)
                largest = &sweep[k];
            if (sweep[k].bytes > 2 * prev && sweep[k].bytes * 2 <= cap)
                inside[m++] = sweep[k].bandwidth;
        }
        if (m == 0 && !largest)
            continue;
        if (m == 0)
            inside[m++] = largest->bandwidth;
        out[i] = (fp_calibrate_point){cap, fp_fit_median(inside, m)};
        prev = cap;
    }
    double outer = memory_bw; /* outermost first: each level must beat the one outside it */
    for (int i = FP_CALIBRATE_LEVELS - 1; i >= 0; i--) {
        if (!out[i].bytes)
            continue;
        if (out[i].bandwidth < LEVEL_DISTINCT * outer)
            out[i] = (fp_calibrate_point){0, 0};
        else
            outer = out[i].bandwidth;
    }
}

double fp_calibrate_last_from(const fp_calibrate_point *sweep, size_t n,
                              const fp_calibrate_point levels[FP_CALIBRATE_LEVELS], double memory_bw)
{
    const fp_calibrate_point *last = NULL;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        if (levels[i].bytes)
            last = &levels[i];
    if (!last || !(memory_bw > 0) || !(last->bandwidth > memory_bw))
        return 0;
    double from[FP_CALIBRATE_SWEEP_MAX];
    size_t m = 0;
    for (size_t k = 0; k < n && m < G_N_ELEMENTS(from); k++) {
        double x = (double)sweep[k].bytes / (double)last->bytes;
        double f = lost_share(sweep[k].bandwidth, last->bandwidth, memory_bw);
        if (x > 0.5 && x <= 2 && f > LOST_SETTLED && f < 1 - LOST_SETTLED)
            from[m++] = x - f;
    }
    return m ? MAX(fp_fit_median(from, m), LOST_FROM_MIN) : 0;
}

/* The triad's bandwidth at working set ws (bytes over all threads) into *bw. */
static bool sweep_point(const fp_calibrate_phase_pos *sp, const fp_calibrate_kernel_info *ki, int threads, uint64_t ws,
                        const char *what, double *bw, GError **error)
{
    size_t n = fp_calibrate_triad_elements(ws, threads);
    size_t reps = (size_t)MAX(SWEEP_UNIT_BYTES / (24.0 * (double)n), 1.0);
    return fp_calibrate_phase_run(sp, FP_CALIBRATE_WORK_TRIAD, ki, threads, n, reps, what, bw, error);
}

void fp_calibrate_raise_triad(fp_calibrate_result *r, int threads)
{
    for (size_t k = 0; k < r->n_sweep; k++)
        if (r->sweep[k].bytes >= r->triad_bytes)
            r->triad = MAX(r->triad, r->sweep[k].bandwidth);
    if (threads == 1)
        r->triad_1t = r->triad;
}

bool fp_calibrate_cache_sweep(const fp_calibrate_phase_pos *pos, const fp_calibrate_kernel_info *ki, int threads,
                              fp_calibrate_result *r, const char *what, GError **error)
{
    const fp_calibrate_opts *o = pos->o;
    fp_calibrate_opts sub = *o;
    sub.progress = NULL;
    sub.seconds = MAX(o->seconds / SWEEP_SHARE, 1e-3);
    fp_calibrate_phase_pos sp = {&sub, pos->index, pos->count};
    fp_calibrate_reported_caches(threads, r->cache_reported);
    uint64_t top = 0;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        top = MAX(top, r->cache_reported[i]);
    top = CLAMP(top ? 2 * top : 64 * FP_CALIBRATE_MIB, SWEEP_MIN, SWEEP_MAX);
    int npoints = 0, at_memory = 0, done = 0;
    for (uint64_t ws = SWEEP_MIN; ws <= top; ws *= 2)
        npoints++;
    npoints *= SWEEP_PASSES;
    /* the first pass picks the working sets (until two stream at memory speed), the others repeat them */
    for (uint64_t ws = SWEEP_MIN; ws <= top && r->n_sweep < FP_CALIBRATE_SWEEP_MAX && at_memory < 2; ws *= 2) {
        if (o->progress)
            o->progress(pos->index, pos->count, what, (double)done++ / npoints, -1, o->user);
        size_t n = fp_calibrate_triad_elements(ws, threads);
        double bw = 0;
        if (!sweep_point(&sp, ki, threads, ws, what, &bw, error))
            return false;
        r->sweep[r->n_sweep++] = (fp_calibrate_point){(uint64_t)(24 * n) * (uint64_t)threads, bw};
        at_memory = bw < LEVEL_OVER_MEMORY * r->triad ? at_memory + 1 : 0;
    }
    for (int pass = 1; pass < SWEEP_PASSES; pass++) {
        for (size_t k = 0; k < r->n_sweep; k++) {
            if (o->progress)
                o->progress(pos->index, pos->count, what, (double)done++ / npoints, -1, o->user);
            double bw = 0;
            if (!sweep_point(&sp, ki, threads, SWEEP_MIN << k, what, &bw, error))
                return false;
            r->sweep[k].bandwidth = MAX(r->sweep[k].bandwidth, bw);
        }
    }
    fp_calibrate_raise_triad(r, threads);
    fp_calibrate_cache_levels(r->sweep, r->n_sweep, r->cache_reported, r->triad, r->cache);
    r->last_from = fp_calibrate_last_from(r->sweep, r->n_sweep, r->cache, r->triad);
    int levels = 0;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        levels += r->cache[i].bytes > 0;
    if (o->progress)
        o->progress(pos->index, pos->count, what, 1.0, levels, o->user);
    return true;
}
