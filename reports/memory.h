/* memory.h - the `fuseplan memory` and `fuseplan headroom` reports as text (JSON: reports/json.h). */
#ifndef FP_REPORT_MEMORY_H
#define FP_REPORT_MEMORY_H

#include <stdio.h>

#include "ir/diag.h"
#include "analysis/decoder.h"
#include "analysis/precision.h"
#include "ir/graph.h"
#include "passes/memory/headroom.h"
#include "passes/memory/memory.h"
#include "passes/memory/ortplan.h"

/* Why the peak is where it is, one line each: multi-input nodes holding their inputs across it,
 * long-lived buffers (skip connections), graph inputs and outputs, subgraph workspace, what a
 * memory-aware order gains, fragmentation, unknown sizes. Caller frees (g_ptr_array_unref). */
GPtrArray *fp_report_memory_hints(const fp_memory_result *r);
/* The name a buffer is listed under: its value, or the node of a subgraph workspace. */
const char *fp_report_memory_tensor_name(const fp_memory_tensor *t);

/* What a memory plan leaves out: how the symbolic dims were bound, the weights at a weight what-if,
 * a decoder's KV cache (held apart from the arena). */
typedef struct {
    const char *batch_note;    /* how symbolic dims were bound, or NULL */
    uint32_t unknown_values;   /* values of the model whose size is unknown (fp_pipeline_result's) */
    const char *weight_dtype;  /* the weight what-if (fp_precision_dtype_name), or NULL */
    uint64_t weight_bytes;     /* the plan's weights at it (used when weight_dtype is set) */
    uint64_t weight_quantized; /* weights already stored quantized, which the what-if keeps
                                  (fp_weight_plan.quantized_bytes; used when weight_dtype is set) */
    const fp_kv_cache *kv;     /* NULL: no KV cache */
    fp_dtype kv_dtype;         /* at the what-if */
    uint64_t kv_bytes;         /* the cache held (fp_kv_cache_held); UINT64_MAX unknown */
    uint64_t kv_bytes_per_token;
    int64_t kv_block;                /* --kv-block; 0: not paged */
    const fp_ort_memory_result *ort; /* what ONNX Runtime's CPU arena holds (--planner ort), or NULL */
} fp_memory_extra;

/* Text report; at most `top` buffers live at the peak are listed (0 = all); with verbose, every
 * diagnostic too. x (may be NULL: nothing beside the plan) adds the weights at a what-if and the
 * KV cache to the totals. */
void fp_report_memory_text(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                           unsigned top, bool verbose, FILE *out);

/* The line, after `label`, saying where kv's facts came from when a genai_config.json gave some
 * (its path and model.type, the layers, the layout and its names, the heads and head size, the
 * max_length, past_present_share_buffer); nothing when the graph's alone. */
void fp_report_kv_config_text(const fp_kv_cache *kv, const char *label, FILE *out);

/* The line, after `label`, of an encoder-decoder's cross-attention K and V (their layers, the
 * encoder's tokens, bytes per sequence and held now at `dtype` in blocks of `block`, as
 * fp_kv_cache_cross); nothing without them. */
void fp_report_kv_cross_text(const fp_kv_cache *kv, fp_dtype dtype, int64_t block, const char *label, FILE *out);

/* A decoder's side of a headroom search: the cache at the what-ifs and the step searched. */
typedef struct {
    const fp_kv_cache *kv;    /* NULL: the model has no KV cache (the other members are unset) */
    fp_dtype kv_dtype;        /* at the what-if; FP_DT_UNDEFINED when the tensors' dtypes differ */
    uint64_t bytes_per_token; /* at kv_dtype; 0 unknown */
    int64_t block;            /* --kv-block; 0: not paged */
    int64_t context;          /* tokens held per sequence (fp_kv_cache_tokens); -1 unknown */
    const char *phase;        /* "decode" or "prefill" when the step bound the tokens, else NULL */
} fp_headroom_decoder;

/* The decoder's side of a headroom for cache kv (NULL: none) at what-ifs p, the step's phase as
 * the binding named it (or NULL); kv's tensors as inferred now give the context. */
fp_headroom_decoder fp_headroom_decoder_of(const fp_kv_cache *kv, const fp_precision *p, const char *phase);

/* What `headroom` was asked: the capacity, its source, the reserve, and a decoder's cache. */
typedef struct {
    const char *device; /* profile name, or NULL for --memory */
    uint64_t capacity;
    uint64_t reserve;
    const char *reserve_spec; /* as given ("10%", "2GiB") */
    const fp_memory_opts *mem;
    const char *batch_dim;
    fp_headroom_decoder dec;
    const char *weight_dtype;  /* the weight what-if (fp_precision_dtype_name), or NULL */
    uint64_t weight_quantized; /* weights already stored quantized, which it keeps (as fp_memory_extra's) */
    const char *batch_note;    /* how the analysis bound symbolic dims, or NULL */
    uint32_t unknown_values;   /* values of the model whose size is unknown (fp_pipeline_result's) */
} fp_headroom_request;

/* The tokens the memory left at the maximum after weights, activations and the cross-attention K
 * and V of max_batch sequences holds at dec->bytes_per_token, in whole blocks (vLLM's "KV cache
 * size"); -1 without a decoder or when unknown. */
int64_t fp_report_kv_capacity_tokens(const fp_headroom_decoder *dec, const fp_headroom_result *res);

void fp_report_headroom_text(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                             const fp_diag *diag, bool verbose, FILE *out);

#endif
