/* test_contrib.c - ONNX Runtime's contrib ops (com.microsoft) as fuseplan models them: the shape
 * rules on the shapes of the op schemas (onnxruntime docs/ContribOperators.md), FLOPs and bytes
 * against hand arithmetic (docs/metrics.md), and bad attributes or inputs as one error naming the
 * node, through the library and the CLI (exit 2). */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "passes/cost.h"
#include "tutil.h"

enum { F32 = 1, U8 = 2, I8 = 3, I32 = 6, I64 = 7 };

/* A com.microsoft node in b. */
static tb_node_t *ms(tb *b, const char *op, const char *name, const char *inputs, const char *outputs)
{
    tb_node_t *n = tb_node(b, op, name, inputs, outputs);
    tb_domain(b, n, "com.microsoft");
    return n;
}

/* Sets INT attribute `name` of n to v unless v is -1 (absent). */
static void attr_unless_absent(tb *b, tb_node_t *n, const char *name, int64_t v)
{
    if (v != -1)
        tb_attr_i(b, n, name, v);
}

/* Asserts value `name` of m has shape `want` ("2x3x4"). */
static void expect_shape(const fp_model *m, const char *name, const char *want)
{
    fp_value *v = fp_graph_find(m->main, name);
    g_autofree char *got = v ? fp_shape_to_string(&v->shape) : g_strdup("(none)");
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n  %s: got %s, want %s", name, got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
}

static const fp_node *node_of(const fp_model *m, const char *name)
{
    for (guint i = 0; i < m->main->nodes->len; i++) {
        const fp_node *n = m->main->nodes->pdata[i];
        if (strcmp(n->name, name) == 0)
            return n;
    }
    CU_FAIL_FATAL("no such node");
    return NULL;
}

/* Asserts that b does not analyze, with one error naming node 'bad' of op `op` and holding needle;
 * frees b. */
static void expect_bad(tb *b, const char *op, const char *needle)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = tu_analyze_tb(b, &err);
    tb_free(b);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    g_autofree char *full = g_strdup_printf("node 'bad' (%s): %s", op, needle);
    tu_expect_error(err, full);
}

/* ---------------------------------------------------------------- MatMulNBits */

/* A MatMulNBits "q" (com.microsoft) over A [2, 3, a_k] with the given attributes (0: absent) and
 * initializers B [b0, b1, b2] uint8, scales (rank s_rank: [s0, s1] or [s0]) float, zero points
 * [z0, z1] of dtype z_dt (0: none) and bias [n]. */
typedef struct {
    const char *name;
    int64_t a_k, k, n, bits, block;
    int64_t b[3], s_rank, s[2], z_dt, z[2];
    bool bias;
} nbits_case;

static tb *nbits_model(const nbits_case *c)
{
    tb *b = tb_new(17);
    tb_input(b, "a", F32, 3, (int64_t[]){2, 3, c->a_k});
    tb_init(b, "w", U8, 3, c->b);
    tb_init(b, "s", F32, (int)c->s_rank, c->s);
    if (c->z_dt)
        tb_init(b, "z", (int)c->z_dt, 2, c->z);
    if (c->bias)
        tb_init(b, "bias", F32, 1, (int64_t[]){c->n});
    const char *inputs = c->bias ? (c->z_dt ? "a,w,s,z,,bias" : "a,w,s,,,bias") : c->z_dt ? "a,w,s,z" : "a,w,s";
    tb_node_t *q = ms(b, "MatMulNBits", c->name, inputs, "y");
    const char *names[] = {"K", "N", "bits", "block_size"};
    int64_t vals[] = {c->k, c->n, c->bits, c->block};
    for (int i = 0; i < 4; i++)
        if (vals[i])
            tb_attr_i(b, q, names[i], vals[i]);
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* The schema's layout: K = 64, N = 32, 4 bits in blocks of 32: B [32, 2, 16], scales [32, 2],
 * packed zero points [32, 1], bias [32]; Y [2, 3, 32]. FLOPs: 2 x 192 outputs x 64, the
 * dequantization 2 x 32 x 64, the bias 192. Weight bytes are the stored ones: 1024 + 256 + 32 + 128;
 * parameters 32 x 64 weights + 64 scales + 32 zero points + 32 biases. 8 bits in blocks of 16 with
 * flattened scales, and K = 40 (not a multiple of the block: 2 blocks) analyze too. */
static void test_matmul_nbits(void)
{
    nbits_case c = {"q", 64, 64, 32, 4, 32, {32, 2, 16}, 2, {32, 2}, U8, {32, 1}, true};
    tb *b = nbits_model(&c);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x32");
    const fp_node *q = node_of(m, "q");
    CU_ASSERT_EQUAL(q->op, FP_OP_MATMUL_NBITS);
    CU_ASSERT_EQUAL(q->metrics.flops, 2 * 192 * 64 + 2 * 32 * 64 + 192);
    CU_ASSERT_EQUAL(q->metrics.bytes_weight, 1024 + 256 + 32 + 128);
    CU_ASSERT_EQUAL(q->metrics.bytes_act, 2 * 3 * 64 * 4);
    CU_ASSERT_EQUAL(q->metrics.bytes_out, 192 * 4);
    CU_ASSERT_EQUAL(q->metrics.params, 32 * 64 + 64 + 32 + 32);
    nbits_case c8 = {"q8", 64, 64, 8, 8, 16, {8, 4, 16}, 1, {32}, 0, {0}, false};
    b = nbits_model(&c8);
    g_autoptr(fp_model) m8 = tu_load_tb(b);
    tb_free(b);
    expect_shape(m8, "y", "2x3x8");
    CU_ASSERT_EQUAL(node_of(m8, "q8")->metrics.flops, 2 * 48 * 64 + 2 * 8 * 64);
    CU_ASSERT_EQUAL(node_of(m8, "q8")->metrics.bytes_weight, 8 * 4 * 16 + 32 * 4);
    nbits_case odd = {"q40", 40, 40, 16, 4, 32, {16, 2, 16}, 2, {16, 2}, 0, {0}, false};
    b = nbits_model(&odd);
    g_autoptr(fp_model) mo = tu_load_tb(b);
    tb_free(b);
    expect_shape(mo, "y", "2x3x16");
}

/* Bad attributes and packed inputs of MatMulNBits: one error naming the node. */
static void test_matmul_nbits_errors(void)
{
    struct {
        nbits_case c;
        const char *needle;
    } cases[] = {
        {{"bad", 64, 64, 32, 3, 32, {32, 2, 12}, 2, {32, 2}, 0, {0}, false},
         "attribute 'bits' is 3: must be 2, 4 or 8"},
        {{"bad", 64, 64, 32, 16, 32, {32, 2, 64}, 2, {32, 2}, 0, {0}, false},
         "attribute 'bits' is 16: must be 2, 4 or 8"},
        {{"bad", 64, 64, 32, 4, 24, {32, 3, 12}, 2, {32, 3}, 0, {0}, false},
         "attribute 'block_size' is 24: must be a power of two >= 16"},
        {{"bad", 64, 64, 32, 4, 8, {32, 8, 4}, 2, {32, 8}, 0, {0}, false},
         "attribute 'block_size' is 8: must be a power of two >= 16"},
        {{"bad", 64, 64, 32, 4, 0, {32, 2, 16}, 2, {32, 2}, 0, {0}, false},
         "missing required attribute 'block_size' (INT)"},
        {{"bad", 64, 0, 32, 4, 32, {32, 2, 16}, 2, {32, 2}, 0, {0}, false}, "missing required attribute 'K' (INT)"},
        {{"bad", 64, 64, 32, 4, 32, {32, 2, 16}, 2, {32, 3}, 0, {0}, false},
         "scales shape 32x3, expected 32x2 (or flattened)"},
        {{"bad", 64, 64, 32, 4, 32, {32, 2, 16}, 1, {60}, 0, {0}, false},
         "scales shape 60, expected 32x2 (or flattened)"},
        {{"bad", 64, 64, 32, 4, 32, {32, 2, 8}, 2, {32, 2}, 0, {0}, false}, "B shape 32x2x8, expected 32x2x16"},
        {{"bad", 64, 64, 32, 4, 32, {32, 2, 16}, 2, {32, 2}, U8, {32, 2}, false},
         "zero_points shape 32x2, expected 32x1 (or flattened)"},
        {{"bad", 60, 64, 32, 4, 32, {32, 2, 16}, 2, {32, 2}, 0, {0}, false},
         "A has 60 features (last axis), expected K = 64"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        expect_bad(nbits_model(&cases[i].c), "MatMulNBits", cases[i].needle);
}

/* The CLI: a bad block_size ends `fuseplan shapes` with exit 2 and one line naming the node. */
static void test_matmul_nbits_cli(void)
{
    nbits_case c = {"bad", 64, 64, 32, 4, 48, {32, 2, 24}, 2, {32, 2}, 0, {0}, false};
    tb *b = nbits_model(&c);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    const char *args[] = {"shapes", path, NULL};
    tu_expect_cli_error(args, path, "node 'bad' (MatMulNBits): attribute 'block_size' is 48");
    g_unlink(path);
}

/* ---------------------------------------------------------------- GatherBlockQuantized */

/* GatherBlockQuantized of uint8 data [100, 32] holding 4-bit values (64 a row), blocks of 32 along
 * axis 1: scales [100, 2], zero points [100, 1]; indices [2, 5] give [2, 5, 64] float. FLOPs 2 per
 * output; the weight traffic is the 10 rows of 100 read of data, scales and zero points. */
static void test_gather_block_quantized(void)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", I64, 2, (int64_t[]){2, 5});
    tb_init(b, "data", U8, 2, (int64_t[]){100, 32});
    tb_init(b, "scales", F32, 2, (int64_t[]){100, 2});
    tb_init(b, "zp", U8, 2, (int64_t[]){100, 1});
    tb_node_t *g = ms(b, "GatherBlockQuantized", "gbq", "data,ids,scales,zp", "e");
    tb_attr_i(b, g, "block_size", 32);
    tb_output(b, "e", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "e", "2x5x64");
    const fp_node *n = node_of(m, "gbq");
    CU_ASSERT_EQUAL(fp_graph_find(m->main, "e")->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(n->metrics.flops, 2 * 640);
    CU_ASSERT_EQUAL(n->metrics.bytes_weight, 10 * 32 + 10 * 8 + 10);
    CU_ASSERT_EQUAL(n->metrics.params, 3200 + 200 + 100);
}

/* A GatherBlockQuantized "bad" of uint8 data [100, 32] with scales [100, s1] and the attributes
 * given (block_size, gather_axis: -1 absent). */
static tb *gbq_model(int64_t block, int64_t gather_axis, int64_t s1)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", I64, 1, (int64_t[]){4});
    tb_init(b, "data", U8, 2, (int64_t[]){100, 32});
    tb_init(b, "scales", F32, 2, (int64_t[]){100, s1});
    tb_node_t *g = ms(b, "GatherBlockQuantized", "bad", "data,ids,scales", "e");
    attr_unless_absent(b, g, "block_size", block);
    attr_unless_absent(b, g, "gather_axis", gather_axis);
    tb_output(b, "e", F32, -1, NULL);
    return b;
}

static void test_gather_block_quantized_errors(void)
{
    const char *op = "GatherBlockQuantized";
    expect_bad(gbq_model(0, -1, 1), op, "attribute 'block_size' is 0: must be a power of two >= 16");
    expect_bad(gbq_model(100, -1, 1), op, "attribute 'block_size' is 100: must be a power of two >= 16");
    expect_bad(gbq_model(32, -1, 3), op, "scales has 3 on axis 1, expected 2 (blocks of block_size on quantize_axis)");
    expect_bad(gbq_model(-1, -1, 2), op, "scales has 2 on axis 1, expected 1"); /* default block 128 */
    expect_bad(gbq_model(32, 1, 2), op, "uint8 data is gathered on axis 0 only (gather_axis 1)");
}

/* ---------------------------------------------------------------- MatMulIntegerToFloat */

/* MatMulIntegerToFloat(A uint8 [2, 3, 16], B int8 [16, 8], a_scale scalar, b_scale [b_cols], ...,
 * bias [8]): Y [2, 3, 8] float; FLOPs 2 x 48 x 16 products, a scale and a bias per output. */
static tb *mitf_model(const char *name, int64_t b_cols)
{
    tb *b = tb_new(17);
    tb_input(b, "a", U8, 3, (int64_t[]){2, 3, 16});
    tb_init(b, "w", I8, 2, (int64_t[]){16, 8});
    tb_init_f32(b, "as", 0, (float[]){0.5f});
    tb_init(b, "bs", F32, 1, (int64_t[]){b_cols});
    tb_init(b, "bias", F32, 1, (int64_t[]){8});
    ms(b, "MatMulIntegerToFloat", name, "a,w,as,bs,,,bias", "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

static void test_matmul_integer_to_float(void)
{
    tb *b = mitf_model("mitf", 8);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x8");
    CU_ASSERT_EQUAL(fp_graph_find(m->main, "y")->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(node_of(m, "mitf")->metrics.flops, 2 * 48 * 16 + 48 + 48);
    expect_bad(mitf_model("bad", 5), "MatMulIntegerToFloat", "b_scale has 5 elements, expected 1 or B's 8 columns");
}

/* ---------------------------------------------------------------- EmbedLayerNormalization */

/* BERT's embedding (the schema's shapes): input_ids and segment_ids [2, 5] int32, word [100, 16],
 * position [64, 16] and segment [2, 16] embeddings, gamma and beta [16]. Output and embedding_sum
 * [2, 5, 16], mask_index [2] int32. FLOPs: 2 adds and 7 for the normalization per output; weight
 * traffic: 10 rows of the word and position tables, the 2-row segment table, gamma and beta. */
static void test_embed_layer_norm(void)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", I32, 2, (int64_t[]){2, 5});
    tb_input(b, "seg", I32, 2, (int64_t[]){2, 5});
    tb_init(b, "word", F32, 2, (int64_t[]){100, 16});
    tb_init(b, "pos", F32, 2, (int64_t[]){64, 16});
    tb_init(b, "segw", F32, 2, (int64_t[]){2, 16});
    tb_init(b, "gamma", F32, 1, (int64_t[]){16});
    tb_init(b, "beta", F32, 1, (int64_t[]){16});
    ms(b, "EmbedLayerNormalization", "emb", "ids,seg,word,pos,segw,gamma,beta", "y,mask,sum");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "sum", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x5x16");
    expect_shape(m, "mask", "2");
    expect_shape(m, "sum", "2x5x16");
    CU_ASSERT_EQUAL(fp_graph_find(m->main, "mask")->dtype, FP_DT_INT32);
    const fp_node *n = node_of(m, "emb");
    CU_ASSERT_EQUAL(n->metrics.flops, 160 * (7 + 2));
    CU_ASSERT_EQUAL(n->metrics.bytes_weight, 10 * 64 + 10 * 64 + 2 * 64 + 64 + 64);
    CU_ASSERT_EQUAL(n->metrics.params, 1600 + 1024 + 32 + 16 + 16);
    CU_ASSERT_EQUAL(n->metrics.bytes_act, 2 * 10 * 4);
    CU_ASSERT_EQUAL(n->metrics.bytes_out, 640 + 8 + 640);
}

/* An EmbedLayerNormalization "bad" over `inputs` with ids of rank ids_rank and a position table
 * [64, pos_hidden]. */
static tb *embed_model(const char *inputs, int ids_rank, int64_t pos_hidden)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", I32, ids_rank, (int64_t[]){2, 5, 1});
    tb_init(b, "word", F32, 2, (int64_t[]){100, 16});
    tb_init(b, "pos", F32, 2, (int64_t[]){64, pos_hidden});
    tb_init(b, "segw", F32, 2, (int64_t[]){2, 16});
    tb_init(b, "g", F32, 1, (int64_t[]){16});
    ms(b, "EmbedLayerNormalization", "bad", inputs, "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

static void test_embed_layer_norm_errors(void)
{
    const char *op = "EmbedLayerNormalization";
    expect_bad(embed_model("ids,,word,pos,,g,g", 2, 8), op,
               "position_embedding has hidden size 8, expected 16 (word_embedding's)");
    expect_bad(embed_model("ids,,word,pos,segw,g,g", 2, 16), op,
               "segment_ids and segment_embedding (inputs 1, 4) must both be given or both omitted");
    expect_bad(embed_model("ids,,word,pos,,g,g", 3, 16), op, "input_ids rank 3, expected 2 (batch, tokens)");
    expect_bad(embed_model("ids,,word,pos", 2, 16), op,
               "input_ids, word_embedding, position_embedding, gamma and beta (inputs 0, 2, 3, 5, 6) are required");
}

/* ---------------------------------------------------------------- Attention (packed past) */

/* com.microsoft Attention as GPT-2 exports it: input [2, 3, 32], weights [32, 96], bias [96], 4
 * heads of 8, past [2, 2, 4, 5, 8]: output [2, 3, 32], present [2, 2, 4, 8, 8] (past + new tokens).
 * With past_present_share_buffer the present keeps the past's 5; without a past it holds the 3 new
 * ones; qkv_hidden_sizes [32, 32, 16] gives a V of 16. FLOPs per batch: projection 2 x 3 x 32 x 96
 * and its bias 3 x 96, scores and context 2 x 3 x 8 x (32 + 32), softmax 5 x 3 x 8 x 4 heads. */
static void test_attention_past(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "past", F32, 5, (int64_t[]){2, 2, 4, 5, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){32, 96});
    tb_init(b, "bias", F32, 1, (int64_t[]){96});
    tb_init(b, "w80", F32, 2, (int64_t[]){32, 80});
    const char *nodes[][3] = {{"attn", "x,w,bias,,past", "y,present"},
                              {"shared", "x,w,bias,,past", "ys,present_s"},
                              {"first", "x,w,bias", "yf,present_f"},
                              {"narrow_v", "x,w80", "yv,present_v"}};
    for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
        tb_node_t *n = ms(b, "Attention", nodes[i][0], nodes[i][1], nodes[i][2]);
        tb_attr_i(b, n, "num_heads", 4);
        if (i == 1)
            tb_attr_i(b, n, "past_present_share_buffer", 1);
        if (i == 3)
            tb_attr_ints(b, n, "qkv_hidden_sizes", 3, (int64_t[]){32, 32, 16});
    }
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x32");
    expect_shape(m, "present", "2x2x4x8x8");
    expect_shape(m, "present_s", "2x2x4x5x8");
    expect_shape(m, "present_f", "2x2x4x3x8");
    expect_shape(m, "yv", "2x3x16");
    CU_ASSERT_EQUAL(node_of(m, "attn")->metrics.flops,
                    2 * (2 * 3 * 32 * 96 + 3 * 96 + 2 * 3 * 8 * (32 + 32) + 5 * 3 * 8 * 4));
    CU_ASSERT_EQUAL(node_of(m, "first")->metrics.flops,
                    2 * (2 * 3 * 32 * 96 + 3 * 96 + 2 * 3 * 3 * (32 + 32) + 5 * 3 * 3 * 4));
}

/* An Attention "bad" over x [2, 3, 32], weights [32, cols] and past of rank past_rank with
 * past_heads heads; num_heads 4 when `heads`. */
static tb *attention_model(int64_t cols, int past_rank, int64_t past_heads, bool heads)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "past", F32, past_rank, (int64_t[]){2, 2, past_heads, 5, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){32, cols});
    tb_node_t *n = ms(b, "Attention", "bad", "x,w,,,past", "y,present");
    if (heads)
        tb_attr_i(b, n, "num_heads", 4);
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

static void test_attention_past_errors(void)
{
    const char *op = "Attention";
    expect_bad(attention_model(96, 4, 4, true), op,
               "past rank 4, expected 5 (2, batch, heads, past tokens, head size)");
    expect_bad(attention_model(96, 5, 3, true), op, "past has heads 3, expected 4");
    expect_bad(attention_model(95, 5, 4, true), op, "weights have 95 columns: not three equal Q, K, V widths");
    expect_bad(attention_model(96, 5, 4, false), op, "missing required attribute 'num_heads' (INT)");
}

/* ---------------------------------------------------------------- RotaryEmbedding */

/* RotaryEmbedding over [2, 3, 64] with 4 heads of 16 (caches [32, 8]) and over the same as BNSH
 * [2, 4, 3, 16]: the input's shape, 3 FLOPs per element; with rotary_embedding_dim 8 (caches
 * [32, 4]) half of each head rotates. The caches cost the 6 rows (2 x 3 tokens) read of 32. */
static void test_rotary_embedding(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "x4", F32, 4, (int64_t[]){2, 4, 3, 16});
    tb_input(b, "pos", I64, 2, (int64_t[]){2, 3});
    tb_init(b, "cos", F32, 2, (int64_t[]){32, 8});
    tb_init(b, "sin", F32, 2, (int64_t[]){32, 8});
    tb_init(b, "cos4", F32, 2, (int64_t[]){32, 4});
    tb_init(b, "sin4", F32, 2, (int64_t[]){32, 4});
    tb_attr_i(b, ms(b, "RotaryEmbedding", "rope", "x,pos,cos,sin", "y"), "num_heads", 4);
    ms(b, "RotaryEmbedding", "rope4", "x4,pos,cos,sin", "y4");
    tb_node_t *p = ms(b, "RotaryEmbedding", "partial", "x,pos,cos4,sin4", "yp");
    tb_attr_i(b, p, "num_heads", 4);
    tb_attr_i(b, p, "rotary_embedding_dim", 8);
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x64");
    expect_shape(m, "y4", "2x4x3x16");
    expect_shape(m, "yp", "2x3x64");
    CU_ASSERT_EQUAL(node_of(m, "rope")->metrics.flops, 3 * 384);
    CU_ASSERT_EQUAL(node_of(m, "rope4")->metrics.flops, 3 * 384);
    CU_ASSERT_EQUAL(node_of(m, "partial")->metrics.flops, 3 * 384 / 2);
    CU_ASSERT_EQUAL(node_of(m, "rope")->metrics.bytes_weight, 2 * 6 * 8 * 4);
}

/* ONNX's RotaryEmbedding (opset 23) takes cos_cache and sin_cache first and position_ids last and
 * optional: without it the caches are [B, S, half] ([2, 3, 8]), with it [positions, half]. Shapes
 * and FLOPs as com.microsoft's; the caches are required. */
static void test_onnx_rotary_embedding(void)
{
    tb *b = tb_new(23);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "pos", I64, 2, (int64_t[]){2, 3});
    tb_input(b, "cos_bs", F32, 3, (int64_t[]){2, 3, 8});
    tb_input(b, "sin_bs", F32, 3, (int64_t[]){2, 3, 8});
    tb_init(b, "cos", F32, 2, (int64_t[]){32, 8});
    tb_init(b, "sin", F32, 2, (int64_t[]){32, 8});
    tb_attr_i(b, tb_node(b, "RotaryEmbedding", "rope_bs", "x,cos_bs,sin_bs", "y"), "num_heads", 4);
    tb_attr_i(b, tb_node(b, "RotaryEmbedding", "rope_pos", "x,cos,sin,pos", "yp"), "num_heads", 4);
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "yp", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x64");
    expect_shape(m, "yp", "2x3x64");
    CU_ASSERT_EQUAL(node_of(m, "rope_bs")->metrics.flops, 3 * 384);
    CU_ASSERT_EQUAL(node_of(m, "rope_pos")->metrics.bytes_weight, 2 * 6 * 8 * 4);
    b = tb_new(23);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "cos", F32, 2, (int64_t[]){32, 8});
    tb_node(b, "RotaryEmbedding", "bad", "x,cos", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_bad(b, "RotaryEmbedding", "cos_cache and sin_cache (inputs 1, 2) are required");
}

/* A RotaryEmbedding "bad" over x of rank rank ([2, 3, 64] or [2, 4, 3, 16]) with caches [32, half],
 * num_heads 4 and the interleaved attribute (-1: absent). */
static tb *rotary_model(int rank, int64_t half, int64_t interleaved)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, rank, rank == 4 ? (int64_t[]){2, 4, 3, 16} : (int64_t[]){2, 3, 64});
    tb_input(b, "pos", I64, 2, (int64_t[]){2, 3});
    tb_init(b, "cos", F32, 2, (int64_t[]){32, half});
    tb_node_t *n = ms(b, "RotaryEmbedding", "bad", "x,pos,cos,cos", "y");
    tb_attr_i(b, n, "num_heads", 4);
    attr_unless_absent(b, n, "interleaved", interleaved);
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

static void test_rotary_embedding_errors(void)
{
    const char *op = "RotaryEmbedding";
    expect_bad(rotary_model(3, 6, -1), op, "cos_cache has rotary dim / 2 6, expected 8");
    expect_bad(rotary_model(4, 4, -1), op, "cos_cache has rotary dim / 2 4, expected 8");
    expect_bad(rotary_model(2, 8, -1), op, "input rank 2, expected 3 (batch, tokens, hidden) or 4");
    expect_bad(rotary_model(3, 8, 2), op, "attribute 'interleaved' is 2: must be 0 or 1");
}

/* ---------------------------------------------------------------- MoE */

/* A MoE "name" of 4 experts with a fused SwiGLU (swiglu_fusion 1: fc1 [4, 2 x 32, 16]), fc2
 * [4, h2, 32], top k, over input [t0, t1, 16] (router_probs [t0 x t1, 4]). */
static tb *moe_model(const char *name, int64_t t0, int64_t t1, int64_t h2, int64_t k)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){t0, t1, 16});
    tb_input(b, "router", F32, 2, (int64_t[]){t0 * t1, 4});
    tb_init(b, "fc1", F32, 3, (int64_t[]){4, 64, 16});
    tb_init(b, "fc2", F32, 3, (int64_t[]){4, h2, 32});
    tb_node_t *n = ms(b, "MoE", name, "x,router,fc1,,fc2", "y");
    tb_attr_i(b, n, "k", k);
    tb_attr_i(b, n, "swiglu_fusion", 1);
    tb_attr_s(b, n, "activation_type", "swiglu");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* Over 6 tokens: the input's shape; FLOPs 5 x 6 x 4 for the router, then 6 tokens x 2 experts of
 * fc1 2 x 16 x 64, its activation 64 and fc2 2 x 32 x 16. The 12 expert picks cover the 4
 * experts: every weight is read. At a decode step (1 token) the 2 experts read are half of them. */
static void test_moe(void)
{
    tb *b = moe_model("moe", 2, 3, 16, 2);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "2x3x16");
    const fp_node *n = node_of(m, "moe");
    CU_ASSERT_EQUAL(n->op, FP_OP_MOE);
    CU_ASSERT_EQUAL(n->metrics.flops, 5 * 6 * 4 + 6 * 2 * (2 * 16 * 64 + 64 + 2 * 32 * 16));
    CU_ASSERT_EQUAL(n->metrics.bytes_weight, 4 * 64 * 16 * 4 + 4 * 16 * 32 * 4);
    b = moe_model("decode", 1, 1, 16, 2);
    g_autoptr(fp_model) d = tu_load_tb(b);
    tb_free(b);
    CU_ASSERT_EQUAL(node_of(d, "decode")->metrics.flops, 5 * 4 + 2 * (2 * 16 * 64 + 64 + 2 * 32 * 16));
    CU_ASSERT_EQUAL(node_of(d, "decode")->metrics.bytes_weight, (4 * 64 * 16 * 4 + 4 * 16 * 32 * 4) / 2);
    CU_ASSERT_EQUAL(node_of(d, "decode")->metrics.params, 4 * 64 * 16 + 4 * 16 * 32);
    expect_bad(moe_model("bad", 2, 3, 16, 5), "MoE", "attribute 'k' is 5: must be between 1 and the 4 experts");
    expect_bad(moe_model("bad", 2, 3, 16, 0), "MoE", "attribute 'k' is 0: must be between 1 and the 4 experts");
    expect_bad(moe_model("bad", 2, 3, 8, 1), "MoE", "fc2_experts_weights has hidden size 8, expected 16");
}

/* A QMoE "name" of 4 experts over x [1, 1, 64] (a decode step; router_probs [1, 4], top 2), a
 * fused SwiGLU of inter size 32: fc1 uint8 [4, 64, fc1_cols] with scales [4, 64, s1_blocks], fc2
 * uint8 [4, 64, 16] with scales [4, 64, 1]; expert_weight_bits `bits` and block_size `block`
 * (-1: absent), quant_type `quant` (NULL: absent). */
static tb *qmoe_model(const char *name, int64_t bits, int64_t block, int64_t s1_blocks, int64_t fc1_cols,
                      const char *quant)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){1, 1, 64});
    tb_input(b, "router", F32, 2, (int64_t[]){1, 4});
    tb_init(b, "fc1", U8, 3, (int64_t[]){4, 64, fc1_cols});
    tb_init(b, "s1", F32, 3, (int64_t[]){4, 64, s1_blocks});
    tb_init(b, "fc2", U8, 3, (int64_t[]){4, 64, 16});
    tb_init(b, "s2", F32, 3, (int64_t[]){4, 64, 1});
    tb_node_t *n = ms(b, "QMoE", name, "x,router,fc1,s1,,fc2,s2", "y");
    tb_attr_i(b, n, "k", 2);
    tb_attr_i(b, n, "swiglu_fusion", 1);
    attr_unless_absent(b, n, "expert_weight_bits", bits);
    attr_unless_absent(b, n, "block_size", block);
    if (quant)
        tb_attr_s(b, n, "quant_type", quant);
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* QMoE with 4-bit experts in blocks of 32 (2 weights a byte): the input's shape; FLOPs as MoE's
 * over the unpacked dims (H 64, fc1 64 rows, inter 32): 5 x 4 for the router, 2 experts of
 * 2 x 64 x 64 + 64 + 2 x 32 x 64; the 2 experts read of 4 cost half the packed weights and scales
 * (8192 + 2048 + 4096 + 1024 bytes). Bad attributes and packed shapes are errors naming the node. */
static void test_qmoe(void)
{
    tb *b = qmoe_model("qmoe", 4, 32, 2, 32, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    expect_shape(m, "y", "1x1x64");
    const fp_node *n = node_of(m, "qmoe");
    CU_ASSERT_EQUAL(n->op, FP_OP_QMOE);
    CU_ASSERT_EQUAL(n->metrics.flops, 5 * 4 + 2 * (2 * 64 * 64 + 64 + 2 * 32 * 64));
    CU_ASSERT_EQUAL(n->metrics.bytes_weight, (8192 + 2048 + 4096 + 1024) / 2);
    const char *op = "QMoE";
    expect_bad(qmoe_model("bad", 3, 32, 2, 32, NULL), op, "attribute 'expert_weight_bits' is 3: must be 2, 4 or 8");
    expect_bad(qmoe_model("bad", 4, 24, 2, 32, NULL), op,
               "attribute 'block_size' is 24: must be a power of two >= 16 (or 0)");
    expect_bad(qmoe_model("bad", 4, 32, 3, 32, NULL), op, "fc1_scales has blocks 3, expected 2");
    expect_bad(qmoe_model("bad", 4, -1, 2, 32, NULL), op, "fc1_scales rank 3, expected 2 (experts, rows)");
    expect_bad(qmoe_model("bad", 8, 32, 2, 32, NULL), op,
               "fc1_experts_weights has columns (hidden size / weights a byte) 32, expected 64");
    expect_bad(qmoe_model("bad", 4, 32, 2, 32, "int3"), op, "attribute 'quant_type' is 'int3': must be int, fp4");
}

/* ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear */

/* A QuantizeLinear (ONNX, opset 21) or com.microsoft DequantizeLinear "name" over x [4, 64] with a
 * scale (and zero point) of shape s (rank sr), axis 1 and block_size `block` (-1: absent). */
static tb *qdq_model(const char *name, bool ms_dq, int sr, const int64_t *s, int64_t block)
{
    tb *b = tb_new(21);
    tb_input(b, "x", ms_dq ? U8 : F32, 2, (int64_t[]){4, 64});
    tb_init(b, "s", F32, sr, s);
    tb_init(b, "z", U8, sr, s);
    tb_node_t *n = ms_dq ? ms(b, "DequantizeLinear", name, "x,s,z", "y")
                         : tb_node(b, "QuantizeLinear", name, "x,s,z", "y");
    tb_attr_i(b, n, "axis", 1);
    attr_unless_absent(b, n, "block_size", block);
    tb_output(b, "y", -1, -1, NULL);
    return b;
}

/* Per tensor (a 1-element scale), per axis ([64] on axis 1) and blocked (block_size 32: [4, 2])
 * parameters analyze, the output the input's shape; a scale that fits none is an error. */
static void test_quantize_axes(void)
{
    const char *names[] = {"per_tensor", "per_axis", "blocked", "ms_per_axis"};
    tb *in[] = {qdq_model(names[0], false, 1, (int64_t[]){1}, -1), qdq_model(names[1], false, 1, (int64_t[]){64}, -1),
                qdq_model(names[2], false, 2, (int64_t[]){4, 2}, 32),
                qdq_model(names[3], true, 1, (int64_t[]){64}, -1)};
    for (size_t i = 0; i < G_N_ELEMENTS(in); i++) {
        g_autoptr(fp_model) m = tu_load_tb(in[i]);
        tb_free(in[i]);
        expect_shape(m, "y", "4x64");
        CU_ASSERT_EQUAL(fp_graph_find(m->main, "y")->dtype, i == 3 ? FP_DT_FLOAT : FP_DT_UINT8);
    }
    expect_bad(qdq_model("bad", false, 1, (int64_t[]){4}, -1), "QuantizeLinear",
               "scale shape 4 does not fit input 4x64 on axis 1 (per axis: the axis' dim)");
    expect_bad(qdq_model("bad", false, 2, (int64_t[]){4, 3}, 32), "QuantizeLinear",
               "scale shape 4x3 does not fit input 4x64 on axis 1 (blocked");
    expect_bad(qdq_model("bad", false, 1, (int64_t[]){64}, -2), "QuantizeLinear",
               "attribute 'block_size' is -2: must be 0 or a positive block size");
    expect_bad(qdq_model("bad", true, 1, (int64_t[]){63}, -1), "DequantizeLinear", "scale shape 63 does not fit");
}

/* ---------------------------------------------------------------- the int4 sample */

/* models/decoder_int4.onnx (models/gen_samples.py: onnxruntime-genai's int4 layout) at the default
 * decode step: no opaque op, nothing of unknown size, and the weights are the bytes stored. By
 * hand: a MatMulNBits of K x N holds N K / 2 bytes of B, N K / 32 float scales and N ceil(K / 64)
 * bytes of packed zero points; per layer q, o (64 x 64), k, v (64 x 32), gate, up (64 x 128),
 * down (128 x 64), and the LM head (64 x 128); the embedding 128 x 32 bytes and 128 x 2 scales;
 * 5 RMSNorm weights of 64; cos and sin caches 2048 x 8; two int64 constants of the mask subgraph. */
static uint64_t int4_sample_weight_parts(uint64_t *ints, uint64_t *floats)
{
    static const uint64_t matmuls[][3] = {{64, 64, 4}, {64, 32, 4}, {64, 128, 4}, {128, 64, 2}, {64, 128, 1}};
    *ints = 128 * 32;                                      /* the embedding's 4-bit table */
    *floats = 128 * 2 * 4 + 5 * 64 * 4 + 2 * 2048 * 8 * 4; /* its scales, norms, cos and sin */
    for (size_t i = 0; i < G_N_ELEMENTS(matmuls); i++) {   /* K, N, how many */
        uint64_t k = matmuls[i][0], n = matmuls[i][1], count = matmuls[i][2];
        *ints += count * (n * k / 2 + n * ((k + 63) / 64)); /* B and the packed zero points */
        *floats += count * n * (k / 32) * 4;                /* the scales */
    }
    return *ints + *floats + 2 * 8; /* and the mask subgraph's two int64 constants */
}

static uint64_t int4_sample_weight_bytes(void)
{
    uint64_t ints, floats;
    return int4_sample_weight_parts(&ints, &floats);
}

static void test_decoder_int4(void)
{
    const char *path = FP_SOURCE_DIR "/models/decoder_int4.onnx";
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->res.cost->unknown, 0);
    tu_expect_nothing_unknown(a->diag);
    CU_ASSERT_EQUAL(a->res.memory->weight_bytes, int4_sample_weight_bytes());
    const fp_node *q = node_of(a->model, "/model/layers.0/attn/q_proj/MatMul_Q4");
    CU_ASSERT_EQUAL(q->op, FP_OP_MATMUL_NBITS);
    CU_ASSERT_EQUAL(q->metrics.flops, 2 * 64 * 64 + 2 * 64 * 64); /* one token, and the dequantization */
    /* the builder's CPU layout, accuracy_level 4: MLAS's int8 path, a class of its own; another
     * level stays matmul */
    CU_ASSERT_EQUAL(fp_node_attr_int(q, "accuracy_level", 0), 4);
    CU_ASSERT_EQUAL(fp_cost_class(q), FP_CLASS_MATMUL_NBITS);
    tb *b = nbits_model(&(nbits_case){"q", 64, 64, 32, 4, 32, {32, 2, 16}, 2, {32, 2}, 0, {0}, false});
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const fp_node *l0 = node_of(m, "q");
    CU_ASSERT_EQUAL(fp_cost_class(l0), FP_CLASS_MATMUL);
}

/* The int4 sample's MatMulNBits of K = 64 work as if K were 128 (MLAS's int8 kernel sets up and
 * reduces each output column whatever its K: passes/cost.c NBITS_MIN_K), those of K = 128 their
 * FLOPs. */
static void test_decoder_int4_nbits_work(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/decoder_int4.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int seen[2] = {0, 0};
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *c = &a->res.cost->ops[i];
        if (c->node->op != FP_OP_MATMUL_NBITS)
            continue;
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_MATMUL_NBITS);
        int64_t k = fp_node_attr_int(c->node, "K", 0);
        CU_ASSERT(k == 64 || k == 128);
        seen[k == 128]++;
        CU_ASSERT_EQUAL(c->work, k == 64 ? 2 * c->flops : c->flops);
    }
    CU_ASSERT_EQUAL(seen[0], 13); /* q, k, v, o, gate, up in two layers, and the LM head */
    CU_ASSERT_EQUAL(seen[1], 2);  /* down */
}

/* The weight what-ifs on the int4 sample, whose matrix weights are already stored quantized: fp16
 * casts the float weights it keeps (scales, norms, rotary caches) and keeps the 4-bit ones as
 * stored; fp8, int8 and int4 would change nothing and are refused in one line. */
static void test_decoder_int4_weight_dtype(void)
{
    uint64_t ints, floats;
    uint64_t stored = int4_sample_weight_parts(&ints, &floats);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.weight_dtype = "fp16"};
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/decoder_int4.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->weights.stored_bytes, stored);
    CU_ASSERT_EQUAL(a->weights.quantized_bytes, ints);
    CU_ASSERT_EQUAL(a->weights.bytes, ints + floats / 2 + 2 * 8);
    CU_ASSERT_EQUAL(a->weight_bytes, ints + floats / 2 + 2 * 8);
    const char *quantize[] = {"fp8", "int8", "int4"};
    for (size_t i = 0; i < G_N_ELEMENTS(quantize); i++) {
        o.weight_dtype = quantize[i];
        g_autoptr(GError) e = NULL;
        g_autoptr(fp_analysis) q = fp_analysis_run(FP_SOURCE_DIR "/models/decoder_int4.onnx", &o, &e);
        CU_ASSERT_PTR_NULL(q);
        tu_expect_error(e, "the model's weights are already stored quantized");
    }
    tu_expect_cli_error((const char *[]){"memory", "models/decoder_int4.onnx", "--weight-dtype", "int4", NULL},
                        "models/decoder_int4.onnx", "--weight-dtype int4: the model's weights are already stored");
    tu_run_result r = tu_run(
        (const char *[]){"memory", FP_SOURCE_DIR "/models/decoder_int4.onnx", "--weight-dtype", "fp16", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "already stored quantized, kept so"));
    tu_run_clear(&r);
}

/* n rounded up to h100's alignment (256 B). */
static uint64_t align256(uint64_t n) { return (n + 255) / 256 * 256; }

/* The int4 sample's memory at batch b, decoding at `context` tokens, by hand from its dims: the
 * weights as stored; the KV cache of models/genai_config.json (past_present_share_buffer, max_length
 * 4096): 2 layers x (K, V) x 2 KV heads x 16 x float32 per token, one buffer of
 * max(4096, context) tokens per sequence; the activations at the decode step's peak, the attention-
 * mask subgraph: attention_mask [b, context] int64, the embedding [b, 1, 64] float32, ReduceSum's
 * [b, 1] int64 and its Cast's int32, each aligned to 256 B. */
static uint64_t int4_sample_bytes(uint64_t b, uint64_t context, uint64_t *kv, uint64_t *act)
{
    *kv = b * 2 * 2 * 2 * 16 * 4 * MAX(context, 4096);
    *act = align256(b * context * 8) + align256(b * 64 * 4) + align256(b * 8) + align256(b * 4);
    return int4_sample_weight_bytes() + *kv + *act;
}

/* `headroom --context C --device h100` on the int4 sample with its genai_config.json: the weights
 * stored, the shared-buffer KV cache and the activations at the answer as by hand, and the largest
 * batch the same as a search of every batch from 1 over the hand components (usable: h100's 80 GB
 * less the 10% reserve). At a context of 1024 the cache is still 4096 tokens a sequence. */
static void test_decoder_int4_headroom(void)
{
    const uint64_t contexts[] = {4096, 1024};
    for (size_t i = 0; i < G_N_ELEMENTS(contexts); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.device = "h100", .context = (int64_t)contexts[i], .headroom = {.on = true}};
        g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/decoder_int4.onnx", &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom);
        CU_ASSERT_EQUAL(a->device->align_bytes, 256);
        CU_ASSERT_EQUAL(a->headroom->usable, 80000000000u - 8000000000u);
        const fp_headroom_result *r = a->headroom;
        uint64_t kv = 0, act = 0, best = 0;
        for (uint64_t b = 1; b <= 100000; b++)
            if (int4_sample_bytes(b, contexts[i], &kv, &act) <= r->usable)
                best = b;
        CU_ASSERT(best > 1000 && best < 100000);
        CU_ASSERT_EQUAL((uint64_t)r->max_batch, best);
        CU_ASSERT_EQUAL(r->weight_bytes, int4_sample_weight_bytes());
        CU_ASSERT_EQUAL(r->bytes_at_max, int4_sample_bytes((uint64_t)r->max_batch, contexts[i], &kv, &act));
        CU_ASSERT_EQUAL(r->outside_at_max, kv);
        CU_ASSERT_EQUAL(r->arena_at_max, act);
        CU_ASSERT_EQUAL(r->bytes_above, int4_sample_bytes((uint64_t)r->max_batch + 1, contexts[i], &kv, &act));
    }
    tu_golden((const char *[]){"headroom", "models/decoder_int4.onnx", "--context", "4096", "--device", "h100", NULL},
              "headroom_decoder_int4.txt");
}

FP_TEST_SUITE(register_contrib)
{
    CU_pSuite s = CU_add_suite("contrib", NULL, NULL);
    CU_add_test(s, "matmul_nbits", test_matmul_nbits);
    CU_add_test(s, "matmul_nbits_errors", test_matmul_nbits_errors);
    CU_add_test(s, "matmul_nbits_cli", test_matmul_nbits_cli);
    CU_add_test(s, "gather_block_quantized", test_gather_block_quantized);
    CU_add_test(s, "gather_block_quantized_errors", test_gather_block_quantized_errors);
    CU_add_test(s, "matmul_integer_to_float", test_matmul_integer_to_float);
    CU_add_test(s, "embed_layer_norm", test_embed_layer_norm);
    CU_add_test(s, "embed_layer_norm_errors", test_embed_layer_norm_errors);
    CU_add_test(s, "attention_past", test_attention_past);
    CU_add_test(s, "attention_past_errors", test_attention_past_errors);
    CU_add_test(s, "rotary_embedding", test_rotary_embedding);
    CU_add_test(s, "rotary_embedding_errors", test_rotary_embedding_errors);
    CU_add_test(s, "onnx_rotary_embedding", test_onnx_rotary_embedding);
    CU_add_test(s, "moe", test_moe);
    CU_add_test(s, "qmoe", test_qmoe);
    CU_add_test(s, "quantize_axes", test_quantize_axes);
    CU_add_test(s, "decoder_int4", test_decoder_int4);
    CU_add_test(s, "decoder_int4_nbits_work", test_decoder_int4_nbits_work);
    CU_add_test(s, "decoder_int4_headroom", test_decoder_int4_headroom);
    CU_add_test(s, "decoder_int4_weight_dtype", test_decoder_int4_weight_dtype);
}
