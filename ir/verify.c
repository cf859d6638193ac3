/* verify.c - IR invariants; run after import and between passes in debug builds. */
#include "graph.h"
#include "par.h"

static bool is_ancestor_or_self(const fp_graph *a, const fp_graph *g)
{
    for (; g; g = g->parent)
        if (g == a)
            return true;
    return false;
}

static bool value_defined(const fp_value *v)
{
    if (v->producer)
        return !(v->producer->flags & FP_NODE_REMOVED);
    return v->kind == FP_VALUE_INPUT || fp_value_is_weight(v);
}

static bool verify_node(const fp_graph *g, const fp_node *n, GError **error)
{
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const fp_value *v = n->inputs[k];
        if (!v)
            continue;
        if (!is_ancestor_or_self(v->graph, g)) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                        "graph '%s': node '%s' (%s): input %u '%s' belongs to an unrelated graph '%s'", g->name,
                        n->name, n->op_type, k, v->name, v->graph->name);
            return false;
        }
        if (!value_defined(v)) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_DANGLING,
                        "graph '%s': node '%s' (%s): input %u '%s' is produced by no node and is not a "
                        "graph input or initializer",
                        g->name, n->name, n->op_type, k, v->name);
            return false;
        }
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const fp_value *v = n->outputs[k];
        if (!v)
            continue;
        if (v->producer != n || v->producer_port != k) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_DUPLICATE,
                        "graph '%s': value '%s' is produced by both '%s' and '%s'", g->name, v->name,
                        v->producer ? v->producer->name : "(none)", n->name);
            return false;
        }
        if (v->graph != g) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                        "graph '%s': node '%s' (%s): output '%s' belongs to graph '%s'", g->name, n->name, n->op_type,
                        v->name, v->graph->name);
            return false;
        }
    }
    for (uint32_t k = 0; k < fp_node_n_implicit(n); k++) {
        const fp_value *v = n->ext->implicit[k];
        if (!is_ancestor_or_self(v->graph, g) || !value_defined(v)) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_DANGLING,
                        "graph '%s': node '%s' (%s): subgraph reads outer value '%s', which is not defined "
                        "in an enclosing graph",
                        g->name, n->name, n->op_type, v->name);
            return false;
        }
    }
    for (uint32_t k = 0; k < n->n_subgraphs; k++) {
        if (n->subgraphs[k]->parent != g || n->subgraphs[k]->owner != n) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_INVALID,
                        "graph '%s': node '%s' (%s): subgraph '%s' is not linked to its owner", g->name, n->name,
                        n->op_type, n->subgraphs[k]->name);
            return false;
        }
    }
    return true;
}

/* fp_par_halves' work for one graph: the first node of each half that breaks an invariant sets
 * error[h]. */
typedef struct {
    const fp_graph *g;
    GError *error[2];
} verify_job;

static void verify_half(void *arg, int h, size_t from, size_t to)
{
    verify_job *j = arg;
    for (size_t i = from; i < to; i++) {
        const fp_node *n = g_ptr_array_index(j->g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        if (n->id != i) {
            g_set_error(&j->error[h], FP_IR_ERROR, FP_IR_ERROR_INVALID, "graph '%s': node '%s' has id %u at index %zu",
                        j->g->name, n->name, n->id, i);
            return;
        }
        if (!verify_node(j->g, n, &j->error[h]))
            return;
    }
}

/* A big graph's nodes are checked in two halves at once (ir/par.h); the error reported is the
 * first node's in node order, as from one walk. */
static bool verify_graph(const fp_graph *g, GError **error)
{
    verify_job j = {g, {NULL, NULL}};
    fp_par_halves(g->nodes->len, g->nodes->len, verify_half, &j);
    if (j.error[0] || j.error[1]) {
        g_propagate_error(error, j.error[0] ? j.error[0] : j.error[1]);
        g_clear_error(j.error[0] ? &j.error[1] : &j.error[0]);
        return false;
    }
    for (guint i = 0; i < g->outputs->len; i++) {
        const fp_value *v = g_ptr_array_index(g->outputs, i);
        if (!value_defined(v)) {
            g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_DANGLING,
                        "graph '%s': output '%s' is produced by no node and is not a graph input or "
                        "initializer",
                        g->name, v->name);
            return false;
        }
    }
    uint32_t n_order = 0;
    return fp_graph_order(g, &n_order, error) != NULL; /* acyclic (the order is kept for the passes) */
}

bool fp_model_verify(const fp_model *m, GError **error)
{
    for (guint gi = 0; gi < m->graphs->len; gi++)
        if (!verify_graph(g_ptr_array_index(m->graphs, gi), error))
            return false;
    return true;
}
