/* info.h - the `fuseplan info` report: a model's summary as text or JSON. */
#ifndef FP_REPORT_INFO_H
#define FP_REPORT_INFO_H

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "ir/graph.h"

void fp_report_info_text(const fp_model *m, FILE *out);
/* New JSON object (caller unrefs): the `info` contract of docs/json.md. */
JsonNode *fp_report_info_json(const fp_model *m);

#endif
