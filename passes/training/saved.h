/* saved.h - what a training step's backward pass keeps from the forward pass (passes/training/
 * saved.c): for every op of an exported forward graph, the tensors PyTorch autograd saves for its
 * derivative formula (inputs, outputs, auxiliaries such as max-pool indices and BatchNorm's
 * statistics), counted once per storage (views share their base's), parameters apart. Decomposed
 * exports of fused ops (SiLU, GELU, HardSwish, LayerNorm, rsqrt) save what the fused op saves. Facts and
 * sources: shared/ref/training_memory_facts.md (sections 1-3), docs/training.md. */
#ifndef FP_TRAINING_SAVED_H
#define FP_TRAINING_SAVED_H

#include <glib.h>
#include <stdint.h>

#include "ir/graph.h"

typedef enum {
    FP_TRAIN_FP32,     /* everything in the model's dtypes */
    FP_TRAIN_AMP_FP16, /* autocast to float16: matmuls and convolutions and what follows them in 16 bits */
    FP_TRAIN_AMP_BF16, /* the same in bfloat16 */
} fp_train_precision;

typedef enum {
    FP_TRAIN_AUTOGRAD_2,    /* PyTorch 2: mean(dim) keeps its input's sizes only */
    FP_TRAIN_AUTOGRAD_1_13, /* PyTorch 1.13: mean(dim) keeps its input (MeanBackward1's saved self) */
} fp_train_autograd;

typedef struct {
    fp_train_precision precision;
    fp_train_autograd autograd;  /* the release whose derivative formulas are counted */
    char *const *frozen;         /* names of initializers not trained (buffers such as a rotary
                                    cache, frozen weights), NULL-terminated; NULL: none */
    bool gpu;                    /* a CUDA device: dropout keeps a 1-byte mask; on a CPU, a noise tensor of X's dtype */
    const fp_value *loss_logits; /* a causal LM's logits [B, S, V] (a main-graph value): the step's
                                    cross-entropy on them is counted (its saves); NULL: the
                                    forward graph alone */
} fp_train_opts;

typedef struct {
    const fp_node *node;     /* the op that saves it (a decomposed group: its first op) */
    const fp_value *value;   /* the tensor saved; NULL for an auxiliary the op makes */
    const fp_value *storage; /* the storage it keeps alive (views resolved); NULL for an auxiliary */
    const char *what;        /* "input 0", "output", "indices", "mean, inverse std", "dropout noise" */
    const char *why;         /* the derivative's need, short */
    uint64_t bytes;          /* the storage's bytes (an auxiliary: its own) */
    bool counted;            /* the first item keeping its storage: counted in saved_bytes */
} fp_saved_item;

typedef struct {
    GArray *items;            /* fp_saved_item, in node order */
    uint64_t saved_bytes;     /* distinct storages and auxiliaries (parameters not counted) */
    uint64_t parameter_bytes; /* trainable parameters (float initializers; BatchNorm's running stats apart) */
    uint64_t parameters;      /* their elements */
    uint64_t buffer_bytes;    /* BatchNorm running mean and variance (not trained) */
    uint8_t *requires_grad;   /* per value id of the main graph: depends on a parameter */
    uint8_t *in_group;        /* per node id: 1 when a recognized decomposed op's later member */
    uint8_t *half;            /* per value id under AMP: a float32 value autocast holds in 16 bits; else NULL */
    uint32_t unknown;         /* saved tensors of unknown size (not counted) */
    uint32_t decomposed;      /* decomposed ops recognized (each counted as the fused op) */
    GPtrArray *notes;         /* one line each: the decomposed forms recognized, per kind */
} fp_train_saved;

/* Which tensors m's main graph keeps for backward, after shapes. The result is owned by the
 * caller (fp_train_saved_clear). */
void fp_train_saved_run(const fp_model *m, const fp_train_opts *o, fp_train_saved *out);
void fp_train_saved_clear(fp_train_saved *s);

/* Whether value v of the main graph is a trainable parameter: a float initializer of more than one
 * element that no BatchNormalization reads as its running mean or variance (fp_train_opts.frozen
 * may name more that are not trained). */
bool fp_train_is_parameter(const fp_value *v);

/* The value whose storage v shares: v, or the base of the views PyTorch makes without a copy
 * (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Split, Expand, a select, a Cast to its
 * own dtype). */
const fp_value *fp_train_storage_of(const fp_value *v);

/* Whether op n records for backward: an input of it requires grad (s: fp_train_saved_run's). */
bool fp_train_records(const fp_train_saved *s, const fp_node *n);

/* Whether op is one of the products autograd differentiates per operand and autocast runs in 16
 * bits: Conv, ConvTranspose, MatMul, Gemm, Einsum. */
bool fp_train_is_product(fp_op op);

/* Per value id of g: the index in `order` (n ops) of the last op reading its storage (views
 * resolved; its producer's index when nothing reads it). Caller frees. */
uint32_t *fp_train_last_reads(const fp_graph *g, fp_node *const *order, uint32_t n);

/* The items of s counted in saved_bytes (the first keeper of each storage, the auxiliaries),
 * largest first. Free with g_ptr_array_unref. */
GPtrArray *fp_train_saved_counted(const fp_train_saved *s);

/* Bytes of v at the training precision (16 bits for a float activation autocast makes so). */
uint64_t fp_train_value_bytes(const fp_train_saved *s, const fp_value *v, bool *known);

#endif
