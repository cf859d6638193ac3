/* transpose.c - ONNX Runtime's transpose optimizer (transpose.h), as
 * onnxruntime/core/optimizer/transpose_optimization/onnx_transpose_optimization.cc has it: its
 * handler table; its cost estimate (the dims other than 1 of each input the push transposes, minus
 * those of an input whose inverse Transpose can go, 0 for a constant, plus the largest output's
 * unless a path of handled ops leads from an output to a Transpose); its rewrites (the inputs
 * transposed by the inverse permutation, constants at compile time, the outputs by the
 * permutation; Transposes cancelled, composed, or reused); of ort_transpose_optimization.cc's
 * extended handlers, QLinearAdd/QLinearMul's (after the NHWC pass, where they exist). The handlers ONNX Runtime has for Pad,
 * Tile, ArgMin/ArgMax and QuantizeLinear/DequantizeLinear count for the estimate; a push through
 * one is a diagnostic, not a rewrite. Facts: docs/rules.md. */
#include "passes/transpose.h"

#include <string.h>

enum { MAXR = FP_MAX_RANK, MAX_PUSH_INPUTS = 64 };

typedef enum {
    H_NONE,      /* no handler: a Transpose stops before the op */
    H_UNARY,     /* its input, its outputs */
    H_BROADCAST, /* its inputs but scalars, unsqueezed to the rank first */
    H_FIRST,     /* input 0 (Clip, CastLike) */
    H_SPLIT,     /* input 0, the axis (default 0) remapped */
    H_CONCAT,    /* every input, the axis remapped */
    H_SOFTMAX,   /* input 0, the axis remapped (before opset 13: kept, if no dim crosses it) */
    H_REDUCE,    /* input 0, the axes remapped; without keepdims the outputs' rank falls */
    H_SQUEEZE,
    H_UNSQUEEZE,
    H_GATHER,    /* input 0 of a Gather of one constant index (rank 0): the axis remapped, one dim
                    fewer out (ONNX Runtime 1.30; microsoft/onnxruntime#28755) */
    H_SLICE,     /* input 0, its axes (a constant) remapped in their order */
    H_TRANSPOSE, /* composed with the Transpose it reads, or both go */
    H_OTHER,     /* ONNX Runtime pushes through it; not modelled */
    H_RESHAPE,   /* a Reshape that only permutes the Transpose's output (dims of 1 move freely): as a
                    Transpose; one that splits each of its dims: before it, a Transpose after it */
    H_SHAPE,     /* Shape: of the Transpose's input, a Gather of the permutation after it */
    /* QLinearAdd/QLinearMul (a QDQ unit's fused Add/Mul): A and B (inputs 0 and 3) as a
     * broadcasting op's inputs, its output */
    H_QLINEAR_BINARY,
} handler;

typedef struct {
    fp_model *m;
    fp_graph *g;
    uint8_t *leads; /* a bit per value id at the start: a path of handled ops leads from it to a Transpose */
    uint32_t n_leads;
    GHashTable *readers; /* fp_value* -> GArray of fp_use: the readers of the values this pass rewired */
    GHashTable *consts;  /* fp_value* -> GPtrArray of its permuted copies (made ones reused) */
    int64_t opset;       /* the model's ai.onnx opset (ONNX Runtime's handlers read it) */
    uint32_t serial;     /* names of the values and nodes made */
    fp_transpose_result *res;
    fp_diag *diag;
} tp;

/* A permuted copy of a constant: the permutation (or the unsqueeze) it took and the value. */
typedef struct {
    int64_t key[MAXR + 1];
    int n_key;
    fp_value *v;
} const_copy;

static handler unary_or_none(fp_op op)
{
    switch (op) {
    case FP_OP_CAST:
    case FP_OP_EXP:
    case FP_OP_IDENTITY:
    case FP_OP_LEAKY_RELU:
    case FP_OP_LOG:
    case FP_OP_RECIPROCAL:
    case FP_OP_RELU:
    case FP_OP_SIGMOID:
    case FP_OP_SQRT:
    case FP_OP_TANH:
    case FP_OP_ABS:
    case FP_OP_NOT:
    case FP_OP_CEIL:
    case FP_OP_FLOOR:
    case FP_OP_NEG:
    case FP_OP_ERF:
    case FP_OP_HARD_SIGMOID:
    case FP_OP_ROUND:
    case FP_OP_IS_INF:
    case FP_OP_IS_NAN:
    case FP_OP_SELU:
    case FP_OP_SHRINK:
    case FP_OP_SIGN:
    case FP_OP_SOFTPLUS:
    case FP_OP_SOFTSIGN:
    case FP_OP_THRESHOLDED_RELU:
    case FP_OP_CELU:
    case FP_OP_HARD_SWISH:
    case FP_OP_SIN:
    case FP_OP_COS:
    case FP_OP_TAN:
    case FP_OP_SINH:
    case FP_OP_COSH:
    case FP_OP_ASIN:
    case FP_OP_ACOS:
    case FP_OP_ATAN:
    case FP_OP_ASINH:
    case FP_OP_ACOSH:
    case FP_OP_ATANH:
        return H_UNARY;
    default:
        return H_NONE;
    }
}

/* ONNX Runtime's handler for n (its handler_map, ai.onnx ops). */
static handler handler_of(const fp_node *n)
{
    if ((n->op == FP_OP_ADD || n->op == FP_OP_MUL) && (n->flags & FP_NODE_QUANTIZED) && (n->flags & FP_NODE_FUSED))
        return H_QLINEAR_BINARY; /* the com.microsoft op: ONNX Runtime's extended handler */
    if (*n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return H_NONE;
    switch (n->op) {
    case FP_OP_ADD:
    case FP_OP_MAX:
    case FP_OP_MIN:
    case FP_OP_MUL:
    case FP_OP_SUB:
    case FP_OP_DIV:
    case FP_OP_AND:
    case FP_OP_OR:
    case FP_OP_XOR:
    case FP_OP_MOD:
    case FP_OP_PRELU:
    case FP_OP_BIT_SHIFT:
    case FP_OP_EQUAL:
    case FP_OP_GREATER:
    case FP_OP_LESS:
    case FP_OP_GREATER_OR_EQUAL:
    case FP_OP_LESS_OR_EQUAL:
    case FP_OP_MEAN:
    case FP_OP_SUM:
    case FP_OP_POW:
    case FP_OP_WHERE:
        return H_BROADCAST;
    case FP_OP_CLIP:
    case FP_OP_CAST_LIKE:
        return H_FIRST;
    case FP_OP_TRANSPOSE:
        return H_TRANSPOSE;
    case FP_OP_CONCAT:
        return H_CONCAT;
    case FP_OP_SPLIT:
        return H_SPLIT;
    case FP_OP_SOFTMAX:
    case FP_OP_HARDMAX:
    case FP_OP_LOG_SOFTMAX:
        return H_SOFTMAX;
    case FP_OP_REDUCE_LOG_SUM:
    case FP_OP_REDUCE_LOG_SUM_EXP:
    case FP_OP_REDUCE_MAX:
    case FP_OP_REDUCE_MEAN:
    case FP_OP_REDUCE_MIN:
    case FP_OP_REDUCE_PROD:
    case FP_OP_REDUCE_SUM:
    case FP_OP_REDUCE_SUM_SQUARE:
    case FP_OP_REDUCE_L1:
    case FP_OP_REDUCE_L2:
        return H_REDUCE;
    case FP_OP_SQUEEZE:
        return H_SQUEEZE;
    case FP_OP_UNSQUEEZE:
        return H_UNSQUEEZE;
    case FP_OP_SLICE:
        return H_SLICE;
    case FP_OP_PAD:
    case FP_OP_TILE:
    case FP_OP_ARG_MIN:
    case FP_OP_ARG_MAX:
    case FP_OP_QUANTIZE_LINEAR:
    case FP_OP_DEQUANTIZE_LINEAR:
        return H_OTHER;
    case FP_OP_SHAPE:
        return H_SHAPE;
    case FP_OP_RESHAPE:
        return H_RESHAPE;
    case FP_OP_GATHER:
        return H_GATHER;
    default:
        return unary_or_none(n->op);
    }
}

static bool transposes_outputs(handler h) { return h != H_TRANSPOSE && h != H_RESHAPE && h != H_SHAPE; }

/* The inputs of n a push through it transposes, as a bit mask (0: none, or too many inputs). */
static uint64_t transposable(const fp_node *n, handler h)
{
    if (n->n_inputs == 0 || n->n_inputs > MAX_PUSH_INPUTS)
        return 0;
    if (h == H_QLINEAR_BINARY) /* ONNX Runtime's QLinearBinaryOpInputs: A and B, scalars too */
        return (n->inputs[0] ? 1 : 0) | (n->n_inputs > 3 && n->inputs[3] ? 8 : 0);
    if (h != H_UNARY && h != H_BROADCAST && h != H_CONCAT)
        return n->inputs[0] ? 1 : 0;
    uint64_t mask = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const fp_value *v = n->inputs[i];
        if (v && (h != H_BROADCAST || v->shape.rank != 0)) /* ONNX Runtime's NonScalarInputs */
            mask |= (uint64_t)1 << i;
    }
    return mask;
}

/* ---------------------------------------------------------------- permutations */

/* n's `perm` when it is a permutation of 0..r-1 (ONNX Runtime's GetPermAttrIfValid: none when the
 * attribute is absent). */
static bool perm_of(const fp_node *n, int64_t *perm, int *r)
{
    const fp_attr *a = fp_node_attr(n, "perm");
    if (!a || a->type != FP_ATTR_INTS || a->n > MAXR)
        return false;
    bool seen[MAXR] = {0};
    for (uint32_t i = 0; i < a->n; i++) {
        int64_t p = a->u.ints[i];
        if (p < 0 || p >= (int64_t)a->n || seen[p])
            return false;
        seen[p] = true;
        perm[i] = p;
    }
    *r = (int)a->n;
    return true;
}

static bool perm_eq(const int64_t *a, const int64_t *b, int r)
{
    return memcmp(a, b, sizeof(int64_t) * (size_t)r) == 0;
}

static bool is_identity(const int64_t *perm, int r)
{
    for (int i = 0; i < r; i++)
        if (perm[i] != i)
            return false;
    return true;
}

static void invert(const int64_t *perm, int r, int64_t *inv)
{
    for (int i = 0; i < r; i++)
        inv[perm[i]] = i;
}

/* Transpose(Transpose(x, p1), p2) = Transpose(x, out): out[j] = p1[p2[j]]. */
static void compose(const int64_t *p1, const int64_t *p2, int r, int64_t *out)
{
    for (int j = 0; j < r; j++)
        out[j] = p1[p2[j]];
}

/* ---------------------------------------------------------------- readers */

/* The readers of v: the pass's own list when it rewired v, else v's use list. */
static const fp_use *readers_of(const tp *p, const fp_value *v, uint32_t *n)
{
    GArray *a = g_hash_table_lookup(p->readers, v);
    if (a) {
        *n = a->len;
        return (const fp_use *)(void *)a->data;
    }
    *n = v->n_uses;
    return v->uses;
}

/* The pass's list of v's readers, made from v's use list the first time. */
static GArray *own_readers(tp *p, fp_value *v)
{
    GArray *a = g_hash_table_lookup(p->readers, v);
    if (!a) {
        a = g_array_sized_new(FALSE, FALSE, sizeof(fp_use), v->n_uses + 1);
        g_array_append_vals(a, v->uses, v->n_uses);
        g_hash_table_insert(p->readers, v, a);
    }
    return a;
}

static void drop_reader(tp *p, fp_value *v, const fp_node *n, uint32_t port)
{
    GArray *a = own_readers(p, v);
    for (guint i = 0; i < a->len; i++) {
        const fp_use *u = &g_array_index(a, fp_use, i);
        if (u->node == n && u->port == port) {
            g_array_remove_index(a, i);
            return;
        }
    }
}

/* Input k of n reads v (NULL: none), the reader lists kept. */
static void set_input(tp *p, fp_node *n, uint32_t k, fp_value *v)
{
    if (n->inputs[k])
        drop_reader(p, n->inputs[k], n, k);
    n->inputs[k] = v;
    if (v)
        g_array_append_val(own_readers(p, v), ((fp_use){n, k}));
}

/* The live readers of v; *hidden when a subgraph reads it, which ONNX Runtime's list of consumers
 * does not hold ("not comprehensive"). */
static uint32_t live_readers(const tp *p, const fp_value *v, bool *hidden)
{
    uint32_t n, count = 0;
    const fp_use *u = readers_of(p, v, &n);
    *hidden = v->is_output;
    for (uint32_t i = 0; i < n; i++) {
        if (u[i].port == UINT32_MAX)
            *hidden = true;
        else if (fp_node_live(u[i].node))
            count++;
    }
    return count;
}

/* n goes: no longer a reader of its inputs, its outputs without a producer. */
static void remove_node(tp *p, fp_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k])
            drop_reader(p, n->inputs[k], n, k);
    n->flags |= FP_NODE_REMOVED;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->producer == n)
            n->outputs[k]->producer = NULL;
    if (n->op == FP_OP_TRANSPOSE)
        p->res->removed++;
}

static bool folded_readers_moved(tp *p, fp_node *t);

/* Transpose t goes when nothing reads its output any more (a Shape folded at analysis time, which
 * ONNX Runtime's constant folding made a constant before, reads t's input instead). */
static void remove_if_unread(tp *p, fp_node *t)
{
    bool hidden;
    if (fp_node_live(t) && live_readers(p, t->outputs[0], &hidden) == 0 && !hidden && folded_readers_moved(p, t))
        remove_node(p, t);
}

/* ---------------------------------------------------------------- values and nodes made */

/* A name of p's graph no value has: base, "/tp", a serial number. */
static char *fresh_name(tp *p, const char *base)
{
    for (;;) {
        char *name = g_strdup_printf("%s/tp%u", base, p->serial++);
        if (!fp_graph_find(p->g, name))
            return name;
        g_free(name);
    }
}

/* A new value beside `like` (its dtype and type), of shape dims[0..r) (r < 0: unknown). */
static fp_value *new_value(tp *p, const fp_value *like, const fp_dim *dims, int r)
{
    g_autofree char *name = fresh_name(p, like->name);
    fp_value *v = fp_graph_value_like(p->g, name, like, FP_DT_UNDEFINED);
    v->shape = r < 0 ? (fp_shape){-1, NULL} : (fp_shape){r, fp_intern_dims(p->m, dims, r)};
    return v;
}

/* v's dims in the order `order` gives (out[i] = dims[order[i]]); the rank, or -1 when v has none
 * of that rank. */
static int permuted_dims(const fp_value *v, const int64_t *order, int r, fp_dim *out)
{
    if (v->shape.rank != r)
        return -1;
    for (int i = 0; i < r; i++)
        out[i] = v->shape.dims[order[i]];
    return r;
}

/* A new node of g (ai.onnx, the model's opset) of kind op named after `base`, with room for
 * n_attrs attributes. */
static fp_node *new_node(tp *p, fp_op op, const char *op_type, const char *base, uint32_t n_in, uint32_t n_attrs)
{
    g_autofree char *name = fresh_name(p, base);
    fp_node *n = fp_node_new_attrs(p->g, op, op_type, "", name, n_in, 1, n_attrs);
    n->opset = (int16_t)CLAMP(p->opset, 0, INT16_MAX);
    return n;
}

static fp_attr ints_attr(tp *p, const char *name, const int64_t *vals, int n)
{
    return (fp_attr){.name = fp_intern(p->m, name, -1),
                     .type = FP_ATTR_INTS,
                     .u.ints = fp_arena_memdup(p->m->arena, vals, sizeof(int64_t) * (size_t)MAX(n, 1)),
                     .n = (uint32_t)n};
}

/* Transpose(x, perm): a new node; its output. */
static fp_value *add_transpose(tp *p, fp_value *x, const int64_t *perm, int r)
{
    fp_dim dims[MAXR];
    fp_value *y = new_value(p, x, dims, permuted_dims(x, perm, r, dims));
    fp_node *t = new_node(p, FP_OP_TRANSPOSE, "Transpose", x->name, 1, 1);
    t->attrs[0] = ints_attr(p, "perm", perm, r);
    set_input(p, t, 0, x);
    fp_node_set_output(t, 0, y);
    p->res->inserted++;
    return y;
}

/* n without its attribute `name` (the others in order). */
static void drop_attr(fp_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            memmove(&n->attrs[i], &n->attrs[i + 1], sizeof(fp_attr) * (n->n_attrs - i - 1));
            n->n_attrs--;
            return;
        }
}

static void set_int_attr(tp *p, fp_node *n, const char *name, int64_t v)
{
    fp_node_set_attr(p->m, n, (fp_attr){.name = fp_intern(p->m, name, -1), .type = FP_ATTR_INT, .u.i = v});
}

/* ---------------------------------------------------------------- constants */

/* The copy of constant v made under key[0..n) before, or NULL. */
static fp_value *copy_made(tp *p, fp_value *v, const int64_t *key, int n)
{
    GPtrArray *made = g_hash_table_lookup(p->consts, v);
    for (guint i = 0; made && i < made->len; i++) {
        const const_copy *c = made->pdata[i];
        if (c->n_key == n && memcmp(c->key, key, sizeof(int64_t) * (size_t)n) == 0)
            return c->v;
    }
    return NULL;
}

/* Keeps c as constant v's copy under key[0..n). */
static void remember_copy(tp *p, fp_value *v, const int64_t *key, int n, fp_value *c)
{
    const_copy *cc = fp_arena_calloc(p->m->arena, 1, sizeof(const_copy));
    memcpy(cc->key, key, sizeof(int64_t) * (size_t)n);
    cc->n_key = n;
    cc->v = c;
    GPtrArray *made = g_hash_table_lookup(p->consts, v);
    if (!made)
        g_hash_table_insert(p->consts, v, made = g_ptr_array_new());
    g_ptr_array_add(made, cc);
}

/* Element order of data of shape in[0..r) after Transpose(perm) into out (esize bytes each). */
static void permute_data(const uint8_t *in, uint8_t *out, const fp_shape *s, const int64_t *perm, int r, size_t esize,
                         uint64_t numel)
{
    int64_t idx[MAXR] = {0}, stride[MAXR];
    int64_t acc = 1;
    for (int i = r - 1; i >= 0; i--) {
        stride[i] = acc;
        acc *= s->dims[i].value;
    }
    for (uint64_t k = 0; k < numel; k++) {
        int64_t src = 0;
        for (int i = 0; i < r; i++)
            src += idx[i] * stride[perm[i]];
        memcpy(out + k * esize, in + (size_t)src * esize, esize);
        for (int i = r - 1; i >= 0; i--) /* next output index */
            if (++idx[i] < s->dims[perm[i]].value)
                break;
            else
                idx[i] = 0;
    }
}

/* A new constant: v's contents in shape dims[0..r), moved by perm when not NULL (its inline data
 * permuted; a tensor held elsewhere keeps its place, which no analysis reads). */
static fp_value *new_const(tp *p, fp_value *v, const fp_dim *dims, int r, const int64_t *perm)
{
    const fp_tensor *t = v->tensor ? v->tensor : fp_value_fold(v);
    fp_value *c = new_value(p, v, dims, r);
    fp_tensor *ct = fp_arena_calloc(p->m->arena, 1, sizeof(fp_tensor));
    if (t)
        *ct = *t;
    else
        ct->dtype = v->dtype, ct->where = FP_DATA_NONE;
    ct->shape = c->shape;
    uint64_t numel = 0, esize = 0;
    bool movable = perm && t && t->where == FP_DATA_INLINE && fp_shape_numel(&t->shape, &numel) &&
                   fp_dtype_bits(t->dtype) % 8 == 0 && fp_dtype_bytes(t->dtype, 1, &esize) &&
                   t->nbytes == numel * esize;
    if (movable) {
        uint8_t *data = fp_arena_alloc_raw(p->m->arena, MAX(t->nbytes, 1));
        permute_data(t->data, data, &t->shape, perm, r, esize, numel);
        ct->data = data;
    } else if (perm && t && t->where == FP_DATA_INLINE) {
        ct->where = FP_DATA_NONE, ct->data = NULL;
    }
    c->kind = FP_VALUE_INITIALIZER;
    c->type = FP_TYPE_TENSOR;
    c->decl_dtype = c->dtype;
    c->decl_shape = c->shape;
    c->tensor = ct;
    c->declared = true;
    return c;
}

/* Constant v transposed by perm (a 1-D one of length r permuted likewise), made once. */
static fp_value *const_transposed(tp *p, fp_value *v, const int64_t *perm, int r)
{
    fp_value *c = copy_made(p, v, perm, r);
    if (c)
        return c;
    fp_dim dims[MAXR];
    bool vec = v->shape.rank == 1 && fp_dim_known(v->shape.dims[0]) && v->shape.dims[0].value == r;
    if (vec) {
        const fp_tensor *t = v->tensor ? v->tensor : fp_value_fold(v);
        c = new_const(p, v, v->shape.dims, 1, NULL);
        uint64_t esize = 0;
        if (t && t->where == FP_DATA_INLINE && fp_dtype_bytes(t->dtype, 1, &esize) &&
            t->nbytes == esize * (uint64_t)r) {
            uint8_t *data = fp_arena_alloc_raw(p->m->arena, t->nbytes);
            for (int j = 0; j < r; j++)
                memcpy(data + esize * (size_t)j, (const uint8_t *)t->data + esize * (size_t)perm[j], esize);
            c->tensor->data = data;
        }
    } else {
        c = new_const(p, v, dims, permuted_dims(v, perm, r, dims), perm);
    }
    remember_copy(p, v, perm, r, c);
    return c;
}

/* Constant v with `add` leading dims of 1 (its data as it is), made once. */
static fp_value *const_unsqueezed(tp *p, fp_value *v, int add)
{
    int64_t key[2] = {-1, add}; /* no permutation starts with -1 */
    fp_value *c = copy_made(p, v, key, 2);
    if (c)
        return c;
    fp_dim dims[MAXR];
    int r = v->shape.rank + add;
    for (int i = 0; i < r; i++)
        dims[i] = i < add ? (fp_dim){1, NULL} : v->shape.dims[i - add];
    c = new_const(p, v, dims, r, NULL);
    remember_copy(p, v, key, 2, c);
    return c;
}

/* ---------------------------------------------------------------- inputs and outputs */

/* Input i of n gets `add` leading dims of 1 (ONNX Runtime's UnsqueezeInput): a constant is
 * reshaped at compile time, a Squeeze of those dims is bypassed, else an Unsqueeze is added. */
static void unsqueeze_input(tp *p, fp_node *n, uint32_t i, int add)
{
    fp_value *v = n->inputs[i];
    int64_t axes[MAXR], sq[MAXR];
    for (int k = 0; k < add; k++)
        axes[k] = k;
    if (fp_value_is_constant(v)) {
        set_input(p, n, i, const_unsqueezed(p, v, add));
        return;
    }
    fp_node *s = v->producer;
    if (fp_node_live(s) && s->op == FP_OP_SQUEEZE && s->inputs[0]) {
        const fp_attr *a = fp_node_attr(s, "axes");
        int ns = p->opset >= 13 ? (s->n_inputs > 1 ? fp_value_ints(s->inputs[1], sq, MAXR) : -1)
                                : (a && a->type == FP_ATTR_INTS && a->n <= MAXR ? (int)a->n : -1);
        if (p->opset < 13 && ns > 0)
            memcpy(sq, a->u.ints, sizeof(int64_t) * (size_t)ns);
        if (ns == add && memcmp(sq, axes, sizeof(int64_t) * (size_t)add) == 0) {
            set_input(p, n, i, s->inputs[0]);
            bool hidden;
            if (live_readers(p, v, &hidden) == 0 && !hidden)
                remove_node(p, s);
            return;
        }
    }
    fp_dim dims[MAXR];
    for (int k = 0; k < v->shape.rank + add; k++)
        dims[k] = k < add ? (fp_dim){1, NULL} : v->shape.dims[k - add];
    fp_value *y = new_value(p, v, dims, v->shape.rank + add);
    bool input_axes = p->opset >= 13;
    fp_node *u = new_node(p, FP_OP_UNSQUEEZE, "Unsqueeze", v->name, input_axes ? 2 : 1, input_axes ? 0 : 1);
    if (input_axes) {
        g_autofree char *name = fresh_name(p, v->name);
        u->inputs[1] = fp_graph_int64_initializer(p->g, name, axes, (uint32_t)add);
        g_array_append_val(own_readers(p, u->inputs[1]), ((fp_use){u, 1}));
    } else {
        u->attrs[0] = ints_attr(p, "axes", axes, add);
    }
    set_input(p, u, 0, v);
    fp_node_set_output(u, 0, y);
    set_input(p, n, i, y);
}

/* Input i of n transposed by perm (whose inverse is inv; ONNX Runtime's TransposeInputImpl): a
 * constant at compile time (one element: as it is), a Transpose's output cancelled or composed
 * with it, a Transpose of the same perm reading it reused, else a new Transpose. */
static void transpose_input(tp *p, fp_node *n, uint32_t i, const int64_t *perm, const int64_t *inv, int r)
{
    fp_value *v = n->inputs[i];
    uint64_t numel = 0;
    if (fp_value_is_constant(v)) {
        if (!fp_shape_numel(&v->shape, &numel) || numel != 1)
            set_input(p, n, i, const_transposed(p, v, perm, r));
        return;
    }
    fp_node *t = v->producer;
    int64_t p2[MAXR], c[MAXR];
    int r2;
    if (fp_node_live(t) && t->op == FP_OP_TRANSPOSE && perm_of(t, p2, &r2) && r2 == r) {
        if (perm_eq(p2, inv, r)) {
            set_input(p, n, i, t->inputs[0]);
            p->res->cancelled++;
        } else {
            compose(p2, perm, r, c);
            set_input(p, n, i, add_transpose(p, t->inputs[0], c, r));
        }
        remove_if_unread(p, t);
        return;
    }
    uint32_t nr;
    const fp_use *u = readers_of(p, v, &nr);
    for (uint32_t k = 0; k < nr; k++) {
        fp_node *o = u[k].node;
        if (o != n && fp_node_live(o) && o->op == FP_OP_TRANSPOSE && perm_of(o, p2, &r2) && r2 == r &&
            perm_eq(p2, perm, r)) {
            set_input(p, n, i, o->outputs[0]);
            return;
        }
    }
    set_input(p, n, i, add_transpose(p, v, perm, r));
}

/* Every output of n transposed by perm (rank r): n writes a new value in the order before it, a
 * new Transpose writes the old one (ONNX Runtime's TransposeOutputs; nothing for the identity). */
static void transpose_outputs(tp *p, fp_node *n, const int64_t *perm, int r)
{
    if (is_identity(perm, r))
        return;
    int64_t inv[MAXR];
    invert(perm, r, inv);
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *o = n->outputs[k];
        if (!o)
            continue;
        fp_dim dims[MAXR];
        fp_value *inner = new_value(p, o, dims, permuted_dims(o, inv, r, dims));
        fp_node_set_output(n, k, inner);
        fp_node *t = new_node(p, FP_OP_TRANSPOSE, "Transpose", o->name, 1, 1);
        t->attrs[0] = ints_attr(p, "perm", perm, r);
        set_input(p, t, 0, inner);
        fp_node_set_output(t, 0, o);
        p->res->inserted++;
    }
}

/* ---------------------------------------------------------------- handlers */

/* The push through n of a Transpose of perm: the inputs in `mask` transposed by its inverse (to
 * the rank first when they broadcast: false, nothing changed, when one's rank is unknown or
 * above it), the outputs by out_perm (rank out_r). ONNX Runtime's HandleSimpleNodeBase. */
static bool push(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask, bool broadcast, const int64_t *out_perm,
                 int out_r)
{
    for (uint32_t i = 0; broadcast && i < n->n_inputs; i++)
        if ((mask >> i & 1) && (n->inputs[i]->shape.rank < 0 || n->inputs[i]->shape.rank > r))
            return false;
    for (uint32_t i = 0; broadcast && i < n->n_inputs; i++)
        if ((mask >> i & 1) && n->inputs[i]->shape.rank < r)
            unsqueeze_input(p, n, i, r - n->inputs[i]->shape.rank);
    int64_t inv[MAXR];
    invert(perm, r, inv);
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (mask >> i & 1)
            transpose_input(p, n, i, inv, perm, r);
    transpose_outputs(p, n, out_perm, out_r);
    p->res->pushed++;
    return true;
}

/* n's `axis` (dflt when absent; has_dflt false: required) normalized to rank r; false when absent
 * without a default, or out of range. */
static bool axis_of(const fp_node *n, bool has_dflt, int64_t dflt, int r, int64_t *axis)
{
    const fp_attr *a = fp_node_attr(n, "axis");
    if (!a && !has_dflt)
        return false;
    *axis = a && a->type == FP_ATTR_INT ? a->u.i : dflt;
    if (*axis < 0)
        *axis += r;
    return *axis >= 0 && *axis < r;
}

/* Split, Concat, Softmax from opset 13: the push, and the axis where it lands (ONNX Runtime's
 * HandleSimpleNodeWithAxis). */
static bool push_with_axis(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask, bool has_dflt, int64_t dflt)
{
    int64_t axis;
    if (!axis_of(n, has_dflt, dflt, r, &axis))
        return false;
    push(p, n, perm, r, mask, false, perm, r);
    set_int_attr(p, n, "axis", perm[axis]);
    return true;
}

/* Softmax before opset 13 works on the 2-D view split at `axis`: the push only when no dim
 * crosses it, the axis as it is. */
static bool push_softmax(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    if (p->opset >= 13)
        return push_with_axis(p, n, perm, r, mask, true, -1);
    int64_t axis;
    if (!axis_of(n, true, 1, r, &axis))
        return false;
    for (int i = 0; i < r; i++)
        if ((i < axis) != (perm[i] < axis))
            return false;
    return push(p, n, perm, r, mask, false, perm, r);
}

/* The axes of n (the attribute, or from `from_opset` on the constant input 1) normalized to rank r,
 * sorted after the permutation: new[k] sorted {perm[a]}. Their count, -1 when unreadable; 0 and
 * *absent when n has none. */
static int axes_moved(const tp *p, const fp_node *n, int64_t from_opset, const int64_t *perm, int r, int64_t *out,
                      bool *absent)
{
    int64_t axes[MAXR];
    int na;
    const fp_attr *a = fp_node_attr(n, "axes");
    if (p->opset < from_opset) {
        na = a && a->type == FP_ATTR_INTS && a->n <= MAXR ? (int)a->n : -1;
        if (na > 0)
            memcpy(axes, a->u.ints, sizeof(int64_t) * (size_t)na);
    } else {
        na = n->n_inputs > 1 && n->inputs[1] ? fp_value_ints(n->inputs[1], axes, MAXR) : -1;
    }
    *absent = na < 0 && (p->opset < from_opset ? !a : !(n->n_inputs > 1 && n->inputs[1]));
    if (na < 0)
        return *absent ? 0 : -1;
    bool take[MAXR] = {0};
    for (int k = 0; k < na; k++) {
        int64_t x = axes[k] < 0 ? axes[k] + r : axes[k];
        if (x < 0 || x >= r || take[perm[x]])
            return -1;
        take[perm[x]] = true;
    }
    int m = 0;
    for (int i = 0; i < r; i++)
        if (take[i])
            out[m++] = i;
    return m;
}

/* n's axes become new_axes[0..na) (the attribute, or from `from_opset` a new input 1). */
static void set_axes(tp *p, fp_node *n, int64_t from_opset, const int64_t *new_axes, int na)
{
    if (p->opset < from_opset) {
        fp_node_set_attr(p->m, n, ints_attr(p, "axes", new_axes, na));
        return;
    }
    g_autofree char *name = fresh_name(p, n->name);
    set_input(p, n, 1, fp_graph_int64_initializer(p->g, name, new_axes, (uint32_t)na));
}

/* The permutation of rank r - na left when the dims in axes[0..na) (sorted) go (ONNX Runtime's
 * SqueezePerm); the new rank. */
static int squeeze_perm(const int64_t *axes, int na, const int64_t *perm, int r, int64_t *out)
{
    bool gone[MAXR] = {0};
    int64_t map[MAXR];
    for (int k = 0; k < na; k++)
        gone[axes[k]] = true;
    for (int i = 0, j = 0; i < r; i++)
        if (!gone[i])
            map[i] = j++;
    int m = 0;
    for (int i = 0; i < r; i++)
        if (!gone[perm[i]])
            out[m++] = map[perm[i]];
    return m;
}

/* Reduce ops: the axes moved, the outputs transposed unless keepdims is 0 (then by what remains);
 * axes from an input from opset 18 (ReduceSum 13) must be constant (ONNX Runtime's
 * HandleReduceOps). */
static bool push_reduce(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    int64_t from = n->op == FP_OP_REDUCE_SUM ? 13 : 18, axes[MAXR], out[MAXR];
    bool absent, keep = fp_node_attr_int(n, "keepdims", 1) != 0;
    int na = axes_moved(p, n, from, perm, r, axes, &absent);
    if (na < 0 || (!absent && na == 0 && p->opset < from))
        return false;
    if (absent) { /* every axis, or none with noop_with_empty_axes */
        bool noop = p->opset >= from && fp_node_attr_int(n, "noop_with_empty_axes", 0);
        return push(p, n, perm, r, mask, false, perm, keep || noop ? r : 0);
    }
    set_axes(p, n, from, axes, na);
    if (keep)
        return push(p, n, perm, r, mask, false, perm, r);
    int m = squeeze_perm(axes, na, perm, r, out);
    return push(p, n, perm, r, mask, false, out, m);
}

static bool push_squeeze(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    int64_t axes[MAXR], out[MAXR];
    bool absent;
    int na = axes_moved(p, n, 13, perm, r, axes, &absent);
    if (na <= 0 || absent)
        return false;
    set_axes(p, n, 13, axes, na);
    int m = squeeze_perm(axes, na, perm, r, out);
    return push(p, n, perm, r, mask, false, out, m);
}

/* Unsqueeze: its axes as they are; the output transposed by the permutation widened to the new
 * rank, the added dims in place (ONNX Runtime's UnsqueezePerm). */
static bool push_unsqueeze(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    int64_t axes[MAXR], out[MAXR], map[MAXR];
    const fp_attr *a = fp_node_attr(n, "axes");
    int na = p->opset >= 13 ? (n->n_inputs > 1 && n->inputs[1] ? fp_value_ints(n->inputs[1], axes, MAXR) : -1)
                            : (a && a->type == FP_ATTR_INTS && a->n <= MAXR ? (int)a->n : -1);
    if (na <= 0 || r + na > MAXR)
        return false;
    if (p->opset < 13)
        memcpy(axes, a->u.ints, sizeof(int64_t) * (size_t)na);
    int nr = r + na;
    bool added[MAXR] = {0};
    for (int k = 0; k < na; k++) {
        int64_t x = axes[k] < 0 ? axes[k] + nr : axes[k];
        if (x < 0 || x >= nr || added[x])
            return false;
        added[x] = true;
    }
    for (int i = 0, j = 0; i < nr; i++)
        if (!added[i])
            map[j++] = i;
    for (int i = 0, j = 0; i < nr; i++)
        out[i] = added[i] ? i : map[perm[j++]];
    return push(p, n, perm, r, mask, false, out, nr);
}

/* Gather of one constant index of rank 0 along `axis` of a Transpose's output: along perm[axis] of
 * its input, the output transposed by the permutation without that dim. Any other index: no push. */
static bool push_gather(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    int64_t axis, idx[1], out[MAXR];
    const fp_value *ind = n->n_inputs > 1 ? n->inputs[1] : NULL;
    if (!axis_of(n, true, 0, r, &axis) || !ind || ind->shape.rank != 0 || fp_value_ints(ind, idx, 1) != 1)
        return false;
    int64_t moved[1] = {perm[axis]};
    int m = squeeze_perm(moved, 1, perm, r, out);
    set_int_attr(p, n, "axis", perm[axis]);
    return push(p, n, perm, r, mask, false, out, m);
}

/* Slice of a Transpose's output: its axes (the attribute before opset 10, else input 3, a
 * constant) become perm[axis] in their order, which lines up with the starts, ends and steps; the
 * output transposed by the permutation (ONNX Runtime's HandleSlice). Axes computed at run time:
 * no push. Not modelled: a Slice without axes (ORT then adds them), kept as it is. */
static bool push_slice(tp *p, fp_node *n, const int64_t *perm, int r, uint64_t mask)
{
    int64_t axes[MAXR];
    const fp_attr *a = fp_node_attr(n, "axes");
    int na = p->opset >= 10 ? (n->n_inputs > 3 && n->inputs[3] ? fp_value_ints(n->inputs[3], axes, MAXR) : -1)
                            : (a && a->type == FP_ATTR_INTS && a->n <= MAXR ? (int)a->n : -1);
    if (na <= 0)
        return false;
    if (p->opset < 10)
        memcpy(axes, a->u.ints, sizeof(int64_t) * (size_t)na);
    for (int k = 0; k < na; k++) {
        int64_t x = axes[k] < 0 ? axes[k] + r : axes[k];
        if (x < 0 || x >= r)
            return false;
        axes[k] = perm[x];
    }
    if (p->opset < 10) {
        fp_node_set_attr(p->m, n, ints_attr(p, "axes", axes, na));
    } else {
        g_autofree char *name = fresh_name(p, n->name);
        set_input(p, n, 3, fp_graph_int64_initializer(p->g, name, axes, (uint32_t)na));
    }
    return push(p, n, perm, r, mask, false, perm, r);
}

/* Shape n, which now reads the input of a Transpose of perm (rank r) in place of its output: its
 * `start` and `end` gone, read by a new Gather (axis 0) of the permutation's entries in [start,
 * end), which n's readers read; the Gather folded when n is. False (nothing changed) when n's
 * output is not an int64 vector of those entries. */
static bool shape_through(tp *p, fp_node *n, const int64_t *perm, int r)
{
    fp_value *o = n->outputs[0];
    int64_t st = fp_node_attr_int(n, "start", 0), en = fp_node_attr_int(n, "end", r);
    st = CLAMP(st < 0 ? st + r : st, 0, r);
    en = CLAMP(en < 0 ? en + r : en, st, r);
    if (!o || o->dtype != FP_DT_INT64 || st == en || o->shape.rank != 1 || o->shape.dims[0].value != en - st)
        return false;
    drop_attr(n, "start");
    drop_attr(n, "end");
    fp_dim dims[1] = {{r, NULL}};
    fp_value *whole = new_value(p, o, dims, 1);
    fp_node_set_output(n, 0, whole);
    g_autofree char *name = fresh_name(p, n->name);
    fp_node *g = new_node(p, FP_OP_GATHER, "Gather", n->name, 2, 1);
    g->attrs[0] = (fp_attr){.name = fp_intern(p->m, "axis", -1), .type = FP_ATTR_INT, .u.i = 0};
    set_input(p, g, 0, whole);
    set_input(p, g, 1, fp_graph_int64_initializer(p->g, name, perm + st, (uint32_t)(en - st)));
    fp_node_set_output(g, 0, o);
    if (n->flags & FP_NODE_FOLDED) { /* listed for the next shapes run to clear, as it lists its own */
        g->flags |= FP_NODE_FOLDED;
        if (!p->g->folded)
            p->g->folded = g_ptr_array_new();
        g_ptr_array_add(p->g->folded, g);
    }
    return true;
}

/* Shape of a Transpose's output: the Shape of its input and a Gather of the permutation after it
 * (ONNX Runtime's HandleShape). */
static bool push_shape(tp *p, fp_node *n, const int64_t *perm, int r)
{
    const fp_value *o = n->outputs[0];
    if (!o || o->dtype != FP_DT_INT64 || o->shape.rank != 1)
        return false;
    int64_t inv[MAXR];
    invert(perm, r, inv);
    fp_value *before = n->inputs[0];
    transpose_input(p, n, 0, inv, perm, r);
    if (!shape_through(p, n, perm, r)) {
        set_input(p, n, 0, before);
        return false;
    }
    p->res->pushed++;
    return true;
}

/* The readers of Transpose t's output folded at analysis time, before t goes: a Shape reads t's
 * input (shape_through); false, t kept, when another one reads it. */
static bool folded_readers_moved(tp *p, fp_node *t)
{
    int64_t perm[MAXR];
    int r;
    uint32_t n;
    const fp_use *u = readers_of(p, t->outputs[0], &n);
    for (uint32_t k = 0; k < n; k++)
        if (u[k].node->flags & FP_NODE_FOLDED && !(u[k].node->flags & FP_NODE_REMOVED) &&
            (u[k].node->op != FP_OP_SHAPE || u[k].port != 0 || !perm_of(t, perm, &r)))
            return false;
    GPtrArray *shapes = g_ptr_array_new();
    for (uint32_t k = 0; k < n; k++)
        if ((u[k].node->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) == FP_NODE_FOLDED)
            g_ptr_array_add(shapes, u[k].node);
    bool moved = true;
    for (guint i = 0; i < shapes->len && moved; i++) {
        fp_node *s = shapes->pdata[i];
        set_input(p, s, 0, t->inputs[0]);
        if (!(moved = shape_through(p, s, perm, r)))
            set_input(p, s, 0, t->outputs[0]);
    }
    g_ptr_array_free(shapes, TRUE);
    return moved;
}

/* The permutation Reshape n of Transpose t's output (rank r) amounts to, into out: both shapes
 * static and of rank r, the dims other than 1 in the same order (ONNX Runtime's HandleReshape). */
static bool reshape_perm(const fp_node *n, const fp_node *t, int r, int64_t *out)
{
    const fp_value *x = t->outputs[0], *y = n->outputs[0];
    int64_t in[MAXR];
    if (!fp_shape_static(&x->shape) || !y || !fp_shape_static(&y->shape) || x->shape.rank != r || y->shape.rank != r)
        return false;
    for (int i = 0; i < r; i++)
        in[i] = x->shape.dims[i].value;
    for (int i = 0; i < r; i++) {
        int64_t want = y->shape.dims[i].value;
        int c = 0;
        while (in[c] != want) {
            if (in[c] != -1 && in[c] != 1 && want != 1)
                return false;
            if (++c == r)
                return false;
        }
        out[i] = c;
        in[c] = -1;
    }
    return true;
}

/* When Reshape n of Transpose t's output (perm, rank r) splits each dim of that output into a run
 * of its own of n's output dims (n's shape a constant, both shapes static, n's rank above r): the
 * runs in t's input order into shape (the rank returned), and into out the permutation that
 * takes them back to n's order; else 0 (ONNX Runtime 1.30's HandleReshape, its split-axes path,
 * microsoft/onnxruntime#29660). */
static int reshape_split(const fp_node *n, const fp_node *t, const int64_t *perm, int r, int64_t *shape, int64_t *out)
{
    const fp_value *x = t->outputs[0], *y = n->outputs[0];
    int start[MAXR], end[MAXR], at = 0, len = 0;
    if (n->n_inputs < 2 || !n->inputs[1] || !fp_value_is_constant(n->inputs[1]) || !y || !fp_shape_static(&x->shape) ||
        !fp_shape_static(&y->shape) || x->shape.rank != r || y->shape.rank <= r)
        return 0;
    for (int j = 0; j < r; j++) {
        int64_t want = x->shape.dims[j].value, prod = 1;
        start[perm[j]] = at;
        do {
            if (at == y->shape.rank || y->shape.dims[at].value <= 0)
                return 0;
            prod *= y->shape.dims[at++].value;
        } while (prod < want);
        if (prod != want)
            return 0;
        end[perm[j]] = at;
    }
    if (at != y->shape.rank)
        return 0;
    for (int a = 0; a < r; a++)
        for (int k = start[a]; k < end[a]; k++) {
            out[k] = len;
            shape[len++] = y->shape.dims[k].value;
        }
    return len;
}

/* The split push: Reshape n reads t's input with the shape reshape_split gives, and a new
 * Transpose after it gives n's readers what n gave; t goes when nothing reads it any more. */
static bool push_reshape_split(tp *p, fp_node *t, fp_node *n, const int64_t *perm, int r)
{
    int64_t shape[MAXR], out[MAXR];
    int nr = reshape_split(n, t, perm, r, shape, out);
    if (!nr)
        return false;
    g_autofree char *name = fresh_name(p, n->inputs[1]->name);
    fp_value *s = fp_graph_int64_initializer(p->g, name, shape, (uint32_t)nr);
    set_input(p, n, 1, s);
    set_input(p, n, 0, t->inputs[0]);
    transpose_outputs(p, n, out, nr);
    remove_if_unread(p, t);
    p->res->pushed++;
    return true;
}

/* A Transpose n (or a Reshape that amounts to one: it becomes that Transpose) reading Transpose t
 * of perm: both go when they cancel (n's readers read t's input; a graph output keeps its name
 * through an Identity), else n reads t's input with the composed permutation; t goes when nothing
 * reads it any more (ONNX Runtime's HandleTranspose and HandleReshape). */
static bool push_transpose(tp *p, fp_node *t, fp_node *n, const int64_t *perm, int r)
{
    int64_t np[MAXR], inv[MAXR] = {0}, c[MAXR];
    int nr;
    bool reshape = n->op == FP_OP_RESHAPE;
    if (reshape ? !reshape_perm(n, t, r, np) : !perm_of(n, np, &nr) || nr != r)
        return false;
    if (reshape) { /* the Reshape becomes the Transpose it amounts to */
        set_input(p, n, 1, NULL);
        n->n_inputs = 1;
        n->n_attrs = 0;
        n->op = FP_OP_TRANSPOSE;
        n->op_type = fp_intern(p->m, "Transpose", -1);
    }
    invert(perm, r, inv);
    fp_value *x = t->inputs[0], *o = n->outputs[0];
    if (perm_eq(inv, np, r)) {
        bool hidden;
        live_readers(p, o, &hidden);
        if (hidden) { /* the output's name stays: an Identity, a view */
            n->op = FP_OP_IDENTITY;
            n->op_type = fp_intern(p->m, "Identity", -1);
            n->n_attrs = 0;
            set_input(p, n, 0, x);
        } else {
            uint32_t nu;
            GArray *a = own_readers(p, o);
            while ((nu = a->len) > 0) {
                fp_use u = g_array_index(a, fp_use, nu - 1);
                set_input(p, u.node, u.port, x);
            }
            remove_node(p, n);
        }
        p->res->cancelled += 2;
    } else {
        compose(perm, np, r, c);
        fp_node_set_attr(p->m, n, ints_attr(p, "perm", c, r));
        set_input(p, n, 0, x);
    }
    remove_if_unread(p, t);
    p->res->pushed++;
    return true;
}

/* ---------------------------------------------------------------- the estimate */

/* ONNX Runtime's EstimateValueRank: v's dims other than 1 (an unknown one counts), 5 when its
 * rank is unknown; v's shape as ORT's NodeArg holds it, the one it knew when it optimized
 * (fp_value_opt_shape: where a Reshape of a computed target shape before opset 14 has no rank). */
static int est_rank(const fp_value *v)
{
    const fp_shape *s = v ? fp_value_opt_shape(v) : NULL;
    if (!s || s->rank < 0)
        return 5;
    int r = 0;
    for (int32_t i = 0; i < s->rank; i++)
        r += !(fp_dim_known(s->dims[i]) && s->dims[i].value == 1);
    return r;
}

/* Every live reader of Transpose t's output has a handler (CanLikelyRemoveTranspose). */
static bool likely_removed(const tp *p, const fp_node *t)
{
    uint32_t n;
    const fp_use *u = readers_of(p, t->outputs[0], &n);
    if (t->outputs[0]->is_output)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (u[i].port == UINT32_MAX || (fp_node_live(u[i].node) && handler_of(u[i].node) == H_NONE))
            return false;
    return true;
}

/* The cost of transposing input v for a push of perm (EstimateTransposeValueCost): 0 for a
 * constant; for a Transpose's output, minus its dims when it is of perm and can likely go, else 0;
 * its dims otherwise. */
static int value_cost(const tp *p, const fp_value *v, const int64_t *perm, int r)
{
    if (fp_value_is_constant(v))
        return 0;
    const fp_node *t = v->producer;
    int64_t p2[MAXR];
    int r2;
    if (fp_node_live(t) && t->op == FP_OP_TRANSPOSE && perm_of(t, p2, &r2))
        return r2 == r && perm_eq(p2, perm, r) && likely_removed(p, t) ? -est_rank(v) : 0;
    return est_rank(v);
}

/* Whether v (of p's graph) leads to a Transpose; values made by the pass do not. */
static bool lead(const tp *p, const fp_value *v)
{
    return v->id < p->n_leads && (p->leads[v->id / 8] >> (v->id % 8) & 1);
}

static void set_lead(tp *p, const fp_value *v) { p->leads[v->id / 8] |= (uint8_t)(1u << (v->id % 8)); }

/* Whether pushing a Transpose of perm through n is worth it (DefaultCostCheck): always into a
 * Transpose; else the inputs' cost, plus the largest output's when the op transposes its outputs
 * and none of them leads to a Transpose, must be below 0. */
static bool worth_it(const tp *p, const fp_node *n, handler h, uint64_t mask, const int64_t *perm, int r)
{
    if (h == H_TRANSPOSE)
        return true;
    int cost = 0, out = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (mask >> i & 1)
            cost += value_cost(p, n->inputs[i], perm, r);
    if (cost < 0 && transposes_outputs(h)) {
        bool leads = false;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            const fp_value *o = n->outputs[k];
            if (!o)
                continue;
            out = MAX(out, est_rank(o));
            leads |= o->graph == p->g && lead(p, o);
        }
        if (!leads)
            cost += out;
    }
    return cost < 0;
}

/* ---------------------------------------------------------------- the walk */

/* The values from which a path of handled ops leads to a Transpose, by a walk against the
 * topological order (ONNX Runtime's outputs_leading_to_transpose). */
static void mark_leads(tp *p, fp_node *const *order, uint32_t n)
{
    p->n_leads = p->g->values->len;
    p->leads = g_new0(uint8_t, p->n_leads / 8 + 1);
    for (uint32_t i = n; i-- > 0;) {
        const fp_node *node = order[i];
        if (!fp_node_live(node))
            continue;
        if (node->op == FP_OP_TRANSPOSE) {
            if (node->n_inputs && node->inputs[0] && node->inputs[0]->graph == p->g)
                set_lead(p, node->inputs[0]);
            continue;
        }
        bool out = false;
        for (uint32_t k = 0; k < node->n_outputs; k++)
            out |= node->outputs[k] && node->outputs[k]->graph == p->g && lead(p, node->outputs[k]);
        handler h = handler_of(node);
        uint64_t mask = out && h != H_NONE && transposes_outputs(h) ? transposable(node, h) : 0;
        for (uint32_t k = 0; k < node->n_inputs; k++)
            if ((mask >> k & 1) && node->inputs[k]->graph == p->g)
                set_lead(p, node->inputs[k]);
    }
}

/* Whether Transpose t of perm (rank r), read by n at input j, is to go through n: n has a handler
 * that transposes that input and the estimate says so (ONNX Runtime's ProcessTranspose, before
 * its handler). */
static bool wanted(const tp *p, const fp_node *n, const int64_t *perm, int r, uint32_t j)
{
    handler h = handler_of(n);
    uint64_t mask = h == H_NONE ? 0 : transposable(n, h);
    int64_t np[MAXR], shape[MAXR];
    return (mask >> j & 1) && worth_it(p, n, h, mask, perm, r) &&
           (h != H_RESHAPE || reshape_perm(n, n->inputs[0]->producer, r, np) ||
            reshape_split(n, n->inputs[0]->producer, perm, r, shape, np));
}

/* The push wanted() asked for, by n's handler; false when the handler finds it cannot (nothing
 * changed then). */
static bool process(tp *p, fp_node *t, fp_node *n, const int64_t *perm, int r)
{
    handler h = handler_of(n);
    uint64_t mask = transposable(n, h);
    switch (h) {
    case H_UNARY:
    case H_FIRST:
        return push(p, n, perm, r, mask, false, perm, r);
    case H_BROADCAST:
    case H_QLINEAR_BINARY:
        return push(p, n, perm, r, mask, true, perm, r);
    case H_SPLIT:
        return push_with_axis(p, n, perm, r, mask, true, 0);
    case H_CONCAT:
        return push_with_axis(p, n, perm, r, mask, false, 0);
    case H_SOFTMAX:
        return push_softmax(p, n, perm, r, mask);
    case H_REDUCE:
        return push_reduce(p, n, perm, r, mask);
    case H_SQUEEZE:
        return push_squeeze(p, n, perm, r, mask);
    case H_UNSQUEEZE:
        return push_unsqueeze(p, n, perm, r, mask);
    case H_GATHER:
        return push_gather(p, n, perm, r, mask);
    case H_SLICE:
        return push_slice(p, n, perm, r, mask);
    case H_SHAPE:
        return push_shape(p, n, perm, r);
    case H_TRANSPOSE:
        return push_transpose(p, t, n, perm, r);
    case H_RESHAPE:
        return push_transpose(p, t, n, perm, r) || push_reshape_split(p, t, n, perm, r);
    default:
        p->res->unmodelled++;
        fp_diag_add(p->diag, FP_DIAG_INFO, "transpose", "transpose-unmodelled", n->name,
                    "%s '%s': ONNX Runtime's transpose optimizer pushes Transpose '%s' through it; fuseplan does "
                    "not model that handler, so the Transpose stays here",
                    n->op_type, n->name, t->name);
        return false;
    }
}

/* Whether some live Transpose of p's graph has a reader with a handler (else no push can happen:
 * the walk, and the order it needs, are spared). */
static bool any_candidate(const tp *p)
{
    for (guint i = 0; i < p->g->nodes->len; i++) {
        const fp_node *t = p->g->nodes->pdata[i];
        if (t->op != FP_OP_TRANSPOSE || !fp_node_live(t) || !t->n_outputs || !t->outputs[0])
            continue;
        const fp_value *o = t->outputs[0];
        for (uint32_t u = 0; u < o->n_uses; u++)
            if (fp_node_live(o->uses[u].node) && handler_of(o->uses[u].node) != H_NONE)
                return true;
    }
    return false;
}

/* One graph: every live node in topological order, each of its inputs a Transpose writes offered
 * to it until one push happens. The graph's cached order is walked as it is until the first push
 * (a new node drops it): then a copy of it. True when the graph changed. */
static bool optimize_graph(tp *p)
{
    uint32_t n = 0;
    fp_node *const *order = any_candidate(p) ? fp_graph_order(p->g, &n, NULL) : NULL;
    g_autofree fp_node **own = NULL;
    if (!order)
        return false;
    mark_leads(p, order, n);
    uint32_t before = p->res->pushed;
    for (uint32_t i = 0; i < n; i++) {
        fp_node *node = order[i];
        for (uint32_t j = 0; fp_node_live(node) && j < node->n_inputs; j++) {
            fp_value *v = node->inputs[j];
            fp_node *t = v ? v->producer : NULL;
            int64_t perm[MAXR];
            int r;
            if (!fp_node_live(t) || t == node || t->op != FP_OP_TRANSPOSE || !perm_of(t, perm, &r) ||
                !wanted(p, node, perm, r, j))
                continue;
            handler h = handler_of(node);
            if (!own && h != H_OTHER) /* that changes nothing */
                order = own = g_memdup2(order, sizeof(fp_node *) * n);
            if (process(p, t, node, perm, r))
                break;
        }
    }
    g_clear_pointer(&p->leads, g_free);
    return p->res->pushed != before;
}

bool fp_transpose_optimizer_on(const fp_target *t)
{
    return t && t->keyfile && g_key_file_get_boolean(t->keyfile, "layout", "transpose_optimizer", NULL);
}

static void free_readers(gpointer a) { g_array_free(a, TRUE); }

bool fp_pass_transpose(fp_model *m, const fp_target *t, fp_transpose_result *res, fp_diag *diag)
{
    memset(res, 0, sizeof *res);
    if (!(res->ran = fp_transpose_optimizer_on(t)))
        return false;
    bool changed = false;
    tp p = {.m = m, .opset = fp_model_opset(m, ""), .res = res, .diag = diag};
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        p.g = m->graphs->pdata[gi];
        p.readers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_readers);
        p.consts = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
        changed |= optimize_graph(&p);
        g_hash_table_destroy(p.readers);
        g_hash_table_destroy(p.consts);
    }
    if (changed)
        fp_model_link(m);
    if (changed && diag)
        fp_diag_add(diag, FP_DIAG_INFO, "transpose", "transpose-optimized", NULL,
                    "ONNX Runtime's transpose optimizer: Transposes pushed through %u ops, %u cancelled, %u inserted, "
                    "%u removed",
                    res->pushed, res->cancelled, res->inserted, res->removed);
    return changed;
}
