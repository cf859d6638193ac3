/* test_qdq_units.c - qdq_units suite (passes/qdq_units.c): ONNX Runtime's level-1 QDQ rewrites. A
 * DequantizeLinear gets a copy for each reading input but the first (all, when it is also a graph
 * output); a quantized Conv's float bias a DequantizeLinear of int32 when its input is quantized
 * per tensor, its weight per tensor or per output channel, and its output reaches a QuantizeLinear
 * through single-reader Relus; with ORT's optimizations off the copies alone, in stage original; a
 * target without `[layout] qdq_units` changes nothing. */
#include <string.h>

#include "analysis/analysis.h"
#include "passes/cse.h"
#include "passes/qdq_units.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, U8 = 2, I8 = 3 };

/* x (uint8 [1, 2, 4, 4]) dequantized by "dx", read by Relus r1 and r2 and a graph output when
 * `output`. */
static fp_model *shared_dq(bool output)
{
    tb *b = tb_new(13);
    tb_input(b, "x", U8, 4, (int64_t[]){1, 2, 4, 4});
    tb_init(b, "s", F32, 0, NULL);
    tb_init(b, "z", U8, 0, NULL);
    tb_node(b, "DequantizeLinear", "dx", "x,s,z", "xf");
    tb_node(b, "Relu", "r1", "xf", "y1");
    tb_node(b, "Relu", "r2", "xf", "y2");
    tb_output(b, "y1", F32, -1, NULL);
    tb_output(b, "y2", F32, -1, NULL);
    if (output)
        tb_output(b, "xf", F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

static fp_target *target(const char *name)
{
    g_autoptr(GError) err = NULL;
    fp_target *t = fp_target_load(name, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static void test_unique_dq(void)
{
    g_autoptr(fp_target) t = target("ort-cpu-basic");
    g_autoptr(GError) err = NULL;
    for (int output = 0; output < 2; output++) {
        g_autoptr(fp_model) m = shared_dq(output);
        CU_ASSERT_EQUAL(fp_pass_qdq_units(m, t, false, NULL), output ? 2u : 1u);
        CU_ASSERT_FATAL(fp_model_verify(m, &err));
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "DequantizeLinear"), output ? 3u : 2u);
        const fp_node *r1 = fp_node_lookup(m, "r1"), *r2 = fp_node_lookup(m, "r2");
        CU_ASSERT(r1->inputs[0] != r2->inputs[0]);
        CU_ASSERT_EQUAL(r1->inputs[0]->n_uses + r2->inputs[0]->n_uses, 2);
        CU_ASSERT_STRING_EQUAL(r2->inputs[0]->producer->op_type, "DequantizeLinear");
        CU_ASSERT_PTR_EQUAL(r2->inputs[0]->producer->inputs[0], fp_graph_find(m->main, "x"));
        CU_ASSERT_EQUAL(fp_pass_qdq_units(m, t, false, NULL), 0); /* each DQ has one reader now */
    }
    /* ONNX Runtime's elimination leaves equal DQs apart (merged, one would be shared), not Casts */
    tb *b = tb_new(13);
    tb_input(b, "x", U8, 1, (int64_t[]){4});
    tb_init(b, "s", F32, 0, NULL);
    tb_node(b, "DequantizeLinear", "d1", "x,s", "f1");
    tb_node(b, "DequantizeLinear", "d2", "x,s", "f2");
    tb_attr_i(b, tb_node(b, "Cast", "c1", "x", "g1"), "to", F32);
    tb_attr_i(b, tb_node(b, "Cast", "c2", "x", "g2"), "to", F32);
    tb_node(b, "Sum", "sum", "f1,f2,g1,g2", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    CU_ASSERT_EQUAL(fp_pass_cse(m, t, NULL), 1);
    /* the Cast kept is c2, the first in ORT's order (the walk up from sum takes c2 first) */
    CU_ASSERT(fp_node_live(fp_node_lookup(m, "d2")) && !fp_node_live(fp_node_lookup(m, "c1")));
    CU_ASSERT(fp_node_live(fp_node_lookup(m, "c2")));
}

/* A quantized Conv: x (uint8) dequantized per tensor, weight "w" (int8 [C, C, 1, 1]) dequantized
 * with scale "ws" (`per_channel`: [C] on `axis`), a float bias [C], Relu, QuantizeLinear; the Relu's
 * output also a graph output when `branch`. */
static fp_model *qconv(bool per_channel, int64_t axis, bool branch)
{
    const int64_t c = 3;
    tb *b = tb_new(13);
    tb_input(b, "x", U8, 4, (int64_t[]){1, c, 4, 4});
    tb_init(b, "s", F32, 0, NULL);
    tb_init(b, "z", U8, 0, NULL);
    tb_init(b, "w", I8, 4, (int64_t[]){c, c, 1, 1});
    tb_init(b, "ws", F32, per_channel ? 1 : 0, (int64_t[]){c});
    tb_init(b, "bias", F32, 1, (int64_t[]){c});
    tb_node(b, "DequantizeLinear", "dx", "x,s,z", "xf");
    tb_attr_i(b, tb_node(b, "DequantizeLinear", "dw", "w,ws", "wf"), "axis", axis);
    tb_node(b, "Conv", "conv", "xf,wf,bias", "c");
    tb_node(b, "Relu", "relu", "c", "r");
    tb_node(b, "QuantizeLinear", "q", "r,s,z", "y");
    tb_output(b, "y", U8, -1, NULL);
    if (branch)
        tb_output(b, "r", F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

static void test_bias(void)
{
    g_autoptr(fp_target) t = target("ort-cpu-extended");
    g_autoptr(GError) err = NULL;
    const struct {
        bool per_channel;
        int64_t axis;
        bool branch, quantized;
    } cases[] = {{false, 1, false, true}, {true, 0, false, true}, {true, 1, false, false}, {false, 1, true, true}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(fp_model) m = qconv(cases[i].per_channel, cases[i].axis, cases[i].branch);
        fp_pass_qdq_units(m, t, false, NULL);
        CU_ASSERT_FATAL(fp_model_verify(m, &err));
        const fp_value *bias = fp_node_lookup(m, "conv")->inputs[2];
        const fp_node *dq = bias->producer;
        /* a graph output reads the Relu: still one reader, so the path is not branched */
        CU_ASSERT_EQUAL(dq != NULL, cases[i].quantized);
        if (!dq)
            continue;
        CU_ASSERT_STRING_EQUAL(dq->name, "conv_bias_dq");
        CU_ASSERT(dq->inputs[0]->dtype == FP_DT_INT32 && dq->inputs[0]->shape.dims[0].value == 3);
        /* folded at load, from the float bias: no weight of the file */
        CU_ASSERT(fp_value_is_constant(dq->inputs[0]) && !fp_value_is_weight(dq->inputs[0]));
        CU_ASSERT_PTR_EQUAL(dq->inputs[0]->producer->inputs[0], fp_graph_find(m->main, "bias"));
        CU_ASSERT_EQUAL(dq->inputs[1]->shape.rank, cases[i].per_channel ? 1 : 0);
        CU_ASSERT_EQUAL(fp_node_attr_int(dq, "axis", -1), cases[i].per_channel ? 0 : -1);
    }
}

/* A branch after the Conv (two readers) leaves the bias float. */
static void test_bias_branch(void)
{
    g_autoptr(fp_target) t = target("ort-cpu-basic");
    tb *b = tb_new(13);
    tb_input(b, "x", U8, 4, (int64_t[]){1, 2, 4, 4});
    tb_init(b, "s", F32, 0, NULL);
    tb_init(b, "z", U8, 0, NULL);
    tb_init(b, "w", I8, 4, (int64_t[]){3, 2, 1, 1});
    tb_init(b, "bias", F32, 1, (int64_t[]){3});
    tb_node(b, "DequantizeLinear", "dx", "x,s,z", "xf");
    tb_node(b, "DequantizeLinear", "dw", "w,s", "wf");
    tb_node(b, "Conv", "conv", "xf,wf,bias", "c");
    tb_node(b, "QuantizeLinear", "q", "c,s,z", "y");
    tb_node(b, "Relu", "relu", "c", "r");
    tb_output(b, "y", U8, -1, NULL);
    tb_output(b, "r", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    CU_ASSERT_EQUAL(fp_pass_qdq_units(m, t, false, NULL), 0);
    CU_ASSERT_STRING_EQUAL(fp_node_lookup(m, "conv")->inputs[2]->name, "bias");
}

/* With `unoptimized` (ONNX Runtime's optimizations off): the copies, not the bias. Stage original
 * counts ORT's saved graph at level disabled (measured with ORT 1.31.1: models/qdq_cnn.onnx 37
 * nodes, pool1.out_dq/duplicated among them; the third-party qdq_with_multi_consumer_q_dq_axis 26,
 * eight copies). */
static void test_unoptimized(void)
{
    g_autoptr(fp_target) t = target("ort-cpu-basic");
    g_autoptr(fp_model) shared = shared_dq(false), conv = qconv(false, 1, false);
    CU_ASSERT_EQUAL(fp_pass_qdq_units(shared, t, true, NULL), 1);
    CU_ASSERT_EQUAL(fp_pass_qdq_units(conv, t, true, NULL), 0);
    CU_ASSERT_STRING_EQUAL(fp_node_lookup(conv, "conv")->inputs[2]->name, "bias");
    static const struct {
        const char *path;
        uint32_t ops, dqs;
    } cases[] = {{"models/qdq_cnn.onnx", 37, 19},
                 {"tests/data/fuse/qdq_third/qdq_with_multi_consumer_q_dq_axis.onnx", 26, 17}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.target = "ort-cpu-basic", .original = true};
        g_autoptr(fp_analysis) a = fp_analysis_run(cases[i].path, &o, &err);
        CU_ASSERT_FATAL(a != NULL);
        CU_ASSERT_EQUAL(a->res.stages[0].ops, cases[i].ops);
        CU_ASSERT_EQUAL(tm_count_ops(a->original->main, "DequantizeLinear"), cases[i].dqs);
        CU_ASSERT_DOUBLE_EQUAL(a->original_cost->total_s, a->res.stages[0].latency_s, 1e-12);
    }
}

static void test_off(void)
{
    g_autoptr(fp_target) t = target("tensorrt");
    g_autoptr(fp_model) m = shared_dq(true);
    CU_ASSERT_EQUAL(fp_pass_qdq_units(m, t, false, NULL), 0);
    CU_ASSERT_EQUAL(tm_count_ops(m->main, "DequantizeLinear"), 1);
}

FP_TEST_SUITE(register_qdq_units)
{
    CU_pSuite s = CU_add_suite("qdq_units", NULL, NULL);
    CU_add_test(s, "unique_dq", test_unique_dq);
    CU_add_test(s, "bias", test_bias);
    CU_add_test(s, "bias_branch", test_bias_branch);
    CU_add_test(s, "unoptimized", test_unoptimized);
    CU_add_test(s, "off", test_off);
}
