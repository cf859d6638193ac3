/* test_reuse.c - passes/reuse.c: which activation bytes a steady-state run moves past the last
 * cache level, on hand-made graphs with hand-set traffic. */
#include <CUnit/CUnit.h>

#include "passes/reuse.h"
#include "tutil.h"

enum { F32 = 1 };
#define T 8192 /* bytes of traffic a kernel moves, unless set otherwise */
#define V 4096 /* bytes of every activation: 1 x 1024 floats */

/* A chain x -> op[0] -> ... -> op[n-1], each node "n<i>" writing "y<i>"; `reads` (or NULL) names,
 * per node, a second input ("" for none). The last output is the graph's. */
static fp_model *chain(const char *const *ops, const char *const *reads, int n)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 2, (int64_t[]){1, 1024});
    for (int i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("n%d", i), *out = g_strdup_printf("y%d", i);
        g_autofree char *in = i ? g_strdup_printf("y%d", i - 1) : g_strdup("x");
        g_autofree char *ins = reads && reads[i][0] ? g_strdup_printf("%s,%s", in, reads[i]) : g_strdup(in);
        tb_node(b, ops[i], name, ins, out);
    }
    g_autofree char *last = g_strdup_printf("y%d", n - 1);
    tb_output(b, last, F32, -1, NULL);
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

/* fp_reuse_cold on m's main graph, every kernel moving traffic[i] (T when NULL); *arena (when not
 * NULL) the bytes of its plan's buffers. */
static uint64_t *cold_of(const fp_model *m, const uint64_t *traffic, uint64_t capacity, uint32_t *n, uint64_t *arena)
{
    fp_node *const *order = fp_graph_order(m->main, n, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(order);
    g_autofree uint64_t *t = g_new(uint64_t, *n);
    for (uint32_t i = 0; i < *n; i++)
        t[i] = traffic ? traffic[i] : T;
    return fp_reuse_cold(m->main, order, *n, t, capacity, arena);
}

/* A residual read back after more distinct bytes than the capacity: r = Exp(x), three Exps on r,
 * then Add(y3, r). With traffic T, T, 4T, T, T (3T of it at n2 beyond its buffers) and a capacity
 * of 2.5T, r (last read by n1) is 4T back at n4 (3T, y1's buffer and y2's): cold, its 4 KB. Every
 * output is hot: the chain's buffers ping-pong (y2's new buffer was last touched 1.5T back in the
 * run before: x's read, y0's and y1's buffers), the Add takes the buffer y2 freed. With capacity
 * 6T nothing is cold; with 0, nothing either (no cache level). */
static void test_far_residual(void)
{
    static const char *const ops[] = {"Exp", "Exp", "Exp", "Exp", "Add"};
    static const char *const reads[] = {"", "", "", "", "y0"};
    g_autoptr(fp_model) m = chain(ops, reads, 5);
    const uint64_t traffic[] = {T, T, 4 * T, T, T};
    uint32_t n = 0;
    uint64_t arena = 0;
    g_autofree uint64_t *c = cold_of(m, traffic, 5 * T / 2, &n, &arena);
    CU_ASSERT_EQUAL(arena, 3 * V); /* y0, y1 and y2's: y3 and the Add take y1's and y2's again */
    CU_ASSERT_EQUAL_FATAL(n, 5);
    for (uint32_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(c[i], 0);
    CU_ASSERT_EQUAL(c[4], V);
    g_autofree uint64_t *big = cold_of(m, traffic, 6 * T, &n, NULL);
    g_autofree uint64_t *none = cold_of(m, traffic, 0, &n, &arena);
    CU_ASSERT_EQUAL(arena, 0);
    for (uint32_t i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(big[i], 0);
        CU_ASSERT_EQUAL(none[i], 0);
    }
}

/* The distance is in distinct bytes, not traffic: r = Exp(x), five Exps, then Add(y5, r). Each Exp
 * moves T = 2V, all of it its two buffers', which ping-pong: since r's last touch (n1), 40 KB of
 * traffic but two 4 KB buffers. At a capacity of 3V r stays; at 1.5V it is cold. A kernel's traffic
 * beyond its buffers (weights, graph inputs: 3T more at n3) counts in full: r cold at 3V. */
static void test_distinct_bytes(void)
{
    static const char *const ops[] = {"Exp", "Exp", "Exp", "Exp", "Exp", "Exp", "Add"};
    static const char *const reads[] = {"", "", "", "", "", "", "y0"};
    g_autoptr(fp_model) m = chain(ops, reads, 7);
    uint32_t n = 0;
    g_autofree uint64_t *near = cold_of(m, NULL, 3 * V, &n, NULL);
    CU_ASSERT_EQUAL_FATAL(n, 7);
    g_autofree uint64_t *small = cold_of(m, NULL, 3 * V / 2, &n, NULL);
    g_autofree uint64_t *fresh = cold_of(m, (const uint64_t[]){T, T, T, 4 * T, T, T, T}, 3 * V, &n, NULL);
    for (uint32_t i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(near[i] + fresh[i], 0);
    CU_ASSERT_EQUAL(near[6], 0);
    CU_ASSERT_EQUAL(small[6], V);
    CU_ASSERT_EQUAL(fresh[6], V);
}

/* A buffer's first use in a run goes back to its last in the run before; an op ONNX Runtime runs in
 * place writes over the input it reads last. a = Exp(x), b = Relu(a): b takes a's buffer, touched
 * at the end of the run before: nothing cold even at a capacity of one byte. b = Exp(a) (no in-place
 * kernel) takes a buffer of its own, last touched a kernel's traffic back: cold. A node that does
 * not run (FP_REUSE_SKIP) moves the clock by nothing. */
static void test_in_place_and_runs(void)
{
    uint32_t n = 0;
    g_autoptr(fp_model) relu = chain((const char *const[]){"Exp", "Relu"}, NULL, 2);
    uint64_t arena = 0;
    g_autofree uint64_t *r = cold_of(relu, NULL, 1, &n, &arena);
    CU_ASSERT_EQUAL(arena, V); /* the Relu writes over the Exp's buffer */
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(r[0], 0);
    CU_ASSERT_EQUAL(r[1], 0);
    g_autoptr(fp_model) exp = chain((const char *const[]){"Exp", "Exp"}, NULL, 2);
    g_autofree uint64_t *e = cold_of(exp, NULL, 1, &n, &arena);
    CU_ASSERT_EQUAL(arena, 2 * V);
    CU_ASSERT_EQUAL(e[0], 0);
    CU_ASSERT_EQUAL(e[1], V);
    g_autofree uint64_t *s = cold_of(exp, (const uint64_t[]){FP_REUSE_SKIP, T}, 1, &n, NULL);
    CU_ASSERT_EQUAL(s[0], 0);
    CU_ASSERT_EQUAL(s[1], 0); /* a skipped producer gives its output no buffer */
}

/* A view shares its input's buffer: r = Exp(x), v = Reshape(r), two Exps, then Add(y3, v) reads r's
 * buffer, cold as in test_far_residual; the view itself moves nothing. */
static void test_view_alias(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 2, (int64_t[]){1, 1024});
    tb_init_i64(b, "s", 2, (int64_t[]){1, 1024});
    tb_node(b, "Exp", "n0", "x", "r");
    tb_node(b, "Reshape", "n1", "r,s", "v");
    tb_node(b, "Exp", "n2", "v", "e1");
    tb_node(b, "Exp", "n3", "e1", "e2");
    tb_node(b, "Exp", "n4", "e2", "e3");
    tb_node(b, "Add", "n5", "e3,v", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    uint32_t n = 0;
    g_autofree uint64_t *c = cold_of(m, (const uint64_t[]){T, 0, T, 4 * T, T, T}, 5 * T / 2, &n, NULL);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    CU_ASSERT_STRING_EQUAL(fp_graph_order(m->main, &n, NULL)[5]->name, "n5");
    for (uint32_t i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(c[i], 0);
    CU_ASSERT_EQUAL(c[5], V);
}

FP_TEST_SUITE(register_reuse)
{
    CU_pSuite s = CU_add_suite("reuse", NULL, NULL);
    CU_add_test(s, "far_residual", test_far_residual);
    CU_add_test(s, "in_place_and_runs", test_in_place_and_runs);
    CU_add_test(s, "distinct_bytes", test_distinct_bytes);
    CU_add_test(s, "view_alias", test_view_alias);
}
