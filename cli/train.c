/* train.c - `fuseplan train MODEL`: the memory of a training step on an exported forward graph
 * (what backward saves, parameters, gradients, optimizer state, the peak) and the training
 * headroom. */
#include <string.h>

#include "analysis/training.h"
#include "analyze.h"
#include "cli.h"
#include "reports/formats.h"
#include "memory_opts.h"
#include "reports/train.h"

typedef struct {
    char **inputs, **dims;
    gint64 batch;
    char *batch_dim, *device, *optimizer, *precision, *reserve, *budget, *format, *output;
    gint top;
    gboolean no_headroom;
} train_opts;

typedef struct {
    const fp_train_report *r;
    const fp_formats *fx; /* html: the formats module; text: NULL */
} emit_args;

static void emit(FILE *out, gpointer data)
{
    const emit_args *a = data;
    if (a->fx)
        a->fx->train_html(a->r, out);
    else
        fp_report_train_text(a->r, out);
}

/* --reserve P%: the share kept free; false after printing the error. */
static bool parse_reserve(const char *spec, double *share)
{
    *share = 0.1;
    if (!spec)
        return true;
    double p;
    if (fp_cli_parse_percent(spec, &p) != 1 || !(p >= 0 && p < 100)) {
        fp_cli_error("train: --reserve '%s': a percentage from 0%% to below 100%%, e.g. 10%%", spec);
        return false;
    }
    *share = p / 100.0;
    return true;
}

/* --budget P% (of the saved activations) or SIZE; false after printing the error. */
static bool parse_budget(const char *spec, fp_training_opts *o)
{
    if (!spec)
        return true;
    double p;
    int pct = fp_cli_parse_percent(spec, &p);
    if (pct) {
        if (pct < 0 || !(p > 0 && p <= 100)) {
            fp_cli_error("train: --budget '%s': a share must be above 0%% and at most 100%%", spec);
            return false;
        }
        o->budget_share = p / 100.0;
        return true;
    }
    g_autoptr(GError) err = NULL;
    if (!fp_cli_parse_size(spec, "--budget", &o->budget_bytes, &err) || !o->budget_bytes) {
        fp_cli_error("train: %s", err ? err->message : "--budget 0: must be above 0");
        return false;
    }
    return true;
}

/* Checks the options into the analysis's; false after printing the error. */
static bool resolve(const train_opts *to, fp_training_opts *o)
{
    *o = (fp_training_opts){.device = to->device, .batch = to->batch, .batch_dim = to->batch_dim,
                            .inputs = to->inputs, .dims = to->dims, .optimizer = FP_OPT_ADAM,
                            .headroom = !to->no_headroom};
    if (to->optimizer && !fp_train_optimizer_parse(to->optimizer, &o->optimizer)) {
        fp_cli_error("train: --optimizer %s: one of sgd, momentum, adam, adamw", to->optimizer);
        return false;
    }
    if (to->precision && !fp_train_precision_parse(to->precision, &o->precision)) {
        fp_cli_error("train: --precision %s: one of fp32, amp-fp16, amp-bf16", to->precision);
        return false;
    }
    if (to->batch < 0) {
        fp_cli_error("train: --batch %" G_GINT64_FORMAT ": must be positive", to->batch);
        return false;
    }
    if (to->top < 0) {
        fp_cli_error("train: --top %d: must be 0 or more", to->top);
        return false;
    }
    return parse_reserve(to->reserve, &o->reserve) && parse_budget(to->budget, o) &&
           fp_cli_check_format("train", to->format ? to->format : "text", "text,json,html");
}

static int run(const char *path, const train_opts *to, const fp_training_opts *o)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_training) t = fp_training_run(path, o, &err);
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    if (t->a->warning)
        fp_cli_error("%s", t->a->warning);
    fp_train_report r = {.model_path = path, .t = t, .optimizer = o->optimizer, .precision = o->precision,
                         .reserve = o->reserve, .top = (unsigned)to->top};
    if (to->format && strcmp(to->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("train", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        if (!fx->train_json(&r, to->output, &err)) {
            fp_cli_error("%s: %s", to->output ? to->output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {&r, NULL};
    if (to->format && strcmp(to->format, "html") == 0 && !(a.fx = fp_cli_formats("train", "-f html")))
        return FP_EXIT_BAD;
    return fp_cli_emit_text(to->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_train(int argc, char **argv)
{
    train_opts to = {.top = 10};
    GOptionEntry entries[] = {
        {"batch", 'b', 0, G_OPTION_ARG_INT64, &to.batch, "Bind the batch dimension of the inputs to N", "N"},
        {"batch-dim", 0, 0, G_OPTION_ARG_STRING, &to.batch_dim, "Name of the symbolic dimension --batch binds", "SYMBOL"},
        {"input", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &to.inputs, "Bind an input's shape, e.g. input:8x3x224x224",
         "NAME:DIMS"},
        {"dim", 0, 0, G_OPTION_ARG_STRING_ARRAY, &to.dims, "Bind a symbolic dimension by name, e.g. seq=512", "NAME=N"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &to.device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"optimizer", 0, 0, G_OPTION_ARG_STRING, &to.optimizer, "sgd, momentum, adam (default) or adamw", "OPT"},
        {"precision", 0, 0, G_OPTION_ARG_STRING, &to.precision, "fp32 (default), amp-fp16 or amp-bf16", "P"},
        {"reserve", 0, 0, G_OPTION_ARG_STRING, &to.reserve, "Device memory kept free for the headroom (default 10%)",
         "P%"},
        {"budget", 0, 0, G_OPTION_ARG_STRING, &to.budget,
         "Plan recomputation so that saved activations stay within SIZE or P% of what they are unplanned", "SIZE|P%"},
        {"no-headroom", 0, 0, G_OPTION_ARG_NONE, &to.no_headroom, "Skip the training-headroom search", NULL},
        {"top", 0, 0, G_OPTION_ARG_INT, &to.top, "Saved tensors listed, largest first (default 10; 0: all)", "N"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &to.format, "Output format: text (default), json or html", "FMT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &to.output, "Write to FILE instead of standard output", "FILE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("MODEL - memory of a training step: saved activations, gradients, optimizer state, peak");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_set_prgname("fuseplan train");
    int rc = FP_EXIT_BAD;
    fp_training_opts o;
    if (!fp_cli_parse(ctx, "train", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("train: expected one MODEL argument (see 'fuseplan train --help')");
    else if (resolve(&to, &o))
        rc = run(argv[1], &to, &o);
    g_strfreev(to.inputs);
    g_strfreev(to.dims);
    g_free(to.batch_dim);
    g_free(to.device);
    g_free(to.optimizer);
    g_free(to.precision);
    g_free(to.reserve);
    g_free(to.budget);
    g_free(to.format);
    g_free(to.output);
    return rc;
}
