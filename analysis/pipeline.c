/* pipeline.c - the analysis pipeline (see pipeline.h): one straight list of passes. */
#include "analysis/pipeline.h"

#include <string.h>

#include "ir/arena.h"
#include "passes/layout.h"
#include "passes/metrics.h"
#include "ir/par.h"

static const char *const passes[] = {"shapes", "metrics", "fuse", "layout", "memory", "cost", NULL};

bool fp_pipeline_has_pass(const char *name) { return g_strv_contains(passes, name); }

/* Debug builds verify the IR after every pass; --dump-after prints it. */
static bool after(fp_model *m, const fp_pipeline_opts *o, const char *pass, GError **error)
{
#ifdef FP_DEBUG
    g_autoptr(GError) err = NULL;
    if (!fp_model_verify(m, &err)) {
        g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID, "IR invalid after pass %s: %s", pass, err->message);
        return false;
    }
#else
    (void)error;
#endif
    if (o->dump_after && strcmp(o->dump_after, pass) == 0) {
        fprintf(o->dump_out ? o->dump_out : stdout, "# IR after pass %s\n", pass);
        fp_model_dump(m, o->dump_out ? o->dump_out : stdout);
    }
    return true;
}

/* The stage's op counts (runtime ops, kernels, conversions, folded shape computations) and the
 * bytes of the distinct weights (initializers, constants, folded values) its runtime ops read, in
 * one walk over the nodes. Distinct by value: one bit per value of the model, at its
 * fp_value_index. */
static void count_stage(fp_model *m, fp_stage *st)
{
    size_t total = 0;
    fp_model_number(m, NULL, &total);
    g_autofree uint8_t *seen = g_new0(uint8_t, total / 8 + 1);
    uint64_t bytes = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_nodes_prefetch((fp_node *const *)g->nodes->pdata, g->nodes->len, i);
            const fp_node *n = g->nodes->pdata[i];
            if (n->flags & FP_NODE_REMOVED)
                continue;
            if (n->flags & FP_NODE_FOLDED) {
                st->folded++;
                continue;
            }
            st->ops++;
            st->kernels += !fp_op_has(n->op, FP_OPF_VIEW);
            st->conversions += fp_layout_is_conversion(n);
            for (uint32_t k = 0; k < n->n_inputs; k++) {
                const fp_value *v = n->inputs[k];
                bool weight = v && (v->kind == FP_VALUE_INITIALIZER || v->kind == FP_VALUE_CONSTANT ||
                                    (v->producer && (v->producer->flags & FP_NODE_FOLDED)));
                if (!weight)
                    continue;
                size_t bit = fp_value_index(v);
                uint64_t numel, b;
                if (seen[bit / 8] & (1u << (bit % 8)))
                    continue;
                seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
                if (v->tensor)
                    bytes += v->tensor->nbytes;
                else if (fp_shape_numel(&v->shape, &numel) && fp_dtype_bytes(v->dtype, numel, &b))
                    bytes += b;
            }
        }
    }
    st->weight_bytes = bytes;
}

/* A snapshot's work besides its counts and memory plan: the metrics when a pass changed the graph
 * since they were filled, then the cost. Reads the graph and writes only the nodes' metrics: for a
 * big graph it runs on the side thread (ir/par.h) while the caller counts and plans. */
typedef struct {
    fp_model *m;
    const fp_pipeline_opts *o;
    bool metrics;         /* fp_pass_metrics first (without findings) */
    bool total_only;      /* the total alone (latency), no per-op array */
    double latency_s;     /* the cost's total */
    fp_cost_result *cost; /* the per-op cost (computed without findings), unless total_only */
} side_work;

static void side_cost(void *arg)
{
    side_work *w = arg;
    if (w->metrics)
        fp_pass_metrics(w->m, NULL);
    if (w->total_only) {
        w->latency_s = fp_cost_total(w->m, w->o->device, w->o->what_if);
    } else {
        w->cost = fp_pass_cost(w->m, w->o->device, w->o->what_if, NULL);
        w->latency_s = w->cost->total_s;
    }
}

/* Whether the snapshot of m may split its work: a big model whose graphs all have their
 * topological order cached (the cache is filled here: two threads must not both fill it; on a
 * cycle nothing splits, and the error comes where it always came from). */
static bool may_split(fp_model *m)
{
    size_t nodes = 0;
    fp_model_number(m, &nodes, NULL);
    if (!fp_par_worth(nodes))
        return false;
    for (guint gi = 0; gi < m->graphs->len; gi++)
        if (!fp_graph_order(m->graphs->pdata[gi], NULL, NULL))
            return false;
    return true;
}

/* Fills a stage from the graph as it is now; the memory result gives the activation bytes.
 * `metrics`: the nodes' metrics must be filled first (a pass changed the graph). `given`: the cost of
 * the graph as it is now when the caller has it (taken over), else NULL; `given_mem`: its memory
 * result likewise, its findings already in diag (plan_ahead); `same`: an earlier stage of
 * the graph as it is now, whose counts hold, else NULL. *mem_keep and *cost_keep, when not NULL,
 * receive the results (else they are freed). The cost (with the metrics) runs beside the counts and
 * the memory plan on a big graph; findings come in the same order either way: the plan's, then
 * the cost's. */
static bool snapshot(fp_model *m, const fp_pipeline_opts *o, fp_stage *st, const char *name, bool planned,
                     bool metrics, fp_cost_result *given, fp_memory_result *given_mem, const fp_stage *same,
                     fp_memory_result **mem_keep, fp_cost_result **cost_keep, fp_diag *diag, GError **error)
{
    memset(st, 0, sizeof *st);
    st->name = name;
    side_work w = {.m = m, .o = o, .metrics = metrics, .cost = given,
                   .total_only = !given && !cost_keep && !planned}; /* the total is all it keeps */
    fp_par_job job;
    bool work = metrics || !given;
    if (work)
        fp_par_start(&job, side_cost, &w, may_split(m));
    if (same) {
        st->ops = same->ops;
        st->kernels = same->kernels;
        st->folded = same->folded;
        st->conversions = same->conversions;
        st->weight_bytes = same->weight_bytes;
    } else {
        count_stage(m, st);
    }
    /* stages without reuse need only the naive sum: plan nothing else */
    fp_memory_result *mem = NULL;
    fp_memory_naive_result naive = {0};
    bool ok = planned ? (mem = given_mem ? given_mem : fp_pass_memory(m->main, &o->memory, diag, error)) != NULL
                      : fp_memory_naive(m->main, &o->memory, &naive, NULL, error);
    if (work)
        fp_par_join(&job);
    g_autoptr(fp_cost_result) cost = w.cost;
    if (!ok)
        return false;
    st->planned = planned;
    st->activation_bytes = planned ? mem->arena : naive.naive_bytes;
    st->latency_s = cost ? cost->total_s : w.latency_s;
    if (cost && planned)
        fp_cost_warn_unknown(cost, diag);
    if (mem_keep)
        *mem_keep = mem;
    else
        fp_memory_result_free(mem);
    if (cost_keep)
        *cost_keep = g_steal_pointer(&cost);
    return true;
}

/* The final stage's memory plan, made on the side thread while the layout pass runs: on a big
 * model of one graph that the pass cannot rewrite (fp_layout_may_rewrite), the graph the plan reads
 * is the final one, and the pass only reads it meanwhile. The plan's findings wait in a list of
 * their own. */
typedef struct {
    fp_model *m;
    fp_memory_opts mo;
    fp_diag *diag;         /* the plan's findings, when the caller wants findings */
    fp_memory_result *mem; /* the plan; NULL when none was made or it failed */
    GError *error;
} plan_ahead;

static void side_plan(void *arg)
{
    plan_ahead *a = arg;
    a->mem = fp_pass_memory(a->m->main, &a->mo, a->diag, &a->error);
}

static void plan_ahead_clear(plan_ahead *a)
{
    fp_memory_result_free(a->mem);
    fp_diag_free(a->diag);
    g_clear_error(&a->error);
    memset(a, 0, sizeof *a);
}

/* fp_pass_layout, with the final plan made beside it when it can be (a->mem and a->diag, else
 * nothing: a plan that failed is forgotten, and made again after the pass, which then fails where
 * it always did). False with the layout's error, a cleared. */
static bool layout_beside_plan(fp_model *m, const fp_pipeline_opts *o, plan_ahead *a, fp_layout_result *lr,
                               fp_diag *diag, GError **error)
{
    fp_par_job job;
    bool beside = m->graphs->len == 1 && may_split(m) && !fp_layout_may_rewrite(m);
    if (beside) {
        a->diag = diag ? fp_diag_new() : NULL;
        fp_par_start(&job, side_plan, a, true);
    }
    bool ok = fp_pass_layout(m, o->target, lr, diag, error);
    if (!beside)
        return ok;
    fp_par_join(&job);
    g_assert(!ok || !lr->rewrote); /* fp_layout_may_rewrite's promise */
    if (!ok || !a->mem)
        plan_ahead_clear(a);
    return ok;
}

bool fp_pipeline_run(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    memset(res, 0, sizeof *res);
    /* the passes' per-node arrays (fusion records, costs, liveness, plans) grow the heap by ~220
     * bytes per node of a big graph (FP_PIPELINE_HEAP_PER_NODE): fault most of it in on another
     * core while shape inference runs (already under way, or done, when the caller announced the
     * pipeline before reading: fp_graph_expect_work) */
    size_t nodes = 0;
    fp_model_number(m, &nodes, NULL);
    if (nodes >= 65536)
        fp_arena_prefault_heap(nodes * 128);
    if (!fp_pass_shapes(m, &o->shapes, diag, error) || !after(m, o, "shapes", error))
        return false;
    fp_pass_metrics(m, diag);
    if (!after(m, o, "metrics", error))
        return false;
    if (!snapshot(m, o, &res->stages[0], "original", false, false, NULL, NULL, NULL, NULL, NULL, NULL, error))
        return false;

    res->fusions = fp_fusion_list_new();
    if (!fp_pass_fuse(m, o->target, res->fusions, diag, error))
        return false;
    if (!after(m, o, "fuse", error)) /* neither the verifier nor the dump reads the metrics */
        return false;
    g_autoptr(fp_cost_result) fused_cost = NULL;
    /* the metrics again first: fused kernels read and write only their external tensors */
    if (!snapshot(m, o, &res->stages[1], "after fusion", false, true, NULL, NULL, NULL, NULL, &fused_cost, NULL,
                  error))
        return false;

    plan_ahead ahead = {.m = m, .mo = o->memory};
    if (!layout_beside_plan(m, o, &ahead, &res->layout, diag, error))
        return false;
    if (res->layout.rewrote) /* else metrics, cost and counts are those of the fused graph */
        g_clear_pointer(&fused_cost, fp_cost_result_free);
    if (!after(m, o, "layout", error)) {
        plan_ahead_clear(&ahead);
        return false;
    }
    if (ahead.diag) /* the plan's findings after the layout's, where the plan made below puts them */
        fp_diag_move(diag, ahead.diag);
    if (!snapshot(m, o, &res->stages[2], "final (fusion + layout + memory reuse)", true, res->layout.rewrote,
                  g_steal_pointer(&fused_cost), g_steal_pointer(&ahead.mem),
                  res->layout.rewrote ? NULL : &res->stages[1], &res->memory, &res->cost, diag, error)) {
        plan_ahead_clear(&ahead);
        return false;
    }
    plan_ahead_clear(&ahead);
    if (!after(m, o, "memory", error) || !after(m, o, "cost", error))
        return false;
    for (int i = 0; i < 3; i++)
        res->stages[i].speedup = res->stages[i].latency_s > 0 ? res->stages[0].latency_s / res->stages[i].latency_s : 1.0;
    return true;
}

void fp_pipeline_result_clear(fp_pipeline_result *res)
{
    fp_fusion_list_free(res->fusions);
    fp_memory_result_free(res->memory);
    fp_cost_result_free(res->cost);
    memset(res, 0, sizeof *res);
}
