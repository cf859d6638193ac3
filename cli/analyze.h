/* analyze.h - the options every model-analyzing subcommand shares (--input, --batch, --format,
 * --output) and the common load -> shapes -> metrics sequence. */
#ifndef FP_CLI_ANALYZE_H
#define FP_CLI_ANALYZE_H

#include <glib.h>

#include "ir/diag.h"
#include "ir/graph.h"

typedef struct {
    char **inputs;   /* --input NAME:DIMS, repeatable */
    gint64 batch;    /* --batch N (0 = not given) */
    char *batch_dim; /* --batch-dim SYMBOL */
    char *format;    /* --format */
    char *output;    /* --output */
    gboolean verbose;
    gboolean strict; /* --strict: op types fuseplan does not know are errors, not warnings */
} fp_cli_model_opts;

/* Adds --input, --batch, --batch-dim, --format, --output, --verbose, --strict to ctx's main group. */
void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o);
void fp_cli_model_opts_clear(fp_cli_model_opts *o);

/* Parses one --input value "NAME:1x3x224x224" (also "NAME:1,3,224,224"; "?" = unknown dim) into
 * *name (g_free) and *shape (dims in m's arena). False with a one-line error in *error. */
bool fp_cli_parse_input_spec(fp_model *m, const char *spec, char **name, fp_shape *shape, GError **error);

/* The table of --input specs (name -> fp_shape* in m's arena) for fp_shape_opts.input_shapes;
 * NULL with the first spec's error. Caller unrefs. */
GHashTable *fp_cli_input_shapes(fp_model *m, char **specs, GError **error);

/* Op types fuseplan does not know (FP_OP_OPAQUE: no shape rule, no fusion, no cost): an
 * "unknown-op" warning per type in diag (may be NULL) and in *warning one line listing them, for
 * the caller to print with fp_cli_error once its analysis succeeded (g_free; NULL when every op is
 * known). With `strict` instead a one-line error naming the first such node, and false (exit 2). */
bool fp_cli_check_ops(const char *path, const fp_model *m, bool strict, fp_diag *diag, char **warning);

/* Loads `path`, checks its op types (fp_cli_check_ops), applies --input/--batch, runs shape
 * inference and per-op metrics. On failure prints the one-line error and returns NULL (exit code 2
 * for the caller). */
fp_model *fp_cli_load_analyzed(const char *path, const fp_cli_model_opts *o, fp_diag *diag);

/* Writes text produced by `emit` to o->output (atomically) or stdout. */
bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data);

#endif
