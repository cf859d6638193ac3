/* float16.h - float16 ops on an execution provider without float16 kernels (passes/float16.c):
 * ONNX Runtime's InsertCastTransformer on its CPU EP runs them in float32 between Casts. A
 * target says when with `[target] float16 = cast_after_fusion | cast_before_fusion`. */
#ifndef FP_PASS_FLOAT16_H
#define FP_PASS_FLOAT16_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* When the Casts go in: after the fusions (ORT's basic and extended levels: the fusions saw float16
 * ops and refused them), or before (level all: the initializer Casts its level-4 transformer
 * folds change the graph, and ORT's loop runs the fusions again on the float32 ops). */
typedef enum { FP_FLOAT16_NONE, FP_FLOAT16_AFTER_FUSION, FP_FLOAT16_BEFORE_FUSION } fp_float16_stage;

/* The stage target t asks for (FP_FLOAT16_NONE when it says nothing). */
fp_float16_stage fp_float16_stage_of(const fp_target *t);
/* Whether `value` is one the key takes. */
bool fp_float16_value_ok(const char *value);

/* When t asks for `stage`: every compute op of m's main graph (data movement, views, Cast and
 * shape ops excluded: their kernels take any type) that reads or writes float16 runs in float32:
 * its float16 inputs through one Cast each (an initializer's Cast folded before fusion, as ORT's
 * level 4 folds it), its outputs float32, and a Cast back to float16 where an op that stays, or a
 * graph output, reads them. Returns the Casts inserted (m linked again when any); one info finding
 * in diag. Needs shapes. */
uint32_t fp_pass_float16(fp_model *m, const fp_target *t, fp_float16_stage stage, fp_diag *diag);

#endif
