/* explain.c - the `fuseplan explain` report. */
#include "explain.h"

#include <string.h>

#include "json_common.h"

static bool keep(const fp_fusion *fu, const fp_explain_filter *f)
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

/* Per-rule counts in the target's rule order: matched candidates and applied ones. */
static void summary(const fp_fusion_list *l, const fp_target *t, const char *id, guint *matched, guint *applied)
{
    (void)t;
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
    fprintf(out, "%-18s %8s %8s\n", "rule", "matched", "applied");
    for (char **id = t->rules; *id; id++) {
        guint m, a;
        summary(l, t, *id, &m, &a);
        if (f && f->rule && strcmp(*id, f->rule) != 0)
            continue;
        fprintf(out, "%-18s %8u %8u\n", *id, m, a);
    }
    guint shown = 0;
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (!keep(fu, f))
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

void fp_report_fusions_json(JsonBuilder *b, const fp_fusion_list *l, const fp_explain_filter *f)
{
    json_builder_set_member_name(b, "fusions");
    json_builder_begin_array(b);
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (!keep(fu, f))
            continue;
        json_builder_begin_object(b);
        fp_json_str(b, "rule", fu->rule);
        fp_json_str(b, "anchor", fu->anchor);
        json_builder_set_member_name(b, "nodes");
        json_builder_begin_array(b);
        for (guint k = 0; k < fu->nodes->len; k++)
            json_builder_add_string_value(b, fu->nodes->pdata[k]);
        json_builder_end_array(b);
        fp_json_bool(b, "applied", fu->applied);
        fp_json_str(b, "fused_op", fu->fused_op);
        fp_json_str(b, "activation", fu->activation);
        json_builder_set_member_name(b, "reasons");
        json_builder_begin_array(b);
        for (guint k = 0; k < fu->reasons->len; k++) {
            const fp_reason *r = fu->reasons->pdata[k];
            json_builder_begin_object(b);
            fp_json_str(b, "constraint", r->constraint);
            fp_json_str(b, "actual", r->actual);
            fp_json_str(b, "required", r->required);
            fp_json_str(b, "message", r->message);
            fp_json_str(b, "hint", r->hint);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

JsonNode *fp_report_explain_json(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_int_value(b, FP_JSON_SCHEMA);
    json_builder_set_member_name(b, "target");
    json_builder_begin_object(b);
    fp_json_str(b, "name", t->name);
    fp_json_str(b, "description", t->description);
    json_builder_end_object(b);
    fp_report_fusions_json(b, l, f);
    json_builder_set_member_name(b, "summary");
    json_builder_begin_array(b);
    for (char **id = t->rules; *id; id++) {
        guint m, a;
        summary(l, t, *id, &m, &a);
        json_builder_begin_object(b);
        fp_json_str(b, "rule", *id);
        json_builder_set_member_name(b, "matched");
        json_builder_add_int_value(b, m);
        json_builder_set_member_name(b, "applied");
        json_builder_add_int_value(b, a);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
