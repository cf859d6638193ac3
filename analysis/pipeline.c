/* pipeline.c - the analysis pipeline (see pipeline.h): one straight list of passes. */
#include "analysis/pipeline.h"

#include <string.h>

#include "passes/conv_add_act.h"
#include "passes/cse.h"
#include "passes/reshape_chain.h"
#include "passes/denormal.h"
#include "passes/qdq_units.h"
#include "passes/expand.h"
#include "passes/float16.h"
#include "passes/layout.h"
#include "passes/metrics.h"
#include "passes/nhwc.h"
#include "passes/transpose.h"

#define FP_PASS_NAME(name) #name,
static const char *const passes[] = {FP_PIPELINE_PASS_LIST(FP_PASS_NAME) NULL};
#undef FP_PASS_NAME

bool fp_pipeline_has_pass(const char *name) { return g_strv_contains(passes, name); }

const char *fp_pipeline_pass_names(void)
{
    static char *names; /* made once; g_once keeps it safe beside other threads */
    static gsize done;
    if (g_once_init_enter(&done)) {
        names = g_strjoinv(", ", (char **)passes);
        g_once_init_leave(&done, 1);
    }
    return names;
}

/* Debug builds verify the IR after every pass; --dump-after prints it. */
static bool after(fp_model *m, const fp_pipeline_opts *o, const char *pass, GError **error)
{
#ifdef FP_DEBUG
    g_autoptr(GError) err = NULL;
    if (!fp_model_verify(m, &err)) {
        g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID, "IR invalid after pass %s: %s", pass, err->message);
        return false;
    }
#else
    (void)error;
#endif
    if (o->dump_after && strcmp(o->dump_after, pass) == 0) {
        fprintf(o->dump_out ? o->dump_out : stdout, "# IR after pass %s\n", pass);
        fp_model_dump(m, o->dump_out ? o->dump_out : stdout);
    }
    return true;
}

/* The value whose bytes v stands for: v, or the weight a folded TransData or narrowing Cast of a
 * weight came from (GE's formats: the weight plan of the precision mode counts its dtype). A folded
 * widening Cast (ONNX Runtime's float16 weights read as float32) is a copy the runtime keeps. */
static const fp_value *stored_weight(const fp_value *v)
{
    while (v && v->producer && (v->producer->flags & FP_NODE_FOLDED) && v->producer->n_inputs >= 1 &&
           v->producer->inputs[0]) {
        const fp_node *p = v->producer;
        const fp_value *x = p->inputs[0];
        bool narrowing = p->op == FP_OP_CAST && fp_dtype_bits(v->dtype) <= fp_dtype_bits(x->dtype);
        if (p->op != FP_OP_TRANS_DATA && !narrowing)
            break;
        v = x;
    }
    return v;
}

/* The stage's op counts (runtime ops, kernels, conversions, folded shape computations) and the
 * bytes of the distinct weights (initializers, constants, folded values) its runtime ops read, in
 * one walk over the nodes. Distinct by value: one bit per value of the model, at its
 * fp_value_index. */
static void count_stage(fp_model *m, fp_stage *st)
{
    size_t total = 0;
    fp_model_number(m, NULL, &total);
    g_autofree uint8_t *seen = g_new0(uint8_t, total / 8 + 1);
    uint64_t bytes = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_nodes_prefetch((fp_node *const *)g->nodes->pdata, g->nodes->len, i);
            const fp_node *n = g->nodes->pdata[i];
            if (n->flags & FP_NODE_REMOVED)
                continue;
            if (n->flags & FP_NODE_FOLDED) {
                st->folded++;
                continue;
            }
            st->ops++;
            st->kernels += !fp_op_has(n->op, FP_OPF_VIEW);
            st->conversions += fp_layout_is_conversion(n);
            for (uint32_t k = 0; k < n->n_inputs; k++) {
                const fp_value *v = stored_weight(n->inputs[k]);
                if (!v || !fp_value_is_fixed(v))
                    continue;
                size_t bit = fp_value_index(v);
                uint64_t numel, b;
                if (seen[bit / 8] & (1u << (bit % 8)))
                    continue;
                seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
                if (v->tensor)
                    bytes += v->tensor->nbytes;
                else if (fp_shape_numel(&v->shape, &numel) && fp_dtype_bytes(v->dtype, numel, &b))
                    bytes += b;
            }
        }
    }
    st->weight_bytes = bytes;
}

/* Fills a stage from the graph as it is now: its counts, and the activation bytes and latency
 * given. */
static void stage(fp_model *m, fp_stage *st, const char *name, bool planned, uint64_t activation_bytes,
                  double latency_s)
{
    memset(st, 0, sizeof *st);
    st->name = name;
    count_stage(m, st);
    st->planned = planned;
    st->activation_bytes = activation_bytes;
    st->latency_s = latency_s;
}

unsigned fp_pipeline_original_cost_flags(const fp_target *t)
{
    return t && t->original_runs_folded ? FP_COST_RUN_FOLDED : 0;
}

/* A stage before memory reuse: every activation in its own buffer, the estimated total latency
 * (fp_cost_total with `cost_flags`). Its findings are those of the final stage, which the pipeline
 * reports once. */
static bool stage_unplanned(fp_model *m, const fp_pipeline_opts *o, fp_stage *st, const char *name, unsigned cost_flags,
                            GError **error)
{
    fp_memory_naive_result naive;
    if (!fp_memory_naive(m->main, &o->memory, &naive, NULL, error))
        return false;
    stage(m, st, name, false, naive.naive_bytes, fp_cost_total(m, o->device, o->what_if, cost_flags));
    return true;
}

/* The most bytes the tensors of a model may hold together; more is a binding no device holds,
 * refused before any size arithmetic could wrap. */
#define SIZE_LIMIT ((uint64_t)1 << 62)

/* Whether v, a value of a live node or a graph input (not a weight), holds a tensor whose size
 * shape inference could not give. */
static bool size_unknown(const fp_value *v, uint64_t one)
{
    if (fp_value_is_weight(v) || (v->producer && (v->producer->flags & FP_NODE_REMOVED)) ||
        (!v->producer && v->kind != FP_VALUE_INPUT))
        return false;
    if (v->type == FP_TYPE_SEQUENCE || v->type == FP_TYPE_MAP || v->type == FP_TYPE_OPTIONAL ||
        v->dtype == FP_DT_STRING)
        return false; /* no fixed size to know */
    return !one || !fp_shape_static(&v->shape);
}

/* Which value of unknown size to name (fp_pipeline_result.unknown_first): one an op fuseplan does
 * not know makes, else one with a symbolic dim, else the first. */
static void name_unknown(const fp_value *v, const fp_value **opaque, const fp_value **sym, const fp_value **first)
{
    if (!*first)
        *first = v;
    if (!*opaque && v->producer && v->producer->op == FP_OP_OPAQUE)
        *opaque = v;
    for (int32_t k = 0; !*sym && k < v->shape.rank; k++)
        if (v->shape.dims[k].sym)
            *sym = v;
}

/* Counts the values of every graph of m whose size is unknown (res->unknown_values; the one to name
 * in res->unknown_first), and checks that the others hold less than SIZE_LIMIT bytes together;
 * false with an error naming the value that reaches it. */
static bool count_sizes(const fp_model *m, fp_pipeline_result *res, GError **error)
{
    uint64_t total = 0;
    const fp_value *opaque = NULL, *sym = NULL, *first = NULL;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++) {
            const fp_value *v = g->values->pdata[i];
            uint64_t numel = 0, bytes = 0, one = 0;
            fp_dtype_bytes(v->dtype, 1, &one);
            if (size_unknown(v, one)) {
                res->unknown_values++;
                name_unknown(v, &opaque, &sym, &first);
                continue;
            }
            if (!one || !fp_shape_static(&v->shape))
                continue; /* a weight's own, or no tensor */
            bool fits = fp_shape_numel(&v->shape, &numel) && fp_dtype_bytes(v->dtype, numel, &bytes) &&
                        g_uint64_checked_add(&total, total, bytes) && total < SIZE_LIMIT;
            if (!fits) {
                g_autofree char *dims = fp_shape_to_string(&v->shape);
                g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                            "value '%s' (%s): the model's tensors hold 2^62 bytes or more at these dims "
                            "(--batch, --input, --dim bind them)",
                            v->name, dims);
                return false;
            }
        }
    }
    res->unknown_first = opaque ? opaque : sym ? sym : first;
    return true;
}

/* Shapes and metrics of the model as exported, with the storage what-ifs; its sizes counted. */
static bool run_shapes(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    if (!fp_pass_shapes(m, &o->shapes, diag, error) || !count_sizes(m, res, error) || !after(m, o, "shapes", error))
        return false;
    fp_pass_metrics(m, diag);
    fp_pass_storage(m, o->storage);
    if (!after(m, o, "metrics", error))
        return false;
    fp_pass_denormal(m, diag);
    return after(m, o, "denormal", error);
}

/* Whether target t's float16 Casts that go in after the fusions (those no folded initializer Cast
 * brought before them) wait for its level-3 layout passes too: ONNX Runtime's level all runs its
 * NchwcTransformer and ConvAddActivationFusion before InsertCastTransformer, on the float16 ops,
 * which they leave as they are. */
static bool casts_after_layout(const fp_target *t)
{
    return g_key_file_get_boolean(t->keyfile, "layout", "nchwc", NULL);
}

/* The target's load-time rewrites, stage "original", the transpose optimizer and the fusions,
 * stage "after fusion". */
static bool run_fusion(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    /* Casts the runtime removes at every level: the unoptimized graph is a copy without them */
    res->unoptimized_changed += fp_pass_float16(m, o->target, FP_FLOAT16_LOAD, diag);
    /* the runtime loads the model so: before every stage, its unoptimized graph too */
    bool ran = fp_pass_expand(m, o->target, diag);
    res->unoptimized_changed += ran;
    /* GE's formats are no optimization: its graph has them at every stage */
    ran |= fp_pass_ge_format(m, o->target, o->memory.float_as, &res->layout.ge, diag);
    if (ran) {
        fp_pass_metrics(m, NULL);
        fp_pass_storage(m, o->storage);
    }
    if (!after(m, o, "expand", error) ||
        !stage_unplanned(m, o, &res->stages[0], "original", fp_pipeline_original_cost_flags(o->target), error))
        return false;
    /* ONNX Runtime's level-1 loop: its constant folding (which leaves float16 ops without a CPU
     * kernel), the elimination, its ReshapeFusion, the optimizer, the elimination of what its Shape
     * pushes made alike and the Reshapes it made contiguous, the level-1 rules */
    fp_pass_float16(m, o->target, FP_FLOAT16_CONSTANT_FOLDING, diag);
    fp_pass_cse(m, o->target, diag);
    fp_pass_reshape_chain(m, o->target, diag);
    fp_pass_transpose(m, o->target, &res->layout.transpose, diag);
    fp_pass_cse(m, o->target, diag);
    fp_pass_reshape_chain(m, o->target, diag);
    uint32_t dqs = fp_pass_qdq_units(m, o->target, false, diag);
    if (dqs) { /* the QDQ rewrites that follow the loop at level 1 */
        res->unoptimized_changed += dqs;
        fp_pass_metrics(m, NULL);
        fp_pass_storage(m, o->storage);
    }
    if (!after(m, o, "transpose", error))
        return false;
    res->fusions = fp_fusion_list_new();
    if (!fp_pass_fuse(m, o->target, FP_FUSE_BEFORE_PARTITION, res->fusions, diag, error))
        return false;
    /* ORT's partitioning, and at level all its Casts: after the level-1 loop, before the fusions */
    res->unoptimized_changed += fp_pass_float16(m, o->target, FP_FLOAT16_BEFORE_FUSION, diag);
    if (!fp_pass_fuse(m, o->target, FP_FUSE_AFTER_PARTITION, res->fusions, diag, error) || !after(m, o, "fuse", error))
        return false;
    if (!casts_after_layout(o->target))
        res->unoptimized_changed += fp_pass_float16(m, o->target, FP_FLOAT16_AFTER_FUSION, diag);
    else /* the runtime's remover of duplicate Casts at the levels below, its Casts after the layout */
        fp_pass_float16(m, o->target, FP_FLOAT16_REMOVE_CASTS, diag);
    if (!after(m, o, "float16", error))
        return false;
    fp_pass_metrics(m, NULL); /* fused kernels read and write only their external tensors */
    fp_pass_storage(m, o->storage);
    return stage_unplanned(m, o, &res->stages[1], "after fusion", 0, error);
}

/* ONNX Runtime's NhwcTransformer runs the transpose optimizer again once it made a kernel
 * channels-last: it may take the Transposes nhwc.c left further (through a QLinearAdd/Mul, a
 * Reshape, a Squeeze) to meet others; its counts add to the first run's. */
static void nhwc_transposes(fp_model *m, const fp_target *t, fp_transpose_result *sum, fp_diag *diag)
{
    fp_transpose_result again;
    if (!fp_pass_transpose(m, t, &again, diag))
        return;
    sum->pushed += again.pushed;
    sum->cancelled += again.cancelled;
    sum->inserted += again.inserted;
    sum->removed += again.removed;
    sum->unmodelled += again.unmodelled;
}

/* The layout passes: the target's conversions, then its blocked layout. */
static bool run_layout(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    fp_ge_format_result ge = res->layout.ge;
    fp_transpose_result transposes = res->layout.transpose;
    if (!fp_pass_layout(m, o->target, &res->layout, diag, error) || !after(m, o, "layout", error))
        return false;
    res->layout.ge = ge;
    res->layout.transpose = transposes;
    g_autofree char *why = g_key_file_get_boolean(o->target->keyfile, "layout", "nchwc", NULL)
                               ? fp_device_nchwc_reason(o->device)
                               : NULL;
    if (why)
        fp_diag_add_message(diag, FP_DIAG_INFO, "layout", "nchwc-block", NULL, g_steal_pointer(&why));
    if (fp_pass_nchwc(m, o->target, o->device->nchwc_block, &res->layout.nchwc, diag)) {
        res->layout.rewrote = true;
        res->layout.conversions_after += res->layout.nchwc.reorder_in + res->layout.nchwc.reorder_out;
    }
    if (fp_pass_nhwc(m, o->target, &res->layout.nhwc, diag)) {
        res->layout.rewrote = true;
        res->layout.conversions_after += res->layout.nhwc.transposes;
        nhwc_transposes(m, o->target, &res->layout.transpose, diag);
    }
    if ((res->layout.conv_add_act = fp_pass_conv_add_act(m, o->target, diag)))
        res->layout.rewrote = true;
    uint32_t casts = casts_after_layout(o->target) ? fp_pass_float16(m, o->target, FP_FLOAT16_AFTER_FUSION, diag) : 0;
    if (casts) {
        res->unoptimized_changed += casts;
        res->layout.rewrote = true;
        fp_layout_add_casts(m, &res->layout, diag);
    }
    if (!after(m, o, "nchwc", error))
        return false;
    if (res->layout.rewrote) {
        fp_pass_metrics(m, NULL);
        fp_pass_storage(m, o->storage);
    }
    return true;
}

/* The memory plan and the cost of the graph as it is now, each when `plan` / `cost`. */
static bool run_plan(fp_model *m, const fp_pipeline_opts *o, bool plan, bool cost, fp_pipeline_result *res,
                     fp_diag *diag, GError **error)
{
    if (plan && (!(res->memory = fp_pass_memory(m->main, &o->memory, diag, error)) || !after(m, o, "memory", error)))
        return false;
    if (!cost)
        return true;
    res->cost = fp_pass_cost(m, o->device, o->what_if, 0, diag);
    return after(m, o, "cost", error);
}

/* Each stage's speedup: the latency of stage "original" over its own. */
static void speedups(fp_pipeline_result *res)
{
    for (int i = 0; i < 3; i++)
        res->stages[i].speedup = res->stages[i].latency_s > 0 ? res->stages[0].latency_s / res->stages[i].latency_s
                                                              : 1.0;
}

bool fp_pipeline_run(fp_model *m, const fp_pipeline_opts *o, fp_pipeline_result *res, fp_diag *diag, GError **error)
{
    memset(res, 0, sizeof *res);
    res->n_loaded_graphs = m->graphs->len;
    res->loaded_nodes = g_new(uint32_t, MAX(m->graphs->len, 1));
    for (guint i = 0; i < m->graphs->len; i++)
        res->loaded_nodes[i] = ((const fp_graph *)m->graphs->pdata[i])->nodes->len;
    if (!run_shapes(m, o, res, diag, error))
        return false;
    if (o->stop == FP_PIPELINE_SHAPES)
        return run_plan(m, o, o->plan, o->cost, res, diag, error);
    if (!run_fusion(m, o, res, diag, error))
        return false;
    if (o->stop == FP_PIPELINE_FUSION)
        return true;
    if (!run_layout(m, o, res, diag, error) || !run_plan(m, o, true, true, res, diag, error))
        return false;
    stage(m, &res->stages[2], "final (fusion + layout + memory reuse)", true, res->memory->arena, res->cost->total_s);
    speedups(res);
    return true;
}

bool fp_pipeline_original_stage(fp_model *copy, const fp_pipeline_opts *o, fp_pipeline_result *res, GError **error)
{
    g_assert(o->stop == FP_PIPELINE_FULL && res->cost);
    if (!stage_unplanned(copy, o, &res->stages[0], "original", fp_pipeline_original_cost_flags(o->target), error))
        return false;
    speedups(res);
    return true;
}

void fp_pipeline_result_clear(fp_pipeline_result *res)
{
    fp_fusion_list_free(res->fusions);
    fp_memory_result_free(res->memory);
    fp_cost_result_free(res->cost);
    g_free(res->loaded_nodes);
    memset(res, 0, sizeof *res);
}
