/* gate_json.c - the `gate` JSON document (docs/json.md): the verdict, each check of the policy with
 * its numbers, and for a forbidden fusion the candidates not applied with their reasons. */
#include "reports/json.h"

static const char *status_name(fp_gate_status s)
{
    return s == FP_GATE_PASS ? "pass" : s == FP_GATE_FAIL ? "fail" : "not_evaluated";
}

/* One check as an array element. */
static void check_json(fp_jsonw *w, const fp_gate_check *c)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "name", c->name);
    fp_jsonw_name(w, "key", fp_gate_key_name(c->key));
    fp_jsonw_str(w, "rule", c->rule);
    fp_jsonw_name(w, "status", status_name(c->status));
    if (c->status == FP_GATE_NOT_EVALUATED)
        fp_jsonw_null(w, "actual");
    else
        fp_jsonw_num(w, "actual", c->actual);
    fp_jsonw_num(w, "limit", c->limit);
    fp_jsonw_str(w, "summary", c->summary);
    fp_jsonw_str(w, "detail", c->detail);
    fp_jsonw_str(w, "node", c->node);
    fp_jsonw_begin_array(w, "unfused");
    for (guint i = 0; c->unfused && i < c->unfused->len; i++) {
        const fp_fusion *f = c->unfused->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "anchor", f->anchor);
        fp_jsonw_begin_array(w, "reasons");
        for (guint k = 0; k < f->reasons->len; k++)
            fp_jsonw_reason(w, f->reasons->pdata[k]);
        fp_jsonw_end_array(w);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

void fp_report_gate_json(const fp_gate_result *g, int exit_code, fp_jsonw *w)
{
    const fp_report *r = g->report;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", r->model->path);
    fp_jsonw_str(w, "policy", g->policy->path);
    fp_jsonw_str(w, "device", r->device->name);
    fp_jsonw_str(w, "target", r->target->name);
    fp_jsonw_name(w, "verdict", exit_code == 0 ? "pass" : exit_code == 1 ? "fail" : "error");
    fp_jsonw_int(w, "exit_code", exit_code);
    fp_jsonw_int(w, "failed", g->failed);
    fp_jsonw_int(w, "not_evaluated", g->not_evaluated);
    fp_jsonw_begin_array(w, "checks");
    for (guint i = 0; i < g->checks->len; i++)
        check_json(w, g->checks->pdata[i]);
    fp_jsonw_end_array(w);
    fp_jsonw_begin_array(w, "notes");
    for (guint i = 0; i < g->notes->len; i++)
        fp_jsonw_str(w, NULL, g->notes->pdata[i]);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}
