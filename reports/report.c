/* report.c - `fuseplan report` emitters: text, Markdown, JSON. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "reports/explain.h"
#include "reports/format.h"
#include "reports/memory.h"

/* ---------------------------------------------------------------- shared pieces */

fp_report fp_report_of(const fp_analysis *a)
{
    return (fp_report){.model = a->model,
                       .target = a->target,
                       .device = a->device,
                       .res = &a->res,
                       .diag = a->diag,
                       .batch_note = a->batch_note,
                       .what_if = a->what_if,
                       .precision_mode = a->precision_mode,
                       .precision = a->precision,
                       .weights = &a->weights,
                       .weight_bytes = a->weight_bytes,
                       .kv = a->kv,
                       .kv_bytes = a->kv_bytes,
                       .phase = a->phase,
                       .kv_past_bytes = a->kv_past_bytes,
                       .headroom = a->headroom,
                       .headroom_note = a->headroom_note,
                       .top = 10};
}

GArray *fp_report_hotspots(const fp_cost_result *c, unsigned n)
{
    /* one pass keeping the n best so far, longest first; an op replaces one only when strictly
     * longer, so among equal times the earlier in topological order ranks first */
    GArray *idx = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);
    for (guint i = 0; i < c->n_ops && n; i++) {
        if (!c->ops[i].kernel)
            continue;
        double t = c->ops[i].rl.time_s;
        guint len = idx->len;
        if (len == n && !(t > c->ops[g_array_index(idx, guint, len - 1)].rl.time_s))
            continue;
        guint at = len < n ? len : len - 1; /* where it goes before moving up */
        if (len < n)
            g_array_set_size(idx, len + 1);
        while (at > 0 && t > c->ops[g_array_index(idx, guint, at - 1)].rl.time_s) {
            g_array_index(idx, guint, at) = g_array_index(idx, guint, at - 1);
            at--;
        }
        g_array_index(idx, guint, at) = i;
    }
    return idx;
}

/* The time kernel rl spends moving bytes: its roofline memory term and the terms added to it. */
static double moving_s(const fp_roofline *rl)
{
    return rl->memory_s + rl->cold_s + rl->spill_s + rl->far_s + rl->kept_s + rl->reread_s;
}

char *fp_report_advice(const fp_op_cost *oc, const fp_device *d)
{
    fp_kernel k = fp_cost_kernel(oc);
    double ridge = fp_roofline_ridge_at(d, &k); /* where its bound flips: its saturation, its cache level */
    if (oc->rl.denormal_s > oc->rl.time_s / 2)
        return g_strdup_printf("denormal-bound, %.0f of its %.0f us the CPU's assists on denormal floats (exp() of "
                               "logits the attention mask moved far down): a mask of -inf, or ONNX Runtime's "
                               "session.set_denormal_as_zero with more than one intra-op thread, removes them",
                               oc->rl.denormal_s * 1e6, oc->rl.time_s * 1e6);
    if (oc->rl.launch_s > MAX(oc->rl.compute_s, moving_s(&oc->rl)))
        return g_strdup("launch-bound: too little work per kernel; fusing it with its neighbours saves the launch");
    if (oc->rl.bound == FP_BOUND_MEMORY && oc->rl.cold_s > 0)
        return g_strdup_printf("memory-bound, %.3g of its %.3g us reading weights no cache holds between runs (the "
                               "model's weights and activations overflow the last cache level): int8 or int4 weights "
                               "(--weight-dtype) cut those bytes",
                               oc->rl.cold_s * 1e6, moving_s(&oc->rl) * 1e6);
    if (oc->rl.bound == FP_BOUND_MEMORY && oc->rl.far_s > 0)
        return g_strdup_printf("memory-bound, %.3g of its %.3g us moving activations the last cache level lost "
                               "since they were last touched (too much traffic in between): fusing it with its "
                               "producer or consumer keeps them in the cache",
                               oc->rl.far_s * 1e6, moving_s(&oc->rl) * 1e6);
    if (oc->rl.bound == FP_BOUND_MEMORY && oc->rl.kept_s > 0)
        return g_strdup_printf("memory-bound, %.3g of its %.3g us reading graph inputs back from the last cache "
                               "level (the run's weights, inputs and arena outgrow the levels before it): a "
                               "smaller batch or context, or narrower weights (--weight-dtype), shrink them",
                               oc->rl.kept_s * 1e6, moving_s(&oc->rl) * 1e6);
    if (oc->rl.spill_s > oc->rl.time_s / 10)
        return g_strdup_printf("%s-bound, %.3g of its %.3g us reading its weights back from the last cache "
                               "level (the run's weights, inputs and arena outgrow the levels before it): a larger "
                               "batch reads them once for more rows, int8 weights (--weight-dtype) cut those bytes",
                               fp_bound_name(oc->rl.bound), oc->rl.spill_s * 1e6, oc->rl.time_s * 1e6);
    const fp_metrics *mt = &oc->node->metrics;
    uint64_t moved = mt->bytes_act + mt->bytes_weight + mt->bytes_out;
    if (oc->rl.bound == FP_BOUND_MEMORY && mt->bytes_weight * 2 > moved)
        return g_strdup_printf("memory-bound (%.2f FLOP/B < ridge %.3g), mostly reading its weights: int8 or int4 "
                               "weights (--weight-dtype) cut those bytes",
                               oc->rl.intensity, ridge);
    if (oc->rl.bound == FP_BOUND_MEMORY)
        return g_strdup_printf("memory-bound (%.2f FLOP/B < ridge %.3g): fuse it with its neighbours or use a "
                               "narrower dtype (%s)",
                               oc->rl.intensity, ridge,
                               fp_dtype_bits(oc->dtype) > 16 ? "fp16 halves the bytes" : "8 bits halve the bytes");
    return g_strdup_printf("compute-bound (%.2f FLOP/B > ridge %.3g): a lower precision (fp16/int8) raises the roof",
                           oc->rl.intensity, ridge);
}

typedef struct {
    const char *rule;
    guint matched, applied;
    const char *top_reason; /* most frequent failing constraint */
    guint top_count;
} rule_row;

/* Per-rule summary of the fusion list in the target's order. Caller frees. */
static rule_row *rule_rows(const fp_report *r, guint *n)
{
    guint cnt = g_strv_length(r->target->rules);
    rule_row *rows = g_new0(rule_row, cnt + 1);
    g_autoptr(GHashTable) row_of = g_hash_table_new(g_str_hash, g_str_equal); /* rule -> first row + 1 */
    g_autofree GHashTable **reasons = g_new0(GHashTable *, cnt + 1);          /* per row: constraint -> count */
    for (guint i = 0; i < cnt; i++) {
        rows[i].rule = r->target->rules[i];
        if (!g_hash_table_contains(row_of, rows[i].rule))
            g_hash_table_insert(row_of, (gpointer)rows[i].rule, GUINT_TO_POINTER(i + 1));
    }
    /* one walk over the fusions, in their order: a row's top reason is the first to reach its count */
    for (guint k = 0; k < r->res->fusions->fusions->len; k++) {
        const fp_fusion *f = r->res->fusions->fusions->pdata[k];
        guint i = GPOINTER_TO_UINT(g_hash_table_lookup(row_of, f->rule));
        if (!i--)
            continue;
        rule_row *row = &rows[i];
        row->matched++;
        row->applied += f->applied;
        if (f->reasons->len && !reasons[i])
            reasons[i] = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint j = 0; j < f->reasons->len; j++) {
            const char *c = ((fp_reason *)f->reasons->pdata[j])->constraint;
            guint v = GPOINTER_TO_UINT(g_hash_table_lookup(reasons[i], c)) + 1;
            g_hash_table_insert(reasons[i], (gpointer)c, GUINT_TO_POINTER(v));
            if (v > row->top_count) {
                row->top_count = v;
                row->top_reason = c;
            }
        }
    }
    for (guint i = 0; i < cnt; i++) {
        guint first = GPOINTER_TO_UINT(g_hash_table_lookup(row_of, rows[i].rule)) - 1;
        if (first != i) /* a rule listed twice: the same figures */
            rows[i] = rows[first];
        if (reasons[i])
            g_hash_table_destroy(reasons[i]);
    }
    *n = cnt;
    return rows;
}

static const char *stage_label(const fp_stage *s) { return s->name; }

/* ---------------------------------------------------------------- text */

/* Bold on and off for the section titles (ANSI, when the report is in colour). */
typedef struct {
    const char *on, *off;
} text_style;

/* Ends run_overhead's sentence: with the profile's overheads per graph input and output past the
 * first when it has them. */
static void io_overheads(FILE *out, const fp_device *d)
{
    if (d->input_overhead > 0 || d->output_overhead > 0) {
        g_autofree char *in = fp_format_time(d->input_overhead), *o = fp_format_time(d->output_overhead);
        fprintf(out, ", and %s per graph input and %s per output past the first", in, o);
    }
    fprintf(out, ".\n");
}

/* The model, device, target and what-if lines, and the stage table with its notes. */
static void text_stages(const fp_report *r, text_style b, FILE *out)
{
    const fp_pipeline_result *res = r->res;
    fprintf(out, "%smodel%s   %s (%s)\n", b.on, b.off, r->model->path, r->model->format);
    if (r->batch_note)
        fprintf(out, "        %s\n", r->batch_note);
    g_autofree char *threads = r->device->threads
                                   ? g_strdup_printf(" (rates for %" G_GUINT64_FORMAT " thread%s)", r->device->threads,
                                                     r->device->threads == 1 ? "" : "s")
                                   : g_strdup("");
    fprintf(out, "%sdevice%s  %s: %s%s\n", b.on, b.off, r->device->name,
            r->device->description ? r->device->description : "", threads);
    fprintf(out, "%starget%s  %s: %s\n", b.on, b.off, r->target->name, r->target->description);
    if (r->precision_mode && strcmp(r->precision_mode, "force_fp16") == 0)
        fprintf(out, "precision force_fp16 (ATC's default): float32 ops compute, and their tensors and weights are "
                     "stored, in float16 (--precision-mode must_keep_origin_dtype keeps float32)\n");
    else if (r->what_if != FP_DT_UNDEFINED)
        fprintf(out, "what-if computing in %s (float32 tensors scaled, %s peak)\n", fp_dtype_name(r->what_if),
                fp_dtype_name(r->what_if));
    fprintf(out, "\n%-40s %6s %8s %18s %11s %13s %8s\n", "stage", "ops", "kernels", "activation memory", "weights",
            "est. latency", "speedup");
    for (int i = 0; i < 3; i++) {
        const fp_stage *s = &res->stages[i];
        g_autofree char *act = fp_format_mb(s->activation_bytes), *w = fp_format_mb(s->weight_bytes),
                        *lat = fp_format_time(s->latency_s);
        g_autofree char *actl = g_strdup_printf("%s%s", act, s->planned ? " planned" : "");
        fprintf(out, "%-40s %6u %8u %18s %11s %13s %7.2fx\n", stage_label(s), s->ops, s->kernels, actl, w, lat,
                s->speedup);
    }
    fprintf(out, "stages on %s:\n  original      %s\n  after fusion  %s\n  final         %s\n", r->target->name,
            r->target->stage_meaning[0], r->target->stage_meaning[1], r->target->stage_meaning[2]);
    const fp_ge_format_result *ge = &res->layout.ge;
    if (ge->ran)
        fprintf(out,
                "ops counts runtime ops: %u computations on constants are not counted (%u conversions of weights "
                "GE folds at build, %u folded at analysis time);\n",
                res->stages[0].folded, ge->transdata_folded + ge->cast_folded,
                res->stages[0].folded - ge->transdata_folded - ge->cast_folded);
    else if (r->target->original_runs_folded && res->stages[0].folded)
        fprintf(out,
                "ops counts runtime ops: %u shape computations folded at analysis time are not counted (ONNX "
                "Runtime's constant folding removes them;\nthe stage original runs them: its est. latency has "
                "their launches);\n",
                res->stages[0].folded);
    else
        fprintf(out,
                "ops counts runtime ops: %u shape computations folded at analysis time are not counted (ONNX "
                "Runtime's constant folding removes them);\n",
                res->stages[0].folded);
    fprintf(out,
            "kernels leave out views (Reshape, Flatten, Squeeze, Unsqueeze, Identity), which launch nothing. "
            "Activation memory is without reuse,\nthen the planned arena (%s, %s order).\n",
            res->memory->method ? res->memory->method : "best", res->memory->schedule);
    if (r->device->run_overhead > 0) {
        g_autofree char *run = fp_format_time(r->device->run_overhead);
        fprintf(out, "est. latency includes the profile's run_overhead, %s per inference outside every kernel", run);
        io_overheads(out, r->device);
    }
    if (res->cost->unknown || res->unknown_values)
        fprintf(out,
                "%swarning%s: %u values of the model and %u ops have unknown sizes: latency counts only their "
                "launches and memory counts them as 0; bind symbolic dims with --dim NAME=N or --input NAME:DIMS\n",
                b.on, b.off, res->unknown_values, res->cost->unknown);
}

/* The fusion rules' counts, the layout conversions and the layout's reasons (three unless verbose). */
static void text_fusion_layout(const fp_report *r, text_style b, FILE *out)
{
    guint nrows = 0;
    g_autofree rule_row *rows = rule_rows(r, &nrows);
    guint total_m = 0, total_a = 0;
    for (guint i = 0; i < nrows; i++)
        total_m += rows[i].matched, total_a += rows[i].applied;
    fprintf(out, "\n%sfusion%s  %u of %u candidates applied (fuseplan explain shows each one)\n", b.on, b.off, total_a,
            total_m);
    for (guint i = 0; i < nrows; i++) {
        if (!rows[i].matched)
            continue;
        fprintf(out, "  %-18s %3u / %-3u", rows[i].rule, rows[i].applied, rows[i].matched);
        if (rows[i].top_reason)
            fprintf(out, "  not applied mostly because of %s (%u)", rows[i].top_reason, rows[i].top_count);
        fputc('\n', out);
    }
    const fp_layout_result *lay = &r->res->layout;
    fprintf(out, "\n%slayout%s  %u conversions before, %u after (%u removed, %u merged, %u kept with a reason)\n", b.on,
            b.off, lay->conversions_before, lay->conversions_after, lay->removed, lay->merged, lay->refused);
    const fp_transpose_result *tr = &lay->transpose;
    if (tr->pushed || tr->unmodelled)
        fprintf(out,
                "  transpose optimizer (before fusion): Transposes pushed through %u ops, %u cancelled, %u inserted, "
                "%u removed%s\n",
                tr->pushed, tr->cancelled, tr->inserted, tr->removed,
                tr->unmodelled ? "; some pushes not modelled (see the transpose-unmodelled findings)" : "");
    const fp_nchwc_result *nc = &lay->nchwc;
    g_autofree char *transposes_folded = nc->transposes_folded ? g_strdup_printf(" (%u of them fold a Transpose to or "
                                                                                 "from NHWC)",
                                                                                 nc->transposes_folded)
                                                               : g_strdup("");
    if (nc->converted || nc->kept_nchw)
        fprintf(out,
                "  NCHWc in blocks of %" G_GUINT64_FORMAT ": %u Convs and pools blocked, %u kept NCHW; %u other ops on "
                "blocked tensors; %u Adds and %u activations folded into blocked Convs; %u ReorderInput and %u "
                "ReorderOutput inserted%s\n",
                r->device->nchwc_block, nc->converted, nc->kept_nchw, nc->blocked, nc->sum_fused, nc->act_fused,
                nc->reorder_in, nc->reorder_out, transposes_folded);
    const fp_diag_entry *block = fp_diag_find(r->diag, "nchwc-block");
    if (block && (nc->converted || nc->kept_nchw))
        fprintf(out, "  %s\n", block->message);
    const fp_ge_format_result *ge = &lay->ge;
    if (ge->ran)
        fprintf(out,
                "  GE formats (C0 = %u): %u ops in NC1HWC0; on the device %u TransData and %u Cast; folded into "
                "the weights at build %u TransData and %u Cast; TransData to NC1HWC0 %u, FRACTAL_Z %u, FRACTAL_NZ %u, "
                "origin format %u\n",
                ge->c0, ge->ops_5hd, ge->transdata, ge->cast, ge->transdata_folded, ge->cast_folded, ge->to_5hd,
                ge->to_fractal_z, ge->to_fractal_nz, ge->to_origin);
    else if (ge->preset)
        fprintf(out, "  GE formats: the graph carries GE's own (a graph after format selection): none chosen\n");
    guint shown = 0, more = 0;
    for (guint i = 0; r->diag && i < r->diag->entries->len; i++) {
        const fp_diag_entry *e = r->diag->entries->pdata[i];
        if (strcmp(e->pass, "layout") != 0 || strcmp(e->code, "nchwc-block") == 0)
            continue;
        if (r->verbose || shown < 3) {
            fprintf(out, "  %s\n", e->message);
            shown++;
        } else {
            more++;
        }
    }
    if (more)
        fprintf(out, "  ... and %u more (--verbose lists them)\n", more);
}

/* The memory plan: LOAD, arena, the peak's largest buffers and three hints. */
static void text_memory(const fp_report *r, text_style b, FILE *out)
{
    const fp_memory_result *mem = r->res->memory;
    g_autofree char *load = fp_format_mb(mem->lower_bound), *arena = fp_format_mb(mem->arena),
                    *naive = fp_format_mb(mem->naive_bytes);
    fprintf(out, "\n%smemory%s  LOAD %s (the floor for this order), arena %s (%s), without reuse %s\n", b.on, b.off,
            load, arena, mem->method ? mem->method : "best", naive);
    if (mem->peak_node) {
        fprintf(out, "  peak at step %u (%s %s): %u buffers live, the largest:\n", mem->peak_step,
                mem->peak_node->op_type, mem->peak_node->name, mem->n_peak);
        for (uint32_t i = 0; i < mem->n_peak && i < 3; i++) {
            const fp_memory_tensor *t = &mem->peak[i];
            g_autofree char *bytes = fp_format_mb(t->bytes);
            fprintf(out, "    %-36s %10s  from %s\n", t->value ? t->value->name : "(workspace)", bytes,
                    t->producer ? t->producer->name : "graph input");
        }
    }
    g_autoptr(GPtrArray) hints = fp_report_memory_hints(mem);
    for (guint i = 0; i < hints->len && i < 3; i++)
        fprintf(out, "  hint: %s\n", (const char *)hints->pdata[i]);
}

/* "NAME BYTES (SHARE%)" of the device's memory. Caller frees. */
static char *share_of(const char *name, uint64_t bytes, uint64_t capacity)
{
    g_autofree char *mb = fp_format_mb(bytes);
    return g_strdup_printf("%s %s (%.1f%%)", name, mb, capacity ? 100.0 * (double)bytes / (double)capacity : 0.0);
}

fp_headroom_decoder fp_report_headroom_decoder(const fp_report *r)
{
    return fp_headroom_decoder_of(r->kv, &r->precision, r->phase);
}

bool fp_report_step_of(const fp_report *r, fp_report_step *s)
{
    double t = r->res->cost->total_s;
    if (!r->kv || !fp_kv_cache_step(r->kv, &s->sequences, &s->past_tokens, &s->new_tokens) || s->new_tokens < 1 ||
        s->sequences < 1 || t <= 0)
        return false;
    s->latency_s = t;
    s->per_token_s = t / (double)s->new_tokens;
    s->tokens_per_s = (double)s->sequences * (double)s->new_tokens / t;
    s->floor_bytes = r->weight_bytes + r->kv_past_bytes;
    s->floor_s = r->device->bandwidth > 0 ? (double)s->floor_bytes / r->device->bandwidth : 0;
    return true;
}

fp_dtype fp_report_kv_dtype(const fp_report *r) { return fp_kv_cache_dtype_at(r->kv, r->precision.kv); }

/* Device memory at the analysed point: weights, the KV cache, the planned arena, the reserve the
 * headroom keeps (a tenth) and what is left, each as a share of the device's memory. */
static void text_breakdown(const fp_report *r, FILE *out)
{
    uint64_t cap = r->device->memory_bytes, arena = r->res->memory->arena, used = r->weight_bytes + r->kv_bytes + arena;
    uint64_t left = cap > used + cap / 10 ? cap - used - cap / 10 : 0;
    g_autofree char *w = share_of("weights", r->weight_bytes, cap), *k = share_of("KV cache", r->kv_bytes, cap);
    g_autofree char *a = share_of("activations", arena, cap), *res = share_of("reserve", cap / 10, cap);
    g_autofree char *f = share_of("free", left, cap), *total = fp_format_mb(cap);
    fprintf(out, "  of %s on %s: %s, %s, %s, %s, %s\n", total, r->device->name, w, k, a, res, f);
    if (r->kv_past_bytes) {
        g_autofree char *p = fp_format_mb(r->kv_past_bytes);
        fprintf(out, "  a runtime that keeps past and present apart holds the past inputs too: +%s\n", p);
    }
}

/* The step's estimated latency per token: a decode step makes one token per sequence, a prefill
 * the new tokens of each; what the step must read (weights, the cache's past) at the device's
 * bandwidth bounds it from below. */
static void text_step(const fp_report *r, FILE *out)
{
    fp_report_step st;
    if (!fp_report_step_of(r, &st))
        return;
    g_autofree char *step = fp_format_time(st.latency_s), *per = fp_format_time(st.per_token_s);
    g_autofree char *fl = fp_format_time(st.floor_s), *w = fp_format_mb(r->weight_bytes),
                    *k = fp_format_mb(r->kv_past_bytes);
    fprintf(out,
            "  step est. %s for %" G_GINT64_FORMAT " new token%s x %" G_GINT64_FORMAT
            " sequence%s after %" G_GINT64_FORMAT " past: %s per token per sequence, %.0f tokens/s\n",
            step, st.new_tokens, st.new_tokens == 1 ? "" : "s", st.sequences, st.sequences == 1 ? "" : "s",
            st.past_tokens, per, st.tokens_per_s);
    fprintf(out, "  reading the weights (%s) and the cache's past (%s) takes %s at %.0f GB/s: the floor of any step\n",
            w, k, fl, r->device->bandwidth / 1e9);
}

/* The KV cache of a decoder: its layout and bytes per token, and what it holds now. */
static void text_kv_cache(const fp_report *r, text_style b, FILE *out)
{
    const fp_kv_cache *kv = r->kv;
    fp_dtype dt = fp_report_kv_dtype(r);
    fprintf(out, "\n%skv cache%s %u layers, K and V", b.on, b.off, kv->layers);
    if (kv->kv_heads > 0 && kv->head_dim > 0)
        fprintf(out, " of %" G_GINT64_FORMAT " heads x %" G_GINT64_FORMAT, kv->kv_heads, kv->head_dim);
    fprintf(out, ", %s%s", dt != FP_DT_UNDEFINED ? fp_dtype_name(dt) : "mixed dtypes",
            r->precision.kv != FP_DT_UNDEFINED ? " (--kv-dtype)" : "");
    uint64_t per_token = fp_kv_cache_token_bytes(kv, r->precision.kv);
    if (per_token)
        fprintf(out, ": %" G_GUINT64_FORMAT " bytes per token per sequence", per_token);
    fputc('\n', out);
    fp_report_kv_cross_text(kv, r->precision.kv, r->precision.kv_block, "  ", out);
    fp_report_kv_config_text(kv, "  facts ", out);
    if (r->kv_bytes) {
        g_autofree char *mb = fp_format_mb(r->kv_bytes);
        fprintf(out, "  held now %s (%u tensors, one buffer each that past and present share", mb, kv->n_tensors);
        if (kv->n_cross)
            fprintf(out, "; %u cross-attention tensors", kv->n_cross);
        if (r->precision.kv_block)
            fprintf(out, "; tokens in blocks of %" G_GINT64_FORMAT, r->precision.kv_block);
        fprintf(out, ")\n");
        text_breakdown(r, out);
        text_step(r, out);
    } else {
        fprintf(out, "  cache of unknown size: bind %s with --dim NAME=N\n",
                kv->past_dim ? kv->past_dim : "the past and new token dims");
    }
}

/* The weight what-if: the weights at the dtype asked, what it converts and what stays. */
static void text_weights(const fp_report *r, text_style b, FILE *out)
{
    const fp_weight_plan *w = r->weights;
    fp_dtype dt = r->precision.weight;
    g_autofree char *all = fp_format_mb(w->bytes), *stored = fp_format_mb(w->stored_bytes);
    g_autofree char *conv = fp_format_mb(w->changed_bytes), *kept = fp_format_mb(w->kept_bytes);
    fprintf(out, "\n%sweights%s at %s", b.on, b.off, fp_precision_dtype_name(dt));
    if (dt == FP_DT_INT4)
        fprintf(out, " (groups of %" G_GINT64_FORMAT ")",
                r->precision.group > 0 ? r->precision.group : (int64_t)FP_PRECISION_DEFAULT_GROUP);
    fprintf(out, ": %s (stored: %s)\n", all, stored);
    bool cast = dt == FP_DT_FLOAT || dt == FP_DT_FLOAT16 || dt == FP_DT_BFLOAT16;
    fprintf(out, "  %u tensors converted: %s%s; %s kept in their own dtype (%s)\n", w->n_changed, conv,
            cast               ? ""
            : dt == FP_DT_INT4 ? " with fp16 scales and 4-bit zero points per group"
            : dt == FP_DT_INT8 ? " with an fp16 scale per output channel"
                               : " with an fp32 scale per tensor",
            kept,
            cast ? "integer tensors" : "embeddings, the LM head, norms, biases: all but MatMul, Gemm and Conv weights");
}

/* A decoder's headroom: the context searched, the breakdown at the maximum, the KV capacity. */
static void text_headroom_kv(const fp_report *r, const fp_headroom_result *h, FILE *out)
{
    fp_headroom_decoder dec = fp_report_headroom_decoder(r);
    uint64_t cap = r->device->memory_bytes;
    g_autofree char *w = share_of("weights", h->weight_bytes, cap), *k = share_of("KV cache", h->outside_at_max, cap);
    g_autofree char *a = share_of("activations", h->arena_at_max, cap);
    if (dec.context > 0)
        fprintf(out, "  at %" G_GINT64_FORMAT " tokens per sequence%s%s: %s, %s, %s\n", dec.context,
                dec.phase ? ", a " : "", dec.phase ? dec.phase : "", w, k, a);
    int64_t tokens = fp_report_kv_capacity_tokens(&dec, h);
    if (tokens >= 0)
        fprintf(out, "  KV capacity %" G_GINT64_FORMAT " tokens in what the weights and these activations leave\n",
                tokens);
}

/* The costliest kernels with their advice, and the headroom line. */
static void text_hotspots_headroom(const fp_report *r, text_style b, FILE *out)
{
    const fp_cost_result *cost = r->res->cost;
    g_autoptr(GArray) hot = fp_report_hotspots(cost, r->top);
    fprintf(out, "\n%shotspots%s (estimated on %s)\n", b.on, b.off, r->device->name);
    for (guint i = 0; i < hot->len; i++) {
        const fp_op_cost *oc = &cost->ops[g_array_index(hot, guint, i)];
        g_autofree char *t = fp_format_time(oc->rl.time_s), *adv = fp_report_advice(oc, r->device);
        double share = cost->total_s > 0 ? 100.0 * oc->rl.time_s / cost->total_s : 0;
        fprintf(out, "  %-34s %-20s %10s %5.1f%%  %s\n", oc->node->name, oc->node->op_type, t, share, adv);
    }
    if (r->headroom) {
        const fp_headroom_result *h = r->headroom;
        g_autofree char *cap = fp_format_mb(h->usable), *at = fp_format_mb(h->bytes_at_max);
        fprintf(out,
                "\n%sheadroom%s max batch %" G_GINT64_FORMAT "%s on %s (%s usable after a 10%% reserve; %s at "
                "that batch)\n",
                b.on, b.off, h->max_batch, h->at_limit ? " or more" : "", r->device->name, cap, at);
        if (r->kv)
            text_headroom_kv(r, h, out);
    } else if (r->headroom_note) {
        fprintf(out, "\n%sheadroom%s %s\n", b.on, b.off, r->headroom_note);
    }
}

/* The Softmaxes whose weights a mask makes denormal (passes/denormal.h): their count and the time
 * the estimate gives their assists, or why it gives none, as a sentence; *first the first one's
 * warning. NULL when there are none. */
static char *denormals_summary(const fp_report *r, const fp_diag_entry **first)
{
    guint n = 0;
    for (guint i = 0; r->diag && i < r->diag->entries->len; i++) {
        const fp_diag_entry *e = r->diag->entries->pdata[i];
        if (strcmp(e->code, "denormal-softmax") == 0 && n++ == 0)
            *first = e;
    }
    if (!n)
        return NULL;
    double s = 0;
    for (uint32_t i = 0; i < r->res->cost->n_ops; i++)
        s += r->res->cost->ops[i].rl.denormal_s;
    g_autofree char *t = fp_format_time(s);
    g_autofree char *priced =
        r->device->denormal_mac_s > 0 || r->device->denormal_exp_s > 0
            ? g_strdup_printf("%s of the estimate on %s", t, r->device->name)
            : g_strdup_printf("not in the estimate, profile %s has no denormal rates (`fuseplan calibrate "
                              "--runtime onnxruntime` measures this host's)",
                              r->device->name);
    return g_strdup_printf("%u Softmax%s write denormal attention weights (`fuseplan shapes --verbose` lists each): %s",
                           n, n == 1 ? "" : "es", priced);
}

static void text_denormals(const fp_report *r, text_style b, FILE *out)
{
    const fp_diag_entry *first = NULL;
    g_autofree char *summary = denormals_summary(r, &first);
    if (summary)
        fprintf(out, "\n%sdenormals%s %s\n  %s\n", b.on, b.off, summary, first->message);
}

void fp_report_text(const fp_report *r, FILE *out)
{
    text_style b = {r->color ? "\033[1m" : "", r->color ? "\033[0m" : ""};
    text_stages(r, b, out);
    text_fusion_layout(r, b, out);
    text_memory(r, b, out);
    if (r->precision.weight != FP_DT_UNDEFINED)
        text_weights(r, b, out);
    if (r->kv)
        text_kv_cache(r, b, out);
    text_hotspots_headroom(r, b, out);
    text_denormals(r, b, out);
}

/* ---------------------------------------------------------------- Markdown */

void fp_report_markdown(const fp_report *r, FILE *out)
{
    const fp_pipeline_result *res = r->res;
    fprintf(out, "# fuseplan report: `%s`\n\n", r->model->path);
    fprintf(out, "Device **%s**, target **%s**%s%s.\n\n", r->device->name, r->target->name, r->batch_note ? "; " : "",
            r->batch_note ? r->batch_note : "");
    fprintf(out, "| stage | ops | kernels | activation memory | weights | est. latency | speedup |\n");
    fprintf(out, "|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 3; i++) {
        const fp_stage *s = &res->stages[i];
        g_autofree char *act = fp_format_mb(s->activation_bytes), *w = fp_format_mb(s->weight_bytes),
                        *lat = fp_format_time(s->latency_s);
        fprintf(out, "| %s | %u | %u | %s%s | %s | %s | %.2fx |\n", s->name, s->ops, s->kernels, act,
                s->planned ? " (planned arena)" : " (no reuse)", w, lat, s->speedup);
    }
    fprintf(out, "\nStages on %s: original = %s; after fusion = %s; final = %s.\n", r->target->name,
            r->target->stage_meaning[0], r->target->stage_meaning[1], r->target->stage_meaning[2]);
    fprintf(out, "\n`ops` counts runtime ops; %u shape computations folded at analysis time are not counted%s.\n",
            res->stages[0].folded,
            r->target->original_runs_folded && res->stages[0].folded
                ? " (the stage original runs them: its `est. latency` has their launches)"
                : "");
    if (r->device->run_overhead > 0) {
        g_autofree char *run = fp_format_time(r->device->run_overhead);
        fprintf(out, "`est. latency` includes the profile's run_overhead, %s per inference outside every kernel", run);
        io_overheads(out, r->device);
    }
    guint nrows = 0;
    g_autofree rule_row *rows = rule_rows(r, &nrows);
    fprintf(out, "\n## Fusion\n\n| rule | applied | matched | main reason when not applied |\n|---|---|---|---|\n");
    for (guint i = 0; i < nrows; i++)
        if (rows[i].matched)
            fprintf(out, "| %s | %u | %u | %s |\n", rows[i].rule, rows[i].applied, rows[i].matched,
                    rows[i].top_reason ? rows[i].top_reason : "");
    const fp_memory_result *mem = res->memory;
    g_autofree char *load = fp_format_mb(mem->lower_bound), *arena = fp_format_mb(mem->arena),
                    *naive = fp_format_mb(mem->naive_bytes);
    fprintf(out, "\n## Memory\n\nLOAD %s, arena %s, without reuse %s; peak at step %u (`%s`).\n", load, arena, naive,
            mem->peak_step, mem->peak_node ? mem->peak_node->name : "-");
    g_autoptr(GArray) hot = fp_report_hotspots(res->cost, r->top);
    fprintf(out, "\n## Hotspots\n\n| op | type | est. time | bound | advice |\n|---|---|---|---|---|\n");
    for (guint i = 0; i < hot->len; i++) {
        const fp_op_cost *oc = &res->cost->ops[g_array_index(hot, guint, i)];
        g_autofree char *t = fp_format_time(oc->rl.time_s), *adv = fp_report_advice(oc, r->device);
        fprintf(out, "| `%s` | %s | %s | %s | %s |\n", oc->node->name, oc->node->op_type, t,
                fp_bound_name(oc->rl.bound), adv);
    }
    if (r->headroom)
        fprintf(out, "\n## Headroom\n\nMax batch %" G_GINT64_FORMAT "%s on %s.\n", r->headroom->max_batch,
                r->headroom->at_limit ? " or more" : "", r->device->name);
    const fp_diag_entry *first = NULL;
    g_autofree char *summary = denormals_summary(r, &first);
    if (summary)
        fprintf(out, "\n## Denormals\n\n%s.\n\n%s\n", summary, first->message);
}
