/* calibrate_internal.h - what the files of `fuseplan calibrate`'s measurements share, private to
 * calibration/: the SGEMM's micro-kernels and packing (calibrate_sgemm.c), a timed phase on N
 * threads (calibrate.c) and the cache sweep made of such phases (calibrate_cache.c). */
#ifndef FP_CALIBRATE_INTERNAL_H
#define FP_CALIBRATE_INTERNAL_H

#include "calibrate.h"

#define FP_CALIBRATE_MIB ((uint64_t)1 << 20)

/* ---------------------------------------------------------------- SGEMM (calibrate_sgemm.c) */

/* C[mr x nr] += Ap (kc x MR, k-major) * Bp (kc x NR, k-major) for one MR x NR tile; mr, nr: the
 * part of the tile inside C. */
typedef void (*fp_calibrate_ukernel_fn)(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr,
                                        size_t nr);

/* A micro-kernel: its name, its tile (MR x NR) and its code (NULL where not built). */
typedef struct {
    const char *name;
    size_t mr, nr;
    fp_calibrate_ukernel_fn fn;
} fp_calibrate_kernel_info;

/* The micro-kernel of k (below FP_CALIBRATE_KERNEL_COUNT). */
const fp_calibrate_kernel_info *fp_calibrate_sgemm_kernel(fp_calibrate_kernel k);

/* n bytes aligned for the kernels' vector loads (64), released with free(); NULL when out of
 * memory. */
void *fp_calibrate_alloc(size_t n);

/* The packing buffers of an SGEMM. */
typedef struct {
    float *ap, *bp; /* packed blocks of A (MC x KC) and B (KC x NC) */
} fp_calibrate_sgemm_ws;

/* Packing buffers for an m x n x k product with kernel ki; false when out of memory (nothing
 * held). */
bool fp_calibrate_sgemm_ws_init(fp_calibrate_sgemm_ws *ws, const fp_calibrate_kernel_info *ki, size_t m, size_t n,
                                size_t k);
void fp_calibrate_sgemm_ws_clear(fp_calibrate_sgemm_ws *ws);
/* fp_calibrate_sgemm with kernel ki and the buffers ws made for a product at least this big. */
void fp_calibrate_sgemm_blocked(const fp_calibrate_kernel_info *ki, fp_calibrate_sgemm_ws *ws, size_t m, size_t n,
                                size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c, size_t ldc);

/* ---------------------------------------------------------------- phases (calibrate.c) */

typedef enum { FP_CALIBRATE_WORK_SGEMM, FP_CALIBRATE_WORK_TRIAD } fp_calibrate_work;

/* Where a phase stands among the run's phases, for the progress callback of o. */
typedef struct {
    const fp_calibrate_opts *o;
    int index, count;
} fp_calibrate_phase_pos;

/* Runs one phase of `kind` on `threads` workers (the triad over triad_n elements per array per
 * thread, reps passes per unit of work); *rate = the best round's work per second. */
bool fp_calibrate_phase_run(const fp_calibrate_phase_pos *pos, fp_calibrate_work kind,
                            const fp_calibrate_kernel_info *ki, int threads, size_t triad_n, size_t reps,
                            const char *what, double *rate, GError **error);
/* Elements per triad array per thread: total/(3 arrays * 8 bytes * threads), a multiple of 8. */
size_t fp_calibrate_triad_elements(uint64_t total, int threads);

/* ---------------------------------------------------------------- cache sweep (calibrate_cache.c) */

/* Triad on `threads` threads at working sets from 16 KiB doubling up to twice the largest reported
 * cache (or until two points in a row stream at memory speed), into r->sweep, in three passes, a
 * working set's best pass counting (a level's size is where its bandwidth falls off: one slow point
 * on a shared machine would move it); then the levels (r->cache_reported, r->cache). r->triad must
 * hold the memory bandwidth. */
bool fp_calibrate_cache_sweep(const fp_calibrate_phase_pos *pos, const fp_calibrate_kernel_info *ki, int threads,
                              fp_calibrate_result *r, const char *what, GError **error);

#endif
