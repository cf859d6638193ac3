/* test_profile.c - profile readers and `fuseplan profile`: every real profile of
 * tests/data/profiles reads with the file's own row / pass counts (table copied from its README),
 * ONNX Runtime profiles agree with an independent reading of their events and with the sample
 * models, malformed files fail with one line naming the file and the row / key. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "frontends/load.h"
#include "frontends/profile/prof_internal.h"
#include "frontends/profile/profile.h"
#include "tutil.h"

#define DATA FP_SOURCE_DIR "/tests/data/profiles"

/* tests/data/profiles/README.md: rows = data records for CSVs, pass entries for fusion_result;
 * layout and graphs from its header / JSON layout column. */
static const struct {
    const char *file;
    const char *format;
    uint64_t rows;
    const char *layout;
    uint32_t graphs;
} real_files[] = {
    {"Ascend__msinsight/op_summary_1.csv", "op_summary", 21, NULL, 0},
    {"Ascend__msinsight/test_data__test_rank_0__kernel_details.csv", "kernel_details", 21, NULL, 0},
    {"Ascend__msinsight/test_data__test_rank_1__kernel_details.csv", "kernel_details", 22, NULL, 0},
    {"Ascend__msinsight/level0__rank0_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level0__rank1_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level1__rank0_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level1__rank0_ascend_pt__op_statistic.csv", "op_statistic", 33, NULL, 0},
    {"Ascend__msinsight/level1__rank1_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level1__rank1_ascend_pt__op_statistic.csv", "op_statistic", 33, NULL, 0},
    {"Ascend__msinsight/level2__rank0_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level2__rank0_ascend_pt__op_statistic.csv", "op_statistic", 33, NULL, 0},
    {"Ascend__msinsight/level2__rank1_ascend_pt__kernel_details.csv", "kernel_details", 191, NULL, 0},
    {"Ascend__msinsight/level2__rank1_ascend_pt__op_statistic.csv", "op_statistic", 33, NULL, 0},
    {"Ascend__msinsight/mspti_msprof_switch__fusion_result.json", "fusion_result", 112, "dict", 17},
    {"Ascend__msinsight/pytorch_domain_exclude__fusion_result.json", "fusion_result", 6, "dict", 2},
    {"Ascend__msinsight/pytorch_lenet__fusion_result.json", "fusion_result", 40, "dict", 5},
    {"Ascend__msinsight/level2__rank_0_ascend_pt__kernel_details.csv", "kernel_details", 2463, NULL, 0},
    {"Ascend__msinsight/level2__rank_0_ascend_pt__op_statistic.csv", "op_statistic", 35, NULL, 0},
    {"Ascend__msinsight/level2__rank_2_ascend_pt__op_statistic.csv", "op_statistic", 46, NULL, 0},
    {"Ascend__msprof-analyze/data__kernel_details.csv", "kernel_details", 29, NULL, 0},
    {"hicann__oam-tools/op_statistic_20260624165820.csv", "op_statistic", 1, NULL, 0},
    {"hicann__oam-tools/op_summary_20260624165820.csv", "op_summary", 1, NULL, 0},
    {"hicann__oam-tools/task_time_20260624165820.csv", "task_time", 4, NULL, 0},
    {"hicann__oam-tools/kernel_details.csv", "kernel_details", 35, NULL, 0},
    {"hicann__oam-tools/op_statistic.csv", "op_statistic", 2, NULL, 0},
    {"hicann__oam-tools/op_statistic_20260601142441.csv", "op_statistic", 2, NULL, 0},
    {"hicann__oam-tools/op_summary_20260601142441.csv", "op_summary", 35, NULL, 0},
    {"hicann__oam-tools/task_time_20260601142441.csv", "task_time", 36, NULL, 0},
    {"hicann__oam-tools/fusion_result.json", "fusion_result", 2, "list", 1},
    {"hicann__cann-learning-hub/GemmBaselineExperiment__fusion_result.json", "fusion_result", 268, "dict", 56},
    {"hicann__cann-learning-hub/GemmOptimizedExperiment__fusion_result.json", "fusion_result", 272, "dict", 58},
    {"hicann__cann-learning-hub/SwiGluBaselineExperiment__fusion_result.json", "fusion_result", 258, "dict", 51},
    {"hicann__cann-learning-hub/SwiGluOptimizedExperiment__fusion_result.json", "fusion_result", 258, "dict", 51},
    {"hicann__cann-learning-hub/op_statistic.csv", "op_statistic", 1, NULL, 0},
    {"hicann__cann-learning-hub/op_summary.csv", "op_summary", 20, NULL, 0},
    {"hicann__cann-learning-hub/task_time.csv", "task_time", 22, NULL, 0},
    {"hicann__cann-bench/fusion_result.json", "fusion_result", 12, "dict", 4},
    {"Ascend__ModelZoo-TensorFlow/cv__AutoEncoder_ID2495_for_ACL__scripts__fusion_result.json", "fusion_result", 15,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__DeepMatchVO_ID2363_for_ACL__DeepMatchVO-master_for_TensorFlow__fusion_result.json",
     "fusion_result", 18, "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__MONODEPTH_ID2099_for_ACL__monodepth__fusion_result.json", "fusion_result", 15,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/MONODEPTH_ID2099_for_ACL__om_picture__model__fusion_result.json", "fusion_result", 16,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/contrib__cv__Revisiting_self_supervised_ID0935_for_ACL__fusion_result.json",
     "fusion_result", 35, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/built-in__audio__tacotron2_ID0018_for_TensorFlow__fusion_result.json",
     "fusion_result", 43, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/cv__detection__NIMA_ID0158_for_TensorFlow__fusion_result.json", "fusion_result", 39,
     "concatenated", 3},
    {"Ascend__ModelZoo-TensorFlow/cv__image_classification__SWA_ID0252_for_TensorFlow__fusion_result.json",
     "fusion_result", 18, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/cv__image_classification__SqueezeNext_ID0513_For_Tensorflow__fusion_result.json",
     "fusion_result", 2, "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__image_segmentation__3d-DenseNet_for_TensorFlow__fusion_result.json",
     "fusion_result", 15, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/cv__image_segmentation__ModelsGenesis_ID0902_for_TensorFlow__fusion_result.json",
     "fusion_result", 58, "concatenated", 19},
    {"Ascend__ModelZoo-TensorFlow/built-in__nlp__FastText_ID0135_for_TensorFlow__fusion_result.json", "fusion_result",
     31, "concatenated", 5},
    {"Ascend__ModelZoo-TensorFlow/built-in__nlp__GNMT_for_TensorFlow__fusion_result.json", "fusion_result", 33,
     "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/built-in__nlp__RetinaNet_for_TensorFlow__fusion_result.json", "fusion_result", 36,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/reinforcement_learning__DDPG_for_TensorFlow__rl__fusion_result.json", "fusion_result",
     18, "concatenated", 6},
    {"Ascend__ModelZoo-TensorFlow/built-in__reinforcement_learning__MUZERO_for_TensorFlow__fusion_result.json",
     "fusion_result", 4, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/reinforcement_learning__PPO_for_TensorFlow__rl__fusion_result.json", "fusion_result",
     21, "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/DevNet_ID0223_for_TensorFlow__om__atc_output__fusion_result.json", "fusion_result", 2,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__IEG_ID2049_for_TensorFlow__code__fusion_result.json", "fusion_result", 56,
     "concatenated", 5},
    {"Ascend__ModelZoo-TensorFlow/contrib__cv__Polygen_ID2061_for_TensorFlow__fusion_result.json", "fusion_result", 159,
     "concatenated", 4},
    {"Ascend__ModelZoo-TensorFlow/contrib__cv__Transferring-GAN_ID1252_for_Tensorflow__fusion_result.json",
     "fusion_result", 63, "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__east__EAST_tf_skywalk163__fusion_result.json", "fusion_result", 37,
     "concatenated", 2},
    {"Ascend__ModelZoo-TensorFlow/stgan__STGAN_ID1473_for_TensorFlow__att_classification__fusion_result.json",
     "fusion_result", 13, "object", 1},
    {"Ascend__ModelZoo-TensorFlow/cv__tprnn_ID1297_for_TensorFlow__post_tprnn_npu_code_chun__fusion_result.json",
     "fusion_result", 47, "concatenated", 3},
    {"Ascend__ModelZoo-TensorFlow/afm_tf_hw49819254__om__atc_output__fusion_result.json", "fusion_result", 17, "object",
     1},
    {"Ascend__ModelZoo-TensorFlow/PIN_ID1987_for_TensorFlow__om__atc_output__fusion_result.json", "fusion_result", 11,
     "object", 1},
    {"Ascend__ModelZoo-TensorFlow/image_classification__ResNet50_ID0360_for_TensorFlow2.X__tensorflow__fusion_result.json",
     "fusion_result", 6, "object", 1},
    {"Ascend__modelzoo/VAE+GAN_ID0401_for_PyTorch__fusion_result.json", "fusion_result", 18, "concatenated", 11},
    {"Ascend__modelzoo/simple__fusion_result.json", "fusion_result", 22, "concatenated", 11},
    {"Ascend__modelzoo/Retinanet_for_PyTorch__fusion_result.json", "fusion_result", 92, "concatenated", 45},
    {"Ascend__modelzoo/Speech_Transformer_Pytorch__fusion_result.json", "fusion_result", 146, "concatenated", 58},
    {"Ascend__modelzoo/AdvancedEAST_for_TensorFlow__fusion_result.json", "fusion_result", 93, "concatenated", 5},
    {"Ascend__modelzoo/HRNet_for_TensorFlow__fusion_result.json", "fusion_result", 56, "concatenated", 3},
    {"Ascend__modelzoo/east_tf_hw81087854__fusion_result.json", "fusion_result", 37, "concatenated", 2},
    {"Ascend__modelzoo/ICNet_tf_hw81087854__fusion_result.json", "fusion_result", 2, "object", 1},
    {"Ascend__modelzoo/ds-cnn_tf_hw81087854__fusion_result.json", "fusion_result", 2, "object", 1},
    {"Ascend__modelzoo/JeffDing-DSCNN-TF__fusion_result.json", "fusion_result", 26, "concatenated", 6},
    {"Ascend__samples/model__fusion_result.json", "fusion_result", 5, "object", 1},
    {"Ascend__samples/out__fusion_result.json", "fusion_result", 1, "object", 1},
    {"Ascend__samples/scripts__fusion_result.json", "fusion_result", 4, "object", 1},
    {"Saidbek7__Ascend_gemm/fusion_result.json", "fusion_result", 4, "list", 1},
    {"wanghemeng__AscendCL_GEMM/fusion_result.json", "fusion_result", 3, "object", 1},
    {"CenZhihan__LLM4AscendC/fusion_result.json", "fusion_result", 14, "dict", 1},
    {"catman626__FlexAscend/fusion_result.json", "fusion_result", 88, "list", 26},
    {"Ascend__msprof-analyze/test.csv", "kernel_details", 8, NULL, 0},
};

static fp_profile *load(const char *rel)
{
    g_autofree char *path = g_build_filename(DATA, rel, NULL);
    g_autoptr(GError) err = NULL;
    fp_profile *p = fp_profile_load(path, &err);
    if (!p)
        fprintf(stderr, "\n  %s\n", err->message);
    return p;
}

static void test_real_files(void)
{
    CU_ASSERT_EQUAL(G_N_ELEMENTS(real_files), 82);
    for (size_t i = 0; i < G_N_ELEMENTS(real_files); i++) {
        g_autoptr(fp_profile) p = load(real_files[i].file);
        CU_ASSERT_PTR_NOT_NULL(p);
        if (!p)
            continue;
        if (p->records != real_files[i].rows || strcmp(fp_prof_format_name(p->format), real_files[i].format) != 0)
            fprintf(stderr, "\n  %s: %s %" G_GUINT64_FORMAT " rows, expected %s %" G_GUINT64_FORMAT, real_files[i].file,
                    fp_prof_format_name(p->format), p->records, real_files[i].format, real_files[i].rows);
        CU_ASSERT_EQUAL(p->records, real_files[i].rows);
        CU_ASSERT_STRING_EQUAL(fp_prof_format_name(p->format), real_files[i].format);
        if (p->format == FP_PROF_FUSION_RESULT) {
            CU_ASSERT_STRING_EQUAL(p->layout, real_files[i].layout);
            CU_ASSERT_EQUAL(p->graphs, real_files[i].graphs);
            CU_ASSERT_EQUAL(p->kernels->len, 0);
            uint64_t graphs = 0;
            for (guint j = 0; j < p->passes->len; j++)
                graphs += fp_profile_pass(p, j)->graphs;
            CU_ASSERT_EQUAL(graphs, p->records); /* every entry counted once */
        } else {
            CU_ASSERT_EQUAL(p->kernels->len, p->records);
            CU_ASSERT_EQUAL(p->passes->len, 0);
        }
    }
}

/* A level1 kernel_details row, compared with the text of the file: quoted shapes, a start time
 * with a trailing tab, CRLF line ends. */
static void test_kernel_details_fields(void)
{
    g_autoptr(fp_profile) p = load("Ascend__msinsight/level1__rank0_ascend_pt__kernel_details.csv");
    CU_ASSERT_FATAL(p != NULL);
    const fp_prof_kernel *k = fp_profile_kernel(p, 0);
    CU_ASSERT_STRING_EQUAL(k->name, "trans_TransData_0");
    CU_ASSERT_STRING_EQUAL(k->op_type, "TransData");
    CU_ASSERT_STRING_EQUAL(k->core, "AI_VECTOR_CORE");
    CU_ASSERT_DOUBLE_EQUAL(k->dur_us, 53.741, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(k->start_us, 1736408883704643.212, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(k->wait_us, 0, 1e-9);
    CU_ASSERT_EQUAL(k->step, 50);
    CU_ASSERT_EQUAL(k->line, 2);
    CU_ASSERT_EQUAL_FATAL(k->n_inputs, 1);
    CU_ASSERT_EQUAL_FATAL(k->inputs[0].rank, 4);
    int64_t in[] = {32, 3, 224, 224};
    CU_ASSERT(memcmp(k->inputs[0].dims, in, sizeof in) == 0);
    CU_ASSERT_STRING_EQUAL(k->inputs[0].dtype, "FLOAT");
    CU_ASSERT_EQUAL(k->inputs[0].dt, FP_DT_FLOAT);
    CU_ASSERT_STRING_EQUAL(k->inputs[0].layout, "NCHW");
    CU_ASSERT_EQUAL_FATAL(k->n_outputs, 1);
    CU_ASSERT_EQUAL_FATAL(k->outputs[0].rank, 5);
    CU_ASSERT_EQUAL(k->outputs[0].dims[4], 8);
    CU_ASSERT_STRING_EQUAL(k->outputs[0].layout, "NC1HWC0");
    CU_ASSERT_EQUAL(p->steps, 1);
    /* a repeated kernel name finds every row */
    const GPtrArray *same = fp_profile_find(p, "trans_TransData_0");
    CU_ASSERT_FATAL(same != NULL);
    CU_ASSERT_PTR_EQUAL(same->pdata[0], k);
    CU_ASSERT_PTR_NULL(fp_profile_find(p, "no such kernel"));
    /* level0: 8 columns, no shapes, Type N/A */
    g_autoptr(fp_profile) l0 = load("Ascend__msinsight/level0__rank0_ascend_pt__kernel_details.csv");
    CU_ASSERT_FATAL(l0 != NULL);
    const fp_prof_kernel *k0 = fp_profile_kernel(l0, 2);
    CU_ASSERT_STRING_EQUAL(k0->name, "Conv2D1");
    CU_ASSERT_PTR_NULL(k0->op_type);
    CU_ASSERT_EQUAL(k0->n_inputs, 0);
    CU_ASSERT_DOUBLE_EQUAL(k0->dur_us, 315.746, 1e-9);
}

/* One run of an MLP on Ascend, written three ways by the profiler: kernel_details,
 * op_summary and op_statistic must agree on time and calls per op type. */
static void test_three_views_agree(void)
{
    g_autoptr(fp_profile) kd = load("hicann__oam-tools/kernel_details.csv");
    g_autoptr(fp_profile) os = load("hicann__oam-tools/op_summary_20260601142441.csv");
    g_autoptr(fp_profile) st = load("hicann__oam-tools/op_statistic.csv");
    CU_ASSERT_FATAL(kd && os && st);
    guint n_kd = 0, n_st = 0, n_os = 0;
    g_autofree fp_prof_group *gk = fp_profile_group(kd, FP_PROF_BY_OP_TYPE, &n_kd);
    g_autofree fp_prof_group *go = fp_profile_group(os, FP_PROF_BY_OP_TYPE, &n_os);
    g_autofree fp_prof_group *gs = fp_profile_group(st, FP_PROF_BY_OP_TYPE, &n_st);
    CU_ASSERT_EQUAL_FATAL(n_kd, n_st);
    CU_ASSERT_EQUAL_FATAL(n_os, n_st);
    for (guint i = 0; i < n_st; i++) {
        CU_ASSERT_STRING_EQUAL(gk[i].key, gs[i].key);
        CU_ASSERT_STRING_EQUAL(go[i].key, gs[i].key);
        CU_ASSERT_DOUBLE_EQUAL(gk[i].total_us, gs[i].total_us, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(go[i].total_us, gs[i].total_us, 1e-6);
        CU_ASSERT_EQUAL(gk[i].calls, gs[i].calls); /* rows vs the Count column */
    }
    CU_ASSERT_DOUBLE_EQUAL(kd->total_us, st->total_us, 1e-6);
    guint n_core = 0;
    g_autofree fp_prof_group *cores = fp_profile_group(kd, FP_PROF_BY_CORE, &n_core);
    double sum = 0;
    for (guint i = 0; i < n_core; i++)
        sum += cores[i].total_us;
    CU_ASSERT_DOUBLE_EQUAL(sum, kd->total_us, 1e-6);
}

/* A row with one field too few (real: op_summary_1.csv line 17) is read with a warning. */
static void test_short_row_warns(void)
{
    g_autoptr(fp_profile) p = load("Ascend__msinsight/op_summary_1.csv");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_EQUAL_FATAL(p->warnings->len, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(p->warnings->pdata[0], "line 17"));
    const fp_prof_kernel *k = fp_profile_kernel(p, 15);
    CU_ASSERT_EQUAL(k->line, 17);
    CU_ASSERT_EQUAL(k->n_inputs, 0);
}

static void test_fusion_result(void)
{
    g_autoptr(fp_profile) p = load("Ascend__samples/model__fusion_result.json");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_EQUAL_FATAL(p->passes->len, 5);
    const fp_prof_pass *ub = fp_profile_pass(p, 4);
    CU_ASSERT_STRING_EQUAL(ub->name, "TbeCommonRules0FusionPass");
    CU_ASSERT_EQUAL(ub->kind, FP_PROF_UB_FUSION);
    CU_ASSERT_EQUAL(ub->match_times, 2);
    CU_ASSERT_EQUAL(ub->effect_times, 2);
    const fp_prof_pass *g = fp_profile_pass(p, 3);
    CU_ASSERT_STRING_EQUAL(g->name, "TransdataCastFusionPass");
    CU_ASSERT_EQUAL(g->kind, FP_PROF_GRAPH_FUSION);
    CU_ASSERT_EQUAL(g->match_times, 5);
    CU_ASSERT_EQUAL(g->effect_times, 0);

    /* concatenated objects: a pass named in 9 of the 11 graphs, once each, matched once each */
    g_autoptr(fp_profile) c = load("Ascend__modelzoo/simple__fusion_result.json");
    CU_ASSERT_FATAL(c != NULL);
    g_autofree char *path = g_build_filename(DATA, "Ascend__modelzoo/simple__fusion_result.json", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    guint named = 0;
    for (const char *s = text; (s = strstr(s, "\"ConvToFullyConnectionFusionPass\"")); s++)
        named++;
    const fp_prof_pass *cf = NULL;
    for (guint i = 0; i < c->passes->len; i++)
        if (strcmp(fp_profile_pass(c, i)->name, "ConvToFullyConnectionFusionPass") == 0)
            cf = fp_profile_pass(c, i);
    CU_ASSERT_FATAL(cf != NULL);
    CU_ASSERT_EQUAL(cf->graphs, named);
    CU_ASSERT_EQUAL(cf->match_times, named);

    /* counts summed over graphs; repository_hit_times kept when present; integers accepted */
    const char *two = "[{\"graph_fusion\":{\"A\":{\"match_times\":\"2\",\"effect_times\":\"1\","
                      "\"repository_hit_times\":\"3\"}},\"session_and_graph_id\":\"0_0\"},"
                      "{\"graph_fusion\":{\"A\":{\"match_times\":4,\"effect_times\":0}},"
                      "\"ub_fusion\":{\"A\":{\"match_times\":\"1\",\"effect_times\":\"1\"}}}]";
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) r = fp_profile_load_data("two.json", two, strlen(two), &err);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_STRING_EQUAL(r->layout, "list");
    CU_ASSERT_EQUAL(r->graphs, 2);
    CU_ASSERT_EQUAL(r->records, 3);
    CU_ASSERT_EQUAL_FATAL(r->passes->len, 2);
    const fp_prof_pass *a = fp_profile_pass(r, 0);
    CU_ASSERT_EQUAL(a->kind, FP_PROF_GRAPH_FUSION);
    CU_ASSERT_EQUAL(a->match_times, 6);
    CU_ASSERT_EQUAL(a->effect_times, 1);
    CU_ASSERT_EQUAL(a->repository_hit_times, 3);
    CU_ASSERT_EQUAL(a->graphs, 2);
    CU_ASSERT_EQUAL(fp_profile_pass(r, 1)->kind, FP_PROF_UB_FUSION);
}

/* ---- ONNX Runtime ---- */

typedef struct {
    guint nodes;
    double total;
    guint runs;
} ort_expect;

/* Reads the events again, plainly: runs are model_run spans; the first of several is warm-up;
 * a kernel inside another kernel's span is not added; time per run = sum / measured runs. */
static ort_expect ort_by_hand(const char *path)
{
    ort_expect x = {0};
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_file(parser, path, NULL));
    JsonArray *a = json_node_get_array(json_parser_get_root(parser));
    double first_run = INFINITY, second_run = INFINITY;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        if (strcmp(json_object_get_string_member(o, "name"), "model_run") == 0) {
            double ts = (double)json_object_get_int_member(o, "ts");
            x.runs++;
            if (ts < first_run) {
                second_run = first_run;
                first_run = ts;
            } else if (ts < second_run) {
                second_run = ts;
            }
        }
    }
    double from = x.runs >= 2 ? second_run : -INFINITY;
    guint measured = x.runs >= 2 ? x.runs - 1 : 1;
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        const char *name = json_object_get_string_member(o, "name");
        if (strcmp(json_object_get_string_member(o, "cat"), "Node") != 0 || !g_str_has_suffix(name, "_kernel_time"))
            continue;
        double ts = (double)json_object_get_int_member(o, "ts"), dur = (double)json_object_get_int_member(o, "dur");
        if (ts < from)
            continue;
        g_hash_table_add(names, (gpointer)name);
        bool inside = false;
        for (guint j = 0; j < json_array_get_length(a) && !inside; j++) {
            JsonObject *q = json_array_get_object_element(a, j);
            const char *qn = json_object_get_string_member(q, "name");
            double qts = (double)json_object_get_int_member(q, "ts"), qd = (double)json_object_get_int_member(q, "dur");
            inside = j != i && g_str_has_suffix(qn, "_kernel_time") && qts <= ts && ts + dur <= qts + qd &&
                     (qd > dur || qts < ts);
        }
        if (!inside)
            x.total += dur;
    }
    x.nodes = g_hash_table_size(names);
    x.total /= measured;
    return x;
}

static uint64_t model_nodes(const char *model)
{
    g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "models", model, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    CU_ASSERT_FATAL(m != NULL);
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    return st.nodes;
}

static void test_ort_profiles(void)
{
    static const struct {
        const char *model;
        int untaken; /* nodes never run (the If branch not taken) */
    } models[] = {{"eps_story", 0}, {"resnet_tiny", 0}, {"transformer_block", 0}, {"if_subgraph", 1}};
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        g_autofree char *model = g_strdup_printf("%s.onnx", models[i].model);
        uint64_t ir_nodes = model_nodes(model);
        guint nodes[2] = {0};
        for (int level = 0; level < 2; level++) {
            g_autofree char *rel = g_strdup_printf("ort/%s.%s.json", models[i].model, level ? "extended" : "disabled");
            g_autofree char *path = g_build_filename(DATA, rel, NULL);
            g_autoptr(fp_profile) p = load(rel);
            CU_ASSERT_FATAL(p != NULL);
            ort_expect x = ort_by_hand(path);
            CU_ASSERT_EQUAL(p->format, FP_PROF_ORT);
            CU_ASSERT_EQUAL(p->runs, x.runs);
            CU_ASSERT_EQUAL(p->warmup_runs, 1);
            CU_ASSERT_EQUAL(p->kernels->len, x.nodes);
            CU_ASSERT_DOUBLE_EQUAL(p->total_us, x.total, 1e-6);
            CU_ASSERT_EQUAL(p->records, (uint64_t)x.nodes * x.runs); /* every node once per run */
            nodes[level] = p->kernels->len;
            for (guint k = 0; k < p->kernels->len; k++) {
                const fp_prof_kernel *pk = fp_profile_kernel(p, k);
                CU_ASSERT_PTR_NOT_NULL(pk->op_type);
                CU_ASSERT_STRING_EQUAL(pk->core, "CPUExecutionProvider");
                CU_ASSERT_EQUAL(pk->samples, x.runs - 1);
                CU_ASSERT_FALSE(g_str_has_suffix(pk->name, "_kernel_time"));
            }
        }
        /* without optimization ORT runs every node of the model once */
        CU_ASSERT_EQUAL(nodes[0], ir_nodes - (uint64_t)models[i].untaken);
        if (models[i].untaken == 0)
            CU_ASSERT(nodes[1] < nodes[0]); /* extended fuses */
    }
    /* eps_story, extended: Conv+BN+Relu became one FusedConv per block, with shapes */
    g_autoptr(fp_profile) p = load("ort/eps_story.extended.json");
    CU_ASSERT_FATAL(p != NULL);
    const GPtrArray *c = fp_profile_find(p, "block1.conv");
    CU_ASSERT_FATAL(c != NULL && c->len == 1);
    const fp_prof_kernel *k = c->pdata[0];
    CU_ASSERT_STRING_EQUAL(k->op_type, "FusedConv");
    CU_ASSERT_EQUAL_FATAL(k->n_inputs, 3);
    int64_t x[] = {1, 3, 32, 32};
    CU_ASSERT_EQUAL_FATAL(k->inputs[0].rank, 4);
    CU_ASSERT(memcmp(k->inputs[0].dims, x, sizeof x) == 0);
    CU_ASSERT_EQUAL(k->inputs[0].dt, FP_DT_FLOAT);
    /* if_subgraph: the branch's node runs inside the If: nested, not counted twice */
    g_autoptr(fp_profile) q = load("ort/if_subgraph.disabled.json");
    CU_ASSERT_FATAL(q != NULL);
    const GPtrArray *neg = fp_profile_find(q, "then.neg");
    CU_ASSERT_FATAL(neg != NULL);
    CU_ASSERT(((const fp_prof_kernel *)neg->pdata[0])->flags & FP_PROF_K_NESTED);
}

static fp_profile *load_text(const char *text, GError **err)
{
    return fp_profile_load_data("mem.json", text, strlen(text), err);
}

/* Warm-up and averaging on a small made-up ORT profile with known numbers. */
static void test_ort_warmup(void)
{
    const char *three =
        "[{\"cat\":\"Session\",\"name\":\"session_initialization\",\"ts\":0,\"dur\":50,\"args\":{}},"
        "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":100,\"dur\":100,\"args\":{\"op_name\":\"Conv\"}},"
        "{\"cat\":\"Node\",\"name\":\"b_kernel_time\",\"ts\":200,\"dur\":50,\"args\":{\"op_name\":\"Relu\"}},"
        "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":99,\"dur\":200},"
        "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":400,\"dur\":10,\"args\":{\"op_name\":\"Conv\"}},"
        "{\"cat\":\"Node\",\"name\":\"b_kernel_time\",\"ts\":410,\"dur\":6,\"args\":{\"op_name\":\"Relu\"}},"
        "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":399,\"dur\":20},"
        "{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":500,\"dur\":14,\"args\":{\"op_name\":\"Conv\"}},"
        "{\"cat\":\"Node\",\"name\":\"b_kernel_time\",\"ts\":514,\"dur\":4,\"args\":{\"op_name\":\"Relu\"}},"
        "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":499,\"dur\":20}]";
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = load_text(three, &err);
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_EQUAL(p->runs, 3);
    CU_ASSERT_EQUAL(p->warmup_runs, 1);
    CU_ASSERT_EQUAL(p->records, 6);
    CU_ASSERT_EQUAL_FATAL(p->kernels->len, 2);
    CU_ASSERT_STRING_EQUAL(fp_profile_kernel(p, 0)->name, "a");
    CU_ASSERT_DOUBLE_EQUAL(fp_profile_kernel(p, 0)->dur_us, 12, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(fp_profile_kernel(p, 1)->dur_us, 5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p->total_us, 17, 1e-9);
    CU_ASSERT_EQUAL(fp_profile_kernel(p, 0)->samples, 2);
    CU_ASSERT_EQUAL(fp_profile_kernel(p, 0)->count, 1);
    CU_ASSERT_EQUAL(fp_profile_kernel(p, 0)->line, 5); /* first measured event */
    /* one run only: nothing to skip */
    const char *one = "[{\"cat\":\"Node\",\"name\":\"a_kernel_time\",\"ts\":100,\"dur\":7,\"args\":{}},"
                      "{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":99,\"dur\":20}]";
    g_autoptr(fp_profile) q = load_text(one, &err);
    CU_ASSERT_FATAL(q != NULL);
    CU_ASSERT_EQUAL(q->warmup_runs, 0);
    CU_ASSERT_DOUBLE_EQUAL(q->total_us, 7, 1e-9);
    CU_ASSERT_PTR_NULL(fp_profile_kernel(q, 0)->op_type);
}

/* ---- Chrome trace ---- */

static void test_chrome_trace(void)
{
    g_autoptr(fp_profile) p = load("trace/conv_bn_relu.pt.trace.json");
    CU_ASSERT_FATAL(p != NULL);
    CU_ASSERT_EQUAL(p->format, FP_PROF_CHROME_TRACE);
    /* 1 host-to-device copy + 2 steps x (2 conv kernels + batch norm + relu) */
    CU_ASSERT_EQUAL(p->records, 9);
    CU_ASSERT_EQUAL(p->runs, 2);
    CU_ASSERT_EQUAL(p->steps, 2);
    const fp_prof_kernel *copy = fp_profile_kernel(p, 0);
    CU_ASSERT_STRING_EQUAL(copy->core, "gpu_memcpy");
    CU_ASSERT_STRING_EQUAL(copy->op_type, "aten::copy_");
    CU_ASSERT_EQUAL(copy->step, -1);
    const fp_prof_kernel *gemm = fp_profile_kernel(p, 2);
    CU_ASSERT(g_str_has_prefix(gemm->name, "sm80_xmma_fprop"));
    CU_ASSERT_STRING_EQUAL(gemm->op_type, "aten::cudnn_convolution");
    CU_ASSERT_STRING_EQUAL(gemm->core, "kernel");
    CU_ASSERT_EQUAL(gemm->step, 1);
    CU_ASSERT_EQUAL_FATAL(gemm->n_inputs, 2); /* the tensors among the op's arguments */
    int64_t w[] = {64, 3, 3, 3};
    CU_ASSERT(memcmp(gemm->inputs[1].dims, w, sizeof w) == 0);
    CU_ASSERT_EQUAL(fp_profile_kernel(p, 8)->step, 2);
    guint n = 0;
    g_autofree fp_prof_group *g = fp_profile_group(p, FP_PROF_BY_OP_TYPE, &n);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_STRING_EQUAL(g[0].key, "aten::cudnn_convolution");
    CU_ASSERT_EQUAL(g[0].kernels, 4);

    /* CPU only: the outermost operators are the kernels */
    const char *cpu =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":30,"
        "\"args\":{\"Input Dims\":[[2,8],[4,8],[4]],\"Input type\":[\"float\",\"float\",\"float\"]}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":12,\"dur\":20,\"args\":{}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":45,\"dur\":5,\"args\":{}},"
        "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":46}]}";
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) c = load_text(cpu, &err);
    CU_ASSERT_FATAL(c != NULL);
    CU_ASSERT_EQUAL_FATAL(c->kernels->len, 2);
    CU_ASSERT_STRING_EQUAL(fp_profile_kernel(c, 0)->op_type, "aten::linear");
    CU_ASSERT_EQUAL(fp_profile_kernel(c, 0)->n_inputs, 3);
    CU_ASSERT_DOUBLE_EQUAL(c->total_us, 35, 1e-9);
}

/* ---- CSV reader and tensor cells ---- */

static void test_csv_reader(void)
{
    const char text[] = "\xEF\xBB\xBF"
                        "a,b,c\r\n"
                        "\"x,y\",\"say \"\"hi\"\"\",\"1.5\t\"\r\n"
                        "\r\n"
                        "\"two\nlines\",,last\n"
                        "tail";
    fp_csv c;
    fp_csv_init(&c, text, sizeof text - 1);
    g_autoptr(GPtrArray) f = g_ptr_array_new_with_free_func(g_free);
    uint32_t line = 0;
    g_autoptr(GError) err = NULL;
    CU_ASSERT_EQUAL_FATAL(fp_csv_next(&c, f, &line, &err), 1);
    CU_ASSERT_EQUAL(line, 1);
    CU_ASSERT_STRING_EQUAL(f->pdata[0], "a");
    CU_ASSERT_EQUAL_FATAL(fp_csv_next(&c, f, &line, &err), 1);
    CU_ASSERT_EQUAL(line, 2);
    CU_ASSERT_EQUAL_FATAL(f->len, 3);
    CU_ASSERT_STRING_EQUAL(f->pdata[0], "x,y");
    CU_ASSERT_STRING_EQUAL(f->pdata[1], "say \"hi\"");
    CU_ASSERT_STRING_EQUAL(f->pdata[2], "1.5\t");
    double v = 0;
    CU_ASSERT(fp_prof_parse_double(f->pdata[2], &v) && v == 1.5);
    CU_ASSERT_EQUAL_FATAL(fp_csv_next(&c, f, &line, &err), 1);
    CU_ASSERT_EQUAL(line, 4); /* the empty line is skipped */
    CU_ASSERT_STRING_EQUAL(f->pdata[0], "two\nlines");
    CU_ASSERT_STRING_EQUAL(f->pdata[1], "");
    CU_ASSERT_EQUAL_FATAL(fp_csv_next(&c, f, &line, &err), 1);
    CU_ASSERT_EQUAL(line, 6);
    CU_ASSERT_STRING_EQUAL(f->pdata[0], "tail");
    CU_ASSERT_EQUAL(fp_csv_next(&c, f, &line, &err), 0);

    const char bad[] = "a,b\n1,\"open\n";
    fp_csv_init(&c, bad, sizeof bad - 1);
    CU_ASSERT_EQUAL(fp_csv_next(&c, f, &line, &err), 1);
    CU_ASSERT_EQUAL(fp_csv_next(&c, f, &line, &err), -1);
    CU_ASSERT_FATAL(err != NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "line 2, column 2"));
    CU_ASSERT_FALSE(fp_prof_parse_double("12abc", &v));
    CU_ASSERT_FALSE(fp_prof_parse_double("nan", &v));
}

static void test_ascend_tensors(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = load_text("[]", &err); /* any profile: an arena to parse into */
    CU_ASSERT_FATAL(p != NULL);
    fp_prof_tensor *t = NULL;
    uint32_t n = 0;
    CU_ASSERT_FATAL(fp_prof_ascend_tensors(p, "\"32,1,224,224,8;121,4,16,8;64\"", "FLOAT;FLOAT16;DT_BF16",
                                           "NC1HWC0;FRACTAL_Z;ND", &t, &n, &err));
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_EQUAL(t[0].rank, 5);
    CU_ASSERT_EQUAL(t[1].dims[0], 121);
    CU_ASSERT_EQUAL(t[2].rank, 1);
    CU_ASSERT_EQUAL(t[2].dims[0], 64);
    CU_ASSERT_EQUAL(t[0].dt, FP_DT_FLOAT);
    CU_ASSERT_EQUAL(t[1].dt, FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(t[2].dt, FP_DT_BFLOAT16);
    CU_ASSERT_STRING_EQUAL(t[1].layout, "FRACTAL_Z");
    /* an empty entry is a scalar; more dtypes than shapes leaves the shape unknown */
    CU_ASSERT_FATAL(fp_prof_ascend_tensors(p, "\"4096;\"", "INT64;INT64;BOOL", NULL, &t, &n, &err));
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_EQUAL(t[1].rank, 0);
    CU_ASSERT_EQUAL(t[2].rank, -1);
    CU_ASSERT_EQUAL(t[2].dt, FP_DT_BOOL);
    CU_ASSERT_FATAL(fp_prof_ascend_tensors(p, "N/A", "N/A", "N/A", &t, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_FALSE(fp_prof_ascend_tensors(p, "\"3,x\"", NULL, NULL, &t, &n, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "dim 2 'x'"));
}

/* ---- CLI ---- */

static void test_cli_text_json(void)
{
    const char *csv = DATA "/hicann__oam-tools/kernel_details.csv";
    tu_run_result r = tu_run((const char *[]){"profile", csv, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.err, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kernel_details"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MatMulV2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "top 10 kernels"));
    tu_run_clear(&r);

    r = tu_run((const char *[]){"profile", "--format", "json", "--top", "3", csv, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(jp, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(jp));
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "schema"), 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "kernel_details");
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "kernels"), 35);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(o, "total_us"), 174.32, 1e-6);
    JsonArray *by = json_object_get_array_member(o, "by_type");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(by), 2);
    JsonObject *first = json_array_get_object_element(by, 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(first, "op_type"), "MatMulV2");
    CU_ASSERT_EQUAL(json_object_get_int_member(first, "calls"), 20);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "top")), 3);
    JsonObject *top = json_array_get_object_element(json_object_get_array_member(o, "top"), 0);
    JsonArray *ins = json_object_get_array_member(top, "inputs");
    CU_ASSERT_EQUAL(json_array_get_length(ins), 3);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "passes")), 0);
    tu_run_clear(&r);

    const char *fr = DATA "/Ascend__samples/model__fusion_result.json";
    r = tu_run((const char *[]){"profile", "-f", "json", fr, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) jf = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(jf, r.out, -1, NULL));
    o = json_node_get_object(json_parser_get_root(jf));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "fusion_result");
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "kernels"), 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "pass_entries"), 5);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "graphs"), 1);
    JsonArray *passes = json_object_get_array_member(o, "passes");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(passes), 5);
    JsonObject *p0 = json_array_get_object_element(passes, 0); /* most effective first */
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(p0, "name"), "TbeCommonRules0FusionPass");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(p0, "kind"), "ub_fusion");
    CU_ASSERT_EQUAL(json_object_get_int_member(p0, "match_times"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(p0, "effect_times"), 2);
    tu_run_clear(&r);

    r = tu_run((const char *[]){"profile", fr, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "TransdataCastFusionPass"));
    tu_run_clear(&r);

    r = tu_run((const char *[]){"profile", DATA "/ort/resnet_tiny.extended.json", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "warm-up"));
    tu_run_clear(&r);

    r = tu_run((const char *[]){"--help", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "profile"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"profile", "--top", "-1", csv, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
    r = tu_run((const char *[]){"profile", "-f", "xml", csv, NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
}

/* Writes `text` to a temp file, runs `fuseplan profile` on it: exit 2, one line on stderr naming
 * the file and containing `needle`, nothing on stdout. */
static void expect_bad(const char *text, gssize len, const char *suffix, const char *needle)
{
    g_autofree char *path = tu_write_temp(text, len < 0 ? strlen(text) : (size_t)len, suffix);
    tu_expect_cli_error((const char *[]){"profile", path, NULL}, path, needle);
    g_unlink(path);
}

static void test_cli_bad_inputs(void)
{
    /* truncated ORT profile (a real one cut in half) */
    g_autofree char *ort = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(DATA "/ort/eps_story.disabled.json", &ort, &len, NULL));
    expect_bad(ort, (gssize)(len / 2), ".json", "invalid JSON");
    expect_bad(ort, (gssize)(len / 2), ".json", "line ");
    /* wrong types */
    expect_bad("[{\"cat\":\"Session\",\"name\":\"session_initialization\",\"ts\":0,\"dur\":1},"
               "{\"cat\":\"Node\",\"name\":\"x_kernel_time\",\"ts\":5,\"dur\":\"7\"}]",
               -1, ".json", "$[1].dur: expected a number");
    expect_bad("[{\"cat\":\"Node\",\"name\":\"x_kernel_time\",\"ts\":5,\"dur\":7,"
               "\"args\":{\"input_type_shape\":[{\"float\":[1,\"a\"]}]}}]",
               -1, ".json", "$[0].args.input_type_shape[0].float[1]: expected an integer");
    expect_bad("{\"graph_fusion\":{\"XPass\":{\"match_times\":\"x\",\"effect_times\":\"0\"}},"
               "\"session_and_graph_id\":\"0_0\"}",
               -1, ".json", "$.graph_fusion.XPass.match_times: expected a count, got 'x'");
    expect_bad("{\"session_and_graph_id_0_1\":{\"ub_fusion\":{\"YPass\":{\"match_times\":\"1\"}}}}", -1, ".json",
               "$.session_and_graph_id_0_1.ub_fusion.YPass.effect_times: missing");
    expect_bad("[{\"graph_fusion\":{}},{\"graph_fusion\":[]}]", -1, ".json",
               "$[1].graph_fusion: expected an object of passes");
    expect_bad(
        "{\"graphId\":\"1\",\"graph_fusion\":{}}\n{\"graphId\":\"2\",\n\"graph_fusion\":{\"Z\":{\"match_times\":true,"
        "\"effect_times\":\"1\"}}}",
        -1, ".json", "object 2 (line 2): $.graph_fusion.Z.match_times: expected a count, got a boolean");
    expect_bad("{\"graphId\":\"1\",\"graph_fusion\":{}}\n{\"graphId\":\"2\",\n\"graph_fusion\":{", -1, ".json",
               "line 3");
    expect_bad("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"dur\":3}]}", -1, ".json",
               "$.traceEvents[0].ts: missing");
    expect_bad("{\"a\":1} trailing", -1, ".json", "line 1, column 9: unexpected 't'");
    g_autofree char *deep = g_strnfill(100000, '[');
    expect_bad(deep, -1, ".json", "nested deeper than");
    /* CSV: missing column, wrong type, short row, unterminated quote, unknown header */
    expect_bad("Step Id,Name,Type,Accelerator Core,Start Time(us)\n1,a,Add,AI_CORE,5\n", -1, ".csv",
               "line 1: kernel_details header: missing column 'Duration(us)'");
    expect_bad(
        "Name,Type,Accelerator Core,Start Time(us),Duration(us)\r\na,Add,AI_CORE,5,1.5\r\nb,Mul,AI_CORE,7,abc\r\n", -1,
        ".csv", "line 3, column 5 'Duration(us)': expected a number, got 'abc'");
    expect_bad("Op Name,OP Type,Task Type,Task Duration(us)\na,Add,AI_CORE,-2\n", -1, ".csv",
               "line 2, column 4 'Task Duration(us)': expected a duration of 0 or more, got '-2'");
    expect_bad("Name,Type,Accelerator Core,Start Time(us),Duration(us)\na,Add\n", -1, ".csv",
               "line 2: row has 2 fields but column 5 'Duration(us)' is required");
    expect_bad("Name,Type,Duration(us),Input Shapes\na,Add,1,\"\"\"2,3;x\"\"\"\n", -1, ".csv",
               "line 2, column 4 'Input Shapes'");
    expect_bad("Name,Type,Duration(us)\na,\"Add,1\n", -1, ".csv", "line 2, column 2: quoted field not closed");
    expect_bad("Device_id,OP Type,Core Type,Count,Total Time(us)\n0,Add,AI_CORE,2.5,3\n", -1, ".csv",
               "line 2, column 4 'Count': expected a count, got '2.5'");
    expect_bad("foo,bar\n1,2\n", -1, ".csv", "unrecognized CSV header");
    expect_bad("hello world\n", -1, ".txt", "unrecognized format");
    expect_bad("", 0, ".json", "empty file");
    expect_bad("\"b\",1\n", -1, ".csv", "unrecognized CSV header");
    /* missing file */
    tu_run_result r = tu_run((const char *[]){"profile", "/nonexistent/op_summary.csv", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "/nonexistent/op_summary.csv: cannot open"));
    tu_run_clear(&r);
}

static void test_cli_output_file(void)
{
    g_autofree char *out = tu_write_temp("old", 3, ".txt");
    const char *fr = DATA "/Ascend__modelzoo/simple__fusion_result.json";
    tu_run_result r = tu_run((const char *[]){"profile", "-o", out, fr, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    tu_run_clear(&r);
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(out, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "concatenated"));
    /* a failing run leaves the previous output intact */
    r = tu_run((const char *[]){"profile", "-o", out, "/nonexistent.json", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_clear(&r);
    g_autofree char *again = NULL;
    CU_ASSERT(g_file_get_contents(out, &again, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(again, text);
    g_unlink(out);
}

FP_TEST_SUITE(register_profile)
{
    CU_pSuite s = CU_add_suite("profile", NULL, NULL);
    CU_add_test(s, "real_files", test_real_files);
    CU_add_test(s, "kernel_details_fields", test_kernel_details_fields);
    CU_add_test(s, "three_views_agree", test_three_views_agree);
    CU_add_test(s, "short_row_warns", test_short_row_warns);
    CU_add_test(s, "fusion_result", test_fusion_result);
    CU_add_test(s, "ort_profiles", test_ort_profiles);
    CU_add_test(s, "ort_warmup", test_ort_warmup);
    CU_add_test(s, "chrome_trace", test_chrome_trace);
    CU_add_test(s, "csv_reader", test_csv_reader);
    CU_add_test(s, "ascend_tensors", test_ascend_tensors);
    CU_add_test(s, "cli_text_json", test_cli_text_json);
    CU_add_test(s, "cli_bad_inputs", test_cli_bad_inputs);
    CU_add_test(s, "cli_output_file", test_cli_output_file);
}
