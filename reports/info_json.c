/* info_json.c - the `info` JSON document (docs/json.md). */
#include "reports/json.h"

static void json_values(fp_jsonw *w, const char *member, GPtrArray *vals)
{
    fp_jsonw_begin_array(w, member);
    for (guint i = 0; i < vals->len; i++)
        fp_jsonw_value(w, g_ptr_array_index(vals, i));
    fp_jsonw_end_array(w);
}

void fp_report_info_json(const fp_model *m, fp_jsonw *w)
{
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", m->path);
    fp_jsonw_str(w, "format", m->format);
    fp_jsonw_int(w, "file_bytes", (gint64)m->file_size);
    fp_jsonw_str(w, "producer", m->producer_name);
    fp_jsonw_str(w, "producer_version", m->producer_version);
    fp_jsonw_int(w, "ir_version", m->ir_version);
    fp_jsonw_begin_object(w, "opsets");
    for (uint32_t i = 0; i < m->n_opsets; i++) /* member names: the model's strings, kept with it */
        fp_jsonw_int(w, fp_report_opset_domain(m->opsets[i].domain), m->opsets[i].version);
    fp_jsonw_end_object(w);
    fp_jsonw_int(w, "graphs", m->graphs->len);
    fp_jsonw_int(w, "nodes", (gint64)st.nodes);
    fp_jsonw_begin_object(w, "op_histogram");
    guint n_rows = 0;
    g_autofree fp_info_hist_row *rows = fp_report_op_histogram(m, &n_rows);
    for (guint i = 0; i < n_rows; i++)
        fp_jsonw_int(w, rows[i].op_type, (gint64)rows[i].count);
    fp_jsonw_end_object(w);
    fp_jsonw_int(w, "params", (gint64)st.params);
    fp_jsonw_int(w, "param_bytes", (gint64)st.param_bytes);
    json_values(w, "inputs", m->main->inputs);
    json_values(w, "outputs", m->main->outputs);
    fp_jsonw_end_object(w);
}
