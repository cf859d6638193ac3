/* cse.h - ONNX Runtime's common subexpression elimination (passes/cse.c): nodes that compute the
 * same value as one before them merged into it, on the targets whose `[layout] cse` is true. */
#ifndef FP_PASS_CSE_H
#define FP_PASS_CSE_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* Whether target t runs the elimination (`[layout] cse = true`). */
bool fp_cse_on(const fp_target *t);

/* On the targets fp_cse_on names: every live node of m's graphs, in topological order, of the op,
 * domain, attributes and inputs of one before it (constants of up to FP_CSE_SHARED_ELEMS elements
 * compared by value, other values by identity) is merged into that one: its readers read the
 * earlier node's outputs and it goes. Not merged: nodes folded at analysis time, nodes with a
 * subgraph, tensor or graph attribute, random ops, and nodes with a graph output (which others may
 * merge into). Every live node
 * reading such a small constant equal to one numbered before reads that one (ConstantSharing's one
 * initializer). One info finding in diag; m linked again when it changed. Returns the count of
 * nodes merged. */
uint32_t fp_pass_cse(fp_model *m, const fp_target *t, fp_diag *diag);

/* What the elimination would merge in g, g left as it is: a map (fp_value* -> fp_value*, to be
 * destroyed by the caller) from each output of a node it would merge to the output of the node it
 * would merge it into. */
GHashTable *fp_cse_same(fp_graph *g);

/* The most elements of a constant ONNX Runtime's ConstantSharing makes one initializer of, so
 * that the elimination sees equal ones as one value. */
#define FP_CSE_SHARED_ELEMS 8

#endif
