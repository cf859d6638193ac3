/* test_denormal.c - denormal attention weights (passes/denormal.c): the exp() band, the share a
 * mask makes, masks held as initializers and masks built in the graph past the shape pass's fold
 * limit (fp_shape_evaluate, ScatterND), the warning, and the cost model's denormal_factor. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "devices/device.h"
#include "frontends/load.h"
#include "passes/metrics.h"
#include "passes/cost.h"
#include "passes/denormal.h"
#include "passes/shape/shapes.h"
#include "reports/report.h"
#include "tutil.h"

enum { F32 = 1, BOOL = 9, I64 = 7 };

static void test_exp_band(void)
{
    CU_ASSERT(fp_denormal_exp(-100));
    CU_ASSERT(fp_denormal_exp(-88));
    CU_ASSERT(fp_denormal_exp(-103));
    CU_ASSERT_FALSE(fp_denormal_exp(-87));  /* 1.6e-38: normal */
    CU_ASSERT_FALSE(fp_denormal_exp(-105)); /* underflows to 0 */
    CU_ASSERT_FALSE(fp_denormal_exp(-1e4));
    CU_ASSERT_FALSE(fp_denormal_exp(-INFINITY));
    CU_ASSERT_FALSE(fp_denormal_exp(0));
}

/* Per row, against the row's largest entry: a row masked throughout has none (Softmax is shift
 * invariant), a row masked by -1e4 none (0 is no denormal). */
static void test_fraction(void)
{
    const float mixed[] = {0, 0, -100, -100, 0, -100, -100, -100};
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(mixed, 8, 4), 5.0 / 8, 1e-12);
    const float all[] = {-100, -100, -100, -100};
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(all, 4, 4), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(all, 4, 1), 0, 0);
    const float shifted[] = {5, 5, -95, -200};
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(shifted, 4, 4), 0.25, 1e-12);
    const float large[] = {0, -1e4, 0, -INFINITY};
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(large, 4, 4), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(mixed, 8, 3), -1, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_denormal_fraction(mixed, 8, 0), -1, 0);
}

/* logits [2, n, n] + mask -> Softmax -> Reshape (a view) -> MatMul by v [2, n, 3]. */
static void attention(tb *b, int64_t n, const char *mask)
{
    tb_input(b, "q", F32, 3, (int64_t[]){2, n, n});
    tb_input(b, "v", F32, 3, (int64_t[]){2, n, 3});
    tb_init_i64(b, "same", 3, (int64_t[]){2, n, n});
    tb_node(b, "Add", "add", mask ? "q,mask" : "q,q", "x");
    tb_node(b, "Softmax", "softmax", "x", "p");
    tb_node(b, "Reshape", "view", "p,same", "pv");
    tb_node(b, "MatMul", "pv_matmul", "pv,v", "y");
    tb_output(b, "y", F32, -1, NULL);
}

/* b with attention() over n rows of its "mask", loaded (b freed). */
static fp_model *with_attention(tb *b, int64_t n)
{
    attention(b, n, "mask");
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

/* The 4 x 4 mask of 16 floats, an initializer reshaped (a view), under attention(). */
static fp_model *reshaped_mask(const float *mask)
{
    tb *b = tb_new(17);
    tb_init_f32(b, "mask_flat", 16, mask);
    tb_init_i64(b, "square", 2, (int64_t[]){4, 4});
    tb_node(b, "Reshape", "mask_view", "mask_flat,square", "mask");
    return with_attention(b, 4);
}

/* The pass on m: its warnings' count; *share the Softmax output's share. */
static guint run(fp_model *m, fp_diag *d, double *share)
{
    fp_pass_denormal(m, d);
    *share = fp_value_denormal(fp_node_lookup(m, "softmax")->outputs[0]);
    return fp_diag_count(d, FP_DIAG_WARNING);
}

/* A mask held as an initializer: the share on the Softmax's output and its view, the warning
 * naming the Softmax and the product; -1e4 as the masked value: none. */
static void test_initializer_mask(void)
{
    static const float masks[2][16] = {
        {0, -100, -100, -100, 0, 0, -100, -100, 0, 0, 0, -100, 0, 0, 0, 0},
        {0, -1e4, -1e4, -1e4, 0, 0, -1e4, -1e4, 0, 0, 0, -1e4, 0, 0, 0, 0},
    };
    for (int k = 0; k < 2; k++) {
        g_autoptr(fp_model) m = reshaped_mask(masks[k]);
        g_autoptr(fp_diag) d = fp_diag_new();
        double share;
        CU_ASSERT_EQUAL(run(m, d, &share), k == 0 ? 1 : 0);
        CU_ASSERT_DOUBLE_EQUAL(share, k == 0 ? 6.0 / 16 : 0, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(fp_value_denormal(fp_node_lookup(m, "pv_matmul")->inputs[0]), share, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(fp_denormal_share(fp_node_lookup(m, "pv_matmul")), share, 1e-6);
        const fp_diag_entry *e = fp_diag_find(d, "denormal-softmax");
        if (k == 1) {
            CU_ASSERT_PTR_NULL(e);
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        CU_ASSERT_STRING_EQUAL(e->node, "softmax");
        CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "holds -100"));
        CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "37.5% of its weights are denormal"));
        CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "'pv_matmul' multiplies them"));
        /* a second run finds the same, the shares cleared first */
        g_autoptr(fp_diag) again = fp_diag_new();
        CU_ASSERT_EQUAL(run(m, again, &share), 1);
        CU_ASSERT_DOUBLE_EQUAL(share, 6.0 / 16, 1e-6);
    }
}

/* A mask built in the graph as torchvision's Swin builds its own, of 48 x 48 = 2304 elements
 * (past the shape pass's fold limit): regions scattered into zeros (ScatterND), transposed, and
 * -100 where a region differs: columns 24-47 masked in every row, a share of 0.5. The model keeps
 * no fold of it after. */
static void test_graph_mask(void)
{
    tb *b = tb_new(17);
    tb_init_i64(b, "dims", 2, (int64_t[]){48, 48});
    int64_t rows[24];
    for (int i = 0; i < 24; i++)
        rows[i] = i;
    tb_init_i64(b, "rows_flat", 24, rows);
    tb_init_i64(b, "rows_shape", 2, (int64_t[]){24, 1});
    tb_node(b, "Reshape", "rows_view", "rows_flat,rows_shape", "rows");
    tb_init_f32(b, "one", 0, (float[]){1});
    tb_init_i64(b, "upd_shape", 2, (int64_t[]){24, 48});
    tb_node(b, "Expand", "ones", "one,upd_shape", "updates");
    tb_node(b, "ConstantOfShape", "zeros", "dims", "zero");
    tb_node(b, "ScatterND", "regions", "zero,rows,updates", "region_rows");
    tb_attr_ints(b, tb_node(b, "Transpose", "cols", "region_rows", "region"), "perm", 2, (int64_t[]){1, 0});
    tb_init_f32(b, "zero_f", 0, (float[]){0});
    tb_init_f32(b, "minus", 0, (float[]){-100});
    tb_node(b, "Equal", "same_region", "region,one", "cond");
    tb_node(b, "Where", "masked", "cond,zero_f,minus", "mask");
    g_autoptr(fp_model) m = with_attention(b, 48);
    const fp_value *mask = fp_node_lookup(m, "masked")->outputs[0];
    CU_ASSERT_PTR_NULL(fp_value_fold(mask)); /* the shape pass folds no tensor that large */
    g_autoptr(fp_diag) d = fp_diag_new();
    double share;
    CU_ASSERT_EQUAL(run(m, d, &share), 1);
    CU_ASSERT_DOUBLE_EQUAL(share, 0.5, 1e-6);
    CU_ASSERT_PTR_NULL(fp_value_fold(mask));
    CU_ASSERT_PTR_NULL(fp_value_fold(fp_node_lookup(m, "regions")->outputs[0]));
    /* the evaluation on demand, and its limit */
    fp_arena *a = fp_arena_new();
    const fp_tensor *t = fp_shape_evaluate(m, (fp_value *)mask, 1u << 20, a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nbytes, 48 * 48 * 4);
    float first, last;
    memcpy(&first, t->data, 4);
    memcpy(&last, (const uint8_t *)t->data + t->nbytes - 4, 4);
    CU_ASSERT_DOUBLE_EQUAL(first, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(last, -100, 0);
    CU_ASSERT_PTR_NULL(fp_shape_evaluate(m, (fp_value *)mask, 2000, a));
    CU_ASSERT_PTR_NULL(fp_shape_evaluate(m, fp_graph_find(m->main, "x"), 1u << 20, a)); /* reads an input */
    fp_arena_free(a);
}

/* A mask the exporter folded into an initializer of 512 bytes, which the import leaves in the file
 * (FP_DATA_FILE): read from the file, 96 of each row's 128 entries masked; the file gone, no share
 * and no warning. */
static void test_file_mask(void)
{
    float mask[128];
    for (int i = 0; i < 128; i++)
        mask[i] = i < 32 ? 0 : -100;
    tb *b = tb_new(17);
    tb_init_f32(b, "mask", 128, mask);
    attention(b, 128, "mask");
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    /* the report's line, on a profile without the rates */
    tu_run_result r = tu_run((const char *[]){"report", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "denormals 1 Softmax write denormal attention weights"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "not in the estimate, profile cpu-avx2 has no denormal rates"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "75.0% of its weights are denormal"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", "-f", "markdown", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n## Denormals\n\n1 Softmax write denormal attention weights"));
    tu_run_clear(&r);
    /* and on one with them: their time in the estimate */
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(FP_SOURCE_DIR "/devices/cpu-avx2.ini", &text, NULL, NULL));
    char *at = strstr(text, "[device]\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    g_autofree char *ini = g_strdup_printf("%.*s[device]\ndenormal_mac_s=2e-9\ndenormal_exp_s=2e-8\n%s",
                                           (int)(at - text), text, at + strlen("[device]\n"));
    g_autofree char *ini_path = tu_write_temp(ini, strlen(ini), ".ini");
    /* the model as exported, read again for the stage original, has the shares of the pipeline's */
    g_autoptr(GError) aerr = NULL;
    g_autoptr(fp_analysis)
        a = fp_analysis_run(path, &(fp_analysis_opts){.device = ini_path, .what_if = FP_DT_UNDEFINED, .original = true},
                            &aerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_DOUBLE_EQUAL(fp_value_denormal(fp_graph_find(a->original->main, "p")), 0.75, 1e-6);
    uint64_t events = 0;
    for (uint32_t i = 0; i < a->original_cost->n_ops; i++)
        events += a->original_cost->ops[i].denormal;
    CU_ASSERT_EQUAL(events, 2 * 128 * 96 + 2 * 128 * 128 * 3 * 96 / 128); /* the Softmax's, the MatMul's */
    r = tu_run((const char *[]){"report", "-d", ini_path, path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "denormals 1 Softmax write denormal attention weights"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "of the estimate on fuseplan-test-"));
    tu_run_clear(&r);
    g_unlink(ini_path);
    g_autoptr(GError) err = NULL;
    for (int gone = 0; gone < 2; gone++) {
        g_autoptr(fp_model) m = fp_load_model(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(fp_graph_find(m->main, "mask")->tensor->where, FP_DATA_FILE);
        CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){0}, NULL, &err));
        fp_pass_metrics(m, NULL);
        if (gone)
            g_unlink(path);
        g_autoptr(fp_diag) d = fp_diag_new();
        double share;
        CU_ASSERT_EQUAL(run(m, d, &share), gone ? 0 : 1);
        CU_ASSERT_DOUBLE_EQUAL(share, gone ? 0 : 0.75, 1e-6);
    }
}

/* A mask computed from a graph input: its share is unknown, the warning names the constant. */
static void test_input_mask(void)
{
    tb *b = tb_new(17);
    tb_input(b, "keep", BOOL, 2, (int64_t[]){4, 4});
    tb_init_f32(b, "zero_f", 0, (float[]){0});
    tb_init_f32(b, "minus", 0, (float[]){-90});
    tb_node(b, "Where", "masked", "keep,zero_f,minus", "mask");
    g_autoptr(fp_model) m = with_attention(b, 4);
    g_autoptr(fp_diag) d = fp_diag_new();
    double share;
    CU_ASSERT_EQUAL(run(m, d, &share), 1);
    CU_ASSERT_DOUBLE_EQUAL(share, 0, 0);
    const fp_diag_entry *e = fp_diag_find(d, "denormal-softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "holds -90"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "its masked weights are denormal"));
    /* no mask at all: nothing */
    b = tb_new(17);
    attention(b, 4, NULL);
    g_autoptr(fp_model) plain = tu_load_tb(b);
    tb_free(b);
    g_autoptr(fp_diag) none = fp_diag_new();
    fp_pass_denormal(plain, none);
    CU_ASSERT_EQUAL(fp_diag_count(none, FP_DIAG_WARNING), 0);
}

/* The MatMul's multiply-adds on denormal operands (share x FLOPs / 2) and the Softmax's denormal
 * results (share x elements), each denormal_mac_s and denormal_exp_s more on a profile with them;
 * none on one without; the other ops alike on both. */
static void test_cost(void)
{
    static const float mask[16] = {0, -100, -100, -100, 0, 0, -100, -100, 0, 0, 0, -100, 0, 0, 0, 0};
    g_autoptr(fp_model) m = reshaped_mask(mask);
    fp_pass_denormal(m, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->denormal_mac_s, 0);
    CU_ASSERT_EQUAL(d->denormal_exp_s, 0);
    const fp_node *mm = fp_node_lookup(m, "pv_matmul"), *sm = fp_node_lookup(m, "softmax");
    CU_ASSERT_EQUAL(fp_denormal_events(mm), 2 * 4 * 4 * 3 * 6 / 16); /* 96 multiply-adds, 36 on denormals */
    CU_ASSERT_EQUAL(fp_denormal_events(sm), 2 * 4 * 4 * 6 / 16);     /* 32 results, 12 denormal */
    CU_ASSERT_EQUAL(fp_denormal_events(fp_node_lookup(m, "add")), 0);
    double extra[2][2], other[2] = {0, 0}; /* [profile][MatMul, Softmax]; the other ops' times */
    for (int k = 0; k < 2; k++) {
        d->denormal_mac_s = k ? 2e-9 : 0;
        d->denormal_exp_s = k ? 20e-9 : 0;
        g_autoptr(fp_cost_result) c = fp_pass_cost(m, d, FP_DT_UNDEFINED, 0, NULL);
        for (uint32_t i = 0; i < c->n_ops; i++) {
            const fp_op_cost *o = &c->ops[i];
            if (o->node == mm || o->node == sm) {
                CU_ASSERT_EQUAL(o->denormal, fp_denormal_events(o->node));
                extra[k][o->node == sm] = o->rl.time_s;
                CU_ASSERT_DOUBLE_EQUAL(o->rl.denormal_s, k ? (o->node == sm ? 20e-9 : 2e-9) * (double)o->denormal : 0,
                                       1e-15);
            } else {
                other[k] += o->rl.time_s;
            }
        }
    }
    CU_ASSERT_DOUBLE_EQUAL(extra[1][0] - extra[0][0], 36 * 2e-9, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(extra[1][1] - extra[0][1], 12 * 20e-9, 1e-15);
    CU_ASSERT(other[0] > 0);
    CU_ASSERT_DOUBLE_EQUAL(other[0], other[1], 0);
    /* where the assists take most of its time, the report's hotspot line says so */
    d->denormal_mac_s = d->denormal_exp_s = 1e-6;
    g_autoptr(fp_cost_result) c = fp_pass_cost(m, d, FP_DT_UNDEFINED, 0, NULL);
    for (uint32_t i = 0; i < c->n_ops; i++) {
        g_autofree char *advice = fp_report_advice(&c->ops[i], d);
        CU_ASSERT_EQUAL(g_str_has_prefix(advice, "denormal-bound"), c->ops[i].node == mm || c->ops[i].node == sm);
    }
}

FP_TEST_SUITE(register_denormal)
{
    CU_pSuite s = CU_add_suite("denormal", NULL, NULL);
    CU_add_test(s, "exp_band", test_exp_band);
    CU_add_test(s, "fraction", test_fraction);
    CU_add_test(s, "initializer_mask", test_initializer_mask);
    CU_add_test(s, "graph_mask", test_graph_mask);
    CU_add_test(s, "file_mask", test_file_mask);
    CU_add_test(s, "input_mask", test_input_mask);
    CU_add_test(s, "cost", test_cost);
}
