/* calibrate.c - the measurements of `fuseplan calibrate` (see calibrate.h): SGEMM
 * (calibrate_sgemm.c) and STREAM-triad phases on one and on N threads, the cache sweep
 * (calibrate_cache.c) after them; and what the machine says of itself (CPU, memory, cores).
 *
 * Each phase starts N worker threads; each allocates and first-touches its own buffers and does
 * one unit of work to warm up. Then they run rounds, each thread one unit between two barriers,
 * until the phase's time is up; the rate of a phase is that of its best round (STREAM reports
 * the best of its repetitions too). Every phase has at least one round.
 */
#include "calibrate_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(fp-calibrate-error-quark, fp_calibrate_error);

#define GEMM_N 576 /* square SGEMM per unit of work: a multiple of every MR and NR */

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
    uint64_t w = llc > 0 ? 4 * (uint64_t)llc : 128 * FP_CALIBRATE_MIB;
    return CLAMP(w, 64 * FP_CALIBRATE_MIB, 512 * FP_CALIBRATE_MIB);
}

/* ---- phases ---- */

typedef struct {
    fp_calibrate_work kind;
    const fp_calibrate_kernel_info *ki;
    size_t triad_n; /* elements per triad array per thread */
    size_t reps;    /* triad passes per unit of work (small arrays: enough to time) */
    GMutex lock;
    GCond cond;
    int ready; /* workers done with set-up and warm-up */
    int go;    /* set by the main thread: start the rounds */
    pthread_barrier_t barrier;
    gint stop; /* atomic; written by worker 0 (or the main thread before go) */
    gint64 deadline_us;
    double round_work; /* work of one round, all threads */
    double best;       /* best round rate, written by worker 0 */
} phase;

typedef struct {
    phase *ph;
    int id;
    float *a, *b, *c;
    fp_calibrate_sgemm_ws ws;
    double *x, *y, *z;
    double s;
    bool ok; /* buffers allocated */
} worker;

static bool worker_setup(worker *w)
{
    const phase *ph = w->ph;
    if (ph->kind == FP_CALIBRATE_WORK_SGEMM) {
        size_t nn = (size_t)GEMM_N * GEMM_N;
        w->a = fp_calibrate_alloc(nn * sizeof(float));
        w->b = fp_calibrate_alloc(nn * sizeof(float));
        w->c = fp_calibrate_alloc(nn * sizeof(float));
        if (!w->a || !w->b || !w->c || !fp_calibrate_sgemm_ws_init(&w->ws, ph->ki, GEMM_N, GEMM_N, GEMM_N))
            return false;
        for (size_t i = 0; i < nn; i++) {
            w->a[i] = (float)(i % 7 + 1) * 0.01f;
            w->b[i] = (float)(i % 5 + 1) * 0.01f;
            w->c[i] = 0;
        }
        return true;
    }
    size_t n = ph->triad_n;
    w->x = fp_calibrate_alloc(n * sizeof(double));
    w->y = fp_calibrate_alloc(n * sizeof(double));
    w->z = fp_calibrate_alloc(n * sizeof(double));
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
    fp_calibrate_sgemm_ws_clear(&w->ws);
    free(w->x);
    free(w->y);
    free(w->z);
}

/* One unit of work; returns the FLOPs or bytes it counts for. */
static double worker_unit(worker *w)
{
    if (w->ph->kind == FP_CALIBRATE_WORK_SGEMM) {
        fp_calibrate_sgemm_blocked(w->ph->ki, &w->ws, GEMM_N, GEMM_N, GEMM_N, w->a, GEMM_N, w->b, GEMM_N, w->c, GEMM_N);
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

bool fp_calibrate_phase_run(const fp_calibrate_phase_pos *pos, fp_calibrate_work kind,
                            const fp_calibrate_kernel_info *ki, int threads, size_t triad_n, size_t reps,
                            const char *what, double *rate, GError **error)
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
    ph.round_work = kind == FP_CALIBRATE_WORK_SGEMM ? 2.0 * GEMM_N * GEMM_N * GEMM_N * threads
                                                    : 24.0 * (double)triad_n * (double)ph.reps * threads;
    gint64 start = g_get_monotonic_time();
    ph.deadline_us = start + MAX((gint64)(o->seconds * 1e6), 1);
    ph.go = 1;
    g_cond_broadcast(&ph.cond);
    g_mutex_unlock(&ph.lock);

    for (gint64 now = start; ok && !g_atomic_int_get(&ph.stop); now = g_get_monotonic_time()) {
        if (o->progress)
            o->progress(pos->index, pos->count, what,
                        MIN((double)(now - start) / (double)(ph.deadline_us - start), 1.0), -1, o->user);
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

size_t fp_calibrate_triad_elements(uint64_t total, int threads)
{
    uint64_t n = total / (3 * sizeof(double) * (uint64_t)threads) / 8 * 8;
    return (size_t)MAX(n, 8);
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
    fp_calibrate_phase_pos pos = {opts, 0, (n > 1 ? 4 : 2) + !opts->no_cache};
    const fp_calibrate_kernel_info *ki = fp_calibrate_sgemm_kernel(k);
    g_autofree char *g1 = g_strdup_printf("sgemm fp32 (%s), 1 thread", ki->name);
    g_autofree char *gn = g_strdup_printf("sgemm fp32 (%s), %d threads", ki->name, n);
    g_autofree char *t1 = g_strdup("triad, 1 thread");
    g_autofree char *tn = g_strdup_printf("triad, %d threads", n);

    pos.index = 1;
    if (!fp_calibrate_phase_run(&pos, FP_CALIBRATE_WORK_SGEMM, ki, 1, 0, 1, g1, &r->flops_1t, error))
        return false;
    r->flops = r->flops_1t;
    if (n > 1) {
        pos.index++;
        if (!fp_calibrate_phase_run(&pos, FP_CALIBRATE_WORK_SGEMM, ki, n, 0, 1, gn, &r->flops, error))
            return false;
    }
    pos.index++;
    size_t n1 = fp_calibrate_triad_elements(total, 1);
    r->triad_bytes = 3 * sizeof(double) * (uint64_t)n1;
    if (!fp_calibrate_phase_run(&pos, FP_CALIBRATE_WORK_TRIAD, ki, 1, n1, 1, t1, &r->triad_1t, error))
        return false;
    r->triad = r->triad_1t;
    if (n > 1) {
        pos.index++;
        size_t nn = fp_calibrate_triad_elements(total, n);
        if (!fp_calibrate_phase_run(&pos, FP_CALIBRATE_WORK_TRIAD, ki, n, nn, 1, tn, &r->triad, error))
            return false;
    }
    if (opts->no_cache)
        return true;
    pos.index++;
    g_autofree char *cs = g_strdup_printf("cache sweep (triad), %d thread%s", n, n > 1 ? "s" : "");
    return fp_calibrate_cache_sweep(&pos, ki, n, r, cs, error);
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
