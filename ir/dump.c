/* dump.c - readable text form of the IR (for --dump-after and debugging). */
#include "graph.h"

static void dump_value(const fp_value *v, FILE *out)
{
    g_autofree char *s = fp_shape_to_string(&v->shape);
    fprintf(out, "%%%s:%s[%s]", v->name, fp_dtype_name(v->dtype), s);
}

static void dump_graph(const fp_graph *g, FILE *out)
{
    fprintf(out, "graph %s%s%s {\n", g->name, g->owner ? " in " : "", g->owner ? g->owner->name : "");
    for (guint i = 0; i < g->inputs->len; i++) {
        fprintf(out, "  input ");
        dump_value(g_ptr_array_index(g->inputs, i), out);
        fputc('\n', out);
    }
    for (guint i = 0; i < g->initializers->len; i++) {
        const fp_value *v = g_ptr_array_index(g->initializers, i);
        fprintf(out, "  weight ");
        dump_value(v, out);
        fprintf(out, " %" G_GUINT64_FORMAT " B\n", v->tensor ? v->tensor->nbytes : 0);
    }
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        fprintf(out, "  ");
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            if (k)
                fprintf(out, ", ");
            if (n->outputs[k])
                dump_value(n->outputs[k], out);
            else
                fprintf(out, "_");
        }
        fprintf(out, " = %s%s%s \"%s\"(", *n->domain ? n->domain : "", *n->domain ? "." : "", n->op_type, n->name);
        for (uint32_t k = 0; k < n->n_inputs; k++)
            fprintf(out, "%s%%%s", k ? ", " : "", n->inputs[k] ? n->inputs[k]->name : "_");
        fprintf(out, ")%s\n", (n->flags & FP_NODE_FOLDED) ? " folded" : "");
    }
    for (guint i = 0; i < g->outputs->len; i++) {
        fprintf(out, "  output ");
        dump_value(g_ptr_array_index(g->outputs, i), out);
        fputc('\n', out);
    }
    fprintf(out, "}\n");
}

void fp_model_dump(const fp_model *m, FILE *out)
{
    for (guint gi = 0; gi < m->graphs->len; gi++)
        dump_graph(g_ptr_array_index(m->graphs, gi), out);
}
