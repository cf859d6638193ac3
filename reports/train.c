/* train.c - `fuseplan train` as text: the step's memory by part, the peak and where, FLOPs, the
 * largest saved tensors with the reason each is kept, the decomposed ops recognized, headroom. */
#include "reports/train.h"

#include <string.h>

#include "reports/format.h"

static const char *optimizer_state(fp_train_optimizer o)
{
    switch (o) {
    case FP_OPT_SGD: return "none";
    case FP_OPT_MOMENTUM: return "one momentum buffer a parameter";
    default: return "two moments a parameter";
    }
}

static void line(FILE *out, const char *what, uint64_t bytes, const char *note)
{
    g_autofree char *mb = fp_format_mb(bytes);
    fprintf(out, "  %-22s %12s%s%s\n", what, mb, note ? "  " : "", note ? note : "");
}

static gint by_bytes(gconstpointer a, gconstpointer b)
{
    const fp_saved_item *x = *(const fp_saved_item *const *)a, *y = *(const fp_saved_item *const *)b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The saved tensors that count (first keeper of each storage, auxiliaries), largest first. */
static void saved_table(const fp_train_report *r, FILE *out)
{
    const fp_train_saved *s = &r->t->saved;
    g_autoptr(GPtrArray) rows = g_ptr_array_new();
    for (guint i = 0; i < s->items->len; i++) {
        const fp_saved_item *it = &g_array_index(s->items, fp_saved_item, i);
        if (it->counted)
            g_ptr_array_add(rows, (gpointer)it);
    }
    g_ptr_array_sort(rows, by_bytes);
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

void fp_report_train_text(const fp_train_report *r, FILE *out)
{
    const fp_training *t = r->t;
    const fp_train_step *st = &t->step;
    fprintf(out, "model   %s\n", r->model_path);
    if (t->a->batch_note)
        fprintf(out, "        %s\n", t->a->batch_note);
    fprintf(out, "device  %s: %s\n", t->device->name, t->device->description);
    fprintf(out, "train   batch %" G_GINT64_FORMAT ", optimizer %s, precision %s\n", t->batch,
            fp_train_optimizer_name(r->optimizer), fp_train_precision_name(r->precision));
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
    g_autofree char *fwd = fp_format_count(st->forward_flops), *bwd = fp_format_count(st->backward_flops);
    fprintf(out, "flops   forward %s, backward %s\n", fwd, bwd);
    saved_table(r, out);
    if (t->headroom_note) {
        fprintf(out, "\nheadroom %s\n", t->headroom_note);
    } else if (t->searched) {
        g_autofree char *usable = fp_format_mb(t->usable_bytes);
        if (t->max_batch)
            fprintf(out, "\nheadroom max batch %" G_GINT64_FORMAT " on %s (%s usable after a %.0f%% reserve)\n",
                    t->max_batch, t->device->name, usable, r->reserve * 100);
        else
            fprintf(out, "\nheadroom not even batch 1 fits on %s (%s usable after a %.0f%% reserve)\n",
                    t->device->name, usable, r->reserve * 100);
    }
}
