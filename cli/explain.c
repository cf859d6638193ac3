/* explain.c - `fuseplan explain MODEL`: what the target compiler fuses, and why not. */
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

static int run(const char *path, const fp_cli_model_opts *o, const char *target_name, const char *node,
               const char *rule)
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
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_model) m = fp_cli_load_analyzed(path, o, diag, NULL);
    if (!m)
        return FP_EXIT_BAD;
    if (node && !fp_node_lookup(m, node)) {
        fp_cli_error("explain: %s has no node named '%s'", path, node);
        return FP_EXIT_BAD;
    }
    g_autoptr(fp_fusion_list) fusions = fp_fusion_list_new();
    if (!fp_pass_fuse(m, t, fusions, diag, &err)) {
        fp_cli_error("%s: %s", path, err->message);
        return FP_EXIT_BAD;
    }
    fp_explain_filter filter = {node, rule};
    if (o->format && g_strcmp0(o->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("explain", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        if (!fx->explain_json(fusions, t, &filter, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {fusions, t, &filter};
    return fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_explain(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    g_autofree char *target_name = NULL, *node = NULL, *rule = NULL;
    GOptionEntry entries[] = {
        {"target", 't', 0, G_OPTION_ARG_STRING, &target_name,
         "Fusion target: ort-cpu (default: ORT's default level, ort-cpu-all), ort-cpu-extended, ort-cpu-basic, cuda, "
         "ascend910b, ascend310p, or a target .ini", "T"},
        {"node", 'n', 0, G_OPTION_ARG_STRING, &node, "Only candidates involving this node", "NAME"},
        {"rule", 'r', 0, G_OPTION_ARG_STRING, &rule, "Only this rule", "RULE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - what the target compiler fuses, and why not");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o);
    fp_cli_set_prgname("fuseplan explain");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "explain", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("explain: expected one MODEL argument (see 'fuseplan explain --help')");
    else if (fp_cli_check_format("explain", o.format ? o.format : "text", "text,json"))
        rc = run(argv[1], &o, target_name, node, rule);
    fp_cli_model_opts_clear(&o);
    return rc;
}
