/* provenance.c - the original nodes each runtime node came from (provenance.h), from the fusion
 * records the pipeline keeps (each applied record's result stands for the union of what its
 * matched nodes stood for) and from the final graph (a removed node whose tensor a live node now
 * writes went into that node). */
#include "reports/provenance.h"

#include <string.h>

struct fp_provenance {
    const fp_model *m;
    const fp_pipeline_result *res;
    GHashTable *graphs; /* fp_graph * of the model as loaded -> its node count then + 1 */
    GHashTable *rank;   /* name of a node of the model as loaded -> its position + 1, all graphs */
    GHashTable *sets;   /* name of a fusion's result -> GPtrArray of original names, in rank order */
};

/* Whether n is a node of the model as loaded (not one a pass added). */
static bool loaded(const fp_provenance *p, const fp_node *n)
{
    guint count = GPOINTER_TO_UINT(g_hash_table_lookup(p->graphs, n->graph));
    return n->id + 1 < count;
}

/* The node a rule's applied match became, of the record's matched nodes: the anchor (folds, fusions,
 * QDQ units, splits), the node the anchor folds into (a Pad), the reader that absorbs it (a
 * Transpose or a scale; the Div that stays of Div(1, x) * y), none for an elimination. */
static const char *result_of(const fp_fusion *fu)
{
    const fp_rule *r = fu->variant;
    g_assert(r && fu->nodes->len > 0);
    switch (r->rewrite) {
    case FP_RW_ELIMINATE:
        return NULL;
    case FP_RW_PAD:
        return fu->nodes->pdata[fu->nodes->len - 1];
    case FP_RW_ABSORB:
        return r->fused_kind == FP_OP_DIV || fu->nodes->len < 2 ? fu->anchor : fu->nodes->pdata[1];
    default:
        return fu->anchor;
    }
}

static gint by_rank(gconstpointer a, gconstpointer b, gpointer rank)
{
    guint ra = GPOINTER_TO_UINT(g_hash_table_lookup(rank, *(const char *const *)a));
    guint rb = GPOINTER_TO_UINT(g_hash_table_lookup(rank, *(const char *const *)b));
    return ra < rb ? -1 : ra > rb;
}

/* Adds what node `name` stands for now to set (once each). */
static void add_member(const fp_provenance *p, GPtrArray *set, const char *name)
{
    GPtrArray *had = g_hash_table_lookup(p->sets, name);
    if (!had) {
        if (g_hash_table_contains(p->rank, name) && !g_ptr_array_find_with_equal_func(set, name, g_str_equal, NULL))
            g_ptr_array_add(set, (gpointer)name);
        return;
    }
    for (guint i = 0; i < had->len; i++)
        if (!g_ptr_array_find_with_equal_func(set, had->pdata[i], g_str_equal, NULL))
            g_ptr_array_add(set, had->pdata[i]);
}

/* The live node that took over removed node n's output 0 (a pass made it write that tensor: the
 * NCHWc conversion folding an Add or an activation into a blocked Conv, a fusion), following the
 * removed readers (`readers`: value -> its removed readers) of a tensor no node writes any more;
 * NULL when none did (an elimination, a cancelled Transpose: their readers read another tensor).
 * memo: node -> answer already found (the graph itself for NULL). */
static const fp_node *takeover(GHashTable *readers, GHashTable *memo, const fp_node *n, int depth)
{
    const fp_value *v = n->n_outputs ? n->outputs[0] : NULL;
    if (!v || depth > 64)
        return NULL;
    gpointer known = g_hash_table_lookup(memo, n);
    if (known)
        return known == (gpointer)n->graph ? NULL : known;
    const fp_node *t = NULL;
    if (v->producer)
        t = v->producer != n && fp_node_live(v->producer) ? v->producer : NULL;
    else if (!v->n_uses) {
        const GPtrArray *rs = g_hash_table_lookup(readers, v);
        for (guint i = 0; rs && i < rs->len; i++) {
            const fp_node *r = takeover(readers, memo, rs->pdata[i], depth + 1);
            t = !r || (i && r != t) ? NULL : r;
            if (!t)
                break;
        }
    }
    g_hash_table_insert(memo, (gpointer)n, t ? (gpointer)t : (gpointer)n->graph);
    return t;
}

/* Whether n was removed by a pass (not folded at analysis time). */
static bool removed(const fp_node *n) { return (n->flags & FP_NODE_REMOVED) && !(n->flags & FP_NODE_FOLDED); }

/* Each removed node of the model as loaded that a live node took over (takeover) goes into that
 * node's set. */
static void add_takeovers(fp_provenance *p)
{
    g_autoptr(GHashTable) readers = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_ptr_array_unref);
    g_autoptr(GHashTable) memo = g_hash_table_new(NULL, NULL);
    for (guint gi = 0; gi < p->m->graphs->len; gi++) {
        const fp_graph *g = p->m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g->nodes->pdata[i];
            for (uint32_t k = 0; removed(n) && k < n->n_inputs; k++) {
                if (!n->inputs[k])
                    continue;
                GPtrArray *rs = g_hash_table_lookup(readers, n->inputs[k]);
                if (!rs)
                    g_hash_table_insert(readers, n->inputs[k], rs = g_ptr_array_new());
                g_ptr_array_add(rs, (gpointer)n);
            }
        }
    }
    for (guint gi = 0; gi < p->m->graphs->len && gi < p->res->n_loaded_graphs; gi++) {
        const fp_graph *g = p->m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len && i < p->res->loaded_nodes[gi]; i++) {
            const fp_node *n = g->nodes->pdata[i];
            const fp_node *t = removed(n) ? takeover(readers, memo, n, 0) : NULL;
            if (!t)
                continue;
            GPtrArray *set = g_hash_table_lookup(p->sets, t->name);
            if (!set) {
                g_hash_table_insert(p->sets, (gpointer)t->name, set = g_ptr_array_new());
                add_member(p, set, t->name);
            }
            add_member(p, set, n->name);
            g_ptr_array_sort_with_data(set, by_rank, p->rank);
        }
    }
}

fp_provenance *fp_provenance_new(const fp_model *m, const fp_pipeline_result *res)
{
    fp_provenance *p = g_new0(fp_provenance, 1);
    p->m = m;
    p->res = res;
    p->graphs = g_hash_table_new(NULL, NULL);
    p->rank = g_hash_table_new(g_str_hash, g_str_equal);
    p->sets = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
    guint next = 0;
    for (guint gi = 0; gi < m->graphs->len && gi < res->n_loaded_graphs; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        g_hash_table_insert(p->graphs, (gpointer)g, GUINT_TO_POINTER(res->loaded_nodes[gi] + 1));
        for (guint i = 0; i < g->nodes->len && i < res->loaded_nodes[gi]; i++) {
            const fp_node *n = g->nodes->pdata[i];
            if (!g_hash_table_contains(p->rank, n->name))
                g_hash_table_insert(p->rank, (gpointer)n->name, GUINT_TO_POINTER(++next));
        }
    }
    for (guint i = 0; res->fusions && i < res->fusions->fusions->len; i++) {
        const fp_fusion *fu = res->fusions->fusions->pdata[i];
        const char *to = fu->applied ? result_of(fu) : NULL;
        if (!to)
            continue;
        GPtrArray *set = g_ptr_array_new();
        for (guint k = 0; k < fu->nodes->len; k++)
            add_member(p, set, fu->nodes->pdata[k]);
        g_ptr_array_sort_with_data(set, by_rank, p->rank);
        g_hash_table_replace(p->sets, (gpointer)to, set);
    }
    add_takeovers(p);
    return p;
}

void fp_provenance_free(fp_provenance *p)
{
    if (!p)
        return;
    g_hash_table_destroy(p->graphs);
    g_hash_table_destroy(p->rank);
    g_hash_table_destroy(p->sets);
    g_free(p);
}

uint32_t fp_provenance_of(const fp_provenance *p, const fp_node *n, const char *const **names)
{
    const GPtrArray *set = g_hash_table_lookup(p->sets, n->name);
    if (set) {
        if (names)
            *names = (const char *const *)set->pdata;
        return set->len;
    }
    if (names)
        *names = &n->name;
    return loaded(p, n) ? 1 : 0;
}
