/* fuse.c - the fusion pass: matches the target's rules (fuse_rules.c) on every graph, checks
 * their constraints (fuse_constraints.c), records every candidate, and rewrites the graph for
 * the ones that pass, sweep after sweep until nothing changes. */
#include <string.h>

#include "passes/fuse.h"

#define MAX_SWEEPS 16

typedef struct {
    fp_model *m;
    const fp_target *t;
    fp_fusion_list *out;
    GHashTable **seen; /* per rule id (the first index in fp_rules with that id; variants of a rule
                          share it): anchor node -> index + 1 in out->fusions */
    size_t *rule_key;  /* index in fp_rules -> its index in seen */
    uint32_t *dirty;   /* per node of the model: the rule pass that rewrote it (not matched again in
                          that pass), 0 = never */
    uint32_t pass;     /* the current rule pass, from 1 */
    fp_arena *tmp;     /* a candidate's reasons while its constraints run (fp_match.tmp) */
    uint32_t groups;
} fuser;

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
    g_free(l->target);
    g_free(l);
}

static char *keep(fp_fusion_list *l, const char *s) { return s ? fp_arena_strndup(l->arena, s, strlen(s)) : NULL; }

/* Records (or replaces the record of) a candidate of rule index ri: the record and copies of the
 * reasons (which live in the match's scratch arena) go to the list's arena. */
static fp_fusion *record(fuser *fz, size_t ri, const fp_match *mt, const GPtrArray *reasons)
{
    fp_fusion_list *l = fz->out;
    fp_fusion *f = fp_arena_alloc(l->arena, sizeof *f);
    f->rule = mt->rule->id;
    f->anchor = mt->nodes[0]->name;
    f->nodes = g_ptr_array_sized_new((guint)mt->n);
    for (int i = 0; i < mt->n; i++)
        g_ptr_array_add(f->nodes, (gpointer)mt->nodes[i]->name);
    f->applied = reasons->len == 0;
    f->fused_op = mt->rule->rewrite == FP_RW_ELIMINATE ? NULL
                  : mt->rule->fused_op                 ? mt->rule->fused_op
                                                       : mt->nodes[0]->op_type;
    int act = mt->rule->act_node;
    if (act >= 0 && act < mt->n)
        f->activation = mt->nodes[act]->op_type;
    f->reasons = g_ptr_array_sized_new(reasons->len);
    for (guint i = 0; i < reasons->len; i++) {
        const fp_reason *r = reasons->pdata[i];
        fp_reason *c = fp_arena_alloc(l->arena, sizeof *c);
        *c = (fp_reason){keep(l, r->constraint), keep(l, r->actual), keep(l, r->required), keep(l, r->message),
                         keep(l, r->hint)};
        g_ptr_array_add(f->reasons, c);
    }
    GHashTable **seen = &fz->seen[fz->rule_key[ri]];
    if (!*seen)
        *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(*seen, mt->nodes[0]));
    if (idx) {
        fusion_clear(l->fusions->pdata[idx - 1]);
        l->fusions->pdata[idx - 1] = f;
    } else {
        g_ptr_array_add(l->fusions, f);
        g_hash_table_insert(*seen, mt->nodes[0], GUINT_TO_POINTER(l->fusions->len));
    }
    return f;
}

/* ---------------------------------------------------------------- matching */

static bool is_dirty(const fuser *fz, const fp_node *n) { return fz->dirty[fp_node_index(n)] == fz->pass; }
static void set_dirty(fuser *fz, const fp_node *n) { fz->dirty[fp_node_index(n)] = fz->pass; }

/* Whether op_ok(p, n) may hold for a node of kind `op`: its test of the kind alone. */
static bool kind_ok(const fp_pat_node *p, fp_op op)
{
    for (int i = 0; i < 8 && p->ops[i] != FP_OP_COUNT; i++)
        if (p->ops[i] == op)
            return true;
    return p->flags && fp_op_has(op, p->flags) && op != FP_OP_CAST && op != FP_OP_CAST_LIKE &&
           op != FP_OP_QUANTIZE_LINEAR && op != FP_OP_DEQUANTIZE_LINEAR;
}

static bool op_ok(const fp_pat_node *p, const fp_node *n)
{
    if (n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED))
        return false;
    /* every rewrite reads input 0 and output 0: a malformed node without them never matches */
    if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0])
        return false;
    return kind_ok(p, n->op);
}

static bool in_match(const fp_match *mt, const fp_node *n)
{
    for (int i = 0; i < mt->n; i++)
        if (mt->nodes[i] == n)
            return true;
    return false;
}

static bool has_input(const fp_node *n, const fp_value *v, int port)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == v && (port < 0 || (int)i == port))
            return true;
    return false;
}

/* Extends a match by pattern node k (and the following ones); backtracks over consumers. */
static bool extend(fuser *fz, fp_match *mt, int k)
{
    const fp_rule *r = mt->rule;
    if (k == r->n_pattern) {
        const fp_pat_node *last = &r->pattern[r->n_pattern - 1];
        /* a repeatable last node: follow the chain while it has one consumer of the right kind */
        for (int links = 1; last->repeat && links < last->repeat && mt->n < (int)G_N_ELEMENTS(mt->nodes); links++) {
            fp_value *v = mt->nodes[mt->n - 1]->outputs[0];
            if (!v || v->n_uses != 1 || v->is_output)
                break;
            fp_node *next = v->uses[0].node;
            if (v->uses[0].port != 0 || next->graph != v->graph || in_match(mt, next) || !op_ok(last, next) ||
                is_dirty(fz, next))
                break;
            mt->nodes[mt->n++] = next;
        }
        return true;
    }
    const fp_pat_node *p = &r->pattern[k];
    fp_node *src = mt->nodes[p->from];
    fp_value *v = src->n_outputs ? src->outputs[0] : NULL;
    if (!v)
        return false;
    for (uint32_t u = 0; u < v->n_uses; u++) {
        fp_node *cand = v->uses[u].node;
        uint32_t port = v->uses[u].port;
        if (port == UINT32_MAX || cand->graph != src->graph || in_match(mt, cand) || !op_ok(p, cand) ||
            is_dirty(fz, cand))
            continue;
        if (p->port >= 0 && port != (uint32_t)p->port)
            continue;
        if (p->from2 != -1) {
            fp_value *v2 = p->from2 == FP_PAT_X ? mt->x : mt->nodes[p->from2]->outputs[0];
            if (!v2 || !has_input(cand, v2, p->port2))
                continue;
        }
        mt->nodes[mt->n++] = cand;
        if (extend(fz, mt, k + 1))
            return true;
        mt->n = k;
    }
    return false;
}

static bool match_at(fuser *fz, const fp_rule *r, fp_node *anchor, fp_match *mt)
{
    if (!op_ok(&r->pattern[0], anchor) || is_dirty(fz, anchor))
        return false;
    memset(mt, 0, sizeof *mt);
    mt->rule = r;
    mt->target = fz->t;
    mt->tmp = fz->tmp;
    mt->nodes[0] = anchor;
    mt->n = 1;
    mt->x = anchor->n_inputs ? anchor->inputs[0] : NULL;
    if (!extend(fz, mt, 1))
        return false;
    /* the rewrites carry output 0 of each node over: a node whose other outputs are read cannot go
     * (BatchNormalization's and Dropout's have constraints of their own, which say why) */
    for (int i = 0; i < mt->n; i++) {
        const fp_node *n = mt->nodes[i];
        for (uint32_t k = 1; k < n->n_outputs; k++) {
            const fp_value *o = n->outputs[k];
            if (o && (o->n_uses || o->is_output) && n->op != FP_OP_BATCH_NORM && !(n->op == FP_OP_DROPOUT && k == 1))
                return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- rewrites */

static void mark_dirty(fuser *fz, const fp_match *mt)
{
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        set_dirty(fz, n);
        /* consumers of the outputs get rewired inputs: keep them out of this sweep too */
        for (uint32_t k = 0; k < n->n_outputs; k++)
            for (uint32_t u = 0; n->outputs[k] && u < n->outputs[k]->n_uses; u++)
                set_dirty(fz, n->outputs[k]->uses[u].node);
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] && n->inputs[k]->producer)
                set_dirty(fz, n->inputs[k]->producer);
    }
}

static void set_output(fp_node *n, uint32_t port, fp_value *v)
{
    n->outputs[port] = v;
    v->producer = n;
    v->producer_port = port;
}

/* The last node folds into the anchor (its parameters become the anchor's weights/bias). */
static void rewrite_fold(fuser *fz, const fp_match *mt)
{
    fp_node *a = mt->nodes[0], *last = mt->nodes[mt->n - 1];
    fp_value *old = a->outputs[0], *out = last->outputs[0];
    /* a BN or a bias Add leaves a per-channel bias behind */
    bool adds_bias = last->op == FP_OP_BATCH_NORM || last->op == FP_OP_ADD;
    if (adds_bias && (a->n_inputs < 3 || !a->inputs[2])) {
        fp_value *bias = NULL;
        if (last->op == FP_OP_BATCH_NORM && last->n_inputs > 2)
            bias = last->inputs[2];
        for (uint32_t i = 0; !bias && i < last->n_inputs; i++)
            if (last->inputs[i] && last->inputs[i] != old)
                bias = last->inputs[i];
        fp_value **in = fp_arena_calloc(fz->m->arena, 3, sizeof(fp_value *));
        memcpy(in, a->inputs, sizeof(fp_value *) * MIN(a->n_inputs, 3));
        in[2] = bias;
        a->inputs = in;
        a->n_inputs = 3;
    }
    set_output(a, 0, out);
    old->producer = NULL;
    last->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 1; k < last->n_outputs; k++)
        if (last->outputs[k])
            last->outputs[k]->producer = NULL;
}

static const char *fused_domain(const fp_rule *r)
{
    if (g_str_has_prefix(r->id, "ge_") || r->fused_kind == FP_OP_GEMM || r->fused_kind == FP_OP_LAYER_NORM)
        return "";
    return "com.microsoft";
}

/* All nodes become the anchor, retyped as the fused op, reading the match's external inputs and
 * producing its external outputs. */
static void rewrite_fuse(fuser *fz, const fp_match *mt)
{
    fp_model *m = fz->m;
    fp_node *a = mt->nodes[0];
    GPtrArray *ins = g_ptr_array_new(), *outs = g_ptr_array_new();
    uint64_t flops = 0;
    for (int i = 0; i < mt->n; i++) {
        fp_node *n = mt->nodes[i];
        flops += n->metrics.flops;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            fp_value *v = n->inputs[k];
            if (i == 0 ? true : (v && !(v->producer && in_match(mt, v->producer)) && !g_ptr_array_find(ins, v, NULL)))
                g_ptr_array_add(ins, v);
        }
    }
    for (int i = 0; i < mt->n; i++) { /* outputs only now: producers of internal values are cleared */
        fp_node *n = mt->nodes[i];
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            fp_value *v = n->outputs[k];
            if (!v)
                continue;
            bool escapes = v->is_output || i == mt->n - 1;
            for (uint32_t u = 0; u < v->n_uses && !escapes; u++)
                escapes = !in_match(mt, v->uses[u].node);
            if (escapes)
                g_ptr_array_add(outs, v);
            else
                v->producer = NULL; /* internal: never materialized */
        }
    }
    a->n_inputs = ins->len;
    a->inputs = fp_arena_memdup(m->arena, ins->pdata, sizeof(fp_value *) * MAX(ins->len, 1));
    a->n_outputs = outs->len;
    a->outputs = fp_arena_calloc(m->arena, MAX(outs->len, 1), sizeof(fp_value *));
    for (guint k = 0; k < outs->len; k++)
        set_output(a, k, outs->pdata[k]);
    g_ptr_array_free(ins, TRUE);
    g_ptr_array_free(outs, TRUE);
    const fp_rule *r = mt->rule;
    a->op = r->fused_kind;
    a->op_type = fp_intern(m, r->fused_op, -1);
    a->domain = fp_intern(m, fused_domain(r), -1);
    if (r->act_node >= 0 && r->act_node < mt->n) { /* FusedConv/FusedGemm carry the activation's name */
        fp_attr *attrs = fp_arena_calloc(m->arena, a->n_attrs + 1, sizeof(fp_attr));
        memcpy(attrs, a->attrs, sizeof(fp_attr) * a->n_attrs);
        fp_attr *act = &attrs[a->n_attrs];
        act->name = fp_intern(m, "activation", -1);
        act->type = FP_ATTR_STRING;
        act->u.s = mt->nodes[r->act_node]->op_type;
        act->n = (uint32_t)strlen(act->u.s);
        a->attrs = attrs;
        a->n_attrs++;
    }
    a->flags |= FP_NODE_FUSED;
    a->metrics.flops = flops;
    uint32_t gid = ++fz->groups;
    for (int i = 0; i < mt->n; i++) {
        mt->nodes[i]->group = gid;
        if (i > 0)
            mt->nodes[i]->flags |= FP_NODE_REMOVED;
    }
}

/* The anchor disappears: its consumers read its input instead. */
static void rewrite_eliminate(const fp_match *mt)
{
    fp_node *n = mt->nodes[0];
    fp_value *in = n->inputs[0], *out = n->outputs[0];
    for (uint32_t u = 0; out && u < out->n_uses; u++) {
        fp_node *c = out->uses[u].node;
        for (uint32_t k = 0; k < c->n_inputs; k++)
            if (c->inputs[k] == out)
                c->inputs[k] = in;
        for (uint32_t k = 0; k < c->n_implicit; k++)
            if (c->implicit[k] == out)
                c->implicit[k] = in;
    }
    n->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k])
            n->outputs[k]->producer = NULL;
}

/* ---------------------------------------------------------------- driver */

/* One sweep of rule r over graph g; returns whether anything was rewritten. ops[i] is the kind
 * order[i] had when the order was made: only an anchor rewritten in this sweep (then dirty, never
 * matched) has changed kind since, so the kinds the anchor cannot have are skipped without
 * reading their nodes (a rule anchors on a few kinds; the nodes of a big graph are not in cache). */
static bool sweep_rule(fuser *fz, fp_graph *g, size_t ri, const fp_node *const *order, const fp_op *ops, uint32_t n)
{
    const fp_rule *r = &fp_rules[ri];
    bool changed = false;
    bool kinds[FP_OP_COUNT];
    for (int op = 0; op < FP_OP_COUNT; op++)
        kinds[op] = kind_ok(&r->pattern[0], (fp_op)op);
    g_autoptr(GPtrArray) reasons = g_ptr_array_new();
    for (uint32_t i = 0; i < n; i++) {
        if (!kinds[ops[i]])
            continue;
        fp_node *anchor = (fp_node *)order[i];
        fp_match mt;
        if (!match_at(fz, r, anchor, &mt))
            continue;
        g_ptr_array_set_size(reasons, 0);
        bool gated = false;
        for (int k = 0; k < r->n_constraints; k++) {
            const fp_constraint *c = &r->constraints[k];
            guint before = reasons->len;
            bool ok = fp_constraint_check(c, &mt, reasons);
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
        mark_dirty(fz, &mt);
        switch (r->rewrite) {
        case FP_RW_FOLD: rewrite_fold(fz, &mt); break;
        case FP_RW_FUSE: rewrite_fuse(fz, &mt); break;
        case FP_RW_ELIMINATE: rewrite_eliminate(&mt); break;
        }
        changed = true;
    }
    (void)g;
    return changed;
}

bool fp_pass_fuse(fp_model *m, const fp_target *t, fp_fusion_list *out, fp_diag *diag, GError **error)
{
    fuser fz = {.m = m, .t = t, .out = out, .tmp = fp_arena_new()};
    fz.seen = g_new0(GHashTable *, fp_n_rules + 1);
    fz.rule_key = g_new(size_t, fp_n_rules + 1);
    for (size_t r = 0; r < fp_n_rules; r++)
        for (fz.rule_key[r] = 0; strcmp(fp_rules[fz.rule_key[r]].id, fp_rules[r].id) != 0; fz.rule_key[r]++)
            ;
    size_t total = 0; /* fusion rewrites nodes in place: the counts, and so the indexes, stay */
    fp_model_number(m, &total, NULL);
    fz.dirty = g_new0(uint32_t, total + 1);
    fz.pass = 1;
    g_free(out->target);
    out->target = g_strdup(t->name);
    bool ok = true;
    for (int sweep = 0; sweep < MAX_SWEEPS && ok; sweep++) {
        bool changed = false;
        for (guint gi = 0; gi < m->graphs->len && ok; gi++) {
            fp_graph *g = m->graphs->pdata[gi];
            fp_node *const *order = NULL;  /* g's, made again after a rule rewrote the graph */
            g_autofree fp_op *ops = NULL;      /* the kind of each node of order */
            uint32_t n = 0;
            for (char **id = t->rules; *id && ok; id++) {
                if (!order && !(order = fp_graph_order(g, &n, error))) {
                    ok = false;
                    break;
                }
                if (!ops) {
                    ops = g_new(fp_op, n + 1);
                    for (uint32_t i = 0; i < n; i++)
                        ops[i] = order[i]->op;
                }
                bool rewrote = false;
                for (size_t r = 0; r < fp_n_rules; r++)
                    if (strcmp(fp_rules[r].id, *id) == 0)
                        rewrote |= sweep_rule(&fz, g, r, (const fp_node *const *)order, ops, n);
                /* the next rule sees this one's rewrites; linking the whole model after every rule
                 * on every graph would be quadratic in the number of subgraphs */
                if (rewrote) {
                    fp_model_link(m);
                    order = NULL;
                    g_clear_pointer(&ops, g_free);
                }
                changed |= rewrote;
                fz.pass++; /* forgets every dirty mark */
            }
        }
        if (!changed)
            break;
    }
    for (size_t r = 0; r < fp_n_rules; r++)
        if (fz.seen[r])
            g_hash_table_destroy(fz.seen[r]);
    g_free(fz.seen);
    g_free(fz.rule_key);
    g_free(fz.dirty);
    fp_arena_free(fz.tmp);
    if (ok) {
        guint applied = 0;
        for (guint i = 0; i < out->fusions->len; i++)
            applied += ((fp_fusion *)out->fusions->pdata[i])->applied;
        fp_diag_add(diag, FP_DIAG_INFO, "fuse", "fuse-summary", NULL, "%s: %u candidates, %u applied", t->name,
                    out->fusions->len, applied);
    }
    return ok;
}
