/* test_testdata.c - every model of Debian's libonnx-testdata imports and verifies. Prints the
 * tally. */
#include <string.h>

#include "frontends/load.h"
#include "tutil.h"

#define TESTDATA_DIR "/usr/share/libonnx-testdata/data"

/* Collects every `model.onnx` below dir (sorted). */
static void collect(const char *dir, GPtrArray *out)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR))
            collect(path, out);
        else if (strcmp(name, "model.onnx") == 0)
            g_ptr_array_add(out, g_strdup(path));
        g_free(path);
    }
    g_dir_close(d);
}

static int cmp_str(gconstpointer a, gconstpointer b) { return strcmp(*(char **)a, *(char **)b); }

static void test_all_models(void)
{
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    collect(TESTDATA_DIR, paths);
    g_ptr_array_sort(paths, cmp_str);
    CU_ASSERT_EQUAL(paths->len, 1072);
    unsigned ok = 0, failed = 0;
    uint64_t nodes = 0;
    for (guint i = 0; i < paths->len; i++) {
        const char *path = paths->pdata[i];
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_model) m = fp_load_model(path, &err);
        if (!m) {
            fprintf(stderr, "\n  %s: %s", path + strlen(TESTDATA_DIR) + 1, err->message);
            failed++;
            continue;
        }
        fp_model_stats st;
        fp_model_get_stats(m, &st);
        nodes += st.nodes;
        ok++;
    }
    printf("\n  libonnx-testdata: %u models, %u imported and verified (%" G_GUINT64_FORMAT " nodes), %u failed\n",
           paths->len, ok, nodes, failed);
    CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT_EQUAL(ok, 1072);
}

FP_TEST_SUITE(register_testdata)
{
    CU_pSuite s = CU_add_suite("testdata", NULL, NULL);
    CU_add_test(s, "all_models", test_all_models);
}
