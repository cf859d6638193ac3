/* shape_rules_attn.c - shape rules of the com.microsoft attention ops: Attention (and the fusion
 * pass's form of it), GroupQueryAttention, MultiHeadAttention, and the RotaryEmbedding that
 * rotates their queries and keys. Shapes follow ONNX Runtime's
 * contrib op schemas and their type-and-shape inference (onnxruntime/core/graph/contrib_ops/
 * bert_defs.cc, docs/ContribOperators.md); where ORT's inference leaves a length to run time,
 * what this pass knows is used instead (docs/shape-coverage.md, "ONNX Runtime contrib ops"). */
#include <string.h>

#include "shape_rules.h"

/* What the rules know of one attention node: heads from the attributes, dims from the inputs. */
typedef struct {
    int64_t heads, kv_heads; /* num_heads; kv_num_heads (MultiHeadAttention: num_heads) */
    const fp_shape *q;       /* query, rank known */
    const fp_shape *past;    /* past key, NULL when omitted or of unknown rank */
    bool has_past;           /* a past key is given (its rank may be unknown) */
    fp_dim batch, seq;       /* B and S of the query */
    fp_dim kv_len;           /* new key and value tokens */
    fp_dim head, v_head;     /* head size of Q and K, of V */
    fp_dim past_len;         /* axis 2 of the past key */
    fp_dim out_hidden;       /* axis 2 of output 0 when an input gives it as is (else heads x v_head) */
} attn;

/* An attn with every dim unknown. */
static attn attn_new(void)
{
    fp_dim u = sh_dim_unknown();
    return (attn){.batch = u, .seq = u, .kv_len = u, .head = u, .v_head = u, .past_len = u, .out_hidden = u};
}

/* Heads attribute `name` into *out: SH_ERROR naming the attribute when it is missing, not an INT,
 * or outside [1, 2^31 - 1]; SH_UNKNOWN when it refers to a function's attribute. */
static sh_result heads_attr(sh_ctx *c, const char *name, int64_t *out)
{
    return sh_attr_int_in(c, name, true, 0, 1, G_MAXINT32, "a positive head count", out);
}

/* head = hidden / parts when hidden is known (SH_ERROR naming `what` and the divisor `by` when it
 * does not divide); else unknown. */
static sh_result split_hidden(sh_ctx *c, fp_dim hidden, int64_t parts, const char *what, const char *by, fp_dim *head)
{
    *head = sh_dim_unknown();
    if (!fp_dim_known(hidden))
        return SH_OK;
    if (hidden.value % parts)
        return sh_fail(c, "%s hidden size %" G_GINT64_FORMAT " is not a multiple of %s (%" G_GINT64_FORMAT ")", what,
                       hidden.value, by, parts);
    *head = sh_dim(hidden.value / parts);
    return SH_OK;
}

/* The past key and value at inputs k and k + 1: both given or both omitted, rank 4 (BNSH) with
 * kv_heads heads and the head size found so far (filled from them when unknown). */
static sh_result attn_past(sh_ctx *c, attn *a, uint32_t k)
{
    fp_value *pk = sh_val(c, k), *pv = sh_val(c, k + 1);
    if (!pk != !pv)
        return sh_fail(c, "past_key and past_value (inputs %u, %u) must both be given or both omitted", k, k + 1);
    a->has_past = pk != NULL;
    a->past_len = sh_dim_unknown();
    const fp_shape *ps[2] = {sh_in(c, k), sh_in(c, k + 1)};
    for (int i = 0; i < 2; i++) {
        const char *what = i ? "past_value" : "past_key";
        if (!ps[i])
            continue;
        if (ps[i]->rank != 4)
            return sh_fail(c, "%s rank %d, expected 4 (batch, kv heads, past tokens, head size)", what, ps[i]->rank);
        fp_dim *head = i ? &a->v_head : &a->head;
        sh_result r = sh_expect_dim(c, what, ps[i], 1, sh_dim(a->kv_heads), "heads");
        if (r == SH_OK)
            r = sh_expect_dim(c, what, ps[i], 3, *head, "head size");
        if (r != SH_OK)
            return r;
        if (!fp_dim_known(*head))
            *head = ps[i]->dims[3];
    }
    a->past = ps[0];
    if (a->past) {
        a->past_len = a->past->dims[2];
        if (!fp_dim_known(a->batch) && fp_dim_known(a->past->dims[0]))
            a->batch = a->past->dims[0];
    }
    return SH_OK;
}

/* The scalar at input i as the pass knows it: a positive number, or the symbol of the dim a Shape
 * op read it from; else an unknown dim. */
static fp_dim scalar_dim(sh_ctx *c, uint32_t i)
{
    fp_value *v = sh_val(c, i);
    int64_t x;
    int n = 0;
    if (v && sh_ints(c, i, &x, 1, &n) && n == 1)
        return x > 0 ? sh_dim(x) : sh_dim_unknown();
    if (v && v->n_sval == 1 && v->sval[0].sym && v->sval[0].sym != fp_sval_unknown)
        return v->sval[0];
    return sh_dim_unknown();
}

/* Outputs 1 and 2 (present key, value: [B, kv heads, len, head]) and 3 (QK: [B, heads, S, len]);
 * the present dtype is the past's, or the query's without a past. SH_UNKNOWN with the reason when
 * a dim stays unknown. */
static sh_result attn_outputs(sh_ctx *c, const attn *a, fp_dim len)
{
    fp_dtype dt = a->has_past ? sh_dt(c, c->n->op == FP_OP_GROUP_QUERY_ATTENTION ? 3 : 6) : sh_dt(c, 0);
    for (uint32_t k = 1; k <= 2; k++) {
        fp_shape p = sh_new(c, 4);
        p.dims[0] = a->batch;
        p.dims[1] = sh_dim(a->kv_heads);
        p.dims[2] = len;
        p.dims[3] = k == 1 ? a->head : a->v_head;
        sh_set(c, k, dt, p);
    }
    fp_shape qk = sh_new(c, 4);
    qk.dims[0] = a->batch;
    qk.dims[1] = sh_dim(a->heads);
    qk.dims[2] = a->seq;
    qk.dims[3] = len;
    sh_set(c, 3, sh_dt(c, 0), qk);
    if (c->n->n_outputs > 1 && !fp_dim_known(len) && !len.sym)
        return sh_unknown(c, "present sequence length unknown");
    if (!fp_dim_known(a->head) || !fp_dim_known(a->v_head))
        return sh_unknown(c, "head size unknown (query hidden size and past head size unknown)");
    return SH_OK;
}

/* Output 0, [B, S, heads x v_head] (the query's own shape when that is what it comes to). */
static void attn_output0(sh_ctx *c, const attn *a)
{
    fp_shape out = sh_new(c, 3);
    out.dims[0] = a->batch;
    out.dims[1] = a->seq;
    bool given = fp_dim_known(a->out_hidden) || a->out_hidden.sym;
    out.dims[2] = given ? a->out_hidden : sh_dim_mul(sh_dim(a->heads), a->v_head);
    sh_set(c, 0, sh_dt(c, 0), out);
}

/* ---------------------------------------------------------------- Attention */

/* The Q (and K) and V widths of com.microsoft Attention into *qk, *v: qkv_hidden_sizes (three
 * positive sizes, Q's equal to K's, summing to the weights' columns when known), else a third of
 * the columns each; unknown when neither tells. */
static sh_result attention_widths(sh_ctx *c, fp_dim cols, fp_dim *qk, fp_dim *v)
{
    int64_t sz[4];
    int n = 0;
    *qk = *v = sh_dim_unknown();
    if (sh_attr_ints(c->n, "qkv_hidden_sizes", sz, 4, &n)) {
        if (n != 3 || sz[0] <= 0 || sz[1] != sz[0] || sz[2] <= 0)
            return sh_fail(c, "qkv_hidden_sizes must be 3 positive sizes, Q's equal to K's");
        if (fp_dim_known(cols) && cols.value != sz[0] + sz[1] + sz[2])
            return sh_fail(c, "weights have %" G_GINT64_FORMAT " columns, qkv_hidden_sizes sum to %" G_GINT64_FORMAT,
                           cols.value, sz[0] + sz[1] + sz[2]);
        *qk = sh_dim(sz[0]);
        *v = sh_dim(sz[2]);
        return SH_OK;
    }
    if (!fp_dim_known(cols))
        return SH_OK;
    if (cols.value % 3)
        return sh_fail(c, "weights have %" G_GINT64_FORMAT " columns: not three equal Q, K, V widths", cols.value);
    *qk = *v = sh_dim(cols.value / 3);
    return SH_OK;
}

/* The packed past of com.microsoft Attention (input 4): rank 5, [2, B, heads, P, head size]. */
static sh_result attention_past(sh_ctx *c, const attn *a, const fp_shape *past)
{
    if (past->rank != 5)
        return sh_fail(c, "past rank %d, expected 5 (2, batch, heads, past tokens, head size)", past->rank);
    sh_result r = sh_expect_dim(c, "past", past, 0, sh_dim(2), "axis 0 (K and V)");
    if (r == SH_OK)
        r = sh_expect_dim(c, "past", past, 1, a->batch, "batch");
    if (r == SH_OK)
        r = sh_expect_dim(c, "past", past, 2, sh_dim(a->heads), "heads");
    return r == SH_OK ? sh_expect_dim(c, "past", past, 4, a->head, "head size") : r;
}

/* Output 1 of com.microsoft Attention, present [2, B, heads, T, head size] with the past's dtype
 * (the input's without one): T = P + S, the past's P when past_present_share_buffer is set, S
 * without a past. SH_UNKNOWN when T or the head size stays unknown. */
static sh_result attention_present(sh_ctx *c, attn *a)
{
    const fp_shape *past = sh_in(c, 4);
    bool has_past = sh_val(c, 4) != NULL;
    if (past) {
        sh_result r = attention_past(c, a, past);
        if (r != SH_OK)
            return r;
        if (!fp_dim_known(a->head))
            a->head = past->dims[4];
    }
    if (!sh_out(c, 1))
        return SH_OK;
    bool shared = fp_node_attr_int(c->n, "past_present_share_buffer", 0) != 0;
    fp_dim len = !has_past ? a->seq
                 : !past   ? sh_dim_unknown()
                 : shared  ? past->dims[3]
                           : sh_dim_add(past->dims[3], a->seq);
    fp_shape p = sh_new(c, 5);
    p.dims[0] = sh_dim(2);
    p.dims[1] = a->batch;
    p.dims[2] = sh_dim(a->heads);
    p.dims[3] = len;
    p.dims[4] = a->head;
    sh_set(c, 1, has_past ? sh_dt(c, 4) : sh_dt(c, 0), p);
    if (!fp_dim_known(len) && !len.sym)
        return sh_unknown(c, "present sequence length unknown");
    return fp_dim_known(a->head) ? SH_OK : sh_unknown(c, "head size unknown");
}

/* com.microsoft Attention(input [B, S, hidden], weights [hidden, Q + K + V widths], bias, mask,
 * past, ...): output 0 [B, S, V width], output 1 the present. */
static sh_result ms_attention(sh_ctx *c, const fp_shape *x, const fp_shape *w)
{
    attn a = attn_new();
    fp_dim qk, v;
    sh_result r = heads_attr(c, "num_heads", &a.heads);
    if (r == SH_OK)
        r = sh_expect_dim(c, "weights", w, 0, x->dims[2], "rows (input hidden size)");
    if (r == SH_OK)
        r = attention_widths(c, w->dims[1], &qk, &v);
    if (r == SH_OK)
        r = split_hidden(c, qk, a.heads, "Q", "num_heads", &a.head);
    if (r == SH_OK)
        r = split_hidden(c, v, a.heads, "V", "num_heads", &a.v_head);
    if (r != SH_OK)
        return r;
    a.batch = x->dims[0];
    a.seq = a.kv_len = x->dims[1];
    a.out_hidden = v;
    attn_output0(c, &a);
    return attention_present(c, &a);
}

sh_result sh_rule_attention(sh_ctx *c)
{
    const fp_shape *x = sh_in(c, 0), *w = sh_in(c, 1);
    bool fused = (c->n->flags & FP_NODE_FUSED) != 0;
    if (!fused && x && w && x->rank == 3 && w->rank == 2) /* com.microsoft Attention(input, weights, ...) */
        return ms_attention(c, x, w);
    /* the fusion pass's form (q, k, scale, [mask,] v): the context has q's shape with v's last dim */
    const fp_value *vv = c->n->n_inputs > 2 ? sh_val(c, c->n->n_inputs - 1) : NULL;
    const fp_shape *v = vv ? sh_in(c, c->n->n_inputs - 1) : NULL;
    if (!x || !v || x->rank < 2 || v->rank < 1)
        return sh_unknown(c, "input or weights of unknown rank");
    fp_shape out = sh_copy(c, x);
    out.dims[x->rank - 1] = v->dims[v->rank - 1];
    sh_set(c, 0, sh_dt(c, 0), out);
    return SH_OK;
}

/* ---------------------------------------------------------------- GroupQueryAttention */

/* Query, key and value of a GroupQueryAttention: query [B, S, heads x d] with key and value
 * [B, S, kv_heads x d], or packed QKV [B, S, (heads + 2 kv_heads) x d] with both omitted. */
static sh_result gqa_qkv(sh_ctx *c, attn *a)
{
    fp_value *k = sh_val(c, 1), *v = sh_val(c, 2);
    if (!k != !v)
        return sh_fail(c, "key and value (inputs 1, 2) must both be given, or both omitted for a packed QKV query");
    a->batch = a->q->dims[0];
    a->seq = a->kv_len = a->q->dims[1];
    int64_t parts = k ? a->heads : a->heads + 2 * a->kv_heads;
    sh_result r = split_hidden(c, a->q->dims[2], parts, k ? "query" : "packed QKV query",
                               k ? "num_heads" : "num_heads + 2 x kv_num_heads", &a->head);
    a->v_head = a->head;
    if (k)
        a->out_hidden = a->q->dims[2];
    const fp_shape *kv[2] = {sh_in(c, 1), sh_in(c, 2)};
    fp_dim kv_hidden = sh_dim_mul(sh_dim(a->kv_heads), a->head);
    for (int i = 0; i < 2 && r == SH_OK; i++) {
        const char *what = i ? "value" : "key";
        if (kv[i] && kv[i]->rank != 3)
            return sh_fail(c, "%s rank %d, expected 3 (batch, tokens, kv_num_heads x head size)", what, kv[i]->rank);
        r = sh_expect_dim(c, what, kv[i], 2, kv_hidden, "hidden size (kv_num_heads x head size)");
    }
    if (kv[0] && r == SH_OK)
        a->kv_len = kv[0]->dims[1];
    return r;
}

/* do_rotary takes the cos and sin caches (inputs 7, 8), each of rank 2. */
static sh_result gqa_rotary(sh_ctx *c)
{
    if (fp_node_attr_int(c->n, "do_rotary", 0) == 0)
        return SH_OK;
    for (uint32_t i = 7; i <= 8; i++) {
        if (!sh_val(c, i))
            return sh_fail(c, "do_rotary is set but %s (input %u) is omitted", i == 7 ? "cos_cache" : "sin_cache", i);
        const fp_shape *s = sh_in(c, i);
        if (s && s->rank != 2)
            return sh_fail(c, "%s rank %d, expected 2 (positions, rotary dim / 2)", i == 7 ? "cos_cache" : "sin_cache",
                           s->rank);
    }
    return SH_OK;
}

/* The present length T. ORT's inference: max(past length, total_sequence_length) when input 6 is
 * a constant, the past length with a window-sized cache (sliding_window_cache). Where ORT leaves
 * it to run time this pass takes input 6 as it knows it (folded from Shape(attention_mask), or
 * that dim's symbol), else the length a graph output declares, else past + new tokens (past and
 * present in separate buffers). */
static fp_dim gqa_total(sh_ctx *c, const attn *a)
{
    if (a->has_past && fp_node_attr_int(c->n, "sliding_window_cache", 0) == 1)
        return a->past_len;
    fp_dim t = scalar_dim(c, 6);
    if (fp_dim_known(t))
        return fp_dim_known(a->past_len) ? sh_dim(MAX(t.value, a->past_len.value)) : t;
    if (t.sym)
        return t;
    const fp_value *present = sh_out(c, 1);
    if (present && present->is_output && present->decl_shape.rank == 4) {
        fp_dim d = present->decl_shape.dims[2];
        if (fp_dim_known(d) || d.sym)
            return d;
    }
    return a->has_past ? sh_dim_add(a->past_len, a->kv_len) : a->kv_len;
}

sh_result sh_rule_group_query_attention(sh_ctx *c)
{
    attn a = attn_new();
    sh_result r = heads_attr(c, "num_heads", &a.heads);
    if (r == SH_OK)
        r = heads_attr(c, "kv_num_heads", &a.kv_heads);
    if (r != SH_OK)
        return r;
    if (a.heads % a.kv_heads)
        return sh_fail(c, "num_heads %" G_GINT64_FORMAT " is not a multiple of kv_num_heads %" G_GINT64_FORMAT, a.heads,
                       a.kv_heads);
    a.q = sh_in(c, 0);
    if (!a.q)
        return sh_unknown(c, "query has unknown rank");
    if (a.q->rank != 3)
        return sh_fail(c, "query rank %d, expected 3 (batch, tokens, hidden)", a.q->rank);
    if (!sh_val(c, 5) || !sh_val(c, 6))
        return sh_fail(c, "seqlens_k and total_sequence_length (inputs 5, 6) are required");
    r = gqa_qkv(c, &a);
    if (r == SH_OK)
        r = attn_past(c, &a, 3);
    if (r == SH_OK)
        r = gqa_rotary(c);
    if (r != SH_OK)
        return r;
    attn_output0(c, &a);
    return attn_outputs(c, &a, gqa_total(c, &a));
}

/* ---------------------------------------------------------------- MultiHeadAttention */

/* A MultiHeadAttention key of rank 3 ([B, L, hidden], value [B, L, v_hidden]), 4 (BNSH key and
 * value of cross attention) or 5 (packed KV [B, L, heads, 2, d], value omitted). */
static sh_result mha_key(sh_ctx *c, attn *a)
{
    const fp_shape *k = sh_in(c, 1), *v = sh_in(c, 2);
    bool has_v = sh_val(c, 2) != NULL;
    if (!k)
        return SH_OK; /* rank unknown: the new tokens stay unknown */
    if (k->rank == 5) {
        if (has_v)
            return sh_fail(c, "a packed KV key (rank 5) takes no value (input 2)");
        sh_result r = sh_expect_dim(c, "packed KV key", k, 2, sh_dim(a->heads), "heads");
        if (r == SH_OK)
            r = sh_expect_dim(c, "packed KV key", k, 3, sh_dim(2), "parts");
        if (r == SH_OK)
            r = sh_expect_dim(c, "packed KV key", k, 4, a->head, "head size");
        a->kv_len = k->dims[1];
        a->v_head = fp_dim_known(a->head) ? a->head : k->dims[4];
        a->head = a->v_head;
        a->out_hidden = a->q->dims[2];
        return r;
    }
    if (k->rank != 3 && k->rank != 4)
        return sh_fail(c, "key rank %d, expected 3, 4 (BNSH) or 5 (packed KV)", k->rank);
    if (!has_v)
        return sh_fail(c, "a key of rank %d needs a value (input 2)", k->rank);
    if (v && v->rank != k->rank)
        return sh_fail(c, "value rank %d, expected %d as the key's", v->rank, k->rank);
    if (k->rank == 4) { /* cross attention: [B, heads, L, d] */
        sh_result r = sh_expect_dim(c, "key", k, 1, sh_dim(a->heads), "heads");
        if (r == SH_OK)
            r = sh_expect_dim(c, "key", k, 3, a->head, "head size");
        a->kv_len = k->dims[2];
        a->head = fp_dim_known(a->head) ? a->head : k->dims[3];
        a->v_head = v ? v->dims[3] : a->head;
        return r;
    }
    sh_result r = sh_expect_dim(c, "key", k, 2, a->q->dims[2], "hidden size");
    a->kv_len = k->dims[1];
    if (r != SH_OK || !v)
        return r;
    a->out_hidden = v->dims[2];
    return split_hidden(c, v->dims[2], a->heads, "value", "num_heads", &a->v_head);
}

/* Query (rank 3, or packed QKV [B, S, heads, 3, d] with key and value omitted), then the key. */
static sh_result mha_qkv(sh_ctx *c, attn *a)
{
    const fp_shape *q = a->q;
    a->batch = q->dims[0];
    a->seq = a->kv_len = q->dims[1];
    if (q->rank == 5) {
        if (sh_val(c, 1) || sh_val(c, 2))
            return sh_fail(c, "a packed QKV query (rank 5) takes no key or value (inputs 1, 2)");
        sh_result r = sh_expect_dim(c, "packed QKV query", q, 2, sh_dim(a->heads), "heads");
        if (r == SH_OK)
            r = sh_expect_dim(c, "packed QKV query", q, 3, sh_dim(3), "parts");
        a->head = a->v_head = q->dims[4];
        return r;
    }
    if (q->rank != 3)
        return sh_fail(c, "query rank %d, expected 3 or 5 (packed QKV)", q->rank);
    if (!sh_val(c, 1))
        return sh_fail(c, "key (input 1) is omitted: only a packed QKV query (rank 5) goes without");
    sh_result r = split_hidden(c, q->dims[2], a->heads, "query", "num_heads", &a->head);
    a->v_head = a->head;
    return r == SH_OK ? mha_key(c, a) : r;
}

sh_result sh_rule_multi_head_attention(sh_ctx *c)
{
    attn a = attn_new();
    sh_result r = heads_attr(c, "num_heads", &a.heads);
    if (r != SH_OK)
        return r;
    a.kv_heads = a.heads;
    a.q = sh_in(c, 0);
    if (!a.q)
        return sh_unknown(c, "query has unknown rank");
    r = mha_qkv(c, &a);
    if (r == SH_OK)
        r = attn_past(c, &a, 6);
    if (r != SH_OK)
        return r;
    attn_output0(c, &a);
    /* ORT: a shared past/present buffer (past_present_share_buffer, or past_sequence_length given
     * with the past) keeps the past's length; else past + new tokens */
    bool shared = fp_node_attr_int(c->n, "past_present_share_buffer", 0) != 0 || (a.has_past && sh_val(c, 8));
    fp_dim len = !a.has_past ? a.kv_len : shared ? a.past_len : sh_dim_add(a.past_len, a.kv_len);
    return attn_outputs(c, &a, len);
}

/* ---------------------------------------------------------------- RotaryEmbedding */

/* The cos and sin caches of a RotaryEmbedding (inputs at and at + 1): of rank `rank`, [positions,
 * half] (3: [batch, tokens, half]) with half the rotary dim / 2 when known, both of one shape. */
static sh_result rotary_caches(sh_ctx *c, uint32_t at, int32_t rank, fp_dim half)
{
    const fp_shape *cs[2] = {sh_in(c, at), sh_in(c, at + 1)};
    for (int i = 0; i < 2; i++) {
        const char *what = i ? "sin_cache" : "cos_cache";
        if (!cs[i])
            continue;
        if (cs[i]->rank != rank)
            return sh_fail(c, "%s rank %d, expected %d (%s)", what, cs[i]->rank, rank,
                           rank == 2 ? "positions, rotary dim / 2" : "batch, tokens, rotary dim / 2");
        sh_result r = sh_expect_dim(c, what, cs[i], rank - 1, half, "rotary dim / 2");
        if (r == SH_OK && cs[0])
            r = sh_expect_dim(c, what, cs[i], 0, cs[0]->dims[0], "positions (cos_cache's)");
        if (r != SH_OK)
            return r;
    }
    return SH_OK;
}

/* RotaryEmbedding: input [B, S, hidden] or [B, heads, S, head size], then (com.microsoft)
 * position_ids, cos_cache and sin_cache, or (ONNX, opset 23) cos_cache, sin_cache and optional
 * position_ids, without which the caches are [B, S, half]; the output has the input's shape and
 * dtype. The rotary dim is rotary_embedding_dim, else the head size (a 4-D input's axis 3, a 3-D
 * input's hidden size over num_heads); the caches hold half of it. */
sh_result sh_rule_rotary_embedding(sh_ctx *c)
{
    int64_t heads, rot, flag;
    sh_result r = sh_attr_int_in(c, "num_heads", false, 0, 0, G_MAXINT32, "a head count (0: none given)", &heads);
    if (r == SH_OK)
        r = sh_attr_int_in(c, "rotary_embedding_dim", false, 0, 0, G_MAXINT32, "a rotary dim (0: the head size)", &rot);
    if (r == SH_OK)
        r = sh_attr_int_in(c, "interleaved", false, 0, 0, 1, "0 or 1", &flag);
    if (r != SH_OK)
        return r;
    bool ms = strcmp(c->n->domain, "com.microsoft") == 0;
    if (ms && (!sh_val(c, 1) || !sh_val(c, 2) || !sh_val(c, 3)))
        return sh_fail(c, "position_ids, cos_cache and sin_cache (inputs 1, 2, 3) are required");
    if (!ms && (!sh_val(c, 1) || !sh_val(c, 2)))
        return sh_fail(c, "cos_cache and sin_cache (inputs 1, 2) are required");
    if (rot % 2)
        return sh_fail(c, "attribute 'rotary_embedding_dim' is %" G_GINT64_FORMAT ": must be even", rot);
    const fp_shape *x = sh_in(c, 0);
    if (!x)
        return sh_unknown(c, "input has unknown rank");
    if (x->rank != 3 && x->rank != 4)
        return sh_fail(c, "input rank %d, expected 3 (batch, tokens, hidden) or 4 (batch, heads, tokens, head size)",
                       x->rank);
    fp_dim head = x->rank == 4 ? x->dims[3] : sh_dim_unknown();
    if (x->rank == 3 && heads > 0)
        r = split_hidden(c, x->dims[2], heads, "input", "num_heads", &head);
    if (r != SH_OK)
        return r;
    if (rot && fp_dim_known(head) && rot > head.value)
        return sh_fail(c, "rotary_embedding_dim %" G_GINT64_FORMAT " exceeds the head size %" G_GINT64_FORMAT, rot,
                       head.value);
    fp_dim half = rot ? sh_dim(rot / 2) : fp_dim_known(head) ? sh_dim(head.value / 2) : sh_dim_unknown();
    r = rotary_caches(c, ms ? 2 : 1, ms || sh_val(c, 3) ? 2 : 3, half);
    if (r == SH_OK)
        sh_set(c, 0, sh_dt(c, 0), sh_copy(c, x));
    return r;
}
