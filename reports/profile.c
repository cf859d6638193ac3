/* profile.c - the `fuseplan profile` report (text and JSON). */
#include "profile.h"

#include <math.h>
#include <string.h>

#include "reports/json_common.h"
#include "reports/format.h"

static const char *or_unknown(const char *s) { return s ? s : "(unknown)"; }

static double percent(double part, double total) { return total > 0 ? 100.0 * part / total : 0.0; }

/* "1x3x32x32" for a shape, "scalar" for rank 0, "?" for none. Caller frees. */
static char *dims_string(const fp_prof_tensor *t)
{
    if (t->rank < 0)
        return g_strdup("?");
    if (t->rank == 0)
        return g_strdup("scalar");
    GString *s = g_string_new(NULL);
    for (int32_t i = 0; i < t->rank; i++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? "x" : "", t->dims[i]);
    return g_string_free(s, FALSE);
}

/* "32x3x224x224 FLOAT, 64 INT64" */
static char *tensors_string(const fp_prof_tensor *t, uint32_t n)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < n; i++) {
        g_autofree char *d = dims_string(&t[i]);
        g_string_append_printf(s, "%s%s%s%s", i ? ", " : "", d, t[i].dtype ? " " : "", t[i].dtype ? t[i].dtype : "");
    }
    return g_string_free(s, FALSE);
}

/* The name cut to at most `max` bytes (UTF-8 safe) with "..." at the end. Caller frees. */
static char *short_name(const char *s, glong max)
{
    if ((glong)strlen(s) <= max)
        return g_strdup(s);
    const char *end = g_utf8_find_prev_char(s, s + max - 2);
    return g_strdup_printf("%.*s...", end ? (int)(end - s) : 0, s);
}

static int pass_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const fp_profile *p = data;
    const fp_prof_pass *x = fp_profile_pass(p, *(const guint *)a), *y = fp_profile_pass(p, *(const guint *)b);
    if (x->effect_times != y->effect_times)
        return x->effect_times < y->effect_times ? 1 : -1;
    if (x->match_times != y->match_times)
        return x->match_times < y->match_times ? 1 : -1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Pass indices, most effective first. Caller g_free()s. */
static guint *passes_sorted(const fp_profile *p)
{
    guint *order = g_new(guint, p->passes->len + 1);
    for (guint i = 0; i < p->passes->len; i++)
        order[i] = i;
    g_qsort_with_data(order, (gint)p->passes->len, sizeof *order, pass_cmp, (gpointer)p);
    return order;
}

/* ---- text ---- */

static void text_groups(const fp_profile *p, fp_prof_group_by by, FILE *out)
{
    guint n = 0;
    g_autofree fp_prof_group *g = fp_profile_group(p, by, &n);
    const char *what = by == FP_PROF_BY_CORE ? "core type" : "op type";
    fprintf(out, "\ntime by %s (%u)\n", what, n);
    fprintf(out, "  %-36s %8s %8s %14s %7s\n", what, "kernels", "calls", "total us", "%");
    for (guint i = 0; i < n; i++)
        fprintf(out, "  %-36s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %14.3f %7.2f\n", or_unknown(g[i].key),
                g[i].kernels, g[i].calls, g[i].total_us, percent(g[i].total_us, p->total_us));
}

static void text_top(const fp_profile *p, guint top, FILE *out)
{
    guint n = MIN(top, p->kernels->len);
    if (n == 0)
        return;
    g_autofree guint *order = fp_profile_by_time(p);
    fprintf(out, "\ntop %u kernels by time\n", n);
    fprintf(out, "  %-48s %-20s %-16s %12s  %s\n", "name", "op type", "core", "us", "inputs -> outputs");
    for (guint i = 0; i < n; i++) {
        const fp_prof_kernel *k = fp_profile_kernel(p, order[i]);
        g_autofree char *in = tensors_string(k->inputs, k->n_inputs);
        g_autofree char *outs = tensors_string(k->outputs, k->n_outputs);
        g_autofree char *name = short_name(k->name, 48);
        fprintf(out, "  %-48s %-20s %-16s %12.3f  %s%s%s%s\n", name, or_unknown(k->op_type), or_unknown(k->core),
                k->dur_us, in, *outs ? " -> " : "", outs, k->flags & FP_PROF_K_NESTED ? "  (nested)" : "");
    }
}

static void text_passes(const fp_profile *p, FILE *out)
{
    g_autofree guint *order = passes_sorted(p);
    fprintf(out, "\npasses (%u)\n", p->passes->len);
    fprintf(out, "  %-12s %-52s %8s %8s %7s\n", "kind", "pass", "match", "effect", "graphs");
    for (guint i = 0; i < p->passes->len; i++) {
        const fp_prof_pass *s = fp_profile_pass(p, order[i]);
        fprintf(out, "  %-12s %-52s %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %7u\n",
                fp_prof_pass_kind_name(s->kind), s->name, s->match_times, s->effect_times, s->graphs);
    }
}

void fp_report_profile_text(const fp_profile *p, guint top, FILE *out)
{
    fprintf(out, "profile    %s\n", p->path);
    if (p->format == FP_PROF_FUSION_RESULT) {
        fprintf(out, "format     fusion_result (%s layout)\n", p->layout);
        fprintf(out, "graphs     %u, %" G_GUINT64_FORMAT " pass entries, %u distinct passes\n", p->graphs, p->records,
                p->passes->len);
        text_passes(p, out);
    } else {
        g_autofree char *recs = fp_format_count(p->records);
        fprintf(out, "format     %s\n", fp_prof_format_name(p->format));
        if (p->format == FP_PROF_ORT) {
            fprintf(out, "kernels    %s events, %u nodes; %u runs", recs, p->kernels->len, p->runs);
            if (p->warmup_runs)
                fprintf(out, " (the first skipped as warm-up)");
            fprintf(out, "\ntotal      %.3f us per run\n", p->total_us);
        } else {
            fprintf(out, "kernels    %s %s", recs, p->format == FP_PROF_CHROME_TRACE ? "events" : "rows");
            if (p->steps)
                fprintf(out, ", %u step%s", p->steps, p->steps == 1 ? "" : "s");
            fprintf(out, "\ntotal      %.3f us\n", p->total_us);
        }
        if (p->format != FP_PROF_OP_STATISTIC)
            text_groups(p, FP_PROF_BY_OP_TYPE, out);
        text_groups(p, FP_PROF_BY_CORE, out);
        text_top(p, top, out);
    }
    if (p->warnings->len) {
        fprintf(out, "\nwarnings (%u)\n", p->warnings->len);
        for (guint i = 0; i < p->warnings->len; i++)
            fprintf(out, "  %s\n", (const char *)p->warnings->pdata[i]);
    }
}

/* ---- JSON ---- */

static void json_tensors(fp_jsonw *w, const char *member, const fp_prof_tensor *t, uint32_t n)
{
    fp_jsonw_begin_array(w, member);
    for (uint32_t i = 0; i < n; i++) {
        fp_jsonw_begin_object(w, NULL);
        if (t[i].rank < 0) {
            fp_jsonw_null(w, "shape");
        } else {
            fp_jsonw_begin_array(w, "shape");
            for (int32_t d = 0; d < t[i].rank; d++)
                fp_jsonw_int(w, NULL, t[i].dims[d]);
            fp_jsonw_end_array(w);
        }
        fp_jsonw_name(w, "dtype", t[i].dt != FP_DT_UNDEFINED ? fp_dtype_name(t[i].dt) : NULL);
        fp_jsonw_str(w, "dtype_raw", t[i].dtype);
        fp_jsonw_str(w, "layout", t[i].layout);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void json_groups(fp_jsonw *w, const fp_profile *p, fp_prof_group_by by)
{
    guint n = 0;
    g_autofree fp_prof_group *g = fp_profile_group(p, by, &n);
    fp_jsonw_begin_array(w, by == FP_PROF_BY_CORE ? "by_core" : "by_type");
    for (guint i = 0; i < n; i++) {
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, by == FP_PROF_BY_CORE ? "core" : "op_type", g[i].key);
        fp_jsonw_uint(w, "kernels", g[i].kernels);
        fp_jsonw_uint(w, "calls", g[i].calls);
        fp_jsonw_num(w, "total_us", g[i].total_us);
        fp_jsonw_num(w, "percent", percent(g[i].total_us, p->total_us));
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void json_top(fp_jsonw *w, const fp_profile *p, guint top)
{
    guint n = MIN(top, p->kernels->len);
    g_autofree guint *order = fp_profile_by_time(p);
    fp_jsonw_begin_array(w, "top");
    for (guint i = 0; i < n; i++) {
        const fp_prof_kernel *k = fp_profile_kernel(p, order[i]);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", k->name);
        fp_jsonw_str(w, "op_type", k->op_type);
        fp_jsonw_str(w, "core", k->core);
        fp_jsonw_num(w, "start_us", k->start_us);
        fp_jsonw_num(w, "dur_us", k->dur_us);
        fp_jsonw_int(w, "count", k->count);
        fp_jsonw_int(w, "step", k->step);
        fp_jsonw_bool(w, "nested", (k->flags & FP_PROF_K_NESTED) != 0);
        json_tensors(w, "inputs", k->inputs, k->n_inputs);
        json_tensors(w, "outputs", k->outputs, k->n_outputs);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void json_passes(fp_jsonw *w, const fp_profile *p)
{
    g_autofree guint *order = passes_sorted(p);
    fp_jsonw_begin_array(w, "passes");
    for (guint i = 0; i < p->passes->len; i++) {
        const fp_prof_pass *s = fp_profile_pass(p, order[i]);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", s->name);
        fp_jsonw_name(w, "kind", fp_prof_pass_kind_name(s->kind));
        fp_jsonw_uint(w, "match_times", s->match_times);
        fp_jsonw_uint(w, "effect_times", s->effect_times);
        fp_jsonw_uint(w, "repository_hit_times", s->repository_hit_times);
        fp_jsonw_int(w, "graphs", s->graphs);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void profile_json(const fp_profile *p, guint top, fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", p->path);
    fp_jsonw_name(w, "format", fp_prof_format_name(p->format));
    fp_jsonw_str(w, "layout", p->layout);
    bool fusion = p->format == FP_PROF_FUSION_RESULT;
    fp_jsonw_int(w, "kernels", fusion ? 0 : (gint64)p->records);
    fp_jsonw_int(w, "pass_entries", fusion ? (gint64)p->records : 0);
    fp_jsonw_int(w, "nodes", p->kernels->len);
    fp_jsonw_num(w, "total_us", p->total_us);
    fp_jsonw_int(w, "runs", p->runs);
    fp_jsonw_int(w, "warmup_runs", p->warmup_runs);
    fp_jsonw_int(w, "steps", p->steps);
    fp_jsonw_int(w, "graphs", p->graphs);
    json_groups(w, p, FP_PROF_BY_OP_TYPE);
    json_groups(w, p, FP_PROF_BY_CORE);
    json_top(w, p, top);
    json_passes(w, p);
    fp_jsonw_begin_array(w, "warnings");
    for (guint i = 0; i < p->warnings->len; i++)
        fp_jsonw_str(w, NULL, p->warnings->pdata[i]);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

bool fp_report_profile_json(const fp_profile *p, guint top, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (profile_json(p, top, w), fp_jsonw_close(w, error));
}
