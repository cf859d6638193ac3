/* memory.c - the memory pass: subgraph workspaces, liveness, schedule search, offset plans, the
 * live bytes per step, the buffers live at the peak. The full plan (fp_pass_memory) and the arena
 * alone (fp_memory_arena) start from the same preparation (prepare: workspaces, liveness, order,
 * lifetimes); the naive sum (fp_memory_naive) needs the workspaces and the liveness only.
 *
 * naive_fails, passed down to the subgraphs: the full plan and the naive sum check the naive sum
 * of every graph for overflow first (no other sum of the same sizes can overflow then), so their
 * subgraphs' arenas fail where a subgraph's full plan would; fp_memory_arena plans the arena
 * alone, which fails only when the arena's own sizes overflow. */
#include "memory.h"

#include <string.h>

#include "passes/memory/liveness.h"
#include "passes/memory/schedule.h"

struct fp_memory_reuse {
    const fp_graph *graph; /* whose liveness lv is (NULL before the first plan) */
    fp_liveness *lv;
    const char *method; /* planner candidate that won last (a static string) */
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
    g_free(r->live_bytes);
    g_free(r->peak);
    g_free(r);
}

/* Weights, the largest workspace and the values of unknown size of a graph and its subgraphs. */
typedef struct {
    uint64_t weight_bytes, folded_bytes, workspace_bytes;
    uint32_t n_unknown;
} totals;

static bool arena_of(const fp_graph *g, const fp_memory_opts *opts, bool naive_fails, fp_memory_arena_result *out,
                     fp_diag *diag, GError **error);

/* Adds weights of `bytes`, `folded` of them folded (fp_liveness.folded_bytes), to t. */
static void add_weights(totals *t, uint64_t bytes, uint64_t folded)
{
    if (!g_uint64_checked_add(&t->weight_bytes, t->weight_bytes, bytes))
        t->weight_bytes = UINT64_MAX;
    if (!g_uint64_checked_add(&t->folded_bytes, t->folded_bytes, folded))
        t->folded_bytes = UINT64_MAX;
}

/* Plans every subgraph of g's nodes (their arenas, without opts->reuse: it holds the outer
 * graph's state): ws[node id] receives the largest subgraph arena of a control-flow node; their
 * weights, workspace and unknown sizes are added to t. */
static bool subgraph_workspace(const fp_graph *g, const fp_memory_opts *opts, bool naive_fails, fp_diag *diag,
                               uint64_t *ws, totals *t, GError **error)
{
    fp_memory_opts sub_opts = *opts;
    sub_opts.reuse = NULL;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        for (uint32_t k = 0; k < n->n_subgraphs; k++) {
            fp_memory_arena_result sub;
            if (!arena_of(n->subgraphs[k], &sub_opts, naive_fails, &sub, diag, error))
                return false;
            ws[n->id] = MAX(ws[n->id], sub.arena);
            t->workspace_bytes = MAX(t->workspace_bytes, sub.arena);
            add_weights(t, sub.weight_bytes, sub.folded_bytes);
            t->n_unknown += sub.n_unknown;
        }
    }
    return true;
}

/* The workspace per IR node id of g (*ws; NULL, all zeros, when the model has no subgraph at all)
 * from its subgraphs' plans, into t. */
static bool workspaces(const fp_graph *g, const fp_memory_opts *opts, bool naive_fails, fp_diag *diag, uint64_t **ws,
                       totals *t, GError **error)
{
    *ws = g->model && g->model->graphs->len == 1 ? NULL : g_new0(uint64_t, g->nodes->len + 1);
    return !*ws || subgraph_workspace(g, opts, naive_fails, diag, *ws, t, error);
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

/* The naive arena (every buffer and, with ws, every node's workspace in its own block, in-place
 * takeovers included: each buffer at its own size) of the memgraph, as fp_memplan_plan sums it on
 * that array of sizes (the same error on overflow); off (may be NULL) receives the offsets. No
 * plan of the same entries overflows when this sum does not. */
static bool naive_arena(const fp_memgraph *mg, bool ws, uint64_t align, uint64_t *off, uint64_t *arena, GError **error)
{
    fp_memplan_naive nv = {0};
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        if (!fp_memplan_naive_add(&nv, mg->bytes[b], align, off ? &off[b] : NULL, error))
            return false;
    for (uint32_t v = 0; v < mg->n_nodes && ws; v++)
        if (!fp_memplan_naive_add(&nv, mg->workspace[v], align, off ? &off[mg->n_bufs + v] : NULL, error))
            return false;
    *arena = nv.total;
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
    fp_liveness *lv = fp_liveness_build(g, ws, &(fp_liveness_opts){opts->outside, opts->float_as}, diag, error);
    if (!lv || !u || (u->graph && u->graph != g))
        return *owned = lv;
    fp_liveness_free(u->lv);
    u->graph = g;
    return u->lv = lv;
}

/* What a plan of g starts from: the totals of its subgraphs and liveness, the liveness, the order
 * of opts->schedule (and the search's result), and the planner entries of that order. */
typedef struct {
    uint64_t align;
    totals t;
    fp_liveness *lv, *owned; /* g's liveness; owned: when it is not opts->reuse's */
    uint32_t *given, *best;  /* memgraph orders: the given one, the searched one (NULL: no search) */
    const uint32_t *order;   /* the one planned */
    fp_schedule_result sr;   /* of the search, when best is set */
    bool ws;                 /* the entries include the nodes' workspaces (some node has one) */
    size_t ne;               /* entries: the buffers, then with ws the workspaces */
    fp_membuf *out;
    uint32_t *slot; /* per buffer, the entry holding it (in-place chains) */
    uint32_t n_inplace;
} prep;

static void prep_clear(prep *p)
{
    fp_liveness_free(p->owned);
    g_free(p->given);
    g_free(p->best);
    g_free(p->out);
    g_free(p->slot);
    memset(p, 0, sizeof *p);
}

/* Fills p for g (see prep; entries of size 0 change no plan: a graph without workspaces leaves
 * theirs out), the subgraphs planned with naive_fails (see the top of the file). On failure p
 * still needs prep_clear. */
static bool prepare(const fp_graph *g, const fp_memory_opts *opts, bool naive_fails, fp_diag *diag, prep *p,
                    GError **error)
{
    memset(p, 0, sizeof *p);
    p->align = opts->align ? opts->align : FP_MEMORY_DEFAULT_ALIGN;
    g_autofree uint64_t *ws = NULL;
    if (!workspaces(g, opts, naive_fails, diag, &ws, &p->t, error) ||
        !(p->lv = liveness(g, opts, ws, diag, &p->owned, error)))
        return false;
    const fp_memgraph *mg = &p->lv->mg;
    add_weights(&p->t, p->lv->weight_bytes, p->lv->folded_bytes);
    p->t.n_unknown += p->lv->n_unknown;
    p->given = g_new(uint32_t, mg->n_nodes + 1);
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        p->given[v] = v; /* memgraph nodes are numbered in the graph's topological order */
    p->order = p->given;
    if (opts->schedule != FP_SCHEDULE_GIVEN) {
        fp_schedule_opts so = {.align = p->align};
        p->best = g_new(uint32_t, mg->n_nodes + 1);
        if (!fp_schedule_optimize(mg, p->given, &so, p->best, &p->sr, error))
            return false;
        if (opts->schedule == FP_SCHEDULE_OPTIMIZED)
            p->order = p->best;
    }
    p->ws = fp_memgraph_has_workspace(mg);
    p->ne = (size_t)mg->n_bufs + (p->ws ? mg->n_nodes : 0);
    p->out = g_new(fp_membuf, p->ne + 1);
    p->slot = g_new(uint32_t, mg->n_bufs + 1);
    p->n_inplace = fp_memgraph_lifetimes_n(mg, p->order, p->ws, p->out, p->slot);
    return true;
}

/* The arena of opts->strategy on p's entries into out, trying the reuse state's last winning
 * candidate first; naive_fails: an overflow of the naive sum fails (see prepare). */
static bool plan_arena(const prep *p, const fp_memory_opts *opts, bool naive_fails, fp_memory_arena_result *out,
                       GError **error)
{
    const fp_memgraph *mg = &p->lv->mg;
    fp_memplan_result pr;
    uint64_t naive = 0;
    bool is_naive = opts->strategy == FP_MEMPLAN_NAIVE;
    if ((naive_fails || is_naive) && !naive_arena(mg, p->ws, p->align, NULL, &naive, error))
        return false;
    if (is_naive) { /* no reuse at all, in-place takeovers included */
        pr.arena = naive;
        pr.method = fp_memplan_strategy_name(FP_MEMPLAN_NAIVE);
    } else if (!fp_memplan_arena(p->out, p->ne, p->align, opts->strategy, opts->reuse ? opts->reuse->method : NULL, &pr,
                                 error)) {
        return false;
    }
    if (opts->reuse)
        opts->reuse->method = pr.method;
    *out = (fp_memory_arena_result){.arena = pr.arena,
                                    .method = pr.method,
                                    .weight_bytes = p->t.weight_bytes,
                                    .folded_bytes = p->t.folded_bytes,
                                    .workspace_bytes = p->t.workspace_bytes,
                                    .n_unknown = p->t.n_unknown};
    return true;
}

/* fp_memory_arena, or with naive_fails the arena of a subgraph's full plan (see prepare). */
static bool arena_of(const fp_graph *g, const fp_memory_opts *opts, bool naive_fails, fp_memory_arena_result *out,
                     fp_diag *diag, GError **error)
{
    prep p;
    memset(out, 0, sizeof *out);
    bool ok = prepare(g, opts, naive_fails, diag, &p, error) && plan_arena(&p, opts, naive_fails, out, error);
    prep_clear(&p);
    return ok;
}

bool fp_memory_arena(const fp_graph *g, const fp_memory_opts *opts, fp_memory_arena_result *out, fp_diag *diag,
                     GError **error)
{
    return arena_of(g, opts, false, out, diag, error);
}

/* Every strategy asked for on p's entries: naive first (no other sum can overflow when it does not),
 * with opts->every_strategy the others, then opts->strategy with its offsets in off and its
 * result in pr. */
static bool plan_strategies(const prep *p, const fp_memory_opts *opts, uint64_t *off, fp_memplan_result *pr,
                            fp_memory_result *r, GError **error)
{
    const fp_memgraph *mg = &p->lv->mg;
    bool naive = opts->strategy == FP_MEMPLAN_NAIVE;
    if (!naive_arena(mg, p->ws, p->align, naive ? off : NULL, &r->strategy_arena[FP_MEMPLAN_NAIVE], error))
        return false;
    r->strategy_planned[FP_MEMPLAN_NAIVE] = true;
    for (unsigned s = FP_MEMPLAN_NAIVE + 1; s < FP_MEMPLAN_COUNT && opts->every_strategy; s++) {
        fp_memplan_result x;
        if (s == opts->strategy)
            continue;
        if (!fp_memplan_arena(p->out, p->ne, p->align, (fp_memplan_strategy)s, NULL, &x, error))
            return false;
        r->strategy_arena[s] = x.arena;
        r->strategy_planned[s] = true;
    }
    if (naive) {
        pr->arena = r->strategy_arena[FP_MEMPLAN_NAIVE];
        pr->method = fp_memplan_strategy_name(FP_MEMPLAN_NAIVE);
        if (!fp_memplan_load(p->out, p->ne, p->align, &pr->load, &pr->peak_step, error)) /* the floor keeps the reuse */
            return false;
    } else if (!fp_memplan_plan(p->out, p->ne, p->align, opts->strategy, off, pr, error)) {
        return false;
    }
    r->strategy_arena[opts->strategy] = pr->arena;
    r->strategy_planned[opts->strategy] = true;
    return true;
}

/* Live bytes at each step of the full order (n_order entries, step_of mapping the n memgraph steps
 * into it) from the planner entries: their rounded sizes summed over their lifetimes. With no
 * memgraph node the entries still live at one step (the graph's inputs and outputs), shown at
 * every free node. The sums cannot overflow: the naive sum of the same sizes did not. */
static uint64_t *live_curve(const fp_membuf *out, size_t ne, uint32_t n, uint64_t align, const uint32_t *step_of,
                            uint32_t n_order)
{
    uint32_t T = MAX(n, 1u);
    /* per memgraph step the change in live bytes (modulo 2^64: a size comes in at an entry's first
     * step and goes out after its last), then by prefix sums the live bytes there */
    g_autofree uint64_t *at = g_new0(uint64_t, (size_t)T + 1);
    for (size_t e = 0; e < ne; e++) {
        uint64_t sz;
        if (!out[e].size)
            continue;
        fp_memplan_align(out[e].size, align, &sz);
        at[out[e].first] += sz;
        at[out[e].last + 1] -= sz;
    }
    for (uint32_t t = 1; t < T; t++)
        at[t] += at[t - 1];
    uint64_t *live = g_new(uint64_t, (size_t)n_order + 1);
    for (uint32_t s = 0, t = 0; s < n_order; s++) {
        if (t < n && step_of[t] == s)
            live[s] = at[t++];
        else /* a free node */
            live[s] = s ? live[s - 1] : at[0];
    }
    return live;
}

/* The full order, the live bytes per step and the buffers live at the peak of plan pr (offsets
 * off) of p's order. */
static void fill_order(const prep *p, const fp_memplan_result *pr, const uint64_t *off, fp_memory_result *r)
{
    const fp_liveness *lv = p->lv;
    const fp_memgraph *mg = &lv->mg;
    r->n_order = mg->n_nodes + lv->n_free;
    r->order = g_new(fp_node *, r->n_order + 1);
    g_autofree uint32_t *step_of = g_new(uint32_t, mg->n_nodes + 1);
    fp_liveness_full_order(lv, p->order, r->order, step_of);
    r->live_bytes = live_curve(p->out, p->ne, mg->n_nodes, p->align, step_of, r->n_order);
#ifdef FP_DEBUG
    uint64_t top = 0;
    for (uint32_t s = 0; s < r->n_order; s++)
        top = MAX(top, r->live_bytes[s]);
    g_assert(r->n_order == 0 || top == pr->load);
#endif
    if (mg->n_nodes) {
        r->peak_step = step_of[pr->peak_step];
        r->peak_node = lv->nodes[p->order[pr->peak_step]];
        peak_tensors(lv, p->out, p->ne, p->slot, off, p->order, step_of, pr->peak_step, p->align, r);
    }
}

/* r's figures from p: totals, counts, the schedule and its search. */
static void take_prep(fp_memory_result *r, const prep *p, const fp_memory_opts *opts)
{
    r->weight_bytes = p->t.weight_bytes;
    r->folded_bytes = p->t.folded_bytes;
    r->workspace_bytes = p->t.workspace_bytes;
    r->n_unknown = p->t.n_unknown;
    r->n_buffers = p->lv->mg.n_bufs;
    r->n_views = p->lv->n_views;
    r->n_fused = p->lv->n_fused;
    r->n_inplace = p->n_inplace;
    r->schedule = opts->schedule == FP_SCHEDULE_OPTIMIZED ? "optimized" : "given";
    r->schedule_method = "given";
    if (p->best) {
        r->schedule_searched = true;
        r->schedule_exact = p->sr.exact;
        r->schedule_method = p->sr.method;
        r->n_segments = p->sr.n_segments;
        r->lower_bound_given = p->sr.load_given;
        r->lower_bound_optimized = p->sr.load_best;
    }
}

fp_memory_result *fp_pass_memory(const fp_graph *g, const fp_memory_opts *opts, fp_diag *diag, GError **error)
{
    g_autoptr(fp_memory_result) r = g_new0(fp_memory_result, 1);
    r->graph = g;
    r->opts = *opts;
    prep p;
    bool ok = prepare(g, opts, true, diag, &p, error);
    g_autofree uint64_t *off = ok ? g_new(uint64_t, p.ne + 1) : NULL;
    fp_memplan_result pr = {0};
    if (ok) {
        r->align = p.align;
        take_prep(r, &p, opts);
        ok = plan_strategies(&p, opts, off, &pr, r, error);
    }
    if (ok) {
        if (opts->reuse)
            opts->reuse->method = pr.method;
        r->arena = pr.arena;
        r->lower_bound = pr.load;
        r->method = pr.method;
        r->naive_bytes = r->strategy_arena[FP_MEMPLAN_NAIVE];
        if (!r->schedule_searched)
            r->lower_bound_given = r->lower_bound_optimized = r->lower_bound;
        fill_order(&p, &pr, off, r);
    }
    prep_clear(&p);
    return ok ? g_steal_pointer(&r) : NULL;
}

bool fp_memory_naive(const fp_graph *g, const fp_memory_opts *opts, fp_memory_naive_result *out, fp_diag *diag,
                     GError **error)
{
    memset(out, 0, sizeof *out);
    totals t = {0};
    g_autofree uint64_t *ws = NULL;
    if (!workspaces(g, opts, true, diag, &ws, &t, error))
        return false;
    g_autoptr(fp_liveness)
        lv = fp_liveness_build(g, ws, &(fp_liveness_opts){opts->outside, opts->float_as}, diag, error);
    if (!lv)
        return false;
    const fp_memgraph *mg = &lv->mg;
    add_weights(&t, lv->weight_bytes, lv->folded_bytes);
    t.n_unknown += lv->n_unknown;
    if (!naive_arena(mg, fp_memgraph_has_workspace(mg), opts->align ? opts->align : FP_MEMORY_DEFAULT_ALIGN, NULL,
                     &out->naive_bytes, error))
        return false;
    out->weight_bytes = t.weight_bytes;
    out->folded_bytes = t.folded_bytes;
    out->workspace_bytes = t.workspace_bytes;
    out->n_unknown = t.n_unknown;
    out->n_buffers = mg->n_bufs;
    out->n_views = lv->n_views;
    out->n_fused = lv->n_fused;
    return true;
}
