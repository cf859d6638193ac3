/* ort_run.c - fp_bench_ort_run: ONNX Runtime's inference latency or arena peak without profiling
 * and without a language binding, for the ORT benchmarks (bench/latency_vs_ort.py,
 * bench/speedup_vs_ort.py, bench/runtime_calibration.py, bench/ort_memory.py; never part of the
 * product build or of make test). The library is loaded, sessions are made, bound, run and timed by
 * the product's loader, runtime/ort.c (bench/ort_common.py builds this file with it).
 *
 *   fp_bench_ort_run LIBONNXRUNTIME SPEC
 *
 * One session (CPU EP, sequential execution, one inter-op thread, the level and intra-op threads
 * SPEC names), the SPEC's inputs bound, OrtApi::Run alone timed with CLOCK_MONOTONIC: 10 warm-up
 * runs, then runs until the budget is spent (at least 20). Prints one JSON line:
 * {"runs": N, "kept", "min_us", "median_us", "robust_us", "window_us", "threads", "version", "error": null},
 * where robust_us is the mean of the runs within 1.5x (or 2 us) of the fastest (noise on a shared
 * machine only adds time; bench/ort_robust.py uses the same statistic on profiles) and window_us a
 * run's time in the fastest stretch of runs FP_ORT_WINDOW_S long (runtime/ort.h: the statistic
 * `calibrate --runtime` times its micro-models by). On failure: a
 * JSON line with "error" and "stage", exit status 2.
 *
 * SPEC (text, one item per line):
 *   level disabled|basic|extended|all   (GraphOptimizationLevel 0, 1, 2, 99)
 *   threads 1                           (intra-op threads, default 1)
 *   budget_ms 1000
 *   model PATH
 *   input NAME TYPE RANK D1 .. DRANK DATAFILE   (TYPE: the ONNX TensorProto data type number; DATAFILE:
 *                                               the raw little-endian bytes)
 *   output NAME
 *   mode time|memory                    (default time)
 *   arena on|off                        (the CPU arena, default on; off: plain malloc per tensor)
 *   prepack on|off                      (MLAS weight pre-packing, default on: session.disable_prepacking)
 *
 * Memory mode runs the model twice instead of timing it and prints the counters of the session's
 * CPU allocator (fp_ort_session_stats: InUse, MaxInUse, TotalAllocated, NumAllocs, ...) after
 * session creation and after each run (its outputs still held), beside the process's VmRSS / VmHWM
 * (/proc/self/status, bytes) at the same points:
 *   {"session": {...}, "run1": {...}, "run2": {...}, "rss": [...], "hwm": [...], "version": "1.30.0", "error": null}
 */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ort.h"

#define WARMUP 10
#define MIN_RUNS 20
#define MAX_RUNS 200000

typedef struct {
    char *model, *level, *mode;
    fp_ort_session_opts opts;
    double budget_ms;
    GArray *inputs;    /* fp_ort_tensor, names, dims and data owned by the spec */
    GPtrArray *owned;  /* what the inputs point to */
    GPtrArray *output; /* char *: the outputs fetched */
} spec;

/* Prints {"error": what, "stage": stage} and exits 2. */
G_NORETURN static void fail(const char *stage, const char *what)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "error");
    json_builder_add_string_value(b, what ? what : "unknown");
    json_builder_set_member_name(b, "stage");
    json_builder_add_string_value(b, stage);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = json_to_string(root, FALSE);
    printf("%s\n", text);
    exit(2);
}

static void check(bool ok, const char *stage, GError *err)
{
    if (!ok)
        fail(stage, err ? err->message : NULL);
}

static fp_ort_level level_of(const char *name)
{
    return !strcmp(name, "disabled") ? FP_ORT_DISABLED
           : !strcmp(name, "basic")  ? FP_ORT_BASIC
           : !strcmp(name, "all")    ? FP_ORT_ALL
                                     : FP_ORT_EXTENDED;
}

/* An "input NAME TYPE RANK D1 .. DRANK DATAFILE" line's tensor, its data read. */
static void add_input(spec *sp, const char *line)
{
    g_auto(GStrv) tok = g_strsplit(line, " ", -1);
    guint n = g_strv_length(tok);
    int rank = n >= 4 ? atoi(tok[3]) : -1;
    if (rank < 0 || rank > 16 || n != (guint)rank + 5)
        fail("spec", line);
    int64_t *dims = g_new(int64_t, rank + 1);
    for (int d = 0; d < rank; d++)
        dims[d] = g_ascii_strtoll(tok[4 + d], NULL, 10);
    char *data = NULL;
    gsize bytes = 0;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(tok[4 + rank], &data, &bytes, &err))
        fail("input", err->message);
    fp_ort_tensor t = {g_strdup(tok[1]), atoi(tok[2]), dims, rank, data, bytes};
    g_ptr_array_add(sp->owned, (char *)t.name);
    g_ptr_array_add(sp->owned, dims);
    g_ptr_array_add(sp->owned, data);
    g_array_append_val(sp->inputs, t);
}

/* One line of the spec into sp. */
static void spec_line(spec *sp, const char *line)
{
    static const char *const keys[] = {"model ",     "level ",   "mode ",   "arena ", "prepack ",
                                       "budget_ms ", "threads ", "output ", "input "};
    size_t k = 0;
    while (k < G_N_ELEMENTS(keys) && !g_str_has_prefix(line, keys[k]))
        k++;
    const char *v = k < G_N_ELEMENTS(keys) ? line + strlen(keys[k]) : NULL;
    switch (k) {
    case 0:
        g_free(sp->model), sp->model = g_strdup(v);
        break;
    case 1:
        g_free(sp->level), sp->level = g_strdup(v);
        break;
    case 2:
        g_free(sp->mode), sp->mode = g_strdup(v);
        break;
    case 3:
        sp->opts.no_arena = !strcmp(v, "off");
        break;
    case 4:
        sp->opts.no_prepack = !strcmp(v, "off");
        break;
    case 5:
        sp->budget_ms = g_ascii_strtod(v, NULL);
        break;
    case 6:
        sp->opts.threads = atoi(v);
        break;
    case 7:
        g_ptr_array_add(sp->output, g_strdup(v));
        break;
    case 8:
        add_input(sp, line);
        break;
    default:
        break; /* blank lines and unknown items */
    }
}

static void read_spec(spec *sp, const char *path)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &text, NULL, &err))
        fail("spec", err->message);
    *sp = (spec){.level = g_strdup("extended"), .mode = g_strdup("time"), .budget_ms = 1000, .opts.threads = 1};
    sp->inputs = g_array_new(FALSE, FALSE, sizeof(fp_ort_tensor));
    sp->owned = g_ptr_array_new_with_free_func(g_free);
    sp->output = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (size_t i = 0; lines[i]; i++)
        spec_line(sp, lines[i]);
    if (!sp->model || sp->opts.threads < 1)
        fail("spec", !sp->model ? "no model" : "threads must be at least 1");
    sp->opts.level = level_of(sp->level);
}

/* One of /proc/self/status's fields (kB) in bytes; -1 when missing. */
static gint64 proc_status_bytes(const char *field)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents("/proc/self/status", &text, NULL, NULL))
        return -1;
    g_autofree char *key = g_strconcat("\n", field, ":", NULL);
    const char *at = strstr(text, key);
    return at ? g_ascii_strtoll(at + strlen(key), NULL, 10) * 1024 : -1;
}

static void add_int(JsonBuilder *b, const char *name, gint64 v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

/* The allocator's counters as member `name`, an object of every key fp_ort_session_stats gives. */
static void add_stats(JsonBuilder *b, const char *name, fp_ort_session *s)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GArray) st = fp_ort_session_stats(s, &err);
    check(st != NULL, "stats", err);
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    for (guint i = 0; i < st->len; i++)
        add_int(b, g_array_index(st, fp_ort_stat, i).key, g_array_index(st, fp_ort_stat, i).value);
    json_builder_end_object(b);
}

static void add_ints(JsonBuilder *b, const char *name, const gint64 *v, int n)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (int i = 0; i < n; i++)
        json_builder_add_int_value(b, v[i]);
    json_builder_end_array(b);
}

/* Memory mode: two runs, the allocator's counters and the RSS after creation and after each. */
static void measure_memory(JsonBuilder *b, fp_ort_session *s, gint64 rss0)
{
    gint64 rss[3] = {proc_status_bytes("VmRSS")}, hwm[3] = {proc_status_bytes("VmHWM")};
    add_int(b, "rss_before_session", rss0);
    add_stats(b, "session", s);
    for (int r = 1; r <= 2; r++) {
        g_autoptr(GError) err = NULL;
        check(fp_ort_session_run(s, &err), "run", err);
        add_stats(b, r == 1 ? "run1" : "run2", s); /* the outputs are still held here */
        fp_ort_session_release(s);
        rss[r] = proc_status_bytes("VmRSS");
        hwm[r] = proc_status_bytes("VmHWM");
    }
    add_ints(b, "rss", rss, 3);
    add_ints(b, "hwm", hwm, 3);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void add_double(JsonBuilder *b, const char *name, double v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_double_value(b, v);
}

/* Time mode: the runs' count, fastest, median and robust mean (us). */
static void measure_time(JsonBuilder *b, fp_ort_session *s, const spec *sp)
{
    g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GError) err = NULL;
    check(fp_ort_session_times(s, CLOCK_MONOTONIC, WARMUP, MIN_RUNS, MAX_RUNS, sp->budget_ms * 1e-3, t, &err), "run",
          err);
    double window = fp_ort_window_best((const double *)t->data, t->len, FP_ORT_WINDOW_S) * 1e6;
    g_array_sort(t, cmp_double);
    double lo = g_array_index(t, double, 0) * 1e6, limit = MAX(lo * 1.5, lo + 2), sum = 0;
    int kept = 0;
    for (guint i = 0; i < t->len && g_array_index(t, double, i) * 1e6 <= limit; i++, kept++)
        sum += g_array_index(t, double, i) * 1e6;
    add_int(b, "runs", t->len);
    add_int(b, "kept", kept);
    add_double(b, "min_us", lo);
    add_double(b, "median_us", g_array_index(t, double, t->len / 2) * 1e6);
    add_double(b, "robust_us", sum / kept);
    add_double(b, "window_us", window);
    add_int(b, "threads", sp->opts.threads);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBONNXRUNTIME SPEC\n", argv[0]);
        return 2;
    }
    spec sp;
    read_spec(&sp, argv[2]);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_ort) ort = fp_ort_open(argv[1], &err);
    check(ort != NULL, "load", err);
    gint64 rss0 = proc_status_bytes("VmRSS");
    g_autoptr(fp_ort_session) s = fp_ort_session_new(ort, sp.model, NULL, &sp.opts, &err);
    check(s != NULL, "session", err);
    check(fp_ort_session_bind(s, (const fp_ort_tensor *)(void *)sp.inputs->data, (int)sp.inputs->len,
                              (const char *const *)sp.output->pdata, (int)sp.output->len, &err),
          "input tensor", err);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    if (!strcmp(sp.mode, "memory"))
        measure_memory(b, s, rss0);
    else
        measure_time(b, s, &sp);
    json_builder_set_member_name(b, "version");
    json_builder_add_string_value(b, fp_ort_version(ort));
    json_builder_set_member_name(b, "error");
    json_builder_add_null_value(b);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = json_to_string(root, FALSE);
    printf("%s\n", text);
    g_clear_pointer(&s, fp_ort_session_free);
    return 0;
}
