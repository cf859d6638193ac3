/* denormal.c - denormal Softmax weights from an attention mask (denormal.h). The mask's content is
 * evaluated from the constants it is built of (fp_shape_evaluate), as torchvision's Swin computes
 * its shifted windows' mask in the graph; the share of denormal weights goes on the Softmax's
 * output for the cost model (passes/cost.c). Facts: docs/rules.md, "Denormal attention weights". */
#include "passes/denormal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "passes/shape/shapes.h"

bool fp_denormal_float(float x) { return x != 0 && fabsf(x) < FLT_MIN; }

bool fp_denormal_exp(double d) { return fp_denormal_float(expf((float)d)); }

double fp_denormal_fraction(const float *mask, uint64_t n, uint64_t row)
{
    if (!row || n % row)
        return -1;
    uint64_t denormal = 0;
    for (uint64_t r = 0; r < n; r += row) {
        float top = -INFINITY;
        for (uint64_t k = 0; k < row; k++)
            top = fmaxf(top, mask[r + k]);
        for (uint64_t k = 0; k < row && isfinite(top); k++)
            denormal += fp_denormal_exp((double)mask[r + k] - top);
    }
    return n ? (double)denormal / (double)n : 0;
}

bool fp_denormal_product(const fp_node *n)
{
    return n->op == FP_OP_MATMUL || n->op == FP_OP_GEMM || n->op == FP_OP_FUSED_MATMUL;
}

double fp_denormal_share(const fp_node *n)
{
    double share = 0;
    for (uint32_t i = 0; fp_denormal_product(n) && i < 2 && i < n->n_inputs; i++)
        if (n->inputs[i])
            share = fmax(share, fp_value_denormal(n->inputs[i]));
    return share;
}

uint64_t fp_denormal_events(const fp_node *n)
{
    uint64_t elems;
    if (!n->metrics_known)
        return 0;
    if (n->op == FP_OP_SOFTMAX && n->n_outputs && n->outputs[0] && fp_shape_numel(&n->outputs[0]->shape, &elems))
        return (uint64_t)(fp_value_denormal(n->outputs[0]) * (double)elems);
    return (uint64_t)(fp_denormal_share(n) * (double)(n->metrics.flops / 2));
}

/* Element k of an inline float tensor t as a double (float, float16 or double: fp_tensor_number;
 * else NAN). */
static double float_at(const fp_tensor *t, uint64_t k)
{
    double x;
    return fp_dtype_is_float(t->dtype) && fp_tensor_number(t, k, &x) ? x : NAN;
}

/* The producer of v through views, Expands and Casts (NULL for none). */
static fp_node *source(const fp_value *v)
{
    fp_node *p = v ? v->producer : NULL;
    while (p && p->n_inputs && p->inputs[0] &&
           (fp_op_has(p->op, FP_OPF_VIEW) || p->op == FP_OP_EXPAND || p->op == FP_OP_CAST))
        p = p->inputs[0]->producer;
    return p;
}

/* A mask's value known only as a Where's or a Mul's scalar operand in the band of
 * fp_denormal_exp, into *value. */
static bool masking_constant(const fp_value *mask, double *value)
{
    fp_node *p = source(mask);
    if (!p || (p->op != FP_OP_WHERE && p->op != FP_OP_MUL))
        return false;
    for (uint32_t i = p->op == FP_OP_WHERE ? 1 : 0; i < p->n_inputs; i++)
        if (p->inputs[i] && fp_value_scalar(p->inputs[i], value) && fp_denormal_exp(*value))
            return true;
    return false;
}

/* The last dim of v when static and > 0, else 0. */
static uint64_t last_dim(const fp_value *v)
{
    const fp_shape *s = &v->shape;
    return s->rank > 0 && fp_dim_known(s->dims[s->rank - 1]) && s->dims[s->rank - 1].value > 0
               ? (uint64_t)s->dims[s->rank - 1].value
               : 0;
}

/* v's content when it is an ONNX initializer the import left in the file (fp_tensor FP_DATA_FILE: a
 * mask constant folded by the exporter or by ONNX Runtime's saved graph) of float type and at most
 * FP_DENORMAL_EVAL_MAX elements: read from m->path into a copy in a; NULL when not so, or when the
 * read falls short (the file changed). */
static const fp_tensor *file_content(const fp_model *m, const fp_value *v, fp_arena *a)
{
    const fp_tensor *t = v->tensor;
    uint64_t n;
    if (!t || t->where != FP_DATA_FILE || !m->path || !m->format || strcmp(m->format, "onnx") != 0 ||
        !fp_dtype_is_float(t->dtype) || !fp_shape_numel(&t->shape, &n) || n > FP_DENORMAL_EVAL_MAX || !t->nbytes ||
        t->length != t->nbytes)
        return NULL;
    FILE *f = fopen(m->path, "rb");
    if (!f)
        return NULL;
    void *data = fp_arena_alloc_raw(a, t->nbytes);
    bool read = fseeko(f, (off_t)t->offset, SEEK_SET) == 0 && fread(data, 1, t->nbytes, f) == t->nbytes;
    fclose(f);
    if (!read)
        return NULL;
    fp_tensor *copy = fp_arena_memdup(a, t, sizeof *t);
    copy->where = FP_DATA_INLINE;
    copy->data = data;
    return copy;
}

/* The Softmax n's weights share made denormal by the mask operand `mask` of its input's Add, in
 * [0, 1]; *value the masked value (the mask's smallest entry). -1 when the mask is not evaluable
 * (or not a float tensor whose rows run along the Softmax's axis). */
static double mask_share(fp_model *m, const fp_value *mask, uint64_t row, double *value)
{
    fp_arena *a = fp_arena_new();
    const fp_tensor *t = fp_shape_evaluate(m, (fp_value *)mask, FP_DENORMAL_EVAL_MAX, a);
    if (!t)
        t = file_content(m, mask, a);
    uint64_t n;
    double share = -1;
    if (t && t->data && fp_shape_numel(&t->shape, &n) && n && last_dim(mask) == row && !isnan(float_at(t, 0))) {
        float *f = fp_arena_calloc(a, n, sizeof *f);
        *value = INFINITY;
        for (uint64_t k = 0; k < n; k++) {
            f[k] = (float)float_at(t, k);
            *value = fmin(*value, f[k]);
        }
        share = fp_denormal_fraction(f, n, row);
    }
    fp_arena_free(a);
    return share;
}

/* Records share on v and, through views, on what reads it; appends the products that read it
 * (MatMul, Gemm, FusedMatMul) to readers. */
static void mark_readers(fp_value *v, float share, GPtrArray *readers)
{
    fp_value_ext_ensure(v)->denormal = share;
    for (uint32_t i = 0; i < v->n_uses; i++) {
        fp_node *r = v->uses[i].node;
        if (!fp_node_live(r))
            continue;
        if (fp_op_has(r->op, FP_OPF_VIEW) && r->n_outputs && r->outputs[0] && v->uses[i].port == 0)
            mark_readers(r->outputs[0], share, readers);
        else if (fp_denormal_product(r) && !g_ptr_array_find(readers, r, NULL))
            g_ptr_array_add(readers, r);
    }
}

/* The names of the first three readers, and how many more. */
static char *reader_names(const GPtrArray *readers)
{
    if (!readers->len)
        return g_strdup("no product");
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < readers->len && i < 3; i++)
        g_string_append_printf(s, "%s'%s'", i ? ", " : "", ((const fp_node *)readers->pdata[i])->name);
    if (readers->len > 3)
        g_string_append_printf(s, " and %u more", readers->len - 3);
    return g_string_free(s, false);
}

/* The warning for Softmax n, whose mask holds `value` (share < 0: share unknown). */
static void warn(fp_diag *diag, const fp_node *n, double value, double share, const GPtrArray *readers)
{
    g_autofree char *names = reader_names(readers);
    g_autofree char *what = share >= 0 ? g_strdup_printf("%.1f%% of its weights are denormal", 100 * share)
                                       : g_strdup("its masked weights are denormal");
    fp_diag_add(diag, FP_DIAG_WARNING, "denormal", "denormal-softmax", n->name,
                "Softmax '%s': its mask holds %g, whose exp() (%.2g) is a denormal float: %s, and %s "
                "multiplies them, on many x86 CPUs at a microcode assist per operation; a mask of -inf or of "
                "the dtype's lowest value underflows to 0 instead (or ONNX Runtime's "
                "session.set_denormal_as_zero with more than one intra-op thread)",
                n->name, value, exp(value), what, names);
}

/* Softmax n: its mask's share, recorded and warned about; whether it had one. */
static bool softmax(fp_model *m, fp_node *n, fp_diag *diag)
{
    fp_value *x = n->inputs[0], *y = n->outputs[0];
    int64_t rank = x->shape.rank, axis = fp_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    uint64_t row = last_dim(x);
    fp_node *add = x->producer;
    while (add && fp_op_has(add->op, FP_OPF_VIEW) && add->n_inputs && add->inputs[0])
        add = add->inputs[0]->producer;
    if (!row || rank < 1 || (axis != -1 && axis != rank - 1) || y->dtype != FP_DT_FLOAT || !add ||
        add->op != FP_OP_ADD || add->n_inputs != 2 || !add->inputs[0] || !add->inputs[1] || !add->outputs[0] ||
        last_dim(add->outputs[0]) != row)
        return false;
    double value = 0, share = -1;
    for (int i = 0; i < 2 && share < 0; i++)
        share = mask_share(m, add->inputs[i], row, &value);
    if (share == 0)
        return false;
    if (share < 0 && !masking_constant(add->inputs[0], &value) && !masking_constant(add->inputs[1], &value))
        return false;
    g_autoptr(GPtrArray) readers = g_ptr_array_new();
    mark_readers(y, share > 0 ? (float)share : 0, readers);
    warn(diag, n, value, share, readers);
    return share > 0;
}

uint32_t fp_pass_denormal(fp_model *m, fp_diag *diag)
{
    const fp_graph *g = m->main;
    uint32_t found = 0;
    for (guint i = 0; i < g->values->len; i++) {
        fp_value_ext *e = fp_value_ext_get(g->values->pdata[i]);
        if (e)
            e->denormal = 0;
    }
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        if (fp_node_live(n) && n->op == FP_OP_SOFTMAX && n->n_inputs && n->inputs[0] && n->n_outputs && n->outputs[0])
            found += softmax(m, n, diag);
    }
    return found;
}

void fp_denormal_copy(const fp_model *from, fp_model *to)
{
    const fp_graph *g = from->main;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g->values->pdata[i];
        float share = fp_value_denormal(v);
        fp_value *twin = share > 0 ? fp_graph_find(to->main, v->name) : NULL;
        if (twin)
            fp_value_ext_ensure(twin)->denormal = share;
    }
}
