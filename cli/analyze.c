/* analyze.c - shared options and the load -> shapes -> metrics sequence of analyzing commands. */
#include "analyze.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "frontends/load.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "reports/output.h"

void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o)
{
    GOptionEntry entries[] = {
        {"input", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &o->inputs,
         "Bind an input's shape, e.g. input:1x3x224x224 (repeatable)", "NAME:DIMS"},
        {"batch", 'b', 0, G_OPTION_ARG_INT64, &o->batch, "Bind the batch dimension of the inputs to N", "N"},
        {"batch-dim", 0, 0, G_OPTION_ARG_STRING, &o->batch_dim,
         "Name of the symbolic dimension --batch binds (default: first dim of each input)", "SYMBOL"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o->format, "Output format: text (default) or json", "FMT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output, "Write to FILE instead of standard output", "FILE"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "Print diagnostics (ops not inferred, ...)", NULL},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &o->strict,
         "Refuse op types fuseplan does not know (default: warn and analyze them as opaque)", NULL},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
}

void fp_cli_model_opts_clear(fp_cli_model_opts *o)
{
    g_strfreev(o->inputs);
    g_free(o->batch_dim);
    g_free(o->format);
    g_free(o->output);
    memset(o, 0, sizeof *o);
}

bool fp_cli_parse_input_spec(fp_model *m, const char *spec, char **name, fp_shape *shape, GError **error)
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

GHashTable *fp_cli_input_shapes(fp_model *m, char **specs, GError **error)
{
    GHashTable *shapes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (char **s = specs; s && *s; s++) {
        char *name = NULL;
        fp_shape *shape = fp_arena_alloc(m->arena, sizeof *shape);
        if (!fp_cli_parse_input_spec(m, *s, &name, shape, error)) {
            g_hash_table_unref(shapes);
            return NULL;
        }
        g_hash_table_insert(shapes, name, shape);
    }
    return shapes;
}

typedef struct {
    const fp_node *first;
    uint32_t count;
} unknown_op;

bool fp_cli_check_ops(const char *path, const fp_model *m, bool strict, fp_diag *diag, char **warning)
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
        fp_cli_error("%s: graph '%s': node '%s': op type '%s%s%s' is unknown to fuseplan (--strict)", path,
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

fp_model *fp_cli_load_analyzed(const char *path, const fp_cli_model_opts *o, fp_diag *diag)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    if (!m) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    g_autofree char *warning = NULL;
    if (!fp_cli_check_ops(path, m, o->strict, diag, &warning))
        return NULL;
    if (o->batch < 0) {
        fp_cli_error("--batch %" G_GINT64_FORMAT ": must be positive", o->batch);
        return NULL;
    }
    g_autoptr(GHashTable) shapes = fp_cli_input_shapes(m, o->inputs, &err);
    if (!shapes) {
        fp_cli_error("%s", err->message);
        return NULL;
    }
    fp_shape_opts so = {.input_shapes = shapes, .batch = o->batch, .batch_dim = o->batch_dim};
    if (!fp_pass_shapes(m, &so, diag, &err)) {
        fp_cli_error("%s: %s", path, err->message);
        return NULL;
    }
    fp_pass_metrics(m, diag);
    if (warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", warning);
    return g_steal_pointer(&m);
}

bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data)
{
    if (!output || strcmp(output, "-") == 0) {
        emit(stdout, data);
        fflush(stdout);
        return !ferror(stdout);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fp_cli_error("%s: %s", output, g_strerror(errno));
        return false;
    }
    emit(mem, data);
    fclose(mem);
    g_autoptr(GError) err = NULL;
    bool ok = fp_output_write(output, buf, (gssize)len, &err);
    if (!ok)
        fp_cli_error("%s: %s", output, err->message);
    free(buf);
    return ok;
}
