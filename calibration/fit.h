/* fit.h - fits a device profile's per-op-class efficiency factors, bandwidth efficiency, cache
 * bandwidths, half works and launch overheads (one per op class, one per group of a grouped
 * convolution) to measured kernel times (calibration/fit.c), with leave-one-model-out
 * cross-validation; and the error statistics `compare` and `fit` share.
 *
 * Estimator: weighted least squares on log time, or a robust variant of it,
 *   minimize  sum_rows w_r rho(log est_r(theta) - log meas_r)
 *             + prior * |theta_base - theta_base0|^2 + prior_refine * |theta_refine - theta_refine0|^2,
 * theta = logs of the parameters, est_r the roofline estimate of a row (passes/roofline.h) summed
 * over its kernels, rho(e) = e^2, or with a robust scale c Huber's loss: e^2 within c, 2c|e| - c^2
 * beyond (a row off by more pulls with a constant force, not one growing with its error, so a few
 * timings a busy host inflated do not move every class to meet them). The base parameters are the
 * efficiencies, the bandwidth factor and the device's launch overhead; the refinements are a factor
 * per cache level on its bandwidth, each class's half work (the work per kernel at which it reaches
 * half its efficiency), each class's launch overhead as a ratio to the device's, and the overhead
 * per group of grouped convolutions. Half works, the group overhead and a view's launch overhead
 * (class view) are pulled toward the base's by their effect, not in log space: the saturation a
 * half work gives a 1 MFLOP kernel, the overheads in us (toward none when the base lacks them). In
 * log space a base half work near none (100 FLOP) would hold the fit far from the data with a pull
 * out of proportion to what it does. Views take part as ops of class view without work (their
 * [launch] view alone); control-flow ops as their own launch and their bodies' kernels
 * (passes/cost.h, fp_cost_control_kernels).
 *
 * A whole-run row (fp_fit_data_add_run) holds every op of a model and the time of a whole run
 * measured without a profiler (a profiler's per-kernel events cost more than small kernels do:
 * ONNX Runtime's profiled run of a one-op model takes 12 us against 1.3 us unprofiled); its
 * estimate adds the device's run_overhead (passes/cost.h), one more parameter that only such rows
 * inform, pulled toward the base's in us. (The executor's work between kernels is a per-kernel cost
 * a whole run cannot tell from the kernels' launch overheads: they take it.)
 *
 * Log residuals weigh a 2 us kernel's 2x error like a 2 ms kernel's (the roofline's errors are
 * multiplicative, and kernel times span five decades); by default w_r = 1 / (measured rows of its
 * model), so every model weighs the same, as in the cross-validation that judges the fit. The weak
 * prior pulls a parameter no row informs (a class whose ops are all memory-bound) back to its base
 * value instead of leaving it undefined; the stronger one on the refinements keeps a class or a
 * cache level that few models inform near the base (a tenth of one model's weight by default), so
 * small data sets stay stable and a common shift of every class's launch goes to the device's
 * launch overhead. Solved by Levenberg-Marquardt (numerical Jacobian) from four starting points
 * within the bounds (efficiencies in [1e-4, 1], bandwidth and cache factors in [1e-3, 64], launch
 * overhead in [1 ns, 10 ms], a class's launch within 1/1000..1000x the device's, half works in
 * [1e-3, 1e12] FLOP, a group overhead in [0.1 ns, 100 us]); the best is kept. A bandwidth factor
 * above 1 (kernels streaming faster than the base bandwidth: CPU caches) raises the profile's
 * bandwidths and keeps its bandwidth efficiency at 1.
 */
#ifndef FP_FIT_H
#define FP_FIT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/device.h"
#include "ir/dtype.h"
#include "passes/roofline.h"

/* ---- statistics ---- */

/* Median of v[0..n) (v is sorted in place); NAN when n is 0. */
double fp_fit_median(double *v, size_t n);
/* Spearman rank correlation of x and y (average ranks for ties); NAN when n < 3 or either side
 * is constant. */
double fp_fit_spearman(const double *x, const double *y, size_t n);

/* ---- data ---- */

typedef fp_kernel fp_fit_op; /* one kernel-launching op whose estimate the parameters change */

typedef struct {
    uint32_t model;           /* the model it belongs to (cross-validation leaves one model out) */
    uint32_t first_op, n_ops; /* its ops in data->ops */
    double fixed_s;           /* time the parameters do not model (control-flow bodies at the base) */
    double measured_s;        /* per run; 0 when nothing was measured for it */
    char *name;               /* for reports (owned) */
    bool whole_run;           /* a model's whole run: the estimate adds the device's run overhead */
} fp_fit_row;

typedef struct {
    GArray *ops;         /* fp_fit_op */
    GArray *rows;        /* fp_fit_row */
    GPtrArray *models;   /* char *: a name per model (owned) */
    GArray *unmatched_s; /* double per model: measured time of kernels that are in no row */
} fp_fit_data;

fp_fit_data *fp_fit_data_new(void);
void fp_fit_data_free(fp_fit_data *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_fit_data, fp_fit_data_free)
/* Adds a model; returns its index. */
uint32_t fp_fit_data_add_model(fp_fit_data *d, const char *name, double unmatched_s);
/* Adds a row of model `model` with n ops (copied). */
void fp_fit_data_add_row(fp_fit_data *d, uint32_t model, const char *name, const fp_fit_op *ops, uint32_t n,
                         double fixed_s, double measured_s);
/* Adds model `model`'s whole run: its n ops (copied), measured_s the run's time without a profiler. */
void fp_fit_data_add_run(fp_fit_data *d, uint32_t model, const char *name, const fp_fit_op *ops, uint32_t n,
                         double fixed_s, double measured_s);
/* A row takes part in the fit: measured, at least one op, nothing fixed. */
bool fp_fit_row_used(const fp_fit_row *r);

/* ---- fit ---- */

/* Parameters: the efficiency of each op class, the bandwidth efficiency, the device's launch
 * overhead, a factor on each cache level's bandwidth, each class's half work (FLOP, [saturation]),
 * each class's launch overhead (seconds), the overhead per group of a grouped convolution and per
 * row a grouped convolution's im2col copies. */
#define FP_FIT_BW FP_CLASS_COUNT
#define FP_FIT_LAUNCH (FP_CLASS_COUNT + 1)
#define FP_FIT_CACHE (FP_CLASS_COUNT + 2)                 /* + level index 0..FP_CACHE_LEVELS-1 */
#define FP_FIT_SAT (FP_FIT_CACHE + FP_CACHE_LEVELS)       /* + op class */
#define FP_FIT_CLASS_LAUNCH (FP_FIT_SAT + FP_CLASS_COUNT) /* + op class */
#define FP_FIT_GROUP_LAUNCH (FP_FIT_CLASS_LAUNCH + FP_CLASS_COUNT)
#define FP_FIT_ROW_LAUNCH (FP_FIT_GROUP_LAUNCH + 1)
#define FP_FIT_RUN (FP_FIT_GROUP_LAUNCH + 2) /* run_overhead (whole-run rows only) */
#define FP_FIT_NPARAM (FP_FIT_GROUP_LAUNCH + 3)
/* "conv", ..., "other", "bandwidth", "launch_overhead", "bandwidth.l1".."bandwidth.l3",
 * "saturation.conv", ..., "launch.conv", ..., "launch.other", "launch.group", "launch.im2col_row",
 * "run_overhead" */
const char *fp_fit_param_name(int i);
/* True for the parameters in seconds (launch_overhead, launch.*, run_overhead). */
bool fp_fit_param_is_time(int i);

typedef enum {
    FP_FIT_MODELS, /* every model alike: rows weighted 1 / rows of their model (default) */
    FP_FIT_ROWS,   /* every row alike */
    FP_FIT_SHARE,  /* rows weighted by their share of the model's time, floored at 1 / rows */
    FP_FIT_E2E,    /* one end-to-end term per model, plus its rows at weight 0.1 together */
} fp_fit_objective;
/* "models", "rows", "share", "e2e" */
const char *fp_fit_objective_name(fp_fit_objective o);
/* Parses a name; false when unknown. */
bool fp_fit_objective_parse(const char *s, fp_fit_objective *out);

typedef struct {
    fp_fit_objective objective;
    double prior;        /* weight of the pull toward the base values (log space); default 1e-3 */
    double prior_refine; /* the same for cache factors, half works and class launch ratios; default 0.1 */
    int max_iter;        /* Levenberg-Marquardt iterations per start; default 200 */
    bool no_cv;          /* skip leave-one-model-out cross-validation */
    double robust;       /* Huber's scale on a row's log residual: beyond it the row's pull stops
                            growing (a disturbed timing cannot drag the fit); 0: least squares */
} fp_fit_opts;

typedef struct {
    double measured_s, estimated_s; /* end to end: every row, unmatched kernels included */
    double ratio;                   /* estimated / measured */
    double spearman, median_ape;    /* over its measured rows with an estimate */
    uint32_t rows;                  /* those rows */
} fp_fit_eval;

typedef struct {
    fp_device *device;                /* the base profile with the fitted values (owned) */
    fp_fit_objective objective;       /* the row weights used */
    double prior, prior_refine;       /* the prior weights used */
    double params[FP_FIT_NPARAM];     /* fitted values (not logs) */
    double base[FP_FIT_NPARAM];       /* base values */
    uint32_t informed[FP_FIT_NPARAM]; /* rows whose estimate depends on the parameter at the fit */
    uint32_t rows_used, iterations;
    double rms_log, base_rms_log; /* root mean square of the log residuals (unweighted) */
    uint32_t n_models;
    fp_fit_eval *base_eval;           /* per model, with the base profile */
    fp_fit_eval *fit_eval;            /* per model, with the profile fitted on every model */
    fp_fit_eval *cv_eval;             /* per model, with the profile fitted on the others; NULL when
                                      there is one model or no_cv */
    double *row_fit_s, *row_cv_s;     /* per data row: estimate fitted on all / on the other models
                                      (row_cv_s NULL without cross-validation; NAN when a fold failed) */
    double spearman_fit, spearman_cv; /* rank correlation over every measured row of every model */
    uint32_t within[3];               /* models whose end-to-end ratio is within 15%: base, fit, cv */
} fp_fit_result;

/* End-to-end tolerance counted in fp_fit_result.within. */
#define FP_FIT_TOLERANCE 0.15

/* Fits the parameters of `base` to the rows of d. Fails (FP_DEVICE_ERROR_INVALID) when no row
 * can be used. Caller frees with fp_fit_result_free. */
fp_fit_result *fp_fit_run(const fp_fit_data *d, const fp_device *base, const fp_fit_opts *o, GError **error);
void fp_fit_result_free(fp_fit_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_fit_result, fp_fit_result_free)

/* Estimated time of row r on device dev (fixed part included). */
double fp_fit_row_estimate(const fp_fit_data *d, const fp_fit_row *r, const fp_device *dev);

#endif
