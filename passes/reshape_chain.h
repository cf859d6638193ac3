/* reshape_chain.h - ONNX Runtime's fusion of contiguous Reshapes (passes/reshape_chain.c): a
 * Reshape followed by Reshapes, Squeezes and Unsqueezes, each the only reader of the one before,
 * becomes one Reshape to the last one's shape, on the targets whose `[layout] contiguous_reshapes`
 * is true. */
#ifndef FP_PASS_RESHAPE_CHAIN_H
#define FP_PASS_RESHAPE_CHAIN_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* On the targets whose `[layout] contiguous_reshapes` is true: in every graph of m, in topological
 * order, a live Reshape (opset >= 5) whose output only one node reads, a Reshape, Squeeze or
 * Unsqueeze, and so on (no graph output on the way), is joined with them into one Reshape of its
 * input to the last one's output when that output's shape is static as the target knows it when
 * it optimizes; the others go. One info finding in diag; m linked again when it changed. Returns
 * the count of nodes removed. */
uint32_t fp_pass_reshape_chain(fp_model *m, const fp_target *t, fp_diag *diag);

#endif
