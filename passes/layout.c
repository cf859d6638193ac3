/* layout.c - layout-conversion elimination:
 *   - a Transpose with the identity permutation is dropped;
 *   - two consecutive Transposes merge into one (perm composition), or vanish if it is identity;
 *   - a Transpose is pushed through a chain of elementwise ops (unary, or binary with a constant
 *     operand, whose broadcast is permuted at compile time) to meet its inverse, and both vanish;
 *   - GE TransData pairs A->B->A cancel;
 *   - Cast round trips: no-op casts and widening round trips (fp16->fp32->fp16) vanish; narrowing
 *     ones (fp32->fp16->fp32) change precision and go only when the target allows it.
 * Every removal and refusal becomes a diagnostic naming the nodes and the reason. */
#include <stdarg.h>
#include <string.h>

#include "passes/layout.h"

typedef struct {
    fp_model *m;
    fp_layout_result *res;
    fp_diag *diag;
    bool drop_narrowing;
    bool report;          /* the final sweep: record refusals (earlier sweeps would repeat them) */
    bool transposes_done; /* ONNX Runtime's transpose optimizer ran before (passes/transpose.c) */
    GHashTable *dirty;
} pass;

/* A candidate kept: counted and explained in the final sweep only. */
static void refuse(pass *p, fp_diag_level level, const char *code, const char *node, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
static void refuse(pass *p, fp_diag_level level, const char *code, const char *node, const char *fmt, ...)
{
    if (!p->report)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    p->res->refused++;
    fp_diag_add_message(p->diag, level, "layout", code, node, msg);
}

bool fp_layout_is_conversion(const fp_node *n)
{
    return n->op == FP_OP_TRANSPOSE || n->op == FP_OP_TRANS_DATA || n->op == FP_OP_CAST ||
           n->op == FP_OP_REORDER_INPUT || n->op == FP_OP_REORDER_OUTPUT;
}

/* ---------------------------------------------------------------- helpers */

bool fp_layout_perm(const fp_node *n, int64_t *perm, int *rank)
{
    const fp_attr *a = fp_node_attr(n, "perm");
    const fp_value *x = n->inputs[0];
    if (a && a->type == FP_ATTR_INTS && a->n <= FP_MAX_RANK) {
        *rank = (int)a->n;
        memcpy(perm, a->u.ints, sizeof(int64_t) * a->n);
        return true;
    }
    if (!a && x && x->shape.rank >= 0) { /* default: reverse the dims */
        *rank = x->shape.rank;
        for (int i = 0; i < *rank; i++)
            perm[i] = *rank - 1 - i;
        return true;
    }
    return false;
}

static bool is_identity(const int64_t *perm, int rank)
{
    for (int i = 0; i < rank; i++)
        if (perm[i] != i)
            return false;
    return true;
}

/* The only consumer of n's output 0, or NULL when it has several, none, or is a graph output. */
static fp_node *sole_consumer(const fp_node *n)
{
    fp_value *v = n->n_outputs ? n->outputs[0] : NULL;
    if (!v || v->is_output || v->n_uses != 1 || v->uses[0].port == UINT32_MAX || v->uses[0].node->graph != n->graph)
        return NULL;
    return v->uses[0].node;
}

/* Not removed or folded, and shaped as the rewrites assume: input 0 and exactly one output (a
 * malformed file may give a Cast two outputs or a Transpose none). */
static bool shaped(const fp_node *n)
{
    return n && !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) && n->n_inputs >= 1 && n->inputs[0] &&
           n->n_outputs == 1 && n->outputs[0];
}

/* shaped, and not touched in this sweep. */
static bool live(const pass *p, const fp_node *n) { return shaped(n) && !g_hash_table_contains(p->dirty, n); }

static void drop(pass *p, fp_node *n)
{
    n->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k])
            n->outputs[k]->producer = NULL;
    g_hash_table_add(p->dirty, n);
    p->res->removed++;
}

/* Removes the chain first..last (all single-consumer) whose net effect is the identity: the
 * consumers of last's output read first's input. Graph outputs are never removed. */
static void bypass(pass *p, fp_node *first, fp_node *last)
{
    fp_value *in = first->inputs[0], *out = last->outputs[0];
    fp_value_move_readers(out, in);
    for (uint32_t u = 0; u < out->n_uses; u++)
        g_hash_table_add(p->dirty, out->uses[u].node);
}

/* ---------------------------------------------------------------- Transpose */

/* Elementwise op a Transpose can move through: unary, or binary whose other operand is a
 * constant (its broadcast gets the permutation at compile time). */
static bool transparent(const fp_node *n, const fp_value *through)
{
    if (fp_op_has(n->op, FP_OPF_UNARY) && n->op != FP_OP_QUANTIZE_LINEAR && n->op != FP_OP_DEQUANTIZE_LINEAR)
        return n->n_outputs >= 1;
    if (!fp_op_has(n->op, FP_OPF_EW))
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const fp_value *v = n->inputs[i];
        if (!v || v == through)
            continue;
        if (!fp_value_is_fixed(v))
            return false;
    }
    return true;
}

/* Transpose t with the identity permutation: removed (its consumers read its input) unless its
 * output is a graph output, which is refused. True when removed. */
static bool drop_identity(pass *p, fp_node *t)
{
    if (t->outputs[0]->is_output) {
        refuse(p, FP_DIAG_INFO, "layout-kept", t->name,
               "Transpose %s: identity permutation kept because its output '%s' is a graph output", t->name,
               t->outputs[0]->name);
        return false;
    }
    bypass(p, t, t);
    drop(p, t);
    fp_diag_add(p->diag, FP_DIAG_INFO, "layout", "layout-removed", t->name,
                "Transpose %s: identity permutation removed", t->name);
    return true;
}

/* The next Transpose after t, reached through its sole consumers; with `push`, through up to 32
 * transparent elementwise ops, listed in chain (*n_chain of them). NULL when there is none to
 * pair with (a non-transparent op in the way is refused when it is t's first consumer), or when
 * t's consumer is not a Transpose and `push` is false. */
static fp_node *partner(pass *p, fp_node *t, bool push, fp_node **chain, int *n_chain)
{
    fp_node *cur = t, *next;
    *n_chain = 0;
    while ((next = sole_consumer(cur)) && live(p, next) && *n_chain < 32) {
        if (next->op == FP_OP_TRANSPOSE)
            break;
        if (!push)
            return NULL; /* adjacent pairs first: they never block a better pairing */
        if (!transparent(next, cur->outputs[0])) {
            if (*n_chain == 0 && fp_op_has(next->op, FP_OPF_EW))
                refuse(p, FP_DIAG_INFO, "layout-kept", t->name,
                       "Transpose %s cannot move through %s %s: its other operand is a runtime tensor, not a constant",
                       t->name, next->op_type, next->name);
            return NULL;
        }
        chain[(*n_chain)++] = next;
        cur = next;
    }
    if (!next || !live(p, next) || next->op != FP_OP_TRANSPOSE)
        return NULL;
    return next;
}

/* Transposes t and next, whose permutations compose to the identity, with the chain of n_chain
 * transparent ops between them: both removed, the chain working in t's input layout (its values
 * take that shape). Refused when next's output is a graph output. True when removed. */
static bool cancel_pair(pass *p, fp_node *t, fp_node *next, fp_node *const *chain, int n_chain)
{
    if (next->outputs[0]->is_output) {
        refuse(p, FP_DIAG_INFO, "layout-kept", t->name, "Transpose %s and %s cancel but '%s' is a graph output: kept",
               t->name, next->name, next->outputs[0]->name);
        return false;
    }
    /* the chain now works in x's layout: its values take x's shape */
    for (int i = 0; i < n_chain; i++)
        if (chain[i]->outputs[0])
            chain[i]->outputs[0]->shape = t->inputs[0]->shape;
    if (n_chain) {
        for (uint32_t k = 0; k < chain[0]->n_inputs; k++)
            if (chain[0]->inputs[k] == t->outputs[0])
                chain[0]->inputs[k] = t->inputs[0];
        fp_value_move_readers(next->outputs[0], chain[n_chain - 1]->outputs[0]);
        for (uint32_t u = 0; u < next->outputs[0]->n_uses; u++)
            g_hash_table_add(p->dirty, next->outputs[0]->uses[u].node);
    } else {
        bypass(p, t, next);
    }
    drop(p, t);
    drop(p, next);
    for (int i = 0; i < n_chain; i++)
        g_hash_table_add(p->dirty, chain[i]);
    p->res->pushed += (uint32_t)n_chain;
    fp_diag_add(p->diag, FP_DIAG_INFO, "layout", "layout-removed", t->name,
                "Transpose %s and %s compose to the identity%s%s: both removed", t->name, next->name,
                n_chain ? " through " : "", n_chain ? chain[0]->op_type : "");
    return true;
}

/* Adjacent Transposes t -> next that do not cancel: next takes the composite permutation c (rank
 * r) and reads t's input; t is removed. */
static void merge_pair(pass *p, fp_node *t, fp_node *next, const int64_t *c, int r)
{
    int64_t *merged = fp_arena_memdup(p->m->arena, c, sizeof(int64_t) * (size_t)r);
    fp_node_set_attr(p->m, next, (fp_attr){.name = "perm", .type = FP_ATTR_INTS, .n = (uint32_t)r, .u.ints = merged});
    next->inputs[0] = t->inputs[0];
    drop(p, t);
    g_hash_table_add(p->dirty, next);
    p->res->merged++;
    fp_diag_add(p->diag, FP_DIAG_INFO, "layout", "layout-removed", t->name,
                "Transpose %s merged into %s (one permutation instead of two)", t->name, next->name);
}

/* Transpose t: dropped when it is the identity; else paired with the next Transpose (adjacent, or
 * with `push` through transparent ops): both removed when they compose to the identity, merged
 * into one when adjacent, refused otherwise. True when the graph changed. */
static bool try_transpose(pass *p, fp_node *t, bool push)
{
    int64_t p1[FP_MAX_RANK], p2[FP_MAX_RANK];
    int r1, r2;
    if (!fp_layout_perm(t, p1, &r1))
        return false;
    if (is_identity(p1, r1))
        return drop_identity(p, t);
    /* walk through transparent ops to the next Transpose */
    fp_node *chain[32];
    int n_chain = 0;
    fp_node *next = partner(p, t, push, chain, &n_chain);
    if (!next || !fp_layout_perm(next, p2, &r2) || r1 != r2)
        return false;
    /* composite: y = T2(T1(x)) has perm c[i] = p1[p2[i]] */
    int64_t c[FP_MAX_RANK];
    for (int i = 0; i < r1; i++)
        c[i] = p1[p2[i]];
    if (is_identity(c, r1))
        return cancel_pair(p, t, next, chain, n_chain);
    if (n_chain == 0) { /* adjacent, not inverse: merge into one Transpose */
        merge_pair(p, t, next, c, r1);
        return true;
    }
    refuse(p, FP_DIAG_INFO, "layout-kept", t->name,
           "Transpose %s and %s are separated by %d elementwise op(s) but do not cancel: kept", t->name, next->name,
           n_chain);
    return false;
}

/* ---------------------------------------------------------------- TransData */

static const char *format_attr(const fp_node *n, const char *key)
{
    const fp_attr *a = fp_node_attr(n, key);
    return a && a->type == FP_ATTR_STRING ? a->u.s : NULL;
}

static bool try_transdata(pass *p, fp_node *t)
{
    fp_node *next = sole_consumer(t);
    if (!live(p, next) || next->op != FP_OP_TRANS_DATA)
        return false;
    const char *a_src = format_attr(t, "src_format"), *a_dst = format_attr(t, "dst_format");
    const char *b_src = format_attr(next, "src_format"), *b_dst = format_attr(next, "dst_format");
    if (!a_src || !a_dst || !b_src || !b_dst) {
        refuse(p, FP_DIAG_INFO, "layout-kept", t->name,
               "TransData %s -> %s: formats not recorded, cannot tell whether they cancel", t->name, next->name);
        return false;
    }
    if (strcmp(a_src, b_dst) != 0 || strcmp(a_dst, b_src) != 0) {
        refuse(p, FP_DIAG_INFO, "layout-kept", t->name, "TransData %s (%s->%s) then %s (%s->%s): not inverse, kept",
               t->name, a_src, a_dst, next->name, b_src, b_dst);
        return false;
    }
    if (next->outputs[0]->is_output)
        return false;
    bypass(p, t, next);
    drop(p, t);
    drop(p, next);
    fp_diag_add(p->diag, FP_DIAG_INFO, "layout", "layout-removed", t->name,
                "TransData %s (%s->%s) and %s (%s->%s) cancel: both removed", t->name, a_src, a_dst, next->name, b_src,
                b_dst);
    return true;
}

/* ---------------------------------------------------------------- Cast */

/* Whether every value of `from` is exactly representable in `to`. */
static bool widens(fp_dtype from, fp_dtype to)
{
    if (from == to)
        return true;
    switch (from) {
    case FP_DT_FLOAT16:
    case FP_DT_BFLOAT16:
        return to == FP_DT_FLOAT || to == FP_DT_DOUBLE;
    case FP_DT_FLOAT:
        return to == FP_DT_DOUBLE;
    case FP_DT_INT8:
        return to == FP_DT_INT16 || to == FP_DT_INT32 || to == FP_DT_INT64 || to == FP_DT_FLOAT || to == FP_DT_DOUBLE ||
               to == FP_DT_FLOAT16;
    case FP_DT_UINT8:
        return to == FP_DT_INT16 || to == FP_DT_UINT16 || to == FP_DT_INT32 || to == FP_DT_INT64 || to == FP_DT_FLOAT ||
               to == FP_DT_DOUBLE;
    case FP_DT_INT16:
        return to == FP_DT_INT32 || to == FP_DT_INT64 || to == FP_DT_FLOAT || to == FP_DT_DOUBLE;
    case FP_DT_INT32:
        return to == FP_DT_INT64 || to == FP_DT_DOUBLE;
    case FP_DT_BOOL:
        return to != FP_DT_STRING;
    default:
        return false;
    }
}

static bool try_cast(pass *p, fp_node *c)
{
    fp_value *x = c->inputs[0], *y = c->outputs[0];
    if (!x || !y)
        return false;
    if (x->dtype == y->dtype && x->dtype != FP_DT_UNDEFINED && !y->is_output) {
        bypass(p, c, c);
        drop(p, c);
        fp_diag_add(p->diag, FP_DIAG_INFO, "layout", "layout-removed", c->name, "Cast %s: %s to %s is a no-op: removed",
                    c->name, fp_dtype_name(x->dtype), fp_dtype_name(y->dtype));
        return true;
    }
    fp_node *next = sole_consumer(c);
    if (!live(p, next) || next->op != FP_OP_CAST || !next->outputs[0] || next->outputs[0]->dtype != x->dtype)
        return false;
    const char *t1 = fp_dtype_name(x->dtype), *t2 = fp_dtype_name(y->dtype);
    bool exact = widens(x->dtype, y->dtype);
    if (!exact && !p->drop_narrowing) {
        refuse(p, FP_DIAG_WARNING, "layout-precision", c->name,
               "Cast %s -> %s is a round trip %s -> %s -> %s that loses precision: kept (set [layout] "
               "drop_narrowing_casts = true in the target to drop it)",
               c->name, next->name, t1, t2, t1);
        return false;
    }
    if (next->outputs[0]->is_output)
        return false;
    bypass(p, c, next);
    drop(p, c);
    drop(p, next);
    fp_diag_add(p->diag, exact ? FP_DIAG_INFO : FP_DIAG_WARNING, "layout", "layout-removed", c->name,
                "Cast %s -> %s: round trip %s -> %s -> %s removed%s", c->name, next->name, t1, t2, t1,
                exact ? "" : " (changes precision: allowed by the target)");
    return true;
}

/* ---------------------------------------------------------------- the conversions that stay */

/* Whether input `port` of n is a weight or bias input: inputs 1 and up of a convolution or a
 * contraction, but of the attention ops that read key, value and caches there only
 * MultiHeadAttention's bias (input 3) and Attention's weights and bias (inputs 1, 2: its past,
 * mask and attention bias come at run time); MoE's and QMoE's expert weights, scales, biases and zero points (2 to 13). */
static bool weight_port(const fp_node *n, uint32_t port)
{
    if (n->op == FP_OP_GROUP_QUERY_ATTENTION)
        return false;
    if (n->op == FP_OP_MULTI_HEAD_ATTENTION)
        return port == 3;
    if (n->op == FP_OP_ATTENTION)
        return port == 1 || port == 2;
    if (n->op == FP_OP_MOE || n->op == FP_OP_QMOE) /* router_probs (input 1), router_weights (14) */
        return port >= 2 && port != 14;
    fp_fuse_kind fk = fp_op_fuse_kind(n->op);
    return port >= 1 && (fk == FP_FK_CONV || fk == FP_FK_GEMM || fk == FP_FK_MATMUL);
}

/* Says why a conversion stays: what it converts, for which consumer, and that nothing undoes it. */
static void explain_kept(pass *p, const fp_node *n, GHashTable *explained)
{
    if (g_hash_table_contains(explained, n->name))
        return;
    const fp_value *in = n->n_inputs ? n->inputs[0] : NULL, *out = n->n_outputs ? n->outputs[0] : NULL;
    const fp_node *user = out && out->n_uses ? out->uses[0].node : NULL;
    const char *src = in && in->producer ? in->producer->name : in ? "a graph input" : "nothing";
    /* a weight path: the value ends up as a weight or bias input of a contraction */
    const fp_node *end = n;
    uint32_t port = 0;
    for (int hops = 0; hops < 8; hops++) {
        const fp_value *v = end->n_outputs ? end->outputs[0] : NULL;
        if (!v || v->n_uses != 1)
            break;
        port = v->uses[0].port;
        end = v->uses[0].node;
        if (!fp_layout_is_conversion(end))
            break;
    }
    bool weight = end != n && port != UINT32_MAX && weight_port(end, port);
    g_autofree char *what = NULL;
    if (n->op == FP_OP_TRANS_DATA) {
        const char *a = format_attr(n, "src_format"), *b = format_attr(n, "dst_format");
        what = g_strdup_printf("converts %s -> %s", a ? a : "?", b ? b : "?");
    } else if (n->op == FP_OP_CAST) {
        what = g_strdup_printf("casts %s -> %s", in ? fp_dtype_name(in->dtype) : "?",
                               out ? fp_dtype_name(out->dtype) : "?");
    } else {
        what = g_strdup("permutes");
    }
    refuse(p, FP_DIAG_INFO, "layout-kept", n->name,
           "%s %s: %s '%s' (from %s) for %s%s%s; nothing downstream undoes it%s", n->op_type, n->name, what,
           in ? in->name : "?", src, user ? user->op_type : "the graph output", user ? " " : "", user ? user->name : "",
           weight ? " (prepares a weight fed at run time: a constant weight would be converted once at compile time)"
                  : "");
}

/* ---------------------------------------------------------------- driver */

/* The walks below read one field of every node: the node OP_AHEAD places on is prefetched (a big
 * graph's nodes are far beyond the caches). */
enum { OP_AHEAD = 16 };

/* The conversions of each graph of m in file order: this pass neither changes an op nor adds a
 * node, so only their flags change while it runs. Caller frees each array and the vector. */
static GPtrArray **conversions_of(const fp_model *m)
{
    GPtrArray **convs = g_new0(GPtrArray *, m->graphs->len + 1);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        convs[gi] = g_ptr_array_new();
        for (guint i = 0; i < g->nodes->len; i++) {
            if (i + OP_AHEAD < g->nodes->len)
                __builtin_prefetch(&((const fp_node *)g->nodes->pdata[i + OP_AHEAD])->op);
            if (fp_layout_is_conversion(g->nodes->pdata[i]))
                g_ptr_array_add(convs[gi], g->nodes->pdata[i]);
        }
    }
    return convs;
}

static void conversions_free(GPtrArray **convs, guint n)
{
    for (guint gi = 0; gi < n; gi++)
        if (convs[gi])
            g_ptr_array_free(convs[gi], TRUE);
    g_free(convs);
}

/* Conversions still in the graph (not removed, not folded). */
static uint32_t count_conversions(GPtrArray *const *convs, guint n_graphs)
{
    uint32_t n = 0;
    for (guint gi = 0; gi < n_graphs; gi++)
        for (guint i = 0; i < convs[gi]->len; i++) {
            const fp_node *node = convs[gi]->pdata[i];
            n += !(node->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED));
        }
    return n;
}

/* The nodes of order (n of them) that are conversions, in that order. */
static GPtrArray *conversions_in(fp_node *const *order, uint32_t n)
{
    GPtrArray *a = g_ptr_array_new();
    for (uint32_t i = 0; i < n; i++) {
        if (i + OP_AHEAD < n)
            __builtin_prefetch(&order[i + OP_AHEAD]->op);
        if (fp_layout_is_conversion(order[i]))
            g_ptr_array_add(a, order[i]);
    }
    return a;
}

/* One sweep over the conversions cv of a graph, in topological order: phase 1 adjacent pairs,
 * identities and casts; phase 2 Transposes pushed through elementwise chains, only when nothing
 * changed in this sweep so far (`changed`: in an earlier graph, or in phase 1) or in the reporting
 * sweep. Returns `changed`, or true when this graph changed. */
static bool sweep_graph(pass *p, const GPtrArray *cv, bool changed)
{
    for (int phase = 0; phase < 2 && !(phase == 1 && changed && !p->report); phase++) {
        for (guint i = 0; i < cv->len; i++) {
            fp_node *node = cv->pdata[i];
            if (!live(p, node))
                continue;
            if (node->op == FP_OP_TRANSPOSE && !p->transposes_done)
                changed |= try_transpose(p, node, phase == 1);
            else if (phase == 0 && node->op == FP_OP_TRANS_DATA)
                changed |= try_transdata(p, node);
            else if (phase == 0 && node->op == FP_OP_CAST)
                changed |= try_cast(p, node);
        }
    }
    return changed;
}

/* Sweeps every graph of p->m until a sweep changes nothing, then once more to record the
 * refusals (17 sweeps at most, the last one reporting); re-links after each sweep that changed
 * something. sweep_convs[gi]: graph gi's conversions in topological order, made when NULL, all
 * dropped after a sweep that changed something (the caller frees what is left). False with
 * *error when a graph has no topological order. */
static bool sweeps(pass *p, GPtrArray **sweep_convs, GError **error)
{
    fp_model *m = p->m;
    bool changed = true;
    for (int sweep = 0; sweep < 17 && (changed || !p->report); sweep++) {
        p->report = !changed || sweep == 16; /* nothing changed last time: this sweep only explains */
        changed = false;
        for (guint gi = 0; gi < m->graphs->len; gi++) {
            uint32_t n = 0;
            fp_node *const *order = fp_graph_order(m->graphs->pdata[gi], &n, error);
            if (!order)
                return false;
            if (!sweep_convs[gi])
                sweep_convs[gi] = conversions_in(order, n);
            changed = sweep_graph(p, sweep_convs[gi], changed);
        }
        if (changed) { /* a sweep that rewrote nothing leaves the use lists and the orders right */
            fp_model_link(m);
            for (guint gi = 0; gi < m->graphs->len; gi++)
                g_clear_pointer(&sweep_convs[gi], g_ptr_array_unref);
        }
        p->res->rewrote |= changed;
        g_hash_table_remove_all(p->dirty);
        if (p->report)
            break;
    }
    return true;
}

/* Gives every conversion still in the graph (convs: per graph, n_graphs of them) the reason it
 * stays, unless a layout finding in diag names it already. */
static void explain_remaining(pass *p, GPtrArray *const *convs, guint n_graphs)
{
    fp_diag *diag = p->diag;
    g_autoptr(GHashTable) explained = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        if (e->node && g_str_has_prefix(e->code, "layout-"))
            g_hash_table_add(explained, e->node);
    }
    p->report = true;
    for (guint gi = 0; gi < n_graphs; gi++)
        for (guint i = 0; i < convs[gi]->len; i++) {
            const fp_node *n = convs[gi]->pdata[i];
            if (!(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)))
                explain_kept(p, n, explained);
        }
}

void fp_layout_add_casts(fp_model *m, fp_layout_result *res, fp_diag *diag)
{
    pass p = {.m = m, .res = res, .diag = diag};
    guint n_graphs = m->graphs->len;
    GPtrArray **convs = conversions_of(m);
    for (guint gi = 0; gi < n_graphs; gi++) /* the Casts, of the conversions */
        for (guint i = convs[gi]->len; i-- > 0;)
            if (((const fp_node *)convs[gi]->pdata[i])->op != FP_OP_CAST)
                g_ptr_array_remove_index(convs[gi], i);
    uint32_t before = res->refused;
    explain_remaining(&p, convs, n_graphs);
    res->conversions_before += res->refused - before;
    res->conversions_after += res->refused - before;
    conversions_free(convs, n_graphs);
}

bool fp_pass_layout(fp_model *m, const fp_target *t, fp_layout_result *res, fp_diag *diag, GError **error)
{
    memset(res, 0, sizeof *res);
    pass p = {.m = m, .res = res, .diag = diag, .dirty = g_hash_table_new(g_direct_hash, g_direct_equal)};
    if (t && t->keyfile)
        p.drop_narrowing = g_key_file_get_boolean(t->keyfile, "layout", "drop_narrowing_casts", NULL);
    p.transposes_done = fp_transpose_optimizer_on(t);
    guint n_graphs = m->graphs->len;
    GPtrArray **convs = conversions_of(m);                       /* file order */
    GPtrArray **sweep_convs = g_new0(GPtrArray *, n_graphs + 1); /* topological order, NULL: to make */
    res->conversions_before = count_conversions(convs, n_graphs);
    bool ok = sweeps(&p, sweep_convs, error);
    conversions_free(sweep_convs, n_graphs);
    if (ok) {
        /* every conversion left gets its reason: the ones refused above already have one */
        explain_remaining(&p, convs, n_graphs);
        res->conversions_after = count_conversions(convs, n_graphs);
    }
    conversions_free(convs, n_graphs);
    g_hash_table_destroy(p.dirty);
    return ok;
}
