/* memory.c - the memory and headroom reports (text, JSON) and the hints explaining a peak. */
#include "memory.h"

#include "reports/format.h"

/* ---------------------------------------------------------------- hints */

const char *fp_report_memory_tensor_name(const fp_memory_tensor *t)
{
    return t->value ? t->value->name : t->ws_node->name;
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* Nodes that read, at or after the peak, several buffers live there as their last read, in step order. */
static void hint_joins(const fp_memory_result *r, GPtrArray *h)
{
    g_autoptr(GHashTable) count = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) bytes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    for (uint32_t i = 0; i < r->n_peak; i++) {
        const fp_memory_tensor *t = &r->peak[i];
        if (!t->value || !t->last_reader || t->output || t->first == r->peak_step)
            continue;
        gpointer k = (gpointer)t->last_reader;
        g_hash_table_insert(count, k, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(count, k)) + 1));
        uint64_t *b = g_hash_table_lookup(bytes, k);
        if (!b) {
            b = g_new0(uint64_t, 1);
            g_hash_table_insert(bytes, k, b);
        }
        *b += t->bytes;
    }
    for (uint32_t step = 0; step < r->n_order; step++) { /* in step order: the table's order is the heap's */
        const fp_node *n = r->order[step];
        unsigned c = GPOINTER_TO_UINT(g_hash_table_lookup(count, n));
        const uint64_t *bp = g_hash_table_lookup(bytes, n);
        uint64_t b = bp ? *bp : 0;
        if (c < 3 && !(c == 2 && pct(b, r->lower_bound) >= 25.0))
            continue;
        g_autofree char *sz = fp_format_bytes(b);
        g_ptr_array_add(h, g_strdup_printf("%s '%s' at step %u keeps %u of its inputs alive across the peak "
                                           "(%s, %.0f%% of it): they wait until it reads them",
                                           n->op_type, n->name, step, c, sz, pct(b, r->lower_bound)));
    }
}

/* Large buffers produced well before the peak and read after it. */
static void hint_long_lived(const fp_memory_result *r, GPtrArray *h)
{
    unsigned shown = 0;
    for (uint32_t i = 0; i < r->n_peak && shown < 3; i++) {
        const fp_memory_tensor *t = &r->peak[i];
        if (!t->value || pct(t->bytes, r->lower_bound) < 10.0)
            continue;
        g_autofree char *sz = fp_format_bytes(t->bytes);
        if (t->input) {
            g_ptr_array_add(h,
                            g_strdup_printf("graph input '%s' (%s) stays live until step %u, where '%s' reads it last",
                                            t->value->name, sz, t->last, t->last_reader ? t->last_reader->name : "?"));
            shown++;
        } else if (t->output) {
            g_ptr_array_add(
                h, g_strdup_printf("graph output '%s' (%s) is produced at step %u and stays allocated to the end",
                                   t->value->name, sz, t->first));
            shown++;
        } else if (r->peak_step - t->first >= 8 && t->last > r->peak_step && t->last_reader) {
            g_ptr_array_add(h, g_strdup_printf("'%s' (%s) lives from step %u ('%s') to step %u ('%s'): a skip "
                                               "connection spanning the peak",
                                               t->value->name, sz, t->first, t->producer ? t->producer->name : "input",
                                               t->last, t->last_reader->name));
            shown++;
        }
    }
}

GPtrArray *fp_report_memory_hints(const fp_memory_result *r)
{
    GPtrArray *h = g_ptr_array_new_with_free_func(g_free);
    if (!r->peak_node)
        return h;
    hint_joins(r, h);
    hint_long_lived(r, h);
    for (uint32_t i = 0; i < r->n_peak; i++)
        if (r->peak[i].ws_node) {
            g_autofree char *sz = fp_format_bytes(r->peak[i].bytes);
            g_ptr_array_add(h, g_strdup_printf("the subgraphs of %s '%s' need %s of workspace at step %u",
                                               r->peak[i].ws_node->op_type, r->peak[i].ws_node->name, sz,
                                               r->peak[i].first));
        }
    if (r->schedule_searched) {
        g_autofree char *a = fp_format_bytes(r->lower_bound_given), *b = fp_format_bytes(r->lower_bound_optimized);
        double gain = pct(r->lower_bound_given - r->lower_bound_optimized, r->lower_bound_given);
        if (r->lower_bound_optimized < r->lower_bound_given && r->opts.schedule != FP_SCHEDULE_OPTIMIZED)
            g_ptr_array_add(h, g_strdup_printf("a memory-aware order lowers the floor from %s to %s (-%.1f%%): "
                                               "use --schedule optimized",
                                               a, b, gain));
        else if (r->lower_bound_optimized < r->lower_bound_given)
            g_ptr_array_add(h, g_strdup_printf("the memory-aware order lowers the floor from %s to %s (-%.1f%%)", a, b,
                                               gain));
        else if (r->schedule_exact)
            g_ptr_array_add(h, g_strdup_printf("no topological order has a lower floor (searched exactly over %u "
                                               "segment%s)",
                                               r->n_segments, r->n_segments == 1 ? "" : "s"));
    }
    if (r->arena > r->lower_bound) {
        g_autofree char *x = fp_format_bytes(r->arena - r->lower_bound);
        g_ptr_array_add(h, g_strdup_printf("the %s plan is %s (%.2f%%) above the floor: fragmentation",
                                           fp_memplan_strategy_name(r->opts.strategy), x,
                                           pct(r->arena - r->lower_bound, r->lower_bound)));
    }
    if (r->n_unknown)
        g_ptr_array_add(h, g_strdup_printf("%u buffer%s of unknown size count as 0 bytes: bind shapes with "
                                           "--dim NAME=N, --input NAME:DIMS or --batch N",
                                           r->n_unknown, r->n_unknown == 1 ? "" : "s"));
    return h;
}

/* ---------------------------------------------------------------- text */

static void diag_text(const fp_diag *diag, FILE *out)
{
    for (guint i = 0; diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        fprintf(out, "%s: %s\n",
                e->level == FP_DIAG_WARNING ? "warning"
                : e->level == FP_DIAG_ERROR ? "error"
                                            : "note",
                e->message);
    }
}

/* "; B already stored quantized, kept so" for the weight line of a what-if, or "" (g_free). */
static char *quantized_kept(uint64_t quantized)
{
    if (!quantized)
        return g_strdup("");
    g_autofree char *q = fp_format_bytes(quantized);
    return g_strdup_printf("; %s already stored quantized, kept so", q);
}

/* The weights, the KV cache beside the plan, the activations and their total. */
static void totals_text(const fp_memory_result *r, const fp_memory_extra *x, FILE *out)
{
    uint64_t weights = x && x->weight_dtype ? x->weight_bytes : r->weight_bytes;
    uint64_t kv = x && x->kv ? x->kv_bytes : 0, total = UINT64_MAX;
    g_autofree char *w = fp_format_bytes(weights), *a = fp_format_bytes(r->arena);
    g_autofree char *lb = fp_format_bytes(r->lower_bound);
    if (g_uint64_checked_add(&total, weights, r->arena) && !g_uint64_checked_add(&total, total, kv))
        total = UINT64_MAX;
    g_autofree char *tot = fp_format_bytes(total);
    if (x && x->weight_dtype) {
        g_autofree char *stored = fp_format_bytes(r->weight_bytes);
        g_autofree char *kept = quantized_kept(x->weight_quantized);
        fprintf(out, "weights     %s at %s (--weight-dtype; stored %s%s)\n", w, x->weight_dtype, stored, kept);
    } else if (r->folded_bytes && r->folded_bytes <= weights) {
        g_autofree char *st = fp_format_bytes(weights - r->folded_bytes), *fo = fp_format_bytes(r->folded_bytes);
        fprintf(out, "weights     %s: %s stored in the file, %s folded from constants (made at load)\n", w, st, fo);
    } else {
        fprintf(out, "weights     %s\n", w);
    }
    if (x && x->kv) {
        g_autofree char *k = kv == UINT64_MAX ? g_strdup("unknown") : fp_format_bytes(kv);
        fprintf(out,
                "kv cache    %s held apart from the arena (%u layers, %" G_GUINT64_FORMAT " bytes per token, %s)\n", k,
                x->kv->layers, x->kv_bytes_per_token,
                x->kv_dtype != FP_DT_UNDEFINED ? fp_dtype_name(x->kv_dtype) : "mixed dtypes");
        fp_report_kv_cross_text(x->kv, x->kv_dtype, x->kv_block, "  ", out);
        fp_report_kv_config_text(x->kv, "kv facts    ", out);
    }
    fprintf(out, "activations %s planned (%s, %s), floor %s, fragmentation %.2f%%\n", a,
            fp_memplan_strategy_name(r->opts.strategy), r->method, lb,
            r->lower_bound ? pct(r->arena - r->lower_bound, r->lower_bound) : 0.0);
    fprintf(out, "total       %s (weights + %sactivations, alignment %" G_GUINT64_FORMAT " B)\n", tot,
            x && x->kv ? "KV cache + " : "", r->align);
}

/* The ORT allocation model beside the plan: the arena's peak and its parts. */
static void ort_text(const fp_ort_memory_result *o, FILE *out)
{
    g_autofree char *t = fp_format_bytes(o->total_first), *w = fp_format_bytes(o->weight_arena);
    g_autofree char *f = fp_format_bytes(o->first_run), *ts = fp_format_bytes(o->total_steady);
    g_autofree char *a = fp_format_bytes(o->pattern), *op = fp_format_bytes(o->outputs);
    g_autofree char *pp = fp_format_bytes(o->weight_outside);
    fprintf(out,
            "ort         %s in ONNX Runtime's CPU arena in the first run: initializers %s + activations %s "
            "(%u buffers: %u reused at the same shape, %u in place, %u views); later runs %s (memory pattern %s + "
            "outputs %s); initializers %s outside the arena\n",
            t, w, f, o->n_buffers, o->n_reused, o->n_inplace, o->n_views, ts, a, op, pp);
}

void fp_report_memory_text(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                           unsigned top, bool verbose, FILE *out)
{
    g_autofree char *lb = fp_format_bytes(r->lower_bound);
    fprintf(out, "model       %s (graph '%s', %u steps)\n", m->path, r->graph->name, r->n_order);
    if (x && x->batch_note)
        fprintf(out, "bound       %s\n", x->batch_note);
    totals_text(r, x, out);
    if (x && x->ort)
        ort_text(x->ort, out);
    GString *st = g_string_new(NULL);
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        if (!r->strategy_planned[s])
            continue;
        g_autofree char *x = fp_format_bytes(r->strategy_arena[s]);
        g_string_append_printf(st, "%s%s %s", st->len ? ", " : "", fp_memplan_strategy_name((fp_memplan_strategy)s), x);
    }
    fprintf(out, "strategies  %s (naive: no reuse)\n", st->str);
    g_string_free(st, TRUE);
    if (r->schedule_searched && r->lower_bound_optimized < r->lower_bound_given) {
        g_autofree char *g = fp_format_bytes(r->lower_bound_given), *o = fp_format_bytes(r->lower_bound_optimized);
        fprintf(out, "schedule    given: floor %s; optimized (%s%s): floor %s (-%.1f%%); planned: %s\n", g,
                r->schedule_method, r->schedule_exact ? ", proven minimal" : "", o,
                pct(r->lower_bound_given - r->lower_bound_optimized, r->lower_bound_given), r->schedule);
    } else if (r->schedule_searched) {
        fprintf(out, "schedule    %s: %s\n", r->schedule,
                r->schedule_exact ? "no topological order has a lower floor (proven)"
                                  : "the search found no order with a lower floor");
    } else {
        fprintf(out, "schedule    %s\n", r->schedule);
    }
    fprintf(out,
            "buffers     %u (%u views share their input's buffer, %u in-place, %u fused values not materialized, "
            "%u of unknown size)\n",
            r->n_buffers, r->n_views, r->n_inplace, r->n_fused, r->n_unknown);
    if (r->peak_node) {
        fprintf(out, "peak        step %u of %u: '%s' (%s), %u buffers live, %s\n", r->peak_step, r->n_order,
                r->peak_node->name, r->peak_node->op_type, r->n_peak, lb);
        fprintf(out, "  %-34s %10s %10s  %-28s %s\n", "buffer", "bytes", "offset", "produced by (step)",
                "last read by (step)");
        for (uint32_t i = 0; i < r->n_peak && (!top || i < top); i++) {
            const fp_memory_tensor *t = &r->peak[i];
            g_autofree char *b = fp_format_bytes(t->bytes);
            g_autofree char *prod = t->ws_node ? g_strdup_printf("(workspace of %s)", t->ws_node->name)
                                    : t->input ? g_strdup("(graph input)")
                                               : g_strdup_printf("%s (%u)", t->producer->name, t->first);
            g_autofree char *last = t->output        ? g_strdup("(graph output: end)")
                                    : t->last_reader ? g_strdup_printf("%s (%u)", t->last_reader->name, t->last)
                                                     : g_strdup("-");
            fprintf(out, "  %-34s %10s %10" G_GUINT64_FORMAT "  %-28s %s\n", fp_report_memory_tensor_name(t), b,
                    t->offset, prod, last);
        }
        if (top && r->n_peak > top)
            fprintf(out, "  ... %u more\n", r->n_peak - top);
    }
    g_autoptr(GPtrArray) hints = fp_report_memory_hints(r);
    if (hints->len)
        fprintf(out, "hints\n");
    for (guint i = 0; i < hints->len; i++)
        fprintf(out, "  - %s\n", (const char *)hints->pdata[i]);
    if (verbose)
        diag_text(diag, out);
}

/* ---------------------------------------------------------------- headroom */

fp_headroom_decoder fp_headroom_decoder_of(const fp_kv_cache *kv, const fp_precision *p, const char *phase)
{
    if (!kv)
        return (fp_headroom_decoder){0};
    return (fp_headroom_decoder){kv,          fp_kv_cache_dtype_at(kv, p->kv), fp_kv_cache_token_bytes(kv, p->kv),
                                 p->kv_block, fp_kv_cache_tokens(kv),          phase};
}

int64_t fp_report_kv_capacity_tokens(const fp_headroom_decoder *dec, const fp_headroom_result *res)
{
    if (!dec->kv || !dec->bytes_per_token || res->max_batch == 0)
        return -1;
    uint64_t cross = fp_kv_cache_cross_per_sequence(dec->kv, dec->kv_dtype) * (uint64_t)res->max_batch;
    uint64_t used = res->weight_bytes + res->arena_at_max + cross;
    uint64_t tokens = res->usable > used ? (res->usable - used) / dec->bytes_per_token : 0;
    if (dec->block > 0)
        tokens -= tokens % (uint64_t)dec->block;
    return (int64_t)MIN(tokens, (uint64_t)G_MAXINT64);
}

/* The config's facts beyond a plain cache: a hybrid's layer kinds and its state per sequence, a
 * paged pool's blocks. */
static void kv_config_extras(const fp_kv_cache *kv, FILE *out)
{
    const fp_genai_config *c = kv->genai;
    if (c->layer_types)
        fprintf(out,
                "; layer_types: %u of %u layers full_attention, the others hold a state of %" G_GUINT64_FORMAT
                " bytes per sequence (%u tensors), not per token",
                kv->layers, g_strv_length(c->layer_types), fp_kv_cache_state_per_sequence(kv), kv->n_state);
    if (fp_kv_cache_paged(kv)) {
        const fp_shape *s = &kv->tensors[0].past->decl_shape;
        fprintf(out,
                "; paged (engine.dynamic_batching): %" G_GINT64_FORMAT " blocks of %" G_GINT64_FORMAT
                " tokens that every sequence shares, past and present one buffer",
                s->dims[0].value, s->dims[1].value);
    }
}

void fp_report_kv_config_text(const fp_kv_cache *kv, const char *label, FILE *out)
{
    const fp_genai_config *c = kv->genai;
    if (!c)
        return;
    fprintf(out, "%sfrom %s", label, c->path);
    if (c->model_type)
        fprintf(out, " (model.type %s)", c->model_type);
    fprintf(out, ", which agrees with the graph: %u layers, %s (%s)", kv->layers,
            c->past_packed ? "K and V packed" : "K and V apart", c->past_packed ? c->past_packed : c->past_key);
    if (c->kv_heads >= 0 && c->heads >= 0)
        fprintf(out, ", %" G_GINT64_FORMAT " KV heads of %" G_GINT64_FORMAT " attention heads", c->kv_heads, c->heads);
    else if (c->kv_heads >= 0 || c->heads >= 0)
        fprintf(out, ", %" G_GINT64_FORMAT " %s heads", MAX(c->kv_heads, c->heads),
                c->kv_heads >= 0 ? "KV" : "attention");
    if (c->head_size >= 0)
        fprintf(out, ", head size %" G_GINT64_FORMAT, c->head_size);
    if (c->max_length)
        fprintf(out, "; max_length %" G_GINT64_FORMAT, c->max_length);
    fprintf(out, "; past_present_share_buffer %s",
            c->share_buffer ? "true: one buffer of max_length tokens per K and V, written in place (no past copy)"
                            : "false");
    kv_config_extras(kv, out);
    fputc('\n', out);
}

void fp_report_kv_cross_text(const fp_kv_cache *kv, fp_dtype dtype, int64_t block, const char *label, FILE *out)
{
    if (!kv->n_cross)
        return;
    uint64_t per_seq = fp_kv_cache_cross_per_sequence(kv, dtype), held = fp_kv_cache_cross(kv, dtype, block);
    g_autofree char *tokens = kv->cross_tokens > 0 ? g_strdup_printf("%" G_GINT64_FORMAT, kv->cross_tokens)
                                                   : g_strdup(kv->cross_dim ? kv->cross_dim : "?");
    g_autofree char *h = held == UINT64_MAX ? g_strdup("unknown") : fp_format_bytes(held);
    fprintf(out,
            "%scross-attention K and V of %u layers at the encoder's %s tokens, fixed whatever the context: ", label,
            kv->cross_layers, tokens);
    if (per_seq)
        fprintf(out, "%" G_GUINT64_FORMAT " bytes per sequence, ", per_seq);
    fprintf(out, "%s held now (in the cache)", h);
    if (held == UINT64_MAX && kv->cross_dim)
        fprintf(out, ": bind %s (the encoder's length; Whisper's is 1500) with --dim NAME=N", kv->cross_dim);
    fputc('\n', out);
}

/* The decoder's lines: the step searched, the cache per token, and after the answer the KV
 * capacity in tokens. */
static void headroom_decoder_text(const fp_headroom_decoder *dec, bool after, const fp_headroom_result *res, FILE *out)
{
    if (!after) {
        if (dec->context > 0)
            fprintf(out, "context     %" G_GINT64_FORMAT " tokens per sequence%s%s\n", dec->context,
                    dec->phase ? ", a " : "", dec->phase ? dec->phase : "");
        fprintf(out, "kv cache    %" G_GUINT64_FORMAT " bytes per token (%u layers, %s)", dec->bytes_per_token,
                dec->kv->layers, dec->kv_dtype != FP_DT_UNDEFINED ? fp_dtype_name(dec->kv_dtype) : "mixed dtypes");
        if (dec->block)
            fprintf(out, ", blocks of %" G_GINT64_FORMAT " tokens", dec->block);
        fputc('\n', out);
        fp_report_kv_cross_text(dec->kv, dec->kv_dtype, dec->block, "  ", out);
        fp_report_kv_config_text(dec->kv, "kv facts    ", out);
        return;
    }
    int64_t tokens = fp_report_kv_capacity_tokens(dec, res);
    if (tokens >= 0)
        fprintf(out,
                "kv capacity %" G_GINT64_FORMAT " tokens in the memory the weights and the activations%s at batch "
                "%" G_GINT64_FORMAT " leave\n",
                tokens, dec->kv->n_cross ? " and the cross-attention K and V" : "", res->max_batch);
}

void fp_report_headroom_text(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                             const fp_diag *diag, bool verbose, FILE *out)
{
    g_autofree char *cap = fp_format_bytes(q->capacity), *rsv = fp_format_bytes(q->reserve);
    g_autofree char *use = fp_format_bytes(res->usable), *w = fp_format_bytes(res->weight_bytes);
    g_autofree char *at = fp_format_bytes(res->bytes_at_max), *ar = fp_format_bytes(res->arena_at_max);
    fprintf(out, "model       %s\n", m->path);
    g_autofree char *spec = q->reserve_spec ? g_strdup_printf(" (%s)", q->reserve_spec) : g_strdup("");
    fprintf(out, "capacity    %s%s%s%s, reserve %s%s: %s usable\n", cap, q->device ? " (" : "",
            q->device ? q->device : "", q->device ? ")" : "", rsv, spec, use);
    fprintf(out, "batch       %s\n", res->batch_desc);
    fprintf(out, "plan        %s strategy, %s schedule, %u batches planned\n",
            fp_memplan_strategy_name(q->mem->strategy),
            q->mem->schedule == FP_SCHEDULE_OPTIMIZED ? "optimized" : "given", res->evaluations);
    if (q->weight_dtype) {
        g_autofree char *kept = quantized_kept(q->weight_quantized);
        fprintf(out, "weights     %s at %s (--weight-dtype%s)\n", w, q->weight_dtype, kept);
    }
    if (q->dec.kv)
        headroom_decoder_text(&q->dec, false, res, out);
    g_autofree char *kv = q->dec.kv ? fp_format_bytes(res->outside_at_max) : NULL;
    g_autofree char *kvs = kv ? g_strdup_printf(" + KV cache %s", kv) : g_strdup("");
    if (res->max_batch == 0) {
        fprintf(out, "max batch   0: batch 1 needs %s (weights %s%s + activations %s), more than %s usable\n", at, w,
                kvs, ar, use);
    } else {
        fprintf(out, "max batch   %" G_GINT64_FORMAT "%s\n", res->max_batch,
                res->at_limit ? " (the search limit: memory allows at least this)" : "");
        fprintf(out, "at max      %s = weights %s%s + activations %s\n", at, w, kvs, ar);
        if (q->dec.kv)
            headroom_decoder_text(&q->dec, true, res, out);
        if (!res->at_limit) {
            g_autofree char *above = res->bytes_above == UINT64_MAX ? g_strdup("more than 2^64 bytes")
                                                                    : fp_format_bytes(res->bytes_above);
            fprintf(out, "batch %-5" G_GINT64_FORMAT " %s: does not fit\n", res->max_batch + 1, above);
        }
    }
    if (verbose)
        diag_text(diag, out);
}
