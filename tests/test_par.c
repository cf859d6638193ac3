/* test_par.c - ir/par.c: a side job runs on another thread and joins, a job started from the
 * side thread runs where it is started; and the passes that split a big graph's work over two
 * threads (shape reset, metrics, liveness, verifier) give what they give on one thread, findings
 * included. */
#include <CUnit/CUnit.h>
#include <glib/gstdio.h>
#include <string.h>

#include "devices/device.h"
#include "frontends/load.h"
#include "ir/par.h"
#include "passes/memory/headroom.h"
#include "passes/layout.h"
#include "analysis/pipeline.h"
#include "tutil.h"

#define ROUND "tests/data/devices/round.ini"

typedef struct {
    GThread *ran_on;
    bool nested_worth;  /* fp_par_worth of a big graph, asked from inside the job */
    GThread *nested_on; /* where a job started from inside the job ran */
} probe;

static void record(void *arg) { ((probe *)arg)->ran_on = g_thread_self(); }

static void record_nested(void *arg)
{
    probe *p = arg;
    p->ran_on = g_thread_self();
    p->nested_worth = fp_par_worth(1u << 20);
    probe inner = {0};
    fp_par_job j;
    fp_par_start(&j, record, &inner, true); /* from the side thread: runs here, no deadlock */
    fp_par_join(&j);
    p->nested_on = inner.ran_on;
}

static void test_side_job(void)
{
    bool cores = g_get_num_processors() > 1;
    CU_ASSERT_FALSE(fp_par_worth(FP_PAR_MIN_NODES - 1));
    CU_ASSERT_EQUAL(fp_par_worth(FP_PAR_MIN_NODES), cores);
    probe p = {0};
    fp_par_job j;
    unsigned before = fp_par_side_jobs();
    fp_par_start(&j, record, &p, true);
    fp_par_join(&j);
    CU_ASSERT_PTR_NOT_NULL(p.ran_on);
    CU_ASSERT_EQUAL(p.ran_on != g_thread_self(), cores);
    CU_ASSERT_EQUAL(fp_par_side_jobs() - before, cores ? 1u : 0u);

    p = (probe){0};
    fp_par_start(&j, record, &p, false); /* not split: done before fp_par_start returns */
    CU_ASSERT_PTR_EQUAL(p.ran_on, g_thread_self());
    fp_par_join(&j);

    p = (probe){0};
    fp_par_start(&j, record_nested, &p, true);
    fp_par_join(&j);
    CU_ASSERT_FALSE(p.nested_worth && cores);
    CU_ASSERT_PTR_EQUAL(p.nested_on, p.ran_on);

    fp_par_allow(false);
    CU_ASSERT_FALSE(fp_par_worth(1u << 20));
    p = (probe){0};
    fp_par_start(&j, record, &p, true);
    CU_ASSERT_PTR_EQUAL(p.ran_on, g_thread_self());
    fp_par_join(&j);
    fp_par_allow(true);
}

/* A side job that holds the side thread until released, and what the caller saw meanwhile. */
typedef struct {
    GMutex lock;
    GCond cond;
    bool started, release;
} gate;

static void hold(void *arg)
{
    gate *g = arg;
    g_mutex_lock(&g->lock);
    g->started = true;
    g_cond_broadcast(&g->cond);
    while (!g->release)
        g_cond_wait(&g->cond, &g->lock);
    g_mutex_unlock(&g->lock);
}

static void half_thread(void *arg, int h, size_t from, size_t to)
{
    (void)from;
    (void)to;
    ((GThread **)arg)[h] = g_thread_self();
}

/* While the side thread runs a job, nothing more is pushed behind it: fp_par_worth says no and
 * fp_par_halves runs both halves on the caller's thread (which would else wait at the join for
 * the job ahead); once it is done, the side thread is available again. */
static void test_side_busy(void)
{
    GThread *ran[2] = {NULL, NULL};
    if (g_get_num_processors() < 2) { /* one core: no split is ever offered, both halves run here */
        CU_ASSERT_FALSE(fp_par_worth(1u << 20));
        fp_par_halves(1u << 20, 1u << 20, half_thread, ran);
        CU_ASSERT_PTR_EQUAL(ran[0], g_thread_self());
        CU_ASSERT_PTR_EQUAL(ran[1], g_thread_self());
        return;
    }
    gate g = {0};
    g_mutex_init(&g.lock);
    g_cond_init(&g.cond);
    fp_par_job j;
    fp_par_start(&j, hold, &g, true);
    g_mutex_lock(&g.lock);
    while (!g.started)
        g_cond_wait(&g.cond, &g.lock);
    g_mutex_unlock(&g.lock);
    if (fp_par_worth(1u << 20)) { /* halves would wait for the held job: do not deadlock here */
        CU_FAIL("the side thread is busy, yet a split is offered");
    } else {
        fp_par_halves(1u << 20, 1u << 20, half_thread, ran);
        CU_ASSERT_PTR_EQUAL(ran[0], g_thread_self());
        CU_ASSERT_PTR_EQUAL(ran[1], g_thread_self());
    }
    g_mutex_lock(&g.lock);
    g.release = true;
    g_cond_broadcast(&g.cond);
    g_mutex_unlock(&g.lock);
    fp_par_join(&j);
    CU_ASSERT_TRUE(fp_par_worth(1u << 20));
    fp_par_halves(1u << 20, 1u << 20, half_thread, ran);
    CU_ASSERT_PTR_EQUAL(ran[0], g_thread_self());
    CU_ASSERT_PTR_NOT_EQUAL(ran[1], g_thread_self());
    g_mutex_clear(&g.lock);
    g_cond_clear(&g.cond);
}

/* Relu nodes dyn<from>..dyn<to - 1>, from value y<from> to y<to>. */
static void dyn_chain(tb *b, int from, int to)
{
    for (int i = from; i < to; i++) {
        char name[32], in[32], out[32];
        g_snprintf(name, sizeof name, "dyn%d", i);
        g_snprintf(in, sizeof in, "y%d", i);
        g_snprintf(out, sizeof out, "y%d", i + 1);
        tb_node(b, "Relu", name, in, out);
    }
}

/* torch's x.view(x.size(0), -1) of `x`, into the output "flat", with its integer constants made by
 * Constant nodes at the end of the node list: their values are in the second half of the graph's,
 * whose reset (the shape pass, on the side thread from FP_PAR_MIN_NODES on) lists them to seed. */
static void flatten(tb *b, const char *x)
{
    int64_t zero[] = {0}, minus1[] = {-1};
    tb_attr_i(b, tb_node(b, "Constant", "k_idx0", "", "f_idx0"), "value_int", 0);
    tb_attr_ints(b, tb_node(b, "Constant", "k_axes0", "", "f_axes0"), "value_ints", 1, zero);
    tb_attr_ints(b, tb_node(b, "Constant", "k_minus1", "", "f_minus1"), "value_ints", 1, minus1);
    char io[64];
    g_snprintf(io, sizeof io, "%s", x);
    tb_node(b, "Shape", "f_shape", io, "f_s");
    tb_attr_i(b, tb_node(b, "Gather", "f_gather", "f_s,f_idx0", "f_d0"), "axis", 0);
    tb_node(b, "Unsqueeze", "f_unsqueeze", "f_d0,f_axes0", "f_u0");
    tb_attr_i(b, tb_node(b, "Concat", "f_concat", "f_u0,f_minus1", "f_target"), "axis", 0);
    g_snprintf(io, sizeof io, "%s,f_target", x);
    tb_node(b, "Reshape", "f_reshape", io, "flat");
    tb_output(b, "flat", 1, -1, NULL);
}

/* A model of more than FP_PAR_MIN_NODES nodes: blocks of Conv+BN+Relu (fused), a residual Add and
 * a Transpose pair (removed by layout), on a batch x 8 x 8 x 8 input; and a Relu chain on an input
 * of unknown shape (half before the blocks, half after) when `dyn`; `dangling` nodes reading a value
 * nothing defines: 1, one at the end; 2, one at the start too. Written to a temp file (caller
 * unlinks and frees the path)., whose metrics, sizes and costs are unknown (findings from every pass). */
static char *big_model(bool dyn, int dangling, bool pairs)
{
    tb *b = tb_new(13);
    int64_t x[] = {-1, 8, 8, 8}, w[] = {8, 8, 3, 3}, c[] = {8};
    tb_input(b, "x0", 1, 4, x);
    if (dyn)
        tb_input(b, "y0", 1, -1, NULL);
    tb_init(b, "w", 1, 4, w);
    const char *bn[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++)
        tb_init(b, bn[i], 1, 1, c);
    int64_t pads[] = {1, 1, 1, 1}, perm[] = {0, 2, 3, 1}, back[] = {0, 3, 1, 2};
    int blocks = FP_PAR_MIN_NODES / 6 + 64;
    if (dyn)
        dyn_chain(b, 0, 8); /* in the first half of the node list, the rest in the second */
    if (dangling == 2)
        tb_node(b, "Relu", "early", "nowhere_early", "from_early");
    for (int i = 0; i < blocks; i++) {
        char name[64], io[96], out[32];
        g_snprintf(name, sizeof name, "conv%d", i);
        g_snprintf(io, sizeof io, "x%d,w", i);
        g_snprintf(out, sizeof out, "c%d", i);
        tb_attr_ints(b, tb_node(b, "Conv", name, io, out), "pads", 4, pads);
        g_snprintf(name, sizeof name, "bn%d", i);
        g_snprintf(io, sizeof io, "c%d,scale,bias,mean,var", i);
        g_snprintf(out, sizeof out, "n%d", i);
        tb_attr_f(b, tb_node(b, "BatchNormalization", name, io, out), "epsilon", 1e-5f);
        g_snprintf(name, sizeof name, "relu%d", i);
        g_snprintf(io, sizeof io, "n%d", i);
        g_snprintf(out, sizeof out, "r%d", i);
        tb_node(b, "Relu", name, io, out);
        g_snprintf(name, sizeof name, "add%d", i);
        g_snprintf(io, sizeof io, "r%d,x%d", i, i);
        g_snprintf(out, sizeof out, "a%d", i);
        tb_node(b, "Add", name, io, out);
        g_snprintf(name, sizeof name, "nhwc%d", i);
        g_snprintf(io, sizeof io, "a%d", i);
        g_snprintf(out, sizeof out, "t%d", i);
        tb_attr_ints(b, tb_node(b, "Transpose", name, io, out), "perm", 4, perm);
        g_snprintf(name, sizeof name, "nchw%d", i);
        g_snprintf(io, sizeof io, "t%d", i);
        g_snprintf(out, sizeof out, "x%d", i + 1);
        if (pairs)
            tb_attr_ints(b, tb_node(b, "Transpose", name, io, out), "perm", 4, back);
        else /* the next Conv reads the permuted tensor (8x8x8 either way): nothing cancels */
            tb_node(b, "Relu", name, io, out);
    }
    char last[32];
    g_snprintf(last, sizeof last, "x%d", blocks);
    tb_output(b, last, 1, 4, x);
    flatten(b, last);
    if (dyn) {
        dyn_chain(b, 8, 16);
        tb_output(b, "y16", 1, -1, NULL);
    }
    if (dangling)
        tb_node(b, "Relu", "late", "nowhere_late", "from_late");
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

typedef struct {
    fp_model *m;
    fp_diag *diag;
    fp_memory_reuse *reuse; /* as cli/report.c: the headroom search resizes the final liveness */
    fp_pipeline_result res;
} run;

static void run_pipeline(run *r, const char *path, const fp_device *dev, const fp_target *t)
{
    g_autoptr(GError) err = NULL;
    r->m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->m);
    fp_pipeline_opts po = {
        .shapes = {.batch = 1},
        .target = t,
        .device = dev,
        .memory = {.strategy = FP_MEMPLAN_BEST,
                   .schedule = FP_SCHEDULE_GIVEN,
                   .align = dev->align_bytes,
                   .reuse = r->reuse = fp_memory_reuse_new(NULL)},
        .what_if = FP_DT_UNDEFINED,
    };
    r->diag = fp_diag_new();
    CU_ASSERT_FATAL(fp_pipeline_run(r->m, &po, &r->res, r->diag, &err));
}

static void run_clear(run *r)
{
    fp_pipeline_result_clear(&r->res);
    fp_memory_reuse_free(r->reuse);
    fp_diag_free(r->diag);
    fp_model_free(r->m);
}

/* The two runs of one model, with the side thread and without, agree: stages, plans, findings in
 * the same order. */
static void compare_runs(const run *two, const run *one, bool pairs)
{
    /* the shape pass's reset split its values too: the flatten's constants were seeded */
    for (int k = 0; k < 2; k++) {
        const fp_model *m = k ? one->m : two->m;
        g_autofree char *flat = fp_shape_to_string(&fp_graph_find(m->main, "flat")->shape);
        CU_ASSERT_STRING_EQUAL(flat, "1x512");
        CU_ASSERT(fp_graph_find(m->main, "f_target")->producer->flags & FP_NODE_FOLDED);
        const fp_value *c = fp_graph_find(m->main, "f_minus1");
        CU_ASSERT_FATAL(c->n_sval == 1 && c->sval);
        CU_ASSERT_EQUAL(c->sval[0].value, -1);
        CU_ASSERT(c->id >= m->main->values->len / 2);
    }
    CU_ASSERT(two->res.stages[1].ops < two->res.stages[0].ops); /* the model exercises fusion */
    /* and the Transposes: pairs cancel before the fusions (ONNX Runtime's transpose optimizer),
     * without them each one moves after the Relu before it, which leads to the next */
    const fp_transpose_result *tr = &two->res.layout.transpose;
    CU_ASSERT(tr->removed > 0);
    CU_ASSERT_EQUAL(tr->inserted == 0, pairs);
    for (int i = 0; i < 3; i++) {
        const fp_stage *a = &two->res.stages[i], *b = &one->res.stages[i];
        CU_ASSERT_EQUAL(a->ops, b->ops);
        CU_ASSERT_EQUAL(a->kernels, b->kernels);
        CU_ASSERT_EQUAL(a->conversions, b->conversions);
        CU_ASSERT_EQUAL(a->weight_bytes, b->weight_bytes);
        CU_ASSERT_EQUAL(a->activation_bytes, b->activation_bytes);
        CU_ASSERT(a->latency_s == b->latency_s); /* the same sums in the same order: equal bits */
        CU_ASSERT(a->latency_s > 0);
    }
    CU_ASSERT_EQUAL(two->res.cost->n_ops, one->res.cost->n_ops);
    CU_ASSERT_EQUAL(two->res.cost->unknown, one->res.cost->unknown);
    CU_ASSERT(two->res.cost->unknown > 0);
    CU_ASSERT_EQUAL(two->res.memory->arena, one->res.memory->arena);
    CU_ASSERT_EQUAL_FATAL(two->diag->entries->len, one->diag->entries->len);
    bool metrics = false, plan = false, cost = false;
    for (guint i = 0; i < two->diag->entries->len; i++) {
        const fp_diag_entry *a = two->diag->entries->pdata[i], *b = one->diag->entries->pdata[i];
        CU_ASSERT_STRING_EQUAL(a->code, b->code);
        CU_ASSERT_STRING_EQUAL(a->message, b->message);
        CU_ASSERT_EQUAL(a->level, b->level);
        metrics |= strcmp(a->code, "metrics-unknown") == 0;
        plan |= strcmp(a->code, "memory-unknown-size") == 0;
        cost |= strcmp(a->code, "cost-unknown") == 0;
    }
    CU_ASSERT(metrics && plan && cost); /* findings of the threads' passes, compared in order above */
}

/* The tests' round device profile and its target (the caller frees both). */
static void round_device(fp_device **dev, fp_target **t)
{
    g_autoptr(GError) err = NULL;
    *dev = fp_device_load(FP_SOURCE_DIR "/" ROUND, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*dev);
    *t = fp_target_load((*dev)->target, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*t);
}

static void test_pipeline_split(void)
{
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_target) t = NULL;
    round_device(&dev, &t);
    /* with Transpose pairs the transpose optimizer cancels them; without, it keeps every Transpose */
    for (int pairs = 1; pairs >= 0; pairs--) {
        g_autofree char *path = big_model(true, 0, pairs);
        run two, one;
        unsigned before = fp_par_side_jobs();
        run_pipeline(&two, path, dev, t);
        CU_ASSERT_EQUAL(fp_par_side_jobs() > before, g_get_num_processors() > 1); /* it did split */
        fp_par_allow(false);
        run_pipeline(&one, path, dev, t);
        fp_par_allow(true);
        g_unlink(path);
        compare_runs(&two, &one, pairs);
        run_clear(&two);
        run_clear(&one);
    }
}

/* The batch headroom, whose memory plans resize the liveness with its structure checked on the side
 * thread: the same search, evaluations and figures as on one thread. */
static void test_headroom_split(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_target) t = NULL;
    round_device(&dev, &t);
    g_autofree char *path = big_model(false, 0, true);
    fp_headroom_result hr[2];
    for (int k = 0; k < 2; k++) {
        run r;
        fp_par_allow(k == 0);
        run_pipeline(&r, path, dev, t);
        unsigned before = fp_par_side_jobs();
        fp_memory_opts mem = {.strategy = FP_MEMPLAN_BEST,
                              .schedule = FP_SCHEDULE_GIVEN,
                              .align = dev->align_bytes,
                              .reuse = r.reuse};
        fp_headroom_opts ho = {.capacity = dev->memory_bytes,
                               .reserve = dev->memory_bytes / 10,
                               .mem = mem,
                               .plan_at_1 = r.res.memory,
                               .shapes = {.batch = 1}};
        CU_ASSERT_FATAL(fp_pass_headroom(r.m, &ho, &hr[k], NULL, &err));
        CU_ASSERT_EQUAL(fp_par_side_jobs() > before, k == 0 && g_get_num_processors() > 1);
        run_clear(&r);
    }
    fp_par_allow(true);
    g_unlink(path);
    CU_ASSERT(hr[0].max_batch > 1);
    CU_ASSERT(hr[0].evaluations >= 2);
    CU_ASSERT_EQUAL(hr[0].max_batch, hr[1].max_batch);
    CU_ASSERT_EQUAL(hr[0].evaluations, hr[1].evaluations);
    CU_ASSERT_EQUAL(hr[0].bytes_at_max, hr[1].bytes_at_max);
    CU_ASSERT_EQUAL(hr[0].arena_at_max, hr[1].arena_at_max);
    CU_ASSERT_EQUAL(hr[0].bytes_above, hr[1].bytes_above);
    CU_ASSERT_EQUAL(hr[0].weight_bytes, hr[1].weight_bytes);
}

/* The IR verifier after the import checks a big graph's two halves at once: the error is the one
 * of the first broken node in node order, as on one thread. */
static void test_verify_split(void)
{
    for (int dangling = 1; dangling <= 2; dangling++) {
        g_autofree char *path = big_model(false, dangling, true);
        g_autoptr(GError) e2 = NULL, e1 = NULL;
        unsigned before = fp_par_side_jobs();
        g_autoptr(fp_model) two = fp_load_model(path, &e2);
        CU_ASSERT_EQUAL(fp_par_side_jobs() > before, g_get_num_processors() > 1);
        fp_par_allow(false);
        g_autoptr(fp_model) one = fp_load_model(path, &e1);
        fp_par_allow(true);
        g_unlink(path);
        CU_ASSERT_PTR_NULL(two);
        CU_ASSERT_PTR_NULL(one);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e1);
        CU_ASSERT_STRING_EQUAL(e2->message, e1->message);
        CU_ASSERT_EQUAL(e2->code, e1->code);
        CU_ASSERT_PTR_NOT_NULL(strstr(e2->message, dangling == 2 ? "'early'" : "'late'"));
    }
}

FP_TEST_SUITE(register_par)
{
    CU_pSuite s = CU_add_suite("par", NULL, NULL);
    CU_add_test(s, "side_job", test_side_job);
    CU_add_test(s, "side_busy", test_side_busy);
    CU_add_test(s, "pipeline_split", test_pipeline_split);
    CU_add_test(s, "headroom_split", test_headroom_split);
    CU_add_test(s, "verify_split", test_verify_split);
}
