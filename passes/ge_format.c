/* ge_format.c - GE's storage formats and dtypes (ge_format.h), in topological order:
 *   - Conv2D, pools, BatchNorm and FullyConnection read and write NC1HWC0; a Conv2D filter and a
 *     FullyConnection weight are FRACTAL_Z (FRACTAL_Z_C04 under small-channel tuning for a Conv of
 *     at most 4 input channels), a FullyConnection bias NC1HWC0; AIPP writes NC1HWC0 float16;
 *   - elementwise ops and activations keep the format of their inputs when those agree (a Softmax
 *     over C too), a scalar constant operand as it is, any other constant converted;
 *   - every other op reads the origin format (NCHW, ND); on a target whose matmuls take their
 *     weight in FRACTAL_NZ (`[layout] matmul_weight_nz`), MatMul and Gemm weights are converted;
 *   - under force_fp16 a float32 graph input or weight is cast to float16 where it is read, before
 *     any TransData, and a graph output goes back to its format, then to float32.
 * One conversion per value and format, shared by its readers. A conversion of a weight (or of a
 * value GE computes on the host at build) is folded. Shapes stay logical; a value in NC1HWC0 is
 * marked so, and the memory planner pads its channels to C0. */
#include "passes/ge_format.h"

#include <string.h>

enum { K_ORIGIN, K_5HD, K_SAME, K_AIPP };

typedef struct {
    fp_model *m;
    fp_graph *g;
    fp_dtype compute; /* float32 computes at this dtype, or FP_DT_UNDEFINED */
    bool c04;         /* small-channel tuning (ATC --enable_small_channel) */
    bool matmul_nz;   /* matmul weights in FRACTAL_NZ */
    const char **fmt; /* per value id: storage format (interned), NULL for the origin one */
    uint8_t *half;    /* per value id: float32 held at `compute` */
    uint32_t cap;
    GHashTable *made; /* "id/format" -> the conversion's output, made once */
    const char *nc1hwc0, *fz, *fz_c04, *fnz;
    fp_ge_format_result *res;
    fp_diag *diag;
} gef;

/* Grows the per-value arrays to g's value count. */
static void fit(gef *z)
{
    uint32_t n = z->g->values->len;
    if (n <= z->cap)
        return;
    uint32_t cap = MAX(n, z->cap * 2);
    z->fmt = g_renew(const char *, z->fmt, cap);
    z->half = g_renew(uint8_t, z->half, cap);
    memset(z->fmt + z->cap, 0, sizeof(const char *) * (cap - z->cap));
    memset(z->half + z->cap, 0, cap - z->cap);
    z->cap = cap;
}

static const char *fmt_of(const gef *z, const fp_value *v) { return v->graph == z->g ? z->fmt[v->id] : NULL; }

/* v's origin format: the file's when it names one that is no device format, else NCHW at rank 4
 * and ND otherwise. */
static const char *origin_of(gef *z, const fp_value *v)
{
    const char *o = fp_value_origin_layout(v) ? fp_value_origin_layout(v) : fp_value_layout(v);
    if (o && (!strcmp(o, "NCHW") || !strcmp(o, "NHWC") || !strcmp(o, "ND")))
        return o;
    return fp_intern(z->m, v->shape.rank == 4 ? "NCHW" : "ND", -1);
}

/* The conversion `what` (a dtype or a format) of v made already, or NULL. */
static fp_value *cached(gef *z, const fp_value *v, const char *what)
{
    g_autofree char *key = g_strdup_printf("%u/%s", v->id, what);
    return g_hash_table_lookup(z->made, key);
}

static void remember(gef *z, const fp_value *v, const char *what, fp_value *out)
{
    g_hash_table_insert(z->made, g_strdup_printf("%u/%s", v->id, what), out);
}

/* A finding for a runtime conversion: which tensor, for which reader, why. */
static void found(gef *z, const fp_node *conv, const fp_value *v, const fp_node *reader, const char *why)
{
    if (z->diag)
        fp_diag_add(z->diag, FP_DIAG_INFO, "layout", "ge-format-inserted", conv->name, "%s %s: '%s' for %s%s%s: %s",
                    conv->op_type, conv->name, v->name, reader ? reader->op_type : "the graph output",
                    reader ? " " : "", reader ? reader->name : "", why);
}

/* v cast to `to` (made once; folded when v is fixed), written to `out` when not NULL. */
static fp_value *cast_to(gef *z, fp_value *v, fp_dtype to, fp_value *out, const fp_node *reader)
{
    const char *what = to == FP_DT_FLOAT ? "float" : "half";
    fp_value *done = out ? NULL : cached(z, v, what);
    if (done)
        return done;
    g_autofree char *name = g_strdup_printf("%s/to_%s", v->name, to == FP_DT_FLOAT ? "float" : "float16");
    if (!out)
        out = fp_graph_value_like(z->g, name, v, to);
    out->dtype = to;
    fp_node *c = fp_node_new_attrs(z->g, FP_OP_CAST, "Cast", "", name, 1, 1, 1);
    c->attrs[0] = (fp_attr){.name = fp_intern(z->m, "to", -1), .type = FP_ATTR_INT, .u.i = to};
    c->inputs[0] = v;
    fp_node_set_output(c, 0, out);
    fit(z);
    z->fmt[out->id] = fmt_of(z, v);
    z->half[out->id] = to != FP_DT_FLOAT;
    if (fp_value_is_fixed(v)) {
        c->flags |= FP_NODE_FOLDED;
        z->res->cast_folded++;
    } else {
        z->res->cast++;
        found(z, c, v, reader,
              to == FP_DT_FLOAT ? "back to float32, the output's dtype" : "float32 read as float16 (force_fp16)");
    }
    remember(z, v, what, out);
    return out;
}

/* v in format `to` (NULL: its origin format) through one TransData (made once; folded when v is
 * fixed), written to `out` when not NULL. */
static fp_value *transdata(gef *z, fp_value *v, const char *to, fp_value *out, const fp_node *reader)
{
    const char *from = fmt_of(z, v) ? fmt_of(z, v) : origin_of(z, v);
    const char *dst = to ? to : origin_of(z, v);
    fp_value *done = out ? NULL : cached(z, v, dst);
    if (done)
        return done;
    g_autofree char *name = g_strdup_printf("%s/%s", v->name, dst);
    if (!out)
        out = fp_graph_value_like(z->g, name, v, FP_DT_UNDEFINED);
    fp_value_set_layout(out, dst, origin_of(z, v), NULL);
    fp_node *t = fp_node_new_attrs(z->g, FP_OP_TRANS_DATA, "TransData", "", name, 1, 1, 2);
    t->attrs[0] = (fp_attr){.name = fp_intern(z->m, "src_format", -1),
                            .type = FP_ATTR_STRING,
                            .u.s = from,
                            .n = (uint32_t)strlen(from)};
    t->attrs[1] = (fp_attr){.name = fp_intern(z->m, "dst_format", -1),
                            .type = FP_ATTR_STRING,
                            .u.s = dst,
                            .n = (uint32_t)strlen(dst)};
    t->inputs[0] = v;
    fp_node_set_output(t, 0, out);
    fit(z);
    z->fmt[out->id] = to;
    z->half[out->id] = z->half[v->id];
    if (!to)
        z->res->to_origin++;
    else if (to == z->nc1hwc0)
        z->res->to_5hd++;
    else
        (to == z->fnz ? &z->res->to_fractal_nz : &z->res->to_fractal_z)[0]++;
    if (fp_value_is_fixed(v)) {
        t->flags |= FP_NODE_FOLDED;
        z->res->transdata_folded++;
    } else {
        z->res->transdata++;
        found(z, t, v, reader, to ? "the reader runs in this format" : "the reader takes the origin format");
    }
    remember(z, v, dst, out);
    return out;
}

/* Dim k of v, or -1. */
static int64_t dim(const fp_value *v, int k)
{
    return v && v->shape.rank > k && fp_dim_known(v->shape.dims[k]) ? v->shape.dims[k].value : -1;
}

/* The axis a Softmax reduces over (ONNX axis, or GE SoftmaxV2's first axes entry), made positive. */
static int64_t softmax_axis(const fp_node *n, int rank)
{
    const fp_attr *a = fp_node_attr(n, "axes");
    int64_t ax = a && a->type == FP_ATTR_INTS && a->n ? a->u.ints[0] : fp_node_attr_int(n, "axis", -1);
    return ax < 0 ? ax + rank : ax;
}

/* How n takes formats: K_5HD, K_SAME (its inputs'), K_AIPP, or K_ORIGIN. */
static int kind_of(const fp_node *n)
{
    const fp_value *x = n->n_inputs ? n->inputs[0] : NULL;
    bool r4 = x && x->shape.rank == 4;
    switch (n->op) {
    case FP_OP_CONV:
    case FP_OP_FUSED_CONV:
    case FP_OP_MAX_POOL:
    case FP_OP_AVERAGE_POOL:
    case FP_OP_GLOBAL_AVG_POOL:
    case FP_OP_GLOBAL_MAX_POOL:
    case FP_OP_BATCH_NORM:
        return r4 ? K_5HD : K_ORIGIN;
    case FP_OP_GEMM:
        return strcmp(n->op_type, "FullyConnection") == 0 && r4 ? K_5HD : K_ORIGIN;
    case FP_OP_SOFTMAX:
    case FP_OP_LOG_SOFTMAX:
        return r4 && softmax_axis(n, 4) == 1 ? K_SAME : K_ORIGIN;
    case FP_OP_CONCAT:
        return r4 && fp_node_attr_int(n, "axis", fp_node_attr_int(n, "concat_dim", 0)) == 1 ? K_SAME : K_ORIGIN;
    case FP_OP_OPAQUE:
        return strcmp(n->op_type, "Aipp") == 0 ? K_AIPP : K_ORIGIN;
    default:
        return fp_op_has(n->op, FP_OPF_EW | FP_OPF_UNARY | FP_OPF_ACT) && n->n_outputs >= 1 ? K_SAME : K_ORIGIN;
    }
}

/* The format input k of a K_5HD node n reads (NULL: as it is). */
static const char *want_5hd(const gef *z, const fp_node *n, uint32_t k)
{
    bool fc = n->op == FP_OP_GEMM;
    if (k == 0)
        return z->nc1hwc0;
    if (k == 1 && (fc || n->op == FP_OP_CONV || n->op == FP_OP_FUSED_CONV)) {
        int64_t cin = dim(n->inputs[0], 1);
        bool c04 = z->c04 && !fc && cin >= 1 && cin <= 4 && fp_node_attr_int(n, "group", 1) == 1;
        return c04 ? z->fz_c04 : z->fz;
    }
    if (k == 2 && fc)
        return z->nc1hwc0; /* GE reshapes the 1-D bias to 4-D for it */
    if (k >= 3 && n->op == FP_OP_FUSED_CONV && !fp_value_is_fixed(n->inputs[k]))
        return z->nc1hwc0; /* the Add folded into it */
    return NULL;
}

/* Whether a K_SAME node runs in NC1HWC0: its non-constant inputs all are, of one 4-D shape (a
 * Concat: one shape but C). */
static bool same_is_5hd(const gef *z, const fp_node *n)
{
    const fp_value *first = NULL;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        if (!v || fp_value_is_fixed(v))
            continue;
        if (fmt_of(z, v) != z->nc1hwc0 || v->shape.rank != 4)
            return false;
        if (first)
            for (int d = 0; d < 4; d++)
                if ((d != 1 || n->op != FP_OP_CONCAT) && (dim(v, d) < 0 || dim(v, d) != dim(first, d)))
                    return false;
        first = v;
    }
    return first != NULL;
}

/* The format input k of n reads, n of kind `kind` (its K_SAME decision in `five`). */
static const char *want(const gef *z, const fp_node *n, uint32_t k, int kind, bool five)
{
    const fp_value *v = n->inputs[k];
    uint64_t numel = 0;
    switch (kind) {
    case K_5HD:
        return want_5hd(z, n, k);
    case K_SAME:
        if (!five)
            return NULL;
        return fp_value_is_fixed(v) && fp_shape_numel(&v->shape, &numel) && numel == 1 ? fmt_of(z, v) : z->nc1hwc0;
    default:
        if (z->matmul_nz && k == 1 && fp_value_is_fixed(v) && v->shape.rank >= 2 &&
            (n->op == FP_OP_MATMUL || n->op == FP_OP_GEMM))
            return z->fnz;
        return NULL;
    }
}

/* Input k of n as n reads it: cast to the compute dtype, then in the format it wants. */
static void convert_input(gef *z, fp_node *n, uint32_t k, const char *to)
{
    fp_value *v = n->inputs[k];
    if (z->compute != FP_DT_UNDEFINED && v->dtype == FP_DT_FLOAT && !z->half[v->id] && n->op != FP_OP_SHAPE &&
        n->op != FP_OP_SIZE)
        v = cast_to(z, v, z->compute, NULL, n);
    if (fmt_of(z, v) != to)
        v = transdata(z, v, to, NULL, n);
    n->inputs[k] = v;
}

/* Reads n's inputs in the formats it wants and sets its outputs' formats and dtypes. */
static void visit(gef *z, fp_node *n)
{
    int kind = kind_of(n);
    bool five = kind == K_SAME && same_is_5hd(z, n);
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] && n->inputs[k]->graph == z->g)
            convert_input(z, n, k, want(z, n, k, kind, five));
    const char *out = kind == K_5HD || kind == K_AIPP || five ? z->nc1hwc0 : NULL;
    z->res->ops_5hd += kind == K_5HD || five;
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (!v)
            continue;
        z->fmt[v->id] = k == 0 ? out : NULL;
        z->half[v->id] = z->compute != FP_DT_UNDEFINED && (v->dtype == FP_DT_FLOAT || kind == K_AIPP);
        if (k == 0 && out) /* AIPP's kernel writes float16 5HD; the planner pads C to C0 */
            fp_value_set_layout(v, out, origin_of(z, v), NULL);
    }
}

/* GE's NetOutput: the op that reads a graph's outputs, as the outputs themselves. */
static bool is_net_output(const fp_node *n) { return n->op == FP_OP_OPAQUE && strcmp(n->op_type, "NetOutput") == 0; }

/* Graph output v back to its origin format, then to float32: its producer writes an inner value,
 * which the other readers (a NetOutput aside) read, and the conversions write v. */
static void restore_output(gef *z, fp_value *v)
{
    bool to_float = z->half[v->id] && v->dtype == FP_DT_FLOAT;
    if (!fmt_of(z, v) && !to_float)
        return;
    g_autofree char *name = g_strdup_printf("%s/device", v->name);
    fp_value *inner = fp_value_interpose(z->g, v, name, to_float ? z->compute : FP_DT_UNDEFINED, is_net_output);
    fit(z);
    z->fmt[inner->id] = z->fmt[v->id];
    z->half[inner->id] = z->half[v->id];
    fp_value *at = inner;
    if (fmt_of(z, v))
        at = transdata(z, inner, NULL, to_float ? NULL : v, NULL);
    if (to_float)
        cast_to(z, at, FP_DT_FLOAT, v, NULL);
    z->fmt[v->id] = NULL;
    z->half[v->id] = 0;
}

/* Whether g already holds GE's device formats (a graph after format selection: TransData ops, or
 * values in NC1HWC0 or a FRACTAL format). */
static bool has_device_formats(const fp_graph *g)
{
    for (guint i = 0; i < g->nodes->len; i++)
        if (((const fp_node *)g->nodes->pdata[i])->op == FP_OP_TRANS_DATA)
            return true;
    for (guint i = 0; i < g->values->len; i++) {
        const char *l = fp_value_layout(g->values->pdata[i]);
        if (l && (g_str_has_prefix(l, "NC1HWC0") || g_str_has_prefix(l, "FRACTAL")))
            return true;
    }
    return false;
}

static void walk(gef *z)
{
    uint32_t n = 0;
    fp_node *const *o = fp_graph_order(z->g, &n, NULL);
    g_autofree fp_node **order = o ? g_memdup2(o, sizeof(fp_node *) * n) : NULL; /* the walk adds nodes */
    for (uint32_t i = 0; order && i < n; i++)
        if (!(order[i]->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) && !is_net_output(order[i]))
            visit(z, order[i]);
    guint n_out = z->g->outputs->len;
    for (guint i = 0; i < n_out; i++) {
        fp_value *v = z->g->outputs->pdata[i];
        if (v->producer && v->graph == z->g && !(v->producer->flags & FP_NODE_FOLDED))
            restore_output(z, v);
    }
}

bool fp_pass_ge_format(fp_model *m, const fp_target *t, fp_dtype compute, fp_ge_format_result *res, fp_diag *diag)
{
    memset(res, 0, sizeof *res);
    if (!g_key_file_get_boolean(t->keyfile, "layout", "ge_formats", NULL))
        return false;
    if (has_device_formats(m->main)) {
        res->preset = true;
        return false;
    }
    gef z = {.m = m,
             .g = m->main,
             .compute = compute,
             .res = res,
             .diag = diag,
             .c04 = g_key_file_get_boolean(t->keyfile, "layout", "enable_small_channel", NULL),
             .matmul_nz = g_key_file_get_boolean(t->keyfile, "layout", "matmul_weight_nz", NULL),
             .made = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
             .nc1hwc0 = fp_intern(m, "NC1HWC0", -1),
             .fz = fp_intern(m, "FRACTAL_Z", -1),
             .fz_c04 = fp_intern(m, "FRACTAL_Z_C04", -1),
             .fnz = fp_intern(m, "FRACTAL_NZ", -1)};
    res->ran = true;
    res->c0 = compute != FP_DT_UNDEFINED && fp_dtype_bits(compute) == 8 ? 32 : 16;
    fit(&z);
    walk(&z);
    g_hash_table_unref(z.made);
    g_free(z.fmt);
    g_free(z.half);
    bool changed = res->transdata || res->cast || res->transdata_folded || res->cast_folded;
    if (changed)
        fp_model_link(m);
    return changed;
}
