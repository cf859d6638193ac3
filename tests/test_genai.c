/* test_genai.c - onnxruntime-genai's genai_config.json (frontends/genai/): the sample's facts, the
 * bad configs refused in one line naming the file and the field, and a config checked against the
 * decoder it describes (analysis/decoder_config.c). */
#include <CUnit/CUnit.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "frontends/genai/genai.h"
#include "tutil.h"

#define SAMPLE FP_SOURCE_DIR "/models/decoder_int4.onnx"
#define SAMPLE_CONFIG FP_SOURCE_DIR "/models/genai_config.json"
#define WHISPER FP_SOURCE_DIR "/models/decoder_whisper.onnx"

/* The sample's config (models/gen_samples.py: genai_config) as written there. */
static void test_sample(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_genai_config) c = fp_genai_config_load(SAMPLE_CONFIG, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->filename, "decoder_int4.onnx");
    CU_ASSERT_EQUAL(c->layers, 2);
    CU_ASSERT_EQUAL(c->kv_heads, 2);
    CU_ASSERT_EQUAL(c->head_size, 16);
    CU_ASSERT_EQUAL(c->hidden_size, 64);
    CU_ASSERT_EQUAL(c->max_length, 4096);
    CU_ASSERT(c->share_buffer);
    CU_ASSERT_STRING_EQUAL(c->past_value, "past_key_values.%d.value");
    CU_ASSERT_PTR_NULL(c->past_packed);
    g_autofree char *name = fp_genai_name(c->present_key, 17);
    CU_ASSERT_STRING_EQUAL(name, "present.17.key");
    CU_ASSERT(fp_genai_config_names(c, SAMPLE));
    CU_ASSERT(!fp_genai_config_names(c, FP_SOURCE_DIR "/models/decoder_gqa.onnx"));
    g_autofree char *beside = fp_genai_config_beside(SAMPLE);
    CU_ASSERT_STRING_EQUAL(beside, SAMPLE_CONFIG);
}

/* Defaults where members are absent: genai's names, max_length from model.context_length. */
static void test_defaults(void)
{
    const char *text =
        "{\"model\": {\"context_length\": 512, \"decoder\": {\"inputs\": {\"past_names\": \"past_%d\"}}}}";
    g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_genai_config) c = fp_genai_config_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->max_length, 512);
    CU_ASSERT_EQUAL(c->layers, -1);
    CU_ASSERT(!c->share_buffer);
    CU_ASSERT_PTR_NULL(c->filename);
    CU_ASSERT_STRING_EQUAL(c->past_packed, "past_%d");
    CU_ASSERT_STRING_EQUAL(c->present_key, "present.%d.key");
    g_unlink(path);
}

/* A config whose text is `text` is refused with an error naming its file and containing needle. */
static void expect_bad(const char *text, const char *needle)
{
    g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_genai_config) c = fp_genai_config_load(path, &err);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, path));
    tu_expect_error(err, needle);
    g_unlink(path);
}

static void test_bad(void)
{
    expect_bad("{\"model\": ", "not valid JSON");
    expect_bad("[1, 2]", "(top level): expected an object");
    expect_bad("{\"search\": {}}", "model.decoder: missing");
    expect_bad("{\"model\": {\"decoder\": {\"num_hidden_layers\": \"2\"}}}",
               "model.decoder.num_hidden_layers: expected a whole number");
    expect_bad("{\"model\": {\"decoder\": {\"head_size\": 16.5}}}", "model.decoder.head_size: expected a whole number");
    expect_bad("{\"model\": {\"decoder\": {}}, \"search\": {\"max_length\": -1}}",
               "search.max_length: must be 0 or more");
    expect_bad("{\"model\": {\"decoder\": {}}, \"search\": {\"max_length\": 2147483648}}",
               "search.max_length: larger than 2147483647");
    expect_bad("{\"model\": {\"decoder\": {}}, \"search\": {\"past_present_share_buffer\": 1}}",
               "search.past_present_share_buffer: expected true or false");
    expect_bad("{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": \"past.%s.key\"}}}}",
               "model.decoder.inputs.past_key_names: expected a name template with one %d");
    expect_bad("{\"model\": {\"decoder\": {\"outputs\": {\"present_names\": \"present_%d_%d\"}}}}",
               "model.decoder.outputs.present_names: expected a name template");
    expect_bad("{\"model\": {\"decoder\": {\"outputs\": []}}}", "model.decoder.outputs: expected an object");
    g_autofree char *deep = g_strnfill(100000, '[');
    expect_bad(deep, "JSON nested deeper than 64");
}

/* A config that disagrees with the decoder: the analysis fails naming the field. */
static void expect_disagree(const char *text, const char *needle)
{
    g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.genai_config = path, .stop = FP_PIPELINE_SHAPES};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NULL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, path));
    tu_expect_error(err, needle);
    g_unlink(path);
}

static void test_disagree(void)
{
    expect_disagree("{\"model\": {\"decoder\": {\"num_hidden_layers\": 1}}}",
                    "model.decoder.num_hidden_layers: 1, but " SAMPLE " has KV inputs of 2 layers");
    expect_disagree("{\"model\": {\"decoder\": {\"num_key_value_heads\": 4}}}",
                    "model.decoder.num_key_value_heads: 4, but");
    expect_disagree("{\"model\": {\"decoder\": {\"head_size\": 8}}}", "model.decoder.head_size: 8, but");
    expect_disagree("{\"model\": {\"decoder\": {\"inputs\": {\"past_value_names\": \"past.%d.v\"}}}}",
                    "model.decoder.inputs.past_value_names: 'past.%d.v' does not name 'past_key_values.0.value', a "
                    "past V input of " SAMPLE "'s KV cache");
    expect_disagree("{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": \"k%d\", \"past_value_names\": "
                    "\"v%d\"}}}}",
                    "model.decoder.inputs.past_key_names: 'k%d' names no input of " SAMPLE
                    ", whose KV cache (found from its graph) reads 'past_key_values.0.key'");
    expect_disagree("{\"model\": {\"decoder\": {\"inputs\": {\"past_value_names\": \"v%d\", \"past_names\": "
                    "\"past_key_values.%d.value\"}}}}",
                    "model.decoder.inputs.past_names: 'past_key_values.0.value' of " SAMPLE
                    " is no float tensor of rank 5");
    /* a model without a KV cache */
    const char *text = "{\"model\": {\"decoder\": {}}}";
    g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.genai_config = path, .stop = FP_PIPELINE_SHAPES};
    g_autoptr(fp_analysis) a = fp_analysis_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NULL(a);
    tu_expect_error(err, "model.decoder.inputs.past_key_names: 'past_key_values.%d.key' names no input of");
    g_unlink(path);
}

/* A genai_config.json beside the model: one that names the model and disagrees with it leaves the
 * graph's KV facts, with a warning; one naming another file is not read for it; one that is no
 * config is an error all the same. */
static void test_beside(void)
{
    g_autofree char *dir = g_dir_make_tmp("fp_genai_XXXXXX", NULL);
    g_autofree char *model = g_build_filename(dir, "decoder_int4.onnx", NULL);
    g_autofree char *config = g_build_filename(dir, "genai_config.json", NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(SAMPLE, &bytes, &len, NULL) && g_file_set_contents(model, bytes, len, NULL));
    const char *texts[] = {"{\"model\": {\"decoder\": {\"filename\": \"decoder_int4.onnx\", \"head_size\": 8}}}",
                           "{\"model\": {\"decoder\": {\"filename\": \"other.onnx\", \"head_size\": 8}}}",
                           "{\"model\": {\"decoder\": {\"filename\": 7}}}"};
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        CU_ASSERT_FATAL(g_file_set_contents(config, texts[i], -1, NULL));
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.stop = FP_PIPELINE_SHAPES};
        g_autoptr(fp_analysis) a = fp_analysis_run(model, &o, &err);
        if (i == 2) {
            CU_ASSERT_PTR_NULL(a);
            tu_expect_error(err, "model.decoder.filename: expected a string");
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NULL(a->kv->config);
        CU_ASSERT_EQUAL(fp_kv_cache_tokens(a->kv), FP_DECODER_DEFAULT_CONTEXT);
        bool warned = a->config_warning && strstr(a->config_warning, "model.decoder.head_size: 8, but") &&
                      strstr(a->config_warning, "not used");
        CU_ASSERT(i == 0 ? warned : a->config_warning == NULL);
    }
    g_unlink(config);
    g_unlink(model);
    g_rmdir(dir);
}

/* The command line: a bad --genai-config is one line naming the file and the field, exit 2. */
static void test_cli(void)
{
    const char *text = "{\"model\": {\"decoder\": {\"num_key_value_heads\": -2}}}";
    g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
    tu_expect_cli_error((const char *[]){"headroom", SAMPLE, "--device", "h100", "--genai-config", path, NULL}, path,
                        "model.decoder.num_key_value_heads: must be 0 or more");
    tu_expect_cli_error((const char *[]){"memory", SAMPLE, "--genai-config", "/nonexistent/genai_config.json", NULL},
                        "/nonexistent/genai_config.json", "No such file");
    g_unlink(path);
}

/* The facts the sample's config gives: max_length is the default context; with the shared buffer
 * the cache is one buffer of max_length tokens per K and V at any context, and no past copy. A
 * config without the shared buffer keeps the present (the context) and the past copy. */
static void test_share_buffer(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.stop = FP_PIPELINE_SHAPES};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    uint64_t per_token = 2 * 2 * 2 * 16 * 4; /* layers x (K, V) x KV heads x head size x float32 */
    CU_ASSERT_EQUAL(a->kv->bytes_per_token, per_token);
    CU_ASSERT_STRING_EQUAL(a->kv->config, SAMPLE_CONFIG);
    CU_ASSERT_EQUAL(fp_kv_cache_tokens(a->kv), 4096); /* the config's max_length, not 2048 */
    CU_ASSERT_EQUAL(a->kv_bytes, 4096 * per_token);
    CU_ASSERT_EQUAL(a->kv_past_bytes, 0);
    o.context = 1024;
    g_autoptr(fp_analysis) b = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(fp_kv_cache_tokens(b->kv), 1024);
    CU_ASSERT_EQUAL(b->kv_bytes, 4096 * per_token);
    CU_ASSERT_EQUAL(b->kv_past_bytes, 0);
    const char *apart = "{\"model\": {\"decoder\": {}}, \"search\": {\"max_length\": 4096}}";
    g_autofree char *path = tu_write_temp(apart, strlen(apart), ".json");
    o.genai_config = path;
    g_autoptr(fp_analysis) c = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(!c->kv->share_buffer);
    CU_ASSERT_EQUAL(c->kv_bytes, 1024 * per_token);
    CU_ASSERT_EQUAL(c->kv_past_bytes, 1023 * per_token);
    g_unlink(path);
}

/* An encoder-decoder's config (models/decoder_whisper.onnx in Optimum's names): the cross-attention
 * K and V are those its cross_past_*_names name, checked against num_attention_heads and head_size;
 * the report's facts keep the config. A template naming no input, or heads the tensors do not
 * declare, fail naming the field. */
static void test_cross(void)
{
    const char *names = "\"inputs\": {\"past_key_names\": \"past_key_values.%%d.decoder.key\", \"past_value_names\": "
                        "\"past_key_values.%%d.decoder.value\", \"cross_past_key_names\": %s, "
                        "\"cross_past_value_names\": \"past_key_values.%%d.encoder.value\"}, \"outputs\": "
                        "{\"present_key_names\": \"present.%%d.decoder.key\", \"present_value_names\": "
                        "\"present.%%d.decoder.value\"}";
    const struct {
        const char *key;
        int heads;
        const char *needle;
    } cases[] = {{"\"past_key_values.%d.encoder.key\"", 4, NULL},
                 {"\"enc.%d.k\"", 4, "model.decoder.inputs.cross_past_key_names: 'enc.%d.k' names no input of"},
                 {"\"past_key_values.%d.encoder.key\"", 8,
                  "model.decoder.num_attention_heads: 8, but " WHISPER " declares 'past_key_values.0.encoder.key' "
                  "with 4"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *fmt =
            g_strdup_printf("{\"model\": {\"type\": \"whisper\", \"decoder\": {\"num_attention_heads\": "
                            "%d, \"head_size\": 16, %s}}}",
                            cases[i].heads, names);
        g_autofree char *text = g_strdup_printf(fmt, cases[i].key);
        g_autofree char *path = tu_write_temp(text, strlen(text), ".json");
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.genai_config = path, .stop = FP_PIPELINE_SHAPES};
        g_autoptr(fp_analysis) a = fp_analysis_run(WHISPER, &o, &err);
        g_unlink(path);
        if (cases[i].needle) {
            CU_ASSERT_PTR_NULL(a);
            tu_expect_error(err, cases[i].needle);
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->kv->genai);
        CU_ASSERT_STRING_EQUAL(a->kv->genai->model_type, "whisper");
        CU_ASSERT_EQUAL(a->kv->genai->heads, 4);
        CU_ASSERT_EQUAL(a->kv->n_cross, 4);
        CU_ASSERT_EQUAL(a->kv->cross_layers, 2);
        CU_ASSERT_STRING_EQUAL(a->kv->tensors[0].present->name, "present.0.decoder.key");
        CU_ASSERT_EQUAL(fp_kv_cache_cross(a->kv, FP_DT_UNDEFINED, 0), 2 * 2 * 4 * 1500 * 16 * 4);
    }
}

/* The config's facts in report's JSON (kv_cache.config) and text, from the int4 sample's config. */
static void test_report_config(void)
{
    tu_run_result r = tu_run((const char *[]){"report", SAMPLE, "-f", "json", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *kv = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "kv_cache");
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    JsonObject *c = json_object_get_object_member(kv, "config");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(c, "path"), SAMPLE_CONFIG);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(c, "model_type"), "llama");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(c, "layout"), "separate");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(c, "past_key_names"), "past_key_values.%d.key");
    CU_ASSERT(json_object_get_null_member(c, "past_names") && json_object_get_null_member(c, "cross_past_key_names"));
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "num_hidden_layers"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "num_attention_heads"), 4);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "num_key_value_heads"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "head_size"), 16);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "max_length"), 4096);
    CU_ASSERT(json_object_get_boolean_member(c, "past_present_share_buffer"));
    CU_ASSERT(json_object_get_null_member(kv, "cross"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", SAMPLE, "--no-headroom", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "  facts from " SAMPLE_CONFIG " (model.type llama), which agrees with the "
                                         "graph: 2 layers, K and V apart (past_key_values.%d.key), 2 KV heads of 4 "
                                         "attention heads, head size 16; max_length 4096; "
                                         "past_present_share_buffer true"));
    tu_run_clear(&r);
}

FP_TEST_SUITE(register_genai)
{
    CU_pSuite s = CU_add_suite("genai", NULL, NULL);
    CU_add_test(s, "sample", test_sample);
    CU_add_test(s, "defaults", test_defaults);
    CU_add_test(s, "bad", test_bad);
    CU_add_test(s, "disagree", test_disagree);
    CU_add_test(s, "beside", test_beside);
    CU_add_test(s, "cli", test_cli);
    CU_add_test(s, "share_buffer", test_share_buffer);
    CU_add_test(s, "cross", test_cross);
    CU_add_test(s, "report_config", test_report_config);
}
