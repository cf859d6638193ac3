/* info_json.c - the `info` JSON document (docs/json.md). */
#include "reports/json.h"

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
        json_builder_set_member_name(b, fp_report_opset_domain(m->opsets[i].domain));
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
    g_autofree fp_info_hist_row *rows = fp_report_op_histogram(m, &n_rows);
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
