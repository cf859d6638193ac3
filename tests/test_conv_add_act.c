/* test_conv_add_act.c - conv_add_act suite (passes/conv_add_act.c): on ort-cpu-all, a Conv the NCHWc
 * layout leaves NCHW (group 2, 6 output channels) + an Add of one shape + Relu become one FusedConv
 * with the Add's other operand as its Sum input, as ONNX Runtime 1.30 runs it (measured, the
 * differential test's conv_add_17); a broadcast Add, a Conv without a bias, a Conv output that a
 * graph output also is, and the extended level keep them apart; a Clip of a computed bound stays out;
 * of two Conv operands, the first, even one whose output a graph output also is (left unwritten). */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1 };

typedef enum { PLAIN, BROADCAST, NO_BIAS, CONV_OUT, CLIP_COMPUTED, TWO_CONVS } variant;

/* x [1, 4, 6, 6] -> Conv (group 2, 6 out, 3x3, pads 1) -> Add(z) -> Relu (Clip with a bound from
 * Abs at CLIP_COMPUTED) -> y; z a [1, 6, 6, 6] input ([1, 6, 1, 1] at BROADCAST; at TWO_CONVS a
 * second such Conv's output, the first Conv's output a graph output too). */
static char *model(variant v)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 6, 6});
    tb_input(b, "z", F32, 4, v == BROADCAST ? (int64_t[]){1, 6, 1, 1} : (int64_t[]){1, 6, 6, 6});
    tb_init(b, "w", F32, 4, (int64_t[]){6, 2, 3, 3});
    tb_init(b, "bias", F32, 1, (int64_t[]){6});
    tb_node_t *c = tb_node(b, "Conv", "conv", v == NO_BIAS ? "x,w" : "x,w,bias", "h");
    tb_attr_i(b, c, "group", 2);
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    if (v == TWO_CONVS) {
        tb_node_t *c2 = tb_node(b, "Conv", "conv2", "x,w,bias", "z2");
        tb_attr_i(b, c2, "group", 2);
        tb_attr_ints(b, c2, "pads", 4, (int64_t[]){1, 1, 1, 1});
    }
    tb_node(b, "Add", "add", v == TWO_CONVS ? "h,z2" : "h,z", "s");
    if (v == CLIP_COMPUTED) {
        tb_input(b, "lo", F32, 0, NULL);
        tb_node(b, "Abs", "abs", "lo", "lo_abs");
        tb_node(b, "Clip", "act", "s,lo_abs", "y");
    } else {
        tb_node(b, "Relu", "act", "s", "y");
    }
    tb_output(b, "y", F32, -1, NULL);
    if (v == CONV_OUT || v == TWO_CONVS)
        tb_output(b, "h", F32, -1, NULL);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* The analysis of variant v on `target` (the cpu-avx512 device). */
static fp_analysis *run(variant v, const char *target)
{
    g_autofree char *path = model(v);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = target, .device = "cpu-avx512"};
    fp_analysis *a = fp_analysis_run(path, &o, &err);
    g_unlink(path);
    return a;
}

static void test_fused(void)
{
    g_autoptr(fp_analysis) a = run(PLAIN, "ort-cpu-all");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.layout.conv_add_act, 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "FusedConv"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Relu"), 0);
    const fp_node *c = fp_node_lookup(a->model, "conv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->n_inputs, 4);
    CU_ASSERT_STRING_EQUAL(c->inputs[3]->name, "z");
    CU_ASSERT_STRING_EQUAL(c->outputs[0]->name, "y");
    CU_ASSERT_STRING_EQUAL(c->domain, "com.microsoft");
    CU_ASSERT_STRING_EQUAL(fp_node_attr_string(c, "activation", ""), "Relu");
}

static void test_refused(void)
{
    static const variant apart[] = {BROADCAST, NO_BIAS, CONV_OUT};
    for (size_t i = 0; i < G_N_ELEMENTS(apart); i++) {
        g_autoptr(fp_analysis) a = run(apart[i], "ort-cpu-all");
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->res.layout.conv_add_act, 0);
        CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), 1);
    }
    g_autoptr(fp_analysis) e = run(PLAIN, "ort-cpu-extended");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(tm_count_ops(e->model->main, "Add"), 1);
    /* a Clip whose bound is computed: the Add folds, the Clip stays */
    g_autoptr(fp_analysis) c = run(CLIP_COMPUTED, "ort-cpu-all");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->res.layout.conv_add_act, 1);
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "Add"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "Clip"), 1);
}

/* ONNX Runtime's selector takes the Add's first Conv operand with one output edge, even one whose
 * output a graph output also is, and leaves that output unwritten (measured, the differential
 * test's v1_02606_nchwc): the first Conv becomes the FusedConv, the second's output its Sum input,
 * and h is no graph output any more (a warning names it). */
static void test_graph_output_operand(void)
{
    g_autoptr(fp_analysis) a = run(TWO_CONVS, "ort-cpu-all");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.layout.conv_add_act, 1);
    const fp_node *c = fp_node_lookup(a->model, "conv"), *c2 = fp_node_lookup(a->model, "conv2");
    CU_ASSERT_FATAL(c && c2);
    CU_ASSERT_STRING_EQUAL(c->op_type, "FusedConv");
    CU_ASSERT_STRING_EQUAL(c2->op_type, "Conv");
    CU_ASSERT_STRING_EQUAL(c->inputs[3]->name, "z2");
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Add"), 0);
    CU_ASSERT_EQUAL(a->model->main->outputs->len, 1);
    const fp_value *h = fp_graph_find(a->model->main, "h");
    CU_ASSERT_FATAL(h != NULL);
    CU_ASSERT_FALSE(h->is_output);
    CU_ASSERT_PTR_NULL(h->producer);
    bool warned = false;
    for (guint i = 0; i < a->diag->entries->len; i++) {
        const fp_diag_entry *e = a->diag->entries->pdata[i];
        warned |= strcmp(e->code, "conv-add-act-output") == 0 && e->level == FP_DIAG_WARNING;
    }
    CU_ASSERT(warned);
}

FP_TEST_SUITE(register_conv_add_act)
{
    CU_pSuite s = CU_add_suite("conv_add_act", NULL, NULL);
    CU_add_test(s, "fused", test_fused);
    CU_add_test(s, "refused", test_refused);
    CU_add_test(s, "graph_output_operand", test_graph_output_operand);
}
