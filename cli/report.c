/* report.c - `fuseplan report MODEL`: the stage table (original, after fusion, final), fusion and
 * memory summaries, hotspots and the batch headroom on a device. */
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "analysis/pipeline.h"
#include "reports/formats.h"
#include "reports/dot.h"
#include "reports/openmetrics.h"
#include "reports/report.h"

typedef struct {
    const fp_report *r;
    const char *format;   /* text, markdown, html, dot, openmetrics */
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
    else if (strcmp(a->format, "openmetrics") == 0)
        fp_openmetrics_report(a->r, out);
    else
        fp_report_text(a->r, out);
}

typedef struct {
    const char *device, *target, *dtype, *dump_after;
    bool no_color, no_headroom;
} report_opts;

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

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r, const report_opts *ro)
{
    fp_analysis_opts ao = r->ao;
    ao.device = ro->device;
    ao.target = ro->target;
    ao.dump_after = ro->dump_after;
    ao.headroom.on = !ro->no_headroom && strcmp(r->format, "dot") != 0; /* DOT shows no headroom */
    if (ro->dtype && (ao.what_if = fp_dtype_from_name(ro->dtype)) == FP_DT_UNDEFINED) {
        fp_cli_error("--dtype %s: unknown dtype (e.g. fp16, bf16, int8)", ro->dtype);
        return FP_EXIT_BAD;
    }
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    if (!a)
        return FP_EXIT_BAD;
    fp_report rep = fp_report_of(a);
    rep.top = r->top;
    rep.verbose = o->verbose;
    rep.color = fp_cli_color(ro->no_color, o->output);
    return emit_report(&rep, o, r->format);
}

int fp_cmd_report(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_resolved r;
    g_autofree char *device = NULL, *target = NULL, *dtype = NULL, *dump_after = NULL;
    gboolean no_color = FALSE, no_headroom = FALSE;
    g_autofree char *dump_help = g_strdup_printf("Print the IR after PASS (%s)", fp_pipeline_pass_names());
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target, "Fusion target (default: the device's)", "T"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &dtype, "What-if: compute float32 ops in this dtype (fp16, bf16)", "DT"},
        {"dump-after", 0, 0, G_OPTION_ARG_STRING, &dump_after, dump_help, "PASS"},
        {"no-color", 0, 0, G_OPTION_ARG_NONE, &no_color, "No ANSI colour even on a terminal", NULL},
        {"no-headroom", 0, 0, G_OPTION_ARG_NONE, &no_headroom, "Skip the batch-headroom search", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - stage table, fusions, memory, hotspots, headroom");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS | FP_CLI_TOP, "Hotspots listed (default 10; 0: none)");
    g_option_context_set_description(ctx, "Formats (-f): text (default), markdown, json (docs/json.md), html, dot, "
                                          "openmetrics (OpenMetrics text for dashboards, docs/openmetrics.md).");
    fp_cli_set_prgname("fuseplan report");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "report", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("report: expected one MODEL argument (see 'fuseplan report --help')");
    else if (!fp_cli_model_opts_resolve(&o, "report", "text,markdown,json,html,dot,openmetrics", 10, &r))
        ;
    else if (dump_after && !fp_pipeline_has_pass(dump_after))
        fp_cli_error("--dump-after %s: no such pass (one of: %s)", dump_after, fp_pipeline_pass_names());
    else {
        report_opts ro = {device, target, dtype, dump_after, no_color, no_headroom};
        rc = run(argv[1], &o, &r, &ro);
    }
    fp_cli_model_opts_clear(&o);
    return rc;
}
