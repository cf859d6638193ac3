/* test_ir.c - IR suite: arena, interning, op table, dtypes, shapes, topological order, verifier. */
#include <string.h>

#include "ir/graph.h"
#include "tutil.h"

static void test_arena(void)
{
    fp_arena *a = fp_arena_new();
    char *p = fp_arena_alloc(a, 10);
    CU_ASSERT_PTR_NOT_NULL(p);
    CU_ASSERT_EQUAL(((uintptr_t)p) % 16, 0);
    CU_ASSERT_EQUAL(p[9], 0);
    void *big = fp_arena_alloc(a, 1 << 20);
    memset(big, 1, 1 << 20);
    char *s = fp_arena_strndup(a, "hello world", 5);
    CU_ASSERT_STRING_EQUAL(s, "hello");
    CU_ASSERT(fp_arena_reserved(a) >= (1u << 20));
    fp_arena_free(a);
}

/* Many big pieces: every one comes zeroed and keeps what was written to it; after a reset the
 * reused block hands out zeroed memory again where it was written before. */
static void test_arena_big(void)
{
    enum { PIECE = 1 << 20, PIECES = 40 };
    fp_arena *a = fp_arena_new();
    unsigned char *piece[PIECES];
    bool zero = true;
    for (int n = 0; n < PIECES; n++) {
        piece[n] = fp_arena_alloc(a, PIECE);
        for (size_t at = 0; at < PIECE; at += 4096)
            zero &= piece[n][at] == 0 && piece[n][at + 4095] == 0;
        memset(piece[n], n + 1, PIECE);
    }
    CU_ASSERT(zero);
    bool kept = true;
    for (int i = 0; i < PIECES; i++)
        kept &= piece[i][0] == (unsigned char)(i + 1) && piece[i][PIECE - 1] == (unsigned char)(i + 1);
    CU_ASSERT(kept);
    fp_arena_reset(a);
    unsigned char *again = fp_arena_alloc(a, 4096), *raw = fp_arena_alloc_raw(a, 16);
    zero = true;
    for (size_t at = 0; at < 4096; at++)
        zero &= again[at] == 0;
    CU_ASSERT(zero);
    CU_ASSERT_PTR_NOT_NULL(raw);
    fp_arena_free(a);
}

/* fp_arena_lane: other arenas that the first owns: a lane's pieces follow each other whatever the
 * first (or another lane) hands out in between; reset and counted with it; the IR's
 * nodes live in one, its values in the other. */
static void test_arena_lane(void)
{
    fp_arena *a = fp_arena_new();
    fp_arena *lane = fp_arena_lane(a, 0), *other = fp_arena_lane(a, 1);
    CU_ASSERT_PTR_NOT_NULL(lane);
    CU_ASSERT_PTR_NOT_EQUAL(lane, a);
    CU_ASSERT_PTR_NOT_EQUAL(lane, other);
    CU_ASSERT_PTR_EQUAL(fp_arena_lane(a, 0), lane);
    fp_arena_alloc(other, 16);
    char *p1 = fp_arena_alloc(lane, 40);
    char *x = fp_arena_alloc(a, 100);
    char *p2 = fp_arena_alloc(lane, 40);
    CU_ASSERT_PTR_EQUAL(p2, p1 + 48); /* 40 rounded up to 16, and a's piece elsewhere */
    CU_ASSERT(x + 100 <= p1 || x >= p2 + 40);
    size_t before = fp_arena_reserved(a);
    fp_arena_alloc(lane, (size_t)1 << 20);
    CU_ASSERT(fp_arena_reserved(a) >= before + ((size_t)1 << 20)); /* the lane's blocks count */
    fp_arena_reset(a);
    char *q = fp_arena_alloc(lane, 40);
    CU_ASSERT_PTR_EQUAL(q, p1); /* the lane was reset with a: its first block is handed out again */
    memset(q, 7, 40);           /* (ASan: no longer poisoned) */
    CU_ASSERT(fp_arena_reserved(a) < before + ((size_t)1 << 20)); /* the big piece went back */
    fp_arena_free(a);                                             /* frees the lane too (ASan: no leak) */

    /* the nodes of a model, one after the other in its arena's lane */
    g_autoptr(fp_model) m = fp_model_new("lane.onnx", "onnx");
    fp_graph *g = fp_graph_new(m, "main", NULL, NULL);
    fp_node *n1 = fp_node_new_attrs(g, FP_OP_RELU, NULL, NULL, "r1", 1, 1, 0);
    fp_value *v = fp_graph_value(g, "between"); /* a value and a name: not in the lane */
    fp_node *n2 = fp_node_new_attrs(g, FP_OP_CONV, NULL, NULL, "c1", 3, 1, 2);
    size_t bytes1 = (sizeof(fp_node) + 2 * sizeof(fp_value *) + 15) & ~(size_t)15;
    CU_ASSERT_PTR_NOT_NULL(v);
    CU_ASSERT_PTR_EQUAL((char *)n2, (char *)n1 + bytes1);
    /* and its values, slab after slab, whatever the model's arena holds between them */
    fp_value *first = fp_graph_value(g, "v0"), *last = first;
    for (int i = 1; i < 200; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "v%d", i);
        fp_arena_alloc(m->arena, 100);
        last = fp_graph_value(g, name);
    }
    CU_ASSERT_PTR_EQUAL(last, first + 199);
}

static void test_intern(void)
{
    g_autoptr(fp_model) m = fp_model_new("x.onnx", "onnx");
    const char *a = fp_intern(m, "conv1", -1);
    char buf[] = "conv1xyz";
    const char *b = fp_intern(m, buf, 5);
    CU_ASSERT_PTR_EQUAL(a, b);
    CU_ASSERT_PTR_NOT_EQUAL(a, fp_intern(m, "conv2", -1));
}

/* Blobs and dims: one copy per content, scalars share one dim, unknown rank has none. */
static void test_intern_blob(void)
{
    g_autoptr(fp_model) m = fp_model_new("x.onnx", "onnx");
    const char *sym = fp_intern(m, "N", -1);
    fp_dim a[] = {{-1, sym}, {3, NULL}}, b[] = {{-1, sym}, {3, NULL}}, c[] = {{-1, sym}, {4, NULL}};
    fp_dim *ia = fp_intern_dims(m, a, 2);
    CU_ASSERT_PTR_NOT_EQUAL(ia, a);
    CU_ASSERT_PTR_EQUAL(ia, fp_intern_dims(m, b, 2));
    CU_ASSERT(memcmp(ia, a, sizeof a) == 0);
    CU_ASSERT_PTR_NOT_EQUAL(ia, fp_intern_dims(m, c, 2));
    CU_ASSERT_PTR_NOT_EQUAL(ia, fp_intern_dims(m, a, 1)); /* a prefix is another blob */
    CU_ASSERT_PTR_EQUAL(fp_intern_dims(m, a, 0), fp_intern_dims(m, c, 0));
    CU_ASSERT(fp_intern_dims(m, a, 0)->value == 0 && fp_intern_dims(m, a, 0)->sym == NULL);
    CU_ASSERT_PTR_NULL(fp_intern_dims(m, a, -1));
    const uint8_t bytes[] = {1, 2, 3, 4, 5};
    const void *x = fp_intern_blob(m, bytes, 5);
    CU_ASSERT_EQUAL(((uintptr_t)x) % 16, 0);
    CU_ASSERT_PTR_EQUAL(x, fp_intern_blob(m, (uint8_t[]){1, 2, 3, 4, 5}, 5));
    CU_ASSERT_PTR_NOT_EQUAL(x, fp_intern_blob(m, bytes, 4));
    CU_ASSERT_PTR_NOT_NULL(fp_intern_blob(m, bytes, 0));
    CU_ASSERT_PTR_EQUAL(fp_intern_blob(m, bytes, 0), fp_intern_blob(m, a, 0));
}

static void test_op_table(void)
{
    CU_ASSERT_EQUAL(FP_OP_COUNT, FP_OP_COUNT_EXPECTED);
    for (int i = 1; i < FP_OP_COUNT; i++) {
        CU_ASSERT_PTR_NOT_NULL(fp_op_table[i].name);
        /* every name maps back to its kind (names are unique) */
        CU_ASSERT_EQUAL(fp_op_from_onnx("", fp_op_table[i].name), (fp_op)i);
    }
    CU_ASSERT_EQUAL(fp_op_from_onnx("", "Conv"), FP_OP_CONV);
    CU_ASSERT_EQUAL(fp_op_from_onnx("com.example", "Conv"), FP_OP_OPAQUE);
    CU_ASSERT_EQUAL(fp_op_from_onnx("", "NoSuchOp"), FP_OP_OPAQUE);
    CU_ASSERT(fp_op_has(FP_OP_RESHAPE, FP_OPF_VIEW));
    CU_ASSERT(fp_op_has(FP_OP_RELU, FP_OPF_ACT | FP_OPF_INPLACE));
    CU_ASSERT(!fp_op_has(FP_OP_CONV, FP_OPF_EW));
    CU_ASSERT_EQUAL(fp_op_fuse_kind(FP_OP_BATCH_NORM), FP_FK_NORM);
}

static void test_dtype(void)
{
    uint64_t n = 0;
    CU_ASSERT(fp_dtype_bytes(FP_DT_FLOAT, 10, &n) && n == 40);
    CU_ASSERT(fp_dtype_bytes(FP_DT_FLOAT16, 3, &n) && n == 6);
    CU_ASSERT(fp_dtype_bytes(FP_DT_INT4, 3, &n) && n == 2);
    CU_ASSERT(!fp_dtype_bytes(FP_DT_STRING, 3, &n));
    CU_ASSERT(!fp_dtype_bytes(FP_DT_DOUBLE, UINT64_MAX / 4, &n)); /* overflow */
    CU_ASSERT_EQUAL(fp_dtype_from_name("fp16"), FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(fp_dtype_from_name("FLOAT"), FP_DT_FLOAT);
    CU_ASSERT_EQUAL(fp_dtype_from_name("bogus"), FP_DT_UNDEFINED);
    CU_ASSERT_STRING_EQUAL(fp_dtype_name(FP_DT_BFLOAT16), "bfloat16");
}

static void test_shape(void)
{
    fp_dim d[3] = {{1, NULL}, {-1, "batch"}, {-1, NULL}};
    fp_shape s = {3, d};
    g_autofree char *str = fp_shape_to_string(&s);
    CU_ASSERT_STRING_EQUAL(str, "1xbatchx?");
    CU_ASSERT(!fp_shape_static(&s));
    fp_dim e[2] = {{3, NULL}, {4, NULL}};
    fp_shape t = {2, e};
    uint64_t n = 0;
    CU_ASSERT(fp_shape_numel(&t, &n) && n == 12);
    fp_dim huge[2] = {{INT64_MAX, NULL}, {4, NULL}};
    fp_shape h = {2, huge};
    CU_ASSERT(!fp_shape_numel(&h, &n));
    fp_shape unk = {-1, NULL};
    g_autofree char *ustr = fp_shape_to_string(&unk);
    CU_ASSERT_STRING_EQUAL(ustr, "?");
}

/* x -> A -> a -> B -> b ; a -> C -> c ; (b, c) -> D -> out, built in reverse file order */
static fp_model *diamond(bool cycle)
{
    fp_model *m = fp_model_new("t", "test");
    fp_graph *g = fp_graph_new(m, "main", NULL, NULL);
    fp_value *x = fp_graph_value(g, "x");
    x->kind = FP_VALUE_INPUT;
    g_ptr_array_add(g->inputs, x);
    struct {
        const char *name, *in0, *in1, *out;
    } spec[] = {{"D", "b", "c", "out"},
                {"C", "a", NULL, "c"},
                {"B", "a", NULL, "b"},
                {"A", cycle ? "out" : "x", NULL, "a"}};
    for (size_t i = 0; i < G_N_ELEMENTS(spec); i++) {
        fp_node *n = fp_node_new(g, FP_OP_ADD, NULL, "", spec[i].name, spec[i].in1 ? 2 : 1, 1);
        n->inputs[0] = fp_graph_value(g, spec[i].in0);
        if (spec[i].in1)
            n->inputs[1] = fp_graph_value(g, spec[i].in1);
        fp_value *o = fp_graph_value(g, spec[i].out);
        o->producer = n;
        n->outputs[0] = o;
    }
    fp_value *out = fp_graph_value(g, "out");
    out->is_output = true;
    g_ptr_array_add(g->outputs, out);
    fp_model_link(m);
    return m;
}

static void test_topo(void)
{
    g_autoptr(fp_model) m = diamond(false);
    uint32_t n = 0;
    g_autoptr(GError) err = NULL;
    g_autofree fp_node **order = fp_graph_topo(m->main, &n, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(order);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_STRING_EQUAL(order[0]->name, "A");
    /* among ready nodes, file order wins: C (index 1) before B (index 2) */
    CU_ASSERT_STRING_EQUAL(order[1]->name, "C");
    CU_ASSERT_STRING_EQUAL(order[2]->name, "B");
    CU_ASSERT_STRING_EQUAL(order[3]->name, "D");
    CU_ASSERT(fp_model_verify(m, NULL));
    fp_value *a = fp_graph_find(m->main, "a");
    CU_ASSERT_EQUAL(a->n_uses, 2);
}

/* ONNX Runtime's order walks up from the leaf D and takes the highest producer first: B (index 2)
 * and what it reads before C (index 1). */
static void test_ort_order(void)
{
    g_autoptr(fp_model) m = diamond(false);
    uint32_t n = 0;
    g_autofree fp_node **order = fp_graph_ort_order(m->main, &n);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_STRING_EQUAL(order[0]->name, "A");
    CU_ASSERT_STRING_EQUAL(order[1]->name, "B");
    CU_ASSERT_STRING_EQUAL(order[2]->name, "C");
    CU_ASSERT_STRING_EQUAL(order[3]->name, "D");
}

static void test_cycle(void)
{
    g_autoptr(fp_model) m = diamond(true);
    g_autoptr(GError) err = NULL;
    uint32_t n = 0;
    CU_ASSERT_PTR_NULL(fp_graph_topo(m->main, &n, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT(g_error_matches(err, FP_IR_ERROR, FP_IR_ERROR_CYCLE));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "cycle through node"));
    g_clear_error(&err);
    CU_ASSERT(!fp_model_verify(m, &err));
}

static void test_verify_dangling(void)
{
    g_autoptr(fp_model) m = diamond(false);
    fp_node *c = fp_graph_find(m->main, "c")->producer;
    c->inputs[0] = fp_graph_value(m->main, "nowhere");
    fp_model_link(m);
    g_autoptr(GError) err = NULL;
    CU_ASSERT(!fp_model_verify(m, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT(g_error_matches(err, FP_IR_ERROR, FP_IR_ERROR_DANGLING));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "node 'C'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "'nowhere'"));
}

FP_TEST_SUITE(register_ir)
{
    CU_pSuite s = CU_add_suite("ir", NULL, NULL);
    CU_add_test(s, "arena", test_arena);
    CU_add_test(s, "arena big", test_arena_big);
    CU_add_test(s, "arena lane", test_arena_lane);
    CU_add_test(s, "intern", test_intern);
    CU_add_test(s, "intern blobs and dims", test_intern_blob);
    CU_add_test(s, "op_table", test_op_table);
    CU_add_test(s, "dtype", test_dtype);
    CU_add_test(s, "shape", test_shape);
    CU_add_test(s, "topo", test_topo);
    CU_add_test(s, "ort_order", test_ort_order);
    CU_add_test(s, "cycle", test_cycle);
    CU_add_test(s, "verify_dangling", test_verify_dangling);
}
