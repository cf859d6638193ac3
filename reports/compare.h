/* compare.h - reports of `fuseplan compare` (estimates next to a measured profile) and
 * `fuseplan fit` (a device profile fitted to measurements), as text or JSON (docs/json.md). */
#ifndef FP_REPORT_COMPARE_H
#define FP_REPORT_COMPARE_H

#include <glib.h>
#include <stdio.h>

#include "devices/device.h"
#include "ir/diag.h"
#include "ir/profile.h"
#include "calibration/fit.h"
#include "calibration/match.h"

typedef struct {
    const char *model_path;
    const fp_profile *profile;
    const fp_device *device;
    const char *target;      /* fusion target name */
    const char *stage;       /* "original" / "fused" */
    const char *stage_note;  /* how the stage was chosen */
    const char *inputs_note; /* input shapes bound from the profile, or NULL */
    const fp_match_result *match;
    unsigned top;        /* rows listed in text (0: all) */
    unsigned outliers;   /* worst rows listed */
    const fp_diag *diag; /* the analysis' findings (shapes not inferred, kernels unmatched), or NULL */
    bool verbose;        /* text: list them (else only their count) */
} fp_compare_report;

void fp_report_compare_text(const fp_compare_report *r, FILE *out);
/* Writes the `compare` document of docs/json.md to path (stdout when NULL or "-", a file
 * atomically); false with error set when a write failed. In the formats module (json-glib). */
bool fp_report_compare_json(const fp_compare_report *r, const char *path, GError **error);

/* What `fit` read per (model, profile) pair. */
typedef struct {
    const char *model, *profile;
    const char *stage; /* "original" / "fused" */
    uint32_t kernels, matched;
    double time_share; /* matched measured time / measured time */
} fp_fit_pair;

typedef struct {
    const fp_fit_data *data;
    const fp_fit_result *fit;
    const fp_device *base;
    const fp_fit_pair *pairs; /* one per model of data */
    const char *output;       /* the .ini written */
} fp_fit_report;

void fp_report_fit_text(const fp_fit_report *r, FILE *out);
/* Writes the `fit` document of docs/json.md, as fp_report_compare_json. */
bool fp_report_fit_json(const fp_fit_report *r, const char *path, GError **error);

#endif
