/* schedule.c - memory-aware scheduling of a memgraph.
 *
 * The memory live between two steps depends only on the set of nodes already run, not on their
 * order: a buffer is live when its producer has run and some reader has not (or it is a graph
 * output). So the smallest peak over all orders is a shortest-path problem over those sets
 * (SERENITY, Ahn et al., MLSys 2020): a layered dynamic program, layer k holding the sets of k
 * nodes, each with the best peak that reaches it. The graph is first cut where every order must
 * pass (a node that all earlier nodes reach and that reaches all later ones); segments are solved
 * one by one, which is exact because the memory at a cut is fixed. A layer larger than the beam
 * keeps its best states (lowest peak, then lowest memory): then the result is no longer proven
 * optimal. A greedy order (at each step the ready node with the lowest peak, then the lowest memory
 * after it) is the fallback for huge segments and one more candidate. The cost model here is the
 * one of fp_memgraph_lifetimes, and every candidate is finally measured with it.
 */
#include "schedule.h"

#include <string.h>

typedef struct {
    const fp_memgraph *mg;
    uint64_t *sz;    /* rounded bytes per buffer */
    uint64_t *ws;    /* rounded workspace per node */
    uint64_t m_init; /* graph inputs live from step 0 that someone reads (or outputs) */
    uint64_t extra0; /* graph inputs nobody reads: live at step 0 only */
    uint32_t *succ_start, *succs;
} sched_ctx;

static bool ctx_init(sched_ctx *c, const fp_memgraph *mg, uint64_t align, GError **error)
{
    memset(c, 0, sizeof *c);
    c->mg = mg;
    c->sz = g_new(uint64_t, mg->n_bufs + 1);
    c->ws = g_new(uint64_t, mg->n_nodes + 1);
    uint64_t total = 0;
    bool ok = true;
    for (uint32_t b = 0; b < mg->n_bufs && ok; b++)
        ok = fp_memplan_align(mg->bytes[b], align, &c->sz[b]) && g_uint64_checked_add(&total, total, c->sz[b]);
    for (uint32_t v = 0; v < mg->n_nodes && ok; v++)
        ok = fp_memplan_align(mg->workspace[v], align, &c->ws[v]) && g_uint64_checked_add(&total, total, c->ws[v]);
    if (!ok) {
        g_set_error(error, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW, "buffer sizes overflow 64 bits");
        g_free(c->sz);
        g_free(c->ws);
        return false;
    }
    for (uint32_t b = 0; b < mg->n_bufs; b++) {
        if (mg->producer[b] >= 0)
            continue;
        bool read = mg->reader_start[b + 1] > mg->reader_start[b] || (mg->flags[b] & FP_BUF_OUTPUT);
        if (read)
            c->m_init += c->sz[b];
        else
            c->extra0 += c->sz[b];
    }
    c->succ_start = g_new0(uint32_t, mg->n_nodes + 1);
    for (uint32_t k = 0; k < mg->pred_start[mg->n_nodes]; k++)
        c->succ_start[mg->preds[k] + 1]++;
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        c->succ_start[v + 1] += c->succ_start[v];
    c->succs = g_new(uint32_t, c->succ_start[mg->n_nodes] + 1);
    uint32_t *fill = g_memdup2(c->succ_start, (mg->n_nodes + 1) * sizeof(uint32_t));
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        for (uint32_t k = mg->pred_start[v]; k < mg->pred_start[v + 1]; k++)
            c->succs[fill[mg->preds[k]]++] = v;
    g_free(fill);
    return true;
}

static void ctx_clear(sched_ctx *c)
{
    g_free(c->sz);
    g_free(c->ws);
    g_free(c->succ_start);
    g_free(c->succs);
}

/* Which nodes have run: a flag per node (greedy), or earlier segments plus a bitset over the
 * current segment (DP). */
typedef struct {
    const uint8_t *executed;
    const uint32_t *pending; /* with executed: per buffer, its readers not yet run */
    const uint32_t *seg_of;
    const uint32_t *last_seg, *lr_start, *lr; /* with seg_of: see seg_readers */
    uint32_t cur;
    const int32_t *loc;
    const uint64_t *bits;
} done_set;

static inline bool is_done(const done_set *d, uint32_t x)
{
    if (d->executed)
        return d->executed[x] != 0;
    if (d->seg_of[x] != d->cur)
        return d->seg_of[x] < d->cur;
    uint32_t l = (uint32_t)d->loc[x];
    return (d->bits[l >> 6] >> (l & 63)) & 1;
}

/* Every reader of buffer b but v (a reader of b that has not run) has run. */
static bool others_done(const sched_ctx *c, uint32_t b, uint32_t v, const done_set *d)
{
    if (d->pending) /* O(1): a buffer read by a quarter million nodes is no quadratic scan */
        return d->pending[b] <= 1;
    if (d->last_seg) { /* readers in earlier segments have run, those in later ones have not */
        if (d->last_seg[b] != d->cur)
            return d->last_seg[b] < d->cur;
        for (uint32_t k = d->lr_start[b]; k < d->lr_start[b + 1]; k++)
            if (d->lr[k] != v && !is_done(d, d->lr[k]))
                return false;
        return true;
    }
    const fp_memgraph *mg = c->mg;
    for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
        if (mg->readers[k] != v && !is_done(d, mg->readers[k]))
            return false;
    return true;
}

/* Running v at global step t after the set d, with M bytes live: returns the live bytes during v
 * and stores those live after it in *after. */
static uint64_t step_cost(const sched_ctx *c, uint32_t v, uint64_t M, uint32_t t, const done_set *d, uint64_t *after)
{
    const fp_memgraph *mg = c->mg;
    uint64_t peak = M + c->ws[v] + (t == 0 ? c->extra0 : 0), m = M;
    for (uint32_t k = mg->def_start[v]; k < mg->def_start[v + 1]; k++) {
        uint32_t b = mg->defs[k];
        peak += c->sz[b];
        if (mg->reader_start[b + 1] > mg->reader_start[b] || (mg->flags[b] & FP_BUF_OUTPUT))
            m += c->sz[b];
    }
    int32_t a = mg->inplace_in[v];
    if (a >= 0 && mg->inplace_out[v] >= 0 && others_done(c, (uint32_t)a, v, d))
        peak -= c->sz[mg->inplace_out[v]];
    for (uint32_t k = mg->use_start[v]; k < mg->use_start[v + 1]; k++) {
        uint32_t b = mg->uses[k];
        if (!(mg->flags[b] & FP_BUF_OUTPUT) && others_done(c, b, v, d))
            m -= c->sz[b];
    }
    *after = m;
    return peak;
}

/* ---------------------------------------------------------------- greedy */

/* Readers not yet run per buffer (all of them), for done_set.pending. */
static uint32_t *pending_new(const fp_memgraph *mg)
{
    uint32_t *p = g_new(uint32_t, mg->n_bufs + 1);
    for (uint32_t b = 0; b < mg->n_bufs; b++)
        p[b] = mg->reader_start[b + 1] - mg->reader_start[b];
    return p;
}

/* Marks v as run: one reader fewer pending on every buffer it reads. */
static void pending_run(const fp_memgraph *mg, uint32_t *p, uint32_t v)
{
    for (uint32_t k = mg->use_start[v]; k < mg->use_start[v + 1]; k++)
        p[mg->uses[k]]--;
}

/* Most ready nodes weighed at one step (the rest wait): keeps a step O(1) on very wide graphs. */
enum { GREEDY_WINDOW = 256 };
/* Work one DP segment may take, in ready-list entries copied plus 16 per child state (its bitset
 * hashed and compared). */
enum { SCHED_WORK_BUDGET = 1 << 24 };

/* Appends x to the list head..tail threaded through next[]. */
static void ready_push(uint32_t *next, uint32_t *head, uint32_t *tail, uint32_t x)
{
    next[x] = UINT32_MAX;
    if (*tail == UINT32_MAX)
        *head = x;
    else
        next[*tail] = x;
    *tail = x;
}

/* At each step the ready node with the lowest live bytes while it runs, then the lowest after it,
 * then the earliest in the given order. */
static void greedy_order(const sched_ctx *c, const uint32_t *given, uint32_t *out)
{
    const fp_memgraph *mg = c->mg;
    uint32_t n = mg->n_nodes;
    /* the ready nodes in the order they became ready: a list threaded through next[], so taking
     * one out of the window costs O(1), not a shift of every ready node behind it */
    const uint32_t none = UINT32_MAX;
    uint32_t *rank = g_new(uint32_t, n + 1), *indeg = g_new0(uint32_t, n + 1), *next = g_new(uint32_t, n + 1);
    uint32_t head = none, tail = none;
    uint8_t *executed = g_new0(uint8_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        rank[given[t]] = t;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t v = given[t];
        indeg[v] = mg->pred_start[v + 1] - mg->pred_start[v];
        if (!indeg[v])
            ready_push(next, &head, &tail, v);
    }
    g_autofree uint32_t *pending = pending_new(mg);
    done_set d = {.executed = executed, .pending = pending};
    uint64_t M = c->m_init;
    for (uint32_t t = 0; t < n; t++) {
        g_assert(head != none);
        uint32_t best = head, best_prev = none;
        uint64_t best_peak = UINT64_MAX, best_after = UINT64_MAX;
        uint32_t r = 0;
        for (uint32_t x = head, prev = none; x != none && r < GREEDY_WINDOW; prev = x, x = next[x], r++) {
            uint64_t after, peak = step_cost(c, x, M, t, &d, &after);
            if (peak < best_peak || (peak == best_peak && after < best_after) ||
                (peak == best_peak && after == best_after && rank[x] < rank[best])) {
                best = x;
                best_prev = prev;
                best_peak = peak;
                best_after = after;
            }
        }
        uint32_t v = best;
        if (best_prev == none)
            head = next[v];
        else
            next[best_prev] = next[v];
        if (tail == v)
            tail = best_prev;
        executed[v] = 1;
        pending_run(mg, pending, v);
        M = best_after;
        out[t] = v;
        for (uint32_t k = c->succ_start[v]; k < c->succ_start[v + 1]; k++)
            if (--indeg[c->succs[k]] == 0)
                ready_push(next, &head, &tail, c->succs[k]);
    }
    g_free(rank);
    g_free(indeg);
    g_free(next);
    g_free(executed);
}

/* ---------------------------------------------------------------- segments */

/* Splits the given order at forced cuts. A boundary after position p is forced when every node
 * before it precedes every node after it in the partial order: with z = given[p] and w =
 * given[p+1], either all edges crossing the boundary leave z, no node before p is a sink and no
 * node after p is a source (all earlier nodes reach z, z reaches all later ones), or symmetrically
 * all crossing edges enter w, no node after p+1 is a source and no node up to p is a sink.
 * Returns the number of segments; seg_start receives their first positions (plus n at the end). */
static uint32_t find_segments(const sched_ctx *c, const uint32_t *given, uint32_t *seg_start)
{
    const fp_memgraph *mg = c->mg;
    uint32_t n = mg->n_nodes;
    uint32_t *sinks_upto = g_new0(uint32_t, n + 1);   /* sinks among positions < p */
    uint32_t *sources_from = g_new0(uint32_t, n + 2); /* sources among positions >= p */
    for (uint32_t p = 0; p < n; p++) {
        uint32_t v = given[p];
        sinks_upto[p + 1] = sinks_upto[p] + (c->succ_start[v + 1] == c->succ_start[v]);
    }
    for (uint32_t p = n; p-- > 0;) {
        uint32_t v = given[p];
        sources_from[p] = sources_from[p + 1] + (mg->pred_start[v + 1] == mg->pred_start[v]);
    }
    uint32_t ns = 0;
    seg_start[ns++] = 0;
    uint64_t crossing = 0;
    for (uint32_t p = 0; p + 1 < n; p++) {
        uint32_t z = given[p], w = given[p + 1];
        uint32_t outdeg = c->succ_start[z + 1] - c->succ_start[z], indeg_w = mg->pred_start[w + 1] - mg->pred_start[w];
        crossing = crossing + outdeg - (mg->pred_start[z + 1] - mg->pred_start[z]);
        bool a = crossing == outdeg && sinks_upto[p] == 0 && sources_from[p + 1] == 0;
        bool b = crossing == indeg_w && sources_from[p + 2] == 0 && sinks_upto[p + 1] == 0;
        if (a || b)
            seg_start[ns++] = p + 1;
    }
    seg_start[ns] = n;
    g_free(sinks_upto);
    g_free(sources_from);
    return n ? ns : 0;
}

/* ---------------------------------------------------------------- dynamic program */

typedef struct {
    uint64_t peak, M;
    uint32_t parent, node; /* state in the previous layer, segment-local node added */
    uint32_t ready_off, ready_len;
} dp_state;

typedef struct {
    GArray *st;    /* dp_state */
    GArray *bits;  /* words per state */
    GArray *ready; /* segment-local nodes */
} dp_layer;

static void layer_init(dp_layer *l)
{
    l->st = g_array_new(FALSE, FALSE, sizeof(dp_state));
    l->bits = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    l->ready = g_array_new(FALSE, FALSE, sizeof(uint32_t));
}

static void layer_reset(dp_layer *l)
{
    g_array_set_size(l->st, 0);
    g_array_set_size(l->bits, 0);
    g_array_set_size(l->ready, 0);
}

static void layer_free(dp_layer *l)
{
    g_array_free(l->st, TRUE);
    g_array_free(l->bits, TRUE);
    g_array_free(l->ready, TRUE);
}

/* Open-addressing set of state indexes of a layer, keyed by their bitsets. */
typedef struct {
    uint32_t *slot; /* index + 1; 0 = empty */
    size_t cap;
    size_t words;
} state_set;

static uint64_t hash_bits(const uint64_t *w, size_t words)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < words; i++)
        h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* Index of the state with bitset w, or -1; *where receives the slot to fill when absent. */
static int64_t set_find(const state_set *s, const dp_layer *l, const uint64_t *w, size_t *where)
{
    size_t i = hash_bits(w, s->words) & (s->cap - 1);
    const uint64_t *all = (const uint64_t *)(void *)l->bits->data;
    while (s->slot[i]) {
        uint32_t x = s->slot[i] - 1;
        if (memcmp(all + (size_t)x * s->words, w, s->words * sizeof *w) == 0)
            return x;
        i = (i + 1) & (s->cap - 1);
    }
    *where = i;
    return -1;
}

static void set_reset(state_set *s, size_t expected)
{
    size_t cap = 16;
    while (cap < 2 * expected + 2)
        cap *= 2;
    if (cap != s->cap) {
        g_free(s->slot);
        s->slot = g_new0(uint32_t, cap);
        s->cap = cap;
    } else {
        memset(s->slot, 0, cap * sizeof *s->slot);
    }
}

typedef struct {
    const sched_ctx *c;
    const uint32_t *nodes; /* segment-local -> memgraph node */
    uint32_t m;
    size_t words;
    uint32_t t0;  /* global step of the segment's first node */
    uint32_t seg; /* segment number */
    const uint32_t *seg_of;
    const int32_t *loc;
    uint32_t beam;
    bool pruned;
    const uint32_t *last_seg, *lr_start, *lr;
} dp_ctx;

static int cmp_state(gconstpointer a, gconstpointer b, gpointer data)
{
    const dp_state *st = data;
    const dp_state *x = &st[*(const uint32_t *)a], *y = &st[*(const uint32_t *)b];
    if (x->peak != y->peak)
        return x->peak < y->peak ? -1 : 1;
    return (x->M > y->M) - (x->M < y->M);
}

/* Keeps the best `keep` states of layer l (lowest peak, then lowest memory). */
static void prune(dp_ctx *dc, dp_layer *l, dp_layer *tmp, uint32_t keep)
{
    uint32_t n = l->st->len;
    uint32_t *idx = g_new(uint32_t, n);
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    g_qsort_with_data(idx, (gint)n, sizeof *idx, cmp_state, l->st->data);
    layer_reset(tmp);
    for (uint32_t k = 0; k < keep; k++) {
        dp_state s = g_array_index(l->st, dp_state, idx[k]);
        g_array_append_vals(tmp->bits, &g_array_index(l->bits, uint64_t, (size_t)idx[k] * dc->words), (guint)dc->words);
        uint32_t off = tmp->ready->len;
        g_array_append_vals(tmp->ready, &g_array_index(l->ready, uint32_t, s.ready_off), s.ready_len);
        s.ready_off = off;
        g_array_append_val(tmp->st, s);
    }
    dp_layer t = *l;
    *l = *tmp;
    *tmp = t;
    g_free(idx);
    dc->pruned = true;
}

/* Expands state si of `cur` by every ready node into `next` (deduplicated through `set`). */
static void expand(dp_ctx *dc, const dp_layer *cur, uint32_t si, uint32_t k, dp_layer *next, state_set *set,
                   uint64_t *child)
{
    const fp_memgraph *mg = dc->c->mg;
    const dp_state s = g_array_index(cur->st, dp_state, si);
    const uint64_t *bits = &g_array_index(cur->bits, uint64_t, (size_t)si * dc->words);
    done_set d = {.seg_of = dc->seg_of,
                  .cur = dc->seg,
                  .loc = dc->loc,
                  .bits = bits,
                  .last_seg = dc->last_seg,
                  .lr_start = dc->lr_start,
                  .lr = dc->lr};
    for (uint32_t r = 0; r < s.ready_len; r++) {
        uint32_t lr = g_array_index(cur->ready, uint32_t, s.ready_off + r), v = dc->nodes[lr];
        uint64_t after, peak = step_cost(dc->c, v, s.M, dc->t0 + k, &d, &after);
        peak = MAX(peak, s.peak);
        memcpy(child, bits, dc->words * sizeof *child);
        child[lr >> 6] |= (uint64_t)1 << (lr & 63);
        size_t where = 0;
        int64_t found = set_find(set, next, child, &where);
        if (found >= 0) {
            dp_state *o = &g_array_index(next->st, dp_state, found);
            if (peak < o->peak) {
                o->peak = peak;
                o->parent = si;
                o->node = lr;
            }
            continue;
        }
        dp_state ns = {peak, after, si, lr, next->ready->len, 0};
        for (uint32_t q = 0; q < s.ready_len; q++) {
            uint32_t x = g_array_index(cur->ready, uint32_t, s.ready_off + q);
            if (x != lr) {
                g_array_append_val(next->ready, x);
                ns.ready_len++;
            }
        }
        const sched_ctx *c = dc->c;
        for (uint32_t q = c->succ_start[v]; q < c->succ_start[v + 1]; q++) {
            uint32_t u = c->succs[q];
            if (dc->seg_of[u] != dc->seg)
                continue;
            bool ok = true;
            for (uint32_t p = mg->pred_start[u]; p < mg->pred_start[u + 1] && ok; p++) {
                uint32_t x = mg->preds[p];
                if (dc->seg_of[x] == dc->seg) {
                    uint32_t lx = (uint32_t)dc->loc[x];
                    ok = (child[lx >> 6] >> (lx & 63)) & 1;
                }
            }
            if (ok) {
                uint32_t lu = (uint32_t)dc->loc[u];
                g_array_append_val(next->ready, lu);
                ns.ready_len++;
            }
        }
        set->slot[where] = next->st->len + 1;
        g_array_append_vals(next->bits, child, (guint)dc->words);
        g_array_append_val(next->st, ns);
        if (next->st->len * 2 + 2 > set->cap) { /* grow: rehash every state */
            set_reset(set, next->st->len * 2);
            for (uint32_t i = 0; i < next->st->len; i++) {
                size_t w2 = 0;
                set_find(set, next, &g_array_index(next->bits, uint64_t, (size_t)i * dc->words), &w2);
                set->slot[w2] = i + 1;
            }
        }
    }
}

/* Schedules one segment (memory M0 before it) into out[0..m); false (out untouched) when even one
 * state per layer would cost more than twice SCHED_WORK_BUDGET (the caller falls back to greedy). */
static bool dp_segment(dp_ctx *dc, uint64_t M0, uint32_t *out)
{
    const fp_memgraph *mg = dc->c->mg;
    dp_layer cur, next, tmp;
    layer_init(&cur);
    layer_init(&next);
    layer_init(&tmp);
    state_set set = {NULL, 0, dc->words};
    GArray **trace = g_new(GArray *, dc->m + 1); /* per layer k >= 1: (parent, node) of each state */
    dp_state s0 = {0, M0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < dc->m; i++) {
        uint32_t v = dc->nodes[i];
        bool ready = true;
        for (uint32_t p = mg->pred_start[v]; p < mg->pred_start[v + 1] && ready; p++)
            ready = dc->seg_of[mg->preds[p]] != dc->seg;
        if (ready) {
            g_array_append_val(cur.ready, i);
            s0.ready_len++;
        }
    }
    g_array_append_val(cur.st, s0);
    g_array_set_size(cur.bits, dc->words);
    memset(cur.bits->data, 0, dc->words * sizeof(uint64_t));
    uint64_t *child = g_new(uint64_t, dc->words);
    uint64_t spent = 0;
    uint32_t k = 0;
    for (; k < dc->m && spent <= 2 * (uint64_t)SCHED_WORK_BUDGET; k++) {
        layer_reset(&next);
        set_reset(&set, cur.st->len * 2);
        for (uint32_t si = 0; si < cur.st->len; si++)
            expand(dc, &cur, si, k, &next, &set, child);
        if (next.st->len > dc->beam)
            prune(dc, &next, &tmp, dc->beam);
        /* expanding a state costs about ready x (ready + words + 16): keep the next layer's work
         * within its share of the budget (wide segments: a ready list as long as the segment) */
        uint64_t work = 0;
        for (uint32_t i = 0; i < next.st->len; i++) {
            uint64_t r = g_array_index(next.st, dp_state, i).ready_len;
            work += r * (r + dc->words + 16) + 16;
        }
        uint64_t layer_budget = SCHED_WORK_BUDGET / dc->m;
        if (work > layer_budget && next.st->len > 1)
            prune(dc, &next, &tmp, (uint32_t)MAX(1, next.st->len * layer_budget / work));
        spent += work; /* at most layer_budget a layer, unless one state alone costs more */
        trace[k + 1] = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t) * 2, next.st->len);
        for (uint32_t i = 0; i < next.st->len; i++) {
            const dp_state *s = &g_array_index(next.st, dp_state, i);
            uint32_t pn[2] = {s->parent, s->node};
            g_array_append_val(trace[k + 1], pn);
        }
        dp_layer t = cur;
        cur = next;
        next = t;
    }
    bool done = k == dc->m;
    g_assert(!done || cur.st->len == 1);
    uint32_t si = 0;
    for (; k >= 1; k--) {
        const uint32_t *pn = &g_array_index(trace[k], uint32_t, 2 * (size_t)si);
        if (done)
            out[k - 1] = dc->nodes[pn[1]];
        si = pn[0];
        g_array_free(trace[k], TRUE);
    }
    g_free(trace);
    g_free(child);
    g_free(set.slot);
    layer_free(&cur);
    layer_free(&next);
    layer_free(&tmp);
    return done;
}

/* ---------------------------------------------------------------- driver */

/* Live bytes before each position of `order` (n + 1 entries). */
static uint64_t *memory_before(const sched_ctx *c, const uint32_t *order)
{
    uint32_t n = c->mg->n_nodes;
    uint8_t *executed = g_new0(uint8_t, n + 1);
    uint64_t *M = g_new(uint64_t, n + 1);
    g_autofree uint32_t *pending = pending_new(c->mg);
    done_set d = {.executed = executed, .pending = pending};
    M[0] = c->m_init;
    for (uint32_t t = 0; t < n; t++) {
        step_cost(c, order[t], M[t], t, &d, &M[t + 1]);
        executed[order[t]] = 1;
        pending_run(c->mg, pending, order[t]);
    }
    g_free(executed);
    return M;
}

/* Per buffer: the last segment reading it (*last_seg) and its readers in that segment (CSR *lr_start,
 * *lr), so that the DP asks only a segment's own readers whether they have run. Caller frees. */
static void seg_readers(const fp_memgraph *mg, const uint32_t *seg_of, uint32_t **last_seg, uint32_t **lr_start,
                        uint32_t **lr)
{
    uint32_t nb = mg->n_bufs;
    uint32_t *last = g_new0(uint32_t, nb + 1), *start = g_new0(uint32_t, nb + 2);
    for (uint32_t b = 0; b < nb; b++) {
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            last[b] = MAX(last[b], seg_of[mg->readers[k]]);
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            start[b + 1] += seg_of[mg->readers[k]] == last[b];
    }
    for (uint32_t b = 0; b < nb; b++)
        start[b + 1] += start[b];
    uint32_t *list = g_new(uint32_t, start[nb] + 1);
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t f = start[b];
        for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
            if (seg_of[mg->readers[k]] == last[b])
                list[f++] = mg->readers[k];
    }
    *last_seg = last;
    *lr_start = start;
    *lr = list;
}

/* DP over every segment (greedy order inside segments over max_segment nodes) into out. */
static void segmented_order(const sched_ctx *c, const uint32_t *given, const uint32_t *greedy,
                            const fp_schedule_opts *opts, uint32_t *out, fp_schedule_result *res)
{
    const fp_memgraph *mg = c->mg;
    uint32_t n = mg->n_nodes;
    uint32_t max_seg = opts && opts->max_segment ? opts->max_segment : 2000;
    uint32_t *seg_start = g_new(uint32_t, n + 2);
    uint32_t ns = find_segments(c, given, seg_start);
    uint32_t *seg_of = g_new(uint32_t, n + 1);
    int32_t *loc = g_new(int32_t, n + 1);
    for (uint32_t s = 0; s < ns; s++)
        for (uint32_t p = seg_start[s]; p < seg_start[s + 1]; p++) {
            seg_of[given[p]] = s;
            loc[given[p]] = (int32_t)(p - seg_start[s]);
        }
    uint32_t *last_seg, *lr_start, *lr;
    seg_readers(mg, seg_of, &last_seg, &lr_start, &lr);
    uint64_t *M = memory_before(c, given);
    res->n_segments = ns;
    res->largest_segment = 0;
    res->exact = true;
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t a = seg_start[s], m = seg_start[s + 1] - a;
        res->largest_segment = MAX(res->largest_segment, m);
        if (m > max_seg) {
            /* the greedy order passes through the same cuts: its slice is this segment */
            for (uint32_t i = 0; i < m; i++)
                out[a + i] = greedy[a + i];
            res->exact = false;
        } else {
            uint32_t beam = opts && opts->beam ? opts->beam : CLAMP((1u << 21) / MAX(m, 1), 64u, 8192u);
            dp_ctx dc = {c, given + a, m, (m + 63) / 64, a, s, seg_of, loc, beam, false, last_seg, lr_start, lr};
            if (!dp_segment(&dc, M[a], out + a)) {
                for (uint32_t i = 0; i < m; i++) /* too wide for the DP: the greedy slice */
                    out[a + i] = greedy[a + i];
                res->exact = false;
            }
            if (dc.pruned)
                res->exact = false;
        }
    }
    g_free(M);
    g_free(loc);
    g_free(seg_of);
    g_free(seg_start);
    g_free(last_seg);
    g_free(lr_start);
    g_free(lr);
}

bool fp_schedule_optimize(const fp_memgraph *mg, const uint32_t *given, const fp_schedule_opts *opts, uint32_t *best,
                          fp_schedule_result *res, GError **error)
{
    uint64_t align = opts ? opts->align : 0;
    memset(res, 0, sizeof *res);
    res->method = "given";
    sched_ctx c;
    if (!ctx_init(&c, mg, align, error))
        return false;
    uint32_t n = mg->n_nodes;
    memcpy(best, given, n * sizeof *best);
    bool ok = fp_memgraph_load(mg, given, align, &res->load_given, NULL, error);
    res->load_best = res->load_given;
    uint32_t *greedy = g_new(uint32_t, n + 1), *dp = g_new(uint32_t, n + 1);
    if (ok && n) {
        greedy_order(&c, given, greedy);
        segmented_order(&c, given, greedy, opts, dp, res);
        g_assert(fp_memgraph_order_valid(mg, greedy) && fp_memgraph_order_valid(mg, dp));
        const uint32_t *cand[2] = {dp, greedy};
        const char *names[2] = {"dp", "greedy"};
        for (int i = 0; i < 2 && ok; i++) {
            uint64_t load;
            ok = fp_memgraph_load(mg, cand[i], align, &load, NULL, error);
            if (ok && load < res->load_best) {
                res->load_best = load;
                res->method = names[i];
                memcpy(best, cand[i], n * sizeof *best);
            }
        }
    } else if (ok) {
        res->exact = true;
    }
    g_free(greedy);
    g_free(dp);
    ctx_clear(&c);
    return ok;
}
