/* float16.h - float16 ops on an execution provider with few float16 kernels (passes/float16.c):
 * on ONNX Runtime's CPU EP, constant folding leaves them, the partitioner inlines the function
 * bodies of some, and InsertCastTransformer runs the rest in float32 between Casts. A target says
 * when the Casts come with `[target] float16 = cast_after_fusion | cast_before_fusion`. */
#ifndef FP_PASS_FLOAT16_H
#define FP_PASS_FLOAT16_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* When the Casts go in: after the fusions (ORT's basic and extended levels: the fusions saw float16
 * ops and refused them), or before (level all: the initializer Casts its level-4 transformer
 * folds change the graph, and ORT's loop runs the fusions again on the float32 ops). The pass is
 * also called at FP_FLOAT16_CONSTANT_FOLDING, first, before the runtime's level-1 rewrites, and at
 * FP_FLOAT16_UNOPTIMIZED on a model no other pass has changed: the graph ORT runs with its
 * optimizations off (ORT_DISABLE_ALL), whose partitioning and InsertCastTransformer run at every
 * level; and at FP_FLOAT16_LOAD, before every other stage, to count what that graph lacks. */
typedef enum {
    FP_FLOAT16_NONE,
    FP_FLOAT16_AFTER_FUSION,
    FP_FLOAT16_BEFORE_FUSION,
    FP_FLOAT16_CONSTANT_FOLDING,
    FP_FLOAT16_UNOPTIMIZED,
    FP_FLOAT16_LOAD,
    FP_FLOAT16_REMOVE_CASTS,
} fp_float16_stage;

/* The stage target t asks for (FP_FLOAT16_NONE when it says nothing). */
fp_float16_stage fp_float16_stage_of(const fp_target *t);
/* Whether `value` is one the key takes. */
bool fp_float16_value_ok(const char *value);

/* Whether n reads float16 and is an op without a float16 kernel on ONNX Runtime's CPU EP (one
 * that runs in float32 there): until InsertCastTransformer runs, no EP is assigned to it. */
bool fp_float16_unassigned(const fp_node *n);

/* On a target with the key, at `stage` CONSTANT_FOLDING (called first, before the transpose
 * optimizer and the level-1 rules): the nodes of m's main graph that read float16 and have no
 * float16 kernel (fp_float16_unassigned) are no longer folded, nor what reads them. At BEFORE
 * (called after the level-1 rules, before the others, whatever the key says): a float16 Relu,
 * LeakyRelu, HardSigmoid or Softmax becomes its ONNX function body where ORT 1.30 inlines it (by
 * opset). Then, at the stage the key names: those nodes, and the float16-kernel nodes between them
 * (InsertCastTransformer's isolated ones), run in float32: their float16 inputs through one Cast
 * each (an initializer's Cast folded at BEFORE, as ORT's level 4 folds it; a Cast to float16 of a
 * float32 value skipped, as RemoveDuplicateCastTransformer removes the pair), their outputs
 * float32, a Cast back to float16 where another op or a graph output reads them. Returns the nodes
 * changed and Casts inserted (m linked again when any); one info finding in diag when Casts went
 * in. At UNOPTIMIZED: the function bodies, then the Casts, none folded (no constant folding
 * runs at that level: each initializer's Cast is a kernel of every run), then
 * RemoveDuplicateCastTransformer on every Cast, the model's own and the shape computations'
 * (InsertCastTransformer runs it at every level, even with nothing to insert): a Cast read back to
 * its input's type goes with its reader, and a Cast that only Casts read goes, unless a cast loses
 * precision (its UnsafeCast). AFTER ends with that remover too (the shape computations aside:
 * constant folding has removed them), and REMOVE_CASTS is the remover alone (returns 0). At LOAD,
 * on the model as loaded: the Casts the remover would remove first, m unchanged (0: none; the
 * pipeline then needs no copy at UNOPTIMIZED). Needs shapes. */
uint32_t fp_pass_float16(fp_model *m, const fp_target *t, fp_float16_stage stage, fp_diag *diag);

#endif
