/* test_compare.c - measured kernels matched to nodes (calibration/match.c): names, fused names, op type
 * and shapes; `fuseplan compare` on the committed ONNX Runtime profiles (full coverage, the stage
 * each optimization level ran, the fusions ORT made) and on profiles of another model (coverage
 * 0, exit 2); `fuseplan fit` recovering known efficiencies from synthetic measurements. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "devices/device.h"
#include "frontends/load.h"
#include "frontends/profile/profile.h"
#include "passes/cost.h"
#include "calibration/fit.h"
#include "calibration/match.h"
#include "tmodel.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "tutil.h"

#define PROFILES FP_SOURCE_DIR "/tests/data/profiles"
#define MODELS FP_SOURCE_DIR "/models"

enum { F32 = 1 };

/* ---------------------------------------------------------------- helpers */

/* Runs fuseplan with args; parses stdout as a JSON object (NULL when it is not one). */
static JsonObject *run_json(const char *const *args, tu_run_result *r, JsonParser **parser)
{
    *r = tu_run(args);
    *parser = json_parser_new();
    if (r->status != 0 || !json_parser_load_from_data(*parser, r->out, -1, NULL))
        return NULL;
    JsonNode *root = json_parser_get_root(*parser);
    return JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
}

static gint64 member_int(JsonObject *o, const char *group, const char *member)
{
    return json_object_get_int_member(json_object_get_object_member(o, group), member);
}

static double member_num(JsonObject *o, const char *group, const char *member)
{
    JsonNode *n = json_object_get_member(json_object_get_object_member(o, group), member);
    return JSON_NODE_HOLDS_NULL(n) ? NAN : json_node_get_double(n);
}

/* Counted kernels (not nested) and their time per run of a profile. */
static guint counted_kernels(const char *path, double *total_us)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = fp_profile_load(path, &err);
    CU_ASSERT_FATAL(p != NULL);
    guint n = 0;
    for (guint k = 0; k < p->kernels->len; k++)
        n += !(fp_profile_kernel(p, k)->flags & FP_PROF_K_NESTED);
    *total_us = p->total_us;
    return n;
}

/* conv1 (Conv) -> relu1 -> sig (Sigmoid) -> tanh_x (Tanh) -> Neg_4 -> abs_y (Abs), x 1x4x8x8; "Neg_4"
 * looks like a name a tool made up for an unnamed node. */
static fp_model *chain_model(char **path)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){8, 4, 3, 3});
    tb_node_t *c = tb_node(b, "Conv", "conv1", "x,w", "c");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    tb_node(b, "Relu", "relu1", "c", "r");
    tb_node(b, "Sigmoid", "sig", "r", "s");
    tb_node(b, "Tanh", "tanh_x", "s", "t");
    tb_node(b, "Neg", "Neg_4", "t", "n");
    tb_node(b, "Abs", "abs_y", "n", "y");
    tb_output(b, "y", F32, -1, NULL);
    *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_load_model(*path, &err);
    CU_ASSERT_FATAL(m != NULL);
    fp_shape_opts so = {0};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, &err));
    fp_pass_metrics(m, NULL);
    return m;
}

/* An ORT profile of one run: each "name|op|dims|us" entry becomes a kernel event; dims "" = no
 * tensors recorded, else "1x8x8x8" is its one output. */
static fp_profile *ort_profile(const char *const *kernels)
{
    GString *s = g_string_new("[{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":0,\"dur\":100000}");
    double ts = 10;
    for (const char *const *k = kernels; *k; k++) {
        g_auto(GStrv) f = g_strsplit(*k, "|", 4);
        GString *shape = g_string_new(NULL);
        if (*f[2]) {
            g_auto(GStrv) dims = g_strsplit(f[2], "x", -1);
            g_autofree char *list = g_strjoinv(",", dims);
            g_string_printf(shape, ",\"output_type_shape\":[{\"float\":[%s]}]", list);
        }
        g_string_append_printf(s,
                               ",{\"cat\":\"Node\",\"name\":\"%s_kernel_time\",\"ts\":%g,\"dur\":%s,"
                               "\"args\":{\"op_name\":\"%s\"%s}}",
                               f[0], ts, f[3], f[1], shape->str);
        g_string_free(shape, TRUE);
        ts += 1000;
    }
    g_string_append(s, "]");
    g_autoptr(GError) err = NULL;
    fp_profile *p = fp_profile_load_data("mem.json", s->str, s->len, &err);
    g_string_free(s, TRUE);
    CU_ASSERT_FATAL(p != NULL);
    return p;
}

/* ---------------------------------------------------------------- op classes */

/* A dilated MaxPool is class dilated_pool; a Reshape class view, no kernel, costing [launch] view
 * (0 on a profile without it); control flow expands to its own launch and its dearer branch. */
static void test_classes_and_bodies(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){1, 2, 32});
    tb_init_i64(b, "shape", 2, (int64_t[]){2, 32});
    tb_node_t *p = tb_node(b, "MaxPool", "pool", "x", "p");
    tb_attr_ints(b, p, "kernel_shape", 1, (int64_t[]){3});
    tb_attr_ints(b, p, "dilations", 1, (int64_t[]){2});
    tb_attr_ints(b, p, "pads", 2, (int64_t[]){2, 2});
    tb_node(b, "Reshape", "view", "p,shape", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    CU_ASSERT_FATAL(m != NULL);
    fp_shape_opts so = {0};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, &err));
    fp_pass_metrics(m, NULL);
    static const char ini[] = "[device]\ndescription=t\ntarget=ort-cpu\nbandwidth=1e11\nmemory_bytes=1e9\n"
                              "launch_overhead=1e-6\nalign_bytes=64\n[peak]\nfp32=1e12\n[launch]\nview=2e-6\n";
    g_autofree char *ipath = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(fp_device) d = fp_device_load(ipath, &err);
    g_autoptr(fp_device) plain = fp_device_load("cpu-avx2", NULL);
    CU_ASSERT_FATAL(d != NULL && plain != NULL);
    g_autoptr(fp_cost_result) c = fp_pass_cost(m, d, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(c->n_ops, 2);
    CU_ASSERT_EQUAL(c->ops[0].cls, FP_CLASS_DILATED_POOL);
    CU_ASSERT_EQUAL(c->ops[1].cls, FP_CLASS_VIEW);
    CU_ASSERT_FALSE(c->ops[1].kernel);
    CU_ASSERT_EQUAL(c->kernels, 1);
    CU_ASSERT_DOUBLE_EQUAL(c->ops[1].rl.time_s, 2e-6, 1e-15);
    g_autoptr(fp_cost_result) c0 = fp_pass_cost(m, plain, FP_DT_UNDEFINED, 0, NULL);
    CU_ASSERT_DOUBLE_EQUAL(c0->ops[1].rl.time_s, 0, 0);
    g_unlink(path);
    g_unlink(ipath);

    /* models/if_subgraph.onnx: Relu, then If (then: Neg, else: Abs) */
    g_autoptr(fp_model) mi = fp_load_model(MODELS "/if_subgraph.onnx", &err);
    CU_ASSERT_FATAL(mi != NULL);
    CU_ASSERT_FATAL(fp_pass_shapes(mi, &so, NULL, &err));
    fp_pass_metrics(mi, NULL);
    g_autoptr(fp_cost_result) ci = fp_pass_cost(mi, d, FP_DT_UNDEFINED, 0, NULL);
    const fp_op_cost *ifc = NULL;
    for (uint32_t i = 0; i < ci->n_ops; i++)
        if (ci->ops[i].node->op == FP_OP_IF)
            ifc = &ci->ops[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(ifc);
    g_autoptr(GArray) ks = g_array_new(FALSE, FALSE, sizeof(fp_kernel));
    CU_ASSERT_TRUE(fp_cost_control_kernels(ifc->node, d, ks, 16));
    CU_ASSERT_EQUAL_FATAL(ks->len, 2); /* the If's own launch, one branch's op */
    CU_ASSERT_EQUAL(g_array_index(ks, fp_kernel, 0).cls, FP_CLASS_OTHER);
    CU_ASSERT_EQUAL(g_array_index(ks, fp_kernel, 1).cls, FP_CLASS_EW);
    double sum = 0;
    for (guint i = 0; i < ks->len; i++)
        sum += fp_roofline_kernel(d, &g_array_index(ks, fp_kernel, i)).time_s;
    CU_ASSERT_DOUBLE_EQUAL(sum, ifc->rl.time_s, 1e-15);
    /* too many kernels: refused, nothing appended */
    CU_ASSERT_FALSE(fp_cost_control_kernels(ifc->node, d, ks, 3));
    CU_ASSERT_EQUAL(ks->len, 2);
}

/* ---------------------------------------------------------------- matching */

static void test_fused_names(void)
{
    g_autofree char *path = NULL;
    g_autoptr(fp_model) m = chain_model(&path);
    g_autoptr(fp_device) d = fp_device_load("cpu-avx2", NULL);
    CU_ASSERT_FATAL(d != NULL);
    g_autoptr(fp_cost_result) cost = fp_pass_cost(m, d, FP_DT_UNDEFINED, 0, NULL);
    g_autoptr(fp_profile) p = ort_profile((const char *const[]){"conv1_relu1|FusedConv||10", "sig + tanh_x|Fused||4",
                                                                "Neg_4_token_2|Neg||2", "abs_y/AbsFusion/|Abs||3",
                                                                "Cast_7|Cast||1", NULL});
    g_autoptr(fp_match_result) r = fp_match_run(m, cost, NULL, p, NULL);
    CU_ASSERT_EQUAL(r->counted, 5);
    CU_ASSERT_EQUAL(r->matched, 4);
    CU_ASSERT_EQUAL(r->by_how[FP_MATCH_FUSED_NAME], 4);
    CU_ASSERT_EQUAL(r->by_how[FP_MATCH_NAME], 0);
    CU_ASSERT_DOUBLE_EQUAL(r->measured_s, 20e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r->measured_matched_s, 19e-6, 1e-12);
    CU_ASSERT_EQUAL(r->rows->len, 4);
    CU_ASSERT_EQUAL(r->stats.rows, 4);
    CU_ASSERT_EQUAL(r->absorbed, 0);
    CU_ASSERT_EQUAL(r->unmeasured, 0);
    /* "conv1_relu1" and "sig + tanh_x" each ran two nodes: fusions the compiler made */
    CU_ASSERT_EQUAL(r->agree[FP_AGREE_COMPILER], 2);
    CU_ASSERT_EQUAL(r->agree[FP_AGREE_BOTH] + r->agree[FP_AGREE_PREDICTED], 0);
    const fp_match_fusion *f = r->fusions->pdata[0];
    CU_ASSERT_STRING_EQUAL(f->kernel, "conv1_relu1");
    CU_ASSERT_EQUAL_FATAL(f->nodes->len, 2);
    CU_ASSERT_STRING_EQUAL(f->nodes->pdata[0], "conv1");
    CU_ASSERT_STRING_EQUAL(f->nodes->pdata[1], "relu1");
    /* the unmatched kernel keeps its time out of the rows */
    CU_ASSERT_EQUAL(r->kernels[4].how, FP_MATCH_NONE);
    CU_ASSERT_EQUAL(r->kernels[4].row, -1);
    g_unlink(path);
}

static void test_type_and_shape(void)
{
    g_autofree char *path = NULL;
    g_autoptr(fp_model) m = chain_model(&path);
    g_autoptr(fp_device) d = fp_device_load("cpu-avx2", NULL);
    g_autoptr(fp_cost_result) cost = fp_pass_cost(m, d, FP_DT_UNDEFINED, 0, NULL);
    /* no name matches: types and recorded dims pair them, in execution order */
    g_autoptr(fp_profile) p = ort_profile(
        (const char *const[]){"k0|Conv2D|1x8x8x8|9", "k1|Relu|1x8x8x8|2", "k2|Sigmoid|1x8x8x8|2", NULL});
    g_autoptr(fp_match_result) r = fp_match_run(m, cost, NULL, p, NULL);
    CU_ASSERT_EQUAL(r->matched, 3);
    CU_ASSERT_EQUAL(r->by_how[FP_MATCH_TYPE_SHAPE], 3);
    CU_ASSERT_EQUAL(r->kernels[0].row, r->unit_row[0]); /* k0 ran conv1, the first unit */
    CU_ASSERT_EQUAL(r->absorbed, 3);                    /* tanh, neg, abs: no kernel of their own */
    /* another model's kernels: same types, other dims: nothing */
    g_autoptr(fp_profile) q = ort_profile(
        (const char *const[]){"k0|Conv|1x16x4x4|9", "k1|Relu|1x16x4x4|2", "k2|Sigmoid|1x16x4x4|2", NULL});
    g_autoptr(fp_match_result) s = fp_match_run(m, cost, NULL, q, NULL);
    CU_ASSERT_EQUAL(s->matched, 0);
    CU_ASSERT_EQUAL(s->stats.rows, 0);
    CU_ASSERT_EQUAL(s->unmeasured, 6);
    /* one name anchors the profile: then a type alone pairs a kernel without recorded tensors */
    g_autoptr(fp_profile) t = ort_profile((const char *const[]){"conv1|Conv||9", "xyz|Relu||2", NULL});
    g_autoptr(fp_match_result) u = fp_match_run(m, cost, NULL, t, NULL);
    CU_ASSERT_EQUAL(u->matched, 2);
    CU_ASSERT_EQUAL(u->by_how[FP_MATCH_TYPE_SHAPE], 1);
    CU_ASSERT_EQUAL(u->kernels[1].row, u->unit_row[1]); /* xyz ran relu1 */
    /* a made-up name ("Neg_4") names nothing when the types disagree; a real one is trusted */
    g_autoptr(fp_profile) v = ort_profile((const char *const[]){"sig|Relu||9", "Neg_4|Abs||2", NULL});
    g_autoptr(fp_match_result) w = fp_match_run(m, cost, NULL, v, NULL);
    CU_ASSERT_EQUAL(w->by_how[FP_MATCH_NAME], 1);
    CU_ASSERT_EQUAL(w->by_how[FP_MATCH_TYPE_SHAPE], 1);
    CU_ASSERT_EQUAL(w->kernels[1].row, w->unit_row[5]); /* the Abs kernel ran abs_y */
    g_unlink(path);
}

/* ---------------------------------------------------------------- compare on real profiles */

static void test_ort_profiles(void)
{
    static const struct {
        const char *model;
        const char *stage[2]; /* expected for disabled, extended (NULL: either) */
        int agree[2][3];      /* both, fuseplan only, compiler only */
    } cases[] = {
        {"eps_story", {"original", "fused"}, {{0, 2, 0}, {2, 0, 0}}},
        {"resnet_tiny", {"original", "fused"}, {{0, 9, 0}, {9, 0, 0}}},
        {"transformer_block", {"original", "fused"}, {{0, 4, 0}, {4, 0, 0}}},
        {"if_subgraph", {NULL, NULL}, {{0, 0, 0}, {0, 0, 0}}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        for (int level = 0; level < 2; level++) {
            g_autofree char *model = g_strdup_printf(MODELS "/%s.onnx", cases[i].model);
            g_autofree char *prof = g_strdup_printf(PROFILES "/ort/%s.%s.json", cases[i].model,
                                                    level ? "extended" : "disabled");
            tu_run_result r;
            g_autoptr(JsonParser) parser = NULL;
            JsonObject *o = run_json((const char *[]){"compare", model, "--profile", prof, "-f", "json", NULL}, &r,
                                     &parser);
            CU_ASSERT_PTR_NOT_NULL_FATAL(o);
            double total_us = 0;
            guint kernels = counted_kernels(prof, &total_us);
            CU_ASSERT_EQUAL(member_int(o, "coverage", "kernels"), kernels);
            CU_ASSERT_EQUAL(member_int(o, "coverage", "matched"), kernels);
            CU_ASSERT_DOUBLE_EQUAL(member_num(o, "coverage", "time_share"), 1.0, 1e-12);
            CU_ASSERT_DOUBLE_EQUAL(member_num(o, "totals", "measured_us"), total_us, 1e-6);
            double ratio = member_num(o, "totals", "ratio"), sp = member_num(o, "errors", "spearman");
            CU_ASSERT(ratio > 0 && isfinite(ratio));
            CU_ASSERT(member_num(o, "errors", "median_abs_pct_error") >= 0);
            CU_ASSERT(member_int(o, "errors", "rows") < 3 ? isnan(sp) : sp >= -1 && sp <= 1);
            if (cases[i].stage[level])
                CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "stage"), cases[i].stage[level]);
            CU_ASSERT_EQUAL(member_int(o, "agreement", "both"), cases[i].agree[level][0]);
            CU_ASSERT_EQUAL(member_int(o, "agreement", "fuseplan_only"), cases[i].agree[level][1]);
            CU_ASSERT_EQUAL(member_int(o, "agreement", "compiler_only"), cases[i].agree[level][2]);
            /* measured without NCHWc kernels: compared with ORT's extended level, not the default all */
            CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "target"), "ort-cpu-extended");
            CU_ASSERT_PTR_NOT_NULL(strstr(json_object_get_string_member(o, "stage_note"), "no NCHWc kernel"));
            tu_run_clear(&r);
        }
}

/* A target names another (`alias`), and the one NCHWc falls back to (`below_nchwc`): either
 * naming nothing, or an alias of an alias, is an error naming the file and the key. */
static void test_target_names(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_target) t = fp_target_load("ort-cpu", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t->name, "ort-cpu-all");
    const char *nowhere = "[target]\nalias = nowhere\n";
    g_autofree char *p1 = tu_write_temp(nowhere, strlen(nowhere), ".ini");
    g_autoptr(fp_target) a = fp_target_load(p1, &err);
    CU_ASSERT_PTR_NULL(a);
    tu_expect_error(err, "[target] alias: no target named 'nowhere'");
    g_clear_error(&err);
    g_autofree char *twice = g_strdup_printf("[target]\nalias = %s\n", p1);
    g_autofree char *p2 = tu_write_temp(twice, strlen(twice), ".ini");
    g_autoptr(fp_target) b = fp_target_load(p2, &err);
    CU_ASSERT_PTR_NULL(b);
    tu_expect_error(err, "is an alias itself");
    /* ort-cpu-all overridden (FUSEPLAN_DEVICES/targets) to fall back to a target that is not there */
    g_autofree char *dir = tm_tmpdir(), *tdir = g_build_filename(dir, "targets", NULL);
    g_autofree char *p3 = g_build_filename(tdir, "ort-cpu-all.ini", NULL);
    CU_ASSERT_EQUAL_FATAL(g_mkdir_with_parents(tdir, 0700), 0);
    CU_ASSERT_FATAL(g_file_set_contents(p3,
                                        "[target]\nname = t\nrules = conv_bn\nbelow_nchwc = nowhere\n"
                                        "[layout]\nnchwc = true\n",
                                        -1, NULL));
    g_setenv("FUSEPLAN_DEVICES", dir, TRUE);
    tu_expect_cli_error((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "--profile",
                                         PROFILES "/ort/resnet_tiny.extended.json", NULL},
                        p3, "[target] below_nchwc: no target named 'nowhere'");
    g_unsetenv("FUSEPLAN_DEVICES");
    tm_rmdir(dir);
    const char *paths[] = {p1, p2};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        g_unlink(paths[i]);
}

/* transformer_block at level extended: ORT names some fused kernels after nothing in the model
 * (SkipLayerNormalization, BiasGelu) and one after its anchor ("attn.scores/MatMulScaleFusion/"). */
static void test_ort_fused_kernels(void)
{
    tu_run_result r;
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = run_json((const char *[]){"compare", MODELS "/transformer_block.onnx", "--profile",
                                              PROFILES "/ort/transformer_block.extended.json", "-f", "json", NULL},
                             &r, &parser);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(member_int(o, "coverage", "by_type_shape"), 3);
    CU_ASSERT_EQUAL(member_int(o, "coverage", "by_fused_name"), 1);
    CU_ASSERT_EQUAL(member_int(o, "coverage", "absorbed"), 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "inputs_note"), "input 1x8x64 (from the profile)");
    JsonArray *rows = json_object_get_array_member(o, "rows");
    bool skip = false;
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonObject *row = json_array_get_object_element(rows, i);
        JsonArray *k = json_object_get_array_member(row, "kernels"), *n = json_object_get_array_member(row, "nodes");
        if (strcmp(json_array_get_string_element(k, 0), "SkipLayerNormalization") == 0) {
            skip = true; /* the first one in execution order ran fuseplan's first SkipLayerNormalization */
            CU_ASSERT_STRING_EQUAL(json_array_get_string_element(n, 0), "attn.out.add");
            CU_ASSERT_STRING_EQUAL(json_object_get_string_member(row, "matched_by"), "type_shape");
        }
    }
    CU_ASSERT(skip);
    tu_run_clear(&r);
    /* the text form says the same */
    r = tu_run((const char *[]){"compare", MODELS "/transformer_block.onnx", "--profile",
                                PROFILES "/ort/transformer_block.extended.json", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "23 of 23 kernels matched (100.0% of measured time)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "stage      fused"));
    tu_run_clear(&r);
}

static void expect_one_line(const char *const *args, const char *needle)
{
    tu_run_result r = tu_run(args);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, needle));
    if (!strstr(r.err, needle))
        fprintf(stderr, "\n  %s", r.err);
    tu_run_clear(&r);
}

static void test_no_match(void)
{
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/ort/transformer_block.extended.json", NULL},
                    "no kernel of the profile matches a node of " MODELS "/resnet_tiny.onnx (coverage 0 of 23 kernels");
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "-f", "json", "--profile",
                                     PROFILES "/Ascend__msinsight/level1__rank0_ascend_pt__kernel_details.csv", NULL},
                    "coverage 0 of 191 kernels");
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/Ascend__msinsight/level1__rank0_ascend_pt__op_statistic.csv", NULL},
                    "totals per op type");
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/Ascend__samples/model__fusion_result.json", NULL},
                    "not kernels");
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", NULL}, "--profile FILE is required");
    expect_one_line((const char *[]){"compare", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/ort/resnet_tiny.extended.json", "--stage", "final", NULL},
                    "--stage final");
}

/* ---------------------------------------------------------------- statistics */

static void test_statistics(void)
{
    double a[] = {1, 2, 3, 4}, b[] = {10, 20, 30, 40}, c[] = {4, 3, 2, 1}, t[] = {1, 1, 2, 3};
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_spearman(a, b, 4), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_spearman(a, c, 4), -1.0, 1e-12);
    /* ties share their rank: t ranks 1.5 1.5 3 4, deviations -1 -1 0.5 1.5 against -1.5 -0.5 0.5 1.5 */
    double expect = (1.5 + 0.5 + 0.25 + 2.25) / sqrt(4.5 * 5.0);
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_spearman(t, a, 4), expect, 1e-12);
    CU_ASSERT(isnan(fp_fit_spearman(a, b, 2)));
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_median(odd, 3), 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_median(even, 4), 2.5, 0);
    CU_ASSERT(isnan(fp_fit_median(NULL, 0)));
}

/* ---------------------------------------------------------------- fit */

static fp_device *device_with(const char *name, double conv, double matmul, double bw, double launch)
{
    g_autoptr(fp_device) base = fp_device_load(name, NULL);
    CU_ASSERT_FATAL(base != NULL);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(base);
    fp_device *d = fp_device_from_keyfile(kf, "truth.ini", NULL);
    CU_ASSERT_FATAL(d != NULL);
    d->efficiency[FP_CLASS_CONV] = conv;
    d->efficiency[FP_CLASS_MATMUL] = matmul;
    d->bw_efficiency = bw;
    d->launch_overhead = launch;
    return d;
}

static void test_fit_recovers(void)
{
    g_autoptr(fp_device) base = fp_device_load("cpu-avx2", NULL);
    g_autoptr(fp_device) truth = device_with("cpu-avx2", 0.37, 0.61, 0.43, 3.1e-6);
    static const fp_fit_op ops[] = {
        {2e8, 4e6, FP_DT_FLOAT, FP_CLASS_CONV},   {1e9, 1e7, FP_DT_FLOAT, FP_CLASS_CONV},
        {5e9, 3e7, FP_DT_FLOAT, FP_CLASS_CONV},   {1e9, 8e6, FP_DT_FLOAT, FP_CLASS_MATMUL},
        {4e8, 6e6, FP_DT_FLOAT, FP_CLASS_MATMUL}, {1e6, 4e7, FP_DT_FLOAT, FP_CLASS_EW},
        {2e5, 8e6, FP_DT_FLOAT, FP_CLASS_EW},     {1e3, 1e3, FP_DT_FLOAT, FP_CLASS_POOL},
    };
    g_autoptr(fp_fit_data) d = fp_fit_data_new();
    for (int m = 0; m < 3; m++) {
        g_autofree char *name = g_strdup_printf("model%d", m);
        uint32_t mi = fp_fit_data_add_model(d, name, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
            fp_fit_op op = ops[i]; /* each model its own sizes */
            op.flops = (uint64_t)((double)op.flops * (1 + 0.3 * m));
            op.bytes = (uint64_t)((double)op.bytes * (1 + 0.2 * m));
            fp_fit_row row = {.first_op = 0, .n_ops = 1};
            fp_fit_data tmp = {.ops = g_array_new(FALSE, FALSE, sizeof(fp_fit_op))};
            g_array_append_val(tmp.ops, op);
            double t = fp_fit_row_estimate(&tmp, &row, truth);
            g_array_free(tmp.ops, TRUE);
            fp_fit_data_add_row(d, mi, "row", &op, 1, 0, t);
        }
        fp_fit_op pair[] = {ops[1], ops[5]}; /* a row of two kernels (one fused away) */
        fp_fit_data tmp = {.ops = g_array_new(FALSE, FALSE, sizeof(fp_fit_op))};
        g_array_append_vals(tmp.ops, pair, 2);
        fp_fit_row row = {.n_ops = 2};
        fp_fit_data_add_row(d, mi, "pair", pair, 2, 0, fp_fit_row_estimate(&tmp, &row, truth));
        g_array_free(tmp.ops, TRUE);
    }
    fp_fit_opts o = {0};
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_fit_result) r = fp_fit_run(d, base, &o, &err);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_CLASS_CONV] / 0.37, 1, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_CLASS_MATMUL] / 0.61, 1, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_BW] / 0.43, 1, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_LAUNCH] / 3.1e-6, 1, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(r->device->efficiency[FP_CLASS_CONV], r->params[FP_CLASS_CONV], 1e-12);
    /* no row informs the softmax class: it keeps its base value */
    CU_ASSERT_EQUAL(r->informed[FP_CLASS_SOFTMAX], 0);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_CLASS_SOFTMAX], base->efficiency[FP_CLASS_SOFTMAX], 1e-6);
    CU_ASSERT(r->informed[FP_CLASS_CONV] >= 3 && r->informed[FP_FIT_BW] >= 3);
    CU_ASSERT(r->rms_log < 1e-3 && r->base_rms_log > 0.1);
    CU_ASSERT_EQUAL_FATAL(r->n_models, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->cv_eval);
    for (int m = 0; m < 3; m++) {
        CU_ASSERT_DOUBLE_EQUAL(r->cv_eval[m].ratio, 1, 0.01);
        CU_ASSERT(fabs(r->base_eval[m].ratio - 1) > 0.05); /* the base profile was off */
    }
    CU_ASSERT_EQUAL(r->within[2], 3);
    CU_ASSERT(r->spearman_cv > 0.99);
}

/* Whole runs timed without a profiler: models whose runs take exactly their kernels on a truth
 * (the base with 3 us launches instead of 2 us) plus 6 us give the run overhead and the launch back,
 * in the fitted profile too, and every run's estimate (left-one-out included) equals its
 * measurement; profiles alone (no whole run) leave the base's run overhead (none). */
static void test_fit_run_overhead(void)
{
    g_autoptr(fp_device) base = fp_device_load("cpu-avx2", NULL);
    g_autoptr(fp_device) truth = device_with("cpu-avx2", base->efficiency[FP_CLASS_CONV],
                                             base->efficiency[FP_CLASS_MATMUL], base->bw_efficiency, 3e-6);
    static const uint32_t kernels[] = {1, 2, 4, 9, 16, 40};
    for (int whole = 1; whole >= 0; whole--) {
        g_autoptr(fp_fit_data) d = fp_fit_data_new();
        for (size_t m = 0; m < G_N_ELEMENTS(kernels); m++) {
            g_autofree char *name = g_strdup_printf("model%zu", m);
            uint32_t mi = fp_fit_data_add_model(d, name, 0);
            g_autoptr(GArray) ops = g_array_new(FALSE, FALSE, sizeof(fp_fit_op));
            double t = 0;
            for (uint32_t k = 0; k < kernels[m]; k++) {
                fp_fit_op op = {1e5 * (k + 1), 4e4 * (m + 1), FP_DT_FLOAT, FP_CLASS_EW};
                g_array_append_val(ops, op);
                t += fp_roofline_kernel(truth, &op).time_s;
            }
            if (whole)
                fp_fit_data_add_run(d, mi, "run", (fp_fit_op *)ops->data, ops->len, 0, t + 6e-6);
            else
                fp_fit_data_add_row(d, mi, "row", (fp_fit_op *)ops->data, ops->len, 0, t);
        }
        fp_fit_opts o = {0};
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_fit_result) r = fp_fit_run(d, base, &o, &err);
        CU_ASSERT_FATAL(r != NULL && r->cv_eval != NULL);
        CU_ASSERT_STRING_EQUAL(fp_fit_param_name(FP_FIT_RUN), "run_overhead");
        CU_ASSERT(fp_fit_param_is_time(FP_FIT_RUN));
        if (!whole) {
            CU_ASSERT_EQUAL(r->informed[FP_FIT_RUN], 0);
            CU_ASSERT_EQUAL(r->device->run_overhead, 0);
            continue;
        }
        CU_ASSERT_EQUAL(r->informed[FP_FIT_RUN], G_N_ELEMENTS(kernels));
        CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_RUN] / 6e-6, 1, 0.05);
        CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(r->device, FP_CLASS_EW) / 3e-6, 1, 0.05);
        CU_ASSERT_DOUBLE_EQUAL(r->device->run_overhead, r->params[FP_FIT_RUN], 1e-15);
        for (size_t m = 0; m < G_N_ELEMENTS(kernels); m++) {
            CU_ASSERT_DOUBLE_EQUAL(r->fit_eval[m].ratio, 1, 0.01);
            CU_ASSERT_DOUBLE_EQUAL(r->cv_eval[m].ratio, 1, 0.03);
            CU_ASSERT(r->base_eval[m].ratio < 0.95); /* the base has no run overhead */
        }
        /* the written profile keeps it */
        g_autoptr(GKeyFile) kf = fp_device_to_keyfile(r->device);
        g_autoptr(fp_device) back = fp_device_from_keyfile(kf, "fitted.ini", &err);
        CU_ASSERT_FATAL(back != NULL);
        CU_ASSERT_DOUBLE_EQUAL(back->run_overhead / r->device->run_overhead, 1, 1e-9);
    }
}

/* A base with cache levels and a truth that differs from it in every refinement: the fit (with a
 * weak refinement prior, the data being exact) recovers class launches, a cache level's bandwidth,
 * a half work and the per-group overhead, and the blocked NCHWc classes' own efficiencies and half
 * work where the base has only their parents'; classes no row informs keep the base's values. */
static void test_fit_refinements(void)
{
    static const char ini[] =
        "[device]\ndescription=t\ntarget=ort-cpu\nbandwidth=3e10\nmemory_bytes=1e9\nlaunch_overhead=2e-6\n"
        "align_bytes=64\n[peak]\nfp32=2e11\n[efficiency]\nconv=0.7\ngrouped_conv=0.05\nmatmul=0.9\nelementwise=0.5\n"
        "[cache]\nl1_bytes=49152\nl1_bandwidth=4e11\nl2_bytes=1048576\nl2_bandwidth=1.5e11\n"
        "l3_bytes=33554432\nl3_bandwidth=9e10\n";
    g_autofree char *path = tu_write_temp(ini, strlen(ini), ".ini");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) base = fp_device_load(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(base);
    g_autoptr(fp_device) truth = fp_device_from_keyfile(kf, "truth.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(truth);
    truth->launch[FP_CLASS_CONV] = 5e-6;
    truth->launch_own[FP_CLASS_CONV] = true;
    truth->launch[FP_CLASS_EW] = 1.5e-6;
    truth->launch_own[FP_CLASS_EW] = true;
    truth->cache[1].bandwidth = 0.6 * base->cache[1].bandwidth;
    truth->half_work[FP_CLASS_CONV] = 4e6;
    truth->launch_group = 3e-7;
    truth->launch_row = 3e-9;
    truth->efficiency[FP_CLASS_NCHWC_CONV] = 0.95; /* the blocked classes, which the base takes from */
    truth->half_work[FP_CLASS_NCHWC_CONV] = 1e6;   /* conv and grouped_conv */
    truth->efficiency[FP_CLASS_NCHWC_DEPTHWISE] = 0.6;
    g_autoptr(fp_fit_data) d = fp_fit_data_new();
    for (int m = 0; m < 3; m++) {
        g_autofree char *name = g_strdup_printf("model%d", m);
        uint32_t mi = fp_fit_data_add_model(d, name, 0);
        double f = 1 + 0.25 * m;
        for (int i = 0; i < 5; i++) { /* cubic GEMMs of n = 16 .. 256 (x f) as convolutions */
            double n = 16 * f * (1 << i);
            fp_fit_op op = {(uint64_t)(2 * n * n * n), (uint64_t)(12 * n * n), FP_DT_FLOAT, FP_CLASS_CONV, 1,
                            (uint64_t)(3 * n * n)};
            fp_fit_data_add_row(d, mi, "conv", &op, 1, 0, fp_roofline_kernel(truth, &op).time_s);
        }
        for (int i = 0; i < 3; i++) { /* depthwise: 32 .. 128 groups of 3x3 to 7x7 taps, 7 to 28 rows out */
            static const uint64_t taps[] = {9, 25, 49}, out_rows[] = {7, 14, 28};
            fp_fit_op op =
                {(uint64_t)(1e5 * f * (1 << i)), 40000, FP_DT_FLOAT, FP_CLASS_GROUPED_CONV, (uint64_t)(32 << i), 0};
            op.rows = op.parts * taps[i] * out_rows[m];
            fp_fit_data_add_row(d, mi, "dw", &op, 1, 0, fp_roofline_kernel(truth, &op).time_s);
        }
        for (int i = 0; i < 5; i++) { /* the same GEMMs as blocked convolutions, and blocked depthwise ones */
            double n = 16 * f * (1 << i);
            fp_fit_op op = {(uint64_t)(2 * n * n * n), (uint64_t)(12 * n * n), FP_DT_FLOAT, FP_CLASS_NCHWC_CONV, 1,
                            (uint64_t)(3 * n * n)};
            fp_fit_data_add_row(d, mi, "nchwc", &op, 1, 0, fp_roofline_kernel(truth, &op).time_s);
            op = (fp_fit_op){(uint64_t)(1e6 * f * (1 << i)), 40000, FP_DT_FLOAT, FP_CLASS_NCHWC_DEPTHWISE, 1, 0};
            fp_fit_data_add_row(d, mi, "nchwc_dw", &op, 1, 0, fp_roofline_kernel(truth, &op).time_s);
        }
        static const double ew_bytes[] = {1000, 30000, 300000, 700000, 8e6, 60e6};
        for (size_t i = 0; i < G_N_ELEMENTS(ew_bytes); i++) { /* streaming from L1, L2, L3, memory */
            fp_fit_op op =
                {(uint64_t)(ew_bytes[i] * f / 8), (uint64_t)(ew_bytes[i] * f), FP_DT_FLOAT, FP_CLASS_EW, 1, 0};
            fp_fit_data_add_row(d, mi, "ew", &op, 1, 0, fp_roofline_kernel(truth, &op).time_s);
        }
    }
    fp_fit_opts o = {.prior_refine = 1e-5};
    g_autoptr(fp_fit_result) r = fp_fit_run(d, base, &o, &err);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_CLASS_LAUNCH + FP_CLASS_CONV] / 5e-6, 1, 0.03);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_CLASS_LAUNCH + FP_CLASS_EW] / 1.5e-6, 1, 0.03);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_CACHE + 1], 0.6, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_SAT + FP_CLASS_CONV] / 4e6, 1, 0.1);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_GROUP_LAUNCH] / 3e-7, 1, 0.05);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_ROW_LAUNCH] / 3e-9, 1, 0.05);
    CU_ASSERT_DOUBLE_EQUAL(r->device->launch_row / 3e-9, 1, 0.05);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_CLASS_NCHWC_CONV], 0.95, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_FIT_SAT + FP_CLASS_NCHWC_CONV] / 1e6, 1, 0.1);
    CU_ASSERT_DOUBLE_EQUAL(r->params[FP_CLASS_NCHWC_DEPTHWISE], 0.6, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(r->device->efficiency[FP_CLASS_NCHWC_DEPTHWISE], 0.6, 0.02);
    CU_ASSERT(r->rms_log < 0.01);
    CU_ASSERT(r->informed[FP_FIT_CACHE + 1] > 0 && r->informed[FP_FIT_GROUP_LAUNCH] > 0 &&
              r->informed[FP_FIT_ROW_LAUNCH] > 0);
    /* nothing informs softmax: its launch and half work stay the base's (none) */
    CU_ASSERT_EQUAL(r->informed[FP_FIT_CLASS_LAUNCH + FP_CLASS_SOFTMAX], 0);
    CU_ASSERT_DOUBLE_EQUAL(r->device->half_work[FP_CLASS_SOFTMAX], 0, 0);
    /* the written profile estimates what the fit evaluated */
    const fp_fit_row *row = &g_array_index(d->rows, fp_fit_row, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_fit_row_estimate(d, row, r->device) / r->row_fit_s[0], 1, 1e-9);
    g_unlink(path);
}

/* An ORT profile of model m (one warm-up and one measured run) whose kernels take what device
 * `truth` estimates for the original graph. Returns the file (caller unlinks and frees). */
static char *synthetic_profile(const char *model, const fp_device *truth, int64_t seq)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(model, &err);
    CU_ASSERT_FATAL(m != NULL);
    fp_value *in = m->main->inputs->pdata[0];
    fp_shape *shape = fp_arena_alloc(m->arena, sizeof *shape);
    shape->rank = in->shape.rank;
    shape->dims = fp_arena_calloc(m->arena, (size_t)shape->rank, sizeof(fp_dim));
    for (int32_t d = 0; d < shape->rank; d++)
        shape->dims[d] = (fp_dim){d == 0 ? 1 : fp_dim_known(in->shape.dims[d]) ? in->shape.dims[d].value : seq, NULL};
    g_autoptr(GHashTable) h = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(h, (gpointer)in->name, shape);
    fp_shape_opts so = {.input_shapes = h};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, &err));
    fp_pass_metrics(m, NULL);
    /* ONNX Runtime at ORT_DISABLE_ALL runs the shape computations too */
    g_autoptr(fp_cost_result) cost = fp_pass_cost(m, truth, FP_DT_UNDEFINED, FP_COST_RUN_FOLDED, NULL);
    GString *s = g_string_new("[");
    double ts = 0;
    for (int run = 0; run < 2; run++) {
        double start = ts;
        for (uint32_t i = 0; i < cost->n_ops; i++) {
            const fp_op_cost *c = &cost->ops[i];
            if (!c->kernel)
                continue;
            double us = c->rl.time_s * 1e6 * (run == 0 ? 3 : 1); /* the warm-up run is slower */
            GString *dims = g_string_new(NULL);                  /* the graph input's dims, for the inputs binding */
            for (int32_t d = 0; c->node->inputs[0] == in && d < shape->rank; d++)
                g_string_append_printf(dims, "%s%" G_GINT64_FORMAT, d ? "," : "[{\"float\":[", shape->dims[d].value);
            g_string_append_printf(s,
                                   "{\"cat\":\"Node\",\"name\":\"%s_kernel_time\",\"ts\":%.3f,\"dur\":%.6f,"
                                   "\"args\":{\"op_name\":\"%s\"%s%s%s}},",
                                   c->node->name, ts + 1, us, c->node->op_type,
                                   dims->len ? ",\"input_type_shape\":" : "", dims->str, dims->len ? "]}]" : "");
            g_string_free(dims, TRUE);
            ts += us + 2;
        }
        g_string_append_printf(s, "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":%.3f,\"dur\":%.3f}%s", start,
                               ts - start + 1, run ? "]" : ",");
        ts += 10;
    }
    char *path = tu_write_temp(s->str, s->len, ".json");
    g_string_free(s, TRUE);
    return path;
}

static void test_fit_cli(void)
{
    g_autoptr(fp_device) truth = device_with("cpu-avx2", 0.33, 0.55, 0.5, 2.5e-6);
    const char *models[] = {MODELS "/resnet_tiny.onnx", MODELS "/branchy.onnx", MODELS "/transformer_block.onnx"};
    char *profiles[3];
    for (int i = 0; i < 3; i++)
        profiles[i] = synthetic_profile(models[i], truth, 8);
    g_autofree char *out = g_build_filename(g_get_tmp_dir(), "fp_test_fit.ini", NULL);
    g_unlink(out);
    tu_run_result r;
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = run_json((const char *[]){"fit",       "--stage",   "original",  "-d",      "cpu-avx2",
                                              "-o",        out,         "-f",        "json",    "--model",
                                              models[0],   "--profile", profiles[0], "--model", models[1],
                                              "--profile", profiles[1], "--model",   models[2], "--profile",
                                              profiles[2], NULL},
                             &r, &parser);
    if (!o)
        fprintf(stderr, "\n  %s", r.err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(member_int(o, "summary", "within_cv"), 3);
    CU_ASSERT(member_num(o, "summary", "spearman_cv") > 0.99);
    /* the fitted profile is a normal device profile with the truth's numbers */
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) fitted = fp_device_load(out, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fitted);
    CU_ASSERT_DOUBLE_EQUAL(fitted->efficiency[FP_CLASS_CONV] / 0.33, 1, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(fitted->bw_efficiency / 0.5, 1, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(fitted->launch_overhead / 2.5e-6, 1, 0.02);
    CU_ASSERT_STRING_EQUAL(fitted->target, "ort-cpu");
    CU_ASSERT_PTR_NOT_NULL(strstr(fitted->description, "fitted to 3 measured models"));
    tu_run_clear(&r);
    /* with that profile, compare agrees with the measurements */
    g_autoptr(JsonParser) p2 = NULL;
    o = run_json((const char *[]){"compare", models[0], "--profile", profiles[0], "-d", out, "--stage", "original",
                                  "-f", "json", NULL},
                 &r, &p2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_DOUBLE_EQUAL(member_num(o, "totals", "ratio"), 1, 0.02);
    CU_ASSERT(member_num(o, "errors", "median_abs_pct_error") < 2);
    tu_run_clear(&r);
    g_unlink(out);
    for (int i = 0; i < 3; i++) {
        g_unlink(profiles[i]);
        g_free(profiles[i]);
    }
}

static void test_fit_errors(void)
{
    g_autofree char *out = g_build_filename(g_get_tmp_dir(), "fp_test_fit_bad.ini", NULL);
    g_unlink(out);
    expect_one_line((const char *[]){"fit", "-o", out, "--model", MODELS "/resnet_tiny.onnx", NULL},
                    "1 --model but 0 --profile");
    expect_one_line((const char *[]){"fit", "--model", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/ort/resnet_tiny.extended.json", NULL},
                    "-o FILE");
    expect_one_line((const char *[]){"fit", "-o", out, "--model", MODELS "/resnet_tiny.onnx", "--profile",
                                     PROFILES "/ort/eps_story.extended.json", NULL},
                    "coverage 0 of 2 kernels");
    expect_one_line((const char *[]){"fit", "-o", out, "--objective", "median", "--model", MODELS "/eps_story.onnx",
                                     "--profile", PROFILES "/ort/eps_story.extended.json", NULL},
                    "--objective median");
    g_autofree char *pairs = g_build_filename(g_get_tmp_dir(), "fp_test_fit_bad.pairs", NULL);
    g_assert(
        g_file_set_contents(pairs, MODELS "/eps_story.onnx " PROFILES "/ort/eps_story.extended.json -3\n", -1, NULL));
    expect_one_line((const char *[]){"fit", "-o", out, "--pairs", pairs, NULL},
                    "line 1: expected 'MODEL PROFILE [RUN_US]' (RUN_US a time > 0 in microseconds)");
    g_unlink(pairs);
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
}

/* `fit --pairs` with a whole run per model (third column, us): runs that take the cpu-avx2
 * estimate of every op plus 7 us give a run overhead of 7 us, and the fitted profile's report
 * estimates each run (stage original: the profiles ran level disabled). The tiny if_subgraph,
 * whose run is mostly the overhead, pins it: the three larger models alone are explained as well
 * by efficiencies a few percent off the base's, a cheaper move for the prior. */
static void test_fit_whole_runs(void)
{
    const char *models[] = {"resnet_tiny", "eps_story", "transformer_block", "if_subgraph"};
    const char *inputs[] = {"input:1x3x64x64", "input:1x3x32x32", "input:1x8x64",
                            "input:1x8"}; /* as the profiles ran */
    g_autofree char *out = g_build_filename(g_get_tmp_dir(), "fp_test_fit_runs.ini", NULL);
    g_autofree char *pairs = g_build_filename(g_get_tmp_dir(), "fp_test_fit_runs.pairs", NULL);
    GString *lines = g_string_new(NULL);
    double run_us[G_N_ELEMENTS(models)];
    for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
        g_autofree char *model = g_strdup_printf(MODELS "/%s.onnx", models[i]);
        g_autofree char *prof = g_strdup_printf(PROFILES "/ort/%s.disabled.json", models[i]);
        tu_run_result r;
        g_autoptr(JsonParser) parser = NULL;
        JsonObject *o = run_json((const char *[]){"compare", model, "--profile", prof, "-d", "cpu-avx2", "-f", "json",
                                                  NULL},
                                 &r, &parser);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        run_us[i] = member_num(o, "totals", "estimated_us") + 7;
        g_string_append_printf(lines, "%s %s %.6f\n", model, prof, run_us[i]);
        tu_run_clear(&r);
    }
    g_assert(g_file_set_contents(pairs, lines->str, -1, NULL));
    g_string_free(lines, TRUE);
    tu_run_result r;
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = run_json((const char *[]){"fit", "-d", "cpu-avx2", "-o", out, "-f", "json", "--pairs", pairs, NULL},
                             &r, &parser);
    if (!o)
        fprintf(stderr, "\n  %s", r.err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(member_int(o, "summary", "within_fit"), (int)G_N_ELEMENTS(models));
    tu_run_clear(&r);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) fitted = fp_device_load(out, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fitted);
    CU_ASSERT_DOUBLE_EQUAL(fitted->run_overhead / 7e-6, 1, 0.1);
    for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
        g_autofree char *model = g_strdup_printf(MODELS "/%s.onnx", models[i]);
        g_autoptr(JsonParser) p2 = NULL;
        o = run_json((const char *[]){"report", model, "-d", out, "-f", "json", "--no-headroom", "--input", inputs[i],
                                      NULL},
                     &r, &p2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        JsonObject *st = json_array_get_object_element(json_object_get_array_member(o, "stages"), 0);
        CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(st, "est_latency_s") * 1e6 / run_us[i], 1, 0.05);
        tu_run_clear(&r);
    }
    g_unlink(out);
    g_unlink(pairs);
}

FP_TEST_SUITE(register_compare)
{
    CU_pSuite s = CU_add_suite("compare", NULL, NULL);
    CU_add_test(s, "classes_and_bodies", test_classes_and_bodies);
    CU_add_test(s, "fused_names", test_fused_names);
    CU_add_test(s, "type_and_shape", test_type_and_shape);
    CU_add_test(s, "ort_profiles", test_ort_profiles);
    CU_add_test(s, "target_names", test_target_names);
    CU_add_test(s, "ort_fused_kernels", test_ort_fused_kernels);
    CU_add_test(s, "no_match", test_no_match);
    CU_add_test(s, "statistics", test_statistics);
    CU_add_test(s, "fit_recovers", test_fit_recovers);
    CU_add_test(s, "fit_refinements", test_fit_refinements);
    CU_add_test(s, "fit_run_overhead", test_fit_run_overhead);
    CU_add_test(s, "fit_whole_runs", test_fit_whole_runs);
    CU_add_test(s, "fit_cli", test_fit_cli);
    CU_add_test(s, "fit_errors", test_fit_errors);
}
