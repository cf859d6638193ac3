/* train.c - `fuseplan train` as text: the step's memory by part, the peak and where, FLOPs, the
 * largest saved tensors with the reason each is kept, the decomposed ops recognized, headroom. */
#include "reports/train.h"

#include <string.h>

#include "reports/format.h"

static const char *optimizer_state(fp_train_optimizer o)
{
    switch (o) {
    case FP_OPT_SGD:
        return "none";
    case FP_OPT_MOMENTUM:
        return "one momentum buffer a parameter";
    default:
        return "two moments a parameter";
    }
}

static void line(FILE *out, const char *what, uint64_t bytes, const char *note)
{
    g_autofree char *mb = fp_format_mb(bytes);
    fprintf(out, "  %-22s %12s%s%s\n", what, mb, note ? "  " : "", note ? note : "");
}

/* The saved tensors that count (first keeper of each storage, auxiliaries), largest first. */
static void saved_table(const fp_train_report *r, FILE *out)
{
    const fp_train_saved *s = &r->t->saved;
    g_autoptr(GPtrArray) rows = fp_train_saved_counted(s);
    fprintf(out, "\nsaved for backward  %u storages and auxiliaries, largest first\n", rows->len);
    guint shown = r->top && r->top < rows->len ? r->top : rows->len;
    for (guint i = 0; i < shown; i++) {
        const fp_saved_item *it = rows->pdata[i];
        g_autofree char *mb = fp_format_mb(it->bytes);
        fprintf(out, "  %-34s %-20s %-16s %10s  %s\n", it->node->name, it->node->op_type, it->what, mb, it->why);
    }
    if (shown < rows->len)
        fprintf(out, "  ... and %u more (--top 0 lists them all)\n", rows->len - shown);
    for (guint i = 0; i < s->notes->len; i++)
        fprintf(out, "decomposed  %s\n", (const char *)s->notes->pdata[i]);
    if (s->unknown)
        fprintf(out, "warning  %u saved tensors of unknown size are not counted (bind the shapes: --batch, --dim)\n",
                s->unknown);
}

/* The tensors a recomputed segment starts from, comma-separated (at most 4 named). Caller frees. */
static char *starts(const fp_training *t)
{
    GString *g = g_string_new(NULL);
    unsigned n = 0;
    for (uint32_t i = 0; i < t->stages.n; i++) {
        if (t->plan.mode[i] != FP_RC_START)
            continue;
        if (n++ < 4)
            g_string_append_printf(g, "%s%s", g->len ? ", " : "",
                                   t->stages.start[i] ? t->stages.start[i]->name : "the input");
    }
    if (n > 4)
        g_string_append_printf(g, " and %u more", n - 4);
    return g_string_free(g, FALSE);
}

/* Whether the plan is proven optimal, else how far its FLOPs may be above the optimum. */
static void search_text(const fp_rc_plan *p, FILE *out)
{
    if (p->exact) {
        fprintf(out, "  search: exact (no plan within the budget recomputes fewer FLOPs)\n");
        return;
    }
    g_autofree char *gap = fp_format_flops(p->flops - p->lower_flops), *lower = fp_format_flops(p->lower_flops);
    fprintf(out,
            "  search: approximate, at most %s (%.2f%% of the plan's) above the optimum: no plan recomputes "
            "less than %s\n",
            gap, 100.0 * (double)(p->flops - p->lower_flops) / (double)p->flops, lower);
}

/* The recompute plan at the budget, Chen's baseline and the budget curve. */
static void recompute_text(const fp_train_report *r, FILE *out)
{
    const fp_training *t = r->t;
    const fp_rc_plan *p = &t->plan, *c = &t->chen;
    g_autofree char *budget = fp_format_mb(t->budget), *peak = fp_format_mb(p->peak_bytes);
    g_autofree char *flops = fp_format_flops(p->flops), *tm = fp_format_time(p->time_s);
    fprintf(out, "\nrecompute  budget %s for saved activations, %u stages\n", budget, t->stages.n);
    if (!p->feasible) {
        g_autofree char *min = fp_format_mb(t->curve[FP_TRAINING_CURVE - 1].budget);
        fprintf(out, "  no plan fits: the least any plan holds is %s\n", min);
    } else {
        g_autofree char *names = starts(t), *end = fp_format_mb(p->end_bytes);
        fprintf(out,
                "  plan: %u segments recomputed, %s more in backward (est. %s on %s); saved activations at "
                "most %s, %s at the end of forward\n",
                p->segments, flops, tm, t->device->name, peak, end);
        search_text(p, out);
        if (*names)
            fprintf(out, "  kept to recompute from: %s\n", names);
    }
    g_autofree char *cpeak = fp_format_mb(c->peak_bytes), *cflops = fp_format_flops(c->flops);
    fprintf(out,
            "  baseline (Chen et al., sqrt(n) segments): %u segments recomputed, %s more, saved activations "
            "at most %s\n",
            c->segments, cflops, cpeak);
    fprintf(out, "  budget curve:");
    for (int i = 0; i < FP_TRAINING_CURVE; i++) {
        const fp_training_point *pt = &t->curve[i];
        g_autofree char *b = fp_format_mb(pt->budget), *f = fp_format_flops(pt->flops);
        if (pt->share > 0)
            fprintf(out, "%s %.0f%% (%s): %s", i ? ";" : "", pt->share * 100, b, pt->feasible ? f : "does not fit");
        else
            fprintf(out, "; the least, %s: %s", b, f);
    }
    fprintf(out, " more\n");
}

/* A graph holding its own backward: its liveness. */
static void graph_text(const fp_train_report *r, FILE *out)
{
    const fp_training *t = r->t;
    fprintf(out, "\nthe graph holds its backward pass (%u ops) and %u optimizer ops: its memory is its own liveness\n",
            t->backward_ops, t->optimizer_ops);
    line(out, "variables", t->variable_bytes, "parameters and optimizer state, as the graph keeps them");
    line(out, "activations", t->graph_arena, "planned arena, saved tensors and gradients included");
    line(out, "peak", t->variable_bytes + t->graph_arena, NULL);
}

/* A decoder: the sequence it trains at, its cache left out, the loss counted. */
static void decoder_text(const fp_training *t, FILE *out)
{
    if (!t->sequence)
        return;
    g_autofree char *seq = t->sequence > 0 ? g_strdup_printf("%" G_GINT64_FORMAT " tokens", t->sequence)
                                           : g_strdup("unknown tokens");
    fprintf(out, "decoder sequence of %s, %" G_GINT64_FORMAT " past, %u present outputs not kept", seq, t->past,
            t->dropped_outputs);
    if (t->train.loss_logits)
        fprintf(out, ", cross-entropy on '%s'", t->train.loss_logits->name);
    fprintf(out, "\n");
}

/* The headroom's lines: without recomputation, with the most of it, with the plan at the budget. */
static void headroom_text(const fp_train_report *r, FILE *out)
{
    const fp_training *t = r->t;
    g_autofree char *usable = fp_format_mb(t->usable_bytes);
    if (t->max_batch)
        fprintf(out, "\nheadroom max batch %" G_GINT64_FORMAT " on %s (%s usable after a %.0f%% reserve)\n",
                t->max_batch, t->device->name, usable, r->reserve * 100);
    else
        fprintf(out, "\nheadroom not even batch 1 fits on %s (%s usable after a %.0f%% reserve)\n", t->device->name,
                usable, r->reserve * 100);
    fprintf(out,
            "         max batch %" G_GINT64_FORMAT " with the most recomputation (the least budget any plan fits)\n",
            t->max_batch_recompute);
    if (t->planned)
        fprintf(out, "         max batch %" G_GINT64_FORMAT " with recomputation at the budget's share\n",
                t->max_batch_planned);
}

void fp_report_train_text(const fp_train_report *r, FILE *out)
{
    const fp_training *t = r->t;
    const fp_train_step *st = &t->step;
    fprintf(out, "model   %s\n", r->model_path);
    if (t->a->batch_note)
        fprintf(out, "        %s\n", t->a->batch_note);
    fprintf(out, "device  %s: %s\n", t->device->name, t->device->description);
    if (t->backward_ops) { /* its optimizer and precision are the graph's */
        fprintf(out, "train   batch %" G_GINT64_FORMAT ", the graph's own step\n", t->batch);
        graph_text(r, out);
        return;
    }
    fprintf(out, "train   batch %" G_GINT64_FORMAT ", optimizer %s, precision %s%s\n", t->batch,
            fp_train_optimizer_name(r->optimizer), fp_train_precision_name(r->precision),
            r->autograd == FP_TRAIN_AUTOGRAD_2 ? "" : ", saves as PyTorch 1.13's autograd makes them");
    decoder_text(t, out);
    g_autofree char *np = fp_format_count(t->saved.parameters);
    g_autofree char *pnote = g_strdup_printf("%s trainable values", np);
    fprintf(out, "\nstep memory\n");
    line(out, "parameters", st->parameter_bytes, pnote);
    line(out, "gradients", st->gradient_bytes, "one per parameter, made during backward");
    line(out, "optimizer state", st->optimizer_bytes, optimizer_state(r->optimizer));
    if (st->amp_cache_bytes)
        line(out, "autocast weight copies", st->amp_cache_bytes, "16-bit copies, forward and backward");
    line(out, "saved activations", st->saved_bytes, "held from forward until their backward ran");
    g_autofree char *at = st->peak_node ? g_strdup_printf("at %s (%s %s)", st->peak_phase, st->peak_node->op_type,
                                                          st->peak_node->name)
                                        : g_strdup_printf("at the %s", st->peak_phase);
    line(out, "peak", st->peak_bytes, at);
    g_autofree char *fwd = fp_format_flops(st->forward_flops), *bwd = fp_format_flops(st->backward_flops);
    fprintf(out, "flops   forward %s, backward %s\n", fwd, bwd);
    saved_table(r, out);
    if (t->planned)
        recompute_text(r, out);
    if (t->headroom_note)
        fprintf(out, "\nheadroom %s\n", t->headroom_note);
    else if (t->searched)
        headroom_text(r, out);
}
