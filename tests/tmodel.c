/* tmodel.c - test helpers over imported models and targets (see tmodel.h). */
#include "tmodel.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "frontends/load.h"
#include "passes/fusion/fuse.h"
#include "tutil.h"

#define DIFF(...) return g_strdup_printf(__VA_ARGS__)

static bool same_real(double x, double y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0; }

static char *shape_diff(const char *what, const fp_shape *a, const fp_shape *b)
{
    if (a->rank != b->rank)
        DIFF("%s: rank %d vs %d", what, a->rank, b->rank);
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i].value != b->dims[i].value || g_strcmp0(a->dims[i].sym, b->dims[i].sym) != 0)
            DIFF("%s: dim %d differs", what, i);
    return NULL;
}

static char *tensor_diff(const char *what, const fp_tensor *a, const fp_tensor *b)
{
    if (!a || !b) {
        if (a != b)
            DIFF("%s: tensor on one side only", what);
        return NULL;
    }
    if (a->dtype != b->dtype || a->nbytes != b->nbytes)
        DIFF("%s: tensor dtype %d/%d or bytes %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, what, a->dtype, b->dtype,
             a->nbytes, b->nbytes);
    char *d = shape_diff(what, &a->shape, &b->shape);
    if (d)
        return d;
    if ((a->where == FP_DATA_EXTERNAL) != (b->where == FP_DATA_EXTERNAL))
        DIFF("%s: external data on one side only", what);
    if (a->where == FP_DATA_EXTERNAL &&
        (g_strcmp0(a->location, b->location) || a->offset != b->offset || a->length != b->length))
        DIFF("%s: external data differs", what);
    if (a->where == FP_DATA_INLINE && b->where == FP_DATA_INLINE && memcmp(a->data, b->data, a->nbytes) != 0)
        DIFF("%s: inline payloads differ", what);
    /* a payload inline on one side may only be a file range (or not kept) on the other when large */
    if ((a->where == FP_DATA_INLINE) != (b->where == FP_DATA_INLINE) && a->nbytes <= FP_INLINE_MAX)
        DIFF("%s: small payload inline on one side only", what);
    return NULL;
}

static char *attr_diff(const char *node, const fp_attr *a, const fp_attr *b)
{
    g_autofree char *what = g_strdup_printf("node '%s' attribute '%s'", node, a->name);
    if (g_strcmp0(a->name, b->name) || a->type != b->type || a->n != b->n ||
        g_strcmp0(a->ref_attr_name, b->ref_attr_name))
        DIFF("%s: name/type/count differ ('%s' type %d n %u vs '%s' type %d n %u)", what, a->name, a->type, a->n,
             b->name, b->type, b->n);
    switch (a->type) {
    case FP_ATTR_FLOAT:
        if (!same_real(a->u.f, b->u.f))
            DIFF("%s: %g vs %g", what, a->u.f, b->u.f);
        break;
    case FP_ATTR_INT:
        if (a->u.i != b->u.i)
            DIFF("%s: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, what, a->u.i, b->u.i);
        break;
    case FP_ATTR_STRING:
        if (memcmp(a->u.s, b->u.s, a->n) != 0)
            DIFF("%s: strings differ", what);
        break;
    case FP_ATTR_FLOATS:
        for (uint32_t i = 0; i < a->n; i++)
            if (!same_real(a->u.floats[i], b->u.floats[i]))
                DIFF("%s: element %u differs", what, i);
        break;
    case FP_ATTR_INTS:
        if (a->n && memcmp(a->u.ints, b->u.ints, a->n * sizeof(int64_t)) != 0)
            DIFF("%s: ints differ", what);
        break;
    case FP_ATTR_STRINGS:
        for (uint32_t i = 0; i < a->n; i++)
            if (g_strcmp0(a->u.strings[i], b->u.strings[i]))
                DIFF("%s: string %u differs", what, i);
        break;
    case FP_ATTR_TENSOR:
    case FP_ATTR_SPARSE_TENSOR:
        return tensor_diff(what, a->u.t, b->u.t);
    case FP_ATTR_TENSORS:
        for (uint32_t i = 0; i < a->n; i++) {
            char *d = tensor_diff(what, a->u.tensors[i], b->u.tensors[i]);
            if (d)
                return d;
        }
        break;
    case FP_ATTR_GRAPH:
        if (g_strcmp0(a->u.g->name, b->u.g->name))
            DIFF("%s: graph names differ", what);
        break;
    default:
        break;
    }
    return NULL;
}

static const char *vname(const fp_value *v) { return v ? v->name : NULL; }

static char *node_diff(const fp_node *a, const fp_node *b)
{
    if (a->op != b->op || g_strcmp0(a->op_type, b->op_type) || g_strcmp0(a->domain, b->domain) ||
        g_strcmp0(a->name, b->name) || a->opset != b->opset)
        DIFF("node '%s' (%s) vs '%s' (%s)", a->name, a->op_type, b->name, b->op_type);
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs ||
        a->n_subgraphs != b->n_subgraphs || fp_node_n_implicit(a) != fp_node_n_implicit(b) ||
        fp_node_n_ctrl(a) != fp_node_n_ctrl(b))
        DIFF("node '%s': input/output/attribute/subgraph/control counts differ", a->name);
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (g_strcmp0(vname(a->inputs[i]), vname(b->inputs[i])))
            DIFF("node '%s': input %u '%s' vs '%s'", a->name, i, vname(a->inputs[i]), vname(b->inputs[i]));
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (g_strcmp0(vname(a->outputs[i]), vname(b->outputs[i])))
            DIFF("node '%s': output %u differs", a->name, i);
    for (uint32_t i = 0; i < fp_node_n_implicit(a); i++)
        if (g_strcmp0(vname(a->ext->implicit[i]), vname(b->ext->implicit[i])))
            DIFF("node '%s': implicit input %u differs", a->name, i);
    for (uint32_t i = 0; i < fp_node_n_ctrl(a); i++)
        if (g_strcmp0(a->ext->ctrl[i]->name, b->ext->ctrl[i]->name))
            DIFF("node '%s': control edge %u differs", a->name, i);
    for (uint32_t i = 0; i < a->n_subgraphs; i++)
        if (g_strcmp0(a->subgraphs[i]->name, b->subgraphs[i]->name))
            DIFF("node '%s': subgraph %u differs", a->name, i);
    for (uint32_t i = 0; i < a->n_attrs; i++) {
        char *d = attr_diff(a->name, &a->attrs[i], &b->attrs[i]);
        if (d)
            return d;
    }
    return NULL;
}

static char *value_diff(const fp_value *a, const fp_value *b)
{
    if (g_strcmp0(a->name, b->name))
        DIFF("value '%s' vs '%s'", a->name, b->name);
    g_autofree char *what = g_strdup_printf("value '%s'", a->name);
    if (a->kind != b->kind || a->type != b->type || a->dtype != b->dtype || a->decl_dtype != b->decl_dtype ||
        a->is_output != b->is_output || a->declared != b->declared || a->n_uses != b->n_uses)
        DIFF("%s: kind/type/dtype/uses differ", what);
    if ((a->producer == NULL) != (b->producer == NULL) ||
        (a->producer && (g_strcmp0(a->producer->name, b->producer->name) || a->producer_port != b->producer_port)))
        DIFF("%s: producers differ", what);
    if (g_strcmp0(fp_value_layout(a), fp_value_layout(b)) ||
        g_strcmp0(fp_value_origin_layout(a), fp_value_origin_layout(b)))
        DIFF("%s: layouts differ", what);
    if ((fp_value_origin_shape(a) == NULL) != (fp_value_origin_shape(b) == NULL))
        DIFF("%s: origin shape on one side only", what);
    char *d = shape_diff(what, &a->shape, &b->shape);
    if (!d)
        d = shape_diff(what, &a->decl_shape, &b->decl_shape);
    if (!d && fp_value_origin_shape(a))
        d = shape_diff(what, fp_value_origin_shape(a), fp_value_origin_shape(b));
    if (!d)
        d = tensor_diff(what, a->tensor, b->tensor);
    return d;
}

static char *list_diff(const char *what, const fp_graph *g, GPtrArray *a, GPtrArray *b)
{
    if (a->len != b->len)
        DIFF("graph '%s': %u vs %u %s", g->name, a->len, b->len, what);
    for (guint i = 0; i < a->len; i++)
        if (g_strcmp0(vname(a->pdata[i]), vname(b->pdata[i])))
            DIFF("graph '%s': %s %u differs", g->name, what, i);
    return NULL;
}

static char *graph_diff(const fp_graph *a, const fp_graph *b)
{
    if (g_strcmp0(a->name, b->name) || (a->owner == NULL) != (b->owner == NULL) ||
        (a->owner && g_strcmp0(a->owner->name, b->owner->name)))
        DIFF("graph '%s' vs '%s'", a->name, b->name);
    if (a->nodes->len != b->nodes->len || a->values->len != b->values->len)
        DIFF("graph '%s': %u/%u nodes, %u/%u values", a->name, a->nodes->len, b->nodes->len, a->values->len,
             b->values->len);
    char *d = NULL;
    for (guint i = 0; i < a->nodes->len && !d; i++)
        d = node_diff(a->nodes->pdata[i], b->nodes->pdata[i]);
    for (guint i = 0; i < a->values->len && !d; i++)
        d = value_diff(a->values->pdata[i], b->values->pdata[i]);
    if (!d)
        d = list_diff("inputs", a, a->inputs, b->inputs);
    if (!d)
        d = list_diff("outputs", a, a->outputs, b->outputs);
    if (!d)
        d = list_diff("initializers", a, a->initializers, b->initializers);
    return d;
}

char *tm_model_diff(const fp_model *a, const fp_model *b)
{
    if (a->ir_version != b->ir_version || a->model_version != b->model_version ||
        g_strcmp0(a->producer_name, b->producer_name) || g_strcmp0(a->producer_version, b->producer_version) ||
        g_strcmp0(a->domain, b->domain) || g_strcmp0(a->doc, b->doc))
        DIFF("model headers differ");
    if (a->n_opsets != b->n_opsets)
        DIFF("%u vs %u opsets", a->n_opsets, b->n_opsets);
    for (uint32_t i = 0; i < a->n_opsets; i++)
        if (g_strcmp0(a->opsets[i].domain, b->opsets[i].domain) || a->opsets[i].version != b->opsets[i].version)
            DIFF("opset %u differs", i);
    if (a->graphs->len != b->graphs->len)
        DIFF("%u vs %u graphs", a->graphs->len, b->graphs->len);
    for (guint i = 0; i < a->graphs->len; i++) {
        char *d = graph_diff(a->graphs->pdata[i], b->graphs->pdata[i]);
        if (d)
            return d;
    }
    return NULL;
}

guint tm_count_ops(const fp_graph *g, const char *op)
{
    guint n = 0;
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *x = g->nodes->pdata[i];
        n += !(x->flags & (FP_NODE_REMOVED | FP_NODE_FOLDED)) && strcmp(x->op_type, op) == 0;
    }
    return n;
}

void tm_expect_target_error(const char *ini, const char *needle)
{
    g_autofree char *path = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load(path, &err);
    CU_ASSERT_PTR_NULL(t);
    tu_expect_error(err, needle);
    g_unlink(path);
}

bool tm_protoc(const char *const *args, const char *in_path, const char *out_path, char **err)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "protoc");
    for (; *args; args++)
        g_ptr_array_add(argv, (gpointer)*args);
    g_ptr_array_add(argv, NULL);
    g_unlink(out_path); /* the launcher does not truncate an existing file */
    g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_subprocess_launcher_set_stdin_file_path(l, in_path);
    g_subprocess_launcher_set_stdout_file_path(l, out_path);
    GError *e = NULL;
    g_autoptr(GSubprocess) p = g_subprocess_launcher_spawnv(l, (const char *const *)argv->pdata, &e);
    g_autofree char *errtext = NULL;
    if (p && g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &errtext, &e) && g_subprocess_get_if_exited(p) &&
        g_subprocess_get_exit_status(p) == 0)
        return true;
    *err = e ? g_strdup(e->message) : g_strdup(errtext ? errtext : "protoc failed");
    g_clear_error(&e);
    return false;
}

GBytes *tm_data(const char *rel)
{
    g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "tests", "data", rel, NULL);
    gchar *raw = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &raw, &len, NULL))
        return NULL;
    GBytes *bytes = g_bytes_new_take(raw, len);
    if (!g_str_has_suffix(rel, ".gz"))
        return bytes;
    g_autoptr(GInputStream) mem = g_memory_input_stream_new_from_bytes(bytes);
    g_bytes_unref(bytes);
    g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
    g_autoptr(GInputStream) in = g_converter_input_stream_new(mem, G_CONVERTER(z));
    g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable();
    if (g_output_stream_splice(out, in, G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                               NULL) < 0)
        return NULL;
    return g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(out));
}

char *tm_tmpdir(void) { return g_dir_make_tmp("fuseplan-XXXXXX", NULL); }

void tm_rmdir(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
}

fp_model *tm_load_text(const char *text, const char *suffix)
{
    g_autofree char *path = tu_write_temp(text, strlen(text), suffix);
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_load_model(path, &err);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}
