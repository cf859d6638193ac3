/* pipeline.c - the analysis pipeline (see pipeline.h): one straight list of passes. */
#include "passes/pipeline.h"

#include <string.h>

#include "ir/arena.h"
#include "passes/metrics.h"

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

/* Fills a stage from the graph as it is now; the memory result gives the activation bytes. `given`:
 * the cost of the graph as it is now when the caller has it (taken over), else NULL; `same`: an
 * earlier stage of the graph as it is now, whose counts hold, else NULL. *mem_keep and *cost_keep,
 * when not NULL, receive the results (else they are freed). */
static bool snapshot(fp_model *m, const fp_pipeline_opts *o, fp_stage *st, const char *name, bool planned,
                     fp_cost_result *given, const fp_stage *same, fp_memory_result **mem_keep,
                     fp_cost_result **cost_keep, fp_diag *diag, GError **error)
{
    g_autoptr(fp_cost_result) cost = given;
    memset(st, 0, sizeof *st);
    st->name = name;
    if (same) {
        st->ops = same->ops;
        st->kernels = same->kernels;
        st->folded = same->folded;
        st->conversions = same->conversions;
        st->weight_bytes = same->weight_bytes;
    } else {
        count_stage(m, st);
    }
    /* stages without reuse need only the naive sum: plan nothing else (with subgraphs, their
     * workspace is their arena with the chosen strategy, so the full pass runs) */
    fp_memory_opts mo = o->memory;
    if (!planned && m->graphs->len == 1)
        mo = (fp_memory_opts){.strategy = FP_MEMPLAN_NAIVE, .schedule = FP_SCHEDULE_GIVEN, .align = mo.align,
                              .search_only_if_asked = true, .naive_only = true};
    fp_memory_result *mem = fp_pass_memory(m->main, &mo, planned ? diag : NULL, error);
    if (!mem)
        return false;
    st->planned = planned;
    st->activation_bytes = planned ? mem->arena : mem->naive_bytes;
    if (!cost && !cost_keep && !planned)
        st->latency_s = fp_cost_total(m, o->device, o->what_if); /* the total is all it keeps */
    else {
        if (!cost)
            cost = fp_pass_cost(m, o->device, o->what_if, planned ? diag : NULL);
        else if (planned)
            fp_cost_warn_unknown(cost, diag);
        st->latency_s = cost->total_s;
    }
    if (mem_keep)
        *mem_keep = mem;
    else
        fp_memory_result_free(mem);
    if (cost_keep)
        *cost_keep = g_steal_pointer(&cost);
    return true;
}

bool fp_pipeline_run(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    memset(res, 0, sizeof *res);
    /* the passes' per-node arrays (fusion records, costs, liveness, plans) grow the heap by ~170
     * bytes per node of a big graph (1M nodes, measured): fault most of it in on another core while
     * shape inference runs */
    size_t nodes = 0;
    fp_model_number(m, &nodes, NULL);
    if (nodes >= 65536)
        fp_arena_prefault_heap(nodes * 128);
    if (!fp_pass_shapes(m, &o->shapes, diag, error) || !after(m, o, "shapes", error))
        return false;
    fp_pass_metrics(m, diag);
    if (!after(m, o, "metrics", error))
        return false;
    if (!snapshot(m, o, &res->stages[0], "original", false, NULL, NULL, NULL, NULL, NULL, error))
        return false;

    res->fusions = fp_fusion_list_new();
    if (!fp_pass_fuse(m, o->target, res->fusions, diag, error))
        return false;
    fp_pass_metrics(m, NULL); /* fused kernels read and write only their external tensors */
    if (!after(m, o, "fuse", error))
        return false;
    g_autoptr(fp_cost_result) fused_cost = NULL;
    if (!snapshot(m, o, &res->stages[1], "after fusion", false, NULL, NULL, NULL, &fused_cost, NULL, error))
        return false;

    if (!fp_pass_layout(m, o->target, &res->layout, diag, error))
        return false;
    if (res->layout.rewrote) { /* else metrics, cost and counts are those of the fused graph */
        fp_pass_metrics(m, NULL);
        g_clear_pointer(&fused_cost, fp_cost_result_free);
    }
    if (!after(m, o, "layout", error))
        return false;
    if (!snapshot(m, o, &res->stages[2], "final (fusion + layout + memory reuse)", true, g_steal_pointer(&fused_cost),
                  res->layout.rewrote ? NULL : &res->stages[1], &res->memory, &res->cost, diag, error))
        return false;
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
