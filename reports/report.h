/* report.h - `fuseplan report`: the stage table, fusion and memory summaries, hotspots and the
 * headroom line, from one in-memory result, as text or Markdown (JSON: reports/json.h). */
#ifndef FP_REPORT_REPORT_H
#define FP_REPORT_REPORT_H

#include <stdio.h>

#include "analysis/analysis.h"
#include "reports/memory.h"

/* Everything a report shows. */
typedef struct {
    const fp_model *model;
    const fp_target *target;
    const fp_device *device;
    const fp_pipeline_result *res;
    const fp_diag *diag;
    const char *batch_note;             /* how symbolic dims were bound, or NULL */
    fp_dtype what_if;                   /* --dtype, or FP_DT_UNDEFINED */
    const char *precision_mode;         /* the target's precision mode (ATC), or NULL */
    fp_precision precision;             /* the storage what-ifs */
    const fp_weight_plan *weights;      /* the weights as stored and at precision.weight; NULL: no what-if
                                        (weight_bytes unset: the memory plan's) */
    uint64_t weight_bytes;              /* the final graph's weights at precision.weight */
    const fp_kv_cache *kv;              /* a decoder's KV cache (held apart from the arena), or NULL */
    uint64_t kv_bytes;                  /* the cache held now (fp_analysis.kv_bytes); 0 when not known */
    const char *phase;                  /* the decoder's step when it bound the tokens, else NULL */
    uint64_t kv_past_bytes;             /* the past inputs' copy of a runtime keeping them apart; 0 unknown */
    const fp_headroom_result *headroom; /* NULL when not computed */
    const char *headroom_note;          /* why not, when NULL */
    unsigned top;                       /* hotspots shown */
    bool verbose;                       /* list every diagnostic (layout reasons, unknown shapes, ...) */
    bool color;                         /* ANSI colour (TTY only) */
} fp_report;

/* The report of analysis a as every command shows it by default: ten hotspots, not verbose, no
 * colour. It points into a, which must outlive it. */
fp_report fp_report_of(const fp_analysis *a);

void fp_report_text(const fp_report *r, FILE *out);
void fp_report_markdown(const fp_report *r, FILE *out);

/* The decoder's side of the headroom (kv NULL for a model without a KV cache). */
fp_headroom_decoder fp_report_headroom_decoder(const fp_report *r);

/* A decoder's step as analysed and what it costs (text and JSON both show it). */
typedef struct {
    int64_t sequences, past_tokens, new_tokens;
    double latency_s;     /* the final stage's estimate */
    double per_token_s;   /* latency / new tokens */
    double tokens_per_s;  /* sequences x new tokens / latency */
    uint64_t floor_bytes; /* the weights (at the what-if) and the cache's past, read once */
    double floor_s;       /* those at the device's bandwidth (0 without one) */
} fp_report_step;

/* r's step; false when r has no KV cache, a size is unknown, or nothing is estimated. */
bool fp_report_step_of(const fp_report *r, fp_report_step *s);

/* The KV cache's dtype at the what-if: precision.kv, else the tensors' own (FP_DT_UNDEFINED when
 * they differ). */
fp_dtype fp_report_kv_dtype(const fp_report *r);

/* Indices of the costliest kernels of the final graph, longest estimated time first, the earlier
 * in topological order first among equal times; at most n. */
GArray *fp_report_hotspots(const fp_cost_result *c, unsigned n);
/* One line of advice for an op given its roofline estimate; the ridge it quotes is the op's own
 * (fp_roofline_ridge_at), the one its bound was decided by. Caller frees. */
char *fp_report_advice(const fp_op_cost *oc, const fp_device *d);

#endif
