/* fit.c - least-squares fit of a device profile's efficiencies, bandwidths and launch overheads to
 * measured kernel times (see fit.h for the estimator); Levenberg-Marquardt (Marquardt, SIAM J.
 * Appl. Math. 11(2), 1963) with a forward-difference Jacobian; leave-one-model-out
 * cross-validation. */
#include "calibration/fit.h"

#include <math.h>
#include <string.h>

#include "passes/roofline.h"

#define NP FP_FIT_NPARAM
#define DEFAULT_PRIOR 1e-3
#define DEFAULT_PRIOR_REFINE 0.1 /* a tenth of one model's weight (rows of a model sum to 1) */
#define DEFAULT_ITER 200
#define JAC_STEP 1e-6
/* bandwidth factor above 1: kernels stream faster than the base bandwidth (CPU caches) */
#define MAX_BW_FACTOR 64.0
#define MAX_LAUNCH_RATIO 1e3 /* a class's launch overhead within 1/1000..1000x the device's */
#define MIN_HALF_WORK 1e-3   /* FLOP: in effect no saturation */
#define MAX_HALF_WORK 1e12
#define START_HALF_WORK 1e6     /* the fourth start: every class saturating, as ORT's convolutions do */
#define MIN_GROUP_LAUNCH 1e-10  /* seconds per group: in effect none */
#define START_GROUP_LAUNCH 2e-7 /* the fourth start: ORT's depthwise convolutions, about 0.2 us a group */
#define MIN_ROW_LAUNCH 1e-14    /* seconds per im2col row: none (a network has at most millions) */
#define START_ROW_LAUNCH 3e-9   /* and 3 ns a row of their im2col */
#define SAT_REF_WORK 1e6        /* FLOP: effect_of a half work */
#define SAT_REF_LAUNCH 1e-6     /* s: effect_of a group overhead */
#define MIN_RUN 1e-10           /* s: a run overhead in effect none */
#define START_RUN 1e-6          /* s: where the run overhead starts when the base has none */
#define REF_RUN 1e-5            /* s: effect_of a run overhead (its pull toward the base, in 10 us) */
#define E2E_ROW_WEIGHT 0.1      /* E2E: weight of a model's rows together, next to its end-to-end term */
#define LOW_START 1e-3          /* the fifth start: every efficiency this times the base's */
#define NSTARTS 6               /* starts of the fit (start_point) */

/* ---------------------------------------------------------------- statistics */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double fp_fit_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct {
    double v;
    size_t i;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* Ranks 1..n of v (ties share their average rank) into out. */
static void ranks(const double *v, size_t n, double *out)
{
    g_autofree ranked *r = g_new(ranked, n);
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked){v[i], i};
    qsort(r, n, sizeof *r, ranked_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        for (size_t k = i; k <= j; k++)
            out[r[k].i] = (double)(i + j) / 2 + 1;
        i = j + 1;
    }
}

double fp_fit_spearman(const double *x, const double *y, size_t n)
{
    if (n < 3)
        return NAN;
    g_autofree double *rx = g_new(double, n), *ry = g_new(double, n);
    ranks(x, n, rx);
    ranks(y, n, ry);
    double mx = (double)(n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - mx);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - mx) * (ry[i] - mx);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* ---------------------------------------------------------------- data */

fp_fit_data *fp_fit_data_new(void)
{
    fp_fit_data *d = g_new0(fp_fit_data, 1);
    d->ops = g_array_new(FALSE, TRUE, sizeof(fp_fit_op));
    d->rows = g_array_new(FALSE, TRUE, sizeof(fp_fit_row));
    d->models = g_ptr_array_new_with_free_func(g_free);
    d->unmatched_s = g_array_new(FALSE, TRUE, sizeof(double));
    return d;
}

void fp_fit_data_free(fp_fit_data *d)
{
    if (!d)
        return;
    for (guint i = 0; i < d->rows->len; i++)
        g_free(g_array_index(d->rows, fp_fit_row, i).name);
    g_array_free(d->ops, TRUE);
    g_array_free(d->rows, TRUE);
    g_ptr_array_free(d->models, TRUE);
    g_array_free(d->unmatched_s, TRUE);
    g_free(d);
}

uint32_t fp_fit_data_add_model(fp_fit_data *d, const char *name, double unmatched_s)
{
    g_ptr_array_add(d->models, g_strdup(name));
    g_array_append_val(d->unmatched_s, unmatched_s);
    return d->models->len - 1;
}

void fp_fit_data_add_run(fp_fit_data *d, uint32_t model, const char *name, const fp_fit_op *ops, uint32_t n,
                         double fixed_s, double measured_s)
{
    fp_fit_data_add_row(d, model, name, ops, n, fixed_s, measured_s);
    g_array_index(d->rows, fp_fit_row, d->rows->len - 1).whole_run = true;
}

void fp_fit_data_add_row(fp_fit_data *d, uint32_t model, const char *name, const fp_fit_op *ops, uint32_t n,
                         double fixed_s, double measured_s)
{
    g_assert(model < d->models->len);
    fp_fit_row r = {.model = model,
                    .first_op = d->ops->len,
                    .n_ops = n,
                    .fixed_s = fixed_s,
                    .measured_s = measured_s,
                    .name = g_strdup(name)};
    g_array_append_vals(d->ops, ops, n);
    g_array_append_val(d->rows, r);
}

bool fp_fit_row_used(const fp_fit_row *r) { return r->measured_s > 0 && r->n_ops > 0 && r->fixed_s == 0; }

static const char *const objective_names[] = {"models", "rows", "share", "e2e"};

const char *fp_fit_objective_name(fp_fit_objective o)
{
    return (unsigned)o < G_N_ELEMENTS(objective_names) ? objective_names[o] : "models";
}

bool fp_fit_objective_parse(const char *s, fp_fit_objective *out)
{
    for (size_t i = 0; i < G_N_ELEMENTS(objective_names); i++)
        if (strcmp(s, objective_names[i]) == 0) {
            *out = (fp_fit_objective)i;
            return true;
        }
    return false;
}

static const char *const cache_param_names[FP_CACHE_LEVELS] = {"bandwidth.l1", "bandwidth.l2", "bandwidth.l3"};
static const char *const sat_param_names[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) "saturation." name,
    FP_OP_CLASSES(X)
#undef X
};
static const char *const launch_param_names[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) "launch." name,
    FP_OP_CLASSES(X)
#undef X
};

const char *fp_fit_param_name(int i)
{
    if (i == FP_FIT_BW)
        return "bandwidth";
    if (i == FP_FIT_LAUNCH)
        return "launch_overhead";
    if (i >= FP_FIT_CACHE && i < FP_FIT_CACHE + FP_CACHE_LEVELS)
        return cache_param_names[i - FP_FIT_CACHE];
    if (i >= FP_FIT_SAT && i < FP_FIT_SAT + FP_CLASS_COUNT)
        return sat_param_names[i - FP_FIT_SAT];
    if (i >= FP_FIT_CLASS_LAUNCH && i < FP_FIT_CLASS_LAUNCH + FP_CLASS_COUNT)
        return launch_param_names[i - FP_FIT_CLASS_LAUNCH];
    if (i == FP_FIT_GROUP_LAUNCH)
        return "launch.group";
    if (i == FP_FIT_ROW_LAUNCH)
        return "launch.im2col_row";
    if (i == FP_FIT_RUN)
        return "run_overhead";
    return fp_op_class_name((fp_op_class)i);
}

static bool is_class_launch(int i) { return i >= FP_FIT_CLASS_LAUNCH && i < FP_FIT_CLASS_LAUNCH + FP_CLASS_COUNT; }

bool fp_fit_param_is_time(int i)
{
    return i == FP_FIT_LAUNCH || is_class_launch(i) || i == FP_FIT_GROUP_LAUNCH || i == FP_FIT_ROW_LAUNCH ||
           i == FP_FIT_RUN;
}

/* ---------------------------------------------------------------- model */

/* theta: log efficiency per class, log bandwidth factor, log launch overhead, log cache factors,
 * log half work, log (class launch / device launch). Bounds of each, not logged (a half work at its
 * lower bound changes a kernel of 1000 FLOP by 0.1%: none): */
static const double lo[NP] = {[0 ... FP_CLASS_COUNT - 1] = 1e-4,
                              [FP_FIT_BW] = 1e-3,
                              [FP_FIT_LAUNCH] = 1e-9,
                              [FP_FIT_CACHE... FP_FIT_CACHE + FP_CACHE_LEVELS - 1] = 1e-3,
                              [FP_FIT_SAT... FP_FIT_SAT + FP_CLASS_COUNT - 1] = MIN_HALF_WORK,
                              [FP_FIT_CLASS_LAUNCH... FP_FIT_GROUP_LAUNCH - 1] = 1.0 / MAX_LAUNCH_RATIO,
                              [FP_FIT_GROUP_LAUNCH] = MIN_GROUP_LAUNCH,
                              [FP_FIT_ROW_LAUNCH] = MIN_ROW_LAUNCH,
                              [FP_FIT_RUN] = MIN_RUN};
static const double hi[NP] = {[0 ... FP_CLASS_COUNT - 1] = 1.0,
                              [FP_FIT_BW] = MAX_BW_FACTOR,
                              [FP_FIT_LAUNCH] = 1e-2,
                              [FP_FIT_CACHE... FP_FIT_CACHE + FP_CACHE_LEVELS - 1] = MAX_BW_FACTOR,
                              [FP_FIT_SAT... FP_FIT_SAT + FP_CLASS_COUNT - 1] = MAX_HALF_WORK,
                              [FP_FIT_CLASS_LAUNCH... FP_FIT_GROUP_LAUNCH - 1] = MAX_LAUNCH_RATIO,
                              [FP_FIT_GROUP_LAUNCH] = 1e-4,
                              [FP_FIT_ROW_LAUNCH] = 1e-6,
                              [FP_FIT_RUN] = 1e-2};

/* The run overhead is a base parameter: microseconds per inference that every whole run informs. */
static bool is_refinement(int j) { return j >= FP_FIT_CACHE && j != FP_FIT_RUN; }

/* The parameters of d as reported (fp_fit_result.params): cache factors 1 (relative to d itself),
 * class launches in seconds. */
static void get_params(const fp_device *d, double *v)
{
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        v[c] = d->efficiency[c];
    v[FP_FIT_BW] = d->bw_efficiency;
    v[FP_FIT_LAUNCH] = d->launch_overhead;
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        v[FP_FIT_CACHE + i] = 1;
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        v[FP_FIT_SAT + c] = d->half_work[c];
        v[FP_FIT_CLASS_LAUNCH + c] = fp_device_launch(d, (fp_op_class)c);
    }
    v[FP_FIT_GROUP_LAUNCH] = d->launch_group;
    v[FP_FIT_ROW_LAUNCH] = d->launch_row;
    v[FP_FIT_RUN] = d->run_overhead;
}

/* theta (logs, within bounds) of reported parameters v. */
static void to_theta(const double *v, double *theta)
{
    double launch = CLAMP(v[FP_FIT_LAUNCH], lo[FP_FIT_LAUNCH], hi[FP_FIT_LAUNCH]);
    for (int j = 0; j < NP; j++) {
        double x = v[j];
        if (is_class_launch(j))
            x = MAX(x, lo[FP_FIT_LAUNCH]) / launch;
        theta[j] = log(CLAMP(x, lo[j], hi[j]));
    }
}

/* Reported parameters v of theta. */
static void from_theta(const double *theta, double *v)
{
    for (int j = 0; j < NP; j++)
        v[j] = exp(theta[j] + (is_class_launch(j) ? theta[FP_FIT_LAUNCH] : 0));
}

/* dev = base with the parameters exp(theta) (numbers only: dev shares base's strings). */
static void apply(const fp_device *base, const double *theta, fp_device *dev)
{
    *dev = *base;
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        dev->efficiency[c] = exp(theta[c]);
    dev->bw_efficiency = exp(theta[FP_FIT_BW]);
    dev->launch_overhead = exp(theta[FP_FIT_LAUNCH]);
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        dev->cache[i].bandwidth = base->cache[i].bandwidth * exp(theta[FP_FIT_CACHE + i]);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        dev->half_work[c] = exp(theta[FP_FIT_SAT + c]);
        dev->launch[c] = exp(theta[FP_FIT_LAUNCH] + theta[FP_FIT_CLASS_LAUNCH + c]);
        dev->launch_own[c] = true;
    }
    dev->launch_group = exp(theta[FP_FIT_GROUP_LAUNCH]);
    dev->launch_row = exp(theta[FP_FIT_ROW_LAUNCH]);
    dev->run_overhead = exp(theta[FP_FIT_RUN]);
}

double fp_fit_row_estimate(const fp_fit_data *d, const fp_fit_row *r, const fp_device *dev)
{
    double t = r->fixed_s;
    for (uint32_t i = 0; i < r->n_ops; i++) {
        const fp_fit_op *op = &g_array_index(d->ops, fp_fit_op, r->first_op + i);
        t += fp_roofline_kernel(dev, op).time_s;
    }
    return r->whole_run ? t + dev->run_overhead : t;
}

typedef struct {
    const fp_fit_data *d;
    const fp_device *base;
    GArray *rows;          /* guint: rows in the fit */
    double *sqrt_w;        /* per entry of rows */
    double sqrt_prior[NP]; /* per parameter: the base or the refinement prior */
    bool by_effect[NP];    /* half works, the group overhead, a view's launch: pulled by effect_of */
    double effect0[NP];    /* their base effect (0: the base lacks it, pulled toward none) */
    double theta0[NP];     /* the base's theta */
    fp_fit_objective objective;
    double robust;    /* Huber's scale on the rows' log residuals (0: least squares) */
    guint n_models;   /* E2E: one residual per model */
    double *model_w;  /* E2E: sqrt weight per model (0: no row) */
    double *meas_sum; /* E2E: measured sum of the used rows per model */
    guint n_res;      /* rows [+ models] + NP prior terms */
} problem;

/* The size of what a half work or group overhead does, for the pull of one the base lacks toward
 * none: the saturation it gives a 1 MFLOP kernel, (h / 1e6)^(1/3); the group overhead in us. A log
 * distance to "none" would be unbounded. */
static double effect_of(int j, const double *theta)
{
    if (j == FP_FIT_CLASS_LAUNCH + FP_CLASS_VIEW) /* a view's launch the base lacks, in us */
        return exp(theta[j] + theta[FP_FIT_LAUNCH]) / SAT_REF_LAUNCH;
    if (j == FP_FIT_RUN)
        return exp(theta[j]) / REF_RUN;
    if (j == FP_FIT_ROW_LAUNCH) /* per 100 rows, in us */
        return exp(theta[j]) * 100 / SAT_REF_LAUNCH;
    return j == FP_FIT_GROUP_LAUNCH ? exp(theta[j]) / SAT_REF_LAUNCH : cbrt(exp(theta[j]) / SAT_REF_WORK);
}

/* The residual whose square is Huber's loss of log residual e at scale c (e itself within c, or
 * when c is 0). */
static double huber(double e, double c)
{
    return c > 0 && fabs(e) > c ? copysign(sqrt(2 * c * fabs(e) - c * c), e) : e;
}

static void residuals(const problem *pb, const double *theta, double *res)
{
    fp_device dev;
    apply(pb->base, theta, &dev);
    guint n = pb->rows->len, at = n;
    g_autofree double *est_sum = pb->objective == FP_FIT_E2E ? g_new0(double, pb->n_models + 1) : NULL;
    for (guint i = 0; i < n; i++) {
        const fp_fit_row *r = &g_array_index(pb->d->rows, fp_fit_row, g_array_index(pb->rows, guint, i));
        double est = fp_fit_row_estimate(pb->d, r, &dev);
        res[i] = pb->sqrt_w[i] * huber(log(est) - log(r->measured_s), pb->robust);
        if (est_sum)
            est_sum[r->model] += est;
    }
    for (guint m = 0; est_sum && m < pb->n_models; m++)
        res[at++] = pb->model_w[m] > 0 ? pb->model_w[m] * (log(est_sum[m]) - log(pb->meas_sum[m])) : 0;
    for (int j = 0; j < NP; j++)
        res[at + j] = pb->sqrt_prior[j] *
                      (pb->by_effect[j] ? effect_of(j, theta) - pb->effect0[j] : theta[j] - pb->theta0[j]);
}

static double sum_sq(const double *r, guint n)
{
    double s = 0;
    for (guint i = 0; i < n; i++)
        s += r[i] * r[i];
    return s;
}

static void clamp(double *theta)
{
    for (int j = 0; j < NP; j++)
        theta[j] = CLAMP(theta[j], log(lo[j]), log(hi[j]));
}

/* Solves a x = b (n x n, row-major; a and b are destroyed) by Gaussian elimination with partial
 * pivoting. False when singular. */
static bool solve(double *a, double *b, double *x, int n)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
                piv = r;
        if (fabs(a[piv * n + c]) < 1e-300)
            return false;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double t = a[c * n + k];
                a[c * n + k] = a[piv * n + k];
                a[piv * n + k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < n; k++)
            s -= a[r * n + k] * x[k];
        x[r] = s / a[r * n + r];
    }
    return true;
}

/* Levenberg-Marquardt from theta (in place, kept within bounds). Returns the final cost. */
static double levenberg_marquardt(const problem *pb, double *theta, int max_iter, uint32_t *iterations)
{
    guint m = pb->n_res;
    g_autofree double *res = g_new(double, m), *trial = g_new(double, m), *jac = g_new(double, (gsize)m *NP);
    clamp(theta);
    residuals(pb, theta, res);
    double cost = sum_sq(res, m), mu = 1e-3;
    for (int it = 0; it < max_iter; it++) {
        (*iterations)++;
        for (int j = 0; j < NP; j++) { /* forward differences, stepping inward at the upper bound */
            double t[NP];
            memcpy(t, theta, sizeof t);
            double h = theta[j] + JAC_STEP > log(hi[j]) ? -JAC_STEP : JAC_STEP;
            t[j] += h;
            residuals(pb, t, trial);
            for (guint i = 0; i < m; i++)
                jac[(gsize)i * NP + j] = (trial[i] - res[i]) / h;
        }
        double jtj[NP * NP] = {0}, jtr[NP] = {0};
        for (guint i = 0; i < m; i++)
            for (int a = 0; a < NP; a++) {
                jtr[a] += jac[(gsize)i * NP + a] * res[i];
                for (int b = 0; b < NP; b++)
                    jtj[a * NP + b] += jac[(gsize)i * NP + a] * jac[(gsize)i * NP + b];
            }
        bool improved = false;
        while (!improved && mu < 1e12) {
            double a[NP * NP], b[NP], step[NP], t[NP];
            memcpy(a, jtj, sizeof a);
            for (int j = 0; j < NP; j++) {
                a[j * NP + j] += mu * (jtj[j * NP + j] + 1e-12);
                b[j] = -jtr[j];
            }
            if (!solve(a, b, step, NP)) {
                mu *= 10;
                continue;
            }
            for (int j = 0; j < NP; j++)
                t[j] = theta[j] + step[j];
            clamp(t);
            residuals(pb, t, trial);
            double c = sum_sq(trial, m);
            if (c < cost) {
                bool tiny = cost - c < 1e-12 * cost + 1e-300;
                memcpy(theta, t, sizeof t);
                memcpy(res, trial, sizeof(double) * m);
                cost = c;
                mu = MAX(mu / 3, 1e-12);
                improved = true;
                if (tiny)
                    return cost;
            } else {
                mu *= 4;
            }
        }
        if (!improved)
            break;
    }
    return cost;
}

/* ---------------------------------------------------------------- driver */

/* Row weights (square roots) for the objective; E2E also fills the per-model terms. */
static void weights(problem *pb)
{
    const fp_fit_data *d = pb->d;
    guint nm = d->models->len;
    g_autofree double *total = g_new0(double, nm + 1);
    g_autofree guint *count = g_new0(guint, nm + 1);
    for (guint i = 0; i < pb->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, g_array_index(pb->rows, guint, i));
        total[r->model] += r->measured_s;
        count[r->model]++;
    }
    for (guint i = 0; i < pb->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, g_array_index(pb->rows, guint, i));
        double w = 1;
        switch (pb->objective) {
        case FP_FIT_ROWS:
            w = 1;
            break;
        case FP_FIT_MODELS:
            w = 1.0 / count[r->model];
            break;
        case FP_FIT_SHARE:
            w = MAX(r->measured_s / total[r->model], 1.0 / count[r->model]);
            break;
        case FP_FIT_E2E:
            w = E2E_ROW_WEIGHT / count[r->model];
            break;
        }
        pb->sqrt_w[i] = sqrt(w);
    }
    pb->n_models = nm;
    if (pb->objective != FP_FIT_E2E)
        return;
    pb->model_w = g_new0(double, nm + 1);
    pb->meas_sum = g_new0(double, nm + 1);
    for (guint m = 0; m < nm; m++) {
        pb->model_w[m] = count[m] ? 1 : 0;
        pb->meas_sum[m] = total[m];
    }
}

typedef struct {
    uint32_t model; /* the model left out */
    bool ok;        /* false: no row left to fit */
    double theta[NP];
} fold;

/* The class of the kernels that take most of row r's time on dev: FP_CLASS_COUNT when no class
 * takes over half of it. */
static fp_op_class main_class(const fp_fit_data *d, const fp_fit_row *r, const fp_device *dev)
{
    double by[FP_CLASS_COUNT] = {0}, total = 0;
    for (uint32_t k = 0; k < r->n_ops; k++) {
        const fp_fit_op *op = &g_array_index(d->ops, fp_fit_op, r->first_op + k);
        double t = fp_roofline_kernel(dev, op).time_s;
        by[op->cls] += t;
        total += t;
    }
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        if (total > 0 && by[c] > total / 2)
            return (fp_op_class)c;
    return FP_CLASS_COUNT;
}

/* The last start, t the best fit so far: each class's efficiency scaled by the median of
 * estimate / measured over the used rows whose time that class takes most of (its own
 * micro-models say its rate; a class the other starts left stranded, far off its rows, starts
 * near them, the others where they are). */
static void own_rates(const problem *pb, double *t)
{
    for (int c = 0; c < FP_CLASS_COUNT; c++) { /* a stranded launch or saturation back to the base's */
        t[FP_FIT_CLASS_LAUNCH + c] = pb->theta0[FP_FIT_CLASS_LAUNCH + c];
        t[FP_FIT_SAT + c] = pb->theta0[FP_FIT_SAT + c];
    }
    fp_device dev;
    apply(pb->base, t, &dev);
    GArray *ratios[FP_CLASS_COUNT];
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        ratios[c] = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < pb->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(pb->d->rows, fp_fit_row, g_array_index(pb->rows, guint, i));
        fp_op_class c = main_class(pb->d, r, &dev);
        double ratio = fp_fit_row_estimate(pb->d, r, &dev) / r->measured_s;
        if (c < FP_CLASS_COUNT && ratio > 0 && isfinite(ratio))
            g_array_append_val(ratios[c], ratio);
    }
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        if (ratios[c]->len)
            t[c] = CLAMP(t[c] + log(fp_fit_median((double *)ratios[c]->data, ratios[c]->len)), log(lo[c]), log(hi[c]));
        g_array_free(ratios[c], TRUE);
    }
}

/* Start s of the fit in t. The starts: the base; efficiencies 10x lower (compute-bound
 * everywhere); efficiencies and the bandwidth at their peaks; efficiencies at their peaks, every
 * class saturating (half work START_HALF_WORK) and groups costing START_GROUP_LAUNCH;
 * efficiencies LOW_START times lower (a class far slower than the base, a transcendental op or a
 * transpose, is memory-bound at the base and 10x below it: no gradient reaches its efficiency
 * there); last, the best of those (best) with each class's efficiency rescaled to its own rows
 * (own_rates). Cache factors and class launches start at the base's. */
static void start_point(const problem *pb, int s, const double *best, bool whole_runs, double *t)
{
    memcpy(t, s == NSTARTS - 1 ? best : pb->theta0, sizeof(double) * NP);
    if (s == NSTARTS - 1)
        own_rates(pb, t);
    for (int j = 0; j < FP_CLASS_COUNT && s > 0 && s < NSTARTS - 1; j++) {
        t[j] = s == 1 ? t[j] + log(0.1) : s == 4 ? MAX(t[j] + log(LOW_START), log(lo[j])) : 0;
        if (s == 3)
            t[FP_FIT_SAT + j] = log(START_HALF_WORK);
    }
    if (s == 3) {
        t[FP_FIT_GROUP_LAUNCH] = log(START_GROUP_LAUNCH);
        t[FP_FIT_ROW_LAUNCH] = log(START_ROW_LAUNCH);
    }
    if (s == 2)
        t[FP_FIT_BW] = 0;
    if (whole_runs) /* none has no gradient */
        t[FP_FIT_RUN] = MAX(t[FP_FIT_RUN], log(START_RUN));
}

/* Fits on the used rows of every model but `skip` (-1: none). False when no row is left. */
static bool fit_on(const fp_fit_data *d, const fp_device *base, const fp_fit_opts *o, int skip, double *theta,
                   uint32_t *iterations)
{
    problem pb = {.d = d, .base = base, .rows = g_array_new(FALSE, FALSE, sizeof(guint))};
    for (guint i = 0; i < d->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, i);
        if (fp_fit_row_used(r) && (int)r->model != skip)
            g_array_append_val(pb.rows, i);
    }
    if (pb.rows->len == 0) {
        g_array_free(pb.rows, TRUE);
        return false;
    }
    pb.sqrt_w = g_new(double, pb.rows->len);
    pb.objective = o->objective;
    pb.robust = o->robust; /* huber: least squares at 0 or below */
    weights(&pb);
    for (int j = 0; j < NP; j++) {
        bool sat = j >= FP_FIT_SAT && j < FP_FIT_SAT + FP_CLASS_COUNT;
        /* a half work, the group and row overheads and a view's launch are pulled by what they do (the
         * saturation of a 1 MFLOP kernel, microseconds): in log space a base value near none
         * (a half work of 100 FLOP) would hold them with a force out of proportion to its effect */
        pb.by_effect[j] = sat || j == FP_FIT_GROUP_LAUNCH || j == FP_FIT_ROW_LAUNCH ||
                          j == FP_FIT_CLASS_LAUNCH + FP_CLASS_VIEW || j == FP_FIT_RUN;
        pb.sqrt_prior[j] = sqrt(MAX(is_refinement(j) ? o->prior_refine : o->prior, 0));
    }
    double v[NP];
    get_params(base, v);
    to_theta(v, pb.theta0);
    for (int j = 0; j < NP; j++) {
        bool sat = j >= FP_FIT_SAT && j < FP_FIT_SAT + FP_CLASS_COUNT;
        bool lacks = (sat && !(base->half_work[j - FP_FIT_SAT] > 0)) ||
                     (j == FP_FIT_GROUP_LAUNCH && !(base->launch_group > 0)) ||
                     (j == FP_FIT_ROW_LAUNCH && !(base->launch_row > 0)) ||
                     (j == FP_FIT_CLASS_LAUNCH + FP_CLASS_VIEW && !base->launch_own[FP_CLASS_VIEW]) ||
                     (j == FP_FIT_RUN && !(base->run_overhead > 0));
        pb.effect0[j] = pb.by_effect[j] && !lacks ? effect_of(j, pb.theta0) : 0;
    }
    pb.n_res = pb.rows->len + (pb.objective == FP_FIT_E2E ? pb.n_models : 0) + NP;
    bool whole_runs = false;
    for (guint i = 0; i < pb.rows->len; i++)
        whole_runs = whole_runs || g_array_index(d->rows, fp_fit_row, g_array_index(pb.rows, guint, i)).whole_run;
    double best = INFINITY;
    for (int s = 0; s < NSTARTS; s++) {
        if (s == NSTARTS - 1 && !(best < INFINITY))
            break; /* no start converged: no best to rescale */
        double t[NP];
        start_point(&pb, s, theta, whole_runs, t);
        double c = levenberg_marquardt(&pb, t, o->max_iter > 0 ? o->max_iter : DEFAULT_ITER, iterations);
        if (c < best) {
            best = c;
            memcpy(theta, t, sizeof t);
        }
    }
    g_free(pb.sqrt_w);
    g_free(pb.model_w);
    g_free(pb.meas_sum);
    g_array_free(pb.rows, TRUE);
    return true;
}

/* End-to-end and per-row errors of model `model` on dev. */
static fp_fit_eval evaluate(const fp_fit_data *d, uint32_t model, const fp_device *dev)
{
    fp_fit_eval e = {.measured_s = g_array_index(d->unmatched_s, double, model)};
    g_autofree double *est = g_new(double, d->rows->len + 1), *meas = g_new(double, d->rows->len + 1);
    g_autofree double *ape = g_new(double, d->rows->len + 1);
    size_t n = 0;
    for (guint i = 0; i < d->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, i);
        if (r->model != model)
            continue;
        double t = fp_fit_row_estimate(d, r, dev);
        e.estimated_s += t;
        e.measured_s += r->measured_s;
        if (t > 0 && r->measured_s > 0) {
            est[n] = t;
            meas[n] = r->measured_s;
            ape[n] = 100 * fabs(t - r->measured_s) / r->measured_s;
            n++;
        }
    }
    e.rows = (uint32_t)n;
    e.ratio = e.measured_s > 0 ? e.estimated_s / e.measured_s : NAN;
    e.spearman = fp_fit_spearman(est, meas, n);
    e.median_ape = fp_fit_median(ape, n);
    return e;
}

static double rms_log(const fp_fit_data *d, const fp_device *dev)
{
    double s = 0;
    guint n = 0;
    for (guint i = 0; i < d->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, i);
        if (!fp_fit_row_used(r))
            continue;
        double est = fp_fit_row_estimate(d, r, dev);
        if (!(est > 0)) /* views on a profile whose views cost nothing */
            continue;
        double e = log(est) - log(r->measured_s);
        s += e * e;
        n++;
    }
    return n ? sqrt(s / n) : NAN;
}

/* Rank correlation of est[] and the measurements over measured rows with an estimate. */
static double pooled_spearman(const fp_fit_data *d, const double *est)
{
    g_autofree double *x = g_new(double, d->rows->len + 1), *y = g_new(double, d->rows->len + 1);
    size_t n = 0;
    for (guint i = 0; i < d->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, i);
        if (r->measured_s > 0 && est[i] > 0) {
            x[n] = est[i];
            y[n++] = r->measured_s;
        }
    }
    return fp_fit_spearman(x, y, n);
}

/* Rows whose estimate depends on each parameter at dev. */
static void informed(const fp_fit_data *d, const fp_device *dev, uint32_t *count)
{
    for (guint i = 0; i < d->rows->len; i++) {
        const fp_fit_row *r = &g_array_index(d->rows, fp_fit_row, i);
        if (!fp_fit_row_used(r))
            continue;
        bool seen[NP] = {false};
        for (uint32_t k = 0; k < r->n_ops; k++) {
            const fp_fit_op *op = &g_array_index(d->ops, fp_fit_op, r->first_op + k);
            fp_roofline rl = fp_roofline_kernel(dev, op);
            if (rl.bound == FP_BOUND_COMPUTE) {
                seen[op->cls] = true;
                seen[FP_FIT_SAT + op->cls] = true;
            } else if (rl.memory_s > 0) {
                seen[FP_FIT_BW] = true;
                if (rl.level > 0)
                    seen[FP_FIT_CACHE + rl.level - 1] = true;
            }
            seen[FP_FIT_CLASS_LAUNCH + op->cls] = true;
            seen[FP_FIT_GROUP_LAUNCH] = seen[FP_FIT_GROUP_LAUNCH] || op->parts > 1;
            seen[FP_FIT_ROW_LAUNCH] = seen[FP_FIT_ROW_LAUNCH] || op->rows > 0;
        }
        seen[FP_FIT_LAUNCH] = true;
        seen[FP_FIT_RUN] = r->whole_run;
        for (int j = 0; j < NP; j++)
            count[j] += seen[j];
    }
}

/* A copy of base (key file round trip) with the parameters v: every class gets its own launch
 * overhead, so the profile written estimates what the fit evaluated; a half work or group overhead
 * that no row informed and the base did not have is left out (it changed nothing). */
static fp_device *device_with(const fp_device *base, const double *v, const uint32_t *informed, GError **error)
{
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(base);
    fp_device *dev = fp_device_from_keyfile(kf, base->path ? base->path : "fitted.ini", error);
    if (!dev)
        return NULL;
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        dev->efficiency[c] = v[c];
    double raise = MAX(v[FP_FIT_BW], 1.0); /* faster than the base bandwidth: the bandwidths are raised */
    dev->bw_efficiency = MIN(v[FP_FIT_BW], 1.0);
    dev->bandwidth = base->bandwidth * raise;
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        dev->cache[i].bandwidth = base->cache[i].bandwidth * raise * v[FP_FIT_CACHE + i];
    dev->launch_overhead = v[FP_FIT_LAUNCH];
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        bool keep = informed[FP_FIT_SAT + c] > 0 || base->half_work[c] > 0;
        dev->half_work[c] = keep && v[FP_FIT_SAT + c] >= 1 ? v[FP_FIT_SAT + c] : 0;
        dev->launch[c] = v[FP_FIT_CLASS_LAUNCH + c];
        dev->launch_own[c] = true;
    }
    bool group = informed[FP_FIT_GROUP_LAUNCH] > 0 || base->launch_group > 0;
    dev->launch_group = group && v[FP_FIT_GROUP_LAUNCH] > MIN_GROUP_LAUNCH * 1.001 ? v[FP_FIT_GROUP_LAUNCH] : 0;
    bool row = informed[FP_FIT_ROW_LAUNCH] > 0 || base->launch_row > 0;
    dev->launch_row = row && v[FP_FIT_ROW_LAUNCH] > MIN_ROW_LAUNCH * 1.001 ? v[FP_FIT_ROW_LAUNCH] : 0;
    if (informed[FP_FIT_RUN]) /* fitted where whole runs informed it, else the base's */
        dev->run_overhead = v[FP_FIT_RUN] > MIN_RUN * 1.001 ? v[FP_FIT_RUN] : 0;
    return dev;
}

/* ---------------------------------------------------------------- cross-validation */

typedef struct {
    const fp_fit_data *d;
    const fp_device *base;
    const fp_fit_opts *o;
    fold *folds;
} fold_job;

static void fold_run(gpointer data, gpointer user)
{
    fold *f = data;
    const fold_job *job = user;
    uint32_t iters = 0;
    f->ok = fit_on(job->d, job->base, job->o, (int)f->model, f->theta, &iters);
}

/* Fits every fold (each model left out in turn) on a GThreadPool of one thread per CPU: the folds
 * are independent and read only d and base. */
static void run_folds(const fp_fit_data *d, const fp_device *base, const fp_fit_opts *o, fold *folds, uint32_t n)
{
    fold_job job = {d, base, o, folds};
    g_autoptr(GError) err = NULL;
    GThreadPool *pool = g_thread_pool_new(fold_run, &job, (gint)MAX(g_get_num_processors(), 1), TRUE, &err);
    for (uint32_t m = 0; m < n; m++) {
        folds[m].model = m;
        if (!pool || !g_thread_pool_push(pool, &folds[m], NULL))
            fold_run(&folds[m], &job); /* no threads to be had: in this one */
    }
    if (pool)
        g_thread_pool_free(pool, FALSE, TRUE);
}

fp_fit_result *fp_fit_run(const fp_fit_data *d, const fp_device *base, const fp_fit_opts *o, GError **error)
{
    fp_fit_opts opts = *o;
    if (opts.prior <= 0)
        opts.prior = DEFAULT_PRIOR;
    if (opts.prior_refine <= 0)
        opts.prior_refine = DEFAULT_PRIOR_REFINE;
    g_autoptr(fp_fit_result) r = g_new0(fp_fit_result, 1);
    double theta[NP];
    if (!fit_on(d, base, &opts, -1, theta, &r->iterations)) {
        g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID,
                    "no measured kernel to fit: every matched row is unmeasured, estimated at 0 or control flow");
        return NULL;
    }
    r->objective = opts.objective;
    r->prior = opts.prior;
    r->prior_refine = opts.prior_refine;
    get_params(base, r->base);
    from_theta(theta, r->params);
    fp_device fitted;
    apply(base, theta, &fitted);
    informed(d, &fitted, r->informed);
    r->device = device_with(base, r->params, r->informed, error);
    if (!r->device)
        return NULL;
    for (guint i = 0; i < d->rows->len; i++)
        r->rows_used += fp_fit_row_used(&g_array_index(d->rows, fp_fit_row, i));
    r->rms_log = rms_log(d, r->device);
    r->base_rms_log = rms_log(d, base);
    r->n_models = d->models->len;
    r->base_eval = g_new0(fp_fit_eval, r->n_models + 1);
    r->fit_eval = g_new0(fp_fit_eval, r->n_models + 1);
    for (uint32_t m = 0; m < r->n_models; m++) {
        r->base_eval[m] = evaluate(d, m, base);
        r->fit_eval[m] = evaluate(d, m, r->device);
    }
    r->row_fit_s = g_new(double, d->rows->len + 1);
    for (guint i = 0; i < d->rows->len; i++)
        r->row_fit_s[i] = fp_fit_row_estimate(d, &g_array_index(d->rows, fp_fit_row, i), r->device);
    r->spearman_fit = pooled_spearman(d, r->row_fit_s);
    r->spearman_cv = NAN;
    for (uint32_t m = 0; m < r->n_models; m++) {
        r->within[0] += fabs(r->base_eval[m].ratio - 1) <= FP_FIT_TOLERANCE;
        r->within[1] += fabs(r->fit_eval[m].ratio - 1) <= FP_FIT_TOLERANCE;
    }
    if (r->n_models < 2 || opts.no_cv)
        return g_steal_pointer(&r);
    r->cv_eval = g_new0(fp_fit_eval, r->n_models + 1);
    r->row_cv_s = g_new(double, d->rows->len + 1);
    for (guint i = 0; i < d->rows->len; i++)
        r->row_cv_s[i] = NAN;
    g_autofree fold *folds = g_new0(fold, r->n_models + 1);
    run_folds(d, base, &opts, folds, r->n_models);
    for (uint32_t m = 0; m < r->n_models; m++) {
        fp_device dev;
        if (!folds[m].ok) {
            r->cv_eval[m] = (fp_fit_eval){.ratio = NAN, .spearman = NAN, .median_ape = NAN};
            continue;
        }
        apply(base, folds[m].theta, &dev);
        r->cv_eval[m] = evaluate(d, m, &dev);
        r->within[2] += fabs(r->cv_eval[m].ratio - 1) <= FP_FIT_TOLERANCE;
        for (guint i = 0; i < d->rows->len; i++) {
            const fp_fit_row *row = &g_array_index(d->rows, fp_fit_row, i);
            if (row->model == m)
                r->row_cv_s[i] = fp_fit_row_estimate(d, row, &dev);
        }
    }
    r->spearman_cv = pooled_spearman(d, r->row_cv_s);
    return g_steal_pointer(&r);
}

void fp_fit_result_free(fp_fit_result *r)
{
    if (!r)
        return;
    fp_device_free(r->device);
    g_free(r->base_eval);
    g_free(r->fit_eval);
    g_free(r->cv_eval);
    g_free(r->row_fit_s);
    g_free(r->row_cv_s);
    g_free(r);
}
