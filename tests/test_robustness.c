/* test_robustness.c - robustness suite (docs/robustness.md): every input the fuzzers found a bug
 * with (tests/fuzz-regressions/<target>/, and the hand-written seeds of tests/fuzz/seeds/) replayed
 * through the fuzz target's own code path and through the CLI; resource limits (rank, dims, node count, nesting, overlapping buffers); semantic
 * errors with their one-line messages (unknown ops and --strict, attribute types, required
 * attributes, shape mismatches, bad keys in .ini files). */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "frontends/load.h"
#include "frontends/onnx/onnx.h"
#include "fuzz/fuzz_run.h"
#include "passes/memory/memplan.h"
#include "reports/gate.h"
#include "tutil.h"

enum { F32 = 1, I64 = 7, BOOL = 9 };

#define REGRESSIONS FP_SOURCE_DIR "/tests/fuzz-regressions"
#define SMALL_MODEL FP_SOURCE_DIR "/models/eps_story.onnx"

/* ---------------------------------------------------------------- replay of fuzz findings */

typedef fz_outcome (*fz_run_fn)(const uint8_t *data, size_t len);

/* g_ptr_array_sort comparator over char* elements. */
static gint cmp_strp(gconstpointer a, gconstpointer b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

/* The files of tests/fuzz-regressions/<target> and of the hand-written seeds tests/fuzz/seeds/<target>,
 * sorted; caller g_strfreev()s. */
static char **regression_files(const char *target)
{
    const char *const roots[] = {REGRESSIONS, FP_SOURCE_DIR "/tests/fuzz/seeds"};
    GPtrArray *files = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(roots); i++) {
        g_autofree char *dir = g_build_filename(roots[i], target, NULL);
        GDir *d = g_dir_open(dir, 0, NULL);
        for (const char *e; d && (e = g_dir_read_name(d));)
            g_ptr_array_add(files, g_build_filename(dir, e, NULL));
        if (d)
            g_dir_close(d);
    }
    g_ptr_array_sort(files, cmp_strp);
    g_ptr_array_add(files, NULL);
    return (char **)g_ptr_array_free(files, FALSE);
}

/* A CLI run that read bad input: exit 0, or exit 2 with one line on stderr naming `path`. */
static void expect_clean_exit(const tu_run_result *r, const char *path)
{
    CU_ASSERT(r->status == 0 || r->status == 2);
    if (r->status == 2) {
        CU_ASSERT_EQUAL(tu_lines(r->err), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r->err, path));
    }
    if (r->status != 0 && r->status != 2)
        fprintf(stderr, "\n  %s: exit %d: %.300s", path, r->status, r->err);
}

/* Every committed input of `target`: the fuzz code path, then fuseplan with `args` (at most 6)
 * followed by the file. */
static void replay_inputs(const char *target, fz_run_fn run, const char *const *args)
{
    g_auto(GStrv) files = regression_files(target);
    CU_ASSERT(g_strv_length(files) > 0);
    for (char **f = files; *f; f++) {
        size_t len = 0;
        g_autofree uint8_t *data = fz_read_file(*f, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(data);
        fz_outcome o = run(data, len);
        if (o == FZ_BAD_ERROR)
            fprintf(stderr, "\n  %s: %s", *f, fz_last_error());
        CU_ASSERT_NOT_EQUAL(o, FZ_BAD_ERROR);
        const char *argv[8] = {0};
        size_t n = 0;
        for (; args[n] && n < 6; n++)
            argv[n] = args[n];
        argv[n] = *f;
        tu_run_result r = tu_run(argv);
        expect_clean_exit(&r, *f);
        tu_run_clear(&r);
    }
}

/* Every committed input of a model target: the fuzz code path, then `fuseplan report FILE`. */
static void replay_models(const char *target, fz_run_fn run)
{
    replay_inputs(target, run, (const char *[]){"report", "--no-color", NULL});
}

static void test_replay_onnx(void) { replay_models("onnx", fz_run_onnx); }
static void test_replay_onnx_text(void) { replay_models("onnx_text", fz_run_onnx_text); }
static void test_replay_ge(void) { replay_models("ge", fz_run_ge); }

/* .ini inputs: the fuzz code path, then as --device and --target of `fuseplan report` and as the
 * policy of `fuseplan gate`. */
static void test_replay_ini(void)
{
    g_auto(GStrv) files = regression_files("ini");
    CU_ASSERT(g_strv_length(files) > 0);
    for (char **f = files; *f; f++) {
        size_t len = 0;
        g_autofree uint8_t *data = fz_read_file(*f, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(data);
        CU_ASSERT_NOT_EQUAL(fz_run_ini(data, len), FZ_BAD_ERROR);
        const char *opts[] = {"--device", "--target"};
        for (int i = 0; i < 2; i++) {
            tu_run_result r = tu_run((const char *[]){"report", opts[i], *f, SMALL_MODEL, NULL});
            expect_clean_exit(&r, *f);
            tu_run_clear(&r);
        }
        tu_run_result r = tu_run((const char *[]){"gate", "--policy", *f, SMALL_MODEL, NULL});
        if (r.status == 1) /* the policy failed: a verdict, not an error */
            r.status = 0;
        expect_clean_exit(&r, *f);
        tu_run_clear(&r);
    }
}

/* genai_config.json: the fuzz code path, then `fuseplan memory models/decoder_int4.onnx
 * --genai-config FILE`. */
static void test_replay_genai_config(void)
{
    replay_inputs("genai_config", fz_run_genai_config,
                  (const char *[]){"memory", FP_SOURCE_DIR "/models/decoder_int4.onnx", "--genai-config", NULL});
}

/* --input specs: `fuseplan shapes --input SPEC MODEL` (the code path of the input_spec target). */
static void test_replay_input_spec(void)
{
    g_auto(GStrv) files = regression_files("input_spec");
    CU_ASSERT(g_strv_length(files) > 0);
    for (char **f = files; *f; f++) {
        g_autofree char *spec = NULL;
        CU_ASSERT_FATAL(g_file_get_contents(*f, &spec, NULL, NULL));
        tu_run_result r = tu_run((const char *[]){"shapes", "--input", spec, SMALL_MODEL, NULL});
        CU_ASSERT(r.status == 0 || r.status == 2);
        if (r.status == 2)
            CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        tu_run_clear(&r);
    }
}

/* ---------------------------------------------------------------- hand-written protobuf */

static void put_varint(GByteArray *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        g_byte_array_append(b, &c, 1);
        v >>= 7;
    } while (v);
}

/* Appends field `num` (length-delimited) holding payload[0..len). */
static void put_field(GByteArray *b, uint32_t num, const void *payload, size_t len)
{
    put_varint(b, (uint64_t)num << 3 | 2);
    put_varint(b, len);
    g_byte_array_append(b, payload, (guint)len);
}

static void put_str(GByteArray *b, uint32_t num, const char *s) { put_field(b, num, s, strlen(s)); }

/* ModelProto {ir_version 8, opset_import {"" 17}, graph {graph}}; frees graph. */
static GByteArray *wrap_model(GByteArray *graph)
{
    GByteArray *m = g_byte_array_new(), *opset = g_byte_array_new();
    put_varint(m, 1 << 3);
    put_varint(m, 8);
    put_str(opset, 1, "");
    put_varint(opset, 2 << 3);
    put_varint(opset, 17);
    put_field(m, 8, opset->data, opset->len);
    put_field(m, 7, graph->data, graph->len);
    g_byte_array_free(opset, TRUE);
    g_byte_array_free(graph, TRUE);
    return m;
}

static fp_model *load_bytes(GByteArray *b, GError **err)
{
    fp_model *m = fp_onnx_load_buffer("mem.onnx", b->data, b->len, err);
    if (m && !fp_model_verify(m, err)) {
        fp_model_free(m);
        return NULL;
    }
    return m;
}

/* Loading fails with a one-line message containing needle. */
static void expect_load_error(GByteArray *model, const char *needle)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = load_bytes(model, &err);
    CU_ASSERT_PTR_NULL(m);
    fp_model_free(m);
    tu_expect_error(err, needle);
}

/* ---------------------------------------------------------------- resource limits */

/* FP_MAX_NODES + 1 nodes of 5 bytes each: refused before anything is imported; the same nodes in a
 * file of FP_NODE_MIN_BYTES per node (a 16 MB weight makes it so) load; FP_MAX_GRAPHS + 1 graphs. */
static void test_node_limit(void)
{
    CU_ASSERT_EQUAL(fp_max_nodes(0), FP_MAX_NODES);
    CU_ASSERT_EQUAL(fp_max_nodes((uint64_t)FP_MAX_NODES * FP_NODE_MIN_BYTES), FP_MAX_NODES);
    CU_ASSERT_EQUAL(fp_max_nodes((uint64_t)FP_MAX_NODES * FP_NODE_MIN_BYTES * 4), (uint64_t)FP_MAX_NODES * 4);
    static const uint8_t node[] = {0x0a, 0x03, 0x22, 0x01, 'A'}; /* GraphProto.node {op_type: "A"} */
    GByteArray *g = g_byte_array_new();
    for (int i = 0; i <= FP_MAX_NODES; i++)
        g_byte_array_append(g, node, sizeof node);
    GByteArray *big = g_byte_array_new();
    g_byte_array_append(big, g->data, g->len);
    GByteArray *m = wrap_model(g);
    expect_load_error(m, "250001 nodes, more than the limit of 250000");
    g_byte_array_free(m, TRUE);

    /* initializer {dims: [N], data_type: UINT8, name: "w", raw_data: N bytes} */
    const size_t n = (size_t)(FP_MAX_NODES + 1) * FP_NODE_MIN_BYTES;
    GByteArray *init = g_byte_array_new();
    put_varint(init, 1 << 3);
    put_varint(init, n);
    put_varint(init, 2 << 3);
    put_varint(init, 2);
    put_str(init, 8, "w");
    guint8 *zeros = g_malloc0(n);
    put_field(init, 9, zeros, n);
    g_free(zeros);
    put_field(big, 5, init->data, init->len);
    g_byte_array_free(init, TRUE);
    m = wrap_model(big);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) loaded = load_bytes(m, &err);
    CU_ASSERT_PTR_NOT_NULL(loaded);
    if (err)
        fprintf(stderr, "\n  %s", err->message);
    CU_ASSERT_EQUAL(loaded ? loaded->main->nodes->len : 0, FP_MAX_NODES + 1);
    g_byte_array_free(m, TRUE);

    /* FP_MAX_GRAPHS: If nodes with an empty then_branch each */
    GByteArray *attr = g_byte_array_new(), *node_if = g_byte_array_new(), *sub = g_byte_array_new();
    put_str(sub, 2, "s");
    put_str(attr, 1, "then_branch");
    put_varint(attr, 20 << 3);
    put_varint(attr, 5); /* GRAPH */
    put_field(attr, 6, sub->data, sub->len);
    put_str(node_if, 4, "If");
    put_field(node_if, 5, attr->data, attr->len);
    g = g_byte_array_new();
    for (int i = 0; i < FP_MAX_GRAPHS; i++)
        put_field(g, 1, node_if->data, node_if->len);
    g_byte_array_free(attr, TRUE);
    g_byte_array_free(node_if, TRUE);
    g_byte_array_free(sub, TRUE);
    m = wrap_model(g);
    expect_load_error(m, "more than 10000 graphs in the model (subgraphs included), the limit");
    g_byte_array_free(m, TRUE);
}

/* If inside If, 40 deep: each level is three protobuf messages, over the readers' limit of 100. */
static void test_nesting_limit(void)
{
    GByteArray *g = g_byte_array_new();
    put_str(g, 2, "leaf");
    for (int depth = 0; depth < 40; depth++) {
        GByteArray *attr = g_byte_array_new(), *node = g_byte_array_new(), *outer = g_byte_array_new();
        put_str(attr, 1, "then_branch");
        put_varint(attr, 20 << 3);
        put_varint(attr, 5); /* GRAPH */
        put_field(attr, 6, g->data, g->len);
        put_str(node, 1, "c");
        put_str(node, 4, "If");
        put_field(node, 5, attr->data, attr->len);
        put_field(outer, 1, node->data, node->len);
        put_str(outer, 2, "level");
        g_byte_array_free(attr, TRUE);
        g_byte_array_free(node, TRUE);
        g_byte_array_free(g, TRUE);
        g = outer;
    }
    GByteArray *m = wrap_model(g);
    expect_load_error(m, "messages nested deeper than 100");
    g_byte_array_free(m, TRUE);
}

/* GraphProto {initializer {dims..., data_type FLOAT, name "w"}} with no payload. */
static GByteArray *initializer_model(const int64_t *dims, int rank)
{
    GByteArray *t = g_byte_array_new(), *g = g_byte_array_new();
    for (int i = 0; i < rank; i++) {
        put_varint(t, 1 << 3);
        put_varint(t, (uint64_t)dims[i]);
    }
    put_varint(t, 2 << 3);
    put_varint(t, F32);
    put_str(t, 8, "w");
    put_field(g, 5, t->data, t->len);
    g_byte_array_free(t, TRUE);
    return wrap_model(g);
}

static void test_rank_and_dims(void)
{
    /* rank 1000 in a declaration and in an initializer */
    int64_t dims[1000];
    for (int i = 0; i < 1000; i++)
        dims[i] = 1;
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1000, dims);
    tb_node(b, "Relu", "r", "x", "y");
    tb_output(b, "y", F32, -1, NULL);
    GByteArray *m = g_bytes_unref_to_array(tb_pack(b));
    tb_free(b);
    expect_load_error(m, "value 'x': rank 1000 exceeds the limit of 64");
    g_byte_array_free(m, TRUE);
    m = initializer_model(dims, 1000);
    expect_load_error(m, "initializer 'w': rank 1000 exceeds the limit of 64");
    g_byte_array_free(m, TRUE);

    /* 2^62 x 4 floats: the element count overflows 64 bits; 2^62 floats: the byte size does */
    m = initializer_model((int64_t[]){(int64_t)1 << 62, 4}, 2);
    expect_load_error(m, "initializer 'w': element count overflows 64 bits");
    g_byte_array_free(m, TRUE);
    m = initializer_model((int64_t[]){(int64_t)1 << 62}, 1);
    expect_load_error(m, "initializer 'w': byte size overflows 64 bits");
    g_byte_array_free(m, TRUE);
    m = initializer_model((int64_t[]){-1}, 1);
    expect_load_error(m, "initializer 'w': dimension 0 is negative (-1)");
    g_byte_array_free(m, TRUE);
}

/* Inputs of 2^62 x 2^62 elements through MatMul, Concat and Relu: sizes overflow, the analysis
 * still ends (with unknown or saturated sizes) or refuses with a message. */
static void test_huge_dims_pipeline(void)
{
    tb *b = tb_new(13);
    int64_t big[] = {(int64_t)1 << 62, (int64_t)1 << 62};
    tb_input(b, "a", F32, 2, big);
    tb_input(b, "b", F32, 2, big);
    tb_node(b, "MatMul", "mm", "a,b", "m");
    tb_node_t *cat = tb_node(b, "Concat", "cat", "m,m", "c");
    tb_attr_i(b, cat, "axis", 0);
    tb_node(b, "Relu", "relu", "c", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    fz_outcome o = fz_run_onnx(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    CU_ASSERT(o == FZ_OK || o == FZ_REJECTED);
}

/* Thousands of buffers live at once: the planner stacks them instead of visiting every pair. */
static void test_overlap_budget(void)
{
    enum { N = 5000 }; /* N * N / 2 pairs > FP_MEMPLAN_MAX_PAIRS */
    fp_membuf *bufs = g_new(fp_membuf, N);
    for (uint32_t i = 0; i < N; i++)
        bufs[i] = (fp_membuf){64 + i, i, N};
    uint64_t *off = g_new(uint64_t, N);
    fp_memplan_result res;
    g_autoptr(GError) err = NULL;
    CU_ASSERT_FATAL(fp_memplan_plan(bufs, N, 64, FP_MEMPLAN_BEST, off, &res, &err));
    CU_ASSERT_STRING_EQUAL(res.method, "naive (over the overlap budget)");
    uint64_t arena = 0;
    CU_ASSERT(fp_memplan_verify(bufs, N, 64, off, &arena, NULL));
    CU_ASSERT_EQUAL(arena, res.arena);
    CU_ASSERT(res.arena >= res.load);
    /* a few hundred at once still get a real plan */
    CU_ASSERT_FATAL(fp_memplan_plan(bufs, 300, 64, FP_MEMPLAN_BEST, off, &res, &err));
    CU_ASSERT_STRING_NOT_EQUAL(res.method, "naive (over the overlap budget)");
    g_free(bufs);
    g_free(off);
}

/* 250001 empty GE ops (2 bytes each): the GE reader refuses them before building nodes. */
static void test_ge_op_limit(void)
{
    GByteArray *g = g_byte_array_new(), *m = g_byte_array_new();
    put_str(g, 1, "g");
    static const uint8_t op[] = {0x32, 0x00}; /* GraphDef.op {} */
    for (int i = 0; i <= FP_MAX_NODES; i++)
        g_byte_array_append(g, op, sizeof op);
    put_str(m, 1, "m");
    put_field(m, 7, g->data, g->len); /* ModelDef.graph */
    g_autofree char *path = tu_write_temp(m->data, m->len, ".pb");
    g_byte_array_free(g, TRUE);
    g_byte_array_free(m, TRUE);
    tu_run_result r = tu_run((const char *[]){"info", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "graph 'g': 250001 ops, more than the limit of 250000"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* GE ops {name: "<prefix><i>" type: "R"} i = 0..n-1 appended to graph g. */
static void put_ge_ops(GByteArray *g, const char *prefix, int n)
{
    GByteArray *op = g_byte_array_new();
    for (int i = 0; i < n; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "%s%d", prefix, i);
        g_byte_array_set_size(op, 0);
        put_str(op, 1, name);
        put_str(op, 2, "R");
        put_field(g, 6, op->data, op->len); /* GraphDef.op */
    }
    g_byte_array_free(op, TRUE);
}

/* Two GE graphs of fewer ops than the limit each, more together: the loader's model-wide node
 * limit refuses them (the frontend checks one graph at a time). */
static void test_ge_model_node_limit(void)
{
    int half = FP_MAX_NODES / 2 + 1;
    GByteArray *g = g_byte_array_new(), *sub = g_byte_array_new(), *call = g_byte_array_new(), *m = g_byte_array_new();
    put_str(g, 1, "g");
    put_str(call, 1, "call");
    put_str(call, 2, "P");
    put_str(call, 35, "s"); /* OpDef.subgraph_name */
    put_field(g, 6, call->data, call->len);
    put_ge_ops(g, "a", half - 1);
    put_str(sub, 1, "s");
    put_ge_ops(sub, "b", half);
    put_str(m, 1, "m");
    put_field(m, 7, g->data, g->len); /* ModelDef.graph: the main graph first */
    put_field(m, 7, sub->data, sub->len);
    g_autofree char *path = tu_write_temp(m->data, m->len, ".pb");
    g_byte_array_free(g, TRUE);
    g_byte_array_free(sub, TRUE);
    g_byte_array_free(call, TRUE);
    g_byte_array_free(m, TRUE);
    g_autoptr(GError) err = NULL;
    fp_model *model = fp_load_model(path, &err);
    CU_ASSERT_PTR_NULL(model);
    fp_model_free(model);
    g_autofree char *want = g_strdup_printf("%d nodes (all graphs), more than the limit of %d", 2 * half, FP_MAX_NODES);
    tu_expect_error(err, want);
    g_unlink(path);
}

/* A gzip file whose content exceeds 128 MiB (129 MiB of zeros, about 130 KB compressed). */
static void test_gzip_limit(void)
{
    g_autofree char *path = tu_write_temp("", 0, ".onnx.gz");
    g_autoptr(GFile) f = g_file_new_for_path(path);
    g_autoptr(GFileOutputStream) raw = g_file_replace(f, NULL, FALSE, G_FILE_CREATE_NONE, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
    g_autoptr(GZlibCompressor) z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 1);
    g_autoptr(GOutputStream) out = g_converter_output_stream_new(G_OUTPUT_STREAM(raw), G_CONVERTER(z));
    g_autofree uint8_t *zeros = g_malloc0(1 << 20);
    for (int i = 0; i < 129; i++)
        CU_ASSERT(g_output_stream_write_all(out, zeros, 1 << 20, NULL, NULL, NULL));
    CU_ASSERT(g_output_stream_close(out, NULL, NULL));
    tu_run_result r = tu_run((const char *[]){"info", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "gzip content larger than 128 MiB"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* Malformed fields of an otherwise valid graph. */
static void test_malformed_fields(void)
{
    /* raw_data of 3 bytes for 4 floats */
    GByteArray *t = g_byte_array_new(), *g = g_byte_array_new();
    put_varint(t, 1 << 3);
    put_varint(t, 4);
    put_varint(t, 2 << 3);
    put_varint(t, F32);
    put_str(t, 8, "w");
    put_field(t, 9, "abc", 3);
    put_field(g, 5, t->data, t->len);
    g_byte_array_free(t, TRUE);
    GByteArray *m = wrap_model(g);
    expect_load_error(m, "initializer 'w': raw_data holds 3 bytes but float32 dims need 16");
    g_byte_array_free(m, TRUE);

    /* a node without op_type, a node writing a graph input, an attribute of unknown type */
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "", "nameless", "x", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    m = g_bytes_unref_to_array(tb_pack(b));
    tb_free(b);
    expect_load_error(m, "graph 'test': node 0 ('nameless') has no op_type");
    g_byte_array_free(m, TRUE);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Relu", "r", "x", "x");
    tb_output(b, "x", F32, 1, (int64_t[]){4});
    m = g_bytes_unref_to_array(tb_pack(b));
    tb_free(b);
    expect_load_error(m, "node 'r' (Relu) writes 'x', which is a graph input");
    g_byte_array_free(m, TRUE);

    GByteArray *a = g_byte_array_new(), *n = g_byte_array_new();
    put_str(a, 1, "alpha");
    put_varint(a, 20 << 3);
    put_varint(a, 99); /* no such AttributeType */
    put_str(n, 1, "x");
    put_str(n, 2, "y");
    put_str(n, 3, "lr");
    put_str(n, 4, "LeakyRelu");
    put_field(n, 5, a->data, a->len);
    g = g_byte_array_new();
    put_field(g, 1, n->data, n->len);
    g_byte_array_free(a, TRUE);
    g_byte_array_free(n, TRUE);
    m = wrap_model(g);
    expect_load_error(m, "node 'lr' (LeakyRelu): attribute 'alpha' has unknown type 99");
    g_byte_array_free(m, TRUE);
}

/* Bad --input values: one line naming the value. */
static void test_input_specs(void)
{
    const char *cases[][2] = {
        {"input", "--input 'input': expected NAME:DIMS"},
        {"input:1xabcx32x32", "dimension 1 'abc' is not an integer in [0, 2^62] or '?'"},
        {"input:9223372036854775807x3x32x32", "dimension 0 '9223372036854775807' is not an integer in [0, 2^62]"},
        {"nosuch:1x3x32x32", "the model has no input named 'nosuch'"},
        {"input:1x3x32", "rank 3 given, but the model declares batchx3x32x32 (rank 4)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tu_run_result r = tu_run((const char *[]){"shapes", "--input", cases[i][0], SMALL_MODEL, NULL});
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        if (!strstr(r.err, cases[i][1]))
            fprintf(stderr, "\n  expected '%s' in: %s", cases[i][1], r.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, cases[i][1]));
        tu_run_clear(&r);
    }
    g_autoptr(GString) spec = g_string_new("input:"); /* rank 65 */
    for (int i = 0; i < 65; i++)
        g_string_append(spec, i ? "x1" : "1");
    tu_run_result r = tu_run((const char *[]){"shapes", "--input", spec->str, SMALL_MODEL, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "rank 65 exceeds 64"));
    tu_run_clear(&r);
}

/* ---------------------------------------------------------------- semantic errors (CLI) */

/* `fuseplan shapes [opt] FILE` of b exits 2 with one line naming the file and needle. */
static void expect_cli_error(tb *b, const char *opt, const char *needle)
{
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tu_expect_cli_error(opt ? (const char *[]){"shapes", opt, path, NULL} : (const char *[]){"shapes", path, NULL},
                        path, needle);
    g_unlink(path);
}

static tb *conv_model(int64_t in_channels)
{
    tb *b = tb_new(13);
    int64_t xd[] = {1, in_channels, 8, 8}, wd[] = {4, 3, 3, 3};
    tb_input(b, "x", F32, 4, xd);
    tb_init(b, "w", F32, 4, wd);
    tb_output(b, "y", F32, -1, NULL);
    return b;
}

static void test_unknown_op(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "FancyOp", "fancy", "x", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tu_run_result r = tu_run((const char *[]){"shapes", path, NULL}); /* a warning, not an error */
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "warning"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "FancyOp (1)"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"shapes", "-f", "json", path, NULL}); /* and a diagnostic in JSON */
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "unknown-op"));
    tu_run_clear(&r);
    g_unlink(path);
    expect_cli_error(b, "--strict", "node 'fancy': op type 'FancyOp' is unknown to fuseplan (--strict)");
    tb_free(b);
}

static void test_attribute_types(void)
{
    tb *b = conv_model(3);
    tb_node_t *c = tb_node(b, "Conv", "conv", "x,w", "y");
    tb_attr_f(b, c, "kernel_shape", 3.0f);
    expect_cli_error(b, NULL, "node 'conv' (Conv): attribute 'kernel_shape' is FLOAT, expected INTS");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node_t *cast = tb_node(b, "Cast", "cast", "x", "y");
    tb_attr_s(b, cast, "to", "FLOAT16");
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'cast' (Cast): attribute 'to' is STRING, expected INT");
    tb_free(b);
}

static void test_required_attributes(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Cast", "cast", "x", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'cast' (Cast): missing required attribute 'to' (INT)");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Concat", "cat", "x,x", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'cat' (Concat): missing required attribute 'axis' (INT)");
    tb_free(b);

    /* Concat-1 defaults axis to 1 */
    b = tb_new(1);
    tb_input(b, "x", F32, 2, (int64_t[]){2, 3});
    tb_node(b, "Concat", "cat", "x,x", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    tu_run_result r = tu_run((const char *[]){"shapes", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "2x6"));
    tu_run_clear(&r);
    g_unlink(path);
}

static void test_shape_mismatches(void)
{
    tb *b = conv_model(5); /* the weight expects 3 channels */
    tb_node(b, "Conv", "conv", "x,w", "y");
    expect_cli_error(b, NULL, "node 'conv' (Conv): input has 5 channels but weight expects 3");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "a", F32, 2, (int64_t[]){2, 3});
    tb_input(b, "b", F32, 2, (int64_t[]){4, 5});
    tb_node(b, "MatMul", "mm", "a,b", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'mm' (MatMul): inner dimensions differ: 3 vs 4");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "a", F32, 2, (int64_t[]){2, 3});
    tb_input(b, "b", F32, 2, (int64_t[]){2, 4});
    tb_node_t *cat = tb_node(b, "Concat", "cat", "a,b", "y");
    tb_attr_i(b, cat, "axis", 0);
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'cat' (Concat): input 1 dim 1 is 4, input 0 has 3");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "a", F32, 2, (int64_t[]){2, 3});
    tb_input(b, "b", F32, 2, (int64_t[]){3, 4});
    tb_input(b, "c", F32, 1, (int64_t[]){5});
    tb_node(b, "Gemm", "gemm", "a,b,c", "y");
    tb_output(b, "y", F32, -1, NULL);
    expect_cli_error(b, NULL, "node 'gemm' (Gemm): C of shape 5 does not broadcast to the result 2x4");
    tb_free(b);
}

static void test_graph_errors(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Add", "p", "x,q_out", "p_out");
    tb_node(b, "Relu", "q", "p_out", "q_out");
    tb_output(b, "q_out", F32, 1, (int64_t[]){4});
    expect_cli_error(b, NULL, "cycle through node");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Add", "add", "x,ghost", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    expect_cli_error(b, NULL, "node 'add' (Add): input 1 'ghost' is produced by no node");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Relu", "r", "x", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    expect_cli_error(b, NULL, "duplicate input 'x'");
    tb_free(b);

    b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Relu", "r1", "x", "y");
    tb_node(b, "Neg", "r2", "x", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    expect_cli_error(b, NULL, "'y' is produced by both node 'r1' and node 'r2'");
    tb_free(b);
}

/* A name with a newline and an escape character still gives one clean line on stderr. */
static void test_control_characters(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 1, (int64_t[]){4});
    tb_node(b, "Add", "add\nnext line\033[2J", "x,ghost", "y");
    tb_output(b, "y", F32, 1, (int64_t[]){4});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    tu_run_result r = tu_run((const char *[]){"info", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NULL(strchr(r.err, '\033'));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "add next line"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* Unknown keys of the three .ini kinds are errors that list the valid keys. */
static void test_ini_keys(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_gate_policy) p = fp_gate_policy_from_data("[gate]\nmax_activation=5\n", "p.ini", &err);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "unknown key 'max_activation' (valid keys: max_activation_mb,"));
    /* through the CLI: exit 2, one line naming the file, the list of valid keys complete and only it */
    const char *pol = "[gate]\nmax_activation=5\n";
    g_autofree char *ppath = tu_write_temp(pol, strlen(pol), ".ini");
    tu_run_result pr = tu_run((const char *[]){"gate", "--policy", ppath, SMALL_MODEL, NULL});
    CU_ASSERT_EQUAL(pr.status, 2);
    CU_ASSERT_EQUAL(tu_lines(pr.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(pr.err, ppath));
    CU_ASSERT_PTR_NOT_NULL(strstr(pr.err, "unknown key 'max_activation' (valid keys: max_activation_mb, max_total_mb, "
                                          "min_headroom_batch, min_est_speedup, forbid_unfused, "
                                          "max_layout_conversions, device, target)\n"));
    tu_run_clear(&pr);
    g_unlink(ppath);

    const char *dev = "[device]\ndescription=d\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=5e-6\n"
                      "align_bytes=256\nfrequency=1e9\n[peak]\nfp32=1e12\n";
    g_autofree char *dpath = tu_write_temp(dev, strlen(dev), ".ini");
    tu_run_result r = tu_run((const char *[]){"report", "--device", dpath, SMALL_MODEL, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "[device] frequency: unknown key (valid keys: description, target,"));
    tu_run_clear(&r);
    g_unlink(dpath);

    const char *tgt = "[target]\nname=t\nrules=conv_bn\n[rule.conv_bn]\nmax_eps=1\n";
    g_autofree char *tpath = tu_write_temp(tgt, strlen(tgt), ".ini");
    r = tu_run((const char *[]){"report", "--target", tpath, SMALL_MODEL, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "[rule.conv_bn]: unknown key 'max_eps' (valid: "));
    tu_run_clear(&r);
    g_unlink(tpath);
}

FP_TEST_SUITE(register_robustness)
{
    CU_pSuite s = CU_add_suite("robustness", NULL, NULL);
    CU_add_test(s, "replay onnx", test_replay_onnx);
    CU_add_test(s, "replay onnx_text", test_replay_onnx_text);
    CU_add_test(s, "replay ge", test_replay_ge);
    CU_add_test(s, "replay ini", test_replay_ini);
    CU_add_test(s, "replay input_spec", test_replay_input_spec);
    CU_add_test(s, "replay genai_config", test_replay_genai_config);
    CU_add_test(s, "node and graph limits", test_node_limit);
    CU_add_test(s, "nesting limit", test_nesting_limit);
    CU_add_test(s, "rank and dims", test_rank_and_dims);
    CU_add_test(s, "huge dims through the pipeline", test_huge_dims_pipeline);
    CU_add_test(s, "overlap budget of the planner", test_overlap_budget);
    CU_add_test(s, "GE op limit", test_ge_op_limit);
    CU_add_test(s, "GE model node limit", test_ge_model_node_limit);
    CU_add_test(s, "gzip limit", test_gzip_limit);
    CU_add_test(s, "malformed fields", test_malformed_fields);
    CU_add_test(s, "bad --input values", test_input_specs);
    CU_add_test(s, "unknown op and --strict", test_unknown_op);
    CU_add_test(s, "attribute types", test_attribute_types);
    CU_add_test(s, "required attributes", test_required_attributes);
    CU_add_test(s, "shape mismatches", test_shape_mismatches);
    CU_add_test(s, "graph errors", test_graph_errors);
    CU_add_test(s, "control characters in names", test_control_characters);
    CU_add_test(s, "unknown .ini keys", test_ini_keys);
}
