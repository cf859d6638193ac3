/* sarif.h - a gate result as SARIF 2.1.0 (reports/json_writer.h) for code-scanning UIs (GitHub code
 * scanning, GitLab, Azure DevOps): one reportingDescriptor per policy key ("gate/max_total_mb")
 * and per fusion rule of the target ("fusion/conv_bn"); a result per violated policy rule and per
 * fusion candidate not applied (level "error" when the policy forbids it, else "note"), located
 * in the model file with the nodes as logical locations. */
#ifndef FP_REPORT_SARIF_H
#define FP_REPORT_SARIF_H

#include "reports/gate.h"
#include "reports/json_writer.h"

/* Writes the SARIF log into w. exit_code is recorded in the run's invocation. */
void fp_report_sarif(const fp_gate_result *g, int exit_code, fp_jsonw *w);

#endif
