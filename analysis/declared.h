/* declared.h - the shape computations a compiler folds when it optimizes a model on the dims the
 * model declares, before a run binds its symbolic dims (analysis/declared.c). */
#ifndef FP_ANALYSIS_DECLARED_H
#define FP_ANALYSIS_DECLARED_H

#include <stddef.h>

#include "ir/graph.h"

/* For a target that folds on the declared dims (fp_target.fold_declared: ONNX Runtime, which
 * optimizes at session creation): infers m's shapes with nothing bound, then marks
 * FP_NODE_RUNTIME_SHAPE each Shape and Size that did not fold then, so that no later inference
 * folds it, except those whose results only feed the shape of a Reshape that ONNX Runtime's
 * ReshapeFusion makes constant (a Concat of constants, dims copied from the Reshape's input, and
 * at most one other element of one value, which becomes -1). Returns how many it marked; an
 * inference that fails marks none (the bound analysis reports the error). */
size_t fp_declared_mark_runtime(fp_model *m);

#endif
