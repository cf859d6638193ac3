/* shapes.h - the `fuseplan shapes` report: per-node output shapes, FLOPs, bytes, intensity. */
#ifndef FP_REPORT_SHAPES_H
#define FP_REPORT_SHAPES_H

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/graph.h"

/* Text table, one row per node of every graph (topological order), then totals. */
void fp_report_shapes_text(const fp_model *m, const fp_diag *diag, bool verbose, FILE *out);
/* The `shapes` JSON contract of docs/json.md (caller unrefs). */
JsonNode *fp_report_shapes_json(const fp_model *m, const fp_diag *diag);

#endif
