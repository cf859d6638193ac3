/* gate.h - one model analyzed the way `fuseplan report` does it (device, target, symbolic batch
 * bound to 1 unless given, the pipeline, optionally the batch headroom), for `gate` and `diff`
 * (cli/gate.c). */
#ifndef FP_CLI_GATE_H
#define FP_CLI_GATE_H

#include "analyze.h"
#include "passes/memory/headroom.h"
#include "analysis/pipeline.h"
#include "reports/report.h"

typedef struct {
    fp_device *dev;
    fp_target *target;
    fp_model *model;
    fp_diag *diag;
    fp_pipeline_result res;
    fp_headroom_result hr;
    char *batch_note;
    fp_report rep; /* ready to emit once fp_cli_analyze succeeded */
} fp_cli_analysis;

/* Loads device (name or .ini; NULL: cpu-avx2), target (NULL: the device's) and the model at path,
 * binds the inputs from o and runs the pipeline; with `headroom`, also the batch-headroom search
 * (not with --input, as in `report`). On failure prints one line naming the file and returns false.
 * Clear `a` with fp_cli_analysis_clear in both cases. */
bool fp_cli_analyze(const char *path, const fp_cli_model_opts *o, const char *device, const char *target,
                    bool headroom, fp_cli_analysis *a);
void fp_cli_analysis_clear(fp_cli_analysis *a);

#endif
