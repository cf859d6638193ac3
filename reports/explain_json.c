/* explain_json.c - the `explain` JSON document and the `fusions` array shared with `report`
 * (docs/json.md), written piece by piece (reports/json_writer.h). */
#include "reports/json.h"

void fp_jsonw_reason(fp_jsonw *w, const fp_reason *r)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "constraint", r->constraint);
    fp_jsonw_str(w, "actual", r->actual);
    fp_jsonw_str(w, "required", r->required);
    fp_jsonw_str(w, "message", r->message);
    fp_jsonw_str(w, "hint", r->hint);
    fp_jsonw_end_object(w);
}

void fp_report_fusions_json(fp_jsonw *w, const fp_fusion_list *l, const fp_explain_filter *f)
{
    fp_jsonw_begin_array(w, "fusions");
    for (guint i = 0; i < l->fusions->len; i++) {
        const fp_fusion *fu = l->fusions->pdata[i];
        if (!fp_explain_keep(fu, f))
            continue;
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "rule", fu->rule);
        fp_jsonw_str(w, "anchor", fu->anchor);
        fp_jsonw_begin_array(w, "nodes");
        for (guint k = 0; k < fu->nodes->len; k++)
            fp_jsonw_str(w, NULL, fu->nodes->pdata[k]);
        fp_jsonw_end_array(w);
        fp_jsonw_bool(w, "applied", fu->applied);
        fp_jsonw_str(w, "fused_op", fu->fused_op);
        fp_jsonw_str(w, "activation", fu->activation);
        fp_jsonw_begin_array(w, "reasons");
        for (guint k = 0; k < fu->reasons->len; k++)
            fp_jsonw_reason(w, fu->reasons->pdata[k]);
        fp_jsonw_end_array(w);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

void fp_report_explain_json(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_begin_object(w, "target");
    fp_jsonw_str(w, "name", t->name);
    fp_jsonw_str(w, "description", t->description);
    fp_jsonw_end_object(w);
    fp_report_fusions_json(w, l, f);
    fp_jsonw_begin_array(w, "summary");
    for (char **id = t->rules; *id; id++) {
        guint m, a;
        fp_explain_counts(l, *id, &m, &a);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "rule", *id);
        fp_jsonw_int(w, "matched", m);
        fp_jsonw_int(w, "applied", a);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}
