/* test_training.c - training suite (passes/training/, analysis/training.c, `fuseplan train`): the
 * saves of a Conv-BN-ReLU-MaxPool-Gemm chain counted by hand (each storage once, graph input in,
 * parameters out), under AMP too; a decomposed SiLU saves what SiLU saves; dropout's noise on a
 * CPU and mask on a GPU; ops with no input requiring grad save nothing; optimizer bytes for every
 * optimizer and precision; the headroom is the largest batch that fits, without and with the most
 * recomputation; a decoder trained as a full sequence with its loss; the CLI's bad options and its
 * golden text and JSON. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "analysis/training.h"
#include "frontends/onnx/onnx.h"
#include "passes/metrics.h"
#include "passes/shape/shapes.h"
#include "reports/json.h"
#include "reports/json_writer.h"
#include "reports/train.h"
#include "tutil.h"

enum { F32 = 1 };

/* b loaded (tu_load_tb) and freed. */
static fp_model *load_tb(tb *b)
{
    fp_model *m = tu_load_tb(b);
    tb_free(b);
    return m;
}

/* x [2,3,8,8] -> Conv (4 out, 3x3, pad 1) -> BN -> Relu -> MaxPool 2x2 -> Flatten -> Gemm (10). */
static fp_model *chain(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){2, 3, 8, 8});
    tb_init(b, "w", F32, 4, (int64_t[]){4, 3, 3, 3});
    tb_init(b, "cb", F32, 1, (int64_t[]){4});
    tb_node_t *c = tb_node(b, "Conv", "conv", "x,w,cb", "c");
    tb_attr_ints(b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    const char *bn_in[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++)
        tb_init(b, bn_in[i], F32, 1, (int64_t[]){4});
    tb_node(b, "BatchNormalization", "bn", "c,scale,bias,mean,var", "n");
    tb_node(b, "Relu", "relu", "n", "r");
    tb_node_t *mp = tb_node(b, "MaxPool", "pool", "r", "p");
    tb_attr_ints(b, mp, "kernel_shape", 2, (int64_t[]){2, 2});
    tb_attr_ints(b, mp, "strides", 2, (int64_t[]){2, 2});
    tb_node(b, "Flatten", "flat", "p", "f");
    tb_init(b, "W", F32, 2, (int64_t[]){10, 64});
    tb_init(b, "B", F32, 1, (int64_t[]){10});
    tb_node_t *g = tb_node(b, "Gemm", "fc", "f,W,B", "y");
    tb_attr_i(b, g, "transB", 1);
    tb_output(b, "y", F32, -1, NULL);
    return load_tb(b);
}

static void test_chain(void)
{
    g_autoptr(fp_model) m = chain();
    fp_train_saved s;
    fp_train_saved_run(m, &(fp_train_opts){0}, &s);
    /* x 1536 (Conv), c 2048 (BN) + stats 2x4 floats 32, r 2048 (Relu; MaxPool's input: the same
     * storage), indices 2x4x4x4 int64 1024, p 512 (Gemm's A through Flatten's view) */
    CU_ASSERT_EQUAL(s.saved_bytes, 1536 + 2048 + 32 + 2048 + 1024 + 512);
    CU_ASSERT_EQUAL(s.parameters, 108 + 4 + 4 + 4 + 640 + 10);
    CU_ASSERT_EQUAL(s.parameter_bytes, 4 * 770);
    CU_ASSERT_EQUAL(s.buffer_bytes, 32); /* running mean and variance */
    CU_ASSERT_EQUAL(s.unknown, 0);
    fp_train_step st;
    static const struct {
        fp_train_optimizer opt;
        uint64_t bytes;
    } opts[] = {{FP_OPT_SGD, 0}, {FP_OPT_MOMENTUM, 3080}, {FP_OPT_ADAM, 6160}, {FP_OPT_ADAMW, 6160}};
    for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
        fp_train_step_run(m, &s, opts[i].opt, &st);
        CU_ASSERT_EQUAL(st.optimizer_bytes, opts[i].bytes);
        CU_ASSERT_EQUAL(st.parameter_bytes, 3080);
        CU_ASSERT_EQUAL(st.gradient_bytes, 3080);
        CU_ASSERT_EQUAL(st.amp_cache_bytes, 0);
        CU_ASSERT(st.forward_peak >= s.saved_bytes); /* every saved tensor is live at the end of forward */
        CU_ASSERT(st.backward_peak >= s.saved_bytes);
        CU_ASSERT(st.peak_bytes >= 3080 + opts[i].bytes + st.backward_peak);
        CU_ASSERT(st.backward_flops > st.forward_flops); /* conv and gemm: two products each but the first's dX */
    }
    fp_train_saved_clear(&s);
    /* AMP: what follows the Conv in 16 bits (the input stays float32), the stats float32, the
     * parameters float32 with 16-bit copies beside them */
    for (fp_train_precision p = FP_TRAIN_AMP_FP16; p <= FP_TRAIN_AMP_BF16; p++) {
        fp_train_saved_run(m, &(fp_train_opts){.precision = p}, &s);
        CU_ASSERT_EQUAL(s.saved_bytes, 1536 + 1024 + 32 + 1024 + 1024 + 256);
        for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) { /* float32 masters: the same state as fp32 */
            fp_train_step_run(m, &s, opts[i].opt, &st);
            CU_ASSERT_EQUAL(st.parameter_bytes, 3080);
            CU_ASSERT_EQUAL(st.gradient_bytes, 3080);
            CU_ASSERT_EQUAL(st.optimizer_bytes, opts[i].bytes);
            CU_ASSERT_EQUAL(st.amp_cache_bytes, 2 * 770);
        }
        fp_train_saved_clear(&s);
    }
}

/* x [4,16] -> MatMul -> h -> (Sigmoid, Mul: SiLU | Dropout 0.5 | nothing) -> MatMul -> y. */
static fp_model *mlp(const char *middle)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 16});
    tb_init(b, "w1", F32, 2, (int64_t[]){16, 16});
    tb_init(b, "w2", F32, 2, (int64_t[]){16, 16});
    tb_node(b, "MatMul", "mm1", "x,w1", "h");
    if (strcmp(middle, "silu") == 0) {
        tb_node(b, "Sigmoid", "sig", "h", "s");
        tb_node(b, "Mul", "silu", "h,s", "d");
    } else if (strcmp(middle, "cast") == 0) {
        tb_node(b, "Sigmoid", "sig", "h", "s");
        tb_attr_i(b, tb_node(b, "Cast", "cast", "s", "d"), "to", F32); /* to its own dtype: s itself */
    } else if (strcmp(middle, "dropout") == 0) {
        tb_init_f32(b, "ratio", 1, (float[]){0.5f});
        tb_node(b, "Dropout", "drop", "h,ratio", "d");
    } else {
        tb_init_f32(b, "k", 1, (float[]){2.0f});
        tb_node(b, "Mul", "scale", "x,k", "xs"); /* nothing reads a gradient here: nothing saved */
        tb_node(b, "Relu", "relu", "xs", "xr");
        tb_node(b, "Add", "add", "h,xr", "d");
    }
    tb_node(b, "MatMul", "mm2", "d,w2", "y");
    tb_output(b, "y", F32, -1, NULL);
    return load_tb(b);
}

/* x [2,4,8] -> LayerNorm spelled out (ReduceMean ... Add) -> MatMul -> y. */
static fp_model *ln_model(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 4, 8});
    tb_init_f32(b, "two", 1, (float[]){2.0f});
    tb_init_f32(b, "eps", 1, (float[]){1e-5f});
    tb_init(b, "gamma", F32, 1, (int64_t[]){8});
    tb_init(b, "beta", F32, 1, (int64_t[]){8});
    tb_init(b, "w", F32, 2, (int64_t[]){8, 8});
    tb_node_t *m1 = tb_node(b, "ReduceMean", "mean", "x", "mu");
    tb_attr_ints(b, m1, "axes", 1, (int64_t[]){-1});
    tb_node(b, "Sub", "sub", "x,mu", "d");
    tb_node(b, "Pow", "pow", "d,two", "d2");
    tb_node_t *m2 = tb_node(b, "ReduceMean", "var", "d2", "v");
    tb_attr_ints(b, m2, "axes", 1, (int64_t[]){-1});
    tb_node(b, "Add", "add_eps", "v,eps", "ve");
    tb_node(b, "Sqrt", "sqrt", "ve", "sd");
    tb_node(b, "Div", "div", "d,sd", "nx");
    tb_node(b, "Mul", "mul_g", "nx,gamma", "ng");
    tb_node(b, "Add", "add_b", "ng,beta", "ln");
    tb_node(b, "MatMul", "mm", "ln,w", "y");
    tb_output(b, "y", F32, -1, NULL);
    return load_tb(b);
}

/* x [2,4,8] -> MatMul -> h -> RMSNorm as torch.onnx exports one (Pow, ReduceMean over the last
 * axis, or over everything without `axes`, Add eps, Sqrt, Div(1, .) for rsqrt, Mul by h, Mul by
 * gamma) -> MatMul -> y. */
static fp_model *rms_model(bool axes)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 3, (int64_t[]){2, 4, 8});
    tb_init_f32(b, "two", 1, (float[]){2.0f});
    tb_init_f32(b, "eps", 1, (float[]){1e-6f});
    tb_init_f32(b, "one", 1, (float[]){1.0f});
    tb_init(b, "w0", F32, 2, (int64_t[]){8, 8});
    tb_init(b, "gamma", F32, 1, (int64_t[]){8});
    tb_init(b, "w", F32, 2, (int64_t[]){8, 8});
    tb_node(b, "MatMul", "mm0", "x,w0", "h");
    tb_node(b, "Pow", "pow", "h,two", "h2");
    tb_node_t *m = tb_node(b, "ReduceMean", "mean", "h2", "ms");
    if (axes)
        tb_attr_ints(b, m, "axes", 1, (int64_t[]){-1});
    tb_node(b, "Add", "add_eps", "ms,eps", "me");
    tb_node(b, "Sqrt", "sqrt", "me", "sd");
    tb_node(b, "Div", "rsqrt", "one,sd", "r");
    tb_node(b, "Mul", "mul_r", "h,r", "n");
    tb_node(b, "Mul", "mul_g", "n,gamma", "ng");
    tb_node(b, "MatMul", "mm", "ng,w", "y");
    tb_output(b, "y", F32, -1, NULL);
    return load_tb(b);
}

/* The RMSNorm's saves: x (mm0), h (Pow, Mul), rsqrt's result (not the Sqrt before it: the pair is
 * rsqrt), the normalized h (gamma's gradient), mm's input; under PyTorch 1.13's autograd also the
 * square mean(dim) reads (MeanBackward1 keeps its input), not when the mean is over everything
 * (MeanBackward0 keeps sizes). */
static void test_rms_norm(void)
{
    const uint64_t row = 8 * 4, all = 256;
    for (int axes = 0; axes < 2; axes++) {
        g_autoptr(fp_model) m = rms_model(axes);
        uint64_t r = axes ? row : 4; /* rsqrt's result: a row each, or one value */
        for (int rel = FP_TRAIN_AUTOGRAD_2; rel <= FP_TRAIN_AUTOGRAD_1_13; rel++) {
            fp_train_saved s;
            fp_train_saved_run(m, &(fp_train_opts){.autograd = (fp_train_autograd)rel}, &s);
            bool keeps = axes && rel == FP_TRAIN_AUTOGRAD_1_13;
            CU_ASSERT_EQUAL(s.saved_bytes, 4 * all + r + (keeps ? all : 0));
            CU_ASSERT_EQUAL(s.decomposed, 1);
            fp_train_saved_clear(&s);
        }
    }
}

static void test_ops(void)
{
    {
        g_autoptr(fp_model) ln = ln_model();
        fp_train_saved s;
        fp_train_saved_run(ln, &(fp_train_opts){0}, &s);
        /* x 256 and a mean and inverse std per row (8 rows, float32) as LayerNorm saves; the MatMul
         * its input, 256; not the centred x, its square, the std and the normalized x */
        CU_ASSERT_EQUAL(s.saved_bytes, 256 + 2 * 8 * 4 + 256);
        CU_ASSERT_EQUAL(s.decomposed, 1);
        fp_train_saved_clear(&s);
    }
    fp_train_saved s;
    g_autoptr(fp_model) silu = mlp("silu");
    fp_train_saved_run(silu, &(fp_train_opts){0}, &s);
    CU_ASSERT_EQUAL(s.saved_bytes, 256 + 256 + 256); /* x (mm1), h (SiLU's input), d (mm2) */
    CU_ASSERT_EQUAL(s.decomposed, 1);
    CU_ASSERT_EQUAL(s.notes->len, 1);
    fp_train_saved_clear(&s);
    g_autoptr(fp_model) cast = mlp("cast");
    fp_train_saved_run(cast, &(fp_train_opts){0}, &s);
    CU_ASSERT_EQUAL(s.saved_bytes, 256 + 256); /* x (mm1), s (Sigmoid's output, which mm2 saves again) */
    fp_train_saved_clear(&s);
    g_autoptr(fp_model) drop = mlp("dropout");
    fp_train_saved_run(drop, &(fp_train_opts){0}, &s);
    CU_ASSERT_EQUAL(s.saved_bytes, 256 + 256 + 256); /* x, the noise (float32), d */
    fp_train_saved_clear(&s);
    fp_train_saved_run(drop, &(fp_train_opts){.gpu = true}, &s);
    CU_ASSERT_EQUAL(s.saved_bytes, 256 + 64 + 256); /* the mask: a byte an element */
    fp_train_saved_clear(&s);
    g_autoptr(fp_model) plain = mlp("plain");
    fp_train_saved_run(plain, &(fp_train_opts){0}, &s);
    CU_ASSERT_EQUAL(s.saved_bytes, 256 + 256); /* x (mm1), d (mm2); Mul and Relu record nothing */
    for (guint i = 0; i < s.items->len; i++) {
        const fp_saved_item *it = &g_array_index(s.items, fp_saved_item, i);
        CU_ASSERT(strcmp(it->node->name, "scale") != 0 && strcmp(it->node->name, "relu") != 0);
    }
    fp_train_saved_clear(&s);
}

/* Forward liveness: an op reading one tensor twice frees it once. x [4,16] and z [4,64] live
 * (1280 B); Mul(x, x) adds 256 and frees x; Concat(a, z) adds [4,80] 1280: 2560 at once. */
static void test_forward_peak(void)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 2, (int64_t[]){4, 16});
    tb_input(b, "z", F32, 2, (int64_t[]){4, 64});
    tb_node(b, "Mul", "sq", "x,x", "a");
    tb_attr_i(b, tb_node(b, "Concat", "cat", "a,z", "c"), "axis", 1);
    tb_node(b, "Relu", "relu", "c", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autoptr(fp_model) m = load_tb(b);
    fp_train_saved s;
    fp_train_step st;
    fp_train_saved_run(m, &(fp_train_opts){0}, &s);
    fp_train_step_run(m, &s, FP_OPT_SGD, &st);
    CU_ASSERT_EQUAL(s.saved_bytes, 0); /* nothing requires grad */
    CU_ASSERT_EQUAL(st.forward_peak, 2560);
    fp_train_saved_clear(&s);
}

/* The headroom is the largest batch whose step fits: the next one does not. */
static void test_headroom(void)
{
    g_autoptr(GError) err = NULL;
    const char *path = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    fp_training_opts o = {.analysis = {.device = "a100"}, .optimizer = FP_OPT_ADAM, .headroom = {.on = true}};
    g_autoptr(fp_training) t = fp_training_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(t->searched);
    CU_ASSERT_FATAL(t->max_batch > 1);
    fp_training_opts at = o;
    at.headroom.on = false;
    at.analysis.batch = t->max_batch;
    g_autoptr(fp_training) fits = fp_training_run(path, &at, &err);
    at.analysis.batch = t->max_batch + 1;
    g_autoptr(fp_training) over = fp_training_run(path, &at, &err);
    CU_ASSERT_FATAL(fits && over);
    CU_ASSERT(fits->step.peak_bytes <= t->usable_bytes);
    CU_ASSERT(over->step.peak_bytes > t->usable_bytes);
    CU_ASSERT_EQUAL(fits->batch, t->max_batch);
    /* with the most recomputation: the step at the least budget fits at its answer, not one above */
    CU_ASSERT_FATAL(t->max_batch_recompute >= t->max_batch);
    for (int64_t b = t->max_batch_recompute; b <= t->max_batch_recompute + 1; b++) {
        at.analysis.batch = b;
        g_autoptr(fp_training) tb = fp_training_run(path, &at, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
        fp_rc_stages stages;
        fp_rc_stages_make(tb->a->model, &tb->saved, tb->a->res.cost, &stages);
        uint64_t peak = tb->step.peak_bytes - tb->step.saved_bytes + fp_rc_min_budget(&stages);
        fp_rc_stages_clear(&stages);
        CU_ASSERT_EQUAL(peak <= t->usable_bytes, b == t->max_batch_recompute);
    }
    CU_ASSERT(t->headroom_batches > 2);
    /* --dim binding the batch fixes it: no search (it ran to 2^24, every batch the same) */
    char *dims[] = {"batch=4", NULL};
    fp_training_opts d = o;
    d.analysis.dims = dims;
    g_autoptr(fp_training) bound = fp_training_run(path, &d, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bound);
    CU_ASSERT_FALSE(bound->searched);
    CU_ASSERT_PTR_NOT_NULL(strstr(bound->headroom_note, "--dim binds the batch dimension"));
}

static void test_cli(void)
{
    const char *model = FP_SOURCE_DIR "/models/resnet_tiny.onnx";
    tu_expect_cli_error((const char *[]){"train", "--optimizer", "lamb", model, NULL}, NULL,
                        "--optimizer lamb: one of sgd, momentum, adam, adamw");
    tu_expect_cli_error((const char *[]){"train", "--precision", "fp8", model, NULL}, NULL,
                        "--precision fp8: one of fp32, amp-fp16, amp-bf16");
    tu_expect_cli_error((const char *[]){"train", "--autograd", "1.12", model, NULL}, NULL,
                        "--autograd 1.12: one of 2, 1.13");
    tu_expect_cli_error((const char *[]){"train", "--reserve", "120%", model, NULL}, NULL,
                        "--reserve 120%: a percentage from 0% to below 100%");
    tu_expect_cli_error((const char *[]){"train", "--batch", "-2", model, NULL}, NULL, "--batch -2");
    tu_expect_cli_error((const char *[]){"train", "--top", "-1", model, NULL}, NULL, "--top -1");
    tu_expect_cli_error((const char *[]){"train", "--budget", "0%", model, NULL}, NULL,
                        "--budget 0%: a share above 0%");
    tu_expect_cli_error((const char *[]){"train", "--budget", "lots", model, NULL}, NULL, "--budget");
    tu_expect_cli_error((const char *[]){"train", "-f", "xml", model, NULL}, NULL, "xml");
    tu_expect_cli_error((const char *[]){"train", "--device", "nowhere", model, NULL}, NULL, "nowhere");
    tu_expect_cli_error((const char *[]){"train", FP_SOURCE_DIR "/models/missing.onnx", NULL},
                        FP_SOURCE_DIR "/models/missing.onnx", "");
    tu_golden((const char *[]){"train", "models/resnet_tiny.onnx", "--batch", "4", NULL}, "train_resnet_tiny.txt");
    tu_run_result r = tu_run((const char *[]){"train", FP_SOURCE_DIR "/models/resnet_tiny.onnx", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "headroom max batch"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "not even batch 1")); /* one headroom verdict, not two */
    tu_run_clear(&r);
    tu_golden((const char *[]){"train", "models/resnet_tiny.onnx", "--budget", "50%", NULL},
              "train_resnet_tiny_budget.txt");
    tu_golden((const char *[]){"train", "models/resnet_tiny.onnx", "--budget", "50%", "-f", "html", NULL},
              "train_resnet_tiny_budget.html");
    tu_golden((const char *[]){"train", "models/resnet_tiny.onnx", "--batch", "4", "--optimizer", "momentum",
                               "--precision", "amp-fp16", "--device", "a100", "--budget", "2MB", "-f", "json", NULL},
              "train_resnet_tiny_amp.json");
}

/* The sample decoder trains as a full sequence: 2048 tokens unless --seq (or a --dim binding the
 * sequence) says, no past, its present outputs no outputs of the step, the cross-entropy's
 * log_softmax (float32) and labels (int64) saved for its logits [B, S, 128]. */
static void test_decoder(void)
{
    g_autoptr(GError) err = NULL;
    const char *path = FP_SOURCE_DIR "/models/decoder_tiny.onnx";
    const struct {
        int64_t seq, batch, expect;
    } cases[] = {{0, 0, FP_DECODER_DEFAULT_CONTEXT}, {16, 3, 16}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        fp_training_opts o = {.analysis = {.context = cases[i].seq, .batch = cases[i].batch}};
        g_autoptr(fp_training) t = fp_training_run(path, &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(t->sequence, cases[i].expect);
        CU_ASSERT_EQUAL(t->past, 0);
        CU_ASSERT_EQUAL(t->dropped_outputs, 4);
        CU_ASSERT_EQUAL(t->a->model->main->outputs->len, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t->train.loss_logits);
        CU_ASSERT_STRING_EQUAL(t->train.loss_logits->name, "lm_head_out");
        CU_ASSERT_PTR_NOT_NULL(strstr(t->a->batch_note, "trained as a full sequence"));
        uint64_t rows = (uint64_t)MAX(cases[i].batch, 1) * (uint64_t)cases[i].expect, ce = 0, labels = 0;
        for (guint k = 0; k < t->saved.items->len; k++) {
            const fp_saved_item *it = &g_array_index(t->saved.items, fp_saved_item, k);
            ce += strcmp(it->what, "cross-entropy") == 0 ? it->bytes : 0;
            labels += strcmp(it->what, "labels") == 0 ? it->bytes : 0;
        }
        CU_ASSERT_EQUAL(ce, rows * 128 * 4);
        CU_ASSERT_EQUAL(labels, rows * 8);
    }
    /* --dim binding the sequence of a decoder with a total length of its own: the total follows */
    char *dims[] = {"sequence_length=32", NULL};
    fp_training_opts gqa_o = {.analysis = {.dims = dims}};
    g_autoptr(fp_training) gqa = fp_training_run(FP_SOURCE_DIR "/models/decoder_gqa.onnx", &gqa_o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gqa);
    CU_ASSERT_EQUAL(gqa->sequence, 32);
    CU_ASSERT_EQUAL(gqa->past, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(gqa->a->batch_note, "past_sequence_length=0, total_sequence_length=32"));
    /* a model without a KV cache: no decoder, no loss */
    fp_training_opts o = {0};
    g_autoptr(fp_training) cnn = fp_training_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cnn);
    CU_ASSERT_EQUAL(cnn->sequence, 0);
    CU_ASSERT_PTR_NULL(cnn->train.loss_logits);
}

/* `train` on the sample decoder with no --dim: what it bound, in text and JSON, and a plan at 50%; a bad
 * --seq, or one asked of a model without a KV cache, exits 2 naming it. */
static void test_decoder_cli(void)
{
    const char *model = FP_SOURCE_DIR "/models/decoder_tiny.onnx";
    tu_run_result r = tu_run((const char *[]){"train", model, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "trained as a full sequence of 2048 tokens (sequence_length=2048, "
                                         "past_sequence_length=0)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "decoder sequence of 2048 tokens, 0 past, 4 present outputs not kept"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "headroom max batch"));
    tu_run_clear(&r);
    /* with no --dim, a plan at a budget, and what was bound */
    r = tu_run((const char *[]){"train", model, "--budget", "50%", "--no-headroom", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "trained as a full sequence of 2048 tokens"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "  plan: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "search: exact"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"train", model, "--seq", "64", "--no-headroom", "-f", "json", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *dec = json_object_get_object_member(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "training"), "decoder");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dec);
    CU_ASSERT_EQUAL(json_object_get_int_member(dec, "sequence"), 64);
    CU_ASSERT_EQUAL(json_object_get_int_member(dec, "past"), 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(dec, "present_outputs_dropped"), 4);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(dec, "loss_logits"), "lm_head_out");
    tu_run_clear(&r);
    const char *bad[] = {"0", "-3", "many", "16777217", "99999999999999999999"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *msg = g_strdup_printf("--seq %s: expected a whole number from 1 to 16777216", bad[i]);
        tu_expect_cli_error((const char *[]){"train", "--seq", bad[i], model, NULL}, NULL, msg);
    }
    tu_expect_cli_error((const char *[]){"train", "--seq", "8", FP_SOURCE_DIR "/models/resnet_tiny.onnx", NULL},
                        FP_SOURCE_DIR "/models/resnet_tiny.onnx", "--seq: the model has no KV cache");
}

/* A chain of n ops on [1, c, 8, 8]: Convs of varying widths between Relus and Sigmoids. */
static fp_model *op_chain(int n, unsigned seed)
{
    tb *b = tb_new(13);
    int64_t c = 4;
    tb_input(b, "x", F32, 4, (int64_t[]){1, c, 8, 8});
    char prev[16] = "x";
    for (int i = 0; i < n; i++) {
        char out[16], w[16], name[16];
        g_snprintf(out, sizeof out, "v%d", i);
        g_snprintf(name, sizeof name, "op%d", i);
        if ((i + seed) % 3 == 0) {
            int64_t co = 2 + (int64_t)((seed * 7 + (unsigned)i * 5) % 9);
            g_snprintf(w, sizeof w, "w%d", i);
            tb_init(b, w, F32, 4, (int64_t[]){co, c, 3, 3});
            g_autofree char *ins = g_strdup_printf("%s,%s", prev, w);
            tb_node_t *cv = tb_node(b, "Conv", name, ins, out);
            tb_attr_ints(b, cv, "pads", 4, (int64_t[]){1, 1, 1, 1});
            c = co;
        } else {
            tb_node(b, (i + seed) % 3 == 1 ? "Relu" : "Sigmoid", name, prev, out);
        }
        g_strlcpy(prev, out, sizeof prev);
    }
    tb_output(b, prev, F32, -1, NULL);
    return load_tb(b);
}

/* m's saves (default options) and its stages, no cost. */
static void stages_of(const fp_model *m, fp_train_saved *s, fp_rc_stages *st)
{
    fp_train_saved_run(m, &(fp_train_opts){0}, s);
    fp_rc_stages_make(m, s, NULL, st);
}

/* On the committed sample models every plan the search makes, replayed, stays within its budget. */
static void test_recompute(void)
{
    const char *models[] = {FP_SOURCE_DIR "/models/resnet_tiny.onnx", FP_SOURCE_DIR "/models/inception_bfs.onnx",
                            FP_SOURCE_DIR "/models/transformer_block.onnx", FP_SOURCE_DIR "/models/decoder_tiny.onnx"};
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        g_autoptr(GError) err = NULL;
        fp_training_opts o = {.analysis = {.batch = 4}, .optimizer = FP_OPT_ADAM, .budget_share = 0.5};
        g_autoptr(fp_training) t = fp_training_run(models[i], &o, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        uint64_t least = fp_rc_min_budget(&t->stages);
        for (int k = 1; k <= 8; k++) {
            fp_rc_plan p;
            uint64_t budget = t->saved.saved_bytes * (uint64_t)k / 8;
            fp_rc_plan_best(&t->stages, budget, &p);
            CU_ASSERT_EQUAL(p.feasible, budget >= least);
            if (p.feasible)
                CU_ASSERT(fp_rc_replay(&t->stages, &p) <= budget);
            fp_rc_plan_clear(&p);
        }
    }
}

/* n stages of random sizes and FLOPs drawn from r, some of no FLOPs (a Reshape's), made by hand. */
static void random_stages(GRand *r, uint32_t n, fp_rc_stages *s)
{
    fp_rc_stages_alloc(s, n);
    s->base = (uint64_t)g_rand_int_range(r, 0, 64);
    for (uint32_t t = 0; t < n; t++) {
        s->own[t] = (uint64_t)g_rand_int_range(r, 1, 1000);
        s->src[t] = t ? (uint64_t)g_rand_int_range(r, 1, 300) : 0;
        s->src_owned[t] = t && g_rand_boolean(r);
        s->src_saved[t] = s->src_owned[t] && g_rand_boolean(r);
        s->flops[t] = g_rand_int_range(r, 0, 4) ? (uint64_t)g_rand_int_range(r, 1, 100000) : 0;
    }
}

/* The planner at `budget` against every plan tried: the search's plan costs what the best costs and
 * says it is exact; the bucketed search alone, however coarse, fits as often, stays within the
 * budget replayed, and brackets the optimum between its bound and its plan; the least budget fits
 * and a byte less does not. */
static void check_exhaustive(const fp_rc_stages *st, uint64_t budget)
{
    fp_rc_plan best, ex;
    fp_rc_plan_best(st, budget, &best);
    fp_rc_plan_exhaustive(st, budget, &ex);
    CU_ASSERT_EQUAL(best.feasible, ex.feasible);
    CU_ASSERT(best.exact);
    if (ex.feasible) {
        CU_ASSERT_EQUAL(best.flops, ex.flops);
        CU_ASSERT_EQUAL(best.lower_flops, ex.flops);
        CU_ASSERT(best.peak_bytes <= budget);
        CU_ASSERT_EQUAL(fp_rc_replay(st, &best), best.peak_bytes);
    }
    for (uint32_t buckets = 2; buckets <= 16; buckets *= 2) {
        fp_rc_plan a;
        fp_rc_plan_search(st, budget, buckets, 0, &a);
        CU_ASSERT_EQUAL(a.feasible, ex.feasible);
        if (ex.feasible) {
            CU_ASSERT(fp_rc_replay(st, &a) <= budget);
            CU_ASSERT(a.lower_flops <= ex.flops && ex.flops <= a.flops);
            CU_ASSERT(!a.exact || a.flops == ex.flops);
        }
        fp_rc_plan_clear(&a);
    }
    fp_rc_plan_clear(&best);
    fp_rc_plan_clear(&ex);
}

/* The least budget some plan fits, by trying every plan: it fits, a byte less does not. */
static void check_least(const fp_rc_stages *st)
{
    uint64_t least = fp_rc_min_budget(st);
    fp_rc_plan at, below;
    fp_rc_plan_exhaustive(st, least, &at);
    fp_rc_plan_exhaustive(st, least - 1, &below);
    CU_ASSERT(at.feasible);
    CU_ASSERT_FALSE(below.feasible);
    fp_rc_plan_clear(&at);
    fp_rc_plan_clear(&below);
}

/* Stage lists made by hand, 1 to 11 stages: the planner against every plan, at budgets from below
 * the least to all of the saved bytes. */
static void test_recompute_brute(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(39);
    for (uint32_t round = 0; round < 60; round++) {
        fp_rc_stages st;
        random_stages(r, 1 + round % 11, &st);
        uint64_t total = st.base, least = fp_rc_min_budget(&st);
        for (uint32_t t = 0; t < st.n; t++)
            total += st.own[t];
        check_least(&st);
        check_exhaustive(&st, least - 1);
        for (int k = 0; k <= 6; k++)
            check_exhaustive(&st, least + (total - least) * (uint64_t)k / 6);
        fp_rc_stages_clear(&st);
    }
}

/* x [1, 4, 8, 8] through n blocks: residual diamonds (x + Relu(Conv(x))), two-branch diamonds
 * (Relu(x) * Sigmoid(x)) and plain Conv-Relu pairs, by seed. */
static fp_model *diamonds(int n, unsigned seed)
{
    tb *b = tb_new(13);
    tb_input(b, "x", F32, 4, (int64_t[]){1, 4, 8, 8});
    char prev[16] = "x";
    for (int i = 0; i < n; i++) {
        char w[16], c[16], a[16], o[16];
        g_snprintf(w, sizeof w, "w%d", i), g_snprintf(c, sizeof c, "c%d", i);
        g_snprintf(a, sizeof a, "a%d", i), g_snprintf(o, sizeof o, "o%d", i);
        unsigned kind = (seed + (unsigned)i + (unsigned)i * seed / 3) % 3;
        tb_init(b, w, F32, 4, (int64_t[]){4, 4, 3, 3});
        g_autofree char *conv_in = g_strdup_printf("%s,%s", prev, w);
        g_autofree char *join = g_strdup_printf("%s,%s", kind == 0 ? prev : c, a);
        if (kind != 1) {
            tb_node_t *cv = tb_node(b, "Conv", c, conv_in, c);
            tb_attr_ints(b, cv, "pads", 4, (int64_t[]){1, 1, 1, 1});
            tb_node(b, "Relu", a, c, a);
        } else {
            tb_node(b, "Relu", c, prev, c);
            tb_node(b, "Sigmoid", a, prev, a);
        }
        tb_node(b, kind == 2 ? "Relu" : kind == 0 ? "Add" : "Mul", o, kind == 2 ? a : join, o);
        g_strlcpy(prev, o, sizeof prev);
    }
    tb_output(b, prev, F32, -1, NULL);
    return load_tb(b);
}

/* Chains of ops and chains of diamonds: their stages hold every saved byte, and the planner
 * matches every plan tried on them; with the whole budget nothing is recomputed; Chen's plan
 * replays to its peak. */
static void test_recompute_graphs(void)
{
    fp_model *(*const make[])(int, unsigned) = {op_chain, diamonds};
    const int size[] = {12, 7};
    for (unsigned seed = 0; seed < 12; seed++) {
        g_autoptr(fp_model) m = make[seed % 2](size[seed % 2], seed / 2);
        fp_train_saved s;
        fp_rc_stages st;
        stages_of(m, &s, &st);
        CU_ASSERT_FATAL(st.n >= 7 && st.n <= 14);
        uint64_t total = st.base, least = fp_rc_min_budget(&st);
        for (uint32_t t = 0; t < st.n; t++)
            total += st.own[t];
        CU_ASSERT_EQUAL(total, s.saved_bytes);
        check_least(&st);
        for (int k = 0; k <= 8; k++)
            check_exhaustive(&st, least + (total - least) * (uint64_t)k / 8);
        fp_rc_plan all, chen;
        fp_rc_plan_best(&st, total, &all);
        CU_ASSERT_EQUAL(all.flops, 0);
        fp_rc_plan_chen(&st, &chen);
        CU_ASSERT_EQUAL(fp_rc_replay(&st, &chen), chen.peak_bytes);
        fp_rc_plan_clear(&all);
        fp_rc_plan_clear(&chen);
        fp_rc_stages_clear(&st);
        fp_train_saved_clear(&s);
    }
}

/* A decoder-like stack of n layers on h [1, 8, 16]: each a = MatMul(h, W), b = Mul(a, t),
 * c = Relu(b), h' = h + Mul(c, cos), where cos is a graph input and t = Sin(pos) is computed once
 * from another: both are read by every layer and no parameter flows into them. */
static fp_model *shared_decoder(int n)
{
    tb *b = tb_new(13);
    const int64_t dims[] = {1, 8, 16};
    tb_input(b, "x", F32, 3, dims);
    tb_input(b, "cos", F32, 3, dims);
    tb_input(b, "pos", F32, 3, dims);
    tb_node(b, "Sin", "table", "pos", "t");
    char prev[16] = "x";
    for (int i = 0; i < n; i++) {
        char w[16], a[16], bb[16], c[16], d[16], o[16];
        g_snprintf(w, sizeof w, "w%d", i), g_snprintf(a, sizeof a, "a%d", i), g_snprintf(bb, sizeof bb, "b%d", i);
        g_snprintf(c, sizeof c, "c%d", i), g_snprintf(d, sizeof d, "d%d", i), g_snprintf(o, sizeof o, "o%d", i);
        tb_init(b, w, F32, 2, (int64_t[]){16, 16});
        g_autofree char *mm = g_strdup_printf("%s,%s", prev, w);
        g_autofree char *mt = g_strdup_printf("%s,t", a);
        g_autofree char *mc = g_strdup_printf("%s,cos", c);
        g_autofree char *add = g_strdup_printf("%s,%s", prev, d);
        tb_node(b, "MatMul", a, mm, a);
        tb_node(b, "Mul", bb, mt, bb);
        tb_node(b, "Relu", c, bb, c);
        tb_node(b, "Mul", d, mc, d);
        tb_node(b, "Add", o, add, o);
        g_strlcpy(prev, o, sizeof prev);
    }
    tb_output(b, prev, F32, -1, NULL);
    return load_tb(b);
}

/* Tensors every layer reads but no parameter flows into (a graph input, a table computed once from
 * one) do not stop the cuts between layers: they are held for the whole step and counted once, in
 * the bytes every plan holds; over the stages the planner matches every plan tried. */
static void test_recompute_shared(void)
{
    for (int n = 4; n <= 8; n += 4) {
        g_autoptr(fp_model) m = shared_decoder(n);
        fp_train_saved s;
        fp_rc_stages st;
        stages_of(m, &s, &st);
        CU_ASSERT_FATAL(st.n >= (uint32_t)n && st.n <= 16);
        CU_ASSERT_EQUAL(st.base, 3 * 8 * 16 * 4); /* x, cos and t, each once */
        uint64_t total = st.base, least = fp_rc_min_budget(&st);
        for (uint32_t t = 0; t < st.n; t++)
            total += st.own[t];
        CU_ASSERT_EQUAL(total, s.saved_bytes);
        CU_ASSERT(least < total);
        check_least(&st);
        for (int k = 0; k <= 8; k++)
            check_exhaustive(&st, least + (total - least) * (uint64_t)k / 8);
        fp_rc_stages_clear(&st);
        fp_train_saved_clear(&s);
    }
}

/* Long stage lists (a network's size): every plan fits its budget, replayed, and its bound is at
 * most its FLOPs (equal when exact), coarse searches and the planner's alike; with all the saved
 * bytes or more (the most a budget can be) nothing is recomputed. */
static void test_recompute_long(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(7);
    for (uint32_t n = 60; n <= 200; n += 140) {
        fp_rc_stages st;
        random_stages(r, n, &st);
        uint64_t total = st.base, least = fp_rc_min_budget(&st);
        for (uint32_t t = 0; t < n; t++)
            total += st.own[t];
        for (int k = 0; k <= 5; k++) {
            fp_rc_plan p;
            uint64_t budget = k == 5 ? UINT64_MAX : least + (total - least) * (uint64_t)k / 4; /* all, then more */
            if (k == 2)
                fp_rc_plan_best(&st, budget, &p);
            else
                fp_rc_plan_search(&st, budget, 64, 1u << 14, &p);
            CU_ASSERT(p.feasible);
            CU_ASSERT(fp_rc_replay(&st, &p) <= budget);
            CU_ASSERT(p.lower_flops <= p.flops);
            CU_ASSERT(p.exact == (p.lower_flops == p.flops));
            CU_ASSERT(k < 4 || p.flops == 0);
            fp_rc_plan_clear(&p);
        }
        fp_rc_stages_clear(&st);
    }
}

/* A decoder whose rotary tables are lookups into caches (Gather of cos_cached and sin_cached by
 * position_ids, bench/gen_hf_decoders.py): named frozen, the caches are buffers, not parameters, so
 * the tables need no gradient, Mul saves the table but not q and k, and the tables are held for the
 * whole step: the layers are cut apart and the planner matches every plan; an unknown name exits 2
 * naming the model and the name. */
static void test_frozen(void)
{
    const char *path = FP_SOURCE_DIR "/tests/data/decoder/hf_gqa_xx_bool_silu_plain_kv.onnx";
    char *caches[] = {"cos_cached", "sin_cached", NULL};
    g_autoptr(GError) err = NULL;
    fp_training_opts o = {.analysis = {.context = 64, .batch = 2}};
    g_autoptr(fp_training) plain = fp_training_run(path, &o, &err);
    o.frozen = caches;
    g_autoptr(fp_training) frozen = fp_training_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(frozen);
    const fp_value *cache = fp_graph_find(frozen->a->model->main, "cos_cached");
    uint64_t cache_numel = 0;
    CU_ASSERT_FATAL(cache && fp_shape_numel(&cache->shape, &cache_numel));
    CU_ASSERT_EQUAL(plain->saved.parameters - frozen->saved.parameters, 2 * cache_numel);
    CU_ASSERT(frozen->saved.saved_bytes < plain->saved.saved_bytes);
    fp_rc_stages st;
    fp_rc_stages_make(frozen->a->model, &frozen->saved, NULL, &st);
    fp_rc_stages ps;
    fp_rc_stages_make(plain->a->model, &plain->saved, NULL, &ps);
    CU_ASSERT(st.n > ps.n);
    CU_ASSERT_FATAL(st.n <= 16);
    uint64_t total = st.base, least = fp_rc_min_budget(&st);
    for (uint32_t t = 0; t < st.n; t++)
        total += st.own[t];
    CU_ASSERT_EQUAL(total, frozen->saved.saved_bytes);
    check_least(&st);
    for (int k = 0; k <= 4; k++)
        check_exhaustive(&st, least + (total - least) * (uint64_t)k / 4);
    fp_rc_stages_clear(&st);
    fp_rc_stages_clear(&ps);
    tu_expect_cli_error((const char *[]){"train", "--frozen", "nope", path, NULL}, path,
                        "--frozen nope: no initializer of that name");
}

/* An approximate plan in the reports: the text gives its gap and the bound, the JSON says it is not
 * exact and gives the bound and the gap as a share of the plan's FLOPs. */
static void test_recompute_report(void)
{
    g_autoptr(GError) err = NULL;
    fp_training_opts o = {.optimizer = FP_OPT_ADAM, .budget_share = 0.5};
    g_autoptr(fp_training) t = fp_training_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FATAL(t->plan.feasible && t->plan.exact && t->plan.flops > 0);
    t->plan.exact = false; /* as a search that gave up would leave it */
    t->plan.lower_flops = t->plan.flops / 4;
    fp_train_report r = {.model_path = "m.onnx", .t = t, .optimizer = FP_OPT_ADAM};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fp_report_train_text(&r, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "search: approximate, at most"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "(75.00% of the plan's) above the optimum"));
    free(text);
    fp_jsonw *w = fp_jsonw_new();
    fp_report_train_json(&r, w);
    g_autofree char *json = fp_jsonw_finish(w, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"exact\" : false"));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"gap\" : 0.75"));
    g_autofree char *bound = g_strdup_printf("\"lower_bound_flops\" : %" G_GUINT64_FORMAT, t->plan.lower_flops);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, bound));
}

/* A GE graph that holds its backward and optimizer ops: its memory from its own liveness, its
 * Variables (parameters and optimizer state) apart. */
static void test_ge_graph(void)
{
    const char *ge =
        "graph {\n"
        " op { name: 'x' type: 'Data' input: '' attr { key: 'index' value { i: 0 } }"
        " output_desc { dtype: DT_FLOAT shape { dim: [8, 16] } layout: 'ND' } }\n"
        " op { name: 'w' type: 'Variable' output_desc { dtype: DT_FLOAT shape { dim: [16, 16] } layout: 'ND' } }\n"
        " op { name: 'acc' type: 'Variable' output_desc { dtype: DT_FLOAT shape { dim: [16, 16] } layout: 'ND' } }\n"
        " op { name: 'lr' type: 'Const' output_desc { dtype: DT_FLOAT shape { } layout: 'ND' } }\n"
        " op { name: 'mm' type: 'MatMul' input: 'x:0' input: 'w:0'"
        " output_desc { dtype: DT_FLOAT shape { dim: [8, 16] } layout: 'ND' } }\n"
        " op { name: 'relu' type: 'Relu' input: 'mm:0' output_desc { dtype: DT_FLOAT shape { dim: [8, 16] } layout: 'ND' } }\n"
        " op { name: 'rg' type: 'ReluGrad' input: 'relu:0' input: 'relu:0'"
        " output_desc { dtype: DT_FLOAT shape { dim: [8, 16] } layout: 'ND' } }\n"
        " op { name: 'dw' type: 'MatMul' input: 'x:0' input: 'rg:0'"
        " output_desc { dtype: DT_FLOAT shape { dim: [16, 16] } layout: 'ND' } }\n"
        " op { name: 'apply' type: 'ApplyMomentum' input: 'w:0' input: 'acc:0' input: 'lr:0' input: 'dw:0' input: 'lr:0'"
        " output_desc { dtype: DT_FLOAT shape { dim: [16, 16] } layout: 'ND' } }\n"
        " op { name: 'out' type: 'NetOutput' input: 'apply:0' }\n"
        "}\n";
    g_autofree char *path = tu_write_temp(ge, strlen(ge), ".txt");
    g_autoptr(GError) err = NULL;
    fp_training_opts o = {.optimizer = FP_OPT_ADAM};
    g_autoptr(fp_training) t = fp_training_run(path, &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->backward_ops, 1);
    CU_ASSERT_EQUAL(t->optimizer_ops, 1);
    CU_ASSERT_EQUAL(t->variable_bytes, 2 * 16 * 16 * 4);
    CU_ASSERT(t->graph_arena >= 8 * 16 * 4); /* the activations planned, the Variables not among them */
    tu_run_result r = tu_run((const char *[]){"train", path, "-f", "json", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"variable_bytes\" : 2048"));
    tu_run_clear(&r);
    /* a forward graph: no such section */
    g_autoptr(fp_training) f = fp_training_run(FP_SOURCE_DIR "/models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->backward_ops, 0);
    g_unlink(path);
}

FP_TEST_SUITE(register_training)
{
    CU_pSuite s = CU_add_suite("training", NULL, NULL);
    CU_add_test(s, "chain", test_chain);
    CU_add_test(s, "ops", test_ops);
    CU_add_test(s, "rms_norm", test_rms_norm);
    CU_add_test(s, "recompute", test_recompute);
    CU_add_test(s, "recompute_brute", test_recompute_brute);
    CU_add_test(s, "recompute_graphs", test_recompute_graphs);
    CU_add_test(s, "recompute_long", test_recompute_long);
    CU_add_test(s, "recompute_shared", test_recompute_shared);
    CU_add_test(s, "frozen", test_frozen);
    CU_add_test(s, "recompute_report", test_recompute_report);
    CU_add_test(s, "forward_peak", test_forward_peak);
    CU_add_test(s, "headroom", test_headroom);
    CU_add_test(s, "ge_graph", test_ge_graph);
    CU_add_test(s, "cli", test_cli);
    CU_add_test(s, "decoder", test_decoder);
    CU_add_test(s, "decoder_cli", test_decoder_cli);
}
