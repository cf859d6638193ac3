/* training.c - a training step analyzed (training.h). The headroom search evaluates whole steps:
 * batches 1 and 2 give a line, its crossing with the usable memory is checked and the bracket
 * around it narrowed by bisection, as memory need not be linear in the batch. */
#include "analysis/training.h"

#include <string.h>

#include "devices/device.h"
#include "passes/memory/headroom.h"
#include "passes/memory/memory.h"

/* The autograd options on device d: an accelerator's dropout keeps a 1-byte mask, a CPU's a noise
 * tensor. */
static fp_train_opts train_opts(const fp_training_opts *o, const fp_device *d)
{
    return (fp_train_opts){.precision = o->precision,
                           .autograd = o->autograd,
                           .frozen = o->frozen,
                           .gpu = !g_str_has_prefix(d->target, "ort-cpu")};
}

/* The budget in bytes of a plan for saved activations of `saved` bytes. */
static uint64_t budget_for(const fp_training_opts *o, uint64_t saved)
{
    return o->budget_bytes ? o->budget_bytes : (uint64_t)((double)saved * o->budget_share);
}

/* How the headroom counts the saved activations at a batch: all of them, the plan's at the budget,
 * or the least any plan holds (the most recomputation). */
typedef enum { SAVED_ALL, SAVED_BUDGET, SAVED_LEAST, SAVED_MODES } saved_mode;

/* The step's peak with the saved part replaced by the plan's (mode SAVED_BUDGET or SAVED_LEAST):
 * UINT64_MAX when no plan fits. */
static uint64_t planned_peak(const fp_model *m, const fp_train_saved *s, const fp_train_step *st,
                             const fp_training_opts *o, const void *cost, saved_mode mode)
{
    fp_rc_stages stages;
    fp_rc_stages_make(m, s, cost, &stages);
    uint64_t held = UINT64_MAX;
    if (mode == SAVED_LEAST) {
        held = fp_rc_min_budget(&stages);
    } else {
        fp_rc_plan plan;
        fp_rc_plan_best(&stages, budget_for(o, s->saved_bytes), &plan);
        held = plan.feasible ? plan.peak_bytes : UINT64_MAX;
        fp_rc_plan_clear(&plan);
    }
    fp_rc_stages_clear(&stages);
    return held == UINT64_MAX ? UINT64_MAX : st->peak_bytes - MIN(st->peak_bytes, st->saved_bytes) + held;
}

/* The headroom searches' memo: per batch tried, its peak in each mode (0: not computed yet). */
typedef struct {
    fp_training *t;
    const fp_training_opts *o;
    int64_t at;         /* the batch t->a is inferred at now (0: the analysis's own) */
    GHashTable *peaks;  /* batch (gint64 *) -> uint64_t[SAVED_MODES] */
    uint32_t rebatches; /* analyses at another batch */
} headroom_memo;

/* The step's peak at batch b in `mode` (0 when the model cannot be analyzed there): a's model
 * inferred at b once however many searches ask, each mode computed once. */
static uint64_t peak_at(headroom_memo *h, int64_t b, saved_mode mode)
{
    uint64_t *row = g_hash_table_lookup(h->peaks, &b);
    if (row && row[mode])
        return row[mode];
    if (!row) {
        gint64 *key = g_memdup2(&b, sizeof b);
        row = g_new0(uint64_t, SAVED_MODES);
        g_hash_table_insert(h->peaks, key, row);
    }
    fp_analysis *a = h->t->a;
    if (h->at != b && !fp_analysis_rebatch(a, b, NULL))
        return 0; /* row stays 0: tried again, failing again */
    h->rebatches += h->at != b;
    h->at = b;
    fp_train_saved s;
    fp_train_step st;
    fp_train_saved_run(a->model, &h->t->train, &s);
    fp_train_step_run(a->model, &s, h->o->optimizer, &st);
    row[SAVED_ALL] = st.peak_bytes;
    if (mode != SAVED_ALL)
        row[mode] = planned_peak(a->model, &s, &st, h->o, a->res.cost, mode);
    fp_train_saved_clear(&s);
    return row[mode];
}

/* The largest batch in [1, limit] whose peak in `mode` is at most `usable`, 0 when none. */
static int64_t search(headroom_memo *h, uint64_t usable, int64_t limit, saved_mode mode)
{
    uint64_t p1 = peak_at(h, 1, mode), p2 = p1 ? peak_at(h, 2, mode) : 0;
    if (!p1 || p1 > usable)
        return 0;
    int64_t lo = 1, hi = limit + 1;
    if (p2 > p1) { /* the line's guess, then a bracket around it */
        int64_t guess = 1 + (int64_t)((usable - p1) / (p2 - p1));
        guess = CLAMP(guess, 1, limit);
        uint64_t pg = peak_at(h, guess, mode);
        if (pg && pg <= usable) {
            lo = guess;
            int64_t step = MAX(1, guess / 64);
            while (lo + step <= limit && (pg = peak_at(h, lo + step, mode)) && pg <= usable)
                lo += step, step *= 2;
            hi = MIN(lo + step, limit + 1);
        } else {
            hi = guess;
        }
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t pm = peak_at(h, mid, mode);
        if (pm && pm <= usable)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The plan at the budget, Chen's baseline and the budget curve. */
static void plan(fp_training *t, const fp_training_opts *o)
{
    t->planned = true;
    t->budget = budget_for(o, t->saved.saved_bytes);
    fp_rc_stages_make(t->a->model, &t->saved, t->a->res.cost, &t->stages);
    fp_rc_plan_best(&t->stages, t->budget, &t->plan);
    fp_rc_plan_chen(&t->stages, &t->chen);
    static const double shares[FP_TRAINING_CURVE] = {1.0, 0.75, 0.5, 0.25, 0};
    for (int i = 0; i < FP_TRAINING_CURVE; i++) {
        fp_training_point *pt = &t->curve[i];
        pt->share = shares[i];
        pt->budget = shares[i] > 0 ? (uint64_t)((double)t->saved.saved_bytes * shares[i])
                                   : fp_rc_min_budget(&t->stages);
        fp_rc_plan p;
        fp_rc_plan_best(&t->stages, pt->budget, &p);
        pt->feasible = p.feasible, pt->flops = p.flops, pt->time_s = p.time_s;
        fp_rc_plan_clear(&p);
    }
}

/* Whether GE op type t belongs to a backward pass (ReluGrad, Conv2DBackpropInput, BNTrainingUpdateGrad)
 * or an optimizer step (ApplyMomentum, ApplyAdam). */
static bool backward_type(const char *t) { return g_str_has_suffix(t, "Grad") || strstr(t, "Backprop") != NULL; }
static bool optimizer_type(const char *t) { return g_str_has_prefix(t, "Apply"); }

/* A graph that holds its backward: its own liveness planned with the Variables (the model's state)
 * apart. False for a forward graph (nothing done). */
static bool graph_training(fp_training *t)
{
    const fp_graph *g = t->a->model->main;
    g_autoptr(GHashTable) vars = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        t->backward_ops += backward_type(n->op_type);
        t->optimizer_ops += optimizer_type(n->op_type);
        if (strcmp(n->op_type, "Variable") != 0)
            continue;
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            uint64_t e = 0, b = 0;
            const fp_value *v = n->outputs[k];
            if (v && fp_shape_numel(&v->shape, &e) && fp_dtype_bytes(v->dtype, e, &b) &&
                g_hash_table_add(vars, (gpointer)v))
                t->variable_bytes += b;
        }
    }
    if (!t->backward_ops)
        return false;
    fp_memory_opts mo = {.align = t->device->align_bytes, .outside = vars};
    g_autoptr(GError) err = NULL;
    fp_memory_result *r = fp_pass_memory(g, &mo, NULL, &err);
    t->graph_arena = r ? r->arena : 0;
    fp_memory_result_free(r);
    return true;
}

/* The training headroom without recomputation, with the most of it and with the plan at the
 * budget (when planned), the three searches sharing each batch's analysis; a's model inferred at
 * the batch asked after. */
static void search_headroom(fp_training *t, const fp_training_opts *o)
{
    const char *why = fp_analysis_batch_refusal(t->a);
    if (why) {
        t->headroom_note = g_strdup_printf("not searched: %s", why);
        return;
    }
    int64_t limit = o->headroom.max_batch ? o->headroom.max_batch : FP_HEADROOM_MAX_BATCH;
    headroom_memo h = {.t = t,
                       .o = o,
                       .at = t->a->batch,
                       .peaks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free)};
    t->searched = true;
    t->max_batch = search(&h, t->usable_bytes, limit, SAVED_ALL);
    t->max_batch_recompute = search(&h, t->usable_bytes, limit, SAVED_LEAST);
    if (t->planned)
        t->max_batch_planned = search(&h, t->usable_bytes, limit, SAVED_BUDGET);
    t->headroom_batches = g_hash_table_size(h.peaks);
    g_hash_table_unref(h.peaks);
    bool back = h.at == t->a->batch || fp_analysis_rebatch(t->a, t->a->batch, NULL);
    g_assert(back); /* it ran at this batch before */
}

/* A decoder trains without its cache (use_cache=False): its present tensors are no outputs of
 * the step, removed from the main graph's outputs (the step frees them after their last reader and
 * seeds no gradient into them); its logits (the first float output left) get the cross-entropy.
 * The tokens bound are read back from the cache's first tensor. Nothing for a model without one. */
static void train_decoder(fp_training *t)
{
    const fp_kv_cache *kv = t->a->kv;
    fp_graph *g = t->a->model->main;
    for (uint32_t i = 0; kv && i < kv->n_tensors; i++) {
        const fp_value *p = kv->tensors[i].present;
        fp_value *v = p ? g->values->pdata[p->id] : NULL;
        if (v && v->is_output && g_ptr_array_remove(g->outputs, v)) {
            v->is_output = false;
            t->dropped_outputs++;
        }
    }
    for (guint i = 0; kv && i < g->outputs->len && !t->train.loss_logits; i++) {
        const fp_value *y = g->outputs->pdata[i];
        if (fp_dtype_is_float(y->dtype) && y->shape.rank == 3)
            t->train.loss_logits = y;
    }
    int64_t batch = 0, new_tokens = 0;
    if (kv && !fp_kv_cache_step(kv, &batch, &t->past, &new_tokens))
        t->past = new_tokens = -1;
    t->sequence = kv ? new_tokens : 0;
}

/* The model's batch as analyzed: the one bound, or a static export's (its first input's axis 0). */
static int64_t batch_of(const fp_analysis *a)
{
    const fp_value *x = a->model->main->inputs->len ? a->model->main->inputs->pdata[0] : NULL;
    if (!a->batch && x && x->shape.rank > 0 && fp_dim_known(x->shape.dims[0]))
        return x->shape.dims[0].value;
    return a->batch;
}

/* Whether every name o->frozen gives is an initializer of a's main graph (the model at path); else
 * false and the error. */
static bool frozen_known(const char *path, const fp_analysis *a, const fp_training_opts *o, GError **error)
{
    for (char **n = o->frozen; n && *n; n++) {
        const fp_value *v = fp_graph_find(a->model->main, *n);
        if (!v || v->kind != FP_VALUE_INITIALIZER) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: --frozen %s: no initializer of that name",
                        path, *n);
            return false;
        }
    }
    return true;
}

fp_training *fp_training_run(const char *path, const fp_training_opts *o, GError **error)
{
    fp_analysis_opts ao = o->analysis;
    ao.stop = FP_PIPELINE_SHAPES;
    ao.cost = true;
    ao.training = true;
    ao.headroom = (fp_analysis_headroom){0};
    fp_analysis *a = fp_analysis_run(path, &ao, error);
    if (!a)
        return NULL;
    if (!frozen_known(path, a, o, error)) {
        fp_analysis_free(a);
        return NULL;
    }
    fp_training *t = g_new0(fp_training, 1);
    t->a = a;
    t->device = a->device;
    t->batch = batch_of(a);
    t->train = train_opts(o, a->device);
    train_decoder(t);
    fp_train_saved_run(a->model, &t->train, &t->saved);
    if (graph_training(t)) /* its backward is there already: no autograd to simulate */
        return t;
    fp_train_step_run(a->model, &t->saved, o->optimizer, &t->step);
    t->capacity_bytes = o->headroom.capacity ? o->headroom.capacity : a->device->memory_bytes;
    t->reserve_bytes = fp_reserve_bytes(o->headroom.reserve, t->capacity_bytes);
    t->usable_bytes = t->capacity_bytes - MIN(t->reserve_bytes, t->capacity_bytes);
    if (o->budget_share > 0 || o->budget_bytes)
        plan(t, o);
    if (o->headroom.on)
        search_headroom(t, o);
    return t;
}

void fp_training_free(fp_training *t)
{
    if (!t)
        return;
    fp_train_saved_clear(&t->saved);
    fp_rc_plan_clear(&t->plan);
    fp_rc_plan_clear(&t->chen);
    fp_rc_stages_clear(&t->stages);
    fp_analysis_free(t->a);
    g_free(t->headroom_note);
    g_free(t);
}
