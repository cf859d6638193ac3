/* memory.h - activation memory of a graph: liveness, memory-aware schedule, offset plan and what
 * is live at the peak (passes/memory/memory.c). Rules and choices: docs/memory.md. */
#ifndef FP_PASS_MEMORY_H
#define FP_PASS_MEMORY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/memory/memplan.h"

/* Which order is planned, and whether a better one is searched. */
typedef enum {
    FP_SCHEDULE_GIVEN,     /* the graph's own topological order (file order among ready nodes); no search */
    FP_SCHEDULE_OPTIMIZED, /* the order with the lower LOAD of the given one and a searched one */
    FP_SCHEDULE_COMPARE,   /* the given order, and a searched one too: the result compares their LOADs */
} fp_schedule_mode;

/* Alignment used when neither a device nor --align says otherwise (ONNX Runtime's CPU arena and
 * TFLite both align buffers to 64 bytes). */
#define FP_MEMORY_DEFAULT_ALIGN 64

/* What plans of one graph at other sizes carry from one to the next (fp_memory_opts.reuse). */
typedef struct fp_memory_reuse fp_memory_reuse;

/* How a graph is planned; the same options plan its subgraphs. */
typedef struct {
    fp_memplan_strategy strategy;
    fp_schedule_mode schedule;
    uint64_t align;         /* bytes; 0 = FP_MEMORY_DEFAULT_ALIGN */
    bool every_strategy;    /* fp_pass_memory also plans every other strategy on the planned order, for
                            the memory report's comparison; else naive and `strategy` only */
    GHashTable *outside;    /* optional: values held in memory the runtime allocates apart from the
                               arena (a decoder's KV cache: fp_kv_cache_outside), planned nowhere
                               (fp_liveness_build); the same set for every plan with one `reuse` */
    fp_dtype float_as;      /* float32 activations planned at this dtype (a compiler that computes them
                               in it: ATC's force_fp16); FP_DT_UNDEFINED (0): as they are */
    fp_memory_reuse *reuse; /* optional: the graph's liveness and the last winning planner
                               candidate, kept from one plan to the next (fp_memory_arena tries the
                               candidate first); fp_memory_naive does not use it */
} fp_memory_opts;

/* One buffer live at the peak. */
typedef struct {
    const fp_value *value;      /* value that defines the buffer; NULL for a workspace */
    const fp_node *producer;    /* NULL for a graph input */
    const fp_node *last_reader; /* node at its last read, NULL when nobody reads it */
    const fp_node *ws_node;     /* for a workspace: the control-flow node */
    uint64_t bytes;             /* as planned (rounded to the alignment) */
    uint64_t offset;            /* in the arena */
    uint32_t first, last;       /* steps of the full order */
    uint32_t values;            /* values sharing it: 1 + views + in-place successors */
    bool input, output;
} fp_memory_tensor;

typedef struct {
    const fp_graph *graph;
    fp_memory_opts opts;
    uint64_t align;
    fp_node **order; /* the planned order: every live node of the graph */
    uint32_t n_order;
    const char *schedule;           /* "given" or "optimized": the order planned */
    const char *schedule_method;    /* how the searched order was found: "dp", "greedy", "given" */
    bool schedule_searched;         /* lower_bound_optimized was computed (schedule is not FP_SCHEDULE_GIVEN) */
    bool schedule_exact;            /* the search proved lower_bound_optimized optimal */
    uint32_t n_segments;            /* forced segments found by the search */
    uint64_t lower_bound_given;     /* LOAD of the given order */
    uint64_t lower_bound_optimized; /* LOAD of the searched order (== given when not searched) */
    uint64_t lower_bound;           /* LOAD of the planned order */
    uint64_t arena;                 /* arena of opts.strategy on the planned order */
    uint64_t strategy_arena[FP_MEMPLAN_COUNT]; /* every strategy on the planned order */
    bool strategy_planned[FP_MEMPLAN_COUNT];   /* which of them ran: all with opts.every_strategy,
                                                  else naive and opts.strategy */
    const char *method;                        /* planner candidate behind `arena` */
    uint64_t naive_bytes;                      /* every activation in its own buffer */
    uint64_t weight_bytes;                     /* initializers, constants and folded values, subgraphs included */
    uint64_t folded_bytes;                     /* of weight_bytes, the folded values: not stored in the file,
                                                  made at load (fp_liveness.folded_bytes) */
    uint64_t workspace_bytes;                  /* largest subgraph workspace of a control-flow node */
    uint64_t *live_bytes;     /* per step of `order` (n_order entries): the activation bytes live there,
                                  sizes rounded to align, subgraph workspaces included; a Constant or
                                  folded node, which allocates nothing, has the bytes of the step
                                  before it (of the first step when it comes first). The largest is
                                  lower_bound, reached at peak_step */
    uint32_t peak_step;       /* step of the full order where the planned order's LOAD is reached */
    const fp_node *peak_node; /* node run at the peak (NULL for an empty graph) */
    fp_memory_tensor *peak;   /* buffers live at the peak, largest first */
    uint32_t n_peak;
    uint32_t n_buffers; /* activation buffers (after views) */
    uint32_t n_inplace; /* in-place takeovers in the planned order */
    uint32_t n_views;   /* values sharing their input's buffer */
    uint32_t n_fused;   /* values internal to fused groups */
    uint32_t n_unknown; /* activation buffers of unknown size, counted as 0 (subgraphs too) */
} fp_memory_result;

/* Plans graph g (usually m->main; requires fp_model_link and shapes): liveness, the order of
 * opts->schedule (searched unless FP_SCHEDULE_GIVEN), offsets with opts->strategy (and every other
 * strategy with opts->every_strategy), the live bytes per step, the buffers live at the peak. A
 * control-flow node's subgraphs are planned first (recursively, same options: fp_memory_arena) and
 * the largest arena among them counts as workspace at that node's step. Findings (unknown sizes)
 * go to diag. NULL with an error on a cycle or a 64-bit overflow. */
fp_memory_result *fp_pass_memory(const fp_graph *g, const fp_memory_opts *opts, fp_diag *diag, GError **error);
void fp_memory_result_free(fp_memory_result *r);

/* The activation bytes of a graph without reuse (fp_memory_naive), for the stages that reuse no
 * memory: the figures of fp_pass_memory with the same options that do not depend on an order. */
typedef struct {
    uint64_t naive_bytes;                 /* every activation buffer, in-place outputs and workspaces included, in
                                 its own block (fp_memory_result.naive_bytes) */
    uint64_t weight_bytes;                /* as fp_memory_result's, subgraphs included */
    uint64_t folded_bytes;                /* likewise */
    uint64_t workspace_bytes;             /* largest subgraph workspace of a control-flow node */
    uint32_t n_buffers, n_views, n_fused; /* of g, as fp_memory_result's */
    uint32_t n_unknown;                   /* activation buffers of unknown size (subgraphs too) */
} fp_memory_naive_result;

/* Fills out for graph g (as fp_pass_memory requires) from its liveness: no order, no plan. Its
 * subgraphs' workspaces are their arenas with opts (fp_memory_arena), opts->reuse is not used.
 * Findings as fp_pass_memory's. False with an error on a cycle or a 64-bit overflow. */
bool fp_memory_naive(const fp_graph *g, const fp_memory_opts *opts, fp_memory_naive_result *out, fp_diag *diag,
                     GError **error);

/* The arena of one strategy (fp_memory_arena), for searches that plan many sizes of one graph. */
typedef struct {
    uint64_t arena;        /* fp_pass_memory's arena with the same options */
    const char *method;    /* planner candidate behind it: with a hint from opts->reuse, the hint
                                 when it reaches LOAD, where fp_pass_memory may name an earlier
                                 candidate reaching LOAD too (fp_memplan_arena) */
    uint64_t weight_bytes; /* as fp_memory_result's */
    uint64_t folded_bytes; /* likewise */
    uint64_t workspace_bytes;
    uint32_t n_unknown;
} fp_memory_arena_result;

/* Fills out for graph g as fp_pass_memory would plan it with opts (the same liveness, order and
 * arena), without the other strategies, the full order, the live bytes or the peak. With
 * opts->reuse, the liveness kept there is resized instead of built when it still matches g, and the
 * last winning candidate is tried first. Findings and errors as fp_pass_memory's. */
bool fp_memory_arena(const fp_graph *g, const fp_memory_opts *opts, fp_memory_arena_result *out, fp_diag *diag,
                     GError **error);

/* Empty state for fp_memory_opts.reuse; method (may be NULL) is the candidate to try first, e.g.
 * the method of a full plan of the same graph. Plans with it are of one graph (the first planned;
 * subgraphs are planned without it), whose structure may change between them (fp_liveness_resize
 * decides whether the liveness is kept). */
fp_memory_reuse *fp_memory_reuse_new(const char *method);
void fp_memory_reuse_free(fp_memory_reuse *reuse);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_memory_reuse, fp_memory_reuse_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_memory_result, fp_memory_result_free)

#endif
