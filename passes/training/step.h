/* step.h - the memory of one training step (passes/training/step.c): parameters, gradients and
 * optimizer state, the saved activations at the end of forward (passes/training/saved.h), and the
 * peak of a liveness simulation of forward, then backward in reverse order (activation gradients
 * made as each op's backward runs, saved tensors freed after the last op saving them has run),
 * then the optimizer step. FLOPs of forward and backward. Rules: docs/training.md. */
#ifndef FP_TRAINING_STEP_H
#define FP_TRAINING_STEP_H

#include "passes/training/saved.h"

typedef enum { FP_OPT_SGD, FP_OPT_MOMENTUM, FP_OPT_ADAM, FP_OPT_ADAMW } fp_train_optimizer;

/* "sgd", "momentum", "adam", "adamw"; false for anything else. */
bool fp_train_optimizer_parse(const char *s, fp_train_optimizer *out);
const char *fp_train_optimizer_name(fp_train_optimizer o);
/* "fp32", "amp-fp16", "amp-bf16". */
bool fp_train_precision_parse(const char *s, fp_train_precision *out);
const char *fp_train_precision_name(fp_train_precision p);
/* "2", "1.13": the PyTorch release whose autograd saves are counted. */
bool fp_train_autograd_parse(const char *s, fp_train_autograd *out);
const char *fp_train_autograd_name(fp_train_autograd a);

typedef struct {
    uint64_t parameter_bytes; /* the parameters as the model stores them (AMP: float32 masters) */
    uint64_t gradient_bytes;  /* one gradient per parameter, in its dtype */
    uint64_t optimizer_bytes; /* momentum: one buffer a parameter; Adam(W): two */
    uint64_t amp_cache_bytes; /* AMP: autocast's 16-bit copies of the weights, forward and backward */
    uint64_t saved_bytes;     /* saved activations at the end of forward */
    uint64_t forward_peak;    /* activations live at once in forward (saved ones included) */
    uint64_t backward_peak;   /* saved + gradient buffers + parameter gradients so far, at once */
    uint64_t peak_bytes;      /* the whole step: model state + the largest of the phases */
    const char *peak_phase;   /* "forward", "backward" or "optimizer step" */
    const fp_node *peak_node; /* the op at the peak (forward or backward), or NULL */
    uint64_t forward_flops, backward_flops;
} fp_train_step;

/* The step of m (shapes inferred) with `saved` (fp_train_saved_run on m) and optimizer `opt`. */
void fp_train_step_run(const fp_model *m, const fp_train_saved *saved, fp_train_optimizer opt, fp_train_step *out);

#endif
