/* test_reshape_chain.c - reshape_chain suite (passes/reshape_chain.c): ONNX Runtime's
 * FuseContiguousReshapes joins a Reshape and the Reshapes, Squeezes and Unsqueezes after it, each
 * the only reader of the one before, into one Reshape to the last one's static shape; a second
 * reader, a graph output on the way or a symbolic last shape stop it; a target without `[layout]
 * contiguous_reshapes` joins nothing. */
#include "passes/reshape_chain.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1 };

/* x [1, 8, 4]: Reshape to [1, 2, 4, 4], Reshape to [1, 32], Unsqueeze(0), Relu; y [n, 8]: Reshape
 * to [n, 2, 4] (symbolic), Squeeze-free Reshape to [n, 8]; z [1, 6]: Reshape to [2, 3], read by
 * two Relus; w [1, 6]: Reshape to [6] (a graph output), Reshape to [2, 3]. */
static fp_model *chains(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){1, 8, 4});
    tb_input(b, "y", F32, 2, (int64_t[]){-1, 8});
    tb_input(b, "z", F32, 2, (int64_t[]){1, 6});
    tb_init_i64(b, "s1", 4, (int64_t[]){1, 2, 4, 4});
    tb_init_i64(b, "s2", 2, (int64_t[]){1, 32});
    tb_init_i64(b, "ax", 1, (int64_t[]){0});
    tb_init_i64(b, "s3", 3, (int64_t[]){0, 2, 4});
    tb_init_i64(b, "s4", 2, (int64_t[]){0, 8});
    tb_init_i64(b, "s5", 2, (int64_t[]){2, 3});
    tb_init_i64(b, "s6", 1, (int64_t[]){6});
    tb_node(b, "Reshape", "r1", "x,s1", "a1");
    tb_node(b, "Reshape", "r2", "a1,s2", "a2");
    tb_node(b, "Unsqueeze", "u3", "a2,ax", "a3");
    tb_node(b, "Relu", "act", "a3", "out1");
    tb_node(b, "Reshape", "q1", "y,s3", "b1");
    tb_node(b, "Reshape", "q2", "b1,s4", "out2");
    tb_node(b, "Reshape", "p1", "z,s5", "c1");
    tb_node(b, "Relu", "p2", "c1", "out3");
    tb_node(b, "Relu", "p3", "c1", "out4");
    tb_node(b, "Reshape", "w1", "z,s6", "out5");
    tb_node(b, "Reshape", "w2", "out5,s5", "out6");
    static const char *const outs[] = {"out1", "out2", "out3", "out4", "out5", "out6"};
    for (size_t i = 0; i < G_N_ELEMENTS(outs); i++)
        tb_output(b, outs[i], F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

static void test_joins(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu-basic", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g_autoptr(fp_model) m = chains();
    g_autoptr(fp_diag) d = fp_diag_new();
    CU_ASSERT_EQUAL(fp_pass_reshape_chain(m, t, d), 2);
    CU_ASSERT_FATAL(fp_model_verify(m, &err));
    CU_ASSERT(tu_removed(m, "r2") && tu_removed(m, "u3") && !tu_removed(m, "r1"));
    const fp_node *r1 = fp_node_lookup(m, "r1");
    CU_ASSERT_PTR_EQUAL(r1->outputs[0], fp_graph_find(m->main, "a3"));
    int64_t shape[4];
    CU_ASSERT_EQUAL_FATAL(fp_value_ints(r1->inputs[1], shape, 4), 3);
    CU_ASSERT(shape[0] == 1 && shape[1] == 1 && shape[2] == 32);
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "act")->inputs[0], fp_graph_find(m->main, "a3"));
    CU_ASSERT(!tu_removed(m, "q2"));                    /* [n, 8]: a dim ORT does not know */
    CU_ASSERT(!tu_removed(m, "p1"));                    /* two readers */
    CU_ASSERT(!tu_removed(m, "w2"));                    /* out5 is a graph output */
    CU_ASSERT_EQUAL(fp_pass_reshape_chain(m, t, d), 0); /* nothing left to join */
}

static void test_off(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("tensorrt", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g_autoptr(fp_model) m = chains();
    CU_ASSERT_EQUAL(fp_pass_reshape_chain(m, t, NULL), 0);
    CU_ASSERT(!tu_removed(m, "r2"));
}

FP_TEST_SUITE(register_reshape_chain)
{
    CU_pSuite s = CU_add_suite("reshape_chain", NULL, NULL);
    CU_add_test(s, "joins", test_joins);
    CU_add_test(s, "off", test_off);
}
