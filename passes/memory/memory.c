/* memory.c - the memory pass: subgraph workspaces, liveness, schedule search, offset plans, the
 * buffers live at the peak. */
#include "memory.h"

#include <string.h>

#include "passes/memory/liveness.h"
#include "passes/memory/schedule.h"

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

/* The buffers live at memgraph step p, from the lifetimes `out` (ne entries: the buffers, then the
 * workspaces when planned; chain members merged into their first buffer through `slot`) and the
 * offsets of the plan. Only the chains live at p are looked at further: few, where buffers are many. */
static void peak_tensors(const fp_liveness *lv, const fp_membuf *out, size_t ne, const uint32_t *slot,
                         const uint64_t *off, const uint32_t *order, const uint32_t *step_of, uint32_t p,
                         uint64_t align, fp_memory_result *r)
{
    const fp_memgraph *mg = &lv->mg;
    uint32_t n = mg->n_nodes, nb = mg->n_bufs;
    uint32_t count = 0;
    for (uint32_t e = 0; e < ne; e++)
        count += out[e].size && out[e].first <= p && p <= out[e].last;
    r->peak = g_new(fp_memory_tensor, count + 1);
    /* per live chain (its first buffer, by index in r->peak): values it holds, whether one of its
     * buffers is a graph output, and the latest step any of them is read at */
    int32_t *at = g_new(int32_t, (size_t)nb + 1);
    memset(at, 0xff, ((size_t)nb + 1) * sizeof *at);
    int64_t *last_read = g_new(int64_t, count + 1);
    uint32_t *pos = NULL;
    for (uint32_t e = 0; e < ne; e++) {
        if (!out[e].size || out[e].first > p || out[e].last < p)
            continue;
        fp_memory_tensor *t = &r->peak[r->n_peak];
        memset(t, 0, sizeof *t);
        fp_memplan_align(out[e].size, align, &t->bytes); /* no overflow: the plan succeeded */
        t->offset = off[e];
        t->first = step_of[out[e].first];
        t->last = step_of[out[e].last];
        if (e >= nb) {
            t->ws_node = lv->nodes[e - nb];
            t->producer = t->last_reader = t->ws_node;
            t->values = 0;
        } else {
            t->value = lv->buf_value[e];
            t->producer = mg->producer[e] >= 0 ? lv->nodes[mg->producer[e]] : NULL;
            t->input = (mg->flags[e] & FP_BUF_INPUT) != 0;
            last_read[r->n_peak] = -1;
            at[e] = (int32_t)r->n_peak;
        }
        r->n_peak++;
    }
    for (uint32_t b = 0; b < nb; b++) {
        int32_t k = at[slot[b]];
        if (k < 0)
            continue;
        fp_memory_tensor *t = &r->peak[k];
        t->values += lv->buf_aliases[b];
        t->output |= (mg->flags[b] & FP_BUF_OUTPUT) != 0;
        if (mg->reader_start[b] == mg->reader_start[b + 1])
            continue;
        if (!pos) {
            pos = g_new(uint32_t, n + 1);
            for (uint32_t s = 0; s < n; s++)
                pos[order[s]] = s;
        }
        for (uint32_t j = mg->reader_start[b]; j < mg->reader_start[b + 1]; j++)
            last_read[k] = MAX(last_read[k], (int64_t)pos[mg->readers[j]]);
    }
    for (uint32_t k = 0; k < r->n_peak; k++)
        if (!r->peak[k].ws_node)
            r->peak[k].last_reader = last_read[k] >= 0 ? lv->nodes[order[last_read[k]]] : NULL;
    qsort(r->peak, r->n_peak, sizeof *r->peak, cmp_tensor);
    g_free(pos);
    g_free(last_read);
    g_free(at);
}

/* The naive arena (every buffer and workspace in its own block, in-place takeovers included: each
 * buffer at its own size) of the memgraph's buffers then nodes' workspaces, as fp_memplan_plan sums
 * it on that array of sizes (the same error on overflow); off (may be NULL) receives the offsets.
 * Workspaces are ws[v] per memgraph node v, or with by_id (the memgraph's IR nodes) ws[by_id[v]->id];
 * with ws NULL there are none, nor their entries in off. */
static bool naive_arena(const fp_memgraph *mg, const uint64_t *ws, fp_node *const *by_id, uint64_t align, uint64_t *off,
                        uint64_t *arena, GError **error)
{
    fp_memplan_naive nv = {0};
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        if (!fp_memplan_naive_add(&nv, mg->bytes[b], align, off ? &off[b] : NULL, error))
            return false;
    for (uint32_t v = 0; v < mg->n_nodes && ws; v++)
        if (!fp_memplan_naive_add(&nv, by_id ? ws[by_id[v]->id] : ws[v], align,
                                  off ? &off[mg->n_bufs + v] : NULL, error))
            return false;
    *arena = nv.total;
    return true;
}

/* Plans every strategy (or only the requested one) on the lifetimes of `order`. */
static bool plan(const fp_liveness *lv, const uint32_t *order, const fp_memory_opts *opts, fp_memory_result *r,
                 GError **error)
{
    const fp_memgraph *mg = &lv->mg;
    /* planner entries: the buffers, and the nodes' workspaces when some node has one (entries of
     * size 0 change no plan: they are left out) */
    bool ws = fp_memgraph_has_workspace(mg);
    size_t nb = (size_t)mg->n_bufs + (ws ? mg->n_nodes : 0);
    g_autofree fp_membuf *out = g_new(fp_membuf, nb + 1);
    g_autofree uint32_t *slot = g_new(uint32_t, mg->n_bufs + 1);
    g_autofree uint64_t *off = g_new(uint64_t, nb + 1);
    r->n_inplace = fp_memgraph_lifetimes_n(mg, order, ws, out, slot);
    fp_memplan_result pr = {0};
    /* naive: no reuse at all, in-place takeovers included: every buffer at its own size (the naive
     * plan is checked first: no other strategy can overflow when it does not) */
    bool naive = opts->strategy == FP_MEMPLAN_NAIVE;
    if (!naive_arena(mg, ws ? mg->workspace : NULL, NULL, r->align, naive ? off : NULL,
                     &r->strategy_arena[FP_MEMPLAN_NAIVE], error))
        return false;
    r->strategy_planned[FP_MEMPLAN_NAIVE] = true;
    for (unsigned s = FP_MEMPLAN_NAIVE + 1; s < FP_MEMPLAN_COUNT && !opts->search_only_if_asked; s++) {
        fp_memplan_result x;
        if (s == opts->strategy)
            continue;
        if (!fp_memplan_arena(out, nb, r->align, (fp_memplan_strategy)s, NULL, &x, error))
            return false;
        r->strategy_arena[s] = x.arena;
        r->strategy_planned[s] = true;
    }
    if (naive) {
        pr.arena = r->strategy_arena[FP_MEMPLAN_NAIVE];
        pr.method = fp_memplan_strategy_name(FP_MEMPLAN_NAIVE);
        if (!fp_memplan_load(out, nb, r->align, &pr.load, &pr.peak_step, error)) /* the floor keeps the reuse */
            return false;
    } else if (!fp_memplan_plan(out, nb, r->align, opts->strategy, off, &pr, error)) {
        return false;
    }
    if (opts->reuse)
        opts->reuse->method = pr.method;
    r->strategy_arena[opts->strategy] = pr.arena;
    r->strategy_planned[opts->strategy] = true;
    r->arena = pr.arena;
    r->lower_bound = pr.load;
    r->method = pr.method;
    r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE];
    r->n_order = mg->n_nodes + lv->n_free;
    r->order = g_new(fp_node *, r->n_order + 1);
    g_autofree uint32_t *step_of = g_new(uint32_t, mg->n_nodes + 1);
    fp_liveness_full_order(lv, order, r->order, step_of);
    if (mg->n_nodes) {
        r->peak_step = step_of[pr.peak_step];
        r->peak_node = lv->nodes[order[pr.peak_step]];
        peak_tensors(lv, out, nb, slot, off, order, step_of, pr.peak_step, r->align, r);
    }
    return true;
}

/* opts->arena_only: the arena of opts->strategy on the lifetimes of `order`, trying the reuse
 * state's last winning candidate first. */
static bool plan_arena(const fp_liveness *lv, const uint32_t *order, const fp_memory_opts *opts, fp_memory_result *r,
                       GError **error)
{
    const fp_memgraph *mg = &lv->mg;
    bool ws = fp_memgraph_has_workspace(mg); /* as in plan() */
    size_t nb = (size_t)mg->n_bufs + (ws ? mg->n_nodes : 0);
    g_autofree fp_membuf *out = g_new(fp_membuf, nb + 1);
    r->n_inplace = fp_memgraph_lifetimes_n(mg, order, ws, out, NULL);
    fp_memplan_result pr;
    if (opts->strategy == FP_MEMPLAN_NAIVE) { /* no reuse at all, in-place takeovers included */
        if (!naive_arena(mg, ws ? mg->workspace : NULL, NULL, r->align, NULL, &pr.arena, error))
            return false;
        pr.method = fp_memplan_strategy_name(FP_MEMPLAN_NAIVE);
    } else {
        if (!fp_memplan_arena(out, nb, r->align, opts->strategy, opts->reuse ? opts->reuse->method : NULL, &pr,
                              error))
            return false;
        r->lower_bound = pr.load;
    }
    r->arena = r->strategy_arena[opts->strategy] = pr.arena;
    r->strategy_planned[opts->strategy] = true;
    r->method = pr.method;
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

static bool naive_exact(const fp_graph *g, const uint64_t *ws, fp_diag *diag, fp_memory_result *r, GError **error);

/* opts->naive_only: every buffer and workspace in its own block, summed as the naive strategy of
 * plan() sums them (the same array of sizes, hence the same overflow error), without the
 * dependencies, lifetimes and orders nothing here needs. */
static bool naive_only(const fp_graph *g, const uint64_t *ws, fp_diag *diag, fp_memory_result *r, GError **error)
{
    fp_liveness_naive nv;
    r->schedule = r->schedule_method = "given";
    r->strategy_planned[FP_MEMPLAN_NAIVE] = true;
    r->method = fp_memplan_strategy_name(FP_MEMPLAN_NAIVE);
    /* no workspace, no finding to report: the sum alone, without numbering the buffers */
    if (!ws && !fp_liveness_naive_sum(g, r->align, &nv, error))
        return false;
    if (!ws && nv.complete && (!diag || !nv.n_unknown)) {
#ifdef FP_DEBUG
        fp_memory_result check = {.align = r->align};
        g_assert(naive_exact(g, ws, NULL, &check, NULL));
        g_assert(check.arena == nv.bytes && check.weight_bytes == nv.weight_bytes && check.n_unknown == nv.n_unknown &&
                 check.n_buffers == nv.n_bufs && check.n_views == nv.n_views && check.n_fused == nv.n_fused);
#endif
        if (!g_uint64_checked_add(&r->weight_bytes, r->weight_bytes, nv.weight_bytes))
            r->weight_bytes = UINT64_MAX;
        r->n_unknown += nv.n_unknown;
        r->n_buffers = nv.n_bufs;
        r->n_views = nv.n_views;
        r->n_fused = nv.n_fused;
        r->arena = r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE] = nv.bytes;
        return true;
    }
    return naive_exact(g, ws, diag, r, error);
}

/* naive_only from the numbered buffers (their order tells which one overflows, and the findings). */
static bool naive_exact(const fp_graph *g, const uint64_t *ws, fp_diag *diag, fp_memory_result *r, GError **error)
{
    g_autoptr(fp_liveness) lv = fp_liveness_build_buffers(g, diag, error);
    if (!lv)
        return false;
    const fp_memgraph *mg = &lv->mg;
    take_counts(r, lv);
    uint64_t arena;
    if (!naive_arena(mg, ws, lv->nodes, r->align, NULL, &arena, error))
        return false;
    r->arena = r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE] = arena;
    return true;
}

fp_memory_result *fp_pass_memory(const fp_graph *g, const fp_memory_opts *opts, fp_diag *diag, GError **error)
{
    g_autoptr(fp_memory_result) r = g_new0(fp_memory_result, 1);
    r->graph = g;
    r->opts = *opts;
    r->align = opts->align ? opts->align : FP_MEMORY_DEFAULT_ALIGN;
    /* without subgraphs anywhere in the model no node has a workspace: ws stays NULL (zeros) */
    g_autofree uint64_t *ws = g->model && g->model->graphs->len == 1 ? NULL : g_new0(uint64_t, g->nodes->len + 1);
    if (ws && !subgraph_workspace(g, opts, diag, ws, r, error))
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
    bool search = opts->schedule == FP_SCHEDULE_OPTIMIZED || !opts->search_only_if_asked;
    g_autofree uint32_t *given = g_new(uint32_t, mg->n_nodes + 1);
    g_autofree uint32_t *best = search ? g_new(uint32_t, mg->n_nodes + 1) : NULL;
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        given[v] = v; /* memgraph nodes are numbered in the graph's topological order */
    r->schedule = "given";
    r->schedule_method = "given";
    if (search) {
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
