/* qdq_units.h - ONNX Runtime's level-1 rewrites of quantized (QDQ) graphs (passes/qdq_units.c):
 * the float bias of a quantized Conv or Gemm given a DequantizeLinear of its own
 * (WeightBiasQuantization), then a copy of every DequantizeLinear for each node that reads it
 * (EnsureUniqueDQForNodeUnit), on the targets whose `[layout] qdq_units` is true. Sources:
 * docs/rules.md, "QDQ at level basic". */
#ifndef FP_PASS_QDQ_UNITS_H
#define FP_PASS_QDQ_UNITS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* On the targets whose `[layout] qdq_units` is true, in m's main graph, in topological order:
 * - a live Conv, ConvTranspose or Gemm whose input 0 comes from a DequantizeLinear with a scalar
 *   scale, whose output reaches a QuantizeLinear through nothing but single-reader Relu or Clip
 *   nodes, whose weight comes from a DequantizeLinear (per tensor, or per channel on axis 0; on 1
 *   for a Gemm without transB; a float weight, which ORT quantizes too, is not modelled: such a
 *   node is left) and whose bias is a 1-D constant initializer gets a new
 *   DequantizeLinear of the bias quantized to int32 at the input's scale times the weight's, both
 *   folded at load (ORT's Mul, Div, Round and Cast: here a folded Mul and a folded Cast, so that
 *   they count as folded weights, not the file's) as its bias;
 * - then every live DequantizeLinear read by more than one node input, or read and a graph output,
 *   is copied (same inputs and attributes, a new output) for each reading input but the first (all
 *   of them when it is a graph output), each copy read by that input alone.
 * With `unoptimized` the copies alone: ORT runs EnsureUniqueDQForNodeUnit at every level, its
 * optimizations off too, and WeightBiasQuantization from level 1 on. One info finding in diag; m
 * linked again when it changed. Returns the count of DequantizeLinear nodes added. */
uint32_t fp_pass_qdq_units(fp_model *m, const fp_target *t, bool unoptimized, fp_diag *diag);

#endif
