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
    return (fp_train_opts){.precision = o->precision, .gpu = !g_str_has_prefix(d->target, "ort-cpu")};
}

/* The budget in bytes of a plan for saved activations of `saved` bytes. */
static uint64_t budget_for(const fp_training_opts *o, uint64_t saved)
{
    return o->budget_bytes ? o->budget_bytes : (uint64_t)((double)saved * o->budget_share);
}

/* The step's peak with the saved part replaced by the best plan's at the budget: UINT64_MAX when
 * no plan fits. */
static uint64_t planned_peak(const fp_model *m, const fp_train_saved *s, const fp_train_step *st,
                             const fp_training_opts *o, const void *cost)
{
    fp_rc_stages stages;
    fp_rc_plan plan;
    fp_rc_stages_make(m, s, cost, &stages);
    fp_rc_plan_best(&stages, budget_for(o, s->saved_bytes), &plan);
    uint64_t peak = plan.feasible ? st->peak_bytes - MIN(st->peak_bytes, st->saved_bytes) + plan.peak_bytes
                                  : UINT64_MAX;
    fp_rc_plan_clear(&plan);
    fp_rc_stages_clear(&stages);
    return peak;
}

/* The step's peak with a's model inferred at batch b (0 when it cannot be analyzed there); with_plan:
 * planned_peak's. */
static uint64_t peak_at(fp_analysis *a, const fp_training_opts *o, int64_t b, bool with_plan)
{
    if (!fp_analysis_rebatch(a, b, NULL))
        return 0;
    fp_train_opts to = train_opts(o, a->device);
    fp_train_saved s;
    fp_train_step st;
    fp_train_saved_run(a->model, &to, &s);
    fp_train_step_run(a->model, &s, o->optimizer, &st);
    uint64_t peak = with_plan ? planned_peak(a->model, &s, &st, o, a->res.cost) : st.peak_bytes;
    fp_train_saved_clear(&s);
    return peak;
}

/* The largest batch in [1, limit] whose peak is at most `usable`, 0 when none; a's model is
 * inferred at some batch of the search afterwards. */
static int64_t search(fp_analysis *a, const fp_training_opts *o, uint64_t usable, int64_t limit, bool plan)
{
    uint64_t p1 = peak_at(a, o, 1, plan), p2 = p1 ? peak_at(a, o, 2, plan) : 0;
    if (!p1 || p1 > usable)
        return 0;
    int64_t lo = 1, hi = limit + 1;
    if (p2 > p1) { /* the line's guess, then a bracket around it */
        int64_t guess = 1 + (int64_t)((usable - p1) / (p2 - p1));
        guess = CLAMP(guess, 1, limit);
        uint64_t pg = peak_at(a, o, guess, plan);
        if (pg && pg <= usable) {
            lo = guess;
            int64_t step = MAX(1, guess / 64);
            while (lo + step <= limit && (pg = peak_at(a, o, lo + step, plan)) && pg <= usable)
                lo += step, step *= 2;
            hi = MIN(lo + step, limit + 1);
        } else {
            hi = guess;
        }
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t pm = peak_at(a, o, mid, plan);
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

/* The training headroom, with and without the plan; a's model inferred at the batch asked after. */
static void search_headroom(fp_training *t, const fp_training_opts *o)
{
    const char *why = fp_analysis_batch_refusal(t->a);
    if (why) {
        t->headroom_note = g_strdup_printf("not searched: %s", why);
        return;
    }
    int64_t limit = o->headroom.max_batch ? o->headroom.max_batch : FP_HEADROOM_MAX_BATCH;
    t->searched = true;
    t->max_batch = search(t->a, o, t->usable_bytes, limit, false);
    if (t->planned)
        t->max_batch_planned = search(t->a, o, t->usable_bytes, limit, true);
    bool back = fp_analysis_rebatch(t->a, t->a->batch, NULL);
    g_assert(back); /* it ran at this batch before */
}

fp_training *fp_training_run(const char *path, const fp_training_opts *o, GError **error)
{
    fp_analysis_opts ao = o->analysis;
    ao.stop = FP_PIPELINE_SHAPES;
    ao.cost = true;
    ao.headroom = (fp_analysis_headroom){0};
    fp_analysis *a = fp_analysis_run(path, &ao, error);
    if (!a)
        return NULL;
    fp_training *t = g_new0(fp_training, 1);
    t->a = a;
    t->device = a->device;
    t->batch = a->batch;
    const fp_value *x = a->model->main->inputs->len ? a->model->main->inputs->pdata[0] : NULL;
    if (!t->batch && x && x->shape.rank > 0 && fp_dim_known(x->shape.dims[0])) /* a static export's */
        t->batch = x->shape.dims[0].value;
    fp_train_opts to = train_opts(o, a->device);
    fp_train_saved_run(a->model, &to, &t->saved);
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
