/* analysis.c - one analysis of one model (analysis.h): profiles, bindings, the pipeline, the
 * headroom, in this order, into one result. */
#include "analysis/analysis.h"

#include <string.h>

#include "analysis/bind.h"
#include "analysis/declared.h"
#include "frontends/load.h"
#include "passes/metrics.h"

struct fp_analysis_owned {
    fp_device *device;      /* when loaded here */
    fp_target *target;      /* likewise */
    fp_memory_reuse *reuse; /* the final plan's liveness, resized by the headroom search */
    fp_memory_opts mem;     /* how the pipeline planned the final graph */
    fp_shape_opts shapes;   /* how the pipeline inferred the model (its input_shapes and batch_dim
                               owned here) */
    GHashTable *outside;    /* the KV cache's tensors, planned outside the arena */
    fp_storage *storage;    /* the converted weights and the KV tensors at the what-ifs */
    fp_kv_sizing sizing;    /* the cache at the what-ifs, for the headroom search */
    fp_dtype float_as;      /* float32 activations planned at this dtype (precision_mode) */
    fp_dim_binding *dims;   /* opts.dims parsed */
    size_t n_dims;
    fp_headroom_result headroom;
};

/* The device and the target: the caller's, else loaded by name or path. */
static bool load_profiles(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    fp_analysis_owned *w = a->owned;
    a->device = o->device_profile;
    if (!a->device && !(a->device = w->device = fp_device_load(o->device ? o->device : "cpu-avx2", error)))
        return false;
    a->target = o->target_rules;
    if (!a->target && !(a->target = w->target = fp_target_load(o->target ? o->target : a->device->target, error)))
        return false;
    return true;
}

/* The precision mode asked or the target's; with force_fp16, float32 computes in float16 (the
 * cost's dtype what-if), and weights, activations and the KV cache are stored so, unless an option
 * says otherwise. False with an error for a mode not modelled or a target without the option. */
static bool apply_precision_mode(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    const char *mode = o->precision_mode ? o->precision_mode : a->target->precision_mode;
    if (o->precision_mode && !a->target->precision_mode) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--precision-mode: target %s has no precision mode (it is ATC's option: an Ascend target)",
                    a->target->name);
        return false;
    }
    if (mode && !fp_target_precision_mode_ok(mode)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--precision-mode %s: expected force_fp16 or must_keep_origin_dtype", mode);
        return false;
    }
    a->precision_mode = mode ? (strcmp(mode, "force_fp16") == 0 ? "force_fp16" : "must_keep_origin_dtype") : NULL;
    if (!a->precision_mode || strcmp(a->precision_mode, "force_fp16") != 0)
        return true;
    if (a->what_if == FP_DT_UNDEFINED)
        a->what_if = FP_DT_FLOAT16;
    if (a->precision.weight == FP_DT_UNDEFINED)
        a->precision.weight = FP_DT_FLOAT16;
    if (a->precision.kv == FP_DT_UNDEFINED && a->kv && a->kv->dtype == FP_DT_FLOAT)
        a->precision.kv = FP_DT_FLOAT16;
    a->owned->float_as = FP_DT_FLOAT16;
    return true;
}

/* The input shapes of m and its batch: the inputs and batch given, else the caller's binder (its
 * note in *inputs_note), else a symbolic batch bound to 1 when symbolic dims that no --dim binds
 * are left (said in *batch_note). NULL with the error of a bad spec or of the binder. */
static GHashTable *bind_inputs(fp_model *m, const fp_analysis_opts *o, const fp_analysis_owned *w, int64_t *batch,
                               char **batch_note, char **inputs_note, GError **error)
{
    *batch = o->batch;
    if (!o->inputs && !o->batch && !w->n_dims && o->bind)
        return o->bind(m, o->bind_data, batch, inputs_note, error);
    GHashTable *shapes = fp_bind_input_shapes(m, o->inputs, error);
    g_autofree char *syms = shapes && !o->inputs && !o->batch ? fp_bind_symbolic_dims(m, w->dims, w->n_dims) : NULL;
    if (syms) {
        *batch = 1;
        *batch_note = g_strdup_printf("symbolic input dims: %s; batch (first dim of each input) bound to 1 "
                                      "(--batch N or --input NAME:DIMS to change)", syms);
    }
    return shapes;
}

/* The pipeline on a->model, its inputs bound. */
static bool run_pipeline(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    GHashTable *shapes = bind_inputs(a->model, o, a->owned, &a->batch, &a->batch_note, &a->inputs_note, error);
    if (!shapes)
        return false;
    a->owned->shapes = (fp_shape_opts){.input_shapes = shapes, .batch = a->batch, .batch_dim = g_strdup(o->batch_dim),
                                       .dims = a->owned->dims, .n_dims = a->owned->n_dims};
    if (a->target->fold_declared)
        fp_declared_mark_runtime(a->model);
    a->owned->reuse = fp_memory_reuse_new(NULL);
    a->owned->mem = (fp_memory_opts){.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN,
                                     .align = a->device->align_bytes, .outside = a->owned->outside,
                                     .float_as = a->owned->float_as, .reuse = a->owned->reuse};
    fp_pipeline_opts po = {
        .shapes = a->owned->shapes,
        .target = a->target,
        .device = a->device,
        .memory = a->owned->mem,
        .what_if = a->what_if,
        .storage = a->owned->storage,
        .dump_after = o->dump_after,
        .dump_out = o->dump_out ? o->dump_out : stderr,
    };
    if (!fp_pipeline_run(a->model, &po, &a->res, a->diag, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    return true;
}

/* What m stores otherwise under the what-ifs p: the converted weights (their figures into *w, when
 * not NULL) and kv's tensors at p->kv. */
static fp_storage *storage_of(const fp_model *m, const fp_kv_cache *kv, const fp_precision *p, fp_weight_plan *w)
{
    fp_storage *s = fp_storage_new();
    fp_weight_plan own;
    fp_precision_weights(m, p, w ? w : &own, s);
    for (uint32_t i = 0; kv && p->kv != FP_DT_UNDEFINED && i < kv->n_tensors; i++) {
        fp_storage_set_dtype(s, kv->tensors[i].past, p->kv);
        if (kv->tensors[i].present)
            fp_storage_set_dtype(s, kv->tensors[i].present, p->kv);
    }
    return s;
}

/* The model before fusion: read again, bound the same way, shapes and metrics, and its cost. */
static bool load_original(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    if (!(a->original = fp_load_model(a->path, error)))
        return false;
    int64_t batch = 0;
    g_autofree char *batch_note = NULL, *inputs_note = NULL;
    g_autoptr(GHashTable) shapes = bind_inputs(a->original, o, a->owned, &batch, &batch_note, &inputs_note, error);
    if (!shapes)
        return false;
    if (a->target->fold_declared)
        fp_declared_mark_runtime(a->original);
    fp_shape_opts so = {.input_shapes = shapes, .batch = batch, .batch_dim = o->batch_dim, .dims = a->owned->dims,
                        .n_dims = a->owned->n_dims};
    if (!fp_pass_shapes(a->original, &so, NULL, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    fp_pass_metrics(a->original, NULL);
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(a->original);
    g_autoptr(fp_storage) st = storage_of(a->original, kv, &a->precision, NULL);
    fp_pass_storage(a->original, st);
    a->original_cost = fp_pass_cost(a->original, a->device, a->what_if, NULL);
    return true;
}

/* The weight what-if on the stages and the final figure; the KV cache at the analysed point. */
static void apply_precision(fp_analysis *a)
{
    for (size_t i = 0; i < G_N_ELEMENTS(a->res.stages); i++)
        a->res.stages[i].weight_bytes = fp_weight_plan_apply(&a->weights, a->res.stages[i].weight_bytes);
    a->weight_bytes = a->res.stages[G_N_ELEMENTS(a->res.stages) - 1].weight_bytes;
    if (!a->kv)
        return;
    uint64_t held = fp_kv_cache_held(a->kv, a->precision.kv, a->precision.kv_block);
    uint64_t past = fp_kv_cache_past(a->kv, a->precision.kv);
    a->kv_bytes = held == UINT64_MAX ? 0 : held;
    a->kv_past_bytes = past == UINT64_MAX ? 0 : past;
}

/* The batch headroom on the final graph, last: batch 1 is the pipeline's own plan when it ran at
 * batch 1. Not with input specs, whose shapes fix the batch. */
static void headroom(fp_analysis *a, const fp_analysis_opts *o)
{
    if (o->inputs) {
        a->headroom_note = "not computed with --input (bind the batch with --batch, or run fuseplan headroom)";
        return;
    }
    for (size_t i = 0; i < a->owned->n_dims; i++)
        if (fp_bind_is_batch(a->model, o->batch_dim, a->owned->dims[i].name)) {
            a->headroom_note = "not computed: --dim binds the batch dimension (bind it with --batch instead)";
            return;
        }
    fp_headroom_opts ho = {.capacity = a->device->memory_bytes, .reserve = a->device->memory_bytes / 10,
                           .batch_dim = o->batch_dim, .mem = a->owned->mem, .shapes = a->owned->shapes,
                           .plan_at_1 = a->batch == 1 ? a->res.memory : NULL,
                           .weight_delta = fp_weight_plan_delta(&a->weights),
                           .outside_bytes = a->kv ? fp_kv_sizing_held : NULL, .outside_data = &a->owned->sizing};
    g_autoptr(GError) err = NULL;
    if (fp_pass_headroom(a->model, &ho, &a->owned->headroom, NULL, &err)) {
        a->headroom = &a->owned->headroom;
        return;
    }
    a->headroom_note = g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH)
                           ? "not computed: the model has no symbolic batch dimension (name one with --batch-dim)"
                           : "not computed";
}

fp_analysis *fp_analysis_run(const char *path, const fp_analysis_opts *o, GError **error)
{
    g_autoptr(fp_analysis) a = g_new0(fp_analysis, 1);
    a->path = g_strdup(path);
    a->what_if = o->what_if;
    a->owned = g_new0(fp_analysis_owned, 1);
    a->diag = fp_diag_new();
    if (!fp_bind_parse_dims(o->dims, &a->owned->dims, &a->owned->n_dims, error))
        return NULL;
    if (!load_profiles(a, o, error) || !(a->model = fp_load_model(path, error)) ||
        !fp_bind_check_ops(path, a->model, o->strict, a->diag, &a->warning, error))
        return NULL;
    a->kv = fp_kv_cache_find(a->model); /* from the graph as declared, before fusion rewrites it */
    if (!fp_precision_parse(o->weight_dtype, o->group_size, o->kv_dtype, o->kv_block, &a->precision, error) ||
        !fp_precision_check(&a->precision, a->kv != NULL, path, error) || !apply_precision_mode(a, o, error))
        return NULL;
    a->owned->storage = storage_of(a->model, a->kv, &a->precision, &a->weights);
    if (a->kv)
        a->owned->outside = fp_kv_cache_outside(a->kv);
    a->owned->sizing = (fp_kv_sizing){a->kv, a->precision.kv, a->precision.kv_block};
    g_autofree char *decode_note = NULL;
    /* the caller's binder, when it will run, binds the tokens too (a profile's shapes) */
    bool bound = o->inputs || (o->bind && !o->batch && !(o->dims && *o->dims) && !o->context && !o->phase);
    if (!fp_kv_cache_bind(a->kv, a->model, &(fp_decoder_step){o->context, o->phase, o->batch_dim, bound},
                          &a->owned->dims, &a->owned->n_dims, &decode_note, error) ||
        !run_pipeline(a, o, error) ||
        (o->original && !load_original(a, o, error)))
        return NULL;
    if (decode_note) {
        a->phase = o->phase && strcmp(o->phase, "prefill") == 0 ? "prefill" : "decode";
        g_autofree char *batch_note = a->batch_note;
        a->batch_note = batch_note ? g_strdup_printf("%s; %s", batch_note, decode_note) : g_steal_pointer(&decode_note);
    }
    apply_precision(a);
    if (o->headroom)
        headroom(a, o);
    return g_steal_pointer(&a);
}

void fp_analysis_free(fp_analysis *a)
{
    if (!a)
        return;
    fp_pipeline_result_clear(&a->res);
    fp_cost_result_free(a->original_cost);
    fp_model_free(a->original);
    fp_kv_cache_free(a->kv);
    fp_model_free(a->model);
    fp_diag_free(a->diag);
    g_free(a->path);
    g_free(a->batch_note);
    g_free(a->inputs_note);
    g_free(a->warning);
    fp_memory_reuse_free(a->owned->reuse);
    if (a->owned->outside)
        g_hash_table_unref(a->owned->outside);
    fp_storage_free(a->owned->storage);
    if (a->owned->shapes.input_shapes)
        g_hash_table_unref(a->owned->shapes.input_shapes);
    g_free((char *)a->owned->shapes.batch_dim);
    fp_bind_dims_free(a->owned->dims, a->owned->n_dims);
    fp_target_free(a->owned->target);
    fp_device_free(a->owned->device);
    g_free(a->owned);
    g_free(a);
}
