/* memory.c - `fuseplan memory MODEL`: activation memory after reuse, its floor, a memory-aware
 * order, and what is live at the peak. */
#include "analysis/precision.h"
#include "analyze.h"
#include "cli.h"
#include "memory_opts.h"
#include "reports/formats.h"
#include "reports/memory.h"

typedef struct {
    const fp_model *m;
    const fp_memory_result *r;
    const fp_memory_extra *x;
    const fp_diag *diag;
    unsigned top;
    bool verbose;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_memory_text(a->m, a->r, a->x, a->diag, a->top, a->verbose, out);
}

/* The weights at the what-if and the KV cache beside plan r of the model bound as b says. */
static fp_memory_extra extra_of(const fp_cli_bound *b, const fp_memory_result *r)
{
    fp_memory_extra x = {.kv = b->kv};
    if (b->precision.weight != FP_DT_UNDEFINED) {
        x.weight_dtype = fp_precision_dtype_name(b->precision.weight);
        x.weight_bytes = fp_weight_plan_apply(&b->weights, r->weight_bytes);
    }
    if (b->kv) {
        x.kv_dtype = fp_kv_cache_dtype_at(b->kv, b->precision.kv);
        x.kv_bytes = fp_kv_cache_held(b->kv, b->precision.kv, b->precision.kv_block);
        x.kv_bytes_per_token = fp_kv_cache_token_bytes(b->kv, b->precision.kv);
    }
    return x;
}

/* Writes r (beside x) as o asks; false after printing the error. */
static bool write_report(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, fp_diag *diag,
                         const fp_cli_model_opts *o, unsigned top)
{
    g_autoptr(GError) err = NULL;
    if (o->format && g_strcmp0(o->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("memory", "-f json");
        if (!fx)
            return false;
        if (!fx->memory_json(m, r, x, diag, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return false;
        }
        return true;
    }
    emit_args a = {m, r, x, diag, top, o->verbose};
    return fp_cli_emit_text(o->output, emit, &a);
}

/* Loads, plans (a decoder's KV cache apart from the arena) and reports; the options are checked. */
static int run(const char *path, const fp_cli_model_opts *o, const fp_memory_opts *opts, unsigned top)
{
    g_autoptr(fp_diag) diag = fp_diag_new();
    fp_cli_bound b;
    g_autoptr(fp_model) m = fp_cli_load_analyzed(path, o, diag, &b);
    g_autoptr(GError) err = NULL;
    fp_memory_opts mo = *opts;
    mo.outside = b.outside;
    g_autoptr(fp_memory_result) r = m ? fp_pass_memory(m->main, &mo, diag, &err) : NULL;
    if (m && !r)
        fp_cli_error("%s: %s", path, err->message);
    fp_memory_extra x = r ? extra_of(&b, r) : (fp_memory_extra){0};
    bool ok = r && write_report(m, r, &x, diag, o, top);
    fp_cli_bound_clear(&b);
    return ok ? FP_EXIT_OK : FP_EXIT_BAD;
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
    fp_cli_set_prgname("fuseplan memory");
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
