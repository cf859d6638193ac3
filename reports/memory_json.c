/* memory_json.c - the `memory` and `headroom` JSON documents (docs/json.md). */
#include "reports/json.h"

static void json_diagnostics(JsonBuilder *b, const fp_diag *diag)
{
    json_builder_set_member_name(b, "diagnostics");
    json_builder_add_value(b, fp_json_diagnostics(diag));
}

static void json_tensor(JsonBuilder *b, const fp_memory_tensor *t)
{
    json_builder_begin_object(b);
    fp_json_str(b, "name", fp_report_memory_tensor_name(t));
    fp_json_uint(b, "bytes", t->bytes);
    fp_json_uint(b, "offset", t->offset);
    fp_json_str(b, "producer", t->input ? NULL : t->producer->name);
    fp_json_str(b, "last_consumer", t->last_reader ? t->last_reader->name : NULL);
    fp_json_uint(b, "first_step", t->first);
    fp_json_uint(b, "last_step", t->last);
    fp_json_uint(b, "values", t->values);
    fp_json_str(b, "kind", t->ws_node ? "workspace" : t->input ? "input" : t->output ? "output" : "activation");
    json_builder_end_object(b);
}

JsonNode *fp_report_memory_json(const fp_model *m, const fp_memory_result *r, const fp_diag *diag)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fp_json_uint(b, "schema", FP_JSON_SCHEMA);
    fp_json_str(b, "path", m->path);
    fp_json_str(b, "graph", r->graph->name);
    json_builder_set_member_name(b, "memory");
    json_builder_begin_object(b);
    fp_json_str(b, "strategy", fp_memplan_strategy_name(r->opts.strategy));
    fp_json_str(b, "method", r->method);
    fp_json_str(b, "schedule", r->schedule);
    fp_json_uint(b, "alignment", r->align);
    fp_json_uint(b, "lower_bound_bytes", r->lower_bound);
    fp_json_uint(b, "arena_bytes", r->arena);
    fp_json_uint(b, "naive_bytes", r->naive_bytes);
    json_builder_set_member_name(b, "fragmentation");
    json_builder_add_double_value(b, r->lower_bound ? (double)r->arena / (double)r->lower_bound - 1.0 : 0.0);
    fp_json_uint(b, "weight_bytes", r->weight_bytes);
    uint64_t total;
    fp_json_uint(b, "total_bytes", g_uint64_checked_add(&total, r->weight_bytes, r->arena) ? total : UINT64_MAX);
    fp_json_uint(b, "workspace_bytes", r->workspace_bytes);
    json_builder_set_member_name(b, "strategies");
    json_builder_begin_object(b);
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        json_builder_set_member_name(b, fp_memplan_strategy_name((fp_memplan_strategy)s));
        if (r->strategy_planned[s])
            json_builder_add_int_value(b, (gint64)r->strategy_arena[s]);
        else
            json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "schedules");
    json_builder_begin_object(b);
    fp_json_uint(b, "given_lower_bound_bytes", r->lower_bound_given);
    json_builder_set_member_name(b, "optimized_lower_bound_bytes");
    if (r->schedule_searched)
        json_builder_add_int_value(b, (gint64)MIN(r->lower_bound_optimized, (uint64_t)G_MAXINT64));
    else
        json_builder_add_null_value(b);
    fp_json_str(b, "method", r->schedule_searched ? r->schedule_method : NULL);
    fp_json_bool(b, "proven_minimal", r->schedule_searched && r->schedule_exact);
    fp_json_uint(b, "segments", r->n_segments);
    json_builder_set_member_name(b, "optimized_order");
    json_builder_begin_array(b);
    for (uint32_t i = 0; r->opts.schedule == FP_SCHEDULE_OPTIMIZED && i < r->n_order; i++)
        json_builder_add_string_value(b, r->order[i]->name);
    json_builder_end_array(b);
    json_builder_end_object(b);
    fp_json_uint(b, "steps", r->n_order);
    fp_json_uint(b, "buffers", r->n_buffers);
    fp_json_uint(b, "views", r->n_views);
    fp_json_uint(b, "inplace", r->n_inplace);
    fp_json_uint(b, "fused_values", r->n_fused);
    fp_json_uint(b, "unknown_size_values", r->n_unknown);
    fp_json_uint(b, "peak_step", r->peak_step);
    fp_json_str(b, "peak_node", r->peak_node ? r->peak_node->name : NULL);
    json_builder_set_member_name(b, "peak_tensors");
    json_builder_begin_array(b);
    for (uint32_t i = 0; i < r->n_peak; i++)
        json_tensor(b, &r->peak[i]);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "hints");
    json_builder_begin_array(b);
    g_autoptr(GPtrArray) hints = fp_report_memory_hints(r);
    for (guint i = 0; i < hints->len; i++)
        json_builder_add_string_value(b, hints->pdata[i]);
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_diagnostics(b, diag);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

JsonNode *fp_report_headroom_json(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                                  const fp_diag *diag)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fp_json_uint(b, "schema", FP_JSON_SCHEMA);
    fp_json_str(b, "path", m->path);
    json_builder_set_member_name(b, "headroom");
    json_builder_begin_object(b);
    fp_json_uint(b, "max_batch", (uint64_t)res->max_batch);
    fp_json_uint(b, "bytes_at_max", res->bytes_at_max);
    fp_json_uint(b, "weight_bytes", res->weight_bytes);
    fp_json_uint(b, "arena_bytes_at_max", res->arena_at_max);
    json_builder_set_member_name(b, "bytes_above_max");
    if (res->at_limit)
        json_builder_add_null_value(b);
    else
        json_builder_add_int_value(b, (gint64)MIN(res->bytes_above, (uint64_t)G_MAXINT64));
    fp_json_uint(b, "capacity_bytes", q->capacity);
    fp_json_uint(b, "reserve_bytes", q->reserve);
    fp_json_uint(b, "usable_bytes", res->usable);
    fp_json_str(b, "device", q->device);
    fp_json_str(b, "batch_dim", q->batch_dim);
    fp_json_str(b, "strategy", fp_memplan_strategy_name(q->mem->strategy));
    fp_json_str(b, "schedule", q->mem->schedule == FP_SCHEDULE_OPTIMIZED ? "optimized" : "given");
    fp_json_uint(b, "evaluations", res->evaluations);
    fp_json_bool(b, "at_search_limit", res->at_limit);
    json_builder_end_object(b);
    json_diagnostics(b, diag);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
