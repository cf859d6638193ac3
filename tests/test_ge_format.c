/* test_ge_format.c - ge_format suite (passes/ge_format.c): the graph GE dumped after graph fusion
 * (ge_proto_00017), given GE's formats on ascend910b, holds the TransData and Cast ops GE's own
 * dump of that graph after UB matching holds (ge_proto_00026): by destination format and by
 * dtypes, runtime and folded together; a graph with GE's formats is left as it is; an ONNX CNN gets
 * its input cast and converted to NC1HWC0, its filters to FRACTAL_Z (folded), one TransData back to
 * NCHW before its Flatten and its output cast back to float32; 310P's matmul weights in FRACTAL_NZ;
 * must_keep_origin_dtype inserts no Cast; bad [layout] keys. */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "tmodel.h"
#include "tutil.h"

static gint by_string(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "TransData>FORMAT" and "Cast:FROM>TO" of every TransData and Cast of g that is not removed
 * (folded ones included), with their counts, sorted: one line each. Caller frees. */
static char *conversions(const fp_graph *g)
{
    g_autoptr(GHashTable) h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        if ((n->flags & FP_NODE_REMOVED) || (n->op != FP_OP_TRANS_DATA && n->op != FP_OP_CAST))
            continue;
        const fp_value *x = n->inputs[0], *y = n->outputs[0];
        char *key = n->op == FP_OP_TRANS_DATA
                        ? g_strdup_printf("TransData>%s", fp_value_layout(y) ? fp_value_layout(y) : "?")
                        : g_strdup_printf("Cast:%s>%s", fp_dtype_name(x->dtype), fp_dtype_name(y->dtype));
        gpointer old = g_hash_table_lookup(h, key);
        g_hash_table_replace(h, key, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + 1));
    }
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_add(lines, g_strdup_printf("%s %zu", (char *)k, GPOINTER_TO_SIZE(v)));
    g_ptr_array_sort(lines, by_string);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **)lines->pdata);
}

/* The ascend910b target file with its line `from` replaced by `to`, written to a temp file. */
static char *target_with(const char *from, const char *to)
{
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(FP_SOURCE_DIR "/passes/fusion/targets/ascend910b.ini", &text, NULL, NULL));
    g_autoptr(GString) s = g_string_new(text);
    CU_ASSERT_EQUAL_FATAL(g_string_replace(s, from, to, 1), 1);
    return tu_write_temp(s->str, s->len, ".ini");
}

static void test_dump_pair(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *ini = target_with("enable_small_channel = false", "enable_small_channel = true");
    fp_analysis_opts o = {.target = ini};
    g_autoptr(fp_analysis)
        a = fp_analysis_run(FP_SOURCE_DIR
                            "/tests/data/ge/ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt.gz",
                            &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    fp_analysis_opts plain = {.target = "ascend910b"};
    g_autoptr(fp_analysis)
        b = fp_analysis_run(FP_SOURCE_DIR "/tests/data/ge/ge_proto_00026_afterUBMatch.txt.gz", &plain, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    g_autofree char *got = conversions(a->model->main), *want = conversions(b->model->main);
    if (strcmp(got, want) != 0)
        g_printerr("\npredicted:\n%s\nGE's dump:\n%s\n", got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_STRING_EQUAL(want, "Cast:float16>float32 1\nCast:float32>float16 108\nTransData>FRACTAL_Z 53\n"
                                 "TransData>FRACTAL_Z_C04 1\nTransData>NC1HWC0 1\nTransData>NCHW 1");
    const fp_ge_format_result *ge = &a->res.layout.ge;
    CU_ASSERT_TRUE(ge->ran);
    CU_ASSERT_EQUAL(ge->transdata, 1); /* the output; AIPP writes NC1HWC0 float16 */
    CU_ASSERT_EQUAL(ge->cast, 1);
    CU_ASSERT_EQUAL(ge->transdata_folded, 55);
    CU_ASSERT_EQUAL(ge->cast_folded, 108);
    CU_ASSERT_EQUAL(ge->c0, 16);
    /* the dump after UB matching has GE's formats: nothing to choose */
    CU_ASSERT_TRUE(b->res.layout.ge.preset);
    CU_ASSERT_FALSE(b->res.layout.ge.ran);
    /* ATC's default (no small-channel tuning): the first filter in FRACTAL_Z too */
    g_autoptr(fp_analysis)
        c = fp_analysis_run(FP_SOURCE_DIR
                            "/tests/data/ge/ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt.gz",
                            &plain, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    g_autofree char *dflt = conversions(c->model->main);
    CU_ASSERT_PTR_NOT_NULL(strstr(dflt, "TransData>FRACTAL_Z 54"));
    CU_ASSERT_PTR_NULL(strstr(dflt, "C04"));
    g_unlink(ini);
}

static void test_onnx_cnn(void)
{
    g_autoptr(GError) err = NULL;
    const char *model = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    fp_analysis_opts o = {.target = "ascend910b"};
    g_autoptr(fp_analysis) a = fp_analysis_run(model, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const fp_ge_format_result *ge = &a->res.layout.ge;
    CU_ASSERT_TRUE(ge->ran);
    CU_ASSERT_EQUAL(ge->cast, 2);      /* the input to float16, the output back */
    CU_ASSERT_EQUAL(ge->transdata, 2); /* the input to NC1HWC0, the pooled tensor back to NCHW for Flatten */
    CU_ASSERT_EQUAL(ge->to_5hd, 1);
    CU_ASSERT_EQUAL(ge->to_origin, 1);
    CU_ASSERT_EQUAL(ge->to_fractal_z, 9); /* one per Conv filter, folded */
    CU_ASSERT_EQUAL(ge->transdata_folded, 9);
    CU_ASSERT_EQUAL(ge->to_fractal_nz, 0);                /* 910B's matmul takes an ND weight */
    CU_ASSERT_EQUAL(a->res.layout.conversions_before, 4); /* at every stage: GE's graph has them */
    CU_ASSERT_EQUAL(a->res.layout.conversions_after, 4);
    CU_ASSERT_EQUAL(a->res.stages[0].ops, a->res.stages[2].ops + 19); /* 19 ops fused away, none added */
    g_autofree char *conv = conversions(a->model->main);
    CU_ASSERT_PTR_NOT_NULL(strstr(conv, "Cast:float16>float32 1\n"));
    /* 310P: the Gemm's weight in FRACTAL_NZ, folded */
    fp_analysis_opts p = {.target = "ascend310p"};
    g_autoptr(fp_analysis) b = fp_analysis_run(model, &p, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(b->res.layout.ge.to_fractal_nz, 1);
    CU_ASSERT_EQUAL(b->res.layout.ge.transdata, 2);
    /* must_keep_origin_dtype: formats, no Cast */
    fp_analysis_opts k = {.target = "ascend910b", .precision_mode = "must_keep_origin_dtype"};
    g_autoptr(fp_analysis) c = fp_analysis_run(model, &k, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->res.layout.ge.cast + c->res.layout.ge.cast_folded, 0);
    CU_ASSERT_EQUAL(c->res.layout.ge.transdata, 2);
    /* a target without the key: nothing */
    fp_analysis_opts e = {.target = "ort-cpu"};
    g_autoptr(fp_analysis) d = fp_analysis_run(model, &e, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_FALSE(d->res.layout.ge.ran);
    CU_ASSERT_EQUAL(tm_count_ops(d->model->main, "TransData"), 0);
}

/* A value in NC1HWC0 takes its channels padded to C0 in the memory plan: x [1, 3, 8, 8] -> Conv (16)
 * on ascend910b (float16 under force_fp16), every activation without reuse: x 384, its Cast 384,
 * the TransData to NC1HWC0 1x16x8x8x2 = 2048 (not 384), the Conv's output 2048, the TransData
 * back 2048, the output's Cast 2048 (planned at float16 as ATC's force_fp16). */
static void test_c0_padding(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", 1, 4, (int64_t[]){1, 3, 8, 8});
    tb_init(b, "w", 1, 4, (int64_t[]){16, 3, 3, 3});
    tb_node_t *c = tb_node(b, "Conv", "conv", "x,w", "y");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_output(b, "y", 1, 4, (int64_t[]){1, 16, 8, 8});
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    gsize len = 0;
    const void *data = g_bytes_get_data(bytes, &len);
    g_autofree char *path = tu_write_temp(data, len, ".onnx");
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.target = "ascend910b"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.stages[0].activation_bytes, 384 + 384 + 2048 + 2048 + 2048 + 2048);
    g_unlink(path);
}

static void test_bad_keys(void)
{
    tm_expect_target_error("[target]\nname = t\nrules = ge_conv_bn\n[layout]\nge_formats = maybe\n",
                           "[layout] ge_formats: expected true or false");
    tm_expect_target_error("[target]\nname = t\nrules = ge_conv_bn\n[layout]\nge_format = true\n",
                           "unknown key 'ge_format'");
}

FP_TEST_SUITE(register_ge_format)
{
    CU_pSuite s = CU_add_suite("ge_format", NULL, NULL);
    CU_add_test(s, "dump_pair", test_dump_pair);
    CU_add_test(s, "onnx_cnn", test_onnx_cnn);
    CU_add_test(s, "c0_padding", test_c0_padding);
    CU_add_test(s, "bad_keys", test_bad_keys);
}
