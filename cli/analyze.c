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
    g_free(o->batch_dim);
    g_free(o->format);
    g_free(o->output);
    memset(o, 0, sizeof *o);
}

fp_analysis_opts fp_cli_analysis_opts(const fp_cli_model_opts *o)
{
    return (fp_analysis_opts){.inputs = o->inputs, .batch = o->batch, .batch_dim = o->batch_dim, .dims = o->dims,
                              .strict = o->strict, .what_if = FP_DT_UNDEFINED};
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

fp_model *fp_cli_load_analyzed(const char *path, const fp_cli_model_opts *o, fp_diag *diag)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    if (!m) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    g_autofree char *warning = NULL;
    if (!fp_bind_check_ops(path, m, o->strict, diag, &warning, &err)) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    if (o->batch < 0) {
        fp_cli_error("--batch %" G_GINT64_FORMAT ": must be positive", o->batch);
        return NULL;
    }
    g_autoptr(GHashTable) shapes = fp_bind_input_shapes(m, o->inputs, &err);
    size_t n_dims = 0;
    fp_dim_binding *dims = shapes ? fp_bind_parse_dims(o->dims, &n_dims, &err) : NULL;
    if (!shapes || (!dims && o->dims && *o->dims)) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    fp_shape_opts so = {.input_shapes = shapes, .batch = o->batch, .batch_dim = o->batch_dim, .dims = dims,
                        .n_dims = n_dims};
    bool ok = fp_pass_shapes(m, &so, diag, &err);
    fp_bind_dims_free(dims, n_dims);
    if (!ok) {
        fp_cli_error("%s: %s", path, err->message);
        return NULL;
    }
    fp_pass_metrics(m, diag);
    if (warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", warning);
    return g_steal_pointer(&m);
}

bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data)
{
    if (!output || strcmp(output, "-") == 0) {
        emit(stdout, data);
        fflush(stdout);
        return !ferror(stdout);
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
