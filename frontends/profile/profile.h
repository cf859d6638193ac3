/* profile.h - the readers of measured profiles: a file into fuseplan's profile form (ir/profile.h),
 * its format detected from the content (docs/profiles.md):
 *   ONNX Runtime profiling JSON, PyTorch profiler Chrome trace, Ascend msprof op_summary,
 *   torch_npu kernel_details (level0/1/2), op_statistic, task_time, ATC/GE fusion_result.json.
 */
#ifndef FP_PROFILE_H
#define FP_PROFILE_H

#include <glib.h>

#include "ir/profile.h"

#define FP_PROFILE_ERROR (fp_profile_error_quark())
GQuark fp_profile_error_quark(void);
typedef enum {
    FP_PROFILE_ERROR_FORMAT, /* not a profile this build reads */
    FP_PROFILE_ERROR_PARSE,  /* broken syntax: truncated JSON, unterminated CSV quote */
    FP_PROFILE_ERROR_VALUE,  /* well-formed, but a value or column is missing or of the wrong type */
} fp_profile_error_code;

/* Reads `path`, detecting the format from the content. On failure returns NULL and sets an
 * FP_PROFILE_ERROR whose message is one line starting with the path and naming the object at
 * fault: "k.csv: line 5, column 10 'Duration(us)': expected a number, got 'abc'",
 * "f.json: $[0].graph_fusion.XPass.match_times: expected a count, got 'x'". */
fp_profile *fp_profile_load(const char *path, GError **error);
/* The same on bytes already in memory; `path` is only used in messages and p->path. */
fp_profile *fp_profile_load_data(const char *path, const char *data, gsize len, GError **error);

#endif
