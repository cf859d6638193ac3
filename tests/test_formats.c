/* test_formats.c - formats suite: the split between the `fuseplan` executable (GLib, protobuf-c,
 * zlib) and the formats module fuseplan-formats.so (json-glib, libxml2): text output never loads
 * the module nor its libraries, JSON/HTML/GE JSON load it, a missing or broken module is one line
 * and exit 2 with nothing written; gzip models are read with zlib. Runs the binary, as a user. */
#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>

#include "tutil.h"

#define MODEL FP_SOURCE_DIR "/models/resnet_tiny.onnx"
#define EPS FP_SOURCE_DIR "/models/eps_story.onnx"
#define POLICY FP_SOURCE_DIR "/tests/data/policies/pass.ini"
#define CSV FP_SOURCE_DIR "/tests/data/profiles/hicann__oam-tools/op_summary_20260624165820.csv"

/* A one-op GE JSON graph (atc --mode=1) that imports and verifies. */
static const char ge_json[] =
    "{\"graph\": [{\"name\": \"g\", \"input\": [\"x\"], \"output\": [\"r:0\"], \"op\": [\n"
    " {\"name\": \"x\", \"type\": \"Data\", \"output_desc\": [{\"dtype\": \"DT_FLOAT\", \"shape\": {\"dim\": [1, 4]}}]},\n"
    " {\"name\": \"r\", \"type\": \"Relu\", \"input\": [\"x:0\"],\n"
    "  \"output_desc\": [{\"dtype\": \"DT_FLOAT\", \"shape\": {\"dim\": [1, 4]}}]}]}]}";

/* Runs FP_BINARY with LD_DEBUG=files: the dynamic loader lists on stderr every object it maps
 * (DT_NEEDED and dlopen alike). Returns that list's result; caller tu_run_clear()s. */
static tu_run_result run_traced(const char *const *args)
{
    return tu_run_exe(FP_BINARY, (const char *[]){"LD_DEBUG=files", NULL}, args);
}

/* The loader trace names GLib (so tracing works: the test can fail) and none of the objects the
 * formats module brings in. */
static void expect_no_formats(const char *trace, const char *what)
{
    CU_ASSERT_PTR_NOT_NULL(strstr(trace, "libglib-2.0.so"));
    static const char *const banned[] = {"fuseplan-formats.so", "libxml2.so", "libjson-glib", "libgio-2.0.so",
                                         "libicu"};
    for (size_t i = 0; i < G_N_ELEMENTS(banned); i++)
        if (strstr(trace, banned[i])) {
            fprintf(stderr, "\n  %s maps %s\n", what, banned[i]);
            CU_FAIL("text output mapped a formats library");
        }
}

static void test_text_without_module(void)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    const char *const *cmds[] = {
        (const char *[]){"--version", NULL},
        (const char *[]){"report", MODEL, NULL},
        (const char *[]){"report", "-f", "markdown", MODEL, NULL},
        (const char *[]){"report", "-f", "dot", MODEL, NULL},
        (const char *[]){"memory", MODEL, NULL},
        (const char *[]){"explain", MODEL, NULL},
        (const char *[]){"info", MODEL, NULL},
        (const char *[]){"shapes", MODEL, NULL},
        (const char *[]){"headroom", "--device", "cpu-avx2", MODEL, NULL},
        (const char *[]){"diff", MODEL, MODEL, NULL},
        (const char *[]){"devices", NULL},
        (const char *[]){"gate", EPS, "--policy", POLICY, NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        tu_run_result r = run_traced(cmds[i]);
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT(strlen(r.out) > 0);
        expect_no_formats(r.err, cmds[i][0]);
        tu_run_clear(&r);
    }
}

static void test_formats_load_module(void)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    struct {
        const char *const *args;
        const char *lib;
    } cases[] = {
        {(const char *[]){"report", "-f", "json", "--no-headroom", MODEL, NULL}, "libjson-glib"},
        {(const char *[]){"memory", "-f", "json", MODEL, NULL}, "libjson-glib"},
        {(const char *[]){"report", "-f", "html", "--no-headroom", MODEL, NULL}, "libxml2.so"},
        {(const char *[]){"profile", CSV, NULL}, "fuseplan-formats.so"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tu_run_result r = run_traced(cases[i].args);
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "fuseplan-formats.so"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, cases[i].lib));
        tu_run_clear(&r);
    }
    tu_run_result r = tu_run((const char *[]){"report", "-f", "json", "--no-headroom", MODEL, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"schema\" : 1"));
    tu_run_clear(&r);
}

/* A GE JSON model is read through the module (its parser uses json-glib). */
static void test_ge_json_model(void)
{
    g_autofree char *path = tu_write_temp(ge_json, sizeof ge_json - 1, ".json");
    tu_run_result r = run_traced((const char *[]){"info", path, NULL});
    if (r.status != 0)
        fprintf(stderr, "\n  %s", r.err);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ge-json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "fuseplan-formats.so"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* A copy of the binary in a fresh directory: `module` (when not NULL) is written next to it as
 * fuseplan-formats.so. Returns the directory; the copy is DIR/fuseplan. */
static char *lone_binary(const char *module, gsize len)
{
    char *dir = g_dir_make_tmp("fuseplan-lone-XXXXXX", NULL);
    g_assert(dir);
    g_autofree char *bin = NULL;
    gsize n = 0;
    g_assert(g_file_get_contents(FP_BINARY, &bin, &n, NULL));
    g_autofree char *copy = g_build_filename(dir, "fuseplan", NULL);
    g_assert(g_file_set_contents(copy, bin, (gssize)n, NULL));
    g_assert(g_chmod(copy, 0755) == 0);
    if (module) {
        g_autofree char *mod = g_build_filename(dir, "fuseplan-formats.so", NULL);
        g_assert(g_file_set_contents(mod, module, (gssize)len, NULL));
    }
    return dir;
}

/* Removes the files lone_binary and the test made, then the directory. */
static void remove_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
    }
    g_rmdir(dir);
}

/* Runs DIR/fuseplan with args; expects exit 2, nothing on stdout, one line naming `needle`. */
static void expect_module_error(const char *dir, const char *const *args, const char *needle)
{
    g_autofree char *copy = g_build_filename(dir, "fuseplan", NULL);
    tu_run_result r = tu_run_exe(copy, NULL, args);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    if (!strstr(r.err, needle))
        fprintf(stderr, "\n  expected '%s' in: %s", needle, r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, needle));
    tu_run_clear(&r);
}

/* With no module beside the copy in dir and none in FP_MODULE_DIR: every command that needs the
 * module fails with one line naming both places, and writes nothing. */
static void expect_no_module(const char *dir, const char *installed)
{
    g_autofree char *module = g_build_filename(dir, "fuseplan-formats.so", NULL);
    g_autofree char *json = g_build_filename(dir, "out.json", NULL);
    g_autofree char *junit = g_build_filename(dir, "junit.xml", NULL);
    g_autofree char *needle = g_strdup_printf("cannot load the formats module %s", module);
    expect_module_error(dir, (const char *[]){"report", "-f", "json", "-o", json, MODEL, NULL}, needle);
    CU_ASSERT(!g_file_test(json, G_FILE_TEST_EXISTS));
    expect_module_error(dir, (const char *[]){"report", "-f", "html", MODEL, NULL}, needle);
    expect_module_error(dir, (const char *[]){"gate", EPS, "--policy", POLICY, "--junit", junit, NULL}, needle);
    CU_ASSERT(!g_file_test(junit, G_FILE_TEST_EXISTS));
    expect_module_error(dir, (const char *[]){"profile", CSV, NULL}, needle);
    expect_module_error(dir, (const char *[]){"compare", MODEL, "--profile", CSV, NULL}, needle);
    expect_module_error(dir, (const char *[]){"devices", "-f", "json", NULL}, needle);
    g_autofree char *ge = g_build_filename(dir, "g.json", NULL);
    g_assert(g_file_set_contents(ge, ge_json, -1, NULL));
    expect_module_error(dir, (const char *[]){"info", ge, NULL}, needle);
    g_autofree char *also = g_strdup_printf("(also looked for %s)", installed);
    expect_module_error(dir, (const char *[]){"devices", "-f", "json", NULL}, also);
}

/* With no module beside the copy in dir but one installed in FP_MODULE_DIR: the copy takes the
 * installed one. It loads (JSON is written, the loader maps it), or, when it is of another build,
 * the one-line error names it. */
static void expect_installed_module(const char *dir, const char *installed)
{
    g_autofree char *copy = g_build_filename(dir, "fuseplan", NULL);
    tu_run_result r = tu_run_exe(copy, (const char *[]){"LD_DEBUG=files", NULL},
                                 (const char *[]){"report", "-f", "json", "--no-headroom", MODEL, NULL});
    if (r.status == 0) {
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"schema\" : 1"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, installed));
    } else {
        g_autofree char *needle = g_strdup_printf("cannot load the formats module %s:", installed);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, needle));
    }
    tu_run_clear(&r);
}

/* A copy of the binary alone in a directory: text needs no module, and the module is looked for
 * beside the executable, then in FP_MODULE_DIR. */
static void test_missing_module(void)
{
    g_autofree char *installed = g_build_filename(FP_MODULE_DIR, "fuseplan-formats.so", NULL);
    g_autofree char *dir = lone_binary(NULL, 0);
    g_autofree char *copy = g_build_filename(dir, "fuseplan", NULL);
    tu_run_result r = tu_run_exe(copy, NULL, (const char *[]){"report", MODEL, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "stage"));
    tu_run_clear(&r);
    if (g_file_test(installed, G_FILE_TEST_EXISTS))
        expect_installed_module(dir, installed);
    else
        expect_no_module(dir, installed);
    remove_dir(dir);
}

/* A file that is not a shared object where the module should be: one line with the reason. */
static void test_broken_module(void)
{
    static const char junk[] = "not an ELF file\n";
    g_autofree char *dir = lone_binary(junk, sizeof junk - 1);
    g_autofree char *module = g_build_filename(dir, "fuseplan-formats.so", NULL);
    g_autofree char *needle = g_strdup_printf("cannot load the formats module %s", module);
    expect_module_error(dir, (const char *[]){"info", "-f", "json", MODEL, NULL}, needle);
    remove_dir(dir);
}

/* Writes `data` gzip-compressed to a new temp file; `members` > 1 splits it into that many gzip
 * members (as `cat a.gz b.gz` makes). */
static char *gzip_temp(const char *data, gsize len, int members, gsize keep)
{
    g_autofree char *path = tu_write_temp("", 0, ".onnx.gz");
    gzFile z = gzopen(path, "wb");
    g_assert(z);
    gsize step = len / (gsize)members + 1;
    for (gsize off = 0; off < len; off += step) {
        gsize n = MIN(step, len - off);
        g_assert(gzwrite(z, data + off, (unsigned)n) == (int)n);
        if (off + step < len) { /* end this member, start the next */
            g_assert(gzflush(z, Z_FINISH) == Z_OK);
        }
    }
    g_assert(gzclose(z) == Z_OK);
    if (keep) { /* truncated: only the first `keep` bytes */
        g_autofree char *all = NULL;
        gsize n = 0;
        g_assert(g_file_get_contents(path, &all, &n, NULL));
        g_assert(keep < n);
        g_assert(g_file_set_contents(path, all, (gssize)keep, NULL));
    }
    return g_steal_pointer(&path);
}

static void test_gzip_models(void)
{
    g_autofree char *onnx = NULL;
    gsize len = 0;
    g_assert(g_file_get_contents(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &onnx, &len, NULL));
    tu_run_result plain = tu_run((const char *[]){"info", MODEL, NULL});
    CU_ASSERT_EQUAL(plain.status, 0);
    const char *nodes = strstr(plain.out, "\nnodes"); /* the line, not a "nodes" in the path */
    CU_ASSERT_PTR_NOT_NULL_FATAL(nodes);
    for (int members = 1; members <= 3; members += 2) {
        g_autofree char *gz = gzip_temp(onnx, len, members, 0);
        tu_run_result r = run_traced((const char *[]){"info", gz, NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, nodes)); /* same graph as the plain file */
        expect_no_formats(r.err, "info on gzip");
        tu_run_clear(&r);
        g_unlink(gz);
    }
    tu_run_clear(&plain);
    g_autofree char *cut = gzip_temp(onnx, len, 1, 200);
    tu_expect_cli_error((const char *[]){"info", cut, NULL}, cut, "gzip: truncated");
    g_unlink(cut);
    static const char bad[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage that does not inflate";
    g_autofree char *corrupt = tu_write_temp(bad, sizeof bad - 1, ".onnx.gz");
    tu_expect_cli_error((const char *[]){"info", corrupt, NULL}, corrupt, "gzip: ");
    g_unlink(corrupt);
}

FP_TEST_SUITE(register_formats)
{
    CU_pSuite s = CU_add_suite("formats", NULL, NULL);
    CU_add_test(s, "text_without_module", test_text_without_module);
    CU_add_test(s, "formats_load_module", test_formats_load_module);
    CU_add_test(s, "ge_json_model", test_ge_json_model);
    CU_add_test(s, "missing_module", test_missing_module);
    CU_add_test(s, "broken_module", test_broken_module);
    CU_add_test(s, "gzip_models", test_gzip_models);
}
