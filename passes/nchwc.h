/* nchwc.h - ONNX Runtime's NCHWc blocked layout (passes/nchwc.c): its level-3 NchwcTransformer,
 * which the `ort-cpu-all` target (`[layout] nchwc = true`) applies with the device's block size.
 * Conditions and sources: docs/rules.md, "NCHWc". */
#ifndef FP_PASS_NCHWC_H
#define FP_PASS_NCHWC_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

typedef struct {
    uint32_t converted;         /* Convs and pools now in com.microsoft.nchwc */
    uint32_t kept_nchw;         /* Convs and pools that stay NCHW (one finding each, with the reason) */
    uint32_t blocked;           /* other ops that run on blocked tensors (Add, activations, Concat) */
    uint32_t sum_fused;         /* Adds folded into the blocked Conv before them (its Sum input) */
    uint32_t act_fused;         /* activations folded into it */
    uint32_t reorder_in;        /* ReorderInput nodes inserted */
    uint32_t reorder_out;       /* ReorderOutput nodes inserted */
    uint32_t transposes_folded; /* Transposes to or from NHWC folded into a reorder (channels_last) */
} fp_nchwc_result;

/* Converts m's main graph to NCHWc with `block` channels per block (the device's nchwc_block),
 * when target t asks for it (`[layout] nchwc`); nothing when it does not or block < 2. Findings
 * (each op kept NCHW, and why; the counts) go to diag. Returns whether it changed m, which is then
 * linked again and needs its metrics made again. Needs shapes. */
bool fp_pass_nchwc(fp_model *m, const fp_target *t, uint64_t block, fp_nchwc_result *res, fp_diag *diag);

#endif
