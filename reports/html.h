/* html.h - `fuseplan report -f html`: one self-contained HTML page (libxml2-built, no scripts, no
 * external resources) with the stage table, a roofline chart and the memory timeline as inline
 * SVG, the fusion candidates grouped by rule, the memory peak and the hotspots. */
#ifndef FP_REPORT_HTML_H
#define FP_REPORT_HTML_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "passes/memory/memory.h"
#include "reports/report.h"

/* Writes the page for r to out (UTF-8). Deterministic: no timestamps, so it can be a golden. */
void fp_report_html(const fp_report *r, FILE *out);

/* What the page draws, for tests: points of the roofline (kernels with FLOPs, bytes and a time)
 * and kernels left out (no FLOPs: data movement). */
void fp_report_html_roofline_counts(const fp_report *r, guint *points, guint *skipped);

#endif
