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
    expect_bad("{\"model\": {\"decoder\": {\"layer_types\": \"conv\"}}}",
               "model.decoder.layer_types: expected an array of strings");
    expect_bad("{\"model\": {\"decoder\": {\"layer_types\": [\"conv\", 1]}}}",
               "model.decoder.layer_types: expected an array of strings");
    expect_bad("{\"model\": {\"decoder\": {}}, \"engine\": {\"dynamic_batching\": {\"block_size\": 0}}}",
               "engine.dynamic_batching.block_size: must be 1 or more");
    expect_bad("{\"model\": {\"decoder\": {\"inputs\": {\"past_conv_names\": \"conv\"}}}}",
               "model.decoder.inputs.past_conv_names: expected a name template");
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

/* The analysis of the model `model` (ONNX text) with the config `config`: NULL with *err when
 * refused. */
static fp_analysis *analyse_text(const char *model, const char *config, GError **err)
{
    g_autofree char *mpath = tu_write_temp(model, strlen(model), ".onnxtxt");
    g_autofree char *cpath = tu_write_temp(config, strlen(config), ".json");
    fp_analysis_opts o = {.genai_config = cpath, .stop = FP_PIPELINE_SHAPES};
    fp_analysis *a = fp_analysis_run(mpath, &o, err);
    g_unlink(mpath);
    g_unlink(cpath);
    return a;
}

/* The model `model` (ONNX text) with the config `config` is refused, the error holding needle. */
static void expect_refused(const char *model, const char *config, const char *needle)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = analyse_text(model, config, &err);
    CU_ASSERT_PTR_NULL(a);
    tu_expect_error(err, needle);
}

/* The kv_cache member `member` of `report -f json` on the model `model` (ONNX text) with the config
 * `config` and `--dim dim` (NULL: none), asserted to run, as a new JSON string (g_free); *out (when
 * not NULL) its whole output (g_free). */
static char *kv_json_member(const char *model, const char *config, const char *dim, const char *member, char **out)
{
    g_autofree char *mpath = tu_write_temp(model, strlen(model), ".onnxtxt");
    g_autofree char *cpath = tu_write_temp(config, strlen(config), ".json");
    tu_run_result r = tu_run((const char *[]){"report", mpath, "--genai-config", cpath, "-f", "json", "--no-headroom",
                                              dim ? "--dim" : NULL, dim, NULL});
    g_unlink(mpath);
    g_unlink(cpath);
    g_autoptr(JsonParser) p = json_parser_new();
    bool ok = r.status == 0 && json_parser_load_from_data(p, r.out, -1, NULL);
    if (out)
        *out = g_strdup(r.out);
    tu_run_clear(&r);
    CU_ASSERT_FATAL(ok);
    JsonObject *kv = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "kv_cache");
    return json_to_string(json_object_get_member(kv, member), FALSE);
}

/* LFM2 as onnxruntime-genai's builder writes it, 2 layers: layer 0 a conv layer (state past_conv.0
 * [b, 32, 4]), layer 1 full attention (past_key_values.1.* [b, 4, past, 8], concatenated). */
#define HYBRID_MODEL                                                                                               \
    "ir_version: 8\nopset_import { version: 17 }\ngraph { name: 'g'\n"                                             \
    "  node { input: ['past_key_values.1.key', 'k'] output: ['present.1.key'] op_type: 'Concat'\n"                 \
    "         attribute { name: 'axis' i: 2 type: INT } }\n"                                                       \
    "  node { input: ['past_key_values.1.value', 'k'] output: ['present.1.value'] op_type: 'Concat'\n"             \
    "         attribute { name: 'axis' i: 2 type: INT } }\n"                                                       \
    "  node { input: ['past_conv.0'] output: ['present_conv.0'] op_type: 'Identity' }\n"                           \
    "  input { name: 'k' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' } dim { dim_value: 4 }\n"  \
    "          dim { dim_param: 's' } dim { dim_value: 8 } } } } }\n"                                              \
    "  input { name: 'past_key_values.1.key' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"   \
    "          dim { dim_value: 4 } dim { dim_param: 'past' } dim { dim_value: 8 } } } } }\n"                      \
    "  input { name: 'past_key_values.1.value' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n" \
    "          dim { dim_value: 4 } dim { dim_param: 'past' } dim { dim_value: 8 } } } } }\n"                      \
    "  input { name: 'past_conv.0' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"             \
    "          dim { dim_value: 32 } dim { dim_value: 4 } } } } }\n"                                               \
    "  output { name: 'present.1.key' type { tensor_type { elem_type: 1 } } }\n"                                   \
    "  output { name: 'present.1.value' type { tensor_type { elem_type: 1 } } }\n"                                 \
    "  output { name: 'present_conv.0' type { tensor_type { elem_type: 1 } } }\n}\n"

/* A hybrid's layer_types: only its full_attention layers hold KV (1 layer of 4 heads x 8 float32:
 * 256 bytes per token); its conv layer a state of 32 x 4 float32 per sequence. layer_types that
 * call the KV layer a conv one, the conv layer an attention one, or are not one per layer fail
 * naming the field. */
static void test_hybrid(void)
{
    const char *fmt = "{\"model\": {\"type\": \"lfm2\", \"decoder\": {\"num_hidden_layers\": 2, "
                      "\"num_key_value_heads\": 4, \"head_size\": 8, \"layer_types\": [%s]}}}";
    g_autofree char *good = g_strdup_printf(fmt, "\"conv\", \"full_attention\"");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = analyse_text(HYBRID_MODEL, good, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->kv->layers, 1);
    CU_ASSERT_EQUAL(a->kv->bytes_per_token, 2 * 4 * 8 * 4);
    CU_ASSERT_EQUAL_FATAL(a->kv->n_state, 1);
    CU_ASSERT_STRING_EQUAL(a->kv->state[0].present->name, "present_conv.0");
    CU_ASSERT_EQUAL(fp_kv_cache_state_per_sequence(a->kv), 32 * 4 * 4);
    g_autofree char *state = kv_json_member(HYBRID_MODEL, good, NULL, "state", NULL);
    CU_ASSERT_STRING_EQUAL(state, "{\"kind\":\"conv\",\"layers\":1,\"bytes_per_sequence\":512,\"tensors\":[{\"past\":"
                                  "\"past_conv.0\",\"present\":\"present_conv.0\",\"layer\":0,\"shape\":[1,32,4]}]}");
    const struct {
        const char *kinds, *needle;
    } bad[] = {{"\"full_attention\", \"full_attention\"",
                "model.decoder.layer_types: layer 0 is 'full_attention', but"},
               {"\"conv\", \"conv\"", "model.decoder.layer_types: layer 1 is 'conv', but"},
               {"\"conv\"", "model.decoder.layer_types: 1 kinds, but num_hidden_layers is 2"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *text = g_strdup_printf(fmt, bad[i].kinds);
        expect_refused(HYBRID_MODEL, text, bad[i].needle);
    }
}

/* onnxruntime-genai's paged cache ([blocks, block_size, kv_heads, head_size]: 128 x 4 x 1 x 1). */
#define PAGED_MODEL                                                                                                \
    "ir_version: 8\nopset_import { version: 17 }\ngraph { name: 'g'\n"                                             \
    "  node { input: ['past_key_values.0.key'] output: ['present.0.key'] op_type: 'Identity' }\n"                  \
    "  node { input: ['past_key_values.0.value'] output: ['present.0.value'] op_type: 'Identity' }\n"              \
    "  input { name: 'past_key_values.0.key' type { tensor_type { elem_type: 1 shape { dim { dim_value: 128 }\n"   \
    "          dim { dim_value: 4 } dim { dim_value: 1 } dim { dim_value: 1 } } } } }\n"                           \
    "  input { name: 'past_key_values.0.value' type { tensor_type { elem_type: 1 shape { dim { dim_value: 128 }\n" \
    "          dim { dim_value: 4 } dim { dim_value: 1 } dim { dim_value: 1 } } } } }\n"                           \
    "  output { name: 'present.0.key' type { tensor_type { elem_type: 1 } } }\n"                                   \
    "  output { name: 'present.0.value' type { tensor_type { elem_type: 1 } } }\n}\n"

/* With engine.dynamic_batching the named tensors are paged: 1 KV head of size 1 in float32 is 8
 * bytes per token (K and V), the pool 128 x 4 slots of them held whatever the batch, no past copy;
 * without it the config's heads disagree with the BNSH reading, and a block size or count the
 * tensors do not declare fail naming the field. */
static void test_paged(void)
{
    const char *fmt = "{\"model\": {\"decoder\": {\"num_hidden_layers\": 1, \"num_key_value_heads\": 1, "
                      "\"head_size\": 1}}%s}";
    g_autofree char *good = g_strdup_printf(fmt, ", \"engine\": {\"dynamic_batching\": {\"block_size\": 4, "
                                                 "\"num_blocks\": 128}}");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = analyse_text(PAGED_MODEL, good, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT(fp_kv_cache_paged(a->kv));
    CU_ASSERT_EQUAL(a->kv->kv_heads, 1);
    CU_ASSERT_EQUAL(a->kv->bytes_per_token, 8);
    CU_ASSERT_EQUAL(fp_kv_cache_held(a->kv, FP_DT_UNDEFINED, 16), 2 * 128 * 4 * 4);
    CU_ASSERT_EQUAL(fp_kv_cache_past(a->kv, FP_DT_UNDEFINED), 0);
    CU_ASSERT_EQUAL(fp_kv_cache_tokens(a->kv), -1);
    CU_ASSERT_PTR_NULL(a->kv->batch_dim);
    g_autofree char *paged = kv_json_member(PAGED_MODEL, good, NULL, "paged", NULL);
    CU_ASSERT_STRING_EQUAL(paged, "{\"blocks\":128,\"block_size\":4,\"token_slots\":512}");
    const struct {
        const char *engine, *needle;
    } bad[] = {{"", "model.decoder.num_key_value_heads: 1, but"},
               {", \"engine\": {\"dynamic_batching\": {\"block_size\": 8}}",
                "engine.dynamic_batching.block_size: 8, but"},
               {", \"engine\": {\"dynamic_batching\": {\"block_size\": 4, \"num_blocks\": 64}}",
                "engine.dynamic_batching.num_blocks: 64, but"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *text = g_strdup_printf(fmt, bad[i].engine);
        expect_refused(PAGED_MODEL, text, bad[i].needle);
    }
}

/* An encoder-decoder whose cross-attention K and V declare the encoder's length as a symbol. */
#define ENCDEC_MODEL                                                                                              \
    "ir_version: 8\nopset_import { version: 17 }\ngraph { name: 'g'\n"                                            \
    "  node { input: ['past_key_self_0', 'k'] output: ['present_key_self_0'] op_type: 'Concat'\n"                 \
    "         attribute { name: 'axis' i: 2 type: INT } }\n"                                                      \
    "  node { input: ['past_value_self_0', 'k'] output: ['present_value_self_0'] op_type: 'Concat'\n"             \
    "         attribute { name: 'axis' i: 2 type: INT } }\n"                                                      \
    "  node { input: ['past_key_cross_0', 'past_value_cross_0'] output: ['x'] op_type: 'Add' }\n"                 \
    "  input { name: 'k' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' } dim { dim_value: 4 }\n" \
    "          dim { dim_param: 's' } dim { dim_value: 16 } } } } }\n"                                            \
    "  input { name: 'past_key_self_0' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"        \
    "          dim { dim_value: 4 } dim { dim_param: 'past' } dim { dim_value: 16 } } } } }\n"                    \
    "  input { name: 'past_value_self_0' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"      \
    "          dim { dim_value: 4 } dim { dim_param: 'past' } dim { dim_value: 16 } } } } }\n"                    \
    "  input { name: 'past_key_cross_0' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"       \
    "          dim { dim_value: 4 } dim { dim_param: 'enc_len' } dim { dim_value: 16 } } } } }\n"                 \
    "  input { name: 'past_value_cross_0' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' }\n"     \
    "          dim { dim_value: 4 } dim { dim_param: 'enc_len' } dim { dim_value: 16 } } } } }\n"                 \
    "  output { name: 'present_key_self_0' type { tensor_type { elem_type: 1 } } }\n"                             \
    "  output { name: 'present_value_self_0' type { tensor_type { elem_type: 1 } } }\n"                           \
    "  output { name: 'x' type { tensor_type { elem_type: 1 } } }\n}\n"

/* A symbolic encoder length: bound to 1500 from a Whisper's config (said in the binding note:
 * 1 layer x 2 x 4 heads x 1500 x 16 x 4 = 768000 bytes per sequence), left unbound for another
 * model type, and --dim wins over the config (x 100: 51200). */
static void test_encoder_length(void)
{
    const char *fmt = "{\"model\": {\"type\": \"%s\", \"decoder\": {\"num_attention_heads\": 4, \"head_size\": 16, "
                      "\"inputs\": {\"past_key_names\": \"past_key_self_%%d\", \"past_value_names\": "
                      "\"past_value_self_%%d\", \"cross_past_key_names\": \"past_key_cross_%%d\", "
                      "\"cross_past_value_names\": \"past_value_cross_%%d\"}, \"outputs\": {\"present_key_names\": "
                      "\"present_key_self_%%d\", \"present_value_names\": \"present_value_self_%%d\"}}}}";
    const struct {
        const char *type, *dim, *bytes;
    } cases[] = {{"whisper", NULL, "768000"}, {"t5", NULL, "null"}, {"whisper", "enc_len=100", "51200"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strdup_printf(fmt, cases[i].type);
        g_autofree char *out = NULL;
        g_autofree char *cross = kv_json_member(ENCDEC_MODEL, text, cases[i].dim, "cross", &out);
        g_autofree char *bytes = g_strdup_printf("\"bytes_per_sequence\":%s,", cases[i].bytes);
        CU_ASSERT_PTR_NOT_NULL(strstr(cross, "\"tokens_dim\":\"enc_len\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(cross, bytes));
        bool said = strstr(out, "the encoder's length enc_len=1500") != NULL;
        CU_ASSERT_EQUAL(said, i == 0);
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
    CU_ASSERT(json_object_get_null_member(kv, "paged") && json_object_get_null_member(kv, "state") &&
              json_object_get_null_member(c, "layer_types"));
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
    CU_add_test(s, "hybrid", test_hybrid);
    CU_add_test(s, "paged", test_paged);
    CU_add_test(s, "encoder_length", test_encoder_length);
}
