/* junit.h - a gate result as JUnit XML (libxml2-built), the test-report format CI systems read
 * (GitLab `artifacts:reports:junit`, Jenkins, GitHub test-report actions): one <testsuite> per
 * model, one <testcase> per checked policy rule; a violated rule carries a <failure> whose message
 * and text give the numbers, a rule that could not be evaluated an <error>. */
#ifndef FP_REPORT_JUNIT_H
#define FP_REPORT_JUNIT_H

#include <glib.h>

#include "reports/gate.h"

/* The document, UTF-8 with its XML declaration; *len receives its length. Deterministic (every
 * time attribute is 0). Caller g_free()s. */
char *fp_report_junit(const fp_gate_result *g, gsize *len);

#endif
