/* conv_add_act.h - ONNX Runtime's level-3 ConvAddActivationFusion (passes/conv_add_act.c), which
 * the `ort-cpu-all` target (`[layout] conv_add_activation = true`) runs after the NCHWc layout, on
 * the Convs that layout left NCHW. Conditions and sources: docs/rules.md, "NCHWc". */
#ifndef FP_PASS_CONV_ADD_ACT_H
#define FP_PASS_CONV_ADD_ACT_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* On a target with the key, in m's main graph in topological order: a float32 Conv (ONNX domain,
 * no activation) whose output only an Add reads, that Add of two 4-D tensors of one shape, takes
 * the Add: one of the Add's Conv operands with a bias and that one reader becomes a FusedConv
 * (com.microsoft) with the other operand as its Sum input, and an activation ONNX Runtime's CPU
 * FusedConv runs (Relu, Sigmoid, Tanh, LeakyRelu, HardSigmoid, Clip of constant bounds) that alone
 * reads the Add folds in too. One info finding per fusion goes to diag. Returns how many Adds it
 * fused; m is then linked again and needs its metrics made again. Needs shapes. */
uint32_t fp_pass_conv_add_act(fp_model *m, const fp_target *t, fp_diag *diag);

#endif
