/* shapes.h - shape inference and constant folding of shape computations (passes/shape/shapes.c). */
#ifndef FP_PASS_SHAPES_H
#define FP_PASS_SHAPES_H

#include "ir/diag.h"
#include "ir/graph.h"

/* A symbolic dimension bound by name (--dim NAME=N). */
typedef struct {
    const char *name;
    int64_t value;
} fp_dim_binding;

typedef struct {
    /* user overrides: input name -> fp_shape* (arena of the caller); NULL for none */
    GHashTable *input_shapes;
    /* binds the batch dimension (the first dim of every graph input when it is symbolic or
     * unknown, or the symbol named batch_dim wherever it appears) to this value; 0 = leave it */
    int64_t batch;
    const char *batch_dim; /* symbol name to bind with `batch`; NULL = first dim of inputs */
    /* symbolic dims bound by name wherever the main graph's inputs declare them, over `batch`
     * for the symbol they name; a name no input declares, or a symbol an input shape binds to
     * another value, is an error */
    const fp_dim_binding *dims;
    size_t n_dims;
    /* known input contents: input name -> fp_tensor* with FP_DATA_INLINE data (e.g. the shape
     * argument of a Reshape fed as a graph input); NULL for none */
    GHashTable *input_values;
    /* the node attributes were checked (per op: types, required ones) by an earlier successful run
     * on this model, and no attribute changed since: the check is not made again */
    bool attrs_checked;
    /* infer as ONNX Runtime's graph knows shapes when it optimizes: the shape data (the integer
     * contents Shape -> Gather -> Concat chains carry) of a node is kept only when the node folds
     * to a constant or is FP_NODE_RESHAPE_CONST; no other node's result feeds a shape */
    bool runtime_view;
} fp_shape_opts;

/* Infers dtype and shape of every value of every graph, folds shape computations whose inputs
 * are known constants (marks those nodes FP_NODE_FOLDED and gives their outputs inline values),
 * and records in `diag` every op whose output it could not infer, with the reason. Returns false
 * with an error only for inconsistent input (e.g. Conv channel mismatch), naming the node.
 * Idempotent: running it again with other options recomputes every shape. */
bool fp_pass_shapes(fp_model *m, const fp_shape_opts *opts, fp_diag *diag, GError **error);

/* The content of v after fp_pass_shapes, evaluated on demand from the constants it derives from
 * (initializers, Constants, folds, the shapes Shape reads) with the ops the pass folds, through
 * tensors of up to max_elems elements (the pass itself folds small ones only), 16 max_elems in
 * all: NULL when v is not evaluable so (a graph input's content on the way, an op not evaluated, a
 * larger tensor, more elements in all, over 4096 nodes). The result and every temporary live in `arena` (the caller's); the model is left as
 * it was. */
const fp_tensor *fp_shape_evaluate(fp_model *m, fp_value *v, uint64_t max_elems, fp_arena *arena);

#endif
