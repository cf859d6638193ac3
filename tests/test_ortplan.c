/* test_ortplan.c - ortplan suite: the ONNX Runtime allocation model (passes/memory/ortplan.c) on
 * hand-made graphs whose answer ORT's rules give: in-place only for activations at the input's
 * last reader, reuse only at the same shape, the BFC arena's chunks and regions, the initializer block
 * with and without pre-packing, MLAS's Conv working buffer, the second run's pattern block; and
 * `memory --planner` on the command line. The byte counts asserted were also measured with ORT 1.30
 * (bench/ort_run.c, memory mode, level disabled: AllocatorGetStats MaxInUse after runs 1 and 2). */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/declared.h"
#include "passes/memory/ortplan.h"
#include "tutil.h"

#define F32 1
#define MIB ((uint64_t)1 << 20)

static const int64_t X[] = {1, 256, 1024}, XT[] = {1, 1024, 256}; /* 1 MiB of floats each */

/* A graph over x [1,256,1024]; the caller adds nodes, then ort() loads and plans it. */
static tb *graph(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, X);
    return b;
}

static void transpose(tb *b, const char *in, const char *out)
{
    tb_attr_ints(b, tb_node(b, "Transpose", NULL, in, out), "perm", 3, (const int64_t[]){0, 2, 1});
}

/* Loads b (its output y of dims yd), frees it and plans it with prepack. */
static fp_ort_memory_result ort(tb *b, int rank, const int64_t *yd, bool prepack)
{
    tb_output(b, "y", F32, rank, yd);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    fp_ort_memory_result r;
    g_autoptr(GError) err = NULL;
    fp_ort_memory_opts o = {.prepack = prepack};
    CU_ASSERT_FATAL(fp_pass_ort_memory(m->main, &o, &r, NULL, &err));
    fp_model_free(m);
    return r;
}

/* x -> Transpose a -> OP b -> Transpose y: a unary op writes over a, which it reads last. */
static void test_inplace_unary(void)
{
    tb *b = graph();
    transpose(b, "x", "a");
    tb_node(b, "Tanh", NULL, "a", "b");
    transpose(b, "b", "y");
    fp_ort_memory_result r = ort(b, 3, X, true);
    CU_ASSERT_EQUAL(r.n_inplace, 1);
    CU_ASSERT_EQUAL(r.n_buffers, 1);
    CU_ASSERT_EQUAL(r.first_run, 2 * MIB); /* a (holding b), then y */
    CU_ASSERT_EQUAL(r.total_steady, 2 * MIB);
}

/* Cast declares MayInplace: to float both Casts write over a (one buffer; ORT 1.30's arena counts two
 * allocations, a and y); to int64 the sizes differ, b takes a buffer of its own and c, float again,
 * a's freed one. */
static void test_inplace_cast(void)
{
    for (int wide = 0; wide < 2; wide++) {
        tb *b = graph();
        transpose(b, "x", "a");
        tb_attr_i(b, tb_node(b, "Cast", NULL, "a", "b"), "to", wide ? 7 : 1);
        tb_attr_i(b, tb_node(b, "Cast", NULL, "b", "c"), "to", 1);
        transpose(b, "c", "y");
        fp_ort_memory_result r = ort(b, 3, X, true);
        CU_ASSERT_EQUAL(r.n_inplace, wide ? 0 : 2);
        CU_ASSERT_EQUAL(r.n_buffers, wide ? 2 : 1); /* wide: c takes a's freed buffer */
    }
}

/* A FusedConv's Sum input (3) takes its output in place (MayInplace(3, 0)), as the NCHWc Conv's: z
 * dies there, so y0 needs no buffer of its own. */
static void test_inplace_fused_sum(void)
{
    static const int64_t xd[] = {1, 64, 64, 64}; /* 1 MiB */
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 4, xd);
    tb_init(b, "w1", F32, 4, (int64_t[]){64, 64, 1, 1});
    tb_init(b, "w2", F32, 4, (int64_t[]){64, 64, 1, 1});
    tb_init(b, "bias", F32, 1, (int64_t[]){64});
    tb_node(b, "Conv", "c", "x,w1", "z");
    tb_node_t *f = tb_node(b, "FusedConv", "f", "x,w2,bias,z", "y0");
    tb_domain(b, f, "com.microsoft");
    tb_attr_s(b, f, "activation", "Relu");
    tb_attr_ints(b, tb_node(b, "Transpose", NULL, "y0", "y"), "perm", 4, (const int64_t[]){0, 1, 3, 2});
    fp_ort_memory_result r = ort(b, 4, xd, true);
    CU_ASSERT_EQUAL(r.n_inplace, 1);
    CU_ASSERT_EQUAL(r.n_buffers, 1);
    CU_ASSERT_EQUAL(r.first_run, 2 * MIB); /* z (then y0), y */
}

/* Exp, a math op, writes no input in place (2 MiB in the first run, the block of a and b plus y in
 * the second); HardSwish runs as HardSigmoid then Mul, holding a third tensor while it runs. */
static void test_no_inplace_math(void)
{
    const char *ops[] = {"Exp", "HardSwish"};
    for (int i = 0; i < 2; i++) {
        tb *b = graph();
        transpose(b, "x", "a");
        tb_node(b, ops[i], NULL, "a", "b");
        transpose(b, "b", "y");
        fp_ort_memory_result r = ort(b, 3, X, true);
        CU_ASSERT_EQUAL(r.n_inplace, 0);
        CU_ASSERT_EQUAL(r.first_run, (uint64_t)(2 + i) * MIB);
        if (i == 0)
            CU_ASSERT_EQUAL(r.second_run, 3 * MIB);
    }
}

/* Add(a, a2): a binary op declares no MayInplace, though each input dies there. */
static void test_no_inplace_binary(void)
{
    tb *b = graph();
    transpose(b, "x", "a");
    transpose(b, "x", "a2");
    tb_node(b, "Add", NULL, "a,a2", "d");
    transpose(b, "d", "y");
    fp_ort_memory_result r = ort(b, 3, X, true);
    CU_ASSERT_EQUAL(r.n_inplace, 0);
    CU_ASSERT_EQUAL(r.n_buffers, 3);
    CU_ASSERT_EQUAL(r.first_run, 3 * MIB);
    /* the second run: the 3 MiB block takes the first run's 4 MiB region whole (under twice the
       request, never split) and y the 1 MiB one */
    CU_ASSERT_EQUAL(r.pattern, 3 * MIB);
    CU_ASSERT_EQUAL(r.second_run, 5 * MIB);
}

/* a read by Sigmoid and Tanh: only the one that runs last may write over it. */
static void test_inplace_last_reader(void)
{
    tb *b = graph();
    transpose(b, "x", "a");
    tb_node(b, "Sigmoid", NULL, "a", "b");
    tb_node(b, "Tanh", NULL, "a", "c");
    tb_node(b, "Add", NULL, "b,c", "d");
    transpose(b, "d", "y");
    fp_ort_memory_result r = ort(b, 3, X, true);
    CU_ASSERT_EQUAL(r.n_inplace, 1);
    CU_ASSERT_EQUAL(r.first_run, 3 * MIB); /* a (then b or c), the other one, d */
    CU_ASSERT_EQUAL(r.second_run, 5 * MIB);
}

/* a [1,1024,256] dies at the second Transpose; c reuses it only when c has its shape, not merely
 * its bytes (ORT's SameSize compares the dims). */
static void test_reuse_same_shape(void)
{
    for (int same = 0; same < 2; same++) {
        tb *b = graph();
        transpose(b, "x", "a");
        transpose(b, "a", "b");
        tb_attr_ints(b, tb_node(b, "Transpose", NULL, "b", "c"), "perm", 3,
                     same ? (const int64_t[]){0, 2, 1} : (const int64_t[]){0, 1, 2});
        transpose(b, "c", "y");
        fp_ort_memory_result r = ort(b, 3, same ? X : XT, true);
        CU_ASSERT_EQUAL(r.n_reused, same ? 1 : 0);
        CU_ASSERT_EQUAL(r.n_buffers, same ? 2 : 3);
        CU_ASSERT_EQUAL(r.first_run, 2 * MIB); /* the arena reuses a's chunk either way */
        CU_ASSERT_EQUAL(r.total_steady, 3 * MIB);
    }
}

/* a = Transpose(x); r = Reshape(a, shape); c = Slice(r) of constant bounds; e = Transpose(c), a's
 * shape; y = Transpose(e). The shape: constant ([1, 1024, 256]) or a Cast of a Shape of a. */
static tb *slice_graph(bool constant)
{
    tb *b = graph();
    transpose(b, "x", "a");
    if (constant)
        tb_init_i64(b, "s", 3, XT);
    else {
        tb_node(b, "Shape", NULL, "a", "s0");
        tb_attr_i(b, tb_node(b, "Cast", NULL, "s0", "s"), "to", 7);
    }
    tb_node(b, "Reshape", NULL, "a,s", "r");
    tb_init_i64(b, "starts", 1, (const int64_t[]){0});
    tb_init_i64(b, "ends", 1, (const int64_t[]){1024});
    tb_init_i64(b, "axes", 1, (const int64_t[]){1});
    tb_node(b, "Slice", NULL, "r,starts,ends,axes", "c");
    tb_attr_ints(b, tb_node(b, "Transpose", NULL, "c", "e"), "perm", 3, (const int64_t[]){0, 1, 2});
    transpose(b, "e", "y");
    return b;
}

/* slice_graph: with a shape ORT's data propagation does not give (a Cast of a Shape), r's dims are
 * unknown to it, so are the Slice's and the Transpose's after it, and e takes no freed buffer; with
 * a constant shape of positive sizes every dim is known again and e reuses a's. */
static void test_unknown_through_slice(void)
{
    for (int constant = 0; constant < 2; constant++) {
        fp_ort_memory_result r = ort(slice_graph(constant), 3, X, true);
        CU_ASSERT_EQUAL(r.n_reused, constant ? 1 : 0);
    }
}

/* slice_graph of a Cast of a Shape as ONNX Runtime's optimizing session knows it: its constant
 * folding takes the Shape of a tensor of numeric dims and the Cast, so r's dims are known (the
 * load shapes of analysis/declared.c, the view the fusion conditions read) and e reuses a's buffer;
 * at ORT_DISABLE_ALL (folded false) it does not. */
static void test_unknown_folded(void)
{
    tb *b = slice_graph(false);
    tb_output(b, "y", F32, 3, X);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu-extended", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fp_declared_mark_runtime(m, t);
    for (int folded = 0; folded < 2; folded++) {
        fp_ort_memory_opts o = {.prepack = true, .folded = folded};
        fp_ort_memory_result r;
        CU_ASSERT_FATAL(fp_pass_ort_memory(m->main, &o, &r, NULL, &err));
        CU_ASSERT_EQUAL(r.n_reused, folded ? 1 : 0);
    }
    fp_model_free(m);
}

/* Chunks: 40 bytes take 256; a 3 MiB request in a fresh arena grows the region 1 -> 4 MiB and takes
 * it whole (4 < 2 x 3), and the next one a second 4 MiB region. */
static void test_arena_chunks(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 1, (const int64_t[]){10});
    tb_node(b, "Relu", NULL, "x", "y");
    fp_ort_memory_result r = ort(b, 1, (const int64_t[]){10}, true);
    CU_ASSERT_EQUAL(r.outputs, 256);
    CU_ASSERT_EQUAL(r.first_run, 256);

    const int64_t big[] = {1, 3, 262144};
    b = tb_new(17);
    tb_input(b, "x", F32, 3, big);
    transpose(b, "x", "a");
    transpose(b, "a", "y");
    r = ort(b, 3, big, true);
    CU_ASSERT_EQUAL(r.first_run, 8 * MIB);
    CU_ASSERT_EQUAL(r.total_steady, 8 * MIB);
}

/* With pre-packing, initializers of 128 bytes or more are held outside the arena (the filters w and
 * w1, the bias), a MatMul's 2-D float B is held as its packed copy (N rounded to 16: 4 x 1008
 * floats for 4 x 1000) and a smaller initializer at its bytes (the 4-byte scale); without, all of
 * them in one block, each 64-byte aligned, rounded to 256. Filters (64) outnumber the output pixels
 * (16): MLAS expands the whole im2col matrix, 16 pixels x 16 x 3 x 3 floats; a pointwise 1x1 Conv
 * needs none. */
static void test_weights_and_conv(void)
{
    for (int prepack = 0; prepack < 2; prepack++) {
        tb *b = tb_new(17);
        tb_input(b, "x", F32, 4, (const int64_t[]){1, 16, 4, 4});
        tb_init(b, "w", F32, 4, (const int64_t[]){64, 16, 3, 3}); /* 36864 bytes */
        tb_init(b, "bias", F32, 1, (const int64_t[]){64});        /* 256 bytes */
        tb_init(b, "w1", F32, 4, (const int64_t[]){8, 64, 1, 1}); /* 2048 bytes */
        tb_init(b, "s", F32, 1, (const int64_t[]){1});            /* 4 bytes */
        tb_init(b, "fc", F32, 2, (const int64_t[]){4, 1000});     /* 16000 bytes */
        tb_attr_ints(b, tb_node(b, "Conv", NULL, "x,w,bias", "a"), "pads", 4, (const int64_t[]){1, 1, 1, 1});
        tb_node(b, "Conv", NULL, "a,w1", "c");
        tb_node(b, "Mul", NULL, "c,s", "d");
        tb_node(b, "MatMul", NULL, "d,fc", "y");
        fp_ort_memory_result r = ort(b, 4, (const int64_t[]){1, 8, 4, 1000}, prepack);
        CU_ASSERT_EQUAL(r.weight_outside, prepack ? 36864 + 256 + 2048 : 0);
        CU_ASSERT_EQUAL(r.weight_arena, prepack ? 4 * 1008 * 4 + 4 : 55296); /* 55232 rounded */
        CU_ASSERT_EQUAL(r.scratch, 16 * 16 * 9 * 4);
    }
}

/* A batch of 8 and 2 groups: MLAS's working buffer stays one thread's 16384 floats (as ORT 1.30 was
 * measured: 8454144 bytes in the first run, the 8 MiB output and 64 KiB). A ConvTranspose keeps
 * its transposed filter in the arena and takes a column buffer of C_out x kernel x input pixels
 * (8 x 2 x 2 x 16 floats) while it runs. */
static void test_conv_batch_transpose(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 4, (const int64_t[]){8, 64, 56, 56});
    tb_init(b, "w", F32, 4, (const int64_t[]){64, 32, 3, 3});
    tb_node_t *n = tb_node(b, "Conv", NULL, "x,w", "y");
    tb_attr_ints(b, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    tb_attr_i(b, n, "group", 2);
    fp_ort_memory_result r = ort(b, 4, (const int64_t[]){8, 64, 56, 56}, true);
    CU_ASSERT_EQUAL(r.scratch, 16384 * 4);
    CU_ASSERT_EQUAL(r.first_run, 8 * MIB + 16384 * 4);
    b = tb_new(17);
    tb_input(b, "x", F32, 4, (const int64_t[]){1, 16, 4, 4});
    tb_init(b, "w", F32, 4, (const int64_t[]){16, 8, 2, 2}); /* 2048 bytes */
    tb_attr_ints(b, tb_node(b, "ConvTranspose", NULL, "x,w", "y"), "strides", 2, (const int64_t[]){2, 2});
    r = ort(b, 4, (const int64_t[]){1, 8, 8, 8}, true);
    CU_ASSERT_EQUAL(r.weight_arena, 2048);
    CU_ASSERT_EQUAL(r.scratch, 8 * 4 * 16 * 4);
}

/* FusedGemm (com.microsoft: a Gemm and its activation, ORT's level-2 fusion) packs its B as Gemm
 * does: vgg11_112 at level all holds 21.94 MiB after session creation, as at level disabled. */
static void test_fused_gemm_prepacked(void)
{
    tb *b = graph();
    tb_init(b, "fc", F32, 2, (const int64_t[]){1024, 100});
    tb_init_i64(b, "shape", 2, (const int64_t[]){256, 1024});
    tb_node(b, "Reshape", NULL, "x,shape", "x2");
    tb_node_t *n = tb_node(b, "FusedGemm", NULL, "x2,fc", "y");
    tb_domain(b, n, "com.microsoft");
    tb_attr_s(b, n, "activation", "Relu");
    fp_ort_memory_result r = ort(b, 2, (const int64_t[]){256, 100}, true);
    CU_ASSERT_EQUAL(r.weight_outside, 0);
    CU_ASSERT_EQUAL(r.weight_arena, 1024 * 112 * 4 + 16); /* N = 100 rounded to 112; the shape, small */
}

/* FusedMatMul (com.microsoft: a MatMul and its scale or transposes, ORT's level-2 fusion) runs
 * MatMul's kernel, which packs B under its transB: PP-OCRv4's recognizer at level all holds its
 * 120 x 6625 head so (3.95 MiB after session creation, as at level disabled). B of 1024 x 100, or
 * 100 x 1024 under transB, packs as K 1024 by N 100 rounded to 112. */
static void test_fused_matmul_prepacked(void)
{
    for (int trans = 0; trans < 2; trans++) {
        tb *b = graph();
        tb_init(b, "fc", F32, 2, trans ? (const int64_t[]){100, 1024} : (const int64_t[]){1024, 100});
        tb_init_i64(b, "shape", 2, (const int64_t[]){256, 1024});
        tb_node(b, "Reshape", NULL, "x,shape", "x2");
        tb_node_t *n = tb_node(b, "FusedMatMul", NULL, "x2,fc", "y");
        tb_domain(b, n, "com.microsoft");
        tb_attr_f(b, n, "alpha", 0.5f);
        tb_attr_i(b, n, "transB", trans);
        fp_ort_memory_result r = ort(b, 2, (const int64_t[]){256, 100}, true);
        CU_ASSERT_EQUAL(r.weight_outside, 0);
        CU_ASSERT_EQUAL(r.weight_arena, 1024 * 112 * 4 + 16);
    }
}

/* com.microsoft Attention packs its weight per head for each of Q, K and V: 32 x 96 over 4 heads
 * is 3 x 4 GEMM Bs of K 32 by N 8 rounded to 16, 24576 bytes, as ORT 1.31.1 holds after session
 * creation (its bias, 384 bytes, outside); the same with qkv_hidden_sizes 32, 32, 16 over 32 x 80
 * (V's heads of 4 rounded to 16 too). */
static void test_attention_prepacked(void)
{
    static const struct {
        int64_t cols, heads, v;
        uint64_t arena;
    } c[] = {{96, 4, 0, 24576}, {80, 4, 16, 24576}};
    for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
        tb *b = tb_new(17);
        tb_input(b, "x", F32, 3, (const int64_t[]){1, 8, 32});
        tb_init(b, "w", F32, 2, (const int64_t[]){32, c[i].cols});
        tb_init(b, "bias", F32, 1, (const int64_t[]){c[i].cols});
        tb_node_t *n = tb_node(b, "Attention", NULL, "x,w,bias", "y");
        tb_domain(b, n, "com.microsoft");
        tb_attr_i(b, n, "num_heads", c[i].heads);
        if (c[i].v)
            tb_attr_ints(b, n, "qkv_hidden_sizes", 3, (const int64_t[]){32, 32, c[i].v});
        fp_ort_memory_result r = ort(b, 3, (const int64_t[]){1, 8, c[i].v ? c[i].v : 32}, true);
        CU_ASSERT_EQUAL(r.weight_arena, c[i].arena);
        CU_ASSERT_EQUAL(r.weight_outside, (uint64_t)c[i].cols * 4);
    }
}

/* A float16 MatMul (x 256 x 64 by w 64 x 100) runs in float32 between Casts on the CPU EP. With its
 * optimizations off, ORT casts w on every run and holds no weight in its arena; at level all its
 * initializer folding makes w a float32 initializer, which MatMul pre-packs (64 x 112 floats) and
 * the float16 one goes. Measured, ORT 1.31.1: 0 and 28672 bytes after session creation, 193536 and
 * 196608 at the first run's peak. */
static void test_float16_weights(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", 10, 2, (const int64_t[]){256, 64});
    tb_init(b, "w", 10, 2, (const int64_t[]){64, 100});
    tb_node(b, "MatMul", NULL, "x,w", "y");
    tb_output(b, "y", 10, 2, (const int64_t[]){256, 100});
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    static const char *const expect[][2] = {{"\"weight_arena_bytes\" : 0,", "\"total_first_run_bytes\" : 193536,"},
                                            {"\"weight_arena_bytes\" : 28672,", "\"total_first_run_bytes\" : 196608,"}};
    for (int all = 0; all < 2; all++) {
        tu_run_result r = tu_run(all ? (const char *[]){"memory", "--planner", "ort", "-t", "ort-cpu-all", "--device",
                                                        "cpu-avx512", "-f", "json", path, NULL}
                                     : (const char *[]){"memory", "--planner", "ort", "-f", "json", path, NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, expect[all][0]));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, expect[all][1]));
        tu_run_clear(&r);
    }
    g_unlink(path);
    g_free(path);
}

/* With --target the graph the target's passes leave is planned: at ort-cpu-all a 1x1 Conv of 16 to
 * 24 channels runs blocked, its output padded to the device's block (32 channels on cpu-avx512's
 * 16, 24 on cpu-avx2's 8): 2048 bytes more. A bad target or device: one line naming it, exit 2. */
static void test_cli_target(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 4, (const int64_t[]){1, 16, 8, 8});
    tb_init(b, "w", F32, 4, (const int64_t[]){24, 16, 1, 1});
    tb_node(b, "Conv", NULL, "x,w", "y");
    tb_output(b, "y", F32, 4, (const int64_t[]){1, 24, 8, 8});
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    uint64_t total[2] = {0, 0};
    const char *const devices[] = {"cpu-avx512", "cpu-avx2"};
    for (int i = 0; i < 2; i++) {
        tu_run_result r = tu_run((const char *[]){"memory", "--planner", "ort", "--target", "ort-cpu-all", "--device",
                                                  devices[i], "-f", "json", path, NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        const char *at = strstr(r.out, "\"total_first_run_bytes\" : ");
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        total[i] = g_ascii_strtoull(at + strlen("\"total_first_run_bytes\" : "), NULL, 10);
        tu_run_clear(&r);
    }
    CU_ASSERT_EQUAL(total[0], total[1] + 2048);
    tu_expect_cli_error((const char *[]){"memory", "--planner", "ort", "--target", "no-such-target", path, NULL}, NULL,
                        "no target named 'no-such-target'");
    tu_expect_cli_error((const char *[]){"memory", "--planner", "ort", "--target", "ort-cpu-all", "--device",
                                         "no-such-device", path, NULL},
                        NULL, "no device profile 'no-such-device'");
    g_unlink(path);
    g_free(path);
}

static void test_cli_planner(void)
{
    tb *b = graph();
    transpose(b, "x", "y");
    tb_output(b, "y", F32, 3, XT);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    tu_run_result r = tu_run((const char *[]){"memory", "--planner", "arena", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--planner arena"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"memory", "--planner", "ort", "-f", "json", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"total_first_run_bytes\" : 1048576"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"memory", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "ONNX Runtime's CPU arena"));
    tu_run_clear(&r);
    g_unlink(path);
    g_free(path);
}

/* A graph output of unknown size (a symbolic dim left unbound) allocates nothing in the replayed
 * arena, and is freed by no one: models/transformer_block.onnx with seq unbound. */
/* A graph output that is an initializer: ONNX Runtime copies it into an arena buffer as the run
 * starts, held to its end, with the activations then live (ORT 1.31.1 at level disabled: 3 MiB for
 * x -> Transpose -> Transpose y with a 1 MiB initializer w also an output, 2 MiB without w among
 * the outputs; 1 MiB for a graph of no nodes whose one output is w). */
static void test_initializer_output(void)
{
    tb *b = graph();
    tb_init(b, "w", F32, 2, (const int64_t[]){256, 1024});
    tb_output(b, "w", F32, 2, (const int64_t[]){256, 1024});
    transpose(b, "x", "a");
    transpose(b, "a", "y");
    fp_ort_memory_result r = ort(b, 3, X, true);
    CU_ASSERT_EQUAL(r.outputs, 2 * MIB);
    CU_ASSERT_EQUAL(r.first_run, 3 * MIB);
    CU_ASSERT_EQUAL(r.second_run, 3 * MIB);

    b = tb_new(17);
    tb_input(b, "x", F32, 1, (const int64_t[]){10});
    tb_init(b, "y", F32, 2, (const int64_t[]){256, 1024});
    r = ort(b, 2, (const int64_t[]){256, 1024}, true);
    CU_ASSERT_EQUAL(r.outputs, MIB);
    CU_ASSERT_EQUAL(r.first_run, MIB);
}

/* A view that writes a graph output: ONNX Runtime allocates every graph output apart, so the view
 * copies into a buffer of its own (ORT 1.31.1 at level disabled: x -> Relu -> Reshape y, 1 MiB each,
 * peaks at 2 MiB; an Identity or a Reshape of the graph input x at 1 MiB). */
static void test_view_output(void)
{
    for (int relu = 0; relu < 2; relu++) {
        tb *b = graph();
        tb_init_i64(b, "shape", 2, (const int64_t[]){256, 1024});
        if (relu)
            tb_node(b, "Relu", NULL, "x", "a");
        tb_node(b, "Reshape", NULL, relu ? "a,shape" : "x,shape", "y");
        fp_ort_memory_result r = ort(b, 2, (const int64_t[]){256, 1024}, true);
        CU_ASSERT_EQUAL(r.outputs, MIB);
        CU_ASSERT_EQUAL(r.first_run, (uint64_t)(1 + relu) * MIB);
    }
    tb *b = graph();
    tb_node(b, "Identity", NULL, "x", "y");
    fp_ort_memory_result r = ort(b, 3, X, true);
    CU_ASSERT_EQUAL(r.first_run, MIB);
}

static void test_unknown_output(void)
{
    tu_run_result r = tu_run((const char *[]){"memory", "--planner", "ort", "-f", "json",
                                              FP_SOURCE_DIR "/models/transformer_block.onnx", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"second_run_bytes\" : 0"));
    tu_run_clear(&r);
}

FP_TEST_SUITE(register_ortplan)
{
    CU_pSuite s = CU_add_suite("ortplan", NULL, NULL);
    CU_add_test(s, "in place: a unary op", test_inplace_unary);
    CU_add_test(s, "in place: a Cast between types of one size", test_inplace_cast);
    CU_add_test(s, "in place: a fused convolution over its Sum", test_inplace_fused_sum);
    CU_add_test(s, "in place: never a math op", test_no_inplace_math);
    CU_add_test(s, "in place: never a binary op", test_no_inplace_binary);
    CU_add_test(s, "in place: at the last reader", test_inplace_last_reader);
    CU_add_test(s, "reuse at the same shape only", test_reuse_same_shape);
    CU_add_test(s, "unknown shapes through a Slice", test_unknown_through_slice);
    CU_add_test(s, "shapes an optimizing session folds", test_unknown_folded);
    CU_add_test(s, "arena chunks and regions", test_arena_chunks);
    CU_add_test(s, "initializers, pre-packing, Conv working buffer", test_weights_and_conv);
    CU_add_test(s, "Conv batches and groups, ConvTranspose", test_conv_batch_transpose);
    CU_add_test(s, "memory --planner", test_cli_planner);
    CU_add_test(s, "an output of unknown size", test_unknown_output);
    CU_add_test(s, "an initializer as a graph output", test_initializer_output);
    CU_add_test(s, "a view that writes a graph output", test_view_output);
    CU_add_test(s, "FusedGemm pre-packs as Gemm", test_fused_gemm_prepacked);
    CU_add_test(s, "FusedMatMul pre-packs as MatMul", test_fused_matmul_prepacked);
    CU_add_test(s, "Attention pre-packs per head", test_attention_prepacked);
    CU_add_test(s, "float16 weights: cast on every run, or folded and pre-packed", test_float16_weights);
    CU_add_test(s, "memory --target: the target's graph, NCHWc padded", test_cli_target);
}
