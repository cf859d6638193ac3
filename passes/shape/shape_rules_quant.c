/* shape_rules_quant.c - shape rules of ONNX Runtime's quantized contrib ops (com.microsoft):
 * MatMulNBits (weights block-quantized to 2, 4 or 8 bits and packed into uint8), MatMulIntegerToFloat
 * and GatherBlockQuantized (a block-quantized embedding table). Shapes, defaults and attribute
 * limits follow the op schemas in docs/ContribOperators.md of https://github.com/microsoft/onnxruntime
 * (docs/shape-coverage.md, "ONNX Runtime contrib ops"); a bad attribute or a packed tensor of the
 * wrong shape is an error naming the node. */
#include "shape_rules.h"

/* Whether dtype t is one of the 8- and 4-bit floats GatherBlockQuantized takes as data. */
static bool small_float(fp_dtype t)
{
    return t == FP_DT_FLOAT8E4M3FN || t == FP_DT_FLOAT8E4M3FNUZ || t == FP_DT_FLOAT8E5M2 || t == FP_DT_FLOAT8E5M2FNUZ ||
           t == FP_DT_FLOAT4E2M1;
}

/* "d0xd1x..." of the n dims in want (caller frees). */
static char *dims_string(const int64_t *want, int n)
{
    GString *s = g_string_new(NULL);
    for (int k = 0; k < n; k++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? "x" : "", want[k]);
    return g_string_free(s, FALSE);
}

/* Input i (`what`), when its rank is known, must have the n dims in want where they are known;
 * with flat_ok the 1-D flattening [d0 x d1 x ...] passes too. */
static sh_result expect_dims(sh_ctx *c, uint32_t i, const char *what, const int64_t *want, int n, bool flat_ok)
{
    const fp_shape *s = sh_in(c, i);
    if (!s)
        return SH_OK;
    bool same = s->rank == n;
    int64_t numel = 1;
    for (int k = 0; k < n; k++) {
        numel *= want[k];
        same = same && (!fp_dim_known(s->dims[k]) || s->dims[k].value == want[k]);
    }
    if (same || (flat_ok && s->rank == 1 && (!fp_dim_known(s->dims[0]) || s->dims[0].value == numel)))
        return SH_OK;
    g_autofree char *got = fp_shape_to_string(s), *exp = dims_string(want, n);
    return sh_fail(c, "%s shape %s, expected %s%s", what, got, exp, flat_ok ? " (or flattened)" : "");
}

/* ---------------------------------------------------------------- MatMulNBits */

/* The inputs of a MatMulNBits after A: B [N, k_blocks, block_size x bits / 8] uint8, scales
 * [N, k_blocks], zero_points [N, ceil(k_blocks x bits / 8)] packed uint8 or [N, k_blocks] of A's
 * float type, g_idx [K], bias [N] (scales and zero points may also come flattened). */
static sh_result nbits_inputs(sh_ctx *c, int64_t k, int64_t n, int64_t bits, int64_t block)
{
    if (!sh_val(c, 1) || !sh_val(c, 2))
        return sh_fail(c, "B and scales (inputs 1, 2) are required");
    if (sh_dt(c, 1) != FP_DT_UINT8 && sh_dt(c, 1) != FP_DT_UNDEFINED)
        return sh_fail(c, "B is %s, expected uint8 (packed weights)", fp_dtype_name(sh_dt(c, 1)));
    int64_t blocks = (k + block - 1) / block;
    sh_result r = expect_dims(c, 1, "B", (int64_t[]){n, blocks, block * bits / 8}, 3, false);
    if (r == SH_OK)
        r = expect_dims(c, 2, "scales", (int64_t[]){n, blocks}, 2, true);
    if (r == SH_OK && sh_val(c, 3)) {
        int64_t cols = sh_dt(c, 3) == FP_DT_UINT8 ? (blocks * bits + 7) / 8 : blocks;
        r = expect_dims(c, 3, "zero_points", (int64_t[]){n, cols}, 2, true);
    }
    if (r == SH_OK && sh_val(c, 4))
        r = expect_dims(c, 4, "g_idx", (int64_t[]){k}, 1, false);
    if (r == SH_OK && sh_val(c, 5))
        r = expect_dims(c, 5, "bias", (int64_t[]){n}, 1, false);
    return r;
}

/* MatMulNBits(A [..., K], B, scales, ...): Y [..., N] of A's dtype, K and N the attributes. */
sh_result sh_rule_matmul_nbits(sh_ctx *c)
{
    int64_t k, n, bits, block;
    sh_result r = sh_attr_int_in(c, "K", true, 0, 1, G_MAXINT32, "a positive size", &k);
    if (r == SH_OK)
        r = sh_attr_int_in(c, "N", true, 0, 1, G_MAXINT32, "a positive size", &n);
    if (r == SH_OK)
        r = sh_block_attrs(c, "bits", -1, false, false, &bits, &block);
    if (r == SH_OK)
        r = nbits_inputs(c, k, n, bits, block);
    if (r != SH_OK)
        return r;
    const fp_shape *a = sh_in(c, 0);
    if (!a)
        return sh_unknown(c, "A has unknown rank");
    if (a->rank < 1)
        return sh_fail(c, "A is a scalar");
    fp_dim ka = a->dims[a->rank - 1];
    if (fp_dim_known(ka) && ka.value != k)
        return sh_fail(c, "A has %" G_GINT64_FORMAT " features (last axis), expected K = %" G_GINT64_FORMAT, ka.value,
                       k);
    fp_shape y = sh_copy(c, a);
    y.dims[a->rank - 1] = sh_dim(n);
    sh_set(c, 0, sh_dt(c, 0), y);
    return SH_OK;
}

/* ---------------------------------------------------------------- MatMulIntegerToFloat */

/* MatMulIntegerToFloat(A, B, a_scale, b_scale, ...): MatMul's shape of the 8-bit A and B, of
 * a_scale's float type; b_scale (and b_zero_point) a scalar or one per column of B. */
sh_result sh_rule_matmul_integer_to_float(sh_ctx *c)
{
    if (!sh_val(c, 2) || !sh_val(c, 3))
        return sh_fail(c, "a_scale and b_scale (inputs 2, 3) are required");
    sh_result r = sh_rule_matmul(c);
    if (r != SH_OK)
        return r;
    const fp_shape *b = sh_in(c, 1);
    fp_dim cols = b->rank >= 2 ? b->dims[b->rank - 1] : sh_dim(1);
    for (uint32_t i = 3; i <= 5 && fp_dim_known(cols); i += 2) {
        const fp_shape *s = sh_val(c, i) ? sh_in(c, i) : NULL;
        uint64_t numel = 0;
        if (s && fp_shape_numel(s, &numel) && s->rank <= 1 && numel != 1 && numel != (uint64_t)cols.value)
            return sh_fail(c, "%s has %" G_GUINT64_FORMAT " elements, expected 1 or B's %" G_GINT64_FORMAT " columns",
                           i == 3 ? "b_scale" : "b_zero_point", numel, cols.value);
    }
    sh_out_dtype(c, 0, sh_dt(c, 2));
    return SH_OK;
}

/* ---------------------------------------------------------------- GatherBlockQuantized */

/* scales of a GatherBlockQuantized over the unpacked data dims d (rank r): rank r, ceil(d / block)
 * on quantize axis qa (1 with block 0), d elsewhere (or 1 with float data). */
static sh_result gbq_scales(sh_ctx *c, const fp_dim *d, int32_t r, int32_t qa, int64_t block, bool fp)
{
    const fp_shape *s = sh_in(c, 2);
    if (!s)
        return SH_OK;
    if (s->rank != r)
        return sh_fail(c, "scales rank %d, expected %d (data's)", s->rank, r);
    for (int32_t i = 0; i < r; i++) {
        if (!fp_dim_known(d[i]) || !fp_dim_known(s->dims[i]))
            continue;
        int64_t want = i != qa ? d[i].value : block ? (d[i].value + block - 1) / block : 1;
        if (s->dims[i].value != want && !(fp && i != qa && s->dims[i].value == 1))
            return sh_fail(c, "scales has %" G_GINT64_FORMAT " on axis %d, expected %" G_GINT64_FORMAT "%s",
                           s->dims[i].value, i, want, i == qa ? " (blocks of block_size on quantize_axis)" : "");
    }
    return SH_OK;
}

/* GatherBlockQuantized(data, indices, scales, [zero_points]): Gather's shape over data unpacked
 * (uint8 data of `bits` < 8 holds 8 / bits values a byte along its last axis), of scales' dtype. */
sh_result sh_rule_gather_block_quantized(sh_ctx *c)
{
    fp_dtype dt = sh_dt(c, 0);
    bool fp = small_float(dt);
    int64_t bits, block;
    sh_result r = sh_block_attrs(c, "bits", 128, fp, fp, &bits, &block);
    if (r == SH_OK && !sh_val(c, 2))
        return sh_fail(c, "scales (input 2) is required");
    if (r == SH_OK && fp && sh_val(c, 3))
        return sh_fail(c, "zero_points must be omitted with %s data", fp_dtype_name(dt));
    const fp_shape *x = sh_in(c, 0), *idx = sh_in(c, 1);
    if (r != SH_OK || !x || !idx)
        return r != SH_OK ? r : sh_unknown(c, "data or indices of unknown rank");
    int32_t g, q;
    if (!sh_axis(fp_node_attr_int(c->n, "gather_axis", 0), x->rank, &g))
        return sh_fail(c, "gather_axis out of range for rank %d", x->rank);
    if (!sh_axis(fp_node_attr_int(c->n, "quantize_axis", 1), x->rank, &q))
        return sh_fail(c, "quantize_axis out of range for rank %d", x->rank);
    if (dt == FP_DT_UINT8 && g != 0)
        return sh_fail(c, "uint8 data is gathered on axis 0 only (gather_axis %d)", g);
    fp_shape data = sh_copy(c, x);
    if (dt == FP_DT_UINT8 && bits < 8)
        data.dims[x->rank - 1] = sh_dim_mul(data.dims[x->rank - 1], sh_dim(8 / bits));
    r = gbq_scales(c, data.dims, x->rank, q, block, fp);
    fp_shape out;
    if (r != SH_OK || !sh_gather_dims(c, &data, idx, g, &out))
        return r != SH_OK ? r : SH_ERROR;
    sh_set(c, 0, sh_dt(c, 2), out);
    return SH_OK;
}
