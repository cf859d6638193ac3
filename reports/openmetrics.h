/* openmetrics.h - `-f openmetrics` of `fuseplan report` and `fuseplan gate`: the headline figures
 * as OpenMetrics 1.0 text exposition (gauges only), for dashboards and metric stores. The families,
 * their units and labels are listed in docs/openmetrics.md. */
#ifndef FP_REPORT_OPENMETRICS_H
#define FP_REPORT_OPENMETRICS_H

#include <stdio.h>

#include "reports/gate.h"
#include "reports/report.h"

/* The report's families (stage table, fusions per rule, memory plan, KV cache, headroom), every
 * sample labelled by model, device and target, then "# EOF". */
void fp_openmetrics_report(const fp_report *r, FILE *out);

/* The families of g's report, then the gate's (the verdict; per check whether it passed, was
 * evaluated, its measured value and its limit), then "# EOF". */
void fp_openmetrics_gate(const fp_gate_result *g, FILE *out);

/* s as the inside of an OpenMetrics label value (without the quotes): '\' -> \\, '"' -> \",
 * newline -> \n; invalid UTF-8 is replaced (U+FFFD), since the exposition is UTF-8. NULL gives "".
 * Caller frees. */
char *fp_openmetrics_escape(const char *s);

#endif
