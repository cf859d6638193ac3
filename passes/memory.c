/* memory.c - the memory pass: subgraph workspaces, liveness, schedule search, offset plans, the
 * buffers live at the peak. */
#include "memory.h"

#include <string.h>

#include "passes/liveness.h"
#include "passes/schedule.h"

struct fp_memory_reuse {
    const fp_graph *graph; /* whose liveness lv is (NULL before the first plan) */
    fp_liveness *lv;
    const char *method;    /* planner candidate that won last (a static string) */
};

fp_memory_reuse *fp_memory_reuse_new(const char *method)
{
    fp_memory_reuse *u = g_new0(fp_memory_reuse, 1);
    u->method = method;
    return u;
}

void fp_memory_reuse_free(fp_memory_reuse *reuse)
{
    if (!reuse)
        return;
    fp_liveness_free(reuse->lv);
    g_free(reuse);
}

void fp_memory_result_free(fp_memory_result *r)
{
    if (!r)
        return;
    g_free(r->order);
    g_free(r->peak);
    g_free(r);
}

/* Plans every subgraph of g's nodes: ws[node id] receives the largest subgraph arena of a
 * control-flow node; their weights and unknown sizes are added to r. */
static bool subgraph_workspace(const fp_graph *g, const fp_memory_opts *opts, fp_diag *diag, uint64_t *ws,
                               fp_memory_result *r, GError **error)
{
    fp_memory_opts sub_opts = *opts;
    sub_opts.reuse = NULL; /* it holds the outer graph's state */
    opts = &sub_opts;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        for (uint32_t k = 0; k < n->n_subgraphs; k++) {
            g_autoptr(fp_memory_result) sub = fp_pass_memory(n->subgraphs[k], opts, diag, error);
            if (!sub)
                return false;
            ws[n->id] = MAX(ws[n->id], sub->arena);
            r->workspace_bytes = MAX(r->workspace_bytes, sub->arena);
            if (!g_uint64_checked_add(&r->weight_bytes, r->weight_bytes, sub->weight_bytes))
                r->weight_bytes = UINT64_MAX;
            r->n_unknown += sub->n_unknown;
        }
    }
    return true;
}

static int cmp_tensor(const void *a, const void *b)
{
    const fp_memory_tensor *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return (x->first > y->first) - (x->first < y->first);
}

/* The buffers live at memgraph step p, from the lifetimes `out` (n_bufs + n_nodes entries, chain
 * members merged into their first buffer through `slot`) and the offsets of the plan. */
static void peak_tensors(const fp_liveness *lv, const fp_membuf *out, const uint32_t *slot, const uint64_t *off,
                         const uint32_t *order, const uint32_t *step_of, uint32_t p, uint64_t align,
                         fp_memory_result *r)
{
    const fp_memgraph *mg = &lv->mg;
    uint32_t n = mg->n_nodes, nb = mg->n_bufs;
    uint32_t *pos = g_new(uint32_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    /* per chain (first buffer): values it holds, and its last reader */
    uint32_t *values = g_new0(uint32_t, nb + 1);
    int64_t *last_read = g_new(int64_t, nb + 1);
    bool *holds_output = g_new0(bool, nb + 1); /* per chain: one of its buffers is a graph output */
    for (uint32_t b = 0; b < nb; b++)
        last_read[b] = -1;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t root = slot[b];
        values[root] += lv->buf_aliases[b];
        holds_output[root] |= (mg->flags[b] & FP_BUF_OUTPUT) != 0;
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            last_read[root] = MAX(last_read[root], (int64_t)pos[mg->readers[k]]);
    }
    r->peak = g_new(fp_memory_tensor, nb + n + 1);
    for (uint32_t e = 0; e < nb + n; e++) {
        if (!out[e].size || out[e].first > p || out[e].last < p)
            continue;
        fp_memory_tensor *t = &r->peak[r->n_peak++];
        memset(t, 0, sizeof *t);
        fp_memplan_align(out[e].size, align, &t->bytes); /* no overflow: the plan succeeded */
        t->offset = off[e];
        t->first = step_of[out[e].first];
        t->last = step_of[out[e].last];
        if (e >= nb) {
            t->ws_node = lv->nodes[e - nb];
            t->producer = t->last_reader = t->ws_node;
            t->values = 0;
            continue;
        }
        t->value = lv->buf_value[e];
        t->producer = mg->producer[e] >= 0 ? lv->nodes[mg->producer[e]] : NULL;
        t->last_reader = last_read[e] >= 0 ? lv->nodes[order[last_read[e]]] : NULL;
        t->values = values[e];
        t->input = (mg->flags[e] & FP_BUF_INPUT) != 0;
        t->output = holds_output[e];
    }
    qsort(r->peak, r->n_peak, sizeof *r->peak, cmp_tensor);
    g_free(values);
    g_free(last_read);
    g_free(holds_output);
    g_free(pos);
}

/* Plans every strategy (or only the requested one) on the lifetimes of `order`. */
static bool plan(const fp_liveness *lv, const uint32_t *order, const fp_memory_opts *opts, fp_memory_result *r,
                 GError **error)
{
    const fp_memgraph *mg = &lv->mg;
    size_t nb = (size_t)mg->n_bufs + mg->n_nodes;
    fp_membuf *out = g_new(fp_membuf, nb + 1);
    uint32_t *slot = g_new(uint32_t, mg->n_bufs + 1);
    uint64_t *off = g_new(uint64_t, nb + 1), *scratch = g_new(uint64_t, nb + 1);
    uint32_t *step_of = g_new(uint32_t, mg->n_nodes + 1);
    r->n_inplace = fp_memgraph_lifetimes(mg, order, out, slot);
    bool ok = true;
    fp_memplan_result pr = {0};
    /* naive: no reuse at all, in-place takeovers included: every buffer at its own size */
    fp_membuf *raw = g_memdup2(out, (nb + 1) * sizeof *out);
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        raw[b].size = mg->bytes[b];
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT && ok; s++) {
        bool wanted = s == opts->strategy || s == FP_MEMPLAN_NAIVE || !opts->search_only_if_asked;
        if (!wanted || (s == opts->strategy && s != FP_MEMPLAN_NAIVE))
            continue;
        fp_memplan_result x;
        ok = fp_memplan_plan(s == FP_MEMPLAN_NAIVE ? raw : out, nb, r->align, (fp_memplan_strategy)s, scratch, &x, error);
        if (ok) {
            r->strategy_arena[s] = x.arena;
            r->strategy_planned[s] = true;
        }
    }
    ok = ok && fp_memplan_plan(opts->strategy == FP_MEMPLAN_NAIVE ? raw : out, nb, r->align, opts->strategy, off, &pr,
                               error);
    if (ok && opts->strategy == FP_MEMPLAN_NAIVE)
        ok = fp_memplan_load(out, nb, r->align, &pr.load, &pr.peak_step, error); /* the floor keeps the reuse */
    if (ok && opts->reuse)
        opts->reuse->method = pr.method;
    if (ok) {
        r->strategy_arena[opts->strategy] = pr.arena;
        r->strategy_planned[opts->strategy] = true;
        r->arena = pr.arena;
        r->lower_bound = pr.load;
        r->method = pr.method;
        r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE];
        r->n_order = mg->n_nodes + lv->n_free;
        r->order = g_new(fp_node *, r->n_order + 1);
        fp_liveness_full_order(lv, order, r->order, step_of);
        if (mg->n_nodes) {
            r->peak_step = step_of[pr.peak_step];
            r->peak_node = lv->nodes[order[pr.peak_step]];
            peak_tensors(lv, out, slot, off, order, step_of, pr.peak_step, r->align, r);
        }
    }
    g_free(raw);
    g_free(step_of);
    g_free(scratch);
    g_free(off);
    g_free(slot);
    g_free(out);
    return ok;
}

/* opts->arena_only: the arena of opts->strategy on the lifetimes of `order`, trying the reuse
 * state's last winning candidate first. */
static bool plan_arena(const fp_liveness *lv, const uint32_t *order, const fp_memory_opts *opts, fp_memory_result *r,
                       GError **error)
{
    const fp_memgraph *mg = &lv->mg;
    size_t nb = (size_t)mg->n_bufs + mg->n_nodes;
    g_autofree fp_membuf *out = g_new(fp_membuf, nb + 1);
    r->n_inplace = fp_memgraph_lifetimes(mg, order, out, NULL);
    if (opts->strategy == FP_MEMPLAN_NAIVE) /* no reuse at all, in-place takeovers included */
        for (uint32_t b = 0; b < mg->n_bufs; b++)
            out[b].size = mg->bytes[b];
    fp_memplan_result pr;
    if (!fp_memplan_arena(out, nb, r->align, opts->strategy, opts->reuse ? opts->reuse->method : NULL, &pr, error))
        return false;
    r->arena = r->strategy_arena[opts->strategy] = pr.arena;
    r->strategy_planned[opts->strategy] = true;
    r->method = pr.method;
    if (opts->strategy != FP_MEMPLAN_NAIVE)
        r->lower_bound = pr.load;
    if (opts->reuse)
        opts->reuse->method = pr.method;
    return true;
}

/* The liveness of g: opts->reuse's when it is g's and still matches g's structure (brought to the
 * current sizes), else built (and kept in opts->reuse for the next plan). *owned receives what the
 * caller must free. */
static fp_liveness *liveness(const fp_graph *g, const fp_memory_opts *opts, const uint64_t *ws, fp_diag *diag,
                             fp_liveness **owned, GError **error)
{
    fp_memory_reuse *u = opts->reuse;
    *owned = NULL;
    if (u && u->graph == g && u->lv && fp_liveness_resize(u->lv, ws, diag))
        return u->lv;
    fp_liveness *lv = fp_liveness_build(g, ws, diag, error);
    if (!lv || !u || (u->graph && u->graph != g))
        return *owned = lv;
    fp_liveness_free(u->lv);
    u->graph = g;
    return u->lv = lv;
}

/* Adds the liveness's weights and unknown sizes to r and takes its buffer, view and fusion counts. */
static void take_counts(fp_memory_result *r, const fp_liveness *lv)
{
    if (!g_uint64_checked_add(&r->weight_bytes, r->weight_bytes, lv->weight_bytes))
        r->weight_bytes = UINT64_MAX;
    r->n_unknown += lv->n_unknown;
    r->n_buffers = lv->mg.n_bufs;
    r->n_views = lv->n_views;
    r->n_fused = lv->n_fused;
}

/* opts->naive_only: every buffer and workspace in its own block, summed as the naive strategy of
 * plan() sums them (the same array of sizes, hence the same overflow error), without the
 * dependencies, lifetimes and orders nothing here needs. */
static bool naive_only(const fp_graph *g, const uint64_t *ws, fp_diag *diag, fp_memory_result *r, GError **error)
{
    g_autoptr(fp_liveness) lv = fp_liveness_build_buffers(g, diag, error);
    if (!lv)
        return false;
    const fp_memgraph *mg = &lv->mg;
    take_counts(r, lv);
    size_t nb = (size_t)mg->n_bufs + mg->n_nodes;
    g_autofree fp_membuf *raw = g_new0(fp_membuf, nb + 1);
    g_autofree uint64_t *off = g_new(uint64_t, nb + 1);
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        raw[b].size = mg->bytes[b];
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        raw[mg->n_bufs + v].size = ws[lv->nodes[v]->id];
    fp_memplan_result pr;
    if (!fp_memplan_plan(raw, nb, r->align, FP_MEMPLAN_NAIVE, off, &pr, error))
        return false;
    r->arena = r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE] = pr.arena;
    r->strategy_planned[FP_MEMPLAN_NAIVE] = true;
    r->method = pr.method;
    r->schedule = r->schedule_method = "given";
    return true;
}

fp_memory_result *fp_pass_memory(const fp_graph *g, const fp_memory_opts *opts, fp_diag *diag, GError **error)
{
    g_autoptr(fp_memory_result) r = g_new0(fp_memory_result, 1);
    r->graph = g;
    r->opts = *opts;
    r->align = opts->align ? opts->align : FP_MEMORY_DEFAULT_ALIGN;
    g_autofree uint64_t *ws = g_new0(uint64_t, g->nodes->len + 1);
    if (!subgraph_workspace(g, opts, diag, ws, r, error))
        return NULL;
    if (opts->naive_only) {
        g_assert(opts->strategy == FP_MEMPLAN_NAIVE);
        return naive_only(g, ws, diag, r, error) ? g_steal_pointer(&r) : NULL;
    }
    g_autoptr(fp_liveness) owned = NULL;
    fp_liveness *lv = liveness(g, opts, ws, diag, &owned, error);
    if (!lv)
        return NULL;
    const fp_memgraph *mg = &lv->mg;
    take_counts(r, lv);
    g_autofree uint32_t *given = g_new(uint32_t, mg->n_nodes + 1);
    g_autofree uint32_t *best = g_new(uint32_t, mg->n_nodes + 1);
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        given[v] = best[v] = v; /* memgraph nodes are numbered in the graph's topological order */
    r->schedule = "given";
    r->schedule_method = "given";
    if (opts->schedule == FP_SCHEDULE_OPTIMIZED || !opts->search_only_if_asked) {
        fp_schedule_opts so = {.align = r->align};
        fp_schedule_result sr;
        if (!fp_schedule_optimize(mg, given, &so, best, &sr, error))
            return NULL;
        r->schedule_searched = true;
        r->schedule_exact = sr.exact;
        r->schedule_method = sr.method;
        r->n_segments = sr.n_segments;
        r->lower_bound_given = sr.load_given;
        r->lower_bound_optimized = sr.load_best;
    }
    const uint32_t *order = opts->schedule == FP_SCHEDULE_OPTIMIZED ? best : given;
    if (opts->schedule == FP_SCHEDULE_OPTIMIZED)
        r->schedule = "optimized";
    if (!(opts->arena_only ? plan_arena(lv, order, opts, r, error) : plan(lv, order, opts, r, error)))
        return NULL;
    if (!r->schedule_searched)
        r->lower_bound_given = r->lower_bound_optimized = r->lower_bound;
    return g_steal_pointer(&r);
}
