/* memory_json.c - the `memory` and `headroom` JSON documents (docs/json.md), written piece by
 * piece (reports/json_writer.h): the optimized order names every node, and there can be a finding
 * per node. */
#include "reports/json.h"

static void json_tensor(fp_jsonw *w, const fp_memory_tensor *t)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "name", fp_report_memory_tensor_name(t));
    fp_jsonw_uint(w, "bytes", t->bytes);
    fp_jsonw_uint(w, "offset", t->offset);
    fp_jsonw_str(w, "producer", t->input ? NULL : t->producer->name);
    fp_jsonw_str(w, "last_consumer", t->last_reader ? t->last_reader->name : NULL);
    fp_jsonw_uint(w, "first_step", t->first);
    fp_jsonw_uint(w, "last_step", t->last);
    fp_jsonw_uint(w, "values", t->values);
    fp_jsonw_name(w, "kind", t->ws_node ? "workspace" : t->input ? "input" : t->output ? "output" : "activation");
    fp_jsonw_end_object(w);
}

void fp_report_memory_object_json(fp_jsonw *w, const char *member, const fp_memory_result *r, uint32_t unknown_values)
{
    fp_jsonw_begin_object(w, member);
    fp_jsonw_name(w, "strategy", fp_memplan_strategy_name(r->opts.strategy));
    fp_jsonw_str(w, "method", r->method);
    fp_jsonw_str(w, "schedule", r->schedule);
    fp_jsonw_uint(w, "alignment", r->align);
    fp_jsonw_uint(w, "lower_bound_bytes", r->lower_bound);
    fp_jsonw_uint(w, "arena_bytes", r->arena);
    fp_jsonw_uint(w, "naive_bytes", r->naive_bytes);
    fp_jsonw_num(w, "fragmentation", r->lower_bound ? (double)r->arena / (double)r->lower_bound - 1.0 : 0.0);
    fp_jsonw_uint(w, "weight_bytes", r->weight_bytes);
    fp_jsonw_uint(w, "stored_weight_bytes", r->weight_bytes - MIN(r->folded_bytes, r->weight_bytes));
    fp_jsonw_uint(w, "folded_weight_bytes", r->folded_bytes);
    uint64_t total;
    fp_jsonw_uint(w, "total_bytes", g_uint64_checked_add(&total, r->weight_bytes, r->arena) ? total : UINT64_MAX);
    fp_jsonw_uint(w, "workspace_bytes", r->workspace_bytes);
    fp_jsonw_begin_object(w, "strategies");
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        const char *name = fp_memplan_strategy_name((fp_memplan_strategy)s);
        if (r->strategy_planned[s])
            fp_jsonw_int(w, name, (gint64)r->strategy_arena[s]);
        else
            fp_jsonw_null(w, name);
    }
    fp_jsonw_end_object(w);
    fp_jsonw_begin_object(w, "schedules");
    fp_jsonw_uint(w, "given_lower_bound_bytes", r->lower_bound_given);
    if (r->schedule_searched)
        fp_jsonw_int(w, "optimized_lower_bound_bytes", (gint64)MIN(r->lower_bound_optimized, (uint64_t)G_MAXINT64));
    else
        fp_jsonw_null(w, "optimized_lower_bound_bytes");
    fp_jsonw_str(w, "method", r->schedule_searched ? r->schedule_method : NULL);
    fp_jsonw_bool(w, "proven_minimal", r->schedule_searched && r->schedule_exact);
    fp_jsonw_uint(w, "segments", r->n_segments);
    fp_jsonw_begin_array(w, "optimized_order");
    for (uint32_t i = 0; r->opts.schedule == FP_SCHEDULE_OPTIMIZED && i < r->n_order; i++)
        fp_jsonw_str(w, NULL, r->order[i]->name);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
    fp_jsonw_uint(w, "steps", r->n_order);
    fp_jsonw_uint(w, "buffers", r->n_buffers);
    fp_jsonw_uint(w, "views", r->n_views);
    fp_jsonw_uint(w, "inplace", r->n_inplace);
    fp_jsonw_uint(w, "fused_values", r->n_fused);
    fp_jsonw_uint(w, "unknown_size_values", unknown_values);
    fp_jsonw_uint(w, "unknown_size_buffers", r->n_unknown);
    fp_jsonw_uint(w, "peak_step", r->peak_step);
    fp_jsonw_str(w, "peak_node", r->peak_node ? r->peak_node->name : NULL);
    fp_jsonw_begin_array(w, "peak_tensors");
    for (uint32_t i = 0; i < r->n_peak; i++)
        json_tensor(w, &r->peak[i]);
    fp_jsonw_end_array(w);
    fp_jsonw_begin_array(w, "hints");
    g_autoptr(GPtrArray) hints = fp_report_memory_hints(r);
    for (guint i = 0; i < hints->len; i++)
        fp_jsonw_str(w, NULL, hints->pdata[i]);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

/* The ORT allocation model (fp_pass_ort_memory) as member "ort". */
static void json_ort(fp_jsonw *w, const fp_ort_memory_result *o)
{
    fp_jsonw_begin_object(w, "ort");
    fp_jsonw_uint(w, "total_first_run_bytes", o->total_first);
    fp_jsonw_uint(w, "total_steady_bytes", o->total_steady);
    fp_jsonw_uint(w, "weight_arena_bytes", o->weight_arena);
    fp_jsonw_uint(w, "weight_outside_bytes", o->weight_outside);
    fp_jsonw_uint(w, "first_run_activation_bytes", o->first_run);
    fp_jsonw_uint(w, "pattern_bytes", o->pattern);
    fp_jsonw_uint(w, "second_run_bytes", o->second_run);
    fp_jsonw_uint(w, "output_bytes", o->outputs);
    fp_jsonw_uint(w, "buffers", o->n_buffers);
    fp_jsonw_uint(w, "reused", o->n_reused);
    fp_jsonw_uint(w, "inplace", o->n_inplace);
    fp_jsonw_uint(w, "views", o->n_views);
    fp_jsonw_end_object(w);
}

void fp_report_memory_json(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                           fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_uint(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", m->path);
    fp_jsonw_str(w, "graph", r->graph->name);
    fp_jsonw_bound(w, x ? x->batch_note : NULL, x ? x->unknown_values : r->n_unknown);
    fp_report_memory_object_json(w, "memory", r, x ? x->unknown_values : r->n_unknown);
    fp_jsonw_str(w, "weight_dtype", x ? x->weight_dtype : NULL);
    fp_jsonw_uint(w, "weight_bytes", x && x->weight_dtype ? x->weight_bytes : r->weight_bytes);
    fp_jsonw_uint(w, "weight_quantized_bytes", x && x->weight_dtype ? x->weight_quantized : 0);
    bool kv = x && x->kv && x->kv_bytes != UINT64_MAX;
    fp_jsonw_int_or_null(w, "kv_cache_bytes", kv ? (gint64)MIN(x->kv_bytes, (uint64_t)G_MAXINT64) : -1);
    uint64_t cross = kv && x->kv->n_cross ? fp_kv_cache_cross(x->kv, x->kv_dtype, x->kv_block) : UINT64_MAX;
    fp_jsonw_int_or_null(w, "kv_cross_bytes", cross != UINT64_MAX ? (gint64)MIN(cross, (uint64_t)G_MAXINT64) : -1);
    if (x && x->ort)
        json_ort(w, x->ort);
    fp_jsonw_diagnostics(w, "diagnostics", diag);
    fp_jsonw_end_object(w);
}

void fp_report_headroom_decoder_json(fp_jsonw *w, const fp_headroom_decoder *dec, const fp_headroom_result *res)
{
    const fp_headroom_decoder *d = dec->kv ? dec : NULL;
    fp_jsonw_uint(w, "activation_bytes", res->arena_at_max);
    if (!d) {
        static const char *const none[] = {"kv_cache_bytes",
                                           "kv_bytes_per_token",
                                           "kv_dtype",
                                           "kv_block",
                                           "kv_capacity_tokens",
                                           "context",
                                           "phase",
                                           "kv_config",
                                           "kv_max_length",
                                           "kv_share_buffer",
                                           "kv_cross_bytes_per_sequence"};
        for (size_t i = 0; i < G_N_ELEMENTS(none); i++)
            fp_jsonw_null(w, none[i]);
        return;
    }
    fp_jsonw_uint(w, "kv_cache_bytes", res->outside_at_max);
    fp_jsonw_uint(w, "kv_bytes_per_token", d->bytes_per_token);
    fp_jsonw_str(w, "kv_dtype", d->kv_dtype != FP_DT_UNDEFINED ? fp_dtype_name(d->kv_dtype) : NULL);
    fp_jsonw_int_or_null(w, "kv_block", d->block ? d->block : -1);
    fp_jsonw_int_or_null(w, "kv_capacity_tokens", fp_report_kv_capacity_tokens(d, res));
    fp_jsonw_int_or_null(w, "context", d->context > 0 ? d->context : -1);
    fp_jsonw_str(w, "phase", d->phase);
    fp_jsonw_str(w, "kv_config", d->kv->config);
    fp_jsonw_int_or_null(w, "kv_max_length", d->kv->config && d->kv->max_length ? d->kv->max_length : -1);
    fp_jsonw_bool(w, "kv_share_buffer", d->kv->share_buffer);
    uint64_t cross = fp_kv_cache_cross_per_sequence(d->kv, d->kv_dtype);
    fp_jsonw_int_or_null(w, "kv_cross_bytes_per_sequence", cross ? (gint64)cross : -1);
}

void fp_report_headroom_json(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                             const fp_diag *diag, fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_uint(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", m->path);
    fp_jsonw_bound(w, q->batch_note, q->unknown_values);
    fp_jsonw_begin_object(w, "headroom");
    fp_jsonw_uint(w, "max_batch", (uint64_t)res->max_batch);
    fp_jsonw_uint(w, "bytes_at_max", res->bytes_at_max);
    fp_jsonw_uint(w, "weight_bytes", res->weight_bytes);
    fp_jsonw_uint(w, "arena_bytes_at_max", res->arena_at_max);
    if (res->at_limit)
        fp_jsonw_null(w, "bytes_above_max");
    else
        fp_jsonw_int(w, "bytes_above_max", (gint64)MIN(res->bytes_above, (uint64_t)G_MAXINT64));
    fp_jsonw_uint(w, "capacity_bytes", q->capacity);
    fp_jsonw_uint(w, "reserve_bytes", q->reserve);
    fp_jsonw_uint(w, "usable_bytes", res->usable);
    fp_jsonw_str(w, "device", q->device);
    fp_jsonw_str(w, "batch_dim", q->batch_dim);
    fp_jsonw_name(w, "strategy", fp_memplan_strategy_name(q->mem->strategy));
    fp_jsonw_name(w, "schedule", q->mem->schedule == FP_SCHEDULE_OPTIMIZED ? "optimized" : "given");
    fp_jsonw_uint(w, "evaluations", res->evaluations);
    fp_jsonw_bool(w, "at_search_limit", res->at_limit);
    fp_jsonw_str(w, "weight_dtype", q->weight_dtype);
    fp_jsonw_uint(w, "weight_quantized_bytes", q->weight_quantized);
    fp_report_headroom_decoder_json(w, &q->dec, res);
    fp_jsonw_end_object(w);
    fp_jsonw_diagnostics(w, "diagnostics", diag);
    fp_jsonw_end_object(w);
}
