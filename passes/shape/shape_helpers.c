/* shape_helpers.c - helpers of the shape rules and the constant evaluator: inputs, results, dim
 * arithmetic, broadcasting, axes. */
#include <math.h>
#include <string.h>

#include "shape_ctx.h"

fp_value *sh_val(sh_ctx *c, uint32_t i) { return i < c->n->n_inputs ? c->n->inputs[i] : NULL; }

const fp_shape *sh_in(sh_ctx *c, uint32_t i)
{
    fp_value *v = sh_val(c, i);
    return v && v->shape.rank >= 0 ? &v->shape : NULL;
}

const fp_tensor *sh_known(const fp_value *v)
{
    if (fp_value_is_weight(v) && v->tensor && v->tensor->where == FP_DATA_INLINE)
        return v->tensor;
    return fp_value_fold(v);
}

fp_dtype sh_dt(sh_ctx *c, uint32_t i)
{
    fp_value *v = sh_val(c, i);
    return v ? v->dtype : FP_DT_UNDEFINED;
}

sh_result sh_input(sh_ctx *c, int32_t min_rank, const fp_shape **x)
{
    *x = sh_in(c, 0);
    if (!*x)
        return sh_unknown(c, "input has unknown rank");
    if ((*x)->rank < min_rank)
        return sh_fail(c, "input rank %d < %d", (*x)->rank, min_rank);
    return SH_OK;
}

sh_result sh_input_rank(sh_ctx *c, int32_t rank, const fp_shape **x)
{
    sh_result r = sh_input(c, 0, x);
    if (r == SH_OK && (*x)->rank != rank)
        return sh_fail(c, "input rank %d, expected %d", (*x)->rank, rank);
    return r;
}

sh_result sh_input_axis(sh_ctx *c, int64_t dflt, const fp_shape **x, int32_t *axis)
{
    sh_result r = sh_input(c, 0, x);
    if (r == SH_OK && !sh_axis(fp_node_attr_int(c->n, "axis", dflt), (*x)->rank, axis))
        return sh_fail(c, "axis out of range for rank %d", (*x)->rank);
    return r;
}

/* Reads element k of an inline tensor as int64 (integer and bool types). */
static bool tensor_int(const fp_tensor *t, uint64_t k, int64_t *out)
{
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case FP_DT_INT64: {
        int64_t x;
        memcpy(&x, p + 8 * k, 8);
        *out = x;
        return true;
    }
    case FP_DT_UINT64: {
        uint64_t x;
        memcpy(&x, p + 8 * k, 8);
        *out = (int64_t)x;
        return true;
    }
    case FP_DT_INT32: {
        int32_t x;
        memcpy(&x, p + 4 * k, 4);
        *out = x;
        return true;
    }
    case FP_DT_UINT32: {
        uint32_t x;
        memcpy(&x, p + 4 * k, 4);
        *out = x;
        return true;
    }
    case FP_DT_INT16: {
        int16_t x;
        memcpy(&x, p + 2 * k, 2);
        *out = x;
        return true;
    }
    case FP_DT_UINT16: {
        uint16_t x;
        memcpy(&x, p + 2 * k, 2);
        *out = x;
        return true;
    }
    case FP_DT_INT8:
        *out = (int8_t)p[k];
        return true;
    case FP_DT_UINT8:
    case FP_DT_BOOL:
        *out = p[k];
        return true;
    default:
        return false;
    }
}

bool sh_ints(sh_ctx *c, uint32_t i, int64_t *out, int max, int *n)
{
    fp_value *v = sh_val(c, i);
    if (!v)
        return false;
    const fp_tensor *t = sh_known(v);
    uint64_t numel = 0;
    if (t && fp_shape_numel(&t->shape, &numel) && numel <= (uint64_t)max && t->dtype != FP_DT_FLOAT &&
        t->dtype != FP_DT_DOUBLE && t->dtype != FP_DT_FLOAT16) {
        for (uint64_t k = 0; k < numel; k++)
            if (!tensor_int(t, k, &out[k]))
                return false;
        *n = (int)numel;
        return true;
    }
    if (v->n_sval >= 0 && v->n_sval <= max) {
        for (int k = 0; k < v->n_sval; k++) {
            if (v->sval[k].sym) /* a symbol or FP_SVAL_UNKNOWN */
                return false;
            out[k] = v->sval[k].value;
        }
        *n = v->n_sval;
        return true;
    }
    return false;
}

bool sh_scalar(sh_ctx *c, uint32_t i, double *out)
{
    fp_value *v = sh_val(c, i);
    const fp_tensor *t = v ? sh_known(v) : NULL;
    uint64_t numel = 0;
    if (!t || !fp_shape_numel(&t->shape, &numel) || numel != 1)
        return false;
    const uint8_t *p = t->data;
    int64_t iv;
    switch (t->dtype) {
    case FP_DT_FLOAT: {
        float f;
        memcpy(&f, p, 4);
        *out = f;
        return true;
    }
    case FP_DT_DOUBLE: {
        double d;
        memcpy(&d, p, 8);
        *out = d;
        return true;
    }
    case FP_DT_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        int e = (h >> 10) & 0x1f, mnt = h & 0x3ff;
        double val = e == 0 ? ldexp(mnt, -24) : e == 31 ? (mnt ? NAN : INFINITY) : ldexp(mnt + 1024, e - 25);
        *out = (h & 0x8000) ? -val : val;
        return true;
    }
    default:
        if (!tensor_int(t, 0, &iv))
            return false;
        *out = (double)iv;
        return true;
    }
}

sh_result sh_attr_int_in(sh_ctx *c, const char *name, bool required, int64_t dflt, int64_t lo, int64_t hi,
                         const char *what, int64_t *out)
{
    const fp_attr *a = fp_node_attr(c->n, name);
    *out = dflt;
    if (!a)
        return required ? sh_fail(c, "missing required attribute '%s' (INT)", name) : SH_OK;
    if (a->ref_attr_name)
        return sh_unknown(c, "attribute '%s' refers to a function attribute", name);
    if (a->type != FP_ATTR_INT)
        return sh_fail(c, "attribute '%s' is not an INT", name);
    if (a->u.i < lo || a->u.i > hi)
        return sh_fail(c, "attribute '%s' is %" G_GINT64_FORMAT ": must be %s", name, a->u.i, what);
    *out = a->u.i;
    return SH_OK;
}

bool sh_attr_ints(const fp_node *n, const char *name, int64_t *out, int max, int *count)
{
    return sh_attr_ints_of(fp_node_attr(n, name), out, max, count);
}

bool sh_attr_ints_of(const fp_attr *a, int64_t *out, int max, int *count)
{
    if (!a)
        return false;
    if (a->type == FP_ATTR_INT) {
        out[0] = a->u.i;
        *count = 1;
        return true;
    }
    if (a->type != FP_ATTR_INTS || a->n > (uint32_t)max)
        return false;
    memcpy(out, a->u.ints, a->n * sizeof(int64_t));
    *count = (int)a->n;
    return true;
}

bool sh_attr_floats(const fp_node *n, const char *name, double *out, int max, int *count)
{
    const fp_attr *a = fp_node_attr(n, name);
    if (!a || a->type != FP_ATTR_FLOATS || a->n > (uint32_t)max)
        return false;
    memcpy(out, a->u.floats, a->n * sizeof(double));
    *count = (int)a->n;
    return true;
}

fp_shape sh_new(sh_ctx *c, int32_t rank)
{
    fp_shape s = {rank, NULL};
    s.dims = fp_arena_alloc_raw(sh_tmp(c), sizeof(fp_dim) * (rank > 0 ? (size_t)rank : 1));
    s.dims[0] = (fp_dim){0, NULL}; /* a scalar's placeholder, zero as calloc left it */
    for (int32_t i = 0; i < rank; i++)
        s.dims[i] = sh_dim_unknown();
    return s;
}

fp_shape sh_copy(sh_ctx *c, const fp_shape *src)
{
    if (src->rank < 0)
        return sh_unknown_rank();
    fp_shape s = sh_new(c, src->rank);
    if (src->rank > 0)
        memcpy(s.dims, src->dims, (size_t)src->rank * sizeof(fp_dim));
    return s;
}

fp_shape sh_unknown_rank(void) { return (fp_shape){-1, NULL}; }

void sh_set(sh_ctx *c, uint32_t out, fp_dtype dt, fp_shape s)
{
    if (out >= c->n->n_outputs || !c->n->outputs[out])
        return;
    fp_value *v = c->n->outputs[out];
    v->dtype = dt;
    v->shape = s.rank <= FP_MAX_RANK ? s : sh_unknown_rank(); /* passes size arrays by FP_MAX_RANK */
    if (v->type == FP_TYPE_UNKNOWN)
        v->type = FP_TYPE_TENSOR;
}

sh_result sh_unknown(sh_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_free(c->reason);
    c->reason = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return SH_UNKNOWN;
}

sh_result sh_fail(sh_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(c->error, FP_IR_ERROR, FP_IR_ERROR_INVALID, "graph '%s': node '%s' (%s): %s", c->n->graph->name,
                c->n->name, c->n->op_type, msg);
    return SH_ERROR;
}

sh_result sh_block_attrs(sh_ctx *c, const char *bits_name, int64_t dflt_block, bool any_bits, bool zero_ok,
                         int64_t *bits, int64_t *block)
{
    sh_result r = SH_OK;
    *bits = 8;
    if (!any_bits)
        r = sh_attr_int_in(c, bits_name, false, 4, 2, 8, "2, 4 or 8", bits);
    if (r == SH_OK && *bits != 2 && *bits != 4 && *bits != 8)
        return sh_fail(c, "attribute '%s' is %" G_GINT64_FORMAT ": must be 2, 4 or 8", bits_name, *bits);
    if (r == SH_OK)
        r = sh_attr_int_in(c, "block_size", dflt_block < 0, dflt_block, 0, G_MAXINT32, "a power of two >= 16", block);
    if (r != SH_OK)
        return r;
    bool pow2 = *block >= 16 && (*block & (*block - 1)) == 0;
    if (!pow2 && !(zero_ok && *block == 0))
        return sh_fail(c, "attribute 'block_size' is %" G_GINT64_FORMAT ": must be a power of two >= 16%s", *block,
                       zero_ok ? " (or 0)" : "");
    return SH_OK;
}

sh_result sh_expect_dim(sh_ctx *c, const char *what, const fp_shape *s, int32_t d, fp_dim want, const char *name)
{
    if (!s || !fp_dim_known(s->dims[d]) || !fp_dim_known(want) || s->dims[d].value == want.value)
        return SH_OK;
    return sh_fail(c, "%s has %s %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, what, name, s->dims[d].value,
                   want.value);
}

bool sh_gather_dims(sh_ctx *c, const fp_shape *x, const fp_shape *idx, int32_t axis, fp_shape *out)
{
    int32_t rank = x->rank - 1 + idx->rank;
    if (rank > FP_MAX_RANK) {
        sh_fail(c, "output rank %d exceeds %d", rank, FP_MAX_RANK);
        return false;
    }
    *out = sh_new(c, rank);
    int k = 0;
    for (int32_t i = 0; i < axis; i++)
        out->dims[k++] = x->dims[i];
    for (int32_t i = 0; i < idx->rank; i++)
        out->dims[k++] = idx->dims[i];
    for (int32_t i = axis + 1; i < x->rank; i++)
        out->dims[k++] = x->dims[i];
    return true;
}

bool sh_dim_eq(fp_dim a, fp_dim b)
{
    if (a.sym || b.sym)
        return a.sym == b.sym; /* interned */
    return a.value >= 0 && a.value == b.value;
}

fp_dim sh_dim_mul(fp_dim a, fp_dim b)
{
    if (fp_dim_known(a) && fp_dim_known(b)) {
        int64_t r;
        if (__builtin_mul_overflow(a.value, b.value, &r))
            return sh_dim_unknown();
        return sh_dim(r);
    }
    if (fp_dim_known(a) && a.value == 1)
        return b;
    if (fp_dim_known(b) && b.value == 1)
        return a;
    if ((fp_dim_known(a) && a.value == 0) || (fp_dim_known(b) && b.value == 0))
        return sh_dim(0);
    return sh_dim_unknown();
}

fp_dim sh_dim_add(fp_dim a, fp_dim b)
{
    int64_t r;
    if (fp_dim_known(a) && fp_dim_known(b))
        return __builtin_add_overflow(a.value, b.value, &r) ? sh_dim_unknown() : sh_dim(r);
    if (fp_dim_known(a) && a.value == 0)
        return b;
    if (fp_dim_known(b) && b.value == 0)
        return a;
    return sh_dim_unknown();
}

fp_dim sh_dim_sub(fp_dim a, fp_dim b)
{
    int64_t r; /* both >= 0: cannot overflow, but the result may be negative (the caller checks) */
    if (fp_dim_known(a) && fp_dim_known(b))
        return __builtin_sub_overflow(a.value, b.value, &r) ? sh_dim_unknown() : sh_dim(r);
    if (fp_dim_known(b) && b.value == 0)
        return a;
    return sh_dim_unknown();
}

fp_dim sh_dim_div(fp_dim a, fp_dim b)
{
    if (fp_dim_known(a) && fp_dim_known(b) && b.value > 0 && a.value % b.value == 0)
        return sh_dim(a.value / b.value);
    if (fp_dim_known(b) && b.value == 1)
        return a;
    if (a.sym && a.sym == b.sym)
        return sh_dim(1);
    return sh_dim_unknown();
}

/* One broadcast dim: equal, or one of them is 1 (`onnx`: a symbol against an unknown dim gives an
 * unknown dim, as ONNX broadcasts). */
static bool broadcast_dim(fp_dim a, fp_dim b, bool onnx, fp_dim *out)
{
    if (fp_dim_known(a) && a.value == 1) {
        *out = b;
        return true;
    }
    if (fp_dim_known(b) && b.value == 1) {
        *out = a;
        return true;
    }
    if (fp_dim_known(a) && fp_dim_known(b)) {
        if (a.value != b.value)
            return false;
        *out = a;
        return true;
    }
    if (sh_dim_eq(a, b)) {
        *out = a;
        return true;
    }
    /* a known size wins over a symbol or an unknown (the symbol must equal it or be 1) */
    if (fp_dim_known(a)) {
        *out = a;
        return true;
    }
    if (fp_dim_known(b)) {
        *out = b;
        return true;
    }
    if (a.sym && !b.sym && !onnx) {
        *out = a;
        return true;
    }
    if (b.sym && !a.sym && !onnx) {
        *out = b;
        return true;
    }
    *out = sh_dim_unknown();
    return true;
}

bool sh_broadcast(sh_ctx *c, const fp_shape *a, const fp_shape *b, fp_shape *result)
{
    int32_t r = MAX(a->rank, b->rank);
    fp_shape res = sh_new(c, r), *out = &res; /* result may alias a or b */
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        fp_dim da = ia >= 0 ? a->dims[ia] : sh_dim(1), db = ib >= 0 ? b->dims[ib] : sh_dim(1);
        if (!broadcast_dim(da, db, c->runtime_view, &out->dims[i])) {
            g_autofree char *sa = fp_shape_to_string(a), *sb = fp_shape_to_string(b);
            sh_fail(c, "shapes %s and %s do not broadcast (dimension %d: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT ")",
                    sa, sb, i, da.value, db.value);
            return false;
        }
    }
    *result = res;
    return true;
}

bool sh_axis(int64_t axis, int32_t rank, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return false;
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return true;
}

/* [start, end) of Shape node n (opset 15 attributes) over a rank, clamped. */
static void shape_range(const fp_node *n, int32_t rank, int32_t *start, int32_t *end)
{
    int64_t s = fp_node_attr_int(n, "start", 0), e = fp_node_attr_int(n, "end", rank);
    if (s < 0)
        s += rank;
    if (e < 0)
        e += rank;
    *start = (int32_t)CLAMP(s, 0, rank);
    *end = (int32_t)CLAMP(e, 0, rank);
}

void sh_shape_range(sh_ctx *c, int32_t rank, int32_t *start, int32_t *end) { shape_range(c->n, rank, start, end); }

bool sh_shape_folds(const fp_node *n, const fp_shape *s)
{
    return !(n->flags & FP_NODE_RUNTIME_SHAPE) && sh_shape_known(n, s);
}

bool sh_shape_known(const fp_node *n, const fp_shape *s)
{
    if (n->op == FP_OP_SIZE || s->rank < 0)
        return fp_shape_static(s);
    int32_t st, en;
    shape_range(n, s->rank, &st, &en);
    for (int32_t i = st; i < en; i++)
        if (!fp_dim_known(s->dims[i]))
            return false;
    return true;
}
