/* report_json.c - the `report` JSON document (docs/json.md), written piece by piece
 * (reports/json_writer.h): its ops and fusions arrays are as long as the model. */
#include <math.h>

#include "reports/json.h"
#include "reports/provenance.h"

/* "step": the decoder's step as analysed and its estimated latency per token, or null. */
static void step_json(fp_jsonw *w, const fp_report *r)
{
    fp_report_step st;
    if (!fp_report_step_of(r, &st)) {
        fp_jsonw_null(w, "step");
        return;
    }
    fp_jsonw_begin_object(w, "step");
    fp_jsonw_int(w, "sequences", st.sequences);
    fp_jsonw_int(w, "past_tokens", st.past_tokens);
    fp_jsonw_int(w, "new_tokens", st.new_tokens);
    fp_jsonw_num(w, "est_latency_s", st.latency_s);
    fp_jsonw_num(w, "est_latency_per_token_s", st.per_token_s);
    fp_jsonw_num(w, "est_tokens_per_s", st.tokens_per_s);
    fp_jsonw_int(w, "bytes_read_floor", (gint64)st.floor_bytes);
    fp_jsonw_num(w, "floor_s", st.floor_s);
    fp_jsonw_end_object(w);
}

/* "cross": an encoder-decoder's cross-attention K and V (docs/json.md), or null. */
static void kv_cross_json(fp_jsonw *w, const fp_report *r)
{
    const fp_kv_cache *kv = r->kv;
    if (!kv->n_cross) {
        fp_jsonw_null(w, "cross");
        return;
    }
    uint64_t held = fp_kv_cache_cross(kv, r->precision.kv, r->precision.kv_block);
    uint64_t per_seq = fp_kv_cache_cross_per_sequence(kv, r->precision.kv);
    fp_jsonw_begin_object(w, "cross");
    fp_jsonw_int(w, "layers", kv->cross_layers);
    fp_jsonw_int_or_null(w, "tokens", kv->cross_tokens);
    fp_jsonw_str(w, "tokens_dim", kv->cross_dim);
    fp_jsonw_int_or_null(w, "bytes_per_sequence", per_seq ? (gint64)per_seq : -1);
    fp_jsonw_int_or_null(w, "bytes", held != UINT64_MAX ? (gint64)held : -1);
    fp_jsonw_begin_array(w, "tensors");
    for (uint32_t i = 0; i < kv->n_cross; i++) {
        const fp_kv_tensor *t = &kv->cross[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "past", t->past->name);
        fp_jsonw_name(w, "kind", t->value ? "value" : "key");
        fp_jsonw_int(w, "layer", t->layer);
        fp_jsonw_shape(w, "shape", &t->past->shape);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

/* One cached tensor's object: past, present, kind (NULL: none), layer, shape. */
static void kv_tensor_json(fp_jsonw *w, const fp_kv_tensor *t, const char *kind, const fp_shape *shape)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "past", t->past->name);
    fp_jsonw_str(w, "present", t->present ? t->present->name : NULL);
    if (kind)
        fp_jsonw_name(w, "kind", kind);
    fp_jsonw_int(w, "layer", t->layer);
    fp_jsonw_shape(w, "shape", shape);
    fp_jsonw_end_object(w);
}

/* "paged": onnxruntime-genai's paged cache (docs/json.md), or null. */
static void kv_paged_json(fp_jsonw *w, const fp_kv_cache *kv)
{
    if (!fp_kv_cache_paged(kv)) {
        fp_jsonw_null(w, "paged");
        return;
    }
    const fp_shape *s = &kv->tensors[0].past->decl_shape;
    fp_jsonw_begin_object(w, "paged");
    fp_jsonw_int_or_null(w, "blocks", s->dims[0].value);
    fp_jsonw_int_or_null(w, "block_size", s->dims[1].value);
    fp_jsonw_int_or_null(w, "token_slots",
                         fp_dim_known(s->dims[0]) && fp_dim_known(s->dims[1]) ? s->dims[0].value * s->dims[1].value
                                                                              : -1);
    fp_jsonw_end_object(w);
}

/* "state": a hybrid decoder's fixed-size state per sequence (docs/json.md), or null. */
static void kv_state_json(fp_jsonw *w, const fp_kv_cache *kv)
{
    if (!kv->n_state) {
        fp_jsonw_null(w, "state");
        return;
    }
    uint64_t per_seq = fp_kv_cache_state_per_sequence(kv);
    fp_jsonw_begin_object(w, "state");
    fp_jsonw_name(w, "kind", "conv");
    fp_jsonw_int(w, "layers", kv->n_state);
    fp_jsonw_int_or_null(w, "bytes_per_sequence", per_seq ? (gint64)per_seq : -1);
    fp_jsonw_begin_array(w, "tensors");
    for (uint32_t i = 0; i < kv->n_state; i++)
        kv_tensor_json(w, &kv->state[i], NULL, &kv->state[i].past->shape);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

/* "config": the genai_config.json facts the cache was read with (docs/json.md), or null. */
static void kv_config_json(fp_jsonw *w, const fp_kv_cache *kv)
{
    const fp_genai_config *c = kv->genai;
    if (!c) {
        fp_jsonw_null(w, "config");
        return;
    }
    fp_jsonw_begin_object(w, "config");
    fp_jsonw_str(w, "path", c->path);
    fp_jsonw_str(w, "model_type", c->model_type);
    fp_jsonw_str(w, "layout", c->past_packed ? "packed" : c->paged ? "paged" : "separate");
    fp_jsonw_str(w, "past_key_names", c->past_packed ? NULL : c->past_key);
    fp_jsonw_str(w, "past_value_names", c->past_packed ? NULL : c->past_value);
    fp_jsonw_str(w, "past_names", c->past_packed);
    fp_jsonw_str(w, "cross_past_key_names", c->cross_key);
    fp_jsonw_str(w, "cross_past_value_names", c->cross_value);
    fp_jsonw_int_or_null(w, "num_hidden_layers", c->layers);
    fp_jsonw_int_or_null(w, "num_attention_heads", c->heads);
    fp_jsonw_int_or_null(w, "num_key_value_heads", c->kv_heads);
    fp_jsonw_int_or_null(w, "head_size", c->head_size);
    if (c->layer_types) {
        fp_jsonw_begin_array(w, "layer_types");
        for (char **k = c->layer_types; *k; k++)
            fp_jsonw_str(w, NULL, *k);
        fp_jsonw_end_array(w);
    } else {
        fp_jsonw_null(w, "layer_types");
    }
    fp_jsonw_int_or_null(w, "max_length", c->max_length ? c->max_length : -1);
    fp_jsonw_bool(w, "past_present_share_buffer", c->share_buffer);
    fp_jsonw_end_object(w);
}

/* "kv_cache": the decoder's KV cache (docs/json.md), or null. */
static void kv_cache_json(fp_jsonw *w, const fp_report *r)
{
    const fp_kv_cache *kv = r->kv;
    if (!kv) {
        fp_jsonw_null(w, "kv_cache");
        return;
    }
    fp_jsonw_begin_object(w, "kv_cache");
    fp_jsonw_int(w, "layers", kv->layers);
    fp_jsonw_int_or_null(w, "kv_heads", kv->kv_heads);
    fp_jsonw_int_or_null(w, "head_dim", kv->head_dim);
    fp_dtype dt = fp_report_kv_dtype(r);
    uint64_t per_token = fp_kv_cache_token_bytes(kv, r->precision.kv);
    fp_jsonw_str(w, "dtype", dt != FP_DT_UNDEFINED ? fp_dtype_name(dt) : NULL);
    fp_jsonw_str(w, "stored_dtype", kv->dtype != FP_DT_UNDEFINED ? fp_dtype_name(kv->dtype) : NULL);
    fp_jsonw_int_or_null(w, "bytes_per_token", per_token ? (gint64)per_token : -1);
    fp_jsonw_int_or_null(w, "block_tokens", r->precision.kv_block ? r->precision.kv_block : -1);
    fp_jsonw_str(w, "batch_dim", kv->batch_dim);
    fp_jsonw_str(w, "past_dim", kv->past_dim);
    fp_jsonw_int_or_null(w, "bytes", r->kv_bytes ? (gint64)r->kv_bytes : -1);
    fp_jsonw_int_or_null(w, "past_copy_bytes", r->kv_past_bytes ? (gint64)r->kv_past_bytes : -1);
    step_json(w, r);
    fp_jsonw_begin_array(w, "tensors");
    for (uint32_t i = 0; i < kv->n_tensors; i++) {
        const fp_kv_tensor *t = &kv->tensors[i];
        kv_tensor_json(w, t,
                       t->packed  ? "key_value"
                       : t->value ? "value"
                                  : "key",
                       t->present ? &t->present->shape : &t->past->shape);
    }
    fp_jsonw_end_array(w);
    kv_cross_json(w, r);
    kv_paged_json(w, kv);
    kv_state_json(w, kv);
    kv_config_json(w, kv);
    fp_jsonw_end_object(w);
}

/* "precision": the storage what-ifs asked (null members when not) and the weights they give. */
static void precision_json(fp_jsonw *w, const fp_report *r)
{
    const fp_precision *p = &r->precision;
    const fp_weight_plan none = {0}, *wp = r->weights ? r->weights : &none; /* a report made by hand */
    fp_jsonw_begin_object(w, "precision");
    fp_jsonw_str(w, "weight_dtype", p->weight != FP_DT_UNDEFINED ? fp_precision_dtype_name(p->weight) : NULL);
    fp_jsonw_int_or_null(w, "group_size",
                         p->weight == FP_DT_INT4 ? (p->group > 0 ? p->group : FP_PRECISION_DEFAULT_GROUP) : -1);
    fp_jsonw_str(w, "kv_dtype", p->kv != FP_DT_UNDEFINED ? fp_precision_dtype_name(p->kv) : NULL);
    fp_jsonw_int_or_null(w, "kv_block", p->kv_block ? p->kv_block : -1);
    fp_jsonw_int(w, "weight_bytes", (gint64)(r->weights ? r->weight_bytes : r->res->memory->weight_bytes));
    fp_jsonw_int(w, "initializer_bytes", (gint64)wp->bytes);
    fp_jsonw_int(w, "stored_initializer_bytes", (gint64)wp->stored_bytes);
    fp_jsonw_int(w, "converted_tensors", wp->n_changed);
    fp_jsonw_int(w, "converted_bytes", (gint64)wp->changed_bytes);
    fp_jsonw_int(w, "converted_stored_bytes", (gint64)wp->changed_stored);
    fp_jsonw_int(w, "kept_bytes", (gint64)wp->kept_bytes);
    fp_jsonw_end_object(w);
}

/* "ge_formats": GE's format selection, or null when the target has none. */
static void ge_formats_json(fp_jsonw *w, const fp_ge_format_result *ge)
{
    if (!ge->ran && !ge->preset) {
        fp_jsonw_null(w, "ge_formats");
        return;
    }
    fp_jsonw_begin_object(w, "ge_formats");
    fp_jsonw_bool(w, "preset", ge->preset);
    fp_jsonw_int(w, "c0", ge->c0);
    fp_jsonw_int(w, "ops_5hd", ge->ops_5hd);
    fp_jsonw_int(w, "transdata", ge->transdata);
    fp_jsonw_int(w, "cast", ge->cast);
    fp_jsonw_int(w, "transdata_folded", ge->transdata_folded);
    fp_jsonw_int(w, "cast_folded", ge->cast_folded);
    fp_jsonw_begin_object(w, "transdata_to");
    fp_jsonw_int(w, "NC1HWC0", ge->to_5hd);
    fp_jsonw_int(w, "FRACTAL_Z", ge->to_fractal_z);
    fp_jsonw_int(w, "FRACTAL_NZ", ge->to_fractal_nz);
    fp_jsonw_int(w, "origin", ge->to_origin);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
}

/* "layout": the conversions before and after the layout pass, the NCHWc conversion or null, GE's
 * formats or null. */
static void layout_json(fp_jsonw *w, const fp_report *r)
{
    const fp_pipeline_result *res = r->res;
    fp_jsonw_begin_object(w, "layout");
    fp_jsonw_int(w, "conversions_before", res->layout.conversions_before);
    fp_jsonw_int(w, "conversions_after", res->layout.conversions_after);
    fp_jsonw_int(w, "removed", res->layout.removed);
    fp_jsonw_int(w, "merged", res->layout.merged);
    fp_jsonw_int(w, "kept", res->layout.refused);
    const fp_transpose_result *tr = &res->layout.transpose;
    if (tr->ran) {
        fp_jsonw_begin_object(w, "transpose_optimizer");
        fp_jsonw_int(w, "pushed", tr->pushed);
        fp_jsonw_int(w, "cancelled", tr->cancelled);
        fp_jsonw_int(w, "inserted", tr->inserted);
        fp_jsonw_int(w, "removed", tr->removed);
        fp_jsonw_int(w, "not_modelled", tr->unmodelled);
        fp_jsonw_end_object(w);
    } else {
        fp_jsonw_null(w, "transpose_optimizer");
    }
    const fp_nchwc_result *nc = &res->layout.nchwc;
    if (nc->converted || nc->kept_nchw) {
        fp_jsonw_begin_object(w, "nchwc");
        fp_jsonw_int(w, "block", (gint64)r->device->nchwc_block);
        const fp_diag_entry *why = fp_diag_find(r->diag, "nchwc-block");
        fp_jsonw_str(w, "block_reason", why ? why->message : NULL);
        fp_jsonw_int(w, "converted", nc->converted);
        fp_jsonw_int(w, "kept_nchw", nc->kept_nchw);
        fp_jsonw_int(w, "blocked_ops", nc->blocked);
        fp_jsonw_int(w, "adds_folded", nc->sum_fused);
        fp_jsonw_int(w, "activations_folded", nc->act_fused);
        fp_jsonw_int(w, "reorder_input", nc->reorder_in);
        fp_jsonw_int(w, "reorder_output", nc->reorder_out);
        fp_jsonw_int(w, "transposes_folded", nc->transposes_folded);
        fp_jsonw_end_object(w);
    } else {
        fp_jsonw_null(w, "nchwc");
    }
    ge_formats_json(w, &res->layout.ge);
    fp_jsonw_end_object(w);
}

/* Member `member`: the names of n values (null for an omitted optional one). */
static void names_json(fp_jsonw *w, const char *member, fp_value *const *v, uint32_t n)
{
    fp_jsonw_begin_array(w, member);
    for (uint32_t i = 0; i < n; i++)
        fp_jsonw_str(w, NULL, v[i] ? v[i]->name : NULL);
    fp_jsonw_end_array(w);
}

/* "ops": every runtime op of the final graph with its cost, its tensors and the original nodes it
 * came from (reports/provenance.h). */
static void ops_json(fp_jsonw *w, const fp_report *r)
{
    const fp_pipeline_result *res = r->res;
    g_autoptr(fp_provenance) prov = fp_provenance_new(r->model, res);
    fp_jsonw_begin_array(w, "ops");
    for (uint32_t i = 0; i < res->cost->n_ops; i++) {
        const fp_op_cost *oc = &res->cost->ops[i];
        const fp_node *n = oc->node;
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", n->name);
        fp_jsonw_name(w, "op", n->op_type); /* interned by the model */
        fp_jsonw_name(w, "domain", n->domain);
        fp_jsonw_int(w, "flops", (gint64)oc->flops);
        fp_jsonw_int(w, "bytes", (gint64)oc->bytes);
        fp_jsonw_num(w, "intensity", oc->bytes ? (double)oc->flops / (double)oc->bytes : 0);
        fp_jsonw_name(w, "bound", fp_bound_name(oc->rl.bound));
        fp_jsonw_num(w, "est_time_s", oc->rl.time_s);
        fp_jsonw_name(w, "class", fp_op_class_name(oc->cls));
        fp_jsonw_bool(w, "kernel", oc->kernel);
        names_json(w, "inputs", n->inputs, n->n_inputs);
        names_json(w, "outputs", n->outputs, n->n_outputs);
        const char *const *from = NULL;
        uint32_t n_from = fp_provenance_of(prov, n, &from);
        fp_jsonw_begin_array(w, "from");
        for (uint32_t k = 0; k < n_from; k++)
            fp_jsonw_str(w, NULL, from[k]);
        fp_jsonw_end_array(w);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

void fp_report_json(const fp_report *r, fp_jsonw *w)
{
    const fp_pipeline_result *res = r->res;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", r->model->path);
    fp_jsonw_str(w, "format", r->model->format);
    fp_jsonw_str(w, "device", r->device->name);
    if (r->device->threads)
        fp_jsonw_int(w, "device_threads", (gint64)r->device->threads);
    else
        fp_jsonw_null(w, "device_threads");
    fp_jsonw_str(w, "target", r->target->name);
    fp_jsonw_bound(w, r->batch_note, res->unknown_values);
    fp_jsonw_str(w, "what_if_dtype", r->what_if != FP_DT_UNDEFINED ? fp_dtype_name(r->what_if) : NULL);
    fp_jsonw_str(w, "precision_mode", r->precision_mode);
    fp_jsonw_begin_array(w, "stages");
    for (int i = 0; i < 3; i++) {
        const fp_stage *s = &res->stages[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", s->name);
        fp_jsonw_str(w, "meaning", r->target->stage_meaning[i]);
        fp_jsonw_int(w, "ops", s->ops);
        fp_jsonw_int(w, "kernels", s->kernels);
        fp_jsonw_int(w, "folded_ops", s->folded);
        fp_jsonw_int(w, "activation_bytes", (gint64)s->activation_bytes);
        fp_jsonw_bool(w, "activation_planned", s->planned);
        fp_jsonw_int(w, "weight_bytes", (gint64)s->weight_bytes);
        fp_jsonw_num(w, "est_latency_s", s->latency_s);
        fp_jsonw_num(w, "speedup", s->speedup);
        fp_jsonw_int(w, "layout_conversions", s->conversions);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    ops_json(w, r);
    fp_report_fusions_json(w, res->fusions, NULL);
    layout_json(w, r);
    fp_report_memory_object_json(w, "memory", res->memory, res->unknown_values);
    precision_json(w, r);
    kv_cache_json(w, r);
    if (r->headroom) {
        fp_jsonw_begin_object(w, "headroom");
        fp_jsonw_int(w, "max_batch", r->headroom->max_batch);
        fp_jsonw_int(w, "bytes_at_max", (gint64)r->headroom->bytes_at_max);
        fp_jsonw_int(w, "weight_bytes", (gint64)r->headroom->weight_bytes);
        fp_jsonw_int(w, "capacity_bytes", (gint64)r->device->memory_bytes);
        fp_jsonw_int(w, "reserve_bytes", (gint64)(r->device->memory_bytes - r->headroom->usable));
        fp_jsonw_int(w, "usable_bytes", (gint64)r->headroom->usable);
        fp_jsonw_bool(w, "at_limit", r->headroom->at_limit);
        fp_headroom_decoder dec = fp_report_headroom_decoder(r);
        fp_report_headroom_decoder_json(w, &dec, r->headroom);
        fp_jsonw_end_object(w);
    } else {
        fp_jsonw_null(w, "headroom");
    }
    fp_jsonw_end_object(w);
}
