/* fold.h - constant evaluation for shape inference (fold.c): folds a node's output from known
 * input contents and carries symbolic integer vectors (sval). Built on the pass's node context
 * and helpers (shape_ctx.h), which know nothing of it; called by the pass's driver (shapes.c). */
#ifndef FP_SHAPE_FOLD_H
#define FP_SHAPE_FOLD_H

#include "shape_ctx.h"

/* Folds already computed in one run of the pass, shared by the nodes of that run. */
typedef struct fp_fold_memo fp_fold_memo;

/* Computes the output contents of c->n when every input's content is known and small: sets the
 * output's fold (numeric tensors, fp_value_set_fold) and sval (integer vectors, symbols kept).
 * Never fails.
 * With a memo (NULL: none), a node that reads the same things as one folded before in the run
 * (op, opset, attributes, input contents, output type and shape) takes that node's result. */
void fp_fold_node(sh_ctx *c, fp_fold_memo *memo);
/* ONNX Runtime's ReshapeFusion constant of Concat `concat`, the int64 vector a Reshape reads as
 * its target shape (fp_reshape_const, the Reshape's input as root), into vals (room for its
 * length; NULL: only whether there is one). */
bool fp_fold_reshape_ints(const fp_node *concat, int64_t *vals);
/* A memo for one run of the pass; freed with fp_fold_memo_free (interned results stay valid). */
fp_fold_memo *fp_fold_memo_new(void);
void fp_fold_memo_free(fp_fold_memo *memo);
/* Seeds v's sval from its constant tensor t (initializer/Constant/input value/folded result) when
 * t is a small inline integer vector; else leaves v as it is. Interns the vector in m. */
void fp_fold_seed(fp_model *m, fp_value *v, const fp_tensor *t);
/* Whether fp_fold_seed seeds a value from t (reads t only: safe beside other threads). */
bool fp_fold_seeds(const fp_tensor *t);

#endif
