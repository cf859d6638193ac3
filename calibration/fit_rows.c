/* fit_rows.c - what the fit reads of a model matched to its profile (fit_rows.h): each row's ops
 * as the fit sees them, or the whole run's. */
#include "calibration/fit_rows.h"

#include <math.h>

/* Most kernels a control-flow op's bodies may expand to in the fit (a Loop of many trips stays a
 * fixed time at the base). */
#define MAX_BODY_KERNELS 4096

/* The ops of a match row, as the fit sees them: kernel-launching ops, views (class view: their
 * [launch] view) and control flow expanded to its own launch and its body's kernels; a body too
 * large to expand goes to *fixed at the base's estimate. */
static GArray *row_ops(const fp_match_result *m, const fp_match_row *row, const fp_device *base, double *fixed)
{
    GArray *ops = g_array_new(FALSE, FALSE, sizeof(fp_fit_op));
    *fixed = 0;
    for (guint i = 0; i < row->units->len; i++) {
        const fp_op_cost *c = &m->cost->ops[g_array_index(row->units, guint, i)];
        if (fp_op_has(c->node->op, FP_OPF_CTRL)) {
            if (!fp_cost_control_kernels(c->node, base, ops, ops->len + MAX_BODY_KERNELS))
                *fixed += c->rl.time_s;
        } else {
            fp_fit_op op = fp_cost_kernel(c);
            g_array_append_val(ops, op);
        }
    }
    return ops;
}

/* Adds model `name`'s whole run to d: every runtime op of the stage its profile ran, measured
 * run_s (timed without a profiler). */
static void add_run(fp_fit_data *d, const char *name, const fp_match_result *m, const fp_device *base, double run_s)
{
    uint32_t model = fp_fit_data_add_model(d, name, 0);
    g_autoptr(GArray) units = g_array_sized_new(FALSE, FALSE, sizeof(guint), m->cost->n_ops);
    for (guint i = 0; i < m->cost->n_ops; i++)
        g_array_append_val(units, i);
    fp_match_row all = {.units = units};
    double fixed;
    g_autoptr(GArray) ops = row_ops(m, &all, base, &fixed);
    fp_fit_data_add_run(d, model, "(whole run)", (const fp_fit_op *)ops->data, ops->len, fixed, run_s);
}

/* Adds model `name`'s rows to d from its match. */
static void add_rows(fp_fit_data *d, const char *name, const fp_match_result *m, const fp_device *base)
{
    uint32_t model = fp_fit_data_add_model(d, name, m->measured_s - m->measured_matched_s);
    for (guint i = 0; i < m->rows->len; i++) {
        const fp_match_row *row = &g_array_index(m->rows, fp_match_row, i);
        double fixed;
        g_autoptr(GArray) ops = row_ops(m, row, base, &fixed);
        const char *rname = row->kernels->len
                                ? fp_profile_kernel(m->profile, g_array_index(row->kernels, guint, 0))->name
                                : m->cost->ops[g_array_index(row->units, guint, 0)].node->name;
        fp_fit_data_add_row(d, model, rname, (const fp_fit_op *)ops->data, ops->len, fixed, row->measured_s);
    }
}

void fp_fit_rows_add(fp_fit_data *d, const char *name, const fp_match_result *m, const fp_device *base, double run_s)
{
    if (isfinite(run_s))
        add_run(d, name, m, base, run_s);
    else
        add_rows(d, name, m, base);
}
