/* test_invariants.c - every command sees the same graph. With the same bindings, the analyses the
 * commands run (shapes and memory: stopped after shapes; explain: after fusion; report, gate, diff
 * and headroom: every pass, the graph before fusion kept; train: after shapes, with its cost, a
 * decoder's tokens bound as a full sequence, compared with a prefill's) agree
 * on how many values have unknown sizes, on the warning that names them and on every value's byte
 * size, over every model the tests reach: the samples, Debian's libonnx-testdata with the reference
 * inputs' shapes bound (as --input specs), and bench's generated models when present. Through the C
 * library the commands themselves print the same warning line. */
#include <CUnit/CUnit.h>
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/training.h"
#include "frontends/load.h"
#include "frontends/onnx/onnx.h"
#include "lib/fuseplan.h"
#include "tutil.h"

#define TESTDATA_DIR "/usr/share/libonnx-testdata/data"
#define BENCH_OUT FP_SOURCE_DIR "/bench/out"
#define BENCH_MAX_BYTES ((goffset)64 << 20) /* bench models larger than this are left to make bench */

enum { SIZE_UNKNOWN = -1, SIZE_NONE = -2 };

/* Every value's byte size, graph by graph in model order: the bytes, SIZE_UNKNOWN, or SIZE_NONE for
 * what holds no tensor of a sized type (a sequence, a string). With `like` (the same file, loaded
 * again), of each graph as many values as like's graph of that index has: the model as loaded,
 * without the values m's passes appended (report's original has the runtime's Casts). */
static GArray *value_sizes(const fp_model *m, const fp_model *like)
{
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(int64_t));
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        guint n = like && gi < like->graphs->len ? ((const fp_graph *)like->graphs->pdata[gi])->values->len : 0;
        for (guint i = 0; i < (like ? MIN(n, g->values->len) : g->values->len); i++) {
            const fp_value *v = g->values->pdata[i];
            uint64_t numel = 0, bytes = 0, one = 0;
            int64_t s = SIZE_NONE;
            if (v->type != FP_TYPE_SEQUENCE && v->type != FP_TYPE_MAP && v->dtype != FP_DT_STRING &&
                (fp_dtype_bytes(v->dtype, 1, &one) || v->dtype == FP_DT_UNDEFINED))
                s = fp_shape_numel(&v->shape, &numel) && fp_dtype_bytes(v->dtype, numel, &bytes) ? (int64_t)bytes
                                                                                                 : SIZE_UNKNOWN;
            g_array_append_val(sizes, s);
        }
    }
    return sizes;
}

/* Whether a and b hold the same sizes; else prints the first difference, naming the value. */
static bool same_sizes(const char *path, const char *what, const GArray *a, const GArray *b, const fp_model *m)
{
    if (a->len != b->len) {
        fprintf(stderr, "\n  %s: %s: %u values, shapes has %u", path, what, b->len, a->len);
        return false;
    }
    for (guint i = 0; i < a->len; i++) {
        if (g_array_index(a, int64_t, i) == g_array_index(b, int64_t, i))
            continue;
        const fp_value *v = NULL;
        for (guint gi = 0, base = 0; gi < m->graphs->len && !v; gi++) {
            const fp_graph *g = m->graphs->pdata[gi];
            v = i < base + g->values->len ? g->values->pdata[i - base] : NULL;
            base += g->values->len;
        }
        fprintf(stderr, "\n  %s: value '%s': %s gives %" G_GINT64_FORMAT " bytes, shapes %" G_GINT64_FORMAT, path,
                v ? v->name : "?", what, g_array_index(b, int64_t, i), g_array_index(a, int64_t, i));
        return false;
    }
    return true;
}

/* The libonnx-testdata models whose sizes stay unknown with every input's shape bound: they read a
 * size from an input's contents (a window's length; a Loop's iteration), which no option binds. */
static const char *const data_dependent[] = {
    "node/test_blackmanwindow_expanded",
    "node/test_blackmanwindow_symmetric_expanded",
    "node/test_hammingwindow_expanded",
    "node/test_hammingwindow_symmetric_expanded",
    "node/test_hannwindow_expanded",
    "node/test_hannwindow_symmetric_expanded",
    "node/test_loop11",
};

typedef struct {
    uint32_t models, unknown, bound_unknown; /* models checked; with unknown sizes; of those, fully bound */
    GString *bound_why;                      /* the fully bound models' warnings */
} tally;

/* The analyses of the commands on path with the bindings of base, compared; false (printed) when
 * they disagree. *unknown: the values of unknown size; *note: the warning (g_free). */
static bool check_model(const char *path, const fp_analysis_opts *base, uint32_t *unknown, char **note)
{
    fp_memory_opts plan = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_COMPARE, .every_strategy = true};
    fp_analysis_opts shapes = *base, memory = *base, explain = *base, report = *base;
    shapes.stop = memory.stop = FP_PIPELINE_SHAPES;
    memory.plan = &plan;
    explain.stop = FP_PIPELINE_FUSION;
    report.original = true;
    fp_training_opts train = {.analysis = *base, .optimizer = FP_OPT_ADAM};
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL, e5 = NULL;
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &shapes, &e1);
    g_autoptr(fp_analysis) b = fp_analysis_run(path, &memory, &e2);
    g_autoptr(fp_analysis) c = fp_analysis_run(path, &explain, &e3);
    g_autoptr(fp_analysis) d = fp_analysis_run(path, &report, &e4);
    g_autoptr(fp_training) t = fp_training_run(path, &train, &e5);
    if (!a || !b || !c || !d || !t) { /* refused: by every command, with one message */
        const char *m1 = e1 ? e1->message : "", *msgs[] = {e2 ? e2->message : "", e3 ? e3->message : "",
                                                           e4 ? e4->message : "", e5 ? e5->message : ""};
        bool same = !a && !b && !c && !d && !t;
        for (size_t i = 0; same && i < G_N_ELEMENTS(msgs); i++)
            same = strcmp(m1, msgs[i]) == 0;
        if (!same)
            fprintf(stderr, "\n  %s: refused by some commands only: '%s' / '%s' / '%s' / '%s' / '%s'", path, m1,
                    msgs[0], msgs[1], msgs[2], msgs[3]);
        *unknown = 0;
        return same;
    }
    /* train binds a decoder's tokens as a full sequence: as a prefill does */
    fp_analysis_opts prefill = shapes;
    prefill.phase = "prefill";
    g_autoptr(GError) e6 = NULL;
    g_autoptr(fp_analysis) p = a->kv ? fp_analysis_run(path, &prefill, &e6) : NULL;
    const fp_analysis *ta = p ? p : a;
    uint32_t n = a->res.unknown_values;
    bool ok = b->res.unknown_values == n && c->res.unknown_values == n && d->res.unknown_values == n &&
              t->a->res.unknown_values == ta->res.unknown_values;
    if (!ok)
        fprintf(stderr, "\n  %s: values of unknown size: shapes %u, memory %u, explain %u, report %u, train %u", path,
                n, b->res.unknown_values, c->res.unknown_values, d->res.unknown_values, t->a->res.unknown_values);
    const char *notes[] = {b->unknown_note, c->unknown_note, d->unknown_note};
    ok = ok && g_strcmp0(ta->unknown_note, t->a->unknown_note) == 0;
    for (size_t i = 0; ok && i < G_N_ELEMENTS(notes); i++)
        if (g_strcmp0(a->unknown_note, notes[i]) != 0) {
            fprintf(stderr, "\n  %s: warnings differ: '%s' / '%s'", path, a->unknown_note, notes[i]);
            ok = false;
        }
    g_autoptr(GArray) sa = value_sizes(a->model, NULL), sb = value_sizes(b->model, NULL),
                      sd = value_sizes(d->original, a->model), st = value_sizes(t->a->model, NULL),
                      sp = value_sizes(ta->model, NULL);
    ok = ok && same_sizes(path, "memory", sa, sb, a->model) && same_sizes(path, "report", sa, sd, a->model) &&
         same_sizes(path, "train", sp, st, ta->model);
    *unknown = n;
    *note = g_strdup(a->unknown_note);
    return ok;
}

/* The --input specs of the reference inputs of a libonnx-testdata model (NULL-terminated, g_strfreev;
 * NULL when an input has no reference). */
static char **reference_specs(const char *dir, const fp_model *m)
{
    GPtrArray *specs = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        g_autofree char *file = g_strdup_printf("%s/test_data_set_0/input_%u.pb", dir, i);
        fp_tensor *t = v->type == FP_TYPE_TENSOR && g_file_test(file, G_FILE_TEST_EXISTS)
                           ? fp_onnx_load_tensor((fp_model *)m, file, NULL, NULL)
                           : NULL;
        if (!t || strchr(v->name, ':')) {
            g_ptr_array_free(specs, TRUE);
            return NULL;
        }
        GString *s = g_string_new(v->name);
        g_string_append_c(s, ':');
        for (int32_t k = 0; k < t->shape.rank; k++)
            g_string_append_printf(s, "%s%" G_GINT64_FORMAT, k ? "x" : "", t->shape.dims[k].value);
        g_ptr_array_add(specs, g_string_free(s, FALSE));
    }
    g_ptr_array_add(specs, NULL);
    return (char **)g_ptr_array_free(specs, FALSE);
}

/* One model checked, as given and, when specs, with them bound; counted into *t. */
static void check_one(const char *path, char **specs, tally *t)
{
    fp_analysis_opts base = {.what_if = FP_DT_UNDEFINED};
    uint32_t unknown = 0;
    g_autofree char *note = NULL, *bound_note = NULL;
    CU_ASSERT(check_model(path, &base, &unknown, &note));
    t->models++;
    t->unknown += unknown > 0;
    if (!specs)
        return;
    base.inputs = specs;
    CU_ASSERT(check_model(path, &base, &unknown, &bound_note));
    if (!unknown)
        return;
    t->bound_unknown++;
    g_string_append_printf(t->bound_why, "\n    %s", bound_note);
    bool listed = false;
    for (size_t i = 0; i < G_N_ELEMENTS(data_dependent); i++)
        listed |= strstr(path, data_dependent[i]) && g_str_has_suffix(path, "/model.onnx") &&
                  strlen(strstr(path, data_dependent[i])) == strlen(data_dependent[i]) + strlen("/model.onnx");
    if (!listed)
        fprintf(stderr, "\n  %s: fully bound, yet: %s", path, bound_note);
    CU_ASSERT(listed); /* else a shape rule is missing: the warning names the value and its op */
}

/* The committed samples, with no option and with the batch bound to 2. */
static void test_samples(void)
{
    tally t = {.bound_why = g_string_new(NULL)};
    g_autoptr(GDir) d = g_dir_open(FP_SOURCE_DIR "/models", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (const char *name; (name = g_dir_read_name(d));) {
        if (!g_str_has_suffix(name, ".onnx"))
            continue;
        g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "models", name, NULL);
        check_one(path, NULL, &t);
        fp_analysis_opts two = {.batch = 2, .what_if = FP_DT_UNDEFINED};
        uint32_t unknown;
        g_autofree char *note = NULL;
        CU_ASSERT(check_model(path, &two, &unknown, &note));
    }
    CU_ASSERT(t.models >= 10);
    g_string_free(t.bound_why, TRUE);
}

/* Debian's libonnx-testdata: each model as given and with its reference inputs bound. */
static void test_testdata(void)
{
    tally t = {.bound_why = g_string_new(NULL)};
    const char *subs[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    for (size_t s = 0; s < G_N_ELEMENTS(subs); s++) {
        g_autofree char *root = g_build_filename(TESTDATA_DIR, subs[s], NULL);
        g_autoptr(GDir) d = g_dir_open(root, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        for (const char *name; (name = g_dir_read_name(d));) {
            g_autofree char *dir = g_build_filename(root, name, NULL);
            g_autofree char *path = g_build_filename(dir, "model.onnx", NULL);
            g_autoptr(fp_model) m = fp_load_model(path, NULL);
            if (!m)
                continue; /* the testdata suite checks which models import */
            g_auto(GStrv) specs = reference_specs(dir, m);
            check_one(path, specs, &t);
        }
    }
    printf("\n  libonnx-testdata: %u models, %u with values of unknown size as given, %u with their inputs bound%s",
           t.models, t.unknown, t.bound_unknown, t.bound_why->str);
    CU_ASSERT(t.models > 1000);
    CU_ASSERT_EQUAL(t.bound_unknown, G_N_ELEMENTS(data_dependent));
    g_string_free(t.bound_why, TRUE);
}

/* bench/out's models when `make bench` made them (none in a clean clone: nothing to check). */
static void test_bench_models(void)
{
    tally t = {.bound_why = g_string_new(NULL)};
    g_autoptr(GDir) d = g_dir_open(BENCH_OUT, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        g_autofree char *path = g_build_filename(BENCH_OUT, name, NULL);
        GStatBuf st;
        if (g_str_has_suffix(name, ".onnx") && g_stat(path, &st) == 0 && st.st_size <= BENCH_MAX_BYTES)
            check_one(path, NULL, &t);
    }
    printf("\n  bench/out: %u models checked%s", t.models, d ? "" : " (none made: run make bench)");
    g_string_free(t.bound_why, TRUE);
}

/* The lines of one command run through the library that warn of values of unknown size. */
static char *warnings_of(const char *const *args)
{
    int argc = 0;
    while (args[argc])
        argc++;
    char *out = NULL, *msg = NULL;
    size_t len = 0;
    int rc = fuseplan_run(argc, args, NULL, &out, &len, &msg);
    CU_ASSERT(rc == 0 || strcmp(args[0], "headroom") == 0); /* no headroom without sizes at batch 1 */
    GString *w = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(msg ? msg : "", "\n", -1);
    for (char **l = lines; *l; l++)
        if (strstr(*l, " of unknown size, counted as 0 bytes"))
            g_string_append_printf(w, "%s\n", *l);
    fuseplan_free(out);
    fuseplan_free(msg);
    return g_string_free(w, FALSE);
}

/* The first integer member `member` of a command's JSON document through the library; -1 when it
 * has none. */
static int64_t int_in_json(const char *const *args, const char *member)
{
    int argc = 0;
    while (args[argc])
        argc++;
    char *out = NULL, *msg = NULL;
    size_t len = 0;
    fuseplan_run(argc, args, NULL, &out, &len, &msg);
    g_autofree char *key = g_strdup_printf("\"%s\" : ", member);
    const char *at = out ? strstr(out, key) : NULL;
    int64_t n = at ? g_ascii_strtoll(at + strlen(key), NULL, 10) : -1;
    fuseplan_free(out);
    fuseplan_free(msg);
    return n;
}

/* The commands themselves, through the library, on models with and without values of unknown
 * size: the same warning line from each, and the same count in each JSON document. */
static void test_commands_warn_alike(void)
{
    const char *models[] = {"models/transformer_block.onnx", "models/vit_tiny.onnx", "models/resnet_tiny.onnx"};
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        const char *m = models[i];
        const char *const cmds[][7] = {
            {"shapes", m, NULL},
            {"memory", m, NULL},
            {"explain", m, NULL},
            {"report", m, NULL},
            {"train", "--no-headroom", m, NULL},
            {"headroom", "--device", "h100", m, NULL},
        };
        g_autofree char *first = warnings_of(cmds[0]);
        CU_ASSERT_EQUAL(*first != 0, i == 0); /* transformer_block's sequence is left symbolic */
        const char *const json[][8] = {
            {"shapes", "-f", "json", m, NULL},
            {"memory", "-f", "json", m, NULL},
            {"report", "-f", "json", m, NULL},
            {"train", "--no-headroom", "-f", "json", m, NULL},
            {"headroom", "--device", "h100", "-f", "json", m, NULL},
        };
        int64_t n = int_in_json(json[0], "unknown_values");
        CU_ASSERT_EQUAL(n > 0, i == 0);
        for (size_t c = 1; c < G_N_ELEMENTS(json) - (i == 0); c++) { /* no headroom without sizes at batch 1 */
            int64_t k = int_in_json(json[c], "unknown_values");
            if (k != n)
                fprintf(stderr, "\n  %s: %s -f json: unknown_values %" G_GINT64_FORMAT ", shapes %" G_GINT64_FORMAT, m,
                        json[c][0], k, n);
            CU_ASSERT_EQUAL(k, n);
        }
        /* the memory object of report (the final graph's plan) and of memory (the model as exported) */
        CU_ASSERT_EQUAL(int_in_json(json[1], "unknown_size_values"), n);
        CU_ASSERT_EQUAL(int_in_json(json[2], "unknown_size_values"), n);
        for (size_t c = 1; c < G_N_ELEMENTS(cmds); c++) {
            g_autofree char *w = warnings_of(cmds[c]);
            if (strcmp(w, first) != 0)
                fprintf(stderr, "\n  %s: %s warns '%s', shapes '%s'", m, cmds[c][0], w, first);
            CU_ASSERT_STRING_EQUAL(w, first);
        }
    }
}

FP_TEST_SUITE(register_invariants)
{
    CU_pSuite s = CU_add_suite("invariants", NULL, NULL);
    CU_add_test(s, "samples", test_samples);
    CU_add_test(s, "testdata", test_testdata);
    CU_add_test(s, "bench_models", test_bench_models);
    CU_add_test(s, "commands_warn_alike", test_commands_warn_alike);
}
