/* test_transpose.c - ONNX Runtime's transpose optimizer (passes/transpose.c): each case is a graph
 * whose optimized form ONNX Runtime 1.30 was seen to write at its basic level (the expected ops and
 * attributes below are that graph's), and the cases where it leaves a Transpose in place. */
#include <string.h>

#include "passes/transpose.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, I64 = 7 };

/* Runs the pass under the ort-cpu-basic target; the result in *res. */
static void optimize(fp_model *m, fp_transpose_result *res)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu-basic", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    g_autoptr(fp_diag) d = fp_diag_new();
    fp_pass_transpose(m, t, res, d);
    CU_ASSERT(res->ran);
    CU_ASSERT(fp_model_verify(m, &err));
    if (err)
        fprintf(stderr, "\n  verify: %s", err->message);
}

static bool removed(const fp_model *m, const char *node)
{
    const fp_node *n = fp_node_lookup(m, node);
    return n && (n->flags & FP_NODE_REMOVED);
}

/* The live Transposes of m's main graph. */
static guint transposes(const fp_model *m) { return tm_count_ops(m->main, "Transpose"); }

static const char *shape_of(const fp_value *v, char **keep)
{
    *keep = fp_shape_to_string(&v->shape);
    return *keep;
}

/* Relu -> Transpose(0,2,1,3) of [1,64,2,32] -> Split on axis 1 into [1,1]: the Split takes the
 * Transpose (its dims other than 1 fall from 3 to 2), on axis 2 of the Relu's output, a Transpose
 * after each of its outputs; the unary ops after them keep theirs (no gain). */
static void test_split(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 64, 2, 32});
    tb_init_i64(b, "sp", 2, (int64_t[]){1, 1});
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "xr", "tt"), "perm", 4, (int64_t[]){0, 2, 1, 3});
    tb_attr_i(b, tb_node(b, "Split", "split", "tt,sp", "a,c"), "axis", 1);
    tb_node(b, "Sigmoid", "sig", "a", "y");
    tb_node(b, "Tanh", "tanh", "c", "y2");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "y2", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    const fp_node *split = fp_node_lookup(m, "split");
    CU_ASSERT(removed(m, "t"));
    CU_ASSERT_PTR_EQUAL(split->inputs[0], fp_graph_find(m->main, "xr"));
    CU_ASSERT_EQUAL(fp_node_attr_int(split, "axis", -1), 2);
    CU_ASSERT_EQUAL(transposes(m), 2);
    g_autofree char *s = NULL;
    CU_ASSERT_STRING_EQUAL(shape_of(split->outputs[0], &s), "1x64x1x32");
    CU_ASSERT_EQUAL(fp_node_lookup(m, "sig")->inputs[0]->producer->op, FP_OP_TRANSPOSE);
    CU_ASSERT_EQUAL(res.pushed, 1);
    CU_ASSERT_EQUAL(res.inserted, 2);
    CU_ASSERT_EQUAL(res.removed, 1);
}

/* Transpose(0,2,3,1) -> Mul by a constant [8] -> Transpose(0,3,1,2): the Mul takes the first (its
 * output leads to a Transpose), the constant becomes [8,1,1], both Transposes go. */
static void test_broadcast_cancel(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 4, 4});
    tb_init(b, "k", F32, 1, (int64_t[]){8});
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t1", "xr", "a"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node(b, "Mul", "mul", "a,k", "m");
    tb_attr_ints(b, tb_node(b, "Transpose", "t2", "m", "c"), "perm", 4, (int64_t[]){0, 3, 1, 2});
    tb_node(b, "Relu", "out", "c", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT_EQUAL(transposes(m), 0);
    const fp_node *mul = fp_node_lookup(m, "mul");
    CU_ASSERT_PTR_EQUAL(mul->inputs[0], fp_graph_find(m->main, "xr"));
    g_autofree char *s = NULL, *k = NULL;
    CU_ASSERT_STRING_EQUAL(shape_of(mul->inputs[1], &k), "1x8x1x1");
    CU_ASSERT(fp_value_is_constant(mul->inputs[1]));
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "out")->inputs[0], mul->outputs[0]);
    CU_ASSERT_STRING_EQUAL(shape_of(mul->outputs[0], &s), "1x8x4x4");
    CU_ASSERT_EQUAL(res.cancelled, 3); /* t1 at the Mul's input, then t2 with the one after the Mul */
}

/* Add of two Transposes of one permutation: both go, one Transpose after the Add. */
static void test_two_inputs(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 4, 4});
    tb_input(b, "z", F32, 4, (int64_t[]){1, 8, 4, 4});
    tb_node(b, "Relu", "rx", "x", "xr");
    tb_node(b, "Relu", "rz", "z", "zr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t1", "xr", "a"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_attr_ints(b, tb_node(b, "Transpose", "t2", "zr", "c"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node(b, "Add", "add", "a,c", "s");
    tb_node(b, "Relu", "out", "s", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT(removed(m, "t1") && removed(m, "t2"));
    CU_ASSERT_EQUAL(transposes(m), 1);
    const fp_node *relu = fp_node_lookup(m, "out");
    CU_ASSERT_EQUAL(relu->inputs[0]->producer->op, FP_OP_TRANSPOSE);
    CU_ASSERT_PTR_EQUAL(relu->inputs[0]->producer->inputs[0], fp_node_lookup(m, "add")->outputs[0]);
}

/* Three Gathers of one index each along axis 0 of Transpose(2,0,3,1,4) (a fused QKV split): each
 * gathers along axis 2 of the input, a Transpose(0,2,1,3) after it. */
static void test_gather(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 5, (int64_t[]){4, 6, 3, 2, 8});
    tb_init(b, "kt", F32, 4, (int64_t[]){4, 2, 8, 6});
    for (int i = 0; i < 3; i++) {
        g_autofree char *name = g_strdup_printf("i%d", i);
        tb_init_i64_scalar(b, name, i);
    }
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "xr", "tt"), "perm", 5, (int64_t[]){2, 0, 3, 1, 4});
    tb_attr_i(b, tb_node(b, "Gather", "gq", "tt,i0", "q"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Gather", "gk", "tt,i1", "k"), "axis", 0);
    tb_attr_i(b, tb_node(b, "Gather", "gv", "tt,i2", "v"), "axis", 0);
    tb_node(b, "MatMul", "mm1", "q,kt", "s");
    tb_node(b, "MatMul", "mm2", "s,v", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT(removed(m, "t"));
    CU_ASSERT_EQUAL(transposes(m), 3);
    const fp_node *gk = fp_node_lookup(m, "gk");
    CU_ASSERT_EQUAL(fp_node_attr_int(gk, "axis", -1), 2);
    CU_ASSERT_PTR_EQUAL(gk->inputs[0], fp_graph_find(m->main, "xr"));
    const fp_attr *perm = fp_node_attr(fp_node_lookup(m, "mm1")->inputs[0]->producer, "perm");
    CU_ASSERT_FATAL(perm && perm->n == 4);
    CU_ASSERT(perm->u.ints[0] == 0 && perm->u.ints[1] == 2 && perm->u.ints[2] == 1 && perm->u.ints[3] == 3);
    g_autofree char *s = NULL;
    CU_ASSERT_STRING_EQUAL(shape_of(fp_node_lookup(m, "mm1")->inputs[0], &s), "4x2x6x8");
}

/* A Slice of the heads axis of a head-split Transpose: the Transpose goes through it (its axes
 * input becomes perm[axis]), through the Relu after it, and cancels against the inverse Transpose
 * at the end (ONNX Runtime's HandleSlice). */
static void test_slice(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 2, 8});
    tb_init_i64(b, "st", 1, (int64_t[]){0});
    tb_init_i64(b, "en", 1, (int64_t[]){1});
    tb_init_i64(b, "ax", 1, (int64_t[]){1});
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "x", "tt"), "perm", 4, (int64_t[]){0, 2, 1, 3});
    tb_node(b, "Slice", "sl", "tt,st,en,ax", "head");
    tb_node(b, "Relu", "relu", "head", "hr");
    tb_attr_ints(b, tb_node(b, "Transpose", "back", "hr", "y"), "perm", 4, (int64_t[]){0, 2, 1, 3});
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT_EQUAL(transposes(m), 0);
    const fp_node *sl = fp_node_lookup(m, "sl");
    int64_t axes[2];
    CU_ASSERT_EQUAL_FATAL(fp_value_ints(sl->inputs[3], axes, 2), 1);
    CU_ASSERT_EQUAL(axes[0], 2);
    CU_ASSERT_PTR_EQUAL(sl->inputs[0], fp_graph_find(m->main, "x"));
    g_autofree char *s = NULL;
    CU_ASSERT_STRING_EQUAL(shape_of(sl->outputs[0], &s), "1x3x1x8");
}

/* Shape of a head-split Transpose: Shape of its input and a Gather of the permutation (ONNX
 * Runtime's HandleShape), so the Transpose goes through the Relu and cancels; with static dims the
 * Shape was folded at analysis time (ORT's constant folding comes first) and reads the input too. */
static void test_shape(void)
{
    for (int dyn = 0; dyn < 2; dyn++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 4, (int64_t[]){dyn ? -1 : 1, 3, 2, 8});
        tb_attr_ints(b, tb_node(b, "Transpose", "t", "x", "tt"), "perm", 4, (int64_t[]){0, 2, 1, 3});
        tb_node(b, "Shape", "shape", "tt", "dims");
        tb_node(b, "Relu", "relu", "tt", "r");
        tb_attr_ints(b, tb_node(b, "Transpose", "back", "r", "y"), "perm", 4, (int64_t[]){0, 2, 1, 3});
        tb_output(b, "y", F32, -1, NULL);
        tb_output(b, "dims", I64, -1, NULL);
        g_autoptr(fp_model) m = tu_load_tb(b);
        tb_free(b);
        fp_transpose_result res;
        optimize(m, &res);
        CU_ASSERT_EQUAL(transposes(m), 0);
        const fp_node *shape = fp_node_lookup(m, "shape");
        CU_ASSERT_PTR_EQUAL(shape->inputs[0], fp_graph_find(m->main, "x"));
        const fp_node *g = fp_graph_find(m->main, "dims")->producer;
        CU_ASSERT_FATAL(g && g->op == FP_OP_GATHER && g->inputs[0] == shape->outputs[0]);
        int64_t idx[4];
        CU_ASSERT_EQUAL_FATAL(fp_value_ints(g->inputs[1], idx, 4), 4);
        CU_ASSERT(idx[0] == 0 && idx[1] == 2 && idx[2] == 1 && idx[3] == 3);
        CU_ASSERT_EQUAL((g->flags & FP_NODE_FOLDED) != 0, !dyn);
    }
}

/* A ReduceMean over the channels of an NHWC Transpose, keepdims 0: it reduces axis 1 of the input,
 * and what remains needs no Transpose. */
static void test_reduce(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 4, 4});
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "xr", "a"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    tb_node_t *r = tb_node(b, "ReduceMean", "mean", "a", "r");
    tb_attr_ints(b, r, "axes", 1, (int64_t[]){3});
    tb_attr_i(b, r, "keepdims", 0);
    tb_node(b, "Sigmoid", "sig", "r", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT_EQUAL(transposes(m), 0);
    const fp_attr *axes = fp_node_attr(fp_node_lookup(m, "mean"), "axes");
    CU_ASSERT_FATAL(axes && axes->n == 1);
    CU_ASSERT_EQUAL(axes->u.ints[0], 1);
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "sig")->inputs[0], fp_node_lookup(m, "mean")->outputs[0]);
}

/* A Reshape of a Transpose's output that only moves dims of 1 is that Transpose's partner: both
 * become one Transpose, [0, 1, 3, 2] here, as ONNX Runtime 1.30 writes it. */
static void test_reshape(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 1, 8});
    tb_init_i64(b, "shp", 4, (int64_t[]){1, 4, 8, 1});
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "xr", "a"), "perm", 4, (int64_t[]){0, 2, 1, 3});
    tb_node(b, "Reshape", "rs", "a,shp", "r");
    tb_node(b, "Sigmoid", "sig", "r", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT(removed(m, "t"));
    const fp_node *rs = fp_node_lookup(m, "rs");
    CU_ASSERT_EQUAL(rs->op, FP_OP_TRANSPOSE);
    CU_ASSERT_PTR_EQUAL(rs->inputs[0], fp_graph_find(m->main, "xr"));
    const fp_attr *perm = fp_node_attr(rs, "perm");
    CU_ASSERT_FATAL(perm && perm->n == 4);
    CU_ASSERT(perm->u.ints[0] == 0 && perm->u.ints[1] == 1 && perm->u.ints[2] == 3 && perm->u.ints[3] == 2);
    CU_ASSERT_EQUAL(transposes(m), 1);
}

/* Where ONNX Runtime leaves the Transpose: before an op without a handler (MatMul), before a unary
 * op whose output leads to no other Transpose (the count would not fall); and an inverse pair at a
 * graph output goes, the output's name kept by an Identity. */
static void test_stays(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 4, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){4, 4});
    tb_node(b, "Relu", "relu", "x", "xr");
    tb_attr_ints(b, tb_node(b, "Transpose", "t1", "xr", "a"), "perm", 3, (int64_t[]){0, 2, 1});
    tb_node(b, "MatMul", "mm", "a,w", "mo");
    tb_attr_ints(b, tb_node(b, "Transpose", "t2", "mo", "c"), "perm", 3, (int64_t[]){1, 0, 2});
    tb_node(b, "Sigmoid", "sig", "c", "y");
    tb_attr_ints(b, tb_node(b, "Transpose", "t3", "xr", "d"), "perm", 3, (int64_t[]){0, 2, 1});
    tb_attr_ints(b, tb_node(b, "Transpose", "t4", "d", "z"), "perm", 3, (int64_t[]){0, 2, 1});
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_transpose_result res;
    optimize(m, &res);
    CU_ASSERT_FALSE(removed(m, "t1"));
    CU_ASSERT_FALSE(removed(m, "t2"));
    CU_ASSERT_PTR_EQUAL(fp_node_lookup(m, "mm")->inputs[0], fp_graph_find(m->main, "a"));
    CU_ASSERT(removed(m, "t3"));
    const fp_node *t4 = fp_node_lookup(m, "t4");
    CU_ASSERT_EQUAL(t4->op, FP_OP_IDENTITY);
    CU_ASSERT_PTR_EQUAL(t4->inputs[0], fp_graph_find(m->main, "xr"));
    CU_ASSERT_EQUAL(transposes(m), 2);
}

/* Off unless the target says so; a bad value of the key is the loader's one-line error. */
static void test_target_key(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){2, 3});
    tb_attr_ints(b, tb_node(b, "Transpose", "t1", "x", "a"), "perm", 2, (int64_t[]){1, 0});
    tb_attr_ints(b, tb_node(b, "Transpose", "t2", "a", "y"), "perm", 2, (int64_t[]){1, 0});
    tb_node(b, "Relu", "relu", "y", "z");
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ascend910b", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fp_transpose_result res;
    CU_ASSERT_FALSE(fp_pass_transpose(m, t, &res, NULL));
    CU_ASSERT_FALSE(res.ran);
    CU_ASSERT_EQUAL(transposes(m), 2);
    tm_expect_target_error("[target]\nname = x\nrules = conv_bn\n[layout]\ntranspose_optimizer = sometimes\n",
                           "transpose_optimizer");
}

FP_TEST_SUITE(register_transpose)
{
    CU_pSuite s = CU_add_suite("transpose", NULL, NULL);
    CU_add_test(s, "split", test_split);
    CU_add_test(s, "broadcast_cancel", test_broadcast_cancel);
    CU_add_test(s, "two_inputs", test_two_inputs);
    CU_add_test(s, "gather", test_gather);
    CU_add_test(s, "slice", test_slice);
    CU_add_test(s, "shape", test_shape);
    CU_add_test(s, "reduce", test_reduce);
    CU_add_test(s, "reshape", test_reshape);
    CU_add_test(s, "stays", test_stays);
    CU_add_test(s, "target_key", test_target_key);
}
