/* test_onnx.c - ONNX frontend suite: translation, weights as metadata, subgraphs, bad input. */
#include <string.h>

#include "frontends/load.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_internal.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, I64 = 7 };

/* input x[N,3,8,8] -> Conv(w 16x3x3x3 = 1728 B inline, big w2 64x16x3x3 = 36 KiB in file) ... */
static tb *conv_model(void)
{
    tb *b = tb_new(13);
    int64_t xd[] = {-1, 3, 8, 8}, wd[] = {16, 3, 3, 3}, w2d[] = {64, 16, 3, 3}, yd[] = {-1, 64, 8, 8};
    tb_input(b, "x", F32, 4, xd);
    tb_init(b, "w", F32, 4, wd);
    tb_init(b, "w2", F32, 4, w2d);
    tb_node_t *c = tb_node(b, "Conv", "conv1", "x,w", "a");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Relu", "relu1", "a", "r");
    tb_node(b, "Conv", "conv2", "r,w2", "y");
    tb_output(b, "y", F32, 4, yd);
    return b;
}

static fp_model *load_tb(tb *b, GError **err)
{
    g_autoptr(GBytes) bytes = tb_pack(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    fp_model *m = fp_onnx_load_buffer("mem.onnx", data, len, err);
    if (m && !fp_model_verify(m, err)) {
        fp_model_free(m);
        return NULL;
    }
    return m;
}

/* Constant values kept (fp_inline_max): floating-point ones up to FP_INLINE_FLOAT_MAX bytes,
 * integer ones up to FP_INLINE_MAX; larger ones are weights, kept by location only. */
static void test_inline_limits(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_init(b, "f64", F32, 1, (int64_t[]){FP_INLINE_FLOAT_MAX / 4});
    tb_init(b, "f65", F32, 1, (int64_t[]){FP_INLINE_FLOAT_MAX / 4 + 1});
    tb_init(b, "d32", 11, 1, (int64_t[]){FP_INLINE_FLOAT_MAX / 8});
    tb_init(b, "d33", 11, 1, (int64_t[]){FP_INLINE_FLOAT_MAX / 8 + 1});
    tb_init(b, "i512", 7, 1, (int64_t[]){FP_INLINE_MAX / 8});
    tb_init(b, "i513", 7, 1, (int64_t[]){FP_INLINE_MAX / 8 + 1});
    tb_node(b, "Relu", "relu", "x", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_tb(b, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    static const struct {
        const char *name;
        int where;
    } want[] = {{"f64", FP_DATA_INLINE}, {"f65", FP_DATA_FILE},    {"d32", FP_DATA_INLINE},
                {"d33", FP_DATA_FILE},   {"i512", FP_DATA_INLINE}, {"i513", FP_DATA_FILE}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        fp_value *v = fp_graph_find(m->main, want[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_EQUAL(v->tensor->where, want[i].where);
        CU_ASSERT_EQUAL(v->tensor->where == FP_DATA_INLINE, v->tensor->data != NULL);
    }
}

static void test_basic(void)
{
    tb *b = conv_model();
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_tb(b, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->ir_version, 8);
    CU_ASSERT_EQUAL(fp_model_opset(m, ""), 13);
    CU_ASSERT_EQUAL(m->main->nodes->len, 3);
    CU_ASSERT_EQUAL(m->main->inputs->len, 1);
    CU_ASSERT_EQUAL(m->main->initializers->len, 2);
    fp_node *conv = g_ptr_array_index(m->main->nodes, 0);
    CU_ASSERT_EQUAL(conv->op, FP_OP_CONV);
    const fp_attr *pads = fp_node_attr(conv, "pads");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pads);
    CU_ASSERT_EQUAL(pads->type, FP_ATTR_INTS);
    CU_ASSERT_EQUAL(pads->n, 4);
    fp_value *x = fp_graph_find(m->main, "x");
    CU_ASSERT_STRING_EQUAL(x->shape.dims[0].sym, "N");
    CU_ASSERT_EQUAL(x->shape.dims[1].value, 3);
    fp_value *w = fp_graph_find(m->main, "w"), *w2 = fp_graph_find(m->main, "w2");
    CU_ASSERT_EQUAL(w->kind, FP_VALUE_INITIALIZER);
    CU_ASSERT_EQUAL(w->tensor->nbytes, 16 * 3 * 3 * 3 * 4);
    /* float32 over FP_INLINE_FLOAT_MAX (1728 B) and over FP_INLINE_MAX (36 KiB): weights, only
     * their location is kept; an integer constant up to FP_INLINE_MAX keeps its values
     * (test_onnx.c's shape tensors, the testdata suite) */
    CU_ASSERT_EQUAL(w->tensor->where, FP_DATA_FILE);
    CU_ASSERT_EQUAL(w->tensor->length, 16 * 3 * 3 * 3 * 4);
    CU_ASSERT_EQUAL(w2->tensor->where, FP_DATA_FILE);
    CU_ASSERT_EQUAL(w2->tensor->length, 64 * 16 * 9 * 4);
    CU_ASSERT_PTR_NULL(w2->tensor->data);
    fp_value *a = fp_graph_find(m->main, "a");
    CU_ASSERT_EQUAL(a->n_uses, 1);
    CU_ASSERT_PTR_EQUAL(a->producer, conv);
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    CU_ASSERT_EQUAL(st.nodes, 3);
    CU_ASSERT_EQUAL(st.params, 16 * 27 + 64 * 144);
    CU_ASSERT_EQUAL(st.param_bytes, 4 * (16 * 27 + 64 * 144));
}

/* The binary reader decodes the usual NodeProto, AttributeProto and TensorProto shapes straight
 * from the wire and leaves the rest to protobuf-c (onnx_wire.c node_from_wire): both must give
 * the IR that translating protobuf-c's unpack of the whole model gives. */
static void test_wire_paths(void)
{
    tb *b = tb_new(13);
    int64_t xd[] = {-1, 3, 8, 8}, wd[] = {4, 3, 3, 3};
    tb_input(b, "x", F32, 4, xd);
    tb_init(b, "w", F32, 4, wd);                      /* a payload over the limit: a marker */
    tb_init_i64(b, "shape", 2, (int64_t[]){-1, 256}); /* kept inline */
    tb_init_f32(b, "s", 1, (float[]){0.5f});
    tb_node_t *c = tb_node(b, "Conv", "conv", "x,w", "a");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_attr_ints(b, c, "strides", 2, (int64_t[]){1, 1});
    tb_attr_i(b, c, "group", 1);
    c->doc_string = "a doc string, not imported";
    tb_node_t *l = tb_node(b, "LeakyRelu", "", "a", "l"); /* no name: synthesized */
    tb_attr_f(b, l, "alpha", 0.25f);
    tb_node_t *r = tb_node(b, "Resize", "resize", "l,,s", "r"); /* an omitted input */
    tb_attr_s(b, r, "mode", "nearest");
    tb_node_t *ms = tb_node(b, "FusedGemm", "ms", "r", "m"); /* another domain */
    ms->domain = "com.microsoft";
    tb_node_t *u = tb_node(b, "Reshape", "reshape", "m,shape", "y"); /* an unknown field: protobuf-c */
    static uint8_t five = 5;
    static ProtobufCMessageUnknownField unknown = {.tag = 99,
                                                   .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT,
                                                   .len = 1,
                                                   .data = &five};
    u->base.n_unknown_fields = 1;
    u->base.unknown_fields = &unknown;
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) wire = fp_onnx_load_buffer("mem.onnx", data, len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(wire);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    g_autoptr(fp_model) whole = fp_onnx_from_proto("mem.onnx", "onnx", mp, len, &err);
    onnx__model_proto__free_unpacked(mp, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    g_autofree char *diff = tm_model_diff(wire, whole);
    if (diff)
        fprintf(stderr, "wire_paths: %s\n", diff);
    CU_ASSERT_PTR_NULL(diff);
    CU_ASSERT_EQUAL(fp_graph_find(wire->main, "w")->tensor->where, FP_DATA_FILE);
    fp_node *leaky = g_ptr_array_index(wire->main->nodes, 1);
    CU_ASSERT_STRING_EQUAL(leaky->name, "LeakyRelu_1");
    CU_ASSERT_PTR_NULL(((fp_node *)g_ptr_array_index(wire->main->nodes, 2))->inputs[1]);
}

static void test_payload_offset(void)
{
    /* the recorded file range of a stripped payload really holds the tensor's bytes */
    tb *b = tb_new(13);
    int64_t d[] = {2048};
    tb_input(b, "x", F32, 1, d);
    tb_init(b, "w", F32, 1, d);
    tb_node(b, "Add", "add", "x,w", "y");
    tb_output(b, "y", F32, 1, d);
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_onnx_load_buffer("mem.onnx", data, len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_tensor *t = fp_graph_find(m->main, "w")->tensor;
    CU_ASSERT_EQUAL(t->where, FP_DATA_FILE);
    CU_ASSERT_EQUAL(t->length, 8192);
    CU_ASSERT(t->offset + t->length <= len);
    /* the payload is zeros; the byte before it is the length varint's last byte (8192 = 0x80 0x40) */
    CU_ASSERT_EQUAL(data[t->offset - 1], 0x40);
}

static void test_initializer_as_input(void)
{
    tb *b = conv_model();
    int64_t wd[] = {16, 3, 3, 3};
    tb_input(b, "w", F32, 4, wd); /* IR < 4 style: the weight is also listed as an input */
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_tb(b, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->main->inputs->len, 1);
    CU_ASSERT_EQUAL(fp_graph_find(m->main, "w")->kind, FP_VALUE_INITIALIZER);
}

static void expect_error(tb *b, const char *needle)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = load_tb(b, &err);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    tu_expect_error(err, needle);
}

static void test_two_producers(void)
{
    tb *b = conv_model();
    tb_node(b, "Relu", "relu2", "a", "r");
    expect_error(b, "'r' is produced by both node 'relu1' and node 'relu2'");
    tb_free(b);
}

static void test_dangling(void)
{
    tb *b = conv_model();
    tb_node(b, "Add", "add9", "r,ghost", "z");
    expect_error(b, "node 'add9' (Add): input 1 'ghost' is produced by no node");
    tb_free(b);
}

static void test_cycle(void)
{
    tb *b = tb_new(13);
    int64_t d[] = {4};
    tb_input(b, "x", F32, 1, d);
    tb_node(b, "Add", "p", "x,q_out", "p_out");
    tb_node(b, "Relu", "q", "p_out", "q_out");
    tb_output(b, "q_out", F32, 1, d);
    expect_error(b, "cycle through node");
    tb_free(b);
}

static void test_duplicate_initializer(void)
{
    tb *b = conv_model();
    int64_t wd[] = {16, 3, 3, 3};
    tb_init(b, "w", F32, 4, wd);
    expect_error(b, "duplicate initializer 'w'");
    tb_free(b);
}

static void test_rank_limit(void)
{
    tb *b = tb_new(13);
    int64_t dims[100];
    for (int i = 0; i < 100; i++)
        dims[i] = 1;
    tb_input(b, "x", F32, 100, dims);
    tb_node(b, "Relu", "r", "x", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_error(b, "value 'x': rank 100 exceeds the limit");
    tb_free(b);
}

static void test_truncated(void)
{
    tb *b = conv_model();
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    /* every prefix either fails with a message or (rarely) parses: never crashes */
    unsigned failures = 0;
    for (gsize cut = 1; cut < len; cut += 7) {
        g_autoptr(GError) err = NULL;
        fp_model *m = fp_onnx_load_buffer("t.onnx", data, cut, &err);
        if (!m) {
            failures++;
            CU_ASSERT_PTR_NOT_NULL(err);
        }
        fp_model_free(m);
    }
    CU_ASSERT(failures > 0);
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_onnx_load_buffer("t.onnx", data, len - 3, &err);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "at byte"));
}

static void test_random_bytes(void)
{
    GRand *r = g_rand_new_with_seed(42);
    uint8_t buf[512];
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (uint8_t)g_rand_int(r);
        g_autoptr(GError) err = NULL;
        fp_model *m = fp_onnx_load_buffer("r.onnx", buf, 1 + g_rand_int_range(r, 0, sizeof buf), &err);
        CU_ASSERT(m != NULL || err != NULL);
        fp_model_free(m);
    }
    g_rand_free(r);
}

/* If with then/else branches reading an outer value */
static void test_subgraph_outer(void)
{
    tb *b = tb_new(13);
    int64_t d[] = {4};
    tb_input(b, "x", F32, 1, d);
    tb_input(b, "cond", 9, 0, NULL);
    tb_node(b, "Relu", "pre", "x", "px");
    tb_node_t *iff_proto = tb_node(b, "If", "branch", "cond", "y");
    tb_output(b, "y", F32, 1, d);
    tb *then_b = tb_new(13), *else_b = tb_new(13);
    tb_node(then_b, "Neg", "neg", "px", "t_out");
    tb_output(then_b, "t_out", F32, 1, d);
    tb_node(else_b, "Abs", "abs", "px", "e_out");
    tb_output(else_b, "e_out", F32, 1, d);
    tb_attr_graph(b, iff_proto, "then_branch", then_b);
    tb_attr_graph(b, iff_proto, "else_branch", else_b);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_tb(b, &err);
    tb_free(b);
    tb_free(then_b);
    tb_free(else_b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->graphs->len, 3);
    fp_node *iff = fp_graph_find(m->main, "y")->producer;
    CU_ASSERT_EQUAL(iff->op, FP_OP_IF);
    CU_ASSERT_EQUAL(iff->n_subgraphs, 2);
    CU_ASSERT_EQUAL_FATAL(fp_node_n_implicit(iff), 1);
    fp_value *px = fp_graph_find(m->main, "px");
    CU_ASSERT_PTR_EQUAL(iff->ext->implicit[0], px);
    CU_ASSERT_EQUAL(fp_node_n_ctrl(iff), 0);
    fp_graph *then_g = iff->subgraphs[0];
    fp_node *neg = g_ptr_array_index(then_g->nodes, 0);
    CU_ASSERT_PTR_NULL(neg->ext); /* no implicit input or control edge: no fp_node_ext */
    CU_ASSERT_EQUAL(fp_node_n_implicit(neg), 0);
    CU_ASSERT_PTR_NULL(fp_node_implicit(neg));
    CU_ASSERT_PTR_EQUAL(neg->inputs[0], px);
    CU_ASSERT_PTR_NULL(fp_graph_find(then_g, "px")); /* placeholder removed */
    CU_ASSERT_EQUAL(px->n_uses, 3);                  /* Neg, Abs and the If (implicit) */
    /* topological order puts the producer of the outer value before the If */
    uint32_t n = 0;
    g_autofree fp_node **order = fp_graph_topo(m->main, &n, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(order);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(order[0]->name, "pre");
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    CU_ASSERT_EQUAL(st.nodes, 4);
}

/* fp_node.opset is 16 bits: a version beyond it reads as the largest (every rule compares the
 * version with small ones), the model keeps the version as imported. */
static void test_opset_clamped(void)
{
    int64_t versions[] = {13, 70000, (int64_t)1 << 40};
    int16_t want[] = {13, INT16_MAX, INT16_MAX};
    for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
        tb *b = tb_new(versions[i]);
        tb_input(b, "x", F32, 1, (int64_t[]){4});
        tb_node(b, "Relu", "relu", "x", "y");
        tb_output(b, "y", F32, 1, (int64_t[]){4});
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_model) m = load_tb(b, &err);
        tb_free(b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(fp_model_opset(m, ""), versions[i]);
        CU_ASSERT_EQUAL(((fp_node *)m->main->nodes->pdata[0])->opset, want[i]);
    }
}

static void test_subgraph_unresolved(void)
{
    tb *b = tb_new(13);
    int64_t d[] = {4};
    tb_input(b, "cond", 9, 0, NULL);
    tb_node_t *iff = tb_node(b, "If", "branch", "cond", "y");
    tb_output(b, "y", F32, 1, d);
    tb *then_b = tb_new(13), *else_b = tb_new(13);
    tb_node(then_b, "Neg", "neg", "nothing_here", "t_out");
    tb_output(then_b, "t_out", F32, 1, d);
    tb_node(else_b, "Identity", "id", "cond", "e_out");
    tb_output(else_b, "e_out", F32, 1, d);
    tb_attr_graph(b, iff, "then_branch", then_b);
    tb_attr_graph(b, iff, "else_branch", else_b);
    expect_error(b, "node 'neg' (Neg): input 0 'nothing_here' is produced by no node");
    tb_free(b);
    tb_free(then_b);
    tb_free(else_b);
}

static void test_external_data(void)
{
    tb *b = conv_model();
    tb_make_external(b, "w2", "weights.bin", 4096, 36864);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_tb(b, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_tensor *t = fp_graph_find(m->main, "w2")->tensor;
    CU_ASSERT_EQUAL(t->where, FP_DATA_EXTERNAL);
    CU_ASSERT_STRING_EQUAL(t->location, "weights.bin");
    CU_ASSERT_EQUAL(t->offset, 4096);
    CU_ASSERT_EQUAL(t->length, 36864);
    CU_ASSERT_EQUAL(t->nbytes, 36864);
}

FP_TEST_SUITE(register_onnx)
{
    CU_pSuite s = CU_add_suite("onnx", NULL, NULL);
    CU_add_test(s, "basic", test_basic);
    CU_add_test(s, "inline_limits", test_inline_limits);
    CU_add_test(s, "wire_paths", test_wire_paths);
    CU_add_test(s, "payload_offset", test_payload_offset);
    CU_add_test(s, "initializer_as_input", test_initializer_as_input);
    CU_add_test(s, "two_producers", test_two_producers);
    CU_add_test(s, "dangling", test_dangling);
    CU_add_test(s, "cycle", test_cycle);
    CU_add_test(s, "duplicate_initializer", test_duplicate_initializer);
    CU_add_test(s, "rank_limit", test_rank_limit);
    CU_add_test(s, "truncated", test_truncated);
    CU_add_test(s, "random_bytes", test_random_bytes);
    CU_add_test(s, "subgraph_outer", test_subgraph_outer);
    CU_add_test(s, "subgraph_unresolved", test_subgraph_unresolved);
    CU_add_test(s, "opset_clamped", test_opset_clamped);
    CU_add_test(s, "external_data", test_external_data);
}
