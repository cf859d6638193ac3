/* recompute.h - the recompute (checkpointing) planner (passes/training/recompute.c): which saved
 * tensors to drop in forward and recompute in backward so that saved activations stay within a
 * budget at every point of the step, with the fewest extra FLOPs. The forward graph is cut into
 * stages at its articulation values (one tensor crosses the cut, besides tensors held for the whole
 * step: graph inputs, values no parameter flows into, counted in base); a plan splits the stages into
 * segments, each kept (its saves held from forward) or recomputed (its start held, the segment run
 * forward again before its backward). The plan is proven optimal over these plans, or else comes
 * with a lower bound on the optimum (dynamic programming over the stages: bucketed, then over Pareto
 * fronts); Chen et al.'s sqrt(n) segmentation is the baseline. Rules: docs/training.md, "Recompute". */
#ifndef FP_TRAINING_RECOMPUTE_H
#define FP_TRAINING_RECOMPUTE_H

#include "passes/training/saved.h"

typedef enum { FP_RC_KEEP, FP_RC_START, FP_RC_CONTINUE } fp_rc_mode;

typedef struct {
    uint32_t n;             /* stages */
    uint64_t base;          /* saved bytes no plan drops: the graph's inputs, the tensors held
                                  throughout that cuts cross */
    uint64_t *own;          /* per stage: the saved bytes of the storages it makes, auxiliaries too */
    uint64_t *src;          /* per stage: bytes of the tensor it starts from (the cut before it) */
    bool *src_owned;        /* that tensor is saved, and made by the stage just before (then held
                                  when that one is kept) */
    bool *src_saved;        /* src_owned, and an op of this stage saves it: held when this stage is
                                  kept even if the one before is recomputed */
    uint64_t *flops;        /* per stage: its forward FLOPs */
    double *time_s;         /* per stage: its estimated time (0 without a cost) */
    const fp_value **start; /* per stage: the tensor it starts from (NULL for the first) */
} fp_rc_stages;

typedef struct {
    uint64_t budget;      /* as asked */
    bool feasible;        /* some plan fits the budget */
    bool exact;           /* proven optimal: no plan within the budget recomputes fewer FLOPs */
    uint64_t lower_flops; /* no plan within the budget recomputes fewer FLOPs (flops when exact) */
    uint64_t peak_bytes;  /* the most saved activations live at once under the plan */
    uint64_t end_bytes;   /* held at the end of forward */
    uint64_t flops;       /* recomputed in backward */
    double time_s;        /* their estimated time */
    uint32_t segments;    /* recomputed segments */
    fp_rc_mode *mode;     /* per stage (n entries) */
} fp_rc_plan;

/* The stages of m's main graph and their saved bytes (saved: fp_train_saved_run on m); per-op
 * times from `cost` when given (its ops in m's order; may be NULL). Free with fp_rc_stages_clear. */
void fp_rc_stages_make(const fp_model *m, const fp_train_saved *saved, const void *cost, fp_rc_stages *out);
/* n stages of zeros (stage lists made by hand); fp_rc_stages_clear frees them too. */
void fp_rc_stages_alloc(fp_rc_stages *s, uint32_t n);
void fp_rc_stages_clear(fp_rc_stages *s);

/* The plan of fewest recomputed FLOPs whose saved activations never exceed `budget` bytes
 * (feasible false when none fits). Clear with fp_rc_plan_clear. */
void fp_rc_plan_best(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *out);
/* The searches fp_rc_plan_best runs, with their sizes given: a search bucketed by bytes held (a
 * cheap plan), the exact search over Pareto fronts bounded by that plan's cost, which gives up after
 * `exact_steps` steps (0: not tried), and when it does, more bucketed searches: by held again, then
 * by cost (each recomputed segment's FLOPs rounded down to a multiple of a step: exact over the
 * rounded costs, so a lower bound on the optimum), then a Lagrangian relaxation of the bytes held
 * at the end of forward (another lower bound). `buckets` >= 2 per boundary in each, 0: as many
 * as their work allows. p->exact says whether the plan is proven optimal, p->lower_flops the bound. */
void fp_rc_plan_search(const fp_rc_stages *s, uint64_t budget, uint32_t buckets, uint64_t exact_steps, fp_rc_plan *out);
/* The same by trying every plan (tests; n <= 16). */
void fp_rc_plan_exhaustive(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *out);
/* Chen et al.'s plan: segments of ceil(sqrt(n)) stages, each recomputed but the last. */
void fp_rc_plan_chen(const fp_rc_stages *s, fp_rc_plan *out);
/* The smallest budget some plan fits. */
uint64_t fp_rc_min_budget(const fp_rc_stages *s);
/* The plan's figures (peak_bytes, end_bytes, flops, time_s, segments) from its modes. */
void fp_rc_plan_eval(const fp_rc_stages *s, fp_rc_plan *p);
/* Replays plan p stage by stage (forward, then each stage's backward in reverse, a recomputed
 * segment made again before its last stage's backward) and returns the most saved bytes live. */
uint64_t fp_rc_replay(const fp_rc_stages *s, const fp_rc_plan *p);
void fp_rc_plan_clear(fp_rc_plan *p);

#endif
