/* reshape_const.c - the constant ONNX Runtime's ReshapeFusion makes of a Reshape's target Concat
 * (reshape_const.h): reshape_fusion.cc's Fuse_Subgraph, its input patterns as they read. Facts:
 * docs/rules.md, "Shape computations under symbolic dims". */
#include "reshape_const.h"

#include <string.h>

bool fp_reshape_const_present(const fp_node *n)
{
    return n && !(n->flags & FP_NODE_REMOVED) && (!(n->flags & FP_NODE_FOLDED) || (n->flags & FP_NODE_RESHAPE_CONST));
}

/* Whether dim pos of a and of b is one as ONNX Runtime compares them: the same number or the same
 * symbol. */
static bool same_dim_at(const fp_value *a, const fp_value *b, int64_t pos)
{
    if (pos < 0 || pos >= a->shape.rank || pos >= b->shape.rank)
        return false;
    fp_dim x = a->shape.dims[pos], y = b->shape.dims[pos];
    return fp_dim_known(x) ? fp_dim_known(y) && x.value == y.value : x.sym && y.sym && strcmp(x.sym, y.sym) == 0;
}

/* The one integer of constant v (a scalar or one element), or false. */
static bool one_int(const fp_value *v, int64_t *out) { return v && fp_value_ints(v, out, 1) == 1; }

/* Whether v is Unsqueeze(axes [0]) of Gather(Shape(x), pos) with x root or with root's dim pos: the
 * element that copies root's dim pos (Match_One_Element_Output_Subgraph_1, Match_Shape). */
static bool copies_dim(const fp_value *v, const fp_value *root, int64_t pos)
{
    const fp_node *u = v->producer, *g, *s;
    int64_t axis, idx;
    if (!fp_reshape_const_present(u) || u->op != FP_OP_UNSQUEEZE || !u->inputs[0])
        return false;
    const fp_attr *a = fp_node_attr(u, "axes");
    bool axes0 = a ? a->type == FP_ATTR_INTS && a->n == 1 && a->u.ints[0] == 0
                   : u->n_inputs > 1 && one_int(u->inputs[1], &axis) && axis == 0;
    g = u->inputs[0]->producer;
    if (!axes0 || !fp_reshape_const_present(g) || g->op != FP_OP_GATHER || g->n_inputs < 2 ||
        !one_int(g->inputs[1], &idx) || idx != pos)
        return false;
    s = g->inputs[0] ? g->inputs[0]->producer : NULL;
    return fp_reshape_const_present(s) && s->op == FP_OP_SHAPE && s->inputs[0] &&
           (s->inputs[0] == root || same_dim_at(s->inputs[0], root, pos));
}

int fp_reshape_const(const fp_node *concat, const fp_value *root, int64_t *vals, int max)
{
    int pos = 0, minus = 0;
    int64_t buf[64];
    uint64_t numel;
    for (uint32_t i = 0; i < concat->n_inputs; i++) {
        const fp_value *v = concat->inputs[i];
        int n = v && fp_value_is_constant(v) ? fp_value_ints(v, buf, (int)G_N_ELEMENTS(buf)) : -1;
        if (!v)
            return -1;
        if (n < 0) { /* one element: a copied dim, 0, or another value, -1 */
            bool copy = copies_dim(v, root, pos);
            if (!copy && !(fp_shape_static(&v->shape) && fp_shape_numel(&v->shape, &numel) && numel == 1))
                return -1;
            buf[0] = copy ? 0 : -1;
            n = 1;
        }
        if (pos + n > max)
            return -1;
        for (int k = 0; k < n; k++, pos++) {
            minus += buf[k] == -1;
            if (vals)
                vals[pos] = buf[k];
        }
    }
    return minus <= 1 ? pos : -1;
}
