/* explain.c - the `fuseplan explain` report. */
#include "explain.h"

#include <string.h>

bool fp_explain_keep(const fp_fusion *fu, const fp_explain_filter *f)
{
    if (!f)
        return true;
    if (f->rule && strcmp(fu->rule, f->rule) != 0)
        return false;
    if (f->node) {
        for (guint i = 0; i < fu->nodes->len; i++)
            if (strcmp(fu->nodes->pdata[i], f->node) == 0)
                return true;
        return false;
    }
    return true;
}

void fp_explain_counts(const fp_fusion_list *l, const char *id, guint *matched, guint *applied)
{
    *matched = *applied = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (strcmp(fu->rule, id) == 0) {
            (*matched)++;
            *applied += fu->applied;
        }
    }
}

static char *members(const fp_fusion *fu)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < fu->nodes->len; i++)
        g_string_append_printf(s, "%s%s", i ? " + " : "", (const char *)fu->nodes->pdata[i]);
    return g_string_free(s, FALSE);
}

void fp_report_explain_text(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, FILE *out)
{
    fprintf(out, "target %s: %s\n\n", t->name, t->description);
    int w = 18; /* the rule column: as wide as the longest id */
    for (char **id = t->rules; *id; id++)
        w = MAX(w, (int)strlen(*id));
    fprintf(out, "%-*s %8s %8s\n", w, "rule", "matched", "applied");
    for (char **id = t->rules; *id; id++) {
        guint m, a;
        fp_explain_counts(l, *id, &m, &a);
        if (f && f->rule && strcmp(*id, f->rule) != 0)
            continue;
        fprintf(out, "%-*s %8u %8u\n", w, *id, m, a);
    }
    guint shown = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (!fp_explain_keep(fu, f))
            continue;
        if (!shown++)
            fputc('\n', out);
        g_autofree char *who = members(fu);
        if (fu->applied) {
            fprintf(out, "applied      %-16s %s -> %s\n", fu->rule, who, fu->fused_op ? fu->fused_op : "(removed)");
            continue;
        }
        fprintf(out, "NOT applied  %-16s %s\n", fu->rule, who);
        for (guint k = 0; k < fu->reasons->len; k++) {
            const fp_reason *r = fu->reasons->pdata[k];
            fprintf(out, "  - %s: %s\n", r->constraint, r->message);
            fprintf(out, "      actual %s; required %s\n", r->actual, r->required);
            fprintf(out, "      fix: %s\n", r->hint);
        }
    }
    if (!shown)
        fprintf(out, "\nno fusion candidates%s\n", f && (f->node || f->rule) ? " match the filter" : "");
}
