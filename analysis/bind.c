/* bind.c - input specs, symbolic dims and the unknown-op check of an analysis (bind.h). */
#include "analysis/bind.h"

#include <string.h>

G_DEFINE_QUARK(fp-bind-error-quark, fp_bind_error);

bool fp_bind_parse_input_spec(fp_model *m, const char *spec, char **name, fp_shape *shape, GError **error)
{
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--input '%s': expected NAME:DIMS, e.g. input:1x3x224x224", spec);
        return false;
    }
    g_auto(GStrv) parts = g_strsplit_set(colon + 1, "x,", -1);
    guint rank = g_strv_length(parts);
    if (rank == 1 && !*parts[0])
        rank = 0; /* "NAME:" = scalar */
    if (rank > FP_MAX_RANK) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--input '%s': rank %u exceeds %d", spec, rank,
                    FP_MAX_RANK);
        return false;
    }
    shape->rank = (int32_t)rank;
    shape->dims = fp_arena_calloc(m->arena, rank ? rank : 1, sizeof(fp_dim));
    for (guint i = 0; i < rank; i++) {
        const char *d = parts[i];
        guint64 v = 0;
        if (strcmp(d, "?") == 0) {
            shape->dims[i] = (fp_dim){-1, NULL};
        } else if (g_ascii_string_to_unsigned(d, 10, 0, (guint64)1 << 62, &v, NULL)) {
            shape->dims[i] = (fp_dim){(int64_t)v, NULL};
        } else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--input '%s': dimension %u '%s' is not an integer in [0, 2^62] or '?'", spec, i, d);
            return false;
        }
    }
    *name = g_strndup(spec, (gsize)(colon - spec));
    return true;
}

GHashTable *fp_bind_input_shapes(fp_model *m, char **specs, GError **error)
{
    GHashTable *shapes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (char **s = specs; s && *s; s++) {
        char *name = NULL;
        fp_shape *shape = fp_arena_alloc(m->arena, sizeof *shape);
        if (!fp_bind_parse_input_spec(m, *s, &name, shape, error)) {
            g_hash_table_unref(shapes);
            return NULL;
        }
        g_hash_table_insert(shapes, name, shape);
    }
    return shapes;
}

bool fp_bind_parse_dims(char **specs, fp_dim_binding **out, size_t *n, GError **error)
{
    *out = NULL;
    *n = specs ? g_strv_length(specs) : 0;
    if (!*n)
        return true;
    fp_dim_binding *b = g_new0(fp_dim_binding, *n);
    for (size_t i = 0; i < *n; i++) {
        const char *eq = strrchr(specs[i], '=');
        guint64 v = 0;
        if (!eq || eq == specs[i] || !g_ascii_string_to_unsigned(eq + 1, 10, 0, (guint64)1 << 62, &v, NULL)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--dim '%s': expected NAME=N with N an integer in [0, 2^62], e.g. sequence_length=128",
                        specs[i]);
            fp_bind_dims_free(b, i);
            *n = 0;
            return false;
        }
        b[i] = (fp_dim_binding){g_strndup(specs[i], (gsize)(eq - specs[i])), (int64_t)v};
    }
    *out = b;
    return true;
}

void fp_bind_dims_free(fp_dim_binding *b, size_t n)
{
    for (size_t i = 0; b && i < n; i++)
        g_free((char *)b[i].name);
    g_free(b);
}

const fp_dim_binding *fp_bind_find(const fp_dim_binding *dims, size_t n, const char *sym)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(dims[i].name, sym) == 0)
            return &dims[i];
    return NULL;
}

bool fp_bind_names(const fp_dim_binding *dims, size_t n, const char *sym) { return fp_bind_find(dims, n, sym) != NULL; }

char *fp_bind_symbolic_dims(const fp_model *m, const fp_dim_binding *dims, size_t n)
{
    GString *s = g_string_new(NULL);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t d = 0; d < v->shape.rank; d++) {
            const char *sym = v->shape.dims[d].sym;
            if (sym && !fp_bind_names(dims, n, sym) && g_hash_table_add(seen, (gpointer)sym))
                g_string_append_printf(s, "%s%s", s->len ? ", " : "", sym);
        }
    }
    return g_string_free(s, s->len == 0);
}

bool fp_bind_is_batch(const fp_model *m, const char *batch_dim, const char *name)
{
    if (batch_dim)
        return strcmp(batch_dim, name) == 0;
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        if (v->decl_shape.rank > 0 && v->decl_shape.dims[0].sym && strcmp(v->decl_shape.dims[0].sym, name) == 0)
            return true;
    }
    return false;
}

bool fp_bind_check_batch_dim(const fp_model *m, const char *batch_dim, GError **error)
{
    if (!batch_dim)
        return true;
    g_autoptr(GString) inputs = g_string_new(NULL);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t k = 0; k < v->decl_shape.rank; k++)
            if (g_strcmp0(v->decl_shape.dims[k].sym, batch_dim) == 0)
                return true;
        g_autofree char *d = fp_shape_to_string(&v->decl_shape);
        if (i < 4)
            g_string_append_printf(inputs, "%s%s %s", i ? ", " : "", v->name, d);
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s: --batch-dim %s: no input has a dimension named so (inputs: %s%s)", m->path, batch_dim,
                inputs->len ? inputs->str : "none", m->main->inputs->len > 4 ? ", ..." : "");
    return false;
}

typedef struct {
    const fp_node *first;
    uint32_t count;
} unknown_op;

bool fp_bind_check_ops(const char *path, const fp_model *m, bool strict, fp_diag *diag, char **warning, GError **error)
{
    *warning = NULL;
    g_autoptr(GHashTable) by_type = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_autoptr(GPtrArray) types = g_ptr_array_new(); /* unknown_op*, in file order */
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g->nodes->pdata[i];
            if (n->op != FP_OP_OPAQUE)
                continue;
            char *key = g_strconcat(n->domain, *n->domain ? "." : "", n->op_type, NULL);
            unknown_op *u = g_hash_table_lookup(by_type, key);
            if (!u) {
                u = g_new0(unknown_op, 1);
                u->first = n;
                g_hash_table_insert(by_type, key, u);
                g_ptr_array_add(types, u);
            } else {
                g_free(key);
            }
            u->count++;
        }
    }
    if (!types->len)
        return true;
    const fp_node *f = ((unknown_op *)types->pdata[0])->first;
    if (strict) {
        g_set_error(error, FP_BIND_ERROR, FP_BIND_ERROR_UNKNOWN_OP,
                    "%s: graph '%s': node '%s': op type '%s%s%s' is unknown to fuseplan (--strict)", path,
                    f->graph->name, f->name, f->domain, *f->domain ? "." : "", f->op_type);
        return false;
    }
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint i = 0; i < types->len; i++) {
        const unknown_op *u = types->pdata[i];
        const fp_node *n = u->first;
        fp_diag_add(diag, FP_DIAG_WARNING, "load", "unknown-op", n->name,
                    "op type '%s%s%s' (%u node%s, first '%s') is unknown to fuseplan: analyzed as opaque (no shape "
                    "rule, no fusion, no cost)",
                    n->domain, *n->domain ? "." : "", n->op_type, u->count, u->count == 1 ? "" : "s", n->name);
        if (i < 5)
            g_string_append_printf(list, "%s%s%s%s (%u)", i ? ", " : "", n->domain, *n->domain ? "." : "", n->op_type,
                                   u->count);
    }
    if (types->len > 5)
        g_string_append_printf(list, " and %u more", types->len - 5);
    *warning = g_strdup_printf("warning: %s: %u op type%s unknown to fuseplan, analyzed as opaque (no shape rule, "
                               "no fusion, no cost): %s; --strict refuses them",
                               path, types->len, types->len == 1 ? "" : "s", list->str);
    return true;
}
