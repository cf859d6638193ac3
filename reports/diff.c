/* diff.c - two reports compared (see diff.h): fusions by (rule, anchor), stage and memory
 * deltas, the regression verdict; text and JSON. */
#include "diff.h"

#include <math.h>
#include <string.h>

#include "reports/format.h"

double fp_diff_change(double old_v, double new_v) { return old_v != 0 ? (new_v - old_v) / old_v : NAN; }

/* Fusions indexed by (rule, anchor): the key is the fusion itself. */
static guint fusion_hash(gconstpointer p)
{
    const fp_fusion *f = p;
    return g_str_hash(f->rule) * 31u + g_str_hash(f->anchor);
}

static gboolean fusion_equal(gconstpointer a, gconstpointer b)
{
    const fp_fusion *x = a, *y = b;
    return strcmp(x->rule, y->rule) == 0 && strcmp(x->anchor, y->anchor) == 0;
}

/* The first fusion of l per (rule, anchor), among the applied ones (applied) or the others. */
static GHashTable *first_by_key(const fp_fusion_list *l, bool applied)
{
    GHashTable *t = g_hash_table_new(fusion_hash, fusion_equal);
    for (guint i = 0; i < l->fusions->len; i++) {
        fp_fusion *f = l->fusions->pdata[i];
        if (f->applied == applied && !g_hash_table_contains(t, f))
            g_hash_table_add(t, f);
    }
    return t;
}

/* Fusions applied in `a` and not in `b`, each with b's refused candidate when there is one (the
 * first in b's order). */
static GPtrArray *missing(const fp_fusion_list *a, const fp_fusion_list *b)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GHashTable) b_applied = first_by_key(b, true);
    g_autoptr(GHashTable) b_refused = first_by_key(b, false);
    for (guint i = 0; i < a->fusions->len; i++) {
        const fp_fusion *f = a->fusions->pdata[i];
        if (!f->applied || g_hash_table_contains(b_applied, f))
            continue;
        fp_diff_fusion *d = g_new0(fp_diff_fusion, 1);
        d->rule = f->rule;
        d->anchor = f->anchor;
        d->applied = f;
        d->other = g_hash_table_lookup(b_refused, f);
        g_ptr_array_add(out, d);
    }
    return out;
}

static void regression_free(gpointer p)
{
    fp_diff_regression *r = p;
    g_free(r->message);
    g_free(r);
}

static void regress(fp_diff *d, fp_diff_reason kind, char *message)
{
    fp_diff_regression *r = g_new0(fp_diff_regression, 1);
    r->kind = kind;
    r->message = message;
    g_ptr_array_add(d->regressions, r);
}

/* True when new_v exceeds old_v by more than the tolerance (any increase from 0). */
static bool worse(double old_v, double new_v, double tol) { return old_v > 0 ? new_v > old_v * (1 + tol) : new_v > 0; }

fp_diff *fp_diff_compute(const fp_report *old_r, const fp_report *new_r, double tolerance)
{
    fp_diff *d = g_new0(fp_diff, 1);
    d->old_r = old_r;
    d->new_r = new_r;
    d->tolerance = tolerance;
    d->lost = missing(old_r->res->fusions, new_r->res->fusions);
    d->gained = missing(new_r->res->fusions, old_r->res->fusions);
    d->regressions = g_ptr_array_new_with_free_func(regression_free);
    const fp_stage *o = &old_r->res->stages[2], *n = &new_r->res->stages[2];
    if (worse(o->latency_s, n->latency_s, tolerance))
        regress(d, FP_DIFF_LATENCY,
                g_strdup_printf("final est. latency %.1f us -> %.1f us (%+.1f%%, more than %g%%)", o->latency_s * 1e6,
                                n->latency_s * 1e6, 100 * fp_diff_change(o->latency_s, n->latency_s), 100 * tolerance));
    if (worse((double)o->activation_bytes, (double)n->activation_bytes, tolerance))
        regress(d, FP_DIFF_ACTIVATION,
                g_strdup_printf("planned activation memory %.2f MB -> %.2f MB (%+.1f%%, more than %g%%)",
                                (double)o->activation_bytes / 1e6, (double)n->activation_bytes / 1e6,
                                100 * fp_diff_change((double)o->activation_bytes, (double)n->activation_bytes),
                                100 * tolerance));
    if (d->lost->len)
        regress(d, FP_DIFF_FUSION_LOST,
                g_strdup_printf("%u fusion%s lost", d->lost->len, d->lost->len == 1 ? "" : "s"));
    return d;
}

void fp_diff_free(fp_diff *d)
{
    if (!d)
        return;
    g_ptr_array_unref(d->lost);
    g_ptr_array_unref(d->gained);
    g_ptr_array_unref(d->regressions);
    g_free(d);
}

/* ---------------------------------------------------------------- shared */

static char *fmt_change(double old_v, double new_v)
{
    double c = fp_diff_change(old_v, new_v);
    if (isnan(c))
        return g_strdup(new_v == 0 ? "=" : "new");
    if (fabs(c) < 0.0005)
        return g_strdup("=");
    return g_strdup_printf("%+.1f%%", 100 * c);
}

/* Candidates of `rule` in l: *matched of them, *applied applied. */
static void count(const fp_fusion_list *l, const char *rule, guint *matched, guint *applied)
{
    *matched = *applied = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *f = l->fusions->pdata[i];
        if (strcmp(f->rule, rule) == 0)
            (*matched)++, *applied += f->applied;
    }
}

GArray *fp_diff_rule_counts(const fp_diff *d)
{
    g_autoptr(GPtrArray) ids = g_ptr_array_new();
    const fp_target *ts[2] = {d->old_r->target, d->new_r->target};
    for (int t = 0; t < 2; t++)
        for (char **id = ts[t]->rules; *id; id++)
            if (!g_ptr_array_find_with_equal_func(ids, *id, g_str_equal, NULL))
                g_ptr_array_add(ids, *id);
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(fp_diff_rule));
    for (guint i = 0; i < ids->len; i++) {
        fp_diff_rule r = {.rule = ids->pdata[i]};
        count(d->old_r->res->fusions, r.rule, &r.old_matched, &r.old_applied);
        count(d->new_r->res->fusions, r.rule, &r.new_matched, &r.new_applied);
        if (r.old_matched || r.new_matched)
            g_array_append_val(rows, r);
    }
    return rows;
}

static char *members(const fp_fusion *f)
{
    GString *s = g_string_new(NULL);
    for (guint k = 0; k < f->nodes->len; k++)
        g_string_append_printf(s, "%s%s", k ? " + " : "", (const char *)f->nodes->pdata[k]);
    return g_string_free(s, FALSE);
}

/* ---------------------------------------------------------------- text */

static void text_stages(const fp_diff *d, FILE *out)
{
    fprintf(out, "%-40s %11s %11s %21s %21s %15s\n", "", "ops", "kernels", "activation memory", "est. latency",
            "speedup");
    fprintf(out, "%-40s %5s %5s %5s %5s %10s %10s %10s %10s %7s %7s\n", "stage", "old", "new", "old", "new", "old",
            "new", "old", "new", "old", "new");
    for (int i = 0; i < 3; i++) {
        const fp_stage *o = &d->old_r->res->stages[i], *n = &d->new_r->res->stages[i];
        g_autofree char *oa = fp_format_mb(o->activation_bytes), *na = fp_format_mb(n->activation_bytes);
        fprintf(out, "%-40s %5u %5u %5u %5u %10s %10s %8.1f us %8.1f us %6.2fx %6.2fx\n", o->name, o->ops, n->ops,
                o->kernels, n->kernels, oa, na, o->latency_s * 1e6, n->latency_s * 1e6, o->speedup, n->speedup);
    }
}

static void text_row_mb(FILE *out, const char *what, uint64_t o, uint64_t n)
{
    g_autofree char *os = fp_format_mb(o), *ns = fp_format_mb(n), *c = fmt_change((double)o, (double)n);
    fprintf(out, "  %-26s %12s %12s %9s\n", what, os, ns, c);
}

static void text_memory(const fp_diff *d, FILE *out, const char *bold, const char *off)
{
    const fp_pipeline_result *o = d->old_r->res, *n = d->new_r->res;
    fprintf(out, "\n%s%-28s%s %12s %12s %9s\n", bold, "final graph", off, "old", "new", "change");
    text_row_mb(out, "planned activation arena", o->stages[2].activation_bytes, n->stages[2].activation_bytes);
    text_row_mb(out, "LOAD (floor of the order)", o->memory->lower_bound, n->memory->lower_bound);
    text_row_mb(out, "activations without reuse", o->memory->naive_bytes, n->memory->naive_bytes);
    text_row_mb(out, "weights", o->stages[2].weight_bytes, n->stages[2].weight_bytes);
    g_autofree char *c = fmt_change(o->stages[2].latency_s, n->stages[2].latency_s);
    fprintf(out, "  %-26s %9.1f us %9.1f us %9s\n", "est. latency", o->stages[2].latency_s * 1e6,
            n->stages[2].latency_s * 1e6, c);
    fprintf(out, "  %-26s %11.2fx %11.2fx\n", "speedup over original", o->stages[2].speedup, n->stages[2].speedup);
    fprintf(out, "  %-26s %12u %12u\n", "kernels", o->stages[2].kernels, n->stages[2].kernels);
    fprintf(out, "  %-26s %12u %12u\n", "layout conversions", o->stages[2].conversions, n->stages[2].conversions);
}

static void text_changed(FILE *out, const char *tag, const fp_diff_fusion *f, const char *col, const char *off)
{
    g_autofree char *who = members(f->applied);
    fprintf(out, "  %s%-6s%s %-18s %s\n", col, tag, off, f->rule, who);
    if (!f->other) {
        fprintf(out, "         %s\n",
                strcmp(tag, "lost") == 0 ? "no longer a candidate (the pattern is gone)" : "not a candidate before");
        return;
    }
    for (guint k = 0; k < f->other->reasons->len; k++) {
        const fp_reason *why = f->other->reasons->pdata[k];
        fprintf(out, "         %s %s: %s\n", strcmp(tag, "lost") == 0 ? "now refused by" : "was refused by",
                why->constraint, why->message);
        if (strcmp(tag, "lost") == 0)
            fprintf(out, "         fix: %s\n", why->hint);
    }
}

static void text_fusions(const fp_diff *d, FILE *out, const char *bold, const char *off, const char *red,
                         const char *green)
{
    g_autoptr(GArray) rows = fp_diff_rule_counts(d);
    fprintf(out, "\n%sfusions%s  %u lost, %u gained\n", bold, off, d->lost->len, d->gained->len);
    fprintf(out, "  %-20s %9s %9s  (applied / matched)\n", "rule", "old", "new");
    for (guint i = 0; i < rows->len; i++) {
        const fp_diff_rule *r = &g_array_index(rows, fp_diff_rule, i);
        g_autofree char *os = g_strdup_printf("%u/%u", r->old_applied, r->old_matched);
        g_autofree char *ns = g_strdup_printf("%u/%u", r->new_applied, r->new_matched);
        fprintf(out, "  %-20s %9s %9s\n", r->rule, os, ns);
    }
    for (guint i = 0; i < d->lost->len; i++)
        text_changed(out, "lost", d->lost->pdata[i], red, off);
    for (guint i = 0; i < d->gained->len; i++)
        text_changed(out, "gained", d->gained->pdata[i], green, off);
}

void fp_diff_text(const fp_diff *d, FILE *out, bool color)
{
    const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
    const char *red = color ? "\033[1;31m" : "", *green = color ? "\033[1;32m" : "";
    fprintf(out, "%sold%s     %s\n%snew%s     %s\n", bold, off, d->old_r->model->path, bold, off,
            d->new_r->model->path);
    fprintf(out, "%sdevice%s  %s, target %s\n", bold, off, d->new_r->device->name, d->new_r->target->name);
    if (d->new_r->batch_note)
        fprintf(out, "        %s\n", d->new_r->batch_note);
    fputc('\n', out);
    text_stages(d, out);
    text_memory(d, out, bold, off);
    text_fusions(d, out, bold, off, red, green);
    if (!d->regressions->len) {
        fprintf(out, "\n%sno regression%s (tolerance %g%%: latency, activation memory; no fusion lost)\n", green, off,
                100 * d->tolerance);
        return;
    }
    fprintf(out, "\n%sregression%s: NEW is worse\n", red, off);
    for (guint i = 0; i < d->regressions->len; i++)
        fprintf(out, "  - %s\n", ((const fp_diff_regression *)d->regressions->pdata[i])->message);
}
