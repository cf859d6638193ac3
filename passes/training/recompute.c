/* recompute.c - the recompute planner (recompute.h).
 *
 * Stages: the topological order is cut after each op where exactly one tensor crosses (a storage
 * made before the cut and read after it); a stage owns the saved storages its ops make and its
 * ops' auxiliaries. A plan's memory, with segments g in forward order:
 *   held(g) = own(g) when kept, plus its start tensor when an op of g saves it and the stage
 *             before, which makes it, is recomputed; when recomputed, its start tensor unless the
 *             stage before is kept and saves it (then held already);
 *   peak    = max over g of  base + sum of held(h) for h before g + extra(g) + own(g),
 *             extra(g) the held start of a recomputed g (0 when kept): backward runs the segments in
 *             reverse, a recomputed one made again whole before it;
 *   cost    = the forward FLOPs of the recomputed segments.
 * The searches run over stage boundaries. What a prefix of a plan leaves to what follows is its sum
 * held and whether its last stage is kept (its peak is already within the budget), so per boundary
 * and kept flag: the prefix holding least (whether any plan fits); one prefix per bucket of sum held
 * (cheap plans); the Pareto front of (sum held, cost, peak) bounded by such a plan (the optimum,
 * unless it grows too large); else one per bucket of rounded-down cost and a Lagrangian relaxation
 * of the end-of-forward bytes (lower bounds on the optimum, and more plans). */
#include "passes/training/recompute.h"

#include <math.h>
#include <string.h>

#include "passes/cost.h"

#define GRID_WORK (1u << 23)   /* segment offers a round of the bucketed search may make, about */
#define GRID_CELLS (1u << 20)  /* cells of the bucketed search at most */
#define GRID_BUCKETS 4096      /* buckets per (boundary, kept) at most */
#define GRID_ROUNDS 3          /* rounds of the bucketed search by cost */
#define HELD_ROUNDS 2          /* rounds of the bucketed search by held, before */
#define PARETO_WORK (1u << 21) /* steps of the exact search before it gives up */
#define DUAL_STEPS 40          /* multipliers of the Lagrangian bound tried */

/* ---------------------------------------------------------------- stages */

/* Whether v, open across a cut, is a tensor held for the whole step rather than an activation a
 * recomputed segment would make again: a graph input, or a value no parameter flows into (a rotary
 * table or attention mask computed once from the inputs and read by every layer). */
static bool held_throughout(const fp_train_saved *saved, const fp_value *v)
{
    return !v->producer || !saved->requires_grad[v->id];
}

/* The one storage open across a cut that is not held throughout (id + 1), else 0; when every open
 * storage is held throughout, the only one there is (else 0). */
static uint32_t crossing(const fp_graph *g, const fp_train_saved *saved, GHashTable *open)
{
    uint32_t one = 0, own = 0, owned = 0;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, open);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        one = GPOINTER_TO_UINT(key);
        if (!held_throughout(saved, g->values->pdata[one - 1]))
            own = one, owned++;
    }
    if (owned)
        return owned == 1 ? own : 0;
    return g_hash_table_size(open) == 1 ? one : 0;
}

/* The cut positions: after order index i when exactly one storage open across it (made before the
 * cut, read after it) is not held throughout (held_throughout; those are pinned: their saves are
 * held for the whole step), as one sweep counting them. cut[i] is that storage's id + 1, else 0;
 * pinned[id] is set for the other storages open across a cut. Of consecutive cuts across the same
 * storage only the last is kept: the ops between them (constants, views of it) make nothing that
 * lives on, and a stage of them alone would part the storage's maker from the op after them that
 * saves it. */
static uint32_t *cuts(const fp_graph *g, const fp_train_saved *saved, fp_node *const *order, uint32_t n,
                      uint8_t *pinned)
{
    g_autofree uint32_t *last = fp_train_last_reads(g, order, n);
    uint32_t *cut = g_new0(uint32_t, n);
    g_autoptr(GHashTable) open = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g->inputs->pdata[i];
        if (v->n_uses)
            g_hash_table_add(open, GUINT_TO_POINTER(v->id + 1));
    }
    uint32_t prev = n;
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
        uint32_t one = i + 1 < n ? crossing(g, saved, open) : 0;
        if (!one)
            continue;
        cut[i] = one;
        if (prev < n && cut[prev] == cut[i])
            cut[prev] = 0;
        prev = i;
        g_hash_table_iter_init(&it, open);
        while (g_hash_table_iter_next(&it, &key, NULL))
            if (GPOINTER_TO_UINT(key) != one)
                pinned[GPOINTER_TO_UINT(key) - 1] = 1;
    }
    return cut;
}

void fp_rc_stages_alloc(fp_rc_stages *s, uint32_t n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->own = g_new0(uint64_t, n);
    s->src = g_new0(uint64_t, n);
    s->src_owned = g_new0(bool, n);
    s->src_saved = g_new0(bool, n);
    s->flops = g_new0(uint64_t, n);
    s->time_s = g_new0(double, n);
    s->start = g_new0(const fp_value *, n);
}

/* Per stage from the second: its start's bytes, whether the stage before makes and saves it, and
 * whether an op of the stage itself saves it. */
static void starts(const fp_train_saved *saved, const uint32_t *stage_of, fp_rc_stages *out)
{
    for (uint32_t t = 1; t < out->n; t++) {
        bool known;
        out->src[t] = fp_train_value_bytes(saved, out->start[t], &known);
        const fp_node *maker = out->start[t]->producer;
        for (guint i = 0; maker && stage_of[maker->id] == t - 1 && i < saved->items->len && !out->src_owned[t]; i++) {
            const fp_saved_item *it = &g_array_index(saved->items, fp_saved_item, i);
            out->src_owned[t] = it->counted && it->storage == out->start[t];
        }
    }
    for (guint i = 0; i < saved->items->len; i++) {
        const fp_saved_item *it = &g_array_index(saved->items, fp_saved_item, i);
        uint32_t t = stage_of[it->node->id];
        if (t > 0 && it->storage && it->storage == out->start[t] && out->src_owned[t])
            out->src_saved[t] = true;
    }
}

void fp_rc_stages_make(const fp_model *m, const fp_train_saved *saved, const void *cost, fp_rc_stages *out)
{
    memset(out, 0, sizeof *out);
    const fp_graph *g = m->main;
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(g, &n, NULL);
    if (!order || !n)
        return;
    g_autofree uint8_t *pinned = g_new0(uint8_t, g->values->len);
    g_autofree uint32_t *cut = cuts(g, saved, order, n, pinned);
    g_autofree uint32_t *stage_of = g_new0(uint32_t, g->nodes->len);
    uint32_t stages = 1;
    for (uint32_t i = 0; i < n; i++) {
        stage_of[order[i]->id] = stages - 1;
        stages += cut[i] != 0;
    }
    fp_rc_stages_alloc(out, stages);
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
        if (!maker || (it->storage && pinned[it->storage->id]))
            out->base += it->bytes; /* a graph input, or a tensor held throughout */
        else
            out->own[stage_of[maker->id]] += it->bytes;
    }
    starts(saved, stage_of, out);
}

void fp_rc_stages_clear(fp_rc_stages *s)
{
    g_free(s->own);
    g_free(s->src);
    g_free(s->src_owned);
    g_free(s->src_saved);
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

/* The bytes kept stage l holds: its saves, and its start when an op of it saves that tensor and the
 * stage before, which makes it, is recomputed (the start then lives on for this stage's backward). */
static uint64_t keep_held(const fp_rc_stages *s, uint32_t l, bool prev_kept)
{
    return s->own[l] + (l > 0 && !prev_kept && s->src_saved[l] ? s->src[l] : 0);
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
            own = keep_held(s, l, l > 0 && p->mode[l - 1] == FP_RC_KEEP);
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
        live[t] = kept                        ? keep_held(s, t, t > 0 && p->mode[t - 1] == FP_RC_KEEP)
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

/* ---------------------------------------------------------------- the searches */

/* A prefix of a plan: the stages before boundary r, its last segment [l, r) kept or recomputed,
 * the bytes it holds, its peak so far and its recomputed FLOPs. */
typedef struct {
    uint64_t held, peak, flops;
    int32_t parent; /* the prefix it extends (same array), -1 for the empty one */
    uint32_t l, r;
    bool kept;
} entry;

typedef void (*offer_fn)(void *q, const entry *e);

/* Offers every one-segment extension of prefix e (index `at`) whose peak fits the budget: stage
 * e->r kept, or the segment [e->r, r) recomputed for each r. */
static void successors(const fp_rc_stages *s, uint64_t budget, const entry *e, int32_t at, offer_fn offer, void *q)
{
    uint32_t pos = e->r;
    uint64_t held = e->held + keep_held(s, pos, pos > 0 && e->kept);
    entry k = {held, MAX(e->peak, held), e->flops, at, pos, pos + 1, true};
    if (k.peak <= budget)
        offer(q, &k);
    uint64_t start = start_held(s, pos, pos > 0 && e->kept), own = 0, flops = 0;
    for (uint32_t r = pos + 1; r <= s->n; r++) {
        own += s->own[r - 1], flops += s->flops[r - 1];
        if (e->held + start + own > budget)
            break; /* longer segments only hold more */
        entry rc = {e->held + start, MAX(e->peak, e->held + start + own), e->flops + flops, at, pos, r, false};
        offer(q, &rc);
    }
}

/* The modes of the plan whose last prefix is es[at] into p. */
static void trace(const entry *es, int32_t at, fp_rc_plan *p)
{
    for (; at >= 0 && es[at].parent >= 0; at = es[at].parent)
        for (uint32_t t = es[at].l; t < es[at].r; t++)
            p->mode[t] = es[at].kept ? FP_RC_KEEP : t == es[at].l ? FP_RC_START : FP_RC_CONTINUE;
}

/* (flops, peak) of a against b's, lexicographically: -1, 0 or 1. */
static int cost_cmp(const entry *a, const entry *b)
{
    if (a->flops != b->flops)
        return a->flops < b->flops ? -1 : 1;
    return a->peak < b->peak ? -1 : a->peak > b->peak;
}

/* The bucketed searches keep one prefix per boundary, kept flag and bucket. By cost, a prefix's
 * bucket is the sum over its recomputed segments of their FLOPs divided by delta, rounded down, and
 * the prefix holding least stays (then the cheapest). That is exact over buckets: two prefixes in
 * one cell differ only in what they hold, and holding less never hurts what follows. So the least
 * bucket of a complete plan, times delta, bounds any plan's FLOPs from below; a plan whose bucket
 * passes the last is dropped, which loses nothing when delta * buckets exceeds the optimum. By held,
 * the bucket is the bytes held divided by delta and the cheapest prefix stays (then the one holding
 * least): no bound, but cheap plans. */
typedef struct {
    const fp_rc_stages *s;
    uint64_t delta;
    uint32_t buckets; /* per (boundary, kept) */
    bool by_held;
    entry *cell;     /* 2 (n + 1) buckets of cells; an empty one holds UINT64_MAX */
    uint64_t offers; /* prefixes offered: the search's work */
} grid;

static void grid_offer(void *qp, const entry *e)
{
    grid *q = qp;
    q->offers++;
    uint64_t b = q->by_held ? e->held / q->delta
                            : (uint64_t)e->parent % q->buckets + (e->flops - q->cell[e->parent].flops) / q->delta;
    if (b >= q->buckets)
        return;
    entry *c = &q->cell[((size_t)e->r * 2 + e->kept) * q->buckets + b];
    bool better = q->by_held ? c->held == UINT64_MAX || cost_cmp(e, c) < 0 || (cost_cmp(e, c) == 0 && e->held < c->held)
                             : e->held < c->held || (e->held == c->held && cost_cmp(e, c) < 0);
    if (better)
        *c = *e;
}

/* Runs the bucketed search at `budget`: false when no plan fits, else the least bucket of a
 * complete plan into *bucket and the cell of the cheapest complete plan (FLOPs, then peak) into
 * *pick. Frees nothing: q->cell is the caller's to free. */
static bool grid_run(grid *q, uint64_t budget, uint32_t *bucket, int32_t *pick)
{
    const fp_rc_stages *s = q->s;
    size_t row = q->buckets, cells = 2 * ((size_t)s->n + 1) * row;
    q->cell = g_new(entry, cells);
    for (size_t i = 0; i < cells; i++)
        q->cell[i].held = UINT64_MAX;
    q->cell[row] = (entry){s->base, s->base, 0, -1, 0, 0, true}; /* boundary 0, kept, bucket 0 */
    for (size_t i = 0; i < 2 * (size_t)s->n * row; i++)
        if (q->cell[i].held != UINT64_MAX)
            successors(s, budget, &q->cell[i], (int32_t)i, grid_offer, q);
    *pick = -1;
    *bucket = UINT32_MAX;
    for (size_t i = 2 * (size_t)s->n * row; i < cells; i++) {
        if (q->cell[i].held == UINT64_MAX)
            continue;
        *bucket = MIN(*bucket, (uint32_t)(i % row));
        if (*pick < 0 || cost_cmp(&q->cell[i], &q->cell[*pick]) < 0)
            *pick = (int32_t)i;
    }
    return *pick >= 0;
}

/* Per boundary and kept flag, the least bytes a prefix within `budget` holds (UINT64_MAX where none
 * gets): the bucketed search with one bucket. 2 (n + 1) of them, the caller's to free. */
static uint64_t *least_held(const fp_rc_stages *s, uint64_t budget)
{
    grid q = {.s = s, .delta = UINT64_MAX, .buckets = 1};
    uint32_t bucket;
    int32_t pick;
    grid_run(&q, budget, &bucket, &pick);
    uint64_t *least = g_new(uint64_t, 2 * ((size_t)s->n + 1));
    for (size_t i = 0; i < 2 * ((size_t)s->n + 1); i++)
        least[i] = q.cell[i].held;
    g_free(q.cell);
    return least;
}

/* Whether some plan's saved activations stay within budget. */
static bool fits(const fp_rc_stages *s, uint64_t budget)
{
    g_autofree uint64_t *least = least_held(s, budget);
    return MIN(least[2 * s->n], least[2 * s->n + 1]) != UINT64_MAX;
}

/* Buckets per (boundary, kept) for n stages: those of the last round scaled so that the next makes
 * about GRID_WORK offers (the first round assumes every prefix offers n segments), between 2 and as
 * many as GRID_CELLS cells allow. */
static uint32_t grid_buckets(uint32_t n, uint32_t last, uint64_t offers)
{
    uint64_t rows = 2 * ((uint64_t)n + 1), most = CLAMP(GRID_CELLS / rows, 2, GRID_BUCKETS);
    uint64_t b = last ? (uint64_t)last * GRID_WORK / MAX(offers, 1) : GRID_WORK / (rows * MAX(n, 1));
    return (uint32_t)CLAMP(b, 2, most);
}

/* One round of the bucketed search q at `budget`: its plan into p's modes when it costs less than
 * *found (then its FLOPs into *found), its lower bound into *lower when higher; false when it found
 * no plan. */
static bool grid_round(grid *q, uint64_t budget, fp_rc_plan *p, uint64_t *found, uint64_t *lower)
{
    uint32_t bucket;
    int32_t pick;
    bool ok = grid_run(q, budget, &bucket, &pick);
    if (ok && !q->by_held)
        *lower = MAX(*lower, bucket * q->delta);
    if (ok && q->cell[pick].flops < *found) {
        *found = q->cell[pick].flops;
        memset(p->mode, 0, sizeof(fp_rc_mode) * q->s->n);
        trace(q->cell, pick, p);
    }
    g_free(q->cell);
    q->cell = NULL;
    return ok;
}

/* The state of the bucketed searches' rounds. */
typedef struct {
    uint64_t found;  /* the cheapest plan's FLOPs (UINT64_MAX before one) */
    uint64_t lower;  /* the best lower bound on any plan's FLOPs */
    uint64_t upper;  /* at least the optimum: the cost rounds' range */
    uint64_t offers; /* the last round's, for the next round's buckets */
    uint64_t step;   /* the last cost round's delta */
    uint32_t last;   /* the last round's buckets */
} rounds;

/* Rounds [from, to) of the bucketed searches, `buckets` each (0: as many as GRID_WORK allows,
 * grid_buckets): rounds before HELD_ROUNDS by held (cheap plans, the cheapest bounding the optimum
 * from above), the others by cost, each with its step as fine as the cheapest plan so far allows.
 * The cheapest plan's modes into p, the rest into r. The budget must fit some plan. */
static void approx(const fp_rc_stages *s, uint64_t budget, uint32_t buckets, int from, int to, rounds *r, fp_rc_plan *p)
{
    for (int round = from; round < to && (r->found == UINT64_MAX || r->lower < r->found); round++) {
        grid q = {.s = s,
                  .buckets = buckets ? buckets : grid_buckets(s->n, r->last, r->offers),
                  .by_held = round < HELD_ROUNDS};
        uint64_t range = q.by_held ? budget : r->upper; /* a bucket past range / delta holds nothing */
        if (range < q.buckets - 2)
            q.buckets = (uint32_t)range + 2;
        q.delta = MAX(range / (q.buckets - 1) + (range % (q.buckets - 1) != 0), 1); /* rounded up */
        if (!q.by_held && q.delta == r->step)
            break; /* the round before searched the same buckets */
        bool ok = grid_round(&q, budget, p, &r->found, &r->lower);
        g_assert(ok || q.by_held); /* the budget fits some plan, none of at most `upper` FLOPs dropped */
        r->upper = MIN(r->upper, r->found);
        r->last = q.buckets, r->offers = q.offers, r->step = q.by_held ? 0 : q.delta;
    }
}

/* The Lagrangian relaxation at multiplier lambda (FLOPs per byte): the least FLOPs plus lambda times
 * the bytes held at the end of forward over the plans whose every step fits the budget from the
 * least bytes held at its boundary (every plan within the budget among them), by a shortest path
 * over (boundary, kept), 2 (n + 1) cells of cell and val (its value). Returns the cell of its best
 * plan's last prefix (the prefixes' peaks are left 0), -1 when none gets to the end. */
static int32_t dual_min(const fp_rc_stages *s, uint64_t budget, const uint64_t *least, double lambda, entry *cell,
                        double *val)
{
    size_t cells = 2 * ((size_t)s->n + 1);
    for (size_t i = 0; i < cells; i++)
        val[i] = INFINITY;
    val[1] = lambda * (double)s->base, cell[1] = (entry){s->base, 0, 0, -1, 0, 0, true};
    for (size_t i = 0; i < 2 * (size_t)s->n; i++) {
        uint32_t pos = (uint32_t)(i / 2);
        bool prev_kept = pos > 0 && i % 2;
        if (isinf(val[i]) || least[i] == UINT64_MAX)
            continue;
        uint64_t keep = keep_held(s, pos, prev_kept), start = start_held(s, pos, prev_kept), own = 0, flops = 0;
        size_t next = 2 * (size_t)pos + 3; /* (pos + 1, kept) */
        if (least[i] + keep <= budget && val[i] + lambda * (double)keep < val[next])
            val[next] = val[i] + lambda * (double)keep,
            cell[next] = (entry){cell[i].held + keep, 0, cell[i].flops, (int32_t)i, pos, pos + 1, true};
        double v = val[i] + lambda * (double)start;
        for (uint32_t r = pos + 1; r <= s->n && least[i] + start + (own += s->own[r - 1]) <= budget; r++)
            if (v + (double)(flops += s->flops[r - 1]) < val[2 * r])
                val[2 * r] = v + (double)flops,
                        cell[2 * r] =
                            (entry){cell[i].held + start, 0, cell[i].flops + flops, (int32_t)i, pos, r, false};
    }
    size_t end = 2 * (size_t)s->n + (val[2 * s->n + 1] < val[2 * s->n]);
    return isinf(val[end]) ? -1 : (int32_t)end;
}

/* The Lagrangian dual of "the bytes held at the end of forward are at most the budget" (true of
 * every plan within it): its best over DUAL_STEPS multipliers, bisected in log space on the sign of
 * its slope (held - budget), raises r->lower when higher; each multiplier's plan that fits the
 * budget and costs less than r->found goes into p and r->found. */
static void dual_bound(const fp_rc_stages *s, uint64_t budget, rounds *r, fp_rc_plan *p)
{
    size_t cells = 2 * ((size_t)s->n + 1);
    g_autofree uint64_t *least = least_held(s, budget);
    g_autofree entry *cell = g_new0(entry, cells);
    g_autofree double *val = g_new(double, cells);
    fp_rc_plan t;
    plan_init(s, budget, &t);
    double lo = 1e-12, hi = (double)r->upper + 1, best = 0;
    for (int i = 0; i < DUAL_STEPS; i++) {
        double lambda = sqrt(lo * hi);
        int32_t end = dual_min(s, budget, least, lambda, cell, val);
        if (end < 0)
            break;
        double v = val[end] - lambda * (double)budget, slack = 1e-9 * (val[end] + lambda * (double)budget);
        best = MAX(best, v - slack); /* the slack covers the rounding of the sums */
        trace(cell, end, &t);
        fp_rc_plan_eval(s, &t);
        if (t.peak_bytes <= budget && t.flops < r->found) {
            r->found = t.flops;
            memcpy(p->mode, t.mode, sizeof(fp_rc_mode) * s->n);
        }
        *(cell[end].held > budget ? &lo : &hi) = lambda;
    }
    fp_rc_plan_clear(&t);
    r->lower = MAX(r->lower, (uint64_t)best);
}

/* The exact search: per boundary and kept flag, the prefixes no other dominates (holds no more and
 * costs less, or as much at no higher peak), by bytes held ascending (then cost descending). Prefixes
 * costing more than `limit` FLOPs are dropped; past `work_max` steps the search gives up. */
typedef struct {
    const fp_rc_stages *s;
    uint64_t limit, work, work_max;
    GArray *all;    /* entry */
    GArray **front; /* per (boundary, kept): indices into all */
} pareto;

/* Adds e to its front unless an entry there dominates it, dropping those it dominates. */
static void pareto_offer(void *qp, const entry *e)
{
    pareto *q = qp;
    if (e->flops > q->limit || q->work > q->work_max)
        return;
    GArray *f = q->front[2 * e->r + e->kept];
    const entry *all = (const entry *)(void *)q->all->data;
    const guint *ix = (const guint *)(void *)f->data;
    guint lo = 0, hi = f->len; /* the first entry holding as much as e or more */
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (all[ix[mid]].held < e->held)
            lo = mid + 1;
        else
            hi = mid;
    }
    if ((lo > 0 && cost_cmp(&all[ix[lo - 1]], e) <= 0) ||
        (lo < f->len && all[ix[lo]].held == e->held && cost_cmp(&all[ix[lo]], e) <= 0))
        return;
    guint end = lo; /* entries from lo on hold as much or more: those costing as much or more go */
    while (end < f->len && cost_cmp(&all[ix[end]], e) >= 0)
        end++;
    guint at = q->all->len;
    g_array_append_val(q->all, *e);
    if (end > lo)
        g_array_remove_range(f, lo, end - lo);
    g_array_insert_val(f, lo, at);
    q->work += 1 + (f->len - lo) / 16;
}

/* Runs the exact search at `budget`: the cheapest plan (FLOPs, then peak) of at most q->limit FLOPs
 * into p's modes and true, or false when the search gave up or found none. */
static bool pareto_run(pareto *q, uint64_t budget, fp_rc_plan *p)
{
    const fp_rc_stages *s = q->s;
    uint32_t fronts = 2 * (s->n + 1);
    q->all = g_array_new(FALSE, FALSE, sizeof(entry));
    q->front = g_new(GArray *, fronts);
    for (uint32_t i = 0; i < fronts; i++)
        q->front[i] = g_array_new(FALSE, FALSE, sizeof(guint));
    pareto_offer(q, &(entry){s->base, s->base, 0, -1, 0, 0, true});
    for (uint32_t i = 0; i < 2 * s->n && q->work <= q->work_max; i++)
        for (guint k = 0; k < q->front[i]->len; k++) {
            guint at = g_array_index(q->front[i], guint, k);
            entry e = g_array_index(q->all, entry, at);
            successors(s, budget, &e, (int32_t)at, pareto_offer, q);
        }
    int32_t pick = -1;
    for (uint32_t i = 2 * s->n; i < fronts; i++)
        for (guint k = 0; k < q->front[i]->len; k++) {
            int32_t at = (int32_t)g_array_index(q->front[i], guint, k);
            if (pick < 0 || cost_cmp(&g_array_index(q->all, entry, at), &g_array_index(q->all, entry, pick)) < 0)
                pick = at;
        }
    bool done = q->work <= q->work_max && pick >= 0;
    if (done) {
        memset(p->mode, 0, sizeof(fp_rc_mode) * s->n);
        trace((const entry *)(void *)q->all->data, pick, p);
    }
    for (uint32_t i = 0; i < fronts; i++)
        g_array_free(q->front[i], TRUE);
    g_free(q->front);
    g_array_free(q->all, TRUE);
    return done;
}

void fp_rc_plan_search(const fp_rc_stages *s, uint64_t budget, uint32_t buckets, uint64_t exact_steps, fp_rc_plan *out)
{
    g_assert(buckets != 1);
    plan_init(s, budget, out);
    bool ok = fits(s, budget), proven = true;
    rounds r = {.found = UINT64_MAX};
    for (uint32_t t = 0; t < s->n; t++)
        r.upper += s->flops[t];
    if (ok && s->n) {
        approx(s, budget, buckets, 0, 1, &r, out); /* a cheap plan first, to bound the exact search */
        pareto q = {.s = s, .limit = r.found, .work_max = exact_steps};
        proven = exact_steps && pareto_run(&q, budget, out);
        if (!proven) {
            approx(s, budget, buckets, 1, HELD_ROUNDS + GRID_ROUNDS, &r, out);
            if (r.found > r.lower)
                dual_bound(s, budget, &r, out);
        }
        proven = proven || r.found == r.lower;
    }
    fp_rc_plan_eval(s, out);
    out->feasible = ok && out->peak_bytes <= budget;
    out->exact = proven;
    out->lower_flops = proven ? out->flops : r.lower;
}

void fp_rc_plan_best(const fp_rc_stages *s, uint64_t budget, fp_rc_plan *out)
{
    fp_rc_plan_search(s, budget, 0, PARETO_WORK, out);
}

uint64_t fp_rc_min_budget(const fp_rc_stages *s)
{
    uint64_t lo = s->base, hi = s->base; /* every plan holds base; keeping every stage fits `hi` */
    for (uint32_t t = 0; t < s->n; t++)
        hi += s->own[t];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fits(s, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
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
