/* calibrate.c - `fuseplan calibrate`: measures this machine's fp32 FLOP/s (blocked SGEMM) and
 * memory bandwidth (STREAM triad), one thread and all threads, and its cache levels (triad over
 * growing working sets), and writes a device profile (target ort-cpu) that fp_device_load accepts.
 * With --runtime onnxruntime[=PATH] that profile is the base that the runtime's own kernels are then
 * fitted to (calibration/calibrate_runtime.h): micro-models run through the ONNX Runtime library
 * found on this host. Progress goes to stderr: a live line on a terminal, otherwise one line per
 * phase.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "calibration/calibrate.h"
#include "calibration/calibrate_runtime.h"
#include "calibration/timings.h"
#include "devices/device.h"
#include "frontends/onnx/onnx_write.h"

/* Defaults of the written profile that are not measured (see docs/devices.md, "host"): ONNX
 * Runtime's costs on one core as bench/ort_calibrate.py measured them on synthetic kernels. */
#define HOST_LAUNCH_OVERHEAD 0.5e-6 /* per node without profiling: 0.2-0.5 us (mixed ops: 0.4-0.5) */
#define HOST_LAUNCH_GROUP 0.4e-6    /* per group of a grouped convolution */
#define HOST_HALF_WORK_CONV 2e6     /* [saturation] conv, FLOP */
#define HOST_ALIGN 64
#define HOST_GROUPED_CONV 0.04
#define RUNTIME_BUDGET_S 0.08     /* timing of each micro-model chain */
#define RUNTIME_IO_BUDGET_S 0.2   /* each timing of the run-overhead models (3 of each of 3) */
#define RUNTIME_FOOT_BUDGET_S 0.1 /* each timing of the footprint chains (fp_rt_footprint) */
#define RUNTIME_ROUNDS 3          /* times each chain is timed, spread over the calibration: its fastest counts */
#define RUNTIME_CONFIRM_S 15      /* then at most this long timing again the chains whose fastest is unconfirmed */
#define RUNTIME_MEASURE_S 87      /* and only until this long after the points' first timing: with the own */
                                  /* kernels' 11 s before and 10 s after (the VM), 108 s at --seconds 1 */
#define RUNTIME_OFF 0.25          /* points estimated further off than this are listed */
#define RUNTIME_PEAK_ROOM 2.0     /* the peak at least this many times the runtime's fastest kernel rate */
#define CHECK_ROUNDS 2            /* --check: times each chain of its sample is timed, its fastest counts */
#define CHECK_HOLDS 0.05          /* --check: a profile holds when its median estimate is this near the times */

#define DEFAULT_PROFILE "devices/host.ini" /* -o when not given */

/* The widest x86-64 vector ISA of this CPU among those ONNX Runtime's MLAS dispatches on, as
 * cpuid and the OS's saved state (XCR0) allow it: "AVX-512F", "AVX2", "AVX" or "SSE2"; NULL off
 * x86-64. */
static const char *host_isa(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? "AVX-512F"
           : __builtin_cpu_supports("avx2")  ? "AVX2"
           : __builtin_cpu_supports("avx")   ? "AVX"
                                             : "SSE2";
#else
    return NULL;
#endif
}

/* ONNX Runtime's NCHWc block on this CPU as MLAS picks it (platform.cpp): 16 with AVX-512F, 8 on
 * other x86-64 (SSE2/AVX/AVX2 kernels); 0 elsewhere (ARM64 builds leave NCHWc off by default). */
static uint64_t host_nchwc_block(const char *isa) { return !isa ? 0 : strcmp(isa, "AVX-512F") == 0 ? 16 : 8; }

static const double host_efficiency[FP_CLASS_COUNT] = {
    [FP_CLASS_CONV] = 0.9,
    [FP_CLASS_GROUPED_CONV] = HOST_GROUPED_CONV,
    [FP_CLASS_MATMUL] = 0.9,
    [FP_CLASS_NCHWC_CONV] = 0.9,
    [FP_CLASS_NCHWC_DEPTHWISE] = HOST_GROUPED_CONV,
    [FP_CLASS_EW] = 0.5,
    [FP_CLASS_NORM] = 0.3,
    [FP_CLASS_POOL] = 0.3,
    [FP_CLASS_DILATED_POOL] = 0.3,
    [FP_CLASS_REDUCE] = 0.3,
    [FP_CLASS_SOFTMAX] = 0.3,
    [FP_CLASS_DATA] = 0.5,
    [FP_CLASS_VIEW] = 0.3,
    [FP_CLASS_OTHER] = 0.3,
};

typedef struct {
    bool tty;
    int phase, percent; /* last line drawn on the terminal */
} progress_state;

static char *rate_text(const char *what, double v)
{
    if (g_str_has_prefix(what, "cache"))
        return g_strdup_printf("%.0f cache level%s", v, v == 1 ? "" : "s");
    bool flops = g_str_has_prefix(what, "sgemm");
    return g_strdup_printf("%.1f %s", v / 1e9, flops ? "GFLOP/s" : "GB/s");
}

static void progress(int phase, int nphases, const char *what, double fraction, double result, void *user)
{
    progress_state *ps = user;
    if (result >= 0) {
        g_autofree char *r = rate_text(what, result);
        fprintf(stderr, "%scalibrate: [%d/%d] %s: %s%s\n", ps->tty ? "\r" : "", phase, nphases, what, r,
                ps->tty ? "\033[K" : "");
    } else if (ps->tty && (phase != ps->phase || (int)(fraction * 100) != ps->percent)) {
        ps->phase = phase;
        ps->percent = (int)(fraction * 100);
        fprintf(stderr, "\rcalibrate: [%d/%d] %s %3d%%\033[K", phase, nphases, what, ps->percent);
    }
    fflush(stderr);
}

/* The cache sweep as "16K:161.1,32K:164.5,..." (working set: GB/s), for the [calibration] record. */
static char *sweep_text(const fp_calibrate_result *r)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < r->n_sweep; i++) {
        double b = (double)r->sweep[i].bytes;
        bool mib = b >= 1023.5 * 1024;
        g_string_append_printf(s, "%s%.0f%s:%.1f", i ? "," : "", b / (mib ? 1048576.0 : 1024.0), mib ? "M" : "K",
                               r->sweep[i].bandwidth / 1e9);
    }
    return g_string_free(s, FALSE);
}

/* The convolution classes' efficiencies (each kernel's FLOP/s on one thread over the SGEMM's, the
 * peak's, on one thread; at most 1) and the half works of conv and nchwc_conv
 * (fp_calibrate_saturation_fit); the rates go to the [calibration] record too. */
static void conv_efficiencies(const fp_calibrate_result *r, const fp_calibrate_conv_rates *cr, fp_device *d,
                              GKeyFile *cal)
{
    double peak = r->flops_1t, sb = (double)cr->conv_operands / (1.5 * (double)cr->conv_flops),
           ss = (double)cr->small_operands / (1.5 * (double)cr->small_flops);
    if (peak > 0 && cr->conv > 0 && cr->conv_small > 0)
        fp_calibrate_saturation_fit(peak, cr->conv, sb, cr->conv_small, ss, &d->efficiency[FP_CLASS_CONV],
                                    &d->half_work[FP_CLASS_CONV]);
    if (peak > 0 && cr->nchwc_conv > 0 && cr->nchwc_conv_small > 0)
        fp_calibrate_saturation_fit(peak, cr->nchwc_conv, sb, cr->nchwc_conv_small, ss,
                                    &d->efficiency[FP_CLASS_NCHWC_CONV], &d->half_work[FP_CLASS_NCHWC_CONV]);
    if (peak > 0 && cr->grouped_conv > 0)
        d->efficiency[FP_CLASS_GROUPED_CONV] = MIN(cr->grouped_conv / peak, 1.0);
    if (peak > 0 && cr->nchwc_depthwise > 0)
        d->efficiency[FP_CLASS_NCHWC_DEPTHWISE] = MIN(cr->nchwc_depthwise / peak, 1.0);
    const struct {
        const char *key;
        double rate;
    } k[] = {{"conv_flops_1t", cr->conv},
             {"conv_small_flops_1t", cr->conv_small},
             {"grouped_conv_flops_1t", cr->grouped_conv},
             {"nchwc_conv_flops_1t", cr->nchwc_conv},
             {"nchwc_conv_small_flops_1t", cr->nchwc_conv_small},
             {"nchwc_depthwise_flops_1t", cr->nchwc_depthwise}};
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (size_t i = 0; i < G_N_ELEMENTS(k); i++)
        g_key_file_set_value(cal, "calibration", k[i].key, g_ascii_formatd(buf, sizeof buf, "%.6g", k[i].rate));
}

/* The profile for result r and the convolution classes' rates cr: measured peaks, bandwidth,
 * cache levels and class efficiencies, host defaults, the thread count, and a [calibration] group. */
static GKeyFile *host_profile(const fp_calibrate_result *r, const fp_calibrate_conv_rates *cr, double seconds)
{
    g_autofree char *cpu = fp_calibrate_cpu_name();
    g_autoptr(GDateTime) now = g_date_time_new_now_utc();
    g_autofree char *date = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
    g_autoptr(GKeyFile) cal = g_key_file_new();
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_key_file_set_string(cal, "calibration", "date", date);
    g_key_file_set_string(cal, "calibration", "cpu", cpu);
    g_key_file_set_string(cal, "calibration", "kernel", fp_calibrate_kernel_name(r->kernel));
    const char *isa = host_isa();
    if (isa)
        g_key_file_set_string(cal, "calibration", "isa", isa);
    g_key_file_set_integer(cal, "calibration", "threads", r->threads);
    g_key_file_set_value(cal, "calibration", "seconds", g_ascii_formatd(buf, sizeof buf, "%.6g", seconds));
    g_key_file_set_value(cal, "calibration", "fp32_flops_1t", g_ascii_formatd(buf, sizeof buf, "%.6g", r->flops_1t));
    g_key_file_set_value(cal, "calibration", "fp32_flops", g_ascii_formatd(buf, sizeof buf, "%.6g", r->flops));
    g_key_file_set_value(cal, "calibration", "triad_bandwidth_1t",
                         g_ascii_formatd(buf, sizeof buf, "%.6g", r->triad_1t));
    g_key_file_set_value(cal, "calibration", "triad_bandwidth", g_ascii_formatd(buf, sizeof buf, "%.6g", r->triad));
    if (r->n_sweep) {
        g_autofree char *sweep = sweep_text(r);
        g_key_file_set_string(cal, "calibration", "triad_sweep", sweep);
    }

    g_autofree char *desc = g_strdup_printf("this machine: %s (fuseplan calibrate)", cpu);
    fp_device d = {
        .description = desc,
        .target = (char *)"ort-cpu",
        .bandwidth = r->triad,
        .memory_bytes = MAX(fp_calibrate_memory_bytes(), (uint64_t)1 << 30),
        .launch_overhead = HOST_LAUNCH_OVERHEAD,
        .align_bytes = HOST_ALIGN,
        .nchwc_block = host_nchwc_block(isa),
        .bw_efficiency = 1.0,
        .keyfile = cal,
    };
    d.peak_flops[FP_DT_FLOAT] = r->flops;
    memcpy(d.efficiency, host_efficiency, sizeof d.efficiency);
    d.half_work[FP_CLASS_CONV] = d.half_work[FP_CLASS_NCHWC_CONV] = HOST_HALF_WORK_CONV;
    d.threads = (uint64_t)r->threads;
    conv_efficiencies(r, cr, &d, cal);
    fp_device_refine_from_parents(&d);
    d.launch_group = HOST_LAUNCH_GROUP;
    for (int i = 0; i < FP_CALIBRATE_LEVELS && i < FP_CACHE_LEVELS; i++)
        d.cache[i] = (fp_cache_level){r->cache[i].bytes, r->cache[i].bandwidth};
    d.last_from = r->last_from;
    GKeyFile *kf = fp_device_to_keyfile(&d);
    g_key_file_set_comment(kf, NULL, NULL,
                           " Written by `fuseplan calibrate`: peak fp32 = blocked SGEMM on `threads` threads,\n"
                           " bandwidth = STREAM triad on them, [cache] = the triad's levels (cache sweep), the\n"
                           " convolution classes' efficiencies = fuseplan's kernels of each class against the SGEMM\n"
                           " on one thread; the other numbers are defaults (docs/devices.md, host).",
                           NULL);
    return kf;
}

/* The threads --threads names into *threads: a number in [1, 4096], 0 or "all" for all cores (the
 * physical ones, as ONNX Runtime counts them); not given: all cores, but 1 with --runtime. False
 * after printing one line naming the option when the text is none of these. */
static bool threads_option(const char *text, bool runtime, int *threads)
{
    if (!text) {
        *threads = runtime ? 1 : fp_calibrate_runtime_threads();
        return true;
    }
    char *end = NULL;
    gint64 n = g_ascii_strtoll(text, &end, 10);
    if (strcmp(text, "all") == 0 || (*text && end && !*end && n == 0)) {
        *threads = fp_calibrate_runtime_threads();
        return true;
    }
    if (!*text || !end || *end || n < 1 || n > 4096) {
        fp_cli_error("calibrate: --threads '%s': a count in [1, 4096], or 0 or 'all' for all cores", text);
        return false;
    }
    *threads = (int)n;
    return true;
}

/* Checks the options; prints one error line and returns false when one is bad. */
static bool check_options(const char *output, double seconds, int triad_mib, const char *kernel, fp_calibrate_kernel *k)
{
    if (!(seconds > 0 && seconds <= 600)) {
        fp_cli_error("calibrate: --seconds must be in (0, 600]");
        return false;
    }
    if (triad_mib < 0 || triad_mib > 65536) {
        fp_cli_error("calibrate: --triad-mib must be in [1, 65536] (0: automatic)");
        return false;
    }
    *k = fp_calibrate_kernel_from_name(kernel);
    if (*k == FP_CALIBRATE_KERNEL_COUNT) {
        fp_cli_error("calibrate: unknown kernel '%s' (one of: auto, avx512f, avx2-fma, portable)", kernel);
        return false;
    }
    if (!fp_calibrate_kernel_supported(*k)) {
        fp_cli_error("calibrate: kernel '%s' is not supported by this CPU", kernel);
        return false;
    }
    g_autofree char *dir = g_path_get_dirname(output);
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        fp_cli_error("%s: cannot write: directory '%s' does not exist", output, dir);
        return false;
    }
    return true;
}

/* The library --runtime names: NULL when not given; "onnxruntime" alone: the one fp_ort_find finds.
 * False after printing one line when the value is not onnxruntime[=PATH] or none is found. */
static bool runtime_path(const char *spec, char **path)
{
    *path = NULL;
    if (!spec)
        return true;
    if (strcmp(spec, "onnxruntime") == 0) {
        g_autoptr(GError) err = NULL;
        if (!(*path = fp_ort_find(&err)))
            fp_cli_error("calibrate: --runtime onnxruntime: %s", err->message);
        return *path != NULL;
    }
    if (!g_str_has_prefix(spec, "onnxruntime=") || !spec[strlen("onnxruntime=")]) {
        fp_cli_error("calibrate: --runtime: unknown runtime '%s' (onnxruntime or onnxruntime=PATH)", spec);
        return false;
    }
    *path = g_strdup(spec + strlen("onnxruntime="));
    return true;
}

static void runtime_progress(guint i, guint n, const fp_micro_case *c, fp_ort_level level, double kernel_s, void *user)
{
    progress_state *ps = user;
    g_autofree char *at = n ? g_strdup_printf("%u/%u", i, n) : g_strdup_printf(", unconfirmed, again %u", i);
    fprintf(stderr, "%scalibrate: [runtime%s%s] %s at %s: %.2f us per kernel%s\n", ps->tty ? "\r" : "", n ? " " : "",
            at, c->name, fp_rt_level_name(level), kernel_s * 1e6, ps->tty ? "\033[K" : "");
}

/* The [calibration] record of the runtime's fit. */
static void runtime_record(GKeyFile *kf, const fp_rt_extras *x, const fp_rt_set *s, const fp_fit_result *f)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_key_file_set_string(kf, "calibration", "runtime", "onnxruntime");
    g_key_file_set_string(kf, "calibration", "runtime_version", x->runtime_version);
    g_key_file_set_string(kf, "calibration", "runtime_library", x->runtime_library);
    g_key_file_set_integer(kf, "calibration", "runtime_points", (gint)s->points->len);
    g_key_file_set_integer(kf, "calibration", "runtime_unconfirmed", (gint)fp_rt_set_unconfirmed(s));
    g_key_file_set_value(kf, "calibration", "runtime_seconds", g_ascii_formatd(buf, sizeof buf, "%.3g", x->seconds));
    g_key_file_set_value(kf, "calibration", "runtime_rms_log", g_ascii_formatd(buf, sizeof buf, "%.3g", f->rms_log));
    g_key_file_set_comment(kf, NULL, NULL,
                           " Written by `fuseplan calibrate --runtime onnxruntime`: peak fp32, bandwidths and [cache]\n"
                           " measured with fuseplan's kernels, then [efficiency], [saturation], [launch] and the\n"
                           " bandwidth and cache factors fitted (calibration/fit.h) to ONNX Runtime's own kernel\n"
                           " times on micro-models (docs/devices.md, runtime calibration).",
                           NULL);
}

/* The points the profile d (the one written) estimates more than RUNTIME_OFF away from their measured
 * time, or every point with `all` (each kernel's measured time beside the ratio). */
static void print_points(const fp_rt_set *s, const fp_device *d, bool all)
{
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        double kernel_s = fp_rt_point_kernel_s(s, p), ratio = fp_rt_point_estimate_s(p, d) / (p->long_s - p->short_s);
        if (kernel_s <= 0 || (c->flags & (FP_MICRO_DENORMAL | FP_MICRO_SHARED)))
            continue;
        if (all)
            printf("  point: %s at %s, %.2f us a kernel, estimate / measured %.2f\n", c->name,
                   fp_rt_level_name(p->level), kernel_s * 1e6, ratio);
        else if (fabs(ratio - 1) > RUNTIME_OFF)
            printf("  off: %s at %s, estimate / measured %.2f\n", c->name, fp_rt_level_name(p->level), ratio);
    }
}

/* base with its fp32 peak raised to RUNTIME_PEAK_ROOM times best (the runtime's fastest kernel
 * rate) when it is below: the SGEMM measured on a loaded machine can fall short of what the
 * runtime's kernels reach, and the fit holds efficiencies at 1 at most. */
static fp_device *with_room(fp_device *base, double best)
{
    base->peak_flops[FP_DT_FLOAT] = MAX(base->peak_flops[FP_DT_FLOAT], RUNTIME_PEAK_ROOM * best);
    return base;
}

/* base with the rates of weights read from memory and of packed weights read past the L2 the cold
 * and spill micro-models measured (each unchanged when they measured none); where the last cache
 * level holds the cold chain, weights from memory at the triad's bandwidth (measured on the
 * development VM, whose L3 is 300 MB: ViT-B/16's 331 MB of weights, 0.87 of ONNX Runtime's time
 * with its cold weights overlapped, 0.96 with them at that rate; docs/devices.md). */
static fp_device *with_weights(fp_device *base, const fp_rt_set *s)
{
    double rate = fp_rt_set_weight_bandwidth(s, base), spill = fp_rt_set_spill_bandwidth(s);
    if (rate > 0)
        base->weight_bandwidth = rate;
    else if (fp_rt_set_cold_fits(s))
        base->weight_bandwidth = base->bandwidth;
    if (spill > 0)
        base->weight_l3_bandwidth = spill;
    return base;
}

/* base with the time per kernel output past the first that the outputs micro-model measured, so
 * that the fit charges it to the cases whose kernels have more outputs. */
static fp_device *with_outputs(fp_device *base, const fp_rt_set *s)
{
    base->launch_output = fp_rt_set_output_s(s);
    return base;
}

/* dev's last cache level at `capacity` bytes, losing a run's weights from `from` of it (fp_rt_footprint),
 * where that capacity exceeds the level before it; false (dev unchanged) when it does not or
 * capacity is 0. */
static bool with_footprint(fp_device *dev, uint64_t capacity, double from)
{
    int last = -1;
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        if (dev->cache[i].bytes)
            last = i;
    if (!capacity || last < 1 || capacity <= dev->cache[last - 1].bytes || from > FP_DEVICE_MAX_LAST_FROM)
        return false;
    dev->cache[last].bytes = capacity;
    dev->last_from = from;
    return true;
}

/* Where a runtime calibration's measurements come from: the runtime, timed now (timings NULL),
 * or a file of --save-timings (timings, read from timings_path); and where they go (save). */
typedef struct {
    fp_ort *ort;
    GKeyFile *timings, *native; /* native: the own-kernel profile, for save */
    const char *timings_path, *save;
    int threads;
    progress_state *ps;
} rt_source;

/* The points of s and the extras x, timed through src->ort or read from src->timings. */
static bool rt_measure(const rt_source *src, fp_rt_set *s, fp_rt_extras *x, GError **error)
{
    if (src->timings)
        return fp_rt_timings_read(src->timings, src->timings_path, s, x, error);
    x->runtime_version = g_strdup(fp_ort_version(src->ort));
    x->runtime_library = g_strdup(fp_ort_path(src->ort));
    gint64 t0 = g_get_monotonic_time();
    if (!fp_rt_set_measure(s, src->ort, src->threads, RUNTIME_BUDGET_S, RUNTIME_ROUNDS, RUNTIME_CONFIRM_S,
                           t0 + (gint64)(RUNTIME_MEASURE_S * 1e6), runtime_progress, src->ps, error))
        return false;
    x->seconds = (double)(g_get_monotonic_time() - t0) * 1e-6;
    return fp_rt_io_overheads(src->ort, src->threads, RUNTIME_IO_BUDGET_S, &x->input_overhead, &x->output_overhead,
                              error) &&
           fp_rt_weight_life(s, src->ort, src->threads, &x->last_life, error) &&
           fp_rt_footprint(s, src->ort, src->threads, RUNTIME_FOOT_BUDGET_S, &x->foot_capacity, &x->foot_from, error);
}

/* Writes src->save (when asked): the own-kernel profile and what s and x hold. */
static bool rt_save(const rt_source *src, const fp_rt_set *s, const fp_rt_extras *x)
{
    if (!src->save)
        return true;
    g_autoptr(GKeyFile) kf = fp_rt_timings_keyfile(src->native, s, x);
    g_autoptr(GError) err = NULL;
    if (!g_key_file_save_to_file(kf, src->save, &err)) {
        fp_cli_error("calibrate: --save-timings: %s", err->message);
        return false;
    }
    printf("timings    %s\n", src->save);
    return true;
}

/* What the fitted profile dev says beyond its classes' rates. */
static void print_fit_extras(const fp_device *dev, const fp_rt_set *s, const fp_rt_extras *x, bool footprint)
{
    if (dev->weight_bandwidth > 0)
        printf("  weights read from memory at %.1f GB/s (past the caches%s)\n", dev->weight_bandwidth / 1e9,
               fp_rt_set_cold_fits(s) ? "; the triad's: the last level holds the cold micro-model" : "");
    if (dev->weight_l3_bandwidth > 0)
        printf("  packed weights read past the L2 at %.1f GB/s\n", dev->weight_l3_bandwidth / 1e9);
    if (footprint)
        printf(
            "  the last cache level keeps ONNX Runtime's weights to %.0f MB of a run's footprint, none past %.0f MB\n",
            dev->last_from * (double)x->foot_capacity / 1e6, (dev->last_from + 1) * (double)x->foot_capacity / 1e6);
    if (dev->last_life > 0)
        printf("  the last cache level keeps a run's weights %.1f ms (a mean life: other processes evict them)\n",
               dev->last_life * 1e3);
    if (dev->denormal_mac_s > 0 || dev->denormal_exp_s > 0)
        printf("  denormal floats: %.2f ns more per multiply-add on one, %.1f ns more per Softmax result that is one\n",
               dev->denormal_mac_s * 1e9, dev->denormal_exp_s * 1e9);
    printf("  a run's graph inputs and outputs past the first %.3f and %.3f us each\n", dev->input_overhead * 1e6,
           dev->output_overhead * 1e6);
    printf("  a kernel's outputs past the first %.3f us each\n", dev->launch_output * 1e6);
    printf("  a kernel among kernels of %d classes or more %.3f us more\n", FP_MIXED_CLASSES, dev->launch_mixed * 1e6);
    if (dev->launch_group > 0 || dev->launch_row > 0)
        printf("  grouped convolutions %.3f us a group and %.2f ns a row of their im2col\n", dev->launch_group * 1e6,
               dev->launch_row * 1e9);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        printf("  %-16s efficiency %.3g, launch %.2f us%s\n", fp_op_class_name(c), dev->efficiency[c],
               fp_device_launch(dev, c) * 1e6, dev->half_work[c] > 0 ? ", saturating" : "");
}

/* The fit's summary line and warnings. */
static void print_fit(const fp_rt_set *s, const fp_fit_result *f, const fp_rt_extras *x)
{
    printf("runtime    ONNX Runtime %s, %u points in %.1f s (%u unconfirmed), fit rms log error %.3f (base %.3f)\n",
           x->runtime_version, s->points->len, x->seconds, fp_rt_set_unconfirmed(s), f->rms_log, f->base_rms_log);
    if (fp_rt_set_busy(s))
        fprintf(stderr,
                "calibrate: warning: %u of %u points unconfirmed: the host was busy while they were timed, and "
                "this profile's estimates can be 10%% off or more; calibrate again when it is quiet\n",
                fp_rt_set_unconfirmed(s), s->points->len);
    else if (fp_rt_fit_scattered(f))
        fprintf(stderr,
                "calibrate: warning: fit rms log error %.3f over %.2f: the points scatter as on a busy host, and "
                "this profile's estimates can be 10%% off or more; calibrate again when it is quiet\n",
                f->rms_log, FP_RT_SCATTERED);
}

/* base fitted to the runtime's kernels (measured or read, per src) and written to output, listing
 * every point's fit with all_points; false after printing one line. */
static bool runtime_calibrate(const rt_source *src, fp_device *base, const char *output, bool all_points)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_rt_set) s = fp_rt_set_new(base, &err);
    if (!s) {
        fp_cli_error("calibrate: --runtime: %s", err->message);
        return false;
    }
    if (src->ort)
        fprintf(stderr, "calibrate: ONNX Runtime %s (%s), %d thread%s, %u micro-model points\n",
                fp_ort_version(src->ort), fp_ort_path(src->ort), src->threads, src->threads == 1 ? "" : "s",
                s->points->len);
    fp_rt_extras x = {0};
    g_autoptr(fp_fit_result) f = NULL;
    if (!rt_measure(src, s, &x, &err) ||
        !(f = fp_rt_set_fit(s, with_outputs(with_weights(with_room(base, fp_rt_set_best_rate(s)), s), s), &err))) {
        fp_cli_error("calibrate: %s: %s", src->timings ? "--from-timings" : "--runtime", err->message);
        fp_rt_extras_clear(&x);
        return false;
    }
    fp_device dev = *f->device;
    dev.denormal_mac_s = fp_rt_set_denormal_s(s, "MatMul");
    dev.denormal_exp_s = fp_rt_set_denormal_s(s, "Softmax");
    dev.launch_mixed = fp_rt_set_mixed_s(s, f->device);
    dev.input_overhead = x.input_overhead, dev.output_overhead = x.output_overhead, dev.last_life = x.last_life;
    bool footprint = with_footprint(&dev, x.foot_capacity, x.foot_from);
    g_autofree char *desc = g_strdup_printf("%s, ONNX Runtime %s's kernels fitted", base->description,
                                            x.runtime_version);
    dev.description = desc;
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(&dev);
    runtime_record(kf, &x, s, f);
    bool ok = rt_save(src, s, &x) && fp_cli_write_device_profile(kf, output, "calibrate");
    if (ok) {
        print_fit(s, f, &x);
        print_fit_extras(&dev, s, &x, footprint);
        print_points(s, &dev, all_points);
    }
    fp_rt_extras_clear(&x);
    return ok;
}

/* The measurement of fuseplan's own kernels (peaks, bandwidths, caches, convolution classes) as a
 * profile key file; NULL after printing one line. *r receives the rates. */
static GKeyFile *native_profile(const fp_calibrate_opts *opts, double seconds, fp_calibrate_result *r)
{
    g_autoptr(GError) err = NULL;
    if (!fp_calibrate_run(opts, r, &err)) {
        fp_cli_error("calibrate: %s", err->message);
        return NULL;
    }
    fp_calibrate_conv_rates cr = {0};
    if (!fp_calibrate_conv(r->kernel, seconds, &cr, &err)) {
        fp_cli_error("calibrate: %s", err->message);
        return NULL;
    }
    fprintf(stderr,
            "calibrate: convolution classes, 1 thread: conv %.1f, grouped_conv %.1f, nchwc_conv %.1f, "
            "nchwc_depthwise %.1f GFLOP/s\n",
            cr.conv / 1e9, cr.grouped_conv / 1e9, cr.nchwc_conv / 1e9, cr.nchwc_depthwise / 1e9);
    return host_profile(r, &cr, seconds);
}

static void print_native(const fp_calibrate_result *r)
{
    g_autofree char *cpu = fp_calibrate_cpu_name();
    printf("cpu        %s\n", cpu);
    printf("kernel     %s\n", fp_calibrate_kernel_name(r->kernel));
    printf("sgemm      %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d\n", r->flops_1t / 1e9, r->flops / 1e9, r->threads);
    printf("triad      %.1f GB/s on 1 thread, %.1f GB/s on %d (%.0f MiB working set)\n", r->triad_1t / 1e9,
           r->triad / 1e9, r->threads, (double)r->triad_bytes / (1 << 20));
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++) {
        if (!r->cache[i].bytes)
            continue;
        g_autofree char *size = g_format_size_full(r->cache[i].bytes, G_FORMAT_SIZE_IEC_UNITS);
        printf("cache L%d   %s at %.1f GB/s (triad)\n", i + 1, size, r->cache[i].bandwidth / 1e9);
    }
    if (r->last_from > 0)
        printf("last level a run's footprint starts to lose it at %.2f of its capacity\n", r->last_from);
}

/* Writes model bytes b (NULL: err says why) to dir/name; false after printing one line. Takes err
 * (freed here when set). */
static bool write_model(const char *dir, const char *name, GBytes *b, GError *err)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    gsize len = 0;
    const char *data = b ? g_bytes_get_data(b, &len) : NULL;
    if (!b || !g_file_set_contents(path, data, (gssize)len, &err)) {
        fp_cli_error("calibrate: --micro-models: %s: %s", path, err->message);
        g_clear_error(&err);
        return false;
    }
    return true;
}

/* Writes every micro-model chain to dir as CASE_N.onnx (N: its ops), and the run-overhead models
 * as run_io_IO.onnx (I, O: 1 for the many inputs or outputs); the exit code. */
static int write_micro_models(const char *dir)
{
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        fp_cli_error("calibrate: --micro-models: %s: not a directory", dir);
        return FP_EXIT_BAD;
    }
    g_autoptr(GArray) cs = fp_micro_cases();
    for (guint i = 0; i < cs->len; i++) {
        const fp_micro_case *c = &g_array_index(cs, fp_micro_case, i);
        for (int n = 1; n <= c->chain; n += c->chain - 1) {
            GError *err = NULL;
            g_autoptr(GBytes) b = fp_micro_bytes(c, n, &err);
            g_autofree char *name = g_strdup_printf("%s_%d.onnx", c->name, n);
            if (!write_model(dir, name, b, err))
                return FP_EXIT_BAD;
        }
    }
    for (int io = 0; io < 4; io++) {
        GError *err = NULL;
        g_autofree char *text = fp_micro_io_text(io & 2, io & 1);
        g_autoptr(GBytes) b = fp_onnx_write_text(text, strlen(text), &err);
        g_autofree char *name = g_strdup_printf("run_io_%d%d.onnx", io >> 1, io & 1);
        if (!write_model(dir, name, b, err))
            return FP_EXIT_BAD;
    }
    printf("wrote      %u micro-models to %s\n", cs->len * 2 + 4, dir);
    return FP_EXIT_OK;
}

/* The verdict of `calibrate --check` on profile `path` from c, on stdout. */
static void print_check(const char *path, const fp_rt_check *c)
{
    printf("  estimate / measured: median %.2f over %u points (%.2f over the %u launch-bound, %.2f over the %u "
           "others)\n",
           c->median, c->n, c->median_tiny, c->n_tiny, c->median_work, c->n - c->n_tiny);
    if (fabs(c->median - 1) <= CHECK_HOLDS)
        printf("  holds      %s estimates this host's runtime within %.0f%% now\n", path, CHECK_HOLDS * 100);
    else
        printf("  off        the runtime's kernels take %.2fx the time %s estimates on this host now (its estimates "
               "read %.0f%% %s): calibrate again\n",
               1 / c->median, path, fabs(c->median - 1) * 100, c->median > 1 ? "high" : "low");
}

/* `calibrate --runtime R --check PROFILE`: times a sample of the micro-models (fp_rt_check_points)
 * through ort on the profile's threads and prints how far the profile's estimates are from them;
 * the exit code. */
static int check_profile(const char *path, const char *nthreads, const char *runtime)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(path, &err);
    if (!d) {
        fp_cli_error("calibrate: --check: %s", err->message);
        return FP_EXIT_BAD;
    }
    if (g_strcmp0(d->target, "ort-cpu") != 0) {
        fp_cli_error("calibrate: --check: %s: a profile of target '%s', not ONNX Runtime's CPU (ort-cpu)", path,
                     d->target ? d->target : "(none)");
        return FP_EXIT_BAD;
    }
    int threads = d->threads ? (int)d->threads : 1; /* a profile that says none: one */
    int asked = threads;
    if (nthreads && !threads_option(nthreads, true, &asked))
        return FP_EXIT_BAD;
    if (asked != threads) {
        fp_cli_error("calibrate: --check: %s: its rates are for %d thread%s, --threads asks %d", path, threads,
                     threads == 1 ? "" : "s", asked);
        return FP_EXIT_BAD;
    }
    g_autofree char *lib = NULL;
    if (!runtime_path(runtime, &lib))
        return FP_EXIT_BAD;
    g_autoptr(fp_ort) ort = fp_ort_open(lib, &err);
    g_autoptr(fp_rt_set) s = ort ? fp_rt_set_new(d, &err) : NULL;
    if (!s) {
        fp_cli_error("calibrate: --%s: %s", ort ? "check" : "runtime", err->message);
        return FP_EXIT_BAD;
    }
    g_autoptr(GArray) which = fp_rt_check_points(s);
    gint64 t0 = g_get_monotonic_time();
    if (!fp_rt_set_time(s, which, ort, threads, RUNTIME_BUDGET_S, CHECK_ROUNDS, NULL, NULL, &err)) {
        fp_cli_error("calibrate: --runtime: %s", err->message);
        return FP_EXIT_BAD;
    }
    fp_rt_check c = fp_rt_set_check(s, which, d);
    if (!c.n) {
        fp_cli_error("calibrate: --check: %s: no micro-model point was measured above its noise", path);
        return FP_EXIT_BAD;
    }
    printf("check      %s against ONNX Runtime %s on %d thread%s: %u micro-model points in %.1f s\n", path,
           fp_ort_version(ort), threads, threads == 1 ? "" : "s", which->len,
           (double)(g_get_monotonic_time() - t0) * 1e-6);
    print_check(path, &c);
    return FP_EXIT_OK;
}

/* Fits a profile again from the timings file `path` (--from-timings), measuring nothing, and
 * writes it to output; the exit code. */
static int refit(const char *path, const char *output, bool all_points)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GKeyFile) native = NULL;
    g_autoptr(fp_device) base = NULL;
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_KEEP_COMMENTS, &err) ||
        !(native = fp_rt_timings_native(kf, path, &err)) || !(base = fp_device_from_keyfile(native, path, &err))) {
        fp_cli_error("calibrate: --from-timings: %s%s%s", err->domain == FP_DEVICE_ERROR ? "" : path,
                     err->domain == FP_DEVICE_ERROR ? "" : ": ", err->message);
        return FP_EXIT_BAD;
    }
    rt_source src = {.timings = kf, .timings_path = path, .threads = (int)base->threads};
    if (!runtime_calibrate(&src, base, output, all_points))
        return FP_EXIT_BAD;
    printf("timings    %s (measured then, fitted now)\nwrote      %s\n", path, output);
    return FP_EXIT_OK;
}

/* Measures, fits to the runtime at `runtime` (a library path) when one is given (listing every
 * micro-model point's fit with all_points), writes the profile; the exit code. */
static int calibrate(const fp_calibrate_opts *opts, const char *runtime, const char *output, bool all_points,
                     const char *save)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_ort) ort = runtime ? fp_ort_open(runtime, &err) : NULL;
    if (runtime && !ort) {
        fp_cli_error("calibrate: --runtime: %s", err->message);
        return FP_EXIT_BAD;
    }
    fp_calibrate_result r;
    g_autoptr(GKeyFile) kf = native_profile(opts, opts->seconds, &r);
    if (!kf)
        return FP_EXIT_BAD;
    print_native(&r);
    if (ort) {
        g_autoptr(fp_device) base = fp_device_from_keyfile(kf, output, &err);
        if (!base) {
            fp_cli_error("calibrate: %s", err->message);
            return FP_EXIT_BAD;
        }
        rt_source src = {.ort = ort, .native = kf, .save = save, .threads = opts->threads, .ps = opts->user};
        if (!runtime_calibrate(&src, base, output, all_points))
            return FP_EXIT_BAD;
    } else {
        if (!fp_cli_write_device_profile(kf, output, "calibrate"))
            return FP_EXIT_BAD;
        fprintf(stderr, "calibrate: note: this profile rates fuseplan's own kernels; against ONNX Runtime 1.30 such "
                        "a profile put 28 of 192 estimates (15%%) within +-30%% of the measured latency, 178 of 192 "
                        "(93%%) after `fuseplan fit` to measured runs (docs/benchmarks.md). --runtime onnxruntime "
                        "fits it to the runtime's own kernels.\n");
    }
    printf("wrote      %s\n", output);
    return FP_EXIT_OK;
}

/* Whether the modes asked (--check, --micro-models, --runtime, --points, --save-timings,
 * --from-timings, -o) go together; false after printing one line. */
static bool modes_agree(const char *check, const char *micro, const char *runtime, const char *output, bool points,
                        const char *save, const char *from)
{
    if (check && (micro || !runtime || output)) {
        fp_cli_error("calibrate: --check needs --runtime, and takes neither --micro-models nor --output");
        return false;
    }
    if (points && (!(runtime || from) || check || micro)) {
        fp_cli_error("calibrate: --points needs --runtime or --from-timings, and takes neither --check nor "
                     "--micro-models");
        return false;
    }
    if ((save && (!runtime || check || micro)) || (from && (runtime || check || micro || save))) {
        fp_cli_error("calibrate: --save-timings needs --runtime, and --from-timings measures nothing: neither takes "
                     "--check or --micro-models, and --from-timings takes no --runtime or --save-timings");
        return false;
    }
    return true;
}

int fp_cmd_calibrate(int argc, char **argv)
{
    g_autofree char *output = NULL, *kernel = NULL, *runtime = NULL, *lib = NULL, *micro = NULL, *nthreads = NULL,
                    *check = NULL, *save = NULL, *from = NULL;
    double seconds = 1.0;
    int threads = 1, triad_mib = 0;
    gboolean no_cache = FALSE, points = FALSE;
    g_autofree char *points_help = g_strdup_printf(
        "With --runtime or --from-timings: list every micro-model point's kernel time and the written profile's "
        "estimate / "
        "measured (default: only those more than %.0f%% off)",
        RUNTIME_OFF * 100);
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Profile to write (default " DEFAULT_PROFILE ")", "FILE"},
        {"seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds, "Measuring time per phase (default 1)", "S"},
        {"threads", 't', 0, G_OPTION_ARG_STRING, &nthreads,
         "Threads the runtime will use, recorded in the profile: N, or 0 or 'all' for all cores (the physical "
         "ones, ONNX Runtime's default; the default, but 1 with --runtime)",
         "N"},
        {"kernel", 0, 0, G_OPTION_ARG_STRING, &kernel,
         "SGEMM micro-kernel: auto (default), avx512f, avx2-fma, portable", "NAME"},
        {"triad-mib", 0, 0, G_OPTION_ARG_INT, &triad_mib,
         "Triad working set in MiB (default: 4x the last-level cache, 64..512)", "MIB"},
        {"no-cache", 0, 0, G_OPTION_ARG_NONE, &no_cache, "Skip the cache sweep (no [cache] levels)", NULL},
        {"runtime", 0, 0, G_OPTION_ARG_STRING, &runtime,
         "Fit the profile to ONNX Runtime's kernels on this host: onnxruntime (an installed onnxruntime-node or "
         "Python onnxruntime) or onnxruntime=PATH (its libonnxruntime.so)",
         "RUNTIME"},
        {"micro-models", 0, 0, G_OPTION_ARG_FILENAME, &micro,
         "Only write the micro-models --runtime runs to DIR (CASE_N.onnx, N ops), measuring nothing", "DIR"},
        {"check", 0, 0, G_OPTION_ARG_FILENAME, &check,
         "With --runtime: time a sample of the micro-models now and say how far PROFILE's estimates are from "
         "them (does it still hold on this host?), writing nothing",
         "PROFILE"},
        {"points", 0, 0, G_OPTION_ARG_NONE, &points, points_help, NULL},
        {"save-timings", 0, 0, G_OPTION_ARG_FILENAME, &save,
         "With --runtime: also write what it measured to FILE (for --from-timings)", "FILE"},
        {"from-timings", 0, 0, G_OPTION_ARG_FILENAME, &from,
         "Fit the profile again from a file of --save-timings, measuring nothing (the same measurements "
         "under this fuseplan's cost model)",
         "FILE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- measure this machine and write a device profile");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_set_prgname("fuseplan calibrate");
    if (!fp_cli_parse(ctx, "calibrate", &argc, &argv))
        return FP_EXIT_BAD;
    if (argc != 1) {
        fp_cli_error("calibrate: unexpected argument '%s' (see 'fuseplan calibrate --help')", argv[1]);
        return FP_EXIT_BAD;
    }
    if (!modes_agree(check, micro, runtime, output, points, save, from))
        return FP_EXIT_BAD;
    if (from)
        return refit(from, output ? output : DEFAULT_PROFILE, points);
    if (check)
        return check_profile(check, nthreads, runtime);
    if (micro)
        return write_micro_models(micro);
    if (!output)
        output = g_strdup(DEFAULT_PROFILE);
    fp_calibrate_kernel k = FP_CALIBRATE_KERNEL_AUTO;
    if (!threads_option(nthreads, runtime != NULL, &threads) ||
        !check_options(output, seconds, triad_mib, kernel ? kernel : "auto", &k) || !runtime_path(runtime, &lib))
        return FP_EXIT_BAD;
    progress_state ps = {isatty(STDERR_FILENO) == 1, 0, -1};
    fp_calibrate_opts opts = {seconds, threads, (uint64_t)triad_mib << 20, k, progress, &ps, no_cache};
    return calibrate(&opts, lib, output, points, save);
}
