/* test_ge.c - Ascend GE frontend suite: the real GE files of tests/data/ge (text dumps, .om,
 * atc JSON, GE-written ONNX) import and verify with the op counts the files themselves state
 * (counted here independently), text/binary round trips through protoc agree, the mapping onto
 * the IR (edges, control edges, ports, descriptors, layouts, op kinds, dtypes), and bad input. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "frontends/ge/ge.h"
#include "frontends/load.h"
#include "frontends/onnx/onnx_text.h"
#include "tmodel.h"
#include "tutil.h"

#define GE_PROTO_DIR FP_SOURCE_DIR "/frontends/ge"

static char *tmp_dir; /* suite temp dir: decompressed data files, protoc outputs */

static int suite_init(void)
{
    tmp_dir = tm_tmpdir();
    return tmp_dir ? 0 : 1;
}

static int suite_clean(void)
{
    tm_rmdir(tmp_dir);
    g_free(tmp_dir);
    return 0;
}

/* The test data files and what they are. */
static const struct {
    const char *file; /* below tests/data/ge; ".gz" ones are decompressed first */
    const char *format;
    unsigned graphs;
} files[] = {
    {"ge_proto_00000000_Build.txt", "ge-text", 1},
    {"ge_proto_00000001_Build.txt", "ge-text", 5},
    {"ge_proto_00056_Build.txt", "ge-text", 1},
    {"ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt.gz", "ge-text", 1},
    {"ge_proto_00026_afterUBMatch.txt.gz", "ge-text", 1},
    {"origin.txt", "ge-text", 1},
    {"ge_onnx_00000001_graph_11_Build.pbtxt", "ge-onnx-text", 5},
    {"root_model.om", "ge-om", 1},
    {"dynamic_and_static_graph_without_unfold.om", "ge-om", 3},
    {"hh_om.om", "ge-om", 1},
    {"test.om.json", "ge-json", 1},
};

/* A path holding the data file's bytes (decompressed into the temp dir when gzipped). */
static char *data_path(const char *file)
{
    g_autofree char *rel = g_build_filename("ge", file, NULL);
    if (!g_str_has_suffix(file, ".gz"))
        return g_build_filename(FP_SOURCE_DIR, "tests", "data", rel, NULL);
    g_autoptr(GBytes) b = tm_data(rel);
    g_assert(b);
    g_autofree char *name = g_strndup(file, strlen(file) - 3);
    char *path = g_build_filename(tmp_dir, name, NULL);
    gsize n = 0;
    const char *p = g_bytes_get_data(b, &n);
    g_assert(g_file_set_contents(path, p, (gssize)n, NULL));
    return path;
}

static fp_model *load(const char *file)
{
    g_autofree char *path = data_path(file);
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_load_model(path, &err);
    if (!m)
        fprintf(stderr, "\n  %s: %s\n", file, err->message);
    return m;
}

/* ---------------------------------------------------------------- independent counts */

static void count(GHashTable *h, const char *type, gsize len)
{
    char *k = g_strndup(type, len);
    g_hash_table_insert(h, k, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(g_hash_table_lookup(h, k)) + 1));
}

/* Op types of a ModelDef in protobuf text (GE dumps, protoc output): every `    type: "X"` line
 * (an OpDef field, two levels deep; no other GE message has a `type` field). */
static GHashTable *count_text_types(const char *text, gsize len)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *l = text, *end = text + len; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
        if (n > 12 && memcmp(l, "    type: \"", 11) == 0 && l[n - 1] == '"')
            count(h, l + 11, n - 12);
        l += n + 1;
    }
    return h;
}

/* Op types of GE-written ONNX text: every `op_type: "X"` line, "ge:" dropped. */
static GHashTable *count_onnx_types(const char *text, gsize len)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *l = text, *end = text + len; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
        const char *s = l;
        while (s < l + n && *s == ' ')
            s++;
        size_t rest = n - (size_t)(s - l);
        if (rest > 11 && memcmp(s, "op_type: \"", 10) == 0) {
            const char *t = s + 10;
            size_t tl = rest - 11;
            if (tl > 3 && memcmp(t, "ge:", 3) == 0)
                t += 3, tl -= 3;
            count(h, t, tl);
        }
        l += n + 1;
    }
    return h;
}

/* Op types of GE JSON: graph[*].op[*].type, read with json-glib. */
static GHashTable *count_json_types(const char *text, gsize len)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(JsonParser) p = json_parser_new();
    g_assert(json_parser_load_from_data(p, text, (gssize)len, NULL));
    JsonArray *graphs = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "graph");
    for (guint g = 0; g < json_array_get_length(graphs); g++) {
        JsonArray *ops = json_object_get_array_member(json_array_get_object_element(graphs, g), "op");
        for (guint i = 0; ops && i < json_array_get_length(ops); i++) {
            const char *t = json_object_get_string_member(json_array_get_object_element(ops, i), "type");
            count(h, t, strlen(t));
        }
    }
    return h;
}

/* The MODEL_DEF partition of an .om, read here independently of the frontend: both table
 * layouts, contiguous partitions after the table at byte 256. */
static GBytes *om_model_def(GBytes *om)
{
    gsize n = 0;
    const uint8_t *p = g_bytes_get_data(om, &n);
    uint32_t cnt;
    memcpy(&cnt, p + 256, 4);
    for (int wide = 1; wide >= 0; wide--) {
        size_t head = wide ? 8 : 4, esz = wide ? 24 : 12, start = 256 + head + cnt * esz;
        uint64_t expect = 0, md_off = 0, md_size = 0;
        bool ok = start <= n;
        for (uint32_t i = 0; ok && i < cnt; i++) {
            const uint8_t *e = p + 256 + head + i * esz;
            uint32_t type, o32, s32;
            uint64_t off, size;
            memcpy(&type, e, 4);
            if (wide) {
                memcpy(&off, e + 8, 8);
                memcpy(&size, e + 16, 8);
            } else {
                memcpy(&o32, e + 4, 4);
                memcpy(&s32, e + 8, 4);
                off = o32, size = s32;
            }
            ok = off == expect && start + off + size <= n;
            expect += size;
            if (type == 0)
                md_off = start + off, md_size = size;
        }
        if (ok && md_size)
            return g_bytes_new_from_bytes(om, md_off, md_size);
    }
    return NULL;
}

/* The file's own op-type counts, by the method that suits its kind. */
static GHashTable *count_types(const char *file)
{
    g_autofree char *rel = g_build_filename("ge", file, NULL);
    g_autoptr(GBytes) b = tm_data(rel);
    g_assert(b);
    gsize n = 0;
    const char *p = g_bytes_get_data(b, &n);
    if (g_str_has_suffix(file, ".pbtxt"))
        return count_onnx_types(p, n);
    if (g_str_has_suffix(file, ".json"))
        return count_json_types(p, n);
    if (!g_str_has_suffix(file, ".om"))
        return count_text_types(p, n);
    /* .om: protoc decodes the MODEL_DEF partition to text */
    g_autoptr(GBytes) md = om_model_def(b);
    g_assert(md);
    g_autofree char *in = g_build_filename(tmp_dir, "om_md.pb", NULL);
    g_autofree char *out = g_build_filename(tmp_dir, "om_md.txt", NULL);
    g_assert(g_file_set_contents(in, g_bytes_get_data(md, NULL), (gssize)g_bytes_get_size(md), NULL));
    g_autofree char *err = NULL;
    bool ran = tm_protoc((const char *[]){"-I" GE_PROTO_DIR, "--decode=ge.proto.ModelDef", "ge_ir.proto", NULL}, in,
                         out, &err);
    if (!ran)
        fprintf(stderr, "\n  protoc: %s\n", err);
    g_assert(ran);
    g_autofree char *text = NULL;
    gsize tl = 0;
    g_assert(g_file_get_contents(out, &text, &tl, NULL));
    return count_text_types(text, tl);
}

static uint64_t sum_counts(GHashTable *h)
{
    uint64_t s = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, &k, &v))
        s += GPOINTER_TO_SIZE(v);
    return s;
}

/* ---------------------------------------------------------------- the real files */

static void test_op_table(void)
{
    for (size_t i = 1; fp_ge_op_table_type(i); i++)
        CU_ASSERT(strcmp(fp_ge_op_table_type(i - 1), fp_ge_op_table_type(i)) < 0);
    CU_ASSERT_EQUAL(fp_ge_op_kind("Conv2D"), FP_OP_CONV);
    CU_ASSERT_EQUAL(fp_ge_op_kind("DepthwiseConv2D"), FP_OP_CONV);
    CU_ASSERT_EQUAL(fp_ge_op_kind("BNInferenceD"), FP_OP_BATCH_NORM);
    CU_ASSERT_EQUAL(fp_ge_op_kind("ReLU"), FP_OP_RELU);
    CU_ASSERT_EQUAL(fp_ge_op_kind("Relu"), FP_OP_RELU);
    CU_ASSERT_EQUAL(fp_ge_op_kind("FullyConnection"), FP_OP_GEMM);
    CU_ASSERT_EQUAL(fp_ge_op_kind("RealDiv"), FP_OP_DIV);
    CU_ASSERT_EQUAL(fp_ge_op_kind("TransData"), FP_OP_TRANS_DATA);
    CU_ASSERT_EQUAL(fp_ge_op_kind("ConcatV2D"), FP_OP_CONCAT);
    CU_ASSERT_EQUAL(fp_ge_op_kind("ConvBnFilterHost"), FP_OP_OPAQUE);
    CU_ASSERT_EQUAL(fp_ge_op_kind(""), FP_OP_OPAQUE);
    /* the two dtype numberings */
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(1), FP_DT_FLOAT);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(2), FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(7), FP_DT_INT32);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(27), FP_DT_BFLOAT16);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(0), FP_DT_UNDEFINED);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_proto(999), FP_DT_UNDEFINED);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(0), FP_DT_FLOAT);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(1), FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(3), FP_DT_INT32);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(9), FP_DT_INT64);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(28), FP_DT_UNDEFINED);
    CU_ASSERT_EQUAL(fp_ge_dtype_from_cpp(-1), FP_DT_UNDEFINED);
}

/* Every file imports, verifies (fp_load_model verifies), has the expected format and graph count,
 * and its node count and op histogram equal the file's own, counted independently; the CLI's
 * `info --format json` reports the same. */
static void test_files(void)
{
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        g_autoptr(fp_model) m = load(files[f].file);
        CU_ASSERT_PTR_NOT_NULL(m);
        if (!m)
            continue;
        CU_ASSERT_STRING_EQUAL(m->format, files[f].format);
        CU_ASSERT_EQUAL(m->graphs->len, files[f].graphs);
        g_autoptr(GHashTable) want = count_types(files[f].file);
        fp_model_stats st;
        fp_model_get_stats(m, &st);
        CU_ASSERT_EQUAL(st.nodes, sum_counts(want));
        g_autofree char *path = data_path(files[f].file);
        tu_run_result r = tu_run((const char *[]){"info", "--format", "json", path, NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        g_autoptr(JsonParser) p = json_parser_new();
        CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
        JsonObject *o = json_node_get_object(json_parser_get_root(p));
        CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), files[f].format);
        CU_ASSERT_EQUAL(json_object_get_int_member(o, "nodes"), (gint64)sum_counts(want));
        CU_ASSERT_EQUAL(json_object_get_int_member(o, "graphs"), files[f].graphs);
        JsonObject *h = json_object_get_object_member(o, "op_histogram");
        CU_ASSERT_EQUAL(json_object_get_size(h), g_hash_table_size(want));
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, want);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            gint64 got = json_object_has_member(h, k) ? json_object_get_int_member(h, k) : -1;
            if (got != (gint64)GPOINTER_TO_SIZE(v))
                fprintf(stderr, "\n  %s: %s: %" G_GINT64_FORMAT " ops, file has %zu\n", files[f].file, (char *)k, got,
                        GPOINTER_TO_SIZE(v));
            CU_ASSERT_EQUAL(got, (gint64)GPOINTER_TO_SIZE(v));
        }
        tu_run_clear(&r);
    }
}

/* The README's own numbers for the files, where it states them. */
static void test_readme_counts(void)
{
    g_autoptr(fp_model) a = load("ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt.gz");
    g_autoptr(fp_model) b = load("ge_proto_00026_afterUBMatch.txt.gz");
    g_autoptr(fp_model) c = load("hh_om.om");
    g_autoptr(fp_model) d = load("test.om.json");
    g_autoptr(fp_model) e = load("dynamic_and_static_graph_without_unfold.om");
    CU_ASSERT_FATAL(a && b && c && d && e);
    fp_model_stats st;
    fp_model_get_stats(a, &st);
    CU_ASSERT_EQUAL(st.nodes, 710);
    fp_model_get_stats(b, &st);
    CU_ASSERT_EQUAL(st.nodes, 399);
    fp_model_get_stats(c, &st);
    CU_ASSERT_EQUAL(st.nodes, 46);
    fp_model_get_stats(d, &st);
    CU_ASSERT_EQUAL(st.nodes, 132);
    fp_model_get_stats(e, &st);
    CU_ASSERT_EQUAL(st.nodes, 14);
    unsigned conv = 0, leaky = 0, elt = 0, trans = 0, cast = 0, bn = 0;
    const fp_model *ms[] = {a, b, d};
    for (size_t i = 0; i < G_N_ELEMENTS(ms); i++)
        for (guint k = 0; k < ms[i]->main->nodes->len; k++) {
            const fp_node *n = ms[i]->main->nodes->pdata[k];
            conv += n->op == FP_OP_CONV;
            leaky += n->op == FP_OP_LEAKY_RELU;
            elt += strcmp(n->op_type, "Eltwise") == 0 && n->op == FP_OP_ADD; /* mode 1 (sum), two inputs */
            trans += n->op == FP_OP_TRANS_DATA;
            cast += n->op == FP_OP_CAST;
            bn += n->op == FP_OP_BATCH_NORM;
        }
    CU_ASSERT_EQUAL(conv, 53 + 53 + 5);
    CU_ASSERT_EQUAL(leaky, 49 + 49 + 5);
    CU_ASSERT_EQUAL(elt, 16 + 16);
    CU_ASSERT_EQUAL(trans, 56 + 16);
    CU_ASSERT_EQUAL(cast, 109 + 3);
    CU_ASSERT_EQUAL(bn, 7);
}

/* protoc --encode of each text dump imports (as ge-binary) to the same IR as the text. */
static void test_text_binary_roundtrip(void)
{
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        if (strcmp(files[f].format, "ge-text") != 0)
            continue;
        g_autofree char *path = data_path(files[f].file);
        g_autofree char *bin = g_build_filename(tmp_dir, "roundtrip.pb", NULL), *perr = NULL;
        bool ran = tm_protoc((const char *[]){"-I" GE_PROTO_DIR, "--encode=ge.proto.ModelDef", "ge_ir.proto", NULL},
                             path, bin, &perr);
        if (!ran)
            fprintf(stderr, "\n  protoc: %s\n", perr);
        CU_ASSERT_FATAL(ran);
        g_autoptr(GError) e1 = NULL, e2 = NULL;
        g_autoptr(fp_model) t = fp_load_model(path, &e1);
        g_autoptr(fp_model) b = fp_load_model(bin, &e2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        if (!b)
            fprintf(stderr, "\n  %s (binary): %s\n", files[f].file, e2->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_STRING_EQUAL(b->format, "ge-binary");
        g_autofree char *d = tm_model_diff(t, b);
        if (d)
            fprintf(stderr, "\n  %s: text vs binary: %s\n", files[f].file, d);
        CU_ASSERT_PTR_NULL(d);
    }
}

/* The MODEL_DEF partition of each .om, decoded to text by protoc, imports to the same IR. */
static void test_om_text_roundtrip(void)
{
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        if (strcmp(files[f].format, "ge-om") != 0)
            continue;
        g_autofree char *rel = g_build_filename("ge", files[f].file, NULL);
        g_autoptr(GBytes) om = tm_data(rel);
        g_autoptr(GBytes) md = om_model_def(om);
        CU_ASSERT_PTR_NOT_NULL_FATAL(md);
        g_autofree char *in = g_build_filename(tmp_dir, "md.pb", NULL);
        g_autofree char *out = g_build_filename(tmp_dir, "md.txt", NULL);
        CU_ASSERT_FATAL(g_file_set_contents(in, g_bytes_get_data(md, NULL), (gssize)g_bytes_get_size(md), NULL));
        g_autofree char *perr = NULL;
        const char *args[] = {"-I" GE_PROTO_DIR, "--decode=ge.proto.ModelDef", "ge_ir.proto", NULL};
        CU_ASSERT_FATAL(tm_protoc(args, in, out, &perr));
        g_autoptr(fp_model) a = load(files[f].file);
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_model) b = fp_load_model(out, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_STRING_EQUAL(b->format, "ge-text");
        g_autofree char *d = tm_model_diff(a, b);
        if (d)
            fprintf(stderr, "\n  %s: om vs text: %s\n", files[f].file, d);
        CU_ASSERT_PTR_NULL(d);
        /* and as a bare binary ModelDef */
        g_autoptr(fp_model) c = fp_load_model(in, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_STRING_EQUAL(c->format, "ge-binary");
        g_free(d);
        d = tm_model_diff(b, c);
        CU_ASSERT_PTR_NULL(d);
    }
}

/* GE's ONNX dump of graph 11 and its ModelDef dump hold the same ops. */
static void test_ge_onnx_matches_text(void)
{
    g_autoptr(fp_model) o = load("ge_onnx_00000001_graph_11_Build.pbtxt");
    g_autoptr(fp_model) t = load("ge_proto_00000001_Build.txt");
    CU_ASSERT_FATAL(o && t);
    unsigned matched = 0, pseudo = 0;
    for (guint gi = 0; gi < o->graphs->len; gi++) {
        const fp_graph *g = o->graphs->pdata[gi];
        const fp_graph *tg = NULL;
        for (guint k = 0; k < t->graphs->len; k++)
            if (strcmp(((fp_graph *)t->graphs->pdata[k])->name, g->name) == 0)
                tg = t->graphs->pdata[k];
        CU_ASSERT_PTR_NOT_NULL_FATAL(tg);
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g->nodes->pdata[i];
            if (strcmp(n->op_type, "subgraph") == 0) {
                pseudo++;
                CU_ASSERT_EQUAL(n->n_subgraphs, 1);
                continue;
            }
            for (guint k = 0; k < tg->nodes->len; k++) {
                const fp_node *m = tg->nodes->pdata[k];
                if (strcmp(m->name, n->name) != 0)
                    continue;
                matched++;
                CU_ASSERT_STRING_EQUAL(m->op_type, n->op_type);
                CU_ASSERT_EQUAL(m->op, n->op);
                CU_ASSERT_EQUAL(fp_node_n_ctrl(m), fp_node_n_ctrl(n));
                CU_ASSERT_EQUAL_FATAL(m->n_outputs, n->n_outputs);
                for (uint32_t p = 0; p < m->n_outputs; p++) {
                    CU_ASSERT_EQUAL(m->outputs[p]->dtype, n->outputs[p]->dtype);
                    CU_ASSERT_EQUAL(m->outputs[p]->shape.rank, n->outputs[p]->shape.rank);
                    CU_ASSERT_STRING_EQUAL(fp_value_layout(m->outputs[p]), fp_value_layout(n->outputs[p]));
                }
                for (uint32_t p = 0; p < MIN(m->n_inputs, n->n_inputs); p++)
                    CU_ASSERT_STRING_EQUAL(m->inputs[p] ? m->inputs[p]->name : "",
                                           n->inputs[p] ? n->inputs[p]->name : "");
            }
        }
    }
    CU_ASSERT_EQUAL(matched, 18);
    CU_ASSERT_EQUAL(pseudo, 4);
}

static const fp_node *find_node(const fp_model *m, const char *name)
{
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++)
            if (strcmp(((fp_node *)g->nodes->pdata[i])->name, name) == 0)
                return g->nodes->pdata[i];
    }
    return NULL;
}

/* Edges, ports, descriptors and layouts on the real dumps. */
static void test_real_semantics(void)
{
    g_autoptr(fp_model) m0 = load("ge_proto_00000000_Build.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m0);
    unsigned ctrl = 0;
    for (guint i = 0; i < m0->main->nodes->len; i++)
        ctrl += fp_node_n_ctrl(m0->main->nodes->pdata[i]);
    CU_ASSERT_EQUAL(ctrl, 3); /* README: 3 control edges */
    const fp_node *var = find_node(m0, "Variable");
    CU_ASSERT_PTR_NOT_NULL_FATAL(var);
    CU_ASSERT_EQUAL_FATAL(var->n_inputs, 1); /* input: "" keeps its port */
    CU_ASSERT_PTR_NULL(var->inputs[0]);

    g_autoptr(fp_model) m56 = load("ge_proto_00056_Build.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m56);
    CU_ASSERT_EQUAL_FATAL(m56->main->inputs->len, 2);
    fp_value *x = m56->main->inputs->pdata[0];
    CU_ASSERT_STRING_EQUAL(x->name, "_arg_Placeholder_0_0_0_arg");
    CU_ASSERT_EQUAL(x->kind, FP_VALUE_INPUT);
    CU_ASSERT_EQUAL(x->dtype, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(((fp_value *)m56->main->inputs->pdata[1])->dtype, FP_DT_INT32);
    CU_ASSERT_EQUAL_FATAL(m56->main->outputs->len, 1);
    fp_value *y = m56->main->outputs->pdata[0];
    CU_ASSERT_STRING_EQUAL(y->name, "GatherV2:0");
    CU_ASSERT_TRUE(y->is_output);
    CU_ASSERT_EQUAL(y->producer->op, FP_OP_GATHER);
    CU_ASSERT_EQUAL(y->shape.rank, 2);
    CU_ASSERT_EQUAL(y->shape.dims[0].value, 16);
    CU_ASSERT_STRING_EQUAL(fp_value_layout(y), "NHWC");

    g_autoptr(fp_model) m26 = load("ge_proto_00026_afterUBMatch.txt.gz");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m26);
    const fp_node *rs = find_node(m26, "trans_Reshape_164");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
    CU_ASSERT_EQUAL(rs->op, FP_OP_RESHAPE);
    CU_ASSERT_EQUAL_FATAL(rs->n_inputs, 2);
    CU_ASSERT_PTR_NOT_NULL(rs->inputs[0]);
    CU_ASSERT_PTR_NULL(rs->inputs[1]); /* the empty optional input keeps port 1 */
    unsigned nc1hwc0 = 0, fractal = 0, with_origin = 0;
    for (guint i = 0; i < m26->main->values->len; i++) {
        const fp_value *v = m26->main->values->pdata[i];
        nc1hwc0 += g_strcmp0(fp_value_layout(v), "NC1HWC0") == 0;
        fractal += fp_value_layout(v) && g_str_has_prefix(fp_value_layout(v), "FRACTAL_Z");
        if (g_strcmp0(fp_value_layout(v), "NC1HWC0") == 0) {
            CU_ASSERT_EQUAL(v->shape.rank, 5); /* N, C1, H, W, C0 */
            with_origin += fp_value_origin_layout(v) && fp_value_origin_shape(v) && fp_value_origin_shape(v)->rank == 4;
        }
    }
    CU_ASSERT(nc1hwc0 > 0);
    CU_ASSERT(fractal > 0);
    CU_ASSERT(with_origin > 0);
    /* Cast: dst_type is a C++ ge::DataType; "to" carries the fp_dtype of the output */
    for (guint i = 0; i < m26->main->nodes->len; i++) {
        const fp_node *n = m26->main->nodes->pdata[i];
        if (n->op != FP_OP_CAST)
            continue;
        CU_ASSERT_EQUAL(fp_node_attr_int(n, "to", -1), (int64_t)n->outputs[0]->dtype);
    }

    g_autoptr(fp_model) m17 = load("ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt.gz");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m17);
    unsigned pool = 0, gemm = 0, consts = 0;
    for (guint i = 0; i < m17->main->nodes->len; i++) {
        const fp_node *n = m17->main->nodes->pdata[i];
        pool += n->op == FP_OP_MAX_POOL || n->op == FP_OP_AVERAGE_POOL || n->op == FP_OP_GLOBAL_AVG_POOL;
        gemm += n->op == FP_OP_GEMM;
        if (n->op == FP_OP_CONSTANT) {
            consts++;
            CU_ASSERT_EQUAL(n->outputs[0]->kind, FP_VALUE_CONSTANT);
            CU_ASSERT_PTR_NOT_NULL(n->outputs[0]->tensor);
        }
    }
    CU_ASSERT_EQUAL(pool, 2);
    CU_ASSERT_EQUAL(gemm, 1);
    CU_ASSERT_EQUAL(consts, 373);

    /* origin.txt: `bt:` bytes with octal escapes */
    g_autoptr(fp_model) mo = load("origin.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mo);
    bool bt = false;
    for (guint i = 0; i < mo->main->nodes->len; i++) {
        const fp_node *n = mo->main->nodes->pdata[i];
        for (uint32_t k = 0; k < n->n_attrs; k++) {
            const fp_attr *a = &n->attrs[k];
            bt = bt || (a->type == FP_ATTR_STRING && a->n > 0 && memchr(a->u.s, 0, a->n));
        }
    }
    CU_ASSERT_TRUE(bt);

    /* subgraphs: owned by the op that names them */
    g_autoptr(fp_model) m1 = load("ge_proto_00000001_Build.txt");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m1);
    for (guint gi = 1; gi < m1->graphs->len; gi++) {
        const fp_graph *g = m1->graphs->pdata[gi];
        CU_ASSERT_PTR_NOT_NULL_FATAL(g->owner);
        CU_ASSERT_STRING_EQUAL(g->owner->op_type, "PartitionedCall");
        CU_ASSERT_PTR_EQUAL(g->parent, m1->main);
    }
}

/* .om: weights stay on disk as file ranges, small inline Const data is kept. */
static void test_om_payloads(void)
{
    g_autoptr(fp_model) hh = load("hh_om.om");
    g_autoptr(fp_model) dyn = load("dynamic_and_static_graph_without_unfold.om");
    CU_ASSERT_FATAL(hh && dyn);
    unsigned in_file = 0, inline_data = 0;
    for (guint i = 0; i < hh->main->values->len; i++) {
        const fp_tensor *t = ((fp_value *)hh->main->values->pdata[i])->tensor;
        if (t && t->where == FP_DATA_FILE) {
            in_file++;
            CU_ASSERT(t->offset + t->length <= hh->file_size);
            CU_ASSERT(t->offset > 256);
        }
    }
    CU_ASSERT(in_file > 0);
    for (guint gi = 0; gi < dyn->graphs->len; gi++) {
        const fp_graph *g = dyn->graphs->pdata[gi];
        for (guint i = 0; i < g->values->len; i++) {
            const fp_tensor *t = ((fp_value *)g->values->pdata[i])->tensor;
            inline_data += t && t->where == FP_DATA_INLINE;
        }
    }
    CU_ASSERT(inline_data > 0);
    /* its attribute names are compressed ("\0" + digits) and some values too: decoded */
    bool aicore = false, aicpu = false;
    for (guint gi = 0; gi < dyn->graphs->len; gi++) {
        const fp_graph *g = dyn->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g->nodes->pdata[i];
            for (uint32_t k = 0; k < n->n_attrs; k++)
                CU_ASSERT(n->attrs[k].name[0] != 0);
            const char *lib = fp_node_attr_string(n, "_ge_attr_op_kernel_lib_name", "");
            aicore = aicore || strcmp(lib, "AIcoreEngine") == 0;
            aicpu = aicpu || strcmp(lib, "aicpu_ascend_kernel") == 0;
        }
    }
    CU_ASSERT_TRUE(aicore);
    CU_ASSERT_TRUE(aicpu);
}

/* ---------------------------------------------------------------- synthetic graphs */

static fp_model *load_text(const char *text, GError **err)
{
    fp_model *m = fp_ge_load_buffer("t.txt", FP_GE_TEXT, (const uint8_t *)text, strlen(text), err);
    if (m && !fp_model_verify(m, err)) {
        fp_model_free(m);
        return NULL;
    }
    return m;
}

#define DESC_F32(dims) "output_desc { dtype: DT_FLOAT shape { " dims " } layout: 'NCHW' }"

static void test_mapping(void)
{
    /* clang-format off */
    const char *text =
        "graph { name: 'g'\n"
        " op { name: 'x' type: 'Data' input: '' attr { key: 'index' value { i: 1 } } " DESC_F32("dim: [1, 3, -1, 4]") " }\n"
        " op { name: 'w' type: 'Data' input: '' attr { key: 'index' value { i: 0 } } output_desc { dtype: DT_FLOAT shape { dim: -2 } } }\n"
        " op { name: 'e' type: 'Eltwise' input: 'x:0' input: 'w:0' attr { key: 'mode' value { i: 0 } } " DESC_F32("dim: [1, 3]") " }\n"
        " op { name: 'e3' type: 'Eltwise' input: 'x:0' input: 'w:0' input: 'e:0' " DESC_F32("") " }\n"
        " op { name: 'ec' type: 'Eltwise' input: 'x:0' input: 'w:0' attr { key: 'coeff' value { list { f: [1, 2] val_type: VT_LIST_FLOAT } } } }\n"
        " op { name: 'p' type: 'Pooling' input: 'e:0' attr { key: 'mode' value { i: 1 } } attr { key: 'global_pooling' value { b: true } } "
        DESC_F32("dim: 1") " }\n"
        " op { name: 'c' type: 'Cast' input: 'p:0' input: '' input: 'e3:-1' input: 'e3:-1' attr { key: 'dst_type' value { i: 1 } }\n"
        "      attr { key: 'dt' value { dt: 0 } } attr { key: 'dts' value { list { dt: [0, 9] } } } attr { key: 'none' value { } }\n"
        "      attr { key: 'untyped' value { list { s: ['a', 'b'] } } } attr { key: 'empty' value { list { } } }\n"
        "      output_desc { dtype: DT_FLOAT16 } }\n"
        " op { name: 'out' type: 'NetOutput' input: 'c:0' input: 'ec:0' }\n"
        "}\n";
    /* clang-format on */
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_text(text, &err);
    if (!m)
        fprintf(stderr, "\n  %s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fp_graph *g = m->main;
    /* graph inputs ordered by the Data ops' index attribute */
    CU_ASSERT_EQUAL_FATAL(g->inputs->len, 2);
    CU_ASSERT_STRING_EQUAL(((fp_value *)g->inputs->pdata[0])->name, "w");
    fp_value *w = g->inputs->pdata[0], *xin = g->inputs->pdata[1];
    CU_ASSERT_EQUAL(w->shape.rank, -1); /* [-2]: unknown rank */
    CU_ASSERT_EQUAL(xin->shape.rank, 4);
    CU_ASSERT_EQUAL(xin->shape.dims[2].value, -1); /* unknown dim */
    CU_ASSERT_STRING_EQUAL(fp_value_layout(xin), "NCHW");
    const fp_node *x = find_node(m, "x");
    CU_ASSERT_EQUAL(x->op, FP_OP_IDENTITY);
    CU_ASSERT_PTR_EQUAL(x->inputs[0], xin);
    CU_ASSERT_EQUAL(find_node(m, "e")->op, FP_OP_MUL);
    CU_ASSERT_EQUAL(find_node(m, "e3")->op, FP_OP_SUM);
    CU_ASSERT_EQUAL(find_node(m, "ec")->op, FP_OP_OPAQUE);
    CU_ASSERT_EQUAL(find_node(m, "p")->op, FP_OP_GLOBAL_AVG_POOL);
    const fp_node *c = find_node(m, "c");
    CU_ASSERT_EQUAL(c->op, FP_OP_CAST);
    CU_ASSERT_EQUAL_FATAL(c->n_inputs, 2);
    CU_ASSERT_PTR_NULL(c->inputs[1]);
    CU_ASSERT_EQUAL_FATAL(fp_node_n_ctrl(c), 1); /* duplicate control edges collapse */
    CU_ASSERT_STRING_EQUAL(c->ext->ctrl[0]->name, "e3");
    CU_ASSERT_EQUAL(fp_node_attr_int(c, "dst_type", -1), 1);
    CU_ASSERT_EQUAL(fp_node_attr_int(c, "to", -1), FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(fp_node_attr_int(c, "dt", -1), FP_DT_FLOAT);
    const fp_attr *dts = fp_node_attr(c, "dts");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dts);
    CU_ASSERT_EQUAL(dts->type, FP_ATTR_INTS);
    CU_ASSERT_EQUAL(dts->u.ints[1], FP_DT_INT64);
    CU_ASSERT_PTR_NULL(fp_node_attr(c, "none"));  /* no value: dropped, as GE does */
    CU_ASSERT_PTR_NULL(fp_node_attr(c, "empty")); /* untyped empty list: dropped */
    const fp_attr *untyped = fp_node_attr(c, "untyped");
    CU_ASSERT_PTR_NOT_NULL_FATAL(untyped);
    CU_ASSERT_EQUAL(untyped->type, FP_ATTR_STRINGS);
    CU_ASSERT_EQUAL(untyped->n, 2);
    CU_ASSERT_EQUAL(c->outputs[0]->dtype, FP_DT_FLOAT16);
    /* NetOutput: its data inputs are the graph outputs */
    CU_ASSERT_EQUAL(g->outputs->len, 2);
    const fp_node *out = find_node(m, "out");
    CU_ASSERT_EQUAL(out->n_outputs, 0);
}

static void test_subgraphs(void)
{
    /* clang-format off */
    const char *text = "graph { name: 'main'\n"
                       " op { name: 'd' type: 'Data' input: '' " DESC_F32("dim: 2") " }\n"
                       " op { name: 'call' type: 'PartitionedCall' input: 'd:0' subgraph_name: 'sub' " DESC_F32("dim: 2") " }\n"
                       " op { name: 'o' type: 'NetOutput' input: 'call:0' } }\n"
                       "graph { name: 'sub'\n"
                       " op { name: 'sd' type: 'Data' input: '' attr { key: '_parent_node_index' value { i: 0 } } " DESC_F32("dim: 2") " }\n"
                       " op { name: 'r' type: 'Relu' input: 'sd:0' " DESC_F32("dim: 2") " }\n"
                       " op { name: 'so' type: 'NetOutput' input: 'r:0' } }\n"
                       "graph { name: 'orphan' op { name: 'k' type: 'Const' " DESC_F32("dim: 3") " } }\n";
    /* clang-format on */
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_text(text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL_FATAL(m->graphs->len, 3);
    const fp_node *call = find_node(m, "call");
    CU_ASSERT_EQUAL_FATAL(call->n_subgraphs, 1);
    fp_graph *sub = call->subgraphs[0];
    CU_ASSERT_STRING_EQUAL(sub->name, "sub");
    CU_ASSERT_PTR_EQUAL(sub->owner, call);
    CU_ASSERT_PTR_EQUAL(sub->parent, m->main);
    CU_ASSERT_EQUAL(sub->inputs->len, 1);
    CU_ASSERT_EQUAL(sub->outputs->len, 1);
    fp_graph *orphan = m->graphs->pdata[2];
    CU_ASSERT_PTR_NULL(orphan->owner);
    const fp_value *k = fp_graph_find(orphan, "k:0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->kind, FP_VALUE_CONSTANT);
    CU_ASSERT_EQUAL(k->tensor->nbytes, 12);
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    CU_ASSERT_EQUAL(st.nodes, 7);
}

static void expect_text_error(const char *text, const char *needle)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = load_text(text, &err);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    tu_expect_error(err, needle);
}

static void test_invalid_graphs(void)
{
    expect_text_error("graph { op { name: 'a' type: 'Relu' input: 'b:0' } }",
                      "graph 'main': op 'a' (Relu): input 0 'b:0' names no op of this graph");
    expect_text_error("graph { name: 'g' op { name: 'a' type: 'Relu' input: 'a:x' } }",
                      "graph 'g': op 'a' (Relu): input 0 'a:x' has an invalid port");
    expect_text_error("graph { op { name: 'a' type: 'Relu' input: 'a:-2' } }", "input 0 'a:-2' has an invalid port");
    expect_text_error("graph { op { name: 'a' type: 'Relu' } op { name: 'a' type: 'Relu' } }", "two ops are named 'a'");
    expect_text_error("graph { op { name: 'a' } }", "op 'a' has no type");
    expect_text_error("graph { op { type: 'Relu' } }", "op 0 has no name");
    expect_text_error("graph { op { name: 'a' type: 'P' subgraph_name: 'nope' } }",
                      "subgraph 'nope' is not among the model's graphs");
    expect_text_error(
        "graph { name: 'm' op { name: 'a' type: 'P' subgraph_name: 's' } op { name: 'b' type: 'P' subgraph_name: 's' } }"
        " graph { name: 's' }",
        "op 'b' (P): subgraph 's' already belongs to another op");
    expect_text_error("graph { name: 'm' op { name: 'a' type: 'P' subgraph_name: 'm' } }",
                      "subgraph 'm' is the main graph");
    expect_text_error("graph { name: 'g' } graph { name: 'g' }", "two graphs are named 'g'");
    expect_text_error("name: 'only a name'", "ModelDef has no graph");
    expect_text_error("graph { op { name: 'a' type: 'Relu' input: 'b:0' } op { name: 'b' type: 'Relu' input: 'a:0' } }",
                      "cycle");
    expect_text_error(
        "graph { op { name: 'a' type: 'Relu' output_desc { shape { dim: [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
        "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] } } } }",
        "output of op 'a': rank 66 exceeds the limit of 64");
    expect_text_error("graph { op { name: 'a' type: 'Relu' bogus_field {\n  x: 1",
                      "line 2:7: end of input inside 'bogus_field'");
    expect_text_error("graph { op { name: 'a' type: 'Relu' input: 5 } }",
                      "line 1:44: field 'input' expects a string, found '5'");
    /* an op cannot own more subgraphs than a model may have graphs (fp_node.n_subgraphs) */
    g_autoptr(GString) many = g_string_new("graph { op { name: 'a' type: 'P' subgraph_name: [");
    for (int i = 0; i <= FP_MAX_GRAPHS; i++)
        g_string_append(many, i ? ",'s'" : "'s'");
    g_string_append(many, "] } } graph { name: 's' }");
    g_autofree char *want = g_strdup_printf("op 'a' (P): %d subgraphs, more than the limit of %d graphs",
                                            FP_MAX_GRAPHS + 1, FP_MAX_GRAPHS);
    expect_text_error(many->str, want);
}

/* Unknown fields (newer GE releases) are skipped in text and JSON dumps. */
static void test_newer_fields(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_text("graph { name: 'g' future { x: 1 } op { name: 'a' type: 'Const' future_scalar: 3 "
                                      "output_desc { dtype: DT_HIFLOAT8 shape { dim: 2 } new_desc_field: 'x' } } }\n"
                                      "future_model_field: [1, 2]",
                                      &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(m->main->nodes->len, 1);
}

static fp_model *load_json(const char *text, GError **err)
{
    return fp_ge_load_buffer("t.json", FP_GE_JSON, (const uint8_t *)text, strlen(text), err);
}

static void test_json_forms(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = load_json(
        "{\"graph\": [{\"name\": \"g\", \"future\": {\"a\": 1}, \"op\": [\n"
        " {\"name\": \"a\", \"type\": \"LeakyRelu\", \"attr\": {\"negative_slope\": {\"f\": \"0.01\"},\n"
        "   \"n\": {\"i\": \"-7\"}, \"b\": {\"b\": true}, \"s\": {\"s\": \"x\\\\001y\"}},\n"
        "  \"output_desc\": [{\"dtype\": \"DT_FLOAT16\", \"shape\": {\"dim\": [1, \"2\"]}, \"layout\": \"ND\"},\n"
        "                  {\"dtype\": 3}]}]}]}",
        &err);
    if (!m)
        fprintf(stderr, "\n  %s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const fp_node *a = m->main->nodes->pdata[0];
    CU_ASSERT_EQUAL(a->op, FP_OP_LEAKY_RELU);
    CU_ASSERT_DOUBLE_EQUAL(fp_node_attr_float(a, "negative_slope", 0), 0.01, 1e-7);
    CU_ASSERT_EQUAL(fp_node_attr_int(a, "n", 0), -7);
    CU_ASSERT_EQUAL(fp_node_attr_int(a, "b", 0), 1);
    const fp_attr *s = fp_node_attr(a, "s");
    CU_ASSERT_EQUAL_FATAL(s->n, 3);
    CU_ASSERT_EQUAL(memcmp(s->u.s, "x\001y", 3), 0);
    CU_ASSERT_EQUAL(a->outputs[0]->dtype, FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(a->outputs[0]->shape.dims[1].value, 2);
    CU_ASSERT_EQUAL(a->outputs[1]->dtype, FP_DT_INT8);
    const char *bad[][2] = {
        {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"type\": 5}]}]}",
         "JSON member graph[0].op[0].type: expected a string"},
        {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"id\": \"x\"}]}]}",
         "graph[0].op[0].id: expected an integer, found \"x\""},
        {"{\"graph\": [{\"op\": [{\"output_desc\": [{\"dtype\": \"DT_NOPE\"}]}]}]}",
         "graph[0].op[0].output_desc[0].dtype: 'DT_NOPE' is not a value of enum ge.proto.DataType"},
        {"{\"graph\": [{\"op\": [{\"attr\": [{\"key\": \"k\", \"value\": {\"f\": \"abc\"}}]}]}]}",
         "graph[0].op[0].attr[0].value.f: expected a number, found \"abc\""},
        {"{\"graph\": 3}", "JSON member graph: expected an object"},
        {"{\"graph\": [{\"op\": [{\"name\": \"a\", ", "not valid JSON"},
        {"[1, 2]", "the top level is not an object"},
        {"{\"version\": -1}", "JSON member version: integer out of range"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;
        fp_model *b = load_json(bad[i][0], &e);
        CU_ASSERT_PTR_NULL(b);
        fp_model_free(b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        if (!strstr(e->message, bad[i][1]))
            fprintf(stderr, "\n  expected '%s' in: %s\n", bad[i][1], e->message);
        CU_ASSERT_PTR_NOT_NULL(strstr(e->message, bad[i][1]));
        CU_ASSERT_PTR_NULL(strchr(e->message, '\n'));
    }
    /* nesting that would overflow json-glib's recursive parser is refused before parsing */
    GString *deep = g_string_new("{\"graph\": ");
    for (int i = 0; i < 100000; i++)
        g_string_append_c(deep, '[');
    g_autoptr(GError) e = NULL;
    fp_model *b = load_json(deep->str, &e);
    g_string_free(deep, TRUE);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "JSON nested deeper than 200 at byte 209"));
}

static void test_sniff(void)
{
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)"IMOD\0\1", 6), FP_GE_OM);
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)" \n{\"graph\"", 10), FP_GE_JSON);
    const char *ge = "graph {\n  name: \"g\"\n  input: \"x:0\"\n  op {\n";
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)ge, strlen(ge)), FP_GE_TEXT);
    const char *onnx = "graph {\n  name: \"g\"\n  input {\n name: 'x' }\n";
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)onnx, strlen(onnx)), FP_GE_NONE);
    const char *onnx2 = "ir_version: 7\ngraph { node {";
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)onnx2, strlen(onnx2)), FP_GE_NONE);
    const char *model = "# comment\nname: 'm'\n";
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)model, strlen(model)), FP_GE_TEXT);
    /* binary ModelDefs: by name first, or by the GraphDef's first field */
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)"\x0a\x02mm\x3a\x00", 6), FP_GE_BINARY);
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)"\x3a\x05\x0a\x03gg0", 7), FP_GE_BINARY);
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)"\x3a\x05\x0a\x03\x0a\x01x", 7), FP_GE_NONE); /* ONNX node */
    CU_ASSERT_EQUAL(fp_ge_sniff((const uint8_t *)"\x08\x07\x12\x00", 4), FP_GE_NONE);          /* ONNX ir_version */
}

/* ---------------------------------------------------------------- malformed input */

static char *write_tmp(const char *name, const void *data, size_t len)
{
    char *path = g_build_filename(tmp_dir, name, NULL);
    g_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    return path;
}

static void expect_cli_error(const char *name, const void *data, size_t len, const char *needle)
{
    g_autofree char *path = write_tmp(name, data, len);
    tu_expect_cli_error((const char *[]){"info", path, NULL}, path, needle);
}

static void test_malformed_cli(void)
{
    g_autofree char *rel = g_build_filename("ge", "hh_om.om", NULL);
    g_autoptr(GBytes) om = tm_data(rel);
    gsize n = 0;
    const uint8_t *p = g_bytes_get_data(om, &n);
    expect_cli_error("trunc.om", p, 300, "partition table at byte 256 is not valid");
    uint8_t *bad = g_memdup2(p, n);
    memset(bad + 256, 0xff, 4); /* partition count */
    expect_cli_error("count.om", bad, n, "partition table");
    memcpy(bad, p, n);
    bad[0x104 + 0] = 7; /* MODEL_DEF partition's type: none left */
    expect_cli_error("nomodel.om", bad, n, "no MODEL_DEF partition");
    memcpy(bad, p, n);
    bad[0x134] = 0x0b; /* first MODEL_DEF byte: a group start tag */
    expect_cli_error("wire.om", bad, n, "MODEL_DEF partition at byte 308: not a valid GE ModelDef");
    g_free(bad);
    const char *txt =
        "graph {\n  name: \"g\"\n  op {\n    name: \"a\"\n    type: \"Relu\"\n    input: \"zz:0\"\n  }\n}\n";
    expect_cli_error("dangling.txt", txt, strlen(txt), "op 'a' (Relu): input 0 'zz:0' names no op of this graph");
    const char *syn = "graph {\n  name: \"g\"\n  op {\n    name: \"a\n  }\n}\n";
    expect_cli_error("syntax.txt", syn, strlen(syn), "line 4:11: string literal is not closed");
    expect_cli_error("bad.json", "{\"graph\": [1]}", 14, "JSON member graph[0]: expected an object");
    expect_cli_error("truncated.pb", "\x0a\x05mod", 5, "not a valid GE ModelDef");
    const char *ge_onnx =
        "ir_version: 6\nproducer_name: \"GE\"\ngraph { node { name: 'a' op_type: 'ge:Relu' input: 'q:0' } }\n";
    expect_cli_error("ge_onnx.pbtxt", ge_onnx, strlen(ge_onnx),
                     "op 'a' (Relu): input 0 'q:0' names no op of this graph");
    const char *onnx_txt = "ir_version: 7\ngraph { node { op_type: 'Relu' input: 'x' output: 'y' } oops: 1 }\n";
    expect_cli_error("bad.pbtxt", onnx_txt, strlen(onnx_txt), "line 2:57: unknown field 'oops' in onnx.GraphProto");
}

/* Every cut and many byte flips of every file: an error or a model, never a crash. */
static void test_fuzz(void)
{
    GRand *r = g_rand_new_with_seed(8);
    unsigned runs = 0, errors = 0;
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        g_autofree char *rel = g_build_filename("ge", files[f].file, NULL);
        g_autoptr(GBytes) b = tm_data(rel);
        gsize n = 0;
        const uint8_t *p = g_bytes_get_data(b, &n);
        fp_ge_kind kind = fp_ge_sniff(p, MIN(n, (gsize)4096));
        bool onnx = kind == FP_GE_NONE;
        uint8_t *buf = g_malloc(n);
        for (int round = 0; round < 24; round++) {
            memcpy(buf, p, n);
            size_t len = round < 12 ? (size_t)g_rand_int_range(r, 0, (gint32)MIN(n, (gsize)G_MAXINT32)) : n;
            if (round >= 12)
                for (int k = 0; k < 8; k++)
                    buf[g_rand_int_range(r, 0, (gint32)n)] = (uint8_t)g_rand_int(r);
            g_autoptr(GError) err = NULL;
            fp_model *m = onnx ? fp_onnx_text_load_buffer("f", (const char *)buf, len, &err)
                               : fp_ge_load_buffer("f", kind, buf, len, &err);
            if (m && !fp_model_verify(m, &err)) {
                fp_model_free(m);
                m = NULL;
            }
            CU_ASSERT(m != NULL || err != NULL);
            errors += m == NULL;
            runs++;
            fp_model_free(m);
        }
        g_free(buf);
    }
    g_rand_free(r);
    CU_ASSERT(errors > 0);
    CU_ASSERT_EQUAL(runs, 24 * G_N_ELEMENTS(files));
}

FP_TEST_SUITE(register_ge)
{
    CU_pSuite s = CU_add_suite("ge", suite_init, suite_clean);
    CU_add_test(s, "op_table", test_op_table);
    CU_add_test(s, "files", test_files);
    CU_add_test(s, "readme_counts", test_readme_counts);
    CU_add_test(s, "text_binary_roundtrip", test_text_binary_roundtrip);
    CU_add_test(s, "om_text_roundtrip", test_om_text_roundtrip);
    CU_add_test(s, "ge_onnx_matches_text", test_ge_onnx_matches_text);
    CU_add_test(s, "real_semantics", test_real_semantics);
    CU_add_test(s, "om_payloads", test_om_payloads);
    CU_add_test(s, "mapping", test_mapping);
    CU_add_test(s, "subgraphs", test_subgraphs);
    CU_add_test(s, "invalid_graphs", test_invalid_graphs);
    CU_add_test(s, "newer_fields", test_newer_fields);
    CU_add_test(s, "json_forms", test_json_forms);
    CU_add_test(s, "sniff", test_sniff);
    CU_add_test(s, "malformed_cli", test_malformed_cli);
    CU_add_test(s, "fuzz", test_fuzz);
}
