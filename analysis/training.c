/* training.c - a training step analyzed (training.h). The headroom search evaluates whole steps:
 * batches 1 and 2 give a line, its crossing with the usable memory is checked and the bracket
 * around it narrowed by bisection, as memory need not be linear in the batch. */
#include "analysis/training.h"

#include "devices/device.h"

#define MAX_BATCH ((int64_t)1 << 24)

/* The autograd options on device d: an accelerator's dropout keeps a 1-byte mask, a CPU's a noise
 * tensor. */
static fp_train_opts train_opts(const fp_training_opts *o, const fp_device *d)
{
    return (fp_train_opts){.precision = o->precision, .gpu = !g_str_has_prefix(d->target, "ort-cpu")};
}

/* The step's peak at batch b (0 when it cannot be analyzed there). */
static uint64_t peak_at(const char *path, const fp_training_opts *o, int64_t b)
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
    fp_train_saved_clear(&s);
    return st.peak_bytes;
}

/* The largest batch in [1, MAX_BATCH] whose peak is at most `usable`, 0 when none. */
static int64_t search(const char *path, const fp_training_opts *o, uint64_t usable)
{
    uint64_t p1 = peak_at(path, o, 1), p2 = p1 ? peak_at(path, o, 2) : 0;
    if (!p1 || p1 > usable)
        return 0;
    int64_t lo = 1, hi = MAX_BATCH + 1;
    if (p2 > p1) { /* the line's guess, then a bracket around it */
        int64_t guess = 1 + (int64_t)((usable - p1) / (p2 - p1));
        guess = CLAMP(guess, 1, MAX_BATCH);
        uint64_t pg = peak_at(path, o, guess);
        if (pg && pg <= usable) {
            lo = guess;
            int64_t step = MAX(1, guess / 64);
            while (lo + step <= MAX_BATCH && (pg = peak_at(path, o, lo + step)) && pg <= usable)
                lo += step, step *= 2;
            hi = MIN(lo + step, MAX_BATCH + 1);
        } else {
            hi = guess;
        }
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        uint64_t pm = peak_at(path, o, mid);
        if (pm && pm <= usable)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Whether some input has a batch to vary: a symbolic first dim (or the named one). */
static bool has_batch(const fp_model *m, const char *batch_dim)
{
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t d = 0; d < v->decl_shape.rank; d++)
            if (v->decl_shape.dims[d].sym && (batch_dim ? g_strcmp0(v->decl_shape.dims[d].sym, batch_dim) == 0 : d == 0))
                return true;
    }
    return false;
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
    fp_train_step_run(a->original, &t->saved, o->optimizer, &t->step);
    t->usable_bytes = (uint64_t)((double)a->device->memory_bytes * (1.0 - o->reserve));
    if (!o->headroom)
        return t;
    if (o->inputs)
        t->headroom_note = "not searched: --input fixes the shapes (use --batch or --dim)";
    else if (!has_batch(a->model, o->batch_dim))
        t->headroom_note = "not searched: the model has no symbolic batch dimension (name one with --batch-dim)";
    else
        t->searched = true, t->max_batch = search(path, o, t->usable_bytes);
    return t;
}

void fp_training_free(fp_training *t)
{
    if (!t)
        return;
    fp_train_saved_clear(&t->saved);
    fp_analysis_free(t->a);
    g_free(t);
}
