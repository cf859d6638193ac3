/* shapes_json.c - the `shapes` JSON document (docs/json.md), written piece by piece
 * (reports/json_writer.h): it lists every node. */
#include "reports/json.h"
#include "passes/metrics.h"

/* A metric: null when the node's metrics are not known. */
static void metric(fp_jsonw *w, const char *member, const fp_node *n, uint64_t v)
{
    if (n->metrics_known)
        fp_jsonw_int(w, member, (gint64)v);
    else
        fp_jsonw_null(w, member);
}

void fp_report_shapes_json(const fp_model *m, const fp_diag *diag, const char *batch_note, uint32_t unknown_values,
                           fp_jsonw *w)
{
    g_autoptr(GPtrArray) nodes = fp_report_shapes_nodes(m);
    fp_shapes_totals t = {0};
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    fp_jsonw_str(w, "path", m->path);
    fp_jsonw_bound(w, batch_note, unknown_values);
    fp_jsonw_begin_array(w, "nodes");
    for (guint i = 0; i < nodes->len; i++) {
        const fp_node *n = nodes->pdata[i];
        const fp_metrics *mt = &n->metrics;
        fp_report_shapes_add(&t, n);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", n->name);
        fp_jsonw_name(w, "op", n->op_type); /* interned by the model */
        if (n->graph != m->main)
            fp_jsonw_str(w, "graph", n->graph->name);
        fp_jsonw_begin_array(w, "outputs");
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                fp_jsonw_value(w, n->outputs[k]);
        fp_jsonw_end_array(w);
        metric(w, "flops", n, mt->flops);
        metric(w, "bytes_read", n, mt->bytes_act + mt->bytes_weight);
        metric(w, "bytes_written", n, mt->bytes_out);
        metric(w, "params", n, mt->params);
        metric(w, "bytes_read_weights", n, mt->bytes_weight);
        if (n->metrics_known)
            fp_jsonw_num(w, "intensity", fp_metrics_intensity(mt));
        else
            fp_jsonw_null(w, "intensity");
        fp_jsonw_bool(w, "folded", (n->flags & FP_NODE_FOLDED) != 0);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_begin_object(w, "totals");
    fp_jsonw_int(w, "runtime_ops", (gint64)t.runtime);
    fp_jsonw_int(w, "folded_ops", (gint64)t.folded);
    fp_jsonw_int(w, "unknown_ops", (gint64)t.unknown);
    fp_jsonw_int(w, "flops", (gint64)t.flops);
    fp_jsonw_int(w, "bytes", (gint64)t.bytes);
    fp_jsonw_int(w, "params", (gint64)t.params);
    fp_jsonw_end_object(w);
    fp_jsonw_diagnostics(w, "diagnostics", diag);
    fp_jsonw_end_object(w);
}
