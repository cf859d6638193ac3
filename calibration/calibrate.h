/* calibrate.h - measures this machine for a device profile: fp32 FLOP/s with a cache-blocked
 * SGEMM (AVX-512F, AVX2+FMA or portable micro-kernel, chosen at run time) and memory bandwidth
 * with the STREAM triad, each on one thread and on N threads; then the triad over working sets from
 * 16 KiB up (the cache sweep), from which the cache levels of a cache-aware roofline are derived.
 * Used by `fuseplan calibrate`; nothing here prints (progress goes through a callback).
 */
#ifndef FP_CALIBRATE_H
#define FP_CALIBRATE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FP_CALIBRATE_ERROR (fp_calibrate_error_quark())
GQuark fp_calibrate_error_quark(void);
typedef enum { FP_CALIBRATE_ERROR_UNSUPPORTED, FP_CALIBRATE_ERROR_RESOURCES } fp_calibrate_error_code;

typedef enum {
    FP_CALIBRATE_KERNEL_AUTO,     /* the fastest one this CPU supports */
    FP_CALIBRATE_KERNEL_PORTABLE, /* GCC vector extensions, 4x8 tile: any CPU */
    FP_CALIBRATE_KERNEL_AVX2,     /* AVX2 + FMA, 6x16 tile */
    FP_CALIBRATE_KERNEL_AVX512,   /* AVX-512F, 6x32 tile */
    FP_CALIBRATE_KERNEL_COUNT
} fp_calibrate_kernel;

/* "auto", "portable", "avx2-fma", "avx512f". */
const char *fp_calibrate_kernel_name(fp_calibrate_kernel k);
/* Kernel for a name; FP_CALIBRATE_KERNEL_COUNT when unknown. */
fp_calibrate_kernel fp_calibrate_kernel_from_name(const char *name);
/* True when this CPU (and OS) can run kernel k; AUTO and PORTABLE always can. */
bool fp_calibrate_kernel_supported(fp_calibrate_kernel k);
/* The fastest supported kernel (never AUTO). */
fp_calibrate_kernel fp_calibrate_kernel_best(void);

/* C[m x n] += A[m x k] * B[k x n]; row-major with leading dimensions lda, ldb, ldc. `kern` must be
 * supported (AUTO picks the best). Allocates its packing buffers per call; aborts only when that
 * small allocation fails. */
void fp_calibrate_sgemm(fp_calibrate_kernel kern, size_t m, size_t n, size_t k, const float *a, size_t lda,
                        const float *b, size_t ldb, float *c, size_t ldc);

/* Progress of phase `phase` (1-based) of `nphases`: fraction in [0, 1] while it runs, then once
 * more with fraction 1 and `result` (FLOP/s or bytes/s; for the cache sweep, the number of cache
 * levels found; < 0 while running). */
typedef void (*fp_calibrate_progress_fn)(int phase, int nphases, const char *what, double fraction, double result,
                                         void *user);

typedef struct {
    double seconds;                    /* measuring time per phase, > 0 */
    int threads;                       /* >= 1; the N-thread phases are skipped when 1 */
    uint64_t triad_bytes;              /* triad working set (3 arrays, all threads); 0: 4x the last-level
                                 * cache, clamped to [64 MiB, 512 MiB] */
    fp_calibrate_kernel kernel;        /* AUTO: fp_calibrate_kernel_best() */
    fp_calibrate_progress_fn progress; /* may be NULL */
    void *user;
    bool no_cache; /* skip the cache sweep */
} fp_calibrate_opts;

#define FP_CALIBRATE_LEVELS 3 /* L1d, L2, L3 */
#define FP_CALIBRATE_SWEEP_MAX 24

typedef struct {
    uint64_t bytes;   /* working set (three arrays, all threads together); for a level, its capacity */
    double bandwidth; /* triad bytes/s (STREAM convention) */
} fp_calibrate_point;

typedef struct {
    fp_calibrate_kernel kernel; /* the kernel used */
    int threads;
    double flops_1t, flops;                           /* SGEMM FLOP/s: one thread, all threads */
    double triad_1t, triad;                           /* triad bytes/s (STREAM convention: 24 bytes per element) */
    uint64_t triad_bytes;                             /* working set of the triad arrays, all threads together */
    fp_calibrate_point sweep[FP_CALIBRATE_SWEEP_MAX]; /* the cache sweep on `threads` threads */
    size_t n_sweep;
    uint64_t cache_reported[FP_CALIBRATE_LEVELS];  /* L1d, L2, L3 as the OS reports them (0: unknown) */
    fp_calibrate_point cache[FP_CALIBRATE_LEVELS]; /* the levels derived (bytes 0: none) */
    double last_from; /* where a footprint starts to lose the last level (fp_calibrate_last_from); 0: not seen */
} fp_calibrate_result;

/* Runs the phases. Fails (nothing measured) when the kernel is unsupported or memory or threads
 * cannot be had. Each thread does at least one unit of work per phase, so a tiny `seconds`
 * still gives positive numbers. */
bool fp_calibrate_run(const fp_calibrate_opts *opts, fp_calibrate_result *r, GError **error);

/* Cache sizes the OS reports (sysconf) for `threads` threads: L1d and L2 are private to a core and
 * count once per thread, L3 once; 0 when unknown. */
void fp_calibrate_reported_caches(int threads, uint64_t out[FP_CALIBRATE_LEVELS]);
/* Cache levels from a sweep (ascending working sets) and the reported sizes. Level i's capacity is
 * its reported size when half of it still streams at half the level's best point or more, at most a
 * quarter of the way (in time per byte) from that point to memory_bw; else (a VM reporting its
 * host's cache) the working set at which the sweep falls through the geometric mean of that point
 * and memory_bw (interpolated between the points on either side, geometric in size). Its
 * bandwidth is the median of the points in (2 x the previous level's capacity, capacity / 2]
 * (else the largest point inside it). A level not 10% faster than the next one out (or memory) is
 * dropped. Levels without a reported size or any sweep point inside come out with bytes 0. Pure:
 * for tests. */
void fp_calibrate_cache_levels(const fp_calibrate_point *sweep, size_t n, const uint64_t reported[FP_CALIBRATE_LEVELS],
                               double memory_bw, fp_calibrate_point out[FP_CALIBRATE_LEVELS]);
/* The share of the last of `levels` (fp_calibrate_cache_levels') capacity C at which a cyclic
 * footprint starts to lose it, for a loss rising linearly to all one capacity further
 * (fp_roofline_lost): each sweep point of more than C / 2 and at most 2C whose time per byte lies
 * between the level's and memory's (a share f of the way from the one to the other, 0.05 < f <
 * 0.95) says it starts at its working set / C - f; the median of those, at least 0.25. 0 when no
 * point says (no level, or the sweep steps over the ramp). Pure: for tests. */
double fp_calibrate_last_from(const fp_calibrate_point *sweep, size_t n,
                              const fp_calibrate_point levels[FP_CALIBRATE_LEVELS], double memory_bw);
/* Raises r's triad (r->triad_1t too when threads is 1) to the fastest sweep point at the triad's
 * working set (r->triad_bytes) or beyond: the same measurement, repeated each pass, and a
 * neighbour's burst only slows one (on a shared VM one triad measured 22.6 GB/s where the
 * sweep's 512 MiB point had 35.6). Pure: for tests. */
void fp_calibrate_raise_triad(fp_calibrate_result *r, int threads);

/* FLOP/s on one thread of fuseplan's kernels for the convolution classes ONNX Runtime's CPU EP runs
 * (calibration/calibrate_conv.c): NCHW 3x3 expand-then-GEMM, NCHW depthwise 3x3 (per channel), and the
 * direct NCHWc 3x3 and depthwise 3x3 kernels in blocks of the kernel ISA's vector width. */
typedef struct {
    double conv, grouped_conv, nchwc_conv, nchwc_depthwise; /* FLOP/s on the big layers */
    double conv_small, nchwc_conv_small;                    /* FLOP/s on the small 3x3 layer (the saturation) */
    uint64_t conv_flops, small_flops, depthwise_flops;      /* of one run of each layer */
    uint64_t conv_operands, small_operands;                 /* elements of the 3x3 layers' GEMMs (M K + K N + M N, as
                                               the cost model counts them) */
} fp_calibrate_conv_rates;

/* Times each class's kernel on its layers for seconds / 6 each (its best repetition after a
 * warm-up) with the SGEMM and vector width of `kern` (AUTO: the best). False, nothing measured,
 * when memory cannot be had. */
bool fp_calibrate_conv(fp_calibrate_kernel kern, double seconds, fp_calibrate_conv_rates *out, GError **error);

/* The efficiency *e (at most 1) and [saturation] half work *h (FLOP; 0: none) of a convolution
 * class from its rates on a big and a small layer, for the cost model's e / (1 + cbrt(h / 2) s)
 * (passes/roofline.c), s = operands / (1.5 FLOP) of each layer; peak: the SGEMM's FLOP/s. With
 * y = peak / rate each, the line y e = 1 + cbrt(h / 2) s through both when it has 0 < e <= 1; when
 * the small layer is no slower per FLOP: e from the big one, no saturation; otherwise (a line that
 * asks e > 1, or the small layer slower than any e explains): e = 1 and the h whose estimates of
 * both layers are off by the same factor, one too fast and one too slow. */
void fp_calibrate_saturation_fit(double peak, double rate_big, double s_big, double rate_small, double s_small,
                                 double *e, double *h);

/* The threads ONNX Runtime's CPU EP runs with by default: the physical cores (distinct core and
 * package ids of the online CPUs in sysfs), else the logical CPUs. */
int fp_calibrate_runtime_threads(void);

/* "model name" from /proc/cpuinfo, or "unknown CPU". Caller frees. */
char *fp_calibrate_cpu_name(void);
/* Physical memory in bytes (0 when unknown). */
uint64_t fp_calibrate_memory_bytes(void);

#endif
