/* report.c - `fuseplan report MODEL`: the stage table (original, after fusion, final), fusion and
 * memory summaries, hotspots and the batch headroom on a device. */
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "cli.h"
#include "frontends/load.h"
#include "passes/memory/headroom.h"
#include "analysis/pipeline.h"
#include "formats/formats.h"
#include "reports/dot.h"
#include "reports/report.h"

typedef struct {
    const fp_report *r;
    const char *format; /* text, markdown, html, dot */
    const fp_formats *fx; /* html: the formats module */
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    if (strcmp(a->format, "markdown") == 0)
        fp_report_markdown(a->r, out);
    else if (strcmp(a->format, "html") == 0)
        a->fx->html(a->r, out);
    else if (strcmp(a->format, "dot") == 0)
        fp_report_dot(a->r, out);
    else
        fp_report_text(a->r, out);
}

/* Symbolic dims of the main graph's inputs, comma-separated, or NULL. Caller frees. */
static char *symbolic_dims(const fp_model *m)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t d = 0; d < v->shape.rank; d++)
            if (v->shape.dims[d].sym && !strstr(s->str, v->shape.dims[d].sym))
                g_string_append_printf(s, "%s%s", s->len ? ", " : "", v->shape.dims[d].sym);
    }
    return g_string_free(s, s->len == 0);
}

typedef struct {
    const char *device, *target, *dtype, *dump_after;
    int top;
    bool no_color, no_headroom;
} report_opts;

/* Headroom last: it re-infers the final graph at other batch sizes. */
static bool headroom(fp_model *m, const fp_device *dev, const fp_cli_model_opts *o, const fp_pipeline_opts *po,
                     const fp_memory_result *plan_at_1, fp_headroom_result *hr, const char **note)
{
    fp_headroom_opts ho = {.capacity = dev->memory_bytes, .reserve = dev->memory_bytes / 10,
                           .batch_dim = o->batch_dim, .mem = po->memory, .plan_at_1 = plan_at_1, .shapes = po->shapes};
    g_autoptr(GError) err = NULL;
    if (fp_pass_headroom(m, &ho, hr, NULL, &err))
        return true;
    *note = err && g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH)
                ? "not computed: the model has no symbolic batch dimension (name one with --batch-dim)"
                : "not computed";
    return false;
}

static int emit_report(const fp_report *rep, const fp_cli_model_opts *o, const char *format)
{
    bool json = strcmp(format, "json") == 0;
    const fp_formats *fx = NULL; /* already loaded by fp_cli_check_format */
    if ((json || strcmp(format, "html") == 0) && !(fx = fp_cli_formats("report", json ? "-f json" : "-f html")))
        return FP_EXIT_BAD;
    if (json) {
        g_autoptr(GError) err = NULL;
        if (fx->report_json(rep, o->output, &err))
            return FP_EXIT_OK;
        fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
        return FP_EXIT_BAD;
    }
    emit_args a = {rep, format, fx};
    return fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

static int run(const char *path, const fp_cli_model_opts *o, const report_opts *ro, const char *format)
{
    fp_dtype what_if = FP_DT_UNDEFINED;
    if (ro->dtype && (what_if = fp_dtype_from_name(ro->dtype)) == FP_DT_UNDEFINED) {
        fp_cli_error("report: --dtype %s: unknown dtype (e.g. fp16, bf16, int8)", ro->dtype);
        return FP_EXIT_BAD;
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = fp_device_load(ro->device ? ro->device : "cpu-avx2", &err);
    if (!dev) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    g_autoptr(fp_target) t = fp_target_load(ro->target ? ro->target : dev->target, &err);
    g_autoptr(fp_model) m = t ? fp_cli_load_for_pipeline(path, &err) : NULL;
    if (!m) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    /* a symbolic batch is bound to 1 unless the user bound the inputs */
    g_autofree char *syms = symbolic_dims(m);
    g_autofree char *batch_note = NULL;
    int64_t batch = o->batch;
    if (!o->batch && !o->inputs && syms) {
        batch = 1;
        batch_note = g_strdup_printf("symbolic input dims: %s; batch (first dim of each input) bound to 1 "
                                     "(--batch N or --input NAME:DIMS to change)", syms);
    }
    g_autoptr(GHashTable) shapes = fp_cli_input_shapes(m, o->inputs, &err);
    if (!shapes) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    /* the final plan's liveness, resized by the headroom search at other batches */
    g_autoptr(fp_memory_reuse) reuse = fp_memory_reuse_new(NULL);
    fp_pipeline_opts po = {
        .shapes = {.input_shapes = shapes, .batch = batch, .batch_dim = o->batch_dim},
        .target = t,
        .device = dev,
        .memory = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN, .align = dev->align_bytes,
                   .reuse = reuse},
        .what_if = what_if,
        .dump_after = ro->dump_after,
        .dump_out = stderr,
    };
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autofree char *warning = NULL;
    if (!fp_cli_check_ops(path, m, o->strict, diag, &warning))
        return FP_EXIT_BAD;
    fp_pipeline_result res;
    if (!fp_pipeline_run(m, &po, &res, diag, &err)) {
        fp_cli_error("%s: %s", path, err->message);
        fp_pipeline_result_clear(&res);
        return FP_EXIT_BAD;
    }
    if (warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", warning);
    fp_headroom_result hr = {0};
    const char *note = ro->no_headroom ? NULL : "not computed with --input (use fuseplan headroom)";
    /* the DOT graph shows no headroom and labels edges with the shapes of this run */
    bool have = !ro->no_headroom && !o->inputs && strcmp(format, "dot") != 0 &&
                headroom(m, dev, o, &po, batch == 1 ? res.memory : NULL, &hr, &note);
    fp_report rep = {.model = m, .target = t, .device = dev, .res = &res, .diag = diag, .batch_note = batch_note,
                     .what_if = what_if, .headroom = have ? &hr : NULL, .headroom_note = note,
                     .top = (unsigned)MAX(ro->top, 0), .verbose = o->verbose, .color = !ro->no_color && !o->output && isatty(STDOUT_FILENO)};
    int rc = emit_report(&rep, o, format);
    fp_pipeline_result_clear(&res);
    return rc;
}

int fp_cmd_report(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    g_autofree char *device = NULL, *target = NULL, *dtype = NULL, *dump_after = NULL;
    gint top = 10;
    gboolean no_color = FALSE, no_headroom = FALSE;
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target, "Fusion target (default: the device's)", "T"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &dtype, "What-if: compute float32 ops in this dtype (fp16, bf16)", "DT"},
        {"dump-after", 0, 0, G_OPTION_ARG_STRING, &dump_after, "Print the IR after PASS (" FP_PIPELINE_PASSES ")", "PASS"},
        {"top", 0, 0, G_OPTION_ARG_INT, &top, "Hotspots listed (default 10)", "N"},
        {"no-color", 0, 0, G_OPTION_ARG_NONE, &no_color, "No ANSI colour even on a terminal", NULL},
        {"no-headroom", 0, 0, G_OPTION_ARG_NONE, &no_headroom, "Skip the batch-headroom search", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - stage table, fusions, memory, hotspots, headroom");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o);
    g_set_prgname("fuseplan report");
    int rc = FP_EXIT_BAD;
    const char *format = NULL;
    if (!fp_cli_parse(ctx, "report", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("report: expected one MODEL argument (see 'fuseplan report --help')");
    else if (!fp_cli_check_format("report", (format = o.format ? o.format : "text"), "text,markdown,json,html,dot"))
        ;
    else if (dump_after && !fp_pipeline_has_pass(dump_after))
        fp_cli_error("report: --dump-after %s: no such pass (one of: %s)", dump_after, FP_PIPELINE_PASSES);
    else {
        report_opts ro = {device, target, dtype, dump_after, top, no_color, no_headroom};
        rc = run(argv[1], &o, &ro, format);
    }
    fp_cli_model_opts_clear(&o);
    return rc;
}
