/* prof_internal.h - pieces shared by the profile readers (not part of the public API). */
#ifndef FP_PROF_INTERNAL_H
#define FP_PROF_INTERNAL_H

#include <json-glib/json-glib.h>

#include "profile.h"

/* ---- values as profiles write them ---- */
/* Maps a dtype as profiles write it ("FLOAT", "DT_BF16", "float16", "c10::Half", "long int"). */
fp_dtype fp_prof_dtype(const char *s);

/* Execution order of two events of one thread, as a sort comparator: by start `ts`, the longer
 * (enclosing) `dur` first, then by `index` in the event array. */
int fp_prof_event_order(double ts_a, double dur_a, guint index_a, double ts_b, double dur_b, guint index_b);

/* Strict number parsing of a whole cell (surrounding whitespace allowed); false if not a finite
 * number. */
bool fp_prof_parse_double(const char *s, double *out);
bool fp_prof_parse_int(const char *s, int64_t *out);

/* ---- CSV (RFC 4180: quoted fields with commas, doubled quotes and newlines; CRLF or LF;
 * a leading UTF-8 BOM is skipped; empty lines are skipped) ---- */
typedef struct {
    const char *p, *end;
    uint32_t line; /* line of the read position, 1-based */
} fp_csv;
void fp_csv_init(fp_csv *c, const char *data, gsize len);
/* Reads the next record into `fields` (cleared first; it must free with g_free). Returns 1 and
 * the line the record starts on, 0 at the end, -1 with an error naming line and column. */
int fp_csv_next(fp_csv *c, GPtrArray *fields, uint32_t *line, GError **error);

/* Parses Ascend tensor cells: shapes "32,1,224,224;64" (quotes around allowed; "" or an empty
 * entry = scalar; N/A = none), dtypes "FLOAT;INT64", formats "ND;ND". Any may be NULL. Sets
 * *out (arena) and *n; false with an error message naming the offending dim. */
bool fp_prof_ascend_tensors(fp_profile *p, const char *shapes, const char *dtypes, const char *formats,
                            fp_prof_tensor **out, uint32_t *n, GError **error);

/* ---- readers: errors carry no path (fp_profile_load prefixes it) ---- */
/* An Ascend CSV profile (ascend.c): msprof op_summary, task_time, torch_npu kernel_details, op_statistic. */
bool fp_prof_read_ascend(fp_profile *p, const char *data, gsize len, GError **error);
/* `values`: JsonNode* of each top-level JSON value; `lines`: line each starts on (guint). */
bool fp_prof_read_fusion(fp_profile *p, GPtrArray *values, GArray *lines, GError **error);
bool fp_prof_read_ort(fp_profile *p, JsonArray *events, GError **error);
/* `base`: JSON path of the event array in messages ("$" or "$.traceEvents"). */
bool fp_prof_read_trace(fp_profile *p, const char *base, JsonArray *events, GError **error);

/* ---- JSON helpers ---- */
/* A number member (int or double; a numeric string too when `strings`); false if absent or not one. */
bool fp_prof_json_number(JsonObject *o, const char *member, bool strings, double *out);
/* A string member, or NULL when absent or not a string. */
const char *fp_prof_json_string(JsonObject *o, const char *member);
/* True for a fusion_result graph entry or dict/list of them (used by format detection). */
bool fp_prof_json_is_fusion(JsonNode *root);
/* True when the event array looks like ONNX Runtime's (Node events named *_kernel_time). */
bool fp_prof_json_is_ort(JsonArray *events);

#endif
