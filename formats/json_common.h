/* json_common.h - JSON pieces shared by every JSON emitter (json-glib; no hand escaping). */
#ifndef FP_JSON_COMMON_H
#define FP_JSON_COMMON_H

#include <json-glib/json-glib.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "formats/json_writer.h"

/* Version of the JSON contract documented in docs/json.md. */
#define FP_JSON_SCHEMA 1

/* Writes a shape as an array: known dim -> integer, symbol -> its name, unknown -> null.
 * An unknown rank is null. */
void fp_jsonw_shape(fp_jsonw *w, const char *member, const fp_shape *s);
/* Writes {name, dtype, shape} for a value (an array element). */
void fp_jsonw_value(fp_jsonw *w, const fp_value *v);
/* Members of the object being built: a NULL string and a non-finite number become null; an
 * unsigned value above INT64_MAX is clamped. */
void fp_json_str(JsonBuilder *b, const char *member, const char *v);
void fp_json_int(JsonBuilder *b, const char *member, gint64 v);
void fp_json_uint(JsonBuilder *b, const char *member, uint64_t v);
void fp_json_num(JsonBuilder *b, const char *member, double v);
void fp_json_bool(JsonBuilder *b, const char *member, bool v);

/* Writes the findings as an array of {level, code, node, message} (empty for NULL): as long as the
 * model when every node has a finding. */
void fp_jsonw_diagnostics(fp_jsonw *w, const char *member, const fp_diag *diag);

/* Serializes `root` (pretty, trailing newline) to stdout when path is NULL or "-", else writes
 * the file atomically (a failed write leaves any old file intact). */
bool fp_json_write(JsonNode *root, const char *path, GError **error);

#endif
