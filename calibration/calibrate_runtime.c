/* calibrate_runtime.c - the micro-models' points: costed by fuseplan, timed by ONNX Runtime, and
 * the fit of a profile to them (see calibrate_runtime.h). */
#include "calibration/calibrate_runtime.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "calibration/calibrate.h"
#include "calibration/fit_rows.h"
#include "frontends/onnx/onnx_write.h"
#include "passes/denormal.h"

/* A point is measured when its long chain takes this much longer than its short one (the two
 * timings' noise is a few percent: a smaller difference, kernels ONNX Runtime runs as no-ops, is
 * noise and no time per kernel) */
#define MIN_SIGNAL 0.1

/* A weight read from memory streams within this factor of the triad's bandwidth (measured: 0.55 to
 * 1.6 of it); a rate outside says the chain's weights were not cold (a cache level measured larger
 * than the chain) or its timing was disturbed, and no rate is taken */
#define WEIGHT_RATE_SPAN 4.0

/* The rate several points reach, not one: one point's chains timed unluckily (a short chain
 * preempted in every round) can show a rate half again the others' */
#define BEST_RATE_RANK 3

/* The fit's robust scale (Huber's, on log time): a calibration on a quiet host fits its points
 * with an rms log error of 0.10 to 0.12; a point further off than this pulls with a constant force,
 * so a few chains a busy host slowed in every round do not drag every class toward them */
#define FIT_ROBUST 0.15

static void point_clear(gpointer p)
{
    fp_rt_point *pt = p;
    if (pt->short_ops)
        g_array_unref(pt->short_ops);
    if (pt->long_ops)
        g_array_unref(pt->long_ops);
    if (pt->kernels)
        g_array_unref(pt->kernels);
}

void fp_rt_set_free(fp_rt_set *s)
{
    if (!s)
        return;
    if (s->points)
        g_array_unref(s->points);
    if (s->cases)
        g_array_unref(s->cases);
    g_free(s);
}

const char *fp_rt_level_name(fp_ort_level level) { return level == FP_ORT_ALL ? "all" : "disabled"; }

char *fp_rt_point_name(const fp_rt_set *s, const fp_rt_point *p)
{
    return g_strdup_printf("%s@%s", g_array_index(s->cases, fp_micro_case, p->index).name, fp_rt_level_name(p->level));
}

/* The ops of the chain of n ops of case c at level as fuseplan costs them on base (fp_fit_op each;
 * the analysis reads the model from a temporary file); NULL with an error naming the case. */
static GArray *chain_ops(const fp_micro_case *c, int n, fp_ort_level level, const fp_device *base, GError **error)
{
    g_autoptr(GBytes) bytes = fp_micro_bytes(c, n, error);
    if (!bytes)
        return NULL;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("fuseplan-micro-XXXXXX.onnx", &path, error);
    if (fd < 0)
        return NULL;
    gsize len;
    const char *data = g_bytes_get_data(bytes, &len);
    bool written = write(fd, data, len) == (ssize_t)len;
    close(fd);
    fp_analysis_opts o = {.device_profile = base, .what_if = FP_DT_UNDEFINED};
    if (level == FP_ORT_ALL)
        o.target = "ort-cpu-all";
    else
        o.stop = FP_PIPELINE_SHAPES, o.cost = true;
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = written ? fp_analysis_run(path, &o, &err) : NULL;
    g_unlink(path);
    if (!a || !a->res.cost) {
        g_set_error(error, FP_CALIBRATE_ERROR, FP_CALIBRATE_ERROR_UNSUPPORTED, "micro-model %s (%d ops): %s", c->name,
                    n, err ? err->message : "cannot write a temporary file");
        return NULL;
    }
    GArray *ops = g_array_new(FALSE, FALSE, sizeof(fp_fit_op));
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        fp_fit_op op = fp_cost_kernel(&a->res.cost->ops[i]);
        g_array_append_val(ops, op);
    }
    return ops;
}

static bool same_op(const fp_fit_op *a, const fp_fit_op *b)
{
    return a->flops == b->flops && a->bytes == b->bytes && a->dtype == b->dtype && a->cls == b->cls &&
           a->parts == b->parts && a->operands == b->operands && a->cold == b->cold && a->rows == b->rows &&
           a->post == b->post && a->outputs == b->outputs && a->views == b->views && a->mixed == b->mixed &&
           a->inplace == b->inplace;
}

/* The ops of `more` less one equal op for each of `less` (a multiset difference). */
static GArray *ops_minus(const GArray *more, const GArray *less)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(fp_fit_op));
    g_autofree bool *used = g_new0(bool, MAX(less->len, 1));
    for (guint i = 0; i < more->len; i++) {
        const fp_fit_op *op = &g_array_index(more, fp_fit_op, i);
        guint j = 0;
        while (j < less->len && (used[j] || !same_op(op, &g_array_index(less, fp_fit_op, j))))
            j++;
        if (j < less->len)
            used[j] = true;
        else
            g_array_append_val(out, *op);
    }
    return out;
}

/* Adds case i's point at level to s. */
static bool add_point(fp_rt_set *s, guint i, fp_ort_level level, const fp_device *base, GError **error)
{
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, i);
    fp_rt_point p = {.index = i, .level = level};
    if (!(p.long_ops = chain_ops(c, c->chain, level, base, error)) ||
        !(p.short_ops = chain_ops(c, 1, level, base, error))) {
        point_clear(&p);
        return false;
    }
    p.kernels = ops_minus(p.long_ops, p.short_ops);
    g_autoptr(GArray) left = ops_minus(p.short_ops, p.long_ops);
    p.balanced = left->len == 0;
    g_array_append_val(s->points, p);
    return true;
}

fp_rt_set *fp_rt_set_new(const fp_device *base, GError **error)
{
    g_autoptr(fp_rt_set) s = g_new0(fp_rt_set, 1);
    s->cases = fp_micro_cases();
    s->points = g_array_new(FALSE, FALSE, sizeof(fp_rt_point));
    g_array_set_clear_func(s->points, point_clear);
    for (guint i = 0; i < s->cases->len; i++) {
        unsigned flags = g_array_index(s->cases, fp_micro_case, i).flags;
        if (!add_point(s, i, FP_ORT_DISABLED, base, error) ||
            ((flags & FP_MICRO_ALL) && !add_point(s, i, FP_ORT_ALL, base, error)))
            return NULL;
    }
    return g_steal_pointer(&s);
}

/* Times the chain of n ops of case c at level into *seconds. */
static bool time_chain(fp_ort *ort, const fp_micro_case *c, int n, fp_ort_level level, int threads, double budget_s,
                       double *seconds, GError **error)
{
    g_autoptr(GBytes) bytes = fp_micro_bytes(c, n, error);
    if (!bytes)
        return false;
    fp_ort_model m = {bytes, "x0", c->dims, c->rank, "y", c->scale};
    g_autoptr(GError) err = NULL;
    if (!fp_ort_time(ort, &m, level, threads, budget_s, seconds, &err)) {
        g_set_error(error, err->domain, err->code, "micro-model %s (%d ops) at level %s: %s", c->name, n,
                    fp_rt_level_name(level), err->message);
        return false;
    }
    return true;
}

/* Keeps t, a chain's time in one round, as its fastest (*best) or second fastest (*second). */
static void keep_round(double *best, double *second, double t)
{
    if (*best <= 0 || t < *best) {
        *second = *best;
        *best = t;
    } else if (*second <= 0 || t < *second) {
        *second = t;
    }
}

static bool chain_confirmed(double best, double second) { return second > 0 && second <= best * (1 + FP_RT_CONFIRM); }

bool fp_rt_point_confirmed(const fp_rt_point *p)
{
    return chain_confirmed(p->short_s, p->short2_s) && chain_confirmed(p->long_s, p->long2_s);
}

guint fp_rt_set_unconfirmed(const fp_rt_set *s)
{
    guint n = 0;
    for (guint i = 0; i < s->points->len; i++)
        n += !fp_rt_point_confirmed(&g_array_index(s->points, fp_rt_point, i));
    return n;
}

bool fp_rt_set_busy(const fp_rt_set *s) { return fp_rt_set_unconfirmed(s) > FP_RT_BUSY * s->points->len; }

bool fp_rt_fit_scattered(const fp_fit_result *f) { return f->rms_log > FP_RT_SCATTERED; }

/* Times p's chains once more (all: both; else those not confirmed), keeping the rounds. */
static bool time_point(const fp_rt_set *s, fp_rt_point *p, fp_ort *ort, int threads, double budget_s, bool all,
                       GError **error)
{
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
    double t;
    if (all || !chain_confirmed(p->short_s, p->short2_s)) {
        if (!time_chain(ort, c, 1, p->level, threads, budget_s, &t, error))
            return false;
        keep_round(&p->short_s, &p->short2_s, t);
    }
    if (all || !chain_confirmed(p->long_s, p->long2_s)) {
        if (!time_chain(ort, c, c->chain, p->level, threads, budget_s, &t, error))
            return false;
        keep_round(&p->long_s, &p->long2_s, t);
    }
    return true;
}

bool fp_rt_set_time(fp_rt_set *s, const GArray *which, fp_ort *ort, int threads, double budget_s, int rounds,
                    fp_rt_progress_fn progress, void *user, GError **error)
{
    guint n = which ? which->len : s->points->len, total = n * (guint)MAX(rounds, 1);
    for (guint i = 0; i < total; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, which ? g_array_index(which, guint, i % n) : i % n);
        if (!time_point(s, p, ort, threads, budget_s, true, error))
            return false;
        if (progress)
            progress(i + 1, total, &g_array_index(s->cases, fp_micro_case, p->index), p->level,
                     fp_rt_point_kernel_s(s, p), user);
    }
    return true;
}

bool fp_rt_set_measure(fp_rt_set *s, fp_ort *ort, int threads, double budget_s, int rounds, double confirm_s,
                       gint64 deadline, fp_rt_progress_fn progress, void *user, GError **error)
{
    guint n = s->points->len, again = 0;
    if (!fp_rt_set_time(s, NULL, ort, threads, budget_s, rounds, progress, user, error))
        return false;
    gint64 end = g_get_monotonic_time() + (gint64)(confirm_s * 1e6);
    if (deadline)
        end = MIN(end, deadline);
    for (bool left = true; left && g_get_monotonic_time() < end;) {
        left = false;
        for (guint i = 0; i < n && g_get_monotonic_time() < end; i++) {
            fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
            if (fp_rt_point_confirmed(p))
                continue;
            left = true;
            if (!time_point(s, p, ort, threads, budget_s, false, error))
                return false;
            if (progress)
                progress(++again, 0, &g_array_index(s->cases, fp_micro_case, p->index), p->level,
                         fp_rt_point_kernel_s(s, p), user);
        }
    }
    return true;
}

GArray *fp_rt_check_points(const fp_rt_set *s)
{
    const unsigned own_rate = FP_MICRO_COLD | FP_MICRO_SPILL | FP_MICRO_SHARED | FP_MICRO_DENORMAL | FP_MICRO_OUTPUTS |
                              FP_MICRO_FAN | FP_MICRO_MIXED;
    bool seen[FP_CLASS_COUNT] = {false};
    GArray *which = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        if (p->level != FP_ORT_DISABLED || (c->flags & own_rate) || !p->balanced || !p->kernels->len)
            continue;
        fp_op_class cls = g_array_index(p->kernels, fp_fit_op, 0).cls;
        if (!(c->flags & FP_MICRO_TINY)) { /* a launch-bound case always; of the others, a class's first */
            if (seen[cls])
                continue;
            seen[cls] = true;
        }
        g_array_append_val(which, i);
    }
    return which;
}

fp_rt_check fp_rt_set_check(const fp_rt_set *s, const GArray *which, const fp_device *d)
{
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) tiny = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) work = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < which->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, g_array_index(which, guint, i));
        double kernel_s = fp_rt_point_kernel_s(s, p), est = fp_rt_point_estimate_s(p, d);
        if (!(kernel_s > 0) || !(est > 0))
            continue;
        double r = est / (p->long_s - p->short_s);
        g_array_append_val(all, r);
        g_array_append_val(g_array_index(s->cases, fp_micro_case, p->index).flags & FP_MICRO_TINY ? tiny : work, r);
    }
    fp_rt_check c = {.n = all->len, .n_tiny = tiny->len};
    c.median = all->len ? fp_fit_median((double *)all->data, all->len) : 0;
    c.median_tiny = tiny->len ? fp_fit_median((double *)tiny->data, tiny->len) : 0;
    c.median_work = work->len ? fp_fit_median((double *)work->data, work->len) : 0;
    return c;
}

double fp_rt_point_kernel_s(const fp_rt_set *s, const fp_rt_point *p)
{
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
    double d = p->long_s - p->short_s;
    return p->long_s > 0 && p->short_s > 0 && d > MIN_SIGNAL * p->short_s ? d / (c->chain - 1) : 0;
}

/* The roofline time of ops on d. */
static double ops_time(const GArray *ops, const fp_device *d)
{
    double t = 0;
    for (guint k = 0; k < ops->len; k++)
        t += fp_roofline_kernel(d, &g_array_index(ops, fp_fit_op, k)).time_s;
    return t;
}

double fp_rt_point_estimate_s(const fp_rt_point *p, const fp_device *d)
{
    return p->balanced ? ops_time(p->kernels, d) : ops_time(p->long_ops, d) - ops_time(p->short_ops, d);
}

/* The point at level disabled of the first case of s with `flag` (and op `op` when not NULL);
 * NULL when there is none. A twin case's point is the one before it (asserted). */
static const fp_rt_point *flagged_point(const fp_rt_set *s, unsigned flag, const char *op)
{
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        if (!(c->flags & flag) || p->level != FP_ORT_DISABLED || (op && strcmp(c->op, op) != 0))
            continue;
        g_assert(!(flag & (FP_MICRO_SPILL | FP_MICRO_DENORMAL | FP_MICRO_OUTPUTS)) ||
                 (i > 0 && (p - 1)->index + 1 == p->index && (p - 1)->level == p->level));
        return p;
    }
    return NULL;
}

/* The sum over ops (fp_fit_op) of the uint64_t field at offset `field` (cold, spill). */
static double ops_sum(const GArray *ops, size_t field)
{
    double sum = 0;
    for (guint k = 0; k < ops->len; k++)
        sum += (double)G_STRUCT_MEMBER(uint64_t, &g_array_index(ops, fp_fit_op, k), field);
    return sum;
}

bool fp_rt_set_cold_fits(const fp_rt_set *s)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_COLD, NULL);
    return p && ops_sum(p->long_ops, G_STRUCT_OFFSET(fp_fit_op, cold)) <=
                    FP_RT_COLD_HELD * ops_sum(p->long_ops, G_STRUCT_OFFSET(fp_fit_op, bytes));
}

double fp_rt_set_weight_bandwidth(const fp_rt_set *s, const fp_device *d)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_COLD, NULL);
    if (!p || fp_rt_point_kernel_s(s, p) <= 0 || fp_rt_set_cold_fits(s))
        return 0;
    fp_device unbounded = *d;
    unbounded.weight_bandwidth = G_MAXDOUBLE;
    size_t field = G_STRUCT_OFFSET(fp_fit_op, cold);
    double cold = ops_sum(p->long_ops, field) - ops_sum(p->short_ops, field);
    double left = p->long_s - p->short_s - fp_rt_point_estimate_s(p, &unbounded);
    double rate = cold > 0 && left > MIN_SIGNAL * (p->long_s - p->short_s) ? cold / left : 0;
    return rate > d->bandwidth / WEIGHT_RATE_SPAN && rate < d->bandwidth * WEIGHT_RATE_SPAN ? rate : 0;
}

double fp_rt_set_spill_bandwidth(const fp_rt_set *s)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_SPILL, NULL);
    if (!p)
        return 0;
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
    size_t field = G_STRUCT_OFFSET(fp_fit_op, spill);
    double weights = (double)c->dims[1] * (double)c->dims[1] * sizeof(float); /* its K x K weight */
    double spill = p->balanced ? ops_sum(p->kernels, field)
                               : ops_sum(p->long_ops, field) - ops_sum(p->short_ops, field);
    spill /= c->chain - 1;
    double hot = fp_rt_point_kernel_s(s, p - 1), more = fp_rt_point_kernel_s(s, p) - hot;
    return hot > 0 && more > FP_RT_CONFIRM * hot && spill > weights / 2 ? spill / more : 0;
}

/* The denormal operations one kernel of FP_MICRO_DENORMAL case c does (passes/denormal.h): a
 * MatMul's multiply-adds on x0's denormal elements (its kernel k's FLOPs / 2 times their share), a
 * Softmax's denormal results (fp_denormal_fraction of x0 along its last dim, times its elements). */
static double denormal_events(const fp_micro_case *c, const fp_fit_op *k)
{
    size_t n = 1, denormal = 0;
    for (int i = 0; i < c->rank; i++)
        n *= (size_t)c->dims[i];
    g_autofree float *x = g_new(float, n);
    for (size_t i = 0; i < n; i++) {
        x[i] = fp_ort_pattern(i, c->scale);
        denormal += fp_denormal_float(x[i]);
    }
    if (strcmp(c->op, "Softmax") == 0)
        return fmax(fp_denormal_fraction(x, n, (uint64_t)c->dims[c->rank - 1]), 0) * (double)n;
    return (double)k->flops / 2 * (double)denormal / (double)n;
}

double fp_rt_set_denormal_s(const fp_rt_set *s, const char *op)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_DENORMAL, op);
    if (!p)
        return 0;
    g_assert(p->kernels->len);
    double normal = fp_rt_point_kernel_s(s, p - 1), denormal = fp_rt_point_kernel_s(s, p);
    double events = denormal_events(&g_array_index(s->cases, fp_micro_case, p->index),
                                    &g_array_index(p->kernels, fp_fit_op, 0));
    return normal > 0 && denormal > 0 && events > 0 ? MAX(denormal - normal, 0) / events : 0;
}

double fp_rt_set_output_s(const fp_rt_set *s)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_OUTPUTS, NULL);
    if (!p)
        return 0;
    int outputs = g_array_index(s->cases, fp_micro_case, p->index).outputs;
    double one = fp_rt_point_kernel_s(s, p - 1), more = fp_rt_point_kernel_s(s, p);
    return one > 0 && more > 0 && outputs > 0 ? MAX(more - one, 0) / outputs : 0;
}

double fp_rt_set_mixed_s(const fp_rt_set *s, const fp_device *d)
{
    const fp_rt_point *p = flagged_point(s, FP_MICRO_MIXED, NULL);
    if (!p || fp_rt_point_kernel_s(s, p) <= 0)
        return 0;
    fp_device alone = *d;
    alone.launch_mixed = 0;
    guint mixed = 0;
    for (guint i = 0; i < p->long_ops->len; i++)
        mixed += g_array_index(p->long_ops, fp_fit_op, i).mixed;
    double more = p->long_s - p->short_s - fp_rt_point_estimate_s(p, &alone);
    return mixed ? MAX(more, 0) / mixed : 0;
}

/* The squared error of the least-squares line t = a + b x through the n points, a and b in *a and *b. */
static double line_fit(const double *x, const double *t, int n, double *a, double *b)
{
    double mx = 0, mt = 0, sxx = 0, sxt = 0, sse = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i] / n;
        mt += t[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxt += (x[i] - mx) * (t[i] - mt);
    }
    *b = sxx > 0 ? sxt / sxx : 0;
    *a = mt - *b * mx;
    for (int i = 0; i < n; i++) {
        double e = t[i] - (mt + *b * (x[i] - mx));
        sse += e * e;
    }
    return sse;
}

double fp_rt_life_fit(const double *gaps_s, const double *t, int n)
{
    double hi = t[0];
    for (int i = 1; i < n; i++)
        hi = MAX(hi, t[i]);
    if (n < 3 || hi - t[0] < MIN_SIGNAL * t[0])
        return 0;
    double best = G_MAXDOUBLE, life = 0;
    g_autofree double *x = g_new(double, n);
    for (double l = FP_RT_LIFE_MIN; l <= FP_RT_LIFE_MAX * 1.0001; l *= M_SQRT2) {
        double a = 0, b = 0;
        for (int i = 0; i < n; i++)
            x[i] = -expm1(-(gaps_s[i] + t[i]) / l);
        double e = line_fit(x, t, n, &a, &b);
        if (b > 0 && e < best) {
            best = e;
            life = l;
        }
    }
    return life < FP_RT_LIFE_MAX ? life : 0;
}

bool fp_rt_weight_life(const fp_rt_set *s, fp_ort *ort, int threads, double *life_s, GError **error)
{
    static const double gaps[] = FP_RT_LIFE_GAPS;
    double t[G_N_ELEMENTS(gaps)];
    g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(double));
    const fp_rt_point *p = flagged_point(s, FP_MICRO_COLD, NULL);
    *life_s = 0;
    if (!p)
        return true;
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
    g_autoptr(GBytes) bytes = fp_micro_bytes(c, c->chain, error);
    fp_ort_model m = {bytes, "x0", c->dims, c->rank, "y", c->scale};
    if (!bytes)
        return false;
    if (!fp_ort_time_apart(ort, &m, threads, gaps, G_N_ELEMENTS(gaps), FP_RT_LIFE_RUNS, runs, error)) {
        g_prefix_error(error, "micro-model %s (%d ops) after sleeps: ", c->name, c->chain);
        return false;
    }
    for (guint g = 0; g < G_N_ELEMENTS(gaps); g++) /* each gap's median run */
        t[g] = fp_fit_median(&g_array_index(runs, double, g *FP_RT_LIFE_RUNS), FP_RT_LIFE_RUNS);
    *life_s = fp_rt_life_fit(gaps, t, G_N_ELEMENTS(gaps));
    return true;
}

uint64_t fp_rt_foot_fit(const double *bytes, const double *t, int n, double warm_s, double *from)
{
    double x[16], f[16];
    int m = 0;
    for (int i = 0; i < n && m < (int)G_N_ELEMENTS(x); i++) {
        double share = (t[i] - warm_s) / (t[n - 1] - warm_s);
        if (t[n - 1] > warm_s && share > FP_RT_FOOT_SETTLED && share < 1 - FP_RT_FOOT_SETTLED)
            x[m] = bytes[i], f[m++] = share;
    }
    double start = 0, slope = 0; /* f = F / C - from: start -from, slope 1 / C */
    if (m < 2 || (line_fit(x, f, m, &start, &slope), slope <= 0))
        return 0;
    *from = -start;
    return *from > 0 ? (uint64_t)(1 / slope) : 0;
}

bool fp_rt_footprint(const fp_rt_set *s, fp_ort *ort, int threads, double budget_s, uint64_t *capacity, double *from,
                     GError **error)
{
    static const int chains[] = FP_RT_FOOT_CHAINS;
    const fp_rt_point *p = flagged_point(s, FP_MICRO_COLD, NULL);
    *capacity = 0;
    if (!p || !fp_rt_set_cold_fits(s) || fp_rt_point_kernel_s(s, p) <= 0 || !p->kernels->len)
        return true;
    fp_micro_case fan = g_array_index(s->cases, fp_micro_case, p->index), *c = &fan;
    fan.flags |= FP_MICRO_FAN; /* along a chain of 96 products the activations underflow to denormals */
    double bytes[G_N_ELEMENTS(chains)], t[G_N_ELEMENTS(chains)];
    for (guint i = 0; i < G_N_ELEMENTS(chains); i++) {
        g_autoptr(GBytes) model = fp_micro_bytes(c, chains[i], error);
        fp_ort_model m = {model, "x0", c->dims, c->rank, "y", c->scale};
        if (!model || !fp_ort_time(ort, &m, FP_ORT_DISABLED, threads, budget_s, &t[i], error)) {
            g_prefix_error(error, "micro-model %s (%d ops): ", c->name, chains[i]);
            return false;
        }
        t[i] /= chains[i];
        bytes[i] = (double)g_array_index(p->kernels, fp_fit_op, 0).bytes * chains[i];
    }
    *capacity = fp_rt_foot_fit(bytes, t, G_N_ELEMENTS(chains), fp_rt_point_kernel_s(s, p), from);
    return true;
}

static int cmp_desc(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The least of FP_RT_IO_ROUNDS timings of fp_micro_io_text's model (`inputs`, `outputs`) at
 * ORT_DISABLE_ALL, each budget_s: *seconds a run. */
static bool time_io(fp_ort *ort, bool inputs, bool outputs, int threads, double budget_s, double *seconds,
                    GError **error)
{
    g_autofree char *text = fp_micro_io_text(inputs, outputs);
    g_autoptr(GBytes) model = fp_onnx_write_text(text, strlen(text), error);
    if (!model)
        return false;
    static const int64_t dims[] = {1, 16};
    float data[16];
    for (int i = 0; i < 16; i++)
        data[i] = fp_ort_pattern((size_t)i, 0);
    char in_names[FP_MICRO_IO_OPS + 1][8], out_names[FP_MICRO_IO_OPS][8];
    fp_ort_tensor in[FP_MICRO_IO_OPS + 1];
    const char *out[FP_MICRO_IO_OPS];
    int n_in = inputs ? FP_MICRO_IO_OPS + 1 : 1, n_out = 0;
    for (int i = 0; i < n_in; i++) {
        g_snprintf(in_names[i], sizeof in_names[i], "x%d", i);
        in[i] = (fp_ort_tensor){in_names[i], 1, dims, 2, data, sizeof data};
    }
    for (int i = outputs ? 1 : FP_MICRO_IO_OPS; i <= FP_MICRO_IO_OPS; i++, n_out++) {
        g_snprintf(out_names[n_out], sizeof out_names[n_out], "a%d", i);
        out[n_out] = out_names[n_out];
    }
    *seconds = INFINITY;
    for (int r = 0; r < FP_RT_IO_ROUNDS; r++) {
        double t = 0;
        if (!fp_ort_time_bound(ort, model, in, n_in, out, n_out, FP_ORT_DISABLED, threads, budget_s, &t, error))
            return false;
        *seconds = MIN(*seconds, t);
    }
    return true;
}

bool fp_rt_io_overheads(fp_ort *ort, int threads, double budget_s, double *input_s, double *output_s, GError **error)
{
    double base = 0, inputs = 0, outputs = 0;
    if (!time_io(ort, false, false, threads, budget_s, &base, error) ||
        !time_io(ort, true, false, threads, budget_s, &inputs, error) ||
        !time_io(ort, false, true, threads, budget_s, &outputs, error))
        return false;
    *input_s = MAX(inputs - base, 0) / FP_MICRO_IO_OPS;
    *output_s = MAX(outputs - base, 0) / (FP_MICRO_IO_OPS - 1);
    return true;
}

double fp_rt_set_best_rate(const fp_rt_set *s)
{
    g_autoptr(GArray) rates = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        double flops = 0;
        for (guint k = 0; k < p->kernels->len; k++)
            flops += (double)g_array_index(p->kernels, fp_fit_op, k).flops;
        if (p->balanced && fp_rt_point_kernel_s(s, p) > 0 && flops > 0) {
            double r = flops / (p->long_s - p->short_s);
            g_array_append_val(rates, r);
        }
    }
    g_array_sort(rates, cmp_desc);
    return rates->len ? g_array_index(rates, double, MIN(rates->len, BEST_RATE_RANK) - 1) : 0;
}

fp_fit_result *fp_rt_set_fit(const fp_rt_set *s, const fp_device *base, GError **error)
{
    g_autoptr(fp_fit_data) d = fp_fit_data_new();
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        g_autofree char *name = fp_rt_point_name(s, p);
        if (c->flags & (FP_MICRO_DENORMAL | FP_MICRO_SHARED | FP_MICRO_OUTPUTS | FP_MICRO_MIXED))
            continue;
        if (!p->balanced) { /* t(K) - t(1) is no sum of kernels: both chains as whole runs */
            if (p->long_s <= 0 || p->short_s <= 0)
                continue;
            uint32_t model = fp_fit_data_add_model(d, name, 0);
            fp_fit_data_add_run(d, model, "(long chain)", (const fp_fit_op *)p->long_ops->data, p->long_ops->len, 0,
                                p->long_s);
            fp_fit_data_add_run(d, model, "(short chain)", (const fp_fit_op *)p->short_ops->data, p->short_ops->len, 0,
                                p->short_s);
            continue;
        }
        if (fp_rt_point_kernel_s(s, p) <= 0 || !p->kernels->len)
            continue;
        uint32_t model = fp_fit_data_add_model(d, name, 0);
        fp_fit_data_add_row(d, model, name, (const fp_fit_op *)p->kernels->data, p->kernels->len, 0,
                            p->long_s - p->short_s);
        if ((c->flags & FP_MICRO_TINY) && p->level == FP_ORT_DISABLED)
            fp_fit_data_add_run(d, model, "(short chain)", (const fp_fit_op *)p->short_ops->data, p->short_ops->len, 0,
                                p->short_s);
    }
    fp_fit_opts o = {.objective = FP_FIT_MODELS, .no_cv = true, .robust = FIT_ROBUST};
    return fp_fit_run(d, base, &o, error);
}
