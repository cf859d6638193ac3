/* compare.c - `fuseplan compare MODEL --profile FILE`: fuseplan's per-op estimates next to a
 * measured profile (matched by name, then op type and shapes: calibration/pair.h), error
 * statistics, the worst outliers with their roofline bound, and the fusions the real compiler
 * performed next to the predicted ones. */
#include <string.h>

#include "analyze.h"
#include "calibration/pair.h"
#include "cli.h"
#include "frontends/profile/profile.h"
#include "reports/compare.h"

#define DEFAULT_TOP 20
#define DEFAULT_OUTLIERS 5

/* ---------------------------------------------------------------- command */

typedef struct {
    const fp_compare_report *r;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_compare_text(a->r, out);
}

typedef struct {
    const char *profile, *device, *target, *stage;
    int outliers;
} compare_opts;

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r, const compare_opts *co)
{
    const char *format = r->format;
    fp_pair_stage stage;
    if (!fp_pair_stage_parse(co->stage ? co->stage : "auto", &stage)) {
        fp_cli_error("compare: --stage %s: one of auto, original, fused", co->stage);
        return FP_EXIT_BAD;
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = fp_profile_load(co->profile, &err);
    g_autoptr(fp_device) dev = p ? fp_device_load(co->device ? co->device : "cpu-avx2", &err) : NULL;
    g_autoptr(fp_target) t = dev ? fp_target_load(co->target ? co->target : dev->target, &err) : NULL;
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    g_autofree char *unusable = fp_pair_profile_unusable(p);
    if (unusable) {
        fp_cli_error("%s", unusable);
        return FP_EXIT_BAD;
    }
    fp_pair pr;
    if (!fp_pair_run(&pr, path, p, dev, t, !co->target, &r->ao, stage, &err)) {
        fp_cli_error("%s", err->message);
        fp_pair_clear(&pr);
        return FP_EXIT_BAD;
    }
    int rc = FP_EXIT_OK;
    if (pr.match->matched == 0) {
        g_autofree char *msg = fp_pair_no_match_message(path, pr.final, p);
        fp_cli_error("%s", msg);
        rc = FP_EXIT_BAD;
    } else {
        fp_cli_analysis_warnings(pr.a); /* after the analysis: a failing run prints its one error line only */
        fp_compare_report rep = {.model_path = path,
                                 .profile = p,
                                 .device = dev,
                                 .target = pr.target,
                                 .stage = fp_pair_stage_name(pr.stage),
                                 .stage_note = pr.stage_note,
                                 .inputs_note = pr.inputs_note,
                                 .match = pr.match,
                                 .top = r->top,
                                 .outliers = (unsigned)co->outliers,
                                 .diag = pr.diag,
                                 .verbose = o->verbose};
        if (strcmp(format, "json") == 0) {
            if (!fp_report_compare_json(&rep, o->output, &err)) {
                fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
                rc = FP_EXIT_BAD;
            }
        } else {
            emit_args a = {&rep};
            rc = fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
        }
    }
    fp_pair_clear(&pr);
    return rc;
}

int fp_cmd_compare(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    g_autofree char *profile = NULL, *device = NULL, *target = NULL, *stage = NULL;
    gint outliers = DEFAULT_OUTLIERS;
    GOptionEntry entries[] = {
        {"profile", 'p', 0, G_OPTION_ARG_FILENAME, &profile, "Measured profile (ORT JSON, Ascend CSV, Chrome trace)",
         "FILE"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target, "Fusion target (default: the device's)", "T"},
        {"stage", 0, 0, G_OPTION_ARG_STRING, &stage,
         "Graph the profile ran: original (no fusion, e.g. ORT level disabled), fused (after the target's "
         "fusions, e.g. ORT extended) or auto (default: the one the kernels match better)",
         "STAGE"},
        {"outliers", 0, 0, G_OPTION_ARG_INT, &outliers, "Worst estimates listed (default 5)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "MODEL - estimated vs measured time per op, error statistics, fusions the compiler made");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS | FP_CLI_TOP,
                             "Rows listed, longest measured first (default 20; 0: all)");
    fp_cli_set_prgname("fuseplan compare");
    int rc = FP_EXIT_BAD;
    fp_cli_resolved r;
    if (!fp_cli_parse(ctx, "compare", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("compare: expected one MODEL argument (see 'fuseplan compare --help')");
    else if (!profile)
        fp_cli_error("compare: --profile FILE is required");
    else if (outliers < 0)
        fp_cli_error("compare: --outliers %d: must be 0 or more", outliers);
    else if (fp_cli_model_opts_resolve(&o, "compare", "text,json", DEFAULT_TOP, &r)) {
        compare_opts co = {profile, device, target, stage, outliers};
        rc = run(argv[1], &o, &r, &co);
    }
    fp_cli_model_opts_clear(&o);
    return rc;
}
