/* analyze.h - the options every model-analyzing subcommand shares (--input, --batch, --format,
 * --output), the analysis (analysis/analysis.h) run from them, and the load -> shapes -> metrics
 * sequence of the commands that need no more. */
#ifndef FP_CLI_ANALYZE_H
#define FP_CLI_ANALYZE_H

#include <glib.h>

#include "analysis/analysis.h"
#include "passes/shape/shapes.h"
#include "ir/diag.h"
#include "ir/graph.h"

typedef struct {
    char **inputs;   /* --input NAME:DIMS, repeatable */
    gint64 batch;    /* --batch N (0 = not given) */
    char *batch_dim; /* --batch-dim SYMBOL */
    char **dims;     /* --dim NAME=N, repeatable */
    gint64 context;  /* --context S: a decoder's tokens per sequence (0: the default) */
    char *phase;     /* --phase decode|prefill */
    char *weight_dtype; /* --weight-dtype: storage what-ifs (analysis/precision.h) */
    gint64 group_size;  /* --group-size */
    char *kv_dtype;     /* --kv-dtype */
    gint64 kv_block;    /* --kv-block */
    char *precision_mode; /* --precision-mode: ATC's, for an Ascend target */
    char *format;    /* --format */
    char *output;    /* --output */
    gboolean verbose;
    gboolean strict; /* --strict: op types fuseplan does not know are errors, not warnings */
} fp_cli_model_opts;

/* Adds --input, --batch, --batch-dim, --dim, --context, --phase, --weight-dtype, --group-size,
 * --kv-dtype, --kv-block, --format, --output, --verbose, --strict to ctx's main group. */
void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o);
void fp_cli_model_opts_clear(fp_cli_model_opts *o);

/* The analysis options that o gives (inputs, batch, batch dim, strict); the rest as
 * fp_analysis_opts' defaults. */
fp_analysis_opts fp_cli_analysis_opts(const fp_cli_model_opts *o);

/* fp_analysis_run, with its error printed (one line, exit code 2 for the caller: NULL) and, once
 * it succeeded, its warning about op types fuseplan does not know. */
fp_analysis *fp_cli_analyze(const char *path, const fp_analysis_opts *ao);

/* The shape options fp_cli_load_analyzed ran the shape pass with (its input shapes and dims owned
 * here), for a pass that infers the model again (headroom). */
typedef struct {
    fp_shape_opts so;
    fp_dim_binding *dims;
    size_t n_dims;
    fp_precision precision;
    fp_weight_plan weights;  /* fp_precision_weights on the model as loaded */
    fp_kv_cache *kv;         /* the decoder's KV cache, or NULL */
    const char *phase;       /* "decode" or "prefill" when the decoder's step bound the tokens, else NULL */
    GHashTable *outside;     /* its tensors (fp_kv_cache_outside), for fp_memory_opts.outside; or NULL */
} fp_cli_bound;
void fp_cli_bound_clear(fp_cli_bound *b);

/* Loads `path`, checks its op types (fp_bind_check_ops), applies --input, --batch, --dim and a
 * decoder's step (--context, --phase: fp_kv_cache_bind), checks the storage what-ifs, runs shape
 * inference and per-op metrics. `bound` (may be NULL; clear it with fp_cli_bound_clear either
 * way) receives the shape options, the what-ifs, the weights at them and the KV cache (the weights
 * and the cache's outside set are made only when `bound` is given).
 * On failure prints the one-line error and returns NULL (exit code 2 for the caller). */
fp_model *fp_cli_load_analyzed(const char *path, const fp_cli_model_opts *o, fp_diag *diag, fp_cli_bound *bound);

/* Writes text produced by `emit` to o->output (atomically) or stdout. */
bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data);

#endif
