/* shapes.c - the `fuseplan shapes` report. */
#include "shapes.h"

#include "json_common.h"
#include "passes/metrics.h"
#include "reports/format.h"

/* Nodes of every graph, each graph in topological order (file order if it has a cycle). */
static GPtrArray *ordered_nodes(const fp_model *m)
{
    GPtrArray *all = g_ptr_array_new();
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        uint32_t n = 0;
        g_autofree fp_node **order = fp_graph_topo(g, &n, NULL);
        for (uint32_t i = 0; i < (order ? n : g->nodes->len); i++) {
            fp_node *node = order ? order[i] : g->nodes->pdata[i];
            if (!(node->flags & FP_NODE_REMOVED))
                g_ptr_array_add(all, node);
        }
    }
    return all;
}

typedef struct {
    uint64_t runtime, folded, unknown, flops, bytes, params;
} totals;

static void add_totals(totals *t, const fp_node *n)
{
    if (n->flags & FP_NODE_FOLDED) {
        t->folded++;
        return;
    }
    t->runtime++;
    if (!n->metrics.known) {
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

void fp_report_shapes_text(const fp_model *m, const fp_diag *diag, bool verbose, FILE *out)
{
    g_autoptr(GPtrArray) nodes = ordered_nodes(m);
    totals t = {0};
    fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", "node", "op", "outputs", "FLOPs", "bytes", "FLOP/B");
    for (guint i = 0; i < nodes->len; i++) {
        const fp_node *n = nodes->pdata[i];
        add_totals(&t, n);
        g_autofree char *outs = outputs_text(n);
        const fp_metrics *mt = &n->metrics;
        if (n->flags & FP_NODE_FOLDED) {
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", n->name, n->op_type, outs, "folded", "-", "-");
        } else if (!mt->known) {
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9s\n", n->name, n->op_type, outs, "?", "?", "?");
        } else {
            g_autofree char *f = fp_format_count(mt->flops);
            g_autofree char *b = fp_format_bytes(mt->bytes_act + mt->bytes_weight + mt->bytes_out);
            fprintf(out, "%-36s %-20s %-34s %12s %12s %9.2f\n", n->name, n->op_type, outs, f, b, fp_metrics_intensity(mt));
        }
    }
    g_autofree char *f = fp_format_count(t.flops), *b = fp_format_bytes(t.bytes), *p = fp_format_count(t.params);
    fprintf(out, "\ntotal: %" G_GUINT64_FORMAT " runtime ops (%" G_GUINT64_FORMAT " shape computations folded, not counted), "
                 "%s FLOPs, %s moved, %s parameters read\n",
            t.runtime, t.folded, f, b, p);
    if (t.unknown)
        fprintf(out, "%" G_GUINT64_FORMAT " ops have unknown shapes and are not in the totals (--verbose lists them)\n",
                t.unknown);
    for (guint i = 0; verbose && diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        fprintf(out, "%s: %s\n", e->level == FP_DIAG_WARNING ? "warning" : e->level == FP_DIAG_ERROR ? "error" : "note",
                e->message);
    }
}

static void member_int(JsonBuilder *b, const char *name, int64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

JsonNode *fp_report_shapes_json(const fp_model *m, const fp_diag *diag)
{
    g_autoptr(GPtrArray) nodes = ordered_nodes(m);
    totals t = {0};
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
        add_totals(&t, n);
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
            if (mt->known)
                json_builder_add_int_value(b, (gint64)vals[k]);
            else
                json_builder_add_null_value(b);
        }
        json_builder_set_member_name(b, "bytes_read_weights");
        if (mt->known)
            json_builder_add_int_value(b, (gint64)mt->bytes_weight);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "intensity");
        if (mt->known)
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
