/* match.c - measured kernels matched to the cost model's ops (see match.h): names first, then op
 * type and shapes, then units without a kernel attributed to a measured neighbour; rows,
 * statistics and the fusion agreement table. */
#include "calibration/match.h"

#include <math.h>
#include <string.h>

#include "calibration/fit.h"

#define TOKEN_SUFFIX "_token_"
#define MAX_JOINED_NAME 512

const char *fp_match_how_name(fp_match_how h)
{
    static const char *const names[] = {"none", "name", "fused_name", "type_shape"};
    return (unsigned)h < G_N_ELEMENTS(names) ? names[h] : "none";
}

const char *fp_agree_name(fp_agree a)
{
    static const char *const names[] = {"both", "fuseplan_only", "compiler_only"};
    return (unsigned)a < G_N_ELEMENTS(names) ? names[a] : "both";
}

/* ---------------------------------------------------------------- state */

typedef struct {
    const fp_model *m;
    const fp_cost_result *cost;
    const fp_profile *p;
    fp_match_result *r;
    GHashTable *by_name;   /* node name -> fp_node* (main graph, every node) */
    GHashTable *unit_of;   /* fp_node* -> unit index + 1 (live units only) */
    GHashTable *uf;        /* fp_node* -> parent fp_node* (fusion groups) */
    GHashTable *root_unit; /* fusion group root -> its live unit + 1 */
    GPtrArray **members;   /* per unit: original node names it runs (const char *) */
    GPtrArray **resolved;  /* per kernel: fp_node* its name resolved to, or NULL */
    GArray **kunits;       /* per kernel: guint units it matched, or NULL */
    bool *claimed;         /* per unit: some kernel matched it */
    char **unit_type;      /* per unit: its op type normalized (normalize_type) */
    char **rule_type;      /* per fusion rule: its fused op normalized, or NULL */
    int32_t *parent;       /* union-find over kernels [0, K) and units [K, K + U) */
} matcher;

static int32_t find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(int32_t *parent, int32_t a, int32_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[MAX(a, b)] = MIN(a, b); /* the smaller index (kernels come first) represents */
}

static fp_node *uf_find(GHashTable *uf, fp_node *n)
{
    fp_node *p;
    while ((p = g_hash_table_lookup(uf, n)) && p != n)
        n = p;
    return n;
}

/* Fusion groups of the applied, non-eliminating fusions (names of the main graph). */
static void build_groups(matcher *mt, const fp_fusion_list *fusions)
{
    for (guint i = 0; fusions && i < fusions->fusions->len; i++) {
        const fp_fusion *f = fusions->fusions->pdata[i];
        fp_node *a = f->applied && f->fused_op ? g_hash_table_lookup(mt->by_name, f->anchor) : NULL;
        for (guint k = 0; a && k < f->nodes->len; k++) {
            fp_node *n = g_hash_table_lookup(mt->by_name, f->nodes->pdata[k]);
            if (!n)
                continue;
            fp_node *ra = uf_find(mt->uf, a), *rn = uf_find(mt->uf, n);
            if (ra != rn)
                g_hash_table_insert(mt->uf, rn, ra);
        }
    }
}

/* The unit that runs node n: n's own when n is a live unit, else (a member fused away in the final
 * graph) the live unit of its fusion group; -1 when none (folded, eliminated, not costed). */
static int unit_of(const matcher *mt, fp_node *n)
{
    gpointer u = g_hash_table_lookup(mt->unit_of, n);
    if (!u && (n->flags & FP_NODE_REMOVED))
        u = g_hash_table_lookup(mt->root_unit, uf_find(mt->uf, n));
    return u ? GPOINTER_TO_INT(u) - 1 : -1;
}

/* Each unit's members: its own node, plus the nodes fused away into it. */
static void build_members(matcher *mt)
{
    guint U = mt->cost->n_ops;
    mt->root_unit = g_hash_table_new(g_direct_hash, g_direct_equal);
    mt->members = g_new0(GPtrArray *, U + 1);
    for (guint u = 0; u < U; u++) {
        fp_node *n = mt->cost->ops[u].node;
        mt->members[u] = g_ptr_array_new();
        g_ptr_array_add(mt->members[u], (gpointer)n->name);
        if (!(n->flags & FP_NODE_REMOVED)) /* a final graph has one live node per fusion group */
            g_hash_table_insert(mt->root_unit, uf_find(mt->uf, n), GUINT_TO_POINTER(u + 1));
    }
    for (guint i = 0; i < mt->m->main->nodes->len; i++) {
        fp_node *x = mt->m->main->nodes->pdata[i];
        int u = (x->flags & FP_NODE_REMOVED) ? unit_of(mt, x) : -1;
        if (u >= 0)
            g_ptr_array_add(mt->members[u], (gpointer)x->name);
    }
}

/* ---------------------------------------------------------------- names */

/* `name` without trailing "_token_<digits>" (ORT's GenerateNodeName). Caller frees. */
static char *strip_tokens(const char *name)
{
    char *s = g_strdup(name);
    for (;;) {
        char *t = g_strrstr(s, TOKEN_SUFFIX);
        if (!t || t == s || !t[strlen(TOKEN_SUFFIX)])
            break;
        const char *d = t + strlen(TOKEN_SUFFIX);
        while (g_ascii_isdigit(*d))
            d++;
        if (*d)
            break;
        *t = '\0';
    }
    return s;
}

static const char *const separators[] = {" + ", "+", "_", ",", ";", NULL};

/* Splits s into at least two node names joined by separators, fewest parts first. Appends the
 * nodes to out and returns true when one exists. */
static bool split_joined(const matcher *mt, const char *s, GPtrArray *out)
{
    size_t len = strlen(s);
    if (len < 3 || len > MAX_JOINED_NAME)
        return false;
    /* best[i]: fewest names covering s[i..]; next[i], take[i]: the first name's end and length */
    g_autofree int *best = g_new(int, len + 1);
    g_autofree size_t *next = g_new0(size_t, len + 1), *take = g_new0(size_t, len + 1);
    best[len] = 0;
    for (size_t i = len; i-- > 0;) {
        best[i] = INT_MAX;
        for (size_t j = i + 1; j <= len; j++) {
            size_t after = j;
            if (j < len) {
                size_t k = 0;
                while (separators[k] && strncmp(s + j, separators[k], strlen(separators[k])) != 0)
                    k++;
                if (!separators[k])
                    continue;
                after = j + strlen(separators[k]);
                if (after >= len || best[after] == INT_MAX)
                    continue;
            }
            g_autofree char *part = g_strndup(s + i, j - i);
            if (!g_hash_table_contains(mt->by_name, part) || best[after] + 1 >= best[i])
                continue;
            best[i] = best[after] + 1;
            next[i] = after;
            take[i] = j - i;
        }
    }
    if (best[0] == INT_MAX || best[0] < 2)
        return false;
    for (size_t i = 0; i < len; i = next[i]) {
        g_autofree char *part = g_strndup(s + i, take[i]);
        g_ptr_array_add(out, g_hash_table_lookup(mt->by_name, part));
    }
    return true;
}

/* Nodes a kernel name stands for; NULL when none. *how says how. Caller frees the array. */
static GPtrArray *resolve_name(const matcher *mt, const char *name, fp_match_how *how)
{
    GPtrArray *out = g_ptr_array_new();
    fp_node *n = g_hash_table_lookup(mt->by_name, name);
    if (n) {
        g_ptr_array_add(out, n);
        *how = FP_MATCH_NAME;
        return out;
    }
    *how = FP_MATCH_FUSED_NAME;
    g_autofree char *s = strip_tokens(name);
    if ((n = g_hash_table_lookup(mt->by_name, s))) {
        g_ptr_array_add(out, n);
        return out;
    }
    /* generated names "<node>/Suffix/": the longest prefix before a '/' that is a node */
    for (char *slash = strrchr(s, '/'); slash; slash = strrchr(s, '/')) {
        *slash = '\0';
        if ((n = g_hash_table_lookup(mt->by_name, s))) {
            g_ptr_array_add(out, n);
            return out;
        }
    }
    g_free(s);
    s = strip_tokens(name);
    if (split_joined(mt, s, out))
        return out;
    g_ptr_array_free(out, TRUE);
    *how = FP_MATCH_NONE;
    return NULL;
}

/* ---------------------------------------------------------------- op types and shapes */

/* Lower case without vendor decorations: "aten::" / "aclnn" prefixes, '_', a trailing version
 * ("V2"), a trailing "D" (GE's constant-input variants) and the dimensionality digit ("Conv2D"). */
static char *normalize_type(const char *t)
{
    if (g_str_has_prefix(t, "aten::"))
        t += 6;
    else if (g_str_has_prefix(t, "aclnn"))
        t += 5;
    GString *s = g_string_new(NULL);
    for (const char *c = t; *c; c++)
        if (*c != '_')
            g_string_append_c(s, g_ascii_tolower(*c));
    gsize n = s->len;
    while (n > 1 && g_ascii_isdigit(s->str[n - 1]))
        n--;
    if (n > 1 && n < s->len && s->str[n - 1] == 'v')
        g_string_truncate(s, n - 1);
    if (s->len > 3 && s->str[s->len - 1] == 'd')
        g_string_truncate(s, s->len - 1);
    n = s->len;
    while (n > 3 && g_ascii_isdigit(s->str[n - 1]))
        n--;
    g_string_truncate(s, n);
    static const char *const alias[][2] = {
        {"batchmatmul", "matmul"}, {"bmm", "matmul"},           {"mm", "matmul"},   {"addmm", "gemm"},
        {"linear", "gemm"},        {"fullyconnection", "gemm"}, {"realdiv", "div"}, {"maxpoolwithargmax", "maxpool"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(alias); i++)
        if (strcmp(s->str, alias[i][0]) == 0)
            g_string_assign(s, alias[i][1]);
    return g_string_free(s, FALSE);
}

static bool pattern_has(const fp_pat_node *pn, fp_op op)
{
    for (int k = 0; k < 8 && pn->ops[k] != FP_OP_COUNT; k++)
        if (pn->ops[k] == op)
            return true;
    return pn->ops[0] == FP_OP_COUNT && pn->flags && fp_op_has(op, pn->flags);
}

/* 2: the kernel's type (normalized: ktype) is node n's; 1: a fusion rule makes the kernel's type
 * out of a pattern holding n's op; 0: neither. ntype: n's normalized type, or NULL to compute. */
static int type_score(const matcher *mt, const char *ktype, const fp_node *n, const char *ntype)
{
    if (!ktype)
        return 0;
    g_autofree char *own = ntype ? NULL : normalize_type(n->op_type);
    if (strcmp(ktype, ntype ? ntype : own) == 0)
        return 2;
    for (size_t i = 0; i < fp_n_rules; i++) {
        if (!mt->rule_type[i] || strcmp(mt->rule_type[i], ktype) != 0)
            continue;
        for (int k = 0; k < fp_rules[i].n_pattern; k++)
            if (pattern_has(&fp_rules[i].pattern[k], n->op))
                return 1;
    }
    return 0;
}

/* 1: t's dims equal v's known dims; 0: nothing to compare; -1: they differ. */
static int dims_agree(const fp_prof_tensor *t, const fp_value *v)
{
    if (!t || !v || t->rank < 0 || v->shape.rank < 0)
        return 0;
    if (t->rank != v->shape.rank)
        return -1;
    for (int32_t d = 0; d < t->rank; d++)
        if (fp_dim_known(v->shape.dims[d]) && v->shape.dims[d].value != t->dims[d])
            return -1;
    return 1;
}

static int shape_score(const fp_prof_kernel *k, const fp_node *n)
{
    if (k->n_outputs && n->n_outputs)
        return dims_agree(&k->outputs[0], n->outputs[0]);
    if (k->n_inputs && n->n_inputs)
        return dims_agree(&k->inputs[0], n->inputs[0]);
    return 0;
}

/* ---------------------------------------------------------------- matching */

static bool costed(const fp_op_cost *c) { return c->kernel || c->rl.time_s > 0; }

static void add_kernel_unit(matcher *mt, guint k, int u)
{
    if (u < 0)
        return;
    if (!mt->kunits[k])
        mt->kunits[k] = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < mt->kunits[k]->len; i++)
        if (g_array_index(mt->kunits[k], guint, i) == (guint)u)
            return;
    guint v = (guint)u;
    g_array_append_val(mt->kunits[k], v);
    mt->claimed[u] = true;
}

/* A name fuseplan or ONNX Runtime made up for an unnamed node: "<op_type>_<index>". Such names
 * identify nothing across tools (their indices shift when one side drops Constant nodes). */
static bool synthesized_name(const fp_node *n)
{
    size_t t = strlen(n->op_type);
    if (strncmp(n->name, n->op_type, t) != 0 || n->name[t] != '_' || !n->name[t + 1])
        return false;
    for (const char *c = n->name + t + 1; *c; c++)
        if (!g_ascii_isdigit(*c))
            return false;
    return true;
}

static void match_names(matcher *mt)
{
    fp_match_result *r = mt->r;
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        if (!r->kernels[k].counted)
            continue;
        const fp_prof_kernel *pk = fp_profile_kernel(mt->p, k);
        fp_match_how how;
        GPtrArray *nodes = resolve_name(mt, pk->name, &how);
        g_autofree char *ktype = pk->op_type ? normalize_type(pk->op_type) : NULL;
        if (nodes && nodes->len == 1 && ktype && synthesized_name(nodes->pdata[0]) &&
            !type_score(mt, ktype, nodes->pdata[0], NULL)) {
            g_ptr_array_free(nodes, TRUE); /* "Reshape_1" of one tool is not the other's "Reshape_1" */
            nodes = NULL;
        }
        if (!nodes)
            continue;
        r->kernels[k].how = how;
        mt->resolved[k] = nodes;
        for (guint i = 0; i < nodes->len; i++)
            add_kernel_unit(mt, k, unit_of(mt, nodes->pdata[i]));
    }
}

/* type_score against unit u: its own op, or (at most 1) a rule whose pattern holds one of the ops
 * fused into it (an ORT "Gelu" kernel for fuseplan's BiasGelu of Add + the erf-Gelu ops). */
static int unit_type_score(const matcher *mt, const char *ktype, guint u)
{
    int best = type_score(mt, ktype, mt->cost->ops[u].node, mt->unit_type[u]);
    const GPtrArray *names = mt->members[u];
    for (guint i = 1; i < names->len && best == 0; i++) {
        const fp_node *n = g_hash_table_lookup(mt->by_name, names->pdata[i]);
        best = n ? MIN(type_score(mt, ktype, n, NULL), 1) : 0;
    }
    return best;
}

/* Pairs kernels no name matched with units no kernel named. `strict` (no kernel matched by name):
 * the op types must be equal and the dims recorded and equal, and three quarters of the counted
 * kernels must pair up, else none does: an unrelated profile stays unmatched. */
static void match_types(matcher *mt, bool strict)
{
    fp_match_result *r = mt->r;
    guint paired = 0, counted = 0;
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(mt->p, k);
        counted += r->kernels[k].counted;
        if (!r->kernels[k].counted || r->kernels[k].how != FP_MATCH_NONE)
            continue;
        int best = -1, best_score = 0;
        g_autofree char *ktype = pk->op_type ? normalize_type(pk->op_type) : NULL;
        for (guint u = 0; ktype && u < mt->cost->n_ops; u++) {
            const fp_op_cost *c = &mt->cost->ops[u];
            if (mt->claimed[u])
                continue;
            int ts = unit_type_score(mt, ktype, u), ss = shape_score(pk, c->node);
            int score = ts ? 2 * ts + ss : 0;
            if (ss >= 0 && score > best_score && (!strict || (ts == 2 && ss == 1))) {
                best = (int)u;
                best_score = score;
            }
        }
        if (best >= 0) {
            r->kernels[k].how = FP_MATCH_TYPE_SHAPE;
            add_kernel_unit(mt, k, best);
            paired++;
        }
    }
    if (!strict || 4 * paired >= 3 * counted)
        return;
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        if (r->kernels[k].how != FP_MATCH_TYPE_SHAPE)
            continue;
        r->kernels[k].how = FP_MATCH_NONE;
        mt->claimed[g_array_index(mt->kunits[k], guint, 0)] = false;
        g_array_free(mt->kunits[k], TRUE);
        mt->kunits[k] = NULL;
    }
}

/* A unit adjacent to u (through a value) that is in a row with a kernel; -1 when none. */
static int measured_neighbour(matcher *mt, guint u, bool producers)
{
    const fp_node *n = mt->cost->ops[u].node;
    guint K = mt->p->kernels->len;
    if (producers) {
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const fp_value *v = n->inputs[i];
            gpointer w = v && v->producer ? g_hash_table_lookup(mt->unit_of, v->producer) : NULL;
            if (w && find(mt->parent, (int32_t)(K + GPOINTER_TO_UINT(w) - 1)) < (int32_t)K)
                return GPOINTER_TO_INT(w) - 1;
        }
        return -1;
    }
    for (uint32_t o = 0; o < n->n_outputs; o++) {
        const fp_value *v = n->outputs[o];
        for (uint32_t i = 0; v && i < v->n_uses; i++) {
            gpointer w = g_hash_table_lookup(mt->unit_of, v->uses[i].node);
            if (w && find(mt->parent, (int32_t)(K + GPOINTER_TO_UINT(w) - 1)) < (int32_t)K)
                return GPOINTER_TO_INT(w) - 1;
        }
    }
    return -1;
}

/* Units without a kernel join a measured neighbour's row: producers first (epilogue fusion),
 * then consumers, until nothing changes. */
static void absorb(matcher *mt, bool *absorbed)
{
    guint K = mt->p->kernels->len, U = mt->cost->n_ops;
    for (bool changed = true; changed;) {
        changed = false;
        for (int dir = 0; dir < 2; dir++)
            for (guint i = 0; i < U; i++) {
                guint u = dir == 0 ? i : U - 1 - i;
                if (mt->claimed[u] || absorbed[u] || find(mt->parent, (int32_t)(K + u)) < (int32_t)K)
                    continue;
                int w = measured_neighbour(mt, u, dir == 0);
                if (w < 0)
                    continue;
                unite(mt->parent, (int32_t)(K + u), (int32_t)(K + (guint)w));
                absorbed[u] = true;
                changed = true;
            }
    }
}

/* ---------------------------------------------------------------- rows */

static void build_rows(matcher *mt, const bool *absorbed)
{
    fp_match_result *r = mt->r;
    guint K = mt->p->kernels->len, U = mt->cost->n_ops;
    g_autofree int32_t *row_of = g_new(int32_t, K + U);
    for (guint i = 0; i < K + U; i++)
        row_of[i] = -1;
    for (guint x = 0; x < K + U; x++) {
        bool kernel = x < K;
        if (kernel ? r->kernels[x].how == FP_MATCH_NONE : !costed(&mt->cost->ops[x - K]))
            continue;
        int32_t root = find(mt->parent, (int32_t)x);
        if (row_of[root] < 0) {
            fp_match_row row = {.kernels = g_array_new(FALSE, FALSE, sizeof(guint)),
                                .units = g_array_new(FALSE, FALSE, sizeof(guint)),
                                .dominant = -1};
            g_array_append_val(r->rows, row);
            row_of[root] = (int32_t)r->rows->len - 1;
        }
        fp_match_row *row = &g_array_index(r->rows, fp_match_row, row_of[root]);
        if (kernel) {
            guint k = x;
            g_array_append_val(row->kernels, k);
            row->measured_s += r->kernels[x].measured_s;
            if (row->how == FP_MATCH_NONE)
                row->how = r->kernels[x].how;
            r->kernels[x].row = row_of[root];
        } else {
            guint u = x - K;
            const fp_op_cost *c = &mt->cost->ops[u];
            g_array_append_val(row->units, u);
            row->estimated_s += c->rl.time_s;
            row->absorbed += absorbed[u];
            if (row->dominant < 0 || c->rl.time_s > mt->cost->ops[row->dominant].rl.time_s)
                row->dominant = (int32_t)u;
            r->unit_row[u] = row_of[root];
        }
    }
}

static bool is_view(const matcher *mt, const char *name)
{
    const fp_node *n = g_hash_table_lookup(mt->by_name, name);
    return n && (fp_op_has(n->op, FP_OPF_VIEW) || (n->flags & FP_NODE_FOLDED));
}

static void add_cover(const matcher *mt, fp_match_kernel *k, const char *name, GHashTable *owner, guint kernel)
{
    if (is_view(mt, name) || g_hash_table_contains(owner, name))
        return;
    g_ptr_array_add(k->covers, (gpointer)name);
    g_hash_table_insert(owner, (gpointer)name, GUINT_TO_POINTER(kernel + 1));
}

/* What each kernel ran, in original node names: the nodes its name gives, then the members of its
 * row's units that no kernel names (to the row's first kernel). `owner`: name -> kernel + 1. */
static void build_covers(matcher *mt, GHashTable *owner)
{
    fp_match_result *r = mt->r;
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        r->kernels[k].covers = g_ptr_array_new();
        for (guint i = 0; mt->resolved[k] && i < mt->resolved[k]->len; i++)
            add_cover(mt, &r->kernels[k], ((fp_node *)mt->resolved[k]->pdata[i])->name, owner, k);
    }
    for (guint k = 0; k < mt->p->kernels->len; k++) { /* type-matched kernels: their unit's node */
        if (r->kernels[k].how == FP_MATCH_TYPE_SHAPE && mt->kunits[k])
            add_cover(mt, &r->kernels[k], mt->cost->ops[g_array_index(mt->kunits[k], guint, 0)].node->name, owner, k);
    }
    for (guint i = 0; i < r->rows->len; i++) {
        const fp_match_row *row = &g_array_index(r->rows, fp_match_row, i);
        if (!row->kernels->len)
            continue;
        guint first = g_array_index(row->kernels, guint, 0);
        for (guint j = 0; j < row->units->len; j++) {
            const GPtrArray *names = mt->members[g_array_index(row->units, guint, j)];
            for (guint n = 0; n < names->len; n++)
                add_cover(mt, &r->kernels[first], names->pdata[n], owner, first);
        }
    }
}

/* ---------------------------------------------------------------- agreement */

static void fusion_free(gpointer p)
{
    fp_match_fusion *f = p;
    g_free(f->rules);
    g_free(f->kernel);
    g_free(f->kernel_type);
    g_ptr_array_free(f->nodes, TRUE);
    g_ptr_array_free(f->extra, TRUE);
    g_free(f);
}

static fp_match_fusion *fusion_new(fp_agree status)
{
    fp_match_fusion *f = g_new0(fp_match_fusion, 1);
    f->status = status;
    f->nodes = g_ptr_array_new_with_free_func(g_free);
    f->extra = g_ptr_array_new_with_free_func(g_free);
    return f;
}

/* Predicted groups: applied fusions joined by shared nodes, in the order found. Returns
 * GPtrArray of GPtrArray (names, anchor first) and fills rules[i] with the rule ids. */
static GPtrArray *predicted_groups(const matcher *mt, const fp_fusion_list *fusions, GPtrArray *rules)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    g_autoptr(GHashTable) group_of = g_hash_table_new(g_direct_hash, g_direct_equal); /* root -> index+1 */
    for (guint i = 0; fusions && i < fusions->fusions->len; i++) {
        const fp_fusion *f = fusions->fusions->pdata[i];
        fp_node *a = f->applied && f->fused_op ? g_hash_table_lookup(mt->by_name, f->anchor) : NULL;
        if (!a)
            continue;
        fp_node *root = uf_find(mt->uf, a);
        guint gi = GPOINTER_TO_UINT(g_hash_table_lookup(group_of, root));
        if (!gi) {
            g_ptr_array_add(groups, g_ptr_array_new());
            g_ptr_array_add(rules, g_string_new(NULL));
            gi = groups->len;
            g_hash_table_insert(group_of, root, GUINT_TO_POINTER(gi));
        }
        GPtrArray *names = groups->pdata[gi - 1];
        GString *rs = rules->pdata[gi - 1];
        g_string_append_printf(rs, "%s%s", rs->len ? "+" : "", f->rule);
        for (guint k = 0; k < f->nodes->len; k++) {
            fp_node *n = g_hash_table_lookup(mt->by_name, f->nodes->pdata[k]);
            if (n && !is_view(mt, n->name) && !g_ptr_array_find_with_equal_func(names, n->name, g_str_equal, NULL))
                g_ptr_array_add(names, (gpointer)n->name);
        }
    }
    return groups;
}

static void agreement(matcher *mt, const fp_fusion_list *fusions, GHashTable *owner)
{
    fp_match_result *r = mt->r;
    g_autoptr(GPtrArray) rules = g_ptr_array_new();
    g_autoptr(GPtrArray) groups = predicted_groups(mt, fusions, rules);
    g_autoptr(GHashTable) confirmed = g_hash_table_new(g_direct_hash, g_direct_equal); /* kernel + 1 */
    for (guint g = 0; g < groups->len; g++) {
        GPtrArray *names = groups->pdata[g];
        g_autofree char *rule = g_string_free(rules->pdata[g], FALSE);
        if (names->len < 2)
            continue;
        guint kernel = 0; /* + 1 */
        bool one = true;
        for (guint i = 0; i < names->len && one; i++) {
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(owner, names->pdata[i]));
            one = k && (!kernel || k == kernel);
            kernel = k;
        }
        fp_match_fusion *f = fusion_new(one ? FP_AGREE_BOTH : FP_AGREE_PREDICTED);
        f->rules = g_steal_pointer(&rule);
        for (guint i = 0; i < names->len; i++)
            g_ptr_array_add(f->nodes, g_strdup(names->pdata[i]));
        if (one) {
            const fp_match_kernel *mk = &r->kernels[kernel - 1];
            const fp_prof_kernel *pk = fp_profile_kernel(mt->p, kernel - 1);
            f->kernel = g_strdup(pk->name);
            f->kernel_type = g_strdup(pk->op_type);
            for (guint i = 0; i < mk->covers->len; i++)
                if (!g_ptr_array_find_with_equal_func(names, mk->covers->pdata[i], g_str_equal, NULL))
                    g_ptr_array_add(f->extra, g_strdup(mk->covers->pdata[i]));
            g_hash_table_add(confirmed, GUINT_TO_POINTER(kernel));
        }
        g_ptr_array_add(r->fusions, f);
        r->agree[f->status]++;
    }
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        const fp_match_kernel *mk = &r->kernels[k];
        if (!mk->covers || mk->covers->len < 2 || g_hash_table_contains(confirmed, GUINT_TO_POINTER(k + 1)))
            continue;
        fp_match_fusion *f = fusion_new(FP_AGREE_COMPILER);
        f->kernel = g_strdup(fp_profile_kernel(mt->p, k)->name);
        f->kernel_type = g_strdup(fp_profile_kernel(mt->p, k)->op_type);
        for (guint i = 0; i < mk->covers->len; i++)
            g_ptr_array_add(f->nodes, g_strdup(mk->covers->pdata[i]));
        g_ptr_array_add(r->fusions, f);
        r->agree[FP_AGREE_COMPILER]++;
    }
}

/* ---------------------------------------------------------------- totals and statistics */

static void totals(matcher *mt, const bool *absorbed)
{
    fp_match_result *r = mt->r;
    for (guint k = 0; k < mt->p->kernels->len; k++) {
        const fp_match_kernel *mk = &r->kernels[k];
        if (!mk->counted)
            continue;
        r->counted++;
        r->measured_s += mk->measured_s;
        if (mk->how != FP_MATCH_NONE) {
            r->matched++;
            r->by_how[mk->how]++;
            r->measured_matched_s += mk->measured_s;
        }
    }
    g_autofree guint *kernels_of = g_new0(guint, mt->cost->n_ops + 1);
    for (guint k = 0; k < mt->p->kernels->len; k++)
        for (guint i = 0; mt->kunits[k] && i < mt->kunits[k]->len; i++)
            kernels_of[g_array_index(mt->kunits[k], guint, i)]++;
    for (guint u = 0; u < mt->cost->n_ops; u++) {
        r->estimated_s += mt->cost->ops[u].rl.time_s;
        r->split += kernels_of[u] > 1;
        r->absorbed += absorbed[u];
        int32_t row = r->unit_row[u];
        bool measured = row >= 0 && g_array_index(r->rows, fp_match_row, row).kernels->len > 0;
        if (measured)
            r->estimated_matched_s += mt->cost->ops[u].rl.time_s;
        else if (row >= 0)
            r->unmeasured++;
    }
}

static void statistics(fp_match_result *r)
{
    g_autofree double *est = g_new(double, r->rows->len + 1), *meas = g_new(double, r->rows->len + 1);
    g_autofree double *ape = g_new(double, r->rows->len + 1);
    size_t n = 0;
    double est_matched = 0, meas_matched = 0;
    for (guint i = 0; i < r->rows->len; i++) {
        const fp_match_row *row = &g_array_index(r->rows, fp_match_row, i);
        if (!row->kernels->len)
            continue;
        est_matched += row->estimated_s;
        meas_matched += row->measured_s;
        if (row->estimated_s <= 0) {
            r->zero_rows++;
            r->zero_rows_s += row->measured_s;
            continue;
        }
        if (row->measured_s <= 0)
            continue;
        est[n] = row->estimated_s;
        meas[n] = row->measured_s;
        ape[n] = 100.0 * fabs(row->estimated_s - row->measured_s) / row->measured_s;
        n++;
    }
    r->stats.rows = (uint32_t)n;
    r->stats.spearman = fp_fit_spearman(est, meas, n);
    r->stats.median_ape = fp_fit_median(ape, n);
    r->stats.ratio = r->measured_s > 0 ? r->estimated_s / r->measured_s : NAN;
    r->stats.matched_ratio = meas_matched > 0 ? est_matched / meas_matched : NAN;
}

/* ---------------------------------------------------------------- entry point */

static void setup(matcher *mt)
{
    fp_match_result *r = mt->r;
    const fp_profile *p = mt->p;
    guint K = p->kernels->len, U = mt->cost->n_ops;
    mt->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < mt->m->main->nodes->len; i++) {
        fp_node *n = mt->m->main->nodes->pdata[i];
        if (!g_hash_table_contains(mt->by_name, n->name))
            g_hash_table_insert(mt->by_name, (gpointer)n->name, n);
    }
    mt->unit_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint u = 0; u < U; u++)
        g_hash_table_insert(mt->unit_of, mt->cost->ops[u].node, GUINT_TO_POINTER(u + 1));
    mt->uf = g_hash_table_new(g_direct_hash, g_direct_equal);
    mt->resolved = g_new0(GPtrArray *, K + 1);
    mt->kunits = g_new0(GArray *, K + 1);
    mt->claimed = g_new0(bool, U + 1);
    mt->unit_type = g_new0(char *, U + 1);
    for (guint u = 0; u < U; u++)
        mt->unit_type[u] = normalize_type(mt->cost->ops[u].node->op_type);
    mt->rule_type = g_new0(char *, fp_n_rules + 1);
    for (size_t i = 0; i < fp_n_rules; i++)
        mt->rule_type[i] = fp_rules[i].fused_op ? normalize_type(fp_rules[i].fused_op) : NULL;
    mt->parent = g_new(int32_t, K + U + 1);
    for (guint i = 0; i < K + U; i++)
        mt->parent[i] = (int32_t)i;
    /* ORT averages over runs in the reader; step-based profiles are averaged here */
    r->steps = p->format == FP_PROF_ORT ? 1 : MAX(1u, p->steps);
    r->kernels = g_new0(fp_match_kernel, K + 1);
    for (guint k = 0; k < K; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(p, k);
        r->kernels[k].counted = !(pk->flags & (FP_PROF_K_NESTED | FP_PROF_K_AGGREGATE));
        r->kernels[k].row = -1;
        r->kernels[k].measured_s = r->kernels[k].counted ? pk->dur_us * 1e-6 / r->steps : 0;
    }
    r->unit_row = g_new(int32_t, U + 1);
    for (guint u = 0; u < U; u++)
        r->unit_row[u] = -1;
}

static void teardown(matcher *mt)
{
    guint K = mt->p->kernels->len;
    for (guint k = 0; k < K; k++) {
        if (mt->resolved[k])
            g_ptr_array_free(mt->resolved[k], TRUE);
        if (mt->kunits[k])
            g_array_free(mt->kunits[k], TRUE);
    }
    for (guint u = 0; u < mt->cost->n_ops; u++)
        g_ptr_array_free(mt->members[u], TRUE);
    g_free(mt->members);
    g_hash_table_destroy(mt->root_unit);
    g_free(mt->resolved);
    g_free(mt->kunits);
    g_free(mt->claimed);
    for (guint u = 0; u < mt->cost->n_ops; u++)
        g_free(mt->unit_type[u]);
    g_free(mt->unit_type);
    for (size_t i = 0; i < fp_n_rules; i++)
        g_free(mt->rule_type[i]);
    g_free(mt->rule_type);
    g_free(mt->parent);
    g_hash_table_destroy(mt->by_name);
    g_hash_table_destroy(mt->unit_of);
    g_hash_table_destroy(mt->uf);
}

fp_match_result *fp_match_run(const fp_model *m, const fp_cost_result *cost, const fp_fusion_list *fusions,
                              const fp_profile *p, fp_diag *diag)
{
    fp_match_result *r = g_new0(fp_match_result, 1);
    r->profile = p;
    r->cost = cost;
    r->rows = g_array_new(FALSE, TRUE, sizeof(fp_match_row));
    r->fusions = g_ptr_array_new_with_free_func(fusion_free);
    matcher mt = {.m = m, .cost = cost, .p = p, .r = r};
    setup(&mt);
    build_groups(&mt, fusions);
    build_members(&mt);
    match_names(&mt);
    bool any_name = false;
    for (guint k = 0; k < p->kernels->len; k++)
        any_name |= r->kernels[k].how != FP_MATCH_NONE;
    match_types(&mt, !any_name);
    guint K = p->kernels->len;
    for (guint k = 0; k < K; k++)
        for (guint i = 0; mt.kunits[k] && i < mt.kunits[k]->len; i++)
            unite(mt.parent, (int32_t)k, (int32_t)(K + g_array_index(mt.kunits[k], guint, i)));
    g_autofree bool *absorbed = g_new0(bool, cost->n_ops + 1);
    absorb(&mt, absorbed);
    build_rows(&mt, absorbed);
    g_autoptr(GHashTable) owner = g_hash_table_new(g_str_hash, g_str_equal);
    build_covers(&mt, owner);
    agreement(&mt, fusions, owner);
    totals(&mt, absorbed);
    statistics(r);
    if (r->counted > r->matched)
        fp_diag_add(diag, FP_DIAG_WARNING, "match", "kernel-unmatched", NULL, "%u of %u kernels match no node of %s",
                    r->counted - r->matched, r->counted, m->path);
    teardown(&mt);
    return r;
}

void fp_match_result_free(fp_match_result *r)
{
    if (!r)
        return;
    for (guint k = 0; r->kernels && k < r->profile->kernels->len; k++)
        if (r->kernels[k].covers)
            g_ptr_array_free(r->kernels[k].covers, TRUE);
    g_free(r->kernels);
    for (guint i = 0; i < r->rows->len; i++) {
        fp_match_row *row = &g_array_index(r->rows, fp_match_row, i);
        g_array_free(row->kernels, TRUE);
        g_array_free(row->units, TRUE);
    }
    g_array_free(r->rows, TRUE);
    g_free(r->unit_row);
    g_ptr_array_free(r->fusions, TRUE);
    g_free(r);
}
