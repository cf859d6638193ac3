/* explain.c - `fuseplan explain MODEL`: what the target compiler fuses, and why not. */
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "passes/fusion/fuse.h"
#include "reports/explain.h"
#include "reports/formats.h"

typedef struct {
    const fp_fusion_list *l;
    const fp_target *t;
    const fp_explain_filter *f;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_explain_text(a->l, a->t, a->f, out);
}

/* Writes the fusions as r asks; false after printing the error. */
static bool write_report(const fp_analysis *a, const fp_explain_filter *filter, const char *output, const char *format)
{
    if (strcmp(format, "json") == 0) {
        g_autoptr(GError) err = NULL;
        const fp_formats *fx = fp_cli_formats("explain", "-f json");
        if (fx && fx->explain_json(a->res.fusions, a->target, filter, output, &err))
            return true;
        if (fx)
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
        return false;
    }
    emit_args e = {a->res.fusions, a->target, filter};
    return fp_cli_emit_text(output, emit, &e);
}

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r, const char *target_name,
               const char *node, const char *rule)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load(target_name ? target_name : "ort-cpu", &err);
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    if (rule && !g_strv_contains((const char *const *)t->rules, rule)) {
        g_autofree char *list = g_strjoinv(", ", t->rules);
        fp_cli_error("explain: target %s has no rule '%s' (its rules: %s)", t->name, rule, list);
        return FP_EXIT_BAD;
    }
    fp_analysis_opts ao = r->ao;
    ao.target_rules = t;
    ao.stop = FP_PIPELINE_FUSION;
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    if (!a)
        return FP_EXIT_BAD;
    if (node && !fp_node_lookup(a->model, node)) {
        fp_cli_error("explain: %s has no node named '%s'", path, node);
        return FP_EXIT_BAD;
    }
    fp_explain_filter filter = {node, rule};
    return write_report(a, &filter, o->output, r->format) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_explain(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_resolved r;
    g_autofree char *target_name = NULL, *node = NULL, *rule = NULL;
    GOptionEntry entries[] = {
        {"target", 't', 0, G_OPTION_ARG_STRING, &target_name,
         "Fusion target: ort-cpu (default: ORT's default level, ort-cpu-all), ort-cpu-extended, ort-cpu-basic, cuda, "
         "ascend910b, ascend310p, or a target .ini",
         "T"},
        {"node", 'n', 0, G_OPTION_ARG_STRING, &node, "Only candidates involving this node", "NAME"},
        {"rule", 'r', 0, G_OPTION_ARG_STRING, &rule, "Only this rule", "RULE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - what the target compiler fuses, and why not");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS, NULL);
    fp_cli_set_prgname("fuseplan explain");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "explain", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("explain: expected one MODEL argument (see 'fuseplan explain --help')");
    else if (fp_cli_model_opts_resolve(&o, "explain", "text,json", 0, &r))
        rc = run(argv[1], &o, &r, target_name, node, rule);
    fp_cli_model_opts_clear(&o);
    return rc;
}
