/* test_shapes.c - shape inference and per-op metrics on crafted models: rules, symbolic batch
 * propagation, --batch binding, folding, inconsistent input; FLOP and byte formulas against
 * hand-computed numbers (docs/metrics.md). */
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "ir/arena.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "tutil.h"

enum { F32 = 1, I64 = 7 };

/* Loads b, runs shapes (batch binding optional) and metrics; NULL + *err on failure. */
static fp_model *analyze(tb *b, int64_t batch, GError **err)
{
    g_autoptr(GBytes) bytes = tb_pack(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    fp_model *m = fp_onnx_load_buffer("mem.onnx", data, len, err);
    if (!m)
        return NULL;
    fp_shape_opts o = {.batch = batch};
    if (!fp_pass_shapes(m, &o, NULL, err)) {
        fp_model_free(m);
        return NULL;
    }
    fp_pass_metrics(m, NULL);
    return m;
}

static const char *shape_of(fp_model *m, const char *name, char *buf, size_t n)
{
    fp_value *v = fp_graph_find(m->main, name);
    g_autofree char *s = v ? fp_shape_to_string(&v->shape) : g_strdup("(none)");
    g_strlcpy(buf, s, n);
    return buf;
}

#define ASSERT_SHAPE(m, name, want)                                       \
    do {                                                                  \
        char buf_[128];                                                   \
        const char *got_ = shape_of(m, name, buf_, sizeof buf_);          \
        if (strcmp(got_, want) != 0)                                      \
            fprintf(stderr, "\n  %s: got %s, want %s", name, got_, want); \
        CU_ASSERT_STRING_EQUAL(got_, want);                               \
    } while (0)

static fp_metrics metrics_of(fp_model *m, const char *node)
{
    for (guint i = 0; i < m->main->nodes->len; i++) {
        fp_node *n = m->main->nodes->pdata[i];
        if (strcmp(n->name, node) == 0)
            return n->metrics;
    }
    CU_FAIL("no such node");
    return (fp_metrics){0};
}

static void test_conv_family(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 10, 10});
    tb_init(b, "wg", F32, 4, (int64_t[]){16, 2, 3, 3});
    tb_node_t *g = tb_node(b, "Conv", "grouped", "x,wg", "yg");
    tb_attr_i(b, g, "group", 4);
    tb_attr_ints(b, g, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_input(b, "xd", F32, 4, (int64_t[]){1, 3, 12, 12});
    tb_init(b, "wd", F32, 4, (int64_t[]){4, 3, 3, 3});
    tb_init(b, "bd", F32, 1, (int64_t[]){4});
    tb_node_t *d = tb_node(b, "Conv", "dilated", "xd,wd,bd", "yd");
    tb_attr_ints(b, d, "dilations", 2, (int64_t[]){2, 2});
    tb_input(b, "xs", F32, 4, (int64_t[]){2, 3, 9, 9});
    tb_init(b, "ws", F32, 4, (int64_t[]){6, 3, 3, 3});
    tb_node_t *s = tb_node(b, "Conv", "strided", "xs,ws", "ys");
    tb_attr_ints(b, s, "strides", 2, (int64_t[]){2, 2});
    tb_node_t *same = tb_node(b, "Conv", "same_upper", "xs,ws", "ysu");
    tb_attr_ints(b, same, "strides", 2, (int64_t[]){2, 2});
    tb_attr_s(b, same, "auto_pad", "SAME_UPPER");
    tb_init(b, "wt", F32, 4, (int64_t[]){3, 5, 3, 3});
    tb_node_t *t = tb_node(b, "ConvTranspose", "deconv", "xs,wt", "yt");
    tb_attr_ints(b, t, "strides", 2, (int64_t[]){2, 2});
    tb_attr_ints(b, t, "output_padding", 2, (int64_t[]){1, 1});
    tb_output(b, "yg", F32, -1, NULL);
    tb_output(b, "yd", F32, -1, NULL);
    tb_output(b, "ys", F32, -1, NULL);
    tb_output(b, "ysu", F32, -1, NULL);
    tb_output(b, "yt", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "yg", "1x16x10x10");
    ASSERT_SHAPE(m, "yd", "1x4x8x8");
    ASSERT_SHAPE(m, "ys", "2x6x4x4");
    ASSERT_SHAPE(m, "ysu", "2x6x5x5");
    ASSERT_SHAPE(m, "yt", "2x5x20x20"); /* 2*(9-1) + 3 + 1 */
    /* grouped: 1600 outputs x (2 channels x 3 x 3) MACs, 2 FLOPs each */
    fp_metrics mg = metrics_of(m, "grouped");
    CU_ASSERT_EQUAL(mg.flops, 57600);
    CU_ASSERT_EQUAL(mg.bytes_act, 1 * 8 * 10 * 10 * 4);
    CU_ASSERT_EQUAL(mg.bytes_weight, 16 * 2 * 9 * 4);
    CU_ASSERT_EQUAL(mg.bytes_out, 1600 * 4);
    CU_ASSERT_EQUAL(mg.params, 16 * 2 * 9);
    /* dilated: 256 outputs x 27 MACs x 2 + 256 bias adds */
    CU_ASSERT_EQUAL(metrics_of(m, "dilated").flops, 2 * 256 * 27 + 256);
    CU_ASSERT_EQUAL(metrics_of(m, "dilated").params, 4 * 27 + 4);
    /* strided: 192 outputs x 27 MACs x 2 */
    CU_ASSERT_EQUAL(metrics_of(m, "strided").flops, 10368);
    /* transpose: 2*3*9*9 inputs scatter into 5 x 3 x 3 outputs each */
    CU_ASSERT_EQUAL(metrics_of(m, "deconv").flops, 2 * (2 * 3 * 81) * 45);
}

static void test_gemm_matmul_pool(void)
{
    tb *b = tb_new(13);
    tb_input(b, "a", F32, 2, (int64_t[]){4, 5});
    tb_init(b, "bw", F32, 2, (int64_t[]){6, 5});
    tb_init(b, "c", F32, 1, (int64_t[]){6});
    tb_node_t *g = tb_node(b, "Gemm", "gemm", "a,bw,c", "yg");
    tb_attr_i(b, g, "transB", 1);
    tb_input(b, "p", F32, 4, (int64_t[]){3, 1, 4, 5});
    tb_input(b, "q", F32, 3, (int64_t[]){2, 5, 7});
    tb_node(b, "MatMul", "bmm", "p,q", "ym");
    tb_input(b, "v", F32, 1, (int64_t[]){5});
    tb_node(b, "MatMul", "vecmat", "v,q", "yv");
    tb_input(b, "img", F32, 4, (int64_t[]){1, 2, 8, 8});
    tb_node_t *mp = tb_node(b, "MaxPool", "maxpool", "img", "ymp");
    tb_attr_ints(b, mp, "kernel_shape", 2, (int64_t[]){2, 2});
    tb_attr_ints(b, mp, "strides", 2, (int64_t[]){2, 2});
    tb_node_t *ap = tb_node(b, "AveragePool", "avgpool", "img", "yap");
    tb_attr_ints(b, ap, "kernel_shape", 2, (int64_t[]){3, 3});
    tb_attr_ints(b, ap, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node_t *cp = tb_node(b, "MaxPool", "ceilpool", "img", "ycp");
    tb_attr_ints(b, cp, "kernel_shape", 2, (int64_t[]){3, 3});
    tb_attr_ints(b, cp, "strides", 2, (int64_t[]){2, 2});
    tb_attr_i(b, cp, "ceil_mode", 1);
    tb_node(b, "GlobalAveragePool", "gap", "img", "ygap");
    for (const char *o = "yg\0ym\0yv\0ymp\0yap\0ycp\0ygap\0"; *o; o += strlen(o) + 1)
        tb_output(b, o, F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "yg", "4x6");
    ASSERT_SHAPE(m, "ym", "3x2x4x7");
    ASSERT_SHAPE(m, "yv", "2x7");
    ASSERT_SHAPE(m, "ymp", "1x2x4x4");
    ASSERT_SHAPE(m, "yap", "1x2x8x8");
    ASSERT_SHAPE(m, "ycp", "1x2x4x4"); /* ceil((8-3)/2)+1 = 4 */
    ASSERT_SHAPE(m, "ygap", "1x2x1x1");
    CU_ASSERT_EQUAL(metrics_of(m, "gemm").flops, 2 * 4 * 6 * 5 + 4 * 6);
    CU_ASSERT_EQUAL(metrics_of(m, "bmm").flops, 2 * (3 * 2 * 4 * 7) * 5);
    CU_ASSERT_EQUAL(metrics_of(m, "vecmat").flops, 2 * (2 * 7) * 5);
    CU_ASSERT_EQUAL(metrics_of(m, "maxpool").flops, 32 * 4);
    CU_ASSERT_EQUAL(metrics_of(m, "avgpool").flops, 128 * 9);
    CU_ASSERT_EQUAL(metrics_of(m, "gap").flops, 128);
    CU_ASSERT_EQUAL(metrics_of(m, "bmm").bytes_act, (3 * 4 * 5 + 2 * 5 * 7) * 4);
}

/* torch's x.view(x.size(0), -1) with a symbolic batch: the Reshape keeps `N` */
static tb *flatten_chain(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){-1, 64, 1, 1});
    tb_init_i64(b, "idx0", 0, NULL);
    tb_init_i64(b, "axes0", 1, (int64_t[]){0});
    tb_init_i64(b, "minus1", 1, (int64_t[]){-1});
    tb_node(b, "Shape", "shape", "x", "s");
    tb_node_t *ga = tb_node(b, "Gather", "gather", "s,idx0", "d0");
    tb_attr_i(b, ga, "axis", 0);
    tb_node(b, "Unsqueeze", "unsqueeze", "d0,axes0", "u0");
    tb_node_t *cc = tb_node(b, "Concat", "concat", "u0,minus1", "target");
    tb_attr_i(b, cc, "axis", 0);
    tb_node(b, "Reshape", "reshape", "x,target", "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* flatten_chain analyzed at `batch` (0: symbolic), or NULL with *err set. */
static fp_model *flatten_at(int64_t batch, GError **err)
{
    tb *b = flatten_chain();
    fp_model *m = analyze(b, batch, err);
    tb_free(b);
    return m;
}

static void test_symbolic_batch(void)
{
    tb *b = flatten_chain();
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "y", "Nx64");
    ASSERT_SHAPE(m, "d0", "scalar");
    /* Shape of a symbolic tensor is a runtime op: nothing folded */
    fp_node *shape = fp_graph_find(m->main, "s")->producer;
    CU_ASSERT_FALSE(shape->flags & FP_NODE_FOLDED);
    /* --batch 8 binds N: the chain becomes constant and is folded */
    g_autoptr(fp_model) m8 = analyze(b, 8, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m8);
    ASSERT_SHAPE(m8, "y", "8x64");
    const char *folded[] = {"s", "d0", "u0", "target"};
    for (size_t i = 0; i < G_N_ELEMENTS(folded); i++)
        CU_ASSERT(fp_graph_find(m8->main, folded[i])->producer->flags & FP_NODE_FOLDED);
    CU_ASSERT_FALSE(fp_graph_find(m8->main, "y")->producer->flags & FP_NODE_FOLDED);
    fp_value *t = fp_graph_find(m8->main, "target");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp_value_fold(t));
    int64_t vals[2];
    memcpy(vals, fp_value_fold(t)->data, sizeof vals);
    CU_ASSERT_EQUAL(vals[0], 8);
    CU_ASSERT_EQUAL(vals[1], -1);
}

/* A run that cannot fold what the run before it folded clears those marks (a reset clears only
 * the nodes its graph lists as folded): batch 8 folds the Shape chain, the symbolic batch after
 * it folds nothing, batch 8 again folds the chain again. */
static void test_rerun_unfolds(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = flatten_at(8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *chain[] = {"s", "d0", "u0", "target"};
    for (int64_t run = 0; run < 3; run++) {
        int64_t batch = run == 1 ? 0 : 8;
        if (run) {
            fp_shape_opts o = {.batch = batch};
            CU_ASSERT_FATAL(fp_pass_shapes(m, &o, NULL, &err));
        }
        for (size_t i = 0; i < G_N_ELEMENTS(chain); i++)
            CU_ASSERT_EQUAL(!!(fp_graph_find(m->main, chain[i])->producer->flags & FP_NODE_FOLDED), batch != 0);
        CU_ASSERT_EQUAL(fp_value_fold(fp_graph_find(m->main, "target")) != NULL, batch != 0);
        CU_ASSERT_FALSE(fp_graph_find(m->main, "y")->producer->flags & FP_NODE_FOLDED);
        CU_ASSERT_EQUAL(m->main->folded ? m->main->folded->len : 0, batch ? G_N_ELEMENTS(chain) : 0);
    }
}

/* Running shape inference again (headroom: once per batch) reuses the interned shapes and folded
 * contents of earlier runs: the same pointers at the same batch, and the model's arena stops
 * growing once every batch seen has been inferred. */
static void test_rerun_interned(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = flatten_at(8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_value *y = fp_graph_find(m->main, "y"), *t = fp_graph_find(m->main, "target");
    const fp_dim *y_dims = y->shape.dims, *t_sval = t->sval;
    const fp_tensor *t_fold = fp_value_fold(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t_fold);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t_sval);
    fp_shape_opts at4 = {.batch = 4}, at8 = {.batch = 8};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at4, NULL, &err));
    ASSERT_SHAPE(m, "y", "4x64");
    CU_ASSERT_PTR_NOT_EQUAL(fp_value_fold(t), t_fold);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at8, NULL, &err));
    ASSERT_SHAPE(m, "y", "8x64");
    CU_ASSERT_PTR_EQUAL(y->shape.dims, y_dims);
    CU_ASSERT_PTR_EQUAL(fp_value_fold(t), t_fold);
    CU_ASSERT_PTR_EQUAL(t->sval, t_sval);
    size_t reserved = fp_arena_reserved(m->arena);
    for (int i = 0; i < 400; i++)
        CU_ASSERT_FATAL(fp_pass_shapes(m, i % 2 ? &at4 : &at8, NULL, &err));
    CU_ASSERT_EQUAL(fp_arena_reserved(m->arena), reserved);
    int64_t vals[2];
    memcpy(vals, fp_value_fold(t)->data, sizeof vals);
    CU_ASSERT(vals[0] == 4 && vals[1] == -1);
}

/* The rare fields of a value live behind fp_value.rare: a fold alone takes no fp_value_ext, and a
 * later run that folds nothing (the batch unbound again) leaves no fold behind. */
static void test_rerun_value_ext(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = flatten_at(8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_value *y = fp_graph_find(m->main, "y"), *t = fp_graph_find(m->main, "target");
    CU_ASSERT_EQUAL(y->rare, 0); /* inferred, not folded */
    CU_ASSERT_PTR_NOT_NULL(fp_value_fold(t));
    CU_ASSERT_PTR_NULL(fp_value_ext_get(t)); /* the fold alone */
    CU_ASSERT_EQUAL(fp_value_n_elems(t), -1);
    fp_shape_opts unbound = {0};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &unbound, NULL, &err));
    ASSERT_SHAPE(m, "y", "Nx64");
    CU_ASSERT_PTR_NULL(fp_value_fold(t));
    CU_ASSERT_EQUAL(t->n_sval, 2); /* [N, -1] from the symbols, not the fold */
    CU_ASSERT_EQUAL(y->rare, 0);
    CU_ASSERT_EQUAL(t->rare, 0);
    CU_ASSERT_PTR_NULL(fp_value_layout(t)); /* ONNX names no layout */
    /* a fold, then an fp_value_ext: the fold moves into it; set again, it stays there */
    const fp_tensor *fold = fp_graph_find(m->main, "minus1")->tensor; /* any tensor */
    CU_ASSERT_PTR_NOT_NULL_FATAL(fold);
    fp_value_set_fold(t, fold);
    CU_ASSERT_PTR_EQUAL(fp_value_fold(t), fold);
    fp_value_ext *e = fp_value_ext_ensure(t);
    CU_ASSERT_PTR_EQUAL(e->fold, fold);
    CU_ASSERT_EQUAL(e->n_elems, -1);
    CU_ASSERT_PTR_EQUAL(fp_value_fold(t), fold);
    fp_value_set_fold(t, NULL);
    CU_ASSERT_PTR_NULL(fp_value_fold(t));
    CU_ASSERT_PTR_EQUAL(fp_value_ext_get(t), e);
    fp_value_set_fold(t, fold);
    CU_ASSERT_PTR_EQUAL(e->fold, fold);
}

/* Nodes that fold the same inputs the same way share one result (the fold memo of a run), and
 * those that differ in an input's shape, an input's contents or an attribute fold apart. */
static void test_fold_memo(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 4});
    tb_input(b, "z", F32, 3, (int64_t[]){5, 3, 4});
    tb_init_i64(b, "i0", 1, (int64_t[]){0});
    tb_init_i64(b, "i1", 1, (int64_t[]){1});
    tb_node(b, "Shape", "sx", "x", "sx");
    tb_node(b, "Shape", "sx2", "x", "sx2");
    tb_node(b, "Shape", "sz", "z", "sz");
    tb_node_t *tail = tb_node(b, "Shape", "sxt", "x", "sxt");
    tb_attr_i(b, tail, "start", 1);
    tb_node(b, "Gather", "gx", "sx,i0", "gx");
    tb_node(b, "Gather", "gx2", "sx2,i0", "gx2");
    tb_node(b, "Gather", "gz", "sz,i0", "gz");
    tb_node(b, "Gather", "gx1", "sx,i1", "gx1");
    for (const char *o = "gx\0gx2\0gz\0gx1\0sxt\0"; *o; o += strlen(o) + 1)
        tb_output(b, o, I64, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    struct {
        const char *name;
        int n;
        int64_t want[3];
    } cases[] = {{"sx", 3, {2, 3, 4}}, {"sx2", 3, {2, 3, 4}}, {"sz", 3, {5, 3, 4}}, {"sxt", 2, {3, 4}},
                 {"gx", 1, {2}},       {"gx2", 1, {2}},       {"gz", 1, {5}},       {"gx1", 1, {3}}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        fp_value *v = fp_graph_find(m->main, cases[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp_value_fold(v));
        CU_ASSERT_EQUAL_FATAL(fp_value_fold(v)->nbytes, sizeof(int64_t) * (size_t)cases[i].n);
        CU_ASSERT(memcmp(fp_value_fold(v)->data, cases[i].want, sizeof(int64_t) * (size_t)cases[i].n) == 0);
        CU_ASSERT_EQUAL(v->n_sval, cases[i].n);
        for (int k = 0; k < cases[i].n && k < v->n_sval; k++)
            CU_ASSERT(v->sval[k].value == cases[i].want[k] && !v->sval[k].sym);
    }
    CU_ASSERT_PTR_EQUAL(fp_value_fold(fp_graph_find(m->main, "gx")), fp_value_fold(fp_graph_find(m->main, "gx2")));
}

static void test_reshape_split_slice(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 12, 5});
    tb_init_i64(b, "t", 4, (int64_t[]){0, 3, -1, 5});
    tb_node(b, "Reshape", "r", "x,t", "r_out");
    tb_init_i64(b, "sp", 3, (int64_t[]){2, 4, 6});
    tb_node_t *s = tb_node(b, "Split", "split", "x,sp", "s0,s1,s2");
    tb_attr_i(b, s, "axis", 1);
    tb_init_i64(b, "st", 2, (int64_t[]){1, -1});
    tb_init_i64(b, "en", 2, (int64_t[]){INT64_MAX, -6});
    tb_init_i64(b, "ax", 2, (int64_t[]){1, 2});
    tb_init_i64(b, "sp2", 2, (int64_t[]){2, -3});
    tb_node(b, "Slice", "slice", "x,st,en,ax,sp2", "sl");
    tb_node_t *tr = tb_node(b, "Transpose", "tr", "x", "tr_out");
    tb_attr_ints(b, tr, "perm", 3, (int64_t[]){2, 0, 1});
    tb_init_i64(b, "pads", 6, (int64_t[]){0, 1, 2, 0, 3, 4});
    tb_node(b, "Pad", "pad", "x,pads", "pd");
    for (const char *o = "r_out\0s0\0s2\0sl\0tr_out\0pd\0"; *o; o += strlen(o) + 1)
        tb_output(b, o, F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "r_out", "2x3x4x5");
    ASSERT_SHAPE(m, "s0", "2x2x5");
    ASSERT_SHAPE(m, "s2", "2x6x5");
    /* axis 1 (12): 1,3,5,7,9,11; axis 2 (5): start -1 -> 4, end -6 clamps to -1, step -3: 4,1 */
    ASSERT_SHAPE(m, "sl", "2x6x2");
    ASSERT_SHAPE(m, "tr_out", "5x2x12");
    ASSERT_SHAPE(m, "pd", "2x16x11");
}

static void test_conv_channel_mismatch(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){16, 4, 3, 3});
    tb_node(b, "Conv", "conv_bad", "x,w", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    fp_model *m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "node 'conv_bad' (Conv): input has 3 channels but weight expects 4"));
}

static void test_broadcast_and_declared(void)
{
    tb *b = tb_new(13);
    tb_input(b, "a", F32, 3, (int64_t[]){3, 4, 5});
    tb_input(b, "c", F32, 1, (int64_t[]){5});
    tb_input(b, "bad", F32, 1, (int64_t[]){4});
    tb_node(b, "Add", "add", "a,c", "s");
    tb_node(b, "Mul", "mul_bad", "a,bad", "z");
    tb_output(b, "s", F32, -1, NULL);
    tb_output(b, "z", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    fp_model *m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "node 'mul_bad' (Mul): shapes 3x4x5 and 4 do not broadcast"));
}

/* A com.microsoft node in b. */
static tb_node_t *ms_node(tb *b, const char *op, const char *name, const char *inputs, const char *outputs)
{
    tb_node_t *n = tb_node(b, op, name, inputs, outputs);
    tb_domain(b, n, "com.microsoft");
    return n;
}

/* GroupQueryAttention, 4 query heads and 2 KV heads of 16 (ORT bert_defs.cc): output 0 the query's
 * shape; present [B, 2, T, 16] with T = max(past, total_sequence_length) when input 6 is known
 * (here folded from Shape(attention_mask)), else the length a graph output declares, else past +
 * new; packed QKV [B, S, (4 + 2 x 2) x 16] without key and value; no past: T = total. */
static void test_group_query_attention(void)
{
    tb *b = tb_new(14);
    tb_input(b, "q", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "k", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "v", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "pk", F32, 4, (int64_t[]){2, 2, 5, 16});
    tb_input(b, "pv", F32, 4, (int64_t[]){2, 2, 5, 16});
    tb_input(b, "mask", I64, 2, (int64_t[]){2, 8});
    tb_input(b, "tsl", 6, 0, NULL); /* int32 scalar of unknown value */
    tb_init(b, "seqlens", 6, 1, (int64_t[]){2});
    tb_init(b, "cos", F32, 2, (int64_t[]){16, 8});
    tb_init(b, "sin", F32, 2, (int64_t[]){16, 8});
    tb_init_i64(b, "idx1", 1, (int64_t[]){1});
    tb_node(b, "Shape", "mask_shape", "mask", "ms");
    tb_node(b, "Gather", "mask_total", "ms,idx1", "mt");
    tb_attr_i(b, tb_node(b, "Cast", "total_i32", "mt", "total"), "to", 6);
    const char *nodes[][3] = {{"gqa", "q,k,v,pk,pv,seqlens,total,cos,sin", "o,present_k,present_v"},
                              {"gqa_declared", "q,k,v,pk,pv,seqlens,tsl", "o2,dk,dv"},
                              {"gqa_sum", "q,k,v,pk,pv,seqlens,tsl", "o3,sk,sv"}};
    for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
        tb_node_t *n = ms_node(b, "GroupQueryAttention", nodes[i][0], nodes[i][1], nodes[i][2]);
        tb_attr_i(b, n, "num_heads", 4);
        tb_attr_i(b, n, "kv_num_heads", 2);
        tb_attr_i(b, n, "do_rotary", i == 0);
    }
    tb_input(b, "qkv", F32, 3, (int64_t[]){1, 4, 128});
    tb_init_i64(b, "four", 1, (int64_t[]){4});
    tb_node_t *p = ms_node(b, "GroupQueryAttention", "gqa_packed", "qkv,,,,,seqlens,four", "op,ppk,ppv");
    tb_attr_i(b, p, "num_heads", 4);
    tb_attr_i(b, p, "kv_num_heads", 2);
    tb_output(b, "o", F32, -1, NULL);
    tb_output(b, "present_k", F32, -1, NULL);
    tb_output(b, "dk", F32, 4, (int64_t[]){2, 2, 11, 16});
    tb_output(b, "op", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "o", "2x3x64");
    ASSERT_SHAPE(m, "present_k", "2x2x8x16");
    ASSERT_SHAPE(m, "present_v", "2x2x8x16");
    ASSERT_SHAPE(m, "dk", "2x2x11x16");
    ASSERT_SHAPE(m, "sk", "2x2x8x16");
    ASSERT_SHAPE(m, "op", "1x4x64");
    ASSERT_SHAPE(m, "ppk", "1x2x4x16");
    ASSERT_SHAPE(m, "ppv", "1x2x4x16");
    /* per batch: scores and context 2 x 3 x 8 x (64 + 64), softmax 5 x 3 x 8 x 4 heads, rotary 3 x 3 x (64 + 32) */
    CU_ASSERT_EQUAL(metrics_of(m, "gqa").flops, 2 * (2 * 3 * 8 * 128 + 5 * 3 * 8 * 4 + 3 * 3 * 96));
    CU_ASSERT_EQUAL(metrics_of(m, "gqa_packed").flops, 1 * (2 * 4 * 4 * 128 + 5 * 4 * 4 * 4));
}

/* A one-node model of op `op` (com.microsoft) named "bad" over float inputs q [2, 3, q_hidden]
 * (rank q_rank), k and v [2, 3, 32], pk and pv [2, 2, 5, 16]; attributes num_heads and
 * kv_num_heads when not 0. */
static tb *attention_model(const char *op, int64_t q_rank, int64_t q_hidden, const char *inputs, int64_t heads,
                           int64_t kv_heads)
{
    tb *b = tb_new(14);
    tb_input(b, "q", F32, (int)q_rank, (int64_t[]){2, 3, q_hidden, 1, 1});
    tb_input(b, "k", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "v", F32, 3, (int64_t[]){2, 3, 32});
    tb_input(b, "pk", F32, 4, (int64_t[]){2, 2, 5, 16});
    tb_input(b, "pv", F32, 4, (int64_t[]){2, 2, 5, 16});
    tb_input(b, "sl", 6, 1, (int64_t[]){2});
    tb_input(b, "tsl", 6, 0, NULL);
    tb_node_t *n = ms_node(b, op, "bad", inputs, "o,pko,pvo");
    if (heads)
        tb_attr_i(b, n, "num_heads", heads);
    if (kv_heads)
        tb_attr_i(b, n, "kv_num_heads", kv_heads);
    tb_output(b, "o", F32, -1, NULL);
    return b;
}

/* Bad attributes and inputs of GroupQueryAttention and MultiHeadAttention: one error naming the
 * node and what is wrong. */
static void test_attention_errors(void)
{
    const char *gqa = "GroupQueryAttention", *mha = "MultiHeadAttention", *all = "q,k,v,pk,pv,sl,tsl";
    struct {
        const char *op;
        int64_t q_rank, q_hidden;
        const char *inputs;
        int64_t heads, kv_heads;
        const char *needle;
    } cases[] = {
        {gqa, 3, 64, all, 3, 2, "num_heads 3 is not a multiple of kv_num_heads 2"},
        {gqa, 3, 64, all, 4, 0, "missing required attribute 'kv_num_heads' (INT)"},
        {gqa, 3, 64, all, -4, 2, "attribute 'num_heads' is -4: must be a positive head count"},
        {gqa, 3, 66, all, 4, 2, "query hidden size 66 is not a multiple of num_heads (4)"},
        {gqa, 3, 100, "q,,,pk,pv,sl,tsl", 4, 2,
         "packed QKV query hidden size 100 is not a multiple of num_heads + 2 x kv_num_heads (8)"},
        {gqa, 4, 64, all, 4, 2, "query rank 4, expected 3"},
        {gqa, 3, 64, "q,k,v,pk,pv,sl", 4, 2, "seqlens_k and total_sequence_length (inputs 5, 6) are required"},
        {gqa, 3, 64, "q,k,,pk,pv,sl,tsl", 4, 2, "key and value (inputs 1, 2) must both be given"},
        {gqa, 3, 64, "q,k,v,pk,,sl,tsl", 4, 2, "past_key and past_value (inputs 3, 4) must both be given"},
        {gqa, 3, 64, all, 8, 4, "past_key has heads 2, expected 4"},
        {gqa, 3, 32, all, 4, 2, "key has hidden size (kv_num_heads x head size) 32, expected 16"},
        {mha, 3, 64, "q,k,v", 0, 0, "missing required attribute 'num_heads' (INT)"},
        {mha, 3, 64, "q,k,v", 5, 0, "query hidden size 64 is not a multiple of num_heads (5)"},
        {mha, 4, 64, "q,k,v", 4, 0, "query rank 4, expected 3 or 5 (packed QKV)"},
        {mha, 3, 64, "q", 4, 0, "key (input 1) is omitted"},
        {mha, 3, 32, "q,k,v,,,,pk", 2, 0, "past_key and past_value (inputs 6, 7) must both be given"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tb *b = attention_model(cases[i].op, cases[i].q_rank, cases[i].q_hidden, cases[i].inputs, cases[i].heads,
                                cases[i].kv_heads);
        g_autoptr(GError) err = NULL;
        fp_model *m = analyze(b, 0, &err);
        tb_free(b);
        CU_ASSERT_PTR_NULL(m);
        fp_model_free(m);
        g_autofree char *needle = g_strdup_printf("node 'bad' (%s): %s", cases[i].op, cases[i].needle);
        tu_expect_error(err, needle);
    }
}

/* MultiHeadAttention, 4 heads of 16 (ORT bert_defs.cc): Q, K, V of rank 3 with a past (present:
 * past + new tokens), packed QKV [B, S, 4, 3, 16], packed KV [B, L, 4, 2, 16] and BNSH key and
 * value (cross attention) without a past (present: the new tokens). */
static void test_multi_head_attention(void)
{
    tb *b = tb_new(14);
    tb_input(b, "q", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "k", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "v", F32, 3, (int64_t[]){2, 3, 64});
    tb_input(b, "pk", F32, 4, (int64_t[]){2, 4, 5, 16});
    tb_input(b, "pv", F32, 4, (int64_t[]){2, 4, 5, 16});
    tb_input(b, "qkv", F32, 5, (int64_t[]){2, 3, 4, 3, 16});
    tb_input(b, "kv", F32, 5, (int64_t[]){2, 6, 4, 2, 16});
    tb_input(b, "kx", F32, 4, (int64_t[]){2, 4, 7, 16});
    tb_input(b, "vx", F32, 4, (int64_t[]){2, 4, 7, 8});
    const char *nodes[][3] = {{"mha", "q,k,v,,,,pk,pv", "o,present_k,present_v"},
                              {"mha_qkv", "qkv", "oq,qk,qv"},
                              {"mha_kv", "q,kv", "okv,kvk,kvv"},
                              {"mha_cross", "q,kx,vx", "ox,xk,xv"}};
    for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++)
        tb_attr_i(b, ms_node(b, "MultiHeadAttention", nodes[i][0], nodes[i][1], nodes[i][2]), "num_heads", 4);
    tb_output(b, "o", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "o", "2x3x64");
    ASSERT_SHAPE(m, "present_k", "2x4x8x16");
    ASSERT_SHAPE(m, "present_v", "2x4x8x16");
    ASSERT_SHAPE(m, "oq", "2x3x64");
    ASSERT_SHAPE(m, "qk", "2x4x3x16");
    ASSERT_SHAPE(m, "okv", "2x3x64");
    ASSERT_SHAPE(m, "kvv", "2x4x6x16");
    ASSERT_SHAPE(m, "ox", "2x3x32");
    ASSERT_SHAPE(m, "xk", "2x4x7x16");
    ASSERT_SHAPE(m, "xv", "2x4x7x8");
    /* per batch: scores 2 x 3 x 8 x 64, context 2 x 3 x 8 x 64, softmax 5 x 3 x 8 x 4 heads */
    CU_ASSERT_EQUAL(metrics_of(m, "mha").flops, 2 * (2 * 3 * 8 * 128 + 5 * 3 * 8 * 4));
    CU_ASSERT_EQUAL(metrics_of(m, "mha_cross").flops, 2 * (2 * 3 * 7 * (64 + 32) + 5 * 3 * 7 * 4));
}

/* onnxruntime-genai's RMSNorms: SimplifiedLayerNormalization (ONNX domain) keeps the input's shape,
 * SkipSimplifiedLayerNormalization also returns the residual sum (output 3); 4 FLOPs per element,
 * 2 more for the skip and bias adds. */
static void test_simplified_layer_norm(void)
{
    tb *b = tb_new(14);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 3, 8});
    tb_init(b, "w", F32, 1, (int64_t[]){8});
    tb_attr_i(b, tb_node(b, "SimplifiedLayerNormalization", "rms", "x,w", "y"), "axis", -1);
    ms_node(b, "SkipSimplifiedLayerNormalization", "skip_rms", "x,y,w", "y2,,,sum");
    tb_output(b, "y2", F32, -1, NULL);
    tb_output(b, "sum", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "y", "2x3x8");
    ASSERT_SHAPE(m, "y2", "2x3x8");
    ASSERT_SHAPE(m, "sum", "2x3x8");
    CU_ASSERT_EQUAL(metrics_of(m, "rms").flops, 4 * 48);
    CU_ASSERT_EQUAL(metrics_of(m, "skip_rms").flops, 6 * 48);
}

/* A Gather from an embedding table reads the rows it gathers: 4 x 200 float32, not the table. */
static void test_gather_rows(void)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", 7, 1, (int64_t[]){4});
    tb_output(b, "e", 1, 2, (int64_t[]){4, 200});
    tb_init(b, "E", 1, 2, (int64_t[]){100, 200});
    tb_node(b, "Gather", "emb", "E,ids", "e");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_metrics mt = metrics_of(m, "emb");
    CU_ASSERT_EQUAL(mt.bytes_weight, 4 * 200 * 4);
    CU_ASSERT_EQUAL(mt.params, 100 * 200);
    CU_ASSERT_EQUAL(mt.bytes_act, 4 * 8);
    CU_ASSERT_EQUAL(mt.bytes_out, 4 * 200 * 4);
}

/* Split of a known vector folds, each part: torch's repeat_interleave writes the Expand target of
 * the repeated heads as a Concat of one (Split of an Expand of a constant); and equal parts of a
 * Split with no sizes feed a Reshape. */
static void test_split_folds(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 5, (int64_t[]){1, 1, 1, 64, 32});
    tb_input(b, "z", F32, 1, (int64_t[]){120});
    tb_init_i64(b, "four", 1, (int64_t[]){4});
    tb_init_i64(b, "two", 1, (int64_t[]){2});
    tb_init_i64(b, "ones", 2, (int64_t[]){1, 1});
    tb_init_i64(b, "tail", 2, (int64_t[]){64, 32});
    tb_node(b, "Expand", "e", "four,two", "fours");
    tb_node(b, "Split", "sp", "fours,ones", "s0,s1");
    tb_attr_i(b, tb_node(b, "Concat", "cc", "ones,s0,tail", "target"), "axis", 0);
    tb_node(b, "Expand", "rep", "x,target", "y");
    tb_init_i64(b, "dims", 4, (int64_t[]){5, 2, 3, 4});
    tb_node(b, "Split", "halves", "dims", "h0,h1");
    tb_attr_i(b, tb_node(b, "Concat", "swap", "h1,h0", "to"), "axis", 0);
    tb_node(b, "Reshape", "r", "z,to", "w");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "w", F32, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = analyze(b, 0, &err);
    tb_free(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_SHAPE(m, "y", "1x1x4x64x32");
    ASSERT_SHAPE(m, "w", "3x4x5x2");
}

/* fp_shape_evaluate: a chain of 20 Negs of a 48 x 48 constant (ConstantOfShape, past the pass's
 * fold limit) evaluates with a limit of 1M elements, not with one of 2304 (every tensor fits, but
 * 21 of them pass 16 times it in all), nor with one under a tensor; the model keeps no fold. */
static void test_evaluate_budget(void)
{
    tb *b = tb_new(17);
    tb_init_i64(b, "dims", 2, (int64_t[]){48, 48});
    tb_input(b, "x", 1, 2, (int64_t[]){48, 48});
    tb_node(b, "ConstantOfShape", "c", "dims", "n0");
    for (int i = 0; i < 20; i++) {
        g_autofree char *in = g_strdup_printf("n%d", i), *out = g_strdup_printf("n%d", i + 1);
        tb_node(b, "Neg", out, in, out);
    }
    tb_node(b, "Add", "sum", "x,n20", "y");
    tb_output(b, "y", 1, -1, NULL);
    g_autoptr(fp_model) m = tu_load_tb(b);
    tb_free(b);
    fp_value *last = fp_graph_find(m->main, "n20");
    CU_ASSERT_PTR_NULL(fp_value_fold(last));
    fp_arena *a = fp_arena_new();
    const fp_tensor *t = fp_shape_evaluate(m, last, 1u << 20, a);
    CU_ASSERT_PTR_NOT_NULL(t);
    CU_ASSERT(t && t->nbytes == 48 * 48 * 4);
    CU_ASSERT_PTR_NULL(fp_shape_evaluate(m, last, 48 * 48, a));
    CU_ASSERT_PTR_NULL(fp_shape_evaluate(m, last, 1000, a));
    CU_ASSERT_PTR_NULL(fp_shape_evaluate(m, fp_graph_find(m->main, "y"), 1u << 20, a)); /* reads x */
    CU_ASSERT_PTR_NULL(fp_value_fold(last));
    CU_ASSERT_PTR_NULL(fp_value_fold(fp_graph_find(m->main, "n1")));
    fp_arena_free(a);
}

FP_TEST_SUITE(register_shapes)
{
    CU_pSuite s = CU_add_suite("shapes", NULL, NULL);
    CU_add_test(s, "conv_family", test_conv_family);
    CU_add_test(s, "evaluate_budget", test_evaluate_budget);
    CU_add_test(s, "gemm_matmul_pool", test_gemm_matmul_pool);
    CU_add_test(s, "symbolic_batch", test_symbolic_batch);
    CU_add_test(s, "reshape_split_slice", test_reshape_split_slice);
    CU_add_test(s, "fold memo", test_fold_memo);
    CU_add_test(s, "rerun reuses interned shapes", test_rerun_interned);
    CU_add_test(s, "rerun unfolds", test_rerun_unfolds);
    CU_add_test(s, "rare value fields", test_rerun_value_ext);
    CU_add_test(s, "conv_channel_mismatch", test_conv_channel_mismatch);
    CU_add_test(s, "broadcast_mismatch", test_broadcast_and_declared);
    CU_add_test(s, "group_query_attention", test_group_query_attention);
    CU_add_test(s, "multi_head_attention", test_multi_head_attention);
    CU_add_test(s, "attention_errors", test_attention_errors);
    CU_add_test(s, "simplified_layer_norm", test_simplified_layer_norm);
    CU_add_test(s, "gather_rows", test_gather_rows);
    CU_add_test(s, "split_folds", test_split_folds);
}
