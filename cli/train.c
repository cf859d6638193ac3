/* train.c - `fuseplan train MODEL`: the memory of a training step on an exported forward graph
 * (what backward saves, parameters, gradients, optimizer state, the peak) and the training
 * headroom. */
#include <string.h>

#include "analysis/training.h"
#include "analyze.h"
#include "cli.h"
#include "reports/formats.h"
#include "reports/train.h"

typedef struct {
    char *device, *optimizer, *precision, *autograd, *budget, *seq;
    char **frozen;
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

/* Checks the command's own options into the analysis's (the shared ones are in r); false after
 * printing the error. */
static bool resolve(const train_opts *to, fp_cli_resolved *r, fp_training_opts *o)
{
    *o = (fp_training_opts){.analysis = r->ao, .optimizer = FP_OPT_ADAM, .headroom = r->headroom};
    o->analysis.device = to->device;
    o->headroom.on = !to->no_headroom;
    o->frozen = to->frozen;
    if (to->optimizer && !fp_train_optimizer_parse(to->optimizer, &o->optimizer)) {
        fp_cli_error("--optimizer %s: one of sgd, momentum, adam, adamw", to->optimizer);
        return false;
    }
    if (to->precision && !fp_train_precision_parse(to->precision, &o->precision)) {
        fp_cli_error("--precision %s: one of fp32, amp-fp16, amp-bf16", to->precision);
        return false;
    }
    if (to->autograd && !fp_train_autograd_parse(to->autograd, &o->autograd)) {
        fp_cli_error("--autograd %s: one of 2, 1.13", to->autograd);
        return false;
    }
    g_autoptr(GError) err = NULL;
    if (to->seq && !fp_cli_parse_count("--seq", to->seq, 1, FP_TRAINING_MAX_SEQ, &o->analysis.context, &err)) {
        fp_cli_error("%s", err->message);
        return false;
    }
    if (to->budget && !fp_cli_parse_budget(to->budget, "--budget", &o->budget_share, &o->budget_bytes, &err)) {
        fp_cli_error("%s", err->message);
        return false;
    }
    return true;
}

/* Writes the report as r asks; the exit status. */
static int write_report(const fp_train_report *rep, const char *output, const char *format)
{
    g_autoptr(GError) err = NULL;
    if (strcmp(format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("train", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        if (!fx->train_json(rep, output, &err)) {
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {rep, NULL};
    if (strcmp(format, "html") == 0 && !(a.fx = fp_cli_formats("train", "-f html")))
        return FP_EXIT_BAD;
    return fp_cli_emit_text(output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

static int run(const char *path, const fp_cli_model_opts *mo, const fp_cli_resolved *r, const fp_training_opts *o)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_training) t = fp_training_run(path, o, &err);
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    fp_cli_analysis_warnings(t->a);
    double reserve = t->capacity_bytes ? (double)t->reserve_bytes / (double)t->capacity_bytes : 0;
    fp_train_report rep = {.model_path = path,
                           .t = t,
                           .optimizer = o->optimizer,
                           .precision = o->precision,
                           .autograd = o->autograd,
                           .reserve = reserve,
                           .top = r->top};
    return write_report(&rep, mo->output, r->format);
}

int fp_cmd_train(int argc, char **argv)
{
    fp_cli_model_opts mo = {0};
    train_opts to = {0};
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &to.device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"optimizer", 0, 0, G_OPTION_ARG_STRING, &to.optimizer, "sgd, momentum, adam (default) or adamw", "OPT"},
        {"precision", 0, 0, G_OPTION_ARG_STRING, &to.precision, "fp32 (default), amp-fp16 or amp-bf16", "P"},
        {"autograd", 0, 0, G_OPTION_ARG_STRING, &to.autograd,
         "PyTorch release whose autograd saves are counted: 2 (default) or 1.13 (its mean(dim) keeps its input)",
         "REL"},
        {"budget", 0, 0, G_OPTION_ARG_STRING, &to.budget,
         "Plan recomputation so that saved activations stay within SIZE or P% of what they are unplanned", "SIZE|P%"},
        {"frozen", 0, 0, G_OPTION_ARG_STRING_ARRAY, &to.frozen,
         "An initializer not trained: a buffer (a rotary cache) or a frozen weight (repeatable)", "NAME"},
        {"seq", 0, 0, G_OPTION_ARG_STRING, &to.seq,
         "A decoder's tokens per sequence, trained at once without its KV cache (default 2048)", "N"},
        {"no-headroom", 0, 0, G_OPTION_ARG_NONE, &to.no_headroom, "Skip the training-headroom search", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "MODEL - memory of a training step: saved activations, gradients, optimizer state, peak");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &mo, FP_CLI_BIND | FP_CLI_BATCH | FP_CLI_CAPACITY | FP_CLI_TOP,
                             "Saved tensors listed, largest first (default 10; 0: all)");
    fp_cli_set_prgname("fuseplan train");
    int rc = FP_EXIT_BAD;
    fp_cli_resolved r;
    fp_training_opts o;
    if (!fp_cli_parse(ctx, "train", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("train: expected one MODEL argument (see 'fuseplan train --help')");
    else if (fp_cli_model_opts_resolve(&mo, "train", "text,json,html", 10, &r) && resolve(&to, &r, &o))
        rc = run(argv[1], &mo, &r, &o);
    g_free(to.device);
    g_free(to.optimizer);
    g_free(to.precision);
    g_free(to.autograd);
    g_free(to.budget);
    g_free(to.seq);
    g_strfreev(to.frozen);
    fp_cli_model_opts_clear(&mo);
    return rc;
}
