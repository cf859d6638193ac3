/* test_layout.c - layout-conversion elimination (Transpose chains and push-through, Cast round
 * trips, TransData pairs), the roofline cost model on a round-number profile, and the golden
 * stage table of `fuseplan report`. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "frontends/onnx/onnx.h"
#include "passes/cost.h"
#include "passes/layout.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "reports/report.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, I8 = 3, I32 = 6, BOOL = 9, F16 = 10 };

/* Runs the layout pass; returns the diagnostics (caller frees). */
static fp_diag *layout(fp_model *m, const char *target, fp_layout_result *res)
{
    fp_diag *d = fp_diag_new();
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = target ? fp_target_load(target, &err) : NULL;
    CU_ASSERT_FATAL(fp_pass_layout(m, t, res, d, &err));
    CU_ASSERT(fp_model_verify(m, &err));
    if (err)
        fprintf(stderr, "\n  verify: %s", err->message);
    return d;
}

static bool removed(fp_model *m, const char *node)
{
    fp_node *n = fp_node_lookup(m, node);
    return n && (n->flags & FP_NODE_REMOVED);
}

static bool diag_has(const fp_diag *d, const char *code, const char *needle)
{
    for (guint i = 0; i < d->entries->len; i++) {
        const fp_diag_entry *e = d->entries->pdata[i];
        if (strcmp(e->code, code) == 0 && strstr(e->message, needle))
            return true;
    }
    return false;
}

static void test_transpose_pairs(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 6});
    tb_node_t *t0 = tb_node(b, "Transpose", "ident", "x", "a");
    tb_attr_ints(b, t0, "perm", 4, (int64_t[]){0, 1, 2, 3});
    tb_node_t *t1 = tb_node(b, "Transpose", "to_nhwc", "a", "b");
    tb_attr_ints(b, t1, "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node_t *t2 = tb_node(b, "Transpose", "to_nchw", "b", "c");
    tb_attr_ints(b, t2, "perm", 4, (int64_t[]){0, 3, 1, 2});
    tb_node(b, "Relu", "relu", "c", "y");
    /* two quarter turns merge into one Transpose */
    tb_node_t *t3 = tb_node(b, "Transpose", "q1", "y", "d");
    tb_attr_ints(b, t3, "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node_t *t4 = tb_node(b, "Transpose", "q2", "d", "z");
    tb_attr_ints(b, t4, "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_layout_result res;
    g_autoptr(fp_diag) d = layout(m, NULL, &res);
    CU_ASSERT(removed(m, "ident"));
    CU_ASSERT(removed(m, "to_nhwc"));
    CU_ASSERT(removed(m, "to_nchw"));
    CU_ASSERT(removed(m, "q1"));
    CU_ASSERT_FALSE(removed(m, "q2"));
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "relu")->inputs[0], fp_graph_find(m->main, "x"));
    const fp_attr *perm = fp_node_attr(fp_node_lookup(m, "q2"), "perm");
    /* composite of [0,2,3,1] twice: [0,3,1,2] */
    CU_ASSERT_EQUAL(perm->u.ints[1], 3);
    CU_ASSERT_EQUAL(perm->u.ints[2], 1);
    CU_ASSERT_EQUAL(perm->u.ints[3], 2);
    CU_ASSERT_EQUAL(res.conversions_before, 5);
    CU_ASSERT_EQUAL(res.conversions_after, 1);
    CU_ASSERT_EQUAL(res.merged, 1);
    CU_ASSERT(diag_has(d, "layout-removed", "identity permutation"));
}

static void test_push_through(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 6});
    tb_init(b, "k", F32, 1, (int64_t[]){3});
    tb_input(b, "other", F32, 4, (int64_t[]){1, 8, 6, 3});
    tb_node_t *t1 = tb_node(b, "Transpose", "t1", "x", "a");
    tb_attr_ints(b, t1, "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node(b, "Sigmoid", "sig", "a", "s");
    tb_node(b, "Mul", "scale", "s,k", "sk"); /* constant operand: its broadcast is permuted at compile time */
    tb_node_t *t2 = tb_node(b, "Transpose", "t2", "sk", "y");
    tb_attr_ints(b, t2, "perm", 4, (int64_t[]){0, 3, 1, 2});
    /* a second chain through an Add of a runtime tensor: cannot move, kept with a reason */
    tb_node(b, "Softmax", "barrier", "y", "ys"); /* not elementwise: t2 and t3 cannot pair */
    tb_node_t *t3 = tb_node(b, "Transpose", "t3", "ys", "b");
    tb_attr_ints(b, t3, "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node(b, "Add", "add", "b,other", "c");
    tb_node_t *t4 = tb_node(b, "Transpose", "t4", "c", "z");
    tb_attr_ints(b, t4, "perm", 4, (int64_t[]){0, 3, 1, 2});
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_layout_result res;
    g_autoptr(fp_diag) d = layout(m, NULL, &res);
    CU_ASSERT(removed(m, "t1"));
    CU_ASSERT(removed(m, "t2"));
    CU_ASSERT_FALSE(removed(m, "t3"));
    CU_ASSERT_FALSE(removed(m, "t4"));
    CU_ASSERT_EQUAL(res.pushed, 2);
    g_autofree char *s = fp_shape_to_string(&fp_graph_find(m->main, "s")->shape);
    CU_ASSERT_STRING_EQUAL(s, "1x3x8x6"); /* the chain now runs in x's layout */
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "barrier")->inputs[0], fp_graph_find(m->main, "sk"));
    CU_ASSERT(diag_has(d, "layout-kept", "t3"));
}

static void test_casts(void)
{
    for (int allow = 0; allow < 2; allow++) {
        tb *b = tb_new(13);
        tb_input(b, "h", F16, 2, (int64_t[]){4, 4});
        tb_input(b, "f", F32, 2, (int64_t[]){4, 4});
        tb_node_t *c1 = tb_node(b, "Cast", "widen", "h", "hf");
        tb_attr_i(b, c1, "to", F32);
        tb_node_t *c2 = tb_node(b, "Cast", "back", "hf", "hh");
        tb_attr_i(b, c2, "to", F16);
        tb_node(b, "Relu", "r1", "hh", "o1");
        tb_node_t *c3 = tb_node(b, "Cast", "narrow", "f", "fh");
        tb_attr_i(b, c3, "to", F16);
        tb_node_t *c4 = tb_node(b, "Cast", "up", "fh", "ff");
        tb_attr_i(b, c4, "to", F32);
        tb_node_t *c5 = tb_node(b, "Cast", "noop", "ff", "fff");
        tb_attr_i(b, c5, "to", F32);
        tb_node(b, "Relu", "r2", "fff", "o2");
        tb_output(b, "o1", F16, -1, NULL);
        tb_output(b, "o2", F32, -1, NULL);
        g_autoptr(fp_model) m = tu_load_tb(b);
        tb_free(b);
        g_autofree char *ini = NULL;
        if (allow) {
            const char *text = "[target]\nname = lax\nrules = conv_bn\n[layout]\ndrop_narrowing_casts = true\n";
            ini = tu_write_temp(text, strlen(text), ".ini");
        }
        fp_layout_result res;
        g_autoptr(fp_diag) d = layout(m, ini, &res);
        CU_ASSERT(removed(m, "widen") && removed(m, "back"));
        CU_ASSERT(removed(m, "noop"));
        CU_ASSERT_EQUAL(removed(m, "narrow"), allow);
        CU_ASSERT_EQUAL(removed(m, "up"), allow);
        if (!allow)
            CU_ASSERT(diag_has(d, "layout-precision", "loses precision"));
        if (ini)
            g_unlink(ini);
    }
}

static void test_transdata(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 8, 8});
    tb_node_t *a = tb_node(b, "TransData", "to5hd", "x", "a");
    tb_attr_s(b, a, "src_format", "NCHW");
    tb_attr_s(b, a, "dst_format", "NC1HWC0");
    tb_node_t *c = tb_node(b, "TransData", "back", "a", "c");
    tb_attr_s(b, c, "src_format", "NC1HWC0");
    tb_attr_s(b, c, "dst_format", "NCHW");
    tb_node(b, "Relu", "relu", "c", "r");
    tb_node_t *e = tb_node(b, "TransData", "to_fz", "r", "e");
    tb_attr_s(b, e, "src_format", "NCHW");
    tb_attr_s(b, e, "dst_format", "FRACTAL_Z");
    tb_node_t *f = tb_node(b, "TransData", "to_nhwc", "e", "y");
    tb_attr_s(b, f, "src_format", "FRACTAL_Z");
    tb_attr_s(b, f, "dst_format", "NHWC");
    tb_output(b, "y", F32, 4, (int64_t[]){1, 8, 8, 16});
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_layout_result res;
    g_autoptr(fp_diag) d = layout(m, NULL, &res);
    CU_ASSERT(removed(m, "to5hd") && removed(m, "back"));
    CU_ASSERT_FALSE(removed(m, "to_fz"));
    CU_ASSERT(diag_has(d, "layout-kept", "not inverse"));
}

/* b loaded into *m (b freed) and costed on tests/data/devices/round.ini (*dev). */
static fp_cost_result *cost_on_round(tb *b, fp_model **m, fp_device **dev)
{
    *m = tu_load_tb(b);
    tb_free(b);
    g_autoptr(GError) err = NULL;
    *dev = fp_device_load(FP_SOURCE_DIR "/tests/data/devices/round.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*dev);
    return fp_pass_cost(*m, *dev, FP_DT_UNDEFINED, 0, NULL);
}

/* b costed by cost_on_round: its ops are of the n classes want, in order. */
static void expect_classes(tb *b, const fp_op_class *want, uint32_t n)
{
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, n);
    for (uint32_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(cost->ops[i].cls, want[i]);
}

/* tests/data/devices/round.ini as a key file, for a test to change before cost_on_keyfile. */
static GKeyFile *round_keyfile(void)
{
    g_autoptr(GError) err = NULL;
    GKeyFile *kf = g_key_file_new();
    CU_ASSERT_FATAL(
        g_key_file_load_from_file(kf, FP_SOURCE_DIR "/tests/data/devices/round.ini", G_KEY_FILE_NONE, &err));
    return kf;
}

/* m costed on the profile kf holds. */
/* The device profile kf says (asserted to load). */
static fp_device *device_of_keyfile(GKeyFile *kf)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
    g_autofree char *path = tu_write_temp(text, strlen(text), ".ini");
    fp_device *dev = fp_device_load(path, &err);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    return dev;
}

static fp_cost_result *cost_on_keyfile(fp_model *m, GKeyFile *kf)
{
    g_autoptr(fp_device) dev = device_of_keyfile(kf);
    return fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
}

/* m costed on round.ini, with nchwc_block 16 when blocked. */
static fp_cost_result *cost_on_round_blocked(fp_model *m, bool blocked)
{
    g_autoptr(GKeyFile) kf = round_keyfile();
    if (blocked)
        g_key_file_set_integer(kf, "device", "nchwc_block", 16);
    return cost_on_keyfile(m, kf);
}

/* The model of b (freed) with the float outputs named by NULL-terminated `outputs`. */
static fp_model *load_with_outputs(tb *b, const char *const *outputs)
{
    for (; *outputs; outputs++)
        tb_output(b, *outputs, F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

/* Conv 1x16x32x32 -> 1x32x32x32 (3x3, pad 1) and a Relu, costed by cost_on_round. */
static fp_cost_result *conv_relu_on_round(fp_model **m, fp_device **dev)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 32, 32});
    tb_init(b, "w", F32, 4, (int64_t[]){32, 16, 3, 3});
    tb_node_t *c = tb_node(b, "Conv", "conv", "x,w", "y");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Relu", "relu", "y", "z");
    tb_output(b, "z", F32, -1, NULL);
    return cost_on_round(b, m, dev);
}

/* x [2, 4, 8] reshaped to [2, -1] through Shape, Gather (its index from a Constant), Unsqueeze and
 * Concat, then a Relu. */
static tb *folded_graph(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 4, 8});
    tb_init_i64(b, "minus1", 1, (int64_t[]){-1});
    tb_attr_i(b, tb_node(b, "Constant", "idx", "", "i0"), "value_int", 0);
    tb_node(b, "Shape", "shape", "x", "s");
    tb_attr_i(b, tb_node(b, "Gather", "gather", "s,i0", "d0"), "axis", 0);
    tb_attr_ints(b, tb_node(b, "Unsqueeze", "unsq", "d0", "d0u"), "axes", 1, (int64_t[]){0});
    tb_attr_i(b, tb_node(b, "Concat", "concat", "d0u,minus1", "target"), "axis", 0);
    tb_node(b, "Reshape", "reshape", "x,target", "r");
    tb_node(b, "Relu", "relu", "r", "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* The shape computations of folded_graph, folded at analysis time, cost nothing by default and one
 * launch each with FP_COST_RUN_FOLDED (ONNX Runtime at ORT_DISABLE_ALL runs them), the Constant
 * still nothing: an initializer to every runtime. The stage "original" counts them on an ONNX
 * Runtime target, not on GE's, and the analysis's per-op costs of that stage agree with it. */
static void test_folded_cost(void)
{
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) folded = cost_on_round(folded_graph(), &m, &dev);
    g_autoptr(fp_cost_result) run = fp_pass_cost(m, dev, FP_DT_UNDEFINED, FP_COST_RUN_FOLDED, NULL);
    double launches = 0;
    for (const char *const *n = (const char *[]){"shape", "gather", "unsq", "concat", NULL}; *n; n++) {
        const fp_node *nd = fp_node_lookup(m, *n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(nd);
        CU_ASSERT_TRUE(nd->flags & FP_NODE_FOLDED);
        launches += fp_device_launch(dev, fp_cost_class(nd));
    }
    CU_ASSERT_TRUE(fp_node_lookup(m, "idx")->flags & FP_NODE_FOLDED);
    CU_ASSERT_EQUAL(run->n_ops, folded->n_ops + 4); /* not the Constant */
    CU_ASSERT(launches > 0);
    CU_ASSERT_DOUBLE_EQUAL(run->total_s - folded->total_s, launches, 1e-12);

    tb *b = folded_graph();
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    const char *targets[] = {"ort-cpu-basic", "ascend910b"};
    uint32_t original[2];
    for (int t = 0; t < 2; t++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = targets[t], .device = "cpu-avx512", .original = true};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        if (t == 0) /* GE's stage "original" has its formats, which the kept model has not */
            CU_ASSERT_DOUBLE_EQUAL(a->original_cost->total_s, a->res.stages[0].latency_s, 1e-12);
        original[t] = a->original_cost->n_ops;
    }
    CU_ASSERT_EQUAL(original[0], original[1] + 4);
    g_unlink(path);
    tm_expect_target_error("[target]\nname = t\nrules = conv_bn\noriginal_runs_shape_ops = maybe\n",
                           "[target] original_runs_shape_ops: 'maybe' (expected true or false)");
}

/* Cold weights: the round profile given one cache level of capacity C, the Conv and Relu graph's
 * footprint F (the conv's 18,432 weight bytes and both kernels' 262,144 output bytes) reads
 * clamp(F / C - 1, 0, 1) of its weights from memory ([cache] last_from: from 1, the default; at
 * 0.7, clamp(F / C - 0.7, 0, 1)); with a weight_bandwidth they leave the roofline's
 * traffic and cost their bytes at that rate on top, without one the cost stays as it was. */
static void test_cold_weights(void)
{
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) warm = conv_relu_on_round(&m, &dev);
    const double weights = 4.0 * 32 * 16 * 9, footprint = weights + 4.0 * 2 * 32 * 32 * 32;
    CU_ASSERT_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 0); /* no [cache] */
    CU_ASSERT_EQUAL(warm->ops[0].cold, 0);
    dev->cache[0] = (fp_cache_level){(uint64_t)footprint, 1e12};
    CU_ASSERT_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 0);
    dev->cache[0].bytes = (uint64_t)(footprint / 2);
    CU_ASSERT_DOUBLE_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 1, 1e-12);
    dev->cache[0].bytes = (uint64_t)(footprint / 1.25);
    CU_ASSERT_DOUBLE_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 0.25, 1e-5);
    g_autoptr(fp_cost_result) unpriced = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(unpriced->ops[0].cold, (uint64_t)(0.25 * weights));
    CU_ASSERT_EQUAL(unpriced->ops[1].cold, 0); /* a Relu reads no weights */
    CU_ASSERT_DOUBLE_EQUAL(unpriced->ops[0].rl.cold_s, 0, 0);
    dev->weight_bandwidth = 1e8;
    g_autoptr(fp_cost_result) cold = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    const fp_roofline *r = &cold->ops[0].rl;
    CU_ASSERT_DOUBLE_EQUAL(r->cold_s, 0.25 * weights / 1e8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r->time_s, fmax(r->compute_s, r->memory_s) + r->cold_s + r->launch_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r->time_s - unpriced->ops[0].rl.time_s, r->cold_s, 1e-12); /* compute-bound */
    CU_ASSERT_DOUBLE_EQUAL(cold->ops[1].rl.time_s, unpriced->ops[1].rl.time_s, 1e-15);
    /* [cache] last_from 0.7: the loss starts at 0.7 C, all lost at 1.7 C */
    dev->last_from = 0.7;
    dev->cache[0].bytes = (uint64_t)footprint;
    CU_ASSERT_DOUBLE_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 0.3, 1e-12);
    dev->cache[0].bytes = (uint64_t)(footprint / 0.65);
    CU_ASSERT_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 0);
    dev->cache[0].bytes = (uint64_t)(footprint / 1.7);
    CU_ASSERT_DOUBLE_EQUAL(fp_cost_cold_fraction(m->main, dev, FP_DT_UNDEFINED), 1, 1e-5);
}

/* The round profile with an L1 of 32 KB (1e12 B/s), an L2 of l2 bytes (2e11 B/s) and an L3 of
 * 64 MB (1e11 B/s). */
static fp_device *round_with_l2(uint64_t l2)
{
    g_autoptr(GError) err = NULL;
    fp_device *dev = fp_device_load(FP_SOURCE_DIR "/tests/data/devices/round.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    dev->cache[0] = (fp_cache_level){32 * 1024, 1e12};
    dev->cache[1] = (fp_cache_level){l2, 2e11};
    dev->cache[2] = (fp_cache_level){64 << 20, 1e11};
    return dev;
}

/* Products whose B is not packed once stream their weights too: a one-row MatMul by batched weights
 * (class gemv_rt: MLAS's one-row kernel reads each matrix where it lies) and a scaled FusedMatMul
 * by them (matmul_rt: B packed on every call), 512 KB each against an L2 of 768 KB: of the run's
 * footprint (1 MB and a few) 1.34 times the L2, that share of their weights comes from the level
 * that holds it (fp_op_cost.kept), the first's also of its graph input; none where the L2 holds
 * the footprint. */
static void test_streamed_weights_past_l2(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 1, 256});
    tb_init(b, "w1", F32, 3, (int64_t[]){2, 256, 256});
    tb_init(b, "w2", F32, 3, (int64_t[]){2, 256, 256});
    tb_node(b, "MatMul", "mm", "x,w1", "y1");
    tb_node_t *f = tb_node(b, "FusedMatMul", "fmm", "y1,w2", "y2");
    tb_domain(b, f, "com.microsoft");
    tb_attr_i(b, f, "transB", 1);
    tb_attr_f(b, f, "alpha", 0.5f);
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y2", NULL});
    g_autoptr(fp_device) dev = round_with_l2(768 * 1024);
    g_autoptr(fp_cost_result) r = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_ops, 2);
    CU_ASSERT_EQUAL(r->ops[0].cls, FP_CLASS_GEMV_RT);
    CU_ASSERT_EQUAL(r->ops[1].cls, FP_CLASS_MATMUL_RT);
    const double weights = 2 * 256 * 256 * 4, fraction = (double)r->ops[1].kept / weights;
    CU_ASSERT(fraction > 0.7 && fraction < 0.76);
    CU_ASSERT_DOUBLE_EQUAL((double)r->ops[0].kept, fraction * (weights + 2 * 256 * 4), 2);
    for (int i = 0; i < 2; i++)
        CU_ASSERT(r->ops[i].rl.kept_s > 0);
    dev->cache[1].bytes = 2 << 20;
    g_autoptr(fp_cost_result) held = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(held->ops[0].kept + held->ops[1].kept, 0);
}

/* Transposes past the L1: on a blocked profile with an L1 of 48 KB (12 ways of 64 sets) and an L2
 * of 2 MB, MLAS's 4-column passes load again the lines of rows that outgrow what the L1 holds at
 * their stride: NHWC to NCHW at 192 channels (784 rows of 768 bytes: 16 sets, 192 lines) 48 loads of
 * each row's 12 lines; the same keys swapped for a decoder's scores (1500 rows of 16: 64 sets, 768
 * lines) 4 of each row's one, per head; not NCHW to NHWC (192 rows), a heads transpose (its rows
 * copied in blocks), nor a profile without nchwc_block. The reread time is at the L2's rate for
 * traffic it holds, ramping to the L3's past it (2.4 MB: a fifth). */
static void test_transpose_reread(void)
{
    tb *b = tb_new(13);
    tb_input(b, "h", F32, 4, (int64_t[]){1, 28, 28, 192});
    tb_input(b, "c", F32, 4, (int64_t[]){1, 192, 28, 28});
    tb_input(b, "k", F32, 4, (int64_t[]){1, 4, 1500, 16});
    tb_input(b, "q", F32, 4, (int64_t[]){1, 128, 12, 64});
    tb_attr_ints(b, tb_node(b, "Transpose", "to_nchw", "h", "y0"), "perm", 4, (int64_t[]){0, 3, 1, 2});
    tb_attr_ints(b, tb_node(b, "Transpose", "to_nhwc", "c", "y1"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_attr_ints(b, tb_node(b, "Transpose", "keys", "k", "y2"), "perm", 4, (int64_t[]){0, 1, 3, 2});
    tb_attr_ints(b, tb_node(b, "Transpose", "heads", "q", "y3"), "perm", 4, (int64_t[]){0, 2, 1, 3});
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y0", "y1", "y2", "y3", NULL});
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(GKeyFile) kf = round_keyfile();
        if (blocked)
            g_key_file_set_integer(kf, "device", "nchwc_block", 16);
        g_key_file_set_string(kf, "cache", "l1_bytes", "49152");
        g_key_file_set_string(kf, "cache", "l1_bandwidth", "1e12");
        g_key_file_set_string(kf, "cache", "l2_bytes", "2097152");
        g_key_file_set_string(kf, "cache", "l2_bandwidth", "2e11");
        g_key_file_set_string(kf, "cache", "l3_bytes", "67108864");
        g_key_file_set_string(kf, "cache", "l3_bandwidth", "1e11");
        g_autoptr(fp_device) dev = device_of_keyfile(kf);
        g_autoptr(fp_cost_result) cost = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 4);
        const fp_op_cost *c = cost->ops;
        CU_ASSERT_EQUAL(c[0].reread, blocked ? 784 * (48 - 12) * 64 : 0);
        CU_ASSERT_EQUAL(c[1].reread, 0);
        CU_ASSERT_EQUAL(c[2].reread, blocked ? 4 * 1500 * (4 - 1) * 64 : 0);
        CU_ASSERT_EQUAL(c[3].reread, 0);
        for (int i = 0; i < 4; i++) {
            fp_kernel k = fp_cost_kernel(&c[i]);
            k.reread = 0;
            CU_ASSERT_DOUBLE_EQUAL(c[i].rl.time_s - c[i].rl.reread_s, fp_roofline_kernel(dev, &k).time_s, 1e-12);
        }
        CU_ASSERT_DOUBLE_EQUAL(c[0].rl.reread_s, (double)c[0].reread / 2e11, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(c[2].rl.reread_s, (double)c[2].reread / 2e11, 1e-12);
    }
    fp_kernel past = {.bytes = 2516582, .reread = 1000000, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_TRANSPOSE};
    g_autoptr(fp_device) l2 = round_with_l2(2097152);
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(l2, &past).reread_s, 1e6 * (0.8 / 2e11 + 0.2 / 1e11), 1e-12);
}

/* A Gemm's bias on a blocked profile: ONNX Runtime writes C into the output and MLAS reads it back,
 * a pass over the output (fp_op_cost.post) that a MatMul does not make; none with beta 0, without C,
 * or on a profile without nchwc_block. */
static void test_gemm_bias_pass(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){64, 128});
    tb_init(b, "w", F32, 2, (int64_t[]){128, 256});
    tb_init(b, "bias", F32, 1, (int64_t[]){256});
    tb_node(b, "Gemm", "with_c", "x,w,bias", "y0");
    tb_attr_f(b, tb_node(b, "Gemm", "beta0", "x,w,bias", "y1"), "beta", 0);
    tb_node(b, "Gemm", "no_c", "x,w", "y2");
    tb_node(b, "MatMul", "mm", "x,w", "y3");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y0", "y1", "y2", "y3", NULL});
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 4);
        CU_ASSERT_EQUAL(cost->ops[0].post, blocked ? 64 * 256 * 4 : 0);
        for (int i = 1; i < 4; i++)
            CU_ASSERT_EQUAL(cost->ops[i].post, 0);
        CU_ASSERT(blocked ? cost->ops[0].rl.post_s > 0 : cost->ops[0].rl.post_s == 0);
    }
}

/* An NCHW convolution's bias or fused activation on a blocked profile: MLAS adds the bias and applies
 * the activation, Relu too, in a pass of its own over each GEMM's output (fp_op_cost.post: its output
 * bytes); none without either, none on a profile without nchwc_block. With an L2 of 128 KB that the
 * 256 KB output outgrows, the pass streams at the L2's rate all the same, where a Gemm's streams
 * from the level its output fits. */
static void test_conv_bias_pass(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 32, 32});
    tb_init(b, "w", F32, 4, (int64_t[]){64, 16, 1, 1});
    tb_init(b, "bias", F32, 1, (int64_t[]){64});
    tb_node(b, "Conv", "biased", "x,w,bias", "y0");
    tb_node(b, "Conv", "bare", "x,w", "y1");
    tb_node_t *fused = tb_node(b, "FusedConv", "fused", "x,w", "y2");
    tb_domain(b, fused, "com.microsoft");
    tb_attr_s(b, fused, "activation", "Relu");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y0", "y1", "y2", NULL});
    const uint64_t out = 64 * 32 * 32 * 4;
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 3);
        CU_ASSERT_EQUAL(cost->ops[0].post, blocked ? out : 0);
        CU_ASSERT_EQUAL(cost->ops[1].post, 0);
        CU_ASSERT_EQUAL(cost->ops[2].post, blocked ? out : 0);
        CU_ASSERT(blocked ? cost->ops[0].rl.post_s > 0 : cost->ops[0].rl.post_s == 0);
    }
    g_autoptr(fp_device) l2 = round_with_l2(128 * 1024);
    l2->nchwc_block = 16;
    g_autoptr(fp_cost_result) cost = fp_pass_cost(m, l2, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 3);
    CU_ASSERT_EQUAL(cost->ops[0].cls, FP_CLASS_POINTWISE_CONV);
    CU_ASSERT_DOUBLE_EQUAL(cost->ops[0].rl.post_s, 2.0 * out / (2e11 * l2->bw_efficiency), 1e-15);
    fp_kernel gemm = {.bytes = out, .post = out, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_MATMUL};
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(l2, &gemm).post_s, 2.0 * out / (1e11 * l2->bw_efficiency), 1e-15);
}

/* Weights past the L2: on the round profile given an L1 of 32 KB and an L2 of 128 KB, a MatMul of
 * 64 rows by a 256 KB weight (prepacked: class matmul) and a Relu make a footprint (the weight, the
 * 64 KB input, the plan's buffers) past twice the L2: all the MatMul's weight bytes are spill, the
 * Relu's none. With weight_l3_bandwidth they leave the roofline's traffic and cost their bytes at
 * that rate on top, and past its launch the hotspot advice names them; without it the cost stays
 * as it was. An L2 of 1 MB, or a single level, holds the footprint: none. */
static void test_spill_weights(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){64, 256});
    tb_init(b, "w", F32, 2, (int64_t[]){256, 256});
    tb_node(b, "MatMul", "mm", "x,w", "y");
    tb_node(b, "Relu", "relu", "y", "r");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"r", NULL});
    g_autoptr(fp_device) dev = round_with_l2(128 * 1024);
    g_autoptr(fp_cost_result) unpriced = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(unpriced->n_ops, 2);
    CU_ASSERT_EQUAL(unpriced->ops[0].cls, FP_CLASS_MATMUL);
    CU_ASSERT_EQUAL(unpriced->ops[0].spill, 256 * 256 * 4);
    CU_ASSERT_EQUAL(unpriced->ops[1].spill, 0);
    CU_ASSERT_DOUBLE_EQUAL(unpriced->ops[0].rl.spill_s, 0, 0);
    dev->weight_l3_bandwidth = 1e11;
    g_autoptr(fp_cost_result) spill = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    const fp_roofline *r = &spill->ops[0].rl;
    CU_ASSERT_EQUAL(r->bound, FP_BOUND_COMPUTE);
    CU_ASSERT_DOUBLE_EQUAL(r->spill_s, 256 * 256 * 4 / 1e11, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r->time_s, fmax(r->compute_s, r->memory_s) + r->spill_s + r->kept_s + r->launch_s, 1e-15);
    /* compute-bound: the spill on top, and the input read back from the L3 now that the rest of its
     * traffic fits the L2 */
    CU_ASSERT_DOUBLE_EQUAL(r->time_s - unpriced->ops[0].rl.time_s, r->spill_s + r->kept_s - unpriced->ops[0].rl.kept_s,
                           1e-12);
    CU_ASSERT_DOUBLE_EQUAL(spill->ops[1].rl.time_s, unpriced->ops[1].rl.time_s, 1e-15);
    dev->launch_overhead = 0; /* past its launch (10 us here), the advice names the weights read back */
    g_autoptr(fp_cost_result) bare = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    g_autofree char *advice = fp_report_advice(&bare->ops[0], dev), *plain = fp_report_advice(&unpriced->ops[0], dev);
    CU_ASSERT_PTR_NOT_NULL(strstr(advice, "compute-bound, 2.62 of its"));
    CU_ASSERT_PTR_NOT_NULL(strstr(advice, "reading its weights back from the last cache level"));
    CU_ASSERT_PTR_NULL(strstr(plain, "weights back"));
    dev->cache[1].bytes = 1 << 20;
    g_autoptr(fp_cost_result) held = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(held->ops[0].spill, 0);
    dev->cache[1] = dev->cache[2] = (fp_cache_level){0, 0};
    dev->cache[0] = (fp_cache_level){128 * 1024, 1e12};
    g_autoptr(fp_cost_result) one = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(one->ops[0].spill, 0);
}

/* x -> a 3x3 Conv of 64 channels on 8 x 8 (147 KB of weights) -> y. */
static fp_model *conv_64x8x8(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 64, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){64, 64, 3, 3});
    tb_attr_ints(b, tb_node(b, "Conv", "conv", "x,w", "y"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    return load_with_outputs(b, (const char *[]){"y", NULL});
}

/* A convolution's weights past the L2: a 3x3 Conv of 64 channels on 8 x 8 (147 KB of weights, a
 * footprint past twice an L2 of 64 KB) reads them all back from the level that holds the footprint
 * (the L3 of the round profile, 1e11 B/s), on top of its time (its graph input read back from there
 * too), on a profile with weight_l3_bandwidth (whose own rate is a GEMM's packed panels', not this);
 * without it, nothing. */
static void test_conv_weights_past_l2(void)
{
    g_autoptr(fp_model) m = conv_64x8x8();
    g_autoptr(fp_device) dev = round_with_l2(64 * 1024);
    g_autoptr(fp_cost_result) unpriced = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(unpriced->n_ops, 1);
    CU_ASSERT_EQUAL(unpriced->ops[0].cls, FP_CLASS_CONV);
    CU_ASSERT_EQUAL(unpriced->ops[0].spill, 64 * 64 * 9 * 4);
    CU_ASSERT_DOUBLE_EQUAL(unpriced->ops[0].rl.spill_s, 0, 0);
    dev->weight_l3_bandwidth = 5e11;
    g_autoptr(fp_cost_result) spill = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    const fp_roofline *r = &spill->ops[0].rl;
    CU_ASSERT_DOUBLE_EQUAL(r->spill_s, 64 * 64 * 9 * 4 / 1e11, 1e-12);
    CU_ASSERT_EQUAL(r->bound, FP_BOUND_COMPUTE);
    CU_ASSERT_DOUBLE_EQUAL(r->time_s, r->compute_s + r->spill_s + r->kept_s + r->launch_s, 1e-15);
    CU_ASSERT(r->time_s - unpriced->ops[0].rl.time_s >= r->spill_s);
}

/* Weights the last level loses in time: the Conv of test_conv_weights_past_l2 (its footprint past
 * the L2) on a profile whose L3 keeps a run's weights for a mean life of the run's time reads about
 * 1 - 1/e of its weights from memory, a little more (the run grows with them): the fraction
 * fp_cost_lost_in gives for the run's time, at [device] weight_bandwidth, the rest past the L2 as
 * before; without last_life, or without weight_bandwidth, none. */
static void test_weights_lost_in_time(void)
{
    g_autoptr(fp_model) m = conv_64x8x8();
    g_autoptr(fp_device) dev = round_with_l2(64 * 1024);
    dev->weight_l3_bandwidth = 5e11;
    dev->weight_bandwidth = 1e10;
    g_autoptr(fp_cost_result) kept = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(kept->n_ops, 1);
    CU_ASSERT_EQUAL(kept->ops[0].cold, 0);
    const uint64_t weights = 64 * 64 * 9 * 4;
    dev->last_life = kept->ops[0].rl.time_s;
    g_autoptr(fp_cost_result) lost = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    const fp_op_cost *c = &lost->ops[0];
    double f = (double)c->cold / (double)weights;
    CU_ASSERT(f > 1 - exp(-1) && f < 0.8);
    CU_ASSERT_DOUBLE_EQUAL(f, fp_cost_lost_in(dev, c->rl.time_s), 0.01);
    CU_ASSERT_EQUAL(c->spill, weights - c->cold);
    CU_ASSERT_DOUBLE_EQUAL(c->rl.cold_s, (double)c->cold / 1e10, 1e-12);
    CU_ASSERT(c->rl.time_s > kept->ops[0].rl.time_s + c->rl.cold_s / 2);
    dev->weight_bandwidth = 0;
    g_autoptr(fp_cost_result) unpriced = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(unpriced->ops[0].cold, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_cost_lost_in(dev, 0.01), 1 - exp(-0.01 / dev->last_life), 1e-12);
    dev->last_life = 0;
    CU_ASSERT_EQUAL(fp_cost_lost_in(dev, 1), 0);
}

/* One-row products' weights past the L2: two MatMuls of one row (class gemv) by 256 KB weights of
 * their own, each kernel's traffic within an L2 of 384 KB that the run's footprint (512 KB of
 * weights, the input, the plan's buffers) outgrows: each reads that fraction of its weights, the
 * first also of its graph input, as a stream from the level that holds the footprint
 * (fp_op_cost.kept: at the L3's rate on top of their time at the L2's), and has no spill; with an
 * L2 that holds the footprint, none. */
static void test_gemv_weights_past_l2(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){1, 256});
    tb_init(b, "w1", F32, 2, (int64_t[]){256, 256});
    tb_init(b, "w2", F32, 2, (int64_t[]){256, 256});
    tb_node(b, "MatMul", "mm1", "x,w1", "y1");
    tb_node(b, "MatMul", "mm2", "y1,w2", "y2");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y2", NULL});
    g_autoptr(fp_device) dev = round_with_l2(384 * 1024);
    dev->weight_l3_bandwidth = 1e11;
    g_autoptr(fp_cost_result) r = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_ops, 2);
    const double weights = 256 * 256 * 4, fraction = (double)r->ops[1].kept / weights;
    CU_ASSERT(fraction > 0.7 && fraction < 0.76); /* 512 KB and a few of activations: 1.34 times 384 KB */
    CU_ASSERT_DOUBLE_EQUAL((double)r->ops[0].kept, fraction * (weights + 256 * 4), 2);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(r->ops[i].cls, FP_CLASS_GEMV);
        CU_ASSERT_EQUAL(r->ops[i].spill, 0);
        CU_ASSERT_EQUAL(r->ops[i].rl.level, 2); /* its own traffic fits the L2 */
        CU_ASSERT_DOUBLE_EQUAL(r->ops[i].rl.kept_s, (double)r->ops[i].kept * (1 / 1e11 - 1 / 2e11) / 0.5, 1e-12);
    }
    dev->cache[1].bytes = 1 << 20;
    g_autoptr(fp_cost_result) held = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(held->ops[0].kept + held->ops[1].kept, 0);
}

/* Activations past the last level: on the round profile given one cache level of 16 KB, a
 * residual r = Exp(x) read back by an Add after four Adds of a 4 KB weight each: since r was last
 * touched, 20 KB of distinct bytes (the one buffer the chain's Adds write in place, and the four
 * weights), though 48 KB of traffic: the final Add moves r's 4 KB from memory, at memory's roof (1e11 x 0.5) on top of its time; every
 * other op and every op without [cache] has none. */
static void test_far_activations(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 2, (int64_t[]){1, 1024});
    tb_node(b, "Exp", "r", "x", "y0");
    for (int i = 1; i <= 4; i++) {
        g_autofree char *name = g_strdup_printf("e%d", i), *w = g_strdup_printf("w%d", i);
        g_autofree char *in = g_strdup_printf("y%d,%s", i - 1, w), *out = g_strdup_printf("y%d", i);
        tb_init(b, w, F32, 2, (int64_t[]){1, 1024});
        tb_node(b, "Add", name, in, out);
    }
    tb_node(b, "Add", "add", "y4,y0", "z");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"z", NULL});
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = fp_device_load(FP_SOURCE_DIR "/tests/data/devices/round.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    g_autoptr(fp_cost_result) none = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    dev->cache[0] = (fp_cache_level){16 * 1024, 1e12};
    g_autoptr(fp_cost_result) far = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(far->n_ops, 6);
    for (uint32_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(none->ops[i].far, 0);
        CU_ASSERT_EQUAL(far->ops[i].far, i == 5 ? 4096 : 0);
    }
    const fp_roofline *r = &far->ops[5].rl;
    CU_ASSERT_DOUBLE_EQUAL(r->far_s, 4096 / (1e11 * 0.5), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r->time_s, fmax(r->compute_s, r->memory_s) + r->far_s + r->launch_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r->memory_s, 8192 / (1e12 * 0.5), 1e-15); /* the rest from the cache */
    dev->launch_overhead = 0; /* past its launch, the advice names the far bytes */
    g_autoptr(fp_cost_result) bare = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    g_autofree char *advice = fp_report_advice(&bare->ops[5], dev);
    CU_ASSERT_PTR_NOT_NULL(strstr(advice, "activations the last cache level lost"));
}

/* Graph inputs past the L2: graph inputs x1..x3 [1, 2048] each through an Exp, the first Exp's
 * output times a weight w of the same size, the other two added. On the round profile given an L1
 * of 32 KB (1e12 B/s) and an L2 of 1 MB (2e11 B/s), every kernel's own bytes (16-24 KB) fit the
 * L1, and the run's footprint F is 64 KB (24 KB of inputs, 8 KB of weights and the plan's four
 * buffers of 8 KB, the Add's output taking the first Exp's), twice 32 KB: all of an Exp's 8 KB of
 * input comes from the L2 (fp_roofline_evicted), its time at the L2's rate less its time at the
 * L1's added on top. The Mul (a weight) and the Add (activations) have none; with a private level
 * of 64 KB, a third of it ((1 - 0.7) / (1.6 - 0.7)), at the L2's rate though the footprint would
 * fit that level; with one level of 1 MB, or without [cache],
 * none; with an L2 faster than the L1, no time. */
static void test_kept_bytes(void)
{
    tb *b = tb_new(13);
    for (int i = 1; i <= 3; i++) {
        g_autofree char *x = g_strdup_printf("x%d", i), *e = g_strdup_printf("e%d", i);
        tb_input(b, x, F32, 2, (int64_t[]){1, 2048});
        tb_node(b, "Exp", e, x, e);
    }
    tb_init(b, "w", F32, 2, (int64_t[]){1, 2048});
    tb_node(b, "Mul", "mul", "e1,w", "m");
    tb_node(b, "Add", "add", "e2,e3", "a");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"m", "a", NULL});
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = fp_device_load(FP_SOURCE_DIR "/tests/data/devices/round.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    CU_ASSERT_EQUAL(fp_cost_kept_bytes(m->main, FP_DT_UNDEFINED), 32 * 1024);
    g_autoptr(fp_cost_result) flat = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    dev->cache[0] = (fp_cache_level){1024 * 1024, 2e11};
    g_autoptr(fp_cost_result) one = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    dev->cache[0] = (fp_cache_level){32 * 1024, 1e12};
    dev->cache[1] = (fp_cache_level){1024 * 1024, 2e11};
    g_autoptr(fp_cost_result) two = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(two->n_ops, 5);
    dev->cache[0].bytes = 64 * 1024;
    g_autoptr(fp_cost_result) part = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    for (uint32_t i = 0; i < 5; i++) {
        const fp_op_cost *c = &two->ops[i];
        bool exp = c->node->op == FP_OP_EXP;
        CU_ASSERT_EQUAL(c->kept, exp ? 8192 : 0);
        CU_ASSERT_EQUAL(part->ops[i].kept, exp ? (uint64_t)((1 - 0.7) / (1.6 - 0.7) * 8192) : 0);
        /* from the L2 though the footprint would fit the private level */
        CU_ASSERT_DOUBLE_EQUAL(part->ops[i].rl.kept_s,
                               exp ? (double)part->ops[i].kept * (1 / 2e11 - 1 / 1e12) / 0.5 : 0, 1e-18);
        CU_ASSERT_EQUAL(flat->ops[i].kept, 0);
        CU_ASSERT_EQUAL(one->ops[i].kept, 0);
        CU_ASSERT_DOUBLE_EQUAL(one->ops[i].rl.kept_s, 0, 0);
        CU_ASSERT_DOUBLE_EQUAL(c->rl.kept_s, exp ? 8192 * (1 / 2e11 - 1 / 1e12) / 0.5 : 0, 1e-18);
        CU_ASSERT_DOUBLE_EQUAL(c->rl.time_s, fmax(c->rl.compute_s, c->rl.memory_s) + c->rl.kept_s + c->rl.launch_s,
                               1e-15);
        CU_ASSERT_EQUAL(c->rl.level, 1); /* its own bytes, from the L1 */
        if (exp)
            CU_ASSERT_EQUAL(c->resident, 64 * 1024);
    }
    dev->cache[0].bytes = 32 * 1024;
    dev->cache[1].bandwidth = 2e12; /* an outer level the faster: nothing added */
    g_autoptr(fp_cost_result) odd = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL(odd->ops[0].kept, 8192);
    CU_ASSERT_DOUBLE_EQUAL(odd->ops[0].rl.kept_s, 0, 0);
    dev->cache[1].bandwidth = 2e11;
    dev->launch_overhead = 0; /* past its launch, the advice names the inputs read back */
    g_autoptr(fp_cost_result) bare = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(bare->ops[0].node->op, FP_OP_EXP);
    g_autofree char *advice = fp_report_advice(&bare->ops[0], dev);
    CU_ASSERT_PTR_NOT_NULL(strstr(advice, "reading graph inputs back from the last cache level"));
}

static void test_roofline_cost(void)
{
    /* Conv 1x16x32x32 -> 1x32x32x32 (3x3, pad 1) on the round profile: 1e12 FLOP/s x conv
     * efficiency 0.25, 1e11 B/s x 0.5, 10 us launch */
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = conv_relu_on_round(&m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 2);
    const fp_op_cost *conv = &cost->ops[0];
    double flops = 2.0 * 32 * 32 * 32 * 16 * 9; /* 9,437,184 */
    double bytes = 4.0 * (16 * 32 * 32 + 32 * 16 * 9 + 32 * 32 * 32);
    CU_ASSERT_EQUAL(conv->flops, (uint64_t)flops);
    CU_ASSERT_EQUAL(conv->bytes, (uint64_t)bytes);
    CU_ASSERT_DOUBLE_EQUAL(conv->rl.compute_s, flops / 0.25e12, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(conv->rl.memory_s, bytes / 0.5e11, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(conv->rl.time_s, flops / 0.25e12 + 1e-5, 1e-12);
    CU_ASSERT_EQUAL(conv->rl.bound, FP_BOUND_COMPUTE);
    /* one kernel (group 1) lowering to one GEMM: M 32 channels, K 16 x 3 x 3, N 32 x 32 pixels */
    CU_ASSERT_EQUAL(conv->cls, FP_CLASS_CONV);
    CU_ASSERT_EQUAL(conv->parts, 1);
    CU_ASSERT_EQUAL(conv->operands, 32 * 144 + 144 * 1024 + 32 * 1024);
    const fp_op_cost *relu = &cost->ops[1];
    CU_ASSERT_EQUAL(relu->operands, 0);
    CU_ASSERT_EQUAL(relu->rl.bound, FP_BOUND_MEMORY);
    CU_ASSERT_DOUBLE_EQUAL(cost->total_s, conv->rl.time_s + relu->rl.time_s, 1e-12);
    /* a runtime's time per inference outside its kernels: 20 us */
    dev->run_overhead = 2e-5;
    g_autoptr(fp_cost_result) over = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_DOUBLE_EQUAL(over->total_s, cost->total_s + 2e-5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(over->ops[0].rl.time_s, conv->rl.time_s, 1e-15); /* not the ops' own */
    dev->run_overhead = 0;
    /* fp16 what-if: float32 bytes halve and the fp16 peak (2e12) applies */
    g_autoptr(fp_cost_result) half = fp_pass_cost(m, dev, FP_DT_FLOAT16, 0, NULL);
    CU_ASSERT_EQUAL(half->ops[0].bytes, (uint64_t)(bytes / 2));
    CU_ASSERT_DOUBLE_EQUAL(half->ops[0].rl.compute_s, flops / 0.5e12, 1e-12);
}

/* A Cast to the type it reads moves nothing when ONNX Runtime hands it its input's buffer (its
 * MayInplace and its copy skipped for one buffer): "b" reads a Relu's output that only it reads; a
 * Cast of the graph input ("a"), of a value read twice ("c", "d": the first reader is not the
 * last) and one writing a graph output ("e") copy, as does a Cast that converts ("f"). */
static void test_inplace_cast_cost(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){64, 64});
    static const char *const casts[][3] = {{"a", "x", "xa"},  {"b", "r", "xb"},  {"c", "xb", "xc"},
                                           {"d", "xb", "xd"}, {"e", "xd", "ye"}, {"f", "xc", "yf"}};
    tb_node(b, "Relu", "relu", "x", "r");
    for (guint i = 0; i < G_N_ELEMENTS(casts); i++)
        tb_attr_i(b, tb_node(b, "Cast", casts[i][0], casts[i][1], casts[i][2]), "to", i == 5 ? 7 : 1);
    tb_node(b, "Add", "add", "xa,xc", "ya");
    tb_output(b, "ya", F32, -1, NULL);
    tb_output(b, "ye", F32, -1, NULL);
    tb_output(b, "yf", 7, -1, NULL); /* int64 */
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    guint seen = 0;
    for (uint32_t i = 0; i < cost->n_ops; i++) {
        const fp_op_cost *c = &cost->ops[i];
        if (c->node->op != FP_OP_CAST)
            continue;
        seen++;
        bool none = strcmp(c->node->name, "b") == 0;
        CU_ASSERT_EQUAL(c->bytes, none ? 0 : (strcmp(c->node->name, "f") == 0 ? 4096 * 12 : 4096 * 8));
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_DATA);
        CU_ASSERT(c->rl.time_s >= fp_device_launch(dev, FP_CLASS_DATA));
    }
    CU_ASSERT_EQUAL(seen, 6);
}

/* The op of cost named `name` (asserted present). */
static const fp_op_cost *op_named(const fp_cost_result *cost, const char *name)
{
    for (uint32_t i = 0; i < cost->n_ops; i++)
        if (strcmp(cost->ops[i].node->name, name) == 0)
            return &cost->ops[i];
    CU_FAIL_FATAL("op not costed");
    return NULL;
}

/* A unary kernel ONNX Runtime writes over its input (an activation it alone reads, of its shape)
 * takes FP_ROOFLINE_INPLACE of the time of the same kernel out of place, launch aside: a Relu over
 * a Neg's output against one whose input an Abs reads too. Clip's bounds add no work: it costs what
 * Relu does, its bounds' bytes aside. On a target whose runtime is not ONNX Runtime's CPU one, nothing runs in place. */
static void test_inplace_cost(void)
{
    for (int ort = 0; ort < 2; ort++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 2, (int64_t[]){256, 256});
        tb_init(b, "lo", F32, 0, NULL);
        tb_init(b, "hi", F32, 0, NULL);
        tb_node(b, "Neg", "neg_a", "x", "a");
        tb_node(b, "Relu", "own", "a", "r1");
        tb_node(b, "Neg", "neg_c", "x", "c");
        tb_node(b, "Relu", "shared", "c", "r2");
        tb_node(b, "Abs", "abs", "c", "r3");
        tb_node(b, "Neg", "neg_e", "x", "e");
        tb_node(b, "Clip", "clip", "e,lo,hi", "r4");
        g_autoptr(fp_model) m = load_with_outputs(b, (const char *const[]){"r1", "r2", "r3", "r4", NULL});
        g_autoptr(GKeyFile) kf = round_keyfile();
        if (!ort)
            g_key_file_set_string(kf, "device", "target", "cuda");
        g_autoptr(fp_cost_result) cost = cost_on_keyfile(m, kf);
        const fp_op_cost *own = op_named(cost, "own"), *shared = op_named(cost, "shared"),
                         *clip = op_named(cost, "clip");
        CU_ASSERT_EQUAL(own->inplace, ort == 1);
        CU_ASSERT_EQUAL(clip->inplace, ort == 1);
        CU_ASSERT_FALSE(shared->inplace);
        CU_ASSERT_FALSE(op_named(cost, "neg_a")->inplace); /* reads a graph input */
        double body = own->rl.time_s - own->rl.launch_s, out = shared->rl.time_s - shared->rl.launch_s;
        CU_ASSERT(out > 0);
        CU_ASSERT_DOUBLE_EQUAL(body / out, ort ? FP_ROOFLINE_INPLACE : 1, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(clip->rl.time_s / own->rl.time_s, 1, 1e-4); /* its bounds' 8 bytes aside */
    }
}

/* A depthwise convolution is grouped_conv, runs as one part per group, and its GEMMs are
 * (1 x 9) x (9 x pixels) per group; a grouped one of 4 channels a group is conv, one part and one
 * (4 x 36) x (36 x pixels) GEMM per group, saturating by that GEMM's shape; a MatMul of a batch of
 * matrices by one matrix is one GEMM over all their rows (ONNX Runtime's MatMulComputeHelper). */
static void test_grouped_cost(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){2, 8, 10, 10});
    tb_init(b, "w", F32, 4, (int64_t[]){8, 1, 3, 3});
    tb_node_t *c = tb_node(b, "Conv", "dw", "x,w", "y");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_attr_i(b, c, "group", 8);
    tb_init(b, "m", F32, 2, (int64_t[]){10, 4});
    tb_node(b, "MatMul", "mm", "y,m", "z");
    tb_output(b, "z", F32, -1, NULL);
    tb_init(b, "wg", F32, 4, (int64_t[]){8, 4, 3, 3});
    c = tb_node(b, "Conv", "g2", "x,wg", "yg");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_attr_i(b, c, "group", 2);
    tb_output(b, "yg", F32, -1, NULL);
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 3);
    const fp_op_cost *dw = &cost->ops[0], *mm = &cost->ops[1], *g2 = &cost->ops[2];
    CU_ASSERT_EQUAL(dw->cls, FP_CLASS_GROUPED_CONV);
    CU_ASSERT_EQUAL(dw->parts, 8);
    CU_ASSERT_EQUAL(dw->operands, 2 * 8 * (1 * 9 + 9 * 100 + 1 * 100));
    /* round.ini has neither a grouped_conv efficiency nor [launch] group: conv's, nothing per part;
     * half its work on every tap, half on the 28/30 inside the input's 10 rows */
    double inside = 28.0 / 30;
    CU_ASSERT_EQUAL(dw->work, (uint64_t)((double)dw->flops * (1 + inside) / 2));
    CU_ASSERT_DOUBLE_EQUAL(dw->rl.compute_s, (double)dw->work / 0.25e12, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(dw->rl.launch_s, 1e-5, 1e-15);
    CU_ASSERT_EQUAL(dw->rows, 2 * 8 * 9 * 10); /* images x channels x taps x output rows */
    CU_ASSERT_EQUAL(mm->cls, FP_CLASS_MATMUL);
    CU_ASSERT_EQUAL(mm->operands, 160 * 10 + 10 * 4 + 160 * 4); /* [2, 8, 10, 10] x [10, 4]: M 160 */
    CU_ASSERT_EQUAL(g2->cls, FP_CLASS_CONV);
    CU_ASSERT_EQUAL(g2->parts, 2);
    CU_ASSERT_EQUAL(g2->rows, 2 * 2 * 4 * 9 * 10); /* images x groups x channels a group x taps x rows */
    CU_ASSERT_EQUAL(mm->rows, 0);
    CU_ASSERT_EQUAL(g2->operands, 2 * 2 * (4 * 36 + 36 * 100 + 4 * 100));
    /* with conv's saturation the per-group GEMMs' shape sets the efficiency: 1 TFLOP/s peak x
     * conv 0.25 / (1 + cbrt(h / 2) / 1.5 x operands / FLOPs) */
    dev->half_work[FP_CLASS_CONV] = 2e6;
    g_autoptr(fp_cost_result) sat = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
    const fp_op_cost *s2 = &sat->ops[2];
    double eff = dev->efficiency[FP_CLASS_CONV] / (1 + cbrt(1e6) / 1.5 * (double)s2->operands / (double)s2->flops);
    CU_ASSERT_DOUBLE_EQUAL(s2->rl.compute_s, (double)s2->flops / (1e12 * eff), 1e-15);
    CU_ASSERT(eff < 0.1);
}

/* A depthwise convolution strided along its width is strided_depthwise (MLAS's im2col copies one
 * input at a time), one strided along its height alone (PaddleOCR's [2, 1]) grouped_conv; either
 * pays [launch] im2col_row per row its im2col copies (channels x taps x output rows) and [launch]
 * group per channel. */
static void test_strided_depthwise_class(void)
{
    static const int64_t strides[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
    static const fp_op_class want[] = {FP_CLASS_GROUPED_CONV, FP_CLASS_GROUPED_CONV, FP_CLASS_STRIDED_DEPTHWISE,
                                       FP_CLASS_STRIDED_DEPTHWISE};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 12, 12});
        tb_init(b, "w", F32, 4, (int64_t[]){8, 1, 3, 3});
        tb_node_t *c = tb_node(b, "Conv", "dw", "x,w", "y");
        tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
        tb_attr_ints(b, c, "strides", 2, strides[i]);
        tb_attr_i(b, c, "group", 8);
        tb_output(b, "y", F32, -1, NULL);
        g_autoptr(fp_model) m = NULL;
        g_autoptr(fp_device) dev = NULL;
        g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 1);
        CU_ASSERT_EQUAL(cost->ops[0].cls, want[i]);
        uint64_t rows = 8 * 9 * (uint64_t)(12 / strides[i][0]);
        CU_ASSERT_EQUAL(cost->ops[0].rows, rows);
        dev->launch_group = 2e-7;
        dev->launch_row = 3e-9;
        g_autoptr(fp_cost_result) paid = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
        CU_ASSERT_DOUBLE_EQUAL(paid->ops[0].rl.launch_s - cost->ops[0].rl.launch_s, 8 * 2e-7 + (double)rows * 3e-9,
                               1e-15);
    }
}

/* A global pooling reduces each channel to one value: global_pool, a refinement of reduce; a
 * windowed one is pool. */
static void test_global_pool_class(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 6, 6});
    tb_node(b, "GlobalAveragePool", "gap", "x", "g");
    tb_node(b, "GlobalMaxPool", "gmp", "x", "h");
    tb_attr_ints(b, tb_node(b, "MaxPool", "mp", "x", "p"), "kernel_shape", 2, (int64_t[]){2, 2});
    tb_output(b, "g", F32, -1, NULL);
    tb_output(b, "h", F32, -1, NULL);
    tb_output(b, "p", F32, -1, NULL);
    expect_classes(b, (const fp_op_class[]){FP_CLASS_GLOBAL_POOL, FP_CLASS_GLOBAL_POOL, FP_CLASS_POOL}, 3);
    CU_ASSERT_EQUAL(fp_op_class_parent(FP_CLASS_GLOBAL_POOL), FP_CLASS_REDUCE);
}

/* ONNX Runtime's SkipLayerNormalization and SkipSimplifiedLayerNormalization are skip_norm (one CPU
 * kernel's scalar loops), their work their FLOPs (no rows' share), the simplified one's at 0.27 a
 * FLOP; LayerNormalization stays norm, its rows of 8 adding their share. */
static void test_skip_norm_class(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){1, 4, 8});
    tb_init(b, "k", F32, 3, (int64_t[]){1, 4, 8});
    tb_init(b, "g", F32, 1, (int64_t[]){8});
    tb_init(b, "be", F32, 1, (int64_t[]){8});
    tb_domain(b, tb_node(b, "SkipLayerNormalization", "sln", "x,k,g,be", "y"), "com.microsoft");
    tb_domain(b, tb_node(b, "SkipSimplifiedLayerNormalization", "ssln", "y,k,g", "z"), "com.microsoft");
    tb_node(b, "LayerNormalization", "ln", "z,g,be", "w");
    tb_output(b, "w", F32, -1, NULL);
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 3);
    const fp_op_class want[] = {FP_CLASS_SKIP_NORM, FP_CLASS_SKIP_NORM, FP_CLASS_NORM};
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(cost->ops[i].cls, want[i]);
    CU_ASSERT_EQUAL(cost->ops[0].work, cost->ops[0].flops);
    CU_ASSERT_DOUBLE_EQUAL((double)cost->ops[1].work, 0.27 * (double)cost->ops[1].flops, 1);
    CU_ASSERT(cost->ops[2].work > 2 * cost->ops[2].flops); /* 54 elements a row of 8 */
    CU_ASSERT(fp_op_class_refines(FP_CLASS_SKIP_NORM));
}

/* A transcendental op's work is its FLOPs times its kernel's cost an element against a Sigmoid's:
 * an Erf 1.4, an Exp 0.42, a QuickGelu (eight FLOPs an element) 0.6 in all, a Sqrt, a Reciprocal
 * and a Div 0.72, a Pow by a constant 2 (float or int64) 1.1, by 3 1.8, by 0.5 16.2; a Sigmoid its
 * FLOPs. */
static void test_transcendental_work(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 250});
    tb_init_f32(b, "two", 0, (float[]){2});
    tb_init_i64_scalar(b, "two_i", 2);
    tb_init_f32(b, "three", 0, (float[]){3});
    tb_init_f32(b, "half", 0, (float[]){0.5f});
    tb_node(b, "Erf", "erf", "x", "y");
    tb_node(b, "Sigmoid", "sig", "y", "z");
    tb_node(b, "Exp", "exp", "z", "e");
    tb_domain(b, tb_node(b, "QuickGelu", "qg", "e", "q"), "com.microsoft");
    tb_node(b, "Sqrt", "sqrt", "q", "r");
    tb_node(b, "Reciprocal", "rec", "r", "s");
    tb_node(b, "Pow", "pow2", "s,two", "p2");
    tb_node(b, "Pow", "pow2i", "p2,two_i", "p2i");
    tb_node(b, "Pow", "pow3", "p2i,three", "p3");
    tb_node(b, "Pow", "pow_half", "p3,half", "ph");
    tb_node(b, "Div", "div", "ph,two", "dv");
    tb_output(b, "dv", F32, -1, NULL);
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 11);
    for (int i = 0; i < 11; i++)
        CU_ASSERT_EQUAL(cost->ops[i].cls, FP_CLASS_TRANSCENDENTAL);
    CU_ASSERT_EQUAL(cost->ops[0].flops, 1000);
    CU_ASSERT_EQUAL(cost->ops[0].work, 1400);
    CU_ASSERT_EQUAL(cost->ops[1].work, cost->ops[1].flops);
    CU_ASSERT_EQUAL(cost->ops[2].work, 420);
    CU_ASSERT_EQUAL(cost->ops[3].flops, 8000);
    CU_ASSERT_EQUAL(cost->ops[3].work, 600);
    const uint64_t work[] = {720, 720, 1100, 1100, 1800, 16200, 720};
    for (int i = 4; i < 11; i++) {
        CU_ASSERT_EQUAL(cost->ops[i].flops, 1000);
        CU_ASSERT_EQUAL(cost->ops[i].work, work[i - 4]);
    }
}

/* A Tile on ONNX Runtime's general path (a dim above 1 other than the first before its tiled axis:
 * a grouped-query decoder's key heads, [1, 2, 1, 128, 16] by [1, 1, 2, 1, 1]) works 1.67 per
 * element it writes; the same repeat as [2, 1, 128, 16] by [1, 2, 1, 1] (block copies) 1, as a
 * Concat does. */
static void test_tile_work(void)
{
    tb *b = tb_new(13);
    tb_input(b, "k", F32, 5, (int64_t[]){1, 2, 1, 128, 16});
    tb_input(b, "v", F32, 4, (int64_t[]){2, 1, 128, 16});
    tb_init_i64(b, "r5", 5, (int64_t[]){1, 1, 2, 1, 1});
    tb_init_i64(b, "r4", 4, (int64_t[]){1, 2, 1, 1});
    tb_node(b, "Tile", "rows", "k,r5", "kt");
    tb_node(b, "Tile", "blocks", "v,r4", "vt");
    tb_attr_i(b, tb_node(b, "Concat", "cat", "v,v", "vc"), "axis", 0);
    for (const char *const *o = (const char *[]){"kt", "vt", "vc", NULL}; *o; o++)
        tb_output(b, *o, F32, -1, NULL);
    g_autoptr(fp_model) m = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_cost_result) cost = cost_on_round(b, &m, &dev);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 3);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(cost->ops[i].cls, FP_CLASS_COPY);
    CU_ASSERT_EQUAL(cost->ops[0].work, (uint64_t)(8192 * 1.67));
    CU_ASSERT_EQUAL(cost->ops[1].work, 8192);
    CU_ASSERT_EQUAL(cost->ops[2].work, 8192);
}

/* A run of three graph inputs and two outputs costs the profile's run_overhead, two
 * input_overhead and one output_overhead more than its kernels; a run of one input and one output
 * run_overhead alone. */
static void test_io_overhead(void)
{
    for (int many = 0; many < 2; many++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 2, (int64_t[]){1, 16});
        if (many) {
            tb_input(b, "y", F32, 2, (int64_t[]){1, 16});
            tb_input(b, "z", F32, 2, (int64_t[]){1, 16});
            tb_node(b, "Add", "a1", "x,y", "s");
            tb_node(b, "Add", "a2", "s,z", "t");
            tb_output(b, "s", F32, -1, NULL);
        } else {
            tb_node(b, "Add", "a1", "x,x", "s");
            tb_node(b, "Add", "a2", "s,x", "t");
        }
        tb_output(b, "t", F32, -1, NULL);
        g_autoptr(fp_model) m = NULL;
        g_autoptr(fp_device) dev = NULL;
        g_autoptr(fp_cost_result) bare = cost_on_round(b, &m, &dev);
        dev->run_overhead = 1e-6;
        dev->input_overhead = 1e-7;
        dev->output_overhead = 3e-7;
        g_autoptr(fp_cost_result) io = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
        CU_ASSERT_DOUBLE_EQUAL(io->total_s - bare->total_s, many ? 1e-6 + 2e-7 + 3e-7 : 1e-6, 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(fp_cost_total(m, dev, FP_DT_UNDEFINED, 0), io->total_s, 1e-15);
    }
}

/* A LayerNormalization with its Mean and InvStdDev outputs, which no op reads, costs two [launch]
 * output more than one with Y alone; with InvStdDev alone (Mean omitted), one more. Without the key
 * they cost their bytes alone (a float each at the round profile's streaming rate). */
static void test_kernel_outputs(void)
{
    static const char *const outputs[] = {"y", "y,,v", "y,m,v"};
    double alone = 0;
    for (int k = 0; k < 3; k++) {
        tb *b = tb_new(17);
        tb_input(b, "x", F32, 3, (int64_t[]){1, 1, 64});
        tb_init(b, "s", F32, 1, (int64_t[]){64});
        tb_init(b, "c", F32, 1, (int64_t[]){64});
        tb_node(b, "LayerNormalization", "ln", "x,s,c", outputs[k]);
        tb_output(b, "y", F32, -1, NULL);
        g_autoptr(fp_model) m = NULL;
        g_autoptr(fp_device) dev = NULL;
        g_autoptr(fp_cost_result) bare = cost_on_round(b, &m, &dev);
        CU_ASSERT_EQUAL_FATAL(bare->n_ops, 1);
        CU_ASSERT_EQUAL(bare->ops[0].outputs, (uint64_t)k);
        dev->launch_output = 2e-7;
        g_autoptr(fp_cost_result) c = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
        CU_ASSERT_DOUBLE_EQUAL(c->total_s - bare->total_s, k * 2e-7, 1e-15);
        if (k == 0)
            alone = bare->total_s;
        CU_ASSERT_DOUBLE_EQUAL(bare->total_s - alone, k * 4 / (1e11 * 0.5), 1e-16); /* a float each, streamed */
    }
}

/* The model of a MatMul of a 3-D A [2, 4, 8] and its bias Add, A made from the graph's input [8, 8]
 * by a Reshape when `in`, the result read by a Reshape back to [8, 16] when `out`. */
static char *nd_matmul_add(bool in, bool out)
{
    tb *b = tb_new(17);
    if (in)
        tb_input(b, "x", F32, 2, (int64_t[]){8, 8});
    else
        tb_input(b, "x", F32, 3, (int64_t[]){2, 4, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){8, 16});
    tb_init(b, "c", F32, 1, (int64_t[]){16});
    tb_init_i64(b, "to3", 3, (int64_t[]){2, 4, 8});
    tb_init_i64(b, "to2", 2, (int64_t[]){8, 16});
    if (in)
        tb_node(b, "Reshape", "in", "x,to3", "a");
    tb_node(b, "MatMul", "mm", in ? "a,w" : "x,w", "p");
    tb_node(b, "Add", "bias", "p,c", "s");
    if (out)
        tb_node(b, "Reshape", "out", "s,to2", "y");
    tb_output(b, out ? "y" : "s", F32, -1, NULL);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* ort-cpu-all's MatMulAddFusion makes a Gemm of a 3-D A: ONNX Runtime dispatches a Reshape before
 * it (A to 2-D) and one after (back to 3-D), which the Gemm's kernel counts as views; a Reshape
 * that makes A, or that alone reads the result, takes the inserted one's place (ORT merges them). */
static void test_gemm_reshapes(void)
{
    for (int k = 0; k < 4; k++) {
        bool in = k & 1, out = k & 2;
        g_autofree char *path = nd_matmul_add(in, out);
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = "ort-cpu-all", .device = "cpu-avx512"};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        const fp_op_cost *gemm = NULL;
        for (uint32_t i = 0; i < a->res.cost->n_ops; i++)
            if (a->res.cost->ops[i].node->op == FP_OP_GEMM)
                gemm = &a->res.cost->ops[i];
        CU_ASSERT_PTR_NOT_NULL_FATAL(gemm);
        CU_ASSERT_EQUAL(gemm->node->inputs[0]->shape.rank, 3);
        CU_ASSERT_EQUAL(gemm->views, (uint64_t)(!in + !out));
        g_unlink(path);
    }
}

/* The SkipLayerNormalizations ort-cpu fuses from transformer_block's residual Adds and decomposed
 * LayerNormalizations work 9 FLOPs an element, as ONNX Runtime's kernel does, not their members' sum,
 * which their FLOPs keep. */
static void test_fused_skip_norm_work(void)
{
    g_autoptr(GError) err = NULL;
    char *dims[] = {"input:1x16x64", NULL};
    fp_analysis_opts o = {.target = "ort-cpu", .device = "cpu-avx512", .inputs = dims};
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/transformer_block.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    int seen = 0;
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *c = &a->res.cost->ops[i];
        uint64_t elems = 0;
        if (c->cls != FP_CLASS_SKIP_NORM)
            continue;
        seen++;
        CU_ASSERT(c->node->op == FP_OP_SKIP_LAYER_NORM && (c->node->flags & FP_NODE_FUSED));
        CU_ASSERT_FATAL(fp_shape_numel(&c->node->inputs[0]->shape, &elems) && elems > 0);
        CU_ASSERT_EQUAL(elems, 16 * 64);
        CU_ASSERT_EQUAL(c->work, 9 * elems);
        CU_ASSERT_NOT_EQUAL(c->flops, c->work);
    }
    CU_ASSERT_EQUAL(seen, 2);
}

/* A GroupQueryAttention of one new token (4 heads on 2 KV heads of 16, 127 past tokens) in float16
 * works 1.35 times its FLOPs on a profile without a float16 peak (ONNX Runtime's CPU kernel widens
 * keys and values to float, passes/cost.c), its FLOPs on the round profile (a float16 peak of its
 * own); a float one its FLOPs on both. */
static void test_half_attention_work(void)
{
    for (int half = 0; half < 2; half++) {
        int dt = half ? F16 : F32;
        tb *b = tb_new(13);
        tb_input(b, "q", dt, 3, (int64_t[]){1, 1, 64});
        tb_input(b, "k", dt, 3, (int64_t[]){1, 1, 32});
        tb_input(b, "v", dt, 3, (int64_t[]){1, 1, 32});
        tb_input(b, "pk", dt, 4, (int64_t[]){1, 2, 127, 16});
        tb_input(b, "pv", dt, 4, (int64_t[]){1, 2, 127, 16});
        tb_input(b, "seqlens_k", I32, 1, (int64_t[]){1});
        tb_input(b, "total_sl", I32, 0, NULL);
        tb_node_t *n = tb_node(b, "GroupQueryAttention", "gqa", "q,k,v,pk,pv,seqlens_k,total_sl", "y,ok,ov");
        tb_domain(b, n, "com.microsoft");
        tb_attr_i(b, n, "num_heads", 4);
        tb_attr_i(b, n, "kv_num_heads", 2);
        for (const char *const *o = (const char *[]){"y", "ok", "ov", NULL}; *o; o++)
            tb_output(b, *o, dt, -1, NULL);
        g_autoptr(fp_model) m = NULL;
        g_autoptr(fp_device) dev = NULL;
        g_autoptr(fp_cost_result) own = cost_on_round(b, &m, &dev);
        dev->peak_flops[FP_DT_FLOAT16] = 0;
        g_autoptr(fp_cost_result) cpu = fp_pass_cost(m, dev, FP_DT_UNDEFINED, 0, NULL);
        CU_ASSERT_EQUAL_FATAL(own->n_ops, 1);
        CU_ASSERT_EQUAL_FATAL(cpu->n_ops, 1);
        CU_ASSERT_EQUAL(cpu->ops[0].cls, FP_CLASS_ATTENTION);
        CU_ASSERT(cpu->ops[0].flops > 0);
        CU_ASSERT_EQUAL(own->ops[0].work, own->ops[0].flops);
        CU_ASSERT_EQUAL(cpu->ops[0].work, half ? (uint64_t)((double)cpu->ops[0].flops * 1.35) : cpu->ops[0].flops);
    }
}

/* A float GEMM's work counts its columns rounded up to the profile's nchwc_block (MLAS's SGEMM
 * computes whole vectors of columns): a MatMul of 49 columns as 64 and a 1x1 Conv at 7x7 pixels as
 * 64, one of 48 columns or at 8x8 as it is, a one-row MatMul (gemv) as it is, a ConvTranspose by
 * its input's pixels (7x7: 64 for 49) and not its output's (14x14), an integer MatMul as it is;
 * without nchwc_block every one's FLOPs. */
static void test_gemm_columns(void)
{
    tb *b = tb_new(13);
    tb_input(b, "a", F32, 2, (int64_t[]){32, 16});
    tb_input(b, "v", F32, 2, (int64_t[]){1, 16});
    tb_input(b, "p", F32, 4, (int64_t[]){1, 16, 7, 7});
    tb_input(b, "q", F32, 4, (int64_t[]){1, 16, 8, 8});
    tb_init(b, "w49", F32, 2, (int64_t[]){16, 49});
    tb_init(b, "w48", F32, 2, (int64_t[]){16, 48});
    tb_init(b, "k", F32, 4, (int64_t[]){32, 16, 1, 1});
    tb_node(b, "MatMul", "m49", "a,w49", "y1");
    tb_node(b, "MatMul", "m48", "a,w48", "y2");
    tb_node(b, "MatMul", "gemv", "v,w49", "y3");
    tb_node(b, "Conv", "c7", "p,k", "y4");
    tb_node(b, "Conv", "c8", "q,k", "y5");
    tb_init(b, "kt", F32, 4, (int64_t[]){16, 8, 2, 2});
    tb_node_t *t = tb_node(b, "ConvTranspose", "ct", "p,kt", "y6");
    tb_attr_ints(b, t, "strides", 2, (int64_t[]){2, 2});
    tb_input(b, "ia", I8, 2, (int64_t[]){32, 16});
    tb_init(b, "iw", I8, 2, (int64_t[]){16, 49});
    tb_node(b, "MatMulInteger", "mi", "ia,iw", "y7");
    for (const char *const *o = (const char *[]){"y1", "y2", "y3", "y4", "y5", "y6", NULL}; *o; o++)
        tb_output(b, *o, F32, -1, NULL);
    tb_output(b, "y7", I32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 7);
        const fp_op_cost *c = cost->ops;
        CU_ASSERT_EQUAL(c[0].flops, 2 * 32 * 16 * 49);
        CU_ASSERT_EQUAL(c[0].work, blocked ? 2 * 32 * 16 * 64 : c[0].flops);
        CU_ASSERT_EQUAL(c[1].work, c[1].flops);
        CU_ASSERT_EQUAL(c[2].cls, FP_CLASS_GEMV);
        CU_ASSERT_EQUAL(c[2].work, c[2].flops);
        CU_ASSERT_EQUAL(c[3].cls, FP_CLASS_POINTWISE_CONV);
        CU_ASSERT_EQUAL(c[3].flops, 2 * 32 * 16 * 49);
        CU_ASSERT_EQUAL(c[3].work, blocked ? 2 * 32 * 16 * 64 : c[3].flops);
        CU_ASSERT_EQUAL(c[4].work, c[4].flops);
        CU_ASSERT_EQUAL(c[5].cls, FP_CLASS_CONV);
        CU_ASSERT(c[5].flops > 0);
        CU_ASSERT_EQUAL(c[5].work, blocked ? c[5].flops / 49 * 64 : c[5].flops);
        CU_ASSERT_EQUAL(c[6].cls, FP_CLASS_MATMUL);
        CU_ASSERT(c[6].flops > 0);
        CU_ASSERT_EQUAL(c[6].work, c[6].flops);
    }
}

/* A dense float convolution (class conv) has the rows MLAS's im2col copies (images x input
 * channels x taps x output rows; a 1-D one's output is one row) and, on a blocked (MLAS) profile,
 * works IM2COL_ELEMENT more a copied element (rows x output width) besides its GEMM's rounded
 * FLOPs, and its saturation leaves the GEMM's operands out (the copy is their surface); a 1x1 one
 * without im2col (pointwise_conv) and a ConvTranspose (a col2im) copy none and keep theirs. At a
 * width stride above 1 an element costs IM2COL_STRIDED (2.4) times as much (MLAS copies it alone,
 * not four at a time), but for each output row's first IM2COL_ROW_HEAD (8); a stride along the
 * height alone keeps the unit cost. */
static void test_im2col_work(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 7, 7});
    tb_init(b, "w", F32, 4, (int64_t[]){32, 16, 3, 3});
    tb_attr_ints(b, tb_node(b, "Conv", "c3", "x,w", "y"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_input(b, "s", F32, 3, (int64_t[]){2, 4, 10});
    tb_init(b, "w1", F32, 3, (int64_t[]){6, 4, 3});
    tb_attr_ints(b, tb_node(b, "Conv", "c1d", "s,w1", "y1"), "pads", 2, (int64_t[]){1, 1});
    tb_init(b, "k", F32, 4, (int64_t[]){32, 16, 1, 1});
    tb_node(b, "Conv", "pw", "x,k", "y2");
    tb_init(b, "kt", F32, 4, (int64_t[]){16, 8, 3, 3});
    tb_node(b, "ConvTranspose", "ct", "x,kt", "y3");
    const struct {
        const char *in, *out;
        int64_t stride_h, stride_w, h, w; /* the input's height and width */
    } strided[] = {{"xtwin", "y4", 1, 1, 7, 20},
                   {"xwide", "y5", 1, 2, 7, 40},
                   {"xtall", "y6", 2, 1, 14, 20},
                   {"xnarrow", "y7", 1, 2, 7, 14}}; /* outputs 32 x 7 x 20, but narrow's 32 x 7 x 7 */
    for (int k = 0; k < 4; k++) {
        tb_input(b, strided[k].in, F32, 4, (int64_t[]){1, 16, strided[k].h, strided[k].w});
        g_autofree char *io = g_strdup_printf("%s,w", strided[k].in);
        tb_node_t *c = tb_node(b, "Conv", strided[k].in + 1, io, strided[k].out);
        tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
        tb_attr_ints(b, c, "strides", 2, (int64_t[]){strided[k].stride_h, strided[k].stride_w});
    }
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y", "y1", "y2", "y3", "y4", "y5", "y6", "y7", NULL});
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 8);
        const fp_op_cost *c = cost->ops;
        CU_ASSERT_EQUAL(c[0].cls, FP_CLASS_CONV);
        CU_ASSERT_EQUAL(c[0].flops, 2 * 32 * 144 * 49);
        CU_ASSERT_EQUAL(c[0].rows, 16 * 9 * 7);
        CU_ASSERT_EQUAL(c[0].work, blocked ? 2 * 32 * 144 * 64 + 32 * (16 * 9 * 7 * 7) : c[0].flops);
        CU_ASSERT_EQUAL(c[0].operands, blocked ? 0 : 32 * 144 + 144 * 49 + 32 * 49);
        CU_ASSERT_EQUAL(c[1].cls, FP_CLASS_CONV);
        CU_ASSERT_EQUAL(c[1].rows, 2 * 4 * 3);
        CU_ASSERT_EQUAL(c[1].work, blocked ? c[1].flops / 10 * 16 + 32 * (2 * 4 * 3 * 10) : c[1].flops);
        CU_ASSERT_EQUAL(c[2].cls, FP_CLASS_POINTWISE_CONV);
        CU_ASSERT_EQUAL(c[2].rows, 0);
        CU_ASSERT(c[2].operands > 0);
        CU_ASSERT_EQUAL(c[3].cls, FP_CLASS_CONV);
        CU_ASSERT(c[3].operands > 0);
        CU_ASSERT_EQUAL(c[3].rows, 0);
        CU_ASSERT_EQUAL(c[3].work, blocked ? c[3].flops / 49 * 64 : c[3].flops);
        for (int k = 5; k < 7; k++) { /* twin's GEMM and copies, strided along the width, then the height */
            CU_ASSERT_EQUAL(c[k].flops, c[4].flops);
            CU_ASSERT_EQUAL(c[k].rows, 16 * 9 * 7);
        }
        double copies = 16 * 9 * 7 * 20, wide = (double)c[4].work + (blocked ? 32 * 1.4 * copies * 12 / 20 : 0);
        CU_ASSERT(fabs((double)c[5].work - wide) <= 1);
        CU_ASSERT_EQUAL(c[6].work, c[4].work);
        CU_ASSERT_EQUAL(c[7].work, c[0].work); /* rows of 7: no more than at stride 1 */
    }
}

/* A MatMul is gemv when the GEMM ONNX Runtime runs has one row and its B is a 2-D weight, which
 * ONNX Runtime packs once: [1, 1, K] x [K, N]; [5, 1, K] x [K, N] folds into one GEMM of 5 rows
 * (matmul), as does a Gemm whose output the IR keeps at rank 3. A B of another rank, or an
 * activation, is packed on every call or read where it lies: a batch of one-row matrices by
 * matrices ([3, 1, K] x [3, K, N]) or a row by an activation is gemv_rt; [5, 1, K] x [1, K, N]
 * (folded rows, a 3-D B) matmul_rt; a scaled FusedMatMul of one row by an activation (MLAS's
 * one-row kernels take alpha 1 only) matmul_rt, by a 2-D weight gemv. */
static void test_gemv_class(void)
{
    tb *b = tb_new(13);
    tb_input(b, "a", F32, 3, (int64_t[]){1, 1, 8});
    tb_input(b, "l", F32, 3, (int64_t[]){5, 1, 8});
    tb_input(b, "h", F32, 3, (int64_t[]){3, 1, 8});
    tb_input(b, "k", F32, 3, (int64_t[]){1, 4, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){8, 4});
    tb_init(b, "wt", F32, 2, (int64_t[]){4, 8});
    tb_init(b, "wb", F32, 3, (int64_t[]){3, 8, 4});
    tb_init(b, "w1", F32, 3, (int64_t[]){1, 8, 4});
    tb_node(b, "MatMul", "one", "a,w", "y1");
    tb_node(b, "MatMul", "rows", "l,w", "y2");
    tb_node(b, "MatMul", "batch", "h,wb", "y3");
    tb_node(b, "MatMul", "rows1", "l,w1", "y4");
    tb_attr_ints(b, tb_node(b, "Transpose", "kt", "k", "kt"), "perm", 3, (int64_t[]){0, 2, 1});
    tb_node(b, "MatMul", "act", "a,kt", "y5");
    const char *scaled[][3] = {{"scaled_act", "a,k", "y6"}, {"scaled_w", "a,wt", "y7"}};
    for (int i = 0; i < 2; i++) {
        tb_node_t *f = tb_node(b, "FusedMatMul", scaled[i][0], scaled[i][1], scaled[i][2]);
        tb_domain(b, f, "com.microsoft");
        tb_attr_i(b, f, "transB", 1);
        tb_attr_f(b, f, "alpha", 0.125f);
    }
    tb_input(b, "q4", F32, 4, (int64_t[]){1, 4, 1, 8});
    tb_input(b, "k4", F32, 4, (int64_t[]){1, 4, 8, 6});
    tb_node(b, "MatMul", "heads", "q4,k4", "y8");
    g_autoptr(fp_model)
        m = load_with_outputs(b, (const char *[]){"y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", NULL});
    fp_node *order[9];
    for (guint i = 0; i < 9; i++) /* file order: one, rows, batch, rows1, kt, act, scaled_act, scaled_w, heads */
        order[i] = g_ptr_array_index(m->main->nodes, i);
    /* one call into MLAS per matrix of a batch whose B is not packed once; one for folded rows */
    static const uint64_t parts[] = {1, 1, 3, 1, 1, 1, 1, 1, 4};
    for (guint i = 0; i < 9; i++)
        CU_ASSERT_EQUAL(fp_cost_parts(order[i]), parts[i]);
    CU_ASSERT_EQUAL(fp_cost_class(order[8]), FP_CLASS_GEMV_RT);
    CU_ASSERT_EQUAL(fp_cost_class(order[0]), FP_CLASS_GEMV);
    CU_ASSERT_EQUAL(fp_cost_class(order[1]), FP_CLASS_MATMUL);
    CU_ASSERT_EQUAL(fp_cost_gemm_operands(order[1]), 5 * 8 + 8 * 4 + 5 * 4);
    CU_ASSERT_EQUAL(fp_cost_class(order[2]), FP_CLASS_GEMV_RT);
    CU_ASSERT_EQUAL(fp_cost_gemm_operands(order[2]), 3 * (8 + 8 * 4 + 4));
    CU_ASSERT_EQUAL(fp_cost_class(order[3]), FP_CLASS_MATMUL_RT);
    CU_ASSERT_EQUAL(fp_cost_gemm_operands(order[3]), 5 * 8 + 8 * 4 + 5 * 4);
    CU_ASSERT_EQUAL(fp_cost_class(order[5]), FP_CLASS_GEMV_RT);
    CU_ASSERT_EQUAL(fp_cost_class(order[6]), FP_CLASS_MATMUL_RT);
    CU_ASSERT_EQUAL(fp_cost_class(order[7]), FP_CLASS_GEMV);
    fp_node_set_attr(m, order[6], (fp_attr){.name = fp_intern(m, "alpha", -1), .type = FP_ATTR_FLOAT, .u.f = 1.0});
    CU_ASSERT_EQUAL(fp_cost_class(order[6]), FP_CLASS_GEMV_RT); /* unscaled: MLAS's one-row kernel */
    order[1]->op = FP_OP_GEMM; /* a fused MatMul + Add at rank 3: its Reshapes make it 2-D */
    CU_ASSERT_EQUAL(fp_cost_class(order[1]), FP_CLASS_MATMUL);
}

static void test_golden_report(void)
{
    tu_golden((const char *[]){"report", "models/resnet_tiny.onnx", "--device", "tests/data/devices/round.ini",
                               "--no-headroom", "--no-color", NULL},
              "report_resnet_tiny_round.txt");
    tu_golden((const char *[]){"report", "models/eps_story.onnx", "--device", "ascend910b", "--no-color", NULL},
              "report_eps_story_ascend910b.txt");
    tu_golden((const char *[]){"report", "models/resnet_tiny.onnx", "--device", "tests/data/devices/round.ini",
                               "--no-headroom", "-f", "markdown", NULL},
              "report_resnet_tiny_round.md");
}

/* fuseplan report runs on every GE file; 00026 (after GE's UB match) keeps its 165 conversions,
 * each with a reason: 162 prepare weights fed at run time, 3 sit on the activation path */
static void test_ge_reports(void)
{
    const char *dir = FP_SOURCE_DIR "/tests/data/ge";
    GDir *d = g_dir_open(dir, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const char *name;
    unsigned ran = 0;
    while ((name = g_dir_read_name(d))) {
        if (g_str_has_suffix(name, ".md"))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        tu_run_result r = tu_run(
            (const char *[]){"report", "--device", "ascend910b", "--no-headroom", "-v", path, NULL});
        if (r.status != 0)
            fprintf(stderr, "\n  report %s: %s", name, r.err);
        CU_ASSERT_EQUAL(r.status, 0);
        if (strstr(name, "00026")) {
            CU_ASSERT_PTR_NOT_NULL(
                strstr(r.out, "layout  165 conversions before, 165 after (0 removed, 0 merged, 165 kept"));
            unsigned weights = 0;
            for (const char *p = r.out; (p = strstr(p, "prepares a weight")); p++)
                weights++;
            CU_ASSERT_EQUAL(weights, 162);
        }
        tu_run_clear(&r);
        ran++;
    }
    g_dir_close(d);
    CU_ASSERT(ran >= 11);
}

/* A float16 com.microsoft Attention on the CPU target (float32 kernels): the casts of its weights
 * fed at run time (input 1) prepare a weight, the cast of its past (input 4, the KV cache) does
 * not. */
static void test_attention_weight_ports(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F16, 3, (int64_t[]){1, 3, 32});
    tb_input(b, "w", F16, 2, (int64_t[]){32, 96});
    tb_input(b, "past", F16, 5, (int64_t[]){2, 1, 4, 5, 8});
    tb_node_t *n = tb_node(b, "Attention", "attn", "x,w,,,past", "y,present");
    tb_domain(b, n, "com.microsoft");
    tb_attr_i(b, n, "num_heads", 4);
    tb_output(b, "y", F16, -1, NULL);
    tb_output(b, "present", F16, -1, NULL);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    tu_run_result r = tu_run((const char *[]){"report", "-v", "--no-headroom", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    const char *w = strstr(r.out, "Cast w/to_float:"), *past = strstr(r.out, "Cast past/to_float:");
    CU_ASSERT_FATAL(w && past);
    CU_ASSERT_PTR_NOT_NULL(strstr(w, "prepares a weight"));
    const char *eol = strchr(past, '\n'), *prep = strstr(past, "prepares a weight");
    CU_ASSERT(!prep || (eol && prep > eol));
    tu_run_clear(&r);
    g_unlink(path);
}

/* ONNX Runtime's blocked kernels have classes of their own: a Conv in com.microsoft.nchwc is
 * nchwc_conv, a depthwise one nchwc_depthwise, each one kernel (no per-group parts); a profile
 * without them gives conv's and grouped_conv's (here conv's too) efficiency, one with them its own. */
static void test_nchwc_cost(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 16, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){16, 16, 3, 3});
    tb_init(b, "wd", F32, 4, (int64_t[]){16, 1, 3, 3});
    tb_attr_ints(b, tb_node(b, "Conv", "conv", "x,w", "y"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node_t *dw = tb_node(b, "Conv", "dw", "y,wd", "z");
    tb_attr_ints(b, dw, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_attr_i(b, dw, "group", 16);
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    for (guint i = 0; i < m->main->nodes->len; i++) /* as passes/nchwc.c leaves them */
        ((fp_node *)m->main->nodes->pdata[i])->domain = fp_intern(m, "com.microsoft.nchwc", -1);
    g_autoptr(GKeyFile) kf = round_keyfile();
    for (int own = 0; own < 2; own++) {
        if (own) {
            g_key_file_set_double(kf, "efficiency", "nchwc_conv", 0.5);
            g_key_file_set_double(kf, "efficiency", "nchwc_depthwise", 0.125);
        }
        g_autoptr(fp_cost_result) cost = cost_on_keyfile(m, kf);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 2);
        const fp_op_cost *c = &cost->ops[0], *d = &cost->ops[1];
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_NCHWC_CONV);
        CU_ASSERT_EQUAL(d->cls, FP_CLASS_NCHWC_DEPTHWISE);
        CU_ASSERT_EQUAL(d->parts, 1);
        CU_ASSERT_EQUAL(c->flops, 2 * 16 * 16 * 9 * 64);
        CU_ASSERT_EQUAL(d->flops, 2 * 16 * 9 * 64);
        /* 1e12 FLOP/s x conv's 0.25, or the class's own */
        CU_ASSERT_DOUBLE_EQUAL(c->rl.compute_s, (double)c->flops / (own ? 0.5e12 : 0.25e12), 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(d->rl.compute_s, (double)d->flops / (own ? 0.125e12 : 0.25e12), 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(d->rl.launch_s, 1e-5, 1e-15); /* conv's launch, no per-group part */
    }
}

/* A blocked depthwise convolution's work on a profile with nchwc_block 16: its FLOPs on the taps
 * inside its input's rows (40/42 of them at 14 rows, padding 1) and 1.5 taps an output, on 24
 * channels padded to 32, and 1650 taps a row of a channel block (14 rows of 2 blocks); without
 * nchwc_block its FLOPs. A dense blocked one (1x1, no padding) is only padded to the block. */
static void test_depthwise_work(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 24, 14, 14});
    tb_init(b, "wd", F32, 4, (int64_t[]){24, 1, 3, 3});
    tb_init(b, "w", F32, 4, (int64_t[]){24, 24, 1, 1});
    tb_node_t *dw = tb_node(b, "Conv", "dw", "x,wd", "y");
    tb_attr_ints(b, dw, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_attr_i(b, dw, "group", 24);
    tb_node(b, "Conv", "pw", "y,w", "z");
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    for (guint i = 0; i < m->main->nodes->len; i++) /* as passes/nchwc.c leaves them */
        ((fp_node *)m->main->nodes->pdata[i])->domain = fp_intern(m, "com.microsoft.nchwc", -1);
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 2);
        const fp_op_cost *d = &cost->ops[0], *c = &cost->ops[1];
        CU_ASSERT_EQUAL(d->cls, FP_CLASS_NCHWC_DEPTHWISE);
        CU_ASSERT_EQUAL(d->flops, 2 * 24 * 9 * 196);
        double inside = (double)(uint64_t)(2 * 24 * 9 * 196 * (40.0 / 42));
        uint64_t want = (uint64_t)((inside + 2 * 1.5 * 24 * 196) * 32 / 24 + 2 * 1650 * 14 * 2);
        CU_ASSERT_DOUBLE_EQUAL(d->work, blocked ? want : d->flops, 1);
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_NCHWC_CONV);
        CU_ASSERT_EQUAL(c->work, blocked ? c->flops / 24 * 32 * 32 / 24 : c->flops);
    }
}

/* A blocked convolution of an NCHW input (3 channels, under the block of 16) works 84 FLOPs more per
 * filter vector it loads for an output row once its filter is past the L1: a 16x16 patch embedding
 * of stride 16 on 64x64 into 40 channels (padded to 48: 3 blocks x 3 channels x 256 taps, 147 KB)
 * loads 2304 vectors for each of its 4 rows; with an L1 of 160 KB, or a 4x4 kernel (9 KB), or
 * without nchwc_block, nothing. */
static void test_nchw_filter_loads(void)
{
    static const int64_t k[] = {16, 16, 4};
    static const uint64_t l1[] = {49152, 163840, 49152};
    for (size_t i = 0; i < G_N_ELEMENTS(k); i++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 64, 64});
        tb_init(b, "w", F32, 4, (int64_t[]){40, 3, k[i], k[i]});
        tb_attr_ints(b, tb_node(b, "Conv", "patch", "x,w", "y"), "strides", 2, (int64_t[]){k[i], k[i]});
        tb_output(b, "y", F32, -1, NULL);
        g_autoptr(fp_model) m = tu_load_tb(b);
        tb_free(b);
        fp_node *n = m->main->nodes->pdata[0]; /* as passes/nchwc.c leaves it */
        n->domain = fp_intern(m, "com.microsoft.nchwc", -1);
        g_autoptr(GKeyFile) kf = round_keyfile();
        g_key_file_set_uint64(kf, "cache", "l1_bytes", l1[i]);
        g_key_file_set_double(kf, "cache", "l1_bandwidth", 4e11);
        g_autoptr(fp_cost_result) flat = cost_on_keyfile(m, kf);
        g_key_file_set_integer(kf, "device", "nchwc_block", 16);
        g_autoptr(fp_cost_result) cost = cost_on_keyfile(m, kf);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 1);
        const fp_op_cost *c = &cost->ops[0];
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_NCHWC_CONV);
        uint64_t rows = (uint64_t)(64 / k[i]), padded = c->flops / 40 * 48;
        CU_ASSERT_DOUBLE_EQUAL((double)c->work, (double)(i == 0 ? padded + 84 * 4 * 2304 : padded), 1);
        CU_ASSERT_EQUAL(flat->ops[0].work, flat->ops[0].flops);
        CU_ASSERT_EQUAL(c->flops, 2 * 40 * 3 * (uint64_t)(k[i] * k[i]) * rows * rows);
    }
}

/* A depthwise convolution by im2col (grouped_conv) counts half its FLOPs on every tap and half
 * on the kernel rows that fall inside its input's rows: 3x3 with padding 1 over 3 rows, 7/9;
 * 3x1 SAME_UPPER or SAME_LOWER with stride 2 over 8 rows (4 outputs), 11 of 12 either way; 3x1
 * dilated by 2 with VALID padding, all; 1-D, all. */
static void test_inside_rows(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x3", F32, 4, (int64_t[]){1, 16, 3, 8});
    tb_input(b, "x8", F32, 4, (int64_t[]){1, 16, 8, 3});
    tb_input(b, "x1d", F32, 3, (int64_t[]){1, 16, 8});
    tb_init(b, "w3", F32, 4, (int64_t[]){16, 1, 3, 3});
    tb_init(b, "w31", F32, 4, (int64_t[]){16, 1, 3, 1});
    tb_init(b, "w1d", F32, 3, (int64_t[]){16, 1, 3});
    tb_node_t *n[5];
    n[0] = tb_node(b, "Conv", "pad1", "x3,w3", "a");
    tb_attr_ints(b, n[0], "pads", 4, (int64_t[]){1, 1, 1, 1});
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER"};
    for (int i = 0; i < 2; i++) {
        n[1 + i] = tb_node(b, "Conv", modes[i], "x8,w31", i ? "c" : "b");
        tb_attr_s(b, n[1 + i], "auto_pad", modes[i]);
        tb_attr_ints(b, n[1 + i], "strides", 2, (int64_t[]){2, 1});
    }
    n[3] = tb_node(b, "Conv", "dilated", "x8,w31", "d");
    tb_attr_s(b, n[3], "auto_pad", "VALID");
    tb_attr_ints(b, n[3], "dilations", 2, (int64_t[]){2, 1});
    n[4] = tb_node(b, "Conv", "one_d", "x1d,w1d", "e");
    tb_attr_ints(b, n[4], "pads", 2, (int64_t[]){1, 1});
    const char *outs[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) {
        tb_attr_i(b, n[i], "group", 16);
        tb_output(b, outs[i], F32, -1, NULL);
    }
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, 1);
    CU_ASSERT_EQUAL_FATAL(cost->n_ops, 5);
    const double share[] = {7.0 / 9, 11.0 / 12, 11.0 / 12, 1, 1};
    for (int i = 0; i < 5; i++) {
        const fp_op_cost *c = &cost->ops[i];
        CU_ASSERT_EQUAL(c->cls, FP_CLASS_GROUPED_CONV);
        CU_ASSERT(c->flops > 0);
        CU_ASSERT_EQUAL(c->work, (uint64_t)((double)c->flops * (1 + share[i]) / 2));
    }
}

/* A row-wise op's work adds its rows: a LayerNormalization's 54 elements a row (rows of 16: 4.375x
 * its FLOPs), a Softmax's 49, and 68 more a row that is not whole vectors of nchwc_block floats
 * (rows of 49 with nchwc_block 16; not without one); none for a Softmax along an axis not the
 * last (opset 13), or for a BatchNormalization. */
static void test_row_work(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 2, (int64_t[]){32, 16});
    tb_input(b, "s", F32, 2, (int64_t[]){4, 49});
    tb_input(b, "t", F32, 2, (int64_t[]){4, 48});
    tb_init(b, "g", F32, 1, (int64_t[]){16});
    tb_init(b, "be", F32, 1, (int64_t[]){16});
    tb_node(b, "LayerNormalization", "ln", "x,g,be", "y");
    tb_node(b, "Softmax", "s49", "s", "p");
    tb_node(b, "Softmax", "s48", "t", "q");
    tb_attr_i(b, tb_node(b, "Softmax", "s0", "s", "r"), "axis", 0);
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y", "p", "q", "r", NULL});
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 4);
        const fp_op_cost *c = cost->ops;
        CU_ASSERT_EQUAL(c[0].flops, 7 * 512);
        CU_ASSERT_DOUBLE_EQUAL(c[0].work, 7 * 512 * (16 + 54) / 16, 1);
        CU_ASSERT_EQUAL(c[1].flops, 5 * 196);
        CU_ASSERT_DOUBLE_EQUAL(c[1].work, 5 * 196 * (1 + (blocked ? 49 + 68 : 49) * 4 / 196.0), 1);
        CU_ASSERT_DOUBLE_EQUAL(c[2].work, 5 * 192 * (48 + 49) / 48, 1);
        CU_ASSERT_EQUAL(c[3].work, c[3].flops);
    }
}

/* A binary elementwise op's work on a blocked profile adds ONNX Runtime's broadcast loop: 70
 * elements a span beyond the first, and 1.2x its elements when both inputs vary along a span. A
 * bias along the last dim (256 spans of 96, both varying; the same loop for a Pow by it, whose
 * elements each take 16.2 of a Sigmoid's: the C library's pow for an exponent not 2 or 3), one value a
 * row (256 spans of 96, one input a scalar a span), a channel's value over its pixels (96 spans of
 * 256), a scalar and equal shapes (one span each), and Where (its own loop: none). Without
 * nchwc_block, FLOPs only. */
static void test_broadcast_work(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){1, 256, 96});
    tb_input(b, "c", F32, 3, (int64_t[]){1, 96, 256});
    tb_input(b, "k", BOOL, 3, (int64_t[]){1, 256, 96});
    tb_init(b, "v", F32, 1, (int64_t[]){96});
    tb_init(b, "r", F32, 3, (int64_t[]){1, 256, 1});
    tb_init(b, "h", F32, 3, (int64_t[]){1, 96, 1});
    tb_init(b, "s", F32, 0, NULL);
    tb_node(b, "Add", "bias", "x,v", "y0");
    tb_node(b, "Mul", "row", "x,r", "y1");
    tb_node(b, "Add", "chan", "c,h", "y2");
    tb_node(b, "Mul", "scalar", "x,s", "y3");
    tb_node(b, "Add", "same", "x,x", "y4");
    tb_node(b, "Pow", "pow", "x,v", "y5");
    tb_node(b, "Where", "where", "k,x,v", "y6");
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"y0", "y1", "y2", "y3", "y4", "y5", "y6", NULL});
    const double n = 256 * 96;
    for (int blocked = 0; blocked < 2; blocked++) {
        g_autoptr(fp_cost_result) cost = cost_on_round_blocked(m, blocked);
        CU_ASSERT_EQUAL_FATAL(cost->n_ops, 7);
        const fp_op_cost *c = cost->ops;
        for (int i = 0; i < 6; i++)
            CU_ASSERT_EQUAL(c[i].flops, (uint64_t)n);
        CU_ASSERT_DOUBLE_EQUAL(c[0].work, blocked ? 1.2 * n + 70 * 255 : n, 1);
        CU_ASSERT_DOUBLE_EQUAL(c[1].work, blocked ? n + 70 * 255 : n, 1);
        CU_ASSERT_DOUBLE_EQUAL(c[2].work, blocked ? n + 70 * 95 : n, 1);
        CU_ASSERT_EQUAL(c[3].work, c[3].flops);
        CU_ASSERT_EQUAL(c[4].work, c[4].flops);
        CU_ASSERT_DOUBLE_EQUAL(c[5].work, 16.2 * n + (c[0].work - n), 1);
        CU_ASSERT_EQUAL(c[6].work, c[6].flops);
    }
}

/* A Concat, Split, Slice or Tile is copy (ONNX Runtime's kernels plan their block copies on every
 * call), its work the elements it writes over all its outputs (a Tile by rows 1.67 each:
 * test_tile_work); a Gather stays data. A profile that
 * gives copy no launch of its own costs it at data's; one that does, at its own. */
static void test_copy_class(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 1, 16});
    tb_init_i64(b, "st", 1, (int64_t[]){0});
    tb_init_i64(b, "en", 1, (int64_t[]){8});
    tb_init_i64(b, "ax", 1, (int64_t[]){3});
    tb_init_i64(b, "sp", 2, (int64_t[]){8, 8});
    tb_init_i64(b, "reps", 4, (int64_t[]){1, 1, 2, 1});
    tb_init_i64(b, "idx", 2, (int64_t[]){0, 2});
    tb_node(b, "Slice", "slice", "x,st,en,ax", "a");
    tb_attr_i(b, tb_node(b, "Concat", "concat", "a,a", "c"), "axis", 3);
    tb_attr_i(b, tb_node(b, "Split", "split", "c,sp", "s0,s1"), "axis", 3);
    tb_node(b, "Tile", "tile", "s0,reps", "t");
    tb_attr_i(b, tb_node(b, "Gather", "gather", "x,idx", "g"), "axis", 3);
    g_autoptr(fp_model) m = load_with_outputs(b, (const char *[]){"s1", "t", "g", NULL});
    g_autoptr(GKeyFile) kf = round_keyfile();
    g_key_file_set_double(kf, "launch", "data", 1e-6);
    g_autoptr(fp_cost_result) plain = cost_on_keyfile(m, kf);
    g_key_file_set_double(kf, "launch", "copy", 5e-6);
    g_autoptr(fp_cost_result) own = cost_on_keyfile(m, kf);
    CU_ASSERT_EQUAL_FATAL(plain->n_ops, 5);
    CU_ASSERT_EQUAL_FATAL(own->n_ops, 5);
    static const uint64_t work[] = {32, 64, 64, (uint64_t)(64 * 1.67)}; /* the Tile on the general path */
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(plain->ops[i].cls, FP_CLASS_COPY);
        CU_ASSERT_EQUAL(plain->ops[i].work, work[i]);
        CU_ASSERT_DOUBLE_EQUAL(plain->ops[i].rl.launch_s, 1e-6, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(own->ops[i].rl.launch_s, 5e-6, 1e-12);
    }
    CU_ASSERT_EQUAL(plain->ops[4].cls, FP_CLASS_DATA);
    CU_ASSERT_DOUBLE_EQUAL(own->ops[4].rl.launch_s, 1e-6, 1e-12);
    CU_ASSERT(fp_op_class_refines(FP_CLASS_COPY));
    CU_ASSERT_EQUAL(fp_op_class_parent(FP_CLASS_COPY), FP_CLASS_DATA);
}

FP_TEST_SUITE(register_layout)
{
    CU_pSuite s = CU_add_suite("layout", NULL, NULL);
    CU_add_test(s, "transpose_pairs", test_transpose_pairs);
    CU_add_test(s, "push_through", test_push_through);
    CU_add_test(s, "casts", test_casts);
    CU_add_test(s, "transdata", test_transdata);
    CU_add_test(s, "roofline_cost", test_roofline_cost);
    CU_add_test(s, "cold_weights", test_cold_weights);
    CU_add_test(s, "far_activations", test_far_activations);
    CU_add_test(s, "kept_bytes", test_kept_bytes);
    CU_add_test(s, "spill_weights", test_spill_weights);
    CU_add_test(s, "conv_weights_past_l2", test_conv_weights_past_l2);
    CU_add_test(s, "weights_lost_in_time", test_weights_lost_in_time);
    CU_add_test(s, "transpose_reread", test_transpose_reread);
    CU_add_test(s, "gemm_bias_pass", test_gemm_bias_pass);
    CU_add_test(s, "conv_bias_pass", test_conv_bias_pass);
    CU_add_test(s, "gemv_weights_past_l2", test_gemv_weights_past_l2);
    CU_add_test(s, "streamed_weights_past_l2", test_streamed_weights_past_l2);
    CU_add_test(s, "folded_cost", test_folded_cost);
    CU_add_test(s, "strided_depthwise_class", test_strided_depthwise_class);
    CU_add_test(s, "skip_norm_class", test_skip_norm_class);
    CU_add_test(s, "global_pool_class", test_global_pool_class);
    CU_add_test(s, "transcendental_work", test_transcendental_work);
    CU_add_test(s, "half_attention_work", test_half_attention_work);
    CU_add_test(s, "io_overhead", test_io_overhead);
    CU_add_test(s, "kernel_outputs", test_kernel_outputs);
    CU_add_test(s, "gemm_reshapes", test_gemm_reshapes);
    CU_add_test(s, "nchw_filter_loads", test_nchw_filter_loads);
    CU_add_test(s, "fused_skip_norm_work", test_fused_skip_norm_work);
    CU_add_test(s, "tile_work", test_tile_work);
    CU_add_test(s, "depthwise_work", test_depthwise_work);
    CU_add_test(s, "inside_rows", test_inside_rows);
    CU_add_test(s, "im2col_work", test_im2col_work);
    CU_add_test(s, "row_work", test_row_work);
    CU_add_test(s, "broadcast_work", test_broadcast_work);
    CU_add_test(s, "copy_class", test_copy_class);
    CU_add_test(s, "gemm_columns", test_gemm_columns);
    CU_add_test(s, "grouped_cost", test_grouped_cost);
    CU_add_test(s, "inplace_cast_cost", test_inplace_cast_cost);
    CU_add_test(s, "inplace_cost", test_inplace_cost);
    CU_add_test(s, "gemv_class", test_gemv_class);
    CU_add_test(s, "nchwc_cost", test_nchwc_cost);
    CU_add_test(s, "golden_report", test_golden_report);
    CU_add_test(s, "ge_reports", test_ge_reports);
    CU_add_test(s, "attention_weight_ports", test_attention_weight_ports);
}
