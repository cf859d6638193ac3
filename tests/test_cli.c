/* test_cli.c - CLI suite: runs build/fuseplan as a user would; exit codes and one-line errors. */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "tutil.h"

enum { F32 = 1 };

static char *sample_model(void)
{
    tb *b = tb_new(13);
    int64_t xd[] = {-1, 3, 8, 8}, wd[] = {16, 3, 3, 3}, yd[] = {-1, 16, 8, 8};
    tb_input(b, "x", F32, 4, xd);
    tb_init(b, "w", F32, 4, wd);
    tb_node(b, "Conv", "conv1", "x,w", "a");
    tb_node(b, "Relu", "relu1", "a", "y");
    tb_output(b, "y", F32, 4, yd);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

static void test_help(void)
{
    tu_run_result r = tu_run((const char *[]){"--help", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "info"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"info", "--help", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--format"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"frobnicate", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
    r = tu_run((const char *[]){"info", "--bogus", "x", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
}

static void test_info_text(void)
{
    g_autofree char *path = sample_model();
    tu_run_result r = tu_run((const char *[]){"info", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fuseplan-tests"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Nx3x8x8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nodes      2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "432 in 1 initializers"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    tu_run_clear(&r);
    g_unlink(path);
}

static void test_info_json(void)
{
    g_autofree char *path = sample_model();
    tu_run_result r = tu_run((const char *[]){"info", "--format", "json", path, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "onnx");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "producer"), "fuseplan-tests");
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "ir_version"), 8);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "nodes"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "graphs"), 1);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "params"), 432);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "param_bytes"), 1728);
    JsonObject *h = json_object_get_object_member(o, "op_histogram");
    CU_ASSERT_EQUAL(json_object_get_int_member(h, "Conv"), 1);
    CU_ASSERT_EQUAL(json_object_get_int_member(h, "Relu"), 1);
    JsonObject *ops = json_object_get_object_member(o, "opsets");
    CU_ASSERT_EQUAL(json_object_get_int_member(ops, "ai.onnx"), 13);
    JsonArray *in = json_object_get_array_member(o, "inputs");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(in), 1);
    JsonObject *x = json_array_get_object_element(in, 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(x, "dtype"), "float32");
    JsonArray *shape = json_object_get_array_member(x, "shape");
    CU_ASSERT_STRING_EQUAL(json_array_get_string_element(shape, 0), "N");
    CU_ASSERT_EQUAL(json_array_get_int_element(shape, 1), 3);
    tu_run_clear(&r);
    g_unlink(path);
}

/* Each malformed file: exit 2, exactly one line on stderr naming the file and `needle`. */
static void expect_bad(const char *path, const char *needle)
{
    tu_expect_cli_error((const char *[]){"info", path, NULL}, path, needle);
}

static void test_bad_inputs(void)
{
    /* truncated */
    tb *b = tb_new(13);
    int64_t d[] = {2048};
    tb_input(b, "x", F32, 1, d);
    tb_init(b, "w", F32, 1, d);
    tb_node(b, "Add", "add", "x,w", "y");
    tb_output(b, "y", F32, 1, d);
    g_autoptr(GBytes) bytes = tb_pack(b);
    tb_free(b);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    g_autofree char *trunc = tu_write_temp(data, len - 100, ".onnx");
    expect_bad(trunc, "length runs past the end");
    g_unlink(trunc);

    /* random bytes */
    GRand *rnd = g_rand_new_with_seed(7);
    uint8_t junk[300];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)g_rand_int(rnd);
    junk[0] = 0xff; /* no format starts so: caught by format detection */
    g_rand_free(rnd);
    g_autofree char *rnd_path = tu_write_temp(junk, sizeof junk, ".onnx");
    expect_bad(rnd_path, "unrecognized format");
    g_unlink(rnd_path);
    junk[0] = 0x08; /* looks like ir_version, then garbage */
    g_autofree char *rnd2 = tu_write_temp(junk, sizeof junk, ".onnx");
    expect_bad(rnd2, "not");
    g_unlink(rnd2);

    /* cycle */
    b = tb_new(13);
    tb_input(b, "x", F32, 1, d);
    tb_node(b, "Add", "p", "x,q_out", "p_out");
    tb_node(b, "Relu", "q", "p_out", "q_out");
    tb_output(b, "q_out", F32, 1, d);
    g_autofree char *cyc = tb_write_temp(b, ".onnx");
    tb_free(b);
    expect_bad(cyc, "cycle through node");
    g_unlink(cyc);

    /* an input nobody produces */
    b = tb_new(13);
    tb_input(b, "x", F32, 1, d);
    tb_node(b, "Add", "add", "x,ghost", "y");
    tb_output(b, "y", F32, 1, d);
    g_autofree char *dang = tb_write_temp(b, ".onnx");
    tb_free(b);
    expect_bad(dang, "node 'add' (Add): input 1 'ghost' is produced by no node");
    g_unlink(dang);

    /* two producers of one value */
    b = tb_new(13);
    tb_input(b, "x", F32, 1, d);
    tb_node(b, "Relu", "r1", "x", "y");
    tb_node(b, "Neg", "r2", "x", "y");
    tb_output(b, "y", F32, 1, d);
    g_autofree char *dup = tb_write_temp(b, ".onnx");
    tb_free(b);
    expect_bad(dup, "'y' is produced by both node 'r1' and node 'r2'");
    g_unlink(dup);

    /* missing file, empty file */
    expect_bad("/nonexistent/model.onnx", "cannot open");
    g_autofree char *empty = tu_write_temp("", 0, ".onnx");
    expect_bad(empty, "empty file");
    g_unlink(empty);
}

static void test_output_file(void)
{
    g_autofree char *path = sample_model();
    g_autofree char *out = tu_write_temp("old", 3, ".json");
    tu_run_result r = tu_run((const char *[]){"info", "-f", "json", "-o", out, path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    tu_run_clear(&r);
    g_autofree char *text = NULL;
    CU_ASSERT(g_file_get_contents(out, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"op_histogram\""));
    /* a failing run leaves the previous output intact */
    r = tu_run((const char *[]){"info", "-f", "json", "-o", out, "/nonexistent.onnx", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_clear(&r);
    g_autofree char *again = NULL;
    CU_ASSERT(g_file_get_contents(out, &again, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(again, text);
    g_unlink(out);
    g_unlink(path);
}

/* -o naming something that is not a regular file (here a FIFO; /dev/null and /dev/stdout alike)
 * writes into it: it is not replaced by a regular file, as an atomic rename over it would do. */
static void test_output_fifo(void)
{
    g_autofree char *path = sample_model();
    g_autofree char *dir = g_dir_make_tmp("fp-fifo-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    g_autofree char *fifo = g_build_filename(dir, "out", NULL);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so that the writer's open does not block */
    CU_ASSERT_FATAL(rd >= 0);
    for (int json = 0; json < 2; json++) {
        const char *fmt = json ? "json" : "text";
        tu_run_result r = tu_run((const char *[]){"report", "-f", fmt, "-o", fifo, path, NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        tu_run_clear(&r);
        struct stat st;
        CU_ASSERT(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
        char buf[4096];
        ssize_t n = read(rd, buf, sizeof buf - 1);
        CU_ASSERT(n > 0);
        buf[MAX(n, 0)] = 0;
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, json ? "\"schema\"" : "stage"));
        while (read(rd, buf, sizeof buf) > 0) /* the rest of this report */
            ;
    }
    close(rd);
    g_unlink(fifo);
    g_rmdir(dir);
    g_unlink(path);
}

static void test_shapes_json(void)
{
    g_autofree char *path = sample_model();
    tu_run_result r = tu_run((const char *[]){"shapes", "-f", "json", "--batch", "2", path, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "schema"), 1);
    JsonArray *nodes = json_object_get_array_member(o, "nodes");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(nodes), 2);
    JsonObject *conv = json_array_get_object_element(nodes, 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(conv, "op"), "Conv");
    /* 2x16x6x6 outputs (no padding), 27 MACs each */
    CU_ASSERT_EQUAL(json_object_get_int_member(conv, "flops"), 2 * (2 * 16 * 6 * 6) * 27);
    CU_ASSERT_FALSE(json_object_get_boolean_member(conv, "folded"));
    JsonArray *shape =
        json_object_get_array_member(json_array_get_object_element(json_object_get_array_member(conv, "outputs"), 0),
                                     "shape");
    CU_ASSERT_EQUAL(json_array_get_int_element(shape, 0), 2);
    CU_ASSERT_EQUAL(json_array_get_int_element(shape, 2), 6);
    tu_run_clear(&r);
    /* without --batch a symbolic batch is bound to 1, as every command binds it, and the text says so */
    r = tu_run((const char *[]){"shapes", "-f", "json", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    g_autofree char *one = g_strdup_printf("\"flops\" : %d", (2 * 16 * 6 * 6) * 27);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, one));
    CU_ASSERT_PTR_NULL(strstr(r.out, "\"flops\" : null"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"shapes", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "bound to 1"));
    tu_run_clear(&r);
    /* a bad --input spec and an unknown input name are usage errors */
    r = tu_run((const char *[]){"shapes", "-i", "x:1x3x8", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "rank 3 given"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"shapes", "-i", "nope:1", path, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no input named 'nope'"));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
    g_unlink(path);
}

static void test_report_json(void)
{
    const char *model = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    tu_run_result r = tu_run((const char *[]){"report", "-f", "json", "--batch", "2", "--no-headroom", model, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    JsonArray *stages = json_object_get_array_member(o, "stages");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(stages), 3);
    JsonObject *orig = json_array_get_object_element(stages, 0), *fin = json_array_get_object_element(stages, 2);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(orig, "name"), "original");
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(orig, "speedup"), 1.0, 1e-9);
    /* 36 nodes, 4 folded shape computations; 9 BN folds and 4 activations fused; at ORT's default
     * level (all) the 3 Adds and 3 Relus left fold into the blocked Convs, one ReorderOutput added */
    CU_ASSERT_EQUAL(json_object_get_int_member(orig, "ops"), 32);
    CU_ASSERT_EQUAL(json_object_get_int_member(fin, "ops"), 32 - 9 - 4 - 3 - 3 + 1);
    CU_ASSERT(json_object_get_int_member(fin, "activation_bytes") <
              json_object_get_int_member(orig, "activation_bytes"));
    CU_ASSERT(json_object_get_double_member(fin, "speedup") > 1.0);
    JsonArray *ops = json_object_get_array_member(o, "ops");
    CU_ASSERT_EQUAL(json_array_get_length(ops), 32 - 9 - 4 - 3 - 3 + 1);
    JsonObject *op0 = json_array_get_object_element(ops, 0);
    const char *members[] = {"name", "op", "flops", "bytes", "intensity", "bound", "est_time_s"};
    for (size_t i = 0; i < G_N_ELEMENTS(members); i++)
        CU_ASSERT(json_object_has_member(op0, members[i]));
    CU_ASSERT(json_object_has_member(o, "fusions"));
    CU_ASSERT(json_object_has_member(o, "memory"));
    tu_run_clear(&r);
    /* --dump-after prints the IR after a pass on stderr; an unknown pass is a usage error */
    r = tu_run((const char *[]){"report", "--dump-after", "fuse", "--no-headroom", model, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "# IR after pass fuse"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "FusedConv"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"report", "--dump-after", "nope", model, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
}

/* the branchy sample exported breadth-first: the memory-aware order lowers the floor (issue 5) */
static void test_memory_schedule(void)
{
    tu_run_result r = tu_run((const char *[]){"memory", "--batch", "1", "--schedule", "optimized", "-f", "json",
                                              FP_SOURCE_DIR "/models/inception_bfs.onnx", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *m = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "memory");
    JsonObject *s = json_object_get_object_member(m, "schedules");
    gint64 given = json_object_get_int_member(s, "given_lower_bound_bytes");
    gint64 opt = json_object_get_int_member(s, "optimized_lower_bound_bytes");
    CU_ASSERT(opt < given);
    CU_ASSERT(opt * 4 <= given * 3); /* at least a quarter lower (measured: 1.25 MiB vs 1.875 MiB) */
    CU_ASSERT(json_object_get_boolean_member(s, "proven_minimal"));
    CU_ASSERT_EQUAL(json_object_get_int_member(m, "lower_bound_bytes"), opt);
    tu_run_clear(&r);
}

FP_TEST_SUITE(register_cli)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    CU_add_test(s, "help", test_help);
    CU_add_test(s, "info_text", test_info_text);
    CU_add_test(s, "info_json", test_info_json);
    CU_add_test(s, "bad_inputs", test_bad_inputs);
    CU_add_test(s, "output_file", test_output_file);
    CU_add_test(s, "output_fifo", test_output_fifo);
    CU_add_test(s, "shapes_json", test_shapes_json);
    CU_add_test(s, "report_json", test_report_json);
    CU_add_test(s, "memory_schedule", test_memory_schedule);
}
