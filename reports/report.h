/* report.h - `fuseplan report`: the stage table, fusion and memory summaries, hotspots and the
 * headroom line, from one in-memory result, as text or Markdown (JSON: formats/json.h). */
#ifndef FP_REPORT_REPORT_H
#define FP_REPORT_REPORT_H

#include <stdio.h>

#include "analysis/analysis.h"

/* Everything a report shows. */
typedef struct {
    const fp_model *model;
    const fp_target *target;
    const fp_device *device;
    const fp_pipeline_result *res;
    const fp_diag *diag;
    const char *batch_note;          /* how symbolic dims were bound, or NULL */
    fp_dtype what_if;                /* --dtype, or FP_DT_UNDEFINED */
    const fp_kv_cache *kv;           /* a decoder's KV cache, or NULL */
    uint64_t kv_bytes;               /* its present tensors now; 0 when not known */
    uint64_t kv_past_bytes;          /* its past inputs now; 0 when not known */
    const fp_headroom_result *headroom; /* NULL when not computed */
    const char *headroom_note;       /* why not, when NULL */
    unsigned top;                    /* hotspots shown */
    bool verbose;                    /* list every diagnostic (layout reasons, unknown shapes, ...) */
    bool color;                      /* ANSI colour (TTY only) */
} fp_report;

/* The report of analysis a as every command shows it by default: ten hotspots, not verbose, no
 * colour. It points into a, which must outlive it. */
fp_report fp_report_of(const fp_analysis *a);

void fp_report_text(const fp_report *r, FILE *out);
void fp_report_markdown(const fp_report *r, FILE *out);

/* The planned arena beside a decoder's KV cache: what is left of it without the present tensors and
 * the past inputs (0 when they fill it). */
uint64_t fp_report_other_activation_bytes(const fp_report *r);

/* Indices of the costliest kernels of the final graph, longest estimated time first, the earlier
 * in topological order first among equal times; at most n. */
GArray *fp_report_hotspots(const fp_cost_result *c, unsigned n);
/* One line of advice for an op given its roofline estimate. Caller frees. */
char *fp_report_advice(const fp_op_cost *oc, const fp_device *d);

#endif
