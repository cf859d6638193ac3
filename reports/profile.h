/* profile.h - the `fuseplan profile` report: a measured profile on its own, as text or JSON. */
#ifndef FP_REPORT_PROFILE_H
#define FP_REPORT_PROFILE_H

#include <glib.h>
#include <stdio.h>

#include "ir/profile.h"

/* Kernel count, total time, time by op type and by core type, the `top` longest kernels (all
 * when top exceeds the count); for fusion_result files the passes with their counts. */
void fp_report_profile_text(const fp_profile *p, guint top, FILE *out);
/* Writes the `profile` document of docs/json.md to path (stdout when NULL or "-", a file
 * atomically); false with error set when a write failed. In the formats module (json-glib). */
bool fp_report_profile_json(const fp_profile *p, guint top, const char *path, GError **error);

#endif
