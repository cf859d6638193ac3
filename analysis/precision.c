/* precision.c - the storage what-ifs (precision.h): option parsing and the exact bytes of the
 * weights cast or quantized. */
#include "analysis/precision.h"

#include <string.h>

static const struct {
    const char *name;
    fp_dtype dtype;
    bool weight, kv; /* --weight-dtype, --kv-dtype take it */
} dtypes[] = {
    {"fp32", FP_DT_FLOAT, true, true},       {"fp16", FP_DT_FLOAT16, true, true}, {"bf16", FP_DT_BFLOAT16, true, true},
    {"fp8", FP_DT_FLOAT8E4M3FN, true, true}, {"int8", FP_DT_INT8, true, true},    {"int4", FP_DT_INT4, true, false},
};

const char *fp_precision_dtype_name(fp_dtype t)
{
    for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
        if (dtypes[i].dtype == t)
            return dtypes[i].name;
    return t == FP_DT_UNDEFINED ? "as stored" : fp_dtype_name(t);
}

/* The dtype `name` names for the option (kv: --kv-dtype); false with the error. */
static bool parse_dtype(const char *name, bool kv, const char *option, fp_dtype *out, GError **error)
{
    for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
        if (strcmp(dtypes[i].name, name) == 0 && (kv ? dtypes[i].kv : dtypes[i].weight)) {
            *out = dtypes[i].dtype;
            return true;
        }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: expected %s", option, name,
                kv ? "fp32, fp16, bf16, fp8 or int8" : "fp32, fp16, bf16, fp8, int8 or int4");
    return false;
}

bool fp_precision_parse(const char *weight, int64_t group, const char *kv, int64_t kv_block, fp_precision *out,
                        GError **error)
{
    *out = (fp_precision){.weight = FP_DT_UNDEFINED, .group = FP_PRECISION_DEFAULT_GROUP, .kv = FP_DT_UNDEFINED};
    if (weight && !parse_dtype(weight, false, "--weight-dtype", &out->weight, error))
        return false;
    if (kv && !parse_dtype(kv, true, "--kv-dtype", &out->kv, error))
        return false;
    if (group && (group < 2 || group % 2 || out->weight != FP_DT_INT4)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--group-size %" G_GINT64_FORMAT ": %s", group,
                    out->weight != FP_DT_INT4 ? "applies to --weight-dtype int4 only"
                                              : "must be a positive even number");
        return false;
    }
    if (group)
        out->group = group;
    if (kv_block < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--kv-block %" G_GINT64_FORMAT ": must be positive", kv_block);
        return false;
    }
    out->kv_block = kv_block;
    return true;
}

bool fp_precision_check(const fp_precision *p, bool has_kv, const char *path, GError **error)
{
    if (has_kv || (p->kv == FP_DT_UNDEFINED && !p->kv_block))
        return true;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: %s: the model has no KV cache (no past key and value inputs found)", path,
                p->kv != FP_DT_UNDEFINED ? "--kv-dtype" : "--kv-block");
    return false;
}

bool fp_precision_check_weights(const fp_precision *p, const fp_weight_plan *w, const char *path, GError **error)
{
    bool quantize = p->weight == FP_DT_FLOAT8E4M3FN || p->weight == FP_DT_INT8 || p->weight == FP_DT_INT4;
    if (!quantize || w->n_changed || !w->quantized_bytes)
        return true;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: --weight-dtype %s: the model's weights are already stored quantized (%" G_GUINT64_FORMAT
                " bytes of 8-bit or smaller integers: MatMulNBits, GatherBlockQuantized, QDQ) and no float MatMul, "
                "Gemm or Conv weight is left to quantize; --weight-dtype fp16 or bf16 casts the float weights it keeps "
                "(scales, norms, tables)",
                path, fp_precision_dtype_name(p->weight), w->quantized_bytes);
    return false;
}

bool fp_precision_any(const fp_precision *p)
{
    return p->weight != FP_DT_UNDEFINED || p->kv != FP_DT_UNDEFINED || p->kv_block > 0;
}

/* Whether node n's result is a graph output, directly or through the one op reading it (a bias
 * Add, a Cast): the LM head. */
static bool feeds_output(const fp_node *n)
{
    const fp_value *y = n->n_outputs ? n->outputs[0] : NULL;
    if (!y)
        return false;
    if (y->is_output)
        return true;
    const fp_node *next = y->n_uses == 1 ? y->uses[0].node : NULL;
    return next && next->n_outputs == 1 && next->outputs[0] && next->outputs[0]->is_output;
}

/* The output channels N of weight v as the op at use u reads it (its reduction length is
 * numel / N); 0 when u is no weight input of a MatMul, Gemm or Conv, or it is the LM head. */
static uint64_t out_channels(const fp_use *u, const fp_shape *s, uint64_t numel)
{
    const fp_node *n = u->node;
    if (u->port != 1 || s->rank < 2 || feeds_output(n))
        return 0;
    switch (n->op) {
    case FP_OP_MATMUL: /* [.., K, N] */
        return (uint64_t)s->dims[s->rank - 1].value *
               (numel / ((uint64_t)s->dims[s->rank - 2].value * (uint64_t)s->dims[s->rank - 1].value));
    case FP_OP_GEMM: /* [K, N], or [N, K] with transB */
        return s->rank == 2 ? (uint64_t)s->dims[fp_node_attr_int(n, "transB", 0) ? 0 : 1].value : 0;
    case FP_OP_CONV: /* [N, K / kernel, kernel...] */
        return (uint64_t)s->dims[0].value;
    default:
        return 0;
    }
}

/* Bytes of an N x K weight quantized to q (fp8, int8, int4 with groups of g): values, scales and
 * zero points, as precision.h says. */
static uint64_t quantized_bytes(fp_dtype q, uint64_t n, uint64_t k, uint64_t g)
{
    if (q == FP_DT_FLOAT8E4M3FN)
        return n * k + 4;
    if (q == FP_DT_INT8)
        return n * k + 2 * n;
    uint64_t blocks = (k + g - 1) / g;
    return n * blocks * (g / 2) + n * blocks * 2 + n * ((blocks + 1) / 2);
}

/* The bytes weight v (numel elements, `stored` bytes) takes under p; *changed when the
 * what-if converts it. */
static uint64_t weight_bytes(const fp_value *v, uint64_t numel, uint64_t stored, const fp_precision *p, bool *changed)
{
    const fp_tensor *t = v->tensor;
    *changed = false;
    if (!fp_dtype_is_float(t->dtype) || !numel)
        return stored;
    if (p->weight == FP_DT_FLOAT || p->weight == FP_DT_FLOAT16 || p->weight == FP_DT_BFLOAT16) {
        uint64_t b = stored;
        *changed = t->dtype != p->weight && fp_dtype_bytes(p->weight, numel, &b);
        return b;
    }
    uint64_t n = 0;
    for (uint32_t i = 0; i < v->n_uses; i++) {
        uint64_t c = out_channels(&v->uses[i], &t->shape, numel);
        if (!c || (n && c != n))
            return stored; /* read as something other than one weight layout */
        n = c;
    }
    if (!n || v->is_output || numel % n)
        return stored;
    *changed = true;
    return quantized_bytes(p->weight, n, numel / n, (uint64_t)(p->group > 0 ? p->group : FP_PRECISION_DEFAULT_GROUP));
}

void fp_precision_weights(const fp_model *m, const fp_precision *p, fp_weight_plan *out, fp_storage *storage)
{
    memset(out, 0, sizeof *out);
    const fp_graph *g = m->main;
    for (guint i = 0; i < g->values->len; i++) {
        const fp_value *v = g_ptr_array_index(g->values, i);
        uint64_t numel = 0, stored = 0;
        bool weight = fp_value_is_weight(v);
        if (!weight || !v->tensor || (!v->n_uses && !v->is_output) || !fp_shape_numel(&v->tensor->shape, &numel) ||
            !fp_dtype_bytes(v->tensor->dtype, numel, &stored))
            continue;
        bool changed = false;
        uint64_t b = p->weight == FP_DT_UNDEFINED ? stored : weight_bytes(v, numel, stored, p, &changed);
        if (!fp_dtype_is_float(v->tensor->dtype) && fp_dtype_bits(v->tensor->dtype) <= 8 && v->tensor->shape.rank >= 2)
            out->quantized_bytes += stored;
        out->stored_bytes += stored;
        out->bytes += b;
        if (changed) {
            if (storage)
                fp_storage_set_bytes(storage, v, b);
            out->changed_stored += stored;
            out->changed_bytes += b;
            out->n_changed++;
        } else {
            out->kept_bytes += b;
        }
    }
}

int64_t fp_weight_plan_delta(const fp_weight_plan *w)
{
    return w->bytes >= w->stored_bytes ? (int64_t)(w->bytes - w->stored_bytes) : -(int64_t)(w->stored_bytes - w->bytes);
}

uint64_t fp_weight_plan_apply(const fp_weight_plan *w, uint64_t planned)
{
    int64_t d = fp_weight_plan_delta(w);
    return d < 0 && planned < (uint64_t)-d ? 0 : (uint64_t)((int64_t)planned + d);
}
