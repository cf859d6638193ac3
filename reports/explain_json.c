/* explain_json.c - the `explain` JSON document and the `fusions` array shared with `report` (docs/json.md). */
#include "reports/json.h"

void fp_report_fusions_json(JsonBuilder *b, const fp_fusion_list *l, const fp_explain_filter *f)
{
    json_builder_set_member_name(b, "fusions");
    json_builder_begin_array(b);
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (!fp_explain_keep(fu, f))
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
        fp_explain_counts(l, *id, &m, &a);
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
