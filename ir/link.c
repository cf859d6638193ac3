/* link.c - use lists (consumers) and topological order. */
#include "graph.h"

static void link_graph(fp_graph *g)
{
    /* count uses per value of this graph; uses by nodes of other graphs (implicit inputs of
     * nodes in descendants are recorded on the owner node, which lives in g or below) */
    GPtrArray *vals = g->values;
    for (guint i = 0; i < vals->len; i++) {
        fp_value *v = g_ptr_array_index(vals, i);
        v->n_uses = 0;
        v->uses = NULL;
    }
}

/* Adds the use (n, port) to v's list. Pass 0 counts, pass 1 fills. */
static void add_use(fp_value *v, fp_node *n, uint32_t port, int pass)
{
    if (pass == 0)
        v->n_uses++;
    else
        v->uses[v->n_uses++] = (fp_use){n, port};
}

/* g's pool for `total` uses: the pool of the last link when it is big enough (a new pool for a
 * million-node graph is fresh pages to fault in). */
static fp_use *use_pool(fp_graph *g, size_t total)
{
    if (!g->use_pool || total > g->use_cap) {
        g_free(g->use_pool);
        g->use_cap = total ? total : 1;
        g->use_pool = g_new(fp_use, g->use_cap);
    }
    return g->use_pool;
}

/* Adds n's uses of its inputs and implicit inputs (add_use's pass). */
static void add_node_uses(fp_node *n, int pass)
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k])
            add_use(n->inputs[k], n, k, pass);
    for (uint32_t k = 0, ni = fp_node_n_implicit(n); k < ni; k++)
        add_use(n->ext->implicit[k], n, UINT32_MAX, pass);
}

/* fp_model_link as first written: counts kept in the values themselves. For values whose id does
 * not index their graph's values (never in a consistent model). */
static void link_slow(fp_model *m)
{
    for (guint gi = 0; gi < m->graphs->len; gi++)
        link_graph(g_ptr_array_index(m->graphs, gi));
    for (int pass = 0; pass < 2; pass++) {
        for (guint gi = 0; gi < m->graphs->len; gi++) {
            fp_graph *g = g_ptr_array_index(m->graphs, gi);
            for (guint i = 0; i < g->nodes->len; i++) {
                fp_node *n = g_ptr_array_index(g->nodes, i);
                if (n->flags & FP_NODE_REMOVED)
                    continue;
                add_node_uses(n, pass);
            }
        }
        if (pass == 0) {
            /* one pool per graph for the uses of its values */
            for (guint gi = 0; gi < m->graphs->len; gi++) {
                fp_graph *g = g_ptr_array_index(m->graphs, gi);
                size_t total = 0;
                for (guint i = 0; i < g->values->len; i++)
                    total += ((fp_value *)g_ptr_array_index(g->values, i))->n_uses;
                fp_use *p = use_pool(g, total);
                for (guint i = 0; i < g->values->len; i++) {
                    fp_value *v = g_ptr_array_index(g->values, i);
                    v->uses = p;
                    p += v->n_uses;
                    v->n_uses = 0;
                }
            }
        }
    }
}

void fp_model_number(fp_model *m, size_t *n_nodes, size_t *n_values)
{
    size_t nn = 0, nv = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = g_ptr_array_index(m->graphs, gi);
        g->node_base = nn;
        g->value_base = nv;
        nn += g->nodes->len;
        nv += g->values->len;
    }
    if (n_nodes)
        *n_nodes = nn;
    if (n_values)
        *n_values = nv;
}

/* Counts per value in one array (indexed by fp_value_index), so that the values are read
 * once to count, written once to place their lists and once to fill them: a million-node graph's
 * values do not fit in any cache. */
void fp_model_link(fp_model *m)
{
    size_t n_vals = 0;
    fp_model_number(m, NULL, &n_vals);
    for (guint gi = 0; gi < m->graphs->len; gi++) /* edges or removals changed: the order is made again */
        g_clear_pointer(&((fp_graph *)g_ptr_array_index(m->graphs, gi))->topo, g_free);
    uint32_t *cnt = g_new0(uint32_t, n_vals ? n_vals : 1);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = g_ptr_array_index(m->graphs, gi);
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_nodes_prefetch((fp_node *const *)g->nodes->pdata, g->nodes->len, i);
            const fp_node *n = g_ptr_array_index(g->nodes, i);
            if (n->flags & FP_NODE_REMOVED)
                continue;
            for (uint32_t k = 0, nk = n->n_inputs + fp_node_n_implicit(n); k < nk; k++) {
                const fp_value *v = k < n->n_inputs ? n->inputs[k] : n->ext->implicit[k - n->n_inputs];
                if (!v)
                    continue;
                if (v->id >= v->graph->values->len) {
                    g_free(cnt);
                    link_slow(m);
                    return;
                }
                cnt[fp_value_index(v)]++;
            }
        }
    }
    for (guint gi = 0; gi < m->graphs->len; gi++) { /* one pool per graph for the uses of its values */
        fp_graph *g = g_ptr_array_index(m->graphs, gi);
        const uint32_t *c = cnt + g->value_base;
        size_t total = 0;
        for (guint i = 0; i < g->values->len; i++)
            total += c[i];
        fp_use *p = use_pool(g, total);
        for (guint i = 0; i < g->values->len; i++) {
            fp_value *v = g_ptr_array_index(g->values, i);
            v->uses = p;
            v->n_uses = 0;
            p += c[i];
        }
    }
    g_free(cnt);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = g_ptr_array_index(m->graphs, gi);
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_nodes_prefetch((fp_node *const *)g->nodes->pdata, g->nodes->len, i);
            fp_node *n = g_ptr_array_index(g->nodes, i);
            if (n->flags & FP_NODE_REMOVED)
                continue;
            add_node_uses(n, 1);
        }
    }
}

/* ---- Kahn's algorithm with a min-heap on node id (file order among ready nodes) ---- */

typedef struct {
    uint32_t *a;
    uint32_t n;
} heap;

static void heap_push(heap *h, uint32_t x)
{
    uint32_t i = h->n++;
    h->a[i] = x;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->a[p] <= h->a[i])
            break;
        uint32_t t = h->a[p];
        h->a[p] = h->a[i];
        h->a[i] = t;
        i = p;
    }
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < h->n && h->a[l] < h->a[s])
            s = l;
        if (r < h->n && h->a[r] < h->a[s])
            s = r;
        if (s == i)
            break;
        uint32_t t = h->a[s];
        h->a[s] = h->a[i];
        h->a[i] = t;
        i = s;
    }
    return top;
}

/* The node of graph g whose subtree contains n (n itself if n is in g), or NULL. */
static fp_node *owner_in(const fp_graph *g, fp_node *n)
{
    while (n && n->graph != g)
        n = n->graph->owner;
    return n;
}

/* Whether every live node of g comes after the live producers of its inputs (implicit ones
 * included) and the nodes it waits on: then Kahn's algorithm below, which takes the lowest id among
 * the ready nodes, returns the live nodes in array order, which this writes to order[] (*n_live of
 * them) as it checks. One pass, no heap: the passes keep the file's order, which is topological in
 * almost every model, and ask for the order many times. */
static bool in_array_order(const fp_graph *g, fp_node **order, uint32_t *n_live)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < g->nodes->len; i++) {
        fp_nodes_prefetch((fp_node *const *)g->nodes->pdata, g->nodes->len, i);
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const fp_value *v = n->inputs[k];
            /* the producer's id first: in the usual case (an earlier node) nothing else is read */
            if (v && v->producer && v->producer->id >= i && v->graph == g && !(v->producer->flags & FP_NODE_REMOVED))
                return false;
        }
        for (uint32_t k = 0, ni = fp_node_n_implicit(n); k < ni; k++) {
            const fp_value *v = n->ext->implicit[k];
            if (v->producer && v->producer->id >= i && v->graph == g && !(v->producer->flags & FP_NODE_REMOVED))
                return false;
        }
        for (uint32_t k = 0, nc = fp_node_n_ctrl(n); k < nc; k++) {
            const fp_node *c = n->ext->ctrl[k];
            if (c->graph == g && !(c->flags & FP_NODE_REMOVED) && c->id >= i)
                return false;
        }
        order[live++] = n;
    }
    *n_live = live;
    return true;
}

/* In-degrees of g's live nodes into indeg[] (zeroed, one per node): their live producers in g,
 * implicit inputs included, and the live nodes of g they wait on. *ctrl_rev: NULL, or (when some
 * node waits on another) per node id the nodes that wait on it, for free_ctrl_rev. */
static void count_in_degrees(const fp_graph *g, uint32_t *indeg, GPtrArray ***ctrl_rev)
{
    uint32_t nn = g->nodes->len;
    for (uint32_t i = 0; i < nn; i++) {
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (n->flags & FP_NODE_REMOVED)
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            fp_value *v = n->inputs[k];
            if (v && v->producer && v->graph == g && !(v->producer->flags & FP_NODE_REMOVED))
                indeg[i]++;
        }
        for (uint32_t k = 0, ni = fp_node_n_implicit(n); k < ni; k++) {
            fp_value *v = n->ext->implicit[k];
            if (v->producer && v->graph == g && !(v->producer->flags & FP_NODE_REMOVED))
                indeg[i]++;
        }
        for (uint32_t k = 0, nc = fp_node_n_ctrl(n); k < nc; k++) {
            fp_node *c = n->ext->ctrl[k];
            if (c->graph != g || (c->flags & FP_NODE_REMOVED))
                continue;
            if (!*ctrl_rev)
                *ctrl_rev = g_new0(GPtrArray *, nn);
            if (!(*ctrl_rev)[c->id])
                (*ctrl_rev)[c->id] = g_ptr_array_new();
            g_ptr_array_add((*ctrl_rev)[c->id], n);
            indeg[i]++;
        }
    }
}

static void free_ctrl_rev(GPtrArray **ctrl_rev, uint32_t nn)
{
    if (!ctrl_rev)
        return;
    for (uint32_t i = 0; i < nn; i++)
        if (ctrl_rev[i])
            g_ptr_array_free(ctrl_rev[i], TRUE);
    g_free(ctrl_rev);
}

/* Removes n's edges to the nodes of g that read its outputs or wait on it from indeg[], pushing
 * onto h each node that becomes ready. */
static void release_successors(const fp_graph *g, const fp_node *n, uint32_t *indeg, GPtrArray **ctrl_rev, heap *h)
{
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        fp_value *v = n->outputs[k];
        if (!v)
            continue;
        for (uint32_t u = 0; u < v->n_uses; u++) {
            fp_node *c = owner_in(g, v->uses[u].node);
            /* an implicit use is counted once per (owner, value) on the owner itself */
            if (!c || c != v->uses[u].node)
                continue;
            if (--indeg[c->id] == 0)
                heap_push(h, c->id);
        }
    }
    if (ctrl_rev && ctrl_rev[n->id]) {
        GPtrArray *w = ctrl_rev[n->id];
        for (guint k = 0; k < w->len; k++) {
            fp_node *c = g_ptr_array_index(w, k);
            if (--indeg[c->id] == 0)
                heap_push(h, c->id);
        }
    }
}

/* Kahn's algorithm over g from the in-degrees of count_in_degrees (consumed): writes the order to
 * order[] (room for every live node) and returns how many nodes it holds, fewer than the live
 * ones when g has a cycle. */
static uint32_t kahn_order(const fp_graph *g, uint32_t *indeg, GPtrArray **ctrl_rev, fp_node **order)
{
    uint32_t nn = g->nodes->len;
    heap h = {g_new(uint32_t, nn ? nn : 1), 0};
    for (uint32_t i = 0; i < nn; i++) {
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (!(n->flags & FP_NODE_REMOVED) && indeg[i] == 0)
            heap_push(&h, i);
    }
    uint32_t done = 0;
    while (h.n) {
        fp_node *n = g_ptr_array_index(g->nodes, heap_pop(&h));
        order[done++] = n;
        release_successors(g, n, indeg, ctrl_rev, &h);
    }
    g_free(h.a);
    return done;
}

/* The cycle error for g: names the first live node (in array order) still waiting on an input. */
static void set_cycle_error(const fp_graph *g, const uint32_t *indeg, GError **error)
{
    fp_node *stuck = NULL;
    for (uint32_t i = 0; i < g->nodes->len && !stuck; i++) {
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (!(n->flags & FP_NODE_REMOVED) && indeg[i] > 0)
            stuck = n;
    }
    g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_CYCLE, "graph '%s': cycle through node '%s' (%s)", g->name,
                stuck ? stuck->name : "?", stuck ? stuck->op_type : "?");
}

fp_node **fp_graph_topo(const fp_graph *g, uint32_t *n_out, GError **error)
{
    uint32_t nn = g->nodes->len;
    {
        fp_node **order = g_new(fp_node *, nn ? nn : 1);
        uint32_t live = 0;
        if (in_array_order(g, order, &live)) {
            if (n_out)
                *n_out = live;
            return order;
        }
        g_free(order);
    }
    uint32_t *indeg = g_new0(uint32_t, nn ? nn : 1);
    GPtrArray **ctrl_rev = NULL;
    count_in_degrees(g, indeg, &ctrl_rev);
    uint32_t live = 0;
    for (uint32_t i = 0; i < nn; i++)
        live += !(((fp_node *)g_ptr_array_index(g->nodes, i))->flags & FP_NODE_REMOVED);
    fp_node **order = g_new(fp_node *, live ? live : 1);
    uint32_t done = kahn_order(g, indeg, ctrl_rev, order);
    if (done != live) {
        set_cycle_error(g, indeg, error);
        g_clear_pointer(&order, g_free);
    }
    free_ctrl_rev(ctrl_rev, nn);
    g_free(indeg);
    if (order && n_out)
        *n_out = done;
    return order;
}

fp_node *const *fp_graph_order(const fp_graph *g, uint32_t *n_out, GError **error)
{
    fp_graph *cache = (fp_graph *)g; /* the cache is not part of what g means */
    if (!cache->topo && !(cache->topo = fp_graph_topo(g, &cache->n_topo, error)))
        return NULL;
    if (n_out)
        *n_out = cache->n_topo;
    return cache->topo;
}

/* Whether live node n is one the reverse walk below takes: not a Constant (ONNX Runtime holds
 * those as initializers, with no node nor edge). */
static bool walked(const fp_node *n) { return n && !(n->flags & FP_NODE_REMOVED) && n->op != FP_OP_CONSTANT; }

/* Whether no walked node of g reads an output of n (implicit reads counted on their owner). */
static bool is_leaf(const fp_graph *g, const fp_node *n)
{
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const fp_value *v = n->outputs[k];
        for (uint32_t u = 0; v && u < v->n_uses; u++)
            if (walked(owner_in(g, v->uses[u].node)))
                return false;
    }
    return true;
}

/* Orders nodes by ORT index (fp_node_ort_index), ONNX Runtime's NodeCompare. */
static gint cmp_ort_index(gconstpointer a, gconstpointer b)
{
    uint32_t x = fp_node_ort_index(*(fp_node *const *)a), y = fp_node_ort_index(*(fp_node *const *)b);
    return (x > y) - (x < y);
}

typedef struct {
    fp_node *node;
    bool leave; /* the walk leaves node (emits it) rather than enters it */
} walk_step;

/* Pushes onto stack the walked producers in g of n's inputs (implicit ones included) not yet
 * entered, each once, in ascending ORT index: the last pushed, the highest, is walked first. */
static void push_producers(const fp_graph *g, const fp_node *n, const uint8_t *entered, GArray *stack)
{
    g_autoptr(GPtrArray) in = g_ptr_array_new();
    uint32_t ni = fp_node_n_implicit(n);
    for (uint32_t k = 0; k < n->n_inputs + ni; k++) {
        const fp_value *v = k < n->n_inputs ? n->inputs[k] : n->ext->implicit[k - n->n_inputs];
        fp_node *p = v && v->graph == g ? v->producer : NULL;
        if (walked(p) && !entered[p->id])
            g_ptr_array_add(in, p);
    }
    g_ptr_array_sort(in, cmp_ort_index);
    for (guint i = 0; i < in->len; i++)
        if (i == 0 || in->pdata[i - 1] != in->pdata[i])
            g_array_append_val(stack, ((walk_step){in->pdata[i], false}));
}

fp_node **fp_graph_ort_order(const fp_graph *g, uint32_t *n_out)
{
    uint32_t nn = g->nodes->len, done = 0;
    fp_node **order = g_new(fp_node *, nn ? nn : 1);
    g_autofree uint8_t *entered = g_new0(uint8_t, nn ? nn : 1);
    g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(walk_step));
    g_autoptr(GPtrArray) leaves = g_ptr_array_new();
    for (uint32_t i = 0; i < nn; i++) {
        fp_node *n = g_ptr_array_index(g->nodes, i);
        if (!(n->flags & FP_NODE_REMOVED) && n->op == FP_OP_CONSTANT)
            order[done++] = n;
        else if (walked(n) && is_leaf(g, n))
            g_ptr_array_add(leaves, n);
    }
    g_ptr_array_sort(leaves, cmp_ort_index);
    for (guint i = 0; i < leaves->len; i++)
        g_array_append_val(stack, ((walk_step){leaves->pdata[i], false}));
    while (stack->len) {
        walk_step s = g_array_index(stack, walk_step, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        if (s.leave) {
            order[done++] = s.node;
        } else if (!entered[s.node->id]) {
            entered[s.node->id] = 1;
            g_array_append_val(stack, ((walk_step){s.node, true}));
            push_producers(g, s.node, entered, stack);
        }
    }
    *n_out = done;
    return order;
}
