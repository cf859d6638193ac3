/* fit.c - `fuseplan fit --model M --profile P [...] -o fitted.ini`: fits a device profile's
 * per-op-class efficiencies, bandwidth efficiency and launch overhead to measured profiles
 * (calibration/fit.c), prints in-sample and leave-one-model-out errors, and writes the fitted profile
 * (a normal device .ini, loadable with --device). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "calibration/fit_rows.h"
#include "calibration/pair.h"
#include "cli.h"
#include "frontends/profile/profile.h"
#include "reports/compare.h"

typedef struct {
    char **models, **profiles; /* --model, --profile (paired in order) */
    char *pairs;               /* --pairs FILE */
    char *device, *target, *stage, *output, *format, *objective;
    double prior;
    gboolean no_cv;
} fit_opts;

/* Adds the lines of `path` ("MODEL PROFILE [RUN_US]", '#' comments) to models/profiles/runs
 * (RUN_US: the model's whole run measured without a profiler, microseconds; NAN when absent). */
static bool read_pairs(const char *path, GPtrArray *models, GPtrArray *profiles, GArray *runs)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &text, NULL, &err)) {
        fp_cli_error("%s", err->message);
        return false;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        g_strstrip(lines[i]);
        if (!*lines[i] || lines[i][0] == '#')
            continue;
        g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", -1);
        GPtrArray *words = g_ptr_array_new();
        for (guint k = 0; f[k]; k++)
            if (*f[k])
                g_ptr_array_add(words, f[k]);
        double run = NAN;
        char *end = NULL;
        bool ok = words->len == 2 || words->len == 3;
        if (ok && words->len == 3) {
            run = g_ascii_strtod(words->pdata[2], &end);
            ok = end != words->pdata[2] && *end == 0 && run > 0 && run < 1e9;
        }
        if (ok) {
            g_ptr_array_add(models, g_strdup(words->pdata[0]));
            g_ptr_array_add(profiles, g_strdup(words->pdata[1]));
            g_array_append_val(runs, run);
        }
        g_ptr_array_free(words, TRUE);
        if (!ok) {
            fp_cli_error("%s: line %u: expected 'MODEL PROFILE [RUN_US]' (RUN_US a time > 0 in microseconds), got '%s'",
                         path, i + 1, lines[i]);
            return false;
        }
    }
    return true;
}

/* Reads one pair into d and *pair: the profile's kernels as rows, or with run_us (finite) the
 * model's whole run (the profile then tells only the stage and the shapes). False after printing
 * the error. */
static bool read_one(const char *model, const char *profile, double run_us, const fp_device *base, const fp_target *t,
                     bool by_level, fp_pair_stage stage, fp_fit_data *d, fp_fit_pair *pair)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = fp_profile_load(profile, &err);
    if (!p) {
        fp_cli_error("%s", err->message);
        return false;
    }
    g_autofree char *unusable = fp_pair_profile_unusable(p);
    if (unusable) {
        fp_cli_error("%s", unusable);
        return false;
    }
    fp_analysis_opts ao = {.what_if = FP_DT_UNDEFINED};
    fp_pair pr;
    bool ok = fp_pair_run(&pr, model, p, base, t, by_level, &ao, stage, &err);
    if (!ok) {
        fp_cli_error("%s", err->message);
    } else if (pr.match->matched == 0) {
        g_autofree char *msg = fp_pair_no_match_message(model, pr.final, p);
        fp_cli_error("%s", msg);
        ok = false;
    } else {
        fp_cli_analysis_warnings(pr.a);
        fp_fit_rows_add(d, model, pr.match, base, run_us * 1e-6);
        *pair = (fp_fit_pair){.model = model,
                              .profile = profile,
                              .stage = fp_pair_stage_name(pr.stage),
                              .kernels = pr.match->counted,
                              .matched = pr.match->matched,
                              .time_share = pr.match->measured_s > 0
                                                ? pr.match->measured_matched_s / pr.match->measured_s
                                                : 0};
    }
    fp_pair_clear(&pr);
    return ok;
}

/* Writes the fitted profile atomically, after checking that it loads. */
static bool write_profile(const fp_fit_result *f, const fp_fit_data *d, const char *path)
{
    fp_device dev = *f->device;
    g_autofree char *desc = g_strdup_printf("%s, fitted to %u measured models (fuseplan fit)", f->device->description,
                                            d->models->len);
    dev.description = desc;
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(&dev);
    GString *c = g_string_new(" Written by `fuseplan fit`: [efficiency] and launch_overhead fitted (least squares on\n"
                              " log time, docs/profiles.md) to the profiles of:");
    for (guint m = 0; m < d->models->len; m++)
        g_string_append_printf(c, "\n   %s", (const char *)d->models->pdata[m]);
    g_key_file_set_comment(kf, NULL, NULL, c->str, NULL);
    g_string_free(c, TRUE);
    return fp_cli_write_device_profile(kf, path, "fit");
}

typedef struct {
    const fp_fit_report *r;
} emit_args;

static void emit(FILE *out, gpointer data) { fp_report_fit_text(((emit_args *)data)->r, out); }

static int run(const fit_opts *fo, GPtrArray *models, GPtrArray *profiles, GArray *runs, fp_pair_stage stage)
{
    fp_fit_opts opts = {.prior = fo->prior, .no_cv = fo->no_cv};
    if (fo->objective && !fp_fit_objective_parse(fo->objective, &opts.objective)) {
        fp_cli_error("fit: --objective %s: one of models, rows, share, e2e", fo->objective);
        return FP_EXIT_BAD;
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = fp_device_load(fo->device ? fo->device : "cpu-avx2", &err);
    g_autoptr(fp_target) t = base ? fp_target_load(fo->target ? fo->target : base->target, &err) : NULL;
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    g_autoptr(fp_fit_data) d = fp_fit_data_new();
    g_autofree fp_fit_pair *pairs = g_new0(fp_fit_pair, models->len + 1);
    for (guint i = 0; i < models->len; i++)
        if (!read_one(models->pdata[i], profiles->pdata[i], g_array_index(runs, double, i), base, t, !fo->target, stage,
                      d, &pairs[i]))
            return FP_EXIT_BAD;

    g_autoptr(fp_fit_result) f = fp_fit_run(d, base, &opts, &err);
    if (!f) {
        fp_cli_error("fit: %s", err->message);
        return FP_EXIT_BAD;
    }
    if (!write_profile(f, d, fo->output))
        return FP_EXIT_BAD;
    fp_fit_report rep = {.data = d, .fit = f, .base = base, .pairs = pairs, .output = fo->output};
    if (fo->format && strcmp(fo->format, "json") == 0) {
        if (!fp_report_fit_json(&rep, NULL, &err)) {
            fp_cli_error("stdout: %s", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {&rep};
    return fp_cli_emit_text(NULL, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

static void fit_opts_clear(fit_opts *fo)
{
    g_strfreev(fo->models);
    g_strfreev(fo->profiles);
    g_free(fo->pairs);
    g_free(fo->device);
    g_free(fo->target);
    g_free(fo->stage);
    g_free(fo->output);
    g_free(fo->format);
    g_free(fo->objective);
}

/* Checks the options and collects the pairs; false after printing the error. */
static bool collect(const fit_opts *fo, int argc, GPtrArray *models, GPtrArray *profiles, GArray *runs,
                    fp_pair_stage *stage)
{
    guint nm = fo->models ? g_strv_length(fo->models) : 0, np = fo->profiles ? g_strv_length(fo->profiles) : 0;
    if (argc != 1) {
        fp_cli_error("fit: unexpected argument (models and profiles go with --model and --profile)");
        return false;
    }
    if (nm != np) {
        fp_cli_error("fit: %u --model but %u --profile: give them in pairs", nm, np);
        return false;
    }
    if (!fo->output) {
        fp_cli_error("fit: -o FILE (the fitted device profile) is required");
        return false;
    }
    if (!fp_cli_check_format("fit", fo->format ? fo->format : "text", "text,json"))
        return false;
    if (!fp_pair_stage_parse(fo->stage ? fo->stage : "auto", stage)) {
        fp_cli_error("fit: --stage %s: one of auto, original, fused", fo->stage);
        return false;
    }
    if (fo->prior < 0) {
        fp_cli_error("fit: --prior must be 0 or more");
        return false;
    }
    for (guint i = 0; i < nm; i++) {
        double none = NAN;
        g_ptr_array_add(models, g_strdup(fo->models[i]));
        g_ptr_array_add(profiles, g_strdup(fo->profiles[i]));
        g_array_append_val(runs, none);
    }
    if (fo->pairs && !read_pairs(fo->pairs, models, profiles, runs))
        return false;
    if (models->len == 0) {
        fp_cli_error("fit: no measurement: give --model M --profile P (repeatable) or --pairs FILE");
        return false;
    }
    return true;
}

int fp_cmd_fit(int argc, char **argv)
{
    fit_opts fo = {0};
    GOptionEntry entries[] = {
        {"model", 'm', 0, G_OPTION_ARG_FILENAME_ARRAY, &fo.models, "A model (repeatable; pairs with --profile)",
         "MODEL"},
        {"profile", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY, &fo.profiles, "Its measured profile (repeatable)", "FILE"},
        {"pairs", 0, 0, G_OPTION_ARG_FILENAME, &fo.pairs,
         "More pairs from a file, one 'MODEL PROFILE [RUN_US]' per line (RUN_US: a whole run timed without profiler)",
         "FILE"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &fo.output, "Write the fitted device profile (.ini) here", "FILE"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &fo.device, "Base device profile (default cpu-avx2)", "BASE"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &fo.target, "Fusion target (default: the device's)", "T"},
        {"stage", 0, 0, G_OPTION_ARG_STRING, &fo.stage, "Graph the profiles ran: auto (default), original, fused",
         "STAGE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &fo.format, "Output format: text (default) or json", "FMT"},
        {"objective", 0, 0, G_OPTION_ARG_STRING, &fo.objective,
         "Row weights: models (default: every model alike), rows, share (of the model's time), e2e", "OBJ"},
        {"prior", 0, 0, G_OPTION_ARG_DOUBLE, &fo.prior, "Weight of the pull toward the base values (default 1e-3)",
         "W"},
        {"no-cv", 0, 0, G_OPTION_ARG_NONE, &fo.no_cv, "Skip leave-one-model-out cross-validation", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext)
        ctx = g_option_context_new("- fit a device profile's efficiencies and launch overhead to measured profiles");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_set_prgname("fuseplan fit");
    g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) profiles = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(double));
    fp_pair_stage stage = FP_PAIR_AUTO;
    int rc = FP_EXIT_BAD;
    if (fp_cli_parse(ctx, "fit", &argc, &argv) && collect(&fo, argc, models, profiles, runs, &stage))
        rc = run(&fo, models, profiles, runs, stage);
    fit_opts_clear(&fo);
    return rc;
}
