/* report_json.c - the `report` JSON document (docs/json.md). */
#include <math.h>

#include "reports/json.h"

JsonNode *fp_report_json(const fp_report *r)
{
    const fp_pipeline_result *res = r->res;
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fp_json_int(b, "schema", FP_JSON_SCHEMA);
    fp_json_str(b, "path", r->model->path);
    fp_json_str(b, "format", r->model->format);
    fp_json_str(b, "device", r->device->name);
    fp_json_str(b, "target", r->target->name);
    fp_json_str(b, "batch_note", r->batch_note);
    fp_json_str(b, "what_if_dtype", r->what_if != FP_DT_UNDEFINED ? fp_dtype_name(r->what_if) : NULL);
    json_builder_set_member_name(b, "stages");
    json_builder_begin_array(b);
    for (int i = 0; i < 3; i++) {
        const fp_stage *s = &res->stages[i];
        json_builder_begin_object(b);
        fp_json_str(b, "name", s->name);
        fp_json_int(b, "ops", s->ops);
        fp_json_int(b, "kernels", s->kernels);
        fp_json_int(b, "folded_ops", s->folded);
        fp_json_int(b, "activation_bytes", (gint64)s->activation_bytes);
        fp_json_bool(b, "activation_planned", s->planned);
        fp_json_int(b, "weight_bytes", (gint64)s->weight_bytes);
        fp_json_num(b, "est_latency_s", s->latency_s);
        fp_json_num(b, "speedup", s->speedup);
        fp_json_int(b, "layout_conversions", s->conversions);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "ops");
    json_builder_begin_array(b);
    for (uint32_t i = 0; i < res->cost->n_ops; i++) {
        const fp_op_cost *oc = &res->cost->ops[i];
        json_builder_begin_object(b);
        fp_json_str(b, "name", oc->node->name);
        fp_json_str(b, "op", oc->node->op_type);
        fp_json_int(b, "flops", (gint64)oc->flops);
        fp_json_int(b, "bytes", (gint64)oc->bytes);
        fp_json_num(b, "intensity", oc->bytes ? (double)oc->flops / (double)oc->bytes : 0);
        fp_json_str(b, "bound", fp_bound_name(oc->rl.bound));
        fp_json_num(b, "est_time_s", oc->rl.time_s);
        fp_json_str(b, "class", fp_op_class_name(oc->cls));
        fp_json_bool(b, "kernel", oc->kernel);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    fp_report_fusions_json(b, res->fusions, NULL);
    json_builder_set_member_name(b, "layout");
    json_builder_begin_object(b);
    fp_json_int(b, "conversions_before", res->layout.conversions_before);
    fp_json_int(b, "conversions_after", res->layout.conversions_after);
    fp_json_int(b, "removed", res->layout.removed);
    fp_json_int(b, "merged", res->layout.merged);
    fp_json_int(b, "kept", res->layout.refused);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "memory");
    g_autoptr(JsonNode) mem = fp_report_memory_json(r->model, res->memory, NULL);
    JsonObject *mo = json_node_get_object(mem);
    json_builder_add_value(b, json_node_ref(json_object_get_member(mo, "memory") ? json_object_get_member(mo, "memory")
                                                                                  : mem));
    json_builder_set_member_name(b, "headroom");
    if (r->headroom) {
        json_builder_begin_object(b);
        fp_json_int(b, "max_batch", r->headroom->max_batch);
        fp_json_int(b, "bytes_at_max", (gint64)r->headroom->bytes_at_max);
        fp_json_int(b, "capacity_bytes", (gint64)r->device->memory_bytes);
        fp_json_int(b, "usable_bytes", (gint64)r->headroom->usable);
        fp_json_bool(b, "at_limit", r->headroom->at_limit);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
