/* headroom.c - `fuseplan headroom MODEL --device D`: the largest batch whose weights, planned
 * activations and reserve fit in the device's memory, on the graph the device's target runs (the
 * analysis `report` makes, with the same search). */
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "reports/formats.h"
#include "reports/memory.h"

typedef struct {
    const fp_model *m;
    const fp_headroom_request *q;
    const fp_headroom_result *res;
    const fp_diag *diag;
    bool verbose;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_headroom_text(a->m, a->q, a->res, a->diag, a->verbose, out);
}

/* Writes the search's result as r asks; false after printing the error. */
static bool write_report(const fp_analysis *a, const fp_headroom_request *q, const fp_cli_model_opts *o,
                         const fp_cli_resolved *r)
{
    fp_diag *diag = a->headroom_diag;
    if (strcmp(r->format, "json") == 0) {
        g_autoptr(GError) err = NULL;
        const fp_formats *fx = fp_cli_formats("headroom", "-f json");
        bool ok = fx && fx->headroom_json(a->model, q, a->headroom, diag, o->output, &err);
        if (fx && !ok)
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
        return ok;
    }
    emit_args e = {a->model, q, a->headroom, diag, o->verbose};
    return fp_cli_emit_text(o->output, emit, &e);
}

/* Searches and reports; the options are already checked. */
static int run(const char *path, const char *device, const char *target, const fp_cli_model_opts *o, fp_cli_resolved *r)
{
    fp_memory_opts plan = r->plan;
    fp_analysis_opts ao = r->ao;
    ao.device = device;
    ao.target = target;
    ao.plan = &plan;
    ao.headroom = r->headroom;
    ao.headroom.on = ao.headroom.findings = true;
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    if (!a)
        return FP_EXIT_BAD;
    if (!a->headroom) {
        fp_cli_error("%s: headroom %s", path, a->headroom_note);
        return FP_EXIT_BAD;
    }
    fp_headroom_request q = {device ? a->device->name : NULL,
                             a->headroom_capacity,
                             a->headroom_reserve,
                             o->reserve,
                             &a->res.memory->opts,
                             o->batch_dim};
    q.dec = fp_headroom_decoder_of(a->kv, &a->precision, a->phase);
    q.batch_note = a->batch_note;
    q.unknown_values = a->res.unknown_values;
    if (a->precision.weight != FP_DT_UNDEFINED) {
        q.weight_dtype = fp_precision_dtype_name(a->precision.weight);
        q.weight_quantized = a->weights.quantized_bytes;
    }
    return write_report(a, &q, o, r) ? FP_EXIT_OK : FP_EXIT_BAD;
}

int fp_cmd_headroom(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_resolved r;
    g_autofree char *device = NULL, *target = NULL;
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device,
         "Device profile (name or .ini path): memory, alignment and its target", "DEVICE"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target, "Fusion target (default: the device's)", "T"},
        {NULL},
    };
    g_autoptr(GOptionContext)
        ctx = g_option_context_new("MODEL - largest batch whose weights + activations + reserve fit in device memory");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, "The batch is what headroom searches (no --batch): --batch-dim names its "
                                          "symbol, '?' in an --input shape frees its dimension.");
    fp_cli_add_model_options(ctx, &o, FP_CLI_BIND | FP_CLI_STEP | FP_CLI_WHATIF | FP_CLI_PLAN | FP_CLI_CAPACITY, NULL);
    fp_cli_set_prgname("fuseplan headroom");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "headroom", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("headroom: expected one MODEL argument (see 'fuseplan headroom --help')");
    else if (!fp_cli_model_opts_resolve(&o, "headroom", "text,json", 0, &r))
        ;
    else if (!device && !r.headroom.capacity)
        fp_cli_error("headroom: give the device memory with --device NAME or --memory SIZE");
    else
        rc = run(argv[1], device, target, &o, &r);
    fp_cli_model_opts_clear(&o);
    return rc;
}
