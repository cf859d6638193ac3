/* test_memory_model.c - memory_model suite: the memory pass on whole models (shape inference
 * first), the batch-size headroom boundary, and the memory/headroom commands. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "frontends/load.h"
#include "passes/memory/headroom.h"
#include "passes/memory/memory.h"
#include "passes/shape/shapes.h"
#include "tutil.h"

enum { F32 = 1 };

/* x[N,64] -> MatMul(w 64x256) -> a -> Relu -> b -> MatMul(w2 256x10) -> y[N,10]; batch symbolic
 * unless fixed_batch > 0. */
static char *mlp_model(int64_t fixed_batch)
{
    tb *b = tb_new(13);
    int64_t n = fixed_batch > 0 ? fixed_batch : -1;
    int64_t xd[] = {n, 64}, wd[] = {64, 256}, w2d[] = {256, 10}, yd[] = {n, 10};
    tb_input(b, "x", F32, 2, xd);
    tb_init(b, "w", F32, 2, wd);
    tb_init(b, "w2", F32, 2, w2d);
    tb_node(b, "MatMul", "mm1", "x,w", "a");
    tb_node(b, "Relu", "relu", "a", "b");
    tb_node(b, "MatMul", "mm2", "b,w2", "y");
    tb_output(b, "y", F32, 2, yd);
    char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    return path;
}

static fp_model *load(const char *path)
{
    g_autoptr(GError) err = NULL;
    fp_model *m = fp_load_model(path, &err);
    g_assert_no_error(err);
    return m;
}

/* Weights + arena of m's main graph at batch B (best plan, given order). */
static uint64_t total_at(fp_model *m, int64_t B)
{
    fp_shape_opts so = {.batch = B};
    g_assert(fp_pass_shapes(m, &so, NULL, NULL));
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST};
    g_autoptr(fp_memory_result) r = fp_pass_memory(m->main, &mo, NULL, NULL);
    g_assert(r);
    return r->weight_bytes + r->arena;
}

static void test_memory_pass(void)
{
    g_autofree char *path = mlp_model(0);
    g_autoptr(fp_model) m = load(path);
    fp_shape_opts so = {.batch = 4};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, NULL));
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_COMPARE};
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_memory_result) r = fp_pass_memory(m->main, &mo, diag, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->weight_bytes, 4 * (64 * 256 + 256 * 10));
    /* x 1 KiB, a (b in place) 4 KiB, y 160 B -> 192 B: steps: x+a, a, a+y */
    CU_ASSERT_EQUAL(r->n_inplace, 1);
    CU_ASSERT_EQUAL(r->lower_bound, 1024 + 4096);
    CU_ASSERT_EQUAL(r->arena, 1024 + 4096);
    CU_ASSERT_EQUAL(r->naive_bytes, 1024 + 4096 + 4096 + 192);
    CU_ASSERT_EQUAL(r->n_order, 3);
    CU_ASSERT_EQUAL(r->peak_step, 0);
    CU_ASSERT_STRING_EQUAL(r->peak_node->name, "mm1");
    CU_ASSERT_EQUAL(r->n_peak, 2);
    CU_ASSERT_STRING_EQUAL(r->peak[0].value->name, "a");
    CU_ASSERT_EQUAL(r->peak[0].values, 2); /* a and b share it */
    CU_ASSERT(r->peak[1].input);
    CU_ASSERT(r->schedule_searched && r->schedule_exact);
    CU_ASSERT_STRING_EQUAL(r->schedule, "given");
    CU_ASSERT_EQUAL(r->n_unknown, 0);
    /* live per step: x and a, a (b in place), b and y */
    CU_ASSERT_EQUAL(r->live_bytes[0], 1024 + 4096);
    CU_ASSERT_EQUAL(r->live_bytes[1], 4096);
    CU_ASSERT_EQUAL(r->live_bytes[2], 4096 + 192);
    /* only naive and best were planned; with every_strategy all of them */
    CU_ASSERT(r->strategy_planned[FP_MEMPLAN_NAIVE] && r->strategy_planned[FP_MEMPLAN_BEST]);
    CU_ASSERT(!r->strategy_planned[FP_MEMPLAN_GREEDY_BY_SIZE] && !r->strategy_planned[FP_MEMPLAN_BEST_FIT]);
    mo.every_strategy = true;
    mo.schedule = FP_SCHEDULE_GIVEN;
    g_autoptr(fp_memory_result) all = fp_pass_memory(m->main, &mo, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++)
        CU_ASSERT(all->strategy_planned[s] && all->strategy_arena[s] >= all->lower_bound);
    CU_ASSERT(!all->schedule_searched);
    CU_ASSERT_EQUAL(all->lower_bound_optimized, all->lower_bound);
    g_unlink(path);
}

/* Two branches interleaved in the file (breadth-first): the optimized order finishes one branch
 * before starting the other and lowers the floor; it is a valid topological order. */
static void test_memory_branchy_order(void)
{
    tb *b = tb_new(13);
    int64_t xd[] = {1, 16}, wd[] = {16, 1024}, w2d[] = {1024, 16}, yd[] = {1, 32};
    tb_input(b, "x", F32, 2, xd);
    tb_init(b, "w", F32, 2, wd);
    tb_init(b, "w2", F32, 2, w2d);
    tb_node(b, "MatMul", "up1", "x,w", "u1");
    tb_node(b, "MatMul", "up2", "x,w", "u2");
    tb_node(b, "MatMul", "down1", "u1,w2", "d1");
    tb_node(b, "MatMul", "down2", "u2,w2", "d2");
    tb_node_t *c = tb_node(b, "Concat", "join", "d1,d2", "y");
    tb_attr_i(b, c, "axis", 1);
    tb_output(b, "y", F32, 2, yd);
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(fp_model) m = load(path);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){0}, NULL, NULL));
    fp_memory_opts given = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_COMPARE}, opt = given;
    opt.schedule = FP_SCHEDULE_OPTIMIZED;
    g_autoptr(fp_memory_result) rg = fp_pass_memory(m->main, &given, NULL, NULL);
    g_autoptr(fp_memory_result) ro = fp_pass_memory(m->main, &opt, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ro);
    CU_ASSERT_EQUAL(rg->lower_bound, 64 + 4096 + 4096);
    CU_ASSERT_EQUAL(ro->lower_bound, 64 + 4096 + 64);
    CU_ASSERT_EQUAL(rg->lower_bound_optimized, ro->lower_bound);
    CU_ASSERT_STRING_EQUAL(ro->schedule, "optimized");
    CU_ASSERT_STRING_EQUAL(rg->schedule, "given");
    /* the live bytes follow the order planned: their peak is its LOAD */
    uint64_t pg = 0, po = 0;
    for (uint32_t i = 0; i < rg->n_order; i++)
        pg = MAX(pg, rg->live_bytes[i]);
    for (uint32_t i = 0; i < ro->n_order; i++)
        po = MAX(po, ro->live_bytes[i]);
    CU_ASSERT_EQUAL(pg, rg->lower_bound);
    CU_ASSERT_EQUAL(po, ro->lower_bound);
    /* the arena alone of the optimized order */
    fp_memory_arena_result ar;
    CU_ASSERT_FATAL(fp_memory_arena(m->main, &opt, &ar, NULL, NULL));
    CU_ASSERT_EQUAL(ar.arena, ro->arena);
    /* valid: each node after the producers of its inputs */
    for (uint32_t i = 0; i < ro->n_order; i++)
        for (uint32_t k = 0; k < ro->order[i]->n_inputs; k++) {
            const fp_node *p = ro->order[i]->inputs[k] ? ro->order[i]->inputs[k]->producer : NULL;
            bool before = !p;
            for (uint32_t j = 0; j < i && !before; j++)
                before = ro->order[j] == p;
            CU_ASSERT(before);
        }
    g_unlink(path);
}

/* An If: its branches' arena is workspace at the If's step. */
static void test_memory_subgraph(void)
{
    g_autofree char *path = g_build_filename(FP_SOURCE_DIR, "models", "if_subgraph.onnx", NULL);
    g_autoptr(fp_model) m = load(path);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &(fp_shape_opts){.batch = 2}, NULL, NULL));
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST};
    g_autoptr(fp_memory_result) r = fp_pass_memory(m->main, &mo, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(r->workspace_bytes > 0);
    bool found = false;
    for (uint32_t i = 0; i < r->n_peak; i++)
        found |= r->peak[i].ws_node != NULL && r->peak[i].bytes == r->workspace_bytes;
    CU_ASSERT(found);
    /* the arena alone and the naive sum: the full plan's figures */
    fp_memory_arena_result ar;
    CU_ASSERT_FATAL(fp_memory_arena(m->main, &mo, &ar, NULL, NULL));
    CU_ASSERT_EQUAL(ar.arena, r->arena);
    CU_ASSERT_EQUAL(ar.weight_bytes, r->weight_bytes);
    CU_ASSERT_EQUAL(ar.workspace_bytes, r->workspace_bytes);
    CU_ASSERT_EQUAL(ar.n_unknown, r->n_unknown);
    fp_memory_naive_result nv;
    CU_ASSERT_FATAL(fp_memory_naive(m->main, &mo, &nv, NULL, NULL));
    CU_ASSERT_EQUAL(nv.naive_bytes, r->naive_bytes);
    CU_ASSERT_EQUAL(nv.weight_bytes, r->weight_bytes);
    CU_ASSERT_EQUAL(nv.workspace_bytes, r->workspace_bytes);
    CU_ASSERT(nv.n_buffers == r->n_buffers && nv.n_views == r->n_views && nv.n_unknown == r->n_unknown);
}

/* The answer is exact at the boundary: plan(B) fits and plan(B + 1) does not. */
static void test_headroom_boundary(void)
{
    g_autofree char *path = mlp_model(0);
    g_autoptr(fp_model) m = load(path);
    for (int64_t want = 1; want <= 300; want += 37) {
        uint64_t at = total_at(m, want), above = total_at(m, want + 1);
        CU_ASSERT_FATAL(above > at);
        uint64_t reserve = 1000 + (uint64_t)want;
        fp_headroom_opts ho = {.capacity = at + reserve,
                               .reserve = reserve,
                               .mem = {.strategy = FP_MEMPLAN_BEST},
                               .shapes = {.batch = want + 1}}; /* as total_at left it */
        fp_headroom_result res;
        g_autoptr(GError) err = NULL;
        CU_ASSERT_FATAL(fp_pass_headroom(m, &ho, &res, NULL, &err));
        CU_ASSERT_EQUAL(res.max_batch, want);
        CU_ASSERT_EQUAL(res.bytes_at_max, at);
        CU_ASSERT_EQUAL(res.bytes_above, above);
        CU_ASSERT(!res.at_limit);
        CU_ASSERT(res.bytes_at_max <= res.usable && res.bytes_above > res.usable);
        /* independently: the model is left as found, and planning again agrees */
        CU_ASSERT_EQUAL(m->main->inputs->len, 1);
        const fp_value *x = g_ptr_array_index(m->main->inputs, 0);
        CU_ASSERT_EQUAL(x->shape.dims[0].value, want + 1);
        CU_ASSERT(total_at(m, res.max_batch) <= res.usable);
        CU_ASSERT(total_at(m, res.max_batch + 1) > res.usable);
    }
    /* nothing fits */
    fp_headroom_opts tiny = {.capacity = 1000, .mem = {.strategy = FP_MEMPLAN_BEST}};
    fp_headroom_result res;
    CU_ASSERT_FATAL(fp_pass_headroom(m, &tiny, &res, NULL, NULL));
    CU_ASSERT_EQUAL(res.max_batch, 0);
    CU_ASSERT(res.bytes_above > 1000);
    /* everything fits up to the limit */
    fp_headroom_opts huge = {.capacity = (uint64_t)1 << 40, .mem = {.strategy = FP_MEMPLAN_BEST}, .max_batch = 100};
    CU_ASSERT_FATAL(fp_pass_headroom(m, &huge, &res, NULL, NULL));
    CU_ASSERT_EQUAL(res.max_batch, 100);
    CU_ASSERT(res.at_limit);
    g_unlink(path);
}

/* The state a full plan leaves in fp_memory_opts.reuse (its liveness, its winning candidate) gives
 * arena-only plans at other batches, and the headroom search handed the plan at batch 1, the
 * figures of fresh full plans. */
static void test_memory_reuse(void)
{
    g_autofree char *path = mlp_model(0);
    g_autoptr(fp_model) m = load(path);
    g_autoptr(fp_memory_reuse) reuse = fp_memory_reuse_new(NULL);
    fp_memory_opts full = {.strategy = FP_MEMPLAN_BEST, .reuse = reuse};
    fp_shape_opts at1 = {.batch = 1};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at1, NULL, NULL));
    g_autoptr(fp_memory_result) plan1 = fp_pass_memory(m->main, &full, NULL, NULL);
    CU_ASSERT_FATAL(plan1 != NULL);
    for (int64_t B = 3; B <= 300; B += 59) {
        uint64_t want = total_at(m, B); /* a fresh full plan, without the reuse state */
        fp_memory_arena_result r;
        CU_ASSERT_FATAL(fp_memory_arena(m->main, &full, &r, NULL, NULL));
        CU_ASSERT_EQUAL(r.weight_bytes + r.arena, want);
    }
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at1, NULL, NULL));
    uint64_t at200 = total_at(m, 200);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at1, NULL, NULL));
    fp_headroom_opts ho = {.capacity = at200 + 100, .reserve = 100, .mem = full, .plan_at_1 = plan1, .shapes = at1};
    fp_headroom_result res;
    CU_ASSERT_FATAL(fp_pass_headroom(m, &ho, &res, NULL, NULL));
    CU_ASSERT_EQUAL(res.max_batch, 200);
    CU_ASSERT_EQUAL(res.bytes_at_max, at200);
    CU_ASSERT_EQUAL(res.bytes_above, total_at(m, 201));
    g_unlink(path);
}

/* Every value's shape and every node's folded state of m's main graph, as one string. */
static char *inferred_state(const fp_model *m)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < m->main->values->len; i++) {
        const fp_value *v = g_ptr_array_index(m->main->values, i);
        g_autofree char *d = fp_shape_to_string(&v->shape);
        g_string_append_printf(s, "%s:%s ", v->name, d);
    }
    for (guint i = 0; i < m->main->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(m->main->nodes, i);
        g_string_append_printf(s, "%s:%d ", n->name, (n->flags & FP_NODE_FOLDED) != 0);
    }
    return g_string_free(s, FALSE);
}

/* Every value's shape and every node's folded state after the search are those before it, with or
 * without findings asked for, whatever batch the search ended at, and after a failed search. */
static void test_headroom_leaves_shapes(void)
{
    g_autofree char *path = mlp_model(0);
    g_autoptr(fp_model) m = load(path);
    fp_shape_opts so = {.batch = 3};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, NULL));
    const fp_value *a = fp_graph_find(m->main, "a");
    CU_ASSERT_FATAL(a != NULL && a->shape.dims[0].value == 3);
    g_autofree char *before = inferred_state(m);
    uint64_t at = total_at(m, 40);
    CU_ASSERT_FATAL(fp_pass_shapes(m, &so, NULL, NULL));
    /* --input x:?x64: the batch left free */
    fp_dim free_dims[] = {{-1, NULL}, {64, NULL}};
    fp_shape free_x = {2, free_dims};
    g_autoptr(GHashTable) inputs = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(inputs, (gpointer) "x", &free_x);
    for (int k = 0; k < 4; k++) {
        fp_headroom_opts ho = {.capacity = k == 2 ? 1000 : at + 100,
                               .reserve = 100,
                               .mem = {.strategy = FP_MEMPLAN_BEST},
                               .shapes = so};
        fp_headroom_result res;
        g_autoptr(fp_diag) diag = k % 2 ? fp_diag_new() : NULL;
        g_autoptr(GError) err = NULL;
        if (k >= 2)
            ho.input_shapes = inputs;
        if (k == 3)
            ho.batch_dim = "nope"; /* fails after inferring the model with the batch free */
        CU_ASSERT_EQUAL(fp_pass_headroom(m, &ho, &res, diag, &err), k != 3);
        CU_ASSERT_EQUAL(res.max_batch, k == 2 || k == 3 ? 0 : 40);
        g_autofree char *after = inferred_state(m);
        CU_ASSERT_STRING_EQUAL(after, before);
    }
    /* given the caller's plan at batch 1: the search ends at other batches, the model back at 1 */
    fp_shape_opts at1 = {.batch = 1};
    CU_ASSERT_FATAL(fp_pass_shapes(m, &at1, NULL, NULL));
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST};
    g_autoptr(fp_memory_result) plan1 = fp_pass_memory(m->main, &mo, NULL, NULL);
    fp_headroom_opts ho = {.capacity = at + 100, .reserve = 100, .mem = mo, .plan_at_1 = plan1, .shapes = at1};
    fp_headroom_result res;
    CU_ASSERT_FATAL(fp_pass_headroom(m, &ho, &res, NULL, NULL));
    CU_ASSERT_EQUAL(res.max_batch, 40);
    CU_ASSERT_EQUAL(a->shape.dims[0].value, 1);
    g_unlink(path);
}

static void test_headroom_no_batch(void)
{
    g_autofree char *path = mlp_model(8);
    g_autoptr(fp_model) m = load(path);
    fp_headroom_opts ho = {.capacity = (uint64_t)1 << 30, .mem = {.strategy = FP_MEMPLAN_BEST}};
    fp_headroom_result res;
    g_autoptr(GError) err = NULL;
    CU_ASSERT(!fp_pass_headroom(m, &ho, &res, NULL, &err));
    CU_ASSERT(g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "--batch-dim") : NULL);
    g_clear_error(&err);
    /* a named symbol works wherever it is */
    g_autofree char *sym = mlp_model(0);
    g_autoptr(fp_model) m2 = load(sym);
    ho.batch_dim = "N";
    ho.max_batch = 64;
    CU_ASSERT(fp_pass_headroom(m2, &ho, &res, NULL, &err));
    CU_ASSERT_EQUAL(res.max_batch, 64);
    ho.batch_dim = "nope";
    CU_ASSERT(!fp_pass_headroom(m2, &ho, &res, NULL, &err));
    CU_ASSERT(g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH));
    g_clear_error(&err);
    /* an activation of unknown size at batch 1 leaves memory unbounded: an error, not a guess */
    tb *b = tb_new(13);
    int64_t xd[] = {-1, 4};
    tb_input(b, "x", F32, 2, xd);
    tb_input(b, "z", F32, -1, NULL);
    tb_node(b, "Add", "add", "x,z", "y");
    tb_output(b, "y", F32, -1, NULL);
    g_autofree char *unk = tb_write_temp(b, ".onnx");
    tb_free(b);
    g_autoptr(fp_model) m3 = load(unk);
    ho.batch_dim = NULL;
    CU_ASSERT(!fp_pass_headroom(m3, &ho, &res, NULL, &err));
    CU_ASSERT(g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_UNKNOWN_SIZE));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "--input x:?x4") : NULL);
    g_unlink(path);
    g_unlink(sym);
    g_unlink(unk);
}

/* ---------------------------------------------------------------- commands */

static JsonObject *parse(JsonParser *p, const char *text)
{
    if (!json_parser_load_from_data(p, text, -1, NULL))
        return NULL;
    return json_node_get_object(json_parser_get_root(p));
}

static void test_cli_memory(void)
{
    g_autofree char *path = mlp_model(0);
    tu_run_result r = tu_run((const char *[]){"memory", "--batch", "4", "--format", "json", path, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    JsonObject *o = parse(p, r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "schema"), 1);
    JsonObject *mem = json_object_get_object_member(o, "memory");
    CU_ASSERT_EQUAL(json_object_get_int_member(mem, "lower_bound_bytes"), 5120);
    CU_ASSERT_EQUAL(json_object_get_int_member(mem, "arena_bytes"), 5120);
    CU_ASSERT_EQUAL(json_object_get_int_member(mem, "naive_bytes"), 9408);
    CU_ASSERT_EQUAL(json_object_get_int_member(mem, "weight_bytes"), 75776);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(mem, "strategy"), "best");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(mem, "schedule"), "given");
    CU_ASSERT_EQUAL(json_object_get_int_member(mem, "peak_step"), 0);
    JsonArray *peak = json_object_get_array_member(mem, "peak_tensors");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(peak), 2);
    JsonObject *t0 = json_array_get_object_element(peak, 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(t0, "name"), "a");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(t0, "producer"), "mm1");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(t0, "last_consumer"), "mm2");
    JsonObject *st = json_object_get_object_member(mem, "strategies");
    CU_ASSERT_EQUAL(json_object_get_int_member(st, "naive"), 9408);
    tu_run_clear(&r);

    r = tu_run((const char *[]){"memory", "--batch", "4", "--strategy", "greedy_by_size", "--schedule", "optimized",
                                path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "5.0 KiB planned (greedy_by_size"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "peak        step 0 of 3: 'mm1' (MatMul)"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    tu_run_clear(&r);

    const char *bad[][6] = {
        {"memory", "--strategy", "tetris", NULL},
        {"memory", "--schedule", "random", NULL},
        {"memory", "--align", "-4", NULL},
        {"memory", "--top", "-1", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *args[8] = {0};
        size_t k = 0;
        for (; bad[i][k]; k++)
            args[k] = bad[i][k];
        args[k] = path;
        r = tu_run(args);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        tu_run_clear(&r);
    }
    r = tu_run((const char *[]){"memory", "/nonexistent.onnx", NULL});
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_clear(&r);
    g_unlink(path);
}

static void test_cli_headroom(void)
{
    g_autofree char *path = mlp_model(0);
    g_autoptr(fp_model) m = load(path);
    uint64_t at = total_at(m, 50);
    g_autofree char *cap = g_strdup_printf("%" G_GUINT64_FORMAT, at + 100);
    tu_run_result r = tu_run(
        (const char *[]){"headroom", "--memory", cap, "--reserve", "100", "-f", "json", path, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    JsonObject *o = parse(p, r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    JsonObject *h = json_object_get_object_member(o, "headroom");
    CU_ASSERT_EQUAL(json_object_get_int_member(h, "max_batch"), 50);
    CU_ASSERT_EQUAL(json_object_get_int_member(h, "bytes_at_max"), (gint64)at);
    CU_ASSERT_EQUAL(json_object_get_int_member(h, "capacity_bytes"), (gint64)(at + 100));
    CU_ASSERT(json_object_get_int_member(h, "bytes_above_max") > (gint64)at);
    tu_run_clear(&r);

    r = tu_run((const char *[]){"headroom", "--memory", "1GiB", "--reserve", "10%", "--max-batch", "1000", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "max batch   1000 (the search limit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "reserve 102.4 MiB (10%)"));
    tu_run_clear(&r);

    g_autofree char *fixed = mlp_model(8);
    const char *bad[][8] = {
        {"headroom", path, NULL},                           /* no capacity */
        {"headroom", "--memory", "12 parsecs", path, NULL}, /* bad size */
        {"headroom", "--memory", "1GiB", "--reserve", "120%", path, NULL},
        {"headroom", "--memory", "1GiB", "--batch", "4", path, NULL}, /* batch is the answer */
        {"headroom", "--device", "no-such-device", path, NULL},
        {"headroom", "--memory", "1GiB", fixed, NULL}, /* no symbolic batch */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        r = tu_run(bad[i]);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        if (i == 5)
            CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--batch-dim"));
        tu_run_clear(&r);
    }
    g_unlink(path);
    g_unlink(fixed);
}

FP_TEST_SUITE(register_memory_model)
{
    CU_pSuite s = CU_add_suite("memory_model", NULL, NULL);
    CU_add_test(s, "memory pass on a model", test_memory_pass);
    CU_add_test(s, "optimized order of interleaved branches", test_memory_branchy_order);
    CU_add_test(s, "subgraph workspace", test_memory_subgraph);
    CU_add_test(s, "headroom boundary", test_headroom_boundary);
    CU_add_test(s, "headroom without a batch", test_headroom_no_batch);
    CU_add_test(s, "headroom leaves the shapes as found", test_headroom_leaves_shapes);
    CU_add_test(s, "plans carrying their state to other batches", test_memory_reuse);
    CU_add_test(s, "memory command", test_cli_memory);
    CU_add_test(s, "headroom command", test_cli_headroom);
}
