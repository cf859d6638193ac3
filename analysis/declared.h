/* declared.h - the shape computations a compiler folds when it optimizes a model on the dims the
 * model declares, before a run binds its symbolic dims (analysis/declared.c). */
#ifndef FP_ANALYSIS_DECLARED_H
#define FP_ANALYSIS_DECLARED_H

#include <stddef.h>

#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* For a target that folds on the declared dims (fp_target.fold_declared: ONNX Runtime, which
 * optimizes at session creation): infers m's shapes as the runtime knows them then, nothing bound
 * (fp_shape_opts.runtime_view: no shape data propagated but constants), and marks
 * FP_NODE_RUNTIME_SHAPE each Shape and Size that did not fold, so that no later inference folds
 * it, except those whose results only feed the shape of a Reshape that ONNX Runtime's
 * ReshapeFusion makes constant (a Concat of constants, dims copied from the Reshape's input, and
 * at most one other element of one value, which becomes -1; read by that Reshape alone once t's
 * common subexpression elimination merged equal ones): those nodes are FP_NODE_RESHAPE_CONST. It
 * infers again with ReshapeFusion's constants known (and marks again, a few rounds, while that
 * changes the marks) and records each value's shape then (fp_value_load_shape), which the fusion
 * conditions that read shapes take on such a target. Returns how many Shape and Size nodes are
 * marked; an inference that fails marks none (the bound analysis reports the error). */
size_t fp_declared_mark_runtime(fp_model *m, const fp_target *t);

#endif
