/* compare.c - the `fuseplan compare` and `fuseplan fit` reports (text and JSON). */
#include "compare.h"

#include <math.h>
#include <string.h>

#include "reports/json_common.h"
#include "passes/roofline.h"

#define US 1e6

/* ---------------------------------------------------------------- rows */

static const fp_match_row *row_at(const fp_match_result *m, guint i)
{
    return &g_array_index(m->rows, fp_match_row, i);
}

static const fp_prof_kernel *first_kernel(const fp_match_result *m, const fp_match_row *row)
{
    return row->kernels->len ? fp_profile_kernel(m->profile, g_array_index(row->kernels, guint, 0)) : NULL;
}

static const fp_op_cost *dominant(const fp_match_result *m, const fp_match_row *row)
{
    return row->dominant >= 0 ? &m->cost->ops[row->dominant] : NULL;
}

/* The row's name: its first kernel's (with "+N" for more), else its first unit's. Caller frees. */
static char *row_name(const fp_match_result *m, const fp_match_row *row)
{
    const fp_prof_kernel *k = first_kernel(m, row);
    const char *base = k                 ? k->name
                       : row->units->len ? m->cost->ops[g_array_index(row->units, guint, 0)].node->name
                                         : "?";
    guint more = k ? row->kernels->len - 1 : 0;
    return more ? g_strdup_printf("%s (+%u)", base, more) : g_strdup(base);
}

static const char *row_type(const fp_match_result *m, const fp_match_row *row)
{
    const fp_prof_kernel *k = first_kernel(m, row);
    const fp_op_cost *c = dominant(m, row);
    return k && k->op_type ? k->op_type : c ? c->node->op_type : "?";
}

static double ratio(const fp_match_row *row)
{
    return row->measured_s > 0 && row->estimated_s > 0 ? row->estimated_s / row->measured_s : NAN;
}

typedef struct {
    const fp_match_result *m;
    bool by_error;
} sort_ctx;

static int row_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const sort_ctx *sc = data;
    const fp_match_row *x = row_at(sc->m, *(const guint *)a), *y = row_at(sc->m, *(const guint *)b);
    double kx = sc->by_error ? fabs(log(ratio(x))) : x->measured_s,
           ky = sc->by_error ? fabs(log(ratio(y))) : y->measured_s;
    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (x->estimated_s != y->estimated_s)
        return x->estimated_s < y->estimated_s ? 1 : -1;
    return *(const guint *)a < *(const guint *)b ? -1 : 1;
}

/* Row indices longest measured first, or (by_error) rows with both times, worst ratio first.
 * *n receives the count. Caller frees. */
static guint *rows_sorted(const fp_match_result *m, bool by_error, guint *n)
{
    guint *idx = g_new(guint, m->rows->len + 1);
    *n = 0;
    for (guint i = 0; i < m->rows->len; i++)
        if (!by_error || !isnan(ratio(row_at(m, i))))
            idx[(*n)++] = i;
    sort_ctx sc = {m, by_error};
    g_qsort_with_data(idx, (gint)*n, sizeof *idx, row_cmp, &sc);
    return idx;
}

/* One line: why an outlier is off, from its bound and direction. */
static char *hint(const fp_match_result *m, const fp_match_row *row)
{
    const fp_op_cost *c = dominant(m, row);
    double q = ratio(row);
    GString *s = g_string_new(NULL);
    if (!c || !c->kernel)
        g_string_append(s, "no kernel in fuseplan's model");
    else if (c->rl.bound == FP_BOUND_COMPUTE)
        g_string_append_printf(s, "compute-bound: efficiency %s is too %s for it", fp_op_class_name(c->cls),
                               q < 1 ? "high" : "low");
    else if (c->rl.memory_s < c->rl.launch_s)
        g_string_append_printf(s, "launch-dominated: launch overhead is too %s", q < 1 ? "low" : "high");
    else
        g_string_append_printf(s, "memory-bound: %s",
                               q < 1 ? "slower than its bytes at the bandwidth (layout, strides, "
                                       "small tensors)"
                                     : "faster than memory allows (data stays in cache)");
    if (row->absorbed)
        g_string_append_printf(s, "; includes %u op%s without a kernel of its own", row->absorbed,
                               row->absorbed == 1 ? "" : "s");
    return g_string_free(s, FALSE);
}

/* ---------------------------------------------------------------- text */

static double pct(double a, double b) { return b > 0 ? 100 * a / b : 0; }

/* v formatted, or `none` when v is not a number. Caller frees. */
static char *num_or(double v, const char *fmt, const char *none)
{
    if (!isfinite(v))
        return g_strdup(none);
    char buf[64];
    g_snprintf(buf, sizeof buf, fmt, v);
    return g_strdup(buf);
}

static void text_header(const fp_compare_report *r, FILE *out)
{
    const fp_match_result *m = r->match;
    const fp_profile *p = r->profile;
    fprintf(out, "model      %s\n", r->model_path);
    fprintf(out, "profile    %s (%s", p->path, fp_prof_format_name(p->format));
    if (p->format == FP_PROF_ORT)
        fprintf(out, ", %u runs, %u skipped as warm-up", p->runs, p->warmup_runs);
    else if (m->steps > 1)
        fprintf(out, ", averaged over %u steps", m->steps);
    fprintf(out, ")\n");
    fprintf(out, "device     %s, target %s\n", r->device->name, r->target);
    fprintf(out, "stage      %s (%s)\n", r->stage, r->stage_note);
    if (r->inputs_note)
        fprintf(out, "inputs     %s\n", r->inputs_note);
    fprintf(out,
            "coverage   %u of %u kernels matched (%.1f%% of measured time): %u by name, %u by fused name, "
            "%u by op type and shapes\n",
            m->matched, m->counted, pct(m->measured_matched_s, m->measured_s), m->by_how[FP_MATCH_NAME],
            m->by_how[FP_MATCH_FUSED_NAME], m->by_how[FP_MATCH_TYPE_SHAPE]);
    fprintf(out,
            "           %.1f%% of the estimate is in measured rows; %u ops measured as several kernels, %u "
            "without a kernel of their own, %u unmeasured\n",
            pct(m->estimated_matched_s, m->estimated_s), m->split, m->absorbed, m->unmeasured);
    fprintf(out, "\ntotals     measured %.3f us, estimated %.3f us: estimate / measured = %.3f (matched rows %.3f)\n",
            m->measured_s * US, m->estimated_s * US, m->stats.ratio, m->stats.matched_ratio);
    g_autofree char *sp = num_or(m->stats.spearman, "%.3f", "n/a (fewer than 3 rows)");
    g_autofree char *ape = num_or(m->stats.median_ape, "%.1f%%", "n/a");
    fprintf(out, "errors     median |error| %s over %u rows; Spearman rank correlation %s\n", ape, m->stats.rows, sp);
    if (m->zero_rows)
        fprintf(out, "           %u measured row%s estimated at 0 (views, folded or eliminated ops) hold %.3f us\n",
                m->zero_rows, m->zero_rows == 1 ? "" : "s", m->zero_rows_s * US);
}

static void text_row(const fp_match_result *m, const fp_match_row *row, FILE *out)
{
    g_autofree char *name = row_name(m, row);
    const fp_op_cost *c = dominant(m, row);
    double q = ratio(row);
    fprintf(out, "  %-40s %-22s %12.3f %12.3f ", name, row_type(m, row), row->measured_s * US, row->estimated_s * US);
    if (isnan(q))
        fprintf(out, "%8s", "-");
    else
        fprintf(out, "%8.2f", q);
    fprintf(out, "  %-7s %9.2f  %s\n", c && c->kernel ? fp_bound_name(c->rl.bound) : "-", c ? c->rl.intensity : 0,
            fp_match_how_name(row->how));
}

static void text_rows(const fp_compare_report *r, FILE *out)
{
    const fp_match_result *m = r->match;
    guint n = 0;
    g_autofree guint *idx = rows_sorted(m, false, &n);
    guint shown = r->top ? MIN(r->top, n) : n;
    fprintf(out, "\nper op (%u of %u rows, longest measured first)\n", shown, n);
    fprintf(out, "  %-40s %-22s %12s %12s %8s  %-7s %9s  %s\n", "kernel", "op type", "measured us", "estimated us",
            "est/meas", "bound", "FLOP/B", "matched by");
    for (guint i = 0; i < shown; i++)
        text_row(m, row_at(m, idx[i]), out);
}

static void text_outliers(const fp_compare_report *r, FILE *out)
{
    const fp_match_result *m = r->match;
    guint n = 0;
    g_autofree guint *idx = rows_sorted(m, true, &n);
    guint shown = MIN(r->outliers, n);
    if (!shown)
        return;
    fprintf(out, "\nworst estimates (%u)\n", shown);
    for (guint i = 0; i < shown; i++) {
        const fp_match_row *row = row_at(m, idx[i]);
        g_autofree char *name = row_name(m, row);
        g_autofree char *why = hint(m, row);
        fprintf(out, "  %-40s %.3f us measured, %.3f us estimated (x%.2f): %s\n", name, row->measured_s * US,
                row->estimated_s * US, ratio(row), why);
    }
}

static void text_unmatched(const fp_compare_report *r, FILE *out)
{
    const fp_match_result *m = r->match;
    if (m->matched == m->counted)
        return;
    fprintf(out, "\nunmatched kernels (%u, %.3f us)\n", m->counted - m->matched,
            (m->measured_s - m->measured_matched_s) * US);
    guint shown = 0;
    for (guint k = 0; k < m->profile->kernels->len && shown < 10; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(m->profile, k);
        if (!m->kernels[k].counted || m->kernels[k].how != FP_MATCH_NONE)
            continue;
        fprintf(out, "  %-40s %-22s %12.3f\n", pk->name, pk->op_type ? pk->op_type : "?",
                m->kernels[k].measured_s * US);
        shown++;
    }
    if (shown < m->counted - m->matched)
        fprintf(out, "  ... %u more\n", m->counted - m->matched - shown);
}

static char *join(const GPtrArray *a, const char *sep)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < a->len; i++)
        g_string_append_printf(s, "%s%s", i ? sep : "", (const char *)a->pdata[i]);
    return g_string_free(s, FALSE);
}

static void text_fusions(const fp_compare_report *r, FILE *out)
{
    const fp_match_result *m = r->match;
    fprintf(out, "\nfusions: compiler (from the profile) vs fuseplan (%u both, %u fuseplan only, %u compiler only)\n",
            m->agree[FP_AGREE_BOTH], m->agree[FP_AGREE_PREDICTED], m->agree[FP_AGREE_COMPILER]);
    for (guint i = 0; i < m->fusions->len; i++) {
        const fp_match_fusion *f = m->fusions->pdata[i];
        g_autofree char *nodes = join(f->nodes, " + ");
        fprintf(out, "  %-14s %-32s %s", fp_agree_name(f->status), f->rules ? f->rules : "-", nodes);
        if (f->kernel)
            fprintf(out, "  -> %s (%s)", f->kernel, f->kernel_type ? f->kernel_type : "?");
        if (f->extra->len) {
            g_autofree char *extra = join(f->extra, ", ");
            fprintf(out, "; the kernel also ran %s", extra);
        }
        fputc('\n', out);
    }
}

static void text_diag(const fp_compare_report *r, FILE *out)
{
    guint n = r->diag ? fp_diag_count(r->diag, FP_DIAG_WARNING) : 0;
    if (!n)
        return;
    if (!r->verbose) {
        fprintf(out, "\n%u diagnostic%s (--verbose lists them)\n", n, n == 1 ? "" : "s");
        return;
    }
    fprintf(out, "\ndiagnostics (%u)\n", n);
    for (guint i = 0; i < r->diag->entries->len; i++) {
        const fp_diag_entry *e = r->diag->entries->pdata[i];
        if (e->level >= FP_DIAG_WARNING)
            fprintf(out, "  %s%s%s%s: %s\n", e->code, e->node ? " '" : "", e->node ? e->node : "", e->node ? "'" : "",
                    e->message);
    }
}

void fp_report_compare_text(const fp_compare_report *r, FILE *out)
{
    text_header(r, out);
    text_rows(r, out);
    text_outliers(r, out);
    text_unmatched(r, out);
    text_fusions(r, out);
    text_diag(r, out);
}

/* ---------------------------------------------------------------- compare JSON */

static void json_strings(fp_jsonw *w, const char *member, const GPtrArray *a)
{
    fp_jsonw_begin_array(w, member);
    for (guint i = 0; a && i < a->len; i++)
        fp_jsonw_str(w, NULL, a->pdata[i]);
    fp_jsonw_end_array(w);
}

static void json_row(fp_jsonw *w, const fp_match_result *m, const fp_match_row *row, bool with_hint)
{
    const fp_op_cost *c = dominant(m, row);
    g_autoptr(GPtrArray) kernels = g_ptr_array_new(), nodes = g_ptr_array_new();
    for (guint i = 0; i < row->kernels->len; i++)
        g_ptr_array_add(kernels, (gpointer)fp_profile_kernel(m->profile, g_array_index(row->kernels, guint, i))->name);
    for (guint i = 0; i < row->units->len; i++)
        g_ptr_array_add(nodes, (gpointer)m->cost->ops[g_array_index(row->units, guint, i)].node->name);
    fp_jsonw_begin_object(w, NULL);
    json_strings(w, "kernels", kernels);
    json_strings(w, "nodes", nodes);
    fp_jsonw_str(w, "op_type", row_type(m, row));
    fp_jsonw_name(w, "matched_by", fp_match_how_name(row->how));
    fp_jsonw_num(w, "measured_us", row->measured_s * US);
    fp_jsonw_num(w, "estimated_us", row->estimated_s * US);
    fp_jsonw_num(w, "ratio", ratio(row));
    fp_jsonw_name(w, "bound", c && c->kernel ? fp_bound_name(c->rl.bound) : NULL);
    fp_jsonw_name(w, "op_class", c ? fp_op_class_name(c->cls) : NULL);
    fp_jsonw_num(w, "intensity", c ? c->rl.intensity : NAN);
    uint64_t flops = 0, bytes = 0;
    for (guint i = 0; i < row->units->len; i++) {
        flops += m->cost->ops[g_array_index(row->units, guint, i)].flops;
        bytes += m->cost->ops[g_array_index(row->units, guint, i)].bytes;
    }
    fp_jsonw_int(w, "flops", (gint64)flops);
    fp_jsonw_int(w, "bytes", (gint64)bytes);
    fp_jsonw_int(w, "absorbed", row->absorbed);
    if (with_hint) {
        g_autofree char *h = hint(m, row);
        fp_jsonw_str(w, "hint", h);
    }
    fp_jsonw_end_object(w);
}

static void json_coverage(fp_jsonw *w, const fp_match_result *m)
{
    fp_jsonw_begin_object(w, "coverage");
    fp_jsonw_int(w, "kernels", m->counted);
    fp_jsonw_int(w, "matched", m->matched);
    fp_jsonw_int(w, "by_name", m->by_how[FP_MATCH_NAME]);
    fp_jsonw_int(w, "by_fused_name", m->by_how[FP_MATCH_FUSED_NAME]);
    fp_jsonw_int(w, "by_type_shape", m->by_how[FP_MATCH_TYPE_SHAPE]);
    fp_jsonw_num(w, "kernel_share", m->counted ? (double)m->matched / m->counted : 0);
    fp_jsonw_num(w, "time_share", m->measured_s > 0 ? m->measured_matched_s / m->measured_s : 0);
    fp_jsonw_num(w, "estimate_share", m->estimated_s > 0 ? m->estimated_matched_s / m->estimated_s : 0);
    fp_jsonw_int(w, "split", m->split);
    fp_jsonw_int(w, "absorbed", m->absorbed);
    fp_jsonw_int(w, "unmeasured", m->unmeasured);
    fp_jsonw_end_object(w);
}

static void json_stats(fp_jsonw *w, const fp_match_result *m)
{
    fp_jsonw_begin_object(w, "totals");
    fp_jsonw_num(w, "measured_us", m->measured_s * US);
    fp_jsonw_num(w, "estimated_us", m->estimated_s * US);
    fp_jsonw_num(w, "ratio", m->stats.ratio);
    fp_jsonw_num(w, "matched_ratio", m->stats.matched_ratio);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_object(w, "errors");
    fp_jsonw_int(w, "rows", m->stats.rows);
    fp_jsonw_num(w, "median_abs_pct_error", m->stats.median_ape);
    fp_jsonw_num(w, "spearman", m->stats.spearman);
    fp_jsonw_int(w, "zero_estimate_rows", m->zero_rows);
    fp_jsonw_num(w, "zero_estimate_us", m->zero_rows_s * US);
    fp_jsonw_end_object(w);
}

static void json_fusions(fp_jsonw *w, const fp_match_result *m)
{
    fp_jsonw_begin_array(w, "fusions");
    for (guint i = 0; i < m->fusions->len; i++) {
        const fp_match_fusion *f = m->fusions->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "status", fp_agree_name(f->status));
        fp_jsonw_str(w, "rules", f->rules);
        json_strings(w, "nodes", f->nodes);
        fp_jsonw_str(w, "kernel", f->kernel);
        fp_jsonw_str(w, "kernel_type", f->kernel_type);
        json_strings(w, "extra", f->extra);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_begin_object(w, "agreement");
    for (int a = 0; a < 3; a++)
        fp_jsonw_int(w, fp_agree_name((fp_agree)a), m->agree[a]);
    fp_jsonw_end_object(w);
}

/* The rows, longest measured first; the worst estimates with a hint each; the kernels matched to
 * no op. */
static void json_rows(fp_jsonw *w, const fp_compare_report *r)
{
    const fp_match_result *m = r->match;
    guint n = 0;
    g_autofree guint *idx = rows_sorted(m, false, &n);
    fp_jsonw_begin_array(w, "rows");
    for (guint i = 0; i < n; i++)
        json_row(w, m, row_at(m, idx[i]), false);
    fp_jsonw_end_array(w);
    g_autofree guint *worst = rows_sorted(m, true, &n);
    fp_jsonw_begin_array(w, "outliers");
    for (guint i = 0; i < MIN(n, r->outliers); i++)
        json_row(w, m, row_at(m, worst[i]), true);
    fp_jsonw_end_array(w);
    fp_jsonw_begin_array(w, "unmatched");
    for (guint k = 0; k < r->profile->kernels->len; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(r->profile, k);
        if (!m->kernels[k].counted || m->kernels[k].how != FP_MATCH_NONE)
            continue;
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", pk->name);
        fp_jsonw_str(w, "op_type", pk->op_type);
        fp_jsonw_num(w, "measured_us", m->kernels[k].measured_s * US);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void compare_json(const fp_compare_report *r, fp_jsonw *w)
{
    const fp_match_result *m = r->match;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "model", r->model_path);
    fp_jsonw_str(w, "profile", r->profile->path);
    fp_jsonw_name(w, "profile_format", fp_prof_format_name(r->profile->format));
    fp_jsonw_int(w, "runs", r->profile->format == FP_PROF_ORT ? r->profile->runs - r->profile->warmup_runs : m->steps);
    fp_jsonw_str(w, "device", r->device->name);
    fp_jsonw_str(w, "target", r->target);
    fp_jsonw_str(w, "stage", r->stage);
    fp_jsonw_str(w, "stage_note", r->stage_note);
    fp_jsonw_str(w, "inputs_note", r->inputs_note);
    json_coverage(w, m);
    json_stats(w, m);
    json_rows(w, r);
    json_fusions(w, m);
    fp_jsonw_end_object(w);
}

bool fp_report_compare_json(const fp_compare_report *r, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (compare_json(r, w), fp_jsonw_close(w, error));
}

/* ---------------------------------------------------------------- fit */

static void text_eval(const fp_fit_eval *e, FILE *out)
{
    if (!e) {
        fprintf(out, " %9s %7s %7s", "-", "-", "-");
        return;
    }
    g_autofree char *q = num_or(e->ratio, "%.3f", "-"), *ape = num_or(e->median_ape, "%.1f%%", "-");
    fprintf(out, " %9.3f %7s %7s", e->estimated_s * US, q, ape);
}

/* The file name, with its folder when the name alone says nothing ("test_Conv2d/model.onnx"). */
static char *short_path(const char *path)
{
    g_autofree char *base = g_path_get_basename(path), *dir = g_path_get_dirname(path);
    g_autofree char *parent = g_path_get_basename(dir);
    return strcmp(base, "model.onnx") == 0 ? g_build_filename(parent, base, NULL) : g_steal_pointer(&base);
}

void fp_report_fit_text(const fp_fit_report *r, FILE *out)
{
    const fp_fit_result *f = r->fit;
    const fp_fit_data *d = r->data;
    fprintf(out, "base       %s (%s)\n", r->base->name, r->base->path ? r->base->path : "");
    fprintf(out, "fitted     %u rows of %u models (weights: %s); %u iterations; rms log error %.3f -> %.3f\n",
            f->rows_used, f->n_models, fp_fit_objective_name(f->objective), f->iterations, f->base_rms_log, f->rms_log);
    if (r->output)
        fprintf(out, "written    %s\n", r->output);
    fprintf(out, "\nparameters\n  %-16s %12s %12s  %s\n", "", "base", "fitted", "rows informing it");
    for (int j = 0; j < FP_FIT_NPARAM; j++) {
        bool launch = j == FP_FIT_LAUNCH;
        fprintf(out, "  %-16s %12.4g %12.4g  %u%s\n", fp_fit_param_name(j), r->fit->base[j] * (launch ? US : 1),
                f->params[j] * (launch ? US : 1), f->informed[j],
                launch           ? " (us)"
                : f->informed[j] ? ""
                                 : " (kept near base)");
    }
    fprintf(out, "\nper model (end to end: estimated us, estimate / measured, median |error| per row)\n");
    fprintf(out, "  %-44s %-9s %10s |%9s %7s %7s |%9s %7s %7s |%9s %7s %7s\n", "model", "stage", "measured", "base",
            "ratio", "MdAPE", "fit", "ratio", "MdAPE", "cv", "ratio", "MdAPE");
    for (uint32_t m = 0; m < f->n_models; m++) {
        g_autofree char *base = short_path(r->pairs[m].model);
        fprintf(out, "  %-44s %-9s %10.3f |", base, r->pairs[m].stage, f->fit_eval[m].measured_s * US);
        text_eval(&f->base_eval[m], out);
        fprintf(out, " |");
        text_eval(&f->fit_eval[m], out);
        fprintf(out, " |");
        text_eval(f->cv_eval ? &f->cv_eval[m] : NULL, out);
        fputc('\n', out);
    }
    fprintf(out, "\nwithin +-%.0f%% end to end: base %u, fitted %u", FP_FIT_TOLERANCE * 100, f->within[0],
            f->within[1]);
    if (f->cv_eval)
        fprintf(out, ", leave-one-model-out %u", f->within[2]);
    fprintf(out, " of %u models\n", f->n_models);
    g_autofree char *spf = num_or(f->spearman_fit, "%.3f", "n/a"), *spc = num_or(f->spearman_cv, "%.3f", "n/a");
    fprintf(out, "Spearman over all rows: fitted %s", spf);
    if (f->cv_eval)
        fprintf(out, ", leave-one-model-out %s", spc);
    fprintf(out, " (%u rows)\n", d->rows->len);
}

static void json_eval(fp_jsonw *w, const char *member, const fp_fit_eval *e)
{
    if (!e) {
        fp_jsonw_null(w, member);
        return;
    }
    fp_jsonw_begin_object(w, member);
    fp_jsonw_num(w, "estimated_us", e->estimated_s * US);
    fp_jsonw_num(w, "ratio", e->ratio);
    fp_jsonw_num(w, "median_abs_pct_error", e->median_ape);
    fp_jsonw_num(w, "spearman", e->spearman);
    fp_jsonw_int(w, "rows", e->rows);
    fp_jsonw_end_object(w);
}

static void json_fit_models(fp_jsonw *w, const fp_fit_report *r)
{
    const fp_fit_result *f = r->fit;
    fp_jsonw_begin_array(w, "models");
    for (uint32_t m = 0; m < f->n_models; m++) {
        const fp_fit_pair *pr = &r->pairs[m];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "model", pr->model);
        fp_jsonw_str(w, "profile", pr->profile);
        fp_jsonw_str(w, "stage", pr->stage);
        fp_jsonw_int(w, "kernels", pr->kernels);
        fp_jsonw_int(w, "matched", pr->matched);
        fp_jsonw_num(w, "time_share", pr->time_share);
        fp_jsonw_num(w, "measured_us", f->fit_eval[m].measured_s * US);
        json_eval(w, "base", &f->base_eval[m]);
        json_eval(w, "fit", &f->fit_eval[m]);
        json_eval(w, "cv", f->cv_eval ? &f->cv_eval[m] : NULL);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void fit_json(const fp_fit_report *r, fp_jsonw *w)
{
    const fp_fit_result *f = r->fit;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "base", r->base->path ? r->base->path : r->base->name);
    fp_jsonw_str(w, "output", r->output);
    fp_jsonw_name(w, "objective", fp_fit_objective_name(f->objective));
    fp_jsonw_num(w, "prior", f->prior);
    fp_jsonw_int(w, "rows_used", f->rows_used);
    fp_jsonw_int(w, "iterations", f->iterations);
    fp_jsonw_begin_object(w, "rms_log_error");
    fp_jsonw_num(w, "base", f->base_rms_log);
    fp_jsonw_num(w, "fitted", f->rms_log);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_array(w, "parameters");
    for (int j = 0; j < FP_FIT_NPARAM; j++) {
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "name", fp_fit_param_name(j));
        fp_jsonw_num(w, "base", f->base[j]);
        fp_jsonw_num(w, "fitted", f->params[j]);
        fp_jsonw_int(w, "informed_rows", f->informed[j]);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    json_fit_models(w, r);
    fp_jsonw_begin_object(w, "summary");
    fp_jsonw_int(w, "models", f->n_models);
    fp_jsonw_num(w, "tolerance", FP_FIT_TOLERANCE);
    fp_jsonw_int(w, "within_base", f->within[0]);
    fp_jsonw_int(w, "within_fit", f->within[1]);
    fp_jsonw_int_or_null(w, "within_cv", f->cv_eval ? (gint64)f->within[2] : -1);
    fp_jsonw_num(w, "spearman_fit", f->spearman_fit);
    fp_jsonw_num(w, "spearman_cv", f->spearman_cv);
    fp_jsonw_int(w, "rows", r->data->rows->len);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
}

bool fp_report_fit_json(const fp_fit_report *r, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fit_json(r, w), fp_jsonw_close(w, error));
}
