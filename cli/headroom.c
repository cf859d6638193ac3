/* headroom.c - `fuseplan headroom MODEL --device D`: the largest batch whose weights, planned
 * activations and reserve fit in the device's memory. */
#include <string.h>

#include "analysis/bind.h"
#include "analyze.h"
#include "cli.h"
#include "devices/device.h"
#include "memory_opts.h"
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

/* --reserve: "P%" of the capacity or a size; false after printing the error. */
static bool parse_reserve(const char *spec, uint64_t capacity, uint64_t *reserve)
{
    double p;
    int pct = fp_cli_parse_percent(spec, &p);
    if (pct) {
        if (pct < 0 || !(p >= 0 && p <= 100)) {
            fp_cli_error("headroom: --reserve '%s': a percentage must be between 0%% and 100%%", spec);
            return false;
        }
        *reserve = (uint64_t)((double)capacity * (p / 100.0));
        return true;
    }
    g_autoptr(GError) err = NULL;
    if (!fp_cli_parse_size(spec, "--reserve", reserve, &err)) {
        fp_cli_error("headroom: %s", err->message);
        return false;
    }
    return true;
}

/* Searches and reports; the options are already checked. */
static int run(const char *path, const fp_cli_model_opts *o, fp_headroom_request *q, int64_t max_batch)
{
    g_autoptr(fp_diag) diag = fp_diag_new();
    fp_cli_bound bound;
    g_autoptr(fp_model) m = fp_cli_load_analyzed(path, o, diag, &bound);
    if (!m) {
        fp_cli_bound_clear(&bound);
        return FP_EXIT_BAD;
    }
    fp_headroom_opts ho = {q->capacity, q->reserve, bound.so.input_shapes, o->batch_dim, *q->mem, max_batch};
    ho.shapes = bound.so;
    ho.shapes.batch = 0; /* as the search starts: the batch free */
    ho.mem.outside = bound.outside;
    ho.weight_delta = fp_weight_plan_delta(&bound.weights);
    fp_kv_sizing sizing = {bound.kv, bound.precision.kv, bound.precision.kv_block};
    if (bound.kv) {
        ho.outside_bytes = fp_kv_sizing_held;
        ho.outside_data = &sizing;
    }
    fp_headroom_result res;
    g_autoptr(fp_diag) hdiag = fp_diag_new();
    g_autoptr(GError) err = NULL;
    bool ok = fp_pass_headroom(m, &ho, &res, hdiag, &err);
    if (ok)
        q->dec = fp_headroom_decoder_of(bound.kv, &bound.precision, bound.phase);
    if (ok && bound.precision.weight != FP_DT_UNDEFINED)
        q->weight_dtype = fp_precision_dtype_name(bound.precision.weight);
    if (!ok) {
        fp_cli_bound_clear(&bound);
        fp_cli_error("%s: %s", path, err->message);
        return FP_EXIT_BAD;
    }
    if (o->format && g_strcmp0(o->format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("headroom", "-f json");
        ok = fx && fx->headroom_json(m, q, &res, hdiag, o->output, &err);
        if (fx && !ok)
            fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
    } else {
        emit_args a = {m, q, &res, hdiag, o->verbose};
        ok = fp_cli_emit_text(o->output, emit, &a);
    }
    fp_cli_bound_clear(&bound); /* after the reports: q->dec points into it */
    return ok ? FP_EXIT_OK : FP_EXIT_BAD;
}

/* Capacity and alignment from --device / --memory, reserve from --reserve; false after printing
 * the error. dev receives the loaded profile (or NULL). */
static bool resolve_memory(const char *device_name, const char *memory, const char *reserve, fp_memory_opts *mem,
                           fp_device **dev, uint64_t *capacity, uint64_t *reserve_bytes)
{
    g_autoptr(GError) err = NULL;
    *capacity = *reserve_bytes = 0;
    if (!device_name && !memory) {
        fp_cli_error("headroom: give the device memory with --device NAME or --memory SIZE");
        return false;
    }
    if (device_name) {
        *dev = fp_device_load(device_name, &err);
        if (!*dev) {
            fp_cli_error("%s", err->message);
            return false;
        }
        *capacity = (*dev)->memory_bytes;
        if (!mem->align)
            mem->align = (*dev)->align_bytes;
    }
    if (memory && !fp_cli_parse_size(memory, "--memory", capacity, &err)) {
        fp_cli_error("headroom: %s", err->message);
        return false;
    }
    return !reserve || parse_reserve(reserve, *capacity, reserve_bytes);
}

int fp_cmd_headroom(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    fp_cli_memory_opts mo = {0};
    char *device_name = NULL, *memory = NULL, *reserve = NULL;
    gint64 max_batch = 0;
    GOptionEntry entries[] = {
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device_name, "Device profile (name or .ini path): memory and alignment",
         "DEVICE"},
        {"memory", 'm', 0, G_OPTION_ARG_STRING, &memory, "Device memory, e.g. 32GiB (overrides the profile's)", "SIZE"},
        {"reserve", 'r', 0, G_OPTION_ARG_STRING, &reserve,
         "Memory kept free for the runtime: a size or a percentage of the capacity (default 0)", "SIZE|P%"},
        {"max-batch", 0, 0, G_OPTION_ARG_INT64, &max_batch, "Largest batch to try (default 2^24)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("MODEL - largest batch whose weights + activations + reserve fit in device memory");
    fp_cli_add_model_options(ctx, &o);
    fp_cli_add_memory_options(ctx, &mo);
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_set_prgname("fuseplan headroom");
    int rc = FP_EXIT_BAD;
    fp_memory_opts mem;
    fp_device *dev = NULL;
    uint64_t capacity, reserve_bytes;
    if (!fp_cli_parse(ctx, "headroom", &argc, &argv))
        goto out_opts;
    if (argc != 2) {
        fp_cli_error("headroom: expected one MODEL argument (see 'fuseplan headroom --help')");
        goto out_opts;
    }
    if (!fp_cli_check_format("headroom", o.format ? o.format : "text", "text,json") ||
        !fp_cli_memory_opts_resolve(&mo, "headroom", &mem))
        goto out_opts;
    if (o.batch) {
        fp_cli_error("headroom: --batch is what headroom searches; name the batch symbol with --batch-dim instead");
        goto out_opts;
    }
    if (max_batch < 0) {
        fp_cli_error("headroom: --max-batch %" G_GINT64_FORMAT ": must be positive", max_batch);
        goto out_opts;
    }
    if (!resolve_memory(device_name, memory, reserve, &mem, &dev, &capacity, &reserve_bytes))
        goto out_dev;
    fp_headroom_request q = {dev ? dev->name : NULL, capacity, reserve_bytes, reserve, &mem, o.batch_dim};
    rc = run(argv[1], &o, &q, max_batch);
out_dev:
    fp_device_free(dev);
out_opts:
    g_free(device_name);
    g_free(memory);
    g_free(reserve);
    fp_cli_model_opts_clear(&o);
    fp_cli_memory_opts_clear(&mo);
    return rc;
}
