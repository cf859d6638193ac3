/* shapes_json.c - the `shapes` JSON document (docs/json.md). */
#include "reports/json.h"
#include "passes/metrics.h"

static void member_int(JsonBuilder *b, const char *name, int64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

JsonNode *fp_report_shapes_json(const fp_model *m, const fp_diag *diag)
{
    g_autoptr(GPtrArray) nodes = fp_report_shapes_nodes(m);
    fp_shapes_totals t = {0};
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    member_int(b, "schema", FP_JSON_SCHEMA);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, m->path);
    json_builder_set_member_name(b, "nodes");
    json_builder_begin_array(b);
    for (guint i = 0; i < nodes->len; i++) {
        const fp_node *n = nodes->pdata[i];
        const fp_metrics *mt = &n->metrics;
        bool folded = (n->flags & FP_NODE_FOLDED) != 0;
        fp_report_shapes_add(&t, n);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, n->name);
        json_builder_set_member_name(b, "op");
        json_builder_add_string_value(b, n->op_type);
        if (n->graph != m->main) {
            json_builder_set_member_name(b, "graph");
            json_builder_add_string_value(b, n->graph->name);
        }
        json_builder_set_member_name(b, "outputs");
        json_builder_begin_array(b);
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                fp_json_add_value(b, n->outputs[k]);
        json_builder_end_array(b);
        const char *names[] = {"flops", "bytes_read", "bytes_written", "params"};
        uint64_t vals[] = {mt->flops, mt->bytes_act + mt->bytes_weight, mt->bytes_out, mt->params};
        for (int k = 0; k < 4; k++) {
            json_builder_set_member_name(b, names[k]);
            if (n->metrics_known)
                json_builder_add_int_value(b, (gint64)vals[k]);
            else
                json_builder_add_null_value(b);
        }
        json_builder_set_member_name(b, "bytes_read_weights");
        if (n->metrics_known)
            json_builder_add_int_value(b, (gint64)mt->bytes_weight);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "intensity");
        if (n->metrics_known)
            json_builder_add_double_value(b, fp_metrics_intensity(mt));
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "folded");
        json_builder_add_boolean_value(b, folded);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "totals");
    json_builder_begin_object(b);
    member_int(b, "runtime_ops", (gint64)t.runtime);
    member_int(b, "folded_ops", (gint64)t.folded);
    member_int(b, "unknown_ops", (gint64)t.unknown);
    member_int(b, "flops", (gint64)t.flops);
    member_int(b, "bytes", (gint64)t.bytes);
    member_int(b, "params", (gint64)t.params);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "diagnostics");
    json_builder_begin_array(b);
    for (guint i = 0; diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "level");
        json_builder_add_string_value(b, e->level == FP_DIAG_WARNING ? "warning" : e->level == FP_DIAG_ERROR ? "error" : "info");
        json_builder_set_member_name(b, "code");
        json_builder_add_string_value(b, e->code);
        json_builder_set_member_name(b, "node");
        if (e->node)
            json_builder_add_string_value(b, e->node);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "message");
        json_builder_add_string_value(b, e->message);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
