/* test_shapes_testdata.c - shape inference against reference outputs: for every model of Debian's
 * libonnx-testdata, the inferred output shapes must equal the dims of test_data_set_0/output_*.pb.
 * Input shapes (and the values of small inputs, e.g. a Reshape's shape argument) are bound from
 * test_data_set_0/input_*.pb, as a user would with --input. Models that cannot be inferred are
 * listed, with the reason, in docs/shape-coverage.md; that table is the expected-failure list. */
#include <glib/gstdio.h>
#include <string.h>

#include "frontends/load.h"
#include "frontends/onnx/onnx.h"
#include "passes/shape/shapes.h"
#include "tutil.h"

#define TESTDATA_DIR "/usr/share/libonnx-testdata/data"
#define COVERAGE_DOC FP_SOURCE_DIR "/docs/shape-coverage.md"

/* Reads the model names listed in the first column of docs/shape-coverage.md's tables. */
static GHashTable *expected_failures(void)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(COVERAGE_DOC, &text, NULL, NULL))
        return h;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (strncmp(*l, "| `", 3) != 0)
            continue;
        const char *start = *l + 3, *end = strchr(start, '`');
        if (end)
            g_hash_table_add(h, g_strndup(start, end - start));
    }
    return h;
}

/* Reads a varint at *p; false past end. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* Element shapes of a serialized onnx.SequenceProto (field 3: tensor_values), or of the sequence
 * or tensor held by an onnx.OptionalProto (fields 3 tensor_value, 5 sequence_value). The ONNX
 * schema compiled here has no SequenceProto, so the few fields needed are read off the wire. */
static bool read_elems(fp_model *m, const uint8_t *p, const uint8_t *end, bool optional, GArray *shapes)
{
    while (p < end) {
        uint64_t tag, len;
        if (!varint(&p, end, &tag))
            return false;
        if ((tag & 7) == 0) {
            if (!varint(&p, end, &len))
                return false;
            continue;
        }
        if ((tag & 7) != 2 || !varint(&p, end, &len) || len > (uint64_t)(end - p))
            return false;
        uint64_t field = tag >> 3;
        if (field == 3) {
            g_autofree char *path = tu_write_temp(p, len, ".pb");
            fp_tensor *t = fp_onnx_load_tensor(m, path, NULL, NULL);
            g_unlink(path);
            if (!t)
                return false;
            g_array_append_val(shapes, t->shape);
        } else if (field == 5 && optional && !read_elems(m, p, p + len, false, shapes)) {
            return false;
        }
        p += len;
    }
    return true;
}

/* Compares a sequence (or optional) output with its SequenceProto / OptionalProto reference. */
static char *check_sequence(fp_model *m, fp_value *v, const char *file)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(file, &data, &len, NULL))
        return g_strdup_printf("'%s': no reference", v->name);
    g_autoptr(GArray) ref = g_array_new(FALSE, FALSE, sizeof(fp_shape));
    if (!read_elems(m, (const uint8_t *)data, (const uint8_t *)data + len, v->type == FP_TYPE_OPTIONAL, ref))
        return g_strdup_printf("'%s': unreadable reference", v->name);
    bool is_seq = v->type == FP_TYPE_SEQUENCE || v->elem_kind == FP_TYPE_SEQUENCE;
    if (!is_seq) { /* optional tensor */
        if (ref->len != 1)
            return g_strdup_printf("'%s': optional reference holds %u tensors", v->name, ref->len);
        g_autofree char *got = fp_shape_to_string(&v->shape),
                        *want = fp_shape_to_string(&g_array_index(ref, fp_shape, 0));
        return strcmp(got, want) == 0 && fp_shape_static(&v->shape)
                   ? NULL
                   : g_strdup_printf("'%s': inferred %s, reference %s", v->name, got, want);
    }
    if (fp_value_n_elems(v) >= 0) {
        if ((guint)fp_value_n_elems(v) != ref->len)
            return g_strdup_printf("'%s': inferred %d elements, reference %u", v->name, fp_value_n_elems(v), ref->len);
        for (guint k = 0; k < ref->len; k++) {
            g_autofree char *got = fp_shape_to_string(&fp_value_elems(v)[k]),
                            *want = fp_shape_to_string(&g_array_index(ref, fp_shape, k));
            if (strcmp(got, want) != 0)
                return g_strdup_printf("'%s' element %u: inferred %s, reference %s", v->name, k, got, want);
        }
        return NULL;
    }
    /* length unknown: every reference element must have the inferred (static) element shape */
    g_autofree char *got = fp_shape_to_string(&v->shape);
    for (guint k = 0; k < ref->len; k++) {
        g_autofree char *want = fp_shape_to_string(&g_array_index(ref, fp_shape, k));
        if (strcmp(got, want) != 0 || !fp_shape_static(&v->shape))
            return g_strdup_printf("'%s' element %u: inferred element shape %s, reference %s", v->name, k, got, want);
    }
    return NULL;
}

/* Returns NULL when every output matches, else a description of the first mismatch. */
static char *check_model(const char *dir)
{
    g_autofree char *model_path = g_build_filename(dir, "model.onnx", NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(model_path, &err);
    if (!m)
        return g_strdup_printf("import: %s", err->message);
    /* forget every declared type but those of graph inputs: what is checked is inference alone */
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++) {
            fp_value *v = g->values->pdata[i];
            if (v->kind == FP_VALUE_INTERMEDIATE) {
                v->decl_shape = (fp_shape){-1, NULL};
                v->decl_dtype = FP_DT_UNDEFINED;
            }
        }
    }
    g_autoptr(GHashTable) shapes = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GHashTable) values = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        fp_value *v = m->main->inputs->pdata[i];
        g_autofree char *file = g_strdup_printf("%s/test_data_set_0/input_%u.pb", dir, i);
        if (v->type != FP_TYPE_TENSOR || !g_file_test(file, G_FILE_TEST_EXISTS))
            continue;
        fp_tensor *t = fp_onnx_load_tensor(m, file, NULL, NULL);
        if (!t)
            continue;
        if (v->decl_shape.rank >= 0 && v->decl_shape.rank != t->shape.rank)
            continue; /* the test data disagrees with the model's declaration: keep the model's */
        g_hash_table_insert(shapes, (gpointer)v->name, &t->shape);
        if (t->where == FP_DATA_INLINE)
            g_hash_table_insert(values, (gpointer)v->name, t);
    }
    fp_shape_opts opts = {.input_shapes = shapes, .input_values = values};
    g_autoptr(fp_diag) diag = fp_diag_new();
    if (!fp_pass_shapes(m, &opts, diag, &err))
        return g_strdup_printf("shapes: %s", err->message);
    for (guint i = 0; i < m->main->outputs->len; i++) {
        fp_value *v = m->main->outputs->pdata[i];
        g_autofree char *file = g_strdup_printf("%s/test_data_set_0/output_%u.pb", dir, i);
        if (v->type == FP_TYPE_SEQUENCE || v->type == FP_TYPE_OPTIONAL) {
            char *why = check_sequence(m, v, file);
            if (why)
                return why;
            continue;
        }
        if (v->type != FP_TYPE_TENSOR)
            return g_strdup_printf("output %u '%s' is not a tensor", i, v->name);
        fp_tensor *t = fp_onnx_load_tensor(m, file, NULL, NULL);
        if (!t)
            return g_strdup_printf("output %u: no reference", i);
        g_autofree char *got = fp_shape_to_string(&v->shape), *want = fp_shape_to_string(&t->shape);
        if (strcmp(got, want) != 0 || !fp_shape_static(&v->shape)) {
            const char *why = "";
            for (guint k = 0; k < diag->entries->len; k++) {
                fp_diag_entry *e = diag->entries->pdata[k];
                if (e->level >= FP_DIAG_INFO && e->code && strcmp(e->code, "shape-unknown") == 0) {
                    why = e->message;
                    break;
                }
            }
            return g_strdup_printf("output %u '%s': inferred %s, reference %s%s%s", i, v->name, got, want,
                                   *why ? " -- " : "", why);
        }
        /* libonnx-testdata 1.12 stores bfloat16 references as uint16 */
        if (v->dtype != t->dtype && !(v->dtype == FP_DT_BFLOAT16 && t->dtype == FP_DT_UINT16))
            return g_strdup_printf("output %u '%s': inferred %s, reference %s", i, v->name, fp_dtype_name(v->dtype),
                                   fp_dtype_name(t->dtype));
    }
    return NULL;
}

/* g_ptr_array_sort comparator over char* elements. */
static gint cmp_strp(gconstpointer a, gconstpointer b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

static void run_suite(const char *sub, double min_ratio)
{
    g_autofree char *root = g_build_filename(TESTDATA_DIR, sub, NULL);
    GDir *d = g_dir_open(root, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)))
        g_ptr_array_add(names, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_strp);
    g_autoptr(GHashTable) expected = expected_failures();
    unsigned ok = 0, listed = 0, unexpected = 0, stale = 0;
    bool verbose = g_getenv("FP_SHAPES_VERBOSE") != NULL;
    for (guint i = 0; i < names->len; i++) {
        const char *n = *(char **)&names->pdata[i];
        g_autofree char *dir = g_build_filename(root, n, NULL);
        g_autofree char *key = g_strdup_printf("%s/%s", sub, n);
        g_autofree char *why = check_model(dir);
        bool is_listed = g_hash_table_contains(expected, key);
        if (!why) {
            ok++;
            if (is_listed) {
                stale++;
                fprintf(stderr, "\n  %s is listed in docs/shape-coverage.md but now infers correctly", key);
            }
        } else if (is_listed) {
            listed++;
            if (verbose)
                fprintf(stderr, "\n  listed %s: %s", key, why);
        } else {
            unexpected++;
            fprintf(stderr, "\n  %s: %s", key, why);
        }
    }
    printf("\n  shapes %s: %u models, %u inferred and equal (%.1f%%), %u listed in docs/shape-coverage.md, "
           "%u unexpected\n",
           sub, names->len, ok, 100.0 * ok / MAX(names->len, 1), listed, unexpected);
    CU_ASSERT_EQUAL(unexpected, 0);
    CU_ASSERT_EQUAL(stale, 0);
    CU_ASSERT(ok >= min_ratio * names->len);
}

static void test_node(void) { run_suite("node", 0.95); }
static void test_pytorch_converted(void) { run_suite("pytorch-converted", 1.0); }
static void test_pytorch_operator(void) { run_suite("pytorch-operator", 1.0); }
static void test_simple(void) { run_suite("simple", 1.0); }

FP_TEST_SUITE(register_shapes_testdata)
{
    CU_pSuite s = CU_add_suite("shapes_testdata", NULL, NULL);
    CU_add_test(s, "pytorch_converted", test_pytorch_converted);
    CU_add_test(s, "pytorch_operator", test_pytorch_operator);
    CU_add_test(s, "simple", test_simple);
    CU_add_test(s, "node", test_node);
}
