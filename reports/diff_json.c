/* diff_json.c - the `diff` JSON document (docs/json.md). */
#include <math.h>

#include "reports/json.h"

static void side(JsonBuilder *b, const char *k, const fp_report *r)
{
    json_builder_set_member_name(b, k);
    json_builder_begin_object(b);
    fp_json_str(b, "path", r->model->path);
    fp_json_str(b, "device", r->device->name);
    fp_json_str(b, "target", r->target->name);
    fp_json_str(b, "batch_note", r->batch_note);
    json_builder_end_object(b);
}

static void stage(JsonBuilder *b, const char *k, const fp_stage *s)
{
    json_builder_set_member_name(b, k);
    json_builder_begin_object(b);
    fp_json_int(b, "ops", s->ops);
    fp_json_int(b, "kernels", s->kernels);
    fp_json_int(b, "activation_bytes", (gint64)s->activation_bytes);
    fp_json_int(b, "weight_bytes", (gint64)s->weight_bytes);
    fp_json_num(b, "est_latency_s", s->latency_s);
    fp_json_num(b, "speedup", s->speedup);
    fp_json_int(b, "layout_conversions", s->conversions);
    json_builder_end_object(b);
}

/* {old, new, change}: change is (new - old) / old, null when old is 0. */
static void delta(JsonBuilder *b, const char *k, double o, double n, bool integer)
{
    json_builder_set_member_name(b, k);
    json_builder_begin_object(b);
    if (integer) {
        fp_json_int(b, "old", (gint64)o);
        fp_json_int(b, "new", (gint64)n);
    } else {
        fp_json_num(b, "old", o);
        fp_json_num(b, "new", n);
    }
    fp_json_num(b, "change", fp_diff_change(o, n));
    json_builder_end_object(b);
}

static void json_changed(JsonBuilder *b, const char *k, const GPtrArray *list)
{
    json_builder_set_member_name(b, k);
    json_builder_begin_array(b);
    for (guint i = 0; i < list->len; i++) {
        const fp_diff_fusion *f = list->pdata[i];
        json_builder_begin_object(b);
        fp_json_str(b, "rule", f->rule);
        fp_json_str(b, "anchor", f->anchor);
        json_builder_set_member_name(b, "nodes");
        json_builder_begin_array(b);
        for (guint n = 0; n < f->applied->nodes->len; n++)
            json_builder_add_string_value(b, f->applied->nodes->pdata[n]);
        json_builder_end_array(b);
        fp_json_str(b, "fused_op", f->applied->fused_op);
        json_builder_set_member_name(b, "reasons");
        json_builder_begin_array(b);
        for (guint n = 0; f->other && n < f->other->reasons->len; n++) {
            const fp_reason *why = f->other->reasons->pdata[n];
            json_builder_begin_object(b);
            fp_json_str(b, "constraint", why->constraint);
            fp_json_str(b, "actual", why->actual);
            fp_json_str(b, "required", why->required);
            fp_json_str(b, "message", why->message);
            fp_json_str(b, "hint", why->hint);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        fp_json_bool(b, "candidate", f->other != NULL);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static void json_fusions(JsonBuilder *b, const fp_diff *d)
{
    json_builder_set_member_name(b, "fusions");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "by_rule");
    json_builder_begin_array(b);
    g_autoptr(GArray) rows = fp_diff_rule_counts(d);
    for (guint i = 0; i < rows->len; i++) {
        const fp_diff_rule *r = &g_array_index(rows, fp_diff_rule, i);
        json_builder_begin_object(b);
        fp_json_str(b, "rule", r->rule);
        fp_json_int(b, "old_matched", r->old_matched);
        fp_json_int(b, "old_applied", r->old_applied);
        fp_json_int(b, "new_matched", r->new_matched);
        fp_json_int(b, "new_applied", r->new_applied);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_changed(b, "lost", d->lost);
    json_changed(b, "gained", d->gained);
    json_builder_end_object(b);
}

static void json_regression(JsonBuilder *b, const fp_diff *d)
{
    static const char *const kinds[] = {"latency", "activation_memory", "fusion_lost"};
    json_builder_set_member_name(b, "regression");
    json_builder_begin_object(b);
    fp_json_bool(b, "regressed", d->regressions->len > 0);
    json_builder_set_member_name(b, "reasons");
    json_builder_begin_array(b);
    for (guint i = 0; i < d->regressions->len; i++) {
        const fp_diff_regression *r = d->regressions->pdata[i];
        json_builder_begin_object(b);
        fp_json_str(b, "kind", kinds[r->kind]);
        fp_json_str(b, "message", r->message);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

JsonNode *fp_diff_json(const fp_diff *d)
{
    const fp_pipeline_result *o = d->old_r->res, *n = d->new_r->res;
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fp_json_int(b, "schema", FP_JSON_SCHEMA);
    side(b, "old", d->old_r);
    side(b, "new", d->new_r);
    fp_json_num(b, "tolerance", d->tolerance);
    json_builder_set_member_name(b, "stages");
    json_builder_begin_array(b);
    for (int i = 0; i < 3; i++) {
        json_builder_begin_object(b);
        fp_json_str(b, "name", o->stages[i].name);
        stage(b, "old", &o->stages[i]);
        stage(b, "new", &n->stages[i]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "memory");
    json_builder_begin_object(b);
    delta(b, "arena_bytes", (double)o->stages[2].activation_bytes, (double)n->stages[2].activation_bytes, true);
    delta(b, "load_bytes", (double)o->memory->lower_bound, (double)n->memory->lower_bound, true);
    delta(b, "naive_bytes", (double)o->memory->naive_bytes, (double)n->memory->naive_bytes, true);
    delta(b, "weight_bytes", (double)o->stages[2].weight_bytes, (double)n->stages[2].weight_bytes, true);
    json_builder_end_object(b);
    delta(b, "latency_s", o->stages[2].latency_s, n->stages[2].latency_s, false);
    json_fusions(b, d);
    json_regression(b, d);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
