/* test_calibrate_runtime.c - calibrate_runtime suite: the micro-models load back through the ONNX
 * frontend and pass the IR verifier, their points pair each chain's kernels, the fit recovers a
 * profile's rates from timings made with it, `calibrate --runtime` refuses a missing, wrong or
 * misnamed runtime with one line and exit 2, `calibrate --micro-models` writes them, and the
 * timing keeps the fastest stretch of runs a window long. No ONNX
 * Runtime is needed. */
#include <glib/gstdio.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "calibration/calibrate_runtime.h"
#include "calibration/timings.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_write.h"
#include "passes/roofline.h"
#include "runtime/ort.h"
#include "passes/denormal.h"
#include "tutil.h"

/* The run-overhead models load and verify: FP_MICRO_IO_OPS Adds each, one graph input or one more
 * than the Adds, one output or one an Add. */
static void test_io_models_load(void)
{
    for (int inputs = 0; inputs < 2; inputs++)
        for (int outputs = 0; outputs < 2; outputs++) {
            g_autofree char *text = fp_micro_io_text(inputs, outputs);
            g_autoptr(GError) err = NULL;
            g_autoptr(GBytes) b = fp_onnx_write_text(text, strlen(text), &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(b);
            gsize len;
            const uint8_t *data = g_bytes_get_data(b, &len);
            g_autoptr(fp_model) m = fp_onnx_load_buffer("run_io", data, len, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(m);
            CU_ASSERT_TRUE(fp_model_verify(m, &err));
            CU_ASSERT_EQUAL(m->main->nodes->len, FP_MICRO_IO_OPS);
            CU_ASSERT_EQUAL(m->main->inputs->len, inputs ? FP_MICRO_IO_OPS + 1 : 1);
            CU_ASSERT_EQUAL(m->main->outputs->len, outputs ? FP_MICRO_IO_OPS : 1);
        }
}

/* Every case's chains of one and K ops load and verify, with K + 2 nodes (the ReduceMax), and each
 * op of a chain reads weights of its own (one consumer per initializer), as a network's layers do,
 * but in a FP_MICRO_SHARED case (every op the one weight). */
static void test_micro_models_load(void)
{
    g_autoptr(GArray) cs = fp_micro_cases();
    CU_ASSERT_TRUE(cs->len >= 40);
    for (guint i = 0; i < cs->len; i++) {
        const fp_micro_case *c = &g_array_index(cs, fp_micro_case, i);
        for (int n = 1; n <= c->chain; n += c->chain - 1) {
            g_autoptr(GError) err = NULL;
            g_autoptr(GBytes) b = fp_micro_bytes(c, n, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(b);
            gsize len;
            const uint8_t *data = g_bytes_get_data(b, &len);
            fp_model *m = fp_onnx_load_buffer(c->name, data, len, &err);
            if (!m)
                fprintf(stderr, "\n%s: %s\n", c->name, err->message);
            CU_ASSERT_PTR_NOT_NULL_FATAL(m);
            CU_ASSERT_TRUE(fp_model_verify(m, &err));
            CU_ASSERT_EQUAL(m->main->nodes->len, (guint)n + 1);
            bool shared = c->flags & FP_MICRO_SHARED;
            for (guint k = 0; k < m->main->initializers->len; k++)
                CU_ASSERT_EQUAL(((fp_value *)m->main->initializers->pdata[k])->n_uses, shared ? (guint)n : 1);
            if (c->inits[0])
                CU_ASSERT_EQUAL(m->main->initializers->len % (guint)(shared ? 1 : n), 0);
            fp_model_free(m);
        }
    }
}

/* The writer fills float initializers declared without data and refuses text that is not a model. */
static void test_writer(void)
{
    const char *text = "graph { initializer { name: \"w\" data_type: 1 dims: 4 dims: 3 } "
                       "initializer { name: \"b\" data_type: 1 dims: 4 } }";
    g_autoptr(GError) err = NULL;
    g_autoptr(GBytes) b = fp_onnx_write_text(text, strlen(text), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_TRUE(g_bytes_get_size(b) > 16 * 4); /* both payloads are in it */
    /* two initializers declared alike get values of their own */
    const char *two = "graph { initializer { name: \"w\" data_type: 1 dims: 4 dims: 3 } "
                      "initializer { name: \"v\" data_type: 1 dims: 4 dims: 3 } }";
    g_autoptr(GBytes) tb = fp_onnx_write_text(two, strlen(two), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
    gsize len;
    const uint8_t *data = g_bytes_get_data(tb, &len);
    fp_model *m = fp_onnx_load_buffer("two", data, len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const void *p[2] = {NULL, NULL};
    for (guint k = 0; k < 2 && k < m->main->initializers->len; k++) {
        const fp_tensor *t = ((fp_value *)m->main->initializers->pdata[k])->tensor;
        CU_ASSERT_EQUAL(t->nbytes, 48);
        p[k] = t->where == FP_DATA_INLINE                          ? t->data
               : t->where == FP_DATA_FILE && t->offset + 48 <= len ? data + t->offset
                                                                   : NULL;
    }
    CU_ASSERT_TRUE_FATAL(p[0] && p[1]);
    CU_ASSERT_NOT_EQUAL(memcmp(p[0], p[1], 48), 0);
    fp_model_free(m);
    /* a uint8 initializer (packed 4-bit weights) gets bytes of its own; one with data keeps it */
    const char *packed = "graph { initializer { name: \"q\" data_type: 2 dims: 8 dims: 16 } "
                         "initializer { name: \"z\" data_type: 2 dims: 2 raw_data: \"\\001\\002\" } }";
    g_autoptr(GBytes) pb = fp_onnx_write_text(packed, strlen(packed), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pb);
    data = g_bytes_get_data(pb, &len);
    m = fp_onnx_load_buffer("packed", data, len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(m->main->initializers->len, 2);
    CU_ASSERT_EQUAL(((fp_value *)m->main->initializers->pdata[0])->tensor->nbytes, 128);
    CU_ASSERT_EQUAL(((fp_value *)m->main->initializers->pdata[1])->tensor->nbytes, 2);
    fp_model_free(m);
    g_autoptr(GBytes) bad = fp_onnx_write_text("graph { nodes: 1 }", 18, &err);
    CU_ASSERT_PTR_NULL(bad);
    tu_expect_error(err, "nodes");
}

/* A copy of the profile d (key file round trip). */
static fp_device *copy_device(const fp_device *d)
{
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(d);
    return fp_device_from_keyfile(kf, "copy.ini", NULL);
}

/* The roofline time of the short chain's ops on d. */
static double short_time(const fp_device *d, const fp_rt_point *p)
{
    double t = 0;
    for (guint i = 0; i < p->short_ops->len; i++)
        t += fp_roofline_kernel(d, &g_array_index(p->short_ops, fp_fit_op, i)).time_s;
    return t;
}

typedef struct {
    fp_op_class c;
    double e;
} known_rate;

#define DISTURBED 1.5 /* a disturbed chain's time against its true time */

/* Whether point i is disturbed when every disturb-th one is (none at 0). */
static bool disturbed(guint i, guint disturb) { return disturb && i % disturb == disturb / 2; }

/* The micro-model set costed on the cpu-avx512 profile, which *base receives. */
static fp_rt_set *avx512_set(fp_device **base)
{
    g_autoptr(GError) err = NULL;
    *base = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*base);
    fp_rt_set *s = fp_rt_set_new(*base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s;
}

/* The kernel of class c with the most work among the points of s; NULL when none. */
static const fp_fit_op *largest_kernel(const fp_rt_set *s, fp_op_class c)
{
    const fp_fit_op *best = NULL;
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        for (guint k = 0; k < p->kernels->len; k++) {
            const fp_fit_op *op = &g_array_index(p->kernels, fp_fit_op, k);
            if (op->cls == c && (!best || op->flops > best->flops))
                best = op;
        }
    }
    return best;
}

/* Timings of every micro-model made with the base profile whose classes known[0..n) have the
 * given efficiencies: the fit started from the base finds their rates (within 10%: the
 * efficiency, lowered by the saturation, of each class's largest kernel; a GEMV's saturation is
 * the same at every size, so only the product is known) and estimates every point as the known
 * profile does; with disturb, every disturb-th point's long chain DISTURBED times slower, and
 * the other points so estimated. */
static void check_fit_recovers(const known_rate *known, size_t n, guint disturb)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    g_autoptr(fp_device) truth = copy_device(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    for (size_t i = 0; i < n; i++)
        truth->efficiency[known[i].c] = known[i].e;
    CU_ASSERT_TRUE(s->points->len > s->cases->len); /* the convolutions at level all too */
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        CU_ASSERT_TRUE(p->kernels->len >= (guint)c->chain - 1); /* the chain difference: K - 1 kernels at least */
        p->short_s = short_time(truth, p) + truth->run_overhead;
        p->long_s = p->short_s + fp_rt_point_estimate_s(p, truth);
        if (disturbed(i, disturb)) /* a chain slowed in every round */
            p->long_s *= DISTURBED;
    }
    g_autoptr(fp_fit_result) f = fp_rt_set_fit(s, base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_TRUE(f->rms_log < (disturb ? log(DISTURBED) : 0.05));
    CU_ASSERT_FALSE(!disturb && fp_rt_fit_scattered(f));
    CU_ASSERT_TRUE(f->base_rms_log > 0.1);
    for (size_t i = 0; i < n; i++) { /* the rate of the class's largest kernel, saturation included */
        const fp_fit_op *k = largest_kernel(s, known[i].c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        double got = fp_roofline_efficiency(f->device, k), made = fp_roofline_efficiency(truth, k);
        if (fabs(got / made - 1) > 0.1)
            fprintf(stderr, "\n%s: fitted %g, made with %g\n", fp_op_class_name(known[i].c), got, made);
        CU_ASSERT_TRUE(fabs(got / made - 1) <= 0.1);
    }
    guint off = 0; /* undisturbed points estimated more than 10% away from the known profile */
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        double made = fp_rt_point_estimate_s(p, truth), fitted = fp_rt_point_estimate_s(p, f->device);
        if (!disturbed(i, disturb))
            off += made > 0 && fabs(fitted / made - 1) > 0.1; /* a view costs nothing: not fitted */
    }
    if (disturb && off > s->points->len / 20)
        fprintf(stderr, "\n%u undisturbed points off by more than 10%%\n", off);
    /* disturbed, a class with few points follows its disturbed one a little */
    CU_ASSERT_TRUE(disturb ? off <= s->points->len / 20 : off == 0);
}

static void test_fit_recovers(void)
{
    const known_rate known[] = {{FP_CLASS_CONV, 0.3}, {FP_CLASS_MATMUL, 0.4}, {FP_CLASS_NCHWC_CONV, 0.9}};
    check_fit_recovers(known, G_N_ELEMENTS(known), 0);
}

/* Every twelfth point's long chain slowed by half in every round (a neighbour's burst the rounds
 * did not escape): the robust fit still finds the rates and estimates the other points as the
 * known profile does, but for a twentieth of them (a class with few points moves toward its
 * disturbed one by the robust scale; least squares puts a sixth of them more than 10% off). */
static void test_fit_robust(void)
{
    const known_rate known[] = {{FP_CLASS_CONV, 0.3}, {FP_CLASS_MATMUL, 0.4}, {FP_CLASS_NCHWC_CONV, 0.9}};
    check_fit_recovers(known, G_N_ELEMENTS(known), 12);
}

/* The refinement classes, each at a rate its parent does not have (slow enough that its
 * micro-models are bound by it): the fit tells them from their parents. */
static void test_fit_recovers_refinements(void)
{
    const known_rate known[] =
        {{FP_CLASS_CONV, 0.3},           {FP_CLASS_POINTWISE_CONV, 0.8},      {FP_CLASS_MATMUL, 0.5},
         {FP_CLASS_GEMV, 0.004},         {FP_CLASS_TRANSCENDENTAL, 0.002},    {FP_CLASS_TRANSPOSE, 0.0005},
         {FP_CLASS_ATTENTION, 0.001},    {FP_CLASS_STRIDED_DEPTHWISE, 0.002}, {FP_CLASS_SKIP_NORM, 0.0008},
         {FP_CLASS_MATMUL_NBITS, 0.002}, {FP_CLASS_MATMUL_RT, 0.05},          {FP_CLASS_GEMV_RT, 0.002}};
    check_fit_recovers(known, G_N_ELEMENTS(known), 0);
}

/* A point is confirmed once both chains have a second round within 3% of their fastest; a chain
 * timed once, or whose second round is further off, leaves it unconfirmed. A set with more than a
 * quarter of its points unconfirmed was timed on a busy host. */
static void test_confirmed(void)
{
    fp_rt_point p = {.short_s = 100e-6, .short2_s = 102e-6, .long_s = 500e-6, .long2_s = 505e-6};
    CU_ASSERT_TRUE(fp_rt_point_confirmed(&p));
    p.long2_s = 530e-6;
    CU_ASSERT_FALSE(fp_rt_point_confirmed(&p));
    p.long2_s = 505e-6, p.short2_s = 0;
    CU_ASSERT_FALSE(fp_rt_point_confirmed(&p));
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    g_autoptr(fp_rt_set) s = fp_rt_set_new(base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(fp_rt_set_unconfirmed(s), s->points->len); /* none timed */
    p.short2_s = 101e-6;
    g_array_index(s->points, fp_rt_point, 0).short_s = p.short_s;
    g_array_index(s->points, fp_rt_point, 0).short2_s = p.short2_s;
    g_array_index(s->points, fp_rt_point, 0).long_s = p.long_s;
    g_array_index(s->points, fp_rt_point, 0).long2_s = p.long2_s;
    CU_ASSERT_EQUAL(fp_rt_set_unconfirmed(s), s->points->len - 1);
    CU_ASSERT_TRUE(fp_rt_set_busy(s));
    /* a quarter of the points unconfirmed is a quiet host's calibration; one more, a busy one's */
    guint quiet = s->points->len - s->points->len / 4;
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *q = &g_array_index(s->points, fp_rt_point, i);
        q->short_s = p.short_s, q->short2_s = i < quiet ? p.short2_s : 0;
        q->long_s = p.long_s, q->long2_s = p.long2_s;
    }
    CU_ASSERT_EQUAL(fp_rt_set_unconfirmed(s), s->points->len - quiet);
    CU_ASSERT_FALSE(fp_rt_set_busy(s));
    g_array_index(s->points, fp_rt_point, quiet - 1).short2_s = 0;
    CU_ASSERT_TRUE(fp_rt_set_busy(s));
}

/* A fit is scattered above an rms log error of 0.15: the quiet host's fits were at 0.10-0.14, the
 * scattered ones' at 0.17-0.23. */
static void test_scattered(void)
{
    fp_fit_result quiet = {.rms_log = 0.138}, scattered = {.rms_log = 0.171};
    CU_ASSERT_FALSE(fp_rt_fit_scattered(&quiet));
    CU_ASSERT_TRUE(fp_rt_fit_scattered(&scattered));
}

/* The calibration's timing statistic (runtime/ort.c): the fastest stretch of runs at least the
 * window long, its mean; runs longer than the window are each their own stretch; fewer runs than
 * a window, their mean. */
static void test_window_best(void)
{
    /* 1 ms runs: a 3 ms window; the stretch 2, 2, 1 is slowed, 1, 1, 1 is not */
    const double t[] = {2e-3, 2e-3, 1e-3, 1e-3, 1e-3, 1e-3, 3e-3, 1e-3};
    CU_ASSERT_DOUBLE_EQUAL(fp_ort_window_best(t, G_N_ELEMENTS(t), 3e-3), 1e-3, 1e-12);
    const double noisy[] = {1e-3, 3e-3, 1e-3, 3e-3, 1e-3, 3e-3}; /* no quiet stretch: the mean */
    CU_ASSERT_DOUBLE_EQUAL(fp_ort_window_best(noisy, G_N_ELEMENTS(noisy), 4e-3), 2e-3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp_ort_window_best(t, G_N_ELEMENTS(t), 1e-4), 1e-3, 1e-12); /* the fastest run */
    CU_ASSERT_DOUBLE_EQUAL(fp_ort_window_best(t, 2, 1.0), 2e-3, 1e-12);                /* too few: their mean */
    CU_ASSERT_DOUBLE_EQUAL(fp_ort_window_best(t, 0, 1e-3), 0, 0);
}

/* Times every point of s as profile d runs them. */
static void time_points(fp_rt_set *s, const fp_device *d)
{
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        p->short_s = short_time(d, p) + d->run_overhead;
        p->long_s = p->short_s + fp_rt_point_estimate_s(p, d);
    }
}

/* On a profile whose last cache level holds 16 MB, the cold micro-model's long chain reads all its
 * weights from memory and its single op none; timings made with weights read at 15 GB/s give that
 * rate back, timings in which they cost nothing none, and timings with a rate 40x below the
 * memory's none (the chain's weights were not what slowed it). On one whose L3 holds 300 MB the
 * chain fits it (fp_rt_set_cold_fits) and gives no rate, and so on one that loses a sliver of it. */
static void test_weight_bandwidth(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    base->cache[0] = (fp_cache_level){32768, 200e9};
    base->cache[1] = (fp_cache_level){1 << 20, 120e9};
    base->cache[2] = (fp_cache_level){16 << 20, 90e9};
    base->bandwidth = 40e9;
    g_autoptr(fp_rt_set) s = fp_rt_set_new(base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint64_t cold_long = 0, cold_short = 0;
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        if (!(g_array_index(s->cases, fp_micro_case, p->index).flags & FP_MICRO_COLD))
            continue;
        for (guint k = 0; k < p->long_ops->len; k++)
            cold_long += g_array_index(p->long_ops, fp_fit_op, k).cold;
        for (guint k = 0; k < p->short_ops->len; k++)
            cold_short += g_array_index(p->short_ops, fp_fit_op, k).cold;
        CU_ASSERT_FALSE(p->balanced);
    }
    CU_ASSERT_EQUAL(cold_long, 16 * 1024 * 1024 * 4ull); /* every weight of the 16 ops */
    CU_ASSERT_EQUAL(cold_short, 0);
    g_autoptr(fp_device) truth = copy_device(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    truth->weight_bandwidth = 15e9;
    time_points(s, truth);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_weight_bandwidth(s, base) / 15e9, 1, 0.01);
    truth->weight_bandwidth = G_MAXDOUBLE; /* weights past the caches read in no time */
    time_points(s, truth);
    CU_ASSERT_EQUAL(fp_rt_set_weight_bandwidth(s, base), 0);
    truth->weight_bandwidth = 1e9;
    time_points(s, truth);
    CU_ASSERT_EQUAL(fp_rt_set_weight_bandwidth(s, base), 0);
    CU_ASSERT_FALSE(fp_rt_set_cold_fits(s));
    base->cache[2] = (fp_cache_level){300 << 20, 40e9}; /* a server's L3 holds the chain: nothing to measure */
    g_autoptr(fp_rt_set) big = fp_rt_set_new(base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    CU_ASSERT_TRUE(fp_rt_set_cold_fits(big));
    time_points(big, truth);
    CU_ASSERT_EQUAL(fp_rt_set_weight_bandwidth(big, base), 0);
    /* a VM's L3 of 115 MiB that starts to lose a run's footprint at 0.556 of it: the chain's 64 MiB
     * lose a sliver (at most FP_RT_COLD_HELD of its bytes), which measures no rate: it fits */
    base->cache[2] = (fp_cache_level){120558075, 30e9};
    base->last_from = 0.556;
    g_autoptr(fp_rt_set) edge = fp_rt_set_new(base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(edge);
    CU_ASSERT_TRUE(fp_rt_set_cold_fits(edge));
    time_points(edge, truth);
    CU_ASSERT_EQUAL(fp_rt_set_weight_bandwidth(edge, base), 0);
    base->last_from = 0.25; /* the same L3 losing from a quarter of it: a third of the chain is cold */
    g_autoptr(fp_rt_set) part = fp_rt_set_new(base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(part);
    CU_ASSERT_FALSE(fp_rt_set_cold_fits(part));
}

/* The SPILL point on base with an L2 of l2 bytes (*p; its twin the point before), the caches fast
 * enough that its kernels are compute-bound (as on a CPU: on the development VM 16.8 MFLOP on 1.1 MB
 * take 73 us, the L3 streams them in 30). */
static fp_rt_set *spill_set(fp_device *base, uint64_t l2, fp_rt_point **p)
{
    base->cache[0] = (fp_cache_level){49152, 2e12};
    base->cache[1] = (fp_cache_level){l2, 1e12};
    base->cache[2] = (fp_cache_level){300 << 20, 5e11};
    fp_rt_set *s = fp_rt_set_new(base, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    *p = NULL;
    for (guint i = 1; i < s->points->len && !*p; i++)
        if (g_array_index(s->cases, fp_micro_case, g_array_index(s->points, fp_rt_point, i).index).flags &
            FP_MICRO_SPILL)
            *p = &g_array_index(s->points, fp_rt_point, i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*p);
    return s;
}

/* Times the points of s as `hot` runs them, the spill point p as `truth` does. */
static void time_spill(fp_rt_set *s, fp_rt_point *p, const fp_device *hot, const fp_device *truth)
{
    time_points(s, hot);
    p->long_s = p->short_s + fp_rt_point_estimate_s(p, truth);
}

/* Times t[i] of a chain after sleeping gaps[i] when the last level keeps its weights a mean life
 * `life`: a + b (1 - exp(-(gap + t) / life)), t on both sides (found by iteration). */
static void life_times(const double *gaps, int n, double a, double b, double life, double *t)
{
    for (int i = 0; i < n; i++) {
        t[i] = a;
        for (int k = 0; k < 50; k++)
            t[i] = a + b * -expm1(-(gaps[i] + t[i]) / life);
    }
}

/* fp_rt_life_fit on times of FP_RT_LIFE_GAPS made with a known life (the development VM's: a 64 MB
 * chain 3 ms a run back to back, 6 ms with its weights all lost) gives it back within the grid's
 * half step (2^(1/4)), from 5 ms to 80 ms, with 2% noise on every time too; times that rise by
 * under a tenth (a life of 10 s; one of 1 ms, all lost back to back), or not at all, give 0. */
static void test_life_fit(void)
{
    static const double gaps[] = FP_RT_LIFE_GAPS, noise[] = {1.02, 0.98, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01};
    const int n = G_N_ELEMENTS(gaps);
    G_STATIC_ASSERT(G_N_ELEMENTS(noise) == G_N_ELEMENTS(gaps));
    double t[G_N_ELEMENTS(gaps)];
    for (double life = 5e-3; life <= 0.1; life *= 2.5) {
        life_times(gaps, n, 2.7e-3, 3e-3, life, t);
        CU_ASSERT(fabs(log(fp_rt_life_fit(gaps, t, n) / life)) <= log(2) / 4 + 1e-9);
        for (int i = 0; i < n; i++)
            t[i] *= noise[i];
        double fit = fp_rt_life_fit(gaps, t, n);
        CU_ASSERT(fit > life / 1.5 && fit < life * 1.5);
    }
    life_times(gaps, n, 2.7e-3, 3e-3, 10, t);
    CU_ASSERT(t[n - 1] > t[0]);
    CU_ASSERT_EQUAL(fp_rt_life_fit(gaps, t, n), 0);
    life_times(gaps, n, 2.7e-3, 3e-3, 1e-3, t);
    CU_ASSERT_EQUAL(fp_rt_life_fit(gaps, t, n), 0);
    for (int i = 0; i < n; i++)
        t[i] = 3e-3;
    CU_ASSERT_EQUAL(fp_rt_life_fit(gaps, t, n), 0);
}

/* Times per kernel made with the model's own ramp (a kernel of 4 MB warm at 147 us, cold at 240,
 * lost from 100 MB to 300 MB of a run's footprint) give its capacity and last_from back from the
 * chains' two shares between; none from chains of which fewer than two are between (all held, or
 * the ramp too short to show), none where the times do not rise, and none when the ramp would start
 * at no footprint at all. */
static void test_foot_fit(void)
{
    const double warm = 147e-6, cold = 240e-6, mb = 1e6;
    double bytes[] = {128 * mb, 256 * mb, 384 * mb}, t[3], from = 0;
    for (int i = 0; i < 3; i++)
        t[i] = warm + (cold - warm) * fp_roofline_lost(bytes[i], 200 * mb, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_foot_fit(bytes, t, 3, warm, &from) / (200 * mb), 1, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(from, 0.5, 1e-6);
    for (int i = 0; i < 3; i++) /* held to 300 MB: the last chain alone loses */
        t[i] = warm + (cold - warm) * fp_roofline_lost(bytes[i], 50 * mb, 6);
    CU_ASSERT_EQUAL(fp_rt_foot_fit(bytes, t, 3, warm, &from), 0);
    double flat[] = {warm, warm, warm}, falls[] = {200e-6, 170e-6, 240e-6};
    CU_ASSERT_EQUAL(fp_rt_foot_fit(bytes, flat, 3, warm, &from), 0);
    CU_ASSERT_EQUAL(fp_rt_foot_fit(bytes, falls, 3, warm, &from), 0);
    for (int i = 0; i < 3; i++) /* lost from 0 on: a share of 0.64 at 128 MB, 1 at 256 */
        t[i] = warm + (cold - warm) * fp_roofline_lost(bytes[i], 200 * mb, 0.0);
    t[1] = warm + (cold - warm) * 0.9;
    CU_ASSERT_EQUAL(fp_rt_foot_fit(bytes, t, 3, warm, &from), 0);
}

/* The spill point's chain of 1 MB weights, each op its own, overflows a 2 MB L2: fuseplan reads
 * every weight of the long chain past it, none of the short one; its twin shares one weight (the
 * same MatMul). Timings in which the spill point reads them at 50 GB/s and the twin at no cost give
 * that rate back; timings alike none; on an L2 that holds the chain, none. The twin is no point of
 * the fit. */
static void test_spill_bandwidth(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    fp_rt_point *p = NULL;
    g_autoptr(fp_rt_set) s = spill_set(base, 2 << 20, &p);
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index), *twin = c - 1;
    CU_ASSERT_EQUAL(twin->flags, FP_MICRO_SHARED);
    CU_ASSERT_STRING_EQUAL(c->op, twin->op);
    CU_ASSERT_EQUAL(memcmp(c->dims, twin->dims, sizeof c->dims), 0);
    g_autofree char *text = fp_micro_text(twin, 3), *own = fp_micro_text(c, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "input: \"w\"")); /* every op reads the one weight */
    CU_ASSERT_PTR_NULL(strstr(text, "w_1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(own, "input: \"w_2\"")); /* each its own */
    uint64_t spill = 0, weight = (uint64_t)c->dims[1] * (uint64_t)c->dims[1] * 4;
    for (guint k = 0; k < p->long_ops->len; k++)
        spill += g_array_index(p->long_ops, fp_fit_op, k).spill;
    CU_ASSERT_EQUAL(spill, c->chain * weight); /* every weight of the long chain */
    CU_ASSERT(c->chain * weight >= 12u << 20);
    g_autoptr(fp_device) truth = copy_device(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    truth->weight_l3_bandwidth = 50e9;
    time_spill(s, p, base, truth);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_spill_bandwidth(s) / 50e9, 1, 0.01);
    time_spill(s, p, base, base); /* packed weights past the L2 cost nothing more */
    CU_ASSERT_EQUAL(fp_rt_set_spill_bandwidth(s), 0);
    (p - 1)->long_s = 0;
    CU_ASSERT_EQUAL(fp_rt_set_spill_bandwidth(s), 0);
    g_autoptr(fp_rt_set) big = spill_set(base, 32 << 20, &p); /* an L2 that holds the chain */
    time_spill(big, p, base, truth);
    CU_ASSERT_EQUAL(fp_rt_set_spill_bandwidth(big), 0);
}

/* The denormal operations of one kernel of a DENORMAL case of op `op`: a MatMul's multiply-adds
 * (all of x0, within +-5e-41, is denormal), a Softmax's denormal results over x0 spread within
 * +-50. */
static double denormal_events(const fp_micro_case *c, const char *op)
{
    if (strcmp(op, "MatMul") == 0)
        return 12.0 * 49 * 49 * 32;
    g_autofree float *x = g_new(float, 12 * 49 * 49);
    for (int i = 0; i < 12 * 49 * 49; i++)
        x[i] = (float)(((i % 97) / 97.0 - 0.5) * c->scale);
    double share = fp_denormal_fraction(x, 12 * 49 * 49, 49);
    CU_ASSERT_DOUBLE_EQUAL(share, 3066.0 / (12 * 49 * 49), 1e-9); /* numpy's float32 exp gives 3066 */
    return share * 12 * 49 * 49;
}

/* Per op (MatMul, Softmax): the denormal point's time per kernel less its twin's, over its
 * denormal operations, gives the profile's denormal_mac_s and denormal_exp_s: from timings 40x the
 * twin's, 39 twin kernels' time over them; 0 when faster than the twin or with the twin
 * unmeasured. fuseplan costs both points alike. */
static void test_denormal_s(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    time_points(s, base);
    for (const char *const *op = (const char *const[]){"MatMul", "Softmax", NULL}; *op; op++) {
        fp_rt_point *p = NULL;
        for (guint i = 0; i < s->points->len && !p; i++) {
            const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case,
                                                    g_array_index(s->points, fp_rt_point, i).index);
            if ((c->flags & FP_MICRO_DENORMAL) && strcmp(c->op, *op) == 0)
                p = &g_array_index(s->points, fp_rt_point, i);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index), *twin = c - 1;
        CU_ASSERT_EQUAL(c->flags & FP_MICRO_FAN, FP_MICRO_FAN);
        CU_ASSERT_STRING_EQUAL(c->op, twin->op);
        CU_ASSERT_EQUAL(memcmp(c->dims, twin->dims, sizeof c->dims), 0);
        CU_ASSERT_EQUAL(twin->scale, 0);
        CU_ASSERT_DOUBLE_EQUAL(fp_rt_point_estimate_s(p, base), fp_rt_point_estimate_s(p - 1, base), 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_denormal_s(s, *op), 0, 1e-18);
        double kernel_s = fp_rt_point_kernel_s(s, p - 1);
        CU_ASSERT(kernel_s > 0);
        p->long_s = p->short_s + 40 * ((p - 1)->long_s - (p - 1)->short_s);
        CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_denormal_s(s, *op) / (39 * kernel_s / denormal_events(c, *op)), 1, 1e-6);
        p->long_s = p->short_s + 0.5 * ((p - 1)->long_s - (p - 1)->short_s);
        CU_ASSERT_EQUAL(fp_rt_set_denormal_s(s, *op), 0);
        (p - 1)->long_s = 0;
        CU_ASSERT_EQUAL(fp_rt_set_denormal_s(s, *op), 0);
    }
    CU_ASSERT_EQUAL(fp_rt_set_denormal_s(s, "Conv"), 0);
}

/* The outputs point's time per kernel less its twin's (the same LayerNormalization with Y alone),
 * per output it adds, gives the profile's [launch] output: timings made with 0.15 us an output give
 * it back, timings without one about none (a float more an output: picoseconds), and none with
 * the twin unmeasured. The point is no point of the fit: a fit to timings 40x slower there moves
 * no class. */
static void test_output_s(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    fp_rt_point *p = NULL;
    for (guint i = 0; i < s->points->len && !p; i++)
        if (g_array_index(s->cases, fp_micro_case, g_array_index(s->points, fp_rt_point, i).index).flags &
            FP_MICRO_OUTPUTS)
            p = &g_array_index(s->points, fp_rt_point, i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index), *twin = c - 1;
    CU_ASSERT_EQUAL(p->level, FP_ORT_DISABLED);
    CU_ASSERT_STRING_EQUAL(c->op, twin->op);
    CU_ASSERT_EQUAL(memcmp(c->dims, twin->dims, sizeof c->dims), 0);
    CU_ASSERT_EQUAL(twin->outputs, 0);
    CU_ASSERT_EQUAL(c->outputs, 2);
    CU_ASSERT_EQUAL(g_array_index(p->kernels, fp_fit_op, 0).outputs, 2);
    g_autoptr(fp_device) truth = copy_device(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    truth->launch_output = 1.5e-7;
    time_points(s, truth);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_output_s(s) / 1.5e-7, 1, 1e-3);
    time_points(s, base);
    CU_ASSERT(fp_rt_set_output_s(s) < 1e-10);
    g_autoptr(fp_fit_result) before = fp_rt_set_fit(s, base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(before);
    p->long_s = p->short_s + 40 * (p->long_s - p->short_s);
    g_autoptr(fp_fit_result) after = fp_rt_set_fit(s, base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(after->device, FP_CLASS_NORM) /
                               fp_device_launch(before->device, FP_CLASS_NORM),
                           1, 1e-9);
    (p - 1)->long_s = 0;
    CU_ASSERT_EQUAL(fp_rt_set_output_s(s), 0);
}

/* The mixed point (level disabled only) cycles through ops of FP_MIXED_CLASSES classes or more,
 * each kernel of its long chain costed as mixed and none of its short chain's. Its t(K) - t(1) less
 * its estimate without the term, over those kernels, gives the profile's [launch] mixed: timings
 * made with 0.06 us give it back, timings without one none, and none when the point was not
 * measured. It is no point of the fit: a fit to timings 40x slower there moves no class. */
static void test_mixed_s(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    fp_rt_point *p = NULL;
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *q = &g_array_index(s->points, fp_rt_point, i);
        if (g_array_index(s->cases, fp_micro_case, q->index).flags & FP_MICRO_MIXED) {
            CU_ASSERT_PTR_NULL(p); /* one point */
            p = q;
        }
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->level, FP_ORT_DISABLED);
    bool seen[FP_CLASS_COUNT] = {false};
    int classes = 0;
    for (guint i = 0; i < p->long_ops->len; i++) {
        const fp_fit_op *k = &g_array_index(p->long_ops, fp_fit_op, i);
        CU_ASSERT_TRUE(k->mixed);
        classes += !seen[k->cls];
        seen[k->cls] = true;
    }
    CU_ASSERT_TRUE(classes >= FP_MIXED_CLASSES);
    for (guint i = 0; i < p->short_ops->len; i++)
        CU_ASSERT_FALSE(g_array_index(p->short_ops, fp_fit_op, i).mixed);
    /* a chain of one op (with its ReduceMax, and at level all its reorders) is of fewer classes */
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *q = &g_array_index(s->points, fp_rt_point, i);
        for (guint k = 0; q != p && k < q->long_ops->len; k++)
            CU_ASSERT_FALSE(g_array_index(q->long_ops, fp_fit_op, k).mixed);
    }
    g_autoptr(fp_device) truth = copy_device(base);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    truth->launch_mixed = 6e-8;
    time_points(s, truth);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_mixed_s(s, truth) / 6e-8, 1, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_mixed_s(s, base) / 6e-8, 1, 1e-6);
    time_points(s, base);
    CU_ASSERT(fp_rt_set_mixed_s(s, base) < 1e-12);
    g_autoptr(fp_fit_result) before = fp_rt_set_fit(s, base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(before);
    p->long_s = p->short_s + 40 * (p->long_s - p->short_s);
    g_autoptr(fp_fit_result) after = fp_rt_set_fit(s, base, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(after->device, c) / fp_device_launch(before->device, c), 1, 1e-9);
    CU_ASSERT_TRUE(fp_rt_set_mixed_s(s, base) > 0);
    p->long_s = 0;
    CU_ASSERT_EQUAL(fp_rt_set_mixed_s(s, base), 0);
}

/* Each refinement class has micro-models whose kernels are of that class (at level disabled). */
static void test_refinements_covered(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    guint seen[FP_CLASS_COUNT] = {0};
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        for (guint k = 0; p->level == FP_ORT_DISABLED && k < p->kernels->len; k++)
            seen[g_array_index(p->kernels, fp_fit_op, k).cls]++;
    }
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        if (fp_op_class_refines((fp_op_class)c)) {
            if (seen[c] < 2 * 4) /* two work cases at least, chains of 5: 4 kernels each */
                fprintf(stderr, "\n%s: %u kernels\n", fp_op_class_name((fp_op_class)c), seen[c]);
            CU_ASSERT_TRUE(seen[c] >= 2 * 4);
        }
}

/* A point's estimate is its long chain's time less its short chain's, whether the two cancel op
 * for op (a chain whose shapes stay) or not (a strided chain, whose last output and so its
 * ReduceMax shrink with K: no sum of kernels, fitted as two whole runs). */
static void test_point_estimates(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    guint unbalanced = 0;
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        const char *name = c->name;
        double whole = 0;
        for (guint k = 0; k < p->long_ops->len; k++)
            whole += fp_roofline_kernel(base, &g_array_index(p->long_ops, fp_fit_op, k)).time_s;
        double diff = whole - short_time(base, p);
        CU_ASSERT_DOUBLE_EQUAL(fp_rt_point_estimate_s(p, base), diff, 1e-9 * whole);
        /* the strided chains, and the mixed one (its long chain's kernels cost [launch] mixed) */
        CU_ASSERT_EQUAL(!p->balanced,
                        (strstr(name, "s2_") != NULL && !(c->flags & FP_MICRO_FAN)) || (c->flags & FP_MICRO_MIXED));
        unbalanced += !p->balanced;
        /* a balanced point's kernels repeat its short chain's op, each doing its work (a reduction
         * chained to its own output would leave the next one nothing to reduce); a bottleneck's are
         * the cycle's ops after the first, one kernel each */
        if (p->balanced && c->cycle) {
            CU_ASSERT_EQUAL(p->kernels->len, (guint)c->chain - 1);
            for (guint k = 0; k < p->kernels->len; k++)
                CU_ASSERT_EQUAL(fp_op_class_parent(g_array_index(p->kernels, fp_fit_op, k).cls), FP_CLASS_CONV);
            continue;
        }
        for (guint k = 0; p->balanced && k < p->kernels->len; k++) {
            const fp_fit_op *a = &g_array_index(p->kernels, fp_fit_op, k);
            bool repeats = false;
            for (guint j = 0; j < p->short_ops->len; j++) {
                const fp_fit_op *b = &g_array_index(p->short_ops, fp_fit_op, j);
                repeats |= a->flops == b->flops && a->bytes == b->bytes && a->cls == b->cls;
            }
            if (!repeats)
                fprintf(stderr, "\n%s: kernel %u (%" PRIu64 " FLOP) repeats no op of one\n", name, k, a->flops);
            CU_ASSERT_TRUE(repeats);
        }
    }
    CU_ASSERT_TRUE(unbalanced >= 3);
}

/* The best rate is one several points reach: a point whose chain difference came out at half
 * (its kernels at twice the rate of any other) does not move it. */
static void test_best_rate(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    guint fastest = 0;
    double top = 0;
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        double work = fp_rt_point_estimate_s(p, base), flops = 0;
        for (guint k = 0; k < p->kernels->len; k++)
            flops += (double)g_array_index(p->kernels, fp_fit_op, k).flops;
        p->short_s = 1e-6;
        p->long_s = p->short_s + work;
        if (work > 0 && flops / work > top)
            top = flops / work, fastest = i;
    }
    double before = fp_rt_set_best_rate(s);
    CU_ASSERT_TRUE(before > 0 && before <= top);
    fp_rt_point *p = &g_array_index(s->points, fp_rt_point, fastest);
    p->long_s = p->short_s + (p->long_s - p->short_s) / 2;
    CU_ASSERT_DOUBLE_EQUAL(fp_rt_set_best_rate(s), before, before * 1e-12);
}

/* A missing library, a text file, a shared object that is not ONNX Runtime, an unknown runtime. */
static void test_cli_errors(void)
{
    g_autofree char *text = tu_write_temp("not a library\n", 14, ".so");
    g_autofree char *dir = g_path_get_dirname(FP_BINARY);
    g_autofree char *module = g_build_filename(dir, "fuseplan-formats.so", NULL);
    const struct {
        const char *path, *needle;
    } libs[] = {{"/nonexistent/libonnxruntime.so", "no such file"},
                {text, "cannot load"},
                {module, "not ONNX Runtime"}};
    for (size_t i = 0; i < G_N_ELEMENTS(libs); i++) {
        g_autofree char *arg = g_strconcat("onnxruntime=", libs[i].path, NULL);
        tu_expect_cli_error((const char *[]){"calibrate", "-o", "/tmp/fp-never-written.ini", "--runtime", arg, NULL},
                            libs[i].path, libs[i].needle);
    }
    g_unlink(text);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "tvm", NULL}, NULL, "unknown runtime 'tvm'");
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=", NULL}, NULL, "unknown runtime");
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--threads", "-2", NULL}, NULL,
                        "--threads '-2': a count in [1, 4096], or 0 or 'all' for all cores");
    CU_ASSERT_FALSE(g_file_test("/tmp/fp-never-written.ini", G_FILE_TEST_EXISTS));
}

/* `calibrate --check`'s sample: at level disabled only, every launch-bound (FP_MICRO_TINY) case,
 * one other case per class its kernels are of, none timed for a rate of its own; every class that
 * has such a case at level disabled is in it. */
static void test_check_points(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    g_autoptr(GArray) which = fp_rt_check_points(s);
    const unsigned own_rate = FP_MICRO_COLD | FP_MICRO_SPILL | FP_MICRO_SHARED | FP_MICRO_DENORMAL | FP_MICRO_OUTPUTS |
                              FP_MICRO_MIXED | FP_MICRO_FAN;
    guint per_class[FP_CLASS_COUNT] = {0}, tiny = 0, tiny_cases = 0;
    bool has[FP_CLASS_COUNT] = {false};
    for (guint i = 0; i < which->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, g_array_index(which, guint, i));
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        CU_ASSERT_EQUAL(p->level, FP_ORT_DISABLED);
        CU_ASSERT_FALSE(c->flags & own_rate);
        if (c->flags & FP_MICRO_TINY)
            tiny++;
        else
            per_class[g_array_index(p->kernels, fp_fit_op, 0).cls]++;
    }
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        const fp_micro_case *c = &g_array_index(s->cases, fp_micro_case, p->index);
        if (p->level != FP_ORT_DISABLED || (c->flags & own_rate) || !p->balanced || !p->kernels->len)
            continue;
        tiny_cases += (c->flags & FP_MICRO_TINY) != 0;
        if (!(c->flags & FP_MICRO_TINY))
            has[g_array_index(p->kernels, fp_fit_op, 0).cls] = true;
    }
    CU_ASSERT_TRUE(tiny > 10);
    CU_ASSERT_EQUAL(tiny, tiny_cases);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        CU_ASSERT_EQUAL(per_class[c], has[c] ? 1u : 0u);
}

/* fp_rt_set_check: timings 1.25x the profile's estimates give medians of 0.8, launch-bound and
 * other points apart; untimed points count for nothing. */
static void test_check_medians(void)
{
    g_autoptr(fp_device) base = NULL;
    g_autoptr(fp_rt_set) s = avx512_set(&base);
    g_autoptr(GArray) which = fp_rt_check_points(s);
    fp_rt_check none = fp_rt_set_check(s, which, base);
    CU_ASSERT_EQUAL(none.n, 0);
    CU_ASSERT_EQUAL(none.median, 0);
    for (guint i = 0; i < which->len; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, g_array_index(which, guint, i));
        p->short_s = short_time(base, p) + base->run_overhead;
        p->long_s = p->short_s + 1.25 * fp_rt_point_estimate_s(p, base);
    }
    fp_rt_check c = fp_rt_set_check(s, which, base);
    CU_ASSERT_TRUE(c.n > c.n_tiny && c.n_tiny > 10);
    CU_ASSERT_DOUBLE_EQUAL(c.median, 0.8, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(c.median_tiny, 0.8, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(c.median_work, 0.8, 1e-9);
}

/* --check needs --runtime and takes neither --micro-models nor --output; a missing profile is named,
 * and one of a target other than ort-cpu; a thread count other than the profile's (one where it
 * says none) is refused before any library is loaded; a missing library is named. */
static void test_cli_check_errors(void)
{
    const char *need = "--check needs --runtime, and takes neither --micro-models nor --output";
    tu_expect_cli_error((const char *[]){"calibrate", "--check", "cpu-avx512", NULL}, NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--check", "cpu-avx512", "-o",
                                         "/tmp/x.ini", NULL},
                        NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--check", "cpu-avx512",
                                         "--micro-models", "/tmp", NULL},
                        NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--check", "/nonexistent/p.ini",
                                         NULL},
                        "/nonexistent/p.ini", "--check");
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--check", "h100", NULL},
                        "h100", "a profile of target 'cuda', not ONNX Runtime's CPU");
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/x.so", "--check", "cpu-avx512",
                                         "--threads", "4", NULL},
                        "cpu-avx512", "its rates are for 1 thread, --threads asks 4");
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/nonexistent/libonnxruntime.so",
                                         "--check", "cpu-avx512", NULL},
                        "/nonexistent/libonnxruntime.so", "no such file");
}

/* --points lists a fit's points: it needs --runtime and takes neither --check nor --micro-models,
 * refused before any library is loaded. */
static void test_cli_points_errors(void)
{
    const char *need = "--points needs --runtime or --from-timings, and takes neither --check nor --micro-models";
    tu_expect_cli_error((const char *[]){"calibrate", "--points", NULL}, NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--points", "--micro-models", "/tmp", NULL}, NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/nonexistent/libonnxruntime.so",
                                         "--points", "--check", "cpu-avx512", NULL},
                        NULL, need);
    tu_expect_cli_error((const char *[]){"calibrate", "--runtime", "onnxruntime=/nonexistent/libonnxruntime.so",
                                         "--points", "-o", "/tmp/fuseplan-points.ini", NULL},
                        "/nonexistent/libonnxruntime.so", "no such file");
}

/* A timings file of the cpu-avx512 set, each point timed on its profile (time_points) and its
 * second rounds 1% slower, with extras of its own (into *x unless NULL; fp_rt_extras_clear it);
 * the set and its base in *s and *base. */
static GKeyFile *timings_file(fp_rt_set **s, fp_device **base, fp_rt_extras *x)
{
    fp_rt_extras own;
    if (!x) {
        GKeyFile *kf = timings_file(s, base, &own);
        fp_rt_extras_clear(&own);
        return kf;
    }
    *s = avx512_set(base);
    time_points(*s, *base);
    for (guint i = 0; i < (*s)->points->len; i++) {
        fp_rt_point *p = &g_array_index((*s)->points, fp_rt_point, i);
        p->short2_s = p->short_s * 1.01, p->long2_s = p->long_s * 1.01;
    }
    *x = (fp_rt_extras){g_strdup("1.31.1"),
                        g_strdup("/opt/ort/libonnxruntime.so"),
                        98.5,
                        6e-8,
                        1e-7,
                        0.0113,
                        0,
                        -0.11}; /* no footprint found: its fraction can be below 0 */
    g_autoptr(GKeyFile) native = fp_device_to_keyfile(*base);
    return fp_rt_timings_keyfile(native, *s, x);
}

/* A timings file read back into a new set of its own profile gives every point's four times and
 * the extras as written (test_cli_from_timings fits one). */
static void test_timings_roundtrip(void)
{
    g_autoptr(fp_rt_set) s = NULL;
    g_autoptr(fp_device) base = NULL;
    fp_rt_extras x, y = {0};
    g_autoptr(GKeyFile) kf = timings_file(&s, &base, &x);
    g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
    g_autoptr(GKeyFile) back = g_key_file_new();
    CU_ASSERT_FATAL(g_key_file_load_from_data(back, text, strlen(text), G_KEY_FILE_NONE, NULL));
    g_autoptr(GError) err = NULL;
    g_autoptr(GKeyFile) native = fp_rt_timings_native(back, "t.timings", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(native);
    CU_ASSERT_FALSE(g_key_file_has_group(native, FP_RT_TIMINGS_GROUP));
    g_autoptr(fp_device) again = fp_device_from_keyfile(native, "t.timings", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    g_autoptr(fp_rt_set) r = fp_rt_set_new(again, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_FATAL(fp_rt_timings_read(back, "t.timings", r, &y, &err));
    CU_ASSERT_EQUAL_FATAL(r->points->len, s->points->len);
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *a = &g_array_index(s->points, fp_rt_point, i),
                          *b = &g_array_index(r->points, fp_rt_point, i);
        CU_ASSERT(a->short_s == b->short_s && a->short2_s == b->short2_s && a->long_s == b->long_s &&
                  a->long2_s == b->long2_s);
    }
    CU_ASSERT_STRING_EQUAL(y.runtime_version, "1.31.1");
    CU_ASSERT_STRING_EQUAL(y.runtime_library, "/opt/ort/libonnxruntime.so");
    CU_ASSERT(y.seconds == x.seconds && y.input_overhead == x.input_overhead &&
              y.output_overhead == x.output_overhead && y.last_life == x.last_life &&
              y.foot_capacity == x.foot_capacity && y.foot_from == x.foot_from);
    fp_rt_extras_clear(&x);
    fp_rt_extras_clear(&y);
}

/* A copy of timings file kf with its [timings] key `key` set to value (NULL: removed), read into
 * the set s of its profile: the error names the file, the group, the key and says `says`. */
static void expect_timings_error(GKeyFile *kf, fp_rt_set *s, const char *key, const char *value, const char *says)
{
    gsize len = 0;
    g_autofree char *text = g_key_file_to_data(kf, &len, NULL);
    g_autoptr(GKeyFile) bad = g_key_file_new();
    CU_ASSERT_FATAL(g_key_file_load_from_data(bad, text, len, G_KEY_FILE_NONE, NULL));
    if (value)
        g_key_file_set_value(bad, FP_RT_TIMINGS_GROUP, key, value);
    else
        g_key_file_remove_key(bad, FP_RT_TIMINGS_GROUP, key, NULL);
    fp_rt_extras y = {0};
    g_autoptr(GError) err = NULL;
    CU_ASSERT_FALSE(fp_rt_timings_read(bad, "bad.timings", s, &y, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    g_autofree char *where = g_strdup_printf("bad.timings: [timings] %s: ", key);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, where));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, says));
    fp_rt_extras_clear(&y);
}

/* Every way a timings file can be wrong is refused, naming the key; a file without [timings] is
 * no timings file. */
static void test_timings_errors(void)
{
    g_autoptr(fp_rt_set) s = NULL;
    g_autoptr(fp_device) base = NULL;
    g_autoptr(GKeyFile) kf = timings_file(&s, &base, NULL);
    expect_timings_error(kf, s, "conv3x3_c16_56@disabled", NULL, "missing");
    expect_timings_error(kf, s, "conv3x3_c16_56@all", "1e-4;2e-4;3e-4", "3 times, 4 expected");
    expect_timings_error(kf, s, "add_tiny@disabled", "1e-4;-2e-4;3e-4;4e-4", "not a time of 0 or more");
    expect_timings_error(kf, s, "add_tiny@disabled", "1e-4;nan;3e-4;4e-4", "not a time of 0 or more");
    expect_timings_error(kf, s, "add_tiny@disabled", "fast", "");
    expect_timings_error(kf, s, "nosuch_case@disabled", "1;1;1;1", "unknown key");
    expect_timings_error(kf, s, "format", "2", "1 expected");
    expect_timings_error(kf, s, "last_life", "-1", "not a time of 0 or more");
    expect_timings_error(kf, s, "footprint_from", "inf", "not a finite number");
    expect_timings_error(kf, s, "footprint_capacity", "many", "");
    expect_timings_error(kf, s, "runtime_version", NULL, "missing");
    g_autoptr(GKeyFile) plain = g_key_file_new();
    g_key_file_set_string(plain, "device", "target", "ort-cpu");
    g_autoptr(GError) err = NULL;
    CU_ASSERT_PTR_NULL(fp_rt_timings_native(plain, "plain.ini", &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "plain.ini: no [timings] group"));
}

/* calibrate --from-timings fits a profile from a timings file without a runtime library: written,
 * loading, its [calibration] naming the runtime the file names; a missing or broken file and
 * options it cannot take exit 2 with one line. */
static void test_cli_from_timings(void)
{
    g_autoptr(fp_rt_set) s = NULL;
    g_autoptr(fp_device) base = NULL;
    g_autoptr(GKeyFile) kf = timings_file(&s, &base, NULL);
    g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
    g_autofree char *path = tu_write_temp(text, strlen(text), ".timings");
    g_autofree char *out = tu_write_temp("", 0, ".ini");
    tu_run_result r = tu_run((const char *[]){"calibrate", "--from-timings", path, "-o", out, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_clear(&r);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(out, &err);
    CU_ASSERT_PTR_NOT_NULL(d);
    g_autoptr(GKeyFile) w = g_key_file_new();
    CU_ASSERT_FATAL(g_key_file_load_from_file(w, out, G_KEY_FILE_NONE, NULL));
    g_autofree char *version = g_key_file_get_string(w, "calibration", "runtime_version", NULL);
    CU_ASSERT_STRING_EQUAL(version, "1.31.1");
    g_key_file_remove_key(kf, FP_RT_TIMINGS_GROUP, "relu_c64_56@disabled", NULL);
    g_autofree char *bad_text = g_key_file_to_data(kf, NULL, NULL);
    g_autofree char *bad = tu_write_temp(bad_text, strlen(bad_text), ".timings");
    tu_expect_cli_error((const char *[]){"calibrate", "--from-timings", bad, "-o", out, NULL}, bad,
                        "relu_c64_56@disabled: missing");
    tu_expect_cli_error((const char *[]){"calibrate", "--from-timings", "/nonexistent/t.timings", NULL},
                        "/nonexistent/t.timings", "No such file");
    const char *takes = "--from-timings takes no --runtime or --save-timings";
    tu_expect_cli_error((const char *[]){"calibrate", "--from-timings", path, "--runtime", "onnxruntime", NULL}, NULL,
                        takes);
    tu_expect_cli_error((const char *[]){"calibrate", "--save-timings", out, NULL}, NULL, takes);
    tu_expect_cli_error((const char *[]){"calibrate", "--from-timings", path, "--micro-models", "/tmp", NULL}, NULL,
                        takes);
    g_unlink(path);
    g_unlink(bad);
    g_unlink(out);
}

/* --micro-models writes both chains of every case and the run-overhead models, each loading back; a
 * missing folder is refused. */
static void test_cli_micro_models(void)
{
    g_autofree char *dir = g_dir_make_tmp("fp-micro-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    tu_run_result r = tu_run((const char *[]){"calibrate", "--micro-models", dir, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_clear(&r);
    g_autoptr(GArray) cs = fp_micro_cases();
    guint files = 0;
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    for (const char *f; d && (f = g_dir_read_name(d)); files++) {
        g_autofree char *path = g_build_filename(dir, f, NULL);
        g_autoptr(GError) err = NULL;
        fp_model *m = fp_onnx_load(path, &err);
        CU_ASSERT_PTR_NOT_NULL(m);
        fp_model_free(m);
        g_unlink(path);
    }
    CU_ASSERT_EQUAL(files, 2 * cs->len + 4); /* and the four run-overhead models */
    g_rmdir(dir);
    tu_expect_cli_error((const char *[]){"calibrate", "--micro-models", "/nonexistent/dir", NULL}, "/nonexistent/dir",
                        "not a directory");
}

FP_TEST_SUITE(register_calibrate_runtime)
{
    CU_pSuite s = CU_add_suite("calibrate_runtime", NULL, NULL);
    CU_add_test(s, "micro_models_load", test_micro_models_load);
    CU_add_test(s, "timings_roundtrip", test_timings_roundtrip);
    CU_add_test(s, "timings_errors", test_timings_errors);
    CU_add_test(s, "cli_from_timings", test_cli_from_timings);
    CU_add_test(s, "check_points", test_check_points);
    CU_add_test(s, "check_medians", test_check_medians);
    CU_add_test(s, "cli_check_errors", test_cli_check_errors);
    CU_add_test(s, "io_models_load", test_io_models_load);
    CU_add_test(s, "writer", test_writer);
    CU_add_test(s, "fit_recovers", test_fit_recovers);
    CU_add_test(s, "fit_recovers_refinements", test_fit_recovers_refinements);
    CU_add_test(s, "fit_robust", test_fit_robust);
    CU_add_test(s, "refinements_covered", test_refinements_covered);
    CU_add_test(s, "weight_bandwidth", test_weight_bandwidth);
    CU_add_test(s, "denormal_s", test_denormal_s);
    CU_add_test(s, "spill_bandwidth", test_spill_bandwidth);
    CU_add_test(s, "life_fit", test_life_fit);
    CU_add_test(s, "foot_fit", test_foot_fit);
    CU_add_test(s, "output_s", test_output_s);
    CU_add_test(s, "mixed_s", test_mixed_s);
    CU_add_test(s, "confirmed", test_confirmed);
    CU_add_test(s, "scattered", test_scattered);
    CU_add_test(s, "window_best", test_window_best);
    CU_add_test(s, "point_estimates", test_point_estimates);
    CU_add_test(s, "best_rate", test_best_rate);
    CU_add_test(s, "cli_errors", test_cli_errors);
    CU_add_test(s, "cli_micro_models", test_cli_micro_models);
    CU_add_test(s, "cli_points_errors", test_cli_points_errors);
}
