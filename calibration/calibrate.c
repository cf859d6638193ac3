/* calibrate.c - SGEMM and STREAM-triad measurements for `fuseplan calibrate` (see calibrate.h).
 *
 * SGEMM uses the classic five-loop blocking (Goto and van de Geijn; BLIS): B is packed into
 * KC x NC blocks of NR-column panels, A into MC x KC blocks of MR-row panels, and an MR x NR
 * micro-kernel keeps its tile of C in registers for a whole KC-long rank-k update. The
 * micro-kernel is picked at run time (CPUID, cpu_has); the AVX2 and AVX-512 ones are
 * compiled with __attribute__((target)) so the binary itself needs only baseline x86-64.
 *
 * Each phase starts N worker threads; each allocates and first-touches its own buffers and does
 * one unit of work to warm up. Then they run rounds, each thread one unit between two barriers,
 * until the phase's time is up; the rate of a phase is that of its best round (STREAM reports
 * the best of its repetitions too). Every phase has at least one round.
 */
#include "calibrate.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define FP_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

G_DEFINE_QUARK(fp-calibrate-error-quark, fp_calibrate_error)

#define KC 256        /* depth of one packed block: A panel (MR x KC) + B panel (KC x NR) stay in L1/L2 */
#define MC_PANELS 16  /* MC = MR * MC_PANELS rows of A per packed block (L2) */
#define NC 4096       /* columns of B per packed block (L3) */
#define BUF_ALIGN 64
#define GEMM_N 576    /* square SGEMM per unit of work: a multiple of every MR and NR */
#define MIB ((uint64_t)1 << 20)

typedef void (*ukernel_fn)(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr);

typedef struct {
    const char *name;
    size_t mr, nr;
    ukernel_fn fn;
} kernel_info;

/* C[mr x nr] += T[mr x nr] (row stride ldt): the edge tiles of every micro-kernel. */
static void tile_add(float *c, size_t ldc, const float *t, size_t ldt, size_t mr, size_t nr)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] += t[i * ldt + j];
}

/* ---- micro-kernels: C[mr x nr] += Ap (kc x MR, k-major) * Bp (kc x NR, k-major) ---- */

typedef float v4f __attribute__((vector_size(16), __may_alias__));

/* 4x8 tile with 16-byte GCC vectors: SSE2 on x86-64, NEON or scalar code elsewhere. */
static void ukernel_portable(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr)
{
    v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
    for (size_t p = 0; p < kc; p++, a += 4, b += 8) {
        v4f b0 = *(const v4f *)b, b1 = *(const v4f *)(b + 4);
#define P_ROW(i)                                      \
    {                                                 \
        v4f ai = {a[i], a[i], a[i], a[i]};            \
        c##i##0 += ai * b0;                           \
        c##i##1 += ai * b1;                           \
    }
        P_ROW(0) P_ROW(1) P_ROW(2) P_ROW(3)
#undef P_ROW
    }
    v4f t[8] = {c00, c01, c10, c11, c20, c21, c30, c31};
    tile_add(c, ldc, (const float *)t, 8, mr, nr);
}

#ifdef FP_X86
/* 6x16 tile: 12 ymm accumulators, 2 loads of B and 6 broadcasts of A per 12 FMAs. */
__attribute__((target("avx2,fma"))) static void ukernel_avx2(size_t kc, const float *a, const float *b, float *c,
                                                             size_t ldc, size_t mr, size_t nr)
{
    __m256 z = _mm256_setzero_ps();
    __m256 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    for (size_t p = 0; p < kc; p++, a += 6, b += 16) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), ai;
#define A2_ROW(i)                                     \
    ai = _mm256_broadcast_ss(a + i);                  \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);       \
    c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);
        A2_ROW(0) A2_ROW(1) A2_ROW(2) A2_ROW(3) A2_ROW(4) A2_ROW(5)
#undef A2_ROW
    }
    if (mr == 6 && nr == 16) {
#define A2_ST(i)                                                                           \
    _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc), c##i##0));   \
    _mm256_storeu_ps(c + i * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc + 8), c##i##1));
        A2_ST(0) A2_ST(1) A2_ST(2) A2_ST(3) A2_ST(4) A2_ST(5)
#undef A2_ST
        return;
    }
    float t[6 * 16] __attribute__((aligned(32)));
    __m256 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    for (int i = 0; i < 12; i++)
        _mm256_store_ps(t + 8 * i, acc[i]);
    tile_add(c, ldc, t, 16, mr, nr);
}

/* 6x32 tile: 12 zmm accumulators. */
__attribute__((target("avx512f"))) static void ukernel_avx512(size_t kc, const float *a, const float *b, float *c,
                                                              size_t ldc, size_t mr, size_t nr)
{
    __m512 z = _mm512_setzero_ps();
    __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    for (size_t p = 0; p < kc; p++, a += 6, b += 32) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), ai;
#define A5_ROW(i)                                     \
    ai = _mm512_set1_ps(a[i]);                        \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);       \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
        A5_ROW(0) A5_ROW(1) A5_ROW(2) A5_ROW(3) A5_ROW(4) A5_ROW(5)
#undef A5_ROW
    }
    if (mr == 6 && nr == 32) {
#define A5_ST(i)                                                                             \
    _mm512_storeu_ps(c + i * ldc, _mm512_add_ps(_mm512_loadu_ps(c + i * ldc), c##i##0));     \
    _mm512_storeu_ps(c + i * ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + i * ldc + 16), c##i##1));
        A5_ST(0) A5_ST(1) A5_ST(2) A5_ST(3) A5_ST(4) A5_ST(5)
#undef A5_ST
        return;
    }
    float t[6 * 32] __attribute__((aligned(64)));
    __m512 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    for (int i = 0; i < 12; i++)
        _mm512_store_ps(t + 16 * i, acc[i]);
    tile_add(c, ldc, t, 32, mr, nr);
}
#endif

static const kernel_info kernels[FP_CALIBRATE_KERNEL_COUNT] = {
    [FP_CALIBRATE_KERNEL_AUTO] = {"auto", 0, 0, NULL},
    [FP_CALIBRATE_KERNEL_PORTABLE] = {"portable", 4, 8, ukernel_portable},
#ifdef FP_X86
    [FP_CALIBRATE_KERNEL_AVX2] = {"avx2-fma", 6, 16, ukernel_avx2},
    [FP_CALIBRATE_KERNEL_AVX512] = {"avx512f", 6, 32, ukernel_avx512},
#else
    [FP_CALIBRATE_KERNEL_AVX2] = {"avx2-fma", 6, 16, NULL},
    [FP_CALIBRATE_KERNEL_AVX512] = {"avx512f", 6, 32, NULL},
#endif
};

const char *fp_calibrate_kernel_name(fp_calibrate_kernel k)
{
    return (unsigned)k < FP_CALIBRATE_KERNEL_COUNT ? kernels[k].name : "unknown";
}

fp_calibrate_kernel fp_calibrate_kernel_from_name(const char *name)
{
    for (int k = 0; k < FP_CALIBRATE_KERNEL_COUNT; k++)
        if (g_strcmp0(name, kernels[k].name) == 0)
            return (fp_calibrate_kernel)k;
    return FP_CALIBRATE_KERNEL_COUNT;
}

#ifdef FP_X86
/* CPUID and XGETBV by hand, asked only when calibrating: __builtin_cpu_supports links libgcc's
 * constructor, which runs CPUID at every start of the program (a trap to the hypervisor each in a
 * VM, ~0.2 ms of every `fuseplan` run there). `ymm`: the OS saves the AVX state (XCR0 bits 1-2);
 * `zmm`: also the AVX-512 state (bits 5-7). */
static bool os_saves(bool zmm)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    unsigned need = zmm ? 0xe6u : 0x6u;
    return (lo & need) == need;
}

static bool cpu_has(bool avx512)
{
    unsigned a, b, c, d;
    if (!os_saves(avx512))
        return false;
    if (avx512)
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F);
    unsigned c1 = 0;
    if (!__get_cpuid(1, &a, &b, &c1, &d) || !(c1 & bit_FMA))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}
#endif

bool fp_calibrate_kernel_supported(fp_calibrate_kernel k)
{
    switch (k) {
    case FP_CALIBRATE_KERNEL_AUTO:
    case FP_CALIBRATE_KERNEL_PORTABLE:
        return true;
#ifdef FP_X86
    case FP_CALIBRATE_KERNEL_AVX2:
        return cpu_has(false);
    case FP_CALIBRATE_KERNEL_AVX512:
        return cpu_has(true);
#endif
    default:
        return false;
    }
}

fp_calibrate_kernel fp_calibrate_kernel_best(void)
{
    if (fp_calibrate_kernel_supported(FP_CALIBRATE_KERNEL_AVX512))
        return FP_CALIBRATE_KERNEL_AVX512;
    if (fp_calibrate_kernel_supported(FP_CALIBRATE_KERNEL_AVX2))
        return FP_CALIBRATE_KERNEL_AVX2;
    return FP_CALIBRATE_KERNEL_PORTABLE;
}

/* ---- blocked SGEMM ---- */

static void *aligned_alloc_bytes(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, BUF_ALIGN, n ? n : BUF_ALIGN) == 0 ? p : NULL;
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

typedef struct {
    float *ap, *bp; /* packed blocks of A (MC x KC) and B (KC x NC) */
} sgemm_ws;

static void ws_clear(sgemm_ws *ws)
{
    free(ws->ap);
    free(ws->bp);
    ws->ap = ws->bp = NULL;
}

/* Packing buffers for an m x n x k product with kernel ki; false when out of memory. */
static bool ws_init(sgemm_ws *ws, const kernel_info *ki, size_t m, size_t n, size_t k)
{
    size_t kc = MIN(k, (size_t)KC);
    size_t mc = MIN(round_up(m, ki->mr), ki->mr * MC_PANELS);
    size_t nc = MIN(round_up(n, ki->nr), NC / ki->nr * ki->nr);
    ws->ap = aligned_alloc_bytes(mc * kc * sizeof(float));
    ws->bp = aligned_alloc_bytes(nc * kc * sizeof(float));
    if (ws->ap && ws->bp)
        return true;
    ws_clear(ws);
    return false;
}

/* Packs A[mc x kc] into MR-row panels, each kc x MR (k-major), rows past mc zero. */
static void pack_a(size_t mc, size_t kc, const float *a, size_t lda, size_t MR, float *ap)
{
    for (size_t i0 = 0; i0 < mc; i0 += MR) {
        size_t mr = MIN(MR, mc - i0);
        for (size_t p = 0; p < kc; p++, ap += MR) {
            for (size_t i = 0; i < mr; i++)
                ap[i] = a[(i0 + i) * lda + p];
            for (size_t i = mr; i < MR; i++)
                ap[i] = 0;
        }
    }
}

/* Packs B[kc x nc] into NR-column panels, each kc x NR (k-major), columns past nc zero. */
static void pack_b(size_t kc, size_t nc, const float *b, size_t ldb, size_t NR, float *bp)
{
    for (size_t j0 = 0; j0 < nc; j0 += NR) {
        size_t nr = MIN(NR, nc - j0);
        for (size_t p = 0; p < kc; p++, bp += NR) {
            memcpy(bp, b + p * ldb + j0, nr * sizeof(float));
            for (size_t j = nr; j < NR; j++)
                bp[j] = 0;
        }
    }
}

static void sgemm_blocked(const kernel_info *ki, sgemm_ws *ws, size_t m, size_t n, size_t k, const float *a,
                          size_t lda, const float *b, size_t ldb, float *c, size_t ldc)
{
    size_t MR = ki->mr, NR = ki->nr, MC = MR * MC_PANELS, NCB = NC / NR * NR;
    for (size_t jc = 0; jc < n; jc += NCB) {
        size_t nc = MIN(NCB, n - jc);
        for (size_t pc = 0; pc < k; pc += KC) {
            size_t kc = MIN((size_t)KC, k - pc);
            pack_b(kc, nc, b + pc * ldb + jc, ldb, NR, ws->bp);
            for (size_t ic = 0; ic < m; ic += MC) {
                size_t mc = MIN(MC, m - ic);
                pack_a(mc, kc, a + ic * lda + pc, lda, MR, ws->ap);
                for (size_t jr = 0; jr < nc; jr += NR)
                    for (size_t ir = 0; ir < mc; ir += MR)
                        ki->fn(kc, ws->ap + ir * kc, ws->bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                               MIN(MR, mc - ir), MIN(NR, nc - jr));
            }
        }
    }
}

void fp_calibrate_sgemm(fp_calibrate_kernel kern, size_t m, size_t n, size_t k, const float *a, size_t lda,
                        const float *b, size_t ldb, float *c, size_t ldc)
{
    if (kern == FP_CALIBRATE_KERNEL_AUTO)
        kern = fp_calibrate_kernel_best();
    g_assert((unsigned)kern < FP_CALIBRATE_KERNEL_COUNT && fp_calibrate_kernel_supported(kern));
    if (!m || !n || !k)
        return;
    sgemm_ws ws = {NULL, NULL};
    if (!ws_init(&ws, &kernels[kern], m, n, k))
        g_error("fp_calibrate_sgemm: out of memory for packing buffers");
    sgemm_blocked(&kernels[kern], &ws, m, n, k, a, lda, b, ldb, c, ldc);
    ws_clear(&ws);
}

/* ---- STREAM triad ---- */

typedef double v2d __attribute__((vector_size(16), __may_alias__));

/* x = y + s * z over n elements (n a multiple of 4, arrays 16-byte aligned). */
static void triad(double *x, const double *y, const double *z, double s, size_t n)
{
    v2d sv = {s, s};
    for (size_t i = 0; i < n; i += 4) {
        *(v2d *)(x + i) = *(const v2d *)(y + i) + sv * *(const v2d *)(z + i);
        *(v2d *)(x + i + 2) = *(const v2d *)(y + i + 2) + sv * *(const v2d *)(z + i + 2);
    }
}

/* 4x the last-level cache (STREAM's rule for arrays that do not fit), within [64, 512] MiB. */
static uint64_t default_triad_bytes(void)
{
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0)
        llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    uint64_t w = llc > 0 ? 4 * (uint64_t)llc : 128 * MIB;
    return CLAMP(w, 64 * MIB, 512 * MIB);
}

/* ---- phases ---- */

typedef enum { WORK_SGEMM, WORK_TRIAD } work_kind;

typedef struct {
    work_kind kind;
    const kernel_info *ki;
    size_t triad_n; /* elements per triad array per thread */
    size_t reps;    /* triad passes per unit of work (small arrays: enough to time) */
    GMutex lock;
    GCond cond;
    int ready;      /* workers done with set-up and warm-up */
    int go;         /* set by the main thread: start the rounds */
    pthread_barrier_t barrier;
    gint stop;      /* atomic; written by worker 0 (or the main thread before go) */
    gint64 deadline_us;
    double round_work; /* work of one round, all threads */
    double best;       /* best round rate, written by worker 0 */
} phase;

typedef struct {
    phase *ph;
    int id;
    float *a, *b, *c;
    sgemm_ws ws;
    double *x, *y, *z;
    double s;
    bool ok; /* buffers allocated */
} worker;

static bool worker_setup(worker *w)
{
    const phase *ph = w->ph;
    if (ph->kind == WORK_SGEMM) {
        size_t nn = (size_t)GEMM_N * GEMM_N;
        w->a = aligned_alloc_bytes(nn * sizeof(float));
        w->b = aligned_alloc_bytes(nn * sizeof(float));
        w->c = aligned_alloc_bytes(nn * sizeof(float));
        if (!w->a || !w->b || !w->c || !ws_init(&w->ws, ph->ki, GEMM_N, GEMM_N, GEMM_N))
            return false;
        for (size_t i = 0; i < nn; i++) {
            w->a[i] = (float)(i % 7 + 1) * 0.01f;
            w->b[i] = (float)(i % 5 + 1) * 0.01f;
            w->c[i] = 0;
        }
        return true;
    }
    size_t n = ph->triad_n;
    w->x = aligned_alloc_bytes(n * sizeof(double));
    w->y = aligned_alloc_bytes(n * sizeof(double));
    w->z = aligned_alloc_bytes(n * sizeof(double));
    if (!w->x || !w->y || !w->z)
        return false;
    for (size_t i = 0; i < n; i++) {
        w->x[i] = 0;
        w->y[i] = 1;
        w->z[i] = 2;
    }
    w->s = 3;
    return true;
}

static void worker_free(worker *w)
{
    free(w->a);
    free(w->b);
    free(w->c);
    ws_clear(&w->ws);
    free(w->x);
    free(w->y);
    free(w->z);
}

/* One unit of work; returns the FLOPs or bytes it counts for. */
static double worker_unit(worker *w)
{
    if (w->ph->kind == WORK_SGEMM) {
        sgemm_blocked(w->ph->ki, &w->ws, GEMM_N, GEMM_N, GEMM_N, w->a, GEMM_N, w->b, GEMM_N, w->c, GEMM_N);
        return 2.0 * GEMM_N * GEMM_N * GEMM_N;
    }
    for (size_t r = 0; r < w->ph->reps; r++) {
        w->s = -w->s; /* every pass stores new values: no pass is redundant */
        triad(w->x, w->y, w->z, w->s, w->ph->triad_n);
        __asm__ volatile("" ::: "memory"); /* each pass is a pass: the compiler must not merge them */
    }
    return 24.0 * (double)w->ph->triad_n * (double)w->ph->reps;
}

/* Set-up and warm-up, then rounds: every thread does one unit between two barriers, worker 0
 * times the round and keeps the best rate (STREAM's best-of-N). Every worker, set up or not,
 * takes part in the barriers until worker 0 (or the main thread, on failure) sets stop. */
static gpointer worker_main(gpointer data)
{
    worker *w = data;
    phase *ph = w->ph;
    bool ok = worker_setup(w);
    if (ok)
        worker_unit(w); /* warm-up: page faults, caches, clocks */
    g_mutex_lock(&ph->lock);
    w->ok = ok;
    ph->ready++;
    g_cond_broadcast(&ph->cond);
    while (!ph->go)
        g_cond_wait(&ph->cond, &ph->lock);
    g_mutex_unlock(&ph->lock);
    for (;;) {
        pthread_barrier_wait(&ph->barrier);
        if (g_atomic_int_get(&ph->stop))
            break;
        gint64 t0 = g_get_monotonic_time();
        worker_unit(w);
        pthread_barrier_wait(&ph->barrier);
        if (w->id == 0) {
            gint64 t1 = g_get_monotonic_time();
            ph->best = MAX(ph->best, ph->round_work / ((double)MAX(t1 - t0, 1) / 1e6));
            if (t1 >= ph->deadline_us)
                g_atomic_int_set(&ph->stop, 1);
        }
    }
    return NULL;
}

typedef struct {
    const fp_calibrate_opts *o;
    int index, count;
} phase_pos;

/* Runs one phase on `threads` workers; *rate = the best round's work per second. */
static bool run_phase(const phase_pos *pos, work_kind kind, const kernel_info *ki, int threads, size_t triad_n,
                      size_t reps, const char *what, double *rate, GError **error)
{
    const fp_calibrate_opts *o = pos->o;
    phase ph = {kind, ki, triad_n, MAX(reps, 1)};
    g_mutex_init(&ph.lock);
    g_cond_init(&ph.cond);
    worker *w = g_new0(worker, threads);
    GThread **th = g_new0(GThread *, threads);
    g_autoptr(GError) err = NULL;
    int started = 0;
    for (; started < threads; started++) {
        w[started].ph = &ph;
        w[started].id = started;
        th[started] = g_thread_try_new("fp-calibrate", worker_main, &w[started], &err);
        if (!th[started])
            break;
    }
    g_mutex_lock(&ph.lock);
    while (ph.ready < started)
        g_cond_wait(&ph.cond, &ph.lock);
    bool ok = started == threads;
    for (int i = 0; i < started; i++)
        ok = ok && w[i].ok;
    if (!ok)
        g_atomic_int_set(&ph.stop, 1);
    pthread_barrier_init(&ph.barrier, NULL, (unsigned)MAX(started, 1));
    ph.round_work = kind == WORK_SGEMM ? 2.0 * GEMM_N * GEMM_N * GEMM_N * threads
                                       : 24.0 * (double)triad_n * (double)ph.reps * threads;
    gint64 start = g_get_monotonic_time();
    ph.deadline_us = start + MAX((gint64)(o->seconds * 1e6), 1);
    ph.go = 1;
    g_cond_broadcast(&ph.cond);
    g_mutex_unlock(&ph.lock);

    for (gint64 now = start; ok && !g_atomic_int_get(&ph.stop); now = g_get_monotonic_time()) {
        if (o->progress)
            o->progress(pos->index, pos->count, what, MIN((double)(now - start) / (double)(ph.deadline_us - start), 1.0),
                        -1, o->user);
        g_usleep((gulong)CLAMP(ph.deadline_us - now, 1000, 100000));
    }
    for (int i = 0; i < started; i++) {
        g_thread_join(th[i]);
        worker_free(&w[i]);
    }
    pthread_barrier_destroy(&ph.barrier);
    g_free(th);
    g_free(w);
    g_mutex_clear(&ph.lock);
    g_cond_clear(&ph.cond);
    if (started < threads) {
        g_set_error(error, FP_CALIBRATE_ERROR, FP_CALIBRATE_ERROR_RESOURCES, "%s: cannot start thread %d: %s", what,
                    started + 1, err ? err->message : "unknown error");
        return false;
    }
    if (!ok) {
        g_set_error(error, FP_CALIBRATE_ERROR, FP_CALIBRATE_ERROR_RESOURCES, "%s: out of memory", what);
        return false;
    }
    *rate = ph.best;
    if (o->progress)
        o->progress(pos->index, pos->count, what, 1.0, *rate, o->user);
    return true;
}

/* Elements per triad array per thread: total/(3 arrays * 8 bytes * threads), a multiple of 8. */
static size_t triad_elements(uint64_t total, int threads)
{
    uint64_t n = total / (3 * sizeof(double) * (uint64_t)threads) / 8 * 8;
    return (size_t)MAX(n, 8);
}

/* ---- cache sweep ---- */

#define SWEEP_MIN ((uint64_t)16 << 10)   /* smallest working set of the sweep */
#define SWEEP_MAX ((uint64_t)512 << 20)  /* largest */
#define SWEEP_UNIT_BYTES (32.0 * MIB)     /* triad traffic per unit of work: small arrays repeat */
#define SWEEP_SHARE 8                     /* each point measures for --seconds / SWEEP_SHARE */
#define LEVEL_OVER_MEMORY 1.5             /* a working set streams from a cache above this x memory */
#define LEVEL_PLATEAU 0.5                 /* half a level's size still streams at this x its best */
#define LEVEL_DISTINCT 1.1                /* a level is kept when this much faster than the next */

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

static int point_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Capacity of a level reported as `size` after level `prev`: the size, when half of it still
 * streams at LEVEL_PLATEAU x the level's fastest point or more; else (a VM reporting its host's cache, a socket's
 * cache shared by many cores) the largest working set that streams above the geometric mean of the
 * level's fastest point and memory, where the sweep falls off. 0 when the sweep says nothing. */
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
    if (half && half->bandwidth >= LEVEL_PLATEAU * top)
        return size;
    uint64_t cap = 0;
    double edge = sqrt(top * memory_bw);
    for (size_t k = 0; k < n && sw[k].bytes <= size; k++)
        if (sw[k].bytes > prev && sw[k].bandwidth >= edge)
            cap = sw[k].bytes;
    return cap;
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
        qsort(inside, m, sizeof *inside, point_cmp);
        out[i] = (fp_calibrate_point){cap, m % 2 ? inside[m / 2] : (inside[m / 2 - 1] + inside[m / 2]) / 2};
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

/* Triad on `threads` threads at working sets from SWEEP_MIN doubling up to twice the largest
 * reported cache (or until two points in a row stream at memory speed); then the levels. */
static bool run_sweep(const phase_pos *pos, const kernel_info *ki, int threads, fp_calibrate_result *r,
                      const char *what, GError **error)
{
    const fp_calibrate_opts *o = pos->o;
    fp_calibrate_opts sub = *o;
    sub.progress = NULL;
    sub.seconds = MAX(o->seconds / SWEEP_SHARE, 1e-3);
    phase_pos sp = {&sub, pos->index, pos->count};
    fp_calibrate_reported_caches(threads, r->cache_reported);
    uint64_t top = 0;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        top = MAX(top, r->cache_reported[i]);
    top = CLAMP(top ? 2 * top : 64 * MIB, SWEEP_MIN, SWEEP_MAX);
    int npoints = 0, at_memory = 0;
    for (uint64_t ws = SWEEP_MIN; ws <= top; ws *= 2)
        npoints++;
    for (uint64_t ws = SWEEP_MIN; ws <= top && r->n_sweep < FP_CALIBRATE_SWEEP_MAX && at_memory < 2; ws *= 2) {
        if (o->progress)
            o->progress(pos->index, pos->count, what, (double)r->n_sweep / npoints, -1, o->user);
        size_t n = triad_elements(ws, threads);
        double bytes = 24.0 * (double)n;
        size_t reps = (size_t)MAX(SWEEP_UNIT_BYTES / bytes, 1.0);
        double bw = 0;
        if (!run_phase(&sp, WORK_TRIAD, ki, threads, n, reps, what, &bw, error))
            return false;
        r->sweep[r->n_sweep++] = (fp_calibrate_point){(uint64_t)bytes * (uint64_t)threads, bw};
        at_memory = bw < LEVEL_OVER_MEMORY * r->triad ? at_memory + 1 : 0;
    }
    fp_calibrate_cache_levels(r->sweep, r->n_sweep, r->cache_reported, r->triad, r->cache);
    int levels = 0;
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        levels += r->cache[i].bytes > 0;
    if (o->progress)
        o->progress(pos->index, pos->count, what, 1.0, levels, o->user);
    return true;
}

bool fp_calibrate_run(const fp_calibrate_opts *opts, fp_calibrate_result *r, GError **error)
{
    g_assert(opts->seconds > 0 && opts->threads >= 1);
    fp_calibrate_kernel k = opts->kernel == FP_CALIBRATE_KERNEL_AUTO ? fp_calibrate_kernel_best() : opts->kernel;
    if ((unsigned)k >= FP_CALIBRATE_KERNEL_COUNT || !fp_calibrate_kernel_supported(k)) {
        g_set_error(error, FP_CALIBRATE_ERROR, FP_CALIBRATE_ERROR_UNSUPPORTED,
                    "kernel '%s' is not supported by this CPU", fp_calibrate_kernel_name(k));
        return false;
    }
    memset(r, 0, sizeof *r);
    r->kernel = k;
    r->threads = opts->threads;
    uint64_t total = opts->triad_bytes ? opts->triad_bytes : default_triad_bytes();
    int n = opts->threads;
    phase_pos pos = {opts, 0, (n > 1 ? 4 : 2) + !opts->no_cache};
    g_autofree char *g1 = g_strdup_printf("sgemm fp32 (%s), 1 thread", kernels[k].name);
    g_autofree char *gn = g_strdup_printf("sgemm fp32 (%s), %d threads", kernels[k].name, n);
    g_autofree char *t1 = g_strdup("triad, 1 thread");
    g_autofree char *tn = g_strdup_printf("triad, %d threads", n);

    pos.index = 1;
    if (!run_phase(&pos, WORK_SGEMM, &kernels[k], 1, 0, 1, g1, &r->flops_1t, error))
        return false;
    r->flops = r->flops_1t;
    if (n > 1) {
        pos.index++;
        if (!run_phase(&pos, WORK_SGEMM, &kernels[k], n, 0, 1, gn, &r->flops, error))
            return false;
    }
    pos.index++;
    size_t n1 = triad_elements(total, 1);
    r->triad_bytes = 3 * sizeof(double) * (uint64_t)n1;
    if (!run_phase(&pos, WORK_TRIAD, &kernels[k], 1, n1, 1, t1, &r->triad_1t, error))
        return false;
    r->triad = r->triad_1t;
    if (n > 1) {
        pos.index++;
        if (!run_phase(&pos, WORK_TRIAD, &kernels[k], n, triad_elements(total, n), 1, tn, &r->triad, error))
            return false;
    }
    if (opts->no_cache)
        return true;
    pos.index++;
    g_autofree char *cs = g_strdup_printf("cache sweep (triad), %d thread%s", n, n > 1 ? "s" : "");
    return run_sweep(&pos, &kernels[k], n, r, cs, error);
}

char *fp_calibrate_cpu_name(void)
{
    g_autofree char *text = NULL;
    if (g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL)) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
            const char *colon = strchr(lines[i], ':');
            if (g_str_has_prefix(lines[i], "model name") && colon) {
                char *name = g_strstrip(g_strdup(colon + 1));
                if (*name)
                    return name;
                g_free(name);
            }
        }
    }
    return g_strdup("unknown CPU");
}

uint64_t fp_calibrate_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

int fp_calibrate_runtime_threads(void)
{
    int n = (int)g_get_num_processors();
    g_autoptr(GHashTable) cores = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int cpu = 0; cpu < 4096; cpu++) {
        g_autofree char *dir = g_strdup_printf("/sys/devices/system/cpu/cpu%d/topology", cpu);
        g_autofree char *core_path = g_build_filename(dir, "core_id", NULL);
        g_autofree char *pkg_path = g_build_filename(dir, "physical_package_id", NULL);
        g_autofree char *core = NULL, *pkg = NULL;
        if (!g_file_get_contents(core_path, &core, NULL, NULL) || !g_file_get_contents(pkg_path, &pkg, NULL, NULL))
            break;
        g_hash_table_add(cores, g_strdup_printf("%s/%s", g_strstrip(pkg), g_strstrip(core)));
    }
    guint physical = g_hash_table_size(cores);
    return physical > 0 && (int)physical <= n ? (int)physical : n;
}
