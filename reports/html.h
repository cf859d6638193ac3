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

/* Live activation bytes at each step of m->order (m->n_order entries), sizes rounded to m->align
 * and subgraph workspaces counted as the memory pass counts them, so the maximum equals
 * m->lower_bound (LOAD). Rebuilds the liveness of m->graph from the model as it is now: call it
 * before anything re-infers the model's shapes (the headroom search). NULL with an error when the
 * graph no longer matches the plan. Caller g_free()s. */
uint64_t *fp_report_live_bytes(const fp_memory_result *m, GError **error);

/* What the page draws, for tests: points of the roofline (kernels with FLOPs, bytes and a time)
 * and kernels left out (no FLOPs: data movement). */
void fp_report_html_roofline_counts(const fp_report *r, guint *points, guint *skipped);

#endif
