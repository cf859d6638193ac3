/* layout.h - layout-conversion elimination (passes/layout.c): Transpose pairs and chains, GE
 * TransData pairs, Cast round trips; every removal and refusal is a diagnostic with its reason. */
#ifndef FP_PASS_LAYOUT_H
#define FP_PASS_LAYOUT_H

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"
#include "passes/ge_format.h"
#include "passes/nchwc.h"
#include "passes/nhwc.h"
#include "passes/transpose.h"

typedef struct {
    uint32_t conversions_before; /* Transpose, TransData, Cast (runtime ops) before the pass */
    uint32_t conversions_after;
    uint32_t removed;              /* conversion ops removed */
    uint32_t merged;               /* Transpose pairs merged into one */
    uint32_t pushed;               /* ops a Transpose pair was pushed through */
    uint32_t refused;              /* candidates kept, each with a diagnostic */
    bool rewrote;                  /* the graph changed (false: every op, edge and type as before) */
    fp_nchwc_result nchwc;         /* the NCHWc conversion after it (passes/nchwc.h; zeros: none) */
    fp_nhwc_result nhwc;           /* the int8 kernels run channels-last after that (passes/nhwc.h) */
    uint32_t conv_add_act;         /* then Conv + Add [+ activation] -> FusedConv (passes/conv_add_act.h) */
    fp_ge_format_result ge;        /* GE's formats chosen after it (passes/ge_format.h; zeros: none) */
    fp_transpose_result transpose; /* ONNX Runtime's transpose optimizer before the fusions
                                    (passes/transpose.h; zeros: none) */
} fp_layout_result;

/* True for the ops the pass counts as layout conversions. */
bool fp_layout_is_conversion(const fp_node *n);
/* Transpose n's permutation into perm (FP_MAX_RANK entries) and its length into *rank: its `perm`
 * attribute, or without one its input's dims reversed; false when neither is known. */
bool fp_layout_perm(const fp_node *n, int64_t *perm, int *rank);

/* Runs on every graph until nothing changes; Transposes are left to passes/transpose.c on a
 * target that runs ONNX Runtime's transpose optimizer. The target's `[layout] drop_narrowing_casts` allows
 * removing precision-changing Cast round trips (fp32 -> fp16 -> fp32); default false. Re-links. */
bool fp_pass_layout(fp_model *m, const fp_target *t, fp_layout_result *res, fp_diag *diag, GError **error);

/* Counts and explains the Casts that went in after fp_pass_layout (a target whose float16 Casts
 * follow its layout passes, as ONNX Runtime's InsertCastTransformer follows its level-3 ones): each
 * live Cast no layout finding names yet is a conversion before and after, kept with its reason. */
void fp_layout_add_casts(fp_model *m, fp_layout_result *res, fp_diag *diag);

#endif
