/* tutil.c - test helpers (see tutil.h). Builds ONNX models with protobuf-c structs; every
 * allocation is tracked in b->trash and freed by tb_free. */
#include "tutil.h"

#include <glib/gstdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "frontends/onnx/onnx.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"

struct tb {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset, domain; /* ai.onnx; the one other domain tb_domain imports */
    Onnx__OperatorSetIdProto *opsets[2];
    GPtrArray *trash;
    GPtrArray *nodes, *inputs, *outputs, *inits;
};

static void *keep(tb *b, void *p)
{
    g_ptr_array_add(b->trash, p);
    return p;
}

static char *kstr(tb *b, const char *s) { return keep(b, g_strdup(s)); }

tb *tb_new(int64_t opset)
{
    tb *b = g_new0(tb, 1);
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->trash = g_ptr_array_new_with_free_func(g_free);
    b->nodes = g_ptr_array_new();
    b->inputs = g_ptr_array_new();
    b->outputs = g_ptr_array_new();
    b->inits = g_ptr_array_new();
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.producer_name = "fuseplan-tests";
    b->opset.domain = "";
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->opsets[0] = &b->opset;
    b->model.n_opset_import = 1;
    b->model.opset_import = b->opsets;
    b->model.graph = &b->graph;
    b->graph.name = "test";
    return b;
}

void tb_free(tb *b)
{
    g_ptr_array_free(b->trash, TRUE);
    g_ptr_array_free(b->nodes, TRUE);
    g_ptr_array_free(b->inputs, TRUE);
    g_ptr_array_free(b->outputs, TRUE);
    g_ptr_array_free(b->inits, TRUE);
    g_free(b);
}

static Onnx__ValueInfoProto *value_info(tb *b, const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = keep(b, g_new0(Onnx__ValueInfoProto, 1));
    onnx__value_info_proto__init(vi);
    vi->name = kstr(b, name);
    Onnx__TypeProto *tp = keep(b, g_new0(Onnx__TypeProto, 1));
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = keep(b, g_new0(Onnx__TypeProto__Tensor, 1));
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sp = keep(b, g_new0(Onnx__TensorShapeProto, 1));
        onnx__tensor_shape_proto__init(sp);
        sp->n_dim = rank;
        sp->dim = keep(b, g_new0(Onnx__TensorShapeProto__Dimension *, rank + 1));
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = keep(b, g_new0(Onnx__TensorShapeProto__Dimension, 1));
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] < 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = "N";
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            }
            sp->dim[i] = d;
        }
        tt->shape = sp;
    }
    vi->type = tp;
    return vi;
}

void tb_input(tb *b, const char *name, int dtype, int rank, const int64_t *dims)
{
    g_ptr_array_add(b->inputs, value_info(b, name, dtype, rank, dims));
}

void tb_output(tb *b, const char *name, int dtype, int rank, const int64_t *dims)
{
    g_ptr_array_add(b->outputs, value_info(b, name, dtype, rank, dims));
}

static Onnx__TensorProto *tensor(tb *b, const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__TensorProto *t = keep(b, g_new0(Onnx__TensorProto, 1));
    onnx__tensor_proto__init(t);
    t->name = kstr(b, name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = rank;
    t->dims = keep(b, g_new0(int64_t, rank + 1));
    if (rank > 0)
        memcpy(t->dims, dims, sizeof(int64_t) * rank);
    return t;
}

void tb_init(tb *b, const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__TensorProto *t = tensor(b, name, dtype, rank, dims);
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    size_t esz = dtype == 1 || dtype == 6 ? 4 : dtype == 7 || dtype == 11 ? 8 : dtype == 10 ? 2 : 1;
    t->has_raw_data = 1;
    t->raw_data.len = n * esz;
    t->raw_data.data = keep(b, g_malloc0(n * esz + 1));
    g_ptr_array_add(b->inits, t);
}

/* A scalar initializer (rank 0) of ONNX dtype `dtype` whose raw data is the `size` bytes at bytes. */
static void init_scalar(tb *b, const char *name, int dtype, const void *bytes, size_t size)
{
    Onnx__TensorProto *t = tensor(b, name, dtype, 0, NULL);
    t->has_raw_data = 1;
    t->raw_data.len = size;
    t->raw_data.data = keep(b, g_memdup2(bytes, size));
    g_ptr_array_add(b->inits, t);
}

void tb_init_i64_scalar(tb *b, const char *name, int64_t value) { init_scalar(b, name, 7, &value, 8); }

void tb_init_i64(tb *b, const char *name, int n, const int64_t *vals)
{
    int64_t dims[1] = {n};
    Onnx__TensorProto *t = tensor(b, name, 7, vals ? 1 : 0, dims); /* vals NULL: scalar 0 */
    if (!vals) {
        static const int64_t zero = 0;
        vals = &zero;
        n = 1;
    }
    t->has_raw_data = 1;
    t->raw_data.len = 8 * n;
    t->raw_data.data = keep(b, g_malloc0(8 * n + 1));
    memcpy(t->raw_data.data, vals, 8 * n);
    g_ptr_array_add(b->inits, t);
}

void tb_init_f32(tb *b, const char *name, int n, const float *vals)
{
    int64_t dims[1] = {n};
    Onnx__TensorProto *t = tensor(b, name, 1, n ? 1 : 0, dims);
    int count = n ? n : 1;
    t->has_raw_data = 1;
    t->raw_data.len = 4 * count;
    t->raw_data.data = keep(b, g_malloc0(4 * count + 1));
    memcpy(t->raw_data.data, vals, 4 * count);
    g_ptr_array_add(b->inits, t);
}

void tb_init_f16_scalar(tb *b, const char *name, uint16_t bits) { init_scalar(b, name, 10, &bits, 2); }

static char **split_names(tb *b, const char *list, size_t *n)
{
    if (!*list) {
        *n = 0;
        return NULL;
    }
    char **parts = g_strsplit(list, ",", -1);
    *n = g_strv_length(parts);
    keep(b, parts);
    for (size_t i = 0; i < *n; i++)
        keep(b, parts[i]);
    return parts;
}

tb_node_t *tb_node(tb *b, const char *op, const char *name, const char *inputs, const char *outputs)
{
    Onnx__NodeProto *n = keep(b, g_new0(Onnx__NodeProto, 1));
    onnx__node_proto__init(n);
    n->op_type = kstr(b, op);
    n->name = kstr(b, name);
    n->input = split_names(b, inputs, &n->n_input);
    n->output = split_names(b, outputs, &n->n_output);
    g_ptr_array_add(b->nodes, n);
    return n;
}

void tb_domain(tb *b, tb_node_t *n, const char *domain)
{
    n->domain = kstr(b, domain);
    if (b->model.n_opset_import == 1) {
        onnx__operator_set_id_proto__init(&b->domain);
        b->domain.domain = kstr(b, domain);
        b->domain.has_version = 1;
        b->domain.version = 1;
        b->opsets[1] = &b->domain;
        b->model.n_opset_import = 2;
    }
    g_assert(strcmp(b->domain.domain, domain) == 0);
}

static Onnx__AttributeProto *attr(tb *b, tb_node_t *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = keep(b, g_new0(Onnx__AttributeProto, 1));
    onnx__attribute_proto__init(a);
    a->name = kstr(b, name);
    a->has_type = 1;
    a->type = type;
    Onnx__AttributeProto **arr = keep(b, g_new0(Onnx__AttributeProto *, n->n_attribute + 1));
    if (n->n_attribute)
        memcpy(arr, n->attribute, n->n_attribute * sizeof *arr);
    arr[n->n_attribute++] = a;
    n->attribute = arr;
    return a;
}

void tb_attr_i(tb *b, tb_node_t *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

void tb_attr_f(tb *b, tb_node_t *n, const char *name, float v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

void tb_attr_s(tb *b, tb_node_t *n, const char *name, const char *v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)kstr(b, v);
}

void tb_attr_ints(tb *b, tb_node_t *n, const char *name, int cnt, const int64_t *v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = cnt;
    a->ints = keep(b, g_new0(int64_t, cnt + 1));
    memcpy(a->ints, v, sizeof(int64_t) * cnt);
}

static void fill_graph(tb *b)
{
    b->graph.n_node = b->nodes->len;
    b->graph.node = (Onnx__NodeProto **)b->nodes->pdata;
    b->graph.n_input = b->inputs->len;
    b->graph.input = (Onnx__ValueInfoProto **)b->inputs->pdata;
    b->graph.n_output = b->outputs->len;
    b->graph.output = (Onnx__ValueInfoProto **)b->outputs->pdata;
    b->graph.n_initializer = b->inits->len;
    b->graph.initializer = (Onnx__TensorProto **)b->inits->pdata;
}

void tb_attr_graph(tb *b, tb_node_t *n, const char *name, tb *sub)
{
    fill_graph(sub);
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = &sub->graph;
}

void tb_make_external(tb *b, const char *name, const char *location, uint64_t offset, uint64_t length)
{
    for (guint i = 0; i < b->inits->len; i++) {
        Onnx__TensorProto *t = b->inits->pdata[i];
        if (strcmp(t->name, name) != 0)
            continue;
        t->has_raw_data = 0;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        const char *kv[3][2] = {{"location", location}, {"offset", NULL}, {"length", NULL}};
        kv[1][1] = keep(b, g_strdup_printf("%" G_GUINT64_FORMAT, offset));
        kv[2][1] = keep(b, g_strdup_printf("%" G_GUINT64_FORMAT, length));
        t->n_external_data = 3;
        t->external_data = keep(b, g_new0(Onnx__StringStringEntryProto *, 3));
        for (int k = 0; k < 3; k++) {
            Onnx__StringStringEntryProto *e = keep(b, g_new0(Onnx__StringStringEntryProto, 1));
            onnx__string_string_entry_proto__init(e);
            e->key = kstr(b, kv[k][0]);
            e->value = (char *)kv[k][1];
            t->external_data[k] = e;
        }
    }
}

GBytes *tb_pack(tb *b)
{
    fill_graph(b);
    size_t len = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = g_malloc(len + 1);
    onnx__model_proto__pack(&b->model, buf);
    return g_bytes_new_take(buf, len);
}

char *tu_write_temp(const void *data, size_t len, const char *suffix)
{
    g_autofree char *tmpl = g_strdup_printf("fuseplan-test-XXXXXX%s", suffix ? suffix : "");
    char *path = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp(tmpl, &path, &err);
    g_assert_no_error(err);
    close(fd);
    g_file_set_contents(path, data, (gssize)len, &err);
    g_assert_no_error(err);
    return path;
}

char *tb_write_temp(tb *b, const char *suffix)
{
    g_autoptr(GBytes) bytes = tb_pack(b);
    gsize len = 0;
    const void *data = g_bytes_get_data(bytes, &len);
    return tu_write_temp(data, len, suffix);
}

tu_run_result tu_run(const char *const *args) { return tu_run_exe(FP_BINARY, NULL, args); }

tu_run_result tu_run_exe(const char *exe, const char *const *env, const char *const *args)
{
    g_auto(GStrv) envp = g_get_environ();
    for (const char *const *e = env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        g_assert(eq);
        g_autofree char *name = g_strndup(*e, (gsize)(eq - *e));
        envp = g_environ_setenv(envp, name, eq + 1, TRUE);
    }
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)exe);
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, NULL);
    tu_run_result r = {-1, NULL, NULL};
    int wait_status = 0;
    GError *err = NULL;
    g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err, &wait_status, &err);
    g_assert_no_error(err);
    if (WIFEXITED(wait_status))
        r.status = WEXITSTATUS(wait_status);
    g_ptr_array_free(argv, TRUE);
    return r;
}

void tu_run_clear(tu_run_result *r)
{
    g_free(r->out);
    g_free(r->err);
    r->out = r->err = NULL;
}

int tu_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

void tu_expect_error(const GError *err, const char *needle)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, needle))
        fprintf(stderr, "\n  expected '%s' in: %s\n", needle, err->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    CU_ASSERT_PTR_NULL(strchr(err->message, '\n'));
}

void tu_expect_cli_error(const char *const *args, const char *path, const char *needle)
{
    tu_run_result r = tu_run(args);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    if (path)
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, path));
    if (!strstr(r.err, needle))
        fprintf(stderr, "\n  expected '%s' in: %s", needle, r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, needle));
    CU_ASSERT_STRING_EQUAL(r.out, "");
    tu_run_clear(&r);
}

void tu_golden_text(const char *text, const char *name)
{
    g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "tests", "golden", name, NULL);
    if (g_getenv("FP_UPDATE_GOLDEN")) {
        CU_ASSERT(g_file_set_contents(path, text, -1, NULL));
        return;
    }
    g_autofree char *want = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &want, NULL, NULL));
    if (strcmp(want, text) != 0)
        fprintf(stderr, "\n  %s differs (FP_UPDATE_GOLDEN=1 rewrites it after review)", name);
    CU_ASSERT_STRING_EQUAL(text, want);
}

void tu_golden(const char *const *args, const char *name)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    tu_run_result r = tu_run(args);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_golden_text(r.out, name);
    tu_run_clear(&r);
}

void tu_expect_nothing_unknown(const fp_diag *diag)
{
    for (guint i = 0; i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        bool unknown = strcmp(e->code, "shape-unknown") == 0 || strcmp(e->code, "unknown-op") == 0;
        if (unknown)
            fprintf(stderr, "\n  %s: %s", e->code, e->message);
        CU_ASSERT_FALSE(unknown);
    }
}

fp_model *tu_analyze_tb(tb *b, GError **err)
{
    g_autoptr(GBytes) bytes = tb_pack(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    fp_model *m = fp_onnx_load_buffer("mem.onnx", data, len, err);
    if (m && !fp_pass_shapes(m, &(fp_shape_opts){0}, NULL, err)) {
        fp_model_free(m);
        return NULL;
    }
    if (m)
        fp_pass_metrics(m, NULL);
    return m;
}

bool tu_removed(const fp_model *m, const char *name)
{
    const fp_node *n = fp_node_lookup(m, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    return n->flags & FP_NODE_REMOVED;
}

fp_model *tu_load_tb(tb *b)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = tu_analyze_tb(b, &err);
    if (!m)
        fprintf(stderr, "\n  %s", err ? err->message : "(no error)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}
