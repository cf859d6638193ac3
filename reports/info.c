/* info.c - the `fuseplan info` report. */
#include "info.h"

#include "reports/format.h"

static int hist_cmp(const void *a, const void *b)
{
    const fp_info_hist_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return g_strcmp0(x->op_type, y->op_type);
}

fp_info_hist_row *fp_report_op_histogram(const fp_model *m, guint *n_rows)
{
    g_autoptr(GHashTable) h = g_hash_table_new(g_direct_hash, g_direct_equal); /* interned names */
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = g_ptr_array_index(m->graphs, gi);
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g_ptr_array_index(g->nodes, i);
            if (n->flags & FP_NODE_REMOVED)
                continue;
            gpointer c = g_hash_table_lookup(h, n->op_type);
            g_hash_table_insert(h, (gpointer)n->op_type, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(c) + 1));
        }
    }
    fp_info_hist_row *rows = g_new(fp_info_hist_row, g_hash_table_size(h) + 1);
    guint k = 0;
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, &key, &val))
        rows[k++] = (fp_info_hist_row){key, GPOINTER_TO_SIZE(val)};
    qsort(rows, k, sizeof *rows, hist_cmp);
    *n_rows = k;
    return rows;
}

const char *fp_report_opset_domain(const char *d) { return *d ? d : "ai.onnx"; }

static void text_values(const char *title, GPtrArray *vals, FILE *out)
{
    fprintf(out, "%s (%u)\n", title, vals->len);
    for (guint i = 0; i < vals->len; i++) {
        const fp_value *v = g_ptr_array_index(vals, i);
        g_autofree char *s = fp_shape_to_string(&v->shape);
        fprintf(out, "  %-32s %-9s %s\n", v->name, fp_dtype_name(v->dtype), s);
    }
}

void fp_report_info_text(const fp_model *m, FILE *out)
{
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    g_autofree char *fsize = fp_format_bytes(m->file_size);
    g_autofree char *pbytes = fp_format_bytes(st.param_bytes);
    g_autofree char *params = fp_format_count(st.params);
    fprintf(out, "model      %s\n", m->path);
    fprintf(out, "format     %s, %s\n", m->format, fsize);
    fprintf(out, "producer   %s%s%s\n", *m->producer_name ? m->producer_name : "(unknown)",
            *m->producer_version ? " " : "", m->producer_version);
    fprintf(out, "ir version %" G_GINT64_FORMAT "\n", m->ir_version);
    fprintf(out, "opsets     ");
    for (uint32_t i = 0; i < m->n_opsets; i++)
        fprintf(out, "%s%s %" G_GINT64_FORMAT, i ? ", " : "", fp_report_opset_domain(m->opsets[i].domain),
                m->opsets[i].version);
    fprintf(out, "\n");
    fprintf(out, "graphs     %u (%u subgraph%s)\n", m->graphs->len, m->graphs->len - 1, m->graphs->len == 2 ? "" : "s");
    fprintf(out, "nodes      %" G_GUINT64_FORMAT " (all graphs)\n", st.nodes);
    fprintf(out, "parameters %s in %u initializers, %s\n", params, m->main->initializers->len, pbytes);
    text_values("inputs", m->main->inputs, out);
    text_values("outputs", m->main->outputs, out);
    guint n_rows = 0;
    g_autofree fp_info_hist_row *rows = fp_report_op_histogram(m, &n_rows);
    fprintf(out, "op types (%u)\n", n_rows);
    for (guint i = 0; i < n_rows; i++)
        fprintf(out, "  %-32s %" G_GUINT64_FORMAT "\n", rows[i].op_type, rows[i].count);
}
