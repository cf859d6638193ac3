/* info.c - the `fuseplan info` report. */
#include "info.h"

#include "json_common.h"
#include "reports/format.h"

typedef struct {
    const char *op_type;
    uint64_t count;
} hist_row;

static int hist_cmp(const void *a, const void *b)
{
    const hist_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return g_strcmp0(x->op_type, y->op_type);
}

/* Op-type histogram over all graphs, most frequent first; caller g_free()s. */
static hist_row *histogram(const fp_model *m, guint *n_rows)
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
    hist_row *rows = g_new(hist_row, g_hash_table_size(h) + 1);
    guint k = 0;
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, &key, &val))
        rows[k++] = (hist_row){key, GPOINTER_TO_SIZE(val)};
    qsort(rows, k, sizeof *rows, hist_cmp);
    *n_rows = k;
    return rows;
}

static const char *opset_domain(const char *d) { return *d ? d : "ai.onnx"; }

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
        fprintf(out, "%s%s %" G_GINT64_FORMAT, i ? ", " : "", opset_domain(m->opsets[i].domain), m->opsets[i].version);
    fprintf(out, "\n");
    fprintf(out, "graphs     %u (%u subgraph%s)\n", m->graphs->len, m->graphs->len - 1, m->graphs->len == 2 ? "" : "s");
    fprintf(out, "nodes      %" G_GUINT64_FORMAT " (all graphs)\n", st.nodes);
    fprintf(out, "parameters %s in %u initializers, %s\n", params, m->main->initializers->len, pbytes);
    text_values("inputs", m->main->inputs, out);
    text_values("outputs", m->main->outputs, out);
    guint n_rows = 0;
    g_autofree hist_row *rows = histogram(m, &n_rows);
    fprintf(out, "op types (%u)\n", n_rows);
    for (guint i = 0; i < n_rows; i++)
        fprintf(out, "  %-32s %" G_GUINT64_FORMAT "\n", rows[i].op_type, rows[i].count);
}

static void json_values(JsonBuilder *b, const char *member, GPtrArray *vals)
{
    json_builder_set_member_name(b, member);
    json_builder_begin_array(b);
    for (guint i = 0; i < vals->len; i++)
        fp_json_add_value(b, g_ptr_array_index(vals, i));
    json_builder_end_array(b);
}

JsonNode *fp_report_info_json(const fp_model *m)
{
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_int_value(b, FP_JSON_SCHEMA);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, m->path);
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, m->format);
    json_builder_set_member_name(b, "file_bytes");
    json_builder_add_int_value(b, (gint64)m->file_size);
    json_builder_set_member_name(b, "producer");
    json_builder_add_string_value(b, m->producer_name);
    json_builder_set_member_name(b, "producer_version");
    json_builder_add_string_value(b, m->producer_version);
    json_builder_set_member_name(b, "ir_version");
    json_builder_add_int_value(b, m->ir_version);
    json_builder_set_member_name(b, "opsets");
    json_builder_begin_object(b);
    for (uint32_t i = 0; i < m->n_opsets; i++) {
        json_builder_set_member_name(b, opset_domain(m->opsets[i].domain));
        json_builder_add_int_value(b, m->opsets[i].version);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "graphs");
    json_builder_add_int_value(b, m->graphs->len);
    json_builder_set_member_name(b, "nodes");
    json_builder_add_int_value(b, (gint64)st.nodes);
    json_builder_set_member_name(b, "op_histogram");
    json_builder_begin_object(b);
    guint n_rows = 0;
    g_autofree hist_row *rows = histogram(m, &n_rows);
    for (guint i = 0; i < n_rows; i++) {
        json_builder_set_member_name(b, rows[i].op_type);
        json_builder_add_int_value(b, (gint64)rows[i].count);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "params");
    json_builder_add_int_value(b, (gint64)st.params);
    json_builder_set_member_name(b, "param_bytes");
    json_builder_add_int_value(b, (gint64)st.param_bytes);
    json_values(b, "inputs", m->main->inputs);
    json_values(b, "outputs", m->main->outputs);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
