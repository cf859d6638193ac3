/* match.h - measured kernels matched to the ops of an analyzed model (calibration/match.c), the
 * estimate-vs-measurement rows that result, their error statistics, and the fusions the real
 * compiler performed next to the ones fuseplan predicted.
 *
 * Units are the cost model's ops of one stage: the original graph (every node its own unit) or
 * the final graph (a fused kernel is one unit whose members are the original nodes the fusion
 * list joined into it). A kernel resolves to units
 *   1. by name: its name is a node's name; or, once decorations are stripped (ORT's "_token_N"
 *      and "/Suffix/" of generated names) or split (fused names joining member names with
 *      " + ", "+", "_", ",", ";"), a list of node names ("fused name");
 *   2. by op type and shapes, in execution order, among units no kernel named: the op types agree
 *      (after normalizing vendor spellings: Conv2D = Conv, MatMulV2 = MatMul) or the kernel's type
 *      is the fused op of a fusion rule whose pattern holds the unit's op (or an op fused into
 *      it); the kernel's output (or input) dims agree with the unit's known dims. When no kernel
 *      matched by name (names made up by the tools, "Conv_3"), only equal types with equal
 *      recorded dims count, and only if three quarters of the kernels pair up that way: an
 *      unrelated profile stays unmatched.
 * A made-up name ("<OpType>_<N>", what ORT and fuseplan give unnamed nodes) matches a node only
 * when the kernel's op type agrees: the tools number nodes differently.
 * Units no kernel claimed are attributed to a neighbouring row (the compiler fused them into a
 * measured kernel), producer side first; those with no matched neighbour stay unmeasured.
 * Kernels and units joined by any of this form one row: measured and estimated time compare per
 * row.
 *
 * Measured time is per run: ORT kernels are already averaged over the measured runs (warm-up
 * skipped by the reader); kernels of step-based profiles (Step Id, ProfilerStep#N) are summed and
 * divided by the number of steps. Nested kernels (inside an If/Loop body) are left out: their
 * parent's time includes them. Aggregate rows (op_statistic) cannot be matched per node.
 */
#ifndef FP_MATCH_H
#define FP_MATCH_H

#include "ir/diag.h"
#include "ir/graph.h"
#include "ir/profile.h"
#include "passes/cost.h"
#include "passes/fusion/fuse.h"

typedef enum {
    FP_MATCH_NONE,       /* unmatched (or not counted: nested, aggregate) */
    FP_MATCH_NAME,       /* the name is a node's name */
    FP_MATCH_FUSED_NAME, /* a decorated or joined name resolves to node names */
    FP_MATCH_TYPE_SHAPE, /* op type and shapes */
} fp_match_how;

/* "none", "name", "fused_name", "type_shape" */
const char *fp_match_how_name(fp_match_how h);

typedef struct {
    fp_match_how how;
    bool counted;      /* takes part (not nested, not an aggregate row) */
    int32_t row;       /* row index, -1 when unmatched */
    double measured_s; /* per run: dur_us x 1e-6 / steps averaged */
    GPtrArray *covers; /* const char *: original node names this kernel ran (its own and absorbed) */
} fp_match_kernel;

typedef struct {
    GArray *kernels;    /* guint: indices into the profile's kernels */
    GArray *units;      /* guint: indices into cost->ops */
    double measured_s;  /* per run */
    double estimated_s; /* sum of the units' estimates */
    uint32_t absorbed;  /* units attributed here without a kernel of their own */
    int32_t dominant;   /* cost op index with the largest estimate (its bound is reported); -1 */
    fp_match_how how;   /* how its first kernel matched (NONE for a row without kernels) */
} fp_match_row;

/* One fusion in the agreement table: a group of original nodes fused by fuseplan, by the
 * compiler (as the profile shows it), or by both. */
typedef enum {
    FP_AGREE_BOTH,      /* one real kernel ran exactly the predicted group (or more) */
    FP_AGREE_PREDICTED, /* fuseplan predicted it; the compiler ran the nodes as separate kernels */
    FP_AGREE_COMPILER,  /* a real kernel ran several nodes no predicted fusion joins */
} fp_agree;

/* "both", "fuseplan_only", "compiler_only" */
const char *fp_agree_name(fp_agree a);

typedef struct {
    fp_agree status;
    char *rules;       /* predicted: "conv_bn+conv_activation"; NULL for compiler-only */
    char *kernel;      /* the real kernel's name (BOTH, COMPILER); NULL otherwise */
    char *kernel_type; /* its op type, or NULL */
    GPtrArray *nodes;  /* char *: the predicted group (BOTH, PREDICTED) or the kernel's nodes */
    GPtrArray *extra;  /* char *: BOTH: nodes the real kernel ran beyond the prediction */
} fp_match_fusion;

typedef struct {
    uint32_t rows;        /* rows with a measurement and a non-zero estimate */
    double median_ape;    /* median |estimate - measured| / measured x 100; NAN when no rows */
    double spearman;      /* rank correlation of estimates and measurements; NAN below 3 rows */
    double ratio;         /* estimated total / measured total (end to end) */
    double matched_ratio; /* the same over rows with a kernel */
} fp_match_stats;

typedef struct {
    const fp_profile *profile;
    const fp_cost_result *cost;
    fp_match_kernel *kernels;                /* parallel to profile->kernels */
    GArray *rows;                            /* fp_match_row */
    int32_t *unit_row;                       /* per cost op: its row, -1 (no time and no kernel) */
    uint32_t steps;                          /* runs or steps the measurement averages (1 when none) */
    uint32_t counted, matched;               /* kernels taking part, matched */
    uint32_t by_how[4];                      /* matched kernels per fp_match_how */
    double measured_s, measured_matched_s;   /* per run: all counted kernels, matched ones */
    double estimated_s, estimated_matched_s; /* all units, units in rows with a kernel */
    uint32_t split;                          /* units measured as several kernels (fuseplan fused, compiler did not) */
    uint32_t absorbed;                       /* units without a kernel attributed to a neighbouring row */
    uint32_t unmeasured;                     /* units with time and no kernel, attributed nowhere */
    uint32_t zero_rows;                      /* rows measured but estimated at 0 (views, folded, eliminated) */
    double zero_rows_s;                      /* their measured time */
    fp_match_stats stats;
    GPtrArray *fusions; /* fp_match_fusion*, owned: predicted groups first, then compiler-only */
    uint32_t agree[3];  /* fusions per fp_agree */
} fp_match_result;

/* Matches the counted kernels of p to the units of `cost` (the cost model's ops of m's main
 * graph). `fusions` (may be NULL) names the applied fusions: when m is the final graph they give
 * each unit its members; in any case they are the predicted side of the agreement table. Never
 * fails: a profile that matches nothing gives matched = 0. m, cost and p must outlive the result,
 * which the caller frees with fp_match_result_free. */
fp_match_result *fp_match_run(const fp_model *m, const fp_cost_result *cost, const fp_fusion_list *fusions,
                              const fp_profile *p, fp_diag *diag);
void fp_match_result_free(fp_match_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_match_result, fp_match_result_free)

#endif
