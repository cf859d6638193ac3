/* recompute.c - the recompute planner (recompute.h).
 *
 * Stages: the topological order is cut after each op where exactly one tensor crosses (a storage
 * made before the cut and read after it); a stage owns the saved storages its ops make and its
 * ops' auxiliaries. A plan's memory, with segments g in forward order:
 *   held(g) = own(g) when kept; when recomputed, its start tensor unless the stage before is kept
 *             and saves it (then held already);
 *   peak    = max over g of  base + sum of held(h) for h before g + extra(g) + own(g),
 *             extra(g) the held start of a recomputed g (0 when kept): backward runs the segments in
 *             reverse, a recomputed one made again whole before it;
 *   cost    = the forward FLOPs of the recomputed segments.
 * The search runs over stage boundaries keeping, per boundary and whether the stage before it is
 * kept, the Pareto front of (sum held, peak, cost); every prefix off the front is dominated. */
#include "passes/training/recompute.h"

#include <math.h>
#include <string.h>

#include "passes/cost.h"

#define FRONT_MAX 4096 /* entries per front; beyond it the costliest go and the plan is not exact */

/* ---------------------------------------------------------------- stages */

/* The cut positions: after order index i when the storages open across it are exactly one
 * (its id in *single), as one sweep counting them. cut[i] is that storage's id + 1, else 0. */
static uint32_t *cuts(const fp_graph *g, fp_node *const *order, uint32_t n)
{
    g_autofree uint32_t *last = fp_train_last_reads(g, order, n);
    uint32_t *cut = g_new0(uint32_t, n);
    g_autoptr(GHashTable) open = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g->inputs->pdata[i];
        if (v->n_uses)
            g_hash_table_add(open, GUINT_TO_POINTER(v->id + 1));
    }
    for (uint32_t i = 0; i < n; i++) {
        const fp_node *nd = order[i];
        for (uint32_t k = 0; k < nd->n_outputs; k++) {
            const fp_value *y = nd->outputs[k];
            if (y && fp_train_storage_of(y) == y && !fp_value_is_fixed(y) && last[y->id] > i)
                g_hash_table_add(open, GUINT_TO_POINTER(y->id + 1));
        }
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, open);
        while (g_hash_table_iter_next(&it, &key, NULL))
            if (last[GPOINTER_TO_UINT(key) - 1] <= i &&
                !((const fp_value *)g->values->pdata[GPOINTER_TO_UINT(key) - 1])->is_output)
                g_hash_table_iter_remove(&it);
        if (g_hash_table_size(open) == 1 && i + 1 < n) {
            g_hash_table_iter_init(&it, open);
            g_hash_table_iter_next(&it, &key, NULL);
            cut[i] = GPOINTER_TO_UINT(key);
        }
    }
    return cut;
}

static void alloc_stages(fp_rc_stages *s, uint32_t n)
{
    s->n = n;
    s->own = g_new0(uint64_t, n);
    s->src = g_new0(uint64_t, n);
    s->src_owned = g_new0(bool, n);
    s->flops = g_new0(uint64_t, n);
    s->time_s = g_new0(double, n);
    s->start = g_new0(const fp_value *, n);
}

void fp_rc_stages_make(const fp_model *m, const fp_train_saved *saved, const void *cost, fp_rc_stages *out)
{
    memset(out, 0, sizeof *out);
    const fp_graph *g = m->main;
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    if (!order || !n)
        return;
    g_autofree uint32_t *cut = cuts(g, order, n);
    g_autofree uint32_t *stage_of = g_new0(uint32_t, g->nodes->len);
    uint32_t stages = 1;
    for (uint32_t i = 0; i < n; i++) {
        stage_of[order[i]->id] = stages - 1;
        stages += cut[i] != 0;
    }
    alloc_stages(out, stages);
    for (uint32_t i = 0, t = 1; i < n; i++)
        if (cut[i])
            out->start[t++] = g->values->pdata[cut[i] - 1];
    const fp_cost_result *c = cost;
    for (uint32_t i = 0; c && i < c->n_ops; i++)
        out->time_s[stage_of[c->ops[i].node->id]] += c->ops[i].rl.time_s;
    for (uint32_t i = 0; i < n; i++)
        if (order[i]->metrics_known && !(order[i]->flags & FP_NODE_FOLDED))
            out->flops[stage_of[order[i]->id]] += order[i]->metrics.flops;
    for (guint i = 0; i < saved->items->len; i++) {
        const fp_saved_item *it = &g_array_index(saved->items, fp_saved_item, i);
        if (!it->counted)
            continue;
        const fp_node *maker = it->storage ? it->storage->producer : it->node;
        if (!maker)
            out->base += it->bytes; /* a graph input */
        else
            out->own[stage_of[maker->id]] += it->bytes;
    }
    for (uint32_t t = 1; t < stages; t++) {
        bool known;
        out->src[t] = fp_train_value_bytes(saved, out->start[t], &known);
        const fp_node *maker = out->start[t]->producer;
        for (guint i = 0; maker && stage_of[maker->id] == t - 1 && i < saved->items->len && !out->src_owned[t]; i++) {
            const fp_saved_item *it = &g_array_index(saved->items, fp_saved_item, i);
            out->src_owned[t] = it->counted && it->storage == out->start[t];
        }
    }
}

void fp_rc_stages_clear(fp_rc_stages *s)
{
    g_free(s->own);
    g_free(s->src);
    g_free(s->src_owned);
    g_free(s->flops);
    g_free(s->time_s);
    g_free(s->start);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- one plan */

/* The start bytes a recomputed segment from stage l holds: none for the first stage, or when the
 * stage before is kept and saves that tensor. */
static uint64_t start_held(const fp_rc_stages *s, uint32_t l, bool prev_kept)
{
    return l == 0 || (prev_kept && s->src_owned[l]) ? 0 : s->src[l];
}

static void plan_init(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *p)
{
    memset(p, 0, sizeof *p);
    p->budget = budget;
    p->exact = true;
    p->mode = g_new0(fp_rc_mode, MAX(s->n, 1));
}

void fp_rc_plan_eval(const fp_rc_stages *s, fp_rc_plan *p)
{
    uint64_t held = s->base, peak = s->base;
    p->flops = 0, p->time_s = 0, p->segments = 0;
    for (uint32_t l = 0; l < s->n;) {
        uint32_t r = l + 1;
        if (p->mode[l] != FP_RC_KEEP)
            while (r < s->n && p->mode[r] == FP_RC_CONTINUE)
                r++;
        uint64_t own = 0;
        for (uint32_t t = l; t < r; t++)
            own += s->own[t];
        if (p->mode[l] == FP_RC_KEEP) {
            peak = MAX(peak, held + own);
            held += own;
        } else {
            uint64_t start = start_held(s, l, l > 0 && p->mode[l - 1] == FP_RC_KEEP);
            peak = MAX(peak, held + start + own);
            held += start;
            p->segments++;
            for (uint32_t t = l; t < r; t++)
                p->flops += s->flops[t], p->time_s += s->time_s[t];
        }
        l = r;
    }
    p->peak_bytes = peak;
    p->end_bytes = held;
    p->feasible = peak <= p->budget;
}

uint64_t fp_rc_replay(const fp_rc_stages *s, const fp_rc_plan *p)
{
    /* forward: what stays for backward */
    g_autofree uint64_t *live = g_new0(uint64_t, s->n + 1); /* per stage: bytes held for it */
    uint64_t total = s->base, peak = s->base;
    for (uint32_t t = 0; t < s->n; t++) {
        bool kept = p->mode[t] == FP_RC_KEEP;
        live[t] = kept                        ? s->own[t]
                  : p->mode[t] == FP_RC_START ? start_held(s, t, t > 0 && p->mode[t - 1] == FP_RC_KEEP)
                                              : 0;
        total += live[t];
    }
    peak = MAX(peak, total);
    /* backward, stage by stage from the last: a recomputed segment is made again at its last stage */
    for (uint32_t t = s->n; t-- > 0;) {
        if (p->mode[t] != FP_RC_KEEP && (t + 1 == s->n || p->mode[t + 1] != FP_RC_CONTINUE)) {
            for (uint32_t u = t + 1; u-- > 0;) { /* the segment's stages, back to its start */
                total += s->own[u];
                live[u] += s->own[u];
                if (p->mode[u] == FP_RC_START)
                    break;
            }
        }
        peak = MAX(peak, total);
        total -= live[t]; /* its saves (and, a segment's start, its start) go after its backward */
        live[t] = 0;
    }
    return peak;
}

void fp_rc_plan_clear(fp_rc_plan *p)
{
    g_free(p->mode);
    memset(p, 0, sizeof *p);
}

/* ---------------------------------------------------------------- the search */

typedef struct {
    uint64_t held, peak, flops;
    int32_t parent; /* entry index, -1 for the empty prefix */
    uint32_t l, r;  /* the segment this entry added: stages [l, r) */
    bool kept;
} entry;

typedef struct {
    const fp_rc_stages *s;
    uint64_t budget;
    bool by_peak;   /* minimize the peak (flops ignored) instead of the flops */
    GArray *all;    /* entry */
    GArray **front; /* per (position, kept): entry indices, 2 (n + 1) of them */
    bool exact;
} search;

static bool dominates(const search *q, const entry *a, const entry *b)
{
    return a->held <= b->held && a->peak <= b->peak && (q->by_peak || a->flops <= b->flops);
}

/* Adds e to the front at (pos, kept) unless an entry there dominates it, dropping those it
 * dominates; a front past FRONT_MAX loses its costliest entry. */
static void offer(search *q, uint32_t pos, entry e)
{
    if (e.peak > q->budget)
        return;
    GArray *f = q->front[2 * pos + e.kept];
    for (guint i = 0; i < f->len;) {
        const entry *o = &g_array_index(q->all, entry, g_array_index(f, guint, i));
        if (dominates(q, o, &e))
            return;
        if (dominates(q, &e, o))
            g_array_remove_index_fast(f, i);
        else
            i++;
    }
    guint idx = q->all->len;
    g_array_append_val(q->all, e);
    g_array_append_val(f, idx);
    if (f->len > FRONT_MAX) {
        guint worst = 0;
        for (guint i = 1; i < f->len; i++)
            if (g_array_index(q->all, entry, g_array_index(f, guint, i)).flops >
                g_array_index(q->all, entry, g_array_index(f, guint, worst)).flops)
                worst = i;
        g_array_remove_index_fast(f, worst);
        q->exact = false;
    }
}

/* Extends every prefix ending at stage boundary `pos` by one kept stage or one recomputed segment. */
static void extend(search *q, uint32_t pos)
{
    const fp_rc_stages *s = q->s;
    for (int kept = 0; kept < 2; kept++) {
        GArray *f = q->front[2 * pos + kept];
        for (guint k = 0; k < f->len; k++) {
            guint at = g_array_index(f, guint, k);
            entry e = g_array_index(q->all, entry, at);
            entry keep =
                {e.held + s->own[pos], MAX(e.peak, e.held + s->own[pos]), e.flops, (int32_t)at, pos, pos + 1, true};
            offer(q, pos + 1, keep);
            uint64_t start = start_held(s, pos, pos > 0 && kept), own = 0, flops = 0;
            for (uint32_t r = pos + 1; r <= s->n; r++) {
                own += s->own[r - 1], flops += s->flops[r - 1];
                entry rc = {e.held + start, MAX(e.peak, e.held + start + own), e.flops + flops, (int32_t)at, pos, r,
                            false};
                if (rc.peak > q->budget)
                    break; /* longer segments only hold more */
                offer(q, r, rc);
            }
        }
    }
}

/* The search's best plan (by flops, or by peak) into p's modes; false when none fits. */
static bool best(search *q, fp_rc_plan *p)
{
    const fp_rc_stages *s = q->s;
    int32_t pick = -1;
    for (int kept = 0; kept < 2; kept++) {
        GArray *f = q->front[2 * s->n + kept];
        for (guint k = 0; k < f->len; k++) {
            int32_t at = (int32_t)g_array_index(f, guint, k);
            const entry *e = &g_array_index(q->all, entry, at);
            const entry *b = pick >= 0 ? &g_array_index(q->all, entry, pick) : NULL;
            uint64_t ek = q->by_peak ? e->peak : e->flops, bk = b ? (q->by_peak ? b->peak : b->flops) : 0;
            if (!b || ek < bk || (ek == bk && e->peak < b->peak))
                pick = at;
        }
    }
    for (int32_t at = pick; at >= 0;) {
        const entry *e = &g_array_index(q->all, entry, at);
        if (e->parent < 0)
            break;
        for (uint32_t t = e->l; t < e->r; t++)
            p->mode[t] = e->kept ? FP_RC_KEEP : t == e->l ? FP_RC_START : FP_RC_CONTINUE;
        at = e->parent;
    }
    return pick >= 0;
}

static void run_search(const fp_rc_stages *s, uint64_t budget, bool by_peak, fp_rc_plan *out)
{
    plan_init(s, budget, out);
    search q = {.s = s,
                .budget = budget,
                .by_peak = by_peak,
                .all = g_array_new(FALSE, FALSE, sizeof(entry)),
                .front = g_new(GArray *, 2 * (s->n + 1)),
                .exact = true};
    for (uint32_t i = 0; i < 2 * (s->n + 1); i++)
        q.front[i] = g_array_new(FALSE, FALSE, sizeof(guint));
    offer(&q, 0, (entry){s->base, s->base, 0, -1, 0, 0, true});
    for (uint32_t pos = 0; pos < s->n; pos++)
        extend(&q, pos);
    bool found = s->n ? best(&q, out) : s->base <= budget;
    for (uint32_t i = 0; i < 2 * (s->n + 1); i++)
        g_array_free(q.front[i], TRUE);
    g_free(q.front);
    g_array_free(q.all, TRUE);
    fp_rc_plan_eval(s, out);
    out->feasible = found && out->peak_bytes <= budget;
    out->exact = q.exact;
}

void fp_rc_plan_best(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *out) { run_search(s, budget, false, out); }

uint64_t fp_rc_min_budget(const fp_rc_stages *s)
{
    fp_rc_plan p;
    run_search(s, UINT64_MAX, true, &p);
    uint64_t b = p.peak_bytes;
    fp_rc_plan_clear(&p);
    return b;
}

/* Every mode of stages t.. tried, the best complete plan kept in *best (flops, then peak). */
static void try_all(const fp_rc_stages *s, uint32_t t, fp_rc_plan *cur, fp_rc_plan *best)
{
    if (t == s->n) {
        fp_rc_plan_eval(s, cur);
        bool better = cur->feasible && (!best->feasible || cur->flops < best->flops ||
                                        (cur->flops == best->flops && cur->peak_bytes < best->peak_bytes));
        if (better) {
            memcpy(best->mode, cur->mode, sizeof(fp_rc_mode) * s->n);
            fp_rc_plan_eval(s, best);
        }
        return;
    }
    for (int m = FP_RC_KEEP; m <= FP_RC_CONTINUE; m++) {
        if (m == FP_RC_CONTINUE && (t == 0 || cur->mode[t - 1] == FP_RC_KEEP))
            continue;
        cur->mode[t] = (fp_rc_mode)m;
        try_all(s, t + 1, cur, best);
    }
}

void fp_rc_plan_exhaustive(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *out)
{
    g_assert(s->n <= 16);
    fp_rc_plan cur;
    plan_init(s, budget, out);
    plan_init(s, budget, &cur);
    try_all(s, 0, &cur, out);
    if (!out->feasible)
        fp_rc_plan_eval(s, out);
    fp_rc_plan_clear(&cur);
}

void fp_rc_plan_chen(const fp_rc_stages *s, fp_rc_plan *out)
{
    plan_init(s, UINT64_MAX, out);
    uint32_t k = (uint32_t)ceil(sqrt((double)MAX(s->n, 1)));
    for (uint32_t t = 0; t < s->n; t++) {
        bool last = t / k == (s->n - 1) / k;
        out->mode[t] = last ? FP_RC_KEEP : t % k == 0 ? FP_RC_START : FP_RC_CONTINUE;
    }
    fp_rc_plan_eval(s, out);
}
