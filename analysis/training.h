/* training.h - a training step analyzed (analysis/training.c): the exported forward graph loaded
 * and bound at a batch (fp_analysis_run stopped after shapes: the framework trains the ops the
 * export holds), what backward saves, the step's memory, and the training headroom: the largest
 * batch whose step fits the device, each batch inferred again on the one analysis. A decoder with a
 * KV cache trains as a full sequence (no past, total = sequence, its present outputs not kept) with
 * a causal LM's cross-entropy on its logits. */
#ifndef FP_ANALYSIS_TRAINING_H
#define FP_ANALYSIS_TRAINING_H

#include "analysis/analysis.h"
#include "passes/training/recompute.h"
#include "passes/training/step.h"

typedef struct {
    fp_analysis_opts analysis; /* the device, the bindings (batch 0: the model's own, a symbolic
                                    batch bound to 1), a decoder's sequence (context: --seq; 0:
                                    FP_DECODER_DEFAULT_CONTEXT); its stop, cost, headroom and
                                    training are set here */
    fp_train_optimizer optimizer;
    fp_train_precision precision;
    fp_train_autograd autograd;    /* the PyTorch release whose saves are counted (default 2) */
    char **frozen;                 /* initializers not trained (--frozen), NULL-terminated; may be NULL */
    fp_analysis_headroom headroom; /* on: search the largest batch that fits; the capacity (0: the
                                    device's), reserve (NULL: 10%) and max batch (0: 2^24) */
    double budget_share;           /* --budget P%: of the saved activations (0: none) */
    uint64_t budget_bytes;         /* --budget SIZE (0: none) */
} fp_training_opts;

/* The longest sequence a decoder is trained at (--seq): 2^24 tokens, its attention scores still
 * sized in 64 bits. */
#define FP_TRAINING_MAX_SEQ ((int64_t)1 << 24)

#define FP_TRAINING_CURVE 5 /* budget points: 100%, 75%, 50%, 25% of the saved activations, the minimum */

typedef struct {
    double share; /* of the saved activations; 0 for the minimum */
    uint64_t budget;
    bool feasible;
    uint64_t flops;
    double time_s;
} fp_training_point;

typedef struct {
    fp_analysis *a; /* the analysis at the batch asked (a->model: the trained graph) */
    const fp_device *device;
    int64_t batch;       /* the batch analyzed (a->batch, or 0 for a model without one) */
    fp_train_opts train; /* the autograd options, the same at every batch the search tries */
    /* a decoder (a->kv): trained as a full sequence, without its cache */
    int64_t sequence;         /* tokens per sequence as bound; 0: no decoder, -1: unknown */
    int64_t past;             /* past tokens as bound (0 unless --dim binds them); -1: unknown */
    uint32_t dropped_outputs; /* its present outputs, removed from the step's outputs */
    fp_train_saved saved;
    fp_train_step step;
    bool searched;           /* the headroom was searched */
    int64_t max_batch;       /* the training headroom; 0 when none fits (or not searched) */
    char *headroom_note;     /* why it was not searched, or NULL */
    uint64_t capacity_bytes; /* the device memory (or the capacity asked) */
    uint64_t reserve_bytes;  /* kept free of it */
    uint64_t usable_bytes;   /* the capacity less the reserve */
    bool planned;            /* a budget was given: the plan below */
    uint64_t budget;         /* in bytes */
    fp_rc_stages stages;
    fp_rc_plan plan, chen; /* the best plan at the budget; Chen's sqrt(n) baseline */
    fp_training_point curve[FP_TRAINING_CURVE];
    int64_t max_batch_planned;   /* the headroom with a plan at the budget (its share, or its bytes) */
    int64_t max_batch_recompute; /* the headroom with the most recomputation: at each batch, the plan at
                                    the least budget any plan fits */
    uint32_t headroom_batches;   /* batches the searches analyzed (each once, whatever the searches) */
    /* a graph that holds its own backward (GE training graphs): its memory from its liveness */
    uint32_t backward_ops;   /* ops of the backward pass (*Grad, *Backprop*), 0 for a forward graph */
    uint32_t optimizer_ops;  /* Apply* ops */
    uint64_t variable_bytes; /* Variable outputs: parameters and optimizer state as the graph keeps them */
    uint64_t graph_arena;    /* the activations' planned arena, variables apart */
} fp_training;

/* Analyzes the training step of the model at path. NULL with a one-line error naming the file and
 * the object at fault. */
fp_training *fp_training_run(const char *path, const fp_training_opts *o, GError **error);
void fp_training_free(fp_training *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_training, fp_training_free)

#endif
