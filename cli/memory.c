/* memory.c - `fuseplan memory MODEL`: activation memory after reuse, its floor, a memory-aware
 * order, and what is live at the peak. */
#include <string.h>

#include "analysis/precision.h"
#include "analyze.h"
#include "cli.h"
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

/* What the analysis holds beside its plan: the binding note, the weights at the what-if, the KV
 * cache. */
static fp_memory_extra extra_of(const fp_analysis *a)
{
    fp_memory_extra x = {.batch_note = a->batch_note, .unknown_values = a->res.unknown_values, .kv = a->kv};
    if (a->precision.weight != FP_DT_UNDEFINED) {
        x.weight_dtype = fp_precision_dtype_name(a->precision.weight);
        x.weight_bytes = fp_weight_plan_apply(&a->weights, a->res.memory->weight_bytes);
        x.weight_quantized = a->weights.quantized_bytes;
    }
    if (a->kv) {
        x.kv_dtype = fp_kv_cache_dtype_at(a->kv, a->precision.kv);
        x.kv_bytes = fp_kv_cache_held(a->kv, a->precision.kv, a->precision.kv_block);
        x.kv_bytes_per_token = fp_kv_cache_token_bytes(a->kv, a->precision.kv);
        x.kv_block = a->precision.kv_block;
    }
    return x;
}

/* Writes r (beside x) as o asks; false after printing the error. */
static bool write_report(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, fp_diag *diag,
                         const fp_cli_model_opts *o, const fp_cli_resolved *rs)
{
    g_autoptr(GError) err = NULL;
    if (strcmp(rs->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("memory", "-f json");
        if (!fx)
            return false;
        if (!fx->memory_json(m, r, x, diag, o->output, &err)) {
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
            return false;
        }
        return true;
    }
    emit_args a = {m, r, x, diag, rs->top, o->verbose};
    return fp_cli_emit_text(o->output, emit, &a);
}

/* ONNX Runtime's allocation (*om), its findings into a's list: with a target, of the graph a's
 * passes left; without one (`unoptimized`, a's options), of the graph it runs with its
 * optimizations off: the model with the rewrites it makes when it loads one at every level
 * (function bodies inlined, float16 ops without a CPU kernel between Casts), the original stage
 * an ort-cpu target keeps. False after printing the error. */
static bool ort_memory(const char *path, const fp_analysis *a, const fp_analysis_opts *unoptimized,
                       fp_ort_memory_result *om)
{
    g_autoptr(fp_analysis) u = NULL;
    if (unoptimized) {
        fp_analysis_opts ao = *unoptimized;
        ao.stop = FP_PIPELINE_FULL;
        ao.target = "ort-cpu-basic";
        ao.original = true;
        ao.plan = NULL; /* its own plan is not reported */
        if (!(u = fp_cli_analyze(path, &ao)))
            return false;
    }
    g_autoptr(GError) err = NULL;
    fp_ort_memory_opts oo = {.prepack = true, .folded = !u && a->target->fold_declared};
    if (!fp_pass_ort_memory(u ? u->original->main : a->model->main, &oo, om, a->diag, &err)) {
        fp_cli_error("%s: %s", path, err->message);
        return false;
    }
    return true;
}

/* Analyzes the model as exported, or with a target the graph its passes leave (fusion, layout:
 * ONNX Runtime's at the target's level on the device), plans it (a decoder's KV cache apart from the
 * arena), with `ort` models ONNX Runtime's allocation of it too (without a target, of the graph it
 * runs at ORT_DISABLE_ALL: ort_memory), and reports; the options are checked. */
static int run(const char *path, bool ort, const char *device, const char *target, const fp_cli_model_opts *o,
               fp_cli_resolved *r)
{
    fp_memory_opts plan = r->plan;
    if (plan.schedule == FP_SCHEDULE_GIVEN) /* the report compares the given order with a searched one */
        plan.schedule = FP_SCHEDULE_COMPARE;
    plan.every_strategy = true;
    fp_analysis_opts ao = r->ao;
    ao.stop = target ? FP_PIPELINE_FULL : FP_PIPELINE_SHAPES;
    ao.device = device;
    ao.target = target;
    ao.plan = &plan;
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    if (!a)
        return FP_EXIT_BAD;
    fp_memory_extra x = extra_of(a);
    fp_ort_memory_result om;
    if (ort) {
        if (!ort_memory(path, a, target ? NULL : &ao, &om))
            return FP_EXIT_BAD;
        x.ort = &om;
    }
    return write_report(a->model, a->res.memory, &x, a->diag, o, r) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_memory(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_resolved r;
    g_autofree char *planner = NULL, *device = NULL, *target = NULL;
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target,
         "Plan the graph this target's passes leave (e.g. ort-cpu-all: ONNX Runtime's graph at ORT_ENABLE_ALL, "
         "NCHWc tensors padded to the device's block); default: the model as exported",
         "T"},
        {"planner", 0, 0, G_OPTION_ARG_STRING, &planner,
         "Beside the optimal plan: 'ort' adds what ONNX Runtime 1.30's CPU arena holds (its planner's reuse, "
         "memory pattern and arena rounding, the initializers it keeps), without --target running the model "
         "at ORT_DISABLE_ALL; default 'optimal' alone",
         "optimal|ort"},
        {NULL},
    };
    g_autoptr(GOptionContext)
        ctx = g_option_context_new("MODEL - activation memory after buffer reuse, its floor, and the peak explained");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS | FP_CLI_PLAN | FP_CLI_TOP,
                             "Buffers listed at the peak (default 10; 0 = all)");
    fp_cli_set_prgname("fuseplan memory");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "memory", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("memory: expected one MODEL argument (see 'fuseplan memory --help')");
    else if (planner && strcmp(planner, "optimal") != 0 && strcmp(planner, "ort") != 0)
        fp_cli_error("memory: --planner %s: one of optimal, ort", planner);
    else if (fp_cli_model_opts_resolve(&o, "memory", "text,json", 10, &r))
        rc = run(argv[1], planner && strcmp(planner, "ort") == 0, device, target, &o, &r);
    fp_cli_model_opts_clear(&o);
    return rc;
}
