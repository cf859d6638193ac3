/* fold.c - constant evaluation for shape inference: small integer/float tensors computed at
 * analysis time (ONNX Runtime folds the same nodes), and symbolic integer vectors (`sval`) that
 * carry dims such as `batch` through Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains. */
#include <math.h>
#include <string.h>

#include "fold.h"
#include "reshape_const.h"

/* ---------------------------------------------------------------- numeric arrays */

typedef struct {
    fp_dtype dt;
    fp_shape shape;
    uint64_t n;
    bool isf; /* values in f (floating types) or i (integers, bool) */
    double *f;
    int64_t *i;
} num;

static bool is_float_type(fp_dtype t)
{
    return t == FP_DT_FLOAT || t == FP_DT_DOUBLE || t == FP_DT_FLOAT16 || t == FP_DT_BFLOAT16;
}

static bool is_int_type(fp_dtype t)
{
    switch (t) {
    case FP_DT_INT8:
    case FP_DT_INT16:
    case FP_DT_INT32:
    case FP_DT_INT64:
    case FP_DT_UINT8:
    case FP_DT_UINT16:
    case FP_DT_UINT32:
    case FP_DT_UINT64:
    case FP_DT_BOOL:
        return true;
    default:
        return false;
    }
}

/* The first n elements of the inline integer (or bool) tensor t as int64: signed types sign-extended,
 * the others zero-extended. */
static void load_ints(const fp_tensor *t, uint64_t n, int64_t *out)
{
    const uint8_t *p = t->data;
    if (t->dtype == FP_DT_INT64) {
        if (n) /* an empty tensor may have no data */
            memcpy(out, p, sizeof(int64_t) * n);
        return;
    }
    unsigned sz = fp_dtype_bits(t->dtype) / 8;
    bool sgn = t->dtype == FP_DT_INT8 || t->dtype == FP_DT_INT16 || t->dtype == FP_DT_INT32;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t u = 0;
        memcpy(&u, p + sz * k, sz);
        if (sgn && (u >> (8 * sz - 1)) & 1)
            u |= ~0ull << (8 * sz);
        out[k] = (int64_t)u;
    }
}

/* Loads an inline tensor into c's scratch; false for types we do not evaluate or sizes over c's
 * limit (sh_fold_max). */
static bool num_load(const sh_ctx *c, const fp_tensor *t, num *out)
{
    uint64_t n;
    fp_arena *a = sh_tmp(c);
    if (!t || t->where != FP_DATA_INLINE || t->shape.rank > FP_MAX_RANK || !fp_shape_numel(&t->shape, &n) ||
        n > sh_fold_max(c))
        return false;
    if (!is_float_type(t->dtype) && !is_int_type(t->dtype))
        return false;
    out->dt = t->dtype;
    out->shape = t->shape;
    out->n = n;
    out->isf = is_float_type(t->dtype);
    const uint8_t *p = t->data;
    if (out->isf) {
        out->f = fp_arena_calloc(a, n ? n : 1, sizeof(double));
        for (uint64_t k = 0; k < n; k++) {
            if (t->dtype == FP_DT_FLOAT) {
                float f;
                memcpy(&f, p + 4 * k, 4);
                out->f[k] = f;
            } else if (t->dtype == FP_DT_DOUBLE) {
                memcpy(&out->f[k], p + 8 * k, 8);
            } else if (t->dtype == FP_DT_FLOAT16) {
                uint16_t h;
                memcpy(&h, p + 2 * k, 2);
                out->f[k] = fp_half_to_double(h);
            } else {
                uint16_t h;
                memcpy(&h, p + 2 * k, 2);
                uint32_t x = (uint32_t)h << 16;
                float f;
                memcpy(&f, &x, 4);
                out->f[k] = f;
            }
        }
    } else {
        out->i = fp_arena_calloc(a, n ? n : 1, sizeof(int64_t));
        load_ints(t, n, out->i);
    }
    return true;
}

static double num_get(const num *x, uint64_t k) { return x->isf ? x->f[k] : (double)x->i[k]; }
/* double -> int64 as a saturating conversion (NaN is 0): out-of-range casts are undefined in C. */
static int64_t f2i(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

/* Integer arithmetic of folded tensors wraps around (two's complement) as the runtimes' does;
 * signed overflow is undefined in C, so it goes through uint64_t. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static int64_t num_geti(const num *x, uint64_t k) { return x->isf ? f2i(x->f[k]) : x->i[k]; }

static void num_alloc(fp_arena *a, num *x, fp_dtype dt, const fp_shape *shape)
{
    x->dt = dt;
    x->shape = *shape;
    fp_shape_numel(shape, &x->n);
    x->isf = is_float_type(dt);
    if (x->isf)
        x->f = fp_arena_calloc(a, x->n ? x->n : 1, sizeof(double));
    else
        x->i = fp_arena_calloc(a, x->n ? x->n : 1, sizeof(int64_t));
}

static void num_set(num *x, uint64_t k, double v, int64_t iv, bool from_float)
{
    if (x->isf)
        x->f[k] = from_float ? v : (double)iv;
    else if (x->dt == FP_DT_BOOL)
        x->i[k] = from_float ? v != 0 : iv != 0;
    else
        x->i[k] = from_float ? f2i(v) : iv;
}

/* Stores x as an inline tensor of dtype x->dt, interned in the model (fp_intern_blob): a run of
 * shape inference that folds the same contents again adds nothing to the model's arena. */
static fp_tensor *num_store(sh_ctx *c, const num *x)
{
    fp_tensor tensor, *t = &tensor;
    memset(t, 0, sizeof *t); /* the padding too: interned by its bytes */
    t->dtype = x->dt;
    t->shape.rank = x->shape.rank;
    t->shape.dims = fp_intern_dims(c->m, x->shape.dims, x->shape.rank);
    fp_dtype_bytes(x->dt, x->n, &t->nbytes);
    uint64_t buf[64]; /* most folded tensors are shape vectors: no scratch for them */
    uint8_t *p = t->nbytes <= sizeof buf ? (uint8_t *)buf : fp_arena_alloc_raw(sh_tmp(c), t->nbytes);
    unsigned sz = fp_dtype_bits(x->dt) / 8;
    for (uint64_t k = 0; k < x->n; k++) {
        if (x->dt == FP_DT_FLOAT) {
            float f = (float)x->f[k];
            memcpy(p + 4 * k, &f, 4);
        } else if (x->dt == FP_DT_DOUBLE) {
            memcpy(p + 8 * k, &x->f[k], 8);
        } else if (x->dt == FP_DT_FLOAT16) {
            uint16_t h = fp_double_to_half(x->f[k]);
            memcpy(p + 2 * k, &h, 2);
        } else if (x->dt == FP_DT_BFLOAT16) {
            float f = (float)x->f[k];
            uint32_t u;
            memcpy(&u, &f, 4);
            uint16_t h = (uint16_t)(u >> 16);
            memcpy(p + 2 * k, &h, 2);
        } else {
            uint64_t u = (uint64_t)x->i[k];
            memcpy(p + sz * k, &u, sz);
        }
    }
    t->where = FP_DATA_INLINE;
    if (c->keep) {
        fp_tensor *kept = fp_arena_memdup(c->keep, t, sizeof *t);
        kept->data = p == (uint8_t *)buf ? fp_arena_memdup(c->keep, p, t->nbytes ? t->nbytes : 1) : p;
        return kept;
    }
    t->data = fp_intern_blob(c->m, p, t->nbytes);
    return (fp_tensor *)fp_intern_blob(c->m, t, sizeof *t);
}

/* Offset in `in` (shape broadcast into `out`) of out's linear index k. */
static uint64_t bcast_offset(const fp_shape *out, const fp_shape *in, uint64_t k)
{
    uint64_t off = 0, stride = 1;
    for (int32_t d = out->rank - 1; d >= 0; d--) {
        uint64_t od = (uint64_t)out->dims[d].value;
        uint64_t idx = od ? k % od : 0;
        k = od ? k / od : 0;
        int32_t id = d - (out->rank - in->rank);
        if (id < 0)
            continue;
        uint64_t size = (uint64_t)in->dims[id].value;
        if (size != 1)
            off += idx * stride;
        stride *= size;
    }
    return off;
}

/* ---------------------------------------------------------------- evaluators */

/* Offset in `in` (broadcast into o) of o's linear index k: k itself when in has o's elements. */
static uint64_t bcast_at(const num *o, const num *in, uint64_t k)
{
    return in->n == o->n ? k : bcast_offset(&o->shape, &in->shape, k);
}

static bool eval_binary(fp_op op, const num *a, const num *b, num *o)
{
    for (uint64_t k = 0; k < o->n; k++) {
        uint64_t ia = bcast_at(o, a, k), ib = bcast_at(o, b, k);
        bool fl = a->isf || b->isf;
        double x = num_get(a, ia), y = num_get(b, ib);
        int64_t xi = num_geti(a, ia), yi = num_geti(b, ib);
        switch (op) {
        case FP_OP_ADD:
            num_set(o, k, x + y, wrap_add(xi, yi), fl);
            break;
        case FP_OP_SUB:
            num_set(o, k, x - y, wrap_sub(xi, yi), fl);
            break;
        case FP_OP_MUL:
            num_set(o, k, x * y, wrap_mul(xi, yi), fl);
            break;
        case FP_OP_DIV:
            if (!fl && yi == 0)
                return false;
            /* integer Div truncates (ONNX reference); INT64_MIN / -1 wraps */
            num_set(o, k, x / y, fl ? 0 : yi == -1 ? wrap_sub(0, xi) : xi / yi, fl);
            break;
        case FP_OP_MOD:
            if (!fl && yi == 0)
                return false;
            if (fl) {
                num_set(o, k, fmod(x, y), 0, true);
            } else { /* integer Mod takes the divisor's sign (fmod=0) */
                int64_t r = yi == -1 ? 0 : xi % yi;
                num_set(o, k, 0, r && ((r < 0) != (yi < 0)) ? r + yi : r, false);
            }
            break;
        case FP_OP_POW:
            num_set(o, k, pow(x, y), f2i(pow((double)xi, (double)yi)), true);
            break;
        case FP_OP_MAX:
            num_set(o, k, fmax(x, y), MAX(xi, yi), fl);
            break;
        case FP_OP_MIN:
            num_set(o, k, fmin(x, y), MIN(xi, yi), fl);
            break;
        case FP_OP_EQUAL:
            num_set(o, k, 0, fl ? x == y : xi == yi, false);
            break;
        case FP_OP_LESS:
            num_set(o, k, 0, fl ? x < y : xi < yi, false);
            break;
        case FP_OP_LESS_OR_EQUAL:
            num_set(o, k, 0, fl ? x <= y : xi <= yi, false);
            break;
        case FP_OP_GREATER:
            num_set(o, k, 0, fl ? x > y : xi > yi, false);
            break;
        case FP_OP_GREATER_OR_EQUAL:
            num_set(o, k, 0, fl ? x >= y : xi >= yi, false);
            break;
        case FP_OP_AND:
            num_set(o, k, 0, xi && yi, false);
            break;
        case FP_OP_OR:
            num_set(o, k, 0, xi || yi, false);
            break;
        case FP_OP_XOR:
            num_set(o, k, 0, (!xi) != (!yi), false);
            break;
        default:
            return false;
        }
    }
    return true;
}

static bool eval_unary(fp_op op, const num *a, num *o)
{
    for (uint64_t k = 0; k < o->n; k++) {
        double x = num_get(a, k);
        int64_t xi = num_geti(a, k);
        bool fl = a->isf;
        switch (op) {
        case FP_OP_NEG:
            num_set(o, k, -x, wrap_sub(0, xi), fl);
            break;
        case FP_OP_ABS:
            num_set(o, k, fabs(x), xi < 0 ? wrap_sub(0, xi) : xi, fl);
            break;
        case FP_OP_SQRT:
            num_set(o, k, sqrt(x), 0, true);
            break;
        case FP_OP_FLOOR:
            num_set(o, k, floor(x), xi, fl);
            break;
        case FP_OP_CEIL:
            num_set(o, k, ceil(x), xi, fl);
            break;
        case FP_OP_RECIPROCAL:
            num_set(o, k, 1.0 / x, 0, true);
            break;
        case FP_OP_EXP:
            num_set(o, k, exp(x), 0, true);
            break;
        case FP_OP_LOG:
            num_set(o, k, log(x), 0, true);
            break;
        case FP_OP_RELU:
            num_set(o, k, x > 0 ? x : 0, xi > 0 ? xi : 0, fl);
            break;
        case FP_OP_SIGN:
            num_set(o, k, (x > 0) - (x < 0), (xi > 0) - (xi < 0), fl);
            break;
        case FP_OP_NOT:
            num_set(o, k, 0, !xi, false);
            break;
        case FP_OP_CAST:
        case FP_OP_CAST_LIKE:
        case FP_OP_IDENTITY:
        case FP_OP_RESHAPE:
        case FP_OP_FLATTEN:
        case FP_OP_SQUEEZE:
        case FP_OP_UNSQUEEZE:
        case FP_OP_DROPOUT:
        case FP_OP_EXPAND:
            num_set(o, k, x, xi, fl);
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Multi-index of linear index k in shape s (row-major). */
static void unravel(const fp_shape *s, uint64_t k, int64_t *idx)
{
    for (int32_t d = s->rank - 1; d >= 0; d--) {
        int64_t size = s->dims[d].value;
        idx[d] = size ? (int64_t)(k % (uint64_t)size) : 0;
        k = size ? k / (uint64_t)size : 0;
    }
}

static uint64_t ravel(const fp_shape *s, const int64_t *idx)
{
    uint64_t k = 0;
    for (int32_t d = 0; d < s->rank; d++)
        k = k * (uint64_t)s->dims[d].value + (uint64_t)idx[d];
    return k;
}

static bool eval_gather(sh_ctx *c, const num *x, const num *ind, num *o)
{
    int32_t axis;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", 0), x->shape.rank, &axis))
        return false;
    int64_t oi[FP_MAX_RANK], xi[FP_MAX_RANK], ii[FP_MAX_RANK];
    int32_t r = ind->shape.rank;
    for (uint64_t k = 0; k < o->n; k++) {
        unravel(&o->shape, k, oi);
        for (int32_t d = 0; d < axis; d++)
            xi[d] = oi[d];
        for (int32_t d = 0; d < r; d++)
            ii[d] = oi[axis + d];
        int64_t j = num_geti(ind, ravel(&ind->shape, ii));
        int64_t size = x->shape.dims[axis].value;
        if (j < 0)
            j += size;
        if (j < 0 || j >= size)
            return false;
        xi[axis] = j;
        for (int32_t d = axis + 1; d < x->shape.rank; d++)
            xi[d] = oi[d - 1 + r];
        uint64_t src = ravel(&x->shape, xi);
        num_set(o, k, num_get(x, src), num_geti(x, src), x->isf);
    }
    return true;
}

/* ScatterND (opset 11-18) of data x, indices ind (its last dim a prefix of x's dims) and updates
 * upd into o: x, then each index tuple's slice written (reduction "none"), added or multiplied;
 * false for another reduction or an index out of range. */
static bool eval_scatter_nd(sh_ctx *c, const num *x, const num *ind, const num *upd, num *o)
{
    const char *red = fp_node_attr_string(c->n, "reduction", "none");
    int32_t q = ind->shape.rank, r = x->shape.rank;
    int64_t k = q ? ind->shape.dims[q - 1].value : 0;
    if (!q || k > r || (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul")))
        return false;
    uint64_t slice = 1, tuples = k ? ind->n / (uint64_t)k : 0;
    for (int32_t d = (int32_t)k; d < r; d++)
        slice *= (uint64_t)x->shape.dims[d].value;
    if (upd->n != tuples * slice)
        return false;
    for (uint64_t e = 0; e < o->n; e++)
        num_set(o, e, num_get(x, e), num_geti(x, e), x->isf);
    for (uint64_t t = 0; t < tuples; t++) {
        uint64_t base = 0;
        for (int64_t d = 0; d < k; d++) {
            int64_t size = x->shape.dims[d].value, j = num_geti(ind, t * (uint64_t)k + (uint64_t)d);
            j += j < 0 ? size : 0;
            if (j < 0 || j >= size)
                return false;
            base = base * (uint64_t)size + (uint64_t)j;
        }
        for (uint64_t e = 0; e < slice; e++) {
            uint64_t at = base * slice + e, from = t * slice + e;
            double v = num_get(upd, from), old = num_get(o, at);
            int64_t iv = num_geti(upd, from), iold = num_geti(o, at);
            bool add = !strcmp(red, "add"), mul = !strcmp(red, "mul");
            num_set(o, at,
                    add   ? old + v
                    : mul ? old * v
                          : v,
                    add   ? wrap_add(iold, iv)
                    : mul ? wrap_mul(iold, iv)
                          : iv,
                    upd->isf);
        }
    }
    return true;
}

static bool eval_concat(sh_ctx *c, const num *ins, uint32_t nin, num *o)
{
    int32_t axis;
    if (!sh_axis(fp_node_attr_int(c->n, "axis", 0), o->shape.rank, &axis))
        return false;
    int64_t oi[FP_MAX_RANK];
    for (uint64_t k = 0; k < o->n; k++) {
        unravel(&o->shape, k, oi);
        int64_t pos = oi[axis];
        uint32_t which = 0;
        while (which < nin && pos >= ins[which].shape.dims[axis].value)
            pos -= ins[which++].shape.dims[axis].value;
        if (which == nin)
            return false;
        oi[axis] = pos;
        uint64_t src = ravel(&ins[which].shape, oi);
        num_set(o, k, num_get(&ins[which], src), num_geti(&ins[which], src), ins[which].isf);
    }
    return true;
}

static bool eval_slice(sh_ctx *c, const num *x, num *o)
{
    int64_t starts[FP_MAX_RANK], ends[FP_MAX_RANK], axes[FP_MAX_RANK], steps[FP_MAX_RANK];
    int ns = 0, ne = 0, na = -1, nst = -1;
    if (c->opset < 10) {
        if (!sh_attr_ints(c->n, "starts", starts, FP_MAX_RANK, &ns) ||
            !sh_attr_ints(c->n, "ends", ends, FP_MAX_RANK, &ne))
            return false;
        if (!sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &na))
            na = -1;
    } else {
        if (!sh_ints(c, 1, starts, FP_MAX_RANK, &ns) || !sh_ints(c, 2, ends, FP_MAX_RANK, &ne))
            return false;
        if (sh_val(c, 3) && !sh_ints(c, 3, axes, FP_MAX_RANK, &na))
            return false;
        if (sh_val(c, 4) && !sh_ints(c, 4, steps, FP_MAX_RANK, &nst))
            return false;
    }
    int64_t st[FP_MAX_RANK], sp[FP_MAX_RANK];
    for (int32_t d = 0; d < x->shape.rank; d++)
        st[d] = 0, sp[d] = 1;
    for (int i = 0; i < ns; i++) {
        int32_t a;
        if (!sh_axis(na >= 0 ? axes[i] : i, x->shape.rank, &a))
            return false;
        int64_t step = nst >= 0 ? steps[i] : 1, dim = x->shape.dims[a].value, s = starts[i];
        if (s < 0)
            s += dim;
        s = step > 0 ? CLAMP(s, 0, dim) : CLAMP(s, 0, dim - 1);
        st[a] = s;
        sp[a] = step;
    }
    int64_t oi[FP_MAX_RANK];
    for (uint64_t k = 0; k < o->n; k++) {
        unravel(&o->shape, k, oi);
        for (int32_t d = 0; d < x->shape.rank; d++)
            oi[d] = st[d] + oi[d] * sp[d];
        uint64_t src = ravel(&x->shape, oi);
        num_set(o, k, num_get(x, src), num_geti(x, src), x->isf);
    }
    return true;
}

static bool eval_transpose(sh_ctx *c, const num *x, num *o)
{
    int64_t perm[FP_MAX_RANK];
    int n = 0;
    if (!sh_attr_ints(c->n, "perm", perm, FP_MAX_RANK, &n)) {
        n = x->shape.rank;
        for (int i = 0; i < n; i++)
            perm[i] = n - 1 - i;
    }
    /* a bad perm is the shape rule's to report: here it only means no folding */
    if (n != x->shape.rank || n != o->shape.rank)
        return false;
    bool seen[FP_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
            return false;
        seen[perm[i]] = true;
    }
    int64_t oi[FP_MAX_RANK], xi[FP_MAX_RANK];
    for (uint64_t k = 0; k < o->n; k++) {
        unravel(&o->shape, k, oi);
        for (int i = 0; i < n; i++)
            xi[perm[i]] = oi[i];
        uint64_t src = ravel(&x->shape, xi);
        num_set(o, k, num_get(x, src), num_geti(x, src), x->isf);
    }
    return true;
}

static bool eval_reduce(sh_ctx *c, const num *x, num *o)
{
    int64_t axes[FP_MAX_RANK];
    int n = 0;
    bool keep = fp_node_attr_int(c->n, "keepdims", 1) != 0;
    if (c->n->n_inputs > 1 && sh_val(c, 1)) {
        if (!sh_ints(c, 1, axes, FP_MAX_RANK, &n))
            return false;
    } else if (!sh_attr_ints(c->n, "axes", axes, FP_MAX_RANK, &n)) {
        n = 0;
    }
    bool red[FP_MAX_RANK] = {false};
    for (int32_t d = 0; d < x->shape.rank; d++)
        red[d] = n == 0;
    for (int i = 0; i < n; i++) {
        int32_t a;
        if (!sh_axis(axes[i], x->shape.rank, &a))
            return false;
        red[a] = true;
    }
    fp_op op = c->n->op;
    double *acc = g_new(double, o->n ? o->n : 1);
    uint64_t *cnt = g_new0(uint64_t, o->n ? o->n : 1);
    for (uint64_t k = 0; k < o->n; k++)
        acc[k] = op == FP_OP_REDUCE_PROD  ? 1
                 : op == FP_OP_REDUCE_MIN ? INFINITY
                 : op == FP_OP_REDUCE_MAX ? -INFINITY
                                          : 0;
    int64_t xi[FP_MAX_RANK], oi[FP_MAX_RANK];
    for (uint64_t k = 0; k < x->n; k++) {
        unravel(&x->shape, k, xi);
        int32_t r = 0;
        for (int32_t d = 0; d < x->shape.rank; d++) {
            if (red[d] && !keep)
                continue;
            oi[r++] = red[d] ? 0 : xi[d];
        }
        uint64_t dst = ravel(&o->shape, oi);
        double v = num_get(x, k);
        switch (op) {
        case FP_OP_REDUCE_PROD:
            acc[dst] *= v;
            break;
        case FP_OP_REDUCE_MIN:
            acc[dst] = fmin(acc[dst], v);
            break;
        case FP_OP_REDUCE_MAX:
            acc[dst] = fmax(acc[dst], v);
            break;
        default:
            acc[dst] += v;
            break;
        }
        cnt[dst]++;
    }
    for (uint64_t k = 0; k < o->n; k++) {
        double v = op == FP_OP_REDUCE_MEAN && cnt[k] ? acc[k] / (double)cnt[k] : acc[k];
        num_set(o, k, v, f2i(v), true);
    }
    g_free(acc);
    g_free(cnt);
    return true;
}

/* Expand: input 0 broadcast into o's shape. */
static void eval_expand(const num *x, num *o)
{
    for (uint64_t k = 0; k < o->n; k++) {
        uint64_t src = bcast_at(o, x, k);
        num_set(o, k, num_get(x, src), num_geti(x, src), x->isf);
    }
}

/* Where: element-wise ins[1] where ins[0] is non-zero, else ins[2], all three broadcast into o. */
static void eval_where(const num *ins, num *o)
{
    for (uint64_t k = 0; k < o->n; k++) {
        bool cond = num_geti(&ins[0], bcast_at(o, &ins[0], k)) != 0;
        const num *src = cond ? &ins[1] : &ins[2];
        uint64_t off = bcast_at(o, src, k);
        num_set(o, k, num_get(src, off), num_geti(src, off), src->isf);
    }
}

/* Tile: o's element at each multi-index is x's at that index modulo x's dims (same rank). */
static void eval_tile(const num *x, num *o)
{
    for (uint64_t k = 0; k < o->n; k++) {
        int64_t oi[FP_MAX_RANK];
        unravel(&o->shape, k, oi);
        for (int32_t d = 0; d < o->shape.rank; d++)
            oi[d] %= x->shape.dims[d].value;
        uint64_t src = ravel(&x->shape, oi);
        num_set(o, k, num_get(x, src), num_geti(x, src), x->isf);
    }
}

/* Range: start (ins[0]) plus k times delta (ins[2]) for each of o's elements; the limit (ins[1])
 * is in o's shape already. Integer steps wrap around. */
static void eval_range(const num *ins, num *o)
{
    for (uint64_t k = 0; k < o->n; k++)
        num_set(o, k, num_get(&ins[0], 0) + (double)k * num_get(&ins[2], 0),
                wrap_add(num_geti(&ins[0], 0), wrap_mul((int64_t)k, num_geti(&ins[2], 0))), ins[0].isf);
}

/* Output 0 of c->n when it can hold a fold: the only output, of static shape (rank up to
 * FP_MAX_RANK, which the evaluators' per-dim arrays hold) and at most sh_fold_max numeric
 * elements, with input 0 present. NULL otherwise. */
static fp_value *fold_target(const sh_ctx *c)
{
    const fp_node *n = c->n;
    fp_value *out = n->n_outputs ? n->outputs[0] : NULL;
    if (!out || n->n_outputs != 1 || !fp_shape_static(&out->shape) || out->shape.rank > FP_MAX_RANK)
        return NULL;
    uint64_t numel;
    if (!fp_shape_numel(&out->shape, &numel) || numel > sh_fold_max(c))
        return NULL;
    if (!is_float_type(out->dtype) && !is_int_type(out->dtype))
        return NULL;
    /* every op folded here reads its data from input 0: without it (an absent input, e.g. a name
     * starting with a NUL byte) the inputs below would shift into its place */
    if (!n->n_inputs || !n->inputs[0])
        return NULL;
    return out;
}

/* Loads the known contents of c->n's present inputs, in order, into ins (room for max); *nin
 * their count. False when one is not known or not evaluable (num_load), or there are over max. */
static bool load_inputs(sh_ctx *c, num *ins, uint32_t max, uint32_t *nin)
{
    fp_node *n = c->n;
    *nin = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        if (!n->inputs[i])
            continue;
        if (*nin == max)
            return false;
        if (!num_load(c, sh_known(n->inputs[i]), &ins[(*nin)++]))
            return false;
    }
    return true;
}

/* Computes c->n's op over its loaded inputs ins[0..nin) into o (allocated in the output's type and
 * shape); false when the op is not evaluated here or these inputs do not evaluate. */
static bool eval_op(sh_ctx *c, const num *ins, uint32_t nin, num *o)
{
    fp_op op = c->n->op;
    switch (op) {
    case FP_OP_ADD:
    case FP_OP_SUB:
    case FP_OP_MUL:
    case FP_OP_DIV:
    case FP_OP_MOD:
    case FP_OP_POW:
    case FP_OP_EQUAL:
    case FP_OP_LESS:
    case FP_OP_LESS_OR_EQUAL:
    case FP_OP_GREATER:
    case FP_OP_GREATER_OR_EQUAL:
    case FP_OP_AND:
    case FP_OP_OR:
    case FP_OP_XOR:
        return nin == 2 && eval_binary(op, &ins[0], &ins[1], o);
    case FP_OP_MAX:
    case FP_OP_MIN:
    case FP_OP_SUM:
        if (nin == 1)
            return eval_unary(FP_OP_IDENTITY, &ins[0], o);
        return nin == 2 && eval_binary(op == FP_OP_SUM ? FP_OP_ADD : op, &ins[0], &ins[1], o);
    case FP_OP_NEG:
    case FP_OP_ABS:
    case FP_OP_SQRT:
    case FP_OP_FLOOR:
    case FP_OP_CEIL:
    case FP_OP_RECIPROCAL:
    case FP_OP_EXP:
    case FP_OP_LOG:
    case FP_OP_RELU:
    case FP_OP_SIGN:
    case FP_OP_NOT:
    case FP_OP_CAST:
    case FP_OP_CAST_LIKE:
    case FP_OP_IDENTITY:
    case FP_OP_RESHAPE:
    case FP_OP_FLATTEN:
    case FP_OP_SQUEEZE:
    case FP_OP_UNSQUEEZE:
    case FP_OP_DROPOUT:
        return nin >= 1 && eval_unary(op, &ins[0], o);
    case FP_OP_EXPAND:
        eval_expand(&ins[0], o);
        return true;
    case FP_OP_WHERE:
        if (nin == 3)
            eval_where(ins, o);
        return nin == 3;
    case FP_OP_GATHER:
        return nin == 2 && eval_gather(c, &ins[0], &ins[1], o);
    case FP_OP_CONCAT:
        return eval_concat(c, ins, nin, o);
    case FP_OP_SLICE:
        return eval_slice(c, &ins[0], o);
    case FP_OP_TRANSPOSE:
        return eval_transpose(c, &ins[0], o);
    case FP_OP_TILE:
        eval_tile(&ins[0], o);
        return true;
    case FP_OP_REDUCE_PROD:
    case FP_OP_REDUCE_SUM:
    case FP_OP_REDUCE_MIN:
    case FP_OP_REDUCE_MAX:
    case FP_OP_REDUCE_MEAN:
        return eval_reduce(c, &ins[0], o);
    case FP_OP_RANGE:
        if (nin == 3)
            eval_range(ins, o);
        return nin == 3;
    case FP_OP_SCATTER_ND:
        return nin == 3 && ins[0].n == o->n && eval_scatter_nd(c, &ins[0], &ins[1], &ins[2], o);
    default:
        return false;
    }
}

/* Evaluates c->n into its output's `fold`; false when not evaluable. */
static bool evaluate(sh_ctx *c)
{
    fp_value *out = fold_target(c);
    num ins[8];
    uint32_t nin;
    if (!out || !load_inputs(c, ins, G_N_ELEMENTS(ins), &nin))
        return false;
    num o;
    num_alloc(sh_tmp(c), &o, out->dtype, &out->shape);
    if (!eval_op(c, ins, nin, &o))
        return false;
    fp_value_set_fold(out, num_store(c, &o));
    return true;
}

/* ---------------------------------------------------------------- symbolic integer vectors */

static void set_sval(fp_model *m, fp_value *v, const fp_dim *d, int n)
{
    v->sval = (fp_dim *)fp_intern_blob(m, d, sizeof(fp_dim) * (size_t)n);
    v->n_sval = n;
}

/* Whether t seeds an sval: a small inline integer vector; *n its element count. */
static bool seed_count(const fp_tensor *t, uint64_t *n)
{
    return t && t->where == FP_DATA_INLINE && is_int_type(t->dtype) && t->shape.rank <= 1 &&
           fp_shape_numel(&t->shape, n) && *n <= SH_MAX_SVAL;
}

bool fp_fold_seeds(const fp_tensor *t)
{
    uint64_t n;
    return seed_count(t, &n);
}

void fp_fold_seed(fp_model *m, fp_value *v, const fp_tensor *t)
{
    uint64_t n;
    if (!seed_count(t, &n))
        return;
    int64_t x[SH_MAX_SVAL];
    load_ints(t, n, x);
    fp_dim d[SH_MAX_SVAL];
    for (uint64_t k = 0; k < n; k++)
        d[k] = (fp_dim){x[k], NULL};
    set_sval(m, v, d, (int)n);
}

static fp_dim sym_or_unknown(fp_dim d) { return d.sym || d.value >= 0 ? d : (fp_dim){-1, fp_sval_unknown}; }

/* Arithmetic on sval elements: literals compute, a symbol survives x*1, x/1, x+0, x-0. */
static fp_dim sval_arith(fp_op op, fp_dim a, fp_dim b)
{
    fp_dim unk = {-1, fp_sval_unknown};
    if (!a.sym && !b.sym) {
        switch (op) {
        case FP_OP_ADD:
            return (fp_dim){a.value + b.value, NULL};
        case FP_OP_SUB:
            return (fp_dim){a.value - b.value, NULL};
        case FP_OP_MUL:
            return (fp_dim){a.value * b.value, NULL};
        case FP_OP_DIV:
            return b.value ? (fp_dim){a.value / b.value, NULL} : unk;
        case FP_OP_MAX:
            return (fp_dim){MAX(a.value, b.value), NULL};
        case FP_OP_MIN:
            return (fp_dim){MIN(a.value, b.value), NULL};
        default:
            return unk;
        }
    }
    if (a.sym == fp_sval_unknown || b.sym == fp_sval_unknown)
        return unk;
    if ((op == FP_OP_MUL || op == FP_OP_DIV) && !b.sym && b.value == 1)
        return a;
    if (op == FP_OP_MUL && !a.sym && a.value == 1)
        return b;
    if ((op == FP_OP_ADD || op == FP_OP_SUB) && !b.sym && b.value == 0)
        return a;
    if (op == FP_OP_ADD && !a.sym && a.value == 0)
        return b;
    if (op == FP_OP_DIV && a.sym == b.sym)
        return (fp_dim){1, NULL};
    return unk;
}

/* sval of a Shape node (input 0's dims in its [start, end)) or Size node (their product) into d;
 * the count, or -1 when input 0's rank is unknown. */
static int sval_shape_size(sh_ctx *c, fp_dim *d)
{
    const fp_shape *s = sh_in(c, 0);
    if (!s)
        return -1;
    int cnt = 0;
    if (c->n->op == FP_OP_SIZE) {
        fp_dim acc = {1, NULL};
        for (int32_t i = 0; i < s->rank; i++)
            acc = sval_arith(FP_OP_MUL, acc, sym_or_unknown(s->dims[i]));
        d[cnt++] = acc;
        return cnt;
    }
    int32_t st, en;
    sh_shape_range(c, s->rank, &st, &en);
    for (int32_t i = st; i < en && cnt < SH_MAX_SVAL; i++)
        d[cnt++] = sym_or_unknown(s->dims[i]);
    return cnt;
}

/* sval of a node that passes input `in`'s vector on unchanged (Identity, Reshape, Squeeze,
 * Unsqueeze, Flatten, Dropout, and Cast to an integer type) into d; the count, or -1 when `in` has
 * none or the output is not a vector. */
static int sval_pass(const fp_node *n, const fp_value *in, const fp_value *out, fp_dim *d)
{
    if (!in || in->n_sval < 0 || out->shape.rank > 1)
        return -1;
    if (n->op == FP_OP_CAST && !is_int_type((fp_dtype)fp_node_attr_int(n, "to", 0)))
        return -1;
    memcpy(d, in->sval, sizeof(fp_dim) * (size_t)in->n_sval);
    return in->n_sval;
}

/* sval of a Gather of `in`'s vector at the known indices of input 1 into d; the count, or -1 when
 * either is not known or an index is out of range. */
static int sval_gather(sh_ctx *c, const fp_value *in, fp_dim *d)
{
    int64_t idx[SH_MAX_SVAL];
    int ni = 0, cnt = 0;
    if (!in || in->n_sval < 0 || !sh_ints(c, 1, idx, SH_MAX_SVAL, &ni))
        return -1;
    for (int i = 0; i < ni; i++) {
        int64_t j = idx[i] < 0 ? idx[i] + in->n_sval : idx[i];
        if (j < 0 || j >= in->n_sval)
            return -1;
        d[cnt++] = in->sval[j];
    }
    return cnt;
}

/* sval of a Concat of its inputs' vectors into d; the count, or -1 when one has none or the result
 * would be over SH_MAX_SVAL. */
static int sval_concat(const fp_node *n, fp_dim *d)
{
    int cnt = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const fp_value *v = n->inputs[i];
        if (!v || v->n_sval < 0 || cnt + v->n_sval > SH_MAX_SVAL)
            return -1;
        memcpy(d + cnt, v->sval, sizeof(fp_dim) * (size_t)v->n_sval);
        cnt += v->n_sval;
    }
    return cnt;
}

/* The one-element starts, ends, axes and steps of Slice c->n into st, en, ax, sp: its attributes
 * before opset 10 (steps 1), its known inputs after. False when they are not known so. */
static bool slice_params(sh_ctx *c, int64_t *st, int64_t *en, int64_t *ax, int64_t *sp)
{
    int k = 0;
    if (c->opset < 10)
        return sh_attr_ints(c->n, "starts", st, 1, &k) && k == 1 && sh_attr_ints(c->n, "ends", en, 1, &k) && k == 1 &&
               (!fp_node_attr(c->n, "axes") || (sh_attr_ints(c->n, "axes", ax, 1, &k) && k == 1));
    if (!sh_ints(c, 1, st, 1, &k) || !sh_ints(c, 2, en, 1, &k))
        return false;
    if (sh_val(c, 3) && !sh_ints(c, 3, ax, 1, &k))
        return false;
    return !sh_val(c, 4) || sh_ints(c, 4, sp, 1, &k);
}

/* sval of a Slice of `in`'s vector by known one-element starts, ends, axes (0 or -1) and steps
 * into d; the count (0 for a zero step), or -1 when those are not known. */
static int sval_slice(sh_ctx *c, const fp_value *in, fp_dim *d)
{
    int64_t st[1], en[1], ax[1] = {0}, sp[1] = {1};
    int cnt = 0;
    if (!in || in->n_sval < 0 || !slice_params(c, st, en, ax, sp) || (ax[0] != 0 && ax[0] != -1))
        return -1;
    int64_t dim = in->n_sval, s = st[0] < 0 ? st[0] + dim : st[0], e = en[0] < 0 ? en[0] + dim : en[0];
    if (sp[0] > 0) {
        s = CLAMP(s, 0, dim);
        e = CLAMP(e, 0, dim);
        for (int64_t i = s; i < e; i += sp[0])
            d[cnt++] = in->sval[i];
    } else if (sp[0] < 0) {
        s = CLAMP(s, 0, dim - 1);
        e = CLAMP(e, -1, dim - 1);
        for (int64_t i = s; i > e; i += sp[0])
            d[cnt++] = in->sval[i];
    }
    return cnt;
}

/* sval of an element-wise Add, Sub, Mul, Div, Max or Min of two vectors (one may have a single
 * element, broadcast) into d (sval_arith); the count, or -1 when either has none or they differ in
 * length. */
static int sval_binary(sh_ctx *c, const fp_value *a, fp_dim *d)
{
    fp_value *b = sh_val(c, 1);
    if (!a || !b || a->n_sval < 0 || b->n_sval < 0 || c->n->n_inputs != 2)
        return -1;
    int na = a->n_sval, nb = b->n_sval;
    if (na != nb && na != 1 && nb != 1)
        return -1;
    int cnt = MAX(na, nb);
    for (int i = 0; i < cnt; i++)
        d[i] = sval_arith(c->n->op, a->sval[na == 1 ? 0 : i], b->sval[nb == 1 ? 0 : i]);
    return cnt;
}

/* sval of a ConstantOfShape that did not fold, of an integer type and at most SH_MAX_SVAL
 * elements, into d: its `value` attribute (0 without one) repeated; the count, or -1. */
static int sval_constant_of_shape(sh_ctx *c, const fp_value *out, fp_dim *d)
{
    uint64_t numel;
    if (fp_value_fold(out) || !fp_shape_numel(&out->shape, &numel) || numel > SH_MAX_SVAL)
        return -1;
    const fp_attr *val = fp_node_attr(c->n, "value");
    num x;
    int64_t fill = 0;
    if (val && val->type == FP_ATTR_TENSOR && num_load(c, val->u.t, &x) && x.n == 1)
        fill = num_geti(&x, 0);
    if (!is_int_type(out->dtype))
        return -1;
    int cnt = 0;
    for (uint64_t i = 0; i < numel; i++)
        d[cnt++] = (fp_dim){fill, NULL};
    return cnt;
}

/* Propagates sval through shape-manipulating nodes (symbols kept): output 0 of c->n takes the
 * vector its op computes from its inputs' svals, when that is known and the output is a vector. */
static void propagate_sval(sh_ctx *c)
{
    fp_node *n = c->n;
    fp_value *out = n->n_outputs ? n->outputs[0] : NULL;
    if (!out)
        return;
    fp_value *in = sh_val(c, 0);
    fp_dim d[SH_MAX_SVAL];
    int cnt;
    switch (n->op) {
    case FP_OP_SHAPE:
    case FP_OP_SIZE:
        cnt = sval_shape_size(c, d);
        break;
    case FP_OP_IDENTITY:
    case FP_OP_RESHAPE:
    case FP_OP_SQUEEZE:
    case FP_OP_UNSQUEEZE:
    case FP_OP_FLATTEN:
    case FP_OP_CAST:
    case FP_OP_DROPOUT:
        cnt = sval_pass(n, in, out, d);
        break;
    case FP_OP_GATHER:
        cnt = sval_gather(c, in, d);
        break;
    case FP_OP_CONCAT:
        cnt = sval_concat(n, d);
        break;
    case FP_OP_SLICE:
        cnt = sval_slice(c, in, d);
        break;
    case FP_OP_ADD:
    case FP_OP_SUB:
    case FP_OP_MUL:
    case FP_OP_DIV:
    case FP_OP_MAX:
    case FP_OP_MIN:
        cnt = sval_binary(c, in, d);
        break;
    case FP_OP_CONSTANT_OF_SHAPE:
        cnt = sval_constant_of_shape(c, out, d);
        break;
    default:
        return;
    }
    if (cnt < 0 || out->shape.rank > 1)
        return;
    set_sval(c->m, out, d, cnt);
}

/* Shape / Size of c->n's input 0 (static) into output 0's fold. */
static void fold_shape(sh_ctx *c)
{
    const fp_shape *s = sh_in(c, 0);
    fp_value *out = c->n->outputs[0];
    num o;
    num_alloc(sh_tmp(c), &o, FP_DT_INT64, &out->shape);
    if (c->n->op == FP_OP_SIZE) {
        uint64_t numel = 0;
        fp_shape_numel(s, &numel);
        o.i[0] = (int64_t)numel;
    } else {
        int32_t st, en;
        sh_shape_range(c, s->rank, &st, &en);
        for (int32_t i = st; i < en; i++)
            o.i[i - st] = s->dims[i].value;
    }
    fp_value_set_fold(out, num_store(c, &o));
}

/* The part sizes of Split c->n along an axis of `dim` elements into sizes (room for n_outputs):
 * the `split` input (opset 13 on) or attribute, else equal parts, the last one smaller when they do
 * not divide the axis (opset 18's num_outputs). False when they are not known or do not cover it. */
static bool split_sizes(sh_ctx *c, int64_t dim, int64_t *sizes)
{
    const fp_node *n = c->n;
    int parts = (int)n->n_outputs, ns = 0;
    bool listed = sh_val(c, 1) || fp_node_attr(n, "split");
    if (listed && !(sh_val(c, 1) ? sh_ints(c, 1, sizes, parts, &ns) : sh_attr_ints(n, "split", sizes, parts, &ns)))
        return false;
    for (int64_t k = 0, part = (dim + parts - 1) / parts; !listed && k < parts; k++)
        sizes[k] = MIN(part, dim - MIN(dim, k * part));
    ns = listed ? ns : parts;
    int64_t sum = 0;
    for (int k = 0; k < ns; k++) {
        if (sizes[k] < 0)
            return false;
        sum += sizes[k];
    }
    return ns == parts && sum == dim;
}

/* Split c->n of a known tensor: each output's fold (of its static shape, at most
 * sh_fold_max elements), seeded as an sval too; outputs past one the fold cannot hold are
 * left without. */
static void fold_split(sh_ctx *c)
{
    fp_node *n = c->n;
    num x;
    int32_t axis;
    int64_t sizes[SH_MAX_SVAL], idx[FP_MAX_RANK], off = 0;
    const fp_tensor *t = sh_known(n->inputs[0]);
    if (!t || n->n_outputs > SH_MAX_SVAL || !num_load(c, t, &x) || x.shape.rank < 1 ||
        !sh_axis(fp_node_attr_int(n, "axis", 0), x.shape.rank, &axis) ||
        !split_sizes(c, x.shape.dims[axis].value, sizes))
        return;
    for (uint32_t k = 0; k < n->n_outputs; off += sizes[k++]) {
        fp_value *out = n->outputs[k];
        uint64_t numel;
        if (!out || !fp_shape_static(&out->shape) || out->shape.rank != x.shape.rank ||
            out->shape.dims[axis].value != sizes[k] || !fp_shape_numel(&out->shape, &numel) || numel > sh_fold_max(c))
            return;
        num o;
        num_alloc(sh_tmp(c), &o, out->dtype, &out->shape);
        for (uint64_t e = 0; e < o.n; e++) {
            unravel(&o.shape, e, idx);
            idx[axis] += off;
            uint64_t src = ravel(&x.shape, idx);
            num_set(&o, e, num_get(&x, src), num_geti(&x, src), x.isf);
        }
        fp_value_set_fold(out, num_store(c, &o));
        fp_fold_seed(c->m, out, fp_value_fold(out));
    }
}

static void fold_inputs(sh_ctx *c) { evaluate(c); }

/* ---------------------------------------------------------------- memo */

/* A fold is a function of what it reads: the op, its opset, attributes (names by identity), the
 * contents of its inputs (interned or model-owned tensors: the same pointer is the same contents)
 * or, for Shape and Size, the input's shape, and the output's dtype and shape. Those are written as words into a key; a
 * node whose key matches one folded earlier in the run takes that result. Keys longer than
 * MEMO_WORDS (long attribute lists) are not memoized. */
#define MEMO_WORDS 160

struct fp_fold_memo {
    GHashTable *t; /* memo_key* -> memo_val* */
    fp_arena *a;   /* the keys and values */
};

/* A node's fold (NULL: it does not fold) and the sval seeded from it. */
typedef struct {
    const fp_tensor *fold;
    const fp_dim *sval;
    int32_t n_sval;
} memo_val;

typedef struct {
    guint hash;
    uint32_t n;
    const uint64_t *w;
} memo_key;

typedef struct {
    uint32_t n;
    bool full;
    uint64_t w[MEMO_WORDS];
} key_buf;

static guint memo_hash(gconstpointer p) { return ((const memo_key *)p)->hash; }

static gboolean memo_equal(gconstpointer a, gconstpointer b)
{
    const memo_key *x = a, *y = b;
    return x->n == y->n && memcmp(x->w, y->w, sizeof(uint64_t) * x->n) == 0;
}

fp_fold_memo *fp_fold_memo_new(void)
{
    fp_fold_memo *m = g_new(fp_fold_memo, 1);
    m->t = g_hash_table_new(memo_hash, memo_equal);
    m->a = fp_arena_new();
    return m;
}

void fp_fold_memo_free(fp_fold_memo *memo)
{
    if (!memo)
        return;
    g_hash_table_destroy(memo->t);
    fp_arena_free(memo->a);
    g_free(memo);
}

static inline void put(key_buf *k, uint64_t x)
{
    if (k->n < MEMO_WORDS)
        k->w[k->n++] = x;
    else
        k->full = true;
}

static void put_bytes(key_buf *k, const void *p, size_t len)
{
    put(k, len);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, (const uint8_t *)p + i, MIN(len - i, 8));
        put(k, w);
    }
}

static void put_shape(key_buf *k, const fp_shape *s)
{
    put(k, (uint64_t)(int64_t)s->rank);
    for (int32_t d = 0; d < s->rank; d++) {
        put(k, (uint64_t)s->dims[d].value);
        put(k, (uint64_t)(uintptr_t)s->dims[d].sym);
    }
}

static void put_attrs(key_buf *k, const fp_node *n)
{
    put(k, n->n_attrs);
    for (uint32_t i = 0; i < n->n_attrs && !k->full; i++) {
        const fp_attr *a = &n->attrs[i];
        put(k, (uint64_t)(uintptr_t)a->name); /* immutable: the same pointer is the same name */
        put(k, (uint64_t)(uintptr_t)a->ref_attr_name);
        put(k, (uint64_t)a->type);
        put(k, a->n);
        uint64_t bits;
        switch (a->type) {
        case FP_ATTR_INT:
            put(k, (uint64_t)a->u.i);
            break;
        case FP_ATTR_FLOAT:
            memcpy(&bits, &a->u.f, 8);
            put(k, bits);
            break;
        case FP_ATTR_STRING:
            put_bytes(k, a->u.s, a->n);
            break;
        case FP_ATTR_INTS:
            for (uint32_t j = 0; j < a->n; j++)
                put(k, (uint64_t)a->u.ints[j]);
            break;
        case FP_ATTR_FLOATS:
            for (uint32_t j = 0; j < a->n; j++) {
                memcpy(&bits, &a->u.floats[j], 8);
                put(k, bits);
            }
            break;
        default:
            put(k, (uint64_t)(uintptr_t)a->u.t);
            break; /* tensors, graphs...: by identity */
        }
    }
}

/* The key of c->n's fold into k: `kind` 1 for a fold of the inputs' contents, 2 for Shape/Size
 * (the input's shape); false when too long. */
static bool memo_key_of(const sh_ctx *c, int kind, key_buf *k)
{
    const fp_node *n = c->n;
    const fp_value *out = n->outputs[0];
    k->n = 0;
    k->full = false;
    put(k, (uint64_t)kind);
    put(k, (uint64_t)n->op);
    put(k, (uint64_t)c->opset);
    put(k, n->n_inputs);
    put(k, n->n_outputs);
    put(k, (uint64_t)out->dtype);
    put_shape(k, &out->shape);
    if (kind == 2) {
        put_shape(k, &n->inputs[0]->shape);
    } else {
        for (uint32_t i = 0; i < n->n_inputs; i++)
            put(k, (uint64_t)(uintptr_t)(n->inputs[i] ? sh_known(n->inputs[i]) : NULL));
    }
    put_attrs(k, n);
    return !k->full;
}

static memo_key key_view(const key_buf *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < k->n; i++)
        h = (h + k->w[i]) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    return (memo_key){(guint)(h ^ (h >> 29)), k->n, k->w};
}

static void memo_put(fp_fold_memo *memo, const key_buf *k, const fp_value *out)
{
    memo_key *key = fp_arena_alloc_raw(memo->a, sizeof *key);
    *key = key_view(k);
    key->w = fp_arena_memdup(memo->a, k->w, sizeof(uint64_t) * k->n);
    memo_val *val = fp_arena_alloc_raw(memo->a, sizeof *val);
    *val = (memo_val){fp_value_fold(out), out->sval, out->n_sval};
    g_hash_table_insert(memo->t, key, val);
}

/* Folds c->n (kind as memo_key_of) with fold(c), through the memo when there is one. True when
 * output 0 is complete: folded, and its sval seeded from the fold; false when the caller has to
 * seed it (no memo) or propagate sval (no fold). */
static bool fold_memo(sh_ctx *c, fp_fold_memo *memo, int kind, void (*fold)(sh_ctx *c))
{
    fp_value *out = c->n->outputs[0];
    key_buf k;
    if (!memo || !memo_key_of(c, kind, &k)) {
        fold(c);
        return false;
    }
    memo_key key = key_view(&k);
    const memo_val *hit = g_hash_table_lookup(memo->t, &key);
    if (hit) {
        if (!hit->fold)
            return false;
        fp_value_set_fold(out, hit->fold);
        out->sval = (fp_dim *)hit->sval;
        out->n_sval = hit->n_sval;
        return true;
    }
    fold(c);
    if (fp_value_fold(out))
        fp_fold_seed(c->m, out, fp_value_fold(out));
    memo_put(memo, &k, out);
    return fp_value_fold(out) != NULL;
}

/* The input of the live Reshape that reads v as its target shape, or NULL. */
static const fp_value *reshape_root(const fp_value *v)
{
    for (uint32_t i = 0; i < v->n_uses; i++) {
        const fp_node *r = v->uses[i].node;
        if (fp_node_live(r) && r->op == FP_OP_RESHAPE && r->n_inputs > 1 && r->inputs[1] == v)
            return r->inputs[0];
    }
    return NULL;
}

bool fp_fold_reshape_ints(const fp_node *concat, int64_t *vals)
{
    const fp_value *out = concat->n_outputs == 1 ? concat->outputs[0] : NULL;
    if (!out || out->dtype != FP_DT_INT64 || out->shape.rank != 1 || !fp_dim_known(out->shape.dims[0]) ||
        out->shape.dims[0].value > INT32_MAX)
        return false;
    int len = (int)out->shape.dims[0].value;
    return fp_reshape_const(concat, reshape_root(out), vals, len) == len;
}

/* The Concat ReshapeFusion turns into a constant (FP_NODE_RESHAPE_CONST): ReshapeFusion's
 * constant (fp_fold_reshape_ints) as its fold and its sval. */
static void fold_reshape_const(sh_ctx *c)
{
    fp_value *out = c->n->outputs[0];
    num o;
    num_alloc(sh_tmp(c), &o, FP_DT_INT64, &out->shape);
    fp_fold_reshape_ints(c->n, o.i);
    fp_value_set_fold(out, num_store(c, &o));
    fp_fold_seed(c->m, out, fp_value_fold(out));
}

void fp_fold_node(sh_ctx *c, fp_fold_memo *memo)
{
    fp_node *n = c->n;
    if (n->op == FP_OP_CONSTANT_OF_SHAPE && n->n_outputs == 1 && n->outputs[0]) {
        /* evaluated by fill, not from inputs */
        fp_value *out = n->outputs[0];
        uint64_t numel;
        const fp_attr *val = fp_node_attr(n, "value");
        num x, o;
        if (fp_shape_numel(&out->shape, &numel) && numel <= sh_fold_max(c)) {
            num_alloc(sh_tmp(c), &o, out->dtype, &out->shape);
            bool have = val && val->type == FP_ATTR_TENSOR && num_load(c, val->u.t, &x) && x.n == 1;
            for (uint64_t k = 0; k < o.n; k++)
                num_set(&o, k, have ? num_get(&x, 0) : 0, have ? num_geti(&x, 0) : 0, have && x.isf);
            fp_value_set_fold(out, num_store(c, &o));
        }
    } else if (n->op == FP_OP_SEQUENCE_LENGTH && n->n_outputs == 1 && n->outputs[0] && n->inputs[0] &&
               fp_value_n_elems(n->inputs[0]) >= 0) {
        num o;
        num_alloc(sh_tmp(c), &o, FP_DT_INT64, &n->outputs[0]->shape);
        o.i[0] = fp_value_n_elems(n->inputs[0]);
        fp_value_set_fold(n->outputs[0], num_store(c, &o));
    } else if (n->op == FP_OP_SPLIT && n->n_inputs && n->inputs[0] && sh_known(n->inputs[0])) {
        fold_split(c); /* several outputs: not memoized (a memo holds output 0) */
        return;
    } else if (n->op == FP_OP_SHAPE || n->op == FP_OP_SIZE) {
        const fp_shape *s = sh_in(c, 0);
        fp_value *out = n->n_outputs ? n->outputs[0] : NULL;
        if (s && out && sh_shape_known(n, s) && fold_memo(c, memo, 2, fold_shape))
            return;
    } else {
        bool all_known = n->n_inputs > 0;
        /* the first unknown input settles it: the weights after it are not read (their tensors
           are a cache miss each) */
        for (uint32_t i = 0; i < n->n_inputs && all_known; i++)
            if (n->inputs[i] && !sh_known(n->inputs[i]))
                all_known = false;
        if (all_known && n->n_outputs && n->outputs[0]) {
            if (fold_memo(c, memo, 1, fold_inputs))
                return;
        } else if (all_known) {
            evaluate(c);
        }
    }
    fp_value *out = n->n_outputs ? n->outputs[0] : NULL;
    if (out && fp_value_fold(out)) {
        fp_fold_seed(c->m, out, fp_value_fold(out));
        return;
    }
    propagate_sval(c);
    if (n->op == FP_OP_CONCAT && (n->flags & FP_NODE_RESHAPE_CONST) && n->n_outputs == 1 &&
        fp_fold_reshape_ints(n, NULL))
        fold_reshape_const(c);
}

/* ---------------------------------------------------------------- evaluation on demand */

/* The elements fp_shape_evaluate folds in all, in units of its largest tensor. */
#define FOLD_CONE_BUDGET 16

/* A value's state before fp_shape_evaluate folded it, put back after. */
typedef struct {
    fp_value *v;
    const fp_tensor *fold;
    fp_dim *sval;
    int32_t n_sval;
} saved_value;

typedef struct {
    GPtrArray *order; /* the nodes to fold, each after the producers of its inputs */
    GHashTable *seen; /* fp_node * visited */
    guint max_nodes;
} cone;

/* Appends n and, first, the producers of its inputs not known yet to k->order (a Shape or Size
 * reads no content); false when an input is neither known nor produced (a graph input), or the
 * cone outgrows k->max_nodes or depth levels. */
static bool cone_add(cone *k, fp_node *n, int depth)
{
    if (g_hash_table_contains(k->seen, n))
        return true;
    g_hash_table_add(k->seen, n);
    if (depth <= 0 || k->order->len >= k->max_nodes || n->n_subgraphs)
        return false;
    bool reads_content = n->op != FP_OP_SHAPE && n->op != FP_OP_SIZE;
    for (uint32_t i = 0; reads_content && i < n->n_inputs; i++) {
        fp_value *x = n->inputs[i];
        if (!x || sh_known(x))
            continue;
        if (!x->producer || !cone_add(k, x->producer, depth - 1))
            return false;
    }
    g_ptr_array_add(k->order, n);
    return true;
}

static void save_outputs(GArray *saved, fp_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k]) {
            fp_value *v = n->outputs[k];
            saved_value s = {v, fp_value_fold(v), v->sval, v->n_sval};
            g_array_append_val(saved, s);
        }
}

/* Folds k's nodes in order into arena (saving each one's outputs' state first in saved); false at
 * the first that does not fold, or once their outputs together pass FOLD_CONE_BUDGET times
 * max_elems elements (a hostile graph's thousands of large folds would take gigabytes). */
static bool fold_cone(fp_model *m, const cone *k, uint64_t max_elems, fp_arena *arena, GArray *saved)
{
    uint64_t total = 0, numel;
    for (guint i = 0; i < k->order->len; i++) {
        fp_node *n = k->order->pdata[i];
        if (!n->n_outputs || !n->outputs[0] || !fp_shape_numel(&n->outputs[0]->shape, &numel) ||
            (total += numel) > FOLD_CONE_BUDGET * max_elems)
            return false;
        save_outputs(saved, n);
        sh_ctx c = {.m = m, .n = n, .opset = n->opset, .tmp = arena, .keep = arena, .fold_max = max_elems};
        fp_fold_node(&c, NULL);
        if (!fp_value_fold(n->outputs[0]))
            return false;
    }
    return true;
}

const fp_tensor *fp_shape_evaluate(fp_model *m, fp_value *v, uint64_t max_elems, fp_arena *arena)
{
    if (sh_known(v) || !v->producer)
        return sh_known(v);
    cone k = {g_ptr_array_new(), g_hash_table_new(NULL, NULL), 4096};
    g_autoptr(GArray) saved = g_array_new(false, false, sizeof(saved_value));
    const fp_tensor *out = NULL;
    if (cone_add(&k, v->producer, 256) && fold_cone(m, &k, max_elems, arena, saved))
        out = fp_value_fold(v);
    for (guint i = saved->len; i-- > 0;) {
        saved_value *s = &g_array_index(saved, saved_value, i);
        fp_value_set_fold(s->v, s->fold);
        s->v->sval = s->sval;
        s->v->n_sval = s->n_sval;
    }
    g_ptr_array_free(k.order, true);
    g_hash_table_destroy(k.seen);
    return out;
}
