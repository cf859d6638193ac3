/* test_lib.c - the C library (lib/fuseplan.h): a command run through fuseplan_run prints what the
 * executable prints, on a file or on the same bytes in memory, fails with the executable's line and
 * status, refuses what it does not run, and runs on two threads at once without interference. */
#define _XOPEN_SOURCE 600 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fuseplan.h"
#include "tutil.h"

/* One fuseplan_run: status, output and messages (g_free'd by run_clear). */
typedef struct {
    int rc;
    char *out, *msg;
    size_t len;
} run_result;

static run_result run(const char *const *args, const fuseplan_model *model)
{
    int argc = 0;
    while (args[argc])
        argc++;
    run_result r;
    char *out = NULL, *msg = NULL;
    r.rc = fuseplan_run(argc, args, model, &out, &r.len, &msg);
    r.out = g_strdup(out);
    r.msg = g_strdup(msg);
    fuseplan_free(out);
    fuseplan_free(msg);
    return r;
}

static void run_clear(run_result *r)
{
    g_free(r->out);
    g_free(r->msg);
}

/* The executable on the same arguments, from the source tree. */
static tu_run_result cli(const char *const *args)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    return tu_run(args);
}

/* report, explain, memory, headroom and train as JSON, and report as text: what the executable
 * prints, byte for byte, with nothing on standard error. */
static void test_same_as_cli(void)
{
    static const char *const cmds[][8] = {
        {"report", "-f", "json", "models/resnet_tiny.onnx", NULL},
        {"report", "--no-color", "--device", "h100", "--dim", "seq=64", "models/transformer_block.onnx", NULL},
        {"explain", "-f", "json", "models/eps_story.onnx", NULL},
        {"memory", "-f", "json", "models/inception_bfs.onnx", NULL},
        {"headroom", "-f", "json", "--device", "ascend910b", "models/resnet_tiny.onnx", NULL},
        {"train", "-f", "json", "--budget", "50%", "models/resnet_tiny.onnx", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        tu_run_result want = cli(cmds[i]);
        run_result got = run(cmds[i], NULL);
        CU_ASSERT_EQUAL(got.rc, want.status);
        CU_ASSERT_EQUAL(got.len, strlen(want.out));
        CU_ASSERT_STRING_EQUAL(got.out, want.out);
        CU_ASSERT_STRING_EQUAL(got.msg, want.err);
        CU_ASSERT_STRING_EQUAL(got.msg, "");
        run_clear(&got);
        tu_run_clear(&want);
    }
}

/* A model's bytes under its file's name give the file's output; under another name, that name in
 * the document; an argument that is not the name still reads its file. */
static void test_memory_model(void)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &data, &len, NULL));
    fuseplan_model m = {"models/resnet_tiny.onnx", data, len};
    const char *args[] = {"report", "-f", "json", "models/resnet_tiny.onnx", NULL};
    tu_run_result want = cli(args);
    run_result got = run(args, &m);
    CU_ASSERT_EQUAL(got.rc, 0);
    CU_ASSERT_STRING_EQUAL(got.out, want.out);
    run_clear(&got);
    tu_run_clear(&want);

    fuseplan_model anon = {NULL, data, len};
    got = run((const char *[]){"info", "-f", "json", "<memory>", NULL}, &anon);
    CU_ASSERT_EQUAL(got.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(got.out, "\"path\" : \"<memory>\""));
    run_clear(&got);

    fuseplan_model other = {"not-an-argument", "garbage", 7};
    got = run((const char *[]){"info", "models/eps_story.onnx", NULL}, &other);
    CU_ASSERT_EQUAL(got.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(got.out, "eps_story"));
    run_clear(&got);
}

/* Bad input: the executable's one line and status, nothing on standard output; in memory too. */
static void test_bad_input(void)
{
    static const char *const cmds[][6] = {
        {"report", "models/no-such.onnx", NULL},
        {"report", "--device", "nowhere", "models/resnet_tiny.onnx", NULL},
        {"explain", "--dim", "nosuch=3", "models/resnet_tiny.onnx", NULL},
        {"memory", "--strategy", "magic", "models/resnet_tiny.onnx", NULL},
        {"frobnicate", "models/resnet_tiny.onnx", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        tu_run_result want = cli(cmds[i]);
        run_result got = run(cmds[i], NULL);
        CU_ASSERT_EQUAL(want.status, 2);
        CU_ASSERT_EQUAL(got.rc, 2);
        CU_ASSERT_STRING_EQUAL(got.out, "");
        if (i < G_N_ELEMENTS(cmds) - 1) /* the library lists the commands it runs */
            CU_ASSERT_STRING_EQUAL(got.msg, want.err);
        CU_ASSERT_EQUAL(tu_lines(got.msg), 1);
        run_clear(&got);
        tu_run_clear(&want);
    }
    fuseplan_model junk = {"junk.onnx", "\x08\x07garbage", 9};
    run_result got = run((const char *[]){"report", "junk.onnx", NULL}, &junk);
    CU_ASSERT_EQUAL(got.rc, 2);
    CU_ASSERT(g_str_has_prefix(got.msg, "fuseplan: junk.onnx: "));
    run_clear(&got);
    fuseplan_model gz = {"m.onnx.gz", "\x1f\x8b\x08\x00", 4};
    got = run((const char *[]){"report", "m.onnx.gz", NULL}, &gz);
    CU_ASSERT_EQUAL(got.rc, 2);
    CU_ASSERT_STRING_EQUAL(got.msg, "fuseplan: m.onnx.gz: gzip-compressed bytes: give them decompressed\n");
    run_clear(&got);
}

/* What the library does not run: calibrate and the formats module's commands, --help (GOption
 * would exit the process), no command, a NULL argument. */
static void test_refused(void)
{
    static const char *const cmds[][3] = {{"calibrate", NULL}, {"fit", "x.json", NULL}, {"report", "--help", NULL}};
    static const char *const want[] = {"no library command 'calibrate'", "no library command 'fit'",
                                       "Unknown option --help"};
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        run_result got = run(cmds[i], NULL);
        CU_ASSERT_EQUAL(got.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(got.msg, want[i]));
        run_clear(&got);
    }
    char *out = NULL, *msg = NULL;
    CU_ASSERT_EQUAL(fuseplan_run(0, NULL, NULL, &out, NULL, &msg), 2);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no command"));
    fuseplan_free(out);
    fuseplan_free(msg);
    const char *holey[] = {"report", NULL, "models/resnet_tiny.onnx"};
    CU_ASSERT_EQUAL(fuseplan_run(3, holey, NULL, &out, NULL, &msg), 2);
    CU_ASSERT_STRING_EQUAL(msg, "fuseplan: report: argument 1 is NULL\n");
    fuseplan_free(out);
    fuseplan_free(msg);
    CU_ASSERT_STRING_EQUAL(fuseplan_version(), FP_VERSION);
}

/* With the process's standard output a terminal, what the library returns has no ANSI colour: it
 * goes to a string, not to the terminal (report, diff and gate colour only a terminal). */
static void test_no_color_on_a_terminal(void)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        fprintf(stderr, "\n  SKIPPED: no pseudo-terminal here");
        if (master >= 0)
            close(master);
        return;
    }
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY), saved = dup(STDOUT_FILENO);
    CU_ASSERT_FATAL(slave >= 0 && saved >= 0);
    fflush(stdout);
    CU_ASSERT_FATAL(dup2(slave, STDOUT_FILENO) == STDOUT_FILENO);
    bool tty = isatty(STDOUT_FILENO);
    run_result got = run((const char *[]){"gate", "--policy", FP_SOURCE_DIR "/tests/data/policies/strict.ini",
                                          FP_SOURCE_DIR "/models/eps_story.onnx", NULL},
                         NULL);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(slave);
    close(master);
    CU_ASSERT(tty);
    CU_ASSERT_EQUAL(got.rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(got.out, "FAIL"));
    CU_ASSERT_PTR_NULL(strchr(got.out, '\033'));
    run_clear(&got);
}

/* Two threads, each analysing its own model (one from memory) and a bad input in turn, many times:
 * every result is the one a single call gives. */
typedef struct {
    const char *const *args;
    const fuseplan_model *model;
    const char *want_out, *want_msg;
    int want_rc;
    int mismatches;
} worker;

static gpointer work(gpointer data)
{
    worker *w = data;
    for (int i = 0; i < 12; i++) {
        run_result r = run(w->args, w->model);
        w->mismatches += r.rc != w->want_rc || strcmp(r.out, w->want_out) != 0 || strcmp(r.msg, w->want_msg) != 0;
        run_clear(&r);
    }
    return NULL;
}

static void test_threads(void)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents("models/transformer_block.onnx", &data, &len, NULL));
    fuseplan_model m = {"block.onnx", data, len};
    const char *a1[] = {"report", "-f", "json", "models/resnet_tiny.onnx", NULL};
    const char *a2[] = {"explain", "-f", "json", "block.onnx", NULL};
    const char *a3[] = {"report", "--input", "input:1x3", "models/eps_story.onnx", NULL};
    worker w[3] = {{a1, NULL, NULL, NULL, 0, 0}, {a2, &m, NULL, NULL, 0, 0}, {a3, NULL, NULL, NULL, 0, 0}};
    run_result once[3];
    for (int i = 0; i < 3; i++) {
        once[i] = run(w[i].args, w[i].model);
        w[i].want_out = once[i].out;
        w[i].want_msg = once[i].msg;
        w[i].want_rc = once[i].rc;
    }
    CU_ASSERT_EQUAL(once[2].rc, 2);
    GThread *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = g_thread_new("lib", work, &w[i]);
    for (int i = 0; i < 3; i++) {
        g_thread_join(t[i]);
        CU_ASSERT_EQUAL(w[i].mismatches, 0);
        run_clear(&once[i]);
    }
}

FP_TEST_SUITE(register_lib)
{
    CU_pSuite s = CU_add_suite("lib", NULL, NULL);
    CU_add_test(s, "same_as_cli", test_same_as_cli);
    CU_add_test(s, "memory_model", test_memory_model);
    CU_add_test(s, "bad_input", test_bad_input);
    CU_add_test(s, "refused", test_refused);
    CU_add_test(s, "no_color_on_a_terminal", test_no_color_on_a_terminal);
    CU_add_test(s, "threads", test_threads);
}
