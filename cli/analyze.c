/* analyze.c - shared options, the analysis run from them, and the load -> shapes -> metrics
 * sequence of the commands that need no more. */
#include "analyze.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/bind.h"
#include "cli.h"
#include "frontends/load.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "reports/output.h"

void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o)
{
    GOptionEntry entries[] = {
        {"input", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &o->inputs,
         "Bind an input's shape, e.g. input:1x3x224x224 (repeatable)", "NAME:DIMS"},
        {"batch", 'b', 0, G_OPTION_ARG_INT64, &o->batch, "Bind the batch dimension of the inputs to N", "N"},
        {"batch-dim", 0, 0, G_OPTION_ARG_STRING, &o->batch_dim,
         "Name of the symbolic dimension --batch binds (default: first dim of each input)", "SYMBOL"},
        {"dim", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->dims,
         "Bind a symbolic dimension by name wherever the inputs use it, e.g. sequence_length=128 (repeatable)",
         "NAME=N"},
        {"context", 0, 0, G_OPTION_ARG_INT64, &o->context,
         "A decoder's tokens per sequence (default 2048)", "S"},
        {"phase", 0, 0, G_OPTION_ARG_STRING, &o->phase,
         "A decoder's step: decode (1 new token, S-1 past; default) or prefill (S new, no past)", "PHASE"},
        {"weight-dtype", 0, 0, G_OPTION_ARG_STRING, &o->weight_dtype,
         "What-if: weights stored as fp32, fp16, bf16 (every float weight) or fp8, int8, int4 (MatMul/Gemm/Conv "
         "weights, with their scales)", "DT"},
        {"group-size", 0, 0, G_OPTION_ARG_INT64, &o->group_size, "Weights per scale for int4 (default 128)", "G"},
        {"kv-dtype", 0, 0, G_OPTION_ARG_STRING, &o->kv_dtype,
         "What-if: a decoder's KV cache stored as fp32, fp16, bf16, fp8 or int8", "DT"},
        {"kv-block", 0, 0, G_OPTION_ARG_INT64, &o->kv_block,
         "What-if: a paged KV cache, each sequence in whole blocks of B tokens", "B"},
        {"precision-mode", 0, 0, G_OPTION_ARG_STRING, &o->precision_mode,
         "ATC's precision mode on an Ascend target: force_fp16 (ATC's default) or must_keep_origin_dtype", "MODE"},
        {NULL},
    };
    GOptionEntry more[] = {
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "Print diagnostics (ops not inferred, ...)", NULL},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &o->strict,
         "Refuse op types fuseplan does not know (default: warn and analyze them as opaque)", NULL},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_output_options(ctx, &o->format, &o->output);
    g_option_context_add_main_entries(ctx, more, NULL);
}

void fp_cli_model_opts_clear(fp_cli_model_opts *o)
{
    g_strfreev(o->inputs);
    g_strfreev(o->dims);
    g_free(o->phase);
    g_free(o->weight_dtype);
    g_free(o->kv_dtype);
    g_free(o->precision_mode);
    g_free(o->batch_dim);
    g_free(o->format);
    g_free(o->output);
    memset(o, 0, sizeof *o);
}

fp_analysis_opts fp_cli_analysis_opts(const fp_cli_model_opts *o)
{
    return (fp_analysis_opts){.inputs = o->inputs, .batch = o->batch, .batch_dim = o->batch_dim, .dims = o->dims,
                              .context = o->context, .phase = o->phase, .strict = o->strict,
                              .weight_dtype = o->weight_dtype, .group_size = o->group_size, .kv_dtype = o->kv_dtype,
                              .kv_block = o->kv_block, .precision_mode = o->precision_mode,
                              .what_if = FP_DT_UNDEFINED};
}

fp_analysis *fp_cli_analyze(const char *path, const fp_analysis_opts *ao)
{
    g_autoptr(GError) err = NULL;
    fp_analysis *a = fp_analysis_run(path, ao, &err);
    if (!a)
        fp_cli_error("%s", err->message);
    else if (a->warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", a->warning);
    return a;
}

void fp_cli_bound_clear(fp_cli_bound *b)
{
    if (b->so.input_shapes)
        g_hash_table_unref(b->so.input_shapes);
    fp_bind_dims_free(b->dims, b->n_dims);
    fp_kv_cache_free(b->kv);
    if (b->outside)
        g_hash_table_unref(b->outside);
    memset(b, 0, sizeof *b);
}

/* The shape options of o for m: input shapes, --dim and the decoder's step; false with the error. */
static bool bind_model(fp_model *m, const fp_cli_model_opts *o, fp_cli_bound *b, bool sizing, GError **error)
{
    memset(b, 0, sizeof *b);
    if (!(b->so.input_shapes = fp_bind_input_shapes(m, o->inputs, error)))
        return false;
    if (!fp_bind_parse_dims(o->dims, &b->dims, &b->n_dims, error))
        return false;
    b->kv = fp_kv_cache_find(m);
    g_autofree char *note = NULL; /* these commands print no binding note */
    fp_decoder_step step = {o->context, o->phase, o->batch_dim, o->inputs != NULL};
    if (!fp_kv_cache_bind(b->kv, m, &step, &b->dims, &b->n_dims, &note, error) ||
        !fp_precision_parse(o->weight_dtype, o->group_size, o->kv_dtype, o->kv_block, &b->precision, error) ||
        !fp_precision_check(&b->precision, b->kv != NULL, m->path, error))
        return false;
    if (note)
        b->phase = o->phase && strcmp(o->phase, "prefill") == 0 ? "prefill" : "decode";
    b->so.batch = o->batch;
    g_autofree char *free_dims = note && !o->batch ? fp_bind_symbolic_dims(m, b->dims, b->n_dims) : NULL;
    if (free_dims)
        b->so.batch = 1; /* a decoder's default step is at batch 1, as the analysis binds it */
    if (sizing) { /* what only a caller that plans memory reads */
        fp_precision_weights(m, &b->precision, &b->weights, NULL);
        b->outside = b->kv ? fp_kv_cache_outside(b->kv) : NULL;
    }
    b->so.batch_dim = o->batch_dim;
    b->so.dims = b->dims;
    b->so.n_dims = b->n_dims;
    return true;
}

fp_model *fp_cli_load_analyzed(const char *path, const fp_cli_model_opts *o, fp_diag *diag, fp_cli_bound *bound)
{
    g_autoptr(GError) err = NULL;
    fp_cli_bound own = {0}, *b = bound ? bound : &own;
    memset(b, 0, sizeof *b);
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    g_autofree char *warning = NULL;
    bool ok = m && fp_bind_check_ops(path, m, o->strict, diag, &warning, &err);
    if (ok && o->precision_mode) {
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--precision-mode: this command plans the model as exported, with no target; "
                    "fuseplan report --target ascend910b applies ATC's precision mode");
        ok = false;
    }
    if (ok && o->batch < 0) {
        g_set_error(&err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--batch %" G_GINT64_FORMAT ": must be positive",
                    o->batch);
        ok = false;
    }
    ok = ok && bind_model(m, o, b, bound != NULL, &err);
    if (ok && !fp_pass_shapes(m, &b->so, diag, &err)) {
        g_prefix_error(&err, "%s: ", path);
        ok = false;
    }
    if (ok)
        fp_pass_metrics(m, diag);
    fp_cli_bound_clear(&own);
    if (!ok) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    if (warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", warning);
    return g_steal_pointer(&m);
}

bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data)
{
    if (!output || strcmp(output, "-") == 0) {
        FILE *out = fp_output_stdout();
        emit(out, data);
        fflush(out);
        return !ferror(out);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fp_cli_error("%s: %s", output, g_strerror(errno));
        return false;
    }
    emit(mem, data);
    fclose(mem);
    g_autoptr(GError) err = NULL;
    bool ok = fp_output_write(output, buf, (gssize)len, &err);
    if (!ok)
        fp_cli_error("%s: %s", output, err->message);
    free(buf);
    return ok;
}
