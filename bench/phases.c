/* phases.c - fp_bench_phases: times each phase of an analysis in-process, for bench/run.sh (never
 * part of the product build or of make test).
 *
 *   fp_bench_phases MODEL [--batch N] [--no-report]
 *
 * Runs fp_load_model, fp_pass_shapes, fp_pass_metrics and (unless --no-report) builds and
 * serializes the `shapes` JSON report in memory, as `fuseplan shapes -f json` does. Prints one
 * line of key=value pairs: wall and CPU milliseconds per phase, the peak resident set size before
 * the model is read and after each phase (getrusage: the peak so far, in KiB) and the node count.
 * Exit 2 when the model cannot be read.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "frontends/load.h"
#include "passes/metrics.h"
#include "passes/shapes.h"
#include "reports/shapes.h"

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

/* Wall milliseconds since *t (then *t = now); *cpu likewise for CPU time. */
static double ms_since(gint64 *t, double *cpu, double *cpu_delta)
{
    gint64 now = g_get_monotonic_time();
    double ms = (double)(now - *t) / 1000.0, c = cpu_ms();
    *t = now;
    *cpu_delta = c - *cpu;
    *cpu = c;
    return ms;
}

int main(int argc, char **argv)
{
    gint64 batch = 1;
    gboolean no_report = FALSE;
    GOptionEntry entries[] = {
        {"batch", 'b', 0, G_OPTION_ARG_INT64, &batch, "Batch size bound before shape inference (default 1)", "N"},
        {"no-report", 0, 0, G_OPTION_ARG_NONE, &no_report, "Skip the JSON report phase", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - time the phases of an analysis");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2) {
        fprintf(stderr, "fp_bench_phases: %s\n", err ? err->message : "expected one MODEL argument");
        return 2;
    }
    long rss_start = peak_kib(); /* the process before the model: binary, libraries, GLib */
    gint64 t = g_get_monotonic_time(), t0 = t;
    double cpu = cpu_ms(), cpu0 = cpu, load_cpu = 0, shapes_cpu = 0, metrics_cpu = 0, report_cpu = 0;
    g_autoptr(fp_model) m = fp_load_model(argv[1], &err);
    if (!m) {
        fprintf(stderr, "fp_bench_phases: %s\n", err->message);
        return 2;
    }
    double load = ms_since(&t, &cpu, &load_cpu);
    long rss_load = peak_kib();
    g_autoptr(fp_diag) diag = fp_diag_new();
    fp_shape_opts so = {.batch = batch};
    if (!fp_pass_shapes(m, &so, diag, &err)) {
        fprintf(stderr, "fp_bench_phases: %s: %s\n", argv[1], err->message);
        return 2;
    }
    double shapes = ms_since(&t, &cpu, &shapes_cpu);
    long rss_shapes = peak_kib();
    fp_pass_metrics(m, diag);
    double metrics = ms_since(&t, &cpu, &metrics_cpu);
    long rss_metrics = peak_kib();
    double report = 0;
    gsize json_bytes = 0;
    if (!no_report) {
        g_autoptr(JsonNode) root = fp_report_shapes_json(m, diag);
        g_autoptr(JsonGenerator) gen = json_generator_new();
        json_generator_set_root(gen, root);
        json_generator_set_pretty(gen, TRUE);
        json_generator_set_indent(gen, 2);
        g_free(json_generator_to_data(gen, &json_bytes));
        report = ms_since(&t, &cpu, &report_cpu);
    }
    long rss_report = peak_kib();
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    printf("nodes=%" G_GUINT64_FORMAT " load_ms=%.3f shapes_ms=%.3f metrics_ms=%.3f report_ms=%.3f total_ms=%.3f "
           "load_cpu_ms=%.3f shapes_cpu_ms=%.3f metrics_cpu_ms=%.3f report_cpu_ms=%.3f total_cpu_ms=%.3f "
           "peak_kib_start=%ld peak_kib_load=%ld peak_kib_shapes=%ld peak_kib_metrics=%ld peak_kib_report=%ld "
           "json_bytes=%zu\n",
           st.nodes, load, shapes, metrics, report, (double)(g_get_monotonic_time() - t0) / 1000.0, load_cpu,
           shapes_cpu, metrics_cpu, report_cpu, cpu_ms() - cpu0, rss_start,
           rss_load, rss_shapes, rss_metrics, rss_report, (size_t)json_bytes);
    return 0;
}
