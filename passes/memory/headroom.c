/* headroom.c - batch-size headroom: the largest batch whose weights + planned activations +
 * reserve fit in device memory, by re-running shape inference and planning per batch. Memory is
 * not linear in the batch (shape-dependent ops, alignment, plans), so each batch is planned; when
 * it is close to linear (most graphs), batches 1 and 2 give the answer and two more plans confirm
 * it. No batch is planned twice in a row: batch 1 may come from the caller's plan, and the answer's
 * figures are those of its plan in the search. Only arenas are planned (fp_memory_arena), on one
 * liveness resized from batch to batch, trying the last winning planner candidate first. The model
 * is inferred with the caller's options again at the end. */
#include "headroom.h"

#include <string.h>

#include "passes/shape/shapes.h"

G_DEFINE_QUARK(fp-headroom-error-quark, fp_headroom_error);

typedef struct eval {
    uint64_t total, arena, weights, outside;
    uint32_t unknown;
    bool fits;
    char example[160]; /* an --input example for the error on unknown sizes */
} eval;

typedef struct {
    fp_model *m;
    const fp_headroom_opts *o;
    fp_headroom_result *res;
    uint32_t unknown_at_1;
    fp_memory_opts mem; /* o->mem, with `reuse` */
    bool checked;       /* a shapes run of the search succeeded: the attributes are checked (nothing
                        the search runs changes them) */
    bool inferred;      /* the search ran shape inference (m may no longer be as the caller left it) */
    int64_t last_b;     /* the batch m is inferred at: of the last shapes run, which succeeded, or 1 with
                        the caller's plan at batch 1; 0 when unknown */
} search;

/* weights + delta, saturating at 0 and UINT64_MAX. */
static uint64_t with_delta(uint64_t weights, int64_t delta)
{
    if (delta < 0)
        return weights > (uint64_t)-delta ? weights - (uint64_t)-delta : 0;
    uint64_t sum;
    return g_uint64_checked_add(&sum, weights, (uint64_t)delta) ? sum : UINT64_MAX;
}

/* The figures of a plan (of the batch the model is inferred at) into e: the weights with the
 * caller's delta, the bytes outside the arena at this batch. */
static void summarize(search *s, uint64_t arena, uint64_t weights, uint32_t unknown, eval *e)
{
    memset(e, 0, sizeof *e);
    e->arena = arena;
    e->weights = with_delta(weights, s->o->weight_delta);
    e->unknown = unknown;
    e->outside = s->o->outside_bytes ? s->o->outside_bytes(s->o->outside_data) : 0;
    if (!g_uint64_checked_add(&e->total, e->weights, arena) || !g_uint64_checked_add(&e->total, e->total, e->outside))
        e->total = UINT64_MAX;
    e->fits = e->total <= s->res->usable && e->unknown <= s->unknown_at_1;
    if (e->unknown && s->m->main->inputs->len) {
        const fp_value *v = g_ptr_array_index(s->m->main->inputs, 0);
        fp_shape shape = v->decl_shape;
        fp_dim dims[FP_MAX_RANK];
        if (shape.rank > 0) { /* the batch stays free: '?' */
            memcpy(dims, shape.dims, sizeof(fp_dim) * (size_t)shape.rank);
            for (int32_t k = 0; k < shape.rank; k++)
                if (s->o->batch_dim ? g_strcmp0(dims[k].sym, s->o->batch_dim) == 0 : k == 0)
                    dims[k] = (fp_dim){-1, NULL};
            shape.dims = dims;
        }
        g_autofree char *d = fp_shape_to_string(&shape);
        g_snprintf(e->example, sizeof e->example, "%s:%s", v->name, d);
    }
}

/* Plans batch B; a 64-bit overflow of sizes is "does not fit", other failures are errors. */
static bool evaluate(search *s, int64_t B, fp_diag *diag, eval *e, GError **error)
{
    fp_shape_opts so = {.input_shapes = s->o->input_shapes,
                        .batch = B,
                        .batch_dim = s->o->batch_dim,
                        .dims = s->o->shapes.dims,
                        .n_dims = s->o->shapes.n_dims,
                        .attrs_checked = s->checked};
    s->last_b = 0;
    s->inferred = true;
    if (!fp_pass_shapes(s->m, &so, diag, error))
        return false;
    s->checked = true;
    s->last_b = B;
    s->res->evaluations++;
    g_autoptr(GError) err = NULL;
    fp_memory_arena_result r;
    if (!fp_memory_arena(s->m->main, &s->mem, &r, diag, &err)) {
        if (!g_error_matches(err, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW)) {
            g_propagate_error(error, g_steal_pointer(&err));
            return false;
        }
        memset(e, 0, sizeof *e);
        e->total = e->arena = UINT64_MAX;
        return true;
    }
    summarize(s, r.arena, r.weight_bytes, r.n_unknown, e);
    return true;
}

bool fp_headroom_has_batch(const fp_model *m, const char *batch_dim, bool declared)
{
    const fp_graph *g = m->main;
    for (guint i = 0; i < g->inputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->inputs, i);
        const fp_shape *sh = declared ? &v->decl_shape : &v->shape;
        if (sh->rank < 1)
            continue;
        if (!batch_dim && (sh->dims[0].sym || sh->dims[0].value < 0))
            return true;
        for (int32_t k = 0; batch_dim && k < sh->rank; k++)
            if (g_strcmp0(sh->dims[k].sym, batch_dim) == 0)
                return true;
    }
    return false;
}

/* One line listing the main graph's input shapes (declared or inferred), for the error. */
static char *input_shapes(const fp_model *m, bool declared)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < m->main->inputs->len && i < 4; i++) {
        const fp_value *v = g_ptr_array_index(m->main->inputs, i);
        g_autofree char *d = fp_shape_to_string(declared ? &v->decl_shape : &v->shape);
        g_string_append_printf(s, "%s%s %s", i ? ", " : "", v->name, d);
    }
    if (m->main->inputs->len > 4)
        g_string_append(s, ", ...");
    return g_string_free(s, FALSE);
}

/* Where the line through (b0, t0) and (b1, t1), b0 < b1, reaches the usable bytes: the last batch
 * that fits if memory grows linearly; 0 when the line does not rise or already is above. */
static int64_t line_estimate(const search *s, int64_t b0, uint64_t t0, int64_t b1, uint64_t t1)
{
    uint64_t usable = s->res->usable;
    if (b1 <= b0 || t1 <= t0 || t1 == UINT64_MAX || t0 > usable)
        return 0;
    double est = (double)b0 + (double)(usable - t0) * (double)(b1 - b0) / (double)(t1 - t0);
    return est >= (double)FP_HEADROOM_MAX_BATCH * 4 ? FP_HEADROOM_MAX_BATCH * 4 : (int64_t)est;
}

/* Finds hi > lo that does not fit (or the limit fits: *at_limit), lo fitting: from batch 1 and 2,
 * jumps to one past where the line through the last two fitting batches reaches the usable memory
 * (memory is close to linear in the batch, so this usually brackets at once), doubling when the
 * growth is not measurable. */
static bool bracket(search *s, int64_t limit, int64_t *lo, eval *lo_e, int64_t *hi, eval *hi_e, bool *at_limit,
                    GError **error)
{
    int64_t prev = 0;
    uint64_t t_prev = 0;
    for (int64_t b = MIN(2, limit);;) {
        if (b <= *lo) { /* lo == limit */
            *at_limit = true;
            return true;
        }
        eval e;
        if (!evaluate(s, b, NULL, &e, error))
            return false;
        if (!e.fits) {
            *hi = b;
            *hi_e = e;
            return true;
        }
        prev = *lo;
        t_prev = lo_e->total;
        *lo = b;
        *lo_e = e;
        int64_t next = *lo > limit / 2 ? limit : 2 * *lo, est = line_estimate(s, prev, t_prev, *lo, lo_e->total);
        if (est >= *lo)
            next = est >= limit ? limit : est + 1;
        b = next;
    }
}

/* Shrinks [lo, hi] to hi == lo + 1 (lo fits, hi does not). Rounds alternate: interpolation between
 * the two sizes, then the neighbour on the other side of the guess (a linear model ends there);
 * bisection. At most about three times the evaluations of plain bisection, usually two. */
static bool narrow(search *s, int64_t *lo, eval *lo_e, int64_t *hi, eval *hi_e, GError **error)
{
    for (unsigned round = 0; *hi - *lo > 1; round++) {
        int64_t guess = *lo + (*hi - *lo) / 2;
        if (round % 2 == 0) {
            int64_t est = line_estimate(s, *lo, lo_e->total, *hi, hi_e->total);
            if (est > *lo)
                guess = MIN(est, *hi - 1);
        }
        eval e;
        if (!evaluate(s, guess, NULL, &e, error))
            return false;
        if (e.fits) {
            *lo = guess;
            *lo_e = e;
        } else {
            *hi = guess;
            *hi_e = e;
        }
        if (round % 2 || *hi - *lo <= 1)
            continue;
        int64_t probe = e.fits ? guess + 1 : guess - 1; /* the other side of the guess */
        if (probe <= *lo || probe >= *hi)
            continue;
        if (!evaluate(s, probe, NULL, &e, error))
            return false;
        if (e.fits) {
            *lo = probe;
            *lo_e = e;
        } else {
            *hi = probe;
            *hi_e = e;
        }
    }
    return true;
}

/* The error of a model without a batch to vary. */
static void no_batch_error(const fp_model *m, const fp_headroom_opts *opts, GError **error)
{
    g_autofree char *shapes = input_shapes(m, !opts->input_shapes);
    if (opts->batch_dim)
        g_set_error(error, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH,
                    "no input has a dimension named '%s' (inputs: %s): give the batch symbol with --batch-dim NAME",
                    opts->batch_dim, shapes);
    else
        g_set_error(error, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH,
                    "no symbolic batch: the first dimension of every input is fixed (inputs: %s); name the "
                    "batch symbol with --batch-dim NAME, or free a dimension with --input NAME:?x...",
                    shapes);
}

/* Batch 1's figures into e: the caller's plan when it has one for these shapes, else planned; an
 * activation of unknown size there is an error. */
static bool plan_batch_1(search *s, eval *e, GError **error)
{
    const fp_headroom_opts *o = s->o;
    if (o->plan_at_1 && !o->input_shapes) {
        summarize(s, o->plan_at_1->arena, o->plan_at_1->weight_bytes, o->plan_at_1->n_unknown, e);
        s->last_b = 1;
    } else if (!evaluate(s, 1, NULL, e, error))
        return false;
    s->unknown_at_1 = e->unknown;
    if (e->unknown) {
        g_set_error(error, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_UNKNOWN_SIZE,
                    "%u activation value%s unknown size at batch 1, so memory has no bound: bind the other "
                    "dimensions with --input NAME:DIMS, e.g. --input %s with numbers for the named dimensions",
                    e->unknown, e->unknown == 1 ? " has" : "s have", e->example);
        return false;
    }
    return true;
}

/* The search of fp_pass_headroom, leaving m inferred wherever it ended (see restore_shapes). */
static bool find_max_batch(search *s, fp_diag *diag, GError **error)
{
    const fp_headroom_opts *opts = s->o;
    fp_headroom_result *res = s->res;
    /* the inputs as declared, or bound by input_shapes with the batch left free */
    fp_shape_opts unbound = {.input_shapes = opts->input_shapes,
                             .batch_dim = opts->batch_dim,
                             .dims = opts->shapes.dims,
                             .n_dims = opts->shapes.n_dims};
    s->inferred = opts->input_shapes != NULL;
    if (opts->input_shapes && !fp_pass_shapes(s->m, &unbound, NULL, error))
        return false;
    if (!fp_headroom_has_batch(s->m, opts->batch_dim, !opts->input_shapes)) {
        no_batch_error(s->m, opts, error);
        return false;
    }
    int64_t limit = opts->max_batch > 0 ? opts->max_batch : FP_HEADROOM_MAX_BATCH;
    eval lo_e, hi_e = {0};
    if (!plan_batch_1(s, &lo_e, error))
        return false;
    int64_t lo = 1, hi = 0;
    bool at_limit = false;
    if (!lo_e.fits) {
        lo = 0;
        hi = 1;
        hi_e = lo_e;
    } else if (!bracket(s, limit, &lo, &lo_e, &hi, &hi_e, &at_limit, error) ||
               (!at_limit && !narrow(s, &lo, &lo_e, &hi, &hi_e, error))) {
        return false;
    }
    res->at_limit = at_limit;
    res->max_batch = lo;
    res->bytes_above = at_limit ? 0 : hi_e.total;
    /* the figures at the answer (batch 1 when nothing fits), planned again for its findings */
    eval e = lo ? lo_e : hi_e;
    if (diag && !evaluate(s, MAX(lo, 1), diag, &e, error))
        return false;
    res->bytes_at_max = e.total;
    res->arena_at_max = e.arena;
    res->outside_at_max = e.outside;
    res->weight_bytes = e.weights;
    return true;
}

static bool same_table(GHashTable *a, GHashTable *b)
{
    return a == b || ((!a || g_hash_table_size(a) == 0) && (!b || g_hash_table_size(b) == 0));
}

/* m inferred with the caller's shape options again, unless the search did not infer it or its last
 * run used the same options (the batch, its dimension, the input shapes; the caller gave no input
 * values). False with the error of the shape pass. */
static bool restore_shapes(const search *s, GError **error)
{
    const fp_shape_opts *c = &s->o->shapes;
    bool same = s->last_b > 0 && c->batch == s->last_b && g_strcmp0(c->batch_dim, s->o->batch_dim) == 0 &&
                same_table(c->input_shapes, s->o->input_shapes) && same_table(c->input_values, NULL);
    if (!s->inferred || same)
        return true;
    fp_shape_opts so = *c;
    so.attrs_checked |= s->checked;
    return fp_pass_shapes(s->m, &so, NULL, error);
}

bool fp_pass_headroom(fp_model *m, const fp_headroom_opts *opts, fp_headroom_result *res, fp_diag *diag, GError **error)
{
    memset(res, 0, sizeof *res);
    res->usable = opts->capacity > opts->reserve ? opts->capacity - opts->reserve : 0;
    res->batch_desc = opts->batch_dim ? opts->batch_dim : "first dimension of the inputs";
    g_autoptr(fp_memory_reuse)
        own = opts->mem.reuse ? NULL : fp_memory_reuse_new(opts->plan_at_1 ? opts->plan_at_1->method : NULL);
    search s = {.m = m, .o = opts, .res = res, .mem = opts->mem};
    s.mem.reuse = opts->mem.reuse ? opts->mem.reuse : own;
    bool ok = find_max_batch(&s, diag, error);
    g_autoptr(GError) err = NULL; /* a failed search keeps its own error */
    return restore_shapes(&s, ok ? error : &err) && ok;
}
