/* test_analysis.c - analysis suite: fp_analysis_run binds, runs the pipeline and the headroom into
 * one result that headroom leaves as the pipeline made it; bindings and their errors
 * (analysis/bind.c); bad devices, targets, specs and unknown ops name what is wrong. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/training.h"
#include "analysis/bind.h"
#include "frontends/load.h"
#include "onnx.pb-c.h"
#include "tmodel.h"
#include "tutil.h"

#define SAMPLE FP_SOURCE_DIR "/models/resnet_tiny.onnx"

/* The sample with no option: batch 1 and said so, every stage filled, the final plan and cost,
 * the headroom found, no original graph. */
static void test_run_defaults(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_STRING_EQUAL(a->device->name, "cpu-avx2");
    CU_ASSERT_STRING_EQUAL(a->target->name, "ort-cpu-all"); /* cpu-avx2's ort-cpu: ORT's default level */
    CU_ASSERT_EQUAL(a->batch, 1);
    CU_ASSERT_PTR_NOT_NULL(a->batch_note);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->batch_note, "bound to 1"));
    CU_ASSERT(a->res.stages[1].ops < a->res.stages[0].ops);
    CU_ASSERT(a->res.stages[2].planned);
    CU_ASSERT_EQUAL(a->res.stages[2].activation_bytes, a->res.memory->arena);
    CU_ASSERT(a->res.stages[2].latency_s == a->res.cost->total_s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom);
    CU_ASSERT(a->headroom->max_batch > 1);
    CU_ASSERT_PTR_NULL(a->headroom_note);
    CU_ASSERT_PTR_NULL(a->original);
    CU_ASSERT_PTR_NULL(a->warning);
}

/* The same model analyzed twice: with the headroom search and without, the results read the same
 * (the search re-infers the model at other batches and must not change what came before it). */
static void test_headroom_keeps_result(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts with = {.headroom = {.on = true}}, without = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &with, &err);
    g_autoptr(fp_analysis) b = fp_analysis_run(SAMPLE, &without, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NULL(b->headroom);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(a->res.stages[i].activation_bytes, b->res.stages[i].activation_bytes);
        CU_ASSERT_EQUAL(a->res.stages[i].ops, b->res.stages[i].ops);
    }
    CU_ASSERT_EQUAL(a->res.memory->arena, b->res.memory->arena);
    CU_ASSERT_EQUAL(a->diag->entries->len, b->diag->entries->len);
    /* every value of the final graph has the pipeline's shape, not that of the last batch the
     * search tried (values fusion left unproduced and unread are no longer part of the graph) */
    CU_ASSERT_EQUAL_FATAL(a->model->main->values->len, b->model->main->values->len);
    guint live = 0, same = 0;
    for (guint i = 0; i < a->model->main->values->len; i++) {
        const fp_value *va = a->model->main->values->pdata[i], *vb = b->model->main->values->pdata[i];
        if (!va->producer && !va->n_uses)
            continue;
        g_autofree char *sa = fp_shape_to_string(&va->shape), *sb = fp_shape_to_string(&vb->shape);
        live++;
        same += strcmp(sa, sb) == 0;
    }
    CU_ASSERT(live > 10);
    CU_ASSERT_EQUAL(same, live);
    const fp_value *in = a->model->main->inputs->pdata[0];
    CU_ASSERT_EQUAL(in->shape.dims[0].value, 1);
}

/* Input specs fix the batch: no headroom, and the note says how to get one; --batch binds it. */
static void test_inputs_and_batch(void)
{
    g_autoptr(GError) err = NULL;
    char *specs[] = {"input:2x3x64x64", NULL};
    fp_analysis_opts o = {.inputs = specs, .headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NULL(a->headroom);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->headroom_note);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->headroom_note, "--input"));
    CU_ASSERT_PTR_NULL(a->batch_note);
    fp_analysis_opts ob = {.batch = 4};
    g_autoptr(fp_analysis) b = fp_analysis_run(SAMPLE, &ob, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(b->batch, 4);
    CU_ASSERT(b->res.stages[0].activation_bytes > a->res.stages[0].activation_bytes); /* 4 > 2 */
}

/* opts.original: the model before fusion is kept, inferred and costed at the same binding. */
static void test_original(void)
{
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.original = true};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->original);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->original_cost);
    CU_ASSERT(a->original->main->nodes->len > a->res.stages[2].ops);
    CU_ASSERT(fabs(a->original_cost->total_s - a->res.stages[0].latency_s) < 1e-12);
}

typedef struct {
    int calls;
    bool fail;
} binder_state;

/* A binder that binds the sample's input at batch 3, or fails. */
static GHashTable *bind_three(fp_model *m, void *data, int64_t *batch, char **note, GError **error)
{
    binder_state *st = data;
    st->calls++;
    if (st->fail) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "binder: nothing to bind");
        return NULL;
    }
    *batch = 3;
    *note = g_strdup("bound by the test");
    return fp_bind_input_shapes(m, NULL, error);
}

/* The caller's binder runs for the final model and the original one, when no input or batch is
 * given; its note and batch are the result's; its error stops the analysis. */
static void test_binder(void)
{
    g_autoptr(GError) err = NULL;
    binder_state st = {0};
    fp_analysis_opts o = {.bind = bind_three, .bind_data = &st, .original = true};
    g_autoptr(fp_analysis) a = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(st.calls, 2);
    CU_ASSERT_EQUAL(a->batch, 3);
    CU_ASSERT_STRING_EQUAL(a->inputs_note, "bound by the test");
    CU_ASSERT_PTR_NULL(a->batch_note);
    o.batch = 2; /* a batch given: the binder is not asked */
    g_autoptr(fp_analysis) b = fp_analysis_run(SAMPLE, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(st.calls, 2);
    o.batch = 0;
    st.fail = true;
    CU_ASSERT_PTR_NULL(fp_analysis_run(SAMPLE, &o, &err));
    tu_expect_error(err, "binder: nothing to bind");
}

/* Each bad option is one error naming it, and no result. */
static void test_bad_options(void)
{
    struct {
        fp_analysis_opts o;
        const char *path, *needle;
    } cases[] = {
        {{.device = "no-such-device"}, SAMPLE, "no-such-device"},
        {{.target = "no-such-target"}, SAMPLE, "no-such-target"},
        {{.inputs = (char *[]){"input:2xAx3", NULL}}, SAMPLE, "input:2xAx3"},
        {{.inputs = (char *[]){"nocolon", NULL}}, SAMPLE, "NAME:DIMS"},
        {{0}, FP_SOURCE_DIR "/models/missing.onnx", "missing.onnx"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        CU_ASSERT_PTR_NULL(fp_analysis_run(cases[i].path, &cases[i].o, &err));
        tu_expect_error(err, cases[i].needle);
    }
}

/* An op type fuseplan does not know: a warning line and an "unknown-op" finding, or with strict an
 * error naming the node. */
static void test_unknown_op(void)
{
    tb *b = tb_new(17);
    int64_t d[] = {1, 4};
    tb_input(b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d);
    tb_output(b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d);
    tb_node(b, "Relu", "r", "x", "t");
    tb_node(b, "NoSuchOp", "odd", "t", "y");
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->warning);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->warning, "NoSuchOp"));
    bool found = false;
    for (guint i = 0; i < a->diag->entries->len; i++)
        found |= strcmp(((fp_diag_entry *)a->diag->entries->pdata[i])->code, "unknown-op") == 0;
    CU_ASSERT(found);
    o.strict = true;
    CU_ASSERT_PTR_NULL(fp_analysis_run(path, &o, &err));
    tu_expect_error(err, "node 'odd'");
    CU_ASSERT(g_error_matches(err, FP_BIND_ERROR, FP_BIND_ERROR_UNKNOWN_OP));
    g_unlink(path);
}

/* fp_bind_symbolic_dims: each symbol once, in input order; NULL for a static model. */
static void test_symbolic_dims(void)
{
    tb *b = tb_new(17);
    int64_t dx[] = {-1, 4}, dy[] = {-1, 4}, ds[] = {2, 4};
    tb_input(b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dx);
    tb_input(b, "z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dy);
    tb_output(b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dx);
    tb_node(b, "Add", "a", "x,z", "y");
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    b = tb_new(17);
    tb_input(b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, ds);
    tb_output(b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, ds);
    tb_node(b, "Relu", "r", "x", "y");
    g_autofree char *fixed = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    g_autoptr(fp_analysis) s = fp_analysis_run(fixed, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(a->batch, 1);
    g_autoptr(fp_model) m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g_autofree char *syms = fp_bind_symbolic_dims(m, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(syms);
    CU_ASSERT_STRING_EQUAL(syms, "N");
    CU_ASSERT_PTR_NULL(s->batch_note);
    CU_ASSERT_EQUAL(s->batch, 0);
    g_unlink(path);
    g_unlink(fixed);
}

/* A decoder-like model in ONNX text: ids [batch_size, sequence_length, 16] and past
 * [batch_size, past_sequence_length, 16] concatenated on the sequence axis, then Relu. Caller
 * unlinks and frees the path. */
static char *decoder_model(void)
{
    const char *text =
        "ir_version: 8\nopset_import { version: 17 }\n"
        "graph { name: 'g'\n"
        "  node { input: ['past', 'ids'] output: 'cat' op_type: 'Concat' name: 'cat'\n"
        "         attribute { name: 'axis' i: 1 type: INT } }\n"
        "  node { input: 'cat' output: 'y' op_type: 'Relu' name: 'relu' }\n"
        "  input { name: 'ids' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'batch_size' }\n"
        "          dim { dim_param: 'sequence_length' } dim { dim_value: 16 } } } } }\n"
        "  input { name: 'past' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'batch_size' }\n"
        "          dim { dim_param: 'past_sequence_length' } dim { dim_value: 16 } } } } }\n"
        "  output { name: 'y' type { tensor_type { elem_type: 1 } } }\n"
        "}\n";
    return tu_write_temp(text, strlen(text), ".onnxtxt");
}

/* The shape of value `name` of a's final graph, as text. Caller frees. */
static char *shape_of(const fp_analysis *a, const char *name)
{
    const fp_value *v = fp_graph_find(a->model->main, name);
    return v ? fp_shape_to_string(&v->shape) : g_strdup("(none)");
}

/* --dim binds each symbol wherever the inputs use it; the batch stays bound to 1 (said, with only
 * the symbols left); a --dim on the batch binds it, and the headroom says to use --batch. */
static void test_dims(void)
{
    g_autofree char *path = decoder_model();
    g_autoptr(GError) err = NULL;
    char *dims[] = {"sequence_length=7", "past_sequence_length=9", NULL};
    fp_analysis_opts o = {.dims = dims, .headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    g_autofree char *cat = shape_of(a, "cat"), *ids = shape_of(a, "ids");
    CU_ASSERT_STRING_EQUAL(cat, "1x16x16");
    CU_ASSERT_STRING_EQUAL(ids, "1x7x16");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->batch_note);
    CU_ASSERT_PTR_NOT_NULL(strstr(a->batch_note, "symbolic input dims: batch_size;"));
    CU_ASSERT_PTR_NOT_NULL(a->headroom);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    g_autofree char *after = shape_of(a, "cat"); /* the headroom search left it as it was */
    CU_ASSERT_STRING_EQUAL(after, "1x16x16");

    char *all[] = {"batch_size=3", "sequence_length=1", "past_sequence_length=4", NULL};
    fp_analysis_opts ob = {.dims = all, .headroom = {.on = true}};
    g_autoptr(fp_analysis) b = fp_analysis_run(path, &ob, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    g_autofree char *bcat = shape_of(b, "cat");
    CU_ASSERT_STRING_EQUAL(bcat, "3x5x16");
    CU_ASSERT_PTR_NULL(b->batch_note);
    CU_ASSERT_PTR_NULL(b->headroom);
    CU_ASSERT_PTR_NOT_NULL(strstr(b->headroom_note, "--batch"));
    g_unlink(path);
}

/* Bad --dim values: not NAME=N, a name no input declares (the error lists the model's symbolic
 * dims), a value an --input shape contradicts. */
static void test_bad_dims(void)
{
    g_autofree char *path = decoder_model();
    struct {
        char *dim;
        char *input;
        const char *needle;
    } cases[] = {
        {"sequence_length", NULL, "expected NAME=N"},
        {"=4", NULL, "expected NAME=N"},
        {"sequence_length=-1", NULL, "'sequence_length=-1'"},
        {"seq=3", NULL, "its symbolic dims: batch_size, sequence_length, past_sequence_length"},
        {"sequence_length=7", "ids:1x5x16", "binds 'sequence_length' to 5"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        char *dims[] = {cases[i].dim, NULL}, *inputs[] = {cases[i].input, NULL};
        fp_analysis_opts o = {.dims = dims, .inputs = cases[i].input ? inputs : NULL};
        CU_ASSERT_PTR_NULL(fp_analysis_run(path, &o, &err));
        tu_expect_error(err, cases[i].needle);
    }
    /* the command line: one line on stderr naming the option, exit 2 */
    const char *args[] = {"report", path, "--dim", "seq=3", NULL};
    tu_expect_cli_error(args, path, "--dim seq");
    const char *bad[] = {"shapes", path, "--dim", "seq", NULL};
    tu_expect_cli_error(bad, NULL, "--dim 'seq'");
    g_unlink(path);
}

/* models/decoder_gqa.onnx, onnxruntime-genai's layout (GroupQueryAttention owns the KV cache),
 * analysed with no option: nothing of unknown size or op type at the default decode step, whose
 * present tensors hold the past and the new token ([1, 2, 2048, 16], as ONNX Runtime returns past +
 * new); `fuseplan report` says nothing is unknown. */
static void test_decoder_gqa(void)
{
    const char *path = FP_SOURCE_DIR "/models/decoder_gqa.onnx";
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {.headroom = {.on = true}};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(a->res.cost->unknown, 0);
    tu_expect_nothing_unknown(a->diag);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->kv);
    CU_ASSERT_EQUAL(a->kv->n_tensors, 4);
    CU_ASSERT_EQUAL(a->kv_bytes, (uint64_t)FP_DECODER_DEFAULT_CONTEXT * a->kv->bytes_per_token);
    const char *presents[] = {"present.0.key", "present.0.value", "present.1.key", "present.1.value"};
    for (size_t i = 0; i < G_N_ELEMENTS(presents); i++) {
        g_autofree char *s = shape_of(a, presents[i]);
        CU_ASSERT_STRING_EQUAL(s, "1x2x2048x16");
    }
    g_autofree char *logits = shape_of(a, "logits");
    CU_ASSERT_STRING_EQUAL(logits, "1x1x128");
    CU_ASSERT_PTR_NOT_NULL(a->headroom);

    tu_run_result r = tu_run((const char *[]){"report", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "unknown"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "unknown"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kv cache 2 layers, K and V of 2 heads x 16"));
    tu_run_clear(&r);
}

/* ATC's precision mode on an Ascend target: force_fp16 (the target's default) plans float32
 * activations and weights in float16 and costs them so; must_keep_origin_dtype keeps float32; a
 * mode not modelled, or one asked of a target without it, is an error naming the option. */
static void test_precision_mode(void)
{
    const char *path = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    g_autoptr(GError) err = NULL;
    fp_analysis_opts f16 = {.device = "ascend910b", .batch = 64},
                     f32 = {.device = "ascend910b", .batch = 64, .precision_mode = "must_keep_origin_dtype"};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &f16, &err);
    g_autoptr(fp_analysis) b = fp_analysis_run(path, &f32, &err);
    CU_ASSERT_FATAL(a && b);
    CU_ASSERT_STRING_EQUAL(a->precision_mode, "force_fp16");
    CU_ASSERT_EQUAL(a->what_if, FP_DT_FLOAT16);
    CU_ASSERT_EQUAL(b->what_if, FP_DT_UNDEFINED);
    /* half, but for the integer shape tensors, the alignment and the input's float16 copy (its Cast) */
    CU_ASSERT(a->res.stages[0].activation_bytes * 2 >= b->res.stages[0].activation_bytes * 99 / 100 &&
              a->res.stages[0].activation_bytes * 2 <= b->res.stages[0].activation_bytes * 105 / 100);
    CU_ASSERT(a->weights.n_changed > 0);
    CU_ASSERT_EQUAL(a->weights.changed_bytes * 2, a->weights.changed_stored); /* every float32 weight in half */
    CU_ASSERT_EQUAL(a->weight_bytes, b->weight_bytes - a->weights.changed_bytes);
    CU_ASSERT(a->res.memory->arena < b->res.memory->arena);
    CU_ASSERT(a->res.cost->total_s < b->res.cost->total_s);
    CU_ASSERT_EQUAL(a->res.layout.ge.cast, 2);
    CU_ASSERT_EQUAL(b->res.layout.ge.cast, 0);
    struct {
        const char *target, *mode, *needle;
    } bad[] = {
        {"ascend910b", "allow_mix_precision", "--precision-mode allow_mix_precision: expected force_fp16 or"},
        {"ort-cpu", "force_fp16", "--precision-mode: target ort-cpu-all has no precision mode"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;
        fp_analysis_opts o = {.target = bad[i].target, .precision_mode = bad[i].mode};
        CU_ASSERT_PTR_NULL(fp_analysis_run(path, &o, &e));
        tu_expect_error(e, bad[i].needle);
    }
    tu_run_result r = tu_run((const char *[]){"report", path, "--device", "ascend910b", "-f", "json", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"precision_mode\" : \"force_fp16\""));
    tu_run_clear(&r);
    const char *args[] = {"report", path, "--device", "ascend910b", "--precision-mode", "fp8", NULL};
    tu_expect_cli_error(args, NULL, "--precision-mode fp8: expected force_fp16 or must_keep_origin_dtype");
    const char *mem[] = {"memory", path, "--precision-mode", "force_fp16", NULL};
    tu_expect_cli_error(mem, NULL, "--precision-mode: this command plans the model as exported");
    tm_expect_target_error("[target]\nname = t\nrules = ge_conv_bn\nprecision_mode = allow_fp32_to_fp16\n",
                           "[target] precision_mode: 'allow_fp32_to_fp16' is not modelled");
}

/* A torchvision ViT export (models/vit_tiny.onnx: dynamic batch, opset 17): its shape computations
 * stay in ONNX Runtime's graph (Shape nodes on the batch, the class token's Expand through
 * Where(Equal)), and yet with the input bound every command knows every size: report's graph before
 * fusion holds the activation bytes memory plans (on ONNX Runtime, and the small int64 tensors of the
 * shape computations it keeps; on a target that folds them, exactly those), train counts every saved
 * tensor. */
static void test_vit_sizes(void)
{
    g_autoptr(GError) err = NULL;
    const char *path = FP_SOURCE_DIR "/models/vit_tiny.onnx";
    char *specs[] = {"input:1x3x32x32", NULL};
    fp_memory_opts plan = {.strategy = FP_MEMPLAN_BEST};
    fp_analysis_opts mo = {.inputs = specs, .stop = FP_PIPELINE_SHAPES, .plan = &plan}, ro = {.inputs = specs},
                     trt = {.inputs = specs, .target = "tensorrt"};
    g_autoptr(fp_analysis) m = fp_analysis_run(path, &mo, &err);
    g_autoptr(fp_analysis) r = fp_analysis_run(path, &ro, &err);
    g_autoptr(fp_analysis) rt = fp_analysis_run(path, &trt, &err);
    fp_training_opts to = {.analysis = ro, .optimizer = FP_OPT_ADAM};
    g_autoptr(fp_training) t = fp_training_run(path, &to, &err);
    CU_ASSERT_FATAL(m && r && rt && t);
    CU_ASSERT_EQUAL(m->res.unknown_values, 0);
    CU_ASSERT_EQUAL(r->res.unknown_values, 0);
    CU_ASSERT_EQUAL(r->res.cost->unknown, 0);
    CU_ASSERT_EQUAL(r->res.memory->n_unknown, 0);
    CU_ASSERT_EQUAL(t->saved.unknown, 0);
    CU_ASSERT_PTR_NULL(r->unknown_note);
    CU_ASSERT(r->res.stages[0].folded < r->res.stages[0].ops); /* the shape computations stay ops */
    CU_ASSERT_EQUAL(rt->res.stages[0].activation_bytes, m->res.memory->naive_bytes);
    uint64_t kept = r->res.stages[0].activation_bytes - m->res.memory->naive_bytes; /* ORT's shape tensors */
    CU_ASSERT(r->res.stages[0].activation_bytes > m->res.memory->naive_bytes &&
              kept < 64 * (uint64_t)r->res.stages[0].ops);
    CU_ASSERT(t->saved.saved_bytes > m->res.memory->lower_bound); /* a training step saves more than inference holds */
}

FP_TEST_SUITE(register_analysis)
{
    CU_pSuite s = CU_add_suite("analysis", NULL, NULL);
    CU_add_test(s, "run_defaults", test_run_defaults);
    CU_add_test(s, "precision_mode", test_precision_mode);
    CU_add_test(s, "headroom_keeps_result", test_headroom_keeps_result);
    CU_add_test(s, "inputs_and_batch", test_inputs_and_batch);
    CU_add_test(s, "original", test_original);
    CU_add_test(s, "binder", test_binder);
    CU_add_test(s, "bad_options", test_bad_options);
    CU_add_test(s, "unknown_op", test_unknown_op);
    CU_add_test(s, "symbolic_dims", test_symbolic_dims);
    CU_add_test(s, "dims", test_dims);
    CU_add_test(s, "bad_dims", test_bad_dims);
    CU_add_test(s, "decoder_gqa", test_decoder_gqa);
    CU_add_test(s, "vit_sizes", test_vit_sizes);
}
