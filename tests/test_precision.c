/* test_precision.c - precision suite (analysis/precision.c): the weight bytes of a hand-made model
 * at every weight dtype, written out by hand from the layouts of precision.h; the KV cache's bytes
 * per token and held bytes of the MHA (Concat) and GQA samples at every KV dtype and in blocks;
 * the what-ifs through the analysis and the CLI; every bad option. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/precision.h"
#include "frontends/load.h"
#include "tmodel.h"
#include "tutil.h"

#define DECODER FP_SOURCE_DIR "/models/decoder_tiny.onnx"

/* ids [4] -> Gather(E [100, 200]) -> MatMul(W1 [200, 96]) -> Gemm(W2 [48, 96], B2 [48], transB)
 * -> Mul(g [48]) -> MatMul(Wlm [48, 100]) -> logits; img [1, 3, 8, 8] -> Conv(Wc [8, 3, 3, 3], Bc
 * [8]) -> Relu -> Sigmoid -> c. All weights float32. */
static char *write_model(void)
{
    tb *b = tb_new(17);
    tb_input(b, "ids", 7, 1, (int64_t[]){4});
    tb_input(b, "img", 1, 4, (int64_t[]){1, 3, 8, 8});
    tb_output(b, "logits", 1, 2, (int64_t[]){4, 100});
    tb_output(b, "c", 1, 4, (int64_t[]){1, 8, 6, 6});
    tb_init(b, "E", 1, 2, (int64_t[]){100, 200});
    tb_init(b, "W1", 1, 2, (int64_t[]){200, 96});
    tb_init(b, "W2", 1, 2, (int64_t[]){48, 96});
    tb_init(b, "B2", 1, 1, (int64_t[]){48});
    tb_init(b, "g", 1, 1, (int64_t[]){48});
    tb_init(b, "Wlm", 1, 2, (int64_t[]){48, 100});
    tb_init(b, "Wc", 1, 4, (int64_t[]){8, 3, 3, 3});
    tb_init(b, "Bc", 1, 1, (int64_t[]){8});
    tb_node(b, "Gather", "emb", "E,ids", "e");
    tb_node(b, "MatMul", "up", "e,W1", "h");
    tb_attr_i(b, tb_node(b, "Gemm", "down", "h,W2,B2", "h2"), "transB", 1);
    tb_node(b, "Mul", "norm", "h2,g", "n");
    tb_node(b, "MatMul", "lm_head", "n,Wlm", "logits");
    tb_node(b, "Conv", "conv", "img,Wc,Bc", "c0");
    tb_node(b, "Relu", "relu", "c0", "c1");
    tb_node(b, "Sigmoid", "gate", "c1", "c");
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

/* Stored: E 80000, W1 76800, W2 18432, B2 192, g 192, Wlm 19200, Wc 864, Bc 32 bytes. Converted
 * when quantizing: W1 (N 96, K 200), W2 (transB: N 48, K 96), Wc (N 8, K 27); kept: E (an
 * embedding), Wlm (the LM head), B2, g, Bc (99616 bytes). */
static void test_weight_bytes(void)
{
    struct {
        const char *dtype;
        int64_t group;
        uint64_t bytes, changed;
        uint32_t n_changed;
    } cases[] = {
        {NULL, 0, 195712, 0, 0},
        {"fp32", 0, 195712, 0, 0},
        {"fp16", 0, 97856, 97856, 8},
        {"bf16", 0, 97856, 97856, 8},
        /* values + one fp32 scale each */
        {"fp8", 0, 99616 + (19200 + 4) + (4608 + 4) + (216 + 4), (19200 + 4) + (4608 + 4) + (216 + 4), 3},
        /* values + an fp16 scale per output channel */
        {"int8", 0, 99616 + (19200 + 192) + (4608 + 96) + (216 + 16), (19200 + 192) + (4608 + 96) + (216 + 16), 3},
        /* N ceil(K/G) G/2 + N ceil(K/G) 2 + N ceil(ceil(K/G)/2): G 128 gives 2, 1, 1 groups */
        {"int4", 0, 99616 + (12288 + 384 + 96) + (3072 + 96 + 48) + (512 + 16 + 8),
         (12288 + 384 + 96) + (3072 + 96 + 48) + (512 + 16 + 8), 3},
        /* G 32: 7, 3, 1 groups */
        {"int4", 32, 99616 + (10752 + 1344 + 384) + (2304 + 288 + 96) + (128 + 16 + 8),
         (10752 + 1344 + 384) + (2304 + 288 + 96) + (128 + 16 + 8), 3},
    };
    g_autofree char *path = write_model();
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        fp_precision p;
        CU_ASSERT_FATAL(fp_precision_parse(cases[i].dtype, cases[i].group, NULL, 0, &p, &err));
        fp_weight_plan w;
        fp_precision_weights(m, &p, &w, NULL);
        CU_ASSERT_EQUAL(w.stored_bytes, 195712);
        CU_ASSERT_EQUAL(w.bytes, cases[i].bytes);
        CU_ASSERT_EQUAL(w.changed_bytes, cases[i].changed);
        CU_ASSERT_EQUAL(w.n_changed, cases[i].n_changed);
        CU_ASSERT_EQUAL(w.kept_bytes, w.bytes - w.changed_bytes);
        CU_ASSERT_EQUAL(fp_weight_plan_delta(&w), (int64_t)cases[i].bytes - 195712);
        /* the analysis applies it to the stages and the final figure */
        fp_analysis_opts o = {.weight_dtype = cases[i].dtype, .group_size = cases[i].group};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->weight_bytes, a->res.memory->weight_bytes + cases[i].bytes - 195712);
        CU_ASSERT_EQUAL(a->res.stages[0].weight_bytes, a->weight_bytes);
    }
    /* and the report says it, in JSON and text */
    tu_run_result r = tu_run((const char *[]){"report", path, "--weight-dtype", "int4", "-f", "json", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(jp, r.out, -1, NULL));
    JsonObject *pr = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "precision");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(pr, "weight_dtype"), "int4");
    CU_ASSERT_EQUAL(json_object_get_int_member(pr, "group_size"), 128);
    CU_ASSERT_EQUAL(json_object_get_int_member(pr, "initializer_bytes"), cases[6].bytes);
    CU_ASSERT_EQUAL(json_object_get_int_member(pr, "converted_tensors"), 3);
    CU_ASSERT(json_object_get_null_member(pr, "kv_dtype"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", path, "--weight-dtype", "int8", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "weights at int8: 0.12 MB (stored: 0.20 MB)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "3 tensors converted: 0.02 MB with an fp16 scale per output channel"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* Bytes per token of the two sample decoders (2 layers, 2 KV heads x 16: Concat and
 * GroupQueryAttention layouts) and of a GroupQueryAttention graph (1 layer, 4 KV heads x 64) at
 * every KV dtype, and the cache held in blocks. */
static void test_kv_bytes(void)
{
    static const struct {
        const char *name;
        fp_dtype dtype;
        unsigned bytes;
    } dts[] = {{"fp32", FP_DT_FLOAT, 4},
               {"fp16", FP_DT_FLOAT16, 2},
               {"bf16", FP_DT_BFLOAT16, 2},
               {"fp8", FP_DT_FLOAT8E4M3FN, 1},
               {"int8", FP_DT_INT8, 1}};
    const char *samples[] = {DECODER, FP_SOURCE_DIR "/models/decoder_gqa.onnx"}; /* the same 2 x 2 x 16 cache */
    for (size_t i = 0; i < 2 * G_N_ELEMENTS(dts); i++) {
        const char *path = samples[i / G_N_ELEMENTS(dts)];
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.kv_dtype = dts[i % G_N_ELEMENTS(dts)].name, .kv_block = 16, .context = 100};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL(a->precision.kv, dts[i % G_N_ELEMENTS(dts)].dtype);
        uint64_t per_token = (uint64_t)2 * 2 * 2 * 16 * dts[i % G_N_ELEMENTS(dts)].bytes;
        CU_ASSERT_EQUAL(fp_kv_cache_token_bytes(a->kv, a->precision.kv), per_token);
        CU_ASSERT_EQUAL(a->kv_bytes, 112 * per_token); /* 100 tokens in blocks of 16 */
        CU_ASSERT_EQUAL(a->kv_past_bytes, 99 * per_token);
        g_autofree char *needle = g_strdup_printf("\"bytes_per_token\" : %" G_GUINT64_FORMAT, per_token);
        tu_run_result r = tu_run((const char *[]){"report", path, "--kv-dtype", dts[i % G_N_ELEMENTS(dts)].name, "-f",
                                                  "json", "--no-headroom", NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, needle));
        tu_run_clear(&r);
    }
    const char *text =
        "ir_version: 8\nopset_import { version: 17 } opset_import { domain: 'com.microsoft' version: 1 }\n"
        "graph { name: 'g'\n"
        "  node { input: ['q', 'k', 'v', 'pk', 'pv'] output: ['o', 'k2', 'v2'] op_type: 'GroupQueryAttention'\n"
        "         domain: 'com.microsoft' name: 'gqa' attribute { name: 'num_heads' i: 8 type: INT }\n"
        "         attribute { name: 'kv_num_heads' i: 4 type: INT } }\n"
        "  input { name: 'q' type { tensor_type { elem_type: 10 shape { dim { dim_value: 1 } dim { dim_value: 1 }\n"
        "          dim { dim_value: 512 } } } } }\n"
        "  input { name: 'k' type { tensor_type { elem_type: 10 shape { dim { dim_value: 1 } dim { dim_value: 1 }\n"
        "          dim { dim_value: 256 } } } } }\n"
        "  input { name: 'v' type { tensor_type { elem_type: 10 shape { dim { dim_value: 1 } dim { dim_value: 1 }\n"
        "          dim { dim_value: 256 } } } } }\n"
        "  input { name: 'pk' type { tensor_type { elem_type: 10 shape { dim { dim_value: 1 } dim { dim_value: 4 }\n"
        "          dim { dim_value: 7 } dim { dim_value: 64 } } } } }\n"
        "  input { name: 'pv' type { tensor_type { elem_type: 10 shape { dim { dim_value: 1 } dim { dim_value: 4 }\n"
        "          dim { dim_value: 7 } dim { dim_value: 64 } } } } }\n"
        "  output { name: 'o' type { tensor_type { elem_type: 10 } } }\n"
        "  output { name: 'k2' type { tensor_type { elem_type: 10 } } }\n"
        "  output { name: 'v2' type { tensor_type { elem_type: 10 } } }\n"
        "}\n";
    g_autoptr(fp_model) m = tm_load_text(text, ".onnxtxt");
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    for (size_t i = 0; i < G_N_ELEMENTS(dts); i++)
        CU_ASSERT_EQUAL(fp_kv_cache_token_bytes(kv, dts[i].dtype), (uint64_t)2 * 4 * 64 * dts[i].bytes);
    CU_ASSERT_EQUAL(fp_kv_cache_token_bytes(kv, FP_DT_UNDEFINED), (uint64_t)2 * 4 * 64 * 2);
}

/* Every bad what-if: one line naming the option, exit code 2. */
static void test_bad_options(void)
{
    static const struct {
        const char *opt, *value, *needle;
        bool cnn;
    } cases[] = {
        {"--weight-dtype", "int3", "--weight-dtype int3: expected fp32, fp16, bf16, fp8, int8 or int4", false},
        {"--kv-dtype", "int4", "--kv-dtype int4: expected fp32, fp16, bf16, fp8 or int8", false},
        {"--group-size", "32", "--group-size 32: applies to --weight-dtype int4 only", false},
        {"--kv-block", "-16", "--kv-block -16: expected a whole number from 1 to 2^62", false},
        {"--kv-dtype", "fp8", "--kv-dtype: the model has no KV cache", true},
        {"--kv-block", "16", "--kv-block: the model has no KV cache", true},
    };
    const char *commands[] = {"report", "memory", "headroom"};
    for (size_t c = 0; c < G_N_ELEMENTS(commands); c++)
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
            const char *model = cases[i].cnn ? FP_SOURCE_DIR "/models/resnet_tiny.onnx" : DECODER;
            const char *args[] = {commands[c], model, cases[i].opt, cases[i].value, c == 2 ? "--device" : NULL,
                                  "h100",      NULL};
            tu_expect_cli_error(args, cases[i].cnn ? "resnet_tiny.onnx" : NULL, cases[i].needle);
        }
    const char *odd[] = {"report", DECODER, "--weight-dtype", "int4", "--group-size", "33", NULL};
    tu_expect_cli_error(odd, NULL, "--group-size 33: must be a positive even number");
}

FP_TEST_SUITE(register_precision)
{
    CU_pSuite s = CU_add_suite("precision", NULL, NULL);
    CU_add_test(s, "weight_bytes", test_weight_bytes);
    CU_add_test(s, "kv_bytes", test_kv_bytes);
    CU_add_test(s, "bad_options", test_bad_options);
}
