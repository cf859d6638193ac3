/* analysis.c - one analysis of one model (analysis.h): profiles, the model and its bindings, the
 * what-ifs, the pipeline to its stop, the headroom, in this order, into one result. */
#include "analysis/analysis.h"

#include <string.h>

#include "analysis/bind.h"
#include "analysis/declared.h"
#include "frontends/load.h"
#include "passes/denormal.h"
#include "passes/expand.h"
#include "passes/float16.h"
#include "passes/metrics.h"
#include "passes/qdq_units.h"

struct fp_analysis_owned {
    fp_device *device;      /* when loaded here */
    fp_target *target;      /* likewise */
    fp_memory_reuse *reuse; /* the final plan's liveness, resized by the headroom search */
    fp_pipeline_opts po;    /* how the pipeline ran: its shapes' input_shapes and batch_dim owned here */
    GHashTable *outside;    /* the KV cache's tensors, planned outside the arena */
    fp_storage *storage;    /* the converted weights and the KV tensors at the what-ifs */
    fp_kv_sizing sizing;    /* the cache at the what-ifs, for the headroom search */
    fp_dtype float_as;      /* float32 activations planned at this dtype (precision_mode) */
    fp_dim_binding *dims;   /* opts.dims parsed, with a decoder's step */
    size_t n_dims;
    fp_headroom_result headroom;
};

/* The device, and the target unless the pipeline stops after shapes: the caller's, else loaded by
 * name or path. */
static bool load_profiles(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    fp_analysis_owned *w = a->owned;
    a->device = o->device_profile;
    if (!a->device && !(a->device = w->device = fp_device_load(o->device ? o->device : "cpu-avx2", error)))
        return false;
    if (o->stop == FP_PIPELINE_SHAPES)
        return true;
    a->target = o->target_rules;
    if (!a->target && !(a->target = w->target = fp_target_load(o->target ? o->target : a->device->target, error)))
        return false;
    return true;
}

/* The precision mode asked or the target's; with force_fp16, float32 computes in float16 (the
 * cost's dtype what-if), and weights, activations and the KV cache are stored so, unless an option
 * says otherwise. False with an error for a mode not modelled, or one asked without a target (the
 * shapes stop) or of a target without the option. */
static bool apply_precision_mode(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    if (o->precision_mode && !a->target) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--precision-mode: this command plans the model as exported, with no target; "
                    "fuseplan report --target ascend910b applies ATC's precision mode");
        return false;
    }
    const char *mode = o->precision_mode ? o->precision_mode : a->target ? a->target->precision_mode : NULL;
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
                                      "(--batch N or --input NAME:DIMS to change)",
                                      syms);
    }
    return shapes;
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
    for (uint32_t i = 0; kv && p->kv != FP_DT_UNDEFINED && i < kv->n_cross; i++)
        fp_storage_set_dtype(s, kv->cross[i].past, p->kv);
    return s;
}

/* Whether m may be a decoder whose cache only a genai config names: a graph input called "past..."
 * somewhere in its name (genai's past_key_values.%d.key, past_key_self_%d, past_%d). */
static bool names_a_past(const fp_model *m)
{
    for (guint i = 0; i < m->main->inputs->len; i++)
        if (strstr(((const fp_value *)m->main->inputs->pdata[i])->name, "past"))
            return true;
    return false;
}

/* The genai_config.json asked (o->genai_config), else the one beside a model that has a KV cache
 * or a "past" input (names_a_past: reading JSON loads the formats module, which other models'
 * text reports never need) and whose file it names, checked against a->kv, which takes its facts;
 * true when there is none. One that cannot be
 * read is an error; one that disagrees with the model an error when asked, else a->config_warning
 * (the graph's facts stand). */
static bool apply_genai_config(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    bool decoder = a->kv || names_a_past(a->model);
    g_autofree char *beside = o->genai_config || !decoder ? NULL : fp_genai_config_beside(a->path);
    const char *path = o->genai_config ? o->genai_config : beside;
    if (!path)
        return true;
    g_autoptr(fp_genai_config) c = fp_genai_config_load(path, error);
    if (!c)
        return false;
    if (!o->genai_config && !fp_genai_config_names(c, a->path))
        return true; /* the config of another model in the same folder */
    g_autoptr(GError) err = NULL;
    if (fp_kv_cache_configure(&a->kv, &c, a->model, o->genai_config != NULL, &err))
        return true;
    if (o->genai_config) {
        g_propagate_error(error, g_steal_pointer(&err));
        return false;
    }
    a->config_warning = g_strdup_printf("warning: %s; not used: the KV facts are the graph's (--genai-config FILE "
                                        "makes this an error)",
                                        err->message);
    return true;
}

/* The model read, its op types checked; its KV cache (from the graph as declared, before fusion
 * rewrites it), the storage what-ifs and the precision mode; a decoder's step bound into the
 * dims. *decode_note: the step's line for the binding note (or NULL). */
static bool load_model(fp_analysis *a, const fp_analysis_opts *o, char **decode_note, GError **error)
{
    fp_analysis_owned *w = a->owned;
    if (!(a->model = fp_load_model(a->path, error)) ||
        !fp_bind_check_ops(a->path, a->model, o->strict, a->diag, &a->warning, error) ||
        !fp_bind_check_batch_dim(a->model, o->batch_dim, error))
        return false;
    a->kv = fp_kv_cache_find(a->model);
    if (!apply_genai_config(a, o, error))
        return false;
    if (!fp_precision_parse(o->weight_dtype, o->group_size, o->kv_dtype, o->kv_block, &a->precision, error) ||
        !fp_precision_check(&a->precision, a->kv != NULL, a->path, error) || !apply_precision_mode(a, o, error))
        return false;
    w->storage = storage_of(a->model, a->kv, &a->precision, &a->weights);
    if (!fp_precision_check_weights(&a->precision, &a->weights, a->path, error))
        return false;
    if (a->kv)
        w->outside = fp_kv_cache_outside(a->kv);
    w->sizing = (fp_kv_sizing){a->kv, a->precision.kv, a->precision.kv_block};
    /* the caller's binder, when it will run, binds the tokens too (a profile's shapes) */
    bool bound = o->inputs || (o->bind && !o->batch && !(o->dims && *o->dims) && !o->context && !o->phase);
    int64_t context = o->context || !a->kv ? o->context : a->kv->max_length;
    fp_decoder_step step = {context, o->phase, o->batch_dim, bound, o->training};
    return fp_kv_cache_bind(a->kv, a->model, &step, &w->dims, &w->n_dims, decode_note, error);
}

/* The pipeline on a->model to o->stop, its inputs bound. */
static bool run_pipeline(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    fp_analysis_owned *w = a->owned;
    GHashTable *shapes = bind_inputs(a->model, o, w, &a->batch, &a->batch_note, &a->inputs_note, error);
    if (!shapes)
        return false;
    if (a->target && a->target->fold_declared)
        fp_declared_mark_runtime(a->model, a->target);
    w->reuse = fp_memory_reuse_new(NULL);
    fp_memory_opts mem = o->plan ? *o->plan
                                 : (fp_memory_opts){.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN};
    if (!mem.align)
        mem.align = a->device->align_bytes;
    mem.outside = w->outside;
    mem.float_as = w->float_as;
    mem.reuse = w->reuse;
    w->po = (fp_pipeline_opts){
        .shapes = {.input_shapes = shapes,
                   .batch = a->batch,
                   .batch_dim = g_strdup(o->batch_dim),
                   .dims = w->dims,
                   .n_dims = w->n_dims},
        .target = a->target,
        .device = a->device,
        .memory = mem,
        .what_if = a->what_if,
        .storage = w->storage,
        .dump_after = o->dump_after,
        .dump_out = o->dump_out ? o->dump_out : stderr,
        .stop = o->stop,
        .plan = o->plan != NULL,
        .cost = o->cost,
    };
    if (!fp_pipeline_run(a->model, &w->po, &a->res, a->diag, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    return true;
}

/* a->unknown_note from the pipeline's count (see fp_analysis.unknown_note). */
static void note_unknown(fp_analysis *a)
{
    uint32_t n = a->res.unknown_values;
    const fp_value *v = a->res.unknown_first;
    if (!n)
        return;
    const fp_node *p = v->producer;
    bool sym = false;
    for (int32_t k = 0; k < v->shape.rank; k++)
        sym |= v->shape.dims[k].sym != NULL;
    const char *why = p && p->op == FP_OP_OPAQUE ? "made by an op type fuseplan does not know"
                      : sym ? "symbolic dims left unbound: bind them with --dim NAME=N or --input NAME:DIMS"
                            : "its shape could not be inferred (--verbose says why)";
    g_autofree char *dims = fp_shape_to_string(&v->shape);
    a->unknown_note =
        g_strdup_printf("warning: %s: %u value%s of unknown size, counted as 0 bytes: '%s' %s%s%s%s%s%s: %s", a->path,
                        n, n == 1 ? "" : "s", v->name, dims, p ? " (" : "", p ? p->op_type : "", p ? " '" : "",
                        p ? p->name : "", p ? "')" : "", why);
}

/* The model before fusion: read again, bound the same way, shapes and metrics, and its cost (kept
 * when o->original). When the pipeline made rewrites that the runtime makes at every level
 * (res.unoptimized_changed), the copy becomes the graph it runs unoptimized (its load-time
 * rewrites, each DequantizeLinear copied for its readers, then passes/float16.c at
 * FP_FLOAT16_UNOPTIMIZED: ONNX Runtime does both with its optimizations off too) and stage
 * "original" is set from it. */
static bool load_original(fp_analysis *a, const fp_analysis_opts *o, GError **error)
{
    if (!(a->original = fp_load_model(a->path, error)))
        return false;
    int64_t batch = 0;
    g_autofree char *batch_note = NULL, *inputs_note = NULL;
    g_autoptr(GHashTable) shapes = bind_inputs(a->original, o, a->owned, &batch, &batch_note, &inputs_note, error);
    if (!shapes)
        return false;
    if (a->target && a->target->fold_declared)
        fp_declared_mark_runtime(a->original, a->target);
    fp_shape_opts so = {.input_shapes = shapes,
                        .batch = batch,
                        .batch_dim = o->batch_dim,
                        .dims = a->owned->dims,
                        .n_dims = a->owned->n_dims};
    if (!fp_pass_shapes(a->original, &so, NULL, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    fp_denormal_copy(a->model, a->original); /* what the pipeline's run_shapes found */
    g_autoptr(fp_kv_cache) kv = fp_kv_cache_find(a->original);
    g_autoptr(fp_storage) st = storage_of(a->original, kv, &a->precision, NULL);
    if (a->res.unoptimized_changed) {
        fp_pass_expand(a->original, a->target, NULL);
        fp_pass_qdq_units(a->original, a->target, true, NULL);
        fp_pass_float16(a->original, a->target, FP_FLOAT16_UNOPTIMIZED, NULL);
    }
    fp_pass_metrics(a->original, NULL);
    fp_pass_storage(a->original, st);
    if (a->res.unoptimized_changed && !fp_pipeline_original_stage(a->original, &a->owned->po, &a->res, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    if (o->original)
        a->original_cost = fp_pass_cost(a->original, a->device, a->what_if, fp_pipeline_original_cost_flags(a->target),
                                        NULL);
    else
        g_clear_pointer(&a->original, fp_model_free);
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

uint64_t fp_reserve_bytes(const fp_reserve *r, uint64_t capacity)
{
    if (!r)
        return capacity / 10; /* FP_RESERVE_DEFAULT_SHARE, exactly */
    return r->in_bytes ? r->bytes : (uint64_t)((double)capacity * r->share);
}

/* Whether some input of a's main graph leaves the batch free: at the batch's position (the first
 * dim, or where the declared shape names batch_dim) its input spec, when it has one, has '?', or
 * else its declared dim is symbolic or unknown. */
static bool batch_free(const fp_analysis *a, const char *batch_dim)
{
    GHashTable *specs = a->owned->po.shapes.input_shapes;
    for (guint i = 0; i < a->model->main->inputs->len; i++) {
        const fp_value *v = a->model->main->inputs->pdata[i];
        const fp_shape *spec = specs ? g_hash_table_lookup(specs, v->name) : NULL;
        const fp_shape *decl = &v->decl_shape;
        for (int32_t k = 0; k < decl->rank; k++) {
            bool at = batch_dim ? g_strcmp0(decl->dims[k].sym, batch_dim) == 0 : k == 0;
            if (!at)
                continue;
            if (spec ? k < spec->rank && !fp_dim_known(spec->dims[k]) : !fp_dim_known(decl->dims[k]))
                return true;
        }
    }
    return false;
}

const char *fp_analysis_batch_refusal(const fp_analysis *a)
{
    const char *batch_dim = a->owned->po.shapes.batch_dim;
    for (size_t i = 0; i < a->owned->n_dims; i++)
        if (fp_bind_is_batch(a->model, batch_dim, a->owned->dims[i].name))
            return "--dim binds the batch dimension (bind it with --batch instead)";
    if (batch_free(a, batch_dim))
        return NULL;
    if (a->owned->po.shapes.input_shapes && g_hash_table_size(a->owned->po.shapes.input_shapes))
        return "--input fixes the batch (write its dimension as ? to search it, or bind it with --batch)";
    return "the model has no symbolic batch dimension (name one with --batch-dim)";
}

/* The batch headroom on the graph as the pipeline left it, last: batch 1 is the pipeline's own plan
 * when it ran at batch 1. Input specs stay as given ('?' frees a dim for the batch). */
static void headroom(fp_analysis *a, const fp_analysis_opts *o)
{
    fp_analysis_owned *w = a->owned;
    const char *why = fp_analysis_batch_refusal(a);
    if (why) {
        a->headroom_note = g_strdup_printf("not computed: %s", why);
        return;
    }
    a->headroom_capacity = o->headroom.capacity ? o->headroom.capacity : a->device->memory_bytes;
    a->headroom_reserve = fp_reserve_bytes(o->headroom.reserve, a->headroom_capacity);
    fp_headroom_opts ho = {.capacity = a->headroom_capacity,
                           .reserve = a->headroom_reserve,
                           .input_shapes = o->inputs ? w->po.shapes.input_shapes : NULL,
                           .batch_dim = w->po.shapes.batch_dim,
                           .mem = w->po.memory,
                           .max_batch = o->headroom.max_batch,
                           .shapes = w->po.shapes,
                           .plan_at_1 = a->batch == 1 ? a->res.memory : NULL,
                           .weight_delta = fp_weight_plan_delta(&a->weights),
                           .outside_bytes = a->kv ? fp_kv_sizing_held : NULL,
                           .outside_data = &w->sizing};
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_diag) diag = o->headroom.findings ? fp_diag_new() : NULL;
    if (fp_pass_headroom(a->model, &ho, &w->headroom, diag, &err)) {
        a->headroom = &w->headroom;
        a->headroom_diag = g_steal_pointer(&diag);
        return;
    }
    a->headroom_note = g_strdup_printf("not computed: %s", err->message);
}

bool fp_analysis_opts_check(const fp_analysis_opts *o, GError **error)
{
    const struct {
        const char *name;
        int64_t value;
    } counts[] = {{"--batch", o->batch},
                  {"--context", o->context},
                  {"--group-size", o->group_size},
                  {"--kv-block", o->kv_block}};
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        if (counts[i].value < 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %" G_GINT64_FORMAT ": must be positive",
                        counts[i].name, counts[i].value);
            return false;
        }
    g_autoptr(fp_model) scratch = fp_model_new("", "");
    g_autoptr(GHashTable) specs = fp_bind_input_shapes(scratch, o->inputs, error); /* the specs' syntax */
    fp_dim_binding *dims = NULL;
    size_t n = 0;
    if (!specs || !fp_bind_parse_dims(o->dims, &dims, &n, error))
        return false;
    fp_bind_dims_free(dims, n);
    if (o->precision_mode && !fp_target_precision_mode_ok(o->precision_mode)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--precision-mode %s: expected force_fp16 or must_keep_origin_dtype", o->precision_mode);
        return false;
    }
    fp_precision p;
    return fp_precision_parse(o->weight_dtype, o->group_size, o->kv_dtype, o->kv_block, &p, error) &&
           fp_decoder_phase_check(o->phase, error);
}

fp_analysis *fp_analysis_run(const char *path, const fp_analysis_opts *o, GError **error)
{
    if (!fp_analysis_opts_check(o, error))
        return NULL;
    g_autoptr(fp_analysis) a = g_new0(fp_analysis, 1);
    a->path = g_strdup(path);
    a->stop = o->stop;
    a->what_if = o->what_if;
    a->owned = g_new0(fp_analysis_owned, 1);
    a->diag = fp_diag_new();
    g_autofree char *decode_note = NULL;
    if (!fp_bind_parse_dims(o->dims, &a->owned->dims, &a->owned->n_dims, error) || !load_profiles(a, o, error) ||
        !load_model(a, o, &decode_note, error) || !run_pipeline(a, o, error) ||
        ((o->original || a->res.unoptimized_changed) && o->stop == FP_PIPELINE_FULL && !load_original(a, o, error)))
        return NULL;
    if (decode_note) {
        a->phase = o->training ? "train" : o->phase && strcmp(o->phase, "prefill") == 0 ? "prefill" : "decode";
        g_autofree char *batch_note = a->batch_note;
        a->batch_note = batch_note ? g_strdup_printf("%s; %s", batch_note, decode_note) : g_steal_pointer(&decode_note);
    }
    apply_precision(a);
    note_unknown(a);
    if (o->headroom.on)
        headroom(a, o);
    return g_steal_pointer(&a);
}

bool fp_analysis_rebatch(fp_analysis *a, int64_t batch, GError **error)
{
    g_assert(a->stop == FP_PIPELINE_SHAPES && batch >= 0);
    fp_pipeline_opts po = a->owned->po;
    po.shapes.batch = batch;
    po.shapes.attrs_checked = true;
    po.dump_after = NULL;
    fp_pipeline_result_clear(&a->res);
    if (!fp_pipeline_run(a->model, &po, &a->res, NULL, error)) {
        g_prefix_error(error, "%s: ", a->path);
        return false;
    }
    apply_precision(a);
    return true;
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
    fp_diag_free(a->headroom_diag);
    g_free(a->path);
    g_free(a->batch_note);
    g_free(a->inputs_note);
    g_free(a->warning);
    g_free(a->config_warning);
    g_free(a->unknown_note);
    g_free(a->headroom_note);
    fp_memory_reuse_free(a->owned->reuse);
    if (a->owned->outside)
        g_hash_table_unref(a->owned->outside);
    fp_storage_free(a->owned->storage);
    if (a->owned->po.shapes.input_shapes)
        g_hash_table_unref(a->owned->po.shapes.input_shapes);
    g_free((char *)a->owned->po.shapes.batch_dim);
    fp_bind_dims_free(a->owned->dims, a->owned->n_dims);
    fp_target_free(a->owned->target);
    fp_device_free(a->owned->device);
    g_free(a->owned);
    g_free(a);
}
