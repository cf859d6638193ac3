/* test_nchwc.c - nchwc suite (passes/nchwc.c): the resnet_tiny sample on ort-cpu-all has the op
 * histogram ONNX Runtime 1.30 writes at level all (measured with onnxruntime-node: 9 nchwc Convs,
 * MaxPool, GlobalAveragePool, one ReorderOutput, Gemm); a first Conv of fewer channels than the
 * block reads NCHW; each refusal keeps its op NCHW with the reason; an Add folds into the blocked
 * Conv as its Sum input; a Mul by a per-channel constant runs as a blocked depthwise Conv; nothing
 * without the target's key or the device's block; a bad block. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "passes/cost.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1 };

static void test_resnet_tiny(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all"};
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Conv"), 9);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "FusedConv"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "MaxPool"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "GlobalAveragePool"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "ReorderOutput"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "ReorderInput"), 0); /* the first Conv reads its 3 channels as NCHW */
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), 0);          /* the residual Adds fold into the Convs */
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu"), 0);
    CU_ASSERT_EQUAL(a->res.layout.nchwc.converted, 11);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    /* the blocked tensors' layout is named with the block (cpu-avx2's 8), the NCHW ones' is not */
    uint32_t blocked = 0;
    for (guint i = 0; i < a->model->main->values->len; i++) {
        const fp_value *v = a->model->main->values->pdata[i];
        const char *l = fp_value_layout(v);
        bool nchwc_out = fp_node_live(v->producer) && strcmp(v->producer->domain, "com.microsoft.nchwc") == 0 &&
                         strcmp(v->producer->op_type, "ReorderOutput") != 0;
        if (fp_node_live(v->producer))
            CU_ASSERT_EQUAL(l != NULL, nchwc_out);
        blocked += l && strcmp(l, "NCHW8c") == 0;
    }
    CU_ASSERT(blocked >= 11);
    for (guint i = 0; i < a->model->main->nodes->len; i++) { /* a reorder is costed as a transpose */
        const fp_node *x = a->model->main->nodes->pdata[i];
        if (x->op == FP_OP_REORDER_OUTPUT)
            CU_ASSERT_EQUAL(fp_cost_class(x), FP_CLASS_TRANSPOSE);
    }
    /* at 0.7 of a transpose's work an element (MLAS's whole-block reorders, passes/cost.c) */
    uint32_t reorders = 0;
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *c = &a->res.cost->ops[i];
        if (c->node->op != FP_OP_REORDER_OUTPUT)
            continue;
        uint64_t elements = fp_value_bytes(c->node->outputs[0]) / 4;
        CU_ASSERT(elements > 0);
        CU_ASSERT_EQUAL(c->work, (uint64_t)((double)elements * 0.7));
        reorders++;
    }
    CU_ASSERT_EQUAL(reorders, 1);
    /* the extended level, and a device without NCHWc kernels, leave it NCHW */
    fp_analysis_opts e = {.target = "ort-cpu-extended"}, g = {.target = "ort-cpu-all", .device = "h100"};
    g_autoptr(fp_analysis) b = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &e, &err);
    g_autoptr(fp_analysis) c = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &g, &err);
    CU_ASSERT_FATAL(b && c);
    CU_ASSERT_EQUAL(b->res.layout.nchwc.converted, 0);
    CU_ASSERT_EQUAL(c->res.layout.nchwc.converted, 0);
    CU_ASSERT(tm_count_ops(b->model->main, "FusedConv") > 0);
}

/* x [1, cin, 8, 8] -> Conv (8 out, 3x3) -> Add(with a second Conv's output, when add) -> y; and a
 * MaxPool of `pool_c` channels. */
static char *conv_model(int64_t cin, bool add, int64_t pool_c)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, cin, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){16, cin, 3, 3});
    tb_init(b, "bias", F32, 1, (int64_t[]){16});
    tb_node(b, "Conv", "c1", "x,w,bias", "h");
    tb_init(b, "w2", F32, 4, (int64_t[]){16, 16, 1, 1});
    tb_init(b, "b2", F32, 1, (int64_t[]){16});
    tb_node(b, "Conv", "c2", "h,w2,b2", "h2");
    if (add) {
        tb_node(b, "Conv", "c3", "h2,w2,b2", "h3");
        tb_node(b, "Add", "add", "h3,h2", "y");
    } else {
        tb_node(b, "Relu", "relu", "h2", "y");
    }
    tb_output(b, "y", F32, -1, NULL);
    if (pool_c) {
        tb_input(b, "p", F32, 4, (int64_t[]){1, pool_c, 8, 8});
        tb_attr_ints(b, tb_node(b, "MaxPool", "pool", "p", "q"), "kernel_shape", 2, (int64_t[]){2, 2});
        tb_output(b, "q", F32, -1, NULL);
    }
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* The message of the first nchwc-kept finding about node `name`, or NULL. */
static const char *kept(const fp_analysis *a, const char *name)
{
    for (guint i = 0; i < a->diag->entries->len; i++) {
        const fp_diag_entry *e = a->diag->entries->pdata[i];
        if (strcmp(e->code, "nchwc-kept") == 0 && e->node && strcmp(e->node, name) == 0)
            return e->message;
    }
    return NULL;
}

static void test_conditions(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all"};
    /* 10 input channels (>= the block of 8, not a multiple of 4): c1 stays NCHW; 12 pool channels */
    g_autofree char *p1 = conv_model(10, false, 12);
    g_autoptr(fp_analysis) a = fp_analysis_run(p1, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL(kept(a, "c1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(kept(a, "c1"), "input channels not a multiple of 4"));
    CU_ASSERT_PTR_NOT_NULL(kept(a, "pool"));
    CU_ASSERT_PTR_NOT_NULL(strstr(kept(a, "pool"), "channels not a multiple of the block"));
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "ReorderInput"), 1); /* c2 reads c1's NCHW output */
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu"), 0);         /* folded into c2 */
    /* 3 input channels: read as NCHW; the Add folds into c3 as its Sum input */
    g_autofree char *p2 = conv_model(3, true, 0);
    g_autoptr(fp_analysis) b = fp_analysis_run(p2, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "ReorderInput"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "Add"), 0);
    CU_ASSERT_EQUAL(b->res.layout.nchwc.sum_fused, 1);
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "ReorderOutput"), 1);
    const fp_node *c3 = fp_node_lookup(b->model, "c3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
    CU_ASSERT_EQUAL(c3->n_inputs, 4);
    CU_ASSERT_STRING_EQUAL(c3->domain, "com.microsoft.nchwc");
    g_unlink(p1);
    g_unlink(p2);
}

/* x [1, 8, 8, 8] -> Conv (cout) -> h; then `se`: a squeeze-and-excitation (GlobalAveragePool, a
 * 1x1 Conv, Sigmoid, Mul of h by the [1, cout, 1, 1] scale), else x * HardSigmoid(x) on h. The
 * Mul's output y is the graph's output, or with `tail` read by a Relu whose output is. */
static char *mul_model(int64_t cout, bool se, bool tail)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){cout, 8, 3, 3});
    tb_init(b, "bias", F32, 1, (int64_t[]){cout});
    tb_attr_ints(b, tb_node(b, "Conv", "c1", "x,w,bias", "h"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    if (se) {
        tb_node(b, "GlobalAveragePool", "gap", "h", "g");
        tb_init(b, "w2", F32, 4, (int64_t[]){cout, cout, 1, 1});
        tb_init(b, "b2", F32, 1, (int64_t[]){cout});
        tb_node(b, "Conv", "fc", "g,w2,b2", "f");
        tb_node(b, "Sigmoid", "gate", "f", "s");
        tb_node(b, "Mul", "scale", "h,s", "y");
    } else {
        tb_node_t *hs = tb_node(b, "HardSigmoid", "hsig", "h", "s");
        tb_attr_f(b, hs, "alpha", 1.0f / 6.0f);
        tb_node(b, "Mul", "hswish", "h,s", "y");
    }
    if (tail)
        tb_node(b, "Relu", "tail", "y", "z");
    tb_output(b, tail ? "z" : "y", F32, -1, NULL);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* On a block of 16 (measured, ONNX Runtime 1.30): HardSwish folds into a blocked Conv of 24
 * channels (1.5 blocks) but not of 8 (fewer than a block), nor (1.31.1) when its Mul's output is a
 * graph output; a squeeze-and-excitation's Mul by a [1, C, 1, 1] scale runs NCHW between
 * ReorderOutputs. */
static void test_mul_rules(void)
{
    const char *ini = "[device]\ndescription=x\ntarget=ort-cpu\nbandwidth=1e10\nmemory_bytes=1e9\n"
                      "launch_overhead=1e-6\nalign_bytes=64\nnchwc_block=16\n[peak]\nfp32=1e11\n";
    g_autofree char *dev = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = dev};
    static const struct {
        int64_t cout;
        bool tail, folds;
    } hs[] = {{24, true, true}, {16, true, true}, {8, true, false}, {24, false, false}};
    for (size_t i = 0; i < G_N_ELEMENTS(hs); i++) {
        g_autofree char *p = mul_model(hs[i].cout, false, hs[i].tail);
        g_autoptr(fp_analysis) a = fp_analysis_run(p, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "HardSigmoid"), hs[i].folds ? 0 : 1);
        g_unlink(p);
    }
    g_autofree char *p = mul_model(32, true, false);
    g_autoptr(fp_analysis) a = fp_analysis_run(p, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const fp_node *scale = fp_node_lookup(a->model, "scale");
    CU_ASSERT_PTR_NOT_NULL_FATAL(scale);
    CU_ASSERT_STRING_EQUAL(scale->domain, "");                         /* not blocked */
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "ReorderOutput"), 2); /* h and the scale */
    g_unlink(p);
    g_unlink(dev);
}

/* b written to a temporary file (b freed) and analyzed for target ort-cpu-all on device (NULL: the
 * default); the analysis must succeed. */
static fp_analysis *analyze_all(tb *b, const char *device)
{
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = device};
    fp_analysis *a = fp_analysis_run(path, &o, &err);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

/* An Add of two blocked Conv outputs whose spatial dims ONNX Runtime cannot show equal: with
 * symbolic H and W, the Conv of 8 input channels between them reads NCHW and its shape is its own,
 * so the Add runs blocked, unfolded (ORT 1.30, measured: Reshapes around a plain Add); with static
 * H and W, shape inference knows them and the Add folds into the last Conv. */
static void test_symbolic_add(void)
{
    for (int sym = 0; sym < 2; sym++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 4, sym ? (int64_t[]){1, 16, -1, -1} : (int64_t[]){1, 16, 8, 8});
        tb_init(b, "w1", F32, 4, (int64_t[]){8, 16, 1, 1});
        tb_init(b, "w2", F32, 4, (int64_t[]){16, 8, 1, 1});
        tb_node(b, "Conv", "c1", "x,w1", "a");
        tb_node(b, "Conv", "c2", "a,w2", "h");
        tb_node(b, "Conv", "c3", "h,w1", "c");
        tb_node(b, "Add", "add", "a,c", "y");
        tb_output(b, "y", F32, -1, NULL);
        g_autoptr(fp_analysis) a = analyze_all(b, "cpu-avx512");
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), sym ? 1 : 0);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "ReorderOutput"), 2);
        CU_ASSERT_EQUAL(a->res.layout.nchwc.sum_fused, sym ? 0 : 1);
    }
}

/* The shipped CPU profiles block as ONNX Runtime's MLAS does on their ISA: cpu-avx512 by 16
 * (AVX-512F), cpu-avx2 by 8; the report's notes say which block the analysis assumed and why. */
static void test_isa_profiles(void)
{
    static const struct {
        const char *device, *isa, *other;
        uint64_t block;
    } p[] = {{"cpu-avx512", "AVX-512F", "--device cpu-avx2", 16},
             {"cpu-avx2", "no AVX-512F", "--device cpu-avx512", 8}};
    for (size_t i = 0; i < G_N_ELEMENTS(p); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = "ort-cpu-all", .device = p[i].device};
        g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->device->nchwc_block, p[i].block);
        const fp_diag_entry *why = fp_diag_find(a->diag, "nchwc-block");
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        g_autofree char *head = g_strdup_printf("NCHWc block %" G_GUINT64_FORMAT ": device %s's", p[i].block,
                                                p[i].device);
        CU_ASSERT(g_str_has_prefix(why->message, head));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->message, p[i].isa));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->message, p[i].other));
    }
    /* no note where nothing blocks: the extended level, a GPU */
    fp_analysis_opts e = {.target = "ort-cpu-extended", .device = "cpu-avx512"},
                     g = {.target = "ort-cpu-all", .device = "h100"};
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) b = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &e, &err);
    g_autoptr(fp_analysis) c = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &g, &err);
    CU_ASSERT_FATAL(b && c);
    CU_ASSERT_PTR_NULL(fp_diag_find(b->diag, "nchwc-block"));
    CU_ASSERT_PTR_NULL(fp_diag_find(c->diag, "nchwc-block"));
}

/* x [1, 16, 8, 8] -> Conv (16 out) -> h, read by a Neg and by a Mul by a constant of shape
 * `scale` (rank `rank`), then a Relu. */
static char *scale_model(int rank, const int64_t *scale)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_init(b, "bias", F32, 1, (int64_t[]){16});
    tb_attr_ints(b, tb_node(b, "Conv", "c1", "x,w,bias", "h"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Neg", "neg", "h", "n");
    tb_init(b, "s", F32, rank, scale);
    tb_node(b, "Mul", "scale", "s,h", "m");
    tb_node(b, "Relu", "relu", "m", "y");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "n", F32, -1, NULL);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* On a block of 16 (measured, ONNX Runtime 1.30): a Mul of a blocked tensor by a constant of one
 * value per channel runs as a blocked depthwise Conv, the Relu after it folded; by a [1, 1, 1, 1]
 * constant it runs NCHW. */
static void test_scale_mul(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = "cpu-avx512"};
    g_autofree char *p1 = scale_model(4, (int64_t[]){1, 16, 1, 1});
    g_autoptr(fp_analysis) a = fp_analysis_run(p1, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const fp_node *m = fp_node_lookup(a->model, "scale");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_STRING_EQUAL(m->op_type, "Conv");
    CU_ASSERT_STRING_EQUAL(m->domain, "com.microsoft.nchwc");
    CU_ASSERT_STRING_EQUAL(m->inputs[1]->name, "s");
    CU_ASSERT_STRING_EQUAL(fp_node_attr_string(m, "activation", ""), "Relu");
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Mul"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu"), 0);
    g_autofree char *p2 = scale_model(4, (int64_t[]){1, 1, 1, 1});
    g_autoptr(fp_analysis) b = fp_analysis_run(p2, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(tm_count_ops(b->model->main, "Mul"), 1);
    g_unlink(p1);
    g_unlink(p2);
}

/* The blocked Conv's cost of a fused activation: a Clip (ReLU6) is a pass of its own over the
 * output MLAS wrote (post bytes, post_s in its time), a HardSigmoid one that counts those bytes
 * twice (MlasActivation's rate for it), a Relu none (applied in the kernel). */
static void test_activation_pass(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 8, 8});
    tb_init(b, "w1", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_init(b, "w2", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_init_f32(b, "lo", 0, (float[]){0});
    tb_init_f32(b, "hi", 0, (float[]){6});
    tb_attr_ints(b, tb_node(b, "Conv", "c1", "x,w1", "h"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Clip", "six", "h,lo,hi", "a");
    tb_init(b, "w3", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_attr_ints(b, tb_node(b, "Conv", "c2", "a,w2", "g"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "HardSigmoid", "hard", "g", "k");
    tb_attr_ints(b, tb_node(b, "Conv", "c3", "k,w3", "m"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Relu", "relu", "m", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = "cpu-avx512"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int seen = 0, clip = 0, hard = 0;
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *c = &a->res.cost->ops[i];
        if (c->cls != FP_CLASS_NCHWC_CONV)
            continue;
        const char *act = fp_node_attr_string(c->node, "activation", "");
        seen++;
        if (strcmp(act, "Clip") == 0) {
            clip++;
            CU_ASSERT_EQUAL(c->post, c->node->metrics.bytes_out);
            CU_ASSERT_TRUE(c->post >= 16 * 8 * 8 * 4);
            CU_ASSERT_TRUE(c->rl.post_s > 0);
            CU_ASSERT_DOUBLE_EQUAL(c->rl.time_s,
                                   fmax(c->rl.compute_s, c->rl.memory_s) + c->rl.cold_s + c->rl.post_s + c->rl.launch_s,
                                   1e-15);
        } else if (strcmp(act, "HardSigmoid") == 0) {
            hard++;
            CU_ASSERT_EQUAL(c->post, 2 * c->node->metrics.bytes_out);
        } else {
            CU_ASSERT_STRING_EQUAL(act, "Relu");
            CU_ASSERT_EQUAL(c->post, 0);
            CU_ASSERT_DOUBLE_EQUAL(c->rl.post_s, 0, 0);
        }
    }
    CU_ASSERT_EQUAL(seen, 3);
    CU_ASSERT_EQUAL(clip, 1);
    CU_ASSERT_EQUAL(hard, 1);
    g_unlink(path);
}

/* x -> Conv (16 channels) h -> Transpose to NHWC -> Softmax (and, when `second`, h -> Neg): the
 * Transpose becomes a ReorderOutput writing NHWC. Read by it alone, h is no longer there in NCHW: the
 * Conv writes a blocked tensor of a new name, as ONNX Runtime's NCHWc tensors are (its graph of
 * ConvNeXt has no Conv output name left before the blocks' Transposes); with a second reader, h
 * stays the blocked tensor's name. */
static void test_transpose_reorder(void)
{
    for (int second = 0; second < 2; second++) {
        tb *b = tb_new(17);
        tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 8, 8});
        tb_init(b, "w", F32, 4, (int64_t[]){16, 16, 1, 1});
        tb_init(b, "bias", F32, 1, (int64_t[]){16});
        tb_node(b, "Conv", "conv", "x,w,bias", "h");
        tb_attr_ints(b, tb_node(b, "Transpose", "t", "h", "n"), "perm", 4, (int64_t[]){0, 2, 3, 1});
        tb_node(b, "Softmax", "sm", "n", "y");
        tb_output(b, "y", F32, -1, NULL);
        if (second) {
            tb_node(b, "Neg", "neg", "h", "z");
            tb_output(b, "z", F32, -1, NULL);
        }
        g_autoptr(fp_analysis) a = analyze_all(b, "cpu-avx512");
        const fp_node *t = fp_node_lookup(a->model, "t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(t->op_type, "ReorderOutput");
        CU_ASSERT_STRING_EQUAL(t->inputs[0]->name, second ? "h" : "h/nchwc");
        CU_ASSERT_PTR_EQUAL(t->inputs[0]->producer, fp_node_lookup(a->model, "conv"));
    }
}

/* A bottleneck block (file order c1, c2, c3, down, then the Add folded into c3): ONNX Runtime's
 * NCHWc transformer adds its blocked nodes in its topological order (down first: the last input of
 * c3 walked first), and its execution order then walks the highest new index first, so c1 and c2
 * run before down (ResNet-50's first run at level all, docs/memory.md). */
static void test_ort_order(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 32, 8, 8});
    tb_init(b, "w1", F32, 4, (int64_t[]){16, 32, 1, 1});
    tb_init(b, "w2", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_init(b, "w3", F32, 4, (int64_t[]){32, 16, 1, 1});
    tb_init(b, "wd", F32, 4, (int64_t[]){32, 32, 1, 1});
    tb_node(b, "Conv", "c1", "x,w1", "h1");
    tb_attr_ints(b, tb_node(b, "Conv", "c2", "h1,w2", "h2"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Conv", "c3", "h2,w3", "h3");
    tb_node(b, "Conv", "down", "x,wd", "d");
    tb_node(b, "Add", "add", "h3,d", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_analysis) a = analyze_all(b, NULL);
    CU_ASSERT_EQUAL(a->res.layout.nchwc.converted, 4);
    uint32_t n = 0;
    g_autofree fp_node **order = fp_graph_ort_order(a->model->main, &n);
    int at[3] = {-1, -1, -1};
    static const char *const names[] = {"c1", "c2", "down"};
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            if (strcmp(order[i]->name, names[k]) == 0)
                at[k] = (int)i;
    CU_ASSERT(at[0] >= 0 && at[0] < at[1] && at[1] < at[2]);
}

static void test_bad_block(void)
{
    const char *ini = "[device]\ndescription=x\ntarget=ort-cpu\nbandwidth=1e10\nmemory_bytes=1e9\n"
                      "launch_overhead=1e-6\nalign_bytes=64\nnchwc_block=12\n[peak]\nfp32=1e11\n";
    g_autofree char *path = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(path, &err);
    CU_ASSERT_PTR_NULL(d);
    tu_expect_error(err, "nchwc_block");
    tu_expect_error(err, "12 is not a power of two");
    g_unlink(path);
}

FP_TEST_SUITE(register_nchwc)
{
    CU_pSuite s = CU_add_suite("nchwc", NULL, NULL);
    CU_add_test(s, "resnet_tiny", test_resnet_tiny);
    CU_add_test(s, "conditions", test_conditions);
    CU_add_test(s, "mul_rules", test_mul_rules);
    CU_add_test(s, "symbolic_add", test_symbolic_add);
    CU_add_test(s, "isa_profiles", test_isa_profiles);
    CU_add_test(s, "activation_pass", test_activation_pass);
    CU_add_test(s, "scale_mul", test_scale_mul);
    CU_add_test(s, "transpose_reorder", test_transpose_reorder);
    CU_add_test(s, "bad_block", test_bad_block);
    CU_add_test(s, "ort_order", test_ort_order);
}
