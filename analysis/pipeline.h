/* pipeline.h - the analysis pipeline as one straight list of passes (analysis/pipeline.c):
 * shapes -> metrics (+ storage) -> [stop "shapes": the model as exported] -> expand (the target's
 * function bodies) -> [stage "original"] -> transpose -> fuse -> metrics (+ storage) -> [stage
 * "after fusion"; stop "fusion"] -> layout -> nchwc (the target's blocked layout) -> memory ->
 * cost -> [stage "final"]. At the shapes stop, memory and cost run on the model as exported when
 * asked. The IR verifier runs between passes in debug builds; --dump-after=PASS prints the IR after
 * that pass. */
#ifndef FP_ANALYSIS_PIPELINE_H
#define FP_ANALYSIS_PIPELINE_H

#include <stdio.h>

#include "devices/device.h"
#include "passes/cost.h"
#include "passes/fusion/fuse.h"
#include "passes/layout.h"
#include "passes/memory/memory.h"
#include "passes/shape/shapes.h"
#include "passes/storage.h"

/* The passes --dump-after names, in pipeline order: X(name) each. */
#define FP_PIPELINE_PASS_LIST(X) \
    X(shapes) X(metrics) X(denormal) X(expand) X(transpose) X(fuse) X(float16) X(layout) X(nchwc) X(memory) X(cost)

/* Where the pipeline stops; FULL (0) runs every pass. */
typedef enum {
    FP_PIPELINE_FULL = 0, /* fusion, layout, memory plan and cost: the stage table */
    FP_PIPELINE_FUSION,   /* after the fusions (stages "original" and "after fusion" filled) */
    FP_PIPELINE_SHAPES,   /* after shapes and metrics: the model as exported, no target's pass */
} fp_pipeline_stop;

typedef struct {
    const char *name;          /* "original", "after fusion", "final (fusion + layout + memory reuse)" */
    uint32_t ops;              /* runtime ops, all graphs (folded shape computations excluded) */
    uint32_t kernels;          /* ops that launch a kernel (views such as Reshape do not) */
    uint32_t folded;           /* ops folded at analysis time (not counted in ops) */
    uint64_t activation_bytes; /* no reuse (stages 1-2) or the planned arena (final) */
    bool planned;              /* activation_bytes is a planned arena */
    uint64_t weight_bytes;     /* weights the remaining ops read */
    double latency_s;          /* estimated, sequential */
    double speedup;            /* latency of "original" / this latency */
    uint32_t conversions;      /* layout conversions (Transpose, TransData, Cast) */
} fp_stage;

typedef struct {
    fp_shape_opts shapes;
    const fp_target *target;
    const fp_device *device;
    fp_memory_opts memory;
    fp_dtype what_if;          /* --dtype: FP_DT_UNDEFINED for none */
    const fp_storage *storage; /* values stored otherwise (--weight-dtype, --kv-dtype): applied to
                                  the metrics after each metrics run; NULL for none */
    const char *dump_after;    /* pass name or NULL */
    FILE *dump_out;
    fp_pipeline_stop stop;
    bool plan, cost; /* at the shapes stop: also plan the memory (with `memory`) and estimate the
                               cost of the model as exported; the other stops always do both */
} fp_pipeline_opts;

typedef struct {
    uint32_t unknown_values;       /* values of the model as exported (after shapes) whose size is unknown:
                                 tensors of live nodes and graph inputs, weights aside */
    const fp_value *unknown_first; /* the one a warning names (one an op fuseplan does not know makes,
                                 else one with a symbolic dim, else the first), or NULL */
    fp_stage stages[3];
    fp_fusion_list *fusions; /* names the model's nodes: cleared before the model is freed */
    fp_layout_result layout;
    fp_memory_result *memory; /* of the final graph (at the shapes stop: of the model as exported,
                                 when asked; NULL otherwise) */
    fp_cost_result *cost;     /* likewise (the other stages keep their totals only) */
    uint32_t *loaded_nodes;   /* nodes each graph of the model had as loaded, by its index in
                                 m->graphs (g_malloc): a node of index (fp_node.id) past its graph's
                                 count is one a pass added (reports/provenance.h) */
    uint32_t n_loaded_graphs;
    uint32_t unoptimized_changed; /* nodes that passes/float16.c and passes/qdq_units.c changed or
                                     added after stage "original", and the model's Casts the
                                     runtime removes (some the runtime's rewrites at every level:
                                     its Casts, its DequantizeLinear copies, its duplicate-Cast
                                     removal): when any, that stage may not be the graph it runs
                                     unoptimized (fp_pipeline_original_stage) */
} fp_pipeline_result;

/* Runs the passes up to o->stop on m (modified in place: the final graph). False with an error
 * naming the pass and the object when a pass fails. `res` is cleared with fp_pipeline_result_clear. */
bool fp_pipeline_run(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error);
void fp_pipeline_result_clear(fp_pipeline_result *res);
/* Stage "original" of res (a FULL run's) set again from `copy`, the model read again and brought
 * to the graph the runtime runs unoptimized (shapes, metrics, passes/qdq_units.c's copies and
 * passes/float16.c at FP_FLOAT16_UNOPTIMIZED, as fp_analysis does when res->unoptimized_changed);
 * the speedups again. False with an error when its memory cannot be sized. */
bool fp_pipeline_original_stage(fp_model *copy, const fp_pipeline_opts *o, fp_pipeline_result *res, GError **error);
/* True when `name` is a pass --dump-after accepts. */
bool fp_pipeline_has_pass(const char *name);
/* fp_pass_cost's flags for the stage "original" on target t (NULL: none): FP_COST_RUN_FOLDED when
 * its runtime folds nothing there ([target] original_runs_shape_ops). */
unsigned fp_pipeline_original_cost_flags(const fp_target *t);
/* The pass names, comma-separated, in pipeline order (a static string). */
const char *fp_pipeline_pass_names(void);

#endif
