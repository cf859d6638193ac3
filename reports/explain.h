/* explain.h - the `fuseplan explain` report: every fusion candidate, applied or not, and why
 * (JSON: reports/json.h). */
#ifndef FP_REPORT_EXPLAIN_H
#define FP_REPORT_EXPLAIN_H

#include <stdio.h>

#include "passes/fusion/fuse.h"

typedef struct {
    const char *node; /* only candidates involving this node (NULL: all) */
    const char *rule; /* only this rule (NULL: all) */
} fp_explain_filter;

void fp_report_explain_text(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, FILE *out);
/* True when the candidate passes the filter (f NULL: all do). */
bool fp_explain_keep(const fp_fusion *fu, const fp_explain_filter *f);
/* Candidates of rule `id` in l: *matched of them, *applied applied. */
void fp_explain_counts(const fp_fusion_list *l, const char *id, guint *matched, guint *applied);

#endif
