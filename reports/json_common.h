/* json_common.h - JSON pieces shared by the JSON emitters (reports/json_writer.h). */
#ifndef FP_JSON_COMMON_H
#define FP_JSON_COMMON_H

#include "ir/diag.h"
#include "ir/graph.h"
#include "reports/json_writer.h"

/* Version of the JSON contract documented in docs/json.md. */
#define FP_JSON_SCHEMA 1

/* Writes a shape as an array: known dim -> integer, symbol -> its name, unknown -> null.
 * An unknown rank is null. */
void fp_jsonw_shape(fp_jsonw *w, const char *member, const fp_shape *s);
/* Writes {name, dtype, shape} for a value (an array element). */
void fp_jsonw_value(fp_jsonw *w, const fp_value *v);
/* Writes "batch_note" (how symbolic dims were bound, or null) and "unknown_values" (the values of
 * the model as exported whose size is unknown: the same count from every command). */
void fp_jsonw_bound(fp_jsonw *w, const char *batch_note, uint32_t unknown_values);
/* Writes the findings as an array of {level, code, node, message} (empty for NULL): as long as the
 * model when every node has a finding. */
void fp_jsonw_diagnostics(fp_jsonw *w, const char *member, const fp_diag *diag);

#endif
