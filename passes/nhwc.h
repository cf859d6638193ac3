/* nhwc.h - ONNX Runtime's level-3 NhwcTransformer on the int8 kernels of a quantized graph
 * (passes/nhwc.c): which the `ort-cpu-all` target (`[layout] nhwc = true`) applies after the QDQ
 * units became QLinearConv and the other QLinear kernels. Conditions and sources: docs/rules.md,
 * "Quantized graphs". */
#ifndef FP_PASS_NHWC_H
#define FP_PASS_NHWC_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

typedef struct {
    uint32_t converted;  /* QLinearConvs now channels-last */
    uint32_t pushed;     /* other kernels the Transposes were pushed through (NhwcMaxPool, the QLinear
                            pools with channels_last, QLinearAdd/Mul, QLinearSigmoid/LeakyRelu) */
    uint32_t transposes; /* Transposes left: into the channels-last region and out of it */
} fp_nhwc_result;

/* Runs the int8 kernels of m's main graph channels-last when target t asks for it (`[layout]
 * nhwc`): every 4-D QLinearConv of an 8-bit tensor, and the kernels after it that ONNX Runtime's
 * transpose optimizer pushes the Transpose through, between one Transpose per tensor entering and
 * one per tensor leaving. Returns whether it changed m, which is then linked again and needs its
 * metrics made again. A finding with the counts goes to diag. Needs shapes and the fusions. */
bool fp_pass_nhwc(fp_model *m, const fp_target *t, fp_nhwc_result *res, fp_diag *diag);

#endif
