/* fuse.c - the fusion pass: matches the target's rules (fuse_rules.c) on every graph, checks
 * their constraints (fuse_constraints.c), records every candidate, and rewrites the graph for
 * the ones that pass, sweep after sweep until nothing changes. Matching (fuse_match.c), the
 * rewrites (fuse_rewrite.c) and the upkeep of the use lists (fuse_uses.c) are apart; this file is
 * the driver and the records. */
#include <string.h>

#include "passes/fusion/fuse_internal.h"

#define MAX_SWEEPS 16

/* ---------------------------------------------------------------- records */

static void fusion_clear(fp_fusion *f)
{
    g_ptr_array_free(f->nodes, TRUE);
    g_ptr_array_free(f->reasons, TRUE);
}

fp_fusion_list *fp_fusion_list_new(void)
{
    fp_fusion_list *l = g_new0(fp_fusion_list, 1);
    l->fusions = g_ptr_array_new();
    l->arena = fp_arena_new();
    l->no_reasons = g_ptr_array_new();
    return l;
}

void fp_fusion_list_free(fp_fusion_list *l)
{
    if (!l)
        return;
    for (guint i = 0; i < l->fusions->len; i++)
        fusion_clear(l->fusions->pdata[i]);
    g_ptr_array_free(l->fusions, TRUE);
    fp_arena_free(l->arena);
    g_ptr_array_unref(l->no_reasons);
    g_free(l->target);
    g_free(l);
}

static char *keep(fp_fusion_list *l, const char *s) { return s ? fp_arena_strndup(l->arena, s, strlen(s)) : NULL; }

/* Where the record of (anchor node index, rule key) is, or is to be linked in (holding 0). The
 * pointer holds until the next record is added. */
static uint32_t *rec_slot(fp_fuser *fz, size_t node, uint32_t rule)
{
    uint32_t *at = &fz->first_rec[node];
    while (*at && g_array_index(fz->rec_rule, uint32_t, *at - 1 - fz->rec_base) != rule)
        at = &g_array_index(fz->rec_next, uint32_t, *at - 1 - fz->rec_base);
    return at;
}

/* Whether the reasons a record holds say what `reasons` (a candidate's, in the scratch arena) say. */
static bool same_reasons(const GPtrArray *held, const GPtrArray *reasons)
{
    if (held->len != reasons->len)
        return false;
    for (guint i = 0; i < held->len; i++) {
        const fp_reason *a = held->pdata[i], *b = reasons->pdata[i];
        if (g_strcmp0(a->constraint, b->constraint) || g_strcmp0(a->actual, b->actual) ||
            g_strcmp0(a->required, b->required) || g_strcmp0(a->message, b->message) || g_strcmp0(a->hint, b->hint))
            return false;
    }
    return true;
}

/* Records (or replaces the record of) a candidate of rule index ri: the record and copies of the
 * reasons (which live in the match's scratch arena) go to the list's arena. A replaced record is
 * rewritten in place, with its arrays, and keeps its reasons when they say the same (a candidate
 * refused again in a later sweep: the list's arena does not grow by a copy). */
static fp_fusion *record(fp_fuser *fz, size_t ri, const fp_match *mt, const GPtrArray *reasons)
{
    fp_fusion_list *l = fz->out;
    uint32_t rule = (uint32_t)fz->rule_key[ri], *slot = rec_slot(fz, fp_node_index(mt->nodes[0]), rule);
    fp_fusion *f;
    GPtrArray *nodes = NULL, *had = NULL;
    if (*slot) {
        f = l->fusions->pdata[*slot - 1];
        nodes = f->nodes;
        had = f->reasons;
    } else {
        f = fp_arena_alloc(l->arena, sizeof *f);
        g_ptr_array_add(l->fusions, f);
        g_assert(l->fusions->len < UINT32_MAX);
        *slot = l->fusions->len; /* before the arrays grow: slot may point into rec_next */
        uint32_t none = 0;
        g_array_append_val(fz->rec_next, none);
        g_array_append_val(fz->rec_rule, rule);
    }
    *f = (fp_fusion){.rule = mt->rule->id,
                     .variant = mt->rule,
                     .anchor = mt->nodes[0]->name,
                     .applied = reasons->len == 0};
    f->nodes = nodes ? nodes : g_ptr_array_sized_new((guint)mt->n);
    g_ptr_array_set_size(f->nodes, mt->n);
    for (int i = 0; i < mt->n; i++)
        f->nodes->pdata[i] = (gpointer)mt->nodes[i]->name;
    f->fused_op = mt->rule->rewrite == FP_RW_ELIMINATE ? NULL
                  : mt->rule->rewrite == FP_RW_PAD     ? mt->nodes[mt->n - 1]->op_type
                  : mt->rule->fused_op                 ? mt->rule->fused_op
                                                       : mt->nodes[0]->op_type;
    int act = mt->rule->act_node;
    if (act >= 0 && act < mt->n)
        f->activation = mt->nodes[act]->op_type;
    if (had && had != l->no_reasons && reasons->len && same_reasons(had, reasons)) {
        f->reasons = had;
        return f;
    }
    if (!reasons->len) { /* an applied record shares the list's empty array */
        f->reasons = g_ptr_array_ref(l->no_reasons);
    } else if (had && had != l->no_reasons) {
        f->reasons = g_steal_pointer(&had);
        g_ptr_array_set_size(f->reasons, reasons->len);
    } else {
        f->reasons = g_ptr_array_sized_new(reasons->len);
        g_ptr_array_set_size(f->reasons, reasons->len);
    }
    if (had)
        g_ptr_array_free(had, TRUE);
    for (guint i = 0; i < reasons->len; i++) {
        const fp_reason *r = reasons->pdata[i];
        fp_reason *c = fp_arena_alloc(l->arena, sizeof *c);
        *c = (fp_reason){keep(l, r->constraint), keep(l, r->actual), keep(l, r->required), keep(l, r->message),
                         keep(l, r->hint)};
        f->reasons->pdata[i] = c;
    }
    return f;
}

/* ---------------------------------------------------------------- driver */

/* Whether live node n of graph g comes after the live producers in g of what it reads, as
 * fp_graph_topo's array-order test asks (its control edges are the rewrites' to keep). */
static bool after_producers(const fp_graph *g, const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs + fp_node_n_implicit(n); k++) {
        const fp_value *v = k < n->n_inputs ? n->inputs[k] : n->ext->implicit[k - n->n_inputs];
        if (v && v->producer && v->graph == g && v->producer->id >= n->id && !(v->producer->flags & FP_NODE_REMOVED))
            return false;
    }
    return true;
}

/* The order a rule pass sweeps graph g in: fp_graph_order's. When that is the array order of the
 * live nodes (`array`: the usual case), the sweep walks g->nodes and fz->kind and never the order;
 * else `idx` holds the model-wide index of each node of `order`. */
typedef struct {
    fp_graph *g;
    fp_node *const *order;
    uint32_t n;
    bool array;
    uint32_t *idx;   /* g_malloc, NULL when `array` */
    bool topo_stale; /* array order, and rewrites removed nodes that g->topo still lists */
} sweep_order;

/* Makes o for o->g (fp_graph_order). False with error set on a cycle. */
static bool order_make(fp_fuser *fz, sweep_order *o, GError **error)
{
    fp_graph *g = o->g;
    if (!(o->order = fp_graph_order(g, &o->n, error)))
        return false;
    const uint8_t *kind = fz->kind + g->node_base;
    uint32_t i = 0;
    o->array = true;
    for (guint j = 0; j < g->nodes->len && o->array; j++)
        if (kind[j] != FP_FUSE_KIND_REMOVED)
            o->array = i < o->n && o->order[i++] == g->nodes->pdata[j];
    o->array = o->array && i == o->n;
    g_clear_pointer(&o->idx, g_free);
    if (!o->array) {
        o->idx = g_new(uint32_t, o->n + 1);
        for (uint32_t k = 0; k < o->n; k++)
            o->idx[k] = (uint32_t)fp_node_index(o->order[k]);
    }
    o->topo_stale = false;
    return true;
}

/* Drops the removed nodes from g's cached order when the rewrites kept it the array order. */
static void order_settle(fp_fuser *fz, sweep_order *o)
{
    fp_graph *g = o->g;
    if (o->topo_stale && g->topo) {
        const uint8_t *kind = fz->kind + g->node_base;
        uint32_t n = 0;
        for (guint j = 0; j < g->nodes->len; j++)
            if (kind[j] != FP_FUSE_KIND_REMOVED)
                g->topo[n++] = g->nodes->pdata[j];
        g_assert(n <= g->n_topo);
        g->n_topo = n;
    }
    o->topo_stale = false;
}

/* After the rewrite of match mt: the kinds of its nodes, and whether the node array is still in
 * order (the rewritten anchor may read a value made after it; the consumers an elimination rewires
 * read a value made before the node it removed). */
static void after_rewrite(fp_fuser *fz, const fp_match *mt)
{
    for (int i = 0; i < mt->n; i++) {
        uint8_t *k = &fz->kind[fp_node_index(mt->nodes[i])];
        fz->n_kind[*k]--;
        *k = fp_fuse_match_kind_of(mt->nodes[i]);
        fz->n_kind[*k]++;
    }
    const fp_node *a = mt->nodes[0];
    if (!(a->flags & FP_NODE_REMOVED) && !after_producers(a->graph, a))
        fz->order_broken = true;
}

/* The first position at or after i of o (n positions) whose node's kind may anchor the rule
 * (anchor_ok; `only`: its one kind, or -1); n when none. */
static uint32_t next_anchor(const sweep_order *o, const uint8_t *kind, const bool *anchor_ok, int only, uint32_t i,
                            uint32_t n)
{
    if (i >= n)
        return n;
    if (o->array && only >= 0) { /* a byte search over the kinds of the node array */
        const uint8_t *at = memchr(kind + i, only, n - i);
        return at ? (uint32_t)(at - kind) : n;
    }
    if (o->array) {
        while (i < n && !anchor_ok[kind[i]])
            i++;
    } else {
        while (i < n && !anchor_ok[kind[o->idx[i]]])
            i++;
    }
    return i;
}

static inline fp_node *node_at(const sweep_order *o, uint32_t i)
{
    return o->array ? o->g->nodes->pdata[i] : (fp_node *)o->order[i];
}

/* The anchors after the one being matched, FUSE_AHEAD of them, whose nodes were prefetched when
 * they entered; the one FUSE_AHEAD / 2 places ahead also has its inputs (the constraints read
 * them) and first output prefetched, the one FUSE_AHEAD / 4 ahead that output's use list and first
 * consumer (what the match reads next). Matching an anchor that fuses nothing takes less than a
 * cache miss on a big graph: the hints must run several anchors ahead to arrive in time. */
enum { FUSE_AHEAD = 8 };

typedef struct {
    uint32_t at[FUSE_AHEAD];
    unsigned head, len;
    uint32_t from; /* where the next anchor is looked for: after the last that entered */
} anchor_queue;

/* Refills q with the anchors from q->from on, prefetching each one's node, and what the match of
 * the anchors FUSE_AHEAD / 2 and FUSE_AHEAD / 4 places ahead reads next. */
static void queue_fill(anchor_queue *q, const sweep_order *o, const uint8_t *kind, const bool *anchor_ok, int only,
                       uint32_t n)
{
    while (q->len < FUSE_AHEAD && q->from < n) {
        uint32_t a = next_anchor(o, kind, anchor_ok, only, q->from, n);
        if (a >= n) {
            q->from = n;
            break;
        }
        const char *p = (const char *)node_at(o, a);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
        q->at[(q->head + q->len++) % FUSE_AHEAD] = a;
        q->from = a + 1;
    }
    if (q->len > FUSE_AHEAD / 2) {
        const fp_node *mid = node_at(o, q->at[(q->head + FUSE_AHEAD / 2) % FUSE_AHEAD]);
        for (uint32_t k = 0; k < mid->n_inputs && k < 4; k++)
            if (mid->inputs[k])
                __builtin_prefetch(mid->inputs[k]);
        if (mid->n_outputs && mid->outputs[0])
            __builtin_prefetch(mid->outputs[0]);
    }
    if (q->len > FUSE_AHEAD / 4) {
        const fp_node *near = node_at(o, q->at[(q->head + FUSE_AHEAD / 4) % FUSE_AHEAD]);
        const fp_value *v = near->n_outputs ? near->outputs[0] : NULL;
        if (v && v->n_uses) {
            __builtin_prefetch(v->uses);
            __builtin_prefetch(v->uses[0].node);
        }
    }
}

/* The next anchor after i: q's first (taken off it), n when none. After a rewrite, which changes
 * kinds, q is emptied and looked up again from i. */
static uint32_t queue_next(anchor_queue *q, const sweep_order *o, const uint8_t *kind, const bool *anchor_ok, int only,
                           uint32_t i, uint32_t n, bool rewrote)
{
    if (rewrote)
        *q = (anchor_queue){.from = i + 1};
    queue_fill(q, o, kind, anchor_ok, only, n);
    if (!q->len)
        return n;
    uint32_t a = q->at[q->head];
    q->head = (q->head + 1) % FUSE_AHEAD;
    q->len--;
    return a;
}

/* One sweep of rule r over graph g in order o; returns whether anything was rewritten. Anchors
 * are visited in order, looked up ahead in an anchor_queue (and again after a rewrite, which
 * changes kinds, so rewrites still decide what comes next). */
static bool sweep_rule(fp_fuser *fz, const sweep_order *o, size_t ri)
{
    if (!fp_fuse_match_possible(fz, ri))
        return false;
    const fp_rule *r = &fp_rules[ri];
    const fp_graph *g = o->g;
    bool changed = false;
    const bool *anchor_ok = fp_fuse_match_kinds(fz, ri)[0];
    int only = fz->only[ri]; /* the one kind the anchor can have, if one */
    const uint8_t *kind = fz->kind + (o->array ? g->node_base : 0);
    uint32_t n = o->array ? g->nodes->len : o->n;
    g_autoptr(GPtrArray) reasons = g_ptr_array_new();
    anchor_queue q = {.from = 0};
    bool rewrote = false;
    for (uint32_t i = queue_next(&q, o, kind, anchor_ok, only, 0, n, false); i < n;
         i = queue_next(&q, o, kind, anchor_ok, only, i, n, rewrote)) {
        rewrote = false;
        size_t idx = o->array ? g->node_base + i : o->idx[i];
        fp_node *anchor = node_at(o, i);
        fp_match mt;
        if (!fp_fuse_match_at(fz, r, anchor, idx, &mt))
            continue;
        g_ptr_array_set_size(reasons, 0);
        bool gated = false;
        for (int k = 0; k < r->n_constraints; k++) {
            const fp_constraint *c = &r->constraints[k];
            guint before = reasons->len;
            bool ok = fp_fuse_constraint_check(c, &mt, c->gate ? NULL : reasons);
            if (!ok && c->gate) {
                gated = true;
                break;
            }
            g_assert(ok || reasons->len > before);
        }
        fp_fusion *f = gated ? NULL : record(fz, ri, &mt, reasons);
        fp_arena_reset(fz->tmp); /* the reasons were copied into the record */
        if (!f || !f->applied)
            continue;
        bool local = fp_fuse_uses_begin(fz, &mt);
        fp_fuse_rewrite(fz, &mt);
        if (local)
            fp_fuse_uses_end(fz);
        after_rewrite(fz, &mt);
        changed = rewrote = true; /* after_rewrite changed kinds */
    }
    return changed;
}

/* Whether a variant of rule `id` is split between the phases by the model's opset (its gate
 * level1_phase): the runtime registers it at both levels. */
static bool split_by_opset(const char *id)
{
    for (size_t r = 0; r < fp_n_rules; r++)
        for (int k = 0; k < fp_rules[r].n_constraints && strcmp(fp_rules[r].id, id) == 0; k++)
            if (fp_rules[r].constraints[k].id == FP_CONSTRAINT_level1_phase)
                return true;
    return false;
}

/* Whether phase applies rule `id` of target t: a rule of `before_partition` before, the others
 * after, and in both one split by opset (its gate takes the nodes of each phase) or one the
 * runtime applies again. */
static bool in_phase(const fp_target *t, fp_fuse_phase phase, const char *id)
{
    if (phase == FP_FUSE_ALL)
        return true;
    bool before = fp_target_listed(t->before_partition, id);
    if (before && phase == FP_FUSE_AFTER_PARTITION &&
        (split_by_opset(id) || fp_target_listed(t->again_after_partition, id)))
        return true;
    return before == (phase == FP_FUSE_BEFORE_PARTITION);
}

/* The rules of target t of this call's phase, in its order, over graph g (one sweep of the pass). */
static bool fuse_graph(fp_fuser *fz, fp_graph *g, bool *changed, GError **error)
{
    const fp_target *t = fz->t;
    sweep_order o = {.g = g};
    bool ok = true, have = false;
    for (char **id = t->rules; *id && ok; id++) {
        if (!in_phase(t, fz->phase, *id))
            continue;
        if (!have && !(ok = have = order_make(fz, &o, error)))
            break;
        fz->link_work = 0;
        fz->order_broken = false;
        bool rewrote = false;
        for (size_t r = 0; r < fp_n_rules; r++)
            if (strcmp(fp_rules[r].id, *id) == 0)
                rewrote |= sweep_rule(fz, &o, r);
        /* the next rule sees this one's rewrites: the use lists were updated where they changed
         * (or are made again here), the order stays when the node array is still in order */
        if (fz->relink) {
            fp_model_link(fz->m); /* clears every graph's order */
            fz->relink = false;
            have = false;
        } else if (rewrote && (!o.array || fz->order_broken)) {
            g_clear_pointer(&g->topo, g_free);
            have = false;
        } else if (rewrote) {
            o.topo_stale = true;
        }
        *changed |= rewrote;
        fz->pass++; /* forgets every dirty mark */
    }
    order_settle(fz, &o);
    g_free(o.idx);
    return ok;
}

/* ORT's level-1 rewrite rules run before its constant folding: a Div(1, c) of a constant c, read by
 * one Mul and no graph output, is DivMulFusion's before it is folded (the Div then reads the Mul's
 * other input). Undoes the shape pass's folding of such Divs of g when the target has div_mul and
 * phase applies it. */
static void unfold_reciprocals(const fp_target *t, fp_fuse_phase phase, fp_graph *g)
{
    if (!g_strv_contains((const char *const *)t->rules, "div_mul") || !in_phase(t, phase, "div_mul"))
        return;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        fp_value *y = n->n_outputs ? n->outputs[0] : NULL;
        double one = 0;
        uint64_t numel = 0;
        if (n->op != FP_OP_DIV || (n->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) != FP_NODE_FOLDED ||
            n->n_inputs != 2 || !n->inputs[0] || !y || y->is_output || y->n_uses != 1 ||
            y->uses[0].node->op != FP_OP_MUL || (y->uses[0].node->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) ||
            !fp_shape_numel(&n->inputs[0]->shape, &numel) || numel != 1 || !fp_fuse_const_scalar(n->inputs[0], &one) ||
            one != 1.0)
            continue;
        n->flags &= ~(uint16_t)FP_NODE_FOLDED;
        fp_value_set_fold(y, NULL);
    }
}

/* The live nodes of m by name, a name that several hold mapped to `m` itself (no node). */
static GHashTable *nodes_by_name(const fp_model *m)
{
    GHashTable *h = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_node *n = g->nodes->pdata[i];
            if (fp_node_live(n) && n->name)
                g_hash_table_insert(h, (gpointer)n->name, g_hash_table_contains(h, n->name) ? (gpointer)m : n);
        }
    }
    return h;
}

/* Links the refused records of the phase before partitioning of the rules that run again
 * (`again_after_partition`) to their anchor nodes (one a name names alone), so that a candidate
 * refused again keeps its one record and one taken now replaces it. The records from index 0 on
 * are this pass's then. */
static void seed_records(fp_fuser *fz)
{
    fp_fusion_list *l = fz->out;
    g_autoptr(GHashTable) names = nodes_by_name(fz->m);
    fz->rec_base = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *f = l->fusions->pdata[i];
        size_t ri = (size_t)(f->variant - fp_rules);
        uint32_t none = 0, rule = (uint32_t)fz->rule_key[ri];
        g_array_append_val(fz->rec_next, none);
        g_array_append_val(fz->rec_rule, rule);
        const fp_node *n = !f->applied && fp_target_listed(fz->t->again_after_partition, f->rule)
                               ? g_hash_table_lookup(names, f->anchor)
                               : NULL;
        uint32_t *slot = n && n != (const void *)fz->m ? rec_slot(fz, fp_node_index(n), rule) : NULL;
        if (slot && !*slot)
            *slot = i + 1;
    }
}

bool fp_pass_fuse(fp_model *m, const fp_target *t, fp_fuse_phase phase, fp_fusion_list *out, fp_diag *diag,
                  GError **error)
{
    if (phase == FP_FUSE_BEFORE_PARTITION && !t->before_partition)
        return true;
    for (guint gi = 0; gi < m->graphs->len; gi++)
        unfold_reciprocals(t, phase, m->graphs->pdata[gi]);
    fp_fuser fz = {.m = m, .t = t, .phase = phase, .out = out, .tmp = fp_arena_new()};
    fz.rule_key = g_new(size_t, fp_n_rules + 1);
    for (size_t r = 0; r < fp_n_rules; r++)
        for (fz.rule_key[r] = 0; strcmp(fp_rules[fz.rule_key[r]].id, fp_rules[r].id) != 0; fz.rule_key[r]++)
            ;
    size_t total = 0; /* fusion rewrites nodes in place: the counts, and so the indexes, stay */
    fp_model_number(m, &total, NULL);
    g_assert(total < UINT32_MAX); /* sweep_order.idx holds model-wide node indexes */
    fz.first_rec = g_new0(uint32_t, total + 1);
    fz.rec_next = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    fz.rec_rule = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    fz.rec_base = out->fusions->len;
    if (phase == FP_FUSE_AFTER_PARTITION && t->again_after_partition)
        seed_records(&fz);
    fp_fuse_match_init(&fz, total);
    fp_fuse_rewrite_init(&fz);
    fp_fuse_uses_init(&fz, total);
    fz.pass = 1;
    g_free(out->target);
    out->target = g_strdup(t->name);
    bool ok = true;
    for (int sweep = 0; sweep < MAX_SWEEPS && ok; sweep++) {
        bool changed = false;
        for (guint gi = 0; gi < m->graphs->len && ok; gi++)
            ok = fuse_graph(&fz, m->graphs->pdata[gi], &changed, error);
        if (!changed)
            break;
    }
    if (ok)
        fp_fuse_rewrite_squeezes(&fz);
    fp_fuse_match_free(&fz);
    fp_fuse_rewrite_free(&fz);
    fp_fuse_uses_free(&fz);
    g_free(fz.first_rec);
    g_array_free(fz.rec_next, TRUE);
    g_array_free(fz.rec_rule, TRUE);
    g_free(fz.rule_key);
    fp_arena_free(fz.tmp);
    if (ok && phase != FP_FUSE_BEFORE_PARTITION) {
        guint applied = 0;
        for (guint i = 0; i < out->fusions->len; i++)
            applied += ((fp_fusion *)out->fusions->pdata[i])->applied;
        fp_diag_add(diag, FP_DIAG_INFO, "fuse", "fuse-summary", NULL, "%s: %u candidates, %u applied", t->name,
                    out->fusions->len, applied);
    }
    return ok;
}
