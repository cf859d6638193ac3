/* precision.h - the storage what-ifs (analysis/precision.c): the weights cast or quantized to
 * another dtype (--weight-dtype, --group-size), a decoder's KV cache in another dtype and in whole
 * blocks (--kv-dtype, --kv-block). They change bytes held, not the graph. Rules and sources:
 * docs/memory.md, "Precision what-ifs". */
#ifndef FP_ANALYSIS_PRECISION_H
#define FP_ANALYSIS_PRECISION_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/graph.h"
#include "passes/storage.h"

/* Weights in 4 bits take one scale per this many weights along the reduction axis, when
 * --group-size does not say. */
#define FP_PRECISION_DEFAULT_GROUP 128

typedef struct {
    fp_dtype weight;  /* FLOAT, FLOAT16, BFLOAT16 (every float initializer cast), FLOAT8E4M3FN, INT8,
                         INT4 (the weights of MatMul, Gemm and Conv quantized); UNDEFINED: as stored */
    int64_t group;    /* INT4: weights per scale along the reduction axis (FP_PRECISION_DEFAULT_GROUP) */
    fp_dtype kv;      /* the KV cache's dtype: FLOAT, FLOAT16, BFLOAT16, FLOAT8E4M3FN, INT8;
                         UNDEFINED: the past inputs' own */
    int64_t kv_block; /* tokens per KV block (paged cache: each sequence in whole blocks); 0: none */
} fp_precision;

/* The what-ifs from the option texts (each NULL or 0 when not given): --weight-dtype
 * fp32|fp16|bf16|fp8|int8|int4, --group-size G (int4 only; a positive even number), --kv-dtype
 * fp32|fp16|bf16|fp8|int8, --kv-block B (positive). False with an error naming the option. */
bool fp_precision_parse(const char *weight, int64_t group, const char *kv, int64_t kv_block, fp_precision *out,
                        GError **error);

/* False with an error naming the file and the option when p asks a KV what-if of a model
 * without a KV cache (has_kv false). */
bool fp_precision_check(const fp_precision *p, bool has_kv, const char *path, GError **error);

/* Whether p asks anything. */
bool fp_precision_any(const fp_precision *p);

/* The option text of a dtype the what-ifs take ("int4", "fp16"); "as stored" for UNDEFINED. */
const char *fp_precision_dtype_name(fp_dtype t);

/* The main graph's weights at a weight what-if. */
typedef struct {
    uint64_t stored_bytes;   /* every initializer and Constant a node or graph output reads, as stored */
    uint64_t bytes;          /* the same initializers at the what-if */
    uint64_t changed_stored; /* of stored_bytes, the initializers the what-if converts */
    uint64_t changed_bytes;  /* what they take converted (values, scales, zero points) */
    uint32_t n_changed;
    uint64_t kept_bytes;      /* the initializers left in their own dtype (bytes - changed_bytes):
                                 embeddings, the LM head, norms and biases when quantizing; integer
                                 tensors always */
    uint64_t quantized_bytes; /* of stored_bytes, weights already stored quantized: integer tensors of
                                 8 bits or less and rank 2 or more (MatMulNBits' packed B and zero
                                 points, GatherBlockQuantized's table, QDQ's int8 weights); every
                                 what-if keeps them as stored */
} fp_weight_plan;

/* False with one line naming the file and --weight-dtype when p quantizes (fp8, int8, int4) a model
 * whose weights w (fp_precision_weights) are already stored quantized and that has no float
 * MatMul, Gemm or Conv weight for the what-if to quantize: it would change nothing. */
bool fp_precision_check_weights(const fp_precision *p, const fp_weight_plan *w, const char *path, GError **error);

/* bytes - stored_bytes: what the weight what-if adds to the weights (fp_headroom_opts.weight_delta). */
int64_t fp_weight_plan_delta(const fp_weight_plan *w);
/* `planned` weight bytes (a memory plan's, a stage's) with that delta, 0 at the least. */
uint64_t fp_weight_plan_apply(const fp_weight_plan *w, uint64_t planned);

/* The weight bytes of m's main graph under p->weight (as declared, before any pass: the consumers
 * are the exported ops). Quantized: each float initializer of rank >= 2 read only as the weight of
 * MatMul (input B, [.., K, N]), Gemm (B; [N, K] with transB) or Conv (W, [N, K / kh kw ...]) whose
 * result is not a graph output (the LM head stays): fp8 N K bytes + one fp32 scale; int8 N K
 * bytes + one fp16 scale per output channel; int4 as ONNX Runtime's MatMulNBits stores it, N
 * ceil(K/G) G/2 bytes + N ceil(K/G) fp16 scales + N ceil(ceil(K/G)/2) bytes of 4-bit zero points.
 * Cast (fp32, fp16, bf16): every float initializer. storage (may be NULL) receives the bytes of
 * every converted initializer (fp_storage_set_bytes), for the cost model. */
void fp_precision_weights(const fp_model *m, const fp_precision *p, fp_weight_plan *out, fp_storage *storage);

#endif
