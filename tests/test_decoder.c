/* test_decoder.c - decoder suite (analysis/decoder.c): the KV cache of the sample decoder (plain
 * Concat layout) and of a GroupQueryAttention graph found from the graph, its bytes per token from
 * the configuration, what it holds at a bound point and at the default decode step; the token dims
 * of Optimum's and genai's layouts; none on a CNN; the report's text and JSON; Hugging Face-like
 * decoders whose mask is rank 4: every dim bound, the headroom near the KV-cache bound, repeat_kv's
 * expanded K and V at the peak. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "devices/device.h"
#include "frontends/load.h"
#include "reports/memory.h"
#include "tmodel.h"
#include "tutil.h"

#define DECODER FP_SOURCE_DIR "/models/decoder_tiny.onnx"
#define WHISPER FP_SOURCE_DIR "/models/decoder_whisper.onnx"
/* models/gen_samples.py, decoder_tiny: layers, KV heads, head dim (float32) */
enum { LAYERS = 2, KV_HEADS = 2, HEAD_DIM = 16 };

static void test_sample(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(DECODER, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv->layers, LAYERS);
    CU_ASSERT_EQUAL_FATAL(kv->n_tensors, 2 * LAYERS);
    CU_ASSERT_EQUAL(kv->kv_heads, KV_HEADS);
    CU_ASSERT_EQUAL(kv->head_dim, HEAD_DIM);
    CU_ASSERT_EQUAL(kv->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(kv->bytes_per_token, (uint64_t)2 * LAYERS * KV_HEADS * HEAD_DIM * 4);
    CU_ASSERT_STRING_EQUAL(kv->batch_dim, "batch_size");
    CU_ASSERT_STRING_EQUAL(kv->past_dim, "past_sequence_length");
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        g_autofree char *past = g_strdup_printf("past_key_values.%u.%s", i / 2, i % 2 ? "value" : "key");
        g_autofree char *present = g_strdup_printf("present.%u.%s", i / 2, i % 2 ? "value" : "key");
        CU_ASSERT_STRING_EQUAL(t->past->name, past);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t->present);
        CU_ASSERT_STRING_EQUAL(t->present->name, present);
        CU_ASSERT_EQUAL(t->value, i % 2 == 1);
        CU_ASSERT_EQUAL(t->layer, i / 2);
    }
    CU_ASSERT_EQUAL(fp_kv_cache_held(kv, FP_DT_UNDEFINED, 0), UINT64_MAX); /* nothing bound yet */
    CU_ASSERT_EQUAL(fp_kv_cache_past(kv, FP_DT_FLOAT16), UINT64_MAX);
}

/* No KV cache in a CNN, nor in an encoder whose rank-4 values are not graph inputs. */
static void test_none(void)
{
    const char *paths[] = {FP_SOURCE_DIR "/models/resnet_tiny.onnx", FP_SOURCE_DIR "/models/transformer_block.onnx"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_model) m = fp_load_model(paths[i], &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NULL(fp_kv_cache_find(m));
    }
}

/* The analysis at batch 3, 9 past and 1 new token: the present tensors hold 10 tokens of 3
 * sequences, bytes_per_token each; the report's text and JSON say so. */
static void test_bound(void)
{
    g_autoptr(GError) err = NULL;
    char *dims[] = {"sequence_length=1", "past_sequence_length=9", NULL};
    fp_analysis_opts o = {.dims = dims, .batch = 3};
    g_autoptr(fp_analysis) a = fp_analysis_run(DECODER, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->kv);
    CU_ASSERT_EQUAL(a->kv_bytes, 3 * 10 * a->kv->bytes_per_token);
    CU_ASSERT_EQUAL(a->kv_past_bytes, 3 * 9 * a->kv->bytes_per_token);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    /* the cache is held apart: the plan without that rule has exactly its past and present tensors
       more without reuse (every size here a multiple of the alignment) */
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST, .align = a->device->align_bytes};
    g_autoptr(fp_memory_result) all = fp_pass_memory(a->model->main, &mo, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_EQUAL(all->naive_bytes, a->res.memory->naive_bytes + a->kv_bytes + a->kv_past_bytes);
    for (uint32_t i = 0; i < a->res.memory->n_peak; i++)
        for (uint32_t k = 0; k < a->kv->n_tensors; k++)
            CU_ASSERT(a->res.memory->peak[i].value != a->kv->tensors[k].past &&
                      a->res.memory->peak[i].value != a->kv->tensors[k].present);

    tu_run_result r = tu_run((const char *[]){"report", DECODER, "--dim", "sequence_length=1", "--dim",
                                              "past_sequence_length=9", "--batch", "3", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kv cache 2 layers, K and V of 2 heads x 16, float32: 512 bytes per token"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "held now 0.02 MB (4 tensors, one buffer each that past and present share)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "KV cache 0.02 MB (0.0%), activations 0.02 MB (0.0%)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "holds the past inputs too: +0.01 MB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "reserve 3200.00 MB (10.0%)"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", DECODER, "-f", "json", "--dim", "sequence_length=1", "--dim",
                                "past_sequence_length=9", "--batch", "3", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *kv = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "kv_cache");
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(json_object_get_int_member(kv, "layers"), LAYERS);
    CU_ASSERT_EQUAL(json_object_get_int_member(kv, "bytes_per_token"), 512);
    CU_ASSERT_EQUAL(json_object_get_int_member(kv, "bytes"), 3 * 10 * 512);
    CU_ASSERT_EQUAL(json_object_get_int_member(kv, "past_copy_bytes"), 3 * 9 * 512);
    CU_ASSERT(json_object_get_null_member(kv, "block_tokens"));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(kv, "stored_dtype"), "float32");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(kv, "dtype"), "float32");
    JsonArray *ts = json_object_get_array_member(kv, "tensors");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(ts), 2 * LAYERS);
    JsonObject *t1 = json_array_get_object_element(ts, 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(t1, "kind"), "value");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(t1, "present"), "present.0.value");
    CU_ASSERT(json_object_get_null_member(kv, "cross") && json_object_get_null_member(kv, "config"));
    tu_run_clear(&r);
    /* the HTML page has its card */
    r = tu_run((const char *[]){"report", DECODER, "-f", "html", "--batch", "4000", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "<div class=\"k\">KV cache</div>\n<div class=\"v\">4194.30 MB</div>"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "512 B/token (float32); of cpu-avx2: weights 0.0%, KV cache 13.1%, activations 13.5%"));
    tu_run_clear(&r);
    /* a model without a KV cache writes null */
    r = tu_run(
        (const char *[]){"report", FP_SOURCE_DIR "/models/resnet_tiny.onnx", "-f", "json", "--no-headroom", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"kv_cache\" : null"));
    tu_run_clear(&r);
}

/* com.microsoft GroupQueryAttention reads past key and value at inputs 3 and 4 and writes the
 * present ones at outputs 1 and 2: found whatever the names, in fp16. */
static void test_group_query_attention(void)
{
    const char *text =
        "ir_version: 8\nopset_import { version: 17 } opset_import { domain: 'com.microsoft' version: 1 }\n"
        "graph { name: 'g'\n"
        "  node { input: ['q', 'k', 'v', 'cache_a', 'cache_b'] output: ['o', 'new_a', 'new_b']\n"
        "         op_type: 'GroupQueryAttention' domain: 'com.microsoft' name: 'gqa'\n"
        "         attribute { name: 'num_heads' i: 8 type: INT } attribute { name: 'kv_num_heads' i: 4 type: INT } }\n"
        "  input { name: 'q' type { tensor_type { elem_type: 10 shape { dim { dim_param: 'b' } dim { dim_param: 's' }\n"
        "          dim { dim_value: 512 } } } } }\n"
        "  input { name: 'k' type { tensor_type { elem_type: 10 shape { dim { dim_param: 'b' } dim { dim_param: 's' }\n"
        "          dim { dim_value: 256 } } } } }\n"
        "  input { name: 'v' type { tensor_type { elem_type: 10 shape { dim { dim_param: 'b' } dim { dim_param: 's' }\n"
        "          dim { dim_value: 256 } } } } }\n"
        "  input { name: 'cache_a' type { tensor_type { elem_type: 10 shape { dim { dim_param: 'b' } dim { dim_value: 4 }\n"
        "          dim { dim_param: 'past' } dim { dim_value: 64 } } } } }\n"
        "  input { name: 'cache_b' type { tensor_type { elem_type: 10 shape { dim { dim_param: 'b' } dim { dim_value: 4 }\n"
        "          dim { dim_param: 'past' } dim { dim_value: 64 } } } } }\n"
        "  output { name: 'o' type { tensor_type { elem_type: 10 } } }\n"
        "  output { name: 'new_a' type { tensor_type { elem_type: 10 } } }\n"
        "  output { name: 'new_b' type { tensor_type { elem_type: 10 } } }\n"
        "}\n";
    g_autoptr(fp_model) m = tm_load_text(text, ".onnxtxt");
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv->layers, 1);
    CU_ASSERT_EQUAL_FATAL(kv->n_tensors, 2);
    CU_ASSERT_FALSE(kv->tensors[0].value);
    CU_ASSERT_TRUE(kv->tensors[1].value);
    CU_ASSERT_STRING_EQUAL(kv->tensors[0].present->name, "new_a");
    CU_ASSERT_STRING_EQUAL(kv->tensors[1].present->name, "new_b");
    CU_ASSERT_EQUAL(kv->dtype, FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(kv->bytes_per_token, (uint64_t)2 * 4 * 64 * 2);
    CU_ASSERT_STRING_EQUAL(kv->past_dim, "past");
}

/* GPT-2 as ONNX Runtime's transformers optimizer exports it: com.microsoft Attention reads K and V
 * of a layer packed in one past [2, b, 4, past, 8] (input 4) and writes them to its present
 * (output 1). Each packed tensor is a layer's K and V: 2 layers of 2 x 4 x 8 float32 per token. At
 * 5 past and 1 new token the present tensors hold 6 tokens, the cache 6 x that. */
static void test_packed_attention(void)
{
    GString *t = g_string_new("ir_version: 8\nopset_import { version: 17 } opset_import { domain: 'com.microsoft' "
                              "version: 1 }\ngraph { name: 'g'\n");
    for (int i = 0; i < 2; i++) {
        g_string_append_printf(t,
                               "  node { input: ['%s', 'w', '', '', 'past_%d'] output: ['y%d', 'present_%d'] "
                               "op_type: 'Attention' domain: 'com.microsoft' name: 'attn%d'\n"
                               "         attribute { name: 'num_heads' i: 4 type: INT } }\n",
                               i ? "y0" : "x", i, i, i, i);
        g_string_append_printf(t,
                               "  input { name: 'past_%d' type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 "
                               "} dim { dim_param: 'b' } dim { dim_value: 4 } dim { dim_param: 'past' } dim { "
                               "dim_value: 8 } } } } }\n  output { name: 'present_%d' type { tensor_type { elem_type: "
                               "1 } } }\n",
                               i, i);
    }
    g_string_append(t, "  input { name: 'x' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'b' } dim { "
                       "dim_param: 's' } dim { dim_value: 32 } } } } }\n"
                       "  input { name: 'w' type { tensor_type { elem_type: 1 shape { dim { dim_value: 32 } dim { "
                       "dim_value: 96 } } } } }\n  output { name: 'y1' type { tensor_type { elem_type: 1 } } }\n}\n");
    g_autofree char *text = g_string_free(t, FALSE);
    g_autoptr(fp_model) m = tm_load_text(text, ".onnxtxt");
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv->layers, 2);
    CU_ASSERT_EQUAL_FATAL(kv->n_tensors, 2);
    CU_ASSERT_TRUE(kv->tensors[0].packed && kv->tensors[1].packed);
    CU_ASSERT_STRING_EQUAL(kv->tensors[1].present->name, "present_1");
    CU_ASSERT_EQUAL(kv->kv_heads, 4);
    CU_ASSERT_EQUAL(kv->head_dim, 8);
    CU_ASSERT_EQUAL(kv->bytes_per_token, (uint64_t)2 * 2 * 4 * 8 * 4);
    CU_ASSERT_STRING_EQUAL(kv->batch_dim, "b");
    CU_ASSERT_STRING_EQUAL(kv->past_dim, "past");
    g_autofree char *path = tu_write_temp(text, strlen(text), ".onnxtxt");
    char *dims[] = {"past=5", "s=1", NULL};
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.dims = dims};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->kv_bytes, 6 * kv->bytes_per_token);
    int64_t batch, past, fresh;
    CU_ASSERT_FATAL(fp_kv_cache_step(a->kv, &batch, &past, &fresh));
    CU_ASSERT(batch == 1 && past == 5 && fresh == 1);
}

/* With no option the decoder is analysed at a decode step of the default context: batch 1, 1 new
 * token, the rest past; nothing of unknown size; an option given keeps its value. */
static void test_default_context(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(DECODER, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->res.cost->unknown, 0);
    CU_ASSERT_EQUAL(a->kv_bytes, (uint64_t)FP_DECODER_DEFAULT_CONTEXT * a->kv->bytes_per_token);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->batch_note);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->batch_note, "sequence_length=1, past_sequence_length=2047"));
    CU_ASSERT_PTR_NOT_NULL(a->headroom);
    char *dims[] = {"past_sequence_length=9", NULL};
    fp_analysis_opts ob = {.dims = dims};
    g_autoptr(fp_analysis) b = fp_analysis_run(DECODER, &ob, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(b->kv_bytes, 10 * b->kv->bytes_per_token);
    CU_ASSERT_PTR_NULL(strstr(b->batch_note, "past_sequence_length="));
}

/* A decoder in ONNX text whose mask input is declared as mask_dim: Optimum's
 * "past_sequence_length + sequence_length", or genai's own total_sequence_length symbol. */
static char *masked_decoder(const char *mask_dim)
{
    g_autofree char *text = g_strdup_printf(
        "ir_version: 8\nopset_import { version: 17 }\n"
        "graph { name: 'g'\n"
        "  node { input: 'k_new' output: 'k' op_type: 'Relu' name: 'kproj' }\n"
        "  node { input: ['past_key_values.0.key', 'k'] output: 'present.0.key' op_type: 'Concat' name: 'kcat'\n"
        "         attribute { name: 'axis' i: 2 type: INT } }\n"
        "  node { input: 'attention_mask' output: 'mask_f' op_type: 'Cast' name: 'cast'\n"
        "         attribute { name: 'to' i: 1 type: INT } }\n"
        "  input { name: 'input_ids' type { tensor_type { elem_type: 7 shape { dim { dim_param: 'batch_size' }\n"
        "          dim { dim_param: 'sequence_length' } } } } }\n"
        "  input { name: 'attention_mask' type { tensor_type { elem_type: 7 shape { dim { dim_param: 'batch_size' }\n"
        "          dim { dim_param: '%s' } } } } }\n"
        "  input { name: 'k_new' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'batch_size' } dim { dim_value: 2 }\n"
        "          dim { dim_param: 'sequence_length' } dim { dim_value: 8 } } } } }\n"
        "  input { name: 'past_key_values.0.key' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'batch_size' }\n"
        "          dim { dim_value: 2 } dim { dim_param: 'past_sequence_length' } dim { dim_value: 8 } } } } }\n"
        "  output { name: 'present.0.key' type { tensor_type { elem_type: 1 } } }\n"
        "  output { name: 'mask_f' type { tensor_type { elem_type: 1 } } }\n"
        "}\n",
        mask_dim);
    return tu_write_temp(text, strlen(text), ".onnxtxt");
}

/* The token dims of both layouts are found and bound; a dim written as a sum of bound symbols takes
 * their sum. */
static void test_token_dims(void)
{
    const char *masks[] = {"past_sequence_length + sequence_length", "total_sequence_length"};
    for (size_t i = 0; i < G_N_ELEMENTS(masks); i++) {
        g_autofree char *path = masked_decoder(masks[i]);
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {0};
        g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->kv);
        CU_ASSERT_EQUAL(a->kv->n_tensors, 1);
        CU_ASSERT(g_strcmp0(a->kv->new_dim, "sequence_length") == 0);
        CU_ASSERT(g_strcmp0(a->kv->past_dim, "past_sequence_length") == 0);
        CU_ASSERT_EQUAL(a->kv->total_dim == NULL, i == 0);
        const fp_value *mask = fp_graph_find(a->model->main, "mask_f");
        g_autofree char *shape = fp_shape_to_string(&mask->shape);
        CU_ASSERT_STRING_EQUAL(shape, "1x2048");
        CU_ASSERT_EQUAL(a->kv_bytes, (uint64_t)2048 * 2 * 8 * 4);
        g_unlink(path);
    }
}

/* --phase and --context: a prefill of 16 tokens holds 16 per sequence and no past; a decode step
 * at 100 holds 100 (99 past and 1 new). */
static void test_phase_context(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.phase = "prefill", .context = 16};
    g_autoptr(fp_analysis) a = fp_analysis_run(DECODER, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->kv_bytes, 16 * a->kv->bytes_per_token);
    CU_ASSERT_EQUAL(a->kv_past_bytes, 0);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(a->batch_note, "a prefill of 16 tokens (sequence_length=16, past_sequence_length=0)"));
    fp_analysis_opts od = {.phase = "decode", .context = 100};
    g_autoptr(fp_analysis) d = fp_analysis_run(DECODER, &od, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->kv_bytes, 100 * d->kv->bytes_per_token);
    CU_ASSERT_EQUAL(d->kv_past_bytes, 99 * d->kv->bytes_per_token);
}

/* A bad phase or context, or a step asked of a model without a KV cache: one error naming the
 * option, from the analysis and from the commands (also those that only infer shapes). */
static void test_bad_step(void)
{
    struct {
        const char *path, *phase;
        int64_t context;
        const char *needle;
    } cases[] = {
        {DECODER, "decoding", 0, "--phase decoding: expected decode or prefill"},
        {DECODER, NULL, -4, "--context -4: must be positive"},
        {FP_SOURCE_DIR "/models/resnet_tiny.onnx", NULL, 64, "the model has no KV cache"},
        {FP_SOURCE_DIR "/models/resnet_tiny.onnx", "prefill", 0, "the model has no KV cache"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        fp_analysis_opts o = {.phase = cases[i].phase, .context = cases[i].context};
        CU_ASSERT_PTR_NULL(fp_analysis_run(cases[i].path, &o, &err));
        tu_expect_error(err, cases[i].needle);
    }
    const char *report[] = {"report", DECODER, "--phase", "x", NULL};
    tu_expect_cli_error(report, NULL, "--phase x: expected decode or prefill");
    const char *shapes[] = {"shapes", FP_SOURCE_DIR "/models/resnet_tiny.onnx", "--context", "8", NULL};
    tu_expect_cli_error(shapes, "resnet_tiny.onnx", "the model has no KV cache");
}

/* The headroom of a decode step at 256 tokens on a device of 12 MB equals the largest batch a
 * search over every batch finds fitting (weights + planned arena + KV cache within the usable
 * 90%), at decode and at prefill, with and without the storage what-ifs. */
static void test_headroom_brute_force(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = fp_device_load("cpu-avx2", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    dev->memory_bytes = (uint64_t)12 << 20;
    const struct {
        const char *phase, *weight, *kv;
        int64_t block;
    } cases[] = {{"decode", NULL, NULL, 0},
                 {"prefill", NULL, NULL, 0},
                 {"decode", "int4", "fp8", 96},
                 {"prefill", "fp16", "int8", 0}};
    for (size_t p = 0; p < G_N_ELEMENTS(cases); p++) {
        fp_analysis_opts o = {.device_profile = dev,
                              .phase = cases[p].phase,
                              .context = 256,
                              .headroom = {.on = true},
                              .weight_dtype = cases[p].weight,
                              .kv_dtype = cases[p].kv,
                              .kv_block = cases[p].block};
        g_autoptr(fp_analysis) a = fp_analysis_run(DECODER, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom);
        uint64_t usable = dev->memory_bytes - dev->memory_bytes / 10;
        int64_t brute = 0;
        uint64_t kv_at = 0;
        for (int64_t b = 1; b <= 256; b++) {
            fp_analysis_opts ob = o;
            ob.headroom.on = false;
            ob.batch = b;
            g_autoptr(fp_analysis) x = fp_analysis_run(DECODER, &ob, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(x);
            if (x->weight_bytes + x->res.memory->arena + x->kv_bytes > usable)
                break;
            brute = b;
            kv_at = x->kv_bytes;
        }
        CU_ASSERT(brute > 1 && brute < 256);
        CU_ASSERT_EQUAL(a->headroom->max_batch, brute);
        CU_ASSERT_EQUAL(a->headroom->outside_at_max, kv_at);
        uint64_t per_seq = fp_kv_cache_token_bytes(a->kv, a->precision.kv) * (cases[p].block ? 288 : 256);
        CU_ASSERT_EQUAL(kv_at, (uint64_t)brute * per_seq);
    }
}

/* The step's latency per token: a decode step makes 1 token per sequence, a prefill of 128 makes
 * 128; the floor is the weights and the past read at the device's bandwidth; int4 weights and an
 * fp8 cache make both smaller (the cost reads the stored bytes). */
static void test_step_latency(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts dec = {.batch = 2}, pre = {.phase = "prefill", .context = 128};
    fp_analysis_opts small = {.batch = 2, .weight_dtype = "int4", .kv_dtype = "fp8"};
    g_autoptr(fp_analysis) d = fp_analysis_run(DECODER, &dec, &err);
    g_autoptr(fp_analysis) p = fp_analysis_run(DECODER, &pre, &err);
    g_autoptr(fp_analysis) q = fp_analysis_run(DECODER, &small, &err);
    CU_ASSERT_FATAL(d && p && q);
    int64_t batch, past, fresh;
    CU_ASSERT_FATAL(fp_kv_cache_step(d->kv, &batch, &past, &fresh));
    CU_ASSERT(batch == 2 && past == 2047 && fresh == 1);
    CU_ASSERT_FATAL(fp_kv_cache_step(p->kv, &batch, &past, &fresh));
    CU_ASSERT(batch == 1 && past == 0 && fresh == 128);
    CU_ASSERT(q->res.cost->total_s < d->res.cost->total_s);
    CU_ASSERT(q->weight_bytes < d->weight_bytes && q->kv_past_bytes * 4 == d->kv_past_bytes);
    tu_run_result r = tu_run((const char *[]){"report", DECODER, "--batch", "2", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "for 1 new token x 2 sequences after 2047 past"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ": the floor of any step"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", DECODER, "--phase", "prefill", "--context", "128", "-f", "json",
                                "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(jp, r.out, -1, NULL));
    JsonObject *kv = json_object_get_object_member(json_node_get_object(json_parser_get_root(jp)), "kv_cache");
    JsonObject *st = json_object_get_object_member(kv, "step");
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(json_object_get_int_member(st, "new_tokens"), 128);
    CU_ASSERT_EQUAL(json_object_get_int_member(st, "past_tokens"), 0);
    double t = json_object_get_double_member(st, "est_latency_s");
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(st, "est_latency_per_token_s"), t / 128, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t, p->res.cost->total_s, 1e-12);
    CU_ASSERT_EQUAL(json_object_get_int_member(st, "bytes_read_floor"), (gint64)p->weight_bytes);
    tu_run_clear(&r);
}

/* `fuseplan report` on either sample decoder with no flags: the breakdown, and nothing on stderr
 * (no unknown size, no unknown op). */
static void test_report_no_flags(void)
{
    const char *paths[] = {DECODER, FP_SOURCE_DIR "/models/decoder_gqa.onnx"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        tu_run_result r = tu_run((const char *[]){"report", paths[i], NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_STRING_EQUAL(r.err, "");
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "of 32000.00 MB on cpu-avx2: weights "));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "a decode step at a context of 2048 tokens"));
        CU_ASSERT_PTR_NULL(strstr(r.out, "unknown"));
        tu_run_clear(&r);
    }
}

/* A GE graph (text ModelDef as ATC dumps it) of one layer: Data ops reading past K and V [1, 2, 7,
 * 16] fp16, ConcatD on concat_dim 2 with the new token into NetOutput. The cache is found through
 * the Data ops and held apart from the arena. */
#define GE_DESC(d0, d2) "output_desc { dtype: DT_FLOAT16 shape { dim: [" d0 ", 2, " d2 ", 16] } layout: 'ND' }"
static void test_ge_graph(void)
{
    /* clang-format off */
    const char *text =
        "graph { name: 'g'\n"
        " op { name: 'past_key' type: 'Data' input: '' attr { key: 'index' value { i: 0 } } " GE_DESC("1", "7") " }\n"
        " op { name: 'past_value' type: 'Data' input: '' attr { key: 'index' value { i: 1 } } " GE_DESC("1", "7") " }\n"
        " op { name: 'k_new' type: 'Data' input: '' attr { key: 'index' value { i: 2 } } " GE_DESC("1", "1") " }\n"
        " op { name: 'v_new' type: 'Data' input: '' attr { key: 'index' value { i: 3 } } " GE_DESC("1", "1") " }\n"
        " op { name: 'cat_k' type: 'ConcatD' input: 'past_key:0' input: 'k_new:0'\n"
        "      attr { key: 'concat_dim' value { i: 2 } } attr { key: 'N' value { i: 2 } } " GE_DESC("1", "8") " }\n"
        " op { name: 'cat_v' type: 'ConcatD' input: 'past_value:0' input: 'v_new:0'\n"
        "      attr { key: 'concat_dim' value { i: 2 } } attr { key: 'N' value { i: 2 } } " GE_DESC("1", "8") " }\n"
        " op { name: 'out' type: 'NetOutput' input: 'cat_k:0' input: 'cat_v:0' }\n"
        "}\n";
    /* clang-format on */
    g_autofree char *path = tu_write_temp(text, strlen(text), ".txt");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv->layers, 1);
    CU_ASSERT_EQUAL_FATAL(kv->n_tensors, 2);
    CU_ASSERT_EQUAL(kv->kv_heads, 2);
    CU_ASSERT_EQUAL(kv->head_dim, 16);
    CU_ASSERT_EQUAL(kv->dtype, FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(kv->bytes_per_token, 2 * 2 * 16 * 2);
    CU_ASSERT_TRUE(kv->tensors[1].value);
    CU_ASSERT_STRING_EQUAL(kv->tensors[0].present->name, "cat_k:0");
    fp_analysis_opts o = {.device = "ascend910b"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->kv_bytes, 2 * 8 * kv->bytes_per_token / 2);
    CU_ASSERT_EQUAL(a->kv_past_bytes, 2 * 7 * kv->bytes_per_token / 2);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->res.memory->arena, 2 * 512); /* the two new tokens alone, 64 B each, 512-aligned */
    g_unlink(path);
}

/* Hugging Face-like decoders of bench/gen_hf_decoders.py --kv: 2 layers of 2 heads of 32, a
 * [batch, 1, new, total] boolean mask, MHA (hf_mha_div_bool_sig_plain_kv) and GQA with one KV head
 * repeated by repeat_kv's Expand and Reshape (hf_gqa_xx_bool_silu_plain_kv). */
#define HF_KV FP_SOURCE_DIR "/tests/data/decoder/"

/* A decode step at 4096 tokens on the A100 profile, the headroom searched or not. */
static fp_analysis *hf_step(const char *path, bool headroom)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.device = "a100", .context = 4096, .phase = "decode", .headroom = {.on = headroom}};
    fp_analysis *a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NULL(err);
    return a;
}

/* No input declares the total tokens but the mask (rank 4) and the present outputs: the total is
 * found there, so a decode step binds every dim (no value of unknown size; the headroom is
 * computed). The MHA decoder's largest batch is within 3% of the KV-cache bound, the usable memory
 * less the weights over one sequence's cache: ORT's graph keeps no copy of K (its Transpose goes
 * into FusedMatMul's transB; a copy would take a fourth of the cache per sequence), what is left
 * being one layer's attention scores and the mask. */
static void test_hf_mha_headroom(void)
{
    g_autoptr(fp_analysis) a = hf_step(HF_KV "hf_mha_div_bool_sig_plain_kv.onnx", true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->kv);
    CU_ASSERT(g_strcmp0(a->kv->total_dim, "total_sequence_length") == 0);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->res.unknown_values, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom);
    uint64_t per_seq = a->kv->bytes_per_token * 4096;
    CU_ASSERT_EQUAL(per_seq, (uint64_t)2 * 2 * 2 * 32 * 4 * 4096); /* layers, K and V, heads, dim, fp32 */
    int64_t bound = (int64_t)((a->headroom->usable - a->headroom->weight_bytes) / per_seq);
    CU_ASSERT(a->headroom->max_batch <= bound);
    CU_ASSERT(a->headroom->max_batch * 100 >= bound * 97);
    CU_ASSERT_EQUAL(a->headroom->outside_at_max, (uint64_t)a->headroom->max_batch * per_seq);
    tu_run_result r = tu_run((const char *[]){"headroom", HF_KV "hf_mha_div_bool_sig_plain_kv.onnx", "--context",
                                              "4096", "--phase", "decode", "-d", "a100", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.err, "");
    g_autofree char *line = g_strdup_printf("max batch   %" G_GINT64_FORMAT "\n", a->headroom->max_batch);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, line));
    tu_run_clear(&r);
}

/* The GQA decoder: the expanded K and V that ORT's graph materializes (repeat_kv's Expand, its
 * Reshape a view) are live at the peak, each the size of every head's cache of one layer, and the
 * report's JSON names them there (their producers), with no value of unknown size. */
static void test_hf_gqa_peak(void)
{
    g_autoptr(fp_analysis) a = hf_step(HF_KV "hf_gqa_xx_bool_silu_plain_kv.onnx", false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.unknown_values, 0);
    const fp_memory_result *mem = a->res.memory;
    g_autoptr(GPtrArray) expands = g_ptr_array_new();
    for (uint32_t i = 0; i < mem->n_peak; i++)
        if (mem->peak[i].producer && mem->peak[i].producer->op == FP_OP_EXPAND) {
            CU_ASSERT(mem->peak[i].bytes >= (uint64_t)2 * 32 * 4 * 4096); /* heads, dim, fp32, tokens */
            g_ptr_array_add(expands, (gpointer)mem->peak[i].producer->name);
        }
    CU_ASSERT_EQUAL_FATAL(expands->len, 2);
    tu_run_result r = tu_run((const char *[]){"report", HF_KV "hf_gqa_xx_bool_silu_plain_kv.onnx", "-f", "json",
                                              "--context", "4096", "-d", "a100", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.err, "");
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "unknown_values"), 0);
    JsonArray *peak = json_object_get_array_member(json_object_get_object_member(root, "memory"), "peak_tensors");
    guint named = 0;
    for (guint i = 0; i < json_array_get_length(peak); i++) {
        JsonObject *t = json_array_get_object_element(peak, i);
        const char *producer = json_object_get_null_member(t, "producer")
                                   ? NULL
                                   : json_object_get_string_member(t, "producer");
        for (guint k = 0; k < expands->len; k++)
            named += g_strcmp0(producer, expands->pdata[k]) == 0;
    }
    CU_ASSERT_EQUAL(named, 2);
    tu_run_clear(&r);
}

/* The Whisper-style sample (Optimum's names): the self-attention K and V a Concat extends (2 layers
 * of 4 heads x 16, float32: 1024 bytes per token) and the cross-attention K and V of the encoder's
 * 1500 frames, found by name, which hold 2 x 2 x 4 x 1500 x 16 x 4 = 1536000 bytes per sequence
 * whatever the context: the cache held is the self part at the context plus that, at every
 * batch, and the cross inputs are not in the arena. */
static void test_cross_attention(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(WHISPER, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv->n_tensors, 4);
    CU_ASSERT_EQUAL(kv->layers, 2);
    CU_ASSERT_EQUAL(kv->bytes_per_token, 2 * 2 * 4 * 16 * 4);
    CU_ASSERT_STRING_EQUAL(kv->past_dim, "past_decoder_sequence_length");
    CU_ASSERT_EQUAL_FATAL(kv->n_cross, 4);
    CU_ASSERT_EQUAL(kv->cross_layers, 2);
    CU_ASSERT_EQUAL(kv->cross_tokens, 1500);
    CU_ASSERT_PTR_NULL(kv->cross_dim);
    CU_ASSERT_STRING_EQUAL(kv->cross[3].past->name, "past_key_values.1.encoder.value");
    CU_ASSERT(kv->cross[3].value && kv->cross[3].layer == 1 && !kv->cross[2].value);
    const uint64_t cross = 2 * 2 * 4 * 1500 * 16 * 4, self = 2 * 2 * 4 * 16 * 4;
    for (int64_t batch = 1; batch <= 3; batch += 2) {
        for (int64_t context = 100; context <= 1000; context += 900) {
            fp_analysis_opts o = {.batch = batch, .context = context};
            g_autoptr(fp_analysis) a = fp_analysis_run(WHISPER, &o, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
            CU_ASSERT_EQUAL(fp_kv_cache_cross(a->kv, FP_DT_UNDEFINED, 0), (uint64_t)batch * cross);
            CU_ASSERT_EQUAL(fp_kv_cache_cross_per_sequence(a->kv, FP_DT_FLOAT16), cross / 2);
            CU_ASSERT_EQUAL(a->kv_bytes, (uint64_t)batch * (cross + (uint64_t)context * self));
            g_autoptr(GHashTable) outside = fp_kv_cache_outside(a->kv);
            CU_ASSERT_EQUAL(g_hash_table_size(outside), 4 + 4 + 4);
        }
    }
}

/* The commands on the Whisper-style sample at batch 2 and a context of 100: report's JSON
 * kv_cache.cross and its text, memory's kv_cross_bytes, headroom's kv_cross_bytes_per_sequence. */
static void test_cross_attention_cli(void)
{
    const uint64_t cross = 2 * 2 * 4 * 1500 * 16 * 4, self = 2 * 2 * 4 * 16 * 4;
    tu_run_result r = tu_run(
        (const char *[]){"report", WHISPER, "-f", "json", "--batch", "2", "--context", "100", "--no-headroom", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *kv = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "kv_cache");
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(json_object_get_int_member(kv, "bytes"), 2 * (cross + 100 * self));
    CU_ASSERT(json_object_get_null_member(kv, "config"));
    JsonObject *c = json_object_get_object_member(kv, "cross");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "layers"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "tokens"), 1500);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "bytes_per_sequence"), cross);
    CU_ASSERT_EQUAL(json_object_get_int_member(c, "bytes"), 2 * cross);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(c, "tensors")), 4);
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", WHISPER, "--batch", "2", "--context", "100", "--no-headroom", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cross-attention K and V of 2 layers at the encoder's 1500 tokens, fixed "
                                         "whatever the context: 1536000 bytes per sequence"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "; 4 cross-attention tensors)"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"memory", WHISPER, "-f", "json", "--batch", "2", "--context", "100", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"kv_cross_bytes\" : 3072000"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"headroom", WHISPER, "-f", "json", "--memory", "1GiB", "--context", "100", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"kv_cross_bytes_per_sequence\" : 1536000"));
    tu_run_clear(&r);
}

/* headroom on the Whisper-style sample: the cache at each batch holds the cross-attention K and V
 * of every sequence beside the self part, so the max batch is a brute-force search over weights +
 * arena + (cross + context x self) per batch. */
static void test_cross_attention_headroom(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = fp_device_load("cpu-avx2", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    dev->memory_bytes = (uint64_t)64 << 20;
    fp_analysis_opts o = {.device_profile = dev, .context = 256, .headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(WHISPER, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom);
    uint64_t usable = dev->memory_bytes - dev->memory_bytes / 10;
    int64_t brute = 0;
    for (int64_t b = 1; b <= 64; b++) {
        fp_analysis_opts ob = o;
        ob.headroom.on = false;
        ob.batch = b;
        g_autoptr(fp_analysis) x = fp_analysis_run(WHISPER, &ob, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        if (x->res.memory->weight_bytes + x->res.memory->arena + x->kv_bytes > usable)
            break;
        CU_ASSERT_EQUAL(x->kv_bytes, (uint64_t)b * (2 * 2 * 4 * 1500 * 16 * 4 + 256 * 2 * 2 * 4 * 16 * 4));
        brute = b;
    }
    CU_ASSERT(brute > 1 && brute < 64);
    CU_ASSERT_EQUAL(a->headroom->max_batch, brute);
    /* the capacity in tokens leaves the cross part of every sequence out */
    fp_headroom_decoder dec = fp_headroom_decoder_of(a->kv, &a->precision, NULL);
    const fp_headroom_result *r = a->headroom;
    uint64_t used = r->weight_bytes + r->arena_at_max + (uint64_t)brute * 2 * 2 * 4 * 1500 * 16 * 4;
    CU_ASSERT_EQUAL(fp_report_kv_capacity_tokens(&dec, r), (int64_t)((usable - used) / (2 * 2 * 4 * 16 * 4)));
}

FP_TEST_SUITE(register_decoder)
{
    CU_pSuite s = CU_add_suite("decoder", NULL, NULL);
    CU_add_test(s, "sample", test_sample);
    CU_add_test(s, "none", test_none);
    CU_add_test(s, "bound", test_bound);
    CU_add_test(s, "group_query_attention", test_group_query_attention);
    CU_add_test(s, "packed_attention", test_packed_attention);
    CU_add_test(s, "default_context", test_default_context);
    CU_add_test(s, "token_dims", test_token_dims);
    CU_add_test(s, "phase_context", test_phase_context);
    CU_add_test(s, "bad_step", test_bad_step);
    CU_add_test(s, "headroom_brute_force", test_headroom_brute_force);
    CU_add_test(s, "step_latency", test_step_latency);
    CU_add_test(s, "report_no_flags", test_report_no_flags);
    CU_add_test(s, "ge_graph", test_ge_graph);
    CU_add_test(s, "hf_mha_headroom", test_hf_mha_headroom);
    CU_add_test(s, "hf_gqa_peak", test_hf_gqa_peak);
    CU_add_test(s, "cross_attention", test_cross_attention);
    CU_add_test(s, "cross_attention_headroom", test_cross_attention_headroom);
    CU_add_test(s, "cross_attention_cli", test_cross_attention_cli);
}
