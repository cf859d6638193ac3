/* bind.h - what an analysis binds before the passes run (analysis/bind.c): input shapes from
 * NAME:DIMS specs, the model's symbolic dims, and the check of op types fuseplan does not know. */
#ifndef FP_ANALYSIS_BIND_H
#define FP_ANALYSIS_BIND_H

#include <glib.h>
#include <stdbool.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/shape/shapes.h"

#define FP_BIND_ERROR (fp_bind_error_quark())
GQuark fp_bind_error_quark(void);
typedef enum {
    FP_BIND_ERROR_UNKNOWN_OP, /* an op type fuseplan does not know, refused (strict) */
    FP_BIND_ERROR_BAD_BATCH,  /* a batch below 1 */
} fp_bind_error_code;

/* Parses one --input value "NAME:1x3x224x224" (also "NAME:1,3,224,224"; "?" = unknown dim) into
 * *name (g_free) and *shape (dims in m's arena). False with a one-line error in *error. */
bool fp_bind_parse_input_spec(fp_model *m, const char *spec, char **name, fp_shape *shape, GError **error);

/* The table of input specs (name -> fp_shape* in m's arena) for fp_shape_opts.input_shapes;
 * NULL with the first bad spec's error. Caller unrefs. */
GHashTable *fp_bind_input_shapes(fp_model *m, char **specs, GError **error);

/* Parses --dim values "NAME=N" (N an integer in [0, 2^62]) into *out, a new array of *n bindings
 * (free with fp_bind_dims_free; NULL with *n 0 for no spec). False, with *out NULL and a one-line
 * error naming the first bad spec. */
bool fp_bind_parse_dims(char **specs, fp_dim_binding **out, size_t *n, GError **error);
void fp_bind_dims_free(fp_dim_binding *b, size_t n);
/* Whether one of the n bindings names sym. */
bool fp_bind_names(const fp_dim_binding *dims, size_t n, const char *sym);
/* The first of the n bindings naming sym, or NULL. */
const fp_dim_binding *fp_bind_find(const fp_dim_binding *dims, size_t n, const char *sym);

/* Symbolic dims of the main graph's inputs but those the n bindings name (dims may be NULL with n
 * 0), comma-separated, each once, or NULL. Caller frees. */
char *fp_bind_symbolic_dims(const fp_model *m, const fp_dim_binding *dims, size_t n);
/* Whether symbol `name` is the batch: batch_dim when given, else the symbolic first dim of some
 * input of the main graph as declared. */
bool fp_bind_is_batch(const fp_model *m, const char *batch_dim, const char *name);

/* Whether some input of m's main graph declares a dimension named batch_dim (NULL: true); false
 * with an error naming the file, the option and the inputs. */
bool fp_bind_check_batch_dim(const fp_model *m, const char *batch_dim, GError **error);

/* Op types fuseplan does not know (FP_OP_OPAQUE: no shape rule, no fusion, no cost): an
 * "unknown-op" warning per type in diag (may be NULL) and in *warning one line listing them, for
 * the caller to print once its analysis succeeded (g_free; NULL when every op is known). With
 * `strict` instead false, with a one-line error naming the first such node. */
bool fp_bind_check_ops(const char *path, const fp_model *m, bool strict, fp_diag *diag, char **warning, GError **error);

#endif
