/* diff_json.c - the `diff` JSON document (docs/json.md), written piece by piece
 * (reports/json_writer.h): the fusions lost and gained can be as many as the models' nodes. */
#include <math.h>

#include "reports/json.h"

static void side(fp_jsonw *w, const char *k, const fp_report *r)
{
    fp_jsonw_begin_object(w, k);
    fp_jsonw_str(w, "path", r->model->path);
    fp_jsonw_str(w, "device", r->device->name);
    fp_jsonw_str(w, "target", r->target->name);
    fp_jsonw_str(w, "batch_note", r->batch_note);
    fp_jsonw_end_object(w);
}

static void stage(fp_jsonw *w, const char *k, const fp_stage *s)
{
    fp_jsonw_begin_object(w, k);
    fp_jsonw_int(w, "ops", s->ops);
    fp_jsonw_int(w, "kernels", s->kernels);
    fp_jsonw_int(w, "activation_bytes", (gint64)s->activation_bytes);
    fp_jsonw_int(w, "weight_bytes", (gint64)s->weight_bytes);
    fp_jsonw_num(w, "est_latency_s", s->latency_s);
    fp_jsonw_num(w, "speedup", s->speedup);
    fp_jsonw_int(w, "layout_conversions", s->conversions);
    fp_jsonw_end_object(w);
}

/* {old, new, change}: change is (new - old) / old, null when old is 0. */
static void delta(fp_jsonw *w, const char *k, double o, double n, bool integer)
{
    fp_jsonw_begin_object(w, k);
    if (integer) {
        fp_jsonw_int(w, "old", (gint64)o);
        fp_jsonw_int(w, "new", (gint64)n);
    } else {
        fp_jsonw_num(w, "old", o);
        fp_jsonw_num(w, "new", n);
    }
    fp_jsonw_num(w, "change", fp_diff_change(o, n));
    fp_jsonw_end_object(w);
}

static void json_changed(fp_jsonw *w, const char *k, const GPtrArray *list)
{
    fp_jsonw_begin_array(w, k);
    for (guint i = 0; i < list->len; i++) {
        const fp_diff_fusion *f = list->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "rule", f->rule);
        fp_jsonw_str(w, "anchor", f->anchor);
        fp_jsonw_begin_array(w, "nodes");
        for (guint n = 0; n < f->applied->nodes->len; n++)
            fp_jsonw_str(w, NULL, f->applied->nodes->pdata[n]);
        fp_jsonw_end_array(w);
        fp_jsonw_str(w, "fused_op", f->applied->fused_op);
        fp_jsonw_begin_array(w, "reasons");
        for (guint n = 0; f->other && n < f->other->reasons->len; n++)
            fp_jsonw_reason(w, f->other->reasons->pdata[n]);
        fp_jsonw_end_array(w);
        fp_jsonw_bool(w, "candidate", f->other != NULL);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

static void json_fusions(fp_jsonw *w, const fp_diff *d)
{
    fp_jsonw_begin_object(w, "fusions");
    fp_jsonw_begin_array(w, "by_rule");
    g_autoptr(GArray) rows = fp_diff_rule_counts(d);
    for (guint i = 0; i < rows->len; i++) {
        const fp_diff_rule *r = &g_array_index(rows, fp_diff_rule, i);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "rule", r->rule);
        fp_jsonw_int(w, "old_matched", r->old_matched);
        fp_jsonw_int(w, "old_applied", r->old_applied);
        fp_jsonw_int(w, "new_matched", r->new_matched);
        fp_jsonw_int(w, "new_applied", r->new_applied);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    json_changed(w, "lost", d->lost);
    json_changed(w, "gained", d->gained);
    fp_jsonw_end_object(w);
}

static void json_regression(fp_jsonw *w, const fp_diff *d)
{
    static const char *const kinds[] = {"latency", "activation_memory", "fusion_lost"};
    fp_jsonw_begin_object(w, "regression");
    fp_jsonw_bool(w, "regressed", d->regressions->len > 0);
    fp_jsonw_begin_array(w, "reasons");
    for (guint i = 0; i < d->regressions->len; i++) {
        const fp_diff_regression *r = d->regressions->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "kind", kinds[r->kind]);
        fp_jsonw_str(w, "message", r->message);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

void fp_diff_json(const fp_diff *d, fp_jsonw *w)
{
    const fp_pipeline_result *o = d->old_r->res, *n = d->new_r->res;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    side(w, "old", d->old_r);
    side(w, "new", d->new_r);
    fp_jsonw_num(w, "tolerance", d->tolerance);
    fp_jsonw_begin_array(w, "stages");
    for (int i = 0; i < 3; i++) {
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", o->stages[i].name);
        stage(w, "old", &o->stages[i]);
        stage(w, "new", &n->stages[i]);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_begin_object(w, "memory");
    delta(w, "arena_bytes", (double)o->stages[2].activation_bytes, (double)n->stages[2].activation_bytes, true);
    delta(w, "load_bytes", (double)o->memory->lower_bound, (double)n->memory->lower_bound, true);
    delta(w, "naive_bytes", (double)o->memory->naive_bytes, (double)n->memory->naive_bytes, true);
    delta(w, "weight_bytes", (double)o->stages[2].weight_bytes, (double)n->stages[2].weight_bytes, true);
    fp_jsonw_end_object(w);
    delta(w, "latency_s", o->stages[2].latency_s, n->stages[2].latency_s, false);
    json_fusions(w, d);
    json_regression(w, d);
    fp_jsonw_end_object(w);
}
