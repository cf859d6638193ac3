/* train_planner.c - fp_bench_train_planner: times the recompute planner (fp_rc_plan_best) in-process
 * on one model, for bench/train_planner.py (never part of the product build or of make test).
 *
 *   fp_bench_train_planner MODEL [--batch N] [SHARE ...]
 *
 * Analyzes MODEL's training step as `fuseplan train MODEL --batch N --no-headroom` does (its saved
 * activations and stages), then plans at each SHARE (default 0.3 0.5 0.7) of the unplanned saved
 * activations, then at the least budget any plan fits. Prints one line of key=value pairs per
 * budget (share 0: the least): the stages, the saved bytes, the least
 * budget any plan fits (fp_rc_min_budget), the budget, whether a plan fits, its peak, recomputed FLOPs,
 * the lower bound on them, whether it is proven optimal, and the median wall milliseconds of a plan
 * over the runs made (as many as fit in about 0.2 s, 3 at least). Exit 2 when the model cannot be
 * analyzed. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/training.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Plans st at `budget` until 0.2 s are spent (3 runs at least, 64 at most): the median
 * milliseconds, the last plan in *p. */
static double time_plan(const fp_rc_stages *st, uint64_t budget, fp_rc_plan *p)
{
    double ms[64], spent = 0;
    int runs = 0;
    while (runs < 64 && (runs < 3 || spent < 200)) {
        if (runs)
            fp_rc_plan_clear(p);
        gint64 t0 = g_get_monotonic_time();
        fp_rc_plan_best(st, budget, p);
        ms[runs] = (double)(g_get_monotonic_time() - t0) / 1e3;
        spent += ms[runs++];
    }
    qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
    return ms[runs / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fp_bench_train_planner MODEL [--batch N] [SHARE ...]\n");
        return 2;
    }
    int arg = 2;
    fp_training_opts o = {.optimizer = FP_OPT_ADAM};
    if (argc > 3 && g_str_equal(argv[2], "--batch"))
        o.analysis.batch = g_ascii_strtoll(argv[3], NULL, 10), arg = 4;
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_training) t = fp_training_run(argv[1], &o, &err);
    if (!t) {
        fprintf(stderr, "fp_bench_train_planner: %s\n", err->message);
        return 2;
    }
    fp_rc_stages st;
    fp_rc_stages_make(t->a->model, &t->saved, t->a->res.cost, &st);
    gint64 t0 = g_get_monotonic_time();
    uint64_t least = fp_rc_min_budget(&st);
    double least_ms = (double)(g_get_monotonic_time() - t0) / 1e3;
    static const char *defaults[] = {"0.3", "0.5", "0.7"};
    int n = argc > arg ? argc - arg : 3;
    for (int i = 0; i <= n; i++) { /* the shares, then the least budget (share 0) */
        double share = i < n ? g_ascii_strtod(argc > arg ? argv[arg + i] : defaults[i], NULL) : 0;
        uint64_t budget = i < n ? (uint64_t)((double)t->saved.saved_bytes * share) : least;
        fp_rc_plan p;
        double ms = time_plan(&st, budget, &p);
        printf("share=%g stages=%u saved=%" G_GUINT64_FORMAT " least=%" G_GUINT64_FORMAT " least_ms=%.3f "
               "budget=%" G_GUINT64_FORMAT " feasible=%d peak=%" G_GUINT64_FORMAT " flops=%" G_GUINT64_FORMAT
               " lower=%" G_GUINT64_FORMAT " exact=%d ms=%.3f\n",
               share, st.n, t->saved.saved_bytes, least, least_ms, budget, p.feasible, p.peak_bytes, p.flops,
               p.lower_flops, p.exact, ms);
        fp_rc_plan_clear(&p);
    }
    fp_rc_stages_clear(&st);
    return 0;
}
