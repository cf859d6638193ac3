/* nchwc.c - ONNX Runtime's NCHWc layout (nchwc.h), in its order: the nodes in topological order;
 * a 2-D Conv or pool whose channels suit the block runs blocked (domain com.microsoft.nchwc), a
 * tensor entering such a node from NCHW gets one ReorderInput, an Add, Mul, Relu, Sigmoid, Tanh,
 * HardSigmoid, Gelu, QuickGelu or Concat whose inputs are all blocked stays blocked (an Add or one of
 * the first four activations right after a blocked Conv folds into it), a Resize of a blocked tensor
 * by whole-number spatial scales becomes the blocked Upsample, and a blocked tensor that
 * any other op or a graph output reads gets one ReorderOutput, shared by all of them.
 * Shapes stay logical; a blocked tensor's layout is named (fp_value_layout "NCHW16c"), and the
 * memory passes count its channels padded to the block. */
#include "passes/nchwc.h"

#include <math.h>
#include <string.h>

/* Where a blocked tensor's spatial dims come from, as ONNX Runtime's NchwcTransformer tracks them to
 * show two tensors of symbolic size equal (its NchwcArgument::Shape): per dim, the value whose dim
 * it is (id + 1) and how many strides of 2 halved it since. */
typedef struct {
    uint32_t from[2];
    uint32_t shifts[2];
} nchwc_dims;

typedef struct {
    fp_model *m;
    fp_graph *g;
    uint64_t block;
    uint8_t *blocked;       /* per value id of g (grown as values are added): NCHWc */
    nchwc_dims *dims;       /* per value id of g: where a blocked tensor's spatial dims come from */
    bool spatial_declared;  /* every input of g declares its dims after the first: ORT's shape
                               inference knows the spatial dims at session creation */
    GHashTable *to_blocked; /* value -> its ReorderInput output (the few values that get one) */
    GHashTable *to_nchw;    /* value -> its ReorderOutput output */
    uint32_t cap;
    const char *domain;  /* "com.microsoft.nchwc", interned */
    uint32_t next_index; /* the ORT index the next node ORT would add gets (fp_node.ort_index) */
    fp_nchwc_result *res;
    fp_diag *diag;
} nchwc;

/* Grows the per-value arrays to g's value count. */
static void fit(nchwc *z)
{
    uint32_t n = z->g->values->len;
    if (n <= z->cap)
        return;
    uint32_t cap = MAX(n, z->cap * 2);
    z->blocked = g_renew(uint8_t, z->blocked, cap);
    memset(z->blocked + z->cap, 0, cap - z->cap);
    z->dims = g_renew(nchwc_dims, z->dims, cap);
    memset(z->dims + z->cap, 0, sizeof(nchwc_dims) * (cap - z->cap));
    z->cap = cap;
}

static bool is_blocked(const nchwc *z, const fp_value *v) { return v && v->graph == z->g && z->blocked[v->id]; }

/* v's spatial dims are its own (a tensor entering the blocked layout, or a shape not inferred). */
static void dims_own(nchwc *z, const fp_value *v) { z->dims[v->id] = (nchwc_dims){.from = {v->id + 1, v->id + 1}}; }

/* ONNX Runtime's ConvPoolShapeInference: blocked Conv or pool n reading the blocked tensor in keeps
 * a spatial dim of in where its padding keeps the size before the stride (pads + 1 = kernel, or
 * auto_pad SAME_*), the dilation is 1 and the stride 1 or 2 (a 2 counts one more halving); each
 * other dim is its output's own. */
static void dims_conv_pool(nchwc *z, const fp_node *n, const fp_value *in)
{
    const fp_value *out = n->outputs[0];
    dims_own(z, out);
    const fp_attr *pads = fp_node_attr(n, "pads"), *strides = fp_node_attr(n, "strides");
    const fp_attr *dil = fp_node_attr(n, "dilations"), *ks = fp_node_attr(n, "kernel_shape");
    const char *auto_pad = fp_node_attr_string(n, "auto_pad", "NOTSET");
    const fp_value *w = n->op == FP_OP_CONV || n->op == FP_OP_FUSED_CONV ? n->inputs[1] : NULL;
    if ((pads && pads->n != 4) || (strides && strides->n != 2) || (dil && dil->n != 2) || (!w && (!ks || ks->n != 2)))
        return;
    bool same = g_str_has_prefix(auto_pad, "SAME_");
    if (!same && strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0)
        return;
    for (int i = 0; i < 2; i++) {
        int64_t stride = strides ? strides->u.ints[i] : 1,
                pad = pads && !strcmp(auto_pad, "NOTSET") ? pads->u.ints[i] + pads->u.ints[i + 2] : 0;
        int64_t kernel = w ? (w->shape.rank == 4 ? w->shape.dims[2 + i].value : -1) : ks->u.ints[i];
        if ((dil && dil->u.ints[i] != 1) || (stride != 1 && stride != 2) || !(same || pad + 1 == kernel))
            continue;
        z->dims[out->id].from[i] = z->dims[in->id].from[i];
        z->dims[out->id].shifts[i] = z->dims[in->id].shifts[i] + (uint32_t)(stride - 1);
    }
}

/* A Reorder node of kind op reading v, writing a new value shaped as v; its output. */
static fp_value *reorder(nchwc *z, fp_value *v, fp_op op)
{
    bool in = op == FP_OP_REORDER_INPUT;
    g_autofree char *vname = g_strdup_printf("%s/%s", v->name, in ? "nchwc" : "nchw");
    fp_value *out = fp_graph_value_like(z->g, vname, v, FP_DT_UNDEFINED);
    fp_node *r = fp_node_new(z->g, op, in ? "ReorderInput" : "ReorderOutput", z->domain, vname, 1, 1);
    r->inputs[0] = v;
    fp_node_set_output(r, 0, out);
    fit(z);
    z->blocked[out->id] = in;
    dims_own(z, out);
    (in ? &z->res->reorder_in : &z->res->reorder_out)[0]++;
    return out;
}

/* Whether n is a live Transpose of a 4-D tensor with the permutation p[0..4). */
static bool transpose_4d(const fp_node *n, const int64_t *p)
{
    const fp_attr *a = n ? fp_node_attr(n, "perm") : NULL;
    return n && n->op == FP_OP_TRANSPOSE && !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) && a &&
           a->type == FP_ATTR_INTS && a->n == 4 && memcmp(a->u.ints, p, 4 * sizeof(int64_t)) == 0;
}

/* Reorder node r reads NHWC or writes it (the channels_last attribute). */
static void set_channels_last(nchwc *z, fp_node *r)
{
    r->attrs = fp_arena_calloc(z->m->arena, 1, sizeof(fp_attr));
    r->attrs[0] = (fp_attr){.name = fp_intern(z->m, "channels_last", -1), .type = FP_ATTR_INT, .u.i = 1};
    r->n_attrs = 1;
    z->res->transposes_folded++;
}

/* v as a blocked tensor (its ReorderInput output, made once). A Transpose from NHWC (perm 0, 3,
 * 1, 2) whose output only this reorder reads folds into it: the reorder reads the NHWC tensor. */
static fp_value *as_blocked(nchwc *z, fp_value *v)
{
    static const int64_t from_nhwc[4] = {0, 3, 1, 2};
    if (is_blocked(z, v))
        return v;
    fp_value *r = g_hash_table_lookup(z->to_blocked, v);
    if (r)
        return r;
    fp_node *t = v->producer;
    bool fold = transpose_4d(t, from_nhwc) && v->n_uses == 1 && !v->is_output;
    r = reorder(z, fold ? t->inputs[0] : v, FP_OP_REORDER_INPUT);
    if (fold) {
        set_channels_last(z, r->producer);
        t->flags |= FP_NODE_REMOVED;
        v->producer = NULL;
    }
    g_hash_table_insert(z->to_blocked, v, r);
    return r;
}

/* A graph output left blocked: its producer writes a blocked copy, which all of v's readers read
 * (the caller reorders those that stay NCHW), and a ReorderOutput writes the output itself. The
 * blocked copy. */
static fp_value *reorder_graph_output(nchwc *z, fp_value *v)
{
    g_autofree char *name = g_strdup_printf("%s/nchwc_out", v->name);
    fp_value *inner = fp_value_interpose(z->g, v, name, FP_DT_UNDEFINED, NULL);
    fit(z);
    z->blocked[inner->id] = 1;
    z->dims[inner->id] = z->dims[v->id];
    z->blocked[v->id] = 0;
    fp_node *r = fp_node_new(z->g, FP_OP_REORDER_OUTPUT, "ReorderOutput", z->domain, name, 1, 1);
    r->inputs[0] = inner;
    fp_node_set_output(r, 0, v);
    z->res->reorder_out++;
    return inner;
}

/* v in NCHW (its ReorderOutput output, made once). A graph output is that output itself, as in
 * ONNX Runtime, whose one ReorderOutput per blocked tensor writes the original tensor: its producer
 * now writes a blocked copy, which v's other readers read. */
static fp_value *as_nchw(nchwc *z, fp_value *v)
{
    if (!is_blocked(z, v))
        return v;
    fp_value *r = g_hash_table_lookup(z->to_nchw, v);
    if (r)
        return r;
    if (v->is_output && v->producer) {
        g_hash_table_insert(z->to_nchw, reorder_graph_output(z, v), v);
        return v;
    }
    r = reorder(z, v, FP_OP_REORDER_OUTPUT);
    g_hash_table_insert(z->to_nchw, v, r);
    return r;
}

/* Dim k of v when known, else -1. */
static int64_t dim(const fp_value *v, int k)
{
    return v && v->shape.rank > k && fp_dim_known(v->shape.dims[k]) ? v->shape.dims[k].value : -1;
}

/* Conv n's bias, NULL when none: a FusedConv of a Clip and a Conv without one has the Clip's
 * scalar bounds after its weights. */
static const fp_value *conv_bias(const fp_node *n)
{
    const fp_value *b = n->n_inputs > 2 ? n->inputs[2] : NULL;
    return b && n->op == FP_OP_FUSED_CONV && b->shape.rank == 0 ? NULL : b;
}

/* Why 2-D Conv n cannot run blocked (NULL: it can). A FusedConv holding a Sum input converts only
 * when that input is blocked already. */
static const char *conv_refusal(const nchwc *z, const fp_node *n)
{
    const fp_value *x = n->inputs[0], *w = n->n_inputs > 1 ? n->inputs[1] : NULL, *b = conv_bias(n);
    int64_t group = fp_node_attr_int(n, "group", 1), cin = dim(x, 1), cout = dim(w, 0);
    if (!x || x->shape.rank != 4 || !w || w->shape.rank != 4)
        return "not a 2-D convolution";
    uint64_t nb = 0;
    bool bias_ok = !b || (fp_value_is_constant(b) && fp_shape_numel(&b->shape, &nb) && (int64_t)nb == cout);
    if (x->dtype != FP_DT_FLOAT || !fp_value_is_constant(w) || w->dtype != FP_DT_FLOAT || !bias_ok)
        return "not float32 with constant weights (and a constant bias of one value per output channel)";
    if (cin < 0 || cout < 0 || group < 1)
        return "channels not known";
    if (n->n_inputs > 3 && n->inputs[3] && !fp_value_is_constant(n->inputs[3]) && !is_blocked(z, n->inputs[3]))
        return "its Sum input is not blocked"; /* constants there are a fused Clip's bounds */
    if (group == 1)
        return cin < (int64_t)z->block || cin % 4 == 0 ? NULL : "input channels not a multiple of 4";
    if (cout % 4)
        return "grouped, output channels not a multiple of 4";
    bool depthwise = dim(w, 1) == 1 && cout == group;
    if (!depthwise && ((cin / group) % (int64_t)z->block || (cout / group) % (int64_t)z->block))
        return "grouped, channels per group not a multiple of the block";
    return NULL;
}

/* Why pool n cannot run blocked (NULL: it can). Global pools only take a blocked input. */
static const char *pool_refusal(const nchwc *z, const fp_node *n)
{
    const fp_value *x = n->inputs[0];
    bool global = n->op == FP_OP_GLOBAL_MAX_POOL || n->op == FP_OP_GLOBAL_AVG_POOL;
    if (!x || x->shape.rank != 4 || x->dtype != FP_DT_FLOAT)
        return "not a float32 2-D pool";
    if (dim(x, 1) < 0 || dim(x, 1) % (int64_t)z->block)
        return "channels not a multiple of the block (pools pad none)";
    if (n->op == FP_OP_MAX_POOL && n->n_outputs > 1 && n->outputs[1] &&
        (n->outputs[1]->n_uses || n->outputs[1]->is_output))
        return "its Indices output is read";
    if (n->op == FP_OP_AVERAGE_POOL && fp_node_attr_int(n, "ceil_mode", 0) &&
        fp_node_attr_int(n, "count_include_pad", 0))
        return "ceil_mode with count_include_pad";
    if (global && !is_blocked(z, x))
        return "its input is not blocked (a global pool converts only after its producer)";
    return NULL;
}

/* n runs blocked: its domain, input 0 through a ReorderInput (a Conv of fewer input channels than
 * the block reads NCHW: through a ReorderOutput when its input is blocked), its output blocked. */
static void convert(nchwc *z, fp_node *n, bool nchw_input)
{
    const fp_value *in = n->inputs[0];
    bool tracked = !nchw_input && is_blocked(z, in) && n->op != FP_OP_GLOBAL_MAX_POOL && n->op != FP_OP_GLOBAL_AVG_POOL;
    n->inputs[0] = nchw_input ? as_nchw(z, n->inputs[0]) : as_blocked(z, n->inputs[0]);
    if (tracked)
        dims_conv_pool(z, n, in);
    else
        dims_own(z, n->outputs[0]);
    n->domain = z->domain;
    if (n->op == FP_OP_FUSED_CONV) /* nchwc Conv carries the activation itself */
        n->op_type = fp_intern(z->m, "Conv", -1);
    z->blocked[n->outputs[0]->id] = 1;
    z->res->converted++;
}

/* The blocked Conv producing v (a Conv, or a BatchNormalization or Mul run as one), when v had
 * `readers` readers before the pass (its use lists are linked again only after it) and the Conv
 * takes another input or activation: no activation yet. */
static fp_node *foldable_conv(const nchwc *z, const fp_value *v, uint32_t readers)
{
    fp_node *c = v ? v->producer : NULL;
    if (!c || c->domain != z->domain || strcmp(c->op_type, "Conv") != 0 || v->n_uses != readers || v->is_output ||
        fp_node_attr(c, "activation"))
        return NULL;
    return c;
}

/* Conv c takes over n's output 0 and n goes (an Add folded as its Sum input, an activation). */
static void fold_into(nchwc *z, fp_node *c, fp_node *n)
{
    fp_value *out = n->outputs[0];
    z->dims[out->id] = z->dims[c->outputs[0]->id];
    c->outputs[0]->producer = NULL;
    fp_node_set_output(c, 0, out);
    z->blocked[out->id] = 1;
    n->flags |= FP_NODE_REMOVED;
}

/* c's activation attribute set to `act` (an op type). */
static void set_activation(nchwc *z, fp_node *c, const char *act)
{
    fp_node_set_attr(z->m, c,
                     (fp_attr){.name = "activation",
                               .type = FP_ATTR_STRING,
                               .u.s = fp_intern(z->m, act, -1),
                               .n = (uint32_t)strlen(act)});
}

/* n runs blocked as it is: its output 0 is blocked. True. */
static bool run_blocked(nchwc *z, const fp_node *n)
{
    z->blocked[n->outputs[0]->id] = 1;
    z->dims[n->outputs[0]->id] = z->dims[n->inputs[0]->id];
    z->res->blocked++;
    return true;
}

/* Whether binary n's two inputs have one shape (the blocked Add and Mul broadcast nothing: a Mul
 * by a [N, C, 1, 1] scale, a squeeze-and-excitation's, runs NCHW), and ONNX Runtime can tell: each
 * spatial dim tracked from one value halved as often, or known from the declared input shapes. */
static bool same_shape(const nchwc *z, const fp_node *n)
{
    const fp_value *a = n->inputs[0], *b = n->inputs[1];
    g_autofree char *sa = fp_shape_to_string(&a->shape), *sb = fp_shape_to_string(&b->shape);
    if (strcmp(sa, sb) != 0)
        return false;
    for (int i = 0; i < 2; i++) {
        const nchwc_dims *da = &z->dims[a->id], *db = &z->dims[b->id];
        bool tracked = da->from[i] && da->from[i] == db->from[i] && da->shifts[i] == db->shifts[i];
        if (!tracked && !(z->spatial_declared && dim(a, 2 + i) >= 0))
            return false;
    }
    return true;
}

/* An Add (or Sum) of two blocked tensors of one shape: folded into the blocked Conv making one of
 * them as its Sum input, else run blocked. Of one channel count but shapes ONNX Runtime cannot show
 * equal, it runs blocked unfolded (ORT reshapes both to 5-D views around it). False when it cannot
 * stay blocked. */
static bool blocked_add(nchwc *z, fp_node *n)
{
    if (n->n_inputs != 2 || !is_blocked(z, n->inputs[0]) || !is_blocked(z, n->inputs[1]) ||
        dim(n->inputs[0], 1) != dim(n->inputs[1], 1) || dim(n->inputs[0], 1) < 0)
        return false;
    if (!same_shape(z, n)) {
        run_blocked(z, n);
        dims_own(z, n->outputs[0]);
        return true;
    }
    for (int k = 0; k < 2; k++) {
        fp_node *c = foldable_conv(z, n->inputs[k], 1);
        if (!c || c->n_inputs >= 4)
            continue;
        fp_value **ins = fp_arena_calloc(z->m->arena, 4, sizeof(fp_value *));
        memcpy(ins, c->inputs, sizeof(fp_value *) * c->n_inputs);
        ins[3] = n->inputs[1 - k];
        c->inputs = ins;
        c->n_inputs = 4;
        fold_into(z, c, n);
        z->res->sum_fused++;
        return true;
    }
    return run_blocked(z, n);
}

/* A Relu, Sigmoid, Tanh or HardSigmoid on a blocked tensor: folded into the blocked Conv whose
 * output only it reads, else run blocked. (HardSigmoid(1/6, 1/2) then Mul with the Conv's output,
 * its two readers, folds as HardSwish: blocked_mul.) */
static bool blocked_activation(nchwc *z, fp_node *n)
{
    if (n->n_inputs < 1 || n->n_outputs != 1 || !is_blocked(z, n->inputs[0]))
        return false;
    fp_value *x = n->inputs[0];
    fp_node *c = foldable_conv(z, x, 1);
    if (!c)
        return run_blocked(z, n);
    set_activation(z, c, n->op_type);
    fold_into(z, c, n);
    z->res->act_fused++;
    return true;
}

/* Whether constant s holds one value per channel of c channels: [1, c, 1, 1] or [c, 1, 1]. */
static bool per_channel(const fp_value *s, int64_t c)
{
    const fp_shape *d = &s->shape;
    int lead = d->rank == 4 ? 1 : 0;
    if (c < 1 || (d->rank != 4 && d->rank != 3) || (lead && dim(s, 0) != 1) || dim(s, lead) != c)
        return false;
    return dim(s, lead + 1) == 1 && dim(s, lead + 2) == 1;
}

/* A Mul of a blocked tensor by a float32 constant of one value per channel runs as a blocked
 * depthwise 1x1 Conv of that scale (measured, ONNX Runtime 1.30: any channel count, either operand
 * order; not a scalar, [1, 1, 1, 1] or [1, C, 1, W] constant, nor a computed scale, nor an Add, Sub
 * or Div). Like a BatchNormalization it keeps its op kind and is named Conv: inputs the tensor,
 * then the scale. */
static bool blocked_scale(nchwc *z, fp_node *n)
{
    for (int k = 0; n->n_inputs == 2 && k < 2; k++) {
        fp_value *x = n->inputs[k], *s = n->inputs[1 - k];
        if (!is_blocked(z, x) || !fp_value_is_constant(s) || s->dtype != FP_DT_FLOAT || !per_channel(s, dim(x, 1)))
            continue;
        n->inputs[0] = x;
        n->inputs[1] = s;
        n->domain = z->domain;
        n->op_type = fp_intern(z->m, "Conv", -1);
        z->blocked[n->outputs[0]->id] = 1;
        z->dims[n->outputs[0]->id] = z->dims[x->id];
        z->res->converted++;
        return true;
    }
    return false;
}

/* A Mul of two blocked tensors of one shape runs blocked; x * HardSigmoid(x) on a blocked Conv's
 * output read by those two folds into the Conv as HardSwish unless it has fewer channels than a
 * block or the Mul's output is a graph output. */
static bool blocked_mul(nchwc *z, fp_node *n)
{
    if (n->n_inputs != 2 || !is_blocked(z, n->inputs[0]) || !is_blocked(z, n->inputs[1]) || !same_shape(z, n))
        return false;
    for (int k = 0; k < 2; k++) {
        fp_value *x = n->inputs[k], *h = n->inputs[1 - k];
        fp_node *hs = h->producer, *c = foldable_conv(z, x, 2);
        /* measured (ONNX Runtime 1.30): not after a Conv of fewer channels than a block (8 on a
         * block of 16); after 16, and after 120 (7.5 blocks), folded. ONNX Runtime 1.31.1: not when
         * the Mul's output is a graph output, which a Relu, Sigmoid or HardSigmoid does not stop */
        if (!c || n->outputs[0]->is_output || !hs || hs->op != FP_OP_HARD_SIGMOID || hs->inputs[0] != x ||
            h->n_uses != 1 || dim(x, 1) < (int64_t)z->block ||
            fabs(fp_node_attr_float(hs, "alpha", 0.2) - 1.0 / 6.0) > 1e-6 ||
            fabs(fp_node_attr_float(hs, "beta", 0.5) - 0.5) > 1e-6)
            continue;
        set_activation(z, c, "HardSwish");
        fold_into(z, c, n);
        hs->flags |= FP_NODE_REMOVED;
        z->res->act_fused++;
        return true;
    }
    return run_blocked(z, n);
}

/* A BatchNormalization of a blocked tensor runs as a blocked depthwise 1x1 Conv: inference form
 * (no training outputs), constant 1-D parameters. It keeps its op kind (its shape rule) and is
 * named Conv, as ONNX Runtime's graph names it. */
static bool blocked_batch_norm(nchwc *z, fp_node *n)
{
    if (!is_blocked(z, n->inputs[0]) || n->n_inputs < 5)
        return false;
    for (uint32_t k = 1; k < 5; k++)
        if (!fp_value_is_constant(n->inputs[k]) || n->inputs[k]->shape.rank != 1)
            return false;
    for (uint32_t k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] && (n->outputs[k]->n_uses || n->outputs[k]->is_output))
            return false;
    n->domain = z->domain;
    n->op_type = fp_intern(z->m, "Conv", -1);
    z->blocked[n->outputs[0]->id] = 1;
    z->dims[n->outputs[0]->id] = z->dims[n->inputs[0]->id];
    z->res->converted++;
    return true;
}

/* A Transpose to NHWC (perm 0, 2, 3, 1) of a blocked tensor becomes a ReorderOutput that writes
 * NHWC (channels_last). When it was the tensor's one reader, the tensor is no longer there in NCHW:
 * its producer writes a blocked tensor of a new name (ONNX Runtime's NCHWc tensors are all new
 * ones; only a ReorderOutput writes the original), which the reorder reads. */
static bool blocked_transpose(nchwc *z, fp_node *n)
{
    static const int64_t to_nhwc[4] = {0, 2, 3, 1};
    fp_value *v = n->inputs[0];
    if (!is_blocked(z, v) || !transpose_4d(n, to_nhwc))
        return false;
    if (v->producer && v->n_uses == 1 && !v->is_output && !g_hash_table_contains(z->to_nchw, v)) {
        g_autofree char *name = g_strdup_printf("%s/nchwc", v->name);
        fp_value *b = fp_value_interpose(z->g, v, name, FP_DT_UNDEFINED, NULL); /* n, v's reader, reads b */
        fit(z);
        z->blocked[b->id] = 1;
        z->dims[b->id] = z->dims[v->id];
        v->producer = NULL;
    }
    n->op = FP_OP_REORDER_OUTPUT;
    n->op_type = fp_intern(z->m, "ReorderOutput", -1);
    n->domain = z->domain;
    set_channels_last(z, n);
    z->res->reorder_out++;
    return true;
}

/* Dim k of v as ONNX Runtime knows it when it optimizes (the load shape where one was recorded),
 * else -1. */
static int64_t load_dim(const fp_value *v, int k)
{
    const fp_shape *s = fp_value_opt_shape(v);
    return s->rank > k && fp_dim_known(s->dims[k]) ? s->dims[k].value : -1;
}

/* Whether Resize or Upsample n's attributes suit the blocked Upsample: mode nearest or linear; from
 * Resize-11 on, nearest only with coordinate_transformation_mode asymmetric and nearest_mode floor,
 * linear with asymmetric, align_corners or half_pixel (the ONNX defaults apply: half_pixel,
 * round_prefer_floor). */
static bool resize_mode_ok(const fp_node *n, bool since_11)
{
    const char *mode = fp_node_attr_string(n, "mode", "nearest");
    bool nearest = strcmp(mode, "nearest") == 0;
    if (!nearest && strcmp(mode, "linear") != 0)
        return false;
    if (!since_11)
        return true;
    const char *ctm = fp_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (nearest)
        return !strcmp(ctm, "asymmetric") &&
               !strcmp(fp_node_attr_string(n, "nearest_mode", "round_prefer_floor"), "floor");
    return !strcmp(ctm, "asymmetric") || !strcmp(ctm, "align_corners") || !strcmp(ctm, "half_pixel");
}

/* The whole-number scales[0..4) of Resize or Upsample n reading x: from a constant float32 scales
 * tensor of 4 positive whole numbers, or (Resize-11 on, when it has a 4th input) a constant int64
 * sizes tensor of 4 multiples of x's dims, all known. False when neither. */
static bool resize_scales(const fp_node *n, const fp_value *x, bool since_11, int64_t *scales)
{
    if (since_11 && n->n_inputs >= 4) {
        int64_t sizes[4];
        if (fp_value_ints(n->inputs[3], sizes, 4) != 4 || n->inputs[3]->dtype != FP_DT_INT64 ||
            n->inputs[3]->shape.rank != 1)
            return false;
        for (int i = 0; i < 4; i++) {
            int64_t d = load_dim(x, i);
            if (d <= 0 || sizes[i] % d)
                return false;
            scales[i] = sizes[i] / d;
        }
        return true;
    }
    uint32_t k = since_11 ? 2 : 1;
    float f[4];
    if (n->n_inputs <= k || fp_value_floats(n->inputs[k], f, 4) != 4 || n->inputs[k]->shape.rank != 1)
        return false;
    for (int i = 0; i < 4; i++) {
        scales[i] = (int64_t)f[i];
        if (scales[i] <= 0 || (float)scales[i] != f[i])
            return false;
    }
    return true;
}

/* A Resize (ONNX Resize-10 on, or Upsample-9) of a blocked tensor by constant whole-number scales,
 * 1 on N and C, runs as the blocked Upsample (NchwcTransformerImpl::TransformResize): it reads the
 * blocked tensor alone and carries the scales, mode and coordinate_transformation_mode as
 * attributes. Its other inputs must be absent or constant (ORT transforms it only with no input
 * edge left). */
static bool blocked_resize(nchwc *z, fp_node *n)
{
    fp_value *x = n->inputs[0];
    bool since_11 = n->op == FP_OP_RESIZE && n->opset >= 11;
    if ((n->domain && *n->domain) || (n->op == FP_OP_UPSAMPLE && n->opset != 9) || !is_blocked(z, x))
        return false;
    for (uint32_t k = 1; k < n->n_inputs; k++)
        if (n->inputs[k] && !fp_value_is_constant(n->inputs[k]))
            return false;
    int64_t scales[4];
    if (!resize_mode_ok(n, since_11) || !resize_scales(n, x, since_11, scales) || scales[0] != 1 || scales[1] != 1)
        return false;
    const char *mode = fp_intern(z->m, fp_node_attr_string(n, "mode", "nearest"), -1);
    const char *ctm =
        fp_intern(z->m,
                  fp_node_attr_string(n, "coordinate_transformation_mode", since_11 ? "half_pixel" : "asymmetric"), -1);
    int64_t *ints = fp_arena_alloc(z->m->arena, sizeof scales);
    memcpy(ints, scales, sizeof scales);
    n->n_attrs = 0;
    fp_node_set_attr(z->m, n, (fp_attr){.name = "scales", .type = FP_ATTR_INTS, .u.ints = ints, .n = 4});
    fp_node_set_attr(z->m, n,
                     (fp_attr){.name = "mode", .type = FP_ATTR_STRING, .u.s = mode, .n = (uint32_t)strlen(mode)});
    fp_node_set_attr(z->m, n,
                     (fp_attr){.name = "coordinate_transformation_mode",
                               .type = FP_ATTR_STRING,
                               .u.s = ctm,
                               .n = (uint32_t)strlen(ctm)});
    n->n_inputs = 1;
    n->domain = z->domain;
    n->op_type = fp_intern(z->m, "Upsample", -1);
    z->blocked[n->outputs[0]->id] = 1;
    dims_own(z, n->outputs[0]);
    z->res->converted++;
    return true;
}

/* A Concat on axis 1 of blocked tensors whose channels are each a multiple of the block. */
static bool blocked_concat(nchwc *z, fp_node *n)
{
    if (fp_node_attr_int(n, "axis", 0) != 1)
        return false;
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (!is_blocked(z, n->inputs[k]) || dim(n->inputs[k], 1) < 0 || dim(n->inputs[k], 1) % (int64_t)z->block)
            return false;
    return run_blocked(z, n);
}

/* A Conv or pool that stays NCHW: the finding with the reason; false (it is not blocked). */
static bool keep_nchw(nchwc *z, const fp_node *n, const char *why)
{
    if (z->diag)
        fp_diag_add(z->diag, FP_DIAG_INFO, "layout", "nchwc-kept", n->name, "%s %s stays NCHW: %s", n->op_type, n->name,
                    why);
    z->res->kept_nchw++;
    return false;
}

/* Whether n stays in (or enters) the blocked layout, its rewrites done. */
static bool visit_blocked(nchwc *z, fp_node *n)
{
    const char *why;
    switch (n->op) {
    case FP_OP_CONV:
    case FP_OP_FUSED_CONV:
        if ((why = conv_refusal(z, n)))
            return keep_nchw(z, n, why);
        convert(z, n, fp_node_attr_int(n, "group", 1) == 1 && dim(n->inputs[0], 1) < (int64_t)z->block);
        return true;
    case FP_OP_MAX_POOL:
    case FP_OP_AVERAGE_POOL:
    case FP_OP_GLOBAL_MAX_POOL:
    case FP_OP_GLOBAL_AVG_POOL:
        if ((why = pool_refusal(z, n)))
            return keep_nchw(z, n, why);
        convert(z, n, false);
        return true;
    case FP_OP_ADD:
    case FP_OP_SUM:
        return blocked_add(z, n);
    case FP_OP_MUL:
        return blocked_scale(z, n) || blocked_mul(z, n);
    case FP_OP_CONCAT:
        return blocked_concat(z, n);
    case FP_OP_BATCH_NORM:
        return blocked_batch_norm(z, n);
    case FP_OP_TRANSPOSE:
        return blocked_transpose(z, n);
    case FP_OP_RESIZE:
    case FP_OP_UPSAMPLE:
        return blocked_resize(z, n);
    case FP_OP_RELU:
    case FP_OP_SIGMOID:
    case FP_OP_TANH:
    case FP_OP_HARD_SIGMOID:
        return blocked_activation(z, n);
    case FP_OP_GELU:
    case FP_OP_QUICK_GELU: /* measured: run blocked, never folded into the Conv */
        return n->n_outputs == 1 && is_blocked(z, n->inputs[0]) && run_blocked(z, n);
    default:
        return false;
    }
}

/* Gives the nodes made since node index `first` (the reorders of one visit), then n when the visit
 * put it in the NCHWc domain, the next ORT indices: ONNX Runtime's NchwcTransformer adds a node for
 * each, in the order it visits the graph, and its later execution order follows those indices. */
static void number_new(nchwc *z, fp_node *n, const char *was_domain, uint32_t first)
{
    for (uint32_t i = first; i < z->g->nodes->len; i++)
        ((fp_node *)g_ptr_array_index(z->g->nodes, i))->ort_index = z->next_index++;
    if (n && n->domain == z->domain && was_domain != z->domain)
        n->ort_index = z->next_index++;
}

/* Walks g's nodes in ONNX Runtime's topological order (its transformer's): each blocked where it
 * can be, else its blocked inputs reordered; numbers what ORT would add (number_new). */
static void walk(nchwc *z, fp_node *const *order, uint32_t n_order)
{
    z->next_index = z->g->nodes->len;
    for (uint32_t i = 0; i < n_order; i++) {
        fp_node *n = order[i];
        uint32_t first = z->g->nodes->len;
        const char *was = n->domain;
        if ((n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) || !n->n_outputs || !n->outputs[0])
            continue;
        if (!visit_blocked(z, n)) {
            for (uint32_t k = 0; k < n->n_inputs; k++)
                if (n->inputs[k])
                    n->inputs[k] = as_nchw(z, n->inputs[k]);
            for (uint32_t k = 0; k < fp_node_n_implicit(n); k++)
                n->ext->implicit[k] = as_nchw(z, n->ext->implicit[k]);
        }
        number_new(z, n, was, first);
    }
    for (guint i = 0; i < z->g->outputs->len; i++) {
        fp_value *v = z->g->outputs->pdata[i];
        uint32_t first = z->g->nodes->len;
        if (is_blocked(z, v) && v->producer)
            reorder_graph_output(z, v);
        number_new(z, NULL, NULL, first);
    }
}

/* Whether every input of g declares a static size for each dim after the first (the batch). */
static bool spatial_declared(const fp_graph *g)
{
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_shape *d = &((const fp_value *)g->inputs->pdata[i])->decl_shape;
        for (int32_t k = 1; k < d->rank; k++)
            if (!fp_dim_known(d->dims[k]))
                return false;
        if (d->rank < 0)
            return false;
    }
    return true;
}

/* Names the layout of every tensor left blocked, "NCHW16c" on a block of 16 (fp_value_layout): the
 * memory passes size it with its channels padded to the block, as ONNX Runtime allocates it. */
static void name_blocked(nchwc *z)
{
    fit(z);
    g_autofree char *name = g_strdup_printf("NCHW%uc", (unsigned)z->block);
    const char *layout = fp_intern(z->m, name, -1);
    for (guint i = 0; i < z->g->values->len; i++) {
        fp_value *v = z->g->values->pdata[i];
        if (z->blocked[v->id])
            fp_value_set_layout(v, layout, NULL, NULL);
    }
}

bool fp_pass_nchwc(fp_model *m, const fp_target *t, uint64_t block, fp_nchwc_result *res, fp_diag *diag)
{
    memset(res, 0, sizeof *res);
    if (block < 2 || !g_key_file_get_boolean(t->keyfile, "layout", "nchwc", NULL))
        return false;
    nchwc z = {.m = m,
               .g = m->main,
               .block = block,
               .res = res,
               .diag = diag,
               .domain = fp_intern(m, "com.microsoft.nchwc", -1)};
    z.to_blocked = g_hash_table_new(g_direct_hash, g_direct_equal);
    z.to_nchw = g_hash_table_new(g_direct_hash, g_direct_equal);
    z.spatial_declared = spatial_declared(z.g);
    fit(&z);
    uint32_t n = 0;
    g_autofree fp_node **order = fp_graph_order(z.g, NULL, NULL) ? fp_graph_ort_order(z.g, &n) : NULL;
    if (order)
        walk(&z, order, n);
    name_blocked(&z);
    g_free(z.blocked);
    g_free(z.dims);
    g_hash_table_unref(z.to_blocked);
    g_hash_table_unref(z.to_nchw);
    bool changed = res->converted || res->blocked || res->reorder_in || res->reorder_out;
    if (changed)
        fp_model_link(m);
    return changed;
}
