/* expand.h - ops a runtime runs as their ONNX function body rather than as one kernel
 * (passes/expand.c): the ops a target's `expand` key lists, such as HardSwish on ONNX Runtime's CPU
 * EP, which has no kernel for it and inlines its body when it loads the model. */
#ifndef FP_PASS_EXPAND_H
#define FP_PASS_EXPAND_H

#include <stdbool.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

/* Whether fuseplan can expand op type `op_type` (a target's `expand` list may name it). */
bool fp_expand_supported(const char *op_type);
/* The op types it can expand, comma-separated (for an error). */
const char *fp_expand_supported_list(void);

/* Replaces every live node of m's graphs whose op type t->expand lists by its function body, the
 * new values typed and shaped as their inputs are, one info finding in diag per op type. Returns
 * whether it changed m; m is then linked again (fp_model_link) and its metrics are to be made
 * again. Needs shapes. */
bool fp_pass_expand(fp_model *m, const fp_target *t, fp_diag *diag);

#endif
