/* memory.c - `fuseplan memory MODEL`: activation memory after reuse, its floor, a memory-aware
 * order, and what is live at the peak. */
#include "analyze.h"
#include "cli.h"
#include "memory_opts.h"
#include "formats/formats.h"
#include "reports/memory.h"

typedef struct {
    const fp_model *m;
    const fp_memory_result *r;
    const fp_diag *diag;
    unsigned top;
    bool verbose;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_memory_text(a->m, a->r, a->diag, a->top, a->verbose, out);
}

/* Loads, plans and reports; the options are already checked. */
static int run(const char *path, const fp_cli_model_opts *o, const fp_memory_opts *opts, unsigned top)
{
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_model) m = fp_cli_load_analyzed(path, o, diag, NULL);
    if (!m)
        return FP_EXIT_BAD;
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_memory_result) r = fp_pass_memory(m->main, opts, diag, &err);
    if (!r) {
        fp_cli_error("%s: %s", path, err->message);
        return FP_EXIT_BAD;
    }
    if (o->format && g_strcmp0(o->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("memory", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        if (!fx->memory_json(m, r, diag, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    emit_args a = {m, r, diag, top, o->verbose};
    return fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_memory(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_memory_opts mo = {0};
    gint top = 10;
    GOptionEntry entries[] = {
        {"top", 0, 0, G_OPTION_ARG_INT, &top, "Buffers listed at the peak (default 10; 0 = all)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("MODEL - activation memory after buffer reuse, its floor, and the peak explained");
    fp_cli_add_model_options(ctx, &o);
    fp_cli_add_memory_options(ctx, &mo);
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_set_prgname("fuseplan memory");
    int rc = FP_EXIT_BAD;
    fp_memory_opts opts;
    if (!fp_cli_parse(ctx, "memory", &argc, &argv))
        goto out_opts;
    if (argc != 2) {
        fp_cli_error("memory: expected one MODEL argument (see 'fuseplan memory --help')");
        goto out_opts;
    }
    if (!fp_cli_check_format("memory", o.format ? o.format : "text", "text,json"))
        goto out_opts;
    if (top < 0) {
        fp_cli_error("memory: --top %d: must be 0 or more", top);
        goto out_opts;
    }
    if (!fp_cli_memory_opts_resolve(&mo, "memory", &opts))
        goto out_opts;
    if (opts.schedule == FP_SCHEDULE_GIVEN) /* the report compares the given order with a searched one */
        opts.schedule = FP_SCHEDULE_COMPARE;
    opts.every_strategy = true;
    rc = run(argv[1], &o, &opts, (unsigned)top);
out_opts:
    fp_cli_model_opts_clear(&o);
    fp_cli_memory_opts_clear(&mo);
    return rc;
}
