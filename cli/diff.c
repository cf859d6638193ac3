/* diff.c - `fuseplan diff OLD NEW`: two models analyzed with the same options and compared;
 * --fail-on-regression exits 1 when NEW is worse (reports/diff.h defines "worse"). */
#include <math.h>
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "reports/report.h"
#include "reports/diff.h"
#include "reports/formats.h"

typedef struct {
    const fp_diff *d;
    bool color;
} text_args;

static void emit(FILE *out, gpointer data)
{
    const text_args *t = data;
    fp_diff_text(t->d, out, t->color);
}

typedef struct {
    char *device, *target;
    gboolean fail, no_color;
    double tolerance; /* percent */
} diff_opts;

static int run(const char *old_path, const char *new_path, const fp_cli_model_opts *o, const fp_cli_resolved *r,
               const diff_opts *dopt)
{
    const char *format = r->format;
    fp_analysis_opts ao = r->ao;
    ao.device = dopt->device;
    ao.target = dopt->target;
    g_autoptr(fp_analysis) a = fp_cli_analyze(old_path, &ao);
    g_autoptr(fp_analysis) b = a ? fp_cli_analyze(new_path, &ao) : NULL;
    int rc = FP_EXIT_BAD;
    if (b) {
        fp_report ra = fp_report_of(a), rb = fp_report_of(b);
        g_autoptr(fp_diff) d = fp_diff_compute(&ra, &rb, dopt->tolerance / 100);
        bool written = false;
        if (strcmp(format, "json") == 0) {
            const fp_formats *fx = fp_cli_formats("diff", "-f json");
            g_autoptr(GError) err = NULL;
            if (fx && !(written = fx->diff_json(d, o->output, &err)))
                fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
        } else {
            text_args t = {d, fp_cli_color(dopt->no_color, o->output)};
            written = fp_cli_emit_text(o->output, emit, &t);
        }
        rc = !written ? FP_EXIT_BAD : dopt->fail && d->regressions->len ? FP_EXIT_GATE : FP_EXIT_OK;
    }
    return rc;
}

int fp_cmd_diff(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    diff_opts dopt = {.tolerance = 100 * FP_DIFF_TOLERANCE};
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &dopt.device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &dopt.target, "Fusion target (default: the device's)", "T"},
        {"fail-on-regression", 0, 0, G_OPTION_ARG_NONE, &dopt.fail,
         "Exit 1 when NEW is worse: latency or activation memory up by more than the tolerance, or a fusion lost",
         NULL},
        {"tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &dopt.tolerance, "Relative increase tolerated, percent (default 1)",
         "PCT"},
        {"no-color", 0, 0, G_OPTION_ARG_NONE, &dopt.no_color, "No ANSI colour even on a terminal", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("OLD NEW - compare two exports of a model");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS, NULL);
    fp_cli_set_prgname("fuseplan diff");
    int rc = FP_EXIT_BAD;
    fp_cli_resolved r;
    if (!fp_cli_parse(ctx, "diff", &argc, &argv))
        ;
    else if (argc != 3)
        fp_cli_error("diff: expected OLD and NEW model arguments (see 'fuseplan diff --help')");
    else if (!isfinite(dopt.tolerance) || dopt.tolerance < 0)
        fp_cli_error("diff: --tolerance %g: expected a percentage >= 0", dopt.tolerance);
    else if (fp_cli_model_opts_resolve(&o, "diff", "text,json", 0, &r))
        rc = run(argv[1], argv[2], &o, &r, &dopt);
    g_free(dopt.device);
    g_free(dopt.target);
    fp_cli_model_opts_clear(&o);
    return rc;
}
