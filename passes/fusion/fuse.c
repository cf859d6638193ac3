/* fuse.c - the fusion pass: matches the target's rules (fuse_rules.c) on every graph, checks
 * their constraints (fuse_constraints.c), records every candidate, and rewrites the graph for
 * the ones that pass, sweep after sweep until nothing changes. */
#include <string.h>

#include "passes/fusion/fuse.h"

#define MAX_SWEEPS 16

typedef struct {
    fp_model *m;
    const fp_target *t;
    fp_fusion_list *out;
    /* the records of this pass by anchor: per node of the model, the first record anchored there,
     * then per record (from rec_base on) the next one and its rule key; a record index is + 1 in
     * out->fusions, 0 for none. The anchors come in node order: a list, not a hash of them. */
    uint32_t *first_rec;
    GArray *rec_next, *rec_rule; /* uint32_t */
    guint rec_base;    /* out->fusions->len before this pass */
    size_t *rule_key;  /* index in fp_rules -> the first index with its id (variants share records) */
    const char **op_name, **domain; /* per rule index: its fused op and domain, interned in the model */
    const char *activation; /* "activation", interned */
    GPtrArray *ins, *outs; /* rewrite_fuse's scratch */
    fp_list_memo memo[FP_LIST_MEMO]; /* fp_match.memo */
    uint32_t *dirty;   /* per node of the model: the rule pass that rewrote it (not matched again in
                          that pass), 0 = never */
    uint32_t pass;     /* the current rule pass, from 1 */
    fp_arena *tmp;     /* a candidate's reasons while its constraints run (fp_match.tmp) */
    uint32_t groups;
    uint8_t *kind;     /* per node of the model: its op when it may be matched (op_ok's tests of the
                          node itself: live, not folded, has input 0 and output 0), else KIND_SKIP, or
                          KIND_REMOVED once a rewrite removed it; kept up to date by the rewrites, so
                          the sweeps and extend read a byte instead of the node's fields */
    uint32_t n_kind[256]; /* nodes of the model per kind (of `kind`), kept up to date with it */
    bool (*kind_tab)[FP_PAT_MAX][256]; /* per rule index: kind_row of each pattern node */
    bool *kind_tab_set;
    int16_t *only;     /* per rule index: the one kind its anchor can have, or -1 (made with kind_tab) */
    int8_t (*which)[FP_RULE_MAX_CONSTRAINTS]; /* per rule index: fp_constraint_find of each of its
                                                 constraints (made with its kind_tab) */
    /* the use lists are updated where a rewrite changes them (uses_begin/uses_end), not relinked */
    GPtrArray *chg;    /* nodes whose inputs a rewrite changes (or removes) */
    GArray *before, *after; /* keyed_use: their uses before and after it, by value and key */
    size_t link_work, link_budget; /* use entries rewritten in this rule pass, and how many before a
                          whole fp_model_link at its end is the cheaper way (relink) */
    bool relink;       /* gave up the local updates in this rule pass: fp_model_link at its end */
    GArray *squeezes;  /* split_squeeze: Split outputs that need a Squeeze after them, made at the end
                          of the pass (a node added mid-pass would shift the per-node arrays) */
    bool order_broken; /* a rewrite in this rule pass made the graph's node array no longer topological */
} fuser;

enum { KIND_SKIP = 254, KIND_REMOVED = 255 };

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
static uint32_t *rec_slot(fuser *fz, size_t node, uint32_t rule)
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
static fp_fusion *record(fuser *fz, size_t ri, const fp_match *mt, const GPtrArray *reasons)
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
    *f = (fp_fusion){.rule = mt->rule->id, .anchor = mt->nodes[0]->name, .applied = reasons->len == 0};
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

/* ---------------------------------------------------------------- matching */

G_STATIC_ASSERT((int)FP_OP_COUNT <= (int)KIND_SKIP);

static bool is_dirty(const fuser *fz, const fp_node *n) { return fz->dirty[fp_node_index(n)] == fz->pass; }
static void set_dirty(fuser *fz, const fp_node *n) { fz->dirty[fp_node_index(n)] = fz->pass; }

/* Fills row[kind] (256 of them) with whether op_ok(p, n) may hold for a node of that kind: its test
 * of the kind alone (one of p's ops, or of p's flags except the casts and (de)quantizations);
 * KIND_SKIP and KIND_REMOVED false. */
static void kind_row(const fp_pat_node *p, bool *row)
{
    memset(row, 0, 256 * sizeof *row);
    for (int i = 0; i < 8 && p->ops[i] != FP_OP_COUNT; i++)
        row[p->ops[i]] = true;
    for (int op = 0; p->flags && op < FP_OP_COUNT; op++)
        if (fp_op_has((fp_op)op, p->flags) && op != FP_OP_CAST && op != FP_OP_CAST_LIKE &&
            op != FP_OP_QUANTIZE_LINEAR && op != FP_OP_DEQUANTIZE_LINEAR)
            row[op] = true;
}

/* What fz->kind holds for n: its op when the node itself lets a pattern node match it. */
static uint8_t kind_of(const fp_node *n)
{
    if (n->flags & FP_NODE_REMOVED)
        return KIND_REMOVED;
    if (n->flags & FP_NODE_FOLDED)
        return KIND_SKIP;
    /* every rewrite reads input 0 and output 0: a malformed node without them never matches */
    if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0])
        return KIND_SKIP;
    return (uint8_t)n->op;
}

/* Rule index ri's table of kind_row per pattern node (KIND_SKIP and KIND_REMOVED: false),
 * made on first use with its anchor's only kind (fz->only) and its predicates (fz->which). */
static bool (*kind_table(fuser *fz, size_t ri))[256]
{
    if (!fz->kind_tab_set[ri]) {
        const fp_rule *r = &fp_rules[ri];
        for (int k = 0; k < r->n_pattern; k++)
            kind_row(&r->pattern[k], fz->kind_tab[ri][k]);
        fz->only[ri] = -1;
        for (int op = 0; op < 256; op++)
            if (fz->kind_tab[ri][0][op])
                fz->only[ri] = fz->only[ri] == -1 ? (int16_t)op : -2;
        for (int k = 0; k < r->n_constraints; k++) {
            int w = fp_constraint_find(r->constraints[k].name);
            g_assert(w >= 0 && w <= INT8_MAX);
            fz->which[ri][k] = (int8_t)w;
        }
        fz->kind_tab_set[ri] = true;
    }
    return fz->kind_tab[ri];
}

/* Whether n may stand for pattern node k of the match's rule (its kind, its liveness, input 0 and
 * output 0), from fz->kind: the node's own fields past its first bytes are not read. */
static bool op_ok(const fuser *fz, const fp_match *mt, int k, const fp_node *n)
{
    return fz->kind_tab[mt->rule - fp_rules][k][fz->kind[fp_node_index(n)]];
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

/* Extends a match by pattern node k (and the following ones); backtracks over consumers. Node k
 * is a reader of pattern node `from`'s output 0, or with `from` FP_PAT_X of the anchor's data input
 * (another branch off x). */
static bool extend(fuser *fz, fp_match *mt, int k)
{
    const fp_rule *r = mt->rule;
    if (k == r->n_pattern) {
        int lk = r->n_pattern - 1;
        const fp_pat_node *last = &r->pattern[lk];
        /* a repeatable last node: follow the chain while it has one consumer of the right kind */
        for (int links = 1; last->repeat && links < last->repeat && mt->n < (int)G_N_ELEMENTS(mt->nodes); links++) {
            fp_value *v = mt->nodes[mt->n - 1]->outputs[0];
            if (!v || v->n_uses != 1 || v->is_output)
                break;
            fp_node *next = v->uses[0].node;
            if (v->uses[0].port != 0 || next->graph != v->graph || in_match(mt, next) || !op_ok(fz, mt, lk, next) ||
                is_dirty(fz, next))
                break;
            mt->nodes[mt->n++] = next;
        }
        return true;
    }
    const fp_pat_node *p = &r->pattern[k];
    fp_node *src = mt->nodes[p->from == FP_PAT_X ? 0 : p->from];
    fp_value *v = p->from == FP_PAT_X ? mt->x : src->n_outputs ? src->outputs[0] : NULL;
    if (!v)
        return false;
    for (uint32_t u = 0; u < v->n_uses; u++) {
        fp_node *cand = v->uses[u].node;
        uint32_t port = v->uses[u].port;
        if (port == UINT32_MAX || cand->graph != src->graph || in_match(mt, cand) || !op_ok(fz, mt, k, cand) ||
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

/* FP_RW_SPLIT: adds to mt the other Slice and Gather nodes reading the anchor's input 0 at their
 * input 0, in use order; false when the anchor is not the first of them (the group is matched at
 * the first) or when the group does not fit in mt. */
static bool siblings(fuser *fz, fp_match *mt)
{
    const fp_value *x = mt->x;
    fp_node *a = mt->nodes[0];
    bool first = true;
    for (uint32_t u = 0; x && u < x->n_uses; u++) {
        fp_node *n = x->uses[u].node;
        if (x->uses[u].port != 0 || n->graph != a->graph || (n->op != FP_OP_SLICE && n->op != FP_OP_GATHER) ||
            (n->flags & FP_NODE_REMOVED))
            continue;
        if (n == a)
            continue;
        if (first && mt->n == 1 && fp_node_index(n) < fp_node_index(a) && !is_dirty(fz, n))
            return false; /* an earlier reader anchors the group */
        first = false;
        if (is_dirty(fz, n) || mt->n == (int)G_N_ELEMENTS(mt->nodes))
            return false;
        mt->nodes[mt->n++] = n;
    }
    return true;
}

/* Matches rule r at `anchor`, whose kind the caller found right for pattern node 0 (fz->kind);
 * idx is its model-wide index. */
static bool match_at(fuser *fz, const fp_rule *r, fp_node *anchor, size_t idx, fp_match *mt)
{
    if (fz->dirty[idx] == fz->pass)
        return false;
    mt->rule = r; /* nodes past mt->n are never read */
    mt->target = fz->t;
    mt->tmp = fz->tmp;
    mt->memo = fz->memo;
    mt->nodes[0] = anchor;
    mt->n = 1;
    mt->x = anchor->n_inputs ? anchor->inputs[0] : NULL;
    if (!extend(fz, mt, 1) || (r->rewrite == FP_RW_SPLIT && !siblings(fz, mt)))
        return false;
    /* the rewrites carry output 0 of each node over: a node whose other outputs are read cannot go
     * (BatchNormalization's and Dropout's have constraints of their own, which say why; a Pad's
     * reader stays as it is) */
    for (int i = 0; i < mt->n - (r->rewrite == FP_RW_PAD); i++) {
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
    fp_node_set_output(a, 0, out);
    old->producer = NULL;
    last->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 1; k < last->n_outputs; k++)
        if (last->outputs[k])
            last->outputs[k]->producer = NULL;
}

static const char *fused_domain(const fp_rule *r)
{
    if (g_str_has_prefix(r->id, "ge_") || g_str_has_prefix(r->id, "trt_") || r->fused_kind == FP_OP_GEMM ||
        r->fused_kind == FP_OP_LAYER_NORM || r->fused_kind == FP_OP_DIV)
        return "";
    return "com.microsoft";
}

/* All nodes become the anchor, retyped as the fused op, reading the match's external inputs and
 * producing its external outputs. */
static void rewrite_fuse(fuser *fz, const fp_match *mt)
{
    fp_model *m = fz->m;
    fp_node *a = mt->nodes[0];
    GPtrArray *ins = fz->ins, *outs = fz->outs;
    g_ptr_array_set_size(ins, 0);
    g_ptr_array_set_size(outs, 0);
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
        fp_node_set_output(a, k, outs->pdata[k]);
    const fp_rule *r = mt->rule;
    size_t ri = (size_t)(r - fp_rules);
    if (!fz->op_name[ri]) {
        fz->op_name[ri] = fp_intern(m, r->fused_op, -1);
        fz->domain[ri] = fp_intern(m, fused_domain(r), -1);
    }
    a->op = r->fused_kind;
    a->op_type = fz->op_name[ri];
    a->domain = fz->domain[ri];
    if (r->act_node >= 0 && r->act_node < mt->n) { /* FusedConv/FusedGemm carry the activation's name */
        fp_attr *attrs = fp_arena_calloc(m->arena, a->n_attrs + 1, sizeof(fp_attr));
        memcpy(attrs, a->attrs, sizeof(fp_attr) * a->n_attrs);
        fp_attr *act = &attrs[a->n_attrs];
        if (!fz->activation)
            fz->activation = fp_intern(m, "activation", -1);
        act->name = fz->activation;
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

/* n's attribute a->name set to *a (added when n has none of its name and type), in the model's
 * arena. */
static void set_attr(fuser *fz, fp_node *n, fp_attr a)
{
    a.name = fp_intern(fz->m, a.name, -1);
    for (uint32_t k = 0; k < n->n_attrs; k++)
        if (strcmp(n->attrs[k].name, a.name) == 0 && n->attrs[k].type == a.type) {
            n->attrs[k] = a;
            return;
        }
    fp_attr *attrs = fp_arena_calloc(fz->m->arena, n->n_attrs + 1, sizeof(fp_attr));
    memcpy(attrs, n->attrs, sizeof(fp_attr) * n->n_attrs);
    attrs[n->n_attrs] = a;
    n->attrs = attrs;
    n->n_attrs++;
}

static void set_int_attr(fuser *fz, fp_node *n, const char *name, int64_t v)
{
    set_attr(fz, n, (fp_attr){.name = name, .type = FP_ATTR_INT, .u.i = v});
}

static void set_float_attr(fuser *fz, fp_node *n, const char *name, double v)
{
    set_attr(fz, n, (fp_attr){.name = name, .type = FP_ATTR_FLOAT, .u.f = v});
}

/* Node 1 absorbs the anchor (FP_RW_ABSORB) and becomes the rule's fused op: a Transpose (it reads
 * the Transpose's input at the port that read its output, transA/transB and transBatchA/B flipped
 * as fp_fuse_transpose_flags says), a scalar Mul/Div (its factor into alpha), or Div(1, x1) under a
 * Mul(x2, .) (the Mul becomes Div(x2, x1)); the anchor goes when nothing else reads it. */
static void rewrite_absorb(fuser *fz, const fp_match *mt)
{
    fp_node *t = mt->nodes[0], *mm = mt->nodes[1];
    fp_value *out = t->outputs[0];
    uint32_t port = mm->inputs[0] == out ? 0 : 1;
    if (t->op == FP_OP_TRANSPOSE) {
        bool trans = false, batch = false;
        const char *why;
        fp_fuse_transpose_flags(t, &trans, &batch, &why);
        mm->inputs[port] = t->inputs[0];
        const char *tr = port ? "transB" : "transA", *tb = port ? "transBatchB" : "transBatchA";
        set_int_attr(fz, mm, tr, fp_node_attr_int(mm, tr, 0) ^ trans);
        set_int_attr(fz, mm, tb, fp_node_attr_int(mm, tb, 0) ^ batch);
    } else if (t->op == FP_OP_DIV && mm->op == FP_OP_MUL && mt->rule->fused_kind == FP_OP_DIV) {
        mm->inputs[0] = mm->inputs[port ? 0 : 1]; /* 1 / x1 * x2: the Mul becomes x2 / x1 */
        mm->inputs[1] = t->inputs[1];
    } else { /* a scalar Mul or Div: its factor into alpha */
        double f = 1;
        int k = fp_fuse_scale_operand(t, &f);
        g_assert(k >= 0);
        mm->inputs[port] = t->inputs[1 - k];
        set_float_attr(fz, mm, "alpha", fp_node_attr_float(mm, "alpha", 1.0) * f);
    }
    const fp_rule *r = mt->rule;
    size_t ri = (size_t)(r - fp_rules);
    if (!fz->op_name[ri]) {
        fz->op_name[ri] = fp_intern(fz->m, r->fused_op, -1);
        fz->domain[ri] = fp_intern(fz->m, fused_domain(r), -1);
    }
    mm->op = r->fused_kind;
    mm->op_type = fz->op_name[ri];
    mm->domain = fz->domain[ri];
    mm->flags |= FP_NODE_FUSED;
    mm->group = ++fz->groups;
    if (out->n_uses > 1 || out->is_output) /* read by others still: it stays (the use lists are updated after) */
        return;
    t->flags |= FP_NODE_REMOVED;
    out->producer = NULL;
}

/* A Split output that a Squeeze of `axis` follows (the Split's anchor was a Gather of a scalar). */
typedef struct {
    fp_node *split;
    uint32_t port;
    int64_t axis;
} split_squeeze;

/* Node g becomes the Squeeze of `axis` that writes `out` (a view, as ONNX Runtime's
 * GatherSliceToSplitFusion adds after the piece of a Gather of a scalar index) from a new value: the
 * piece of x the Split yields, the axis kept with size 1. The piece; g's output stays the caller's. */
static fp_value *gather_to_squeeze(fuser *fz, fp_node *g, int64_t axis, const fp_value *x, const fp_value *out)
{
    fp_model *m = fz->m;
    g_autofree char *name = g_strdup_printf("%s/split_piece", g->name);
    fp_value *piece = fp_graph_value_like(g->graph, name, out, FP_DT_UNDEFINED);
    fp_dim *dims = fp_arena_memdup(m->arena, x->shape.dims, sizeof(fp_dim) * (size_t)x->shape.rank);
    dims[axis] = (fp_dim){1, NULL};
    piece->shape = (fp_shape){x->shape.rank, fp_intern_dims(m, dims, x->shape.rank)};
    fp_value **ins = fp_arena_calloc(m->arena, 2, sizeof(fp_value *));
    ins[0] = piece;
    g->n_attrs = 0;
    if (g->opset >= 13) {
        g_autofree char *axes_name = g_strdup_printf("%s/squeeze_axes", g->name);
        ins[1] = fp_graph_int64_initializer(g->graph, axes_name, &axis, 1);
    } else {
        g->attrs = fp_arena_calloc(m->arena, 1, sizeof(fp_attr));
        g->attrs[0] = (fp_attr){.name = fp_intern(m, "axes", -1), .type = FP_ATTR_INTS,
                                .u.ints = fp_arena_memdup(m->arena, &axis, sizeof axis), .n = 1};
        g->n_attrs = 1;
    }
    g->inputs = ins;
    g->n_inputs = g->opset >= 13 ? 2 : 1;
    g->op = FP_OP_SQUEEZE;
    g->op_type = fp_intern(m, "Squeeze", -1);
    return piece;
}

/* The Slices and Gathers of one tensor become one Split (FP_RW_SPLIT; split_intervals checked that
 * they cover its axis once): the anchor, retyped, reads the tensor and the sizes and yields the
 * pieces in the order of their starts; the other members go, but a Gather of a scalar index, which
 * becomes the Squeeze after its piece. */
static void rewrite_split(fuser *fz, const fp_match *mt)
{
    fp_node *a = mt->nodes[0];
    int64_t axis, start[FP_PAT_MAX + 8], end[FP_PAT_MAX + 8], sizes[FP_PAT_MAX + 8];
    fp_node *by[FP_PAT_MAX + 8];
    bool squeeze[FP_PAT_MAX + 8];
    int n = mt->n;
    for (int i = 0; i < n; i++) {
        fp_fuse_split_member(mt->nodes[i], &axis, &start[i], &end[i], &squeeze[i]);
        by[i] = mt->nodes[i];
    }
    for (int i = 1; i < n; i++) /* by start: a few nodes */
        for (int j = i; j > 0 && start[j - 1] > start[j]; j--) {
            int64_t s0 = start[j], e0 = end[j];
            fp_node *b0 = by[j];
            bool q0 = squeeze[j];
            start[j] = start[j - 1], end[j] = end[j - 1], by[j] = by[j - 1], squeeze[j] = squeeze[j - 1];
            start[j - 1] = s0, end[j - 1] = e0, by[j - 1] = b0, squeeze[j - 1] = q0;
        }
    fp_value **outs = fp_arena_calloc(fz->m->arena, (size_t)n, sizeof(fp_value *));
    for (int i = 0; i < n; i++) {
        sizes[i] = end[i] - start[i];
        outs[i] = squeeze[i] && by[i] != a ? gather_to_squeeze(fz, by[i], axis, mt->x, by[i]->outputs[0])
                                            : by[i]->outputs[0];
        if (squeeze[i] && by[i] == a) /* the anchor is the Split: its Squeeze comes at the end of the pass */
            g_array_append_val(fz->squeezes, ((split_squeeze){a, (uint32_t)i, axis}));
    }
    fp_value **ins = fp_arena_calloc(fz->m->arena, 2, sizeof(fp_value *));
    ins[0] = mt->x;
    g_autofree char *sizes_name = g_strdup_printf("%s/split_sizes", a->name);
    ins[1] = fp_graph_int64_initializer(a->graph, sizes_name, sizes, (uint32_t)n);
    a->inputs = ins;
    a->n_inputs = 2;
    a->outputs = outs;
    a->n_outputs = (uint32_t)n;
    for (int i = 0; i < n; i++)
        fp_node_set_output(a, (uint32_t)i, outs[i]);
    a->attrs = fp_arena_calloc(fz->m->arena, 1, sizeof(fp_attr));
    a->attrs[0] = (fp_attr){.name = fp_intern(fz->m, "axis", -1), .type = FP_ATTR_INT, .u.i = axis};
    a->n_attrs = 1;
    a->op = FP_OP_SPLIT;
    a->op_type = fp_intern(fz->m, "Split", -1);
    a->domain = fp_intern(fz->m, "", -1);
    for (int i = 1; i < n; i++)
        if (mt->nodes[i]->op != FP_OP_SQUEEZE)
            mt->nodes[i]->flags |= FP_NODE_REMOVED;
}

/* The Squeezes split_squeeze asked for: output `port` of the Split becomes a new value (the axis
 * kept, of size 1), which a new Squeeze reads to write the old one. Links m again when it made any. */
static void add_squeezes(fuser *fz)
{
    fp_model *m = fz->m;
    for (guint i = 0; i < fz->squeezes->len; i++) {
        const split_squeeze *q = &g_array_index(fz->squeezes, split_squeeze, i);
        fp_node *sp = q->split;
        fp_value *out = sp->outputs[q->port];
        g_autofree char *name = g_strdup_printf("%s/squeeze", out->name);
        fp_node *sq = fp_node_new(sp->graph, FP_OP_SQUEEZE, "Squeeze", "", name, 1, 1);
        sq->opset = sp->opset;
        fp_value *piece = gather_to_squeeze(fz, sq, q->axis, sp->inputs[0], out);
        fp_node_set_output(sp, q->port, piece);
        fp_node_set_output(sq, 0, out);
    }
    if (fz->squeezes->len)
        fp_model_link(m);
}

static void rewrite_eliminate(const fp_match *mt);

/* The anchor Pad goes (FP_RW_PAD; pad_foldable and explicit_pads checked it): its reader reads its
 * input, the Conv or pool last in the match takes its spatial padding in its pads, and a Cast
 * between them now has the Pad input's shape. */
static void rewrite_pad(fuser *fz, const fp_match *mt)
{
    fp_node *pad = mt->nodes[0], *last = mt->nodes[mt->n - 1];
    int64_t pads[2 * FP_MAX_RANK], now[2 * FP_MAX_RANK];
    int np;
    fp_fuse_pad_pads(pad, pads, &np);
    const fp_attr *a = fp_node_attr(last, "pads");
    int half = np / 2, spatial = (int)a->n / 2;
    for (int i = 0; i < spatial; i++) {
        now[i] = a->u.ints[i] + (2 + i < half ? pads[2 + i] : 0);
        now[spatial + i] = a->u.ints[spatial + i] + (2 + i < half ? pads[half + 2 + i] : 0);
    }
    set_attr(fz, last, (fp_attr){.name = fp_intern(fz->m, "pads", -1), .type = FP_ATTR_INTS,
                                 .u.ints = fp_arena_memdup(fz->m->arena, now, sizeof(int64_t) * a->n), .n = a->n});
    if (mt->n == 3)
        mt->nodes[1]->outputs[0]->shape = pad->inputs[0]->shape;
    rewrite_eliminate(mt);
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
        for (uint32_t k = 0; k < fp_node_n_implicit(c); k++)
            if (c->ext->implicit[k] == out)
                c->ext->implicit[k] = in;
    }
    n->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k])
            n->outputs[k]->producer = NULL;
}

/* ---------------------------------------------------------------- use lists */

/* fp_model_link lists a value's uses by model-wide node index (graphs in model order, nodes in
 * array order), then port, an implicit use (UINT32_MAX) after the inputs. A rewrite changes the
 * uses of the nodes it rewires or removes (fz->chg) only: their uses before it are taken out of the
 * lists and their uses after it put in, in that order, so that every list is the one a relink would
 * make, and a list the rewrite leaves as it was (a Conv's shared weight) is not touched. */
typedef struct {
    fp_value *v;
    uint64_t key; /* model-wide node index << 32 | port */
    fp_use use;
} keyed_use;

static uint64_t use_key(const fp_node *n, uint32_t port) { return ((uint64_t)fp_node_index(n) << 32) | port; }

static void add_unique(GPtrArray *a, gpointer p)
{
    for (guint i = 0; i < a->len; i++)
        if (a->pdata[i] == p)
            return;
    g_ptr_array_add(a, p);
}

/* Appends the uses by the nodes of fz->chg (the live ones) to `to`, sorted by value, then key. */
static void chg_uses(const fuser *fz, GArray *to)
{
    guint n = 0;
    for (guint i = 0; i < fz->chg->len; i++) {
        const fp_node *c = fz->chg->pdata[i];
        if (!(c->flags & FP_NODE_REMOVED))
            n += c->n_inputs + fp_node_n_implicit(c);
    }
    g_array_set_size(to, n);
    keyed_use *a = (keyed_use *)(void *)to->data;
    n = 0;
    for (guint i = 0; i < fz->chg->len; i++) {
        fp_node *c = fz->chg->pdata[i];
        if (c->flags & FP_NODE_REMOVED)
            continue;
        uint64_t key = (uint64_t)fp_node_index(c) << 32;
        for (uint32_t k = 0; k < c->n_inputs + fp_node_n_implicit(c); k++) {
            bool imp = k >= c->n_inputs;
            fp_value *v = imp ? c->ext->implicit[k - c->n_inputs] : c->inputs[k];
            uint32_t port = imp ? UINT32_MAX : k;
            if (v)
                a[n++] = (keyed_use){v, key | port, {c, port}};
        }
    }
    g_array_set_size(to, n);
    for (guint i = 1; i < n; i++) { /* insertion sort: a few uses */
        keyed_use x = a[i];
        guint j = i;
        for (; j > 0 && (a[j - 1].v > x.v || (a[j - 1].v == x.v && a[j - 1].key > x.key)); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

#define LOCAL_MAX 32 /* a rewrite that rewires more nodes than this leaves the uses to fp_model_link */

/* Before rewriting match mt: notes the nodes the rewrite changes (fz->chg) and their uses
 * (fz->before). Returns false, and sets fz->relink, when the lists are to be made again by
 * fp_model_link at the end of the rule pass instead. */
static bool uses_begin(fuser *fz, const fp_match *mt)
{
    if (mt->rule->rewrite == FP_RW_SPLIT) /* adds a value: the model is linked and numbered again */
        fz->relink = true;
    if (fz->relink)
        return false;
    g_ptr_array_set_size(fz->chg, 0);
    for (int i = 0; i < mt->n; i++) /* the matched nodes are distinct */
        g_ptr_array_add(fz->chg, mt->nodes[i]);
    if (mt->rule->rewrite == FP_RW_ELIMINATE || mt->rule->rewrite == FP_RW_PAD) {
        /* the consumers of the anchor's output read its input */
        const fp_value *out = mt->nodes[0]->outputs[0];
        if (out->n_uses > LOCAL_MAX) {
            fz->relink = true;
            return false;
        }
        for (uint32_t u = 0; u < out->n_uses; u++)
            add_unique(fz->chg, out->uses[u].node);
    }
    chg_uses(fz, fz->before);
    return true;
}

/* First index in [lo, hi) of v's uses whose key is not below `key`. */
static uint32_t lower_bound(const fp_value *v, uint32_t lo, uint32_t hi, uint64_t key)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (use_key(v->uses[mid].node, v->uses[mid].port) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes uses b[0..nb) out of v's list and puts a[0..na) in (each sorted by key). The list is
 * rewritten in place when it does not grow, else copied into the model's arena (the next
 * fp_model_link puts every list back into its graph's pool). False when a use to take out is not
 * where the order says (a list not made by fp_model_link): the caller relinks. */
static bool relist(fuser *fz, fp_value *v, const keyed_use *b, guint nb, const keyed_use *a, guint na)
{
    uint32_t len = v->n_uses, w = 0, from = 0;
    for (guint i = 0; i < nb; i++) { /* out, keeping the rest in order */
        uint32_t pos = lower_bound(v, from, len, b[i].key);
        if (pos >= len || v->uses[pos].node != b[i].use.node || v->uses[pos].port != b[i].use.port)
            return false;
        if (pos > from)
            memmove(v->uses + w, v->uses + from, sizeof(fp_use) * (pos - from));
        w += pos - from;
        fz->link_work += pos - from + 1;
        from = pos + 1;
    }
    if (len > from)
        memmove(v->uses + w, v->uses + from, sizeof(fp_use) * (len - from));
    uint32_t kept = w + (len - from), n = kept + na;
    if (n > len) {
        fp_use *grown = fp_arena_alloc_raw(fz->m->arena, sizeof(fp_use) * n);
        if (kept) /* an empty list may have no storage */
            memcpy(grown, v->uses, sizeof(fp_use) * kept);
        v->uses = grown;
        fz->link_work += kept;
    }
    uint32_t hi = kept;
    for (guint j = na; j-- > 0;) { /* in, from the last: each shifts the kept uses after it */
        uint32_t pos = lower_bound(v, 0, hi, a[j].key);
        if (hi > pos)
            memmove(v->uses + pos + j + 1, v->uses + pos, sizeof(fp_use) * (hi - pos));
        v->uses[pos + j] = a[j].use;
        fz->link_work += hi - pos + 1;
        hi = pos;
    }
    v->n_uses = n;
    return true;
}

/* After the rewrite: for each value the changed nodes read before or after it, whose uses by them
 * differ, the list is updated. Gives up (fz->relink) when a list is not as expected, or when the
 * local work of this rule pass outgrows what a whole relink costs. */
static void uses_end(fuser *fz)
{
    chg_uses(fz, fz->after);
    const keyed_use *b = (const keyed_use *)(const void *)fz->before->data;
    const keyed_use *a = (const keyed_use *)(const void *)fz->after->data;
    guint nb = fz->before->len, na = fz->after->len, i = 0, j = 0;
    while (i < nb || j < na) {
        fp_value *v = i < nb && (j >= na || b[i].v <= a[j].v) ? b[i].v : a[j].v;
        guint i1 = i, j1 = j;
        while (i1 < nb && b[i1].v == v)
            i1++;
        while (j1 < na && a[j1].v == v)
            j1++;
        bool same = i1 - i == j1 - j;
        for (guint k = 0; same && k < i1 - i; k++)
            same = b[i + k].key == a[j + k].key;
        if (!same && !relist(fz, v, b + i, i1 - i, a + j, j1 - j)) {
            fz->relink = true;
            return;
        }
        i = i1;
        j = j1;
    }
    if (fz->link_work > fz->link_budget)
        fz->relink = true;
}

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

/* ---------------------------------------------------------------- driver */

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
static bool order_make(fuser *fz, sweep_order *o, GError **error)
{
    fp_graph *g = o->g;
    if (!(o->order = fp_graph_order(g, &o->n, error)))
        return false;
    const uint8_t *kind = fz->kind + g->node_base;
    uint32_t i = 0;
    o->array = true;
    for (guint j = 0; j < g->nodes->len && o->array; j++)
        if (kind[j] != KIND_REMOVED)
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
static void order_settle(fuser *fz, sweep_order *o)
{
    fp_graph *g = o->g;
    if (o->topo_stale && g->topo) {
        const uint8_t *kind = fz->kind + g->node_base;
        uint32_t n = 0;
        for (guint j = 0; j < g->nodes->len; j++)
            if (kind[j] != KIND_REMOVED)
                g->topo[n++] = g->nodes->pdata[j];
        g_assert(n <= g->n_topo);
        g->n_topo = n;
    }
    o->topo_stale = false;
}

/* After the rewrite of match mt: the kinds of its nodes, and whether the node array is still in
 * order (the rewritten anchor may read a value made after it; the consumers an elimination rewires
 * read a value made before the node it removed). */
static void after_rewrite(fuser *fz, const fp_match *mt)
{
    for (int i = 0; i < mt->n; i++) {
        uint8_t *k = &fz->kind[fp_node_index(mt->nodes[i])];
        fz->n_kind[*k]--;
        *k = kind_of(mt->nodes[i]);
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
static uint32_t queue_next(anchor_queue *q, const sweep_order *o, const uint8_t *kind, const bool *anchor_ok,
                           int only, uint32_t i, uint32_t n, bool rewrote)
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

/* Whether rule index ri may match anywhere in the model: every node of its pattern has a kind that
 * some node has (a sweep that cannot match changes and records nothing). */
static bool may_match(fuser *fz, size_t ri)
{
    bool (*tab)[256] = kind_table(fz, ri);
    for (int k = 0; k < fp_rules[ri].n_pattern; k++) {
        bool any = false;
        for (int op = 0; op < FP_OP_COUNT && !any; op++)
            any = tab[k][op] && fz->n_kind[op];
        if (!any)
            return false;
    }
    return true;
}

/* One sweep of rule r over graph g in order o; returns whether anything was rewritten. Anchors
 * are visited in order, looked up ahead in an anchor_queue (and again after a rewrite, which
 * changes kinds, so rewrites still decide what comes next). */
static bool sweep_rule(fuser *fz, const sweep_order *o, size_t ri)
{
    if (!may_match(fz, ri))
        return false;
    const fp_rule *r = &fp_rules[ri];
    const fp_graph *g = o->g;
    bool changed = false;
    const bool *anchor_ok = kind_table(fz, ri)[0];
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
        if (!match_at(fz, r, anchor, idx, &mt))
            continue;
        g_ptr_array_set_size(reasons, 0);
        bool gated = false;
        for (int k = 0; k < r->n_constraints; k++) {
            const fp_constraint *c = &r->constraints[k];
            guint before = reasons->len;
            bool ok = fp_constraint_check_at(fz->which[ri][k], c, &mt, c->gate ? NULL : reasons);
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
        bool local = uses_begin(fz, &mt);
        switch (r->rewrite) {
        case FP_RW_FOLD: rewrite_fold(fz, &mt); break;
        case FP_RW_FUSE: rewrite_fuse(fz, &mt); break;
        case FP_RW_ELIMINATE: rewrite_eliminate(&mt); break;
        case FP_RW_ABSORB: rewrite_absorb(fz, &mt); break;
        case FP_RW_SPLIT: rewrite_split(fz, &mt); break;
        case FP_RW_PAD: rewrite_pad(fz, &mt); break;
        }
        if (local)
            uses_end(fz);
        after_rewrite(fz, &mt);
        changed = rewrote = true; /* after_rewrite changed kinds */
    }
    return changed;
}

/* The rules of target t, in its order, over graph g (one sweep of the pass). */
static bool fuse_graph(fuser *fz, fp_graph *g, bool *changed, GError **error)
{
    const fp_target *t = fz->t;
    sweep_order o = {.g = g};
    bool ok = true, have = false;
    for (char **id = t->rules; *id && ok; id++) {
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

bool fp_pass_fuse(fp_model *m, const fp_target *t, fp_fusion_list *out, fp_diag *diag, GError **error)
{
    fuser fz = {.m = m, .t = t, .out = out, .tmp = fp_arena_new()};
    fz.rule_key = g_new(size_t, fp_n_rules + 1);
    for (size_t r = 0; r < fp_n_rules; r++)
        for (fz.rule_key[r] = 0; strcmp(fp_rules[fz.rule_key[r]].id, fp_rules[r].id) != 0; fz.rule_key[r]++)
            ;
    fz.kind_tab = g_malloc_n(fp_n_rules + 1, sizeof *fz.kind_tab);
    fz.kind_tab_set = g_new0(bool, fp_n_rules + 1);
    fz.which = g_malloc_n(fp_n_rules + 1, sizeof *fz.which);
    fz.only = g_new(int16_t, fp_n_rules + 1);
    size_t total = 0; /* fusion rewrites nodes in place: the counts, and so the indexes, stay */
    fp_model_number(m, &total, NULL);
    g_assert(total < UINT32_MAX); /* sweep_order.idx holds model-wide node indexes */
    fz.first_rec = g_new0(uint32_t, total + 1);
    fz.rec_next = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    fz.rec_rule = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    fz.rec_base = out->fusions->len;
    fz.dirty = g_new0(uint32_t, total + 1);
    fz.kind = g_new(uint8_t, total + 1);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            if (i + 16 < g->nodes->len) /* kind_of reads the node and its arrays' first entries */
                fp_node_prefetch(g->nodes->pdata[i + 16]);
            fz.n_kind[fz.kind[g->node_base + i] = kind_of(g->nodes->pdata[i])]++;
        }
    }
    fz.chg = g_ptr_array_new();
    fz.squeezes = g_array_new(FALSE, FALSE, sizeof(split_squeeze));
    fz.op_name = g_new0(const char *, fp_n_rules + 1);
    fz.domain = g_new0(const char *, fp_n_rules + 1);
    fz.ins = g_ptr_array_new();
    fz.outs = g_ptr_array_new();
    fz.before = g_array_new(FALSE, FALSE, sizeof(keyed_use));
    fz.after = g_array_new(FALSE, FALSE, sizeof(keyed_use));
    fz.link_budget = 2 * total + 4096;
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
        add_squeezes(&fz);
    g_array_free(fz.squeezes, TRUE);
    g_free(fz.first_rec);
    g_array_free(fz.rec_next, TRUE);
    g_array_free(fz.rec_rule, TRUE);
    g_free(fz.op_name);
    g_free(fz.domain);
    g_ptr_array_free(fz.ins, TRUE);
    g_ptr_array_free(fz.outs, TRUE);
    g_free(fz.rule_key);
    g_free(fz.dirty);
    g_free(fz.kind);
    g_free(fz.kind_tab);
    g_free(fz.kind_tab_set);
    g_free(fz.which);
    g_free(fz.only);
    g_ptr_array_free(fz.chg, TRUE);
    g_array_free(fz.before, TRUE);
    g_array_free(fz.after, TRUE);
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
