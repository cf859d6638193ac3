/* genai.h - onnxruntime-genai's genai_config.json: the decoder facts fuseplan reads from it (the
 * KV cache's names, cross-attention cache names, layers and their types, heads and head size, a
 * hybrid's conv state names, the paged cache of the engine's dynamic batching, search.max_length,
 * search.past_present_share_buffer).
 * The JSON is parsed by the formats module (frontends/genai/genai_json.c, json-glib) through
 * frontends/readers.h; the rest is here. Field meanings: onnxruntime-genai's src/config.h. */
#ifndef FP_GENAI_H
#define FP_GENAI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    char *path;           /* the file read */
    char *filename;       /* model.decoder.filename; NULL when absent */
    int64_t layers;       /* model.decoder.num_hidden_layers; -1 when absent */
    int64_t kv_heads;     /* model.decoder.num_key_value_heads; -1 when absent */
    int64_t heads;        /* model.decoder.num_attention_heads (the heads of genai's cross-attention
                             cache); -1 when absent */
    int64_t head_size;    /* model.decoder.head_size; -1 when absent */
    int64_t hidden_size;  /* model.decoder.hidden_size; -1 when absent */
    char *past_key;       /* model.decoder.inputs.past_key_names (default past_key_values.%d.key) */
    char *past_value;     /* ...past_value_names (default past_key_values.%d.value) */
    char *present_key;    /* model.decoder.outputs.present_key_names (default present.%d.key) */
    char *present_value;  /* ...present_value_names (default present.%d.value) */
    char *past_packed;    /* inputs.past_names: K and V of a layer in one tensor; NULL when absent */
    char *present_packed; /* outputs.present_names likewise */
    char *cross_key;      /* inputs.cross_past_key_names: an encoder-decoder's cross-attention K, of
                             the encoder's length; NULL when absent */
    char *cross_value;    /* inputs.cross_past_value_names likewise */
    char *model_type;     /* model.type ("llama", "whisper", ...); NULL when absent */
    char **layer_types;   /* model.decoder.layer_types (NULL-terminated; NULL when absent): each
                             layer's kind, "full_attention" (a KV cache) or "conv" (LFM2's state) */
    char *past_conv;      /* inputs.past_conv_names: a conv layer's state (default past_conv.%d) */
    char *present_conv;   /* outputs.present_conv_names (default present_conv.%d) */
    bool paged;           /* engine.dynamic_batching is present: the KV cache is onnxruntime-genai's
                             paged one, per layer [blocks, block_size, kv_heads, head_size] */
    int64_t block_size;   /* engine.dynamic_batching.block_size (default 256) */
    int64_t num_blocks;   /* engine.dynamic_batching.num_blocks; -1 when absent (the runtime sizes
                             the pool from free device memory) */
    int64_t max_length;   /* search.max_length, else (absent or 0) model.context_length; 0: neither */
    bool share_buffer;    /* search.past_present_share_buffer (default false) */
} fp_genai_config;

/* Whether layer `layer` of c is an attention layer (holds a KV cache): c has no layer_types, or
 * names it "full_attention" (onnxruntime-genai's LFM2Cache: every other kind is a conv layer). */
bool fp_genai_layer_attends(const fp_genai_config *c, uint32_t layer);

/* The length of the encoder's output that onnxruntime-genai runs c's model at, which its decoder's
 * cross-attention K and V hold: a Whisper's (model.type "whisper") 1500, its 3000 audio frames
 * halved by the encoder (src/models/whisper.h: AudioEncoderState's num_frames_; whisper.cpp:
 * the CrossCache of GetNumFrames() / 2); -1 for other models (the runtime takes it from the
 * encoder's input). */
int64_t fp_genai_encoder_tokens(const fp_genai_config *c);

/* Where a name template is checked: one "%d" (the layer) and no other '%'. */
bool fp_genai_template_ok(const char *tmpl);

/* Template tmpl (fp_genai_template_ok) with its %d replaced by layer. g_free. */
char *fp_genai_name(const char *tmpl, uint32_t layer);

/* Reads and checks the config at path (through the formats module). NULL with one line naming the
 * file and the field: not readable, not JSON, a member of the wrong type, a negative number, a
 * template without exactly one %d. Free with fp_genai_config_free. */
fp_genai_config *fp_genai_config_load(const char *path, GError **error);
void fp_genai_config_free(fp_genai_config *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_genai_config, fp_genai_config_free)

/* The genai_config.json in model_path's folder when there is one (g_free), else NULL. */
char *fp_genai_config_beside(const char *model_path);

/* Whether c describes the decoder at model_path: c names no decoder file, or the name of
 * model_path's file. */
bool fp_genai_config_names(const fp_genai_config *c, const char *model_path);

#endif
