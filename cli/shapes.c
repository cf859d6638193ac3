/* shapes.c - `fuseplan shapes MODEL`: per-node output shapes, FLOPs, bytes and intensity. */
#include "analyze.h"
#include "cli.h"
#include "reports/formats.h"
#include "reports/shapes.h"

typedef struct {
    const fp_model *m;
    const fp_diag *diag;
    bool verbose;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_shapes_text(a->m, a->diag, a->verbose, out);
}

static int run(const char *path, const fp_cli_model_opts *o)
{
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_model) m = fp_cli_load_analyzed(path, o, diag, NULL);
    if (!m)
        return FP_EXIT_BAD;
    if (o->format && g_strcmp0(o->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("shapes", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        g_autoptr(GError) err = NULL;
        if (!fx->shapes_json(m, diag, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {m, diag, o->verbose};
    return fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_shapes(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - infer shapes and per-op FLOPs and bytes");
    fp_cli_add_model_options(ctx, &o);
    fp_cli_set_prgname("fuseplan shapes");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "shapes", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("shapes: expected one MODEL argument (see 'fuseplan shapes --help')");
    else if (fp_cli_check_format("shapes", o.format ? o.format : "text", "text,json"))
        rc = run(argv[1], &o);
    fp_cli_model_opts_clear(&o);
    return rc;
}
