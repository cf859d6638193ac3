/* declared.c - the shape computations a compiler folds on the dims a model declares (declared.h):
 * ONNX Runtime's constant folding takes a Shape only when the dims it returns are known before the
 * run binds any (onnxruntime/core/optimizer/constant_folding.cc), and its ReshapeFusion
 * (reshape_fusion.cc, level 1) turns a Reshape's shape made by Concat of constants, copies of its
 * input's dims (Shape -> Gather(i) -> Unsqueeze at position i: 0) and at most one other
 * one-element value (-1) into a constant, and the computation before it goes. Measured on ONNX
 * Runtime 1.30: docs/rules.md, "Shape computations under symbolic dims". */
#include "analysis/declared.h"

#include <string.h>

#include "passes/cse.h"
#include "passes/shape/reshape_const.h"
#include "passes/shape/shapes.h"

enum { MAX_SHAPE = 64, MAX_ROUNDS = 3 };

/* The live readers of v (subgraph uses counted). */
static uint32_t readers(const fp_value *v)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n_uses; i++)
        n += !(v->uses[i].node->flags & FP_NODE_REMOVED);
    return n;
}

/* The live readers of v and of the values ONNX Runtime's common subexpression elimination merges
 * v with (same: fp_cse_same's map; NULL: none). */
static uint32_t merged_readers(const fp_value *v, GHashTable *same)
{
    const fp_value *into = same ? g_hash_table_lookup(same, v) : NULL, *first = into ? into : v;
    uint32_t n = readers(first);
    if (!same)
        return n;
    GHashTableIter it;
    gpointer from, to;
    g_hash_table_iter_init(&it, same);
    while (g_hash_table_iter_next(&it, &from, &to))
        if (to == first)
            n += readers(from);
    return n;
}

/* Whether Reshape r's shape is a Concat ReshapeFusion makes constant: the Concat's only reader is
 * r, once the elimination merged the Concats equal to it (same), and its inputs give constants,
 * copied dims and at most one -1 (fp_reshape_const). */
static bool fuses(const fp_node *r, GHashTable *same)
{
    const fp_value *s = r->n_inputs > 1 ? r->inputs[1] : NULL, *root = r->inputs[0];
    const fp_node *c = s ? s->producer : NULL;
    return root && fp_reshape_const_present(c) && c->op == FP_OP_CONCAT && !s->is_output &&
           merged_readers(s, same) == 1 && fp_reshape_const(c, root, NULL, MAX_SHAPE) >= 0;
}

/* Marks dead[] the nodes that compute only what node n reads, upward from n's inputs: a live
 * producer all of whose outputs' readers are dead. dead[] is by fp_node.id of n's graph. */
static void mark_dead(const fp_node *n, uint8_t *dead)
{
    g_autoptr(GPtrArray) work = g_ptr_array_new();
    g_ptr_array_add(work, (gpointer)n);
    while (work->len) {
        const fp_node *x = g_ptr_array_steal_index(work, work->len - 1);
        for (uint32_t k = 0; k < x->n_inputs; k++) {
            const fp_node *p = x->inputs[k] ? x->inputs[k]->producer : NULL;
            if (!fp_reshape_const_present(p) || p->graph != n->graph || dead[p->id])
                continue;
            bool all = true;
            for (uint32_t o = 0; o < p->n_outputs && all; o++) {
                const fp_value *v = p->outputs[o];
                all = !v || !v->is_output;
                for (uint32_t u = 0; v && all && u < v->n_uses; u++) {
                    const fp_node *q = v->uses[u].node;
                    all = (q->flags & FP_NODE_REMOVED) || (q->graph == n->graph && dead[q->id]);
                }
            }
            if (all) {
                dead[p->id] = 1;
                g_ptr_array_add(work, (gpointer)p);
            }
        }
    }
}

/* One graph: the Shape and Size nodes left unfolded, but those ReshapeFusion removes, marked
 * FP_NODE_RUNTIME_SHAPE; the nodes ReshapeFusion removes, FP_NODE_RESHAPE_CONST (the marks of an
 * earlier call replaced). `cse`: the runtime's elimination runs first. Returns how many nodes have
 * another mark than before. */
static size_t mark_graph(fp_graph *g, bool cse)
{
    g_autofree uint8_t *dead = g_new0(uint8_t, g->nodes->len + 1);
    g_autoptr(GHashTable) same = cse ? fp_cse_same(g) : NULL;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        if (fp_node_live(n) && n->op == FP_OP_RESHAPE && fuses(n, same)) {
            const fp_node *c = n->inputs[1]->producer;
            dead[c->id] = 1;
            mark_dead(c, dead);
        }
    }
    size_t changed = 0;
    const uint32_t marks = FP_NODE_RESHAPE_CONST | FP_NODE_RUNTIME_SHAPE;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        uint32_t was = n->flags & marks;
        n->flags &= ~marks;
        if (fp_reshape_const_present(n) && dead[n->id])
            n->flags |= FP_NODE_RESHAPE_CONST;
        if ((n->op == FP_OP_SHAPE || n->op == FP_OP_SIZE) && fp_reshape_const_present(n) && !dead[n->id])
            n->flags |= FP_NODE_RUNTIME_SHAPE;
        changed += (n->flags & marks) != was;
    }
    return changed;
}

/* Records each value's shape of m's last inference as its load shape (fp_value_load_shape). */
static void record_load_shapes(fp_model *m)
{
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++) {
            fp_value *v = g->values->pdata[i];
            fp_value_ext *e = fp_value_ext_ensure(v);
            e->load_shape = v->shape;
            e->has_load_shape = true;
        }
    }
}

/* Whether m has a Shape or Size node (else there is nothing to mark, and no inference to run). */
static bool has_shape_ops(const fp_model *m)
{
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_op op = ((const fp_node *)g->nodes->pdata[i])->op;
            if (op == FP_OP_SHAPE || op == FP_OP_SIZE)
                return true;
        }
    }
    return false;
}

/* Whether an input of m's main graph declares a dim that is not a number (the runtime's shapes then
 * may differ from the bound ones). */
static bool inputs_symbolic(const fp_model *m)
{
    const fp_graph *g = m->main;
    for (guint i = 0; g && i < g->inputs->len; i++)
        if (!fp_shape_static(&((const fp_value *)g->inputs->pdata[i])->decl_shape))
            return true;
    return false;
}

/* The Shape and Size nodes of m marked FP_NODE_RUNTIME_SHAPE. */
static size_t count_marked(const fp_model *m)
{
    size_t n = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++)
            n += (((const fp_node *)g->nodes->pdata[i])->flags & FP_NODE_RUNTIME_SHAPE) != 0;
    }
    return n;
}

size_t fp_declared_mark_runtime(fp_model *m, const fp_target *t)
{
    g_autoptr(GError) err = NULL;
    fp_shape_opts view = {.runtime_view = true};
    if (!has_shape_ops(m)) {
        /* nothing to mark; the shapes the runtime knows, where they may differ from the bound ones */
        if (inputs_symbolic(m) && fp_pass_shapes(m, &view, NULL, &err))
            record_load_shapes(m);
        return 0;
    }
    if (!fp_pass_shapes(m, &view, NULL, &err))
        return 0;
    view.attrs_checked = true;
    /* ReshapeFusion's constants make more shapes known, which may let it fuse another Reshape:
     * the runtime's level-1 loop, a few rounds */
    for (int round = 0; round < MAX_ROUNDS; round++) {
        size_t changed = 0;
        for (guint gi = 0; gi < m->graphs->len; gi++)
            changed += mark_graph(m->graphs->pdata[gi], fp_cse_on(t));
        if (!fp_pass_shapes(m, &view, NULL, &err))
            return count_marked(m);
        if (!changed)
            break;
    }
    record_load_shapes(m);
    return count_marked(m);
}
