/* train_html.c - `fuseplan train -f html`: one self-contained page (libxml2 tree, no scripts): the
 * step's memory as cards and a bar of its parts, the saved tensors with the reason each is kept,
 * the recompute plan beside Chen's and the budget-vs-extra-FLOPs curve, the headroom. */
#include "reports/html_tree.h"
#include "reports/json.h"

#include "reports/format.h"

static void mb_card(xmlNodePtr cards, const char *key, uint64_t bytes, const char *sub)
{
    g_autofree char *v = fp_format_mb(bytes);
    card(cards, key, v, sub);
}

static void cards(xmlNodePtr main, const fp_train_report *r)
{
    const fp_train_step *st = &r->t->step;
    xmlNodePtr cs = elc(main, "div", "cards", NULL);
    if (r->t->backward_ops) { /* a graph holding its own backward: its liveness */
        mb_card(cs, "variables", r->t->variable_bytes, "parameters and optimizer state");
        mb_card(cs, "activations", r->t->graph_arena, "the graph's planned arena");
        mb_card(cs, "step peak", r->t->variable_bytes + r->t->graph_arena, "the graph's own backward");
        return;
    }
    g_autofree char *np = fp_format_count(r->t->saved.parameters);
    mb_card(cs, "parameters", st->parameter_bytes, np);
    mb_card(cs, "gradients", st->gradient_bytes, "one per parameter");
    mb_card(cs, "optimizer state", st->optimizer_bytes, fp_train_optimizer_name(r->optimizer));
    mb_card(cs, "saved activations", st->saved_bytes, "at the end of forward");
    g_autofree char *at = st->peak_node ? g_strdup_printf("%s, %s", st->peak_phase, st->peak_node->name)
                                        : g_strdup(st->peak_phase);
    mb_card(cs, "step peak", st->peak_bytes, at);
}

/* The counted saves, largest first (at most r->top rows, 0: all). */
static void saved(xmlNodePtr main, const fp_train_report *r)
{
    const fp_train_saved *s = &r->t->saved;
    xmlNodePtr sec = section(main, "saved", "What backward keeps");
    g_autoptr(GPtrArray) rows = fp_train_saved_counted(s);
    xmlNodePtr table = el(sec, "table", NULL);
    static const char *const cols[] = {"op", "node", "tensor", "bytes", "why", NULL};
    header_row(table, cols, "...n.");
    xmlNodePtr body = el(table, "tbody", NULL);
    guint shown = r->top && r->top < rows->len ? r->top : rows->len;
    for (guint i = 0; i < shown; i++) {
        const fp_saved_item *it = rows->pdata[i];
        xmlNodePtr tr = el(body, "tr", NULL);
        td(tr, it->node->op_type, false);
        el(td(tr, NULL, false), "code", it->node->name);
        td(tr, it->what, false);
        g_autofree char *b = fp_format_mb(it->bytes);
        td(tr, b, true);
        td(tr, it->why, false);
    }
    if (shown < rows->len)
        elcf(sec, "p", "meta", "%u more (--top 0 lists them all)", rows->len - shown);
    for (guint i = 0; i < s->notes->len; i++)
        elcf(sec, "p", "meta", "decomposed: %s", (const char *)s->notes->pdata[i]);
}

/* The curve: a row per budget with a bar of its extra FLOPs against the forward's. */
static void curve(xmlNodePtr sec, const fp_training *t)
{
    xmlNodePtr table = el(sec, "table", NULL);
    static const char *const cols[] = {"budget", "bytes", "extra FLOPs", "of forward", "", NULL};
    header_row(table, cols, ".nnn.");
    xmlNodePtr body = el(table, "tbody", NULL);
    double fwd = (double)MAX(t->step.forward_flops, 1);
    for (int i = 0; i < FP_TRAINING_CURVE; i++) {
        const fp_training_point *pt = &t->curve[i];
        xmlNodePtr tr = el(body, "tr", NULL);
        g_autofree char *share = pt->share > 0 ? g_strdup_printf("%.0f%%", pt->share * 100) : g_strdup("the least");
        g_autofree char *b = fp_format_mb(pt->budget), *f = fp_format_flops(pt->flops);
        td(tr, share, false);
        td(tr, b, true);
        td(tr, pt->feasible ? f : "does not fit", true);
        g_autofree char *pct = g_strdup_printf("%.0f%%", 100.0 * (double)pt->flops / fwd);
        td(tr, pt->feasible ? pct : "", true);
        xmlNodePtr bar = elc(td(tr, NULL, false), "div", "bar", NULL);
        char w[G_ASCII_DTOSTR_BUF_SIZE];
        g_autofree char *style =
            g_strdup_printf("width:%spx;height:10px;background:var(--accent)",
                            g_ascii_formatd(w, sizeof w, "%.0f",
                                            pt->feasible ? 200.0 * MIN(1.0, (double)pt->flops / fwd) : 0));
        attr(bar, "style", style);
    }
}

static void recompute(xmlNodePtr main, const fp_train_report *r)
{
    const fp_training *t = r->t;
    if (!t->planned)
        return;
    xmlNodePtr sec = section(main, "recompute", "Recompute plan");
    g_autofree char *budget = fp_format_mb(t->budget), *peak = fp_format_mb(t->plan.peak_bytes);
    g_autofree char *flops = fp_format_flops(t->plan.flops), *tm = fp_format_time(t->plan.time_s);
    if (t->plan.feasible)
        elf(sec, "p",
            "Budget %s: %u segments recomputed, %s more in backward (est. %s on %s); saved activations "
            "at most %s.",
            budget, t->plan.segments, flops, tm, t->device->name, peak);
    else
        elf(sec, "p", "Budget %s: no plan fits.", budget);
    g_autofree char *cpeak = fp_format_mb(t->chen.peak_bytes), *cflops = fp_format_flops(t->chen.flops);
    elcf(sec, "p", "meta", "Baseline (Chen et al., sqrt(n) segments): %u segments, %s more, at most %s.",
         t->chen.segments, cflops, cpeak);
    curve(sec, t);
}

static xmlDocPtr build(const fp_train_report *r)
{
    g_autofree char *title = g_strdup_printf("fuseplan train: %s", r->model_path);
    xmlNodePtr main;
    xmlDocPtr doc = fp_html_page(title, &main);
    elf(main, "h1", "Training step: %s", r->model_path);
    elcf(main, "p", "meta", "device %s \u00b7 batch %" G_GINT64_FORMAT " \u00b7 optimizer %s \u00b7 precision %s",
         r->t->device->name, r->t->batch, fp_train_optimizer_name(r->optimizer), fp_train_precision_name(r->precision));
    if (r->t->sequence)
        elcf(main, "p", "meta",
             "decoder: a sequence of %" G_GINT64_FORMAT " tokens, %" G_GINT64_FORMAT " past, %u present outputs "
             "not kept%s%s%s",
             r->t->sequence, r->t->past, r->t->dropped_outputs, r->t->train.loss_logits ? ", cross-entropy on '" : "",
             r->t->train.loss_logits ? r->t->train.loss_logits->name : "", r->t->train.loss_logits ? "'" : "");
    cards(main, r);
    saved(main, r);
    recompute(main, r);
    if (r->t->searched) {
        xmlNodePtr sec = section(main, "headroom", "Training headroom");
        g_autofree char *usable = fp_format_mb(r->t->usable_bytes);
        elf(sec, "p", "Max batch %" G_GINT64_FORMAT " on %s (%s usable).", r->t->max_batch, r->t->device->name, usable);
        elf(sec, "p", "Max batch %" G_GINT64_FORMAT " with the most recomputation (the least budget any plan fits).",
            r->t->max_batch_recompute);
        if (r->t->planned)
            elf(sec, "p", "Max batch %" G_GINT64_FORMAT " with recomputation at the budget's share.",
                r->t->max_batch_planned);
    }
    elf(el(main, "footer", NULL), "span", "fuseplan %s \u00b7 from the exported forward graph alone; nothing was run.",
        FP_VERSION);
    return doc;
}

void fp_report_train_html(const fp_train_report *r, FILE *out) { fp_html_write(build(r), out); }
