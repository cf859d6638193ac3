/* training.c - a training step analyzed (training.h). The headroom search evaluates whole steps:
 * batches 1 and 2 give a line, its crossing with the usable memory is checked and the bracket
 * around it narrowed by bisection, as memory need not be linear in the batch. */
#include "analysis/training.h"

#include <string.h>

#include "analysis/bind.h"
#include "devices/device.h"
#include "passes/memory/headroom.h"
#include "passes/memory/memory.h"

#define MAX_BATCH ((int64_t)1 << 24)

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
    uint64_t peak = plan.feasible ? st->peak_bytes - MIN(st->peak_bytes, st->saved_bytes) + plan.peak_bytes : UINT64_MAX;
    fp_rc_plan_clear(&plan);
    fp_rc_stages_clear(&stages);
    return peak;
}

/* The step's peak at batch b (0 when it cannot be analyzed there); with_plan: planned_peak's. */
static uint64_t peak_at(const char *path, const fp_training_opts *o, int64_t b, bool with_plan)
{
    fp_analysis_opts ao = {.device = o->device, .batch = b, .batch_dim = o->batch_dim, .dims = o->dims,
                           .original = true};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &ao, NULL);
    if (!a || !a->original)
        return 0;
    fp_train_opts to = train_opts(o, a->device);
    fp_train_saved s;
    fp_train_step st;
    fp_train_saved_run(a->original, &to, &s);
    fp_train_step_run(a->original, &s, o->optimizer, &st);
    uint64_t peak = with_plan ? planned_peak(a->original, &s, &st, o, a->original_cost) : st.peak_bytes;
    fp_train_saved_clear(&s);
    return peak;
}

/* The largest batch in [1, MAX_BATCH] whose peak is at most `usable`, 0 when none. */
static int64_t search(const char *path, const fp_training_opts *o, uint64_t usable, bool plan)
{
    uint64_t p1 = peak_at(path, o, 1, plan), p2 = p1 ? peak_at(path, o, 2, plan) : 0;
    if (!p1 || p1 > usable)
        return 0;
    int64_t lo = 1, hi = MAX_BATCH + 1;
    if (p2 > p1) { /* the line's guess, then a bracket around it */
        int64_t guess = 1 + (int64_t)((usable - p1) / (p2 - p1));
        guess = CLAMP(guess, 1, MAX_BATCH);
        uint64_t pg = peak_at(path, o, guess, plan);
        if (pg && pg <= usable) {
            lo = guess;
            int64_t step = MAX(1, guess / 64);
            while (lo + step <= MAX_BATCH && (pg = peak_at(path, o, lo + step, plan)) && pg <= usable)
                lo += step, step *= 2;
            hi = MIN(lo + step, MAX_BATCH + 1);
        } else {
            hi = guess;
        }
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t pm = peak_at(path, o, mid, plan);
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
    fp_rc_stages_make(t->a->original, &t->saved, t->a->original_cost, &t->stages);
    fp_rc_plan_best(&t->stages, t->budget, &t->plan);
    fp_rc_plan_chen(&t->stages, &t->chen);
    static const double shares[FP_TRAINING_CURVE] = {1.0, 0.75, 0.5, 0.25, 0};
    for (int i = 0; i < FP_TRAINING_CURVE; i++) {
        fp_training_point *pt = &t->curve[i];
        pt->share = shares[i];
        pt->budget = shares[i] > 0 ? (uint64_t)((double)t->saved.saved_bytes * shares[i]) : fp_rc_min_budget(&t->stages);
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
    const fp_graph *g = t->a->original->main;
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
            if (v && fp_shape_numel(&v->shape, &e) && fp_dtype_bytes(v->dtype, e, &b) && g_hash_table_add(vars, (gpointer)v))
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

/* Why the headroom cannot be searched (as the inference analysis says it), or NULL. */
static const char *headroom_refusal(const fp_analysis *a, const fp_training_opts *o)
{
    if (o->inputs)
        return "not searched: --input fixes the shapes (use --batch or --dim)";
    for (char **d = o->dims; d && *d; d++) {
        g_autofree char *name = g_strndup(*d, strcspn(*d, "="));
        if (fp_bind_is_batch(a->model, o->batch_dim, name))
            return "not searched: --dim binds the batch dimension (bind it with --batch instead)";
    }
    if (!fp_headroom_has_batch(a->model, o->batch_dim, true))
        return "not searched: the model has no symbolic batch dimension (name one with --batch-dim)";
    return NULL;
}

fp_training *fp_training_run(const char *path, const fp_training_opts *o, GError **error)
{
    fp_analysis_opts ao = {.device = o->device, .batch = o->batch, .batch_dim = o->batch_dim, .inputs = o->inputs,
                           .dims = o->dims, .original = true};
    fp_analysis *a = fp_analysis_run(path, &ao, error);
    if (!a)
        return NULL;
    fp_training *t = g_new0(fp_training, 1);
    t->a = a;
    t->device = a->device;
    t->batch = a->batch;
    const fp_value *x = a->original->main->inputs->len ? a->original->main->inputs->pdata[0] : NULL;
    if (!t->batch && x && x->shape.rank > 0 && fp_dim_known(x->shape.dims[0])) /* a static export's */
        t->batch = x->shape.dims[0].value;
    fp_train_opts to = train_opts(o, a->device);
    fp_train_saved_run(a->original, &to, &t->saved);
    if (graph_training(t)) /* its backward is there already: no autograd to simulate */
        return t;
    fp_train_step_run(a->original, &t->saved, o->optimizer, &t->step);
    t->usable_bytes = (uint64_t)((double)a->device->memory_bytes * (1.0 - o->reserve));
    if (o->budget_share > 0 || o->budget_bytes)
        plan(t, o);
    if (!o->headroom)
        return t;
    if (!(t->headroom_note = headroom_refusal(a, o)))
        t->searched = true, t->max_batch = search(path, o, t->usable_bytes, false);
    if (t->searched && t->planned)
        t->max_batch_planned = search(path, o, t->usable_bytes, true);
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
    g_free(t);
}
