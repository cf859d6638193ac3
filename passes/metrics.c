/* metrics.c - per-op work: FLOPs, bytes read (activations and weights) and written, parameters.
 * Formulas and their sources: docs/metrics.md. Needs shapes (fp_pass_shapes). */
#include <math.h>
#include <string.h>

#include "passes/metrics.h"
#include "ir/par.h"

/* Bytes and elements of a value with a static shape; false when unknown. */
static bool value_size(const fp_value *v, uint64_t *bytes, uint64_t *n)
{
    if (v->type != FP_TYPE_TENSOR && v->type != FP_TYPE_UNKNOWN)
        return false;
    if (!fp_shape_numel(&v->shape, n))
        return false;
    if (!fp_dtype_bytes(v->dtype, *n, bytes))
        *bytes = 0; /* strings: no fixed size */
    return true;
}

static uint64_t numel_of(const fp_value *v)
{
    uint64_t n = 0;
    return v && fp_shape_numel(&v->shape, &n) ? n : 0;
}

static uint64_t prod_dims(const fp_shape *s, int32_t from, int32_t to)
{
    uint64_t p = 1;
    for (int32_t i = from; i < to && i < s->rank; i++)
        p *= (uint64_t)MAX(s->dims[i].value, 0);
    return p;
}

/* Multiply-accumulates of a convolution of `out` output elements: every output element sums
 * C/group x kernel products. */
static uint64_t conv_macs(const fp_node *n, uint32_t w_index, uint64_t out)
{
    const fp_value *w = n->inputs[w_index];
    if (!w || w->shape.rank < 3)
        return 0;
    uint64_t per_out = prod_dims(&w->shape, 1, w->shape.rank); /* C/group x k1 x k2 ... */
    return out * per_out;
}

/* ConvTranspose of `in` input elements: every input element scatters into (M/group) x kernel
 * outputs. */
static uint64_t conv_transpose_macs(const fp_node *n, uint64_t in)
{
    const fp_value *w = n->inputs[1];
    if (!w || w->shape.rank < 3)
        return 0;
    return in * prod_dims(&w->shape, 1, w->shape.rank);
}

/* Multiply-accumulates of a matrix product of `out` output elements. */
static uint64_t matmul_macs(const fp_node *n, uint32_t b_index, uint64_t out)
{
    const fp_value *a = n->inputs[0];
    if (!a || a->shape.rank < 1 || b_index >= n->n_inputs || !n->inputs[b_index])
        return 0;
    bool ta = fp_node_attr_int(n, "transA", 0);
    int32_t r = a->shape.rank;
    int64_t k = a->shape.dims[r == 1 ? 0 : (ta ? r - 2 : r - 1)].value;
    return out * (uint64_t)MAX(k, 0);
}

/* Einsum: product of the sizes of all distinct letters (one multiply-add per combination). */
static uint64_t einsum_macs(const fp_node *n)
{
    const char *eq = fp_node_attr_string(n, "equation", "");
    int64_t size[128];
    for (int i = 0; i < 128; i++)
        size[i] = -1;
    uint32_t in = 0;
    int32_t d = 0;
    for (const char *p = eq; *p && *p != '-'; p++) {
        if (*p == ',') {
            in++;
            d = 0;
            continue;
        }
        if (*p == '.') { /* ellipsis: skip its dims */
            const fp_value *v = in < n->n_inputs ? n->inputs[in] : NULL;
            int letters = 0;
            for (const char *q = p + 3; *q && *q != ',' && *q != '-'; q++)
                letters += g_ascii_isalpha(*q);
            if (v)
                d = v->shape.rank - letters;
            p += 2;
            continue;
        }
        if (!g_ascii_isalpha(*p) || in >= n->n_inputs || !n->inputs[in])
            continue;
        const fp_shape *s = &n->inputs[in]->shape;
        if (d < s->rank)
            size[(unsigned char)*p] = MAX(size[(unsigned char)*p], s->dims[d].value);
        d++;
    }
    uint64_t macs = 1;
    for (int i = 0; i < 128; i++)
        if (size[i] > 0)
            macs *= (uint64_t)size[i];
    return macs; /* ellipsis (broadcast batch) dims are not counted: documented approximation */
}

static uint64_t rnn_flops(const fp_node *n)
{
    const fp_value *x = n->inputs[0];
    if (!x || x->shape.rank != 3)
        return 0;
    int64_t hidden = fp_node_attr_int(n, "hidden_size", 0);
    const char *dir = fp_node_attr_string(n, "direction", "forward");
    uint64_t nd = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    uint64_t steps = (uint64_t)x->shape.dims[0].value * (uint64_t)x->shape.dims[1].value; /* seq x batch */
    uint64_t in = (uint64_t)x->shape.dims[2].value, h = (uint64_t)MAX(hidden, 0);
    uint64_t gates = n->op == FP_OP_LSTM ? 4 : n->op == FP_OP_GRU ? 3 : 1;
    /* gate matmuls (2 FLOPs per MAC) + bias adds + ~4 elementwise ops per gate output */
    return nd * steps * gates * h * (2 * (in + h) + 2 + 4);
}

/* Conv, FusedConv and ConvInteger of `out` output elements: two FLOPs per multiply-accumulate,
 * plus one per output element for the bias (when there is one) and for FusedConv's activation. */
static uint64_t conv_flops(const fp_node *n, uint64_t out)
{
    uint64_t f = 2 * conv_macs(n, 1, out);
    if (n->n_inputs > 2 && n->inputs[2])
        f += out; /* bias */
    if (n->op == FP_OP_FUSED_CONV)
        f += out; /* activation */
    return f;
}

/* a x b, saturating at UINT64_MAX (absurd dims from a broken file must not wrap). */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t p;
    return g_uint64_checked_mul(&p, a, b) ? p : UINT64_MAX;
}

/* a + b, saturating at UINT64_MAX. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    uint64_t s;
    return g_uint64_checked_add(&s, a, b) ? s : UINT64_MAX;
}

/* Dim d of value v when v is given with rank r and that dim is known; else 0. */
static uint64_t dim_of(const fp_value *v, int32_t r, int32_t d)
{
    return v && d < r && v->shape.rank == r && fp_dim_known(v->shape.dims[d]) ? (uint64_t)v->shape.dims[d].value : 0;
}

/* Input i of n, NULL when it is omitted or n has none there. */
static const fp_value *input_at(const fp_node *n, uint32_t i) { return i < n->n_inputs ? n->inputs[i] : NULL; }

/* The key tokens T a GroupQueryAttention or MultiHeadAttention attends over: axis 2 of its present
 * key (output 1); without one, the past key's tokens (input `past`) plus the new ones (`kv_len`). */
static uint64_t attn_keys(const fp_node *n, uint32_t past, uint64_t kv_len)
{
    uint64_t t = n->n_outputs > 1 ? dim_of(n->outputs[1], 4, 2) : 0;
    return t ? t : add_sat(dim_of(input_at(n, past), 4, 2), kv_len);
}

/* New key tokens of a GroupQueryAttention or MultiHeadAttention: axis 1 of a rank-3 or packed KV
 * (rank-5) key, axis 2 of a BNSH (rank-4) key; s, the query's, without a key (packed QKV). */
static uint64_t new_keys(const fp_node *n, uint64_t s)
{
    const fp_value *k = input_at(n, 1);
    if (!k)
        return s;
    return k->shape.rank == 4 ? dim_of(k, 4, 2) : dim_of(k, k->shape.rank, 1);
}

/* S T, query tokens times key tokens, of a GroupQueryAttention or MultiHeadAttention of s query
 * tokens (attn_keys). */
static uint64_t mha_query_keys(const fp_node *n, uint64_t s)
{
    return mul_sat(s, attn_keys(n, n->op == FP_OP_GROUP_QUERY_ATTENTION ? 3 : 6, new_keys(n, s)));
}

/* S T of the com.microsoft Attention op of s query tokens: T the present's tokens (output 1,
 * [2, B, heads, T, d]: past + new), s without one. */
static uint64_t attention_query_keys(const fp_node *n, uint64_t s)
{
    uint64_t t = n->n_outputs > 1 ? dim_of(n->outputs[1], 5, 3) : 0;
    return mul_sat(s, t ? t : s);
}

/* GroupQueryAttention and MultiHeadAttention from output 0 [B, S, heads x dv], per batch: scores
 * 2 S T hk, context 2 S T hv, scale and softmax 5 S T per head (hk, hv: the Q/K and V widths of
 * all heads); rotary embeddings (GQA do_rotary) 3 per element of Q and of the new K. 0 when the
 * shapes are not those. */
static uint64_t mha_flops(const fp_node *n)
{
    const fp_value *y = n->n_outputs ? n->outputs[0] : NULL, *q = input_at(n, 0);
    int64_t heads = fp_node_attr_int(n, "num_heads", 0);
    uint64_t b = dim_of(y, 3, 0), s = dim_of(y, 3, 1), hv = dim_of(y, 3, 2);
    if (!q || heads <= 0 || !b || !s || !hv)
        return 0;
    bool gqa = n->op == FP_OP_GROUP_QUERY_ATTENTION;
    bool packed_qkv = gqa ? !input_at(n, 1) : q->shape.rank == 5;
    uint64_t hk = packed_qkv ? hv : dim_of(q, 3, 2);
    uint64_t st = mha_query_keys(n, s);
    uint64_t per = add_sat(mul_sat(mul_sat(2, st), add_sat(hk, hv)), mul_sat(mul_sat(5, st), (uint64_t)heads));
    int64_t kv_heads = fp_node_attr_int(n, "kv_num_heads", 0);
    if (gqa && fp_node_attr_int(n, "do_rotary", 0) && kv_heads > 0)
        per = add_sat(per, mul_sat(mul_sat(3, s), add_sat(hk, mul_sat(hk / (uint64_t)heads, (uint64_t)kv_heads))));
    return mul_sat(b, per);
}

uint64_t fp_metrics_attention_scores(const fp_node *n)
{
    int64_t heads = fp_node_attr_int(n, "num_heads", 0);
    if (heads <= 0)
        return 0;
    if (n->op == FP_OP_ATTENTION) { /* input 0 [B, S, hidden] */
        const fp_value *x = input_at(n, 0);
        return mul_sat(mul_sat(dim_of(x, 3, 0), (uint64_t)heads), attention_query_keys(n, dim_of(x, 3, 1)));
    }
    if (n->op != FP_OP_GROUP_QUERY_ATTENTION && n->op != FP_OP_MULTI_HEAD_ATTENTION)
        return 0;
    const fp_value *y = n->n_outputs ? n->outputs[0] : NULL; /* output 0 [B, S, heads x dv] */
    return mul_sat(mul_sat(dim_of(y, 3, 0), (uint64_t)heads), mha_query_keys(n, dim_of(y, 3, 1)));
}

/* The com.microsoft Attention op over input 0 [B, S, hidden] and its packed QKV weights (input 1,
 * [hidden, hk + hk + hv]), per batch: the projection 2 S hidden (2 hk + hv) (and its bias, one per
 * column and token), scores 2 S T hk, context 2 S T hv, scale and softmax 5 S T per head; T the
 * present's tokens (output 1, [2, B, heads, T, d]: past + new), S without one. 0 when the shapes
 * are not those. */
static uint64_t attention_flops(const fp_node *n)
{
    const fp_value *x = input_at(n, 0), *w = input_at(n, 1), *y = n->n_outputs ? n->outputs[0] : NULL;
    uint64_t b = dim_of(x, 3, 0), s = dim_of(x, 3, 1), hin = dim_of(x, 3, 2), cols = dim_of(w, 2, 1);
    uint64_t hv = dim_of(y, 3, 2), heads = (uint64_t)MAX(fp_node_attr_int(n, "num_heads", 1), 1);
    if (!b || !s || !hin || !cols || !hv || hv >= cols)
        return 0;
    uint64_t hk = (cols - hv) / 2, st = attention_query_keys(n, s);
    uint64_t proj = mul_sat(mul_sat(2 * s, hin), cols), bias = input_at(n, 2) ? mul_sat(s, cols) : 0;
    uint64_t attn = add_sat(mul_sat(mul_sat(2, st), hk + hv), mul_sat(mul_sat(5, st), heads));
    return mul_sat(b, add_sat(add_sat(proj, bias), attn));
}

/* EmbedLayerNormalization of `out` output elements: the embedding adds (position, and segment
 * with segment_ids) and the layer normalization's 7 per element. */
static uint64_t embed_layer_norm_flops(const fp_node *n, uint64_t out)
{
    return mul_sat(out, 7 + 1 + (input_at(n, 1) ? 1 : 0));
}

/* RotaryEmbedding of `out` output elements: 3 per element it rotates (two products and a sum),
 * rotary_embedding_dim of every head size of them (all without it). */
static uint64_t rotary_flops(const fp_node *n, uint64_t out)
{
    const fp_value *x = input_at(n, 0);
    int64_t rot = fp_node_attr_int(n, "rotary_embedding_dim", 0), heads = fp_node_attr_int(n, "num_heads", 0);
    uint64_t head = dim_of(x, 4, 3);
    if (!head && heads > 0 && dim_of(x, 3, 2))
        head = dim_of(x, 3, 2) / (uint64_t)heads;
    if (rot <= 0 || !head || (uint64_t)rot >= head)
        return mul_sat(3, out);
    return mul_sat(3, out / head * (uint64_t)rot);
}

/* MoE and QMoE over the `in` elements of their input [..., H]: per token the router's softmax and
 * top k over the E experts (5 E), then for each of its k experts fc1 (2 H x fc1's rows), the
 * activation (one per fc1 row), fc3 when given (2 H x inter) and fc2 (2 x inter x H). QMoE's
 * weights pack H / (fc1's last dim) values a byte along their last axis. */
static uint64_t moe_flops(const fp_node *n, uint64_t in)
{
    bool q = n->op == FP_OP_QMOE;
    const fp_value *x = input_at(n, 0), *fc1 = input_at(n, 2), *fc2 = input_at(n, q ? 5 : 4);
    uint64_t h = x && x->shape.rank >= 2 ? dim_of(x, x->shape.rank, x->shape.rank - 1) : 0, cols = dim_of(fc1, 3, 2);
    uint64_t e = dim_of(fc1, 3, 0), rows = dim_of(fc1, 3, 1), k = (uint64_t)MAX(fp_node_attr_int(n, "k", 1), 1);
    if (!e || !rows || !h || !cols || h % cols)
        return 0;
    uint64_t inter = mul_sat(dim_of(fc2, 3, 2), h / cols);
    uint64_t t = in / h, fc3 = input_at(n, q ? 8 : 6) ? mul_sat(2 * h, inter) : 0;
    uint64_t expert = add_sat(add_sat(mul_sat(2 * h, rows), rows), add_sat(mul_sat(2 * inter, h), fc3));
    return add_sat(mul_sat(mul_sat(5, t), e), mul_sat(mul_sat(t, k), expert));
}

/* MatMulNBits of `out` output elements [..., N]: 2 K per output element, the dequantization of
 * the N x K weights (a subtract and a multiply each), and the bias add when there is one. */
static uint64_t matmul_nbits_flops(const fp_node *n, uint64_t out)
{
    uint64_t k = (uint64_t)MAX(fp_node_attr_int(n, "K", 0), 0), nn = (uint64_t)MAX(fp_node_attr_int(n, "N", 0), 0);
    uint64_t f = add_sat(mul_sat(mul_sat(2, out), k), mul_sat(mul_sat(2, nn), k));
    return add_sat(f, input_at(n, 5) ? out : 0);
}

/* A windowed pool of `out` output elements: one operation per window element (kernel_shape). */
static uint64_t pool_flops(const fp_node *n, uint64_t out)
{
    int64_t k[FP_MAX_RANK];
    const fp_attr *a = fp_node_attr(n, "kernel_shape");
    uint64_t kk = 1;
    for (uint32_t i = 0; a && a->type == FP_ATTR_INTS && i < a->n && i < FP_MAX_RANK; i++)
        k[i] = a->u.ints[i], kk *= (uint64_t)MAX(k[i], 1);
    return out * kk;
}

/* Resize / Upsample of `out` output elements: none for nearest; else a multiply-add per tap of
 * each output element, taps^axes taps (2 for linear, 4 for cubic; axes: the resized ones, at
 * least one). */
static uint64_t resize_flops(const fp_node *n, uint64_t out)
{
    const fp_value *y = n->n_outputs ? n->outputs[0] : NULL;
    const fp_value *x = n->n_inputs ? n->inputs[0] : NULL;
    const char *mode = fp_node_attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0)
        return 0;
    int taps = strcmp(mode, "cubic") == 0 ? 4 : 2, axes = 0;
    for (int32_t i = 0; x && y && i < x->shape.rank && i < y->shape.rank; i++)
        axes += x->shape.dims[i].value != y->shape.dims[i].value;
    return out * 2 * (uint64_t)pow(taps, MAX(axes, 1));
}

/* Ops op_flops does not name: for elementwise, unary and activation ops (casts aside) one
 * operation per output element and per extra operand of variadic ops; 0 for the others. */
static uint64_t elementwise_flops(const fp_node *n, uint64_t out)
{
    if (fp_op_has(n->op, FP_OPF_EW) || fp_op_has(n->op, FP_OPF_UNARY) || fp_op_has(n->op, FP_OPF_ACT)) {
        if (n->op == FP_OP_CAST || n->op == FP_OP_CAST_LIKE)
            return 0;
        /* one operation per output element and per extra operand of variadic ops */
        uint32_t operands = 0;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            operands += n->inputs[i] != NULL;
        return out * (uint64_t)MAX((int)operands - 1, 1);
    }
    return 0; /* data movement, shape computations, control flow */
}

/* FLOPs of the ops counted per element of input 0 (global pools, norms, softmax, reductions,
 * TopK); elementwise_flops for every other op. */
static uint64_t per_input_flops(const fp_node *n, uint64_t in, uint64_t out)
{
    switch (n->op) {
    case FP_OP_GLOBAL_AVG_POOL:
    case FP_OP_GLOBAL_MAX_POOL:
    case FP_OP_GLOBAL_LP_POOL:
        return in;
    case FP_OP_BATCH_NORM:
        return 2 * in; /* y = x * scale + shift with scale/shift precomputed */
    case FP_OP_LAYER_NORM:
    case FP_OP_INSTANCE_NORM:
    case FP_OP_GROUP_NORM:
    case FP_OP_MVN:
    case FP_OP_SKIP_LAYER_NORM:
        return 7 * in + (n->op == FP_OP_SKIP_LAYER_NORM ? 2 * in : 0);
    case FP_OP_SIMPLIFIED_LAYER_NORM:
    case FP_OP_SKIP_SIMPLIFIED_LAYER_NORM:
        return 4 * in + (n->op == FP_OP_SKIP_SIMPLIFIED_LAYER_NORM ? 2 * in : 0);
    case FP_OP_LRN:
        return in * (uint64_t)(fp_node_attr_int(n, "size", 1) + 3);
    case FP_OP_LP_NORM:
        return 3 * in;
    case FP_OP_SOFTMAX:
    case FP_OP_LOG_SOFTMAX:
        return 5 * in; /* max, subtract, exp, sum, divide */
    case FP_OP_REDUCE_L2:
    case FP_OP_REDUCE_SUM_SQUARE:
        return 2 * in;
    case FP_OP_REDUCE_LOG_SUM_EXP:
        return 3 * in;
    case FP_OP_REDUCE_L1:
    case FP_OP_REDUCE_LOG_SUM:
    case FP_OP_REDUCE_MAX:
    case FP_OP_REDUCE_MEAN:
    case FP_OP_REDUCE_MIN:
    case FP_OP_REDUCE_PROD:
    case FP_OP_REDUCE_SUM:
    case FP_OP_ARG_MAX:
    case FP_OP_ARG_MIN:
    case FP_OP_HARDMAX:
    case FP_OP_CUM_SUM:
        return in;
    case FP_OP_TOP_K:
        return in * (uint64_t)MAX(1.0, ceil(log2((double)MAX(out, 2))));
    default:
        return elementwise_flops(n, out);
    }
}

/* FLOPs per element of the output for elementwise-like ops; per element of input 0 for others.
 * in, out: the elements of input 0 and output 0 (0 when absent or not static), as the caller
 * has them already. */
static uint64_t op_flops(const fp_node *n, uint64_t in, uint64_t out)
{
    switch (n->op) {
    case FP_OP_CONV:
    case FP_OP_FUSED_CONV:
    case FP_OP_CONV_INTEGER:
        return conv_flops(n, out);
    case FP_OP_QLINEAR_CONV:
        return 2 * conv_macs(n, 3, out) + out;
    case FP_OP_CONV_TRANSPOSE:
        return 2 * conv_transpose_macs(n, in) + (n->n_inputs > 2 && n->inputs[2] ? out : 0);
    case FP_OP_GEMM:
    case FP_OP_FUSED_GEMM:
        return 2 * matmul_macs(n, 1, out) + (n->n_inputs > 2 && n->inputs[2] ? out : 0) +
               (n->op == FP_OP_FUSED_GEMM ? out : 0);
    case FP_OP_MATMUL:
    case FP_OP_MATMUL_INTEGER:
    case FP_OP_FUSED_MATMUL:
        return 2 * matmul_macs(n, 1, out);
    case FP_OP_QLINEAR_MATMUL:
        return 2 * matmul_macs(n, 3, out);
    case FP_OP_MATMUL_INTEGER_TO_FLOAT: /* the products, then a scale (and a bias, input 6) per output */
        return 2 * matmul_macs(n, 1, out) + out + (input_at(n, 6) ? out : 0);
    case FP_OP_MATMUL_NBITS:
        return matmul_nbits_flops(n, out);
    case FP_OP_GATHER_BLOCK_QUANTIZED: /* dequantization: a subtract and a multiply per output */
        return 2 * out;
    case FP_OP_EMBED_LAYER_NORM:
        return embed_layer_norm_flops(n, out);
    case FP_OP_ROTARY_EMBEDDING:
        return rotary_flops(n, out);
    case FP_OP_MOE:
    case FP_OP_QMOE:
        return moe_flops(n, in);
    case FP_OP_EINSUM:
        return 2 * einsum_macs(n);
    case FP_OP_ATTENTION:
        return attention_flops(n);
    case FP_OP_GROUP_QUERY_ATTENTION:
    case FP_OP_MULTI_HEAD_ATTENTION:
        return mha_flops(n);
    case FP_OP_LSTM:
    case FP_OP_GRU:
    case FP_OP_RNN:
        return rnn_flops(n);
    case FP_OP_AVERAGE_POOL:
    case FP_OP_MAX_POOL:
    case FP_OP_LP_POOL:
        return pool_flops(n, out);
    case FP_OP_RESIZE:
    case FP_OP_UPSAMPLE:
        return resize_flops(n, out);
    case FP_OP_BIAS_GELU:
    case FP_OP_FAST_GELU:
    case FP_OP_GELU:
    case FP_OP_QUICK_GELU:
        return 8 * out;
    default:
        return per_input_flops(n, in, out);
    }
}

/* A Gather from a weight (an embedding table) reads the rows it gathers, not the table: its
 * weight traffic is the output's bytes (its parameters stay the table's). */
static void gather_rows(const fp_node *n, fp_metrics *mt)
{
    const fp_value *data = n->n_inputs ? n->inputs[0] : NULL;
    uint64_t table, rows, e;
    if (n->op != FP_OP_GATHER || !data || !fp_value_is_fixed(data) || !n->n_outputs || !n->outputs[0] ||
        !value_size(data, &table, &e) || !value_size(n->outputs[0], &rows, &e) || rows >= table)
        return;
    mt->bytes_weight -= table - rows;
}

/* The rows a contrib op reads of the tables it looks up, and its first and last table inputs:
 * EmbedLayerNormalization's embeddings (inputs 2 to 4) a row per token of input_ids, RotaryEmbedding's
 * cos and sin caches (inputs 2, 3; ONNX's 1, 2) a row per token of its input, GatherBlockQuantized's data,
 * scales and zero points (inputs 0, 2, 3; gathered on axis 0) a row per index, MoE's expert
 * weights and biases (inputs 2 to 7, an expert a row; QMoE's with their scales and zero points,
 * 2 to 13) k experts per token. 0: none. */
static uint64_t lookups(const fp_node *n, uint32_t *first, uint32_t *last)
{
    const fp_value *x = input_at(n, 0);
    *first = 2;
    *last = n->op == FP_OP_EMBED_LAYER_NORM ? 4 : 3;
    switch (n->op) {
    case FP_OP_EMBED_LAYER_NORM:
        return numel_of(x);
    case FP_OP_ROTARY_EMBEDDING: /* com.microsoft's caches at 2, 3; ONNX's at 1, 2 */
        *first = strcmp(n->domain, "com.microsoft") == 0 ? 2 : 1;
        *last = *first + 1;
        return x && x->shape.rank == 4 ? dim_of(x, 4, 0) * dim_of(x, 4, 2) : dim_of(x, 3, 0) * dim_of(x, 3, 1);
    case FP_OP_GATHER_BLOCK_QUANTIZED:
        *first = 0;
        return fp_node_attr_int(n, "gather_axis", 0) == 0 ? numel_of(input_at(n, 1)) : 0;
    case FP_OP_MOE:
    case FP_OP_QMOE: {
        uint64_t h = x && x->shape.rank >= 2 ? dim_of(x, x->shape.rank, x->shape.rank - 1) : 0;
        *last = n->op == FP_OP_QMOE ? 13 : 7;
        return h ? numel_of(x) / h * (uint64_t)MAX(fp_node_attr_int(n, "k", 1), 1) : 0;
    }
    default:
        return 0;
    }
}

/* A table a contrib op looks up by row (lookups) costs the rows it reads, not the table: its
 * weight traffic is its bytes x rows read / rows (its parameters stay the table's). MatMulNBits
 * holds N x K parameters in its packed B. */
static void contrib_traffic(const fp_node *n, fp_metrics *mt)
{
    const fp_value *b = input_at(n, 1);
    if (n->op == FP_OP_MATMUL_NBITS && b && fp_value_is_fixed(b)) {
        uint64_t k = (uint64_t)MAX(fp_node_attr_int(n, "K", 0), 0), nn = (uint64_t)MAX(fp_node_attr_int(n, "N", 0), 0);
        mt->params = mt->params - numel_of(b) + k * nn;
    }
    uint32_t first, last;
    uint64_t looked = lookups(n, &first, &last), bytes, e;
    for (uint32_t i = first; looked && i <= last; i++) {
        const fp_value *t = input_at(n, i);
        bool indices = n->op == FP_OP_GATHER_BLOCK_QUANTIZED && i == 1;
        if (indices || !t || !fp_value_is_fixed(t) || t->shape.rank < 1 || !value_size(t, &bytes, &e))
            continue;
        uint64_t rows = dim_of(t, t->shape.rank, 0);
        if (rows && looked < rows)
            mt->bytes_weight -= bytes - bytes / rows * looked;
    }
}

uint64_t fp_metrics_op_flops(const fp_node *n)
{
    return op_flops(n, n->n_inputs ? numel_of(n->inputs[0]) : 0, n->n_outputs ? numel_of(n->outputs[0]) : 0);
}

/* Computes n->metrics; returns false when shapes are missing. */
static bool node_metrics(fp_node *n)
{
    fp_metrics *mt = &n->metrics;
    uint64_t flops_kept = mt->flops;
    memset(mt, 0, sizeof *mt);
    n->metrics_known = false;
    if ((n->flags & (FP_NODE_FOLDED | FP_NODE_REMOVED)) || fp_op_has(n->op, FP_OPF_CTRL)) {
        n->metrics_known = true; /* not a runtime op (or costed through its subgraphs) */
        return true;
    }
    bool view = fp_op_has(n->op, FP_OPF_VIEW);
    uint64_t in0 = 0, out0 = 0; /* elements of input 0 and output 0, for op_flops */
    bool have_out0 = false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const fp_value *v = n->inputs[i];
        uint64_t b, e;
        if (!v)
            continue;
        if (!value_size(v, &b, &e))
            return false;
        if (i == 0)
            in0 = e;
        if (fp_value_is_fixed(v)) {
            mt->bytes_weight += b;
            mt->params += e;
        } else if (!view) {
            mt->bytes_act += b;
        }
    }
    for (uint32_t i = 0; i < n->n_outputs && !view; i++) {
        uint64_t b, e;
        if (!n->outputs[i])
            continue;
        if (!value_size(n->outputs[i], &b, &e))
            return false;
        if (i == 0)
            out0 = e, have_out0 = true;
        mt->bytes_out += b;
    }
    if (view) /* an alias: no data moves (Reshape, Flatten, Squeeze, Unsqueeze, Identity) */
        mt->bytes_weight = mt->params = 0;
    gather_rows(n, mt);
    contrib_traffic(n, mt);
    if (n->flags & FP_NODE_FUSED)
        mt->flops = flops_kept; /* a fused kernel does its members' arithmetic */
    else
        mt->flops = op_flops(n, in0, have_out0 ? out0 : numel_of(n->n_outputs ? n->outputs[0] : NULL));
    n->metrics_known = true;
    return true;
}

/* fp_par_halves' work for one graph: each half's nodes get their metrics, the indexes of those
 * whose metrics are unknown go to failed[h] in node order. */
typedef struct {
    const fp_graph *g;
    GArray *failed[2];
} metrics_job;

static void metrics_half(void *arg, int h, size_t from, size_t to)
{
    metrics_job *j = arg;
    for (size_t i = from; i < to; i++) {
        fp_nodes_prefetch((fp_node *const *)j->g->nodes->pdata, to, i);
        if (!node_metrics(j->g->nodes->pdata[i])) {
            guint k = (guint)i;
            g_array_append_val(j->failed[h], k);
        }
    }
}

/* Each node's metrics depend on that node alone: a big graph's two halves are filled at once
 * (ir/par.h), the findings then added in node order. */
bool fp_pass_metrics(fp_model *m, fp_diag *diag)
{
    bool all = true;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = m->graphs->pdata[gi];
        metrics_job j = {g, {g_array_new(FALSE, FALSE, sizeof(guint)), g_array_new(FALSE, FALSE, sizeof(guint))}};
        fp_par_halves(g->nodes->len, g->nodes->len, metrics_half, &j);
        for (int h = 0; h < 2; h++) {
            for (guint k = 0; k < j.failed[h]->len; k++) {
                const fp_node *nd = g->nodes->pdata[g_array_index(j.failed[h], guint, k)];
                all = false;
                fp_diag_add(diag, FP_DIAG_INFO, "metrics", "metrics-unknown", nd->name,
                            "%s '%s': FLOPs and bytes unknown (an input or output shape is not static)", nd->op_type,
                            nd->name);
            }
            g_array_free(j.failed[h], TRUE);
        }
    }
    return all;
}

double fp_metrics_intensity(const fp_metrics *mt)
{
    uint64_t bytes = mt->bytes_act + mt->bytes_weight + mt->bytes_out;
    return bytes ? (double)mt->flops / (double)bytes : 0.0;
}
