/* test_float16.c - float16 suite (passes/float16.c): a float16 Conv + BN + Relu on the CPU targets
 * has the Casts ONNX Runtime 1.30 writes (measured with onnxruntime-node: at basic and extended a
 * Cast on x, W, B and the output, the Relu apart; at all only x and the output, the Relu folded;
 * with the optimizations off one on every float16 input and the output, in stage "original"),
 * float32 inside; the cuda target keeps float16; a bad key value; the CPU EP's float16 kernels and
 * the function bodies ORT inlines; the names of the float32 outputs of the ops it converts. */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "tmodel.h"
#include "tutil.h"

enum { F16 = 10 };

static char *half_model(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F16, 4, (int64_t[]){1, 8, 8, 8});
    tb_init(b, "w", F16, 4, (int64_t[]){8, 8, 3, 3});
    tb_node(b, "Conv", "conv", "x,w", "c");
    const char *p[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++)
        tb_init(b, p[i], F16, 1, (int64_t[]){8});
    tb_node(b, "BatchNormalization", "bn", "c,scale,bias,mean,var", "y");
    tb_node(b, "Relu", "relu", "y", "z");
    tb_output(b, "z", F16, 4, (int64_t[]){1, 8, 6, 6});
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

static void test_casts(void)
{
    g_autofree char *path = half_model();
    g_autoptr(GError) err = NULL;
    fp_analysis_opts e = {.target = "ort-cpu-extended"}, all = {.target = "ort-cpu-all"}, gpu = {.target = "cuda"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &e, &err);
    g_autoptr(fp_analysis) b = fp_analysis_run(path, &all, &err);
    g_autoptr(fp_analysis) c = fp_analysis_run(path, &gpu, &err);
    CU_ASSERT_FATAL(a && b && c);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Cast"), 4);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu"), 1);
    const fp_node *conv = fp_node_lookup(a->model, "conv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(conv);
    CU_ASSERT_EQUAL(conv->outputs[0]->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(conv->inputs[0]->dtype, FP_DT_FLOAT);
    const fp_value *z = a->model->main->outputs->pdata[0];
    CU_ASSERT_EQUAL(z->dtype, FP_DT_FLOAT16);
    CU_ASSERT_STRING_EQUAL(z->producer->op_type, "Cast");
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "Cast"), 2); /* the weights' Casts folded */
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "Relu"), 0); /* folded into the float32 Conv */
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "Cast"), 0);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    /* ORT_DISABLE_ALL runs the Casts too, none folded (measured: 10 ops, Casts of x, w, the four
     * BatchNormalization initializers and the output): stage original, and the kept original */
    all.original = true;
    g_autoptr(fp_analysis) d = fp_analysis_run(path, &all, &err);
    CU_ASSERT_FATAL(d != NULL);
    const fp_analysis *const cpu[] = {a, b, d};
    for (size_t i = 0; i < G_N_ELEMENTS(cpu); i++) {
        CU_ASSERT_EQUAL(cpu[i]->res.stages[0].ops, 10);
        CU_ASSERT_EQUAL(cpu[i]->res.stages[0].conversions, 7);
        CU_ASSERT(cpu[i]->res.stages[0].latency_s > cpu[i]->res.stages[2].latency_s);
        CU_ASSERT_DOUBLE_EQUAL(cpu[i]->res.stages[2].speedup,
                               cpu[i]->res.stages[0].latency_s / cpu[i]->res.stages[2].latency_s, 1e-12);
    }
    CU_ASSERT_PTR_NULL(a->original);
    CU_ASSERT_EQUAL(tm_count_ops(d->original->main, "Cast"), 7);
    CU_ASSERT_DOUBLE_EQUAL(d->original_cost->total_s, d->res.stages[0].latency_s, 1e-12);
    CU_ASSERT_EQUAL(c->res.stages[0].ops, 3);
    tm_expect_target_error("[target]\nname = t\nrules = conv_bn\nfloat16 = always\n",
                           "[target] float16: 'always' (expected cast_after_fusion or cast_before_fusion)");
    g_unlink(path);
}

/* x [2, 8] float16 at opset `opset`: Relu, Softmax, Mul by Add(c1, c2) of two initializers, then
 * LayerNormalization. */
static char *kernel_model(int64_t opset)
{
    tb *b = tb_new(opset);
    tb_input(b, "x", F16, 2, (int64_t[]){2, 8});
    const char *inits[] = {"c1", "c2", "g", "b"};
    for (int i = 0; i < 4; i++)
        tb_init(b, inits[i], F16, 1, (int64_t[]){8});
    tb_node(b, "Relu", "relu", "x", "r");
    tb_node(b, "Softmax", "softmax", "r", "s");
    tb_node(b, "Add", "add", "c1,c2", "k");
    tb_node(b, "Mul", "mul", "s,k", "m");
    tb_node(b, "LayerNormalization", "ln", "m,g,b", "y");
    tb_output(b, "y", F16, 2, (int64_t[]){2, 8});
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* ORT 1.30's kernels of kernel_model (measured with onnxruntime-node at basic, extended and all):
 * the float16 Relu (opset 18) and Softmax run as their function bodies, the Max of Relu's in float32
 * between float32 nodes, the Add of two initializers is not folded (no float16 kernel), the
 * LayerNormalization keeps float16 (it has one). The four initializers are equal (zeros): ORT makes
 * them one, the Add reads it twice through one Cast, which its level-4 initializer folding leaves
 * (two output edges): 3 Casts at every level (with four distinct initializers, measured: 4, and 2
 * at all). At opset 13 the Relu is no function ORT inlines. */
static void test_kernels_and_bodies(void)
{
    g_autofree char *p18 = kernel_model(18), *p13 = kernel_model(13);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts e = {.target = "ort-cpu-extended"}, all = {.target = "ort-cpu-all", .device = "cpu-avx512"};
    g_autoptr(fp_analysis) a = fp_analysis_run(p18, &e, &err);
    g_autoptr(fp_analysis) b = fp_analysis_run(p18, &all, &err);
    g_autoptr(fp_analysis) c = fp_analysis_run(p13, &e, &err);
    CU_ASSERT_FATAL(a && b && c);
    static const char *const ops[] = {"Max", "ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Add", "Mul"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, ops[i]), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu") + tm_count_ops(a->model->main, "Softmax"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Cast"), 3);
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "Cast"), 3);
    const fp_node *ln = fp_node_lookup(a->model, "ln"), *relu = fp_node_lookup(a->model, "relu");
    CU_ASSERT_FATAL(ln && relu);
    CU_ASSERT_EQUAL(ln->inputs[0]->dtype, FP_DT_FLOAT16);
    CU_ASSERT_STRING_EQUAL(relu->op_type, "Max");
    CU_ASSERT_EQUAL(relu->outputs[0]->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "Relu"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "Softmax"), 0);
    g_unlink(p18);
    g_unlink(p13);
}

/* A float16 Sub of two initializers, views, then Neg, Add and Add, each run in float32: ONNX Runtime
 * 1.30's InsertCastTransformer names every float32 output anew ("InsertedPrecisionFreeCast_"
 * + the name, measured on tests/data/fuse/difftest/difftest_constant_folding_f16_names.onnx at
 * basic, extended and all), and a Cast back writes the original name only where a float16 op or
 * the graph reads it: the Neg and the inner Add write no tensor of the model, so
 * bench/provenance.py joins them with the Casts and the last Add into one cluster, as in ORT's. */
static void test_converted_names(void)
{
    const char *path = "tests/data/fuse/difftest/difftest_constant_folding_f16_names.onnx";
    static const char *const targets[] = {"ort-cpu-basic", "ort-cpu-all"};
    for (size_t t = 0; t < G_N_ELEMENTS(targets); t++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = targets[t], .device = "cpu-avx512"};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_FATAL(a != NULL);
        const fp_node *neg = fp_node_lookup(a->model, "n9_Neg"), *add = fp_node_lookup(a->model, "n11_Add"),
                      *sub = fp_node_lookup(a->model, "n4_Sub");
        CU_ASSERT_FATAL(neg && add && sub);
        CU_ASSERT_STRING_EQUAL(neg->outputs[0]->name, "n9_Neg_o0/float");
        CU_ASSERT_STRING_EQUAL(add->outputs[0]->name, "n11_Add_o0/float");
        CU_ASSERT_STRING_EQUAL(sub->outputs[0]->name, "n4_Sub_o0/float"); /* its Cast back writes n4_Sub_o0 */
        CU_ASSERT_EQUAL(add->outputs[0]->dtype, FP_DT_FLOAT);
        const fp_value *y = a->model->main->outputs->pdata[0];
        CU_ASSERT_STRING_EQUAL(y->producer->op_type, "Cast");
    }
}

/* A float16 MatMul [1, 1, 32] x [32, 128] into a com.microsoft FastGelu with a bias: the CPU EP has
 * no float16 FastGelu, the partitioner inlines its body, and ONNX Runtime 1.31.1's MatMulAddFusion
 * takes the MatMul and the body's bias Add at levels extended and all (Gemm, Reshapes around it),
 * not at basic (measured with onnxruntime-node's saved graphs). The fusion list keeps one record of
 * a candidate both phases look at: decoder_tiny's four refused MatMul + Add. */
static void test_matmul_add_after_partition(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F16, 3, (int64_t[]){1, 1, 32});
    tb_init(b, "w", F16, 2, (int64_t[]){32, 128});
    tb_init(b, "bias", F16, 1, (int64_t[]){128});
    tb_node(b, "MatMul", "mm", "x,w", "m");
    tb_domain(b, tb_node(b, "FastGelu", "fg", "m,bias", "y"), "com.microsoft");
    tb_output(b, "y", F16, 3, (int64_t[]){1, 1, 128});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    static const char *const targets[] = {"ort-cpu-basic", "ort-cpu-extended", "ort-cpu-all"};
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = targets[i]};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_FATAL(a != NULL);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Gemm"), i > 0);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "MatMul"), i == 0);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), i > 0 ? 2 : 3);
    }
    g_unlink(path);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .stop = FP_PIPELINE_FUSION};
    g_autoptr(fp_analysis) d = fp_analysis_run("models/decoder_tiny.onnx", &o, &err);
    CU_ASSERT_FATAL(d != NULL);
    guint records = 0;
    for (guint i = 0; i < d->res.fusions->fusions->len; i++)
        records += strcmp(((const fp_fusion *)d->res.fusions->fusions->pdata[i])->rule, "matmul_add_gemm") == 0;
    CU_ASSERT_EQUAL(records, 4);
}

/* x int32 [4] through an Abs, then eight Cast pairs: to int64 and back (twice more, once with an
 * Abs on the int64, once the int32 a graph output), to uint32 and back, to float32 and back, to
 * float64 and back, to int64 then float32, to uint32 then bool, each read by an Abs (a Not). */
static char *cast_pairs_model(void)
{
    enum { I32 = 6, I64 = 7, F32 = 1, U32 = 12, F64 = 11, BOOL = 9 };
    static const struct {
        int mid, dst;
        bool reader, output;
    } chains[] = {{I64, I32, false, false}, {U32, I32, false, false}, {F32, I32, false, false},
                  {F64, I32, false, false}, {I64, I32, true, false},  {I64, F32, false, false},
                  {I64, I32, false, true},  {U32, BOOL, false, false}};
    tb *b = tb_new(17);
    tb_input(b, "x", I32, 1, (int64_t[]){4});
    tb_node(b, "Abs", "pre", "x", "p");
    for (int i = 0; i < (int)G_N_ELEMENTS(chains); i++) {
        g_autofree char *a = g_strdup_printf("a%d", i + 1), *c = g_strdup_printf("b%d", i + 1),
                        *z = g_strdup_printf("z%d", i + 1), *r = g_strdup_printf("r%d", i + 1);
        tb_attr_i(b, tb_node(b, "Cast", a, "p", a), "to", chains[i].mid);
        tb_attr_i(b, tb_node(b, "Cast", c, a, c), "to", chains[i].dst);
        if (chains[i].output) {
            tb_output(b, c, chains[i].dst, 1, (int64_t[]){4});
            continue;
        }
        tb_node(b, chains[i].dst == BOOL ? "Not" : "Abs", z, c, z);
        tb_output(b, z, chains[i].dst, 1, (int64_t[]){4});
        if (chains[i].reader) {
            tb_node(b, "Abs", r, a, r);
            tb_output(b, r, chains[i].mid, 1, (int64_t[]){4});
        }
    }
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* ONNX Runtime's RemoveDuplicateCastTransformer runs at every level (measured with onnxruntime-node
 * 1.31.1's saved graphs of cast_pairs_model): at level disabled 18 nodes, Casts a2, b2, a3, b3 (a
 * uint32 and a float32 round trip lose precision), a5 (an Abs reads it), b6 (to float32), b7 (a
 * graph output), a8 and b8 (a lossy cast before a cast to bool); at basic, extended and all 17,
 * after its common-subexpression elimination made a1, a5, a6 and a7 one, and a2 and a8. The cuda
 * target keeps all 16 Casts. */
static void test_duplicate_casts(void)
{
    g_autofree char *path = cast_pairs_model();
    static const char *const targets[] = {"ort-cpu-basic", "ort-cpu-extended", "ort-cpu-all"};
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = targets[i], .original = true};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_FATAL(a != NULL);
        CU_ASSERT_EQUAL(a->res.stages[0].ops, 18);
        CU_ASSERT_EQUAL(a->res.stages[1].ops, 17);
        CU_ASSERT_EQUAL(a->res.stages[2].ops, 17);
        CU_ASSERT_EQUAL(tm_count_ops(a->original->main, "Cast"), 9);
        static const char *const kept[] = {"a2", "b2", "a3", "b3", "a5", "b6", "b7", "a8", "b8"};
        for (size_t k = 0; k < G_N_ELEMENTS(kept); k++)
            CU_ASSERT(fp_node_live(fp_node_lookup(a->original, kept[k])));
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Cast"), 8);
        CU_ASSERT_DOUBLE_EQUAL(a->original_cost->total_s, a->res.stages[0].latency_s, 1e-12);
    }
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "cuda"};
    g_autoptr(fp_analysis) c = fp_analysis_run(path, &o, &err);
    CU_ASSERT_FATAL(c != NULL);
    CU_ASSERT_EQUAL(c->res.stages[0].ops, 25);
    g_unlink(path);
}

/* A float16 Relu (opset 13: no function body ORT inlines, no float16 kernel) read by a Cast to
 * float32 into a Resize and by the Shape whose Slice and Concat size the Resize. ONNX Runtime
 * 1.31.1 (measured with onnxruntime-node's saved graphs): at level disabled the Cast back to
 * float16 that the Shape reads stays and the model's Cast goes with it (7 nodes: Cast, Relu, Cast,
 * Shape, Slice, Concat, Resize); at basic and all the Shape is folded, and the Cast back goes too
 * (Cast, Relu, Resize): a folded reader is no edge for the remover. */
static void test_folded_reader(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F16, 4, (int64_t[]){1, 4, 8, 8});
    tb_init_i64(b, "st", 1, (int64_t[]){0});
    tb_init_i64(b, "en", 1, (int64_t[]){2});
    tb_init_i64(b, "hw", 2, (int64_t[]){16, 16});
    tb_node(b, "Relu", "relu", "x", "r");
    tb_attr_i(b, tb_node(b, "Cast", "cast", "r", "rc"), "to", 1);
    tb_node(b, "Shape", "shape", "r", "s");
    tb_node(b, "Slice", "slice", "s,st,en", "sl");
    tb_attr_i(b, tb_node(b, "Concat", "concat", "sl,hw", "sz"), "axis", 0);
    tb_attr_s(b, tb_node(b, "Resize", "resize", "rc,,,sz", "y"), "mode", "nearest");
    tb_output(b, "y", 1, 4, (int64_t[]){1, 4, 16, 16});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    static const char *const targets[] = {"ort-cpu-basic", "ort-cpu-all"};
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = targets[i], .device = "cpu-avx512"};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_FATAL(a != NULL);
        CU_ASSERT_EQUAL(a->res.stages[0].ops + a->res.stages[0].folded, 7);
        CU_ASSERT_EQUAL(a->res.stages[2].ops, 3);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Cast"), 1);
    }
    g_unlink(path);
}

/* A float16 Mod (fmod 1) of two inputs runs as one Mod at every level, no Cast (measured with
 * onnxruntime-node 1.31.1: the CPU EP has a float16 Mod kernel). */
static void test_mod_kernel(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F16, 1, (int64_t[]){6});
    tb_input(b, "y", F16, 1, (int64_t[]){6});
    tb_attr_i(b, tb_node(b, "Mod", "mod", "x,y", "z"), "fmod", 1);
    tb_output(b, "z", F16, 1, (int64_t[]){6});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = "cpu-avx512"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL(a->res.stages[0].ops, 1);
    CU_ASSERT_EQUAL(a->res.stages[2].ops, 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Cast"), 0);
    g_unlink(path);
}

FP_TEST_SUITE(register_float16)
{
    CU_pSuite s = CU_add_suite("float16", NULL, NULL);
    CU_add_test(s, "casts", test_casts);
    CU_add_test(s, "kernels_and_bodies", test_kernels_and_bodies);
    CU_add_test(s, "converted_names", test_converted_names);
    CU_add_test(s, "matmul_add_after_partition", test_matmul_add_after_partition);
    CU_add_test(s, "duplicate_casts", test_duplicate_casts);
    CU_add_test(s, "folded_reader", test_folded_reader);
    CU_add_test(s, "mod_kernel", test_mod_kernel);
}
