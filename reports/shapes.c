/* shapes.c - the `fuseplan shapes` report. */
#include "shapes.h"

#include "passes/metrics.h"
#include "reports/format.h"

GPtrArray *fp_report_shapes_nodes(const fp_model *m)
{
    GPtrArray *all = g_ptr_array_new();
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        uint32_t n = 0;
        fp_node *const *order = fp_graph_order(g, &n, NULL);
        for (uint32_t i = 0; i < (order ? n : g->nodes->len); i++) {
            fp_node *node = order ? order[i] : g->nodes->pdata[i];
            if (!(node->flags & FP_NODE_REMOVED))
                g_ptr_array_add(all, node);
        }
    }
    return all;
}

void fp_report_shapes_add(fp_shapes_totals *t, const fp_node *n)
{
    if (n->flags & FP_NODE_FOLDED) {
        t->folded++;
        return;
    }
    t->runtime++;
    if (!n->metrics_known) {
        t->unknown++;
        return;
    }
    t->flops += n->metrics.flops;
    t->bytes += n->metrics.bytes_act + n->metrics.bytes_weight + n->metrics.bytes_out;
    t->params += n->metrics.params;
}

static char *outputs_text(const fp_node *n)
{
    GString *s = g_string_new(NULL);
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        if (!n->outputs[k])
            continue;
        g_autofree char *sh = fp_shape_to_string(&n->outputs[k]->shape);
        g_string_append_printf(s, "%s%s[%s]", s->len ? " " : "", fp_dtype_name(n->outputs[k]->dtype), sh);
    }
    return g_string_free(s, FALSE);
}

void fp_report_shapes_text(const fp_model *m, const fp_diag *diag, const char *batch_note, bool verbose, FILE *out)
{
    g_autoptr(GPtrArray) nodes = fp_report_shapes_nodes(m);
    fp_shapes_totals t = {0};
    fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", "node", "op", "outputs", "FLOPs", "bytes", "FLOP/B");
    for (guint i = 0; i < nodes->len; i++) {
        const fp_node *n = nodes->pdata[i];
        fp_report_shapes_add(&t, n);
        g_autofree char *outs = outputs_text(n);
        const fp_metrics *mt = &n->metrics;
        if (n->flags & FP_NODE_FOLDED) {
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", n->name, n->op_type, outs, "folded", "-", "-");
        } else if (!n->metrics_known) {
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", n->name, n->op_type, outs, "?", "?", "?");
        } else {
            g_autofree char *f = fp_format_count(mt->flops);
            g_autofree char *b = fp_format_bytes(mt->bytes_act + mt->bytes_weight + mt->bytes_out);
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9.2f\n", n->name, n->op_type, outs, f, b,
                    fp_metrics_intensity(mt));
        }
    }
    g_autofree char *f = fp_format_count(t.flops), *b = fp_format_bytes(t.bytes), *p = fp_format_count(t.params);
    fprintf(out,
            "\ntotal: %" G_GUINT64_FORMAT " runtime ops (%" G_GUINT64_FORMAT
            " shape computations folded, not counted), "
            "%s FLOPs, %s moved, %s parameters read\n",
            t.runtime, t.folded, f, b, p);
    if (t.unknown)
        fprintf(out, "%" G_GUINT64_FORMAT " ops have unknown shapes and are not in the totals (--verbose lists them)\n",
                t.unknown);
    if (batch_note)
        fprintf(out, "bound: %s\n", batch_note);
    for (guint i = 0; verbose && diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        fprintf(out, "%s: %s\n",
                e->level == FP_DIAG_WARNING ? "warning"
                : e->level == FP_DIAG_ERROR ? "error"
                                            : "note",
                e->message);
    }
}
