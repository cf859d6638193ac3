/* calibrate_runtime.h - `fuseplan calibrate --runtime onnxruntime`: the micro-models
 * (calibration/micro_models.h) run through ONNX Runtime on this host (runtime/ort.h), each case's
 * per-kernel time by the chain difference, and a profile fitted to them with the fit of
 * calibration/fit.h.
 *
 * A point is a case at one optimization level: ORT_DISABLE_ALL for every case (the NCHW kernels,
 * against fuseplan's model as exported), ORT_ENABLE_ALL for the convolutions too (ORT's NCHWc
 * kernels, against the final stage of target ort-cpu-all). fuseplan costs both chains of a point
 * at its level; the long chain's kernels less the short chain's (matched by class, work, traffic
 * and GEMM shape: the reorders and the ReduceMax cancel) are the point's row, measured
 * t(K) - t(1). Where the short chain has ops the long one has not (a strided chain's last output,
 * and so its ReduceMax and reorders, shrinks with K), that difference is no sum of kernels: both
 * chains are then whole runs instead (measured t(K) and t(1)). A tiny case's short chain at
 * ORT_DISABLE_ALL is a whole run as well (measured t(1)): the run overhead. Every point is a model
 * of its own to the fit (rows weighted alike). */
#ifndef FP_CALIBRATE_RUNTIME_H
#define FP_CALIBRATE_RUNTIME_H

#include <glib.h>

#include "calibration/fit.h"
#include "calibration/micro_models.h"
#include "runtime/ort.h"

typedef struct {
    guint index;              /* its case in the set's cases */
    fp_ort_level level;       /* FP_ORT_DISABLED or FP_ORT_ALL */
    GArray *short_ops;        /* fp_fit_op: the chain of one op as fuseplan costs it at level */
    GArray *long_ops;         /* fp_fit_op: the chain of K ops */
    GArray *kernels;          /* fp_fit_op: the long chain's less the short chain's */
    bool balanced;            /* every op of the short chain has its equal in the long one */
    double short_s, long_s;   /* measured per run, each chain's fastest round (0: not measured) */
    double short2_s, long2_s; /* each chain's second fastest round (0: timed once) */
} fp_rt_point;

typedef struct {
    GArray *cases;  /* fp_micro_case (fp_micro_cases()) */
    GArray *points; /* fp_rt_point */
} fp_rt_set;

void fp_rt_set_free(fp_rt_set *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_rt_set, fp_rt_set_free)

/* "disabled" or "all". */
const char *fp_rt_level_name(fp_ort_level level);

/* Point p's name, CASE@LEVEL: its model in the fit and its key in a timings file. Caller frees. */
char *fp_rt_point_name(const fp_rt_set *s, const fp_rt_point *p);

/* Every case's points, costed by fuseplan on `base` (its analysis of each chain: the model as
 * exported at ORT_DISABLE_ALL, the final stage of target ort-cpu-all at ORT_ENABLE_ALL). NULL
 * with the analysis' error naming the case (a bug in a case). */
fp_rt_set *fp_rt_set_new(const fp_device *base, GError **error);

/* Progress of point `i` of `n`: its case, level and per-kernel time (seconds), after it is timed;
 * n 0 while unconfirmed points are timed again (i counts those timings). */
typedef void (*fp_rt_progress_fn)(guint i, guint n, const fp_micro_case *c, fp_ort_level level, double kernel_s,
                                  void *user);

/* Times both chains of the points `which` of s (guint indices; NULL: every point) with
 * fp_ort_time (threads, budget_s a chain), `rounds` times over them, keeping each chain's fastest;
 * progress (when given) after each. False with ONNX Runtime's error naming the case and level. */
bool fp_rt_set_time(fp_rt_set *s, const GArray *which, fp_ort *ort, int threads, double budget_s, int rounds,
                    fp_rt_progress_fn progress, void *user, GError **error);

/* Times both chains of every point with fp_ort_time (threads, budget_s per chain) into
 * short_s and long_s, `rounds` times over the whole set, keeping each chain's fastest: on a
 * shared machine a burst of another load slows the points timed during it, and a point timed
 * again minutes later escapes it. Then, for up to confirm_s seconds and not past `deadline` (a
 * g_get_monotonic_time instant; 0: none), it times again the points with a chain not confirmed
 * (fp_rt_point_confirmed), in passes over them, until none is left. Progress counts every timing.
 * False with ONNX Runtime's error naming the case and level. */
bool fp_rt_set_measure(fp_rt_set *s, fp_ort *ort, int threads, double budget_s, int rounds, double confirm_s,
                       gint64 deadline, fp_rt_progress_fn progress, void *user, GError **error);

/* Whether both chains of p have a second round within FP_RT_CONFIRM of their fastest: a fastest
 * time that a noisy neighbour did not inflate in every round (one that did is reached once). */
#define FP_RT_CONFIRM 0.03
bool fp_rt_point_confirmed(const fp_rt_point *p);
/* The points of s not confirmed. */
guint fp_rt_set_unconfirmed(const fp_rt_set *s);

/* Whether the host was busy through the calibration: more than FP_RT_BUSY of the points still
 * unconfirmed after the confirmation passes. On the development VM (2026-12-05, eleven one-thread
 * calibrations within two hours) those that left 0 to 8 of 141 points unconfirmed put 29 to 33 of
 * 36 networks within +-10% at ORT_DISABLE_ALL; those that left 58 to 112, 10 to 30, estimating
 * them 3-16% slow as a whole (docs/devices.md). */
#define FP_RT_BUSY 0.25
bool fp_rt_set_busy(const fp_rt_set *s);

/* Whether the fit f of a set's points left them scattered as a busy host's are: an rms log error
 * above FP_RT_SCATTERED. On the development VM (2026-12-05 and 06, 27 one-thread calibrations)
 * the fits were at 0.101-0.138, but for four at 0.171-0.227, two of which left too few points
 * unconfirmed for fp_rt_set_busy (16 and 27 of 141); one of those estimated 36 networks 10% slower
 * than the two calibrations beside it (docs/devices.md). */
#define FP_RT_SCATTERED 0.15
bool fp_rt_fit_scattered(const fp_fit_result *f);

/* A point's time per kernel: (long_s - short_s) / (K - 1); 0 when not measured or when the
 * difference is within the timings' noise (under a tenth of short_s). */
double fp_rt_point_kernel_s(const fp_rt_set *s, const fp_rt_point *p);

/* The estimate on d of t(K) - t(1), seconds: the long chain's ops' roofline times (passes/roofline.h)
 * less the short chain's (for a balanced point, its kernels' times). */
double fp_rt_point_estimate_s(const fp_rt_point *p, const fp_device *d);

/* The rate at which the kernels read weights no cache holds (fp_device.weight_bandwidth), from the
 * FP_MICRO_COLD point at level disabled: its long chain's weights overflow the last cache level of
 * d (a copy of d whose weight_bandwidth is unbounded gives the rest of its roofline time), its
 * short chain's do not. C / (t(K) - t(1) - (est(K) - est(1))), C the long chain's cold
 * bytes; 0 when no such point was measured, its chains read no cold bytes on d, the remainder
 * is under a tenth of t(K) - t(1) (no reads past the caches measurable), the chain fits
 * (fp_rt_set_cold_fits), or the rate is not within 4x of d's bandwidth either way (the chain's
 * weights were not cold, or its timing disturbed). */
double fp_rt_set_weight_bandwidth(const fp_rt_set *s, const fp_device *d);
/* Whether the FP_MICRO_COLD point's long chain reads at most FP_RT_COLD_HELD of its bytes from
 * memory on the profile the set was costed on: its last cache level holds the chain (a server's L3
 * of 64 MB or more; a VM's whose loss starts near the chain's footprint), so no rate of weights
 * from memory can be measured (false when the set has no such point). */
#define FP_RT_COLD_HELD 0.05
bool fp_rt_set_cold_fits(const fp_rt_set *s);

/* The rate at which a GEMM reads packed weights past the L2 (fp_device.weight_l3_bandwidth): the
 * spill bytes per kernel (fp_kernel.spill, counted as fp_rt_point_estimate_s counts its time) of
 * the FP_MICRO_SPILL point at level disabled over its time per kernel less its FP_MICRO_SHARED
 * twin's (the case before it, whose one weight the L2 holds); 0 when either was not measured, the
 * spill point reads less than half a kernel's weights past the L2 on the profile it was costed on
 * (an L2 that holds its chain), or its time exceeds the twin's by less than FP_RT_CONFIRM of it (no
 * reads past the L2 measurable). */
double fp_rt_set_spill_bandwidth(const fp_rt_set *s);
/* The time of one denormal operation of op `op` ("MatMul": a multiply-add on a denormal operand,
 * the profile's denormal_mac_s; "Softmax": a denormal result, its denormal_exp_s;
 * passes/denormal.h): its FP_MICRO_DENORMAL point's time per kernel less its twin's (the case
 * before it, on the unscaled x0), over the denormal operations of a kernel (of x0's fill,
 * fp_ort_pattern), at least 0; 0 when either point was not measured or there are none. */
double fp_rt_set_denormal_s(const fp_rt_set *s, const char *op);
/* The time a kernel spends per output past its first ([launch] output): the FP_MICRO_OUTPUTS
 * point's time per kernel at level disabled less its twin's (the case before it, the same op
 * without those outputs), over the outputs it adds, at least 0; 0 when either point was not
 * measured. */
double fp_rt_set_output_s(const fp_rt_set *s);

/* The time a kernel spends among kernels of other classes past what their own chains cost
 * ([launch] mixed): the FP_MICRO_MIXED point's t(K) - t(1) at level disabled less its estimate on d
 * without that term (d fitted to the other points), over the long chain's kernels that cost it
 * (fp_kernel.mixed: its short chain's, of two classes, do not), at least 0; 0 when the point was not
 * measured. */
double fp_rt_set_mixed_s(const fp_rt_set *s, const fp_device *d);

/* The mean life in seconds of a run's weights in the last cache level (fp_device.last_life) from
 * the times t[i] of a chain's run after sleeping gaps_s[i] (n of them, the gaps growing, the last
 * one long enough for the level to lose all): the L of the model t = A + B (1 - exp(-c / L)), c
 * the gap and the run together (the time since the run before read the weights), that fits the
 * times best in least squares (A and B by linear regression for each L of a geometric grid from
 * FP_RT_LIFE_MIN to FP_RT_LIFE_MAX). 0 (kept for good) when the times rise by less than a tenth of
 * the first (nothing lost in time, or nothing measurable), when B is not positive or the best L is
 * the grid's last (lost too slowly to tell). */
#define FP_RT_LIFE_MIN 2.5e-4
#define FP_RT_LIFE_MAX 4.0
double fp_rt_life_fit(const double *gaps_s, const double *t, int n);
/* fp_rt_life_fit of the FP_MICRO_COLD case's long chain timed by fp_ort_time_apart on `threads`
 * threads after each of FP_RT_LIFE_GAPS seconds' sleeps (the median of FP_RT_LIFE_RUNS runs after
 * each, about 1.5 s in all); *life_s 0 when the set has no such case. False with the runtime's
 * error. */
#define FP_RT_LIFE_GAPS                                  \
    {                                                    \
        0, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.1 \
    }
#define FP_RT_LIFE_RUNS 7
bool fp_rt_weight_life(const fp_rt_set *s, fp_ort *ort, int threads, double *life_s, GError **error);

/* The last cache level as ONNX Runtime's weights find it, where the profile the set was costed on
 * holds the FP_MICRO_COLD chain (fp_rt_set_cold_fits: a server's last level, which the other cores,
 * or a VM's neighbours, share): that case's op in fans (FP_MICRO_FAN: every op reads x0; along a
 * chain of 96 the activations underflow to denormals) of FP_RT_FOOT_CHAINS ops, each timed by
 * fp_ort_time (threads, budget_s) at level disabled. Their time per kernel against the cold point's
 * (its chain held) and the largest fan's (read from memory) gives what each loses
 * (fp_rt_foot_fit): *capacity the last level's and *from its [cache] last_from. *capacity 0 (the
 * profile's stand) when the cold chain does not fit, was not measured, or the chains show no ramp.
 * False with the runtime's error. */
#define FP_RT_FOOT_CHAINS  \
    {                      \
        24, 32, 48, 64, 96 \
    }
bool fp_rt_footprint(const fp_rt_set *s, fp_ort *ort, int threads, double budget_s, uint64_t *capacity, double *from,
                     GError **error);
/* The ramp f(F) = clamp(F / C - from, 0, 1) of fp_roofline_lost through the shares lost
 * f_i = (t_i - warm_s) / (t_last - warm_s) of n chains of footprints bytes[i] (ascending), t_i their
 * times per kernel, the last chain's all read from memory: the least-squares line through the
 * shares between FP_RT_FOOT_SETTLED and 1 - FP_RT_FOOT_SETTLED, C the inverse of its slope. 0 when
 * fewer than two are, or the line does not rise, or it starts at no footprint (from <= 0). */
#define FP_RT_FOOT_SETTLED 0.05
uint64_t fp_rt_foot_fit(const double *bytes, const double *t, int n, double warm_s, double *from);

/* The time a run of ONNX Runtime spends per graph input past the first (*input_s) and per graph
 * output past the first (*output_s) on `threads` threads at ORT_DISABLE_ALL: the differences of
 * fp_micro_io_text's models (the least of FP_RT_IO_ROUNDS timings each, budget_s a timing), per
 * input or output, at least 0. False with the runtime's error. */
#define FP_RT_IO_ROUNDS 3
bool fp_rt_io_overheads(fp_ort *ort, int threads, double budget_s, double *input_s, double *output_s, GError **error);

/* `calibrate --check`: whether a profile still holds on this host, from a sample of the points timed
 * again. The sample: at level disabled, every FP_MICRO_TINY case's point (a class's launch) and,
 * for each class its kernels are of, the first other case's, but for the cases timed for one rate
 * of their own (FP_MICRO_COLD, FP_MICRO_SPILL, FP_MICRO_SHARED, FP_MICRO_DENORMAL,
 * FP_MICRO_OUTPUTS, FP_MICRO_FAN, FP_MICRO_MIXED). Indices into s->points (guint). */
GArray *fp_rt_check_points(const fp_rt_set *s);

typedef struct {
    double median;      /* the points' estimate on the profile over their measured time per kernel */
    double median_tiny; /* over the FP_MICRO_TINY ones (launch-bound); 0 when none was measured */
    double median_work; /* over the others; 0 when none was measured */
    guint n, n_tiny;    /* points measured (fp_rt_point_kernel_s above 0), FP_MICRO_TINY ones among them */
} fp_rt_check;

/* The medians of fp_rt_point_estimate_s on d over the measured t(K) - t(1) of the points `which`
 * (n 0 and every median 0 when none was measured). */
fp_rt_check fp_rt_set_check(const fp_rt_set *s, const GArray *which, const fp_device *d);

/* The fastest rate the points' kernels reached: their FLOP over long_s - short_s, the third largest
 * over the balanced measured points that did work (the largest when fewer; FLOP/s; 0 when none
 * did). */
double fp_rt_set_best_rate(const fp_rt_set *s);

/* Fits base (efficiencies, half works, launch overheads, the group overhead, bandwidth and cache
 * factors, the run overhead) to the measured points but the FP_MICRO_DENORMAL, FP_MICRO_SHARED,
 * FP_MICRO_OUTPUTS and FP_MICRO_MIXED ones with Huber's loss (fp_fit_opts.robust: a point a busy host slowed does not drag the
 * classes), no cross-validation. NULL with the fit's error when no point was measured. */
fp_fit_result *fp_rt_set_fit(const fp_rt_set *s, const fp_device *base, GError **error);

#endif
