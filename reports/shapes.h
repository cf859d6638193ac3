/* shapes.h - the `fuseplan shapes` report: per-node output shapes, FLOPs, bytes, intensity (JSON: reports/json.h). */
#ifndef FP_REPORT_SHAPES_H
#define FP_REPORT_SHAPES_H

#include <stdio.h>

#include "ir/diag.h"
#include "ir/graph.h"

/* Text table, one row per node of every graph (topological order), then totals and how the
 * symbolic dims were bound (batch_note; NULL: nothing said). */
void fp_report_shapes_text(const fp_model *m, const fp_diag *diag, const char *batch_note, bool verbose, FILE *out);
/* Nodes of every graph, each graph in topological order (file order if it has a cycle), removed
 * ones left out. Caller unrefs. */
GPtrArray *fp_report_shapes_nodes(const fp_model *m);

/* Totals of the table: runtime, folded and unknown ops, FLOPs, bytes, parameters. */
typedef struct {
    uint64_t runtime, folded, unknown, flops, bytes, params;
} fp_shapes_totals;
/* Adds node n to the totals (folded nodes count only as folded). */
void fp_report_shapes_add(fp_shapes_totals *t, const fp_node *n);

#endif
