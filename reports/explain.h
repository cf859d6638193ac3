/* explain.h - the `fuseplan explain` report: every fusion candidate, applied or not, and why. */
#ifndef FP_REPORT_EXPLAIN_H
#define FP_REPORT_EXPLAIN_H

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "passes/fuse.h"

typedef struct {
    const char *node; /* only candidates involving this node (NULL: all) */
    const char *rule; /* only this rule (NULL: all) */
} fp_explain_filter;

void fp_report_explain_text(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, FILE *out);
JsonNode *fp_report_explain_json(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f);
/* Adds the `fusions` array (filtered) to an object being built; shared with the full report. */
void fp_report_fusions_json(JsonBuilder *b, const fp_fusion_list *l, const fp_explain_filter *f);

#endif
