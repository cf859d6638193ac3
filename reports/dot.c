/* dot.c - `fuseplan report -f dot`: the final main graph in Graphviz DOT (see dot.h). Every
 * user string (names, op types, messages) goes through fp_dot_quote; node IDs are generated. */
#include "dot.h"

#include <string.h>

#include "passes/layout.h"

char *fp_dot_quote(const char *s)
{
    g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);
    GString *q = g_string_sized_new(strlen(valid) + 2);
    g_string_append_c(q, '"');
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            g_string_append_c(q, '\\'), g_string_append_c(q, (char)c);
        else if (c == '\n')
            g_string_append(q, "\\n");
        else if (c < 0x20 || c == 0x7f)
            g_string_append_c(q, ' ');
        else
            g_string_append_c(q, (char)c);
    }
    g_string_append_c(q, '"');
    return g_string_free(q, FALSE);
}

/* A fused group: the kernel that runs and the ops it absorbed, in the order the rules took them. */
typedef struct {
    GPtrArray *members; /* fp_node*, not owned; NULL once merged into another group */
    GPtrArray *rules;   /* const char*, distinct */
    const fp_node *kernel;
    guint index; /* in dot_ctx.groups (never removed from it): its cluster's number */
} group;

typedef struct {
    const fp_report *r;
    FILE *out;
    GHashTable *by_name;  /* node name -> fp_node* of the main graph */
    GHashTable *group_of; /* fp_node* -> group* */
    GPtrArray *groups;    /* group*, owned */
    GHashTable *unfused;  /* fp_node* -> GString* (tooltip lines), owned */
} dot_ctx;

static void group_free(gpointer p)
{
    group *g = p;
    if (g->members)
        g_ptr_array_unref(g->members);
    g_ptr_array_unref(g->rules);
    g_free(g);
}

static void add_rule(group *g, const char *rule)
{
    if (!g_ptr_array_find_with_equal_func(g->rules, rule, g_str_equal, NULL))
        g_ptr_array_add(g->rules, (gpointer)rule);
}

/* Puts an applied fusion's nodes into one group, merging groups a node already belongs to. */
static void group_fusion(dot_ctx *c, const fp_fusion *f)
{
    group *into = NULL;
    for (guint k = 0; k < f->nodes->len; k++) {
        fp_node *n = g_hash_table_lookup(c->by_name, f->nodes->pdata[k]);
        if (!n)
            continue;
        group *g = g_hash_table_lookup(c->group_of, n);
        if (!into) {
            into = g;
            if (!into) {
                into = g_new0(group, 1);
                into->members = g_ptr_array_new();
                into->rules = g_ptr_array_new();
                into->index = c->groups->len;
                g_ptr_array_add(c->groups, into);
            }
        }
        if (g == into && g)
            continue;
        if (g) { /* a second group: move its members over */
            for (guint i = 0; i < g->members->len; i++) {
                g_ptr_array_add(into->members, g->members->pdata[i]);
                g_hash_table_insert(c->group_of, g->members->pdata[i], into);
            }
            for (guint i = 0; i < g->rules->len; i++)
                add_rule(into, g->rules->pdata[i]);
            g_clear_pointer(&g->members, g_ptr_array_unref);
            continue;
        }
        g_ptr_array_add(into->members, n);
        g_hash_table_insert(c->group_of, n, into);
    }
    if (into)
        add_rule(into, f->rule);
}

/* Tooltip lines of the nodes of a candidate that was not applied. */
static void note_unfused(dot_ctx *c, const fp_fusion *f)
{
    for (guint k = 0; k < f->nodes->len; k++) {
        fp_node *n = g_hash_table_lookup(c->by_name, f->nodes->pdata[k]);
        if (!n)
            continue;
        GString *s = g_hash_table_lookup(c->unfused, n);
        if (!s)
            g_hash_table_insert(c->unfused, n, (s = g_string_new(NULL)));
        for (guint i = 0; i < f->reasons->len; i++) {
            const fp_reason *why = f->reasons->pdata[i];
            g_string_append_printf(s, "%snot fused by %s: %s: %s", s->len ? "\n" : "", f->rule, why->constraint,
                                   why->message);
        }
    }
}

static void gstring_free(gpointer s) { g_string_free(s, TRUE); }

static void build(dot_ctx *c)
{
    const fp_graph *g = c->r->model->main;
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        g_hash_table_insert(c->by_name, (gpointer)n->name, n);
    }
    const GPtrArray *fl = c->r->res->fusions->fusions;
    for (guint i = 0; i < fl->len; i++) {
        const fp_fusion *f = fl->pdata[i];
        if (f->applied && f->fused_op)
            group_fusion(c, f);
        else if (!f->applied)
            note_unfused(c, f);
    }
    for (guint i = 0; i < c->groups->len; i++) {
        group *gr = c->groups->pdata[i];
        for (guint k = 0; gr->members && k < gr->members->len; k++) {
            const fp_node *n = gr->members->pdata[k];
            if (!(n->flags & FP_NODE_REMOVED) && !gr->kernel)
                gr->kernel = n;
        }
    }
}

static bool drawn(const fp_node *n) { return n && !(n->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)); }

/* The group a node is drawn in (only groups whose kernel still runs), or NULL. */
static group *group_of(const dot_ctx *c, const fp_node *n)
{
    group *g = g_hash_table_lookup(c->group_of, n);
    return g && g->members && g->kernel && g->members->len > 1 ? g : NULL;
}

static void emit_node(const dot_ctx *c, const fp_node *n, const group *g, const char *indent)
{
    bool kernel = g && g->kernel == n, absorbed = g && !kernel;
    g_autofree char *label = g_strdup_printf("%s\n%s%s", n->name, n->op_type,
                                             kernel     ? " (kernel)"
                                             : absorbed ? " (absorbed)"
                                                        : "");
    g_autofree char *ql = fp_dot_quote(label);
    fprintf(c->out, "%sn%u [label=%s", indent, n->id, ql);
    if (kernel)
        fputs(", penwidth=2, color=\"#2b6cb0\"", c->out);
    if (absorbed)
        fputs(", style=\"rounded,filled,dashed\", fillcolor=\"#f7fafc\", fontcolor=\"#4a5568\"", c->out);
    if (fp_layout_is_conversion(n))
        fputs(", fillcolor=\"#fefcbf\", color=\"#b7791f\", penwidth=2", c->out);
    const GString *why = g_hash_table_lookup(c->unfused, n);
    if (why) {
        g_autofree char *tip = fp_dot_quote(why->str);
        fprintf(c->out, ", color=\"#c53030\", penwidth=2.5, tooltip=%s", tip);
    } else if (fp_layout_is_conversion(n)) {
        fputs(", tooltip=\"layout conversion kept\"", c->out);
    }
    fputs("];\n", c->out);
}

static void emit_clusters(const dot_ctx *c)
{
    for (guint i = 0; i < c->groups->len; i++) {
        group *g = c->groups->pdata[i];
        if (!g->members || !g->kernel || g->members->len < 2)
            continue;
        GString *rules = g_string_new(NULL);
        for (guint k = 0; k < g->rules->len; k++)
            g_string_append_printf(rules, "%s%s", k ? " + " : "", (const char *)g->rules->pdata[k]);
        g_autofree char *label = g_strdup_printf("%s: %s", g->kernel->op_type, rules->str);
        g_autofree char *ql = fp_dot_quote(label);
        g_string_free(rules, TRUE);
        fprintf(c->out, "  subgraph cluster_%u {\n", i);
        fprintf(c->out,
                "    label=%s; style=\"rounded,filled\"; fillcolor=\"#ebf4ff\"; color=\"#2b6cb0\"; "
                "fontcolor=\"#2b6cb0\";\n",
                ql);
        for (guint k = 0; k < g->members->len; k++)
            emit_node(c, g->members->pdata[k], g, "    ");
        for (guint k = 1; k < g->members->len; k++)
            fprintf(c->out, "    n%u -> n%u [style=dashed, color=\"#2b6cb0\", arrowsize=0.5];\n",
                    ((fp_node *)g->members->pdata[k - 1])->id, ((fp_node *)g->members->pdata[k])->id);
        fputs("  }\n", c->out);
    }
}

/* DOT id of the end of an edge at node n: the group's last member (out) or first (in). */
static void edge_end(const dot_ctx *c, const fp_node *n, bool out, guint *id, char *cluster, size_t len)
{
    group *g = group_of(c, n);
    cluster[0] = 0;
    *id = n->id;
    if (!g)
        return;
    *id = ((fp_node *)g->members->pdata[out ? g->members->len - 1 : 0])->id;
    g_snprintf(cluster, len, ", %s=cluster_%u", out ? "ltail" : "lhead", g->index);
}

static void emit_edge_from(const dot_ctx *c, const fp_value *v, const char *dst, const char *lhead)
{
    g_autofree char *shape = fp_shape_to_string(&v->shape);
    g_autofree char *ql = fp_dot_quote(shape);
    if (v->kind == FP_VALUE_INPUT) {
        guint k = 0;
        g_ptr_array_find(c->r->model->main->inputs, v, &k);
        fprintf(c->out, "  i%u -> %s [label=%s%s];\n", k, dst, ql, lhead);
        return;
    }
    if (!drawn(v->producer))
        return;
    guint src;
    char ltail[48];
    edge_end(c, v->producer, true, &src, ltail, sizeof ltail);
    fprintf(c->out, "  n%u -> %s [label=%s%s%s];\n", src, dst, ql, ltail, lhead);
}

static void emit_edges(const dot_ctx *c)
{
    const fp_graph *g = c->r->model->main;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        if (!drawn(n))
            continue;
        guint dst;
        char lhead[48];
        edge_end(c, n, false, &dst, lhead, sizeof lhead);
        g_autofree char *d = g_strdup_printf("n%u", dst);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            const fp_value *v = n->inputs[k];
            bool dup = false;
            for (uint32_t j = 0; j < k && !dup; j++)
                dup = n->inputs[j] == v;
            if (v && !dup && !fp_value_is_fixed(v))
                emit_edge_from(c, v, d, lhead);
        }
    }
    for (guint k = 0; k < g->outputs->len; k++) {
        g_autofree char *d = g_strdup_printf("o%u", k);
        emit_edge_from(c, g->outputs->pdata[k], d, "");
    }
    /* candidates not applied: a red dashed edge along their nodes */
    const GPtrArray *fl = c->r->res->fusions->fusions;
    for (guint i = 0; i < fl->len; i++) {
        const fp_fusion *f = fl->pdata[i];
        g_autofree char *lab = g_strdup_printf("not fused: %s", f->rule);
        g_autofree char *ql = fp_dot_quote(lab);
        for (guint k = 1; !f->applied && k < f->nodes->len; k++) {
            const fp_node *a = g_hash_table_lookup(c->by_name, f->nodes->pdata[k - 1]);
            const fp_node *b = g_hash_table_lookup(c->by_name, f->nodes->pdata[k]);
            if (a && b && (drawn(a) || group_of(c, a)) && (drawn(b) || group_of(c, b)))
                fprintf(c->out,
                        "  n%u -> n%u [style=dashed, color=\"#c53030\", fontcolor=\"#c53030\", label=%s, "
                        "constraint=false];\n",
                        a->id, b->id, ql);
        }
    }
}

static void emit_io(const dot_ctx *c)
{
    const fp_graph *g = c->r->model->main;
    for (guint k = 0; k < g->inputs->len; k++) {
        const fp_value *v = g->inputs->pdata[k];
        g_autofree char *shape = fp_shape_to_string(&v->shape);
        g_autofree char *label = g_strdup_printf("%s\n%s %s", v->name, fp_dtype_name(v->dtype), shape);
        g_autofree char *ql = fp_dot_quote(label);
        fprintf(c->out, "  i%u [shape=ellipse, fillcolor=\"#e2e8f0\", label=%s];\n", k, ql);
    }
    for (guint k = 0; k < g->outputs->len; k++) {
        const fp_value *v = g->outputs->pdata[k];
        g_autofree char *ql = fp_dot_quote(v->name);
        fprintf(c->out, "  o%u [shape=ellipse, fillcolor=\"#e2e8f0\", label=%s];\n", k, ql);
    }
}

static void emit_header(const dot_ctx *c)
{
    const fp_report *r = c->r;
    guint groups = 0, unfused = 0;
    for (guint i = 0; i < c->groups->len; i++) {
        const group *g = c->groups->pdata[i];
        groups += g->members && g->kernel && g->members->len > 1;
    }
    for (guint i = 0; i < r->res->fusions->fusions->len; i++)
        unfused += !((const fp_fusion *)r->res->fusions->fusions->pdata[i])->applied;
    g_autofree char *title = g_strdup_printf(
        "%s on %s (target %s): kernels %u, fused groups %u, candidates not fused %u, layout conversions %u\n"
        "blue clusters: fused groups (bold: the kernel that runs) \u00b7 red outline: fusion candidates not applied "
        "(hover for why) \u00b7 yellow: layout conversions",
        r->model->path, r->device->name, r->target->name, r->res->stages[2].kernels, groups, unfused,
        r->res->stages[2].conversions);
    g_autofree char *qt = fp_dot_quote(title);
    fputs("// fuseplan report -f dot: the final graph; render with `dot -Tsvg FILE -o FILE.svg`\n", c->out);
    fputs("digraph fuseplan {\n", c->out);
    fprintf(c->out,
            "  graph [label=%s, labelloc=t, fontname=\"Helvetica\", fontsize=12, compound=true, "
            "nodesep=0.35, ranksep=0.4, charset=\"UTF-8\"];\n",
            qt);
    fputs("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#4a5568\", "
          "fontname=\"Helvetica\", fontsize=10];\n",
          c->out);
    fputs("  edge [color=\"#718096\", fontname=\"Helvetica\", fontsize=8, fontcolor=\"#4a5568\", arrowsize=0.7];\n",
          c->out);
}

void fp_report_dot(const fp_report *r, FILE *out)
{
    dot_ctx c = {.r = r, .out = out};
    c.by_name = g_hash_table_new(g_str_hash, g_str_equal);
    c.group_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    c.groups = g_ptr_array_new_with_free_func(group_free);
    c.unfused = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, gstring_free);
    build(&c);
    emit_header(&c);
    emit_io(&c);
    emit_clusters(&c);
    const fp_graph *g = r->model->main;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g->nodes->pdata[i];
        if (drawn(n) && !group_of(&c, n))
            emit_node(&c, n, NULL, "  ");
    }
    emit_edges(&c);
    fputs("}\n", out);
    g_hash_table_unref(c.unfused);
    g_ptr_array_unref(c.groups);
    g_hash_table_unref(c.group_of);
    g_hash_table_unref(c.by_name);
}
