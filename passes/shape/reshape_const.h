/* reshape_const.h - the constant ONNX Runtime's ReshapeFusion (onnxruntime/core/optimizer/
 * reshape_fusion.cc, level 1) makes of a Reshape's target Concat (reshape_const.c): read by the
 * marking of what it removes (analysis/declared.c) and by the shape pass's fold of the Concat. */
#ifndef FP_SHAPE_RESHAPE_CONST_H
#define FP_SHAPE_RESHAPE_CONST_H

#include "ir/graph.h"

/* Whether n is in the graph as ReshapeFusion sees it: live, or folded for being one of the nodes
 * marked FP_NODE_RESHAPE_CONST (the shape pass folds those; the runtime removes them once the
 * Reshape fuses). */
bool fp_reshape_const_present(const fp_node *n);
/* ReshapeFusion's constant of Concat `concat`, the target shape of a Reshape of `root`
 * (Fuse_Subgraph): each input an int constant, its values; a copy of root's dim at its position
 * (Unsqueeze(axes [0]) of Gather(Shape(x), i), x root or of the same dim i), 0; any other input of
 * one element, -1. Written to vals (room for max; NULL: none written); its length, or -1 when an
 * input is none of those, more than one -1 comes out, or it is longer than max. */
int fp_reshape_const(const fp_node *concat, const fp_value *root, int64_t *vals, int max);

#endif
