/* phases.c - fp_bench_phases: times the phases of `fuseplan report` in-process, for bench/run.sh
 * (never part of the product build or of make test).
 *
 *   fp_bench_phases MODEL [--device NAME] [--no-headroom]
 *
 * Runs what `fuseplan report MODEL` runs, as cli/report.c does it: fp_load_model, the pass
 * pipeline (fp_pipeline_run: shapes, metrics, fuse, layout, memory, cost; a symbolic batch bound to
 * 1), the batch headroom on the device (fp_pass_headroom, given the pipeline's plan at batch 1) and
 * the text report written to a memory buffer. Prints one line of key=value pairs: wall and CPU
 * milliseconds per phase, the kernel CPU time of the whole run, the peak resident set size before
 * the model is read and after each phase (getrusage: the peak so far, in KiB), the node count as
 * read and the plans headroom made. Exit 2 when the model cannot be read or a pass fails.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "frontends/load.h"
#include "cli/platform.h"
#include "passes/memory/headroom.h"
#include "analysis/pipeline.h"
#include "reports/report.h"

static long peak_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* CPU time of the process (user + system) in milliseconds. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Kernel CPU time of the process (every thread) in milliseconds: on a virtual machine mostly the
 * clearing of pages touched for the first time, whose cost depends on whether the host still backs
 * them (docs/benchmarks.md). */
static double sys_ms(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
}

/* One phase: wall and CPU milliseconds, peak RSS after it. */
typedef struct {
    const char *name;
    double ms, cpu_ms;
    long peak_kib;
} phase;

typedef struct {
    gint64 t;
    double cpu;
} clock_mark;

static clock_mark mark(void) { return (clock_mark){g_get_monotonic_time(), cpu_ms()}; }

/* Closes the phase begun at *c (and begins the next one). */
static void end_phase(phase *p, const char *name, clock_mark *c)
{
    clock_mark now = mark();
    *p = (phase){name, (double)(now.t - c->t) / 1000.0, now.cpu - c->cpu, peak_kib()};
    *c = now;
}

/* Whether some input of the main graph has a symbolic dimension (cli/report.c binds it to 1). */
static bool symbolic(const fp_model *m)
{
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t d = 0; d < v->shape.rank; d++)
            if (v->shape.dims[d].sym)
                return true;
    }
    return false;
}

static int fail(const char *path, const GError *err)
{
    fprintf(stderr, "fp_bench_phases: %s: %s\n", path, err ? err->message : "failed");
    return 2;
}

int main(int argc, char **argv)
{
    g_autofree char *device = NULL;
    gboolean no_headroom = FALSE;
    fp_platform_tune(); /* as fuseplan's main does */
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile (default cpu-avx2)", "NAME"},
        {"no-headroom", 0, 0, G_OPTION_ARG_NONE, &no_headroom, "Skip the batch headroom", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - time the phases of fuseplan report");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2) {
        fprintf(stderr, "fp_bench_phases: %s\n", err ? err->message : "expected one MODEL argument");
        return 2;
    }
    const char *path = argv[1];
    g_autoptr(fp_device) dev = fp_device_load(device ? device : "cpu-avx2", &err);
    g_autoptr(fp_target) target = dev ? fp_target_load(dev->target, &err) : NULL;
    if (!target)
        return fail(path, err);
    phase ph[4];
    int n = 0;
    long rss_start = peak_kib(); /* the process before the model: binary, libraries, GLib, profiles */
    clock_mark c = mark(), c0 = c;
    double sys0 = sys_ms();
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    if (!m)
        return fail(path, err);
    end_phase(&ph[n++], "load", &c);
    /* the node count as read, for the output: not part of what `report` runs, so off the clocks */
    clock_mark before = mark();
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    clock_mark after = mark();
    c.t += after.t - before.t;
    c.cpu += after.cpu - before.cpu;
    c0.t += after.t - before.t;
    c0.cpu += after.cpu - before.cpu;

    g_autoptr(fp_memory_reuse) reuse = fp_memory_reuse_new(NULL); /* as cli/report.c: the headroom
                                                                      search resizes the final liveness */
    fp_pipeline_opts po = {
        .shapes = {.batch = symbolic(m) ? 1 : 0},
        .target = target,
        .device = dev,
        .memory = {.strategy = FP_MEMPLAN_BEST,
                   .schedule = FP_SCHEDULE_GIVEN,
                   .align = dev->align_bytes,
                   .reuse = reuse},
        .what_if = FP_DT_UNDEFINED,
    };
    g_autoptr(fp_diag) diag = fp_diag_new();
    fp_pipeline_result res;
    if (!fp_pipeline_run(m, &po, &res, diag, &err)) {
        fp_pipeline_result_clear(&res);
        return fail(path, err);
    }
    end_phase(&ph[n++], "pipeline", &c);

    fp_headroom_result hr = {0};
    bool have = false;
    if (!no_headroom) {
        fp_headroom_opts ho = {.capacity = dev->memory_bytes,
                               .reserve = dev->memory_bytes / 10,
                               .mem = po.memory,
                               .plan_at_1 = po.shapes.batch == 1 ? res.memory : NULL,
                               .shapes = po.shapes};
        g_autoptr(GError) herr = NULL;
        have = fp_pass_headroom(m, &ho, &hr, NULL, &herr); /* no batch to vary: reported as such */
    }
    end_phase(&ph[n++], "headroom", &c);

    fp_report rep = {.model = m,
                     .target = target,
                     .device = dev,
                     .res = &res,
                     .diag = diag,
                     .what_if = FP_DT_UNDEFINED,
                     .headroom = have ? &hr : NULL,
                     .headroom_note = "not computed",
                     .top = 10};
    char *text = NULL;
    size_t text_bytes = 0;
    FILE *out = open_memstream(&text, &text_bytes);
    fp_report_text(&rep, out);
    fclose(out);
    g_free(text);
    end_phase(&ph[n++], "report", &c);
    double total = (double)(g_get_monotonic_time() - c0.t) / 1000.0, total_cpu = cpu_ms() - c0.cpu;
    double total_sys = sys_ms() - sys0;
    fp_pipeline_result_clear(&res);

    printf("nodes=%" G_GUINT64_FORMAT " total_ms=%.3f total_cpu_ms=%.3f total_sys_ms=%.3f peak_kib_start=%ld "
           "evaluations=%u text_bytes=%zu",
           st.nodes, total, total_cpu, total_sys, rss_start, hr.evaluations, text_bytes);
    for (int i = 0; i < n; i++)
        printf(" %s_ms=%.3f %s_cpu_ms=%.3f peak_kib_%s=%ld", ph[i].name, ph[i].ms, ph[i].name, ph[i].cpu_ms, ph[i].name,
               ph[i].peak_kib);
    printf("\n");
    return 0;
}
