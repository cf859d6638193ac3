/* cse.c - ONNX Runtime's CommonSubexpressionElimination (level 1,
 * onnxruntime/core/optimizer/common_subexpression_elimination.cc): value numbering over a graph in
 * ONNX Runtime's topological order (GraphViewer's, fp_graph_ort_order: the first node of a number
 * in that order is the one kept, which is not always the first in the file). A node's number is
 * its op type, domain, attributes and the numbers of its inputs; a node numbered as one before it
 * is merged into it. Small constants are numbered by their contents, as ConstantSharing
 * (constant_sharing.cc) has made equal ones one initializer, and the nodes that read one read the
 * first. */
#include "passes/cse.h"

#include <string.h>

typedef struct {
    GHashTable *seen;    /* key (a GString: attribute strings may hold NULs) -> the first node of that key */
    GHashTable *consts;  /* contents key -> the first constant value of those contents */
    GHashTable *weights; /* contents key -> the first weight of those contents (share_constants) */
    GString *key;
    GHashTable *same; /* NULL: merge; else nothing is merged, and each output of a node that would be
                         merged maps to the output it would read instead */
} cse;

bool fp_cse_on(const fp_target *t)
{
    return t && t->keyfile && g_key_file_get_boolean(t->keyfile, "layout", "cse", NULL);
}

static void string_free(gpointer s) { g_string_free(s, TRUE); }
static guint string_hash(gconstpointer s) { return g_string_hash(s); }
static gboolean string_equal(gconstpointer a, gconstpointer b) { return g_string_equal(a, b); }

/* The inline payload of constant v of at most FP_CSE_SHARED_ELEMS elements, or NULL. */
static const fp_tensor *small_const(const fp_value *v)
{
    if (!fp_value_is_constant(v))
        return NULL;
    const fp_tensor *t = fp_value_is_weight(v) ? v->tensor : fp_value_fold(v);
    uint64_t n;
    if (!t || t->where != FP_DATA_INLINE || t->dtype == FP_DT_STRING || !fp_shape_numel(&t->shape, &n) ||
        n > FP_CSE_SHARED_ELEMS)
        return NULL;
    return t;
}

/* v, or the value an Identity chain copies into v: ONNX Runtime's EliminateIdentity (level 1,
 * identity_elimination.cc) has made its readers read the Identity's input before the elimination
 * numbers them. An Identity whose output is a graph output stays. */
static const fp_value *identity_source(const fp_value *v)
{
    while (v && !v->is_output && v->producer && v->producer->op == FP_OP_IDENTITY &&
           !(v->producer->flags & FP_NODE_REMOVED) && v->producer->n_inputs == 1 && v->producer->inputs[0])
        v = v->producer->inputs[0];
    return v;
}

/* The first value of `table` (contents key -> value) of the contents of small constant v (payload
 * t), v when it is the first (then entered). */
static const fp_value *first_of(GHashTable *table, const fp_value *v, const fp_tensor *t)
{
    GString *k = g_string_new(NULL);
    g_string_append_printf(k, "%d:%d:", (int)t->dtype, (int)t->shape.rank);
    for (int32_t i = 0; i < t->shape.rank; i++)
        g_string_append_printf(k, "%" G_GINT64_FORMAT ",", t->shape.dims[i].value);
    g_string_append_len(k, t->data, (gssize)t->nbytes);
    const fp_value *first = g_hash_table_lookup(table, k);
    if (first) {
        g_string_free(k, TRUE);
        return first;
    }
    g_hash_table_insert(table, k, (gpointer)v);
    return v;
}

/* The number of value v: that of the value an Identity copies into it, the first constant of its
 * contents for a small constant, else v. */
static const fp_value *number_of(cse *c, const fp_value *v)
{
    v = identity_source(v);
    const fp_value *into = v && c->same ? g_hash_table_lookup(c->same, v) : NULL;
    if (into)
        return into;
    const fp_tensor *t = v ? small_const(v) : NULL;
    return t ? first_of(c->consts, v, t) : v;
}

/* Appends attribute a to the key; false when the elimination compares no attribute of its type
 * (a tensor, a graph: the node is kept apart). */
static bool key_attr(GString *k, const fp_attr *a)
{
    g_string_append_printf(k, "|%s=%d:", a->name, (int)a->type);
    switch (a->type) {
    case FP_ATTR_INT:
        g_string_append_printf(k, "%" G_GINT64_FORMAT, a->u.i);
        return true;
    case FP_ATTR_FLOAT:
        g_string_append_printf(k, "%a", a->u.f);
        return true;
    case FP_ATTR_STRING:
        g_string_append_len(k, a->u.s, a->n);
        return true;
    case FP_ATTR_INTS:
        for (uint32_t i = 0; i < a->n; i++)
            g_string_append_printf(k, "%" G_GINT64_FORMAT ",", a->u.ints[i]);
        return true;
    case FP_ATTR_FLOATS:
        for (uint32_t i = 0; i < a->n; i++)
            g_string_append_printf(k, "%a,", a->u.floats[i]);
        return true;
    case FP_ATTR_STRINGS:
        for (uint32_t i = 0; i < a->n; i++)
            g_string_append_printf(k, "%zu:%s,", strlen(a->u.strings[i]), a->u.strings[i]);
        return true;
    default:
        return false;
    }
}

/* Whether the elimination may merge n or merge others into it: live, run (not folded),
 * deterministic (ORT's IsOperationDeterministic: its kNonDeterministicOps are the random ops but
 * Bernoulli), no subgraph, and no ONNX DequantizeLinear (IsNodeSupported in
 * common_subexpression_elimination.cc: a DQ is one QDQ unit's, EnsureUniqueDQForNodeUnit's rule). */
static bool mergeable(const fp_node *n)
{
    if (n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED) || fp_node_n_implicit(n) || !n->n_outputs)
        return false;
    if (n->op == FP_OP_DEQUANTIZE_LINEAR && (!*n->domain || strcmp(n->domain, "ai.onnx") == 0))
        return false;
    return !fp_op_has(n->op, FP_OPF_RANDOM) || n->op == FP_OP_BERNOULLI;
}

/* Whether n writes a graph output: ORT keeps such a node (it does not eliminate the graph's
 * outputs), though the first of its class takes the others' readers. */
static bool writes_output(const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->is_output)
            return true;
    return false;
}

/* n's key into c->key; false when n is kept apart (an attribute no key holds). */
static bool node_key(cse *c, const fp_node *n)
{
    GString *k = c->key;
    g_string_truncate(k, 0);
    g_string_append_printf(k, "%s|%s|%u|%u", n->op_type, n->domain ? n->domain : "", n->n_inputs, n->n_outputs);
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (!key_attr(k, &n->attrs[i]))
            return false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        g_string_append_printf(k, "#%p", (const void *)number_of(c, n->inputs[i]));
    return true;
}

/* n's readers read the outputs of `into` in place of its own; n goes. */
static void merge(fp_node *n, const fp_node *into)
{
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *from = n->outputs[k];
        if (!from)
            continue;
        fp_value_move_readers(from, into->outputs[k]);
        from->producer = NULL;
    }
    n->flags |= FP_NODE_REMOVED;
}

/* Each input of live node n that is a small weight (an initializer or Constant: not a folded
 * result, which ORT does not share) equal to one seen before now reads that one, as ORT's graph has
 * them (a float16 node its constant folding leaves then reads one initializer, and
 * InsertCastTransformer casts it once). Returns how many inputs changed. */
static uint32_t share_constants(cse *c, fp_node *n)
{
    uint32_t shared = 0;
    if (n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED))
        return 0;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        fp_value *v = n->inputs[k];
        const fp_tensor *t = v && fp_value_is_weight(v) ? small_const(v) : NULL;
        const fp_value *first = t ? first_of(c->weights, v, t) : v;
        if (first != v) {
            n->inputs[k] = (fp_value *)first;
            shared++;
        }
    }
    return shared;
}

/* One graph; the count of nodes merged (same: fp_cse_same's map, filled in place of merging; else
 * equal small constants shared too, *shared counting the inputs changed). */
static uint32_t cse_graph(fp_graph *g, GHashTable *same, uint32_t *shared)
{
    uint32_t n_order = 0, merged = 0;
    if (!fp_graph_order(g, NULL, NULL))
        return 0; /* a cycle */
    g_autofree fp_node **nodes = fp_graph_ort_order(g, &n_order);
    cse c = {.seen = g_hash_table_new_full(string_hash, string_equal, string_free, NULL),
             .consts = g_hash_table_new_full(string_hash, string_equal, string_free, NULL),
             .weights = g_hash_table_new_full(string_hash, string_equal, string_free, NULL),
             .key = g_string_new(NULL),
             .same = same};
    for (uint32_t i = 0; i < n_order; i++) {
        fp_node *n = nodes[i];
        if (!same)
            *shared += share_constants(&c, n);
        if (!mergeable(n) || !node_key(&c, n))
            continue;
        const fp_node *first = g_hash_table_lookup(c.seen, c.key);
        if (first && writes_output(n))
            continue;
        if (first && same) {
            for (uint32_t k = 0; k < n->n_outputs; k++)
                if (n->outputs[k])
                    g_hash_table_insert(same, n->outputs[k], first->outputs[k]);
            merged++;
        } else if (first) {
            merge(n, first);
            merged++;
        } else {
            g_hash_table_insert(c.seen, g_string_new_len(c.key->str, (gssize)c.key->len), n);
        }
    }
    g_hash_table_destroy(c.seen);
    g_hash_table_destroy(c.consts);
    g_hash_table_destroy(c.weights);
    g_string_free(c.key, TRUE);
    return merged;
}

uint32_t fp_pass_cse(fp_model *m, const fp_target *t, fp_diag *diag)
{
    if (!fp_cse_on(t))
        return 0;
    uint32_t merged = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        uint32_t shared = 0, here = cse_graph(m->graphs->pdata[gi], NULL, &shared);
        if (here || shared)
            fp_model_link(m); /* the next graph's order reads the use lists */
        merged += here;
    }
    if (merged)
        fp_diag_add(diag, FP_DIAG_INFO, "cse", "cse-merged", NULL,
                    "ONNX Runtime's common subexpression elimination: %u nodes merged into an equal one before them",
                    merged);
    return merged;
}

GHashTable *fp_cse_same(fp_graph *g)
{
    GHashTable *same = g_hash_table_new(NULL, NULL);
    cse_graph(g, same, NULL);
    return same;
}
