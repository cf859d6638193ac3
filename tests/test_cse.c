/* test_cse.c - cse suite (passes/cse.c): ONNX Runtime's common subexpression elimination merges a
 * node into an equal one before it in ONNX Runtime's topological order (the same op, attributes
 * and inputs, small constants compared by value), and keeps random ops, nodes with a graph output
 * (which take the readers of equal ones after them) and nodes that differ; a target without
 * `[layout] cse` merges nothing. */
#include <string.h>

#include "passes/cse.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, I64 = 7 };

/* x [batch, 4]: two Shapes of it, Gathers of equal indices in two initializers and of another,
 * Concats of those; two Relus, the second a graph output; two RandomNormalLikes. */
static fp_model *twins(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){-1, 4});
    tb_init_i64(b, "i0", 1, (int64_t[]){0});
    tb_init_i64(b, "j0", 1, (int64_t[]){0});
    tb_init_i64(b, "j1", 1, (int64_t[]){1});
    tb_node(b, "Shape", "s1", "x", "d1");
    tb_node(b, "Shape", "s2", "x", "d2");
    tb_attr_i(b, tb_node(b, "Gather", "g1", "d1,i0", "b1"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Gather", "g2", "d2,j0", "b2"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Gather", "g3", "d2,j1", "b3"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Concat", "c1", "b1,b3", "o1"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Concat", "c2", "b2,b3", "o2"), "axis", 0);
    tb_node(b, "Add", "sum", "o1,o2", "s");
    tb_node(b, "Relu", "r1", "x", "y1");
    tb_node(b, "Relu", "r2", "x", "y2");
    tb_node(b, "Mul", "sq", "y1,y1", "m");
    tb_node(b, "RandomNormalLike", "n1", "x", "z1");
    tb_node(b, "RandomNormalLike", "n2", "x", "z2");
    tb_node(b, "Add", "noise", "z1,z2", "z");
    for (const char *o = "s\0y2\0m\0z\0"; *o; o += strlen(o) + 1)
        tb_output(b, o, strcmp(o, "s") == 0 ? I64 : F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

static void test_merges(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu-basic", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(fp_cse_on(t));
    g_autoptr(fp_model) m = twins();
    g_autoptr(fp_diag) d = fp_diag_new();
    CU_ASSERT_EQUAL(fp_pass_cse(m, t, d), 3);
    CU_ASSERT_FATAL(fp_model_verify(m, &err));
    /* ORT's order walks up from sum through c2, its higher producer, first: the second of each
     * pair is kept */
    CU_ASSERT(tu_removed(m, "s1") && tu_removed(m, "g1") && tu_removed(m, "c1"));
    CU_ASSERT(!tu_removed(m, "s2") && !tu_removed(m, "g2") && !tu_removed(m, "g3") && !tu_removed(m, "c2"));
    const fp_node *sum = fp_node_lookup(m, "sum");
    CU_ASSERT(sum->inputs[0] == sum->inputs[1] && sum->inputs[0] == fp_graph_find(m->main, "o2"));
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "g3")->inputs[0], fp_graph_find(m->main, "d2"));
    CU_ASSERT(!tu_removed(m, "r2"));          /* its output is the graph's */
    CU_ASSERT(!tu_removed(m, "n2"));          /* random */
    CU_ASSERT_EQUAL(fp_pass_cse(m, t, d), 0); /* nothing left to merge */
}

/* Two Negs of x, each read by a Relu, the second Neg (a1) a graph output: ORT's order walks up
 * from the last leaf, r1, and reaches a1 first, which takes a2's reader though it stays (measured
 * with onnxruntime-node 1.31.1 at level basic: a1, r1, r2 reading a1's output). */
static void test_output_first(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Neg", "a2", "x", "yb");
    tb_node(b, "Relu", "r2", "yb", "r2");
    tb_node(b, "Neg", "a1", "x", "ya");
    tb_node(b, "Relu", "r1", "ya", "r1");
    for (const char *o = "ya\0r1\0r2\0"; *o; o += strlen(o) + 1)
        tb_output(b, o, F32, 1, (int64_t[]){4});
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu-basic", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(fp_pass_cse(m, t, NULL), 1);
    CU_ASSERT(tu_removed(m, "a2") && !tu_removed(m, "a1"));
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "r2")->inputs[0], fp_graph_find(m->main, "ya"));
}

static void test_off(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("tensorrt", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(!fp_cse_on(t));
    g_autoptr(fp_model) m = twins();
    CU_ASSERT_EQUAL(fp_pass_cse(m, t, NULL), 0);
    CU_ASSERT(!tu_removed(m, "s2"));
}

FP_TEST_SUITE(register_cse)
{
    CU_pSuite s = CU_add_suite("cse", NULL, NULL);
    CU_add_test(s, "merges", test_merges);
    CU_add_test(s, "off", test_off);
    CU_add_test(s, "output_first", test_output_first);
}
