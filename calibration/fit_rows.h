/* fit_rows.h - what the fit (calibration/fit.h) reads of a model matched to its measured profile
 * (calibration/match.h): every row's ops as the fit sees them (kernel-launching ops, views, control
 * flow expanded to its bodies' kernels), or the whole run's ops against a time measured without a
 * profiler. */
#ifndef FP_FIT_ROWS_H
#define FP_FIT_ROWS_H

#include "calibration/fit.h"
#include "calibration/match.h"

/* Adds model `name`'s match m to d: its rows with their measured times, or with run_s finite the
 * whole run of the stage its profile ran, measured run_s seconds. */
void fp_fit_rows_add(fp_fit_data *d, const char *name, const fp_match_result *m, const fp_device *base, double run_s);

#endif
