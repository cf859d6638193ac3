/* fuse_match.c - the matcher of the fusion pass: the kind of each node and the kinds each pattern
 * node of a rule may match, and the match of a rule's pattern at an anchor (fuse_internal.h). */
#include <string.h>

#include "passes/fusion/fuse_internal.h"

G_STATIC_ASSERT((int)FP_OP_COUNT <= (int)FP_FUSE_KIND_SKIP);

static bool is_dirty(const fp_fuser *fz, const fp_node *n) { return fz->dirty[fp_node_index(n)] == fz->pass; }

void fp_fuse_match_init(fp_fuser *fz, size_t total)
{
    fz->kind_tab = g_malloc_n(fp_n_rules + 1, sizeof *fz->kind_tab);
    fz->kind_tab_set = g_new0(bool, fp_n_rules + 1);
    fz->only = g_new(int16_t, fp_n_rules + 1);
    fz->dirty = g_new0(uint32_t, total + 1);
    fz->kind = g_new(uint8_t, total + 1);
    for (guint gi = 0; gi < fz->m->graphs->len; gi++) {
        const fp_graph *g = fz->m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            if (i + 16 < g->nodes->len) /* the kind reads the node and its arrays' first entries */
                fp_node_prefetch(g->nodes->pdata[i + 16]);
            fz->n_kind[fz->kind[g->node_base + i] = fp_fuse_match_kind_of(g->nodes->pdata[i])]++;
        }
    }
}

void fp_fuse_match_free(fp_fuser *fz)
{
    g_free(fz->dirty);
    g_free(fz->kind);
    g_free(fz->kind_tab);
    g_free(fz->kind_tab_set);
    g_free(fz->only);
}

/* Fills row[kind] (256 of them) with whether op_ok(p, n) may hold for a node of that kind: its test
 * of the kind alone (one of p's ops, or of p's flags except the casts and (de)quantizations);
 * FP_FUSE_KIND_SKIP and FP_FUSE_KIND_REMOVED false. */
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

uint8_t fp_fuse_match_kind_of(const fp_node *n)
{
    if (n->flags & FP_NODE_REMOVED)
        return FP_FUSE_KIND_REMOVED;
    if (n->flags & (FP_NODE_FOLDED | FP_NODE_QUANTIZED))
        return FP_FUSE_KIND_SKIP;
    /* every rewrite reads input 0 and output 0: a malformed node without them never matches */
    if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0])
        return FP_FUSE_KIND_SKIP;
    return (uint8_t)n->op;
}

bool (*fp_fuse_match_kinds(fp_fuser *fz, size_t ri))[256]
{
    if (!fz->kind_tab_set[ri]) {
        const fp_rule *r = &fp_rules[ri];
        for (int k = 0; k < r->n_pattern; k++)
            kind_row(&r->pattern[k], fz->kind_tab[ri][k]);
        fz->only[ri] = -1;
        for (int op = 0; op < 256; op++)
            if (fz->kind_tab[ri][0][op])
                fz->only[ri] = fz->only[ri] == -1 ? (int16_t)op : -2;
        fz->kind_tab_set[ri] = true;
    }
    return fz->kind_tab[ri];
}

/* Whether n may stand for pattern node k of the match's rule (its kind, its liveness, input 0 and
 * output 0), from fz->kind: the node's own fields past its first bytes are not read. */
static bool op_ok(const fp_fuser *fz, const fp_match *mt, int k, const fp_node *n)
{
    return fz->kind_tab[mt->rule - fp_rules][k][fz->kind[fp_node_index(n)]];
}

static bool has_input(const fp_node *n, const fp_value *v, int port)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == v && (port < 0 || (int)i == port))
            return true;
    return false;
}

static bool extend(fp_fuser *fz, fp_match *mt, int k);

/* Extends a match by pattern node k, the producer of input `port` of pattern node `from` (p->up),
 * and the following ones. An optional one (p->opt: these come last, after the nodes the
 * constraints name by index) that is not there is skipped. */
static bool extend_up(fp_fuser *fz, fp_match *mt, int k)
{
    const fp_pat_node *p = &mt->rule->pattern[k];
    const fp_node *to = mt->nodes[p->from];
    fp_value *v = p->port >= 0 && (uint32_t)p->port < to->n_inputs ? to->inputs[p->port] : NULL;
    fp_node *cand = v ? v->producer : NULL;
    int n0 = mt->n;
    if (cand && cand->graph == to->graph && cand->n_outputs && cand->outputs[0] == v && !fp_fuse_in_match(mt, cand) &&
        op_ok(fz, mt, k, cand) && !is_dirty(fz, cand)) {
        mt->nodes[mt->n++] = cand;
        if (extend(fz, mt, k + 1))
            return true;
        mt->n = n0;
    }
    return p->opt && extend(fz, mt, k + 1);
}

/* Extends a match by pattern node k (and the following ones); backtracks over consumers. Node k
 * is a reader of pattern node `from`'s output 0, or with `from` FP_PAT_X of the anchor's data input
 * (another branch off x). */
static bool extend(fp_fuser *fz, fp_match *mt, int k)
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
            if (v->uses[0].port != 0 || next->graph != v->graph || fp_fuse_in_match(mt, next) ||
                !op_ok(fz, mt, lk, next) || is_dirty(fz, next))
                break;
            mt->nodes[mt->n++] = next;
        }
        return true;
    }
    const fp_pat_node *p = &r->pattern[k];
    if (p->up)
        return extend_up(fz, mt, k);
    fp_node *src = mt->nodes[p->from == FP_PAT_X ? 0 : p->from];
    fp_value *v = p->from == FP_PAT_X ? mt->x : src->n_outputs ? src->outputs[0] : NULL;
    if (!v)
        return false;
    int n0 = mt->n;
    for (uint32_t u = 0; u < v->n_uses; u++) {
        fp_node *cand = v->uses[u].node;
        uint32_t port = v->uses[u].port;
        if (port == UINT32_MAX || cand->graph != src->graph || fp_fuse_in_match(mt, cand) || !op_ok(fz, mt, k, cand) ||
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
        mt->n = n0;
    }
    return false;
}

/* FP_RW_SPLIT: adds to mt the other Slice and Gather nodes reading the anchor's input 0 at their
 * input 0, in use order; false when the anchor is not the first of them (the group is matched at
 * the first) or when the group does not fit in mt. */
static bool siblings(fp_fuser *fz, fp_match *mt)
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

bool fp_fuse_match_at(fp_fuser *fz, const fp_rule *r, fp_node *anchor, size_t idx, fp_match *mt)
{
    if (fz->dirty[idx] == fz->pass)
        return false;
    mt->rule = r; /* nodes past mt->n are never read */
    mt->target = fz->t;
    mt->phase = fz->phase;
    mt->tmp = fz->tmp;
    mt->memo = fz->memo;
    mt->nodes[0] = anchor;
    mt->n = 1;
    mt->x = anchor->n_inputs > (uint32_t)r->x_input ? anchor->inputs[r->x_input] : NULL;
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

bool fp_fuse_match_possible(fp_fuser *fz, size_t ri)
{
    bool(*tab)[256] = fp_fuse_match_kinds(fz, ri);
    for (int k = 0; k < fp_rules[ri].n_pattern; k++) {
        bool any = false;
        for (int op = 0; op < FP_OP_COUNT && !any; op++)
            any = tab[k][op] && fz->n_kind[op];
        if (!any)
            return false;
    }
    return true;
}
