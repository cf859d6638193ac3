/* shape_rules_nn.c - shape rules of arithmetic ops: elementwise, activations, convolution,
 * pooling, Gemm/MatMul/Einsum, normalization, reductions, recurrent cells.
 * Formulas follow the ONNX operator specifications (onnx/docs/Operators.md). */
#include <math.h>
#include <string.h>

#include "shape_rules.h"

/* ---------------------------------------------------------------- elementwise */

/* Broadcast of every present input (variadic Sum/Max/Min/Mean too); dtype `dt` or input 0's. */
static sh_result broadcast_all(sh_ctx *c, uint32_t first, fp_dtype dt)
{
    fp_shape acc = {-1, NULL};
    bool have = false;
    for (uint32_t i = first; i < c->n->n_inputs; i++) {
        if (!sh_val(c, i))
            continue;
        const fp_shape *s = sh_in(c, i);
        if (!s)
            return sh_unknown(c, "input %u has unknown rank", i);
        if (!have) {
            acc = *s;
            have = true;
        } else if (!sh_broadcast(c, &acc, s, &acc)) {
            return SH_ERROR;
        }
    }
    if (!have)
        return sh_unknown(c, "no inputs");
    sh_set(c, 0, dt, sh_copy(c, &acc));
    return SH_OK;
}

sh_result sh_rule_binary(sh_ctx *c) { return broadcast_all(c, 0, sh_dt(c, 0)); }

sh_result sh_rule_compare(sh_ctx *c) { return broadcast_all(c, 0, FP_DT_BOOL); }

sh_result sh_rule_where(sh_ctx *c)
{
    sh_result r = broadcast_all(c, 0, sh_dt(c, 1));
    return r;
}

/* Output = input 0's shape and dtype (unary ops, activations, normalizations, ...). */
sh_result sh_rule_same(sh_ctx *c)
{
    const fp_shape *s = sh_in(c, 0);
    if (!s)
        return sh_unknown(c, "input 0 has unknown rank");
    sh_set(c, 0, sh_dt(c, 0), sh_copy(c, s));
    return SH_OK;
}

sh_result sh_rule_bool_same(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r == SH_OK)
        sh_out_dtype(c, 0, FP_DT_BOOL);
    return r;
}

sh_result sh_rule_cast(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    fp_dtype to = c->n->op == FP_OP_CAST_LIKE ? sh_dt(c, 1) : (fp_dtype)fp_node_attr_int(c->n, "to", 0);
    if (c->n->op == FP_OP_CAST && !fp_dtype_valid(to))
        return sh_fail(c, "attribute 'to' = %d is not a data type", (int)to);
    sh_out_dtype(c, 0, to);
    return SH_OK;
}

/* Whether the known dims of s differ from what a quantization parameter over x needs: with block
 * (> 0) x's shape with ceil(dim / block) on axis; else one element (per tensor) or, 1-D, x's dim
 * on axis (per axis). */
static bool quant_param_bad(const fp_shape *s, const fp_shape *x, int32_t axis, int64_t block)
{
    uint64_t numel;
    if (block == 0) {
        if (s->rank == 0 || (fp_shape_numel(s, &numel) && numel == 1))
            return false;
        return s->rank != 1 ||
               (fp_dim_known(s->dims[0]) && fp_dim_known(x->dims[axis]) && s->dims[0].value != x->dims[axis].value);
    }
    if (s->rank != x->rank)
        return true;
    for (int32_t i = 0; i < x->rank; i++) {
        fp_dim want = i != axis || !fp_dim_known(x->dims[i]) ? x->dims[i]
                                                             : sh_dim((x->dims[i].value + block - 1) / block);
        if (fp_dim_known(s->dims[i]) && fp_dim_known(want) && s->dims[i].value != want.value)
            return true;
    }
    return false;
}

/* The scale and zero point (inputs 1, 2) of QuantizeLinear or DequantizeLinear over x (ONNX
 * Operators.md, opset 21's blocked form): per tensor, per axis (`axis`, default 1) or per block of
 * `block_size` along it; SH_ERROR naming the input whose shape is none of those. */
static sh_result quant_params(sh_ctx *c, const fp_shape *x)
{
    int64_t block;
    sh_result r = sh_attr_int_in(c, "block_size", false, 0, 0, G_MAXINT32, "0 or a positive block size", &block);
    const fp_shape *s = sh_in(c, 1);
    if (r != SH_OK || !s)
        return r;
    bool per_tensor = !block && (s->rank == 0 || (s->rank == 1 && fp_dim_known(s->dims[0]) && s->dims[0].value == 1));
    int32_t axis = 0;
    if (!per_tensor && !sh_axis(fp_node_attr_int(c->n, "axis", 1), x->rank, &axis))
        return sh_fail(c, "axis out of range for rank %d", x->rank);
    const char *what[] = {NULL, "scale", "zero point"};
    for (uint32_t i = 1; i <= 2 && !per_tensor; i++) {
        const fp_shape *p = sh_val(c, i) ? sh_in(c, i) : NULL;
        if (!p || !quant_param_bad(p, x, axis, block))
            continue;
        g_autofree char *got = fp_shape_to_string(p), *xs = fp_shape_to_string(x);
        return sh_fail(c, "%s shape %s does not fit input %s on axis %d (%s)", what[i], got, xs, axis,
                       block ? "blocked: the input's shape with ceil(dim / block_size) on the axis"
                             : "per axis: the axis' dim");
    }
    return SH_OK;
}

sh_result sh_rule_quantize(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r == SH_OK)
        r = quant_params(c, sh_in(c, 0));
    if (r != SH_OK)
        return r;
    fp_dtype dt = FP_DT_UINT8;
    if (c->n->op == FP_OP_DEQUANTIZE_LINEAR)
        dt = sh_val(c, 1) ? sh_dt(c, 1) : FP_DT_FLOAT;
    else if (fp_node_attr(c->n, "output_dtype") && fp_node_attr_int(c->n, "output_dtype", 0))
        dt = (fp_dtype)fp_node_attr_int(c->n, "output_dtype", 0);
    else if (sh_val(c, 2))
        dt = sh_dt(c, 2);
    sh_out_dtype(c, 0, dt);
    return SH_OK;
}

sh_result sh_rule_dyn_quantize(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    sh_out_dtype(c, 0, FP_DT_UINT8);
    sh_set(c, 1, FP_DT_FLOAT, sh_new(c, 0));
    sh_set(c, 2, FP_DT_UINT8, sh_new(c, 0));
    return SH_OK;
}

/* ---------------------------------------------------------------- convolution and pooling */

typedef struct {
    int nsp; /* spatial dims */
    int64_t k[FP_MAX_RANK], s[FP_MAX_RANK], d[FP_MAX_RANK], pb[FP_MAX_RANK], pe[FP_MAX_RANK];
    int64_t group; /* the group attribute (1 when absent) */
    const char *auto_pad;
    bool same, valid; /* auto_pad is SAME_UPPER or SAME_LOWER; VALID (read once per node) */
} window;

/* The attributes of a window, each the first of its name (as fp_node_attr finds it), NULL when
 * absent: found in one pass over the node's attributes. */
typedef struct {
    const fp_attr *kernel_shape, *strides, *dilations, *pads, *auto_pad, *group;
} window_attrs;

static void find_window_attrs(const fp_node *n, window_attrs *wa)
{
    memset(wa, 0, sizeof *wa);
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const fp_attr *a = &n->attrs[i];
        const fp_attr **slot = NULL;
        switch (a->name[0]) {
        case 'k':
            slot = strcmp(a->name, "kernel_shape") == 0 ? &wa->kernel_shape : NULL;
            break;
        case 's':
            slot = strcmp(a->name, "strides") == 0 ? &wa->strides : NULL;
            break;
        case 'd':
            slot = strcmp(a->name, "dilations") == 0 ? &wa->dilations : NULL;
            break;
        case 'p':
            slot = strcmp(a->name, "pads") == 0 ? &wa->pads : NULL;
            break;
        case 'a':
            slot = strcmp(a->name, "auto_pad") == 0 ? &wa->auto_pad : NULL;
            break;
        case 'g':
            slot = strcmp(a->name, "group") == 0 ? &wa->group : NULL;
            break;
        default:
            break;
        }
        if (slot && !*slot)
            *slot = a;
    }
}

/* Reads kernel_shape (or the spatial dims of the weight w), strides, dilations, pads, auto_pad and
 * group into *win for `nsp` spatial dims. */
static sh_result read_window(sh_ctx *c, int nsp, const fp_shape *w, window *win)
{
    int cnt = 0;
    window_attrs wa;
    win->nsp = nsp;
    find_window_attrs(c->n, &wa);
    win->group = wa.group && wa.group->type == FP_ATTR_INT ? wa.group->u.i : 1;
    if (sh_attr_ints_of(wa.kernel_shape, win->k, FP_MAX_RANK, &cnt)) {
        if (cnt != nsp)
            return sh_fail(c, "kernel_shape has %d entries for %d spatial dimensions", cnt, nsp);
    } else if (w && w->rank == nsp + 2) {
        for (int i = 0; i < nsp; i++) {
            if (!fp_dim_known(w->dims[2 + i]))
                return sh_unknown(c, "kernel size unknown");
            win->k[i] = w->dims[2 + i].value;
        }
    } else {
        return sh_unknown(c, "no kernel_shape and no weight shape");
    }
    for (int i = 0; i < nsp; i++)
        win->s[i] = win->d[i] = 1, win->pb[i] = win->pe[i] = 0;
    if (sh_attr_ints_of(wa.strides, win->s, FP_MAX_RANK, &cnt) && cnt != nsp)
        return sh_fail(c, "strides has %d entries for %d spatial dimensions", cnt, nsp);
    if (sh_attr_ints_of(wa.dilations, win->d, FP_MAX_RANK, &cnt) && cnt != nsp)
        return sh_fail(c, "dilations has %d entries for %d spatial dimensions", cnt, nsp);
    int64_t pads[2 * FP_MAX_RANK];
    if (sh_attr_ints_of(wa.pads, pads, 2 * FP_MAX_RANK, &cnt)) {
        if (cnt != 2 * nsp)
            return sh_fail(c, "pads has %d entries for %d spatial dimensions", cnt, nsp);
        for (int i = 0; i < nsp; i++)
            win->pb[i] = pads[i], win->pe[i] = pads[nsp + i];
    }
    for (int i = 0; i < nsp; i++)
        if (win->s[i] <= 0 || win->d[i] <= 0 || win->k[i] <= 0)
            return sh_fail(c, "kernel, stride and dilation must be positive");
    win->auto_pad = wa.auto_pad && wa.auto_pad->type == FP_ATTR_STRING ? wa.auto_pad->u.s : "NOTSET";
    win->same = strcmp(win->auto_pad, "SAME_UPPER") == 0 || strcmp(win->auto_pad, "SAME_LOWER") == 0;
    win->valid = strcmp(win->auto_pad, "VALID") == 0;
    return SH_OK;
}

/* Input 0 of a convolution or pooling into *x (rank 3 or more: N, C, then the spatial dims) and
 * its window over the weight w (NULL: none) into *win; SH_UNKNOWN or SH_ERROR as sh_input and
 * read_window. */
static sh_result window_input(sh_ctx *c, const fp_shape *w, const fp_shape **x, window *win)
{
    sh_result r = sh_input(c, 3, x);
    return r == SH_OK ? read_window(c, (*x)->rank - 2, w, win) : r;
}

/* Output size of one spatial dim of a convolution or pooling window. */
static fp_dim window_out(const window *w, int i, fp_dim in, bool ceil_mode)
{
    if (!fp_dim_known(in))
        return sh_dim_unknown();
    int64_t ext = w->d[i] * (w->k[i] - 1) + 1;
    if (w->same)
        return sh_dim((in.value + w->s[i] - 1) / w->s[i]);
    if (w->valid)
        return sh_dim(in.value < ext ? 0 : (in.value - ext) / w->s[i] + 1);
    int64_t span = in.value + w->pb[i] + w->pe[i] - ext;
    if (span < 0)
        return sh_dim(0);
    int64_t out = ceil_mode ? (span + w->s[i] - 1) / w->s[i] + 1 : span / w->s[i] + 1;
    /* ceil mode: the last window must start inside the input or the left padding */
    if (ceil_mode && (out - 1) * w->s[i] >= in.value + w->pb[i])
        out--;
    return sh_dim(out);
}

sh_result sh_rule_conv(sh_ctx *c)
{
    bool qlinear = c->n->op == FP_OP_QLINEAR_CONV;
    const fp_shape *x, *w = sh_in(c, qlinear ? 3 : 1);
    window win;
    sh_result r = window_input(c, w, &x, &win);
    if (r != SH_OK)
        return r;
    int64_t group = win.group;
    if (w && w->rank != x->rank)
        return sh_fail(c, "weight rank %d differs from input rank %d", w->rank, x->rank);
    if (w && fp_dim_known(x->dims[1]) && fp_dim_known(w->dims[1]) && group > 0 &&
        x->dims[1].value != w->dims[1].value * group)
        return sh_fail(c,
                       "input has %" G_GINT64_FORMAT " channels but weight expects %" G_GINT64_FORMAT
                       " (%" G_GINT64_FORMAT " per group x %" G_GINT64_FORMAT " groups)",
                       x->dims[1].value, w->dims[1].value * group, w->dims[1].value, group);
    fp_shape out = sh_new(c, x->rank);
    out.dims[0] = x->dims[0];
    out.dims[1] = w ? w->dims[0] : sh_dim_unknown();
    for (int i = 0; i < win.nsp; i++)
        out.dims[2 + i] = window_out(&win, i, x->dims[2 + i], false);
    fp_dtype dt = sh_dt(c, 0);
    if (c->n->op == FP_OP_CONV_INTEGER)
        dt = FP_DT_INT32;
    else if (qlinear)
        dt = sh_val(c, 7) ? sh_dt(c, 7) : FP_DT_UINT8;
    sh_set(c, 0, dt, out);
    return SH_OK;
}

sh_result sh_rule_conv_transpose(sh_ctx *c)
{
    const fp_shape *x, *w = sh_in(c, 1);
    window win;
    sh_result r = window_input(c, w, &x, &win);
    if (r != SH_OK)
        return r;
    int nsp = win.nsp;
    fp_shape out = sh_new(c, x->rank);
    out.dims[0] = x->dims[0];
    out.dims[1] = w && fp_dim_known(w->dims[1]) ? sh_dim(w->dims[1].value * win.group) : sh_dim_unknown();
    int64_t ops[FP_MAX_RANK] = {0}, oshape[FP_MAX_RANK];
    int cnt = 0;
    sh_attr_ints(c->n, "output_padding", ops, FP_MAX_RANK, &cnt);
    bool have_oshape = sh_attr_ints(c->n, "output_shape", oshape, FP_MAX_RANK, &cnt);
    for (int i = 0; i < nsp; i++) {
        fp_dim in = x->dims[2 + i];
        if (have_oshape) {
            out.dims[2 + i] = sh_dim(oshape[cnt == nsp ? i : i + cnt - nsp]);
        } else if (!fp_dim_known(in)) {
            out.dims[2 + i] = sh_dim_unknown();
        } else if (strncmp(win.auto_pad, "SAME", 4) == 0) {
            out.dims[2 + i] = sh_dim(in.value * win.s[i]);
        } else {
            int64_t pb = win.pb[i], pe = win.pe[i];
            if (strcmp(win.auto_pad, "VALID") == 0)
                pb = pe = 0;
            out.dims[2 + i] = sh_dim(win.s[i] * (in.value - 1) + ops[i] + (win.k[i] - 1) * win.d[i] + 1 - pb - pe);
        }
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_pool(sh_ctx *c)
{
    const fp_shape *x;
    window win;
    sh_result r = window_input(c, NULL, &x, &win);
    if (r != SH_OK)
        return r;
    bool ceil_mode = fp_node_attr_int(c->n, "ceil_mode", 0) != 0;
    fp_shape out = sh_new(c, x->rank);
    out.dims[0] = x->dims[0];
    out.dims[1] = x->dims[1];
    for (int i = 0; i < win.nsp; i++)
        out.dims[2 + i] = window_out(&win, i, x->dims[2 + i], ceil_mode);
    sh_set(c, 0, sh_dt(c, 0), out);
    sh_set(c, 1, FP_DT_INT64, sh_copy(c, &out)); /* MaxPool indices */
    return SH_OK;
}

sh_result sh_rule_global_pool(sh_ctx *c)
{
    const fp_shape *x;
    sh_result r = sh_input(c, 2, &x);
    if (r != SH_OK)
        return r;
    fp_shape out = sh_copy(c, x);
    for (int32_t i = 2; i < x->rank; i++)
        out.dims[i] = sh_dim(1);
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_roi(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0), *rois = sh_in(c, 1);
    if (!x || !rois)
        return sh_unknown(c, "input or rois of unknown rank");
    fp_shape out = sh_new(c, 4);
    out.dims[0] = rois->dims[0];
    out.dims[1] = x->dims[1];
    if (c->n->op == FP_OP_MAX_ROI_POOL) {
        int64_t ps[2];
        int cnt = 0;
        if (!sh_attr_ints(c->n, "pooled_shape", ps, 2, &cnt) || cnt != 2)
            return sh_fail(c, "missing attribute pooled_shape");
        out.dims[2] = sh_dim(ps[0]);
        out.dims[3] = sh_dim(ps[1]);
    } else {
        out.dims[2] = sh_dim(fp_node_attr_int(c->n, "output_height", 1));
        out.dims[3] = sh_dim(fp_node_attr_int(c->n, "output_width", 1));
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_max_unpool(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t os[FP_MAX_RANK];
    int n = 0;
    if (sh_ints(c, 2, os, FP_MAX_RANK, &n)) {
        fp_shape out = sh_new(c, n);
        for (int i = 0; i < n; i++)
            out.dims[i] = sh_dim(os[i]);
        sh_set(c, 0, sh_dt(c, 0), out);
        return SH_OK;
    }
    if (sh_val(c, 2)) {
        sh_set(c, 0, sh_dt(c, 0), sh_new(c, x->rank));
        return sh_unknown(c, "output_shape input is not a known constant");
    }
    window win;
    sh_result r = read_window(c, x->rank - 2, NULL, &win);
    if (r != SH_OK)
        return r;
    fp_shape out = sh_copy(c, x);
    for (int i = 0; i < x->rank - 2; i++) {
        fp_dim in = x->dims[2 + i];
        out.dims[2 + i] = fp_dim_known(in) ? sh_dim((in.value - 1) * win.s[i] + win.k[i] - win.pb[i] - win.pe[i])
                                           : sh_dim_unknown();
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- contractions */

sh_result sh_rule_gemm(sh_ctx *c)
{
    const fp_shape *a = sh_in(c, 0), *b = sh_in(c, 1);
    if (!a || !b)
        return sh_unknown(c, "operand of unknown rank");
    if (a->rank != 2 || b->rank != 2)
        return sh_fail(c, "Gemm operands must be 2-D (got rank %d and %d)", a->rank, b->rank);
    bool ta = fp_node_attr_int(c->n, "transA", 0), tb = fp_node_attr_int(c->n, "transB", 0);
    fp_dim m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1], kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (fp_dim_known(ka) && fp_dim_known(kb) && ka.value != kb.value)
        return sh_fail(c, "inner dimensions differ: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, ka.value, kb.value);
    fp_shape out = sh_new(c, 2);
    out.dims[0] = m;
    out.dims[1] = n;
    const fp_shape *cs = sh_in(c, 2); /* C: unidirectionally broadcastable to (M, N) */
    if (cs && cs->rank > 2)
        return sh_fail(c, "C has rank %d; it must broadcast to the 2-D result", cs->rank);
    for (int32_t d = 0; cs && d < cs->rank; d++) {
        fp_dim cd = cs->dims[d], od = out.dims[2 - cs->rank + d];
        if (fp_dim_known(cd) && cd.value != 1 && fp_dim_known(od) && cd.value != od.value) {
            g_autofree char *sc = fp_shape_to_string(cs), *so = fp_shape_to_string(&out);
            return sh_fail(c, "C of shape %s does not broadcast to the result %s", sc, so);
        }
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_matmul(sh_ctx *c)
{
    bool q = c->n->op == FP_OP_QLINEAR_MATMUL;
    const fp_shape *a = sh_in(c, 0), *b = sh_in(c, q ? 3 : 1);
    if (!a || !b)
        return sh_unknown(c, "operand of unknown rank");
    if (a->rank == 0 || b->rank == 0)
        return sh_fail(c, "MatMul operands must not be scalars");
    bool ta = fp_node_attr_int(c->n, "transA", 0), tb = fp_node_attr_int(c->n, "transB", 0);
    /* promote 1-D operands as numpy.matmul does */
    fp_dim one = sh_dim(1);
    fp_dim ad[FP_MAX_RANK], bd[FP_MAX_RANK];
    int ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof(fp_dim) * ar);
    memcpy(bd, b->dims, sizeof(fp_dim) * br);
    if (ar == 1) {
        ad[1] = ad[0];
        ad[0] = one;
        ar = 2;
    }
    if (br == 1) {
        bd[1] = one;
        br = 2;
    }
    if (ta) {
        fp_dim t = ad[ar - 1];
        ad[ar - 1] = ad[ar - 2];
        ad[ar - 2] = t;
    }
    if (tb) {
        fp_dim t = bd[br - 1];
        bd[br - 1] = bd[br - 2];
        bd[br - 2] = t;
    }
    fp_dim ka = ad[ar - 1], kb = bd[br - 2];
    if (fp_dim_known(ka) && fp_dim_known(kb) && ka.value != kb.value)
        return sh_fail(c, "inner dimensions differ: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, ka.value, kb.value);
    fp_shape ba = {ar - 2, ad}, bb = {br - 2, bd}, batch;
    if (!sh_broadcast(c, &ba, &bb, &batch))
        return SH_ERROR;
    int rank = batch.rank + (a->rank > 1) + (b->rank > 1);
    fp_shape out = sh_new(c, rank);
    memcpy(out.dims, batch.dims, sizeof(fp_dim) * batch.rank);
    int k = batch.rank;
    if (a->rank > 1)
        out.dims[k++] = ad[ar - 2];
    if (b->rank > 1)
        out.dims[k++] = bd[br - 1];
    fp_dtype dt = sh_dt(c, 0);
    if (c->n->op == FP_OP_MATMUL_INTEGER)
        dt = FP_DT_INT32;
    else if (q)
        dt = sh_val(c, 7) ? sh_dt(c, 7) : FP_DT_UINT8;
    sh_set(c, 0, dt, out);
    return SH_OK;
}

/* What Einsum's operands say of its letters (ASCII letters index the arrays). */
typedef struct {
    fp_dim letter[128]; /* the dim each letter labels: a known one other than 1 wins */
    int count[128];     /* how many operand dims each letter labels */
    fp_shape ell;       /* the operands' ellipsis dims broadcast together */
    bool have_ell;      /* an operand has an ellipsis */
} einsum_dims;

/* Reads operand t's term (letters and at most one "...") against its shape s into e; SH_ERROR
 * after sh_fail on a rank mismatch, a bad character or ellipsis dims that do not broadcast. */
static sh_result einsum_term(sh_ctx *c, uint32_t t, const char *term, const fp_shape *s, einsum_dims *e)
{
    const char *dots = strstr(term, "...");
    int nletters = (int)strlen(term) - (dots ? 3 : 0);
    int ell_rank = s->rank - nletters;
    if (ell_rank < 0 || (!dots && ell_rank != 0))
        return sh_fail(c, "operand %u has rank %d, equation term '%s'", t, s->rank, term);
    int d = 0;
    for (const char *p = term; *p; p++) {
        if (p == dots) {
            fp_shape es = {ell_rank, s->dims + d};
            if (!e->have_ell) {
                e->ell = sh_copy(c, &es);
                e->have_ell = true;
            } else if (!sh_broadcast(c, &e->ell, &es, &e->ell)) {
                return SH_ERROR;
            }
            d += ell_rank;
            p += 2;
            continue;
        }
        unsigned char ch = (unsigned char)*p;
        if (ch >= 128 || !g_ascii_isalpha(ch))
            return sh_fail(c, "bad character '%c' in equation", *p);
        fp_dim dim = s->dims[d++];
        if (!fp_dim_known(e->letter[ch]) || (fp_dim_known(dim) && dim.value != 1))
            e->letter[ch] = dim;
        e->count[ch]++;
    }
    return SH_OK;
}

/* Reads every operand's term (one per input, NULL-terminated) into e, initialized here; SH_UNKNOWN
 * when an operand's rank is unknown, SH_ERROR as einsum_term. */
static sh_result einsum_operands(sh_ctx *c, char **terms, einsum_dims *e)
{
    for (int i = 0; i < 128; i++) {
        e->letter[i] = sh_dim_unknown();
        e->count[i] = 0;
    }
    e->ell = (fp_shape){0, NULL};
    e->have_ell = false;
    for (uint32_t t = 0; terms[t]; t++) {
        const fp_shape *s = sh_in(c, t);
        if (!s)
            return sh_unknown(c, "operand %u of unknown rank", t);
        sh_result r = einsum_term(c, t, terms[t], s, e);
        if (r != SH_OK)
            return r;
    }
    return SH_OK;
}

/* The letters of the explicit output term o into out_letters (NUL-terminated, room for 128);
 * *out_ell whether o has an ellipsis. SH_ERROR after sh_fail when o is too long for FP_MAX_RANK or
 * holds anything but letters and at most one "...". */
static sh_result einsum_explicit_letters(sh_ctx *c, const char *o, char *out_letters, bool *out_ell)
{
    const char *odots = strstr(o, "...");
    *out_ell = odots != NULL;
    if (strlen(o) > 3 + FP_MAX_RANK)
        return sh_fail(c, "the equation's output term is longer than rank %d allows", FP_MAX_RANK);
    for (const char *p = o; *p; p++) { /* letters and at most one "...", as on the inputs */
        if (p == odots)
            p += 2;
        else if (!g_ascii_isalpha(*p))
            return sh_fail(c, "bad character '%c' in the equation's output term", *p);
    }
    int k = 0;
    for (const char *p = o; *p && k < 127; p++)
        if (g_ascii_isalpha(*p))
            out_letters[k++] = *p;
    out_letters[k] = 0;
    return SH_OK;
}

/* The implicit output's letters into out_letters (NUL-terminated): those that label one operand
 * dim only, in alphabetical order (upper case first). */
static void einsum_implicit_letters(const einsum_dims *e, char *out_letters)
{
    int k = 0;
    for (int ch = 'A'; ch <= 'z'; ch++)
        if (g_ascii_isalpha(ch) && e->count[ch] == 1)
            out_letters[k++] = (char)ch;
    out_letters[k] = 0;
}

/* The output shape of rank `rank`: with an explicit term o, its letters' dims and the ellipsis
 * dims where its "..." is; else the ellipsis dims (when out_ell) then out_letters' dims. */
static fp_shape einsum_output(sh_ctx *c, const einsum_dims *e, const char *o, const char *out_letters, bool out_ell,
                              int rank)
{
    fp_shape out = sh_new(c, rank);
    int k = 0;
    if (o) {
        for (const char *p = o; *p; p++) {
            if (p == strstr(o, "...")) {
                for (int i = 0; i < e->ell.rank; i++)
                    out.dims[k++] = e->ell.dims[i];
                p += 2;
            } else if (g_ascii_isalpha(*p)) {
                out.dims[k++] = e->letter[(unsigned char)*p];
            }
        }
        return out;
    }
    for (int i = 0; out_ell && i < e->ell.rank; i++)
        out.dims[k++] = e->ell.dims[i];
    for (int i = 0; out_letters[i]; i++)
        out.dims[k++] = e->letter[(unsigned char)out_letters[i]];
    return out;
}

/* Einsum: explicit and implicit outputs, with one ellipsis per term. */
sh_result sh_rule_einsum(sh_ctx *c)
{
    const char *eq = fp_node_attr_string(c->n, "equation", NULL);
    if (!eq)
        return sh_fail(c, "missing attribute equation");
    GString *buf = g_string_new(NULL);
    for (const char *p = eq; *p; p++)
        if (*p != ' ')
            g_string_append_c(buf, *p);
    g_autofree char *q = g_string_free(buf, FALSE);
    char *arrow = strstr(q, "->");
    if (arrow)
        *arrow = 0;
    g_auto(GStrv) terms = g_strsplit(q, ",", -1);
    if (g_strv_length(terms) != c->n->n_inputs)
        return sh_fail(c, "equation '%s' has %u operands but the node has %u inputs", eq, g_strv_length(terms),
                       c->n->n_inputs);
    einsum_dims e;
    sh_result r = einsum_operands(c, terms, &e);
    if (r != SH_OK)
        return r;
    const char *o = arrow ? arrow + 2 : NULL;
    char out_letters[128];
    bool out_ell = e.have_ell;
    if (o && einsum_explicit_letters(c, o, out_letters, &out_ell) != SH_OK)
        return SH_ERROR;
    if (!o)
        einsum_implicit_letters(&e, out_letters);
    int rank = (int)strlen(out_letters) + (out_ell ? e.ell.rank : 0);
    if (rank > FP_MAX_RANK)
        return sh_fail(c, "output rank %d exceeds the limit of %d", rank, FP_MAX_RANK);
    sh_set(c, 0, sh_dt(c, 0), einsum_output(c, &e, o, out_letters, out_ell, rank));
    return SH_OK;
}

sh_result sh_rule_det(sh_ctx *c)
{
    const fp_shape *x;
    sh_result r = sh_input(c, 2, &x);
    if (r != SH_OK)
        return r;
    fp_shape out = {x->rank - 2, x->dims};
    sh_set(c, 0, sh_dt(c, 0), sh_copy(c, &out));
    return SH_OK;
}

/* ---------------------------------------------------------------- normalization */

sh_result sh_rule_batch_norm(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    const fp_shape *x = sh_in(c, 0);
    fp_shape ch = sh_new(c, 1);
    ch.dims[0] = x->rank > 1 ? x->dims[1] : sh_dim_unknown();
    for (uint32_t i = 1; i < c->n->n_outputs; i++)
        sh_set(c, i, sh_val(c, 3) ? sh_dt(c, 3) : sh_dt(c, 0), ch);
    return SH_OK;
}

sh_result sh_rule_layer_norm(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    const fp_shape *x = sh_in(c, 0);
    int32_t axis;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", -1), x->rank, &axis))
        return sh_fail(c, "axis out of range for rank %d", x->rank);
    fp_shape stat = sh_copy(c, x);
    for (int32_t i = axis; i < x->rank; i++)
        stat.dims[i] = sh_dim(1);
    fp_dtype st = (fp_dtype)fp_node_attr_int(c->n, "stash_type", FP_DT_FLOAT);
    for (uint32_t i = 1; i < c->n->n_outputs; i++)
        sh_set(c, i, fp_dtype_valid(st) ? st : FP_DT_FLOAT, stat);
    return SH_OK;
}

sh_result sh_rule_skip_layer_norm(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    const fp_shape *x = sh_in(c, 0);
    fp_shape stat = sh_copy(c, x);
    if (x->rank > 0)
        stat.dims[x->rank - 1] = sh_dim(1);
    sh_set(c, 1, FP_DT_FLOAT, stat);
    sh_set(c, 2, FP_DT_FLOAT, stat);
    sh_set(c, 3, sh_dt(c, 0), sh_copy(c, x));
    return SH_OK;
}

/* Input i of an EmbedLayerNormalization, when its shape is known: rank `rank` with the hidden size
 * h (when known) on its last axis. */
static sh_result embed_input(sh_ctx *c, uint32_t i, const char *what, int32_t rank, fp_dim h)
{
    const fp_shape *s = sh_in(c, i);
    if (!s)
        return SH_OK;
    if (s->rank != rank)
        return sh_fail(c, "%s rank %d, expected %d", what, s->rank, rank);
    fp_dim last = s->dims[rank - 1];
    if (fp_dim_known(last) && fp_dim_known(h) && last.value != h.value)
        return sh_fail(c, "%s has hidden size %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT " (word_embedding's)",
                       what, last.value, h.value);
    return SH_OK;
}

/* EmbedLayerNormalization (com.microsoft): input_ids [B, S] looks up word_embedding [V, H] and
 * position_embedding [P, H] (segment_embedding too, with segment_ids), then normalizes over H with
 * gamma and beta [H]. Output 0 and embedding_sum (output 2) are [B, S, H] of the tables' dtype;
 * mask_index (output 1) is [B] int32. */
sh_result sh_rule_embed_layer_norm(sh_ctx *c)
{
    if (!sh_val(c, 0) || !sh_val(c, 2) || !sh_val(c, 3) || !sh_val(c, 5) || !sh_val(c, 6))
        return sh_fail(c, "input_ids, word_embedding, position_embedding, gamma and beta (inputs 0, 2, 3, 5, 6) "
                          "are required");
    if (!sh_val(c, 1) != !sh_val(c, 4))
        return sh_fail(c, "segment_ids and segment_embedding (inputs 1, 4) must both be given or both omitted");
    const fp_shape *ids = sh_in(c, 0), *we = sh_in(c, 2);
    if (!ids || !we)
        return sh_unknown(c, "input_ids or word_embedding of unknown rank");
    if (ids->rank != 2)
        return sh_fail(c, "input_ids rank %d, expected 2 (batch, tokens)", ids->rank);
    if (we->rank != 2)
        return sh_fail(c, "word_embedding rank %d, expected 2 (vocabulary, hidden)", we->rank);
    fp_dim h = we->dims[1];
    static const struct {
        uint32_t i;
        const char *what;
        int32_t rank;
    } rest[] = {{3, "position_embedding", 2}, {4, "segment_embedding", 2}, {5, "gamma", 1}, {6, "beta", 1}};
    for (size_t k = 0; k < G_N_ELEMENTS(rest); k++) {
        sh_result r = embed_input(c, rest[k].i, rest[k].what, rest[k].rank, h);
        if (r != SH_OK)
            return r;
    }
    fp_shape out = sh_new(c, 3), mask = sh_new(c, 1);
    out.dims[0] = mask.dims[0] = ids->dims[0];
    out.dims[1] = ids->dims[1];
    out.dims[2] = h;
    sh_set(c, 0, sh_dt(c, 2), out);
    sh_set(c, 1, FP_DT_INT32, mask);
    sh_set(c, 2, sh_dt(c, 2), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- reductions */

/* Opset from which a Reduce op takes its axes as input 1 (ReduceSum 13, the others 18). */
static int64_t axes_input_opset(fp_op op) { return op == FP_OP_REDUCE_SUM ? 13 : 18; }

sh_result sh_rule_reduce(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    bool keep = fp_node_attr_int(c->n, "keepdims", 1) != 0;
    int64_t axes[FP_MAX_RANK];
    int n = 0;
    bool noop = fp_node_attr_int(c->n, "noop_with_empty_axes", 0) != 0;
    if (c->opset >= axes_input_opset(c->n->op) && c->n->n_inputs > 1 && sh_val(c, 1)) {
        if (!sh_ints(c, 1, axes, FP_MAX_RANK, &n))
            return sh_unknown(c, "axes input is not a known constant");
    } else if (!sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &n)) {
        n = 0;
    }
    bool reduce[FP_MAX_RANK] = {false};
    if (n == 0 && !noop) {
        for (int32_t i = 0; i < x->rank; i++)
            reduce[i] = true;
    }
    for (int i = 0; i < n; i++) {
        int32_t a;
        if (!sh_axis(axes[i], x->rank, &a))
            return sh_fail(c, "axis %" G_GINT64_FORMAT " out of range for rank %d", axes[i], x->rank);
        reduce[a] = true;
    }
    int rank = 0;
    for (int32_t i = 0; i < x->rank; i++)
        rank += keep || !reduce[i];
    fp_shape out = sh_new(c, rank);
    for (int32_t i = 0, k = 0; i < x->rank; i++) {
        if (reduce[i] && !keep)
            continue;
        out.dims[k++] = reduce[i] ? sh_dim(1) : x->dims[i];
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_arg(sh_ctx *c)
{
    const fp_shape *x;
    int32_t axis;
    sh_result r = sh_input_axis(c, 0, &x, &axis);
    if (r != SH_OK)
        return r;
    bool keep = fp_node_attr_int(c->n, "keepdims", 1) != 0;
    fp_shape out = sh_new(c, keep ? x->rank : x->rank - 1);
    for (int32_t i = 0, k = 0; i < x->rank; i++) {
        if (i == axis && !keep)
            continue;
        out.dims[k++] = i == axis ? sh_dim(1) : x->dims[i];
    }
    sh_set(c, 0, FP_DT_INT64, out);
    return SH_OK;
}

sh_result sh_rule_topk(sh_ctx *c)
{
    const fp_shape *x;
    int32_t axis;
    sh_result r = sh_input_axis(c, -1, &x, &axis);
    if (r != SH_OK)
        return r;
    int64_t k[1];
    int n = 0;
    fp_shape out = sh_copy(c, x);
    if (c->opset >= 10) {
        if (sh_ints(c, 1, k, 1, &n) && n == 1)
            out.dims[axis] = sh_dim(k[0]);
        else
            out.dims[axis] = sh_dim_unknown();
    } else {
        out.dims[axis] = sh_dim(fp_node_attr_int(c->n, "k", 0));
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    sh_set(c, 1, FP_DT_INT64, out);
    return SH_OK;
}

/* ---------------------------------------------------------------- recurrent */

sh_result sh_rule_rnn(sh_ctx *c)
{
    const fp_shape *x;
    sh_result r = sh_input_rank(c, 3, &x);
    if (r != SH_OK)
        return r;
    int64_t hidden = fp_node_attr_int(c->n, "hidden_size", -1);
    const fp_shape *rw = sh_in(c, 2); /* the recurrence weights R: [dirs, gates * hidden, hidden] */
    fp_dim h = hidden > 0 ? sh_dim(hidden) : rw && rw->rank == 3 ? rw->dims[2] : sh_dim_unknown();
    const char *dir = fp_node_attr_string(c->n, "direction", "forward");
    fp_dim nd = sh_dim(strcmp(dir, "bidirectional") == 0 ? 2 : 1);
    bool batch_first = fp_node_attr_int(c->n, "layout", 0) == 1;
    fp_dim seq = x->dims[batch_first ? 1 : 0], batch = x->dims[batch_first ? 0 : 1];
    fp_shape y = sh_new(c, 4), yh = sh_new(c, 3);
    if (batch_first) {
        y.dims[0] = batch, y.dims[1] = seq, y.dims[2] = nd, y.dims[3] = h;
        yh.dims[0] = batch, yh.dims[1] = nd, yh.dims[2] = h;
    } else {
        y.dims[0] = seq, y.dims[1] = nd, y.dims[2] = batch, y.dims[3] = h;
        yh.dims[0] = nd, yh.dims[1] = batch, yh.dims[2] = h;
    }
    sh_set(c, 0, sh_dt(c, 0), y);
    sh_set(c, 1, sh_dt(c, 0), yh);
    sh_set(c, 2, sh_dt(c, 0), yh);
    return SH_OK;
}

/* ---------------------------------------------------------------- losses */

sh_result sh_rule_loss(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    const char *red = fp_node_attr_string(c->n, "reduction", "mean");
    if (strcmp(red, "none") == 0) {
        /* [N, C, d1, ...] -> [N, d1, ...] */
        fp_shape out = sh_new(c, x->rank - 1);
        out.dims[0] = x->dims[0];
        for (int32_t i = 2; i < x->rank; i++)
            out.dims[i - 1] = x->dims[i];
        sh_set(c, 0, sh_dt(c, 0), out);
    } else {
        sh_set(c, 0, sh_dt(c, 0), sh_new(c, 0));
    }
    sh_set(c, 1, sh_dt(c, 0), sh_copy(c, x)); /* SoftmaxCrossEntropyLoss log_prob */
    return SH_OK;
}
