/* shape_rules_data.c - shape rules of data-movement, shape, sequence and miscellaneous ops.
 * Formulas follow the ONNX operator specifications (onnx/docs/Operators.md), per opset. */
#include <math.h>
#include <string.h>

#include "shape_rules.h"

/* Dims described by integer input i (symbols kept), e.g. a Reshape or Expand target. */
static bool input_dims(sh_ctx *c, uint32_t i, fp_dim *out, int max, int *n)
{
    fp_value *v = sh_val(c, i);
    if (!v)
        return false;
    if (v->n_sval >= 0 && v->n_sval <= max) {
        for (int k = 0; k < v->n_sval; k++)
            out[k] = v->sval[k].sym == fp_sval_unknown ? (fp_dim){-1, NULL} : v->sval[k];
        *n = v->n_sval;
        /* a literal < 0 is not a dim: callers interpret -1 themselves; unknown elements are
         * distinguished by the caller through input_known() */
        return true;
    }
    int64_t vals[FP_MAX_RANK];
    if (max > FP_MAX_RANK || !sh_ints(c, i, vals, max, n))
        return false;
    for (int k = 0; k < *n; k++)
        out[k] = sh_dim(vals[k]);
    return true;
}

/* True when element k of input i's sval is unknown (not a literal and not a symbol). */
static bool elem_unknown(sh_ctx *c, uint32_t i, int k)
{
    fp_value *v = sh_val(c, i);
    return v && v->n_sval > k && v->sval[k].sym == fp_sval_unknown;
}

static void set_typed(sh_ctx *c, uint32_t out, fp_type_kind type, fp_dtype dt, fp_shape s)
{
    sh_set(c, out, dt, s);
    if (out < c->n->n_outputs && c->n->outputs[out])
        c->n->outputs[out]->type = type;
}

/* ---------------------------------------------------------------- reshapes */

/* The target shape of a Reshape into t (room for FP_MAX_RANK), *n its length: input 1's known
 * dims (opset 5 on, or a node with a second input), else the `shape` attribute. SH_OK when it is
 * known; else SH_UNKNOWN, having given the output its rank when input 1's length is known, or
 * SH_ERROR after sh_fail when that length is over FP_MAX_RANK. In c->runtime_view before opset 14
 * the output gets no rank: ONNX's inference of Reshape-5 and -13 reads a constant target only
 * (measured on ONNX Runtime 1.30: no shape; Reshape-14 gives the rank). */
static sh_result reshape_target(sh_ctx *c, fp_dim *t, int *n)
{
    bool have = false;
    if (c->opset >= 5 || c->n->n_inputs > 1) {
        have = input_dims(c, 1, t, FP_MAX_RANK, n);
    } else {
        int64_t a[FP_MAX_RANK];
        if ((have = sh_attr_ints(c->n, "shape", a, FP_MAX_RANK, n)))
            for (int i = 0; i < *n; i++)
                t[i] = sh_dim(a[i]);
    }
    if (have)
        return SH_OK;
    const fp_shape *ts = c->runtime_view && c->opset < 14 ? NULL : sh_in(c, 1);
    if (ts && ts->rank == 1 && fp_dim_known(ts->dims[0])) {
        if (ts->dims[0].value > FP_MAX_RANK)
            return sh_fail(c, "target shape has %" G_GINT64_FORMAT " elements: rank over the limit of %d",
                           ts->dims[0].value, FP_MAX_RANK);
        sh_set(c, 0, sh_dt(c, 0), sh_new(c, (int32_t)ts->dims[0].value));
        return sh_unknown(c, "target shape is not a known constant (rank %d)", (int)ts->dims[0].value);
    }
    return sh_unknown(c, "target shape is not a known constant");
}

/* The -1 dim `infer` of a Reshape's output from the input x (NULL: rank unknown): the element
 * count of x over that of out's other dims, once the symbols they share cancel. Left unknown when
 * a dim of either is unknown, a product overflows, or symbols of out remain; a lone remaining
 * symbol of x becomes the dim when the known parts are equal. SH_ERROR after sh_fail when the
 * known counts do not divide. */
static sh_result reshape_infer(sh_ctx *c, const fp_shape *x, fp_shape *out, int infer)
{
    out->dims[infer] = sh_dim_unknown();
    if (!x)
        return SH_OK;
    /* total(in) = known_in * syms_in; the same for out: cancel common symbols */
    int64_t kin = 1, kout = 1;
    const char *sin[FP_MAX_RANK], *sout[FP_MAX_RANK];
    int nsin = 0, nsout = 0, unk = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (fp_dim_known(x->dims[i])) {
            if (__builtin_mul_overflow(kin, x->dims[i].value, &kin))
                unk++;
        } else if (x->dims[i].sym)
            sin[nsin++] = x->dims[i].sym;
        else
            unk++;
    }
    for (int i = 0; i < out->rank; i++) {
        if (i == infer)
            continue;
        if (fp_dim_known(out->dims[i])) {
            if (__builtin_mul_overflow(kout, out->dims[i].value, &kout))
                unk++;
        } else if (out->dims[i].sym)
            sout[nsout++] = out->dims[i].sym;
        else
            unk++;
    }
    for (int i = 0; i < nsout; i++)
        for (int j = 0; j < nsin; j++)
            if (sin[j] == sout[i]) {
                sin[j] = sin[--nsin];
                sout[i--] = sout[--nsout];
                break;
            }
    if (unk || nsout || kout <= 0)
        return SH_OK;
    if (nsin == 0) {
        if (kin % kout)
            return sh_fail(c, "cannot reshape %" G_GINT64_FORMAT " elements into a multiple of %" G_GINT64_FORMAT, kin,
                           kout);
        out->dims[infer] = sh_dim(kin / kout);
    } else if (nsin == 1 && kin == kout) {
        out->dims[infer] = (fp_dim){-1, sin[0]};
    }
    return SH_OK;
}

sh_result sh_rule_reshape(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    fp_dim t[FP_MAX_RANK];
    int n = 0;
    sh_result r = reshape_target(c, t, &n);
    if (r != SH_OK)
        return r;
    bool allowzero = fp_node_attr_int(c->n, "allowzero", 0) != 0;
    fp_shape out = sh_new(c, n);
    int infer = -1;
    for (int i = 0; i < n; i++) {
        if (elem_unknown(c, 1, i)) {
            out.dims[i] = sh_dim_unknown();
        } else if (t[i].sym) {
            out.dims[i] = t[i];
        } else if (t[i].value == -1) {
            if (infer >= 0)
                return sh_fail(c, "more than one -1 in the target shape");
            infer = i;
        } else if (t[i].value == 0 && !allowzero) {
            /* copies the input's dim; unknown (the rank kept) when the input's rank is */
            if (x && i >= x->rank)
                return sh_fail(c, "target dim %d is 0 but the input has rank %d", i, x->rank);
            out.dims[i] = x ? x->dims[i] : sh_dim_unknown();
        } else if (t[i].value < 0) {
            return sh_fail(c, "invalid target dim %" G_GINT64_FORMAT, t[i].value);
        } else {
            out.dims[i] = t[i];
        }
    }
    if (infer >= 0 && reshape_infer(c, x, &out, infer) != SH_OK)
        return SH_ERROR;
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_flatten(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t a = fp_node_attr_int(c->n, "axis", 1);
    int32_t axis = (int32_t)(a < 0 ? a + x->rank : a);
    if (axis < 0 || axis > x->rank)
        return sh_fail(c, "axis %" G_GINT64_FORMAT " out of range for rank %d", a, x->rank);
    fp_shape out = sh_new(c, 2);
    out.dims[0] = out.dims[1] = sh_dim(1);
    for (int32_t i = 0; i < x->rank; i++)
        out.dims[i < axis ? 0 : 1] = sh_dim_mul(out.dims[i < axis ? 0 : 1], x->dims[i]);
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* Input 0 of a Squeeze/Unsqueeze into *x and its axes (attribute before opset 13, input 1 from
 * 13) into axes (room for FP_MAX_RANK), *n their count or -1 when there are none. SH_UNKNOWN as
 * sh_input, or with the reason `unknown_axes` when the axes input is not a known constant. */
static sh_result squeeze_args(sh_ctx *c, const char *unknown_axes, const fp_shape **x, int64_t *axes, int *n)
{
    sh_result r = sh_input(c, 0, x);
    if (r != SH_OK)
        return r;
    int count = 0;
    *n = -1;
    if (c->opset >= 13) {
        if (sh_val(c, 1)) {
            if (!sh_ints(c, 1, axes, FP_MAX_RANK, &count))
                return sh_unknown(c, "%s", unknown_axes);
            *n = count;
        }
    } else if (sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &count)) {
        *n = count;
    }
    return SH_OK;
}

sh_result sh_rule_squeeze(sh_ctx *c)
{
    const fp_shape *x;
    int64_t axes[FP_MAX_RANK];
    int n;
    sh_result r = squeeze_args(c, "axes input is not a known constant", &x, axes, &n);
    if (r != SH_OK)
        return r;
    bool drop[FP_MAX_RANK] = {false};
    if (n < 0) {
        for (int32_t i = 0; i < x->rank; i++) {
            if (!fp_dim_known(x->dims[i]))
                return sh_unknown(c, "cannot tell which dims are 1: dim %d unknown", i);
            drop[i] = x->dims[i].value == 1;
        }
    }
    for (int i = 0; i < n; i++) {
        int32_t a;
        if (!sh_axis(axes[i], x->rank, &a))
            return sh_fail(c, "axis %" G_GINT64_FORMAT " out of range for rank %d", axes[i], x->rank);
        if (fp_dim_known(x->dims[a]) && x->dims[a].value != 1)
            return sh_fail(c, "cannot squeeze dim %d of size %" G_GINT64_FORMAT, a, x->dims[a].value);
        drop[a] = true;
    }
    int rank = 0;
    for (int32_t i = 0; i < x->rank; i++)
        rank += !drop[i];
    fp_shape out = sh_new(c, rank);
    for (int32_t i = 0, k = 0; i < x->rank; i++)
        if (!drop[i])
            out.dims[k++] = x->dims[i];
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_unsqueeze(sh_ctx *c)
{
    const fp_shape *x;
    int64_t axes[FP_MAX_RANK];
    int n;
    sh_result r = squeeze_args(c, "axes not known", &x, axes, &n);
    if (r != SH_OK)
        return r;
    if (n < 0)
        return sh_unknown(c, "axes not known");
    int32_t rank = x->rank + n;
    if (rank > FP_MAX_RANK)
        return sh_fail(c, "output rank %d exceeds %d", rank, FP_MAX_RANK);
    bool ins[FP_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int32_t a;
        if (!sh_axis(axes[i], rank, &a) || ins[a])
            return sh_fail(c, "axis %" G_GINT64_FORMAT " invalid for output rank %d", axes[i], rank);
        ins[a] = true;
    }
    fp_shape out = sh_new(c, rank);
    for (int32_t i = 0, k = 0; i < rank; i++)
        out.dims[i] = ins[i] ? sh_dim(1) : x->dims[k++];
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* Identity passes any type through (tensors, sequences, optionals). */
sh_result sh_rule_identity(sh_ctx *c)
{
    fp_value *in = sh_val(c, 0);
    if (!in || (in->shape.rank < 0 && in->type == FP_TYPE_UNKNOWN))
        return sh_unknown(c, "input type unknown");
    set_typed(c, 0, in->type == FP_TYPE_UNKNOWN ? FP_TYPE_TENSOR : in->type, in->dtype, in->shape);
    fp_value *out = sh_out(c, 0);
    if (out) {
        out->elem_kind = in->elem_kind;
        fp_value_set_elems(out, fp_value_elems(in), fp_value_n_elems(in));
    }
    return in->shape.rank < 0 && in->type == FP_TYPE_TENSOR ? sh_unknown(c, "input has unknown rank") : SH_OK;
}

sh_result sh_rule_dropout(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r != SH_OK)
        return r;
    sh_set(c, 1, c->opset >= 10 ? FP_DT_BOOL : sh_dt(c, 0), sh_copy(c, sh_in(c, 0)));
    return SH_OK;
}

sh_result sh_rule_transpose(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t perm[FP_MAX_RANK];
    int n = 0;
    if (!sh_attr_ints(c->n, "perm", perm, FP_MAX_RANK, &n)) {
        n = x->rank;
        for (int i = 0; i < n; i++)
            perm[i] = n - 1 - i;
    }
    if (n != x->rank)
        return sh_fail(c, "perm has %d entries for rank %d", n, x->rank);
    bool seen[FP_MAX_RANK] = {false};
    fp_shape out = sh_new(c, n);
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
            return sh_fail(c, "perm is not a permutation of 0..%d", n - 1);
        seen[perm[i]] = true;
        out.dims[i] = x->dims[perm[i]];
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- concat / split / slice */

/* The better-known of two dims that must be equal. */
static fp_dim merge_dim(fp_dim a, fp_dim b)
{
    if (fp_dim_known(a) || a.sym)
        return a;
    return b;
}

sh_result sh_rule_concat(sh_ctx *c)
{
    const fp_shape *first = NULL;
    for (uint32_t i = 0; i < c->n->n_inputs && !first; i++)
        first = sh_in(c, i);
    if (!first)
        return sh_unknown(c, "inputs of unknown rank");
    int32_t axis;
    /* Concat-1 defaults axis to 1; from opset 4 it is required (shape_attrs.c) */
    if (!sh_axis(fp_node_attr_int(c->n, "axis", c->opset && c->opset < 4 ? 1 : 0), first->rank, &axis))
        return sh_fail(c, "axis out of range for rank %d", first->rank);
    fp_shape out = sh_copy(c, first);
    out.dims[axis] = sh_dim(0);
    for (uint32_t i = 0; i < c->n->n_inputs; i++) {
        if (!sh_val(c, i))
            continue;
        const fp_shape *s = sh_in(c, i);
        if (!s)
            return sh_unknown(c, "input %u has unknown rank", i);
        if (s->rank != first->rank)
            return sh_fail(c, "input %u has rank %d, input 0 has rank %d", i, s->rank, first->rank);
        for (int32_t d = 0; d < s->rank; d++) {
            if (d == axis) {
                out.dims[d] = sh_dim_add(out.dims[d], s->dims[d]);
            } else {
                if (fp_dim_known(s->dims[d]) && fp_dim_known(out.dims[d]) && s->dims[d].value != out.dims[d].value)
                    return sh_fail(c, "input %u dim %d is %" G_GINT64_FORMAT ", input 0 has %" G_GINT64_FORMAT, i, d,
                                   s->dims[d].value, out.dims[d].value);
                out.dims[d] = merge_dim(out.dims[d], s->dims[d]);
            }
        }
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_split(sh_ctx *c)
{
    const fp_shape *x;
    int32_t axis;
    sh_result r = sh_input_axis(c, 0, &x, &axis);
    if (r != SH_OK)
        return r;
    uint32_t nout = c->n->n_outputs;
    int64_t split[FP_MAX_RANK * 4];
    int n = 0;
    bool have = false;
    if (c->opset >= 13 && sh_val(c, 1))
        have = sh_ints(c, 1, split, G_N_ELEMENTS(split), &n);
    else if (c->opset < 13)
        have = sh_attr_ints(c->n, "split", split, G_N_ELEMENTS(split), &n);
    if (c->opset >= 13 && sh_val(c, 1) && !have)
        return sh_unknown(c, "split sizes are not known constants");
    fp_dim total = x->dims[axis];
    for (uint32_t o = 0; o < nout; o++) {
        fp_shape out = sh_copy(c, x);
        if (have) {
            if ((uint32_t)n != nout)
                return sh_fail(c, "%d split sizes for %u outputs", n, nout);
            out.dims[axis] = sh_dim(split[o]);
        } else if (fp_dim_known(total)) {
            int64_t chunk = (total.value + nout - 1) / nout;
            if (c->opset < 18 && total.value % nout)
                return sh_fail(c, "dim %" G_GINT64_FORMAT " does not split evenly into %u", total.value, nout);
            int64_t rest = total.value - chunk * o;
            out.dims[axis] = sh_dim(rest < chunk ? MAX(rest, 0) : chunk);
        } else {
            out.dims[axis] = sh_dim_unknown();
        }
        sh_set(c, o, sh_dt(c, 0), out);
    }
    return SH_OK;
}

/* Length of a slice of a dim of size `dim` (ONNX Slice clamping rules). */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = CLAMP(start, 0, dim);
        end = CLAMP(end, 0, dim);
        return end > start ? (end - start + step - 1) / step : 0;
    }
    start = CLAMP(start, 0, dim - 1);
    end = CLAMP(end, -1, dim - 1);
    return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

/* A Slice whose starts, ends, axes or steps are not known constants: the input's rank, every dim
 * unknown (ONNX's Slice-10 on inference). */
static sh_result slice_rank_only(sh_ctx *c, const fp_shape *x)
{
    fp_shape out = sh_new(c, x->rank);
    for (int32_t d = 0; d < x->rank; d++)
        out.dims[d] = sh_dim_unknown();
    sh_set(c, 0, sh_dt(c, 0), out);
    return sh_unknown(c, "starts, ends, axes or steps are not known constants");
}

sh_result sh_rule_slice(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t starts[FP_MAX_RANK], ends[FP_MAX_RANK], axes[FP_MAX_RANK], steps[FP_MAX_RANK];
    int ns = 0, ne = 0, na = 0, nst = 0;
    if (c->opset < 10) {
        if (!sh_attr_ints(c->n, "starts", starts, FP_MAX_RANK, &ns) ||
            !sh_attr_ints(c->n, "ends", ends, FP_MAX_RANK, &ne))
            return sh_fail(c, "missing attribute starts or ends");
        if (!sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &na))
            na = -1;
        nst = -1;
    } else {
        na = nst = -1;
        if (!sh_ints(c, 1, starts, FP_MAX_RANK, &ns) || !sh_ints(c, 2, ends, FP_MAX_RANK, &ne) ||
            (sh_val(c, 3) && !sh_ints(c, 3, axes, FP_MAX_RANK, &na)) ||
            (sh_val(c, 4) && !sh_ints(c, 4, steps, FP_MAX_RANK, &nst)))
            return slice_rank_only(c, x);
    }
    if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return sh_fail(c, "starts, ends, axes and steps differ in length");
    fp_shape out = sh_copy(c, x);
    for (int i = 0; i < ns; i++) {
        int32_t a;
        if (!sh_axis(na >= 0 ? axes[i] : i, x->rank, &a))
            return sh_fail(c, "axis out of range for rank %d", x->rank);
        int64_t step = nst >= 0 ? steps[i] : 1;
        if (step == 0)
            return sh_fail(c, "step is 0");
        fp_dim d = x->dims[a];
        if (fp_dim_known(d))
            out.dims[a] = sh_dim(slice_len(d.value, starts[i], ends[i], step));
        else if (starts[i] == 0 && step == 1 && ends[i] >= G_MAXINT32)
            out.dims[a] = d;
        else
            out.dims[a] = sh_dim_unknown();
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- gather / scatter */

sh_result sh_rule_gather(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0), *idx = sh_in(c, 1);
    if (!x || !idx)
        return sh_unknown(c, "input of unknown rank");
    int32_t axis;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", 0), x->rank, &axis))
        return sh_fail(c, "axis out of range for rank %d", x->rank);
    fp_shape out;
    if (!sh_gather_dims(c, x, idx, axis, &out))
        return SH_ERROR;
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_gather_elements(sh_ctx *c)
{
    const fp_shape *idx = sh_in(c, 1);
    if (!idx)
        return sh_unknown(c, "indices of unknown rank");
    sh_set(c, 0, sh_dt(c, 0), sh_copy(c, idx));
    return SH_OK;
}

sh_result sh_rule_gather_nd(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0), *idx = sh_in(c, 1);
    if (!x || !idx)
        return sh_unknown(c, "input of unknown rank");
    int64_t b = fp_node_attr_int(c->n, "batch_dims", 0);
    if (idx->rank < 1 || !fp_dim_known(idx->dims[idx->rank - 1]))
        return sh_unknown(c, "last dim of indices unknown");
    int64_t last = idx->dims[idx->rank - 1].value;
    if (b + last > x->rank)
        return sh_fail(c, "indices address %" G_GINT64_FORMAT " dims of a rank-%d tensor", b + last, x->rank);
    int32_t rank = idx->rank - 1 + x->rank - (int32_t)(b + last);
    fp_shape out = sh_new(c, rank);
    int k = 0;
    for (int32_t i = 0; i < idx->rank - 1; i++)
        out.dims[k++] = idx->dims[i];
    for (int32_t i = (int32_t)(b + last); i < x->rank; i++)
        out.dims[k++] = x->dims[i];
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- pad / tile / expand / resize */

sh_result sh_rule_pad(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t pads[2 * FP_MAX_RANK], axes[FP_MAX_RANK];
    int n = 0, na = -1;
    if (c->opset >= 11) {
        if (!sh_ints(c, 1, pads, 2 * FP_MAX_RANK, &n))
            return sh_unknown(c, "pads are not known constants");
        if (sh_val(c, 3) && !sh_ints(c, 3, axes, FP_MAX_RANK, &na))
            return sh_unknown(c, "axes are not known constants");
    } else if (!sh_attr_ints(c->n, "pads", pads, 2 * FP_MAX_RANK, &n) &&
               !sh_attr_ints(c->n, "paddings", pads, 2 * FP_MAX_RANK, &n)) {
        return sh_fail(c, "missing attribute pads");
    }
    int nax = na >= 0 ? na : x->rank;
    if (n != 2 * nax)
        return sh_fail(c, "pads has %d entries for %d axes", n, nax);
    fp_shape out = sh_copy(c, x);
    for (int i = 0; i < nax; i++) {
        int32_t a;
        if (!sh_axis(na >= 0 ? axes[i] : i, x->rank, &a))
            return sh_fail(c, "axis out of range");
        out.dims[a] = sh_dim_add(x->dims[a], sh_dim(pads[i] + pads[nax + i]));
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_tile(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t rep[FP_MAX_RANK];
    int n = 0;
    if (!sh_ints(c, 1, rep, FP_MAX_RANK, &n))
        return sh_unknown(c, "repeats are not known constants");
    if (n != x->rank)
        return sh_fail(c, "%d repeats for rank %d", n, x->rank);
    fp_shape out = sh_new(c, x->rank);
    for (int i = 0; i < n; i++)
        out.dims[i] = sh_dim_mul(x->dims[i], sh_dim(rep[i]));
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_expand(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    fp_dim t[FP_MAX_RANK];
    int n = 0;
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    if (!input_dims(c, 1, t, FP_MAX_RANK, &n))
        return sh_unknown(c, "target shape is not a known constant");
    for (int i = 0; i < n; i++)
        if (elem_unknown(c, 1, i) || (!t[i].sym && t[i].value < 0))
            t[i] = sh_dim_unknown();
    fp_shape ts = {n, t}, out;
    if (!sh_broadcast(c, x, &ts, &out))
        return SH_ERROR;
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_resize(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t sizes[FP_MAX_RANK], axes[FP_MAX_RANK];
    double scales[FP_MAX_RANK];
    int ns = 0, na = 0;
    bool have_axes = sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &na);
    int32_t rank = x->rank;
    int nax = have_axes ? na : rank;
    uint32_t scales_in = c->n->op == FP_OP_UPSAMPLE || c->opset < 11 ? 1 : 2;
    fp_shape out = sh_copy(c, x);
    if (c->n->op == FP_OP_RESIZE && c->opset >= 11 && sh_val(c, 3)) {
        if (!sh_ints(c, 3, sizes, FP_MAX_RANK, &ns))
            return sh_unknown(c, "sizes are not known constants");
        if (ns != nax)
            return sh_fail(c, "%d sizes for %d axes", ns, nax);
        const char *policy = fp_node_attr_string(c->n, "keep_aspect_ratio_policy", "stretch");
        double scale = strcmp(policy, "not_smaller") == 0 ? 0 : 1e300;
        bool keep = strcmp(policy, "stretch") != 0;
        for (int i = 0; i < nax && keep; i++) {
            int32_t a = have_axes ? (int32_t)(axes[i] < 0 ? axes[i] + rank : axes[i]) : i;
            if (!fp_dim_known(x->dims[a]))
                return sh_unknown(c, "input dim %d unknown", a);
            double s = (double)sizes[i] / (double)x->dims[a].value;
            scale = strcmp(policy, "not_smaller") == 0 ? MAX(scale, s) : MIN(scale, s);
        }
        for (int i = 0; i < nax; i++) {
            int32_t a = have_axes ? (int32_t)(axes[i] < 0 ? axes[i] + rank : axes[i]) : i;
            out.dims[a] = keep ? sh_dim((int64_t)(x->dims[a].value * scale + 0.5)) : sh_dim(sizes[i]);
        }
    } else {
        /* scales: attribute (Upsample-7) or input */
        if (c->n->op == FP_OP_UPSAMPLE && c->opset < 9) {
            if (!sh_attr_floats(c->n, "scales", scales, FP_MAX_RANK, &ns))
                return sh_fail(c, "missing attribute scales");
        } else {
            fp_value *sv = sh_val(c, scales_in);
            const fp_tensor *t = sv ? sh_known(sv) : NULL;
            uint64_t numel = 0;
            if (!t || t->dtype != FP_DT_FLOAT || !fp_shape_numel(&t->shape, &numel) || numel > FP_MAX_RANK)
                return sh_unknown(c, "scales are not known constants");
            ns = (int)numel;
            for (int i = 0; i < ns; i++) {
                float f;
                memcpy(&f, (const uint8_t *)t->data + 4 * i, 4);
                scales[i] = f;
            }
        }
        if (ns != nax)
            return ns == 0 ? sh_unknown(c, "neither scales nor sizes given")
                           : sh_fail(c, "%d scales for %d axes", ns, nax);
        for (int i = 0; i < nax; i++) {
            int32_t a = have_axes ? (int32_t)(axes[i] < 0 ? axes[i] + rank : axes[i]) : i;
            fp_dim d = x->dims[a];
            out.dims[a] = scales[i] == 1.0  ? d
                          : fp_dim_known(d) ? sh_dim((int64_t)(d.value * scales[i]))
                                            : sh_dim_unknown();
        }
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* DepthToSpace and SpaceToDepth over NCHW: DepthToSpace divides the channels by blocksize^2 and
 * multiplies height and width by blocksize; SpaceToDepth does the reverse. */
sh_result sh_rule_depth_space(sh_ctx *c)
{
    const fp_shape *x;
    sh_result r = sh_input_rank(c, 4, &x);
    if (r != SH_OK)
        return r;
    int64_t b = fp_node_attr_int(c->n, "blocksize", 0);
    if (b <= 0)
        return sh_fail(c, "blocksize must be positive");
    bool to_space = c->n->op == FP_OP_DEPTH_TO_SPACE;
    fp_dim area = sh_dim(b * b), side = sh_dim(b);
    fp_shape out = sh_copy(c, x);
    out.dims[1] = to_space ? sh_dim_div(x->dims[1], area) : sh_dim_mul(x->dims[1], area);
    for (int32_t i = 2; i < 4; i++)
        out.dims[i] = to_space ? sh_dim_mul(x->dims[i], side) : sh_dim_div(x->dims[i], side);
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_compress(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    const fp_attr *axis_attr = fp_node_attr(c->n, "axis");
    int64_t cond[SH_MAX_FOLD_ELEMS];
    int n = 0;
    fp_dim count = sh_dim_unknown();
    if (sh_ints(c, 1, cond, SH_MAX_FOLD_ELEMS, &n)) {
        int64_t k = 0;
        for (int i = 0; i < n; i++)
            k += cond[i] != 0;
        count = sh_dim(k);
    }
    fp_shape out;
    if (axis_attr) {
        int32_t a;
        if (!sh_axis(axis_attr->u.i, x->rank, &a))
            return sh_fail(c, "axis out of range");
        out = sh_copy(c, x);
        out.dims[a] = count;
    } else {
        out = sh_new(c, 1);
        out.dims[0] = count;
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return fp_dim_known(count) ? SH_OK : sh_unknown(c, "output size depends on the condition's values");
}

sh_result sh_rule_one_hot(sh_ctx *c)
{
    const fp_shape *idx = sh_in(c, 0);
    if (!idx)
        return sh_unknown(c, "indices of unknown rank");
    int32_t rank = idx->rank + 1, a;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", -1), rank, &a))
        return sh_fail(c, "axis out of range");
    double depth = 0;
    fp_shape out = sh_new(c, rank);
    for (int32_t i = 0, k = 0; i < rank; i++)
        out.dims[i] = i == a ? (sh_scalar(c, 1, &depth) ? sh_dim((int64_t)depth) : sh_dim_unknown()) : idx->dims[k++];
    sh_set(c, 0, sh_dt(c, 2), out);
    return SH_OK;
}

sh_result sh_rule_eye_like(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r == SH_OK && fp_node_attr(c->n, "dtype"))
        sh_out_dtype(c, 0, (fp_dtype)fp_node_attr_int(c->n, "dtype", 1));
    return r;
}

sh_result sh_rule_grid_sample(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0), *grid = sh_in(c, 1);
    if (!x || !grid)
        return sh_unknown(c, "input of unknown rank");
    fp_shape out = sh_new(c, x->rank);
    out.dims[0] = x->dims[0];
    out.dims[1] = x->dims[1];
    for (int32_t i = 2; i < x->rank && i - 1 < grid->rank; i++)
        out.dims[i] = grid->dims[i - 1];
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_center_crop_pad(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    int64_t sh[FP_MAX_RANK], axes[FP_MAX_RANK];
    int n = 0, na = 0;
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    if (!sh_ints(c, 1, sh, FP_MAX_RANK, &n))
        return sh_unknown(c, "shape is not a known constant");
    bool have_axes = sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &na);
    fp_shape out = sh_copy(c, x);
    for (int i = 0; i < n; i++) {
        int32_t a;
        if (!sh_axis(have_axes ? axes[i] : i, x->rank, &a))
            return sh_fail(c, "axis out of range");
        out.dims[a] = sh_dim(sh[i]);
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_col2im(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    int64_t img[FP_MAX_RANK], blk[FP_MAX_RANK];
    int ni = 0, nb = 0;
    if (!x || x->rank != 3)
        return sh_unknown(c, "input of unknown rank");
    if (!sh_ints(c, 1, img, FP_MAX_RANK, &ni) || !sh_ints(c, 2, blk, FP_MAX_RANK, &nb) || ni != nb)
        return sh_unknown(c, "image_shape/block_shape are not known constants");
    int64_t prod = 1;
    for (int i = 0; i < nb; i++)
        prod *= blk[i];
    fp_shape out = sh_new(c, 2 + ni);
    out.dims[0] = x->dims[0];
    out.dims[1] = sh_dim_div(x->dims[1], sh_dim(prod));
    for (int i = 0; i < ni; i++)
        out.dims[2 + i] = sh_dim(img[i]);
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- shapes and constants */

sh_result sh_rule_shape(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    fp_shape out = sh_new(c, 1);
    if (x) {
        int32_t s, e;
        sh_shape_range(c, x->rank, &s, &e);
        out.dims[0] = sh_dim(MAX(e - s, 0));
    }
    sh_set(c, 0, FP_DT_INT64, out);
    return x ? SH_OK : sh_unknown(c, "input has unknown rank");
}

sh_result sh_rule_size(sh_ctx *c)
{
    sh_set(c, 0, FP_DT_INT64, sh_new(c, 0));
    return SH_OK;
}

sh_result sh_rule_constant(sh_ctx *c)
{
    fp_value *out = c->n->n_outputs ? c->n->outputs[0] : NULL;
    if (!out || !out->tensor)
        return sh_fail(c, "Constant without a value attribute");
    sh_set(c, 0, out->tensor->dtype, out->tensor->shape);
    return SH_OK;
}

sh_result sh_rule_constant_of_shape(sh_ctx *c)
{
    fp_dim t[FP_MAX_RANK];
    int n = 0;
    const fp_attr *val = fp_node_attr(c->n, "value");
    fp_dtype dt = val && val->type == FP_ATTR_TENSOR ? val->u.t->dtype : FP_DT_FLOAT;
    if (!input_dims(c, 0, t, FP_MAX_RANK, &n)) {
        const fp_shape *s = sh_in(c, 0);
        if (s && s->rank == 1 && fp_dim_known(s->dims[0])) {
            if (s->dims[0].value > FP_MAX_RANK)
                return sh_fail(c, "shape has %" G_GINT64_FORMAT " elements: rank over the limit of %d",
                               s->dims[0].value, FP_MAX_RANK);
            sh_set(c, 0, dt, sh_new(c, (int32_t)s->dims[0].value));
            return sh_unknown(c, "shape values unknown (rank %d)", (int)s->dims[0].value);
        }
        return sh_unknown(c, "shape is not a known constant");
    }
    fp_shape out = sh_new(c, n);
    for (int i = 0; i < n; i++)
        out.dims[i] = elem_unknown(c, 0, i) || (!t[i].sym && t[i].value < 0) ? sh_dim_unknown() : t[i];
    sh_set(c, 0, dt, out);
    return SH_OK;
}

sh_result sh_rule_range(sh_ctx *c)
{
    double start, limit, delta;
    fp_shape out = sh_new(c, 1);
    if (sh_scalar(c, 0, &start) && sh_scalar(c, 1, &limit) && sh_scalar(c, 2, &delta)) {
        if (delta == 0)
            return sh_fail(c, "delta is 0");
        double n = ceil((limit - start) / delta);
        out.dims[0] = sh_dim(n > 0 ? (int64_t)n : 0);
    }
    sh_set(c, 0, sh_dt(c, 0), out);
    return fp_dim_known(out.dims[0]) ? SH_OK : sh_unknown(c, "start, limit or delta unknown");
}

sh_result sh_rule_non_zero(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    fp_shape out = sh_new(c, 2);
    out.dims[0] = x ? sh_dim(x->rank) : sh_dim_unknown();
    sh_set(c, 0, FP_DT_INT64, out);
    return sh_unknown(c, "output size depends on the input's values");
}

sh_result sh_rule_unique(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    const fp_attr *axis = fp_node_attr(c->n, "axis");
    if (x && axis) {
        int32_t a;
        if (!sh_axis(axis->u.i, x->rank, &a))
            return sh_fail(c, "axis out of range");
        fp_shape y = sh_copy(c, x);
        y.dims[a] = sh_dim_unknown();
        sh_set(c, 0, sh_dt(c, 0), y);
    } else {
        sh_set(c, 0, sh_dt(c, 0), sh_new(c, 1));
    }
    sh_set(c, 1, FP_DT_INT64, sh_new(c, 1));
    fp_shape inv = sh_new(c, 1);
    if (x && axis) {
        int32_t a;
        sh_axis(axis->u.i, x->rank, &a);
        inv.dims[0] = x->dims[a];
    } else if (x) {
        uint64_t numel;
        if (fp_shape_numel(x, &numel))
            inv.dims[0] = sh_dim((int64_t)numel);
    }
    sh_set(c, 2, FP_DT_INT64, inv);
    sh_set(c, 3, FP_DT_INT64, sh_new(c, 1));
    return sh_unknown(c, "output size depends on the input's values");
}

sh_result sh_rule_nms(sh_ctx *c)
{
    fp_shape out = sh_new(c, 2);
    out.dims[1] = sh_dim(3);
    sh_set(c, 0, FP_DT_INT64, out);
    return sh_unknown(c, "number of selected boxes depends on the input's values");
}

/* ---------------------------------------------------------------- signal processing */

sh_result sh_rule_window(sh_ctx *c)
{
    double size;
    fp_shape out = sh_new(c, 1);
    if (sh_scalar(c, 0, &size))
        out.dims[0] = sh_dim((int64_t)size);
    sh_set(c, 0, (fp_dtype)fp_node_attr_int(c->n, "output_datatype", FP_DT_FLOAT), out);
    return fp_dim_known(out.dims[0]) ? SH_OK : sh_unknown(c, "size unknown");
}

sh_result sh_rule_dft(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int64_t axis = fp_node_attr_int(c->n, "axis", 1);
    if (c->opset >= 20) {
        int64_t a[1];
        int n = 0;
        axis = sh_val(c, 2) ? (sh_ints(c, 2, a, 1, &n) ? a[0] : -999) : -2;
        if (axis == -999)
            return sh_unknown(c, "axis unknown");
    }
    int32_t ax;
    if (!sh_axis(axis, x->rank, &ax))
        return sh_fail(c, "axis out of range");
    fp_shape out = sh_copy(c, x);
    out.dims[x->rank - 1] = sh_dim(2);
    double len;
    fp_dim n = sh_val(c, 1) && sh_scalar(c, 1, &len) ? sh_dim((int64_t)len) : x->dims[ax];
    if (sh_val(c, 1) && !sh_scalar(c, 1, &len))
        n = sh_dim_unknown();
    if (fp_node_attr_int(c->n, "onesided", 0) && fp_dim_known(n))
        n = sh_dim(n.value / 2 + 1);
    out.dims[ax] = n;
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_stft(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    double step, flen;
    if (!x || x->rank < 2)
        return sh_unknown(c, "signal of unknown rank");
    const fp_shape *w = sh_in(c, 2);
    bool have_len = sh_scalar(c, 3, &flen);
    if (!have_len && w && w->rank == 1 && fp_dim_known(w->dims[0])) {
        flen = (double)w->dims[0].value;
        have_len = true;
    }
    if (!have_len || !sh_scalar(c, 1, &step) || !fp_dim_known(x->dims[1]))
        return sh_unknown(c, "frame step or length unknown");
    int64_t frames = (x->dims[1].value - (int64_t)flen) / (int64_t)step + 1;
    int64_t bins = fp_node_attr_int(c->n, "onesided", 1) ? (int64_t)flen / 2 + 1 : (int64_t)flen;
    fp_shape out = sh_new(c, 4);
    out.dims[0] = x->dims[0];
    out.dims[1] = sh_dim(frames);
    out.dims[2] = sh_dim(bins);
    out.dims[3] = sh_dim(2);
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

sh_result sh_rule_mel(sh_ctx *c)
{
    double bins, dft;
    if (!sh_scalar(c, 0, &bins) || !sh_scalar(c, 1, &dft))
        return sh_unknown(c, "num_mel_bins or dft_length unknown");
    fp_shape out = sh_new(c, 2);
    out.dims[0] = sh_dim((int64_t)dft / 2 + 1);
    out.dims[1] = sh_dim((int64_t)bins);
    sh_set(c, 0, (fp_dtype)fp_node_attr_int(c->n, "output_datatype", FP_DT_FLOAT), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- random */

sh_result sh_rule_random(sh_ctx *c)
{
    int64_t dims[FP_MAX_RANK];
    int n = 0;
    if (!sh_attr_ints(c->n, "shape", dims, FP_MAX_RANK, &n))
        return sh_fail(c, "missing attribute shape");
    fp_shape out = sh_new(c, n);
    for (int i = 0; i < n; i++)
        out.dims[i] = sh_dim(dims[i]);
    sh_set(c, 0, (fp_dtype)fp_node_attr_int(c->n, "dtype", FP_DT_FLOAT), out);
    return SH_OK;
}

sh_result sh_rule_random_like(sh_ctx *c)
{
    sh_result r = sh_rule_same(c);
    if (r == SH_OK && fp_node_attr(c->n, "dtype"))
        sh_out_dtype(c, 0, (fp_dtype)fp_node_attr_int(c->n, "dtype", FP_DT_FLOAT));
    return r;
}

sh_result sh_rule_multinomial(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x || x->rank != 2)
        return sh_unknown(c, "input of unknown rank");
    fp_shape out = sh_new(c, 2);
    out.dims[0] = x->dims[0];
    out.dims[1] = sh_dim(fp_node_attr_int(c->n, "sample_size", 1));
    sh_set(c, 0, (fp_dtype)fp_node_attr_int(c->n, "dtype", FP_DT_INT32), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- sequences and optionals */

/* Common element shape of a sequence built from `a` and `b`: equal dims kept, others unknown. */
static fp_shape merge_elem(sh_ctx *c, const fp_shape *a, const fp_shape *b)
{
    if (!a || a->rank < 0 || !b || b->rank < 0 || a->rank != b->rank)
        return sh_unknown_rank();
    fp_shape out = sh_copy(c, a);
    for (int32_t i = 0; i < a->rank; i++)
        if (!sh_dim_eq(a->dims[i], b->dims[i]))
            out.dims[i] = sh_dim_unknown();
    return out;
}

/* Makes output `out` a sequence of dtype dt whose elements have the n shapes `elems` (n < 0:
 * length unknown, `common` is the element shape). */
static void seq_set(sh_ctx *c, uint32_t out, fp_dtype dt, const fp_shape *elems, int n, fp_shape common)
{
    if (out >= c->n->n_outputs || !c->n->outputs[out])
        return;
    fp_value *v = c->n->outputs[out];
    v->type = FP_TYPE_SEQUENCE;
    v->dtype = dt;
    fp_shape *copy = NULL;
    if (n >= 0) {
        copy = fp_arena_calloc(sh_tmp(c), n ? (size_t)n : 1, sizeof(fp_shape));
        for (int i = 0; i < n; i++)
            copy[i] = sh_copy(c, &elems[i]);
        common = n ? sh_copy(c, &elems[0]) : sh_unknown_rank();
        for (int i = 1; i < n; i++)
            common = merge_elem(c, &common, &elems[i]);
    }
    fp_value_set_elems(v, copy, n);
    v->shape = common;
}

/* Position argument i of a sequence op: false when absent or not known (*pos = dflt). */
static bool seq_pos(sh_ctx *c, uint32_t i, int64_t dflt, int64_t *pos)
{
    int n = 0;
    *pos = dflt;
    if (!sh_val(c, i))
        return true;
    return sh_ints(c, i, pos, 1, &n) && n == 1;
}

sh_result sh_rule_seq_construct(sh_ctx *c)
{
    uint32_t n = c->n->n_inputs;
    for (uint32_t i = 0; i < n; i++)
        if (!sh_val(c, i)) /* every input is required: an empty name is malformed */
            return sh_fail(c, "input %u is missing (SequenceConstruct has no optional inputs)", i);
    fp_shape *elems = g_new0(fp_shape, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        elems[i] = sh_val(c, i)->shape;
    seq_set(c, 0, sh_dt(c, 0), elems, (int)n, sh_unknown_rank());
    g_free(elems);
    return SH_OK;
}

sh_result sh_rule_seq_empty(sh_ctx *c)
{
    seq_set(c, 0, (fp_dtype)fp_node_attr_int(c->n, "dtype", FP_DT_FLOAT), NULL, 0, sh_unknown_rank());
    return SH_OK;
}

sh_result sh_rule_seq_at(sh_ctx *c)
{
    fp_value *s = sh_val(c, 0);
    int32_t sn = fp_value_n_elems(s);
    const fp_shape *se = fp_value_elems(s);
    int64_t pos;
    fp_shape elem = s->shape;
    if (sn > 0 && seq_pos(c, 1, 0, &pos) && sh_val(c, 1)) {
        if (pos < 0)
            pos += sn;
        if (pos < 0 || pos >= sn)
            return sh_fail(c, "position %" G_GINT64_FORMAT " outside a sequence of %d", pos, sn);
        elem = se[pos];
    }
    set_typed(c, 0, FP_TYPE_TENSOR, s->dtype, elem);
    return elem.rank >= 0 ? SH_OK : sh_unknown(c, "sequence element shape unknown");
}

sh_result sh_rule_seq_insert(sh_ctx *c)
{
    fp_value *s = sh_val(c, 0), *t = sh_val(c, 1);
    int32_t sn = fp_value_n_elems(s);
    const fp_shape *se = fp_value_elems(s);
    int64_t pos;
    if (sn >= 0 && t && seq_pos(c, 2, sn, &pos)) {
        if (pos < 0)
            pos += sn;
        if (pos < 0 || pos > sn)
            return sh_fail(c, "position %" G_GINT64_FORMAT " outside a sequence of %d", pos, sn);
        fp_shape *elems = g_new0(fp_shape, (size_t)sn + 1);
        for (int i = 0, k = 0; i <= sn; i++)
            elems[i] = i == pos ? t->shape : se[k++];
        seq_set(c, 0, t->dtype, elems, sn + 1, sh_unknown_rank());
        g_free(elems);
        return SH_OK;
    }
    fp_shape common = sn == 0 ? sh_copy(c, &t->shape) : merge_elem(c, &s->shape, t ? &t->shape : NULL);
    seq_set(c, 0, t ? t->dtype : s->dtype, NULL, -1, common);
    return SH_OK;
}

sh_result sh_rule_seq_erase(sh_ctx *c)
{
    fp_value *s = sh_val(c, 0);
    int32_t sn = fp_value_n_elems(s);
    const fp_shape *se = fp_value_elems(s);
    int64_t pos;
    if (sn > 0 && seq_pos(c, 1, sn - 1, &pos)) {
        if (pos < 0)
            pos += sn;
        if (pos < 0 || pos >= sn)
            return sh_fail(c, "position %" G_GINT64_FORMAT " outside a sequence of %d", pos, sn);
        fp_shape *elems = g_new0(fp_shape, (size_t)sn);
        for (int i = 0, k = 0; i < sn; i++)
            if (i != pos)
                elems[k++] = se[i];
        seq_set(c, 0, s->dtype, elems, sn - 1, sh_unknown_rank());
        g_free(elems);
        return SH_OK;
    }
    seq_set(c, 0, s->dtype, NULL, -1, s->shape);
    return SH_OK;
}

sh_result sh_rule_seq_length(sh_ctx *c)
{
    sh_set(c, 0, FP_DT_INT64, sh_new(c, 0));
    return SH_OK;
}

sh_result sh_rule_split_to_seq(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    int32_t a;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", 0), x->rank, &a))
        return sh_fail(c, "axis out of range");
    fp_dim total = x->dims[a];
    int64_t split[SH_MAX_SVAL];
    int n = 0;
    const fp_shape *ss = sh_in(c, 1);
    bool keep = fp_node_attr_int(c->n, "keepdims", 1) != 0;
    int64_t sizes[SH_MAX_FOLD_ELEMS];
    int count = -1;
    if (!sh_val(c, 1)) {
        if (fp_dim_known(total) && total.value <= SH_MAX_FOLD_ELEMS)
            for (count = 0; count < total.value; count++)
                sizes[count] = 1;
    } else if (sh_ints(c, 1, split, SH_MAX_SVAL, &n) && n > 0) {
        if (ss && ss->rank == 0) {
            if (fp_dim_known(total) && split[0] > 0 && total.value / split[0] < SH_MAX_FOLD_ELEMS)
                for (count = 0; count * split[0] < total.value; count++)
                    sizes[count] = MIN(split[0], total.value - count * split[0]);
        } else {
            for (count = 0; count < n; count++)
                sizes[count] = split[count];
        }
    }
    if (count < 0) {
        fp_shape elem = sh_copy(c, x);
        elem.dims[a] = sh_dim_unknown();
        seq_set(c, 0, sh_dt(c, 0), NULL, -1, elem);
        return SH_OK;
    }
    fp_shape *elems = g_new0(fp_shape, (size_t)count + 1);
    for (int i = 0; i < count; i++) {
        fp_shape e = sh_copy(c, x);
        e.dims[a] = sh_dim(sizes[i]);
        if (!sh_val(c, 1) && !keep) {
            for (int32_t d = a; d < x->rank - 1; d++)
                e.dims[d] = x->dims[d + 1];
            e.rank--;
        }
        elems[i] = e;
    }
    seq_set(c, 0, sh_dt(c, 0), elems, count, sh_unknown_rank());
    g_free(elems);
    return SH_OK;
}

sh_result sh_rule_concat_from_seq(sh_ctx *c)
{
    fp_value *s = sh_val(c, 0);
    int32_t sn = fp_value_n_elems(s);
    const fp_shape *se = fp_value_elems(s);
    if (s->shape.rank < 0 && sn <= 0)
        return sh_unknown(c, "sequence element shape unknown");
    bool new_axis = fp_node_attr_int(c->n, "new_axis", 0) != 0;
    const fp_shape *base = sn > 0 ? &se[0] : &s->shape;
    int32_t rank = base->rank + new_axis, a;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", 0), rank, &a))
        return sh_fail(c, "axis out of range");
    fp_shape out = sh_new(c, rank);
    for (int32_t i = 0, k = 0; i < rank; i++) {
        if (i == a && new_axis)
            continue;
        out.dims[i] = s->shape.rank == base->rank ? s->shape.dims[k] : base->dims[k];
        k++;
    }
    fp_dim len = sh_dim_unknown();
    if (sn >= 0) {
        len = sh_dim(new_axis ? sn : 0);
        for (int i = 0; i < sn && !new_axis; i++)
            len = sh_dim_add(len, se[i].rank == base->rank ? se[i].dims[a] : sh_dim_unknown());
    }
    out.dims[a] = len;
    sh_set(c, 0, s->dtype, out);
    return fp_dim_known(len) ? SH_OK : sh_unknown(c, "output size depends on the number of sequence elements");
}

sh_result sh_rule_optional(sh_ctx *c)
{
    fp_value *x = sh_val(c, 0), *out = c->n->n_outputs ? c->n->outputs[0] : NULL;
    if (!x || !out)
        return sh_unknown(c, "empty optional with a type attribute");
    set_typed(c, 0, FP_TYPE_OPTIONAL, x->dtype, x->shape);
    out->elem_kind = x->type == FP_TYPE_SEQUENCE ? FP_TYPE_SEQUENCE : FP_TYPE_TENSOR;
    fp_value_set_elems(out, fp_value_elems(x), fp_value_n_elems(x));
    return SH_OK;
}

sh_result sh_rule_optional_get(sh_ctx *c)
{
    fp_value *x = sh_val(c, 0), *out = c->n->n_outputs ? c->n->outputs[0] : NULL;
    if (!out)
        return SH_OK;
    fp_type_kind kind = x->type == FP_TYPE_SEQUENCE || (x->type == FP_TYPE_OPTIONAL && x->elem_kind == FP_TYPE_SEQUENCE)
                            ? FP_TYPE_SEQUENCE
                            : FP_TYPE_TENSOR;
    set_typed(c, 0, kind, x->dtype, x->shape);
    fp_value_set_elems(out, fp_value_elems(x), fp_value_n_elems(x));
    return x->shape.rank >= 0 || kind == FP_TYPE_SEQUENCE ? SH_OK : sh_unknown(c, "element shape unknown");
}

sh_result sh_rule_optional_has(sh_ctx *c)
{
    sh_set(c, 0, FP_DT_BOOL, sh_new(c, 0));
    return SH_OK;
}

sh_result sh_rule_string_normalizer(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    if (!x || x->rank < 1)
        return sh_unknown(c, "input has unknown rank");
    fp_shape out = sh_copy(c, x);
    const fp_attr *stop = fp_node_attr(c->n, "stopwords");
    if (stop && stop->type == FP_ATTR_STRINGS && stop->n) {
        /* stop words remove elements: the size is known only from known input strings */
        fp_value *v = sh_val(c, 0);
        const fp_tensor *t = v ? sh_known(v) : NULL;
        uint64_t numel = 0;
        out.dims[x->rank - 1] = sh_dim_unknown();
        if (t && t->dtype == FP_DT_STRING && t->where == FP_DATA_INLINE && fp_shape_numel(&t->shape, &numel)) {
            bool cs = fp_node_attr_int(c->n, "is_case_sensitive", 0) != 0;
            const char *const *strs = t->data;
            int64_t kept = 0;
            for (uint64_t i = 0; i < numel; i++) {
                bool drop = false;
                for (uint32_t k = 0; k < stop->n && !drop; k++)
                    drop = cs ? strcmp(strs[i], stop->u.strings[k]) == 0
                              : g_ascii_strcasecmp(strs[i], stop->u.strings[k]) == 0;
                kept += !drop;
            }
            out.dims[x->rank - 1] = sh_dim(kept ? kept : 1); /* all removed: one empty string */
        }
    }
    sh_set(c, 0, FP_DT_STRING, out);
    return fp_dim_known(out.dims[x->rank - 1]) ? SH_OK
                                               : sh_unknown(c, "stop words make the size depend on the input strings");
}

sh_result sh_rule_tfidf(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0);
    const fp_attr *idx = fp_node_attr(c->n, "ngram_indexes");
    if (!x || x->rank < 1 || x->rank > 2)
        return sh_unknown(c, "input has unknown rank");
    if (!idx || idx->type != FP_ATTR_INTS)
        return sh_fail(c, "missing attribute ngram_indexes");
    int64_t max = -1;
    for (uint32_t i = 0; i < idx->n; i++)
        max = MAX(max, idx->u.ints[i]);
    fp_shape out = sh_new(c, x->rank);
    if (x->rank == 2)
        out.dims[0] = x->dims[0];
    out.dims[x->rank - 1] = sh_dim(max + 1);
    sh_set(c, 0, FP_DT_FLOAT, out);
    return SH_OK;
}

/* ---------------------------------------------------------------- fused ops (com.microsoft) */

sh_result sh_rule_bias_gelu(sh_ctx *c) { return sh_rule_binary(c); }
