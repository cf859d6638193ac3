/* transpose.h - ONNX Runtime's transpose optimizer (passes/transpose.c): Transposes pushed through
 * the ops it has a handler for, when its estimate says the transposed dimensions fall, cancelled
 * against their inverse and composed with one another, before the fusions (and again after the
 * NHWC pass, as ONNX Runtime's NhwcTransformer runs it). */
#ifndef FP_PASS_TRANSPOSE_H
#define FP_PASS_TRANSPOSE_H

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

typedef struct {
    bool ran;            /* the target runs the optimizer (the counts below are 0 when not) */
    uint32_t pushed;     /* ops a Transpose was pushed through */
    uint32_t cancelled;  /* Transposes that met their inverse and went */
    uint32_t inserted;   /* Transposes added (after a pushed op, or before its other inputs) */
    uint32_t removed;    /* Transposes removed (cancelled, or folded into another) */
    uint32_t unmodelled; /* pushes ONNX Runtime makes that this pass does not (each a diagnostic) */
} fp_transpose_result;

/* Runs on every graph of m when the target's `[layout] transpose_optimizer` is true (the ONNX
 * Runtime targets): in topological order, each op that reads a Transpose takes it through when
 * the op has a handler in ONNX Runtime and its cost estimate (the count of dims other than 1 of
 * the tensors transposed before the op, and after it unless a path of handled ops leads from its
 * output to another Transpose) falls. Folded nodes are constants to it. Re-links when it changed
 * the graph; returns whether it did. */
bool fp_pass_transpose(fp_model *m, const fp_target *t, fp_transpose_result *res, fp_diag *diag);

/* Whether the target runs ONNX Runtime's transpose optimizer (`[layout] transpose_optimizer`):
 * the layout pass then leaves Transposes alone. */
bool fp_transpose_optimizer_on(const fp_target *t);

#endif
