/* test_fuse.c - fusion rules and constraints: for every rule a model where it applies, and for
 * every constraint a model where exactly that constraint refuses the fusion; target loading;
 * golden `explain` outputs (text and JSON) of the sample models. */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "frontends/load.h"
#include "frontends/onnx/onnx.h"
#include "passes/fusion/fuse.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "tmodel.h"
#include "tutil.h"

enum { F32 = 1, F16 = 10, I64 = 7 };

/* The models fuse_tb keeps for the lists it returns without them (list -> model). */
static GHashTable *owners(void)
{
    static GHashTable *h;
    if (!h)
        h = g_hash_table_new(g_direct_hash, g_direct_equal);
    return h;
}

/* Checks what fp_pass_fuse leaves against a relink: every value's use list (the pass updates the
 * lists of what it rewrites instead of relinking) and every graph's kept order (kept when the node
 * array stays in order) must be what fp_model_link and fp_graph_topo make. */
static void check_links(fp_model *m)
{
    GPtrArray *lists = g_ptr_array_new_with_free_func(g_free), *orders = g_ptr_array_new_with_free_func(g_free);
    GArray *counts = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *n_orders = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++) {
            fp_value *v = g->values->pdata[i];
            g_ptr_array_add(lists, g_memdup2(v->uses, sizeof(fp_use) * v->n_uses));
            g_array_append_val(counts, v->n_uses);
        }
        g_ptr_array_add(orders, g->topo ? g_memdup2(g->topo, sizeof(fp_node *) * g->n_topo) : NULL);
        g_array_append_val(n_orders, g->n_topo);
    }
    fp_model_link(m);
    guint k = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++, k++) {
            fp_value *v = g->values->pdata[i];
            const fp_use *kept = lists->pdata[k];
            bool same = g_array_index(counts, uint32_t, k) == v->n_uses;
            for (uint32_t u = 0; same && u < v->n_uses; u++) /* field by field: fp_use has padding */
                same = kept[u].node == v->uses[u].node && kept[u].port == v->uses[u].port;
            CU_ASSERT(same);
        }
        fp_node *const *kept = orders->pdata[gi];
        if (kept) {
            uint32_t n = 0;
            g_autofree fp_node **fresh = fp_graph_topo(g, &n, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
            CU_ASSERT_EQUAL(n, g_array_index(n_orders, uint32_t, gi));
            if (n == g_array_index(n_orders, uint32_t, gi))
                CU_ASSERT(memcmp(kept, fresh, sizeof(fp_node *) * n) == 0);
        }
    }
    g_ptr_array_free(lists, TRUE);
    g_ptr_array_free(orders, TRUE);
    g_array_free(counts, TRUE);
    g_array_free(n_orders, TRUE);
}

/* Runs shapes, metrics and fusion on b for `target`; returns the fusion list (and the model). */
static fp_fusion_list *fuse_tb(tb *b, const char *target, fp_model **model_out)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = tu_load_tb(b);
    CU_ASSERT_FATAL(fp_model_verify(m, &err));
    g_autoptr(fp_target) t = fp_target_load(target, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fp_fusion_list *l = fp_fusion_list_new();
    CU_ASSERT_FATAL(fp_pass_fuse(m, t, FP_FUSE_ALL, l, NULL, &err));
    check_links(m);
    CU_ASSERT(fp_model_verify(m, &err)); /* rewrites keep the IR valid */
    if (err)
        fprintf(stderr, "\n  verify after fuse: %s", err->message);
    if (model_out)
        *model_out = m;
    else
        g_hash_table_insert(owners(), l, m); /* the list names the model's nodes: list_free frees both */
    return l;
}

/* A list and, when fuse_tb kept it, its model (after the list: the list borrows its names). */
static void list_free(fp_fusion_list *l)
{
    fp_model *m = g_hash_table_lookup(owners(), l);
    g_hash_table_remove(owners(), l);
    fp_fusion_list_free(l);
    fp_model_free(m);
}

static const fp_fusion *find(const fp_fusion_list *l, const char *rule, const char *anchor)
{
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *f = l->fusions->pdata[i];
        if (strcmp(f->rule, rule) == 0 && (!anchor || strcmp(f->anchor, anchor) == 0))
            return f;
    }
    return NULL;
}

/* Asserts rule applied at anchor, or refused by exactly `constraint` ("+name": among others). */
static void expect(const fp_fusion_list *l, const char *rule, const char *anchor, const char *constraint)
{
    const fp_fusion *f = find(l, rule, anchor);
    if (!f) {
        fprintf(stderr, "\n  no %s candidate at %s", rule, anchor);
        CU_FAIL("candidate missing");
        return;
    }
    if (!constraint) {
        if (!f->applied)
            fprintf(stderr, "\n  %s at %s not applied: %s", rule, anchor, ((fp_reason *)f->reasons->pdata[0])->message);
        CU_ASSERT(f->applied);
        return;
    }
    CU_ASSERT_FALSE(f->applied);
    if (constraint[0] == '+') { /* "+name": among the reasons */
        bool found = false;
        for (guint i = 0; i < f->reasons->len; i++)
            found |= strcmp(((fp_reason *)f->reasons->pdata[i])->constraint, constraint + 1) == 0;
        CU_ASSERT(found);
        return;
    }
    bool exact = f->reasons->len == 1 && strcmp(((fp_reason *)f->reasons->pdata[0])->constraint, constraint) == 0;
    if (!exact) {
        fprintf(stderr, "\n  %s at %s: expected only %s, got:", rule, anchor, constraint);
        for (guint i = 0; i < f->reasons->len; i++)
            fprintf(stderr, " %s", ((fp_reason *)f->reasons->pdata[i])->constraint);
    }
    CU_ASSERT(exact);
}

/* ---------------------------------------------------------------- Conv + BN family */

typedef struct {
    float eps;
    bool bn_param_from_input; /* const_inputs */
    bool conv_out_shared;     /* single_consumer */
    bool conv_out_is_output;  /* not_graph_output */
    bool bn_training_output;  /* bn_outputs_unused */
    bool fp16;                /* dtype_in */
    bool bn_param_2d;         /* bn_params_1d */
    bool weight_dynamic;      /* static_weight (GE) */
} bn_case;

static tb *conv_bn_model(bn_case c)
{
    tb *b = tb_new(13);
    int dt = c.fp16 ? F16 : F32;
    tb_input(b, "x", dt, 4, (int64_t[]){1, 3, 8, 8});
    if (c.weight_dynamic)
        tb_input(b, "w", dt, 4, (int64_t[]){8, 3, -1, -1});
    else
        tb_init(b, "w", dt, 4, (int64_t[]){8, 3, 3, 3});
    tb_node(b, "Conv", "conv", "x,w", "c");
    const char *names[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++) {
        if (i == 2 && c.bn_param_from_input)
            tb_input(b, names[i], dt, 1, (int64_t[]){8});
        else if (i == 3 && c.bn_param_2d)
            tb_init(b, names[i], dt, 2, (int64_t[]){8, 1});
        else
            tb_init(b, names[i], dt, 1, (int64_t[]){8});
    }
    tb_node_t *bn = tb_node(b, "BatchNormalization", "bn", "c,scale,bias,mean,var",
                            c.bn_training_output ? "y,rm" : "y");
    tb_attr_f(b, bn, "epsilon", c.eps ? c.eps : 1e-5f);
    tb_node(b, "Relu", "relu", "y", "out");
    tb_output(b, "out", dt, -1, NULL);
    if (c.conv_out_shared) {
        tb_node(b, "Sigmoid", "other", "c", "o2");
        tb_output(b, "o2", dt, -1, NULL);
    }
    if (c.conv_out_is_output)
        tb_output(b, "c", dt, -1, NULL);
    if (c.bn_training_output)
        tb_output(b, "rm", dt, -1, NULL);
    return b;
}

static void run_bn(bn_case c, const char *target, const char *rule, const char *constraint)
{
    tb *b = conv_bn_model(c);
    fp_fusion_list *l = fuse_tb(b, target, NULL);
    expect(l, rule, "conv", constraint);
    list_free(l);
    tb_free(b);
}

static void test_conv_bn(void)
{
    run_bn((bn_case){0}, "ort-cpu", "conv_bn", NULL);
    run_bn((bn_case){.bn_param_from_input = true}, "ort-cpu", "conv_bn", "const_inputs");
    run_bn((bn_case){.conv_out_shared = true}, "ort-cpu", "conv_bn", "single_consumer");
    run_bn((bn_case){.conv_out_is_output = true}, "ort-cpu", "conv_bn", "not_graph_output");
    run_bn((bn_case){.bn_training_output = true}, "ort-cpu", "conv_bn", "bn_outputs_unused");
    /* ORT 1.30 folds fp16 BN too (measured); a target restricted to float32 refuses it */
    run_bn((bn_case){.fp16 = true}, "ort-cpu", "conv_bn", NULL);
    const char *f32 = "[target]\nname = f32\nrules = conv_bn\n[rule.conv_bn]\ndtypes = float32\n";
    g_autofree char *ini = tu_write_temp(f32, strlen(f32), ".ini");
    run_bn((bn_case){.fp16 = true}, ini, "conv_bn", "dtype_in");
    g_unlink(ini);
    run_bn((bn_case){.bn_param_2d = true}, "ort-cpu", "conv_bn", "bn_params_1d");
    /* ORT has no epsilon limit; the Ascend target refuses eps > 1e-4 */
    run_bn((bn_case){.eps = 1e-3f}, "ort-cpu", "conv_bn", NULL);
    run_bn((bn_case){.eps = 1e-3f}, "ascend910b", "ge_conv_bn", "max_epsilon");
    run_bn((bn_case){.eps = 1e-5f}, "ascend910b", "ge_conv_bn", NULL);
    /* a dynamic weight is a graph input: not constant either */
    run_bn((bn_case){.weight_dynamic = true}, "ascend910b", "ge_conv_bn", "+static_weight");
}

static void test_min_epsilon(void)
{
    /* min_epsilon through a user target that overrides a parameter without recompiling */
    g_autofree char *ini =
        tu_write_temp("[target]\nname = strict\nrules = conv_bn\n[rule.conv_bn]\nmin_epsilon = 1e-4\n",
                      strlen("[target]\nname = strict\nrules = conv_bn\n[rule.conv_bn]\nmin_epsilon = 1e-4\n"), ".ini");
    run_bn((bn_case){.eps = 1e-5f}, ini, "conv_bn", "min_epsilon");
    g_unlink(ini);
}

/* A ConvTranspose of 4 channels into `cout` (in `group` groups, W [4, cout / group, 3, 3]), a
 * BatchNormalization of cout, a Relu; the weight a graph input when `dynamic`. */
static tb *conv_transpose_bn_model(int64_t cout, int64_t group, bool dynamic)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 8, 8});
    int64_t w[] = {4, cout / group, 3, 3};
    if (dynamic)
        tb_input(b, "w", F32, 4, w);
    else
        tb_init(b, "w", F32, 4, w);
    tb_node_t *ct = tb_node(b, "ConvTranspose", "conv", "x,w", "c");
    tb_attr_i(b, ct, "group", group);
    tb_attr_ints(b, ct, "pads", 4, (int64_t[]){1, 1, 1, 1});
    const char *names[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++)
        tb_init(b, names[i], F32, 1, (int64_t[]){cout});
    tb_node(b, "BatchNormalization", "bn", "c,scale,bias,mean,var", "y");
    tb_node(b, "Relu", "relu", "y", "out");
    tb_output(b, "out", F32, -1, NULL);
    return b;
}

/* ORT 1.31.1 folds the BatchNormalization into a ConvTranspose at level basic, grouped or not, its
 * channels those of W's second dim times the groups (each case measured with onnxruntime-node); it
 * keeps it when the weight is not constant. The ascend910b target has no such rule. */
static void test_conv_transpose_bn(void)
{
    const struct {
        int64_t cout, group;
        bool dynamic;
        const char *target, *constraint;
    } cases[] = {{8, 1, false, "ort-cpu-basic", NULL},
                 {8, 2, false, "ort-cpu-basic", NULL},
                 {16, 4, false, "ort-cpu-all", NULL},
                 {8, 1, true, "ort-cpu-basic", "const_inputs"},
                 {8, 1, false, "cuda", NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tb *b = conv_transpose_bn_model(cases[i].cout, cases[i].group, cases[i].dynamic);
        fp_fusion_list *l = fuse_tb(b, cases[i].target, NULL);
        expect(l, "conv_transpose_bn", "conv", cases[i].constraint);
        list_free(l);
        tb_free(b);
    }
    tb *b = conv_transpose_bn_model(8, 1, false);
    fp_fusion_list *l = fuse_tb(b, "ascend910b", NULL);
    CU_ASSERT_PTR_NULL(find(l, "conv_transpose_bn", NULL));
    CU_ASSERT_EQUAL(l->fusions->len, 0);
    list_free(l);
    tb_free(b);
}

/* ---------------------------------------------------------------- Conv + Mul / Add, MatMul + Add */

/* The Mul or Add constant k after a Conv of 8 channels as ONNX Runtime 1.30 folds it or not (each
 * case measured with onnxruntime-node at level basic): [C,1,1] and [1,C,1,1] fold; a rank-0 scalar
 * folds into a Mul only; a [1] does not; nor does a constant written first (k * conv); nor one that
 * varies along the width. */
static void test_conv_mul_add(void)
{
    static const struct {
        int32_t rank;
        int64_t dims[4];
        bool first;
        const char *mul_refusal, *add_refusal;
    } cases[] = {
        {3, {8, 1, 1}, false, NULL, NULL},
        {4, {1, 8, 1, 1}, false, NULL, NULL},
        {0, {0}, false, NULL, "channel_operand"},
        {1, {1}, false, "channel_operand", "channel_operand"},
        {3, {8, 1, 1}, true, "const_second", "const_second"},
        {3, {1, 1, 6}, false, "channel_operand", "channel_operand"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        for (int add = 0; add < 2; add++) {
            tb *b = tb_new(13);
            tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
            tb_init(b, "w", F32, 4, (int64_t[]){8, 3, 3, 3});
            tb_node(b, "Conv", "conv", "x,w", "c");
            tb_init(b, "k", F32, cases[i].rank, cases[i].dims);
            tb_node(b, add ? "Add" : "Mul", "op", cases[i].first ? "k,c" : "c,k", "y");
            tb_output(b, "y", F32, -1, NULL);
            fp_fusion_list *l = fuse_tb(b, "ort-cpu", NULL);
            expect(l, add ? "conv_add" : "conv_mul", "conv", add ? cases[i].add_refusal : cases[i].mul_refusal);
            list_free(l);
            tb_free(b);
        }
    }
    /* a residual Add (non-constant operand) is not a conv_add candidate at all */
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 8, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){8, 8, 3, 3});
    tb_node_t *cv = tb_node(b, "Conv", "conv", "x,w", "c");
    tb_attr_ints(b, cv, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Add", "residual", "c,x", "y");
    tb_output(b, "y", F32, -1, NULL);
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", NULL);
    CU_ASSERT_PTR_NULL(find(l, "conv_add", NULL));
    list_free(l);
    tb_free(b);
}

static void test_matmul_add_gemm(void)
{
    /* A shape, bias shape, applied? (ONNX Runtime's MatMulAddFusion conditions) */
    struct {
        int a_rank;
        int64_t a[3];
        int bias_rank;
        int64_t bias[3];
        bool ok;
    } cases[] = {
        {2, {4, 5}, 1, {6}, true},        /* plain Gemm */
        {2, {4, 5}, 2, {4, 6}, true},     /* C of [M,N] (a residual) is fine for 2-D A */
        {2, {4, 5}, 3, {2, 4, 6}, false}, /* broadcasts, but not as Gemm's C */
        {3, {2, 4, 5}, 1, {6}, true},     /* static 3-D A: reshaped to 2-D around the Gemm */
        {3, {2, 4, 5}, 2, {1, 6}, false}, /* reshaped Gemm takes a [N] bias only */
        {3, {-1, 4, 5}, 1, {6}, false},   /* symbolic batch: the reshape cannot be fixed at load */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tb *b = tb_new(13);
        tb_input(b, "a", F32, cases[i].a_rank, cases[i].a);
        tb_init(b, "w", F32, 2, (int64_t[]){5, 6});
        tb_init(b, "bias", F32, cases[i].bias_rank, cases[i].bias);
        tb_node(b, "MatMul", "mm", "a,w", "m");
        tb_node(b, "Add", "add", "m,bias", "y");
        tb_output(b, "y", F32, -1, NULL);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
        expect(l, "matmul_add_gemm", "mm", cases[i].ok ? NULL : "gemm_operands");
        if (cases[i].ok) {
            fp_node *g = fp_graph_find(m->main, "y")->producer;
            CU_ASSERT_EQUAL(g->op, FP_OP_GEMM);
            CU_ASSERT_EQUAL(g->n_inputs, 3);
        }
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

/* ---------------------------------------------------------------- activations */

static void conv_act(const char *target, const char *act, bool clip_dynamic, const char *expect_constraint)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){8, 3, 3, 3});
    tb_node(b, "Conv", "conv", "x,w", "c");
    if (strcmp(act, "Clip") == 0) {
        if (clip_dynamic)
            tb_input(b, "lo", F32, 0, NULL);
        else
            tb_init(b, "lo", F32, 0, NULL);
        tb_init(b, "hi", F32, 0, NULL);
        tb_node(b, "Clip", "act", "c,lo,hi", "y");
    } else {
        tb_node(b, act, "act", "c", "y");
    }
    tb_output(b, "y", F32, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, target, &m);
    expect(l, "conv_activation", "conv", expect_constraint);
    const fp_fusion *f = find(l, "conv_activation", "conv");
    if (f)
        CU_ASSERT_STRING_EQUAL(f->activation, act);
    if (!expect_constraint) {
        fp_node *fc = fp_graph_find(m->main, "y")->producer;
        CU_ASSERT_STRING_EQUAL(fc->op_type, "FusedConv");
        CU_ASSERT_STRING_EQUAL(fp_node_attr_string(fc, "activation", ""), act);
        CU_ASSERT(fp_graph_find(m->main, "c")->producer == NULL); /* internal, never materialized */
    }
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

static void test_conv_activation(void)
{
    const char *ok[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid"};
    for (size_t i = 0; i < G_N_ELEMENTS(ok); i++)
        conv_act("ort-cpu", ok[i], false, NULL);
    conv_act("ort-cpu", "Elu", false, "activation_in");
    conv_act("ort-cpu", "Clip", true, "clip_const_bounds");
    /* the CUDA EP fuses Relu only: the per-target difference */
    conv_act("cuda", "Relu", false, NULL);
    conv_act("cuda", "Sigmoid", false, "activation_in");
}

static void test_gemm_activation(void)
{
    for (int c = 0; c < 2; c++) {
        tb *b = tb_new(13);
        tb_input(b, "a", F32, 2, (int64_t[]){4, 5});
        tb_init(b, "w", F32, 2, (int64_t[]){5, 6});
        tb_node(b, "Gemm", "gemm", "a,w", "g");
        tb_node(b, c ? "Softsign" : "Relu", "act", "g", "y");
        tb_output(b, "y", F32, -1, NULL);
        fp_fusion_list *l = fuse_tb(b, "ort-cpu", NULL);
        expect(l, "gemm_activation", "gemm", c ? "activation_in" : NULL);
        list_free(l);
        tb_free(b);
    }
}

/* ---------------------------------------------------------------- transformer patterns */

static void test_transformer_rules(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(FP_SOURCE_DIR "/models/transformer_block.onnx", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){.batch = 1}, NULL, &err));
    fp_pass_metrics(m, NULL);
    g_autoptr(fp_target) t = fp_target_load("ort-cpu", &err);
    g_autoptr(fp_fusion_list) l = fp_fusion_list_new();
    CU_ASSERT_FATAL(fp_pass_fuse(m, t, FP_FUSE_ALL, l, NULL, &err));
    expect(l, "layer_norm", "ln1.mean", NULL);
    expect(l, "layer_norm", "ln2.mean", NULL);
    expect(l, "gelu", "gelu.div", NULL);
    expect(l, "bias_gelu", "ffn.fc1.add", NULL);
    expect(l, "skip_layer_norm", "attn.out.add", NULL);
    expect(l, "skip_layer_norm", "ffn.fc2.add", NULL);
    expect(l, "matmul_scale", "attn.scores", NULL);
    expect(l, "matmul_add_gemm", "attn.q.matmul", "gemm_operands"); /* symbolic batch and sequence */
    /* the result has the kernels ONNX Runtime 1.30 leaves (measured with onnxruntime-node):
     * 7 MatMul, 3 Add, 4 Reshape, 4 Transpose, FusedMatMul, Softmax, 2 SkipLayerNorm, BiasGelu */
    guint kernels = 0;
    for (guint i = 0; i < m->main->nodes->len; i++) {
        fp_node *n = m->main->nodes->pdata[i];
        kernels += !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED));
        if (strcmp(n->name, "attn.scores") == 0) { /* the Div by 4 in alpha, as ORT writes it: two inputs */
            CU_ASSERT_EQUAL(n->op, FP_OP_FUSED_MATMUL);
            CU_ASSERT_EQUAL(n->n_inputs, 2);
            CU_ASSERT_DOUBLE_EQUAL(fp_node_attr_float(n, "alpha", 1.0), 0.25, 1e-12);
        }
    }
    CU_ASSERT_EQUAL(kernels, 23);
}

/* RMSNorm from primitive ops, x [2, 5, 8]: Pow(x, 2) -> ReduceMean(-1) -> Add(eps) -> Sqrt ->
 * Div(x, .) -> Mul(scale). Variants: fp16 x (the CPU EP refuses), a [1, 1, 8] scale, a mean over
 * axis 1, a Pow read twice. */
typedef struct {
    bool fp16, scale_3d, axis_1, pow_shared;
} rms_case;

static void rms_norm(const char *target, rms_case c, const char *constraint)
{
    int dt = c.fp16 ? F16 : F32;
    tb *b = tb_new(13);
    tb_input(b, "x", dt, 3, (int64_t[]){2, 5, 8});
    tb_init_f32(b, "two", 0, (float[]){2.0f}); /* Pow's exponent may have its own type */
    if (c.fp16)
        tb_init_f16_scalar(b, "eps", 0x0001); /* not 0: an Add of 0 is a no-op NoopElimination removes */
    else
        tb_init_f32(b, "eps", 0, (float[]){1e-6f});
    tb_init(b, "scale", dt, c.scale_3d ? 3 : 1, c.scale_3d ? (int64_t[]){1, 1, 8} : (int64_t[]){8});
    tb_node(b, "Pow", "pow", "x,two", "p");
    tb_attr_ints(b, tb_node(b, "ReduceMean", "mean", "p", "m"), "axes", 1, (int64_t[]){c.axis_1 ? 1 : -1});
    tb_node(b, "Add", "add_eps", "m,eps", "a");
    tb_node(b, "Sqrt", "sqrt", "a", "r");
    tb_node(b, "Div", "div", "x,r", "d");
    tb_node(b, "Mul", "mul", "d,scale", "y");
    tb_output(b, "y", dt, -1, NULL);
    if (c.pow_shared) {
        tb_node(b, "Relu", "other", "p", "o2");
        tb_output(b, "o2", dt, -1, NULL);
    }
    fp_fusion_list *l = fuse_tb(b, target, NULL);
    expect(l, g_str_has_prefix(target, "ascend") ? "ge_rms_norm_gap" : "simplified_layer_norm", "pow", constraint);
    list_free(l);
    tb_free(b);
}

static void test_simplified_layer_norm(void)
{
    rms_norm("ort-cpu", (rms_case){0}, NULL);
    rms_norm("ort-cpu", (rms_case){.fp16 = true}, "+dtype_in");
    rms_norm("cuda", (rms_case){.fp16 = true}, NULL); /* the CUDA EP takes fp16 */
    rms_norm("ort-cpu", (rms_case){.scale_3d = true}, "const_1d");
    rms_norm("ort-cpu", (rms_case){.axis_1 = true}, "last_axis");
    rms_norm("ort-cpu", (rms_case){.pow_shared = true}, "single_consumer");
}

/* a [2, 4, 5, 6] tensor times Transpose(x) (MatMul input B, [2, 4, 6, 8]): x [2, 4, 8, 6] with
 * perm [0, 1, 3, 2], or x of the shape the perm given needs. Variants: a second reader of the Transpose, the Transpose a graph output,
 * x read on both sides, fp16, a symbolic batch with a batch-moving perm. Returns the model (the
 * caller frees it after the list) in *out when not NULL. */
typedef struct {
    const int64_t *perm, *x; /* 4 entries each, or NULL */
    bool shared, out, same, fp16, symbolic;
} mt_case;

static fp_fusion_list *matmul_transpose(mt_case c, fp_model **model)
{
    int dt = c.fp16 ? F16 : F32;
    tb *b = tb_new(13);
    int64_t x[4] = {2, 4, 8, 6};
    if (c.x)
        memcpy(x, c.x, sizeof x);
    if (c.symbolic)
        x[1] = -1; /* the batch dim after the perm */
    tb_input(b, "x", dt, c.same ? 4 : 4, c.same ? (int64_t[]){2, 4, 6, 6} : x);
    tb_input(b, "a", dt, 4, (int64_t[]){c.symbolic ? -1 : 2, 4, 5, 6});
    tb_attr_ints(b, tb_node(b, "Transpose", "t", "x", "xt"), "perm", 4, c.perm ? c.perm : (int64_t[]){0, 1, 3, 2});
    tb_node(b, "MatMul", "mm", c.same ? "xt,xt" : "a,xt", "y");
    tb_output(b, "y", dt, -1, NULL);
    if (c.shared) {
        tb_node(b, "Relu", "other", "xt", "o2");
        tb_output(b, "o2", dt, -1, NULL);
    }
    if (c.out)
        tb_output(b, "xt", dt, -1, NULL);
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", model);
    tb_free(b);
    return l;
}

static const fp_node *node_named(const fp_model *m, const char *name)
{
    for (guint i = 0; i < m->main->nodes->len; i++) {
        const fp_node *n = m->main->nodes->pdata[i];
        if (strcmp(n->name, name) == 0)
            return n;
    }
    return NULL;
}

static void test_matmul_transpose(void)
{
    fp_model *m = NULL;
    fp_fusion_list *l = matmul_transpose((mt_case){0}, &m);
    expect(l, "matmul_transpose", "t", NULL);
    const fp_node *mm = node_named(m, "mm"), *t = node_named(m, "t");
    CU_ASSERT_STRING_EQUAL(mm->op_type, "FusedMatMul");
    CU_ASSERT_EQUAL(fp_node_attr_int(mm, "transB", 0), 1);
    CU_ASSERT_EQUAL(fp_node_attr_int(mm, "transA", 0), 0);
    CU_ASSERT_STRING_EQUAL(mm->inputs[1]->name, "x");
    CU_ASSERT(t->flags & FP_NODE_REMOVED);
    list_free(l);
    fp_model_free(m);
    /* another reader keeps the Transpose; the MatMul still reads x */
    l = matmul_transpose((mt_case){.shared = true}, &m);
    expect(l, "matmul_transpose", "t", NULL);
    CU_ASSERT_FALSE(node_named(m, "t")->flags & FP_NODE_REMOVED);
    CU_ASSERT_STRING_EQUAL(node_named(m, "mm")->inputs[1]->name, "x");
    list_free(l);
    fp_model_free(m);
    /* perm [1, 2, 0, 3] moves the batch axis: transBatchB, with static shapes only */
    const int64_t batch_perm[] = {1, 2, 0, 3}, batch_x[] = {6, 2, 4, 8};
    l = matmul_transpose((mt_case){.perm = batch_perm, .x = batch_x}, &m);
    expect(l, "matmul_transpose", "t", NULL);
    CU_ASSERT_EQUAL(fp_node_attr_int(node_named(m, "mm"), "transBatchB", 0), 1);
    CU_ASSERT_EQUAL(fp_node_attr_int(node_named(m, "mm"), "transB", 0), 0);
    list_free(l);
    fp_model_free(m);
    l = matmul_transpose((mt_case){.perm = batch_perm, .x = batch_x, .symbolic = true}, NULL);
    expect(l, "matmul_transpose", "t", "batch_shapes");
    list_free(l);
    l = matmul_transpose((mt_case){.out = true}, NULL);
    expect(l, "matmul_transpose", "t", "not_graph_output");
    list_free(l);
    l = matmul_transpose((mt_case){.same = true}, NULL);
    expect(l, "matmul_transpose", "t", "distinct_operands");
    list_free(l);
    l = matmul_transpose((mt_case){.fp16 = true}, NULL);
    expect(l, "matmul_transpose", "t", "+dtype_in");
    list_free(l);
    /* a head split ([0, 2, 1, 3]) is no candidate at all */
    l = matmul_transpose((mt_case){.perm = (int64_t[]){0, 2, 1, 3}, .x = (int64_t[]){2, 6, 4, 8}}, NULL);
    for (guint i = 0; i < l->fusions->len; i++)
        CU_ASSERT_STRING_NOT_EQUAL(((const fp_fusion *)l->fusions->pdata[i])->rule, "matmul_transpose");
    list_free(l);
}

/* x [2, 8] read by Slices along the last axis ([starts, ends) each), optionally by a Gather too;
 * the model at `opset`. */
typedef struct {
    int64_t cuts[3][2];
    int n;
    bool gather, other_axis;
    int opset;
} split_case;

static void slice_split(split_case c, const char *constraint)
{
    tb *b = tb_new(c.opset ? c.opset : 13);
    tb_input(b, "x", F32, 2, (int64_t[]){2, 8});
    tb_init_i64(b, "axis", 1, (int64_t[]){-1});
    tb_init_i64(b, "axis0", 1, (int64_t[]){0});
    for (int i = 0; i < c.n; i++) {
        g_autofree char *st = g_strdup_printf("s%d", i), *en = g_strdup_printf("e%d", i);
        g_autofree char *name = g_strdup_printf("slice%d", i), *y = g_strdup_printf("y%d", i);
        g_autofree char *ins = g_strdup_printf("x,%s,%s,%s", st, en, c.other_axis && i ? "axis0" : "axis");
        tb_init_i64(b, st, 1, &c.cuts[i][0]);
        tb_init_i64(b, en, 1, &c.cuts[i][1]);
        tb_node(b, "Slice", name, ins, y);
        tb_output(b, y, F32, -1, NULL);
    }
    if (c.gather) {
        tb_init_i64(b, "idx", 1, (int64_t[]){0});
        tb_attr_i(b, tb_node(b, "Gather", "gather", "x,idx", "g"), "axis", 1);
        tb_output(b, "g", F32, -1, NULL);
    }
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "slice_split", "slice0", constraint);
    if (!constraint) {
        const fp_node *sp = node_named(m, "slice0");
        CU_ASSERT_STRING_EQUAL(sp->op_type, "Split");
        CU_ASSERT_EQUAL(sp->n_outputs, (uint32_t)c.n);
        CU_ASSERT(node_named(m, "slice1")->flags & FP_NODE_REMOVED);
    }
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

static void test_slice_split(void)
{
    slice_split((split_case){{{0, 4}, {4, 8}}, 2}, NULL);
    slice_split((split_case){{{5, 8}, {0, 2}, {2, 5}}, 3}, NULL); /* any order */
    slice_split((split_case){{{0, 4}, {4, 100}}, 2}, NULL);       /* ends clamp */
    slice_split((split_case){{{0, 4}, {3, 8}}, 2}, "split_intervals");
    slice_split((split_case){{{0, 4}, {5, 8}}, 2}, "split_intervals");
    slice_split((split_case){{{0, 4}, {4, 8}}, 2, .gather = true}, "split_intervals");
    slice_split((split_case){{{0, 4}, {4, 8}}, 2, .other_axis = true}, "split_intervals");
    slice_split((split_case){{{0, 4}, {4, 8}}, 2, .opset = 12}, "min_opset");
}

/* x [3, 4] read by Gathers along axis 0 (a fused QKV split): with scalar indices each piece of the
 * Split is squeezed (the anchor's Squeeze is made at the end of the pass); a one-element index keeps
 * the dim; a Slice may take part; an index that is no constant refuses. */
static void test_gather_split(void)
{
    for (int variant = 0; variant < 3; variant++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 2, (int64_t[]){4, 5});
        tb_input(b, "dyn", I64, 0, NULL);
        tb_init_i64_scalar(b, "i0", 0);
        tb_init_i64(b, "i1", 1, (int64_t[]){1});
        tb_init_i64_scalar(b, "i2", -2); /* 2 */
        tb_init_i64(b, "s3", 1, (int64_t[]){3});
        tb_init_i64(b, "e3", 1, (int64_t[]){4});
        tb_init_i64(b, "ax", 1, (int64_t[]){0});
        tb_node(b, "Gather", "g0", variant == 2 ? "x,dyn" : "x,i0", "y0");
        tb_node(b, "Gather", "g1", "x,i1", "y1");
        tb_node(b, "Gather", "g2", "x,i2", "y2");
        tb_node(b, "Slice", "s3", "x,s3,e3,ax", "y3");
        for (int i = 0; i < 4; i++) {
            g_autofree char *y = g_strdup_printf("y%d", i), *z = g_strdup_printf("z%d", i);
            tb_node(b, "Relu", z, y, z);
            tb_output(b, z, F32, -1, NULL);
        }
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
        expect(l, "slice_split", "g0", variant == 2 ? "split_intervals" : NULL);
        if (variant < 2) {
            const fp_node *sp = node_named(m, "g0");
            CU_ASSERT_STRING_EQUAL(sp->op_type, "Split");
            CU_ASSERT_EQUAL(sp->n_outputs, 4);
            CU_ASSERT_STRING_EQUAL(node_named(m, "g2")->op_type, "Squeeze"); /* scalar index: squeezed */
            CU_ASSERT(node_named(m, "g1")->flags & FP_NODE_REMOVED);         /* [1] index: the piece itself */
            CU_ASSERT(node_named(m, "s3")->flags & FP_NODE_REMOVED);
            const fp_value *y0 = fp_graph_find(m->main, "y0");
            CU_ASSERT_EQUAL(y0->producer->op, FP_OP_SQUEEZE);
            CU_ASSERT_PTR_EQUAL(y0->producer->inputs[0], sp->outputs[0]);
            g_autofree char *piece = fp_shape_to_string(&sp->outputs[0]->shape);
            g_autofree char *out = fp_shape_to_string(&y0->shape);
            CU_ASSERT_STRING_EQUAL(piece, "1x5");
            CU_ASSERT_STRING_EQUAL(out, "5");
            CU_ASSERT_PTR_EQUAL(sp->outputs[1], fp_graph_find(m->main, "y1"));
            CU_ASSERT_PTR_EQUAL(sp->outputs[3], fp_graph_find(m->main, "y3"));
        }
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

/* x [1, 4, 6, 6] -> Pad (opset `opset`, pads as given, fill `fill`) -> [Cast] -> Conv, AveragePool or
 * MaxPool (with `auto_pad`, an Indices output); ONNX Runtime's PadFusion conditions. */
typedef struct {
    int64_t pads[8];
    float fill;
    const char *op;
    bool cast, indices, auto_pad;
    int opset;
} pad_case;

static void pad_fusion(pad_case c, const char *constraint)
{
    tb *b = tb_new(c.opset ? c.opset : 13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 6, 6});
    tb_init(b, "w", F32, 4, (int64_t[]){4, 4, 3, 3});
    tb_init_i64(b, "pads", 8, c.pads);
    tb_init_f32(b, "fill", 0, &c.fill);
    tb_node(b, "Pad", "pad", "x,pads,fill", "p");
    if (c.cast)
        tb_attr_i(b, tb_node(b, "Cast", "cast", "p", "pc"), "to", 11); /* to double: no no-op to remove */
    const char *in = c.cast ? "pc" : "p";
    g_autofree char *ins = strcmp(c.op, "Conv") == 0 ? g_strdup_printf("%s,w", in) : g_strdup(in);
    tb_node_t *n = tb_node(b, c.op, "consumer", ins, c.indices ? "y,idx" : "y");
    if (strcmp(c.op, "Conv") != 0)
        tb_attr_ints(b, n, "kernel_shape", 2, (int64_t[]){3, 3});
    if (c.auto_pad)
        tb_attr_s(b, n, "auto_pad", "SAME_UPPER");
    else
        tb_attr_ints(b, n, "pads", 4, (int64_t[]){1, 0, 1, 0});
    tb_output(b, "y", F32, -1, NULL);
    if (c.indices)
        tb_output(b, "idx", I64, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "pad_fusion", "pad", constraint);
    if (!constraint) {
        const fp_node *cons = node_named(m, "consumer");
        CU_ASSERT(node_named(m, "pad")->flags & FP_NODE_REMOVED);
        CU_ASSERT_PTR_EQUAL(c.cast ? node_named(m, "cast")->inputs[0] : cons->inputs[0], fp_graph_find(m->main, "x"));
        const fp_attr *pads = fp_node_attr(cons, "pads");
        CU_ASSERT_FATAL(pads && pads->n == 4);
        /* its [1, 0, 1, 0] plus the Pad's spatial starts and ends */
        CU_ASSERT(pads->u.ints[0] == 1 + c.pads[2] && pads->u.ints[1] == c.pads[3] &&
                  pads->u.ints[2] == 1 + c.pads[6] && pads->u.ints[3] == c.pads[7]);
    }
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

static void test_pad_fusion(void)
{
    pad_fusion((pad_case){.pads = {0, 0, 1, 2, 0, 0, 1, 2}, .op = "Conv"}, NULL);
    pad_fusion((pad_case){.pads = {0, 0, 1, 1, 0, 0, 1, 1}, .op = "AveragePool", .cast = true}, NULL);
    pad_fusion((pad_case){.pads = {0, 0, 1, 1, 0, 0, 1, 1}, .op = "MaxPool"}, NULL);
    pad_fusion((pad_case){.pads = {0, 0, 1, 2, 0, 0, 1, 2}, .fill = 1.0f, .op = "Conv"}, "pad_foldable");
    pad_fusion((pad_case){.pads = {0, 1, 1, 2, 0, 0, 1, 2}, .op = "AveragePool"}, "pad_foldable"); /* channels */
    pad_fusion((pad_case){.pads = {0, 0, -1, 0, 0, 0, 1, 2}, .op = "Conv"}, "pad_foldable");       /* crops */
    pad_fusion((pad_case){.pads = {0, 0, 1, 1, 0, 0, 1, 1}, .op = "Conv", .auto_pad = true}, "explicit_pads");
    pad_fusion((pad_case){.pads = {0, 0, 1, 1, 0, 0, 1, 1}, .op = "MaxPool", .indices = true}, "explicit_pads");
    pad_fusion((pad_case){.pads = {0, 0, 1, 1, 0, 0, 1, 1}, .op = "Conv", .opset = 21}, "max_opset");
}

/* The GE rules of the Ascend targets: LayerNorm, Gelu and MatMul + bias on the transformer block
 * (LayerNormONNXFusionPass wants static shapes), and the patterns GE has no pass for, which
 * explain refuses naming the op to export instead. */
static fp_fusion_list *fuse_model(const char *path, const char *target, char **dims)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_dim_binding bind[2] = {{"batch", 1}, {"seq", 16}};
    fp_shape_opts so = {.batch = 1, .dims = dims ? bind : NULL, .n_dims = dims ? 2 : 0};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, &err));
    fp_pass_metrics(m, NULL);
    g_autoptr(fp_target) t = fp_target_load(target, &err);
    fp_fusion_list *l = fp_fusion_list_new();
    CU_ASSERT_FATAL(fp_pass_fuse(m, t, FP_FUSE_ALL, l, NULL, &err));
    g_hash_table_insert(owners(), l, m);
    return l;
}

static void test_ge_transformer_rules(void)
{
    const char *block = FP_SOURCE_DIR "/models/transformer_block.onnx";
    fp_fusion_list *l = fuse_model(block, "ascend910b", NULL);
    expect(l, "ge_layer_norm", "ln1.mean", "static_input");
    expect(l, "ge_gelu", "gelu.div", NULL);
    expect(l, "ge_matmul_bias", "attn.q.matmul", NULL);
    list_free(l);
    l = fuse_model(block, "ascend910b", (char *[]){"static", NULL});
    expect(l, "ge_layer_norm", "ln1.mean", NULL);
    expect(l, "ge_layer_norm", "ln2.mean", NULL);
    list_free(l);
    rms_norm("ascend910b", (rms_case){0}, "no_pass");
    /* a GE graph with GE's RmsNorm op (torchair): the residual Add before it fuses */
    const char *ge =
        "graph { name: 'g'\n"
        " op { name: 'a' type: 'Data' input: '' attr { key: 'index' value { i: 0 } }"
        " output_desc { dtype: DT_FLOAT16 shape { dim: [1, 4, 64] } layout: 'ND' } }\n"
        " op { name: 'b' type: 'Data' input: '' attr { key: 'index' value { i: 1 } }"
        " output_desc { dtype: DT_FLOAT16 shape { dim: [1, 4, 64] } layout: 'ND' } }\n"
        " op { name: 'gamma' type: 'Const' output_desc { dtype: DT_FLOAT16 shape { dim: 64 } layout: 'ND' } }\n"
        " op { name: 'add' type: 'Add' input: 'a:0' input: 'b:0'"
        " output_desc { dtype: DT_FLOAT16 shape { dim: [1, 4, 64] } layout: 'ND' } }\n"
        " op { name: 'norm' type: 'RmsNorm' input: 'add:0' input: 'gamma:0'"
        " output_desc { dtype: DT_FLOAT16 shape { dim: [1, 4, 64] } layout: 'ND' } }\n"
        " op { name: 'out' type: 'NetOutput' input: 'norm:0' input: 'add:0' }\n"
        "}\n";
    g_autofree char *gpath = tu_write_temp(ge, strlen(ge), ".txt");
    l = fuse_model(gpath, "ascend910b", NULL);
    expect(l, "ge_add_rms_norm", "add", NULL); /* its sum, a graph output too, is one of AddRmsNorm's */
    list_free(l);
    g_unlink(gpath);
    tb *b = tb_new(13);
    tb_input(b, "g", F32, 2, (int64_t[]){2, 8});
    tb_input(b, "u", F32, 2, (int64_t[]){2, 8});
    tb_node(b, "Sigmoid", "sigmoid", "g", "s");
    tb_node(b, "Mul", "silu", "g,s", "a");
    tb_node(b, "Mul", "gated", "a,u", "y");
    tb_output(b, "y", F32, -1, NULL);
    l = fuse_tb(b, "ascend910b", NULL);
    expect(l, "ge_swiglu_gap", "sigmoid", "no_pass");
    const fp_fusion *f = find(l, "ge_swiglu_gap", "sigmoid");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const fp_reason *why = f->reasons->pdata[0];
    CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "SwiGlu (torch_npu.npu_swiglu)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why->message, "ascend910b has no fusion pass for this pattern"));
    list_free(l);
    tb_free(b);
    /* an unfused attention core, with a scale and a mask: no pass makes FlashAttentionScore of it */
    b = tb_new(13);
    tb_input(b, "q", F32, 4, (int64_t[]){1, 2, 8, 16});
    tb_input(b, "kt", F32, 4, (int64_t[]){1, 2, 16, 8});
    tb_input(b, "v", F32, 4, (int64_t[]){1, 2, 8, 16});
    tb_input(b, "mask", F32, 4, (int64_t[]){1, 1, 8, 8});
    tb_init_f32(b, "c", 1, (float[]){4.0f});
    tb_node(b, "MatMul", "scores", "q,kt", "s");
    tb_node(b, "Div", "scale", "s,c", "s2");
    tb_node(b, "Add", "masked", "s2,mask", "s3");
    tb_node_t *sm = tb_node(b, "Softmax", "softmax", "s3", "p");
    tb_attr_i(b, sm, "axis", -1);
    tb_node(b, "MatMul", "context", "p,v", "y");
    tb_output(b, "y", F32, -1, NULL);
    l = fuse_tb(b, "ascend910b", NULL);
    expect(l, "ge_attention_gap", "scores", "no_pass");
    f = find(l, "ge_attention_gap", "scores");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(((const fp_reason *)f->reasons->pdata[0])->hint, "npu_fusion_attention"));
    CU_ASSERT_PTR_NOT_NULL(strstr(((const fp_reason *)f->reasons->pdata[0])->message, "the 4 ops after it"));
    list_free(l);
    tb_free(b);
}

/* Softmax from small ops as exports decompose it over x [4, 4, 16]: ReduceMax (axis max_axis,
 * keepdims keep_max), Sub(x, max), Exp, ReduceSum (axis sum_axis, keepdims 1), Div(exp, sum);
 * `dynamic`: x's first dim symbolic. */
static tb *softmax_small_ops(int64_t max_axis, int64_t sum_axis, bool keep_max, bool dynamic)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){dynamic ? -1 : 4, 4, 16});
    tb_init_i64(b, "sum_axes", 1, (int64_t[]){sum_axis});
    tb_node_t *mx = tb_node(b, "ReduceMax", "max", "x", "m");
    tb_attr_ints(b, mx, "axes", 1, (int64_t[]){max_axis});
    if (!keep_max)
        tb_attr_i(b, mx, "keepdims", 0);
    tb_node(b, "Sub", "sub", "x,m", "d");
    tb_node(b, "Exp", "exp", "d", "e");
    tb_node(b, "ReduceSum", "sum", "e,sum_axes", "s");
    tb_node(b, "Div", "div", "e,s", "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* The softmax model's ge_softmax_small_op candidate on target (a name or an .ini path) refused by
 * `constraint` (NULL: applied); the refusal's message holds `needle` when given. */
static void softmax_small_op(const char *target, tb *b, const char *constraint, const char *needle)
{
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, target, &m);
    expect(l, "ge_softmax_small_op", "max", constraint);
    const fp_fusion *f = find(l, "ge_softmax_small_op", "max");
    if (f && !constraint) {
        CU_ASSERT_STRING_EQUAL(f->fused_op, "SoftmaxV2");
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "SoftmaxV2"), 1);
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "Exp"), 0);
    }
    if (f && needle && f->reasons->len)
        CU_ASSERT_PTR_NOT_NULL(strstr(((const fp_reason *)f->reasons->pdata[0])->message, needle));
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

/* SoftmaxSmallOpFusionPass: off by default in ATC, so the Ascend targets refuse the decomposed
 * softmax naming both ways out; a target that switches it on (enabled = 1) fuses it into SoftmaxV2
 * unless a reduce drops its axes, the reduces disagree, or the shape is dynamic. */
static void test_ge_softmax_small_op(void)
{
    const char *targets[] = {"ascend910b", "ascend310p"};
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        tb *b = softmax_small_ops(-1, -1, true, false);
        fp_fusion_list *l = fuse_tb(b, targets[i], NULL);
        expect(l, "ge_softmax_small_op", "max", "softmax_pass_on");
        const fp_fusion *f = find(l, "ge_softmax_small_op", "max");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(f->nodes->len, 5);
        const fp_reason *why = f->reasons->pdata[0];
        CU_ASSERT_PTR_NOT_NULL(strstr(why->message, "SoftmaxSmallOpFusionPass is off by default in ATC"));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "--fusion_switch_file"));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "SoftmaxSmallOpFusionPass:on"));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "one ONNX Softmax (torch.softmax)"));
        CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "SoftmaxV2"));
        CU_ASSERT_STRING_EQUAL(why->actual, "enabled = 0 (ATC's default)");
        list_free(l);
        tb_free(b);
    }
    const char *ini = "[target]\nname = ascend-softmax-on\nrules = ge_softmax_small_op\n"
                      "[rule.ge_softmax_small_op]\nenabled = 1\n";
    g_autofree char *path = tu_write_temp(ini, strlen(ini), ".ini");
    softmax_small_op(path, softmax_small_ops(-1, -1, true, false), NULL, NULL);
    softmax_small_op(path, softmax_small_ops(2, -1, true, false), NULL, NULL); /* axis 2 is the last */
    softmax_small_op(path, softmax_small_ops(0, 0, false, false), "same_reduce_axes", "keepdims 0");
    softmax_small_op(path, softmax_small_ops(-1, 1, true, false), "same_reduce_axes", "other axes");
    softmax_small_op(path, softmax_small_ops(-1, -1, true, true), "static_input", "dynamic shape");
    g_unlink(path);
}

/* Rotary embedding in the rotate-half form over x [1, 2, 4, d] (rank 4) or [2, 4, d] (rank 3):
 * x * cos + Concat(Neg(x[..., d/2:]), x[..., :d/2]) * sin, the Slice ends as torch writes them.
 * `swapped`: the Muls and the Add read their operands the other way round; `cat_swapped`: the
 * Concat joins the halves the other way (no rotation). */
static tb *rope_model(int rank, int64_t d, bool swapped, bool cat_swapped)
{
    tb *b = tb_new(13);
    const int64_t dims[4] = {1, 2, 4, d}, table[4] = {1, 1, 4, d};
    tb_input(b, "x", F32, rank, dims + 4 - rank);
    tb_init(b, "cos", F32, rank, table + 4 - rank);
    tb_init(b, "sin", F32, rank, table + 4 - rank);
    tb_init_i64(b, "zero", 1, (int64_t[]){0});
    tb_init_i64(b, "half", 1, (int64_t[]){d / 2});
    tb_init_i64(b, "end", 1, (int64_t[]){INT64_MAX});
    tb_init_i64(b, "last", 1, (int64_t[]){-1});
    tb_node(b, "Slice", "lo", "x,zero,half,last", "x1");
    tb_node(b, "Slice", "hi", "x,half,end,last", "x2");
    tb_node(b, "Neg", "neg", "x2", "nx2");
    tb_node_t *cat = tb_node(b, "Concat", "rotate", cat_swapped ? "x1,nx2" : "nx2,x1", "rot");
    tb_attr_i(b, cat, "axis", -1);
    tb_node(b, "Mul", "mulcos", swapped ? "cos,x" : "x,cos", "xc");
    tb_node(b, "Mul", "mulsin", swapped ? "sin,rot" : "rot,sin", "rs");
    tb_node(b, "Add", "add", swapped ? "rs,xc" : "xc,rs", "y");
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

/* The rope model's ge_rope_gap candidate on ascend910b: refused by `constraint` ("+name": among
 * others), or none at all when constraint is NULL; `needle` in the last reason's message. */
static void rope_gap(tb *b, const char *constraint, const char *needle)
{
    fp_fusion_list *l = fuse_tb(b, "ascend910b", NULL);
    const fp_fusion *f = find(l, "ge_rope_gap", "hi");
    if (!constraint) {
        CU_ASSERT_PTR_NULL(f);
    } else {
        expect(l, "ge_rope_gap", "hi", constraint);
        CU_ASSERT_EQUAL(f ? f->nodes->len : 0, 7);
        const fp_reason *last = f && f->reasons->len ? f->reasons->pdata[f->reasons->len - 1] : NULL;
        if (needle)
            CU_ASSERT(last && strstr(last->message, needle));
    }
    list_free(l);
    tb_free(b);
}

/* No GE pass builds RotaryMul / ApplyRotaryPosEmb from primitive ops: the rotate-half form is
 * refused naming the op to export (either operand order of the Muls and the Add), with the
 * kernel's shape conditions when x is not 4-D or its head dim is odd; the four ropes of the
 * decoder sample are found. */
static void test_ge_rope_gap(void)
{
    tb *b = rope_model(4, 16, false, false);
    fp_fusion_list *l = fuse_tb(b, "ascend910b", NULL);
    expect(l, "ge_rope_gap", "hi", "no_pass");
    const fp_fusion *f = find(l, "ge_rope_gap", "hi");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const fp_reason *why = f->reasons->pdata[0];
    CU_ASSERT_PTR_NOT_NULL(strstr(why->message, "Slice hi and the 6 ops after it: ascend910b has no fusion pass"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why->hint, "RotaryMul (torch_npu.npu_rotary_mul)"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(why->hint, "ApplyRotaryPosEmb for q and k together (torch_npu.npu_apply_rotary_pos_emb)"));
    list_free(l);
    tb_free(b);
    rope_gap(rope_model(4, 16, true, false), "no_pass", NULL);
    rope_gap(rope_model(3, 16, false, false), "+rotary_operands", "'x' is 3-D (2x4x16)");
    rope_gap(rope_model(3, 16, false, false), "+no_pass", NULL);
    rope_gap(rope_model(4, 17, false, false), "+rotary_operands", "head dim 17 of 'x'");
    rope_gap(rope_model(4, 16, false, true), NULL, NULL); /* Concat(x1, -x2): no rotation */
    l = fuse_model(FP_SOURCE_DIR "/models/decoder_tiny.onnx", "ascend910b", NULL);
    guint n = 0;
    for (guint i = 0; i < l->fusions->len; i++)
        n += strcmp(((const fp_fusion *)l->fusions->pdata[i])->rule, "ge_rope_gap") == 0;
    CU_ASSERT_EQUAL(n, 4);
    expect(l, "ge_rope_gap", "model.layers.0.self_attn.q_rot.hi", "no_pass");
    expect(l, "ge_rope_gap", "model.layers.1.self_attn.k_rot.hi", "no_pass");
    list_free(l);
}

static void test_quick_gelu_and_elim(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
    tb_node(b, "Identity", "id", "x", "xi");
    tb_node(b, "Sigmoid", "sig", "xi", "s");
    tb_node(b, "Mul", "mul", "xi,s", "q");
    tb_node(b, "Dropout", "drop", "q", "d");
    tb_node(b, "Identity", "id_out", "d", "y");
    tb_output(b, "y", F32, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "identity_elim", "id", NULL);
    expect(l, "identity_elim", "id_out", "not_graph_output");
    expect(l, "dropout_elim", "drop", NULL);
    expect(l, "identity_output_elim", "id_out", NULL); /* the Mul writes y */
    expect(l, "quick_gelu", "sig", NULL);
    CU_ASSERT_PTR_NULL(fp_graph_find(m->main, "q")->producer);
    fp_node *q = fp_graph_find(m->main, "y")->producer;
    CU_ASSERT_STRING_EQUAL(q->op_type, "QuickGelu");
    CU_ASSERT_PTR_EQUAL(q->inputs[0], fp_graph_find(m->main, "x")); /* Identity removed */
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

/* ONNX Runtime's EliminateIdentity removes an Identity that writes a graph output when its input
 * comes from a node, is no graph output and has no other reader (the producer then writes the
 * output; ORT 1.31.1's saved graph at level all: x -> Relu -> Identity -> y keeps the Relu alone);
 * it keeps one of a graph input, of a value another node reads, of a value that is a graph output
 * too. */
static void test_identity_output_elim(void)
{
    static const char *const refusal[] = {NULL, "identity_output", "identity_output", "identity_output"};
    for (int k = 0; k < 4; k++) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
        tb_node(b, "Relu", "relu", "x", "r");
        tb_node(b, "Identity", "id", k == 1 ? "x" : "r", "y");
        tb_output(b, "y", F32, -1, NULL);
        if (k == 2)
            tb_node(b, "Sigmoid", "other", "r", "s");
        if (k >= 2)
            tb_output(b, k == 2 ? "s" : "r", F32, -1, NULL);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu-basic", &m);
        expect(l, "identity_output_elim", "id", refusal[k]);
        const fp_node *p = fp_graph_find(m->main, "y")->producer;
        CU_ASSERT_STRING_EQUAL(p->op_type, k == 0 ? "Relu" : "Identity");
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

/* x * Sigmoid(1.702 x) (CLIP's and PP-OCR's writing) is a QuickGelu too; not when the scaled x has
 * another reader (a Relu) or is a graph output. */
static void test_quick_gelu_alpha(void)
{
    static const char *const refusal[] = {NULL, "single_consumer", "not_graph_output"};
    for (int k = 0; k < 3; k++) {
        tb *b = tb_new(11);
        tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
        tb_output(b, "y", F32, -1, NULL);
        tb_output(b, k == 2 ? "ax" : "r", F32, -1, NULL);
        tb_init_f32(b, "alpha", 1, (const float[]){1.702f});
        tb_node(b, "Mul", "scale", "x,alpha", "ax");
        tb_node(b, "Sigmoid", "sig", "ax", "s");
        tb_node(b, "Mul", "mul", "x,s", "y");
        tb_node(b, "Relu", "other", k == 1 ? "ax" : "x", "r");
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu-extended", &m);
        expect(l, "quick_gelu", "scale", refusal[k]);
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "QuickGelu"), k ? 0 : 1);
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

/* NoopElimination's cases, x = Abs(x0): x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 go, the reader
 * reading x; 0 - x, 1 / x, x * 2 and an Add of two zeros are no candidates; a no-op whose output is
 * a graph output stays, and so does one of the graph input x0 (no input edge, two inputs). */
static void test_noop_elim(void)
{
    static const struct {
        const char *op, *ins;
        float k;
        int n;
        const char *refusal; /* NULL: removed; "-": no candidate */
    } cases[] = {
        {"Add", "x,k", 0, 0, NULL},
        {"Add", "k,x", 0, 1, NULL},
        {"Sub", "x,k", 0, 0, NULL},
        {"Mul", "x,k", 1, 0, NULL},
        {"Mul", "k,x", 1, 1, NULL},
        {"Div", "x,k", 1, 0, NULL},
        {"Sub", "k,x", 0, 0, "-"},
        {"Div", "k,x", 1, 0, "-"},
        {"Mul", "x,k", 2, 0, "-"},
        {"Add", "x,k", 0, 2, "-"},
        {"Add", "x,k", 0, 0, "not_graph_output"},
        {"Div", "x0,k", 1, 0, "one_input_edge"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        bool out = cases[i].refusal && strcmp(cases[i].refusal, "not_graph_output") == 0;
        tb *b = tb_new(13);
        tb_input(b, "x0", F32, 2, (int64_t[]){4, 2});
        tb_init_f32(b, "k", cases[i].n, (const float[]){cases[i].k, cases[i].k});
        tb_node(b, "Abs", "abs", "x0", "x");
        tb_node(b, cases[i].op, "noop", cases[i].ins, "a");
        tb_node(b, "Relu", "relu", "a", "y");
        tb_output(b, "y", F32, -1, NULL);
        if (out)
            tb_output(b, "a", F32, -1, NULL);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu-basic", &m);
        if (cases[i].refusal && strcmp(cases[i].refusal, "-") == 0) {
            CU_ASSERT_PTR_NULL(find(l, "noop_elim", NULL));
        } else {
            expect(l, "noop_elim", "noop", cases[i].refusal);
        }
        fp_node *relu = fp_graph_find(m->main, "y")->producer;
        CU_ASSERT_PTR_EQUAL(relu->inputs[0], fp_graph_find(m->main, cases[i].refusal ? "a" : "x"));
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

/* The kernels of m's main graph (views aside: they launch nothing) as "OP=N" words in op order,
 * the form of tests/data/fuse/paddle_like.ort. */
static char *kernel_list(const fp_model *m)
{
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    g_autoptr(GTree) count = g_tree_new((GCompareFunc)strcmp);
    for (guint i = 0; i < m->main->nodes->len; i++) {
        const fp_node *n = m->main->nodes->pdata[i];
        if (n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED) || g_strv_contains((const char *const *)views, n->op_type))
            continue;
        g_tree_insert(count, (gpointer)n->op_type,
                      GUINT_TO_POINTER(GPOINTER_TO_UINT(g_tree_lookup(count, n->op_type)) + 1));
    }
    GString *s = g_string_new(NULL);
    GTreeNode *t = g_tree_node_first(count);
    for (; t; t = g_tree_node_next(t))
        g_string_append_printf(s, "%s%s=%u", s->len ? " " : "", (const char *)g_tree_node_key(t),
                               GPOINTER_TO_UINT(g_tree_node_value(t)));
    return g_string_free(s, false);
}

static gint cmp_words(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The live nodes of m's main graph (views aside) as "OP:NAME" words in byte order, the form of
 * tests/data/fuse/corpus_nodes.ort. */
static char *node_list(const fp_model *m)
{
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", NULL};
    g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < m->main->nodes->len; i++) {
        const fp_node *n = m->main->nodes->pdata[i];
        if (fp_node_live(n) && !g_strv_contains(views, n->op_type))
            g_ptr_array_add(words, g_strdup_printf("%s:%s", n->op_type, n->name));
    }
    g_ptr_array_sort(words, cmp_words);
    g_ptr_array_add(words, NULL);
    return g_strjoinv(" ", (char **)words->pdata);
}

/* The first two words of each line of tests/data/REL that is not a comment ("MODEL LEVEL"), as a
 * set; an empty set when REL is NULL. */
static GHashTable *line_keys(const char *rel)
{
    GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GBytes) data = rel ? tm_data(rel) : NULL;
    if (!data)
        return keys;
    g_autofree char *text = g_strndup(g_bytes_get_data(data, NULL), g_bytes_get_size(data));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        g_auto(GStrv) w = g_strsplit(*l, " ", 3);
        if (**l && **l != '#' && g_strv_length(w) >= 2)
            g_hash_table_add(keys, g_strdup_printf("%s %s", w[0], w[1]));
    }
    return keys;
}

/* Each line "MODEL LEVEL WORDS" of tests/data/LIST (ONNX Runtime 1.30's result on MODELS/MODEL at
 * LEVEL; level all measured on an AVX-512F host, so on devices/cpu-avx512.ini) against list_of of
 * fuseplan's final graph on ort-cpu-LEVEL: equal, or, for the "MODEL LEVEL" pairs of
 * tests/data/DIFFER (NULL: none), still different. MODELS is a folder of the source tree. Returns
 * the number of lines checked. */
static guint check_ort_lines(const char *models, const char *list, const char *differ,
                             char *(*list_of)(const fp_model *))
{
    g_autoptr(GBytes) data = tm_data(list);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    g_autoptr(GHashTable) known = line_keys(differ);
    g_autofree char *text = g_strndup(g_bytes_get_data(data, NULL), g_bytes_get_size(data));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    guint checked = 0;
    for (char **l = lines; *l; l++) {
        if (!**l || **l == '#')
            continue;
        g_auto(GStrv) w = g_strsplit(*l, " ", 3);
        CU_ASSERT_FATAL(g_strv_length(w) == 3);
        g_autofree char *path = g_strdup_printf(FP_SOURCE_DIR "/%s/%s", models, w[0]);
        g_autofree char *target = g_strdup_printf("ort-cpu-%s", w[1]);
        g_autofree char *key = g_strdup_printf("%s %s", w[0], w[1]);
        fp_analysis_opts o = {.target = target, .device = strcmp(w[1], "all") == 0 ? "cpu-avx512" : NULL};
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        g_autofree char *got = list_of(a->model);
        bool same = strcmp(got, w[2]) == 0, expect_same = !g_hash_table_contains(known, key);
        if (same != expect_same)
            fprintf(stderr, "\n  %s at %s: ORT %s, fuseplan %s%s", w[0], w[1], w[2], got,
                    same ? " (now equal: remove the line from the known differences)" : "");
        CU_ASSERT_EQUAL(same, expect_same);
        checked++;
    }
    return checked;
}

/* Each line "MODEL LEVEL OP=N..." of tests/data/LIST (ONNX Runtime 1.30's kernels of MODELS/MODEL at
 * LEVEL, views aside) against fuseplan's, as check_ort_lines. */
static guint check_ort_kernels(const char *models, const char *list, const char *differ)
{
    return check_ort_lines(models, list, differ, kernel_list);
}

/* Each line "MODEL LEVEL OP:NAME..." of tests/data/LIST (ONNX Runtime 1.30's nodes of MODELS/MODEL
 * at LEVEL by op and name, views aside) against fuseplan's, as check_ort_lines: which node of
 * several alike ORT keeps. */
static guint check_ort_nodes(const char *models, const char *list)
{
    return check_ort_lines(models, list, NULL, node_list);
}

/* Models written as paddle2onnx writes PaddleOCR (bench/gen_paddle_like.py): fuseplan's ort-cpu-*
 * targets leave the kernels ONNX Runtime 1.30 leaves at each level (tests/data/fuse/paddle_like.ort).
 * The hard-swish after a Conv + BatchNorm and the learnable affine Mul(k[1], conv) stay; x *
 * Sigmoid(1.702 x) is QuickGelu. */
static void test_paddle_like_ort(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/paddle_like.ort", NULL), 6);
}

/* Models whose fusions hinge on the shapes ONNX Runtime knows when it optimizes
 * (bench/gen_ort_shape_cases.py): a residual Add whose operand comes from a Reshape of a runtime
 * shape is no SkipLayerNormalization there (the bound shapes match, the declared ones do not), and
 * a Reshape's shape copying dim 0 of another tensor with the same symbolic dim 0 becomes
 * ReshapeFusion's constant (tests/data/fuse/ort_shapes.ort). */
static void test_ort_shapes(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/ort_shapes.ort", NULL), 6);
}

/* The smallest forms of the differences found on the broad corpus (bench/gen_corpus_cases.py):
 * ONNX Runtime's elimination merges two MatMuls of one input once an Identity no longer stands
 * between one of them and its weights; its MatMulAddFusion makes a Gemm of a 3-D A whose dims it
 * knows though another model input is symbolic; its MatMulScaleFusion leaves a scale on the output
 * of a Reshape-13 whose target is no constant (no shape in its graph) and takes it after a
 * Reshape-14; in PP-OCRv4's transformer block (opset 9) its NoopElimination keeps the x * 1 whose x
 * has no rank in its graph, its ReshapeFusion makes [0, 1, -1, 12] of a target with a width sliced
 * from a Shape, and its transpose optimizer's estimate, reading the ranks it knows, leaves the
 * Transpose before the first LayerNorm (tests/data/fuse/corpus_cases.ort). */
static void test_corpus_cases(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/corpus_cases.ort", NULL), 18);
}

/* Of nodes ONNX Runtime's elimination finds alike, the one it keeps is the first in its graph's
 * topological order, a walk up from the last leaf (torch's nn.TransformerDecoder keeps the last
 * layer's cross-attention K/V projection of the shared memory): the node names of
 * tests/data/fuse/corpus_nodes.ort. */
static void test_corpus_nodes(void) { CU_ASSERT_EQUAL(check_ort_nodes("tests/data/fuse", "fuse/corpus_nodes.ort"), 3); }

/* Models on which the NCHWc layout once disagreed with ONNX Runtime at level all
 * (bench/gen_nchwc_cases.py): a Resize of a blocked tensor by whole-number scales, linear or nearest
 * asymmetric floor, runs as the blocked Upsample, other Resizes stay; a float16 pool stays NCHW
 * when no initializer Cast is folded (the Casts come after the layout), and runs blocked when one
 * is (tests/data/fuse/nchwc_cases.ort). */
static void test_nchwc_cases(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/nchwc_cases.ort", NULL), 12);
}

/* ONNX Runtime's transpose optimizer on MaxViT's grid attention (bench/gen_transpose_cases.py):
 * the swap back before the departition's Reshape goes after it, the Reshape now splitting the
 * dims of the tensor before the swap, and meets the departition's Transpose; in the last stage,
 * whose window is the whole map, ReshapeFusion first joins the two Reshapes between the window
 * departition's and the grid partition's Transposes, which then compose
 * (tests/data/fuse/transpose_cases.ort). */
static void test_transpose_cases(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/transpose_cases.ort", NULL), 6);
}

/* Cuts of onnxruntime-genai's float16 test decoders (bench/gen_float16_cases.py): ONNX Runtime's CPU
 * EP inlines a float16 FastGelu (with and without a bias), Gelu and QuickGelu of com.microsoft as
 * their function bodies in float32 between Casts (at level all the FastGelu scale goes into the next
 * MatMul, the QuickGelu body is QuickGelu again), ONNX's float16 Gelu-20 too, and keeps SkipLayerNormalization,
 * SkipSimplifiedLayerNormalization, GroupQueryAttention and MatMulNBits float16
 * (tests/data/fuse/float16_cases.ort). */
static void test_float16_cases(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse", "fuse/float16_cases.ort", NULL), 12);
}

/* The minimized disagreements of the differential test (bench/difftest/difftest.py --data): at the
 * levels where fuseplan agrees with ONNX Runtime it still does, and the known differences
 * (tests/data/fuse/difftest/known_differ.txt, each with ORT's and fuseplan's kernels) still differ,
 * until a fix of the rule makes one agree. */
static void test_difftest_vs_ort(void)
{
    CU_ASSERT(check_ort_kernels("tests/data/fuse/difftest", "fuse/difftest/difftest.ort",
                                "fuse/difftest/known_differ.txt") > 0);
}

/* The QDQ samples (models/qdq_*.onnx, models/gen_samples.py): fuseplan's ort-cpu-* targets leave the
 * kernels ONNX Runtime 1.30 leaves (tests/data/fuse/qdq.ort): the units that become QLinearConv,
 * QLinearMatMul, MatMulIntegerToFloat, QGemm, QLinearAdd/Mul, the unary QLinear ops and MatMulNBits,
 * and the DequantizeLinear, QuantizeLinear and float ops of those that stay; the known differences
 * (tests/data/fuse/qdq_differ.txt) still differ. */
static void test_qdq_vs_ort(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("models", "fuse/qdq.ort", "fuse/qdq_differ.txt"), 12);
}

/* Third-party QDQ models (tests/data/fuse/qdq_third: ONNX Runtime's own test data, quantized by
 * its quantizer and by another vendor's tool): fuseplan's ort-cpu-* targets leave the kernels ONNX
 * Runtime 1.30 leaves (tests/data/fuse/qdq_third.ort) at every level; the known differences
 * (tests/data/fuse/qdq_third_differ.txt) still differ. */
static void test_qdq_third_vs_ort(void)
{
    CU_ASSERT_EQUAL(check_ort_kernels("tests/data/fuse/qdq_third", "fuse/qdq_third.ort", "fuse/qdq_third_differ.txt"),
                    12);
}

/* ONNX Runtime's NHWC naming at level all (ApiGraph::MoveOutput): a channels-last node writes a new
 * tensor, the Transpose back the model's; a tensor no NCHW reader needs keeps no producer
 * (models/qdq_cnn_branches.onnx: conv1's int8 output goes to a float reader and to the pool). */
static void test_nhwc_names(void)
{
    fp_analysis_opts o = {.target = "ort-cpu-all", .device = "cpu-avx512"};
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/qdq_cnn_branches.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const fp_graph *g = a->model->main;
    const fp_value *c1 = fp_graph_find(g, "conv1.q_out"), *c2 = fp_graph_find(g, "conv2.q_out");
    CU_ASSERT_FATAL(c1 && c2 && c1->producer && c2->producer);
    CU_ASSERT_STRING_EQUAL(c1->producer->op_type, "Transpose");
    CU_ASSERT_STRING_EQUAL(c2->producer->op_type, "Transpose");
    const fp_node *conv1 = c1->producer->inputs[0]->producer;
    CU_ASSERT_FATAL(conv1 != NULL);
    CU_ASSERT_STRING_EQUAL(conv1->op_type, "QLinearConv");
    const fp_value *pool = fp_graph_find(g, "pool.q_out");
    CU_ASSERT(!pool || !fp_node_live(pool->producer));
}

/* The analysis of models/NAME on target ort-cpu-extended. */
static fp_analysis *qdq_analysis(const char *name)
{
    g_autofree char *path = g_strdup_printf(FP_SOURCE_DIR "/models/%s", name);
    fp_analysis_opts o = {.target = "ort-cpu-extended"};
    g_autoptr(GError) err = NULL;
    fp_analysis *a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

/* What explain says of the QDQ samples' units: each that becomes an int8 kernel, and each that
 * stays with the constraint ONNX Runtime's selector refuses it by; the kernels read the quantized
 * tensors with their scales and zero points in the op's order, a DQ read outside the unit stays. */
static void test_qdq_units(void)
{
    g_autoptr(fp_analysis) cnn = qdq_analysis("qdq_cnn.onnx");
    const fp_fusion_list *l = cnn->res.fusions;
    expect(l, "qdq_conv", "conv1.conv", NULL);
    expect(l, "qdq_conv", "conv4.conv", NULL); /* a float bias, quantized at load */
    expect(l, "qdq_binary", "residual.add", NULL);
    expect(l, "qdq_drop", "pool1", NULL);
    expect(l, "qdq_drop", "flatten", "same_quant");
    expect(l, "qdq_gemm", "fc.gemm", NULL);
    const fp_node *conv = node_named(cnn->model, "conv2.conv");
    CU_ASSERT_STRING_EQUAL(conv->op_type, "QLinearConv");
    CU_ASSERT(conv->n_inputs == 11 && strcmp(conv->inputs[3]->name, "conv2.weight_q") == 0);
    CU_ASSERT_STRING_EQUAL(conv->outputs[0]->name, "conv2.q_out");
    CU_ASSERT(conv->outputs[0]->dtype == FP_DT_UINT8);
    const fp_node *pool = node_named(cnn->model, "pool1");
    CU_ASSERT(pool->op == FP_OP_MAX_POOL && pool->inputs[0]->dtype == FP_DT_UINT8);

    g_autoptr(fp_analysis) mm = qdq_analysis("qdq_matmul.onnx");
    l = mm->res.fusions;
    expect(l, "qdq_matmul", "q.matmul", NULL);
    expect(l, "qdq_matmul", "out.matmul", NULL);
    expect(l, "qdq_matmul", "final.matmul", "dq_inputs");
    expect(l, "qdq_unary", "softmax", NULL);
    CU_ASSERT_STRING_EQUAL(node_named(mm->model, "out.matmul")->op_type, "MatMulIntegerToFloat");
    const fp_node *wo = node_named(mm->model, "wo.weight_dq"); /* also a graph output: it stays */
    CU_ASSERT(wo && !(wo->flags & FP_NODE_REMOVED));

    g_autoptr(fp_analysis) q4 = qdq_analysis("qdq_int4.onnx");
    l = q4->res.fusions;
    expect(l, "qdq_matmul_nbits", "fc0.matmul", NULL);
    expect(l, "qdq_matmul_nbits", "fc1.matmul", "no_clip_after");
    expect(l, "qdq_matmul_nbits", "fc2.matmul", "nbits_weight");
    expect(l, "qdq_matmul_nbits", "fc3.matmul", "nbits_weight");
    const fp_node *nb = node_named(q4->model, "fc0.matmul");
    CU_ASSERT_STRING_EQUAL(nb->op_type, "MatMulNBits");
    CU_ASSERT(fp_node_attr_int(nb, "K", 0) == 64 && fp_node_attr_int(nb, "N", 0) == 64);
    CU_ASSERT(fp_node_attr_int(nb, "bits", 0) == 4 && fp_node_attr_int(nb, "block_size", 0) == 32);
}

static void test_ge_ub_chain(void)
{
    /* Conv + 6 elementwise ops: over the UB limit of 5 */
    for (int n_ops = 2; n_ops <= 6; n_ops += 4) {
        tb *b = tb_new(13);
        tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
        tb_init(b, "w", F32, 4, (int64_t[]){8, 3, 3, 3});
        tb_node(b, "Conv", "conv", "x,w", "v0");
        for (int i = 0; i < n_ops; i++) {
            g_autofree char *in = g_strdup_printf("v%d", i), *out = g_strdup_printf("v%d", i + 1);
            g_autofree char *name = g_strdup_printf("op%d", i);
            tb_node(b, i % 2 ? "Sigmoid" : "Relu", name, in, out);
        }
        g_autofree char *last = g_strdup_printf("v%d", n_ops);
        tb_output(b, last, F32, -1, NULL);
        fp_fusion_list *l = fuse_tb(b, "ascend910b", NULL);
        expect(l, "ge_conv_ub", "conv", n_ops > 5 ? "max_chain" : NULL);
        list_free(l);
        tb_free(b);
    }
}

/* ---------------------------------------------------------------- the remaining constraints */

static void test_more_constraints(void)
{
    /* mask_unused: a Dropout whose mask is read stays */
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
    tb_node(b, "Dropout", "drop", "x", "d,mask");
    tb_node(b, "Relu", "r", "d", "y");
    tb_node(b, "Not", "n", "mask", "m2");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "m2", 9, -1, NULL);
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", NULL);
    expect(l, "dropout_elim", "drop", "mask_unused");
    list_free(l);
    tb_free(b);

    /* rank_is: SkipLayerNormalization takes [batch, sequence, hidden]; a 2-D residual is refused */
    b = tb_new(17);
    tb_input(b, "a", F32, 2, (int64_t[]){4, 8});
    tb_input(b, "c", F32, 2, (int64_t[]){4, 8});
    tb_init(b, "g", F32, 1, (int64_t[]){8});
    tb_init(b, "be", F32, 1, (int64_t[]){8});
    tb_node(b, "Add", "res", "a,c", "s");
    tb_node(b, "LayerNormalization", "ln", "s,g,be", "y");
    tb_output(b, "y", F32, -1, NULL);
    l = fuse_tb(b, "ort-cpu", NULL);
    expect(l, "skip_layer_norm", "res", "rank_is");
    list_free(l);
    tb_free(b);

    /* last_axis: a decomposed LayerNorm over axis 0 is not LayerNormalization over the last axis */
    b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
    tb_init_f32(b, "two", 0, (float[]){2.0f});
    tb_init_f32(b, "eps", 0, (float[]){1e-5f});
    tb_init(b, "gamma", F32, 1, (int64_t[]){8});
    tb_init(b, "beta", F32, 1, (int64_t[]){8});
    tb_node_t *m0 = tb_node(b, "ReduceMean", "mean", "x", "mu");
    tb_attr_ints(b, m0, "axes", 1, (int64_t[]){0});
    tb_node(b, "Sub", "sub", "x,mu", "d");
    tb_node(b, "Pow", "pow", "d,two", "d2");
    tb_node_t *m1 = tb_node(b, "ReduceMean", "var", "d2", "v");
    tb_attr_ints(b, m1, "axes", 1, (int64_t[]){0});
    tb_node(b, "Add", "addeps", "v,eps", "ve");
    tb_node(b, "Sqrt", "sqrt", "ve", "sd");
    tb_node(b, "Div", "div", "d,sd", "n");
    tb_node(b, "Mul", "mul", "n,gamma", "ng");
    tb_node(b, "Add", "add", "ng,beta", "y");
    tb_output(b, "y", F32, -1, NULL);
    l = fuse_tb(b, "ort-cpu", NULL);
    expect(l, "layer_norm", "mean", "+last_axis");
    list_free(l);
    tb_free(b);

    /* no_control_edges (GE): a control dependency pins the activation out of the UB kernel */
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(FP_SOURCE_DIR "/tests/data/fuse/ge_control_edge.txt", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){0}, NULL, &err));
    fp_pass_metrics(m, NULL);
    g_autoptr(fp_target) t = fp_target_load("ascend910b", &err);
    g_autoptr(fp_fusion_list) gl = fp_fusion_list_new();
    CU_ASSERT_FATAL(fp_pass_fuse(m, t, FP_FUSE_ALL, gl, NULL, &err));
    expect(gl, "ge_conv_ub", "conv", "no_control_edges");
}

/* A Div by a constant other than sqrt(2) before Erf is not a Gelu: no candidate (gating) */
static void test_gating(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
    tb_init_i64(b, "unused", 1, (int64_t[]){0});
    tb_init(b, "k", F32, 0, NULL); /* 0, not sqrt(2) */
    tb_init(b, "one", F32, 0, NULL);
    tb_init(b, "half", F32, 0, NULL);
    tb_node(b, "Div", "div", "x,k", "a");
    tb_node(b, "Erf", "erf", "a", "e");
    tb_node(b, "Add", "add", "e,one", "f");
    tb_node(b, "Mul", "mul", "x,f", "g");
    tb_node(b, "Mul", "mul_half", "g,half", "y");
    tb_output(b, "y", F32, -1, NULL);
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", NULL);
    CU_ASSERT_PTR_NULL(find(l, "gelu", NULL));
    list_free(l);
    tb_free(b);
}

/* ---------------------------------------------------------------- the table of constraints */

/* Adds to `names` the backticked names in the first column of the table rows (lines "| ...") of
 * docs/FILE that follow the line starting with `from`, up to the first line that is no table row
 * after the table began. */
static void doc_table_names(const char *file, const char *from, GPtrArray *names)
{
    g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "docs", file, NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    const char *at = strstr(text, from);
    CU_ASSERT_FATAL(at != NULL);
    g_auto(GStrv) lines = g_strsplit(at, "\n", -1);
    bool in_table = false;
    for (size_t i = 1; lines[i]; i++) {
        if (lines[i][0] != '|') {
            if (in_table)
                break;
            continue;
        }
        in_table = true;
        const char *end = strchr(lines[i] + 1, '|');
        g_autofree char *cell = g_strndup(lines[i] + 1, end ? (size_t)(end - lines[i] - 1) : strlen(lines[i] + 1));
        g_auto(GStrv) parts = g_strsplit(cell, "`", -1);
        for (size_t k = 1; parts[k] && parts[k + 1]; k += 2)
            g_ptr_array_add(names, g_strdup(parts[k]));
    }
}

/* The constraints come from one table (fuse_constraints.def): every constraint a rule uses is a row
 * of it, every row is used by a rule and named once, and the docs that list constraints name rows
 * of it only; docs/rules.md has a row for each. */
static void test_constraint_table(void)
{
    bool used[FP_CONSTRAINT_COUNT] = {false};
    for (size_t r = 0; r < fp_n_rules; r++)
        for (int k = 0; k < fp_rules[r].n_constraints; k++) {
            unsigned id = fp_rules[r].constraints[k].id;
            CU_ASSERT_FATAL(id < FP_CONSTRAINT_COUNT);
            used[id] = true;
        }
    for (int i = 0; i < FP_CONSTRAINT_COUNT; i++) {
        if (!used[i] || fp_fuse_constraint_find(fp_fuse_constraint_names[i]) != i)
            fprintf(stderr, "\n  constraint %s: unused by every rule, or named twice", fp_fuse_constraint_names[i]);
        CU_ASSERT(used[i]);
        CU_ASSERT_EQUAL(fp_fuse_constraint_find(fp_fuse_constraint_names[i]), i);
    }
    CU_ASSERT_EQUAL(fp_fuse_constraint_find("no_such_constraint"), -1);
    g_autoptr(GPtrArray) rules_md = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) guide = g_ptr_array_new_with_free_func(g_free);
    doc_table_names("rules.md", "## Constraints", rules_md);
    doc_table_names("user-guide.md", "| constraint | meaning |", guide);
    CU_ASSERT(guide->len > 0);
    bool documented[FP_CONSTRAINT_COUNT] = {false};
    for (guint i = 0; i < rules_md->len + guide->len; i++) {
        const char *name = i < rules_md->len ? rules_md->pdata[i] : guide->pdata[i - rules_md->len];
        int id = fp_fuse_constraint_find(name);
        if (id < 0)
            fprintf(stderr, "\n  docs name constraint '%s', which fuse_constraints.def has not", name);
        CU_ASSERT(id >= 0);
        if (id >= 0 && i < rules_md->len)
            documented[id] = true;
    }
    for (int i = 0; i < FP_CONSTRAINT_COUNT; i++) {
        if (!documented[i])
            fprintf(stderr, "\n  docs/rules.md has no row for constraint %s", fp_fuse_constraint_names[i]);
        CU_ASSERT(documented[i]);
    }
}

/* ---------------------------------------------------------------- targets */

static void test_targets(void)
{
    g_auto(GStrv) names = fp_target_list();
    const char *want[] = {"ascend310p", "ascend910b", "cuda", "ort-cpu"};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT(g_strv_contains((const char *const *)names, want[i]));
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_target) t = fp_target_load(want[i], &err);
        CU_ASSERT_PTR_NOT_NULL(t);
    }
    struct {
        const char *ini, *needle;
    } bad[] = {
        {"[target]\nname = x\nrules = conv_bn, nope\n", "no rule named 'nope'"},
        {"[target]\nname = x\nrules = conv_bn\n[rule.conv_bn]\nmax_epsilonn = 1\n",
         "unknown key 'max_epsilonn' (valid:"},
        {"[target]\nname = x\nrules = conv_bn\n[rule.conv_bn]\nmax_epsilon = big\n", "expected a number"},
        {"[target]\nrules = conv_bn\n", "needs keys 'name' and 'rules'"},
        {"[oops]\n", "needs keys"},
        {"[target]\nname = x\nrules = conv_bn\n[stages]\norig = x\n",
         "[stages]: unknown key 'orig' (valid: original, "},
        {"[target]\nname = x\nrules = conv_bn\n[layout]\nnchwc = maybe\n", "[layout] nchwc: expected true or false"},
        {"[target]\nname = x\nrules = conv_bn\n[staging]\n", "unknown group [staging] (valid: [target], [stages]"},
        {"[target]\nname = x\nrules = conv_bn\nbefore_partition = conv_bn, noop_elim\n",
         "[target] before_partition: 'noop_elim' is none of the target's rules"},
        {"[target]\nname = x\nrules = conv_bn, noop_elim\nbefore_partition = conv_bn\nagain_after_partition = noop_elim\n",
         "[target] again_after_partition: 'noop_elim' is none of before_partition's rules"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        tm_expect_target_error(bad[i].ini, bad[i].needle);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_PTR_NULL(fp_target_load("no-such-target", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "known: ascend310p"));
}

/* Every bundled target says what the report's stages mean on it; a target that does not gets the
 * generic meanings, and one that says only some keeps the rest generic. */
static void test_target_stages(void)
{
    g_auto(GStrv) names = fp_target_list();
    for (char **n = names; *n; n++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_target) t = fp_target_load(*n, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT(g_key_file_has_group(t->keyfile, "stages"));
        for (int i = 0; i < 3; i++)
            CU_ASSERT(t->stage_meaning[i] && *t->stage_meaning[i]);
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) all = fp_target_load("ort-cpu-all", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_PTR_NOT_NULL(strstr(all->stage_meaning[0], "ORT_DISABLE_ALL"));
    CU_ASSERT_PTR_NOT_NULL(strstr(all->stage_meaning[2], "NCHWc"));
    const char *ini = "[target]\nname = x\nrules = conv_bn\n[stages]\nfinal = the engine\n";
    g_autofree char *path = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(fp_target) t = fp_target_load(path, &err);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t->stage_meaning[0], "the graph as exported, each op its own kernel");
    CU_ASSERT_STRING_EQUAL(t->stage_meaning[1], "the target's fusion rules applied");
    CU_ASSERT_STRING_EQUAL(t->stage_meaning[2], "the engine");
}

/* ---------------------------------------------------------------- use lists and order after fusion */

/* The sample models on every target: the lists and orders the pass keeps are a relink's. */
static void test_links_models(void)
{
    const char *models[] = {"branchy",       "eps_story",   "eps_story_tap",    "if_subgraph",
                            "inception_bfs", "resnet_tiny", "transformer_block"};
    const char *targets[] = {"ort-cpu", "cuda", "ascend910b", "ascend310p"};
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        for (size_t k = 0; k < G_N_ELEMENTS(targets); k++) {
            g_autoptr(GError) err = NULL;
            g_autofree char *path = g_strdup_printf(FP_SOURCE_DIR "/models/%s.onnx", models[i]);
            g_autoptr(fp_model) m = fp_load_model(path, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(m);
            CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){.batch = 1}, NULL, &err));
            fp_pass_metrics(m, NULL);
            g_autoptr(fp_target) t = fp_target_load(targets[k], &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(t);
            g_autoptr(fp_fusion_list) l = fp_fusion_list_new();
            CU_ASSERT_FATAL(fp_pass_fuse(m, t, FP_FUSE_ALL, l, NULL, &err));
            check_links(m);
        }
    }
}

/* A fused kernel that reads a value made after its anchor in the file: the node array is no
 * longer in order, and the order is made again (the Gemm after the Relu it reads). And a file
 * whose node array was never in order. */
static void test_links_order(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){2, 4});
    tb_input(b, "b", F32, 1, (int64_t[]){8});
    tb_init(b, "w", F32, 2, (int64_t[]){4, 8});
    tb_node(b, "MatMul", "mm", "x,w", "a");
    tb_node(b, "Relu", "bias", "b", "rb");
    tb_node(b, "Add", "add", "a,rb", "s");
    tb_node(b, "Sigmoid", "act", "s", "y");
    tb_output(b, "y", F32, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "matmul_add_gemm", "mm", NULL);
    expect(l, "gemm_activation", "mm", NULL);
    uint32_t n = 0;
    fp_node *const *order = fp_graph_order(m->main, &n, NULL);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(order[0]->name, "bias");
    CU_ASSERT_STRING_EQUAL(order[1]->op_type, "FusedGemm");
    list_free(l);
    fp_model_free(m);
    tb_free(b);

    /* a file not in topological order: the sweeps walk the order made by Kahn's algorithm */
    b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 3, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){8, 3, 3, 3});
    tb_node(b, "Identity", "id", "r", "y");
    tb_node(b, "Relu", "relu", "c", "r");
    tb_node(b, "Conv", "conv", "x,w", "c");
    tb_output(b, "y", F32, -1, NULL);
    tb_output(b, "r", F32, -1, NULL); /* the Identity of a graph output stays */
    l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "identity_elim", "id", "not_graph_output");
    expect(l, "identity_output_elim", "id", "identity_output");
    expect(l, "conv_activation", "conv", NULL);
    order = fp_graph_order(m->main, &n, NULL);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(order[0]->op_type, "FusedConv");
    CU_ASSERT_STRING_EQUAL(order[1]->name, "id");
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

/* An Identity read by more consumers than the pass rewires in place (the lists are relinked), one
 * read by a few, and one whose output a subgraph reads (an implicit use of the If). */
static void test_links_elim(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_input(b, "cond", 9, 0, NULL);
    tb_node(b, "Identity", "wide", "x", "xw");
    tb_node(b, "Identity", "narrow", "x", "xn");
    GString *cat = g_string_new(NULL);
    for (int i = 0; i < 40; i++) {
        g_autofree char *name = g_strdup_printf("r%d", i), *out = g_strdup_printf("o%d", i);
        tb_node(b, i % 2 ? "Relu" : "Neg", name, i < 3 ? "xn" : "xw", out);
        g_string_append_printf(cat, "%s%s", i ? "," : "", out);
    }
    tb_node_t *c = tb_node(b, "Concat", "cat", cat->str, "y");
    tb_attr_i(b, c, "axis", 0);
    g_string_free(cat, TRUE);
    tb_output(b, "y", F32, -1, NULL);
    tb_node(b, "Identity", "into_if", "x", "xi");
    tb_node_t *iff = tb_node(b, "If", "branch", "cond", "z");
    tb_output(b, "z", F32, 1, (int64_t[]){4});
    tb *then_b = tb_new(13), *else_b = tb_new(13);
    tb_node(then_b, "Neg", "neg", "xi", "t_out");
    tb_output(then_b, "t_out", F32, 1, (int64_t[]){4});
    tb_node(else_b, "Abs", "abs", "xi", "e0");
    tb_node(else_b, "Identity", "inner", "e0", "e1");
    tb_node(else_b, "Relu", "relu", "e1", "e_out");
    tb_output(else_b, "e_out", F32, 1, (int64_t[]){4});
    tb_attr_graph(b, iff, "then_branch", then_b);
    tb_attr_graph(b, iff, "else_branch", else_b);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "identity_elim", "wide", NULL);
    expect(l, "identity_elim", "narrow", NULL);
    expect(l, "identity_elim", "into_if", NULL);
    expect(l, "identity_elim", "inner", NULL);
    fp_value *x = fp_graph_find(m->main, "x");
    CU_ASSERT_EQUAL(x->n_uses, 41 + 2); /* the 40 consumers, the Neg inside and the If (implicit) */
    list_free(l);
    fp_model_free(m);
    tb_free(b);
    tb_free(then_b);
    tb_free(else_b);
}

/* ---------------------------------------------------------------- golden explain outputs */

static void test_golden_explain(void)
{
    tu_golden((const char *[]){"explain", "models/eps_story.onnx", "--target", "ascend910b", NULL},
              "explain_eps_story_ascend910b.txt");
    tu_golden((const char *[]){"explain", "models/eps_story.onnx", "--target", "ascend910b", "-f", "json", NULL},
              "explain_eps_story_ascend910b.json");
    tu_golden((const char *[]){"explain", "models/transformer_block.onnx", NULL},
              "explain_transformer_block_ort-cpu.txt");
    tu_golden((const char *[]){"explain", "models/transformer_block.onnx", "-f", "json", NULL},
              "explain_transformer_block_ort-cpu.json");
    tu_golden((const char *[]){"explain", "models/resnet_tiny.onnx", "--target", "cuda", "--rule", "conv_activation",
                               NULL},
              "explain_resnet_tiny_cuda_conv_activation.txt");
    /* a decoder: RMSNorm, the rotary Splits, K^T and the scale into FusedMatMul, the refused Gemms */
    tu_golden((const char *[]){"explain", "models/decoder_tiny.onnx", NULL}, "explain_decoder_tiny_ort-cpu.txt");
    tu_golden((const char *[]){"explain", "models/decoder_tiny.onnx", "-f", "json", NULL},
              "explain_decoder_tiny_ort-cpu.json");
}

/* TensorRT's documented fusions (target tensorrt): each fires, and each refuses for its reason. */
static void mha_model(tb *b, int dt, int64_t head, bool scale_after)
{
    tb_input(b, "q", dt, 4, (int64_t[]){1, 4, 8, head});
    tb_input(b, "kt", dt, 4, (int64_t[]){1, 4, head, 8});
    tb_input(b, "v", dt, 4, (int64_t[]){1, 4, 8, head});
    tb_node(b, "MatMul", "bmm1", "q,kt", "s");
    if (scale_after) {
        tb_init_f32(b, "scale", 1, (float[]){4.0f});
        tb_node(b, "Div", "scale_div", "s,scale", "s2");
    }
    tb_node_t *sm = tb_node(b, "Softmax", "softmax", scale_after ? "s2" : "s", "p");
    tb_attr_i(b, sm, "axis", -1);
    tb_node(b, "MatMul", "bmm2", "p,v", "y");
    tb_output(b, "y", dt, -1, NULL);
}

/* ORT's rules on the forms of real PyTorch exports: a scalar Div on a MatMul input into
 * FusedMatMul's alpha (the Div stays while something else reads it), RMSNorm as x * (1 / Sqrt(...))
 * * scale (DivMulFusion at level 1 makes it the form SimplifiedLayerNormFusion takes), Slice ends
 * of INT64_MAX (as torch writes x[..., 16:]) for GatherSliceToSplitFusion, DivMulFusion itself. */
/* q / 4 -> MatMul(., kt) -> y; `shared`: a Relu reads q / 4 too; `out`: q / 4 is a graph output. */
static tb *scaled_matmul(bool shared, bool out)
{
    tb *b = tb_new(13);
    tb_input(b, "q", F32, 3, (int64_t[]){4, 8, 16});
    tb_input(b, "kt", F32, 3, (int64_t[]){4, 16, 8});
    tb_init_f32(b, "c", 1, (float[]){4.0f});
    tb_node(b, "Div", "scale", "q,c", "qs");
    tb_node(b, "MatMul", "mm", "qs,kt", "y");
    tb_output(b, "y", F32, -1, NULL);
    if (shared) {
        tb_node(b, "Relu", "other", "qs", "z");
        tb_output(b, "z", F32, -1, NULL);
    }
    if (out)
        tb_output(b, "qs", F32, -1, NULL);
    return b;
}

static void test_torch_forms(void)
{
    for (int shared = 0; shared < 2; shared++) {
        tb *b = scaled_matmul(shared, false);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "ort-cpu-extended", &m);
        const fp_node *mm = node_named(m, "mm");
        CU_ASSERT_STRING_EQUAL(mm->op_type, "FusedMatMul");
        CU_ASSERT_DOUBLE_EQUAL(fp_node_attr_float(mm, "alpha", 1), 0.25, 1e-9);
        CU_ASSERT_STRING_EQUAL(mm->inputs[0]->name, "q");
        CU_ASSERT_EQUAL((node_named(m, "scale")->flags & FP_NODE_REMOVED) != 0, !shared);
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
    tb *b = scaled_matmul(false, true); /* the scale a graph output: refused */
    fp_fusion_list *l = fuse_tb(b, "ort-cpu-extended", NULL);
    expect(l, "matmul_scale", "scale", "not_graph_output");
    list_free(l);
    tb_free(b);
    /* RMSNorm, torch.rsqrt's form: fires; a 2-D scale refuses */
    for (int bad = 0; bad < 2; bad++) {
        b = tb_new(13);
        tb_input(b, "x", F32, 3, (int64_t[]){1, 4, 8});
        tb_init_f32(b, "two", 1, (float[]){2.0f});
        tb_init_f32(b, "eps", 1, (float[]){1e-6f});
        tb_init_f32(b, "one", 1, (float[]){1.0f});
        tb_init(b, "w", F32, bad ? 2 : 1, bad ? (int64_t[]){1, 8} : (int64_t[]){8});
        tb_node(b, "Pow", "pow", "x,two", "p");
        tb_node_t *rm = tb_node(b, "ReduceMean", "mean", "p", "m");
        tb_attr_ints(b, rm, "axes", 1, (int64_t[]){-1});
        tb_node(b, "Add", "add_eps", "m,eps", "a");
        tb_node(b, "Sqrt", "sqrt", "a", "s");
        tb_node(b, "Div", "recip", "one,s", "r");
        tb_node(b, "Mul", "mul_x", "x,r", "n");
        tb_node(b, "Mul", "mul_w", "n,w", "y");
        tb_output(b, "y", F32, -1, NULL);
        fp_model *m = NULL;
        l = fuse_tb(b, "ort-cpu-extended", &m);
        expect(l, "simplified_layer_norm", "pow", bad ? "const_1d" : NULL);
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "SimplifiedLayerNormalization"), bad ? 0 : 1);
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
    slice_split((split_case){{{0, 4}, {4, INT64_MAX}}, 2}, NULL); /* torch's x[..., 4:] */
    /* DivMulFusion: 1 / x1 * x2 -> x2 / x1; not when 1 / x1 has another reader */
    for (int shared = 0; shared < 2; shared++) {
        b = tb_new(13);
        tb_input(b, "x1", F32, 2, (int64_t[]){2, 4});
        tb_input(b, "x2", F32, 2, (int64_t[]){2, 4});
        tb_init_f32(b, "one", 1, (float[]){1.0f});
        tb_node(b, "Div", "recip", "one,x1", "r");
        tb_node(b, "Mul", "mul", "x2,r", "y");
        tb_output(b, "y", F32, -1, NULL);
        if (shared) {
            tb_node(b, "Relu", "other", "r", "z");
            tb_output(b, "z", F32, -1, NULL);
        }
        fp_model *m = NULL;
        l = fuse_tb(b, "ort-cpu-basic", &m);
        expect(l, "div_mul", "recip", shared ? "single_consumer" : NULL);
        const fp_node *div = node_named(m, "recip");
        if (!shared) { /* the Div stays, as ORT's FinalizeNodeFusion keeps it: x2 / x1 writes y */
            CU_ASSERT_STRING_EQUAL(div->op_type, "Div");
            CU_ASSERT_STRING_EQUAL(div->inputs[0]->name, "x2");
            CU_ASSERT_STRING_EQUAL(div->inputs[1]->name, "x1");
            CU_ASSERT_STRING_EQUAL(div->outputs[0]->name, "y");
            CU_ASSERT(node_named(m, "mul")->flags & FP_NODE_REMOVED);
        }
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
}

static void test_tensorrt_rules(void)
{
    static const struct {
        int dt;
        int64_t head;
        bool scale_after;
        const char *refused; /* NULL: applied */
    } mha[] = {
        {F16, 16, false, NULL},        {F16, 12, false, "head_dim"},         {F16, 264, false, "head_dim"},
        {F32, 16, false, "+dtype_in"}, {F16, 16, true, "scale_before_bmm1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(mha); i++) {
        tb *b = tb_new(13);
        mha_model(b, mha[i].dt, mha[i].head, mha[i].scale_after);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "tensorrt", &m);
        expect(l, "trt_mha", "bmm1", mha[i].refused);
        CU_ASSERT_EQUAL(tm_count_ops(m->main, "FusedMHA"), mha[i].refused ? 0 : 1);
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
    /* Conv + residual Add (+ ReLU): one kernel; a broadcast Add refused; GELU only in float16 */
    for (int k = 0; k < 4; k++) {
        tb *b = tb_new(13);
        int dt = k == 3 ? F16 : F32;
        tb_input(b, "x", dt, 4, (int64_t[]){1, 8, 4, 4});
        tb_input(b, "r", dt, 4, k == 1 ? (int64_t[]){1, 8, 1, 1} : (int64_t[]){1, 8, 4, 4});
        tb_init(b, "w", dt, 4, (int64_t[]){8, 8, 3, 3});
        tb_node_t *c = tb_node(b, "Conv", "conv", "x,w", "c");
        tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
        tb_node(b, k >= 2 ? "Gelu" : "Add", "next", k >= 2 ? "c" : "c,r", "a");
        if (k < 2)
            tb_node(b, "Relu", "relu", "a", "y");
        tb_output(b, k < 2 ? "y" : "a", dt, -1, NULL);
        fp_model *m = NULL;
        fp_fusion_list *l = fuse_tb(b, "tensorrt", &m);
        if (k == 0) {
            expect(l, "trt_conv_eltwise", "conv", NULL);
            expect(l, "trt_conv_act", "conv", NULL);
            CU_ASSERT_EQUAL(tm_count_ops(m->main, "FusedConv"), 1);
            CU_ASSERT_EQUAL(tm_count_ops(m->main, "Relu") + tm_count_ops(m->main, "Add"), 0);
        } else if (k == 1) {
            expect(l, "trt_conv_eltwise", "conv", "no_broadcast");
        } else {
            expect(l, "trt_conv_act", "conv", k == 2 ? "dtype_in" : NULL);
        }
        list_free(l);
        fp_model_free(m);
        tb_free(b);
    }
    /* adjacent pointwise layers: one kernel; a Cast ends the run */
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 8});
    tb_node(b, "Sigmoid", "sig", "x", "a");
    tb_node(b, "Mul", "mul", "a,x", "m1");
    tb_node(b, "Tanh", "tanh", "m1", "t");
    tb_node_t *cast = tb_node(b, "Cast", "cast", "t", "y");
    tb_attr_i(b, cast, "to", F16);
    tb_output(b, "y", F16, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "tensorrt", &m);
    expect(l, "trt_pointwise", "sig", NULL);
    CU_ASSERT_EQUAL(tm_count_ops(m->main, "PointWise"), 1);
    CU_ASSERT_EQUAL(tm_count_ops(m->main, "Cast"), 1);
    list_free(l);
    fp_model_free(m);
    tb_free(b);
}

/* torch writes a projection's bias Add as Add(bias, x): the fused SkipLayerNormalization still reads
 * (input, skip, gamma, beta, bias) as ONNX Runtime makes it, so that inferring the fused graph again
 * at another batch (the headroom search does) gives its output the input's shape. */
static void test_skip_layer_norm_inputs(void)
{
    tb *b = tb_new(17);
    tb_input(b, "x", F32, 3, (int64_t[]){-1, 4, 8});
    tb_init(b, "w", F32, 2, (int64_t[]){8, 8});
    tb_init(b, "bias", F32, 1, (int64_t[]){8});
    tb_init(b, "g", F32, 1, (int64_t[]){8});
    tb_init(b, "be", F32, 1, (int64_t[]){8});
    tb_node(b, "MatMul", "mm", "x,w", "h");
    tb_node(b, "Add", "badd", "bias,h", "hb");
    tb_node(b, "Add", "res", "hb,x", "s");
    tb_node(b, "LayerNormalization", "ln", "s,g,be", "y");
    tb_output(b, "y", F32, -1, NULL);
    fp_model *m = NULL;
    fp_fusion_list *l = fuse_tb(b, "ort-cpu", &m);
    expect(l, "skip_layer_norm", "badd", NULL);
    const fp_node *n = fp_node_lookup(m, "badd");
    CU_ASSERT_FATAL(n && n->op == FP_OP_SKIP_LAYER_NORM && n->n_inputs == 5);
    CU_ASSERT_STRING_EQUAL(n->inputs[0]->name, "h");
    CU_ASSERT_STRING_EQUAL(n->inputs[1]->name, "x");
    CU_ASSERT_STRING_EQUAL(n->inputs[2]->name, "g");
    CU_ASSERT_STRING_EQUAL(n->inputs[4]->name, "bias");
    g_autoptr(GError) err = NULL;
    fp_shape_opts at3 = {.batch = 3};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at3, NULL, &err));
    g_autofree char *dims = fp_shape_to_string(&n->outputs[0]->shape);
    CU_ASSERT_STRING_EQUAL(dims, "3x4x8");
    fp_fusion_list_free(l);
    fp_model_free(m);
    tb_free(b);
}

/* ---------------------------------------------------------------- Hugging Face-like decoders */

/* Tiny Llama-style decoders of bench/gen_hf_decoders.py --tiny, each as exported and as a static
 * copy at one decode step, and ONNX Runtime 1.30's kernel histogram of each static copy at levels
 * basic, extended and all (bench/hf_decoders_vs_ort.py --expected wrote them). */
#define HF_DIR FP_SOURCE_DIR "/tests/data/fuse/hf_decoders/"

static const char *const hf_writings[] = {"hf_mha_rsqrt_add_silu_plain", "hf_gqa_cast_2d_silu_hf",
                                          "hf_mha_div_bool_sig_plain", "hf_gqa_xx_bool_silu_plain"};

static int cmp_op(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The kernel histogram of the graph a's pipeline left, views aside (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity: bench/fusion_vs_ort.py's VIEWS), as lines "OP COUNT" sorted by op. */
static char *final_histogram(const fp_analysis *a)
{
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    g_autoptr(GHashTable) count = g_hash_table_new(g_str_hash, g_str_equal);
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const char *op = a->res.cost->ops[i].node->op_type;
        bool view = false;
        for (size_t k = 0; k < G_N_ELEMENTS(views); k++)
            view |= strcmp(op, views[k]) == 0;
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(count, op));
        if (!view)
            g_hash_table_insert(count, (gpointer)op, GUINT_TO_POINTER(n + 1));
    }
    guint n_ops = 0;
    g_autofree gpointer *ops = g_hash_table_get_keys_as_array(count, &n_ops);
    qsort(ops, n_ops, sizeof *ops, cmp_op);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n_ops; i++)
        g_string_append_printf(s, "%s %u\n", (const char *)ops[i],
                               GPOINTER_TO_UINT(g_hash_table_lookup(count, ops[i])));
    return g_string_free(s, FALSE);
}

/* Histogram text h without the line of op `op` (NULL: h as it is); a new string. */
static char *without_op(const char *h, const char *op)
{
    g_auto(GStrv) lines = g_strsplit(h, "\n", -1);
    GString *s = g_string_new(NULL);
    for (char **l = lines; *l && **l; l++)
        if (!op || !g_str_has_prefix(*l, op) || (*l)[strlen(op)] != ' ')
            g_string_append_printf(s, "%s\n", *l);
    return g_string_free(s, FALSE);
}

/* fuseplan's final graph of HF_DIR/name.onnx on ort-cpu-<level> against ORT's histogram in
 * HF_DIR/name.<level>.txt, the lines of op `skip` (NULL: none) left out of both. */
static void hf_check(const char *name, const char *level, const char *skip)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *model = g_strdup_printf(HF_DIR "%s.onnx", name);
    g_autofree char *want_path = g_strdup_printf(HF_DIR "%s.%s.txt", name, level);
    g_autofree char *target = g_strdup_printf("ort-cpu-%s", level);
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(want_path, &text, NULL, &err));
    fp_analysis_opts o = {.target = target};
    g_autoptr(fp_analysis) a = fp_analysis_run(model, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    g_autofree char *hist = final_histogram(a);
    g_autofree char *got = without_op(hist, skip), *want = without_op(text, skip);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "\n  %s at %s: ORT 1.30 runs\n%sfuseplan predicts\n%s", name, level, want, got);
    CU_ASSERT_STRING_EQUAL(got, want);
}

/* Every writing at every level, fuseplan's final graph against ONNX Runtime's kernels (the RMSNorms
 * SimplifiedLayerNormalization but x * x ones, q @ k^T / sqrt(d) one FusedMatMul, no Attention,
 * QuickGelu, the rotary halves Splits, the no-op Casts and Expands gone): the static copies whole;
 * as exported too, the shape computations over symbolic dims included (the duplicates merged, the
 * head Transposes pushed through Shape and Slice, the Concat ORT's ReshapeFusion makes a constant
 * while the Shape computation it read stays for another Reshape). */
static void test_hf_decoders_vs_ort(void)
{
    const char *levels[] = {"basic", "extended", "all"};
    for (size_t i = 0; i < G_N_ELEMENTS(hf_writings); i++) {
        g_autofree char *fixed = g_strdup_printf("%s_static", hf_writings[i]);
        for (size_t k = 0; k < G_N_ELEMENTS(levels); k++) {
            hf_check(fixed, levels[k], NULL);
            hf_check(hf_writings[i], levels[k], NULL);
        }
    }
}

/* Of rule's candidates in l: how many were applied, and how many refused by `constraint` alone. */
static void rule_tally(const fp_fusion_list *l, const char *rule, const char *constraint, int *applied, int *refused)
{
    *applied = *refused = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *f = l->fusions->pdata[i];
        if (strcmp(f->rule, rule) != 0)
            continue;
        *applied += f->applied;
        *refused += !f->applied && f->reasons->len == 1 &&
                    strcmp(((const fp_reason *)f->reasons->pdata[0])->constraint, constraint) == 0;
    }
}

/* The decoders as exported, every symbolic dim bound: each additive-mask attention is a candidate
 * that qkv_from_layer_norm refuses (ORT's AttentionFusion starts only below a LayerNormalization
 * with a bias), every RMSNorm fuses, and the GQA's repeat_kv (Unsqueeze, Expand, Reshape of sizes
 * computed by Shape, Gather, Concat) leaves no value of unknown size. */
static void test_hf_decoders_exported(void)
{
    char *dims[] = {"batch_size=1", "sequence_length=1", "past_sequence_length=127", "total_sequence_length=128", NULL};
    const int layers = 1, norms = 2 * layers + 1;
    for (size_t i = 0; i < 2; i++) {
        g_autoptr(GError) err = NULL;
        g_autofree char *model = g_strdup_printf(HF_DIR "%s.onnx", hf_writings[i]);
        fp_analysis_opts o = {.target = "ort-cpu-extended", .dims = dims};
        g_autoptr(fp_analysis) a = fp_analysis_run(model, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->res.unknown_values, 0);
        int applied, refused;
        rule_tally(a->res.fusions, "attention", "qkv_from_layer_norm", &applied, &refused);
        CU_ASSERT_EQUAL(applied, 0);
        CU_ASSERT_EQUAL(refused, layers);
        rule_tally(a->res.fusions, "simplified_layer_norm", "-", &applied, &refused);
        CU_ASSERT_EQUAL(applied, norms);
        rule_tally(a->res.fusions, "matmul_scale", "-", &applied, &refused);
        CU_ASSERT_EQUAL(applied, layers);
    }
}

FP_TEST_SUITE(register_fuse)
{
    CU_pSuite s = CU_add_suite("fuse", NULL, NULL);
    CU_add_test(s, "conv_bn", test_conv_bn);
    CU_add_test(s, "min_epsilon", test_min_epsilon);
    CU_add_test(s, "conv_transpose_bn", test_conv_transpose_bn);
    CU_add_test(s, "conv_mul_add", test_conv_mul_add);
    CU_add_test(s, "matmul_add_gemm", test_matmul_add_gemm);
    CU_add_test(s, "conv_activation", test_conv_activation);
    CU_add_test(s, "gemm_activation", test_gemm_activation);
    CU_add_test(s, "transformer_rules", test_transformer_rules);
    CU_add_test(s, "simplified_layer_norm", test_simplified_layer_norm);
    CU_add_test(s, "matmul_transpose", test_matmul_transpose);
    CU_add_test(s, "slice_split", test_slice_split);
    CU_add_test(s, "gather_split", test_gather_split);
    CU_add_test(s, "pad_fusion", test_pad_fusion);
    CU_add_test(s, "ge_transformer_rules", test_ge_transformer_rules);
    CU_add_test(s, "ge_softmax_small_op", test_ge_softmax_small_op);
    CU_add_test(s, "ge_rope_gap", test_ge_rope_gap);
    CU_add_test(s, "tensorrt_rules", test_tensorrt_rules);
    CU_add_test(s, "torch_forms", test_torch_forms);
    CU_add_test(s, "quick_gelu_and_elim", test_quick_gelu_and_elim);
    CU_add_test(s, "identity_output_elim", test_identity_output_elim);
    CU_add_test(s, "quick_gelu_alpha", test_quick_gelu_alpha);
    CU_add_test(s, "noop_elim", test_noop_elim);
    CU_add_test(s, "paddle_like_ort", test_paddle_like_ort);
    CU_add_test(s, "difftest_vs_ort", test_difftest_vs_ort);
    CU_add_test(s, "ort_shapes", test_ort_shapes);
    CU_add_test(s, "corpus_cases", test_corpus_cases);
    CU_add_test(s, "corpus_nodes", test_corpus_nodes);
    CU_add_test(s, "nchwc_cases", test_nchwc_cases);
    CU_add_test(s, "transpose_cases", test_transpose_cases);
    CU_add_test(s, "float16_cases", test_float16_cases);
    CU_add_test(s, "qdq_vs_ort", test_qdq_vs_ort);
    CU_add_test(s, "nhwc_names", test_nhwc_names);
    CU_add_test(s, "qdq_units", test_qdq_units);
    CU_add_test(s, "qdq_third_vs_ort", test_qdq_third_vs_ort);
    CU_add_test(s, "ge_ub_chain", test_ge_ub_chain);
    CU_add_test(s, "more_constraints", test_more_constraints);
    CU_add_test(s, "gating", test_gating);
    CU_add_test(s, "constraint_table", test_constraint_table);
    CU_add_test(s, "skip_layer_norm_inputs", test_skip_layer_norm_inputs);
    CU_add_test(s, "hf_decoders_vs_ort", test_hf_decoders_vs_ort);
    CU_add_test(s, "hf_decoders_exported", test_hf_decoders_exported);
    CU_add_test(s, "targets", test_targets);
    CU_add_test(s, "target_stages", test_target_stages);
    CU_add_test(s, "links_models", test_links_models);
    CU_add_test(s, "links_order", test_links_order);
    CU_add_test(s, "links_elim", test_links_elim);
    CU_add_test(s, "golden_explain", test_golden_explain);
}
