/* json.h - the JSON emitters, one per command (reports/<command>_json.c), each writing the
 * document docs/json.md specifies through the streamed writer (reports/json_writer.h; no hand
 * escaping). They live in the formats module (module/module.h): the executable reaches them
 * through the writers' table (reports/formats.h), never directly. */
#ifndef FP_REPORT_JSON_H
#define FP_REPORT_JSON_H

#include <glib.h>
#include <stdio.h>

#include "reports/devices.h"
#include "reports/diff.h"
#include "reports/explain.h"
#include "reports/gate.h"
#include "reports/info.h"
#include "reports/json_common.h"
#include "reports/json_writer.h"
#include "reports/memory.h"
#include "reports/report.h"
#include "reports/shapes.h"
#include "reports/train.h"

/* Each writes its document piece by piece into w (reports/json_writer.h): most have arrays as long
 * as the model. */
void fp_report_json(const fp_report *r, fp_jsonw *w);
/* x as fp_report_memory_text's (may be NULL). */
void fp_report_memory_json(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                           fp_jsonw *w);
/* The `memory` object of the memory document, as member `member` (shared with report): plan r, and
 * the model's values of unknown size (fp_pipeline_result.unknown_values, the same from every
 * command) beside the buffers of unknown size of r's own graph. */
void fp_report_memory_object_json(fp_jsonw *w, const char *member, const fp_memory_result *r, uint32_t unknown_values);
/* The decoder's members of a "headroom" object (docs/json.md): activation_bytes, and kv_cache_bytes,
 * kv_bytes_per_token, kv_dtype, kv_block, kv_capacity_tokens, context, phase (null without a KV
 * cache). */
void fp_report_headroom_decoder_json(fp_jsonw *w, const fp_headroom_decoder *dec, const fp_headroom_result *res);
/* `fuseplan train` (reports/train_json.c): the document's members, docs/json.md "train". */
void fp_report_train_json(const fp_train_report *r, fp_jsonw *w);
/* `fuseplan train -f html` (reports/train_html.c): one self-contained page. */
void fp_report_train_html(const fp_train_report *r, FILE *out);
void fp_report_headroom_json(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                             const fp_diag *diag, fp_jsonw *w);
void fp_report_info_json(const fp_model *m, fp_jsonw *w);
void fp_report_shapes_json(const fp_model *m, const fp_diag *diag, const char *batch_note, uint32_t unknown_values,
                           fp_jsonw *w);
void fp_report_explain_json(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, fp_jsonw *w);
void fp_diff_json(const fp_diff *d, fp_jsonw *w);
/* `fuseplan gate -f json` (reports/gate_json.c): the verdict for exit_code and every check. */
void fp_report_gate_json(const fp_gate_result *g, int exit_code, fp_jsonw *w);
/* {"schema": 1, "devices": [...]} for a list, {"schema": 1, <device members>} for one. */
void fp_report_devices_json(GPtrArray *devs, bool one, fp_jsonw *w);

/* One refusal reason {constraint, actual, required, message, hint} as an array element; shared by
 * explain, report and diff. */
void fp_jsonw_reason(fp_jsonw *w, const fp_reason *r);
/* Writes the `fusions` array (filtered) into the object being written; shared by explain and report. */
void fp_report_fusions_json(fp_jsonw *w, const fp_fusion_list *l, const fp_explain_filter *f);

#endif
