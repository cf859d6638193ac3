/* shapes.c - `fuseplan shapes MODEL`: per-node output shapes, FLOPs, bytes and intensity. */
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "reports/formats.h"
#include "reports/shapes.h"

typedef struct {
    const fp_model *m;
    const fp_diag *diag;
    const char *batch_note;
    bool verbose;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_shapes_text(a->m, a->diag, a->batch_note, a->verbose, out);
}

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r)
{
    fp_analysis_opts ao = r->ao;
    ao.stop = FP_PIPELINE_SHAPES;
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    if (!a)
        return FP_EXIT_BAD;
    if (strcmp(r->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("shapes", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        g_autoptr(GError) err = NULL;
        if (!fx->shapes_json(a->model, a->diag, a->batch_note, a->res.unknown_values, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args e = {a->model, a->diag, a->batch_note, o->verbose};
    return fp_cli_emit_text(o->output, emit, &e) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_shapes(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_resolved r;
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - infer shapes and per-op FLOPs and bytes");
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS, NULL);
    fp_cli_set_prgname("fuseplan shapes");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "shapes", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("shapes: expected one MODEL argument (see 'fuseplan shapes --help')");
    else if (fp_cli_model_opts_resolve(&o, "shapes", "text,json", 0, &r))
        rc = run(argv[1], &o, &r);
    fp_cli_model_opts_clear(&o);
    return rc;
}
