/* test_openmetrics.c - `report -f openmetrics` and `gate -f openmetrics`: golden documents of the
 * sample models on the round-number profile, every document through `promtool check metrics` (when
 * Prometheus' promtool is installed) and through a line-by-line parser of the OpenMetrics rules
 * fuseplan relies on (descriptors before samples, contiguous families, units as name suffixes,
 * escaped label values, unique label sets, "# EOF" last), label escaping of an odd model path,
 * -o FILE, the gate's exit codes with the metrics written, and the one-line error of a command
 * without the format. */
#include <glib/gstdio.h>
#include <string.h>

#include "reports/openmetrics.h"
#include "tutil.h"

#define ROUND "tests/data/devices/round.ini"

/* ---------------------------------------------------------------- helpers */

/* Runs fuseplan from the source tree, asserts its exit status, returns its stdout (caller frees). */
static char *fuseplan(const char *const *args, int status)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    tu_run_result r = tu_run(args);
    if (r.status != status)
        fprintf(stderr, "\n  fuseplan %s %s: exit %d, expected %d: %s", args[0], args[1], r.status, status, r.err);
    CU_ASSERT_EQUAL(r.status, status);
    char *out = g_steal_pointer(&r.out);
    tu_run_clear(&r);
    return out ? out : g_strdup("");
}

/* A copy of resnet_tiny.onnx in a new temporary folder, under a name holding a double quote, a
 * backslash and a newline. Caller removes it and its folder. */
static char *odd_model(void)
{
    g_autofree char *dir = g_dir_make_tmp("fp-om-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &data, &len, NULL));
    char *path = g_build_filename(dir, "a\"b\\c\nd.onnx", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(path, data, (gssize)len, NULL));
    return path;
}

static void odd_model_remove(char *path)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
}

/* One document and the command that made it. */
typedef struct {
    const char *what;
    char *doc;
} om_doc;

static void om_doc_free(gpointer p)
{
    om_doc *d = p;
    g_free(d->doc);
    g_free(d);
}

static void add_doc(GPtrArray *docs, const char *what, const char *const *args, int status)
{
    om_doc *d = g_new0(om_doc, 1);
    d->what = what;
    d->doc = fuseplan(args, status);
    g_ptr_array_add(docs, d);
}

/* Every kind of document: a CNN without headroom, a decoder with its KV cache and headroom, a
 * failing gate, a passing gate, a gate with a check not evaluated (exit 2), an odd model path. */
static GPtrArray *documents(const char *odd)
{
    GPtrArray *docs = g_ptr_array_new_with_free_func(om_doc_free);
    add_doc(docs, "report resnet_tiny",
            (const char *[]){"report", "models/resnet_tiny.onnx", "--device", ROUND, "--no-headroom", "-f",
                             "openmetrics", NULL},
            0);
    add_doc(docs, "report decoder_tiny",
            (const char *[]){"report", "models/decoder_tiny.onnx", "--device", ROUND, "-f", "openmetrics", NULL}, 0);
    add_doc(docs, "gate strict",
            (const char *[]){"gate", "models/eps_story.onnx", "--policy", "tests/data/policies/strict.ini", "-f",
                             "openmetrics", NULL},
            1);
    add_doc(docs, "gate pass",
            (const char *[]){"gate", "models/eps_story.onnx", "--policy", "tests/data/policies/pass.ini", "-f",
                             "openmetrics", NULL},
            0);
    add_doc(docs, "gate not evaluated",
            (const char *[]){"gate", "models/eps_story.onnx", "--policy", "tests/data/policies/pass.ini",
                             "--input=input:1x3x32x32", "-f", "openmetrics", NULL},
            2);
    add_doc(docs, "report odd path",
            (const char *[]){"report", odd, "--device", ROUND, "--no-headroom", "-f", "openmetrics", NULL}, 0);
    return docs;
}

/* ---------------------------------------------------------------- a parser of the rules */

/* A metric or label name: [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no colon). */
static bool valid_name(const char *s, size_t n, bool colon)
{
    if (!n || g_ascii_isdigit(s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!g_ascii_isalnum(s[i]) && s[i] != '_' && !(colon && s[i] == ':'))
            return false;
    return true;
}

/* Reads {name="value",...} at *p (past the '{'), unescaping \\, \" and \n into labels; false on
 * anything else. */
static bool parse_labels(const char **p, GHashTable *labels)
{
    const char *s = *p;
    while (*s != '}') {
        const char *eq = strchr(s, '=');
        if (!eq || !valid_name(s, (size_t)(eq - s), false) || eq[1] != '"')
            return false;
        g_autofree char *name = g_strndup(s, (size_t)(eq - s));
        GString *v = g_string_new(NULL);
        for (s = eq + 2; *s && *s != '"'; s++) {
            if (*s == '\\') {
                s++;
                if (*s != '\\' && *s != '"' && *s != 'n') {
                    g_string_free(v, TRUE);
                    return false;
                }
                g_string_append_c(v, *s == 'n' ? '\n' : *s);
            } else {
                g_string_append_c(v, *s);
            }
        }
        if (*s != '"' || g_hash_table_contains(labels, name)) {
            g_string_free(v, TRUE);
            return false;
        }
        g_hash_table_insert(labels, g_steal_pointer(&name), g_string_free(v, FALSE));
        s++;
        if (*s == ',' && s[1] != '}')
            s++;
        else if (*s != '}')
            return false;
    }
    *p = s + 1;
    return true;
}

/* A number as OpenMetrics writes one: a decimal float or integer, NaN, +Inf, -Inf. */
static bool valid_number(const char *s)
{
    if (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf"))
        return true;
    char *end = NULL;
    g_ascii_strtod(s, &end);
    return *s && end && !*end && !strpbrk(s, "xXnNiI");
}

/* What the parse saw: family name -> samples, and the labels of the first sample. */
typedef struct {
    GHashTable *samples; /* char* -> count */
    GHashTable *first;   /* char* -> char*: label name -> value */
    bool ok;
} om_parsed;

static void parsed_clear(om_parsed *p)
{
    g_hash_table_unref(p->samples);
    g_hash_table_unref(p->first);
}

/* The descriptor line (after "# "): TYPE, UNIT or HELP of the current family. */
static bool parse_descriptor(const char *line, char **family, bool in_samples, GHashTable *typed)
{
    g_auto(GStrv) w = g_strsplit(line, " ", 3);
    if (!w[0] || !w[1] || !w[2])
        return false;
    if (!strcmp(w[0], "TYPE")) {
        if (g_hash_table_contains(typed, w[1]) || strcmp(w[2], "gauge") != 0 || !valid_name(w[1], strlen(w[1]), true))
            return false; /* a family described twice, not a gauge, or a bad name */
        g_hash_table_add(typed, g_strdup(w[1]));
        g_free(*family);
        *family = g_strdup(w[1]);
        return true;
    }
    if (!*family || strcmp(w[1], *family) != 0 || in_samples)
        return false; /* UNIT and HELP belong to the family just typed, before its samples */
    if (!strcmp(w[0], "UNIT")) {
        g_autofree char *suffix = g_strdup_printf("_%s", w[2]);
        return g_str_has_suffix(w[1], suffix);
    }
    return !strcmp(w[0], "HELP") && *w[2] && !strpbrk(w[2], "\\\"");
}

/* g_hash_table_foreach_steal: moves each label into the table `into`. */
static gboolean move_label(gpointer key, gpointer value, gpointer into)
{
    g_hash_table_insert(into, key, value);
    return TRUE;
}

/* One sample line of `family`: its name is the family's, labels model, device and target are
 * there, the label set is new, the value a number. */
static bool parse_sample(const char *line, const char *family, GHashTable *seen, om_parsed *out)
{
    const char *brace = strchr(line, '{');
    if (!family || !brace || (size_t)(brace - line) != strlen(family) || strncmp(line, family, strlen(family)) != 0)
        return false;
    const char *p = brace + 1;
    g_autoptr(GHashTable) labels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    if (!parse_labels(&p, labels) || *p != ' ' || !valid_number(p + 1))
        return false;
    if (!g_hash_table_contains(labels, "model") || !g_hash_table_contains(labels, "device") ||
        !g_hash_table_contains(labels, "target"))
        return false;
    g_autofree char *key = g_strndup(line, (size_t)(p - line));
    if (g_hash_table_contains(seen, key))
        return false;
    g_hash_table_add(seen, g_steal_pointer(&key));
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(out->samples, family));
    g_hash_table_insert(out->samples, g_strdup(family), GUINT_TO_POINTER(n + 1));
    if (!g_hash_table_size(out->first))
        g_hash_table_foreach_steal(labels, move_label, out->first);
    return true;
}

/* Parses doc line by line; p->ok false at the first broken rule, printed with `what` unless it is
 * NULL. */
static om_parsed parse(const char *doc, const char *what)
{
    om_parsed p = {g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                   g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free), false};
    g_autoptr(GHashTable) typed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_auto(GStrv) lines = g_strsplit(doc, "\n", -1);
    guint n = g_strv_length(lines);
    g_autofree char *family = NULL;
    bool in_samples = false, ok = n >= 2 && !*lines[n - 1] && !strcmp(lines[n - 2], "# EOF");
    for (guint i = 0; ok && i + 2 < n; i++) {
        const char *l = lines[i];
        if (g_str_has_prefix(l, "# ")) {
            bool type = g_str_has_prefix(l, "# TYPE ");
            ok = parse_descriptor(l + 2, &family, in_samples && !type, typed);
            in_samples = in_samples && !type;
        } else {
            ok = parse_sample(l, family, seen, &p);
            in_samples = true;
        }
        if (!ok && what)
            fprintf(stderr, "\n  %s: line %u breaks a rule: %s", what, i + 1, l);
    }
    if (!ok && what && n >= 2 && strcmp(lines[n - 2], "# EOF") != 0)
        fprintf(stderr, "\n  %s: does not end with # EOF and a newline", what);
    p.ok = ok;
    return p;
}

/* ---------------------------------------------------------------- tests */

static void test_escape(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"models/resnet_tiny.onnx", "models/resnet_tiny.onnx"},
        {"a\"b\\c\nd", "a\\\"b\\\\c\\nd"},
        {"tab\there", "tab\there"},
        {"\xff"
         "x",
         "\xef\xbf\xbd"
         "x"}, /* invalid UTF-8: U+FFFD */
        {"", ""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *e = fp_openmetrics_escape(cases[i].in);
        CU_ASSERT_STRING_EQUAL(e, cases[i].out);
    }
    g_autofree char *null = fp_openmetrics_escape(NULL);
    CU_ASSERT_STRING_EQUAL(null, "");
}

static void test_report_golden(void)
{
    tu_golden((const char *[]){"report", "models/resnet_tiny.onnx", "--device", ROUND, "--no-headroom", "-f",
                               "openmetrics", NULL},
              "report_resnet_tiny_round.openmetrics");
}

/* A decoder: the KV cache's family and the headroom's are there. */
static void test_decoder_golden(void)
{
    tu_golden((const char *[]){"report", "models/decoder_tiny.onnx", "--device", ROUND, "-f", "openmetrics", NULL},
              "report_decoder_tiny_round.openmetrics");
}

/* A failing gate: exit 1 and the metrics written, to stdout and with -o to a file alike. */
static void test_gate_golden(void)
{
    g_autofree char *out = fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy",
                                                     "tests/data/policies/strict.ini", "-f", "openmetrics", NULL},
                                    1);
    tu_golden_text(out, "gate_eps_story_strict.openmetrics");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nfuseplan_gate_passed{"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "check=\"forbid_unfused.ge_conv_bn\"} 0\n"));
    g_autofree char *file = tu_write_temp("", 0, ".om");
    g_autofree char *none = fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy",
                                                      "tests/data/policies/strict.ini", "-f", "openmetrics", "-o", file,
                                                      NULL},
                                     1);
    CU_ASSERT_STRING_EQUAL(none, "");
    g_autofree char *written = NULL;
    CU_ASSERT(g_file_get_contents(file, &written, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(written, out);
    g_unlink(file);
}

/* report -o FILE writes what stdout gets. */
static void test_report_output_file(void)
{
    const char *base[] = {"report", "models/resnet_tiny.onnx", "--device", ROUND, "--no-headroom", "-f", "openmetrics",
                          NULL};
    g_autofree char *out = fuseplan(base, 0);
    g_autofree char *file = tu_write_temp("", 0, ".om");
    const char *to_file[] = {
        "report", "models/resnet_tiny.onnx", "--device", ROUND, "--no-headroom", "-f", "openmetrics", "-o", file, NULL};
    g_autofree char *none = fuseplan(to_file, 0);
    CU_ASSERT_STRING_EQUAL(none, "");
    g_autofree char *written = NULL;
    CU_ASSERT(g_file_get_contents(file, &written, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(written, out);
    g_unlink(file);
}

/* Each family where it belongs: the KV cache and headroom only when they exist; the gate's per
 * check, a check not evaluated without a measured value. */
static void test_families(void)
{
    char *odd = odd_model();
    g_autoptr(GPtrArray) docs = documents(odd);
    static const struct {
        guint doc;
        const char *family;
        guint samples;
    } want[] = {
        {0, "fuseplan_ops", 3},
        {0, "fuseplan_activation_bytes", 3},
        {0, "fuseplan_estimated_latency_seconds", 3},
        {0, "fuseplan_memory_arena_bytes", 1},
        {0, "fuseplan_kv_cache_bytes", 0},
        {0, "fuseplan_headroom_max_batch", 0},
        {1, "fuseplan_kv_cache_bytes", 1},
        {1, "fuseplan_headroom_max_batch", 1},
        {2, "fuseplan_gate_passed", 1},
        {2, "fuseplan_gate_check_passed", 3},
        {2, "fuseplan_gate_check_value", 3},
        {3, "fuseplan_gate_check_limit", 7},
        {4, "fuseplan_gate_check_evaluated", 7},
        {4, "fuseplan_gate_check_value", 6},
        {4, "fuseplan_gate_passed", 1},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        const om_doc *d = docs->pdata[want[i].doc];
        om_parsed p = parse(d->doc, d->what);
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(p.samples, want[i].family));
        if (n != want[i].samples)
            fprintf(stderr, "\n  %s: %u samples of %s, expected %u", d->what, n, want[i].family, want[i].samples);
        CU_ASSERT_EQUAL(n, want[i].samples);
        parsed_clear(&p);
    }
    const om_doc *pass = docs->pdata[3];
    CU_ASSERT_PTR_NOT_NULL(strstr(pass->doc, "policy=\"tests/data/policies/pass.ini\"} 1\n"));
    odd_model_remove(odd);
}

/* Every document follows the rules; the odd path comes back from its escaped label intact. */
static void test_structure(void)
{
    char *odd = odd_model();
    g_autoptr(GPtrArray) docs = documents(odd);
    for (guint i = 0; i < docs->len; i++) {
        const om_doc *d = docs->pdata[i];
        om_parsed p = parse(d->doc, d->what);
        CU_ASSERT(p.ok);
        CU_ASSERT(g_hash_table_size(p.samples) > 0);
        if (i == docs->len - 1) {
            CU_ASSERT_STRING_EQUAL(g_hash_table_lookup(p.first, "model"), odd);
            CU_ASSERT_PTR_NOT_NULL(strstr(d->doc, "a\\\"b\\\\c\\nd.onnx\""));
        }
        parsed_clear(&p);
    }
    odd_model_remove(odd);
}

/* promtool (Debian's prometheus) reads the document on stdin (sh redirects it from a temporary
 * file); true when it exits 0 and prints nothing (a lint finding exits 3 with a line). What it
 * printed in *msg (caller frees). */
static bool promtool_ok(const char *promtool, const char *doc, char **msg)
{
    g_autofree char *file = tu_write_temp(doc, strlen(doc), ".om");
    const char *argv[] = {"/bin/sh", "-c", "exec \"$0\" check metrics < \"$1\"", promtool, file, NULL};
    int status = -1;
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    g_unlink(file);
    *msg = g_strconcat(out ? out : "", err ? err : "", NULL);
    return g_spawn_check_wait_status(status, NULL) && !**msg;
}

static void test_promtool(void)
{
    g_autofree char *promtool = g_find_program_in_path("promtool");
    if (!promtool) {
        fprintf(stderr, "\n  SKIPPED: promtool is not installed (Debian package prometheus): the OpenMetrics "
                        "documents were not checked with it");
        CU_PASS("promtool test skipped (no promtool)");
        return;
    }
    char *odd = odd_model();
    g_autoptr(GPtrArray) docs = documents(odd);
    for (guint i = 0; i < docs->len; i++) {
        const om_doc *d = docs->pdata[i];
        g_autofree char *msg = NULL;
        bool ok = promtool_ok(promtool, d->doc, &msg);
        if (!ok)
            fprintf(stderr, "\n  promtool check metrics, %s: %s", d->what, msg ? msg : "");
        CU_ASSERT(ok);
    }
    odd_model_remove(odd);
}

/* The parser itself refuses what breaks a rule (so that the tests above can fail). */
static void test_parser_rejects(void)
{
#define L "{model=\"m\",device=\"d\",target=\"t\"}"
    static const char *const bad[] = {
        "fp_x" L " 1\n# EOF\n",                                                          /* a sample before its TYPE */
        "# TYPE fp_x gauge\nfp_x" L " 1\n",                                              /* no # EOF */
        "# TYPE fp_x gauge\nfp_x" L " 1\n# EOF",                                         /* no newline after # EOF */
        "# TYPE fp_x_bytes gauge\n# UNIT fp_x_bytes seconds\n# EOF\n",                   /* unit not the suffix */
        "# TYPE fp_x gauge\nfp_x" L " 1\n# HELP fp_x late\n# EOF\n",                     /* HELP after a sample */
        "# TYPE fp_x gauge\nfp_x" L " 1\nfp_x" L " 2\n# EOF\n",                          /* the same label set twice */
        "# TYPE fp_x gauge\nfp_x{model=\"a\\qb\",device=\"d\",target=\"t\"} 1\n# EOF\n", /* \q */
        "# TYPE fp_x gauge\nfp_x{stage=\"final\"} 1\n# EOF\n",                           /* no model label */
        "# TYPE fp_x gauge\nfp_x" L " 1,5\n# EOF\n",                                     /* a locale's comma */
        "# TYPE fp_x counter\nfp_x" L " 1\n# EOF\n",                                     /* not a gauge */
        "# TYPE fp_x gauge\n# TYPE fp_y gauge\nfp_x" L " 1\n# EOF\n",                    /* fp_x's sample after fp_y */
        "# TYPE fp_x gauge\nfp_x" L " 1\n# TYPE fp_x gauge\n# EOF\n",                    /* a family twice */
    };
#undef L
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        om_parsed p = parse(bad[i], NULL);
        if (p.ok)
            fprintf(stderr, "\n  broken document %zu parsed: %s", i, bad[i]);
        CU_ASSERT(!p.ok);
        parsed_clear(&p);
    }
    om_parsed good = parse("# TYPE fp_x_bytes gauge\n# UNIT fp_x_bytes bytes\n# HELP fp_x_bytes x\nfp_x_bytes"
                           "{model=\"a\\\\b\\\"c\\nd\",device=\"d\",target=\"t\"} 1.5e-05\n# EOF\n",
                           "good document");
    CU_ASSERT(good.ok);
    CU_ASSERT_STRING_EQUAL(g_hash_table_lookup(good.first, "model"), "a\\b\"c\nd");
    parsed_clear(&good);
}

/* A command without the format: the usual one line and exit 2. */
static void test_bad_format(void)
{
    const char *model = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    const char *commands[] = {"memory", "explain", "headroom", "shapes", "info", "train"};
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        g_autofree char *needle = g_strdup_printf("%s: unknown format 'openmetrics'", commands[i]);
        tu_expect_cli_error((const char *[]){commands[i], model, "-f", "openmetrics", NULL}, NULL, needle);
    }
    tu_expect_cli_error((const char *[]){"report", model, "-f", "prometheus", NULL}, NULL,
                        "unknown format 'prometheus' (one of: text,markdown,json,html,dot,openmetrics)");
    tu_expect_cli_error((const char *[]){"gate", model, "--policy", FP_SOURCE_DIR "/tests/data/policies/pass.ini", "-f",
                                         "junit", NULL},
                        NULL, "unknown format 'junit' (one of: text,json,openmetrics)");
}

FP_TEST_SUITE(register_openmetrics)
{
    CU_pSuite s = CU_add_suite("openmetrics", NULL, NULL);
    CU_add_test(s, "escape", test_escape);
    CU_add_test(s, "parser_rejects", test_parser_rejects);
    CU_add_test(s, "report_golden", test_report_golden);
    CU_add_test(s, "decoder_golden", test_decoder_golden);
    CU_add_test(s, "gate_golden", test_gate_golden);
    CU_add_test(s, "report_output_file", test_report_output_file);
    CU_add_test(s, "families", test_families);
    CU_add_test(s, "structure", test_structure);
    CU_add_test(s, "promtool", test_promtool);
    CU_add_test(s, "bad_format", test_bad_format);
}
