/* dot.h - `fuseplan report -f dot`: the final main graph as Graphviz DOT. Fused groups are
 * clusters (the kernel that runs, and the ops it absorbed), fusion candidates that were not
 * applied are outlined in red with their reasons as tooltips, layout conversions are yellow.
 * Graphviz is an optional viewer (`dot -Tsvg report.dot -o report.svg`), not a dependency. */
#ifndef FP_REPORT_DOT_H
#define FP_REPORT_DOT_H

#include <stdio.h>

#include "reports/report.h"

void fp_report_dot(const fp_report *r, FILE *out);

/* s as a DOT double-quoted string, quotes included, for IDs, labels and tooltips. There is no DOT
 * library in the stack, so this is the one place that escapes: '"' -> \", '\' -> \\ (Graphviz
 * reads \\ in a label as one backslash, so a name never triggers \N, \G, \l...), a newline ->
 * \n (a centred line break), other control characters -> a space; invalid UTF-8 is replaced
 * (U+FFFD). Caller frees. */
char *fp_dot_quote(const char *s);

#endif
