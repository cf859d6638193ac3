/* train_json.c - `fuseplan train -f json` (docs/json.md, "train"): the step's memory, FLOPs, the
 * saves per op with their reasons, the headroom. */
#include "reports/json.h"
#include "reports/json_writer.h"

static void saved_json(fp_jsonw *w, const fp_train_saved *s)
{
    fp_jsonw_begin_array(w, "saved");
    for (guint i = 0; i < s->items->len; i++) {
        const fp_saved_item *it = &g_array_index(s->items, fp_saved_item, i);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "node", it->node->name);
        fp_jsonw_name(w, "op", it->node->op_type);
        fp_jsonw_name(w, "tensor", it->value ? it->value->name : NULL); /* null: an auxiliary */
        fp_jsonw_name(w, "storage", it->storage ? it->storage->name : NULL);
        fp_jsonw_str(w, "what", it->what);
        fp_jsonw_str(w, "why", it->why);
        fp_jsonw_uint(w, "bytes", it->bytes);
        fp_jsonw_bool(w, "counted", it->counted);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_begin_array(w, "decomposed");
    for (guint i = 0; i < s->notes->len; i++)
        fp_jsonw_str(w, NULL, s->notes->pdata[i]);
    fp_jsonw_end_array(w);
}

static void plan_members(fp_jsonw *w, const fp_rc_plan *p)
{
    fp_jsonw_bool(w, "feasible", p->feasible);
    fp_jsonw_uint(w, "saved_activation_bytes", p->peak_bytes);
    fp_jsonw_uint(w, "end_of_forward_bytes", p->end_bytes);
    fp_jsonw_uint(w, "recompute_flops", p->flops);
    fp_jsonw_num(w, "recompute_time_s", p->time_s);
    fp_jsonw_int(w, "segments", p->segments);
}

/* "recomputed": each recomputed segment of plan p as a replayer checkpoints it: the tensor it starts
 * from (null: the graph's inputs), the tensor the stage after it starts from (null: it runs to the
 * graph's end) and its stages. */
static void segments_json(fp_jsonw *w, const fp_rc_stages *s, const fp_rc_plan *p)
{
    fp_jsonw_begin_array(w, "recomputed");
    for (uint32_t i = 0; i < s->n; i++) {
        if (p->mode[i] != FP_RC_START)
            continue;
        uint32_t end = i + 1;
        while (end < s->n && p->mode[end] == FP_RC_CONTINUE)
            end++;
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "from", s->start[i] ? s->start[i]->name : NULL);
        fp_jsonw_name(w, "to", end < s->n ? s->start[end]->name : NULL);
        fp_jsonw_int(w, "stages", (int)(end - i));
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

/* "recompute": the plan at the budget (its checkpoints: the tensors its segments start from; its
 * recomputed segments), Chen's baseline, the curve. */
static void recompute_json(fp_jsonw *w, const fp_training *t)
{
    if (!t->planned) {
        fp_jsonw_null(w, "recompute");
        return;
    }
    fp_jsonw_begin_object(w, "recompute");
    fp_jsonw_uint(w, "budget_bytes", t->budget);
    fp_jsonw_int(w, "stages", t->stages.n);
    plan_members(w, &t->plan);
    fp_jsonw_bool(w, "exact", t->plan.exact);
    fp_jsonw_uint(w, "lower_bound_flops", t->plan.lower_flops);
    fp_jsonw_num(w, "gap", t->plan.flops ? (double)(t->plan.flops - t->plan.lower_flops) / (double)t->plan.flops : 0);
    fp_jsonw_begin_array(w, "checkpoints");
    for (uint32_t i = 0; i < t->stages.n; i++)
        if (t->plan.mode[i] == FP_RC_START && t->stages.start[i])
            fp_jsonw_name(w, NULL, t->stages.start[i]->name);
    fp_jsonw_end_array(w);
    segments_json(w, &t->stages, &t->plan);
    fp_jsonw_begin_object(w, "baseline");
    plan_members(w, &t->chen);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_array(w, "curve");
    for (int i = 0; i < FP_TRAINING_CURVE; i++) {
        const fp_training_point *pt = &t->curve[i];
        fp_jsonw_begin_object(w, NULL);
        if (pt->share > 0)
            fp_jsonw_num(w, "share", pt->share);
        else
            fp_jsonw_null(w, "share");
        fp_jsonw_uint(w, "budget_bytes", pt->budget);
        fp_jsonw_bool(w, "feasible", pt->feasible);
        fp_jsonw_uint(w, "recompute_flops", pt->flops);
        fp_jsonw_num(w, "recompute_time_s", pt->time_s);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

/* "decoder": the sequence a decoder trains at, or null for another model. */
static void decoder_json(fp_jsonw *w, const fp_training *t)
{
    if (!t->sequence) {
        fp_jsonw_null(w, "decoder");
        return;
    }
    fp_jsonw_begin_object(w, "decoder");
    fp_jsonw_int_or_null(w, "sequence", t->sequence);
    fp_jsonw_int_or_null(w, "past", t->past);
    fp_jsonw_int(w, "present_outputs_dropped", t->dropped_outputs);
    fp_jsonw_name(w, "loss_logits", t->train.loss_logits ? t->train.loss_logits->name : NULL);
    fp_jsonw_end_object(w);
}

void fp_report_train_json(const fp_train_report *r, fp_jsonw *w)
{
    const fp_training *t = r->t;
    const fp_train_step *st = &t->step;
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", 1);
    fp_jsonw_name(w, "model", r->model_path);
    fp_jsonw_name(w, "device", t->device->name);
    fp_jsonw_begin_object(w, "training");
    fp_jsonw_int(w, "batch", t->batch);
    fp_jsonw_str(w, "optimizer", fp_train_optimizer_name(r->optimizer));
    fp_jsonw_str(w, "precision", fp_train_precision_name(r->precision));
    fp_jsonw_str(w, "autograd", fp_train_autograd_name(r->autograd));
    fp_jsonw_uint(w, "parameters", t->saved.parameters);
    fp_jsonw_uint(w, "parameter_bytes", st->parameter_bytes);
    fp_jsonw_uint(w, "gradient_bytes", st->gradient_bytes);
    fp_jsonw_uint(w, "optimizer_bytes", st->optimizer_bytes);
    fp_jsonw_uint(w, "amp_cache_bytes", st->amp_cache_bytes);
    fp_jsonw_uint(w, "buffer_bytes", t->saved.buffer_bytes);
    fp_jsonw_uint(w, "saved_activation_bytes", st->saved_bytes);
    fp_jsonw_uint(w, "forward_peak_bytes", st->forward_peak);
    fp_jsonw_uint(w, "backward_peak_bytes", st->backward_peak);
    fp_jsonw_uint(w, "peak_bytes", st->peak_bytes);
    fp_jsonw_str(w, "peak_phase", st->peak_phase);
    fp_jsonw_name(w, "peak_node", st->peak_node ? st->peak_node->name : NULL);
    fp_jsonw_uint(w, "forward_flops", st->forward_flops);
    fp_jsonw_uint(w, "backward_flops", st->backward_flops);
    fp_jsonw_int(w, "unknown_sizes", t->saved.unknown);
    fp_jsonw_bound(w, t->a->batch_note, t->a->res.unknown_values);
    decoder_json(w, t);
    if (t->backward_ops) {
        fp_jsonw_begin_object(w, "graph");
        fp_jsonw_int(w, "backward_ops", t->backward_ops);
        fp_jsonw_int(w, "optimizer_ops", t->optimizer_ops);
        fp_jsonw_uint(w, "variable_bytes", t->variable_bytes);
        fp_jsonw_uint(w, "activation_bytes", t->graph_arena);
        fp_jsonw_uint(w, "peak_bytes", t->variable_bytes + t->graph_arena);
        fp_jsonw_end_object(w);
    } else {
        fp_jsonw_null(w, "graph");
    }
    saved_json(w, &t->saved);
    fp_jsonw_end_object(w);
    recompute_json(w, t);
    if (t->searched) {
        fp_jsonw_begin_object(w, "headroom");
        fp_jsonw_int(w, "max_batch", t->max_batch);
        fp_jsonw_uint(w, "usable_bytes", t->usable_bytes);
        fp_jsonw_num(w, "reserve", r->reserve);
        fp_jsonw_int(w, "max_batch_most_recompute", t->max_batch_recompute);
        fp_jsonw_int_or_null(w, "max_batch_with_plan", t->planned ? t->max_batch_planned : -1);
        fp_jsonw_int(w, "batches_analyzed", t->headroom_batches);
        fp_jsonw_end_object(w);
    } else {
        fp_jsonw_null(w, "headroom");
    }
    fp_jsonw_end_object(w);
}
