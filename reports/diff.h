/* diff.h - `fuseplan diff OLD NEW`: two reports side by side: stage tables, fusions gained and
 * lost (by rule and anchor node), memory and latency deltas, and whether NEW regressed.
 *
 * NEW regressed (docs/user-guide.md, "Comparing two exports") when any of:
 *   - its final estimated latency exceeds OLD's by more than the tolerance (relative),
 *   - its planned activation arena exceeds OLD's by more than the tolerance (relative),
 *   - a fusion applied in OLD is not applied in NEW (same rule, same anchor node).
 * An OLD value of 0 makes any increase a regression. */
#ifndef FP_REPORT_DIFF_H
#define FP_REPORT_DIFF_H

#include <stdio.h>

#include "reports/report.h"

/* Default tolerance: 1%. */
#define FP_DIFF_TOLERANCE 0.01

/* A fusion applied on one side and not on the other. */
typedef struct {
    const char *rule;
    const char *anchor;
    const fp_fusion *applied; /* the side where it is applied */
    const fp_fusion *other;   /* the other side's candidate with the same rule and anchor (not
                                 applied, with reasons), or NULL: no longer/not yet a candidate */
} fp_diff_fusion;

typedef enum { FP_DIFF_LATENCY, FP_DIFF_ACTIVATION, FP_DIFF_FUSION_LOST } fp_diff_reason;

typedef struct {
    fp_diff_reason kind;
    char *message;
} fp_diff_regression;

typedef struct {
    const fp_report *old_r, *new_r;
    double tolerance;         /* fraction: 0.01 = 1% */
    GPtrArray *lost, *gained; /* fp_diff_fusion*, owned, in the order of their list */
    GPtrArray *regressions;   /* fp_diff_regression*, owned; empty when NEW is not worse */
} fp_diff;

/* Compares two reports (the result points into them: free it first). */
fp_diff *fp_diff_compute(const fp_report *old_r, const fp_report *new_r, double tolerance);
void fp_diff_free(fp_diff *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_diff, fp_diff_free)
/* Relative change (new - old) / old; NAN when old is 0. */
double fp_diff_change(double old_v, double new_v);

void fp_diff_text(const fp_diff *d, FILE *out, bool color);
/* One fusion rule's candidates on both sides. */
typedef struct {
    const char *rule; /* belongs to the targets */
    guint old_matched, old_applied, new_matched, new_applied;
} fp_diff_rule;
/* fp_diff_rule for every rule of both targets (OLD's order first) that matched on either side.
 * Caller frees the GArray. */
GArray *fp_diff_rule_counts(const fp_diff *d);

#endif
