/* decoder.h - the KV cache of a decoder found from its graph (analysis/decoder.c): which graph
 * inputs are past keys and values, which outputs the present ones, their heads, head dim and dtype,
 * and which symbolic dims are the batch and the past tokens. Rules and sources:
 * docs/memory.md, "KV cache". */
#ifndef FP_ANALYSIS_DECODER_H
#define FP_ANALYSIS_DECODER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "frontends/genai/genai.h"
#include "ir/graph.h"
#include "passes/shape/shapes.h"

/* One cached tensor: a past input and the present output that extends it. */
typedef struct {
    const fp_value *past;    /* graph input [batch, kv_heads, past tokens, head_dim], or packed */
    const fp_value *present; /* graph output holding past + new tokens, or NULL when none was found */
    bool value;              /* V (else K) */
    bool packed;             /* K and V in one [2, batch, heads, tokens, head_dim] tensor: the past
                                (input 4) and present (output 1) of com.microsoft Attention */
    bool paged;              /* in onnxruntime-genai's paged layout [blocks, block_size, kv_heads,
                                head_dim]: one pool of block slots every sequence shares, past and
                                present one buffer (src/engine/paged_key_value_cache.cpp) */
    uint32_t layer;          /* 0-based, in input order: the n-th K and the n-th V */
} fp_kv_tensor;

typedef struct {
    fp_kv_tensor *tensors; /* in graph input order */
    uint32_t n_tensors;
    uint32_t layers;          /* pairs of K and V */
    int64_t kv_heads;         /* the same for every tensor; -1 when they differ or are unknown */
    int64_t head_dim;         /* likewise */
    fp_dtype dtype;           /* of the past inputs; FP_DT_UNDEFINED when they differ */
    uint64_t bytes_per_token; /* K and V of every layer for one token of one sequence; 0 unknown */
    const char *batch_dim;    /* the symbol of axis 0 when every past input shares it, else NULL */
    const char *past_dim;     /* the symbol of axis 2 likewise */
    const char *new_dim;      /* the new tokens: the symbol of axis 1 of a rank-2 integer input
                                (input_ids) whose axis 0 is batch_dim; NULL when none */
    const char *total_dim;    /* past + new tokens as a symbol of its own (axis 1 of another rank-2
                                integer input: onnxruntime-genai's attention_mask), else the present
                                outputs' token axis when they share a symbol of its own; NULL when none */
    char *config;             /* the genai_config.json the cache was checked against and read from
                                 (fp_kv_cache_configure); NULL: the facts are the graph's alone */
    int64_t max_length;       /* its search.max_length (else model.context_length); 0: none */
    bool share_buffer;        /* its search.past_present_share_buffer: each past input and its present
                                 output are one buffer of max_length tokens (at least the tokens held),
                                 written in place */
    fp_genai_config *genai;   /* that config (owned), for the report's facts; NULL when config is */
    fp_kv_tensor *cross;      /* an encoder-decoder's cross-attention K and V (present always NULL):
                                 graph inputs [batch, heads, encoder tokens, head_dim] the encoder's
                                 output fills once, of the encoder's length, whatever the context; in
                                 input order; NULL when none */
    uint32_t n_cross;
    uint32_t cross_layers; /* pairs of cross K and V */
    const char *cross_dim; /* the symbol of their token axis (2) when they all share one, else NULL */
    int64_t cross_tokens;  /* their declared token axis when all declare the same number, else -1 */
    fp_kv_tensor *state;   /* a hybrid decoder's fixed-size state per sequence, not per token: the
                              conv layers of onnxruntime-genai's LFM2Cache, graph inputs [batch,
                              channels, conv_cache_size] its config's past_conv_names name, with the
                              present_conv_names outputs; in input order; NULL when none */
    uint32_t n_state;
} fp_kv_cache;

/* Tokens held per sequence when nothing binds the token dims: a decode step (1 new token) at
 * this context. */
#define FP_DECODER_DEFAULT_CONTEXT 2048

/* Cross-attention tensors are found by name (analysis/decoder_cross.c): graph inputs of rank 4
 * and a float dtype, not in the self-attention cache, called as Hugging Face Optimum's Whisper and
 * Marian exports call them (past_key_values.N.encoder.key / .value) or as onnxruntime-genai's
 * Whisper (past_key_cross_N, past_value_cross_N); with a genai_config.json, by its
 * cross_past_key_names and cross_past_value_names instead. */

/* The KV cache of m's main graph as declared (before shapes are bound): the graph inputs of rank
 * 4 that a Concat on axis 2 (or -2; GE: concat_dim) extends into a graph output as its first
 * input (directly or through a GE Data op), or that com.microsoft
 * GroupQueryAttention (inputs 3, 4) or MultiHeadAttention (inputs 6, 7) reads as past key and
 * value, and those of rank 5 com.microsoft Attention reads as its packed past (input 4). The axes
 * the fields below name are those of the BNSH layout, one further in a packed tensor. NULL when
 * the model has none. Free with fp_kv_cache_free. */
fp_kv_cache *fp_kv_cache_find(const fp_model *m);
void fp_kv_cache_free(fp_kv_cache *kv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_kv_cache, fp_kv_cache_free)

/* The cache of these tensors (an array of fp_kv_tensor, taken; at least one) of m's main graph
 * holding `layers` layers, its heads, head dim, dtype, bytes per token and token dims summarized
 * from the tensors' declared shapes as fp_kv_cache_find does. */
fp_kv_cache *fp_kv_cache_new(const fp_model *m, GArray *tensors, uint32_t layers);

/* The cross-attention tensors found from m's graph inputs by name (above) into kv (whose self
 * tensors they must not be), with their layers, token dim and length. */
void fp_kv_cache_find_cross(fp_kv_cache *kv, const fp_model *m);

/* Replaces kv's cross-attention tensors with `tensors` (an array of fp_kv_tensor, taken; may be
 * empty) of `layers` layers, and sets their token dim and length. */
void fp_kv_cache_set_cross(fp_kv_cache *kv, GArray *tensors, uint32_t layers);

/* The cache onnxruntime-genai's config c names in m (analysis/decoder_config.c): the graph inputs
 * that its past name templates (past_key_names, past_value_names, past_names) give for some layer
 * number, with the outputs its present templates give for the same number; the layers are those
 * named (a hybrid model's conv or linear-attention layers hold none), at most num_hidden_layers,
 * each a "full_attention" one where c has layer_types. With c's engine.dynamic_batching the named
 * tensors are paged ([blocks, block_size, kv_heads, head_size]). It replaces *kv (the cache found
 * from the graph, or NULL), which must name no other input, and takes c's max_length and
 * past_present_share_buffer, and *c itself (set NULL). Its cross-attention tensors are those that
 * c's cross_past_key_names and cross_past_value_names name (float, rank 4), else those found by
 * name (fp_kv_cache_find_cross); its state tensors those c's past_conv_names names (float, rank
 * 3, of layers that do not attend). When c names no input and the graph has no cache, *kv stays
 * NULL: false only when `asked` (the config was given by option). False with one line naming c's
 * file and the field that disagrees with the model: names, more layers than num_hidden_layers, a
 * named tensor not a float one of rank 4 (5 for past_names, 3 for past_conv_names), layer_types
 * of another length than num_hidden_layers or calling a KV layer otherwise, num_key_value_heads,
 * head_size, block_size or num_blocks against the declared dims. */
bool fp_kv_cache_configure(fp_kv_cache **kv, fp_genai_config **c, const fp_model *m, bool asked, GError **error);

/* Whether kv is onnxruntime-genai's paged cache (its tensors' `paged`): a pool of a fixed number
 * of token slots, not per sequence; it has no batch, past or total dim and no step. */
bool fp_kv_cache_paged(const fp_kv_cache *kv);

/* The state tensors' bytes for one sequence as inferred now (each input's axes from 1 on, at its
 * own dtype; one copy: onnxruntime-genai holds a past and a present buffer of each); 0 when there
 * are none or a size is unknown. */
uint64_t fp_kv_cache_state_per_sequence(const fp_kv_cache *kv);

/* The step an analysis asks of a decoder (--context, --phase). */
typedef struct {
    int64_t context;       /* tokens per sequence; 0: FP_DECODER_DEFAULT_CONTEXT */
    const char *phase;     /* "decode", "prefill", or NULL (decode) */
    const char *batch_dim; /* as fp_bind_is_batch */
    bool inputs;           /* the tokens are bound otherwise (--input shapes, a profile's shapes):
                               no token dim is bound here */
    bool training;         /* a training step (phase NULL): the whole sequence of `context` tokens at
                              once, no past (a prefill's binding), said as such; a --dim binding
                              the new tokens sets the context */
} fp_decoder_step;

/* Whether phase is a step fp_kv_cache_bind takes (decode, prefill; NULL: the default); false with
 * the error naming --phase. */
bool fp_decoder_phase_check(const char *phase, GError **error);

/* Appends to *dims (n entries, g_renew'd, as fp_bind_parse_dims makes them) the bindings of the
 * decoder's token dims that no entry names, for the step asked: decode is 1 new token and
 * context - 1 past, prefill and training context new tokens and no past, the total is the context;
 * the batch is never bound here. kv may be NULL (a model without a KV cache: nothing to bind).
 * *note (g_free; NULL when nothing was added) is a line for the binding note. False, with an error
 * naming the option (--context / --phase, or --seq for training), for a phase that is neither
 * decode nor prefill, a context below 1, or a step asked of a model (m->path) without a KV cache. */
bool fp_kv_cache_bind(const fp_kv_cache *kv, const fp_model *m, const fp_decoder_step *step, fp_dim_binding **dims,
                      size_t *n, char **note, GError **error);

/* The cache a runtime holds for the point m is inferred at, one buffer per tensor that past and
 * present share (as onnxruntime-genai's past_present_share_buffer, vLLM and TensorRT-LLM allocate
 * it): each present tensor (the past input where no present was found), its token axis (2) at
 * least kv->max_length when kv->share_buffer, rounded up to a multiple of `block` (0: not paged),
 * at `dtype` (FP_DT_UNDEFINED: its own), plus the cross-attention tensors (fp_kv_cache_cross).
 * UINT64_MAX when some size is unknown or the sum overflows. */
uint64_t fp_kv_cache_held(const fp_kv_cache *kv, fp_dtype dtype, int64_t block);

/* The cross-attention tensors as inferred now (every sequence's K and V at the encoder's length),
 * at `dtype` (FP_DT_UNDEFINED: their own), rounded up to blocks as fp_kv_cache_held: 0 when there
 * are none, UINT64_MAX when some size is unknown. Part of fp_kv_cache_held. */
uint64_t fp_kv_cache_cross(const fp_kv_cache *kv, fp_dtype dtype, int64_t block);
/* Bytes of KV tensor v (rank 4, or 5 packed, as inferred now) from axis `from` on, its token axis
 * (the one before the last) at least `tokens` and rounded up to a multiple of block (0: not), at
 * dtype (FP_DT_UNDEFINED: its own); false when unknown, on overflow or for another rank. */
bool fp_kv_tensor_bytes(const fp_value *v, int from, fp_dtype dtype, int64_t tokens, int64_t block, uint64_t *bytes);

/* The cross-attention tensors' bytes for one sequence as inferred now (heads x encoder tokens x
 * head_dim of each, at `dtype` as above); 0 when there are none or a size is unknown. */
uint64_t fp_kv_cache_cross_per_sequence(const fp_kv_cache *kv, fp_dtype dtype);

/* A cache and its what-ifs, for a search that sizes it at each batch: fp_kv_sizing_held is an
 * fp_headroom_opts.outside_bytes with a sizing as its data. */
typedef struct {
    const fp_kv_cache *kv;
    fp_dtype dtype;
    int64_t block;
} fp_kv_sizing;
uint64_t fp_kv_sizing_held(void *sizing);

/* The past inputs as inferred now at `dtype` (FP_DT_UNDEFINED: their own): the copy a runtime
 * that keeps past and present apart holds besides the cache (ONNX Runtime running a Concat
 * export); 0 when kv->share_buffer (the past is the cache). UINT64_MAX when unknown. */
uint64_t fp_kv_cache_past(const fp_kv_cache *kv, fp_dtype dtype);

/* Tokens each sequence holds as m is inferred now: axis 2 (3 packed) of the first present tensor
 * (of its past input where none was found); -1 when unknown. */
int64_t fp_kv_cache_tokens(const fp_kv_cache *kv);

/* The step m is inferred at, from the first cached tensor's inferred shapes: sequences (axis 0),
 * past tokens (the past input's axis 2) and new tokens (the present's axis 2 less the past's).
 * False when a size is unknown or no present tensor was found. */
bool fp_kv_cache_step(const fp_kv_cache *kv, int64_t *batch, int64_t *past, int64_t *new_tokens);

/* The cache's dtype at a KV what-if: `what_if`, else the tensors' own (FP_DT_UNDEFINED when they
 * differ). */
fp_dtype fp_kv_cache_dtype_at(const fp_kv_cache *kv, fp_dtype what_if);

/* kv->bytes_per_token at `dtype` (FP_DT_UNDEFINED: the tensors' own); 0 when unknown. */
uint64_t fp_kv_cache_token_bytes(const fp_kv_cache *kv, fp_dtype dtype);

/* The set (keys: const fp_value *) of kv's past inputs, present outputs and cross-attention inputs,
 * which live in the cache rather than in the activation arena (fp_memory_opts.outside).
 * g_hash_table_unref. */
GHashTable *fp_kv_cache_outside(const fp_kv_cache *kv);

#endif
