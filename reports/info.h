/* info.h - the `fuseplan info` report: a model's summary as text (JSON: reports/json.h). */
#ifndef FP_REPORT_INFO_H
#define FP_REPORT_INFO_H

#include <stdio.h>

#include "ir/graph.h"

void fp_report_info_text(const fp_model *m, FILE *out);
/* One row of the op-type histogram. */
typedef struct {
    const char *op_type;
    uint64_t count;
} fp_info_hist_row;

/* Op-type histogram over all graphs, most frequent first; *n_rows receives the count. Caller
 * g_free()s. */
fp_info_hist_row *fp_report_op_histogram(const fp_model *m, guint *n_rows);
/* An opset domain as shown: "" is "ai.onnx". */
const char *fp_report_opset_domain(const char *d);

#endif
