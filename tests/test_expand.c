/* test_expand.c - expand suite (passes/expand.c): HardSwish runs as HardSigmoid + Mul on the
 * ort-cpu target (whose `expand` key lists it), the new node shaped and counted; untouched on a
 * target without the key; a target naming an op fuseplan cannot expand is an error. */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1 };

/* x [1, 3, 8, 8] -> HardSwish -> y. Caller unlinks and frees the path. */
static char *hard_swish_model(void)
{
    tb *b = tb_new(14);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
    tb_node(b, "HardSwish", "hs", "x", "y");
    tb_output(b, "y", F32, -1, NULL);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

static void test_hard_swish(void)
{
    g_autofree char *path = hard_swish_model();
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ort-cpu"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "HardSwish"), 0);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "HardSigmoid"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(a->model->main, "Mul"), 1);
    CU_ASSERT_EQUAL(a->res.stages[0].ops, 2); /* the runtime's ops from the original stage on */
    const fp_node *sig = fp_node_lookup(a->model, "hs/hard_sigmoid");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
    const fp_attr *alpha = fp_node_attr(sig, "alpha");
    CU_ASSERT_PTR_NOT_NULL_FATAL(alpha);
    CU_ASSERT_DOUBLE_EQUAL(alpha->u.f, 1.0 / 6.0, 1e-9);
    g_autofree char *shape = fp_shape_to_string(&sig->outputs[0]->shape);
    CU_ASSERT_STRING_EQUAL(shape, "1x3x8x8");
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    /* the CUDA EP has the kernel: nothing expanded */
    fp_analysis_opts oc = {.target = "cuda"};
    g_autoptr(fp_analysis) c = fp_analysis_run(path, &oc, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(tm_count_ops(c->model->main, "HardSwish"), 1);
    g_unlink(path);
}

static void test_bad_target(void)
{
    tm_expect_target_error("[target]\nname = t\nrules = conv_bn\nexpand = Mish\n",
                           "[target] expand: 'Mish' is no op fuseplan expands (HardSwish)");
}

FP_TEST_SUITE(register_expand)
{
    CU_pSuite s = CU_add_suite("expand", NULL, NULL);
    CU_add_test(s, "hard_swish", test_hard_swish);
    CU_add_test(s, "bad_target", test_bad_target);
}
