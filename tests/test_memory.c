/* test_memory.c - memory suite: offset planners (property tests, exhaustive optimum on tiny
 * cases), liveness rules on crafted graphs (views, in-place, weights, fusion, unknown sizes), and
 * memory-aware scheduling (property tests, exhaustive optimum over all orders of tiny DAGs). */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "ir/graph.h"
#include "passes/memory/liveness.h"
#include "passes/memory/memory.h"
#include "passes/memory/memplan.h"
#include "passes/memory/schedule.h"
#include "reports/memory.h"
#include "tutil.h"

/* ---------------------------------------------------------------- independent references */

static uint64_t round_up(uint64_t x, uint64_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

/* LOAD by the definition: every step, the sum of rounded sizes live there. */
static uint64_t ref_load(const fp_membuf *b, size_t n, uint64_t align)
{
    uint32_t T = 0;
    for (size_t i = 0; i < n; i++)
        T = MAX(T, b[i].last + 1);
    uint64_t best = 0;
    for (uint32_t t = 0; t < T; t++) {
        uint64_t live = 0;
        for (size_t i = 0; i < n; i++)
            if (b[i].first <= t && t <= b[i].last)
                live += round_up(b[i].size, align);
        best = MAX(best, live);
    }
    return best;
}

/* Checks a plan pair by pair; returns its arena or UINT64_MAX when invalid. */
static uint64_t ref_check(const fp_membuf *b, size_t n, uint64_t align, const uint64_t *off)
{
    uint64_t arena = 0;
    for (size_t i = 0; i < n; i++) {
        if (!b[i].size)
            continue;
        if (align > 1 && off[i] % align)
            return UINT64_MAX;
        arena = MAX(arena, off[i] + round_up(b[i].size, align));
        for (size_t j = 0; j < i; j++) {
            if (!b[j].size || b[i].last < b[j].first || b[j].last < b[i].first)
                continue;
            if (off[i] < off[j] + round_up(b[j].size, align) && off[j] < off[i] + round_up(b[i].size, align))
                return UINT64_MAX;
        }
    }
    return arena;
}

/* Smallest arena by exhaustive search over every integer offset below the best arena found so far
 * (sizes are small in these tests). */
static void ref_opt_dfs(const fp_membuf *b, size_t n, size_t i, uint64_t *off, uint64_t arena, uint64_t *best)
{
    if (arena >= *best)
        return;
    if (i == n) {
        *best = arena;
        return;
    }
    for (uint64_t o = 0; o + b[i].size < *best; o++) {
        bool ok = true;
        for (size_t j = 0; j < i && ok; j++)
            if (!(b[i].last < b[j].first || b[j].last < b[i].first))
                ok = o >= off[j] + b[j].size || off[j] >= o + b[i].size;
        if (!ok)
            continue;
        off[i] = o;
        ref_opt_dfs(b, n, i + 1, off, MAX(arena, o + b[i].size), best);
    }
}

static uint64_t ref_opt(const fp_membuf *b, size_t n)
{
    uint64_t off[16], best = UINT64_MAX;
    g_assert(n <= 16);
    ref_opt_dfs(b, n, 0, off, 0, &best);
    return n ? best : 0;
}

static fp_membuf *random_lifetimes(GRand *r, size_t n, uint32_t T, uint64_t max_size, int zero_pct)
{
    fp_membuf *b = g_new(fp_membuf, n + 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t f = (uint32_t)g_rand_int_range(r, 0, (gint32)T),
                 l = (uint32_t)g_rand_int_range(r, (gint32)f, (gint32)T);
        uint64_t s = g_rand_int_range(r, 0, 100) < zero_pct ? 0
                                                            : (uint64_t)g_rand_int_range(r, 1, (gint32)max_size + 1);
        b[i] = (fp_membuf){s, f, l};
    }
    return b;
}

/* ---------------------------------------------------------------- planners */

static void test_strategy_names(void)
{
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        fp_memplan_strategy back;
        CU_ASSERT(fp_memplan_strategy_from_name(fp_memplan_strategy_name((fp_memplan_strategy)s), &back));
        CU_ASSERT_EQUAL(back, (fp_memplan_strategy)s);
    }
    fp_memplan_strategy x;
    CU_ASSERT(!fp_memplan_strategy_from_name("bogus", &x));
    uint64_t a;
    CU_ASSERT(fp_memplan_align(65, 64, &a) && a == 128);
    CU_ASSERT(fp_memplan_align(0, 64, &a) && a == 0);
    CU_ASSERT(fp_memplan_align(7, 1, &a) && a == 7);
    CU_ASSERT(fp_memplan_align(10, 3, &a) && a == 12);
    CU_ASSERT(!fp_memplan_align(UINT64_MAX - 2, 64, &a));
}

/* Thousands of random instances: every plan valid and aligned, arena >= LOAD, LOAD right, naive
 * = the sum, `best` never above greedy_by_size or best_fit, fp_memplan_verify agrees. */
static void test_plan_random(void)
{
    GRand *r = g_rand_new_with_seed(42);
    static const uint64_t aligns[] = {1, 8, 64};
    unsigned failures = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)g_rand_int_range(r, 0, 41);
        uint32_t T = (uint32_t)g_rand_int_range(r, 1, 31);
        uint64_t align = aligns[g_rand_int_range(r, 0, 3)];
        fp_membuf *b = random_lifetimes(r, n, T, 1000, 15);
        uint64_t *off = g_new(uint64_t, n + 1), arena[FP_MEMPLAN_COUNT];
        uint64_t load = ref_load(b, n, align), sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += round_up(b[i].size, align);
        for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
            fp_memplan_result res;
            CU_ASSERT_FATAL(fp_memplan_plan(b, n, align, (fp_memplan_strategy)s, off, &res, NULL));
            uint64_t checked = ref_check(b, n, align, off), verified = 0;
            bool ok = checked == res.arena && res.load == load && res.arena >= load;
            ok = ok && fp_memplan_verify(b, n, align, off, &verified, NULL) && verified == res.arena;
            failures += !ok;
            arena[s] = res.arena;
        }
        failures += arena[FP_MEMPLAN_NAIVE] != sum;
        failures += arena[FP_MEMPLAN_BEST] > arena[FP_MEMPLAN_GREEDY_BY_SIZE];
        failures += arena[FP_MEMPLAN_BEST] > arena[FP_MEMPLAN_BEST_FIT];
        g_free(off);
        g_free(b);
    }
    CU_ASSERT_EQUAL(failures, 0);
    g_rand_free(r);
}

/* Tiny instances: `best` reaches the optimum found by exhaustive search over offsets. */
static void test_plan_exact(void)
{
    GRand *r = g_rand_new_with_seed(7);
    unsigned failures = 0;
    for (int iter = 0; iter < 1500; iter++) {
        size_t n = (size_t)g_rand_int_range(r, 1, 8);
        fp_membuf *b = random_lifetimes(r, n, (uint32_t)g_rand_int_range(r, 1, 6), 5, 0);
        uint64_t off[16];
        fp_memplan_result res;
        CU_ASSERT_FATAL(fp_memplan_plan(b, n, 1, FP_MEMPLAN_BEST, off, &res, NULL));
        uint64_t opt = ref_opt(b, n);
        failures += res.arena != opt || ref_check(b, n, 1, off) != res.arena;
        g_free(b);
    }
    CU_ASSERT_EQUAL(failures, 0);
    g_rand_free(r);
    /* an instance where no plan reaches LOAD */
    fp_membuf b[] = {{1, 2, 3}, {2, 3, 4}, {2, 4, 5}, {1, 2, 4}, {3, 1, 2}, {3, 5, 5}, {2, 1, 1}};
    uint64_t off[7];
    fp_memplan_result res;
    CU_ASSERT(fp_memplan_plan(b, 7, 1, FP_MEMPLAN_BEST, off, &res, NULL));
    CU_ASSERT_EQUAL(res.load, 5);
    CU_ASSERT_EQUAL(ref_opt(b, 7), 6);
    CU_ASSERT_EQUAL(res.arena, 6);
}

/* fp_memplan_arena: with any hint (a candidate's name, one `best` does not try as a sorted order, or
 * none) the arena and LOAD of fp_memplan_plan's `best`; where the hint misses LOAD, the method too
 * (the hint's plan must not decide ties); where it reaches LOAD, the hint's method. */
static void test_plan_arena_hint(void)
{
    static const char *const hints[] = {NULL,
                                        "greedy_by_size",
                                        "size_lowest_fit",
                                        "best_fit",
                                        "first_lowest_fit",
                                        "breadth_smallest_gap",
                                        "length_lowest_fit",
                                        "area_smallest_gap",
                                        "bump",
                                        "exact",
                                        "bogus"};
    GRand *r = g_rand_new_with_seed(11);
    unsigned failures = 0, hint_hits = 0;
    for (int iter = 0; iter < 1500; iter++) {
        size_t n = (size_t)g_rand_int_range(r, 0, 30);
        fp_membuf *b = random_lifetimes(r, n, (uint32_t)g_rand_int_range(r, 1, 20), 1000, 10);
        uint64_t *off = g_new(uint64_t, n + 1);
        fp_memplan_result full, x;
        CU_ASSERT_FATAL(fp_memplan_plan(b, n, 64, FP_MEMPLAN_BEST, off, &full, NULL));
        for (size_t h = 0; h < G_N_ELEMENTS(hints); h++) {
            CU_ASSERT_FATAL(fp_memplan_arena(b, n, 64, FP_MEMPLAN_BEST, hints[h], &x, NULL));
            failures += x.arena != full.arena || x.load != full.load || x.peak_step != full.peak_step;
            bool hit = hints[h] && x.arena == x.load && n && strcmp(x.method, hints[h]) == 0;
            hint_hits += hit;
            failures += !hit && strcmp(x.method, full.method) != 0;
        }
        g_free(off);
        g_free(b);
    }
    CU_ASSERT_EQUAL(failures, 0);
    CU_ASSERT(hint_hits > 1000);
    g_rand_free(r);
    /* test_plan_crafted's instance: best_fit misses LOAD, greedy_by_size reaches it */
    fp_membuf b[] = {{64, 0, 0}, {64, 0, 1}, {128, 1, 1}};
    fp_memplan_result res;
    CU_ASSERT(fp_memplan_arena(b, 3, 64, FP_MEMPLAN_BEST, "best_fit", &res, NULL));
    CU_ASSERT(res.arena == 192 && res.load == 192 && strcmp(res.method, "greedy_by_size") == 0);
    CU_ASSERT(fp_memplan_arena(b, 3, 64, FP_MEMPLAN_BEST_FIT, "greedy_by_size", &res, NULL));
    CU_ASSERT(res.arena == 256 && strcmp(res.method, "best_fit") == 0); /* only `best` takes hints */
}

/* Execution-order best fit fragments where largest-first does not. */
static void test_plan_crafted(void)
{
    /* A and B live at step 0, B and C at step 1; C is twice as large */
    fp_membuf b[] = {{64, 0, 0}, {64, 0, 1}, {128, 1, 1}};
    uint64_t off[3];
    fp_memplan_result res;
    CU_ASSERT(fp_memplan_plan(b, 3, 64, FP_MEMPLAN_BEST_FIT, off, &res, NULL));
    CU_ASSERT_EQUAL(res.load, 192);
    CU_ASSERT_EQUAL(res.arena, 256);
    CU_ASSERT(fp_memplan_plan(b, 3, 64, FP_MEMPLAN_GREEDY_BY_SIZE, off, &res, NULL));
    CU_ASSERT_EQUAL(res.arena, 192);
    CU_ASSERT_EQUAL(off[2], 0);
    CU_ASSERT_EQUAL(res.peak_step, 1);
    CU_ASSERT(fp_memplan_plan(b, 3, 64, FP_MEMPLAN_NAIVE, off, &res, NULL));
    CU_ASSERT_EQUAL(res.arena, 256);
    /* rounding: 1 byte takes a whole alignment unit */
    fp_membuf c[] = {{1, 0, 0}, {1, 0, 0}};
    CU_ASSERT(fp_memplan_plan(c, 2, 256, FP_MEMPLAN_BEST, off, &res, NULL));
    CU_ASSERT_EQUAL(res.arena, 512);
    CU_ASSERT_EQUAL(res.load, 512);
    /* sparse steps are fine */
    fp_membuf d[] = {{10, 1000000, 3000000}, {10, 2000000, 2000000}, {10, 3000001, 4000000000u}};
    CU_ASSERT(fp_memplan_plan(d, 3, 1, FP_MEMPLAN_BEST, off, &res, NULL));
    CU_ASSERT_EQUAL(res.arena, 20);
    CU_ASSERT_EQUAL(res.peak_step, 2000000);
    /* nothing to plan */
    CU_ASSERT(fp_memplan_plan(NULL, 0, 64, FP_MEMPLAN_BEST, off, &res, NULL));
    CU_ASSERT_EQUAL(res.arena, 0);
    CU_ASSERT_EQUAL(res.load, 0);
}

static void test_plan_overflow(void)
{
    fp_membuf b[] = {{UINT64_MAX / 2 + 1, 0, 0}, {UINT64_MAX / 2 + 1, 1, 1}};
    uint64_t off[2], load;
    fp_memplan_result res;
    g_autoptr(GError) err = NULL;
    CU_ASSERT(!fp_memplan_plan(b, 2, 1, FP_MEMPLAN_BEST, off, &res, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    CU_ASSERT(!fp_memplan_load(b, 2, 1, &load, NULL, &err));
    CU_ASSERT(g_error_matches(err, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW));
}

/* fp_memplan_naive_add, one size at a time, gives the arena, the offsets and the overflow error of
 * fp_memplan_plan with FP_MEMPLAN_NAIVE. */
static void test_plan_naive_sum(void)
{
    GRand *r = g_rand_new_with_seed(7);
    for (int iter = 0; iter < 200; iter++) {
        size_t n = (size_t)g_rand_int_range(r, 0, 40);
        uint64_t align = iter % 3 == 0 ? 1 : 64;
        g_autofree fp_membuf *b = random_lifetimes(r, n, 20, 1000, 30);
        g_autofree uint64_t *off = g_new(uint64_t, n + 1), *off2 = g_new(uint64_t, n + 1);
        fp_memplan_result res;
        CU_ASSERT_FATAL(fp_memplan_plan(b, n, align, FP_MEMPLAN_NAIVE, off, &res, NULL));
        fp_memplan_naive nv = {0};
        for (size_t i = 0; i < n; i++)
            CU_ASSERT_FATAL(fp_memplan_naive_add(&nv, b[i].size, align, &off2[i], NULL));
        CU_ASSERT_EQUAL(nv.total, res.arena);
        CU_ASSERT_EQUAL(nv.index, n);
        CU_ASSERT(n == 0 || memcmp(off, off2, n * sizeof *off) == 0);
    }
    g_rand_free(r);
    fp_membuf b[] = {{10, 0, 0}, {0, 0, 0}, {UINT64_MAX / 2, 1, 1}, {UINT64_MAX / 2, 2, 2}};
    uint64_t off[4];
    fp_memplan_result res;
    g_autoptr(GError) e1 = NULL, e2 = NULL;
    CU_ASSERT(!fp_memplan_plan(b, 4, 64, FP_MEMPLAN_NAIVE, off, &res, &e1));
    fp_memplan_naive nv = {0};
    bool ok = true;
    for (size_t i = 0; i < 4 && ok; i++)
        ok = fp_memplan_naive_add(&nv, b[i].size, 64, NULL, &e2);
    CU_ASSERT(!ok);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
    CU_ASSERT_STRING_EQUAL(e1->message, e2->message);
    CU_ASSERT(g_error_matches(e2, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW));
}

static void test_plan_verify(void)
{
    fp_membuf b[] = {{100, 0, 2}, {50, 2, 3}, {50, 4, 4}};
    uint64_t good[] = {0, 128, 0}, overlap[] = {0, 64, 0}, misaligned[] = {0, 100, 0};
    size_t bad[2];
    uint64_t arena = 0;
    CU_ASSERT(fp_memplan_verify(b, 3, 64, good, &arena, bad));
    CU_ASSERT_EQUAL(arena, 192);
    CU_ASSERT(!fp_memplan_verify(b, 3, 64, overlap, &arena, bad));
    CU_ASSERT(bad[0] == 0 && bad[1] == 1);
    CU_ASSERT(!fp_memplan_verify(b, 3, 64, misaligned, &arena, bad));
    CU_ASSERT(bad[0] == 1);
    CU_ASSERT(fp_memplan_verify(b, 3, 4, misaligned, &arena, bad)); /* 100 is a multiple of 4 */
}

/* A larger instance shaped like a network: every plan valid, `best` at or below the others. */
static void test_plan_large(void)
{
    GRand *r = g_rand_new_with_seed(3);
    size_t n = 20000;
    fp_membuf *b = g_new(fp_membuf, n);
    uint32_t step = 0;
    for (size_t i = 0; i < n; i++) {
        step += (uint32_t)g_rand_int_range(r, 0, 2);
        uint32_t len = g_rand_int_range(r, 0, 20) ? (uint32_t)g_rand_int_range(r, 1, 4)
                                                  : (uint32_t)g_rand_int_range(r, 4, 200);
        b[i] = (fp_membuf){(uint64_t)g_rand_int_range(r, 1, 1 << 20), step, step + len};
    }
    uint64_t *off = g_new(uint64_t, n), arena[FP_MEMPLAN_COUNT];
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        fp_memplan_result res;
        CU_ASSERT_FATAL(fp_memplan_plan(b, n, 64, (fp_memplan_strategy)s, off, &res, NULL));
        uint64_t verified = 0;
        CU_ASSERT(fp_memplan_verify(b, n, 64, off, &verified, NULL));
        CU_ASSERT_EQUAL(verified, res.arena);
        CU_ASSERT(res.arena >= res.load);
        arena[s] = res.arena;
    }
    CU_ASSERT(arena[FP_MEMPLAN_BEST] <= arena[FP_MEMPLAN_GREEDY_BY_SIZE]);
    CU_ASSERT(arena[FP_MEMPLAN_GREEDY_BY_SIZE] < arena[FP_MEMPLAN_NAIVE]);
    g_free(off);
    g_free(b);
    g_rand_free(r);
}

/* ---------------------------------------------------------------- memgraphs by hand */

/* A memgraph from lists: per node, the buffers it defines and reads; preds are derived from the
 * producers of what a node reads plus `extra` edges (pairs a -> b, terminated by -1). */
typedef struct {
    uint32_t n_nodes, n_bufs;
    const int *defs[16], *uses[16]; /* -1 terminated */
    uint64_t bytes[32];
    uint32_t flags[32];
    int inplace[16][2];
} mg_spec;

static void mg_from_spec(fp_memgraph *mg, const mg_spec *s, const int *extra)
{
    memset(mg, 0, sizeof *mg);
    mg->n_nodes = s->n_nodes;
    mg->n_bufs = s->n_bufs;
    mg->bytes = g_memdup2(s->bytes, s->n_bufs * sizeof(uint64_t) + 8);
    mg->flags = g_memdup2(s->flags, s->n_bufs * sizeof(uint32_t) + 4);
    mg->producer = g_new(int32_t, s->n_bufs + 1);
    for (uint32_t b = 0; b < s->n_bufs; b++)
        mg->producer[b] = -1;
    GArray *defs = g_array_new(FALSE, FALSE, sizeof(uint32_t)), *uses = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *preds = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    mg->def_start = g_new0(uint32_t, s->n_nodes + 1);
    mg->use_start = g_new0(uint32_t, s->n_nodes + 1);
    mg->pred_start = g_new0(uint32_t, s->n_nodes + 1);
    mg->workspace = g_new0(uint64_t, s->n_nodes + 1);
    mg->inplace_in = g_new(int32_t, s->n_nodes + 1);
    mg->inplace_out = g_new(int32_t, s->n_nodes + 1);
    for (uint32_t v = 0; v < s->n_nodes; v++) {
        for (const int *d = s->defs[v]; d && *d >= 0; d++) {
            uint32_t b = (uint32_t)*d;
            g_array_append_val(defs, b);
            mg->producer[b] = (int32_t)v;
        }
        mg->def_start[v + 1] = defs->len;
        bool seen[16] = {false};
        for (const int *u = s->uses[v]; u && *u >= 0; u++) {
            uint32_t b = (uint32_t)*u;
            g_array_append_val(uses, b);
            int32_t p = mg->producer[b];
            if (p >= 0 && !seen[p]) {
                seen[p] = true;
                uint32_t pp = (uint32_t)p;
                g_array_append_val(preds, pp);
            }
        }
        for (const int *e = extra; e && e[0] >= 0; e += 2)
            if ((uint32_t)e[1] == v && !seen[e[0]]) {
                seen[e[0]] = true;
                uint32_t pp = (uint32_t)e[0];
                g_array_append_val(preds, pp);
            }
        mg->use_start[v + 1] = uses->len;
        mg->pred_start[v + 1] = preds->len;
        bool has_inplace = s->inplace[v][0] || s->inplace[v][1];
        mg->inplace_in[v] = has_inplace ? s->inplace[v][0] : -1;
        mg->inplace_out[v] = has_inplace ? s->inplace[v][1] : -1;
    }
    mg->defs = (uint32_t *)g_array_free(defs, FALSE);
    mg->uses = (uint32_t *)g_array_free(uses, FALSE);
    mg->preds = (uint32_t *)g_array_free(preds, FALSE);
    fp_memgraph_index_readers(mg);
}

/* LOAD of an order by the rules, computed independently of fp_memgraph_lifetimes: per step the
 * buffers between definition and last read (inputs from 0, outputs to the end), workspace, minus
 * the output of an in-place node whose input dies there. */
static uint64_t ref_order_load(const fp_memgraph *mg, const uint32_t *order, uint64_t align)
{
    uint32_t n = mg->n_nodes, T = MAX(n, 1);
    uint32_t pos[64];
    g_assert(n <= 64);
    for (uint32_t t = 0; t < n; t++)
        pos[order[t]] = t;
    uint64_t best = 0;
    for (uint32_t t = 0; t < T; t++) {
        uint64_t live = t < n ? round_up(mg->workspace[order[t]], align) : 0;
        for (uint32_t b = 0; b < mg->n_bufs; b++) {
            uint32_t first = mg->producer[b] >= 0 ? pos[mg->producer[b]] : 0, last = first;
            for (uint32_t k = mg->reader_start[b]; k < mg->reader_start[b + 1]; k++)
                last = MAX(last, pos[mg->readers[k]]);
            if (mg->flags[b] & FP_BUF_OUTPUT)
                last = T - 1;
            if (first <= t && t <= last)
                live += round_up(mg->bytes[b], align);
        }
        if (t < n) {
            uint32_t v = order[t];
            int32_t a = mg->inplace_in[v];
            if (a >= 0) {
                uint32_t last = 0;
                for (uint32_t k = mg->reader_start[a]; k < mg->reader_start[a + 1]; k++)
                    last = MAX(last, pos[mg->readers[k]]);
                if (last == t)
                    live -= round_up(mg->bytes[mg->inplace_out[v]], align);
            }
        }
        best = MAX(best, live);
    }
    return best;
}

static void test_lifetimes_inplace(void)
{
    /* b0 input -> n0 -> b1 -> n1 (in place) -> b2 -> n2 (in place) -> b3 -> n3 -> b4 output;
     * n4 reads b1 late in the second variant, so n1 cannot take b1 over there */
    mg_spec s = {.n_nodes = 4,
                 .n_bufs = 5,
                 .bytes = {100, 40, 40, 40, 8},
                 .flags = {FP_BUF_INPUT, 0, 0, 0, FP_BUF_OUTPUT}};
    s.defs[0] = (int[]){1, -1};
    s.uses[0] = (int[]){0, -1};
    s.defs[1] = (int[]){2, -1};
    s.uses[1] = (int[]){1, -1};
    s.defs[2] = (int[]){3, -1};
    s.uses[2] = (int[]){2, -1};
    s.defs[3] = (int[]){4, -1};
    s.uses[3] = (int[]){3, -1};
    s.inplace[1][0] = 1, s.inplace[1][1] = 2;
    s.inplace[2][0] = 2, s.inplace[2][1] = 3;
    fp_memgraph mg;
    mg_from_spec(&mg, &s, NULL);
    uint32_t order[] = {0, 1, 2, 3}, slot[5];
    fp_membuf out[9];
    CU_ASSERT_EQUAL(fp_memgraph_lifetimes(&mg, order, out, slot), 2);
    CU_ASSERT(out[0].first == 0 && out[0].last == 0);
    CU_ASSERT(out[1].size == 40 && out[1].first == 0 && out[1].last == 3); /* the chain b1 b2 b3 */
    CU_ASSERT(out[2].size == 0 && out[3].size == 0);
    CU_ASSERT(slot[2] == 1 && slot[3] == 1);
    CU_ASSERT(out[4].first == 3 && out[4].last == 3);
    uint64_t load;
    CU_ASSERT(fp_memgraph_load(&mg, order, 1, &load, NULL, NULL));
    CU_ASSERT_EQUAL(load, 140);
    CU_ASSERT_EQUAL(ref_order_load(&mg, order, 1), 140);
    fp_memgraph_clear(&mg);

    /* a late reader of b1 (node 4, after node 3) stops the first in-place step, not the second */
    s.n_nodes = 5;
    s.defs[4] = NULL;
    s.uses[4] = (int[]){1, 4, -1};
    mg_from_spec(&mg, &s, NULL);
    uint32_t order2[] = {0, 1, 2, 3, 4};
    fp_membuf out2[10];
    CU_ASSERT_EQUAL(fp_memgraph_lifetimes(&mg, order2, out2, slot), 1);
    CU_ASSERT(out2[1].size == 40 && out2[1].last == 4);
    CU_ASSERT(out2[2].size == 40 && out2[2].last == 3); /* chain b2 b3 */
    CU_ASSERT_EQUAL(out2[3].size, 0);
    CU_ASSERT(fp_memgraph_load(&mg, order2, 1, &load, NULL, NULL));
    CU_ASSERT_EQUAL(load, ref_order_load(&mg, order2, 1));
    fp_memgraph_clear(&mg);
}

/* ---------------------------------------------------------------- scheduling */

/* A random memgraph: node v defines 0-2 buffers and reads 0-3 buffers defined earlier (or graph
 * inputs), some outputs, some in-place candidates of equal size, some control edges. */
static void random_memgraph(GRand *r, fp_memgraph *mg, uint32_t n)
{
    mg_spec s = {.n_nodes = n};
    static int storage[16][2][8];
    int extra[40];
    size_t ne = 0;
    uint32_t n_inputs = (uint32_t)g_rand_int_range(r, 0, 3);
    for (uint32_t b = 0; b < n_inputs; b++) {
        s.bytes[s.n_bufs] = (uint64_t)g_rand_int_range(r, 1, 50);
        s.flags[s.n_bufs++] = FP_BUF_INPUT;
    }
    for (uint32_t v = 0; v < n; v++) {
        int *u = storage[v][1], nu = 0;
        uint32_t k = (uint32_t)g_rand_int_range(r, 0, 4);
        for (uint32_t i = 0; i < k && s.n_bufs; i++) {
            int b = g_rand_int_range(r, 0, (gint32)s.n_bufs);
            bool dup = false;
            for (int j = 0; j < nu; j++)
                dup |= u[j] == b;
            if (!dup)
                u[nu++] = b;
        }
        u[nu] = -1;
        s.uses[v] = u;
        int *d = storage[v][0], nd = 0;
        uint32_t m = (uint32_t)g_rand_int_range(r, v + 1 == n ? 1 : 0, 3);
        for (uint32_t i = 0; i < m && s.n_bufs < 30; i++) {
            s.bytes[s.n_bufs] = (uint64_t)g_rand_int_range(r, 0, 100);
            s.flags[s.n_bufs] = g_rand_int_range(r, 0, 6) == 0 ? FP_BUF_OUTPUT : 0;
            d[nd++] = (int)s.n_bufs++;
        }
        d[nd] = -1;
        s.defs[v] = d;
        if (nu && nd && !(s.flags[u[0]] & (FP_BUF_INPUT | FP_BUF_OUTPUT)) && !(s.flags[d[0]] & FP_BUF_OUTPUT) &&
            g_rand_boolean(r)) {
            s.bytes[d[0]] = s.bytes[u[0]];
            s.inplace[v][0] = u[0];
            s.inplace[v][1] = d[0];
        }
        if (v && g_rand_int_range(r, 0, 5) == 0 && ne + 2 < G_N_ELEMENTS(extra)) {
            extra[ne++] = g_rand_int_range(r, 0, (gint32)v);
            extra[ne++] = (int)v;
        }
    }
    extra[ne] = extra[ne + 1] = -1;
    mg_from_spec(mg, &s, extra);
    for (uint32_t v = 0; v < n; v++)
        mg->workspace[v] = g_rand_int_range(r, 0, 8) == 0 ? (uint64_t)g_rand_int_range(r, 1, 60) : 0;
}

/* Smallest LOAD over every topological order (depth-first enumeration). */
static void all_orders(const fp_memgraph *mg, uint32_t *order, uint32_t depth, uint8_t *used, uint64_t *best)
{
    uint32_t n = mg->n_nodes;
    if (depth == n) {
        *best = MIN(*best, ref_order_load(mg, order, 1));
        return;
    }
    for (uint32_t v = 0; v < n; v++) {
        if (used[v])
            continue;
        bool ready = true;
        for (uint32_t k = mg->pred_start[v]; k < mg->pred_start[v + 1] && ready; k++)
            ready = used[mg->preds[k]];
        if (!ready)
            continue;
        used[v] = 1;
        order[depth] = v;
        all_orders(mg, order, depth + 1, used, best);
        used[v] = 0;
    }
}

/* Tiny DAGs: the optimized order is valid, never worse than the given one, and equals the optimum
 * over all topological orders (the DP is exact at this size). */
static void test_schedule_exact(void)
{
    GRand *r = g_rand_new_with_seed(11);
    unsigned failures = 0, improved = 0, lifetimes_disagree = 0;
    for (int iter = 0; iter < 2000; iter++) {
        fp_memgraph mg;
        uint32_t n = (uint32_t)g_rand_int_range(r, 1, 9);
        random_memgraph(r, &mg, n);
        uint32_t given[16], best[16], tmp[16];
        for (uint32_t v = 0; v < n; v++)
            given[v] = v;
        fp_schedule_result res;
        CU_ASSERT_FATAL(fp_schedule_optimize(&mg, given, NULL, best, &res, NULL));
        uint8_t used[16] = {0};
        uint64_t opt = UINT64_MAX, lb = 0;
        all_orders(&mg, tmp, 0, used, &opt);
        failures += !fp_memgraph_order_valid(&mg, best) || !res.exact || res.load_best != opt ||
                    res.load_best > res.load_given || res.load_given != ref_order_load(&mg, given, 1) ||
                    ref_order_load(&mg, best, 1) != res.load_best;
        CU_ASSERT(fp_memgraph_load(&mg, given, 1, &lb, NULL, NULL));
        lifetimes_disagree += lb != ref_order_load(&mg, given, 1);
        improved += res.load_best < res.load_given;
        fp_memgraph_clear(&mg);
    }
    CU_ASSERT_EQUAL(failures, 0);
    CU_ASSERT_EQUAL(lifetimes_disagree, 0);
    CU_ASSERT(improved > 0);
    g_rand_free(r);
}

/* Larger random DAGs: valid, never worse, LOAD as measured; with a tiny beam and segment limit the
 * pruned and greedy paths are taken and still valid. */
static void test_schedule_random(void)
{
    GRand *r = g_rand_new_with_seed(5);
    unsigned failures = 0;
    for (int iter = 0; iter < 300; iter++) {
        fp_memgraph mg;
        uint32_t n = (uint32_t)g_rand_int_range(r, 9, 17);
        random_memgraph(r, &mg, n);
        uint32_t given[16], best[16];
        for (uint32_t v = 0; v < n; v++)
            given[v] = v;
        fp_schedule_opts opts[] = {{64, 0, 0}, {1, 4, 0}, {1, 0, 3}};
        for (size_t o = 0; o < G_N_ELEMENTS(opts); o++) {
            fp_schedule_result res;
            CU_ASSERT_FATAL(fp_schedule_optimize(&mg, given, &opts[o], best, &res, NULL));
            uint64_t load;
            CU_ASSERT(fp_memgraph_load(&mg, best, opts[o].align, &load, NULL, NULL));
            failures += !fp_memgraph_order_valid(&mg, best) || res.load_best > res.load_given || load != res.load_best;
        }
        fp_memgraph_clear(&mg);
    }
    CU_ASSERT_EQUAL(failures, 0);
    g_rand_free(r);
}

/* Two branches of a big intermediate and a small result each, given breadth-first: running one
 * branch to its end before starting the other lowers the peak; the cut at the join is found. */
static void test_schedule_branches(void)
{
    /* n0: x -> b1 (root). n1: b1 -> b2 (big). n2: b1 -> b3 (big). n3: b2 -> b4. n4: b3 -> b5.
     * n5: b4, b5 -> b6 (output). */
    mg_spec s = {.n_nodes = 6,
                 .n_bufs = 7,
                 .bytes = {10, 10, 1000, 1000, 5, 5, 10},
                 .flags = {FP_BUF_INPUT, 0, 0, 0, 0, 0, FP_BUF_OUTPUT}};
    s.defs[0] = (int[]){1, -1}, s.uses[0] = (int[]){0, -1};
    s.defs[1] = (int[]){2, -1}, s.uses[1] = (int[]){1, -1};
    s.defs[2] = (int[]){3, -1}, s.uses[2] = (int[]){1, -1};
    s.defs[3] = (int[]){4, -1}, s.uses[3] = (int[]){2, -1};
    s.defs[4] = (int[]){5, -1}, s.uses[4] = (int[]){3, -1};
    s.defs[5] = (int[]){6, -1}, s.uses[5] = (int[]){4, 5, -1};
    fp_memgraph mg;
    mg_from_spec(&mg, &s, NULL);
    uint32_t given[] = {0, 1, 2, 3, 4, 5}, best[6];
    fp_schedule_result res;
    CU_ASSERT_FATAL(fp_schedule_optimize(&mg, given, NULL, best, &res, NULL));
    CU_ASSERT_EQUAL(res.load_given, 2010); /* both big buffers live at step 2 */
    CU_ASSERT_EQUAL(res.load_best, 1015);  /* one branch finished before the other starts */
    CU_ASSERT(res.exact);
    CU_ASSERT_EQUAL(res.n_segments, 3); /* {n0}, the branches, {n5} */
    CU_ASSERT(fp_memgraph_order_valid(&mg, best));
    fp_memgraph_clear(&mg);
}

/* ---------------------------------------------------------------- liveness from the IR */

typedef struct {
    fp_model *m;
    fp_graph *g;
} ir;

/* A float32 value of shape dims (rank n; a negative dim is the symbol "N"). */
static fp_value *val(ir *x, const char *name, int rank, const int64_t *dims)
{
    fp_value *v = fp_graph_value(x->g, name);
    v->type = FP_TYPE_TENSOR;
    v->dtype = FP_DT_FLOAT;
    v->shape.rank = rank;
    v->shape.dims = fp_arena_calloc(x->m->arena, (size_t)MAX(rank, 1), sizeof(fp_dim));
    for (int i = 0; i < rank; i++)
        v->shape.dims[i] = dims[i] < 0 ? (fp_dim){-1, fp_intern(x->m, "N", -1)} : (fp_dim){dims[i], NULL};
    return v;
}

static fp_value *vec(ir *x, const char *name, int64_t n) { return val(x, name, 1, &n); }

static void input(ir *x, fp_value *v)
{
    v->kind = FP_VALUE_INPUT;
    g_ptr_array_add(x->g->inputs, v);
}

static void output(ir *x, fp_value *v)
{
    v->is_output = true;
    g_ptr_array_add(x->g->outputs, v);
}

static void weight(ir *x, fp_value *v)
{
    v->kind = FP_VALUE_INITIALIZER;
    v->tensor = fp_arena_alloc(x->m->arena, sizeof *v->tensor);
    v->tensor->dtype = v->dtype;
    v->tensor->shape = v->shape;
    uint64_t n = 0;
    fp_shape_numel(&v->shape, &n);
    v->tensor->nbytes = 4 * n;
    g_ptr_array_add(x->g->initializers, v);
}

/* A node with comma-separated input and output names (values must exist; "" = omitted). */
static fp_node *op(ir *x, fp_op kind, const char *name, const char *ins, const char *outs)
{
    g_auto(GStrv) in = g_strsplit(ins, ",", -1), out = g_strsplit(outs, ",", -1);
    fp_node *n = fp_node_new(x->g, kind, NULL, "", name, g_strv_length(in), g_strv_length(out));
    for (uint32_t i = 0; i < n->n_inputs; i++)
        n->inputs[i] = *in[i] ? fp_graph_value(x->g, in[i]) : NULL;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        n->outputs[i] = fp_graph_value(x->g, out[i]);
        n->outputs[i]->producer = n;
        n->outputs[i]->producer_port = i;
    }
    return n;
}

static ir ir_new(void)
{
    ir x;
    x.m = fp_model_new("mem.onnx", "onnx");
    x.g = fp_graph_new(x.m, "main", NULL, NULL);
    return x;
}

static const fp_membuf *buf_of(const fp_liveness *lv, const fp_membuf *out, const char *name)
{
    const fp_value *v = fp_graph_find(lv->graph, name);
    g_assert(v);
    int32_t b = lv->value_buf[v->id];
    return b >= 0 ? &out[b] : NULL;
}

/* Identity order: memgraph nodes are numbered in topological order. */
static uint32_t *identity(uint32_t n)
{
    uint32_t *o = g_new(uint32_t, n + 1);
    for (uint32_t i = 0; i < n; i++)
        o[i] = i;
    return o;
}

/* fp_memory_naive of g: the naive sum of the liveness's buffers (rounded to align), and the naive
 * bytes, weights and counts of the full plan with the same options. */
static bool naive_matches(const fp_graph *g, uint64_t align)
{
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_BEST, .align = align};
    fp_memory_naive_result nv;
    if (!fp_memory_naive(g, &mo, &nv, NULL, NULL))
        return false;
    g_autoptr(fp_liveness) lv = fp_liveness_build(g, NULL, NULL, NULL, NULL);
    g_autoptr(fp_memory_result) full = fp_pass_memory(g, &mo, NULL, NULL);
    uint64_t sum = 0;
    for (uint32_t b = 0; b < lv->mg.n_bufs; b++)
        sum += round_up(lv->mg.bytes[b], align);
    return full && sum == nv.naive_bytes && full->naive_bytes == nv.naive_bytes && full->n_buffers == nv.n_buffers &&
           full->n_views == nv.n_views && full->n_fused == nv.n_fused && full->n_unknown == nv.n_unknown &&
           full->weight_bytes == nv.weight_bytes && full->workspace_bytes == nv.workspace_bytes;
}

static void test_liveness_views(void)
{
    ir x = ir_new();
    input(&x, vec(&x, "x", 4));
    vec(&x, "a", 4), vec(&x, "r", 4), vec(&x, "e", 4), vec(&x, "y", 4);
    fp_value *shape = val(&x, "shape", 1, (int64_t[]){2});
    weight(&x, shape);
    output(&x, fp_graph_find(x.g, "y"));
    op(&x, FP_OP_RELU, "relu", "x", "a");
    op(&x, FP_OP_RESHAPE, "reshape", "a,shape", "r");
    op(&x, FP_OP_EXP, "exp", "r", "e");
    op(&x, FP_OP_ADD, "add", "a,e", "y");
    fp_model_link(x.m);
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_liveness) lv = fp_liveness_build(x.g, NULL, NULL, diag, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lv);
    CU_ASSERT_EQUAL(lv->mg.n_nodes, 4);
    CU_ASSERT_EQUAL(lv->mg.n_bufs, 4); /* x, a (with r), e, y */
    CU_ASSERT_EQUAL(lv->n_views, 1);
    CU_ASSERT_EQUAL(lv->weight_bytes, 8);
    CU_ASSERT_EQUAL(lv->value_buf[fp_graph_find(x.g, "r")->id], lv->value_buf[fp_graph_find(x.g, "a")->id]);
    CU_ASSERT_EQUAL(lv->value_buf[shape->id], -1);
    g_autofree uint32_t *order = identity(lv->mg.n_nodes);
    fp_membuf out[8];
    /* exp reads r but a lives on to add: no in-place there; add writes a graph output: none */
    CU_ASSERT_EQUAL(fp_memgraph_lifetimes(&lv->mg, order, out, NULL), 0);
    const fp_membuf *a = buf_of(lv, out, "a"), *xb = buf_of(lv, out, "x"), *y = buf_of(lv, out, "y");
    CU_ASSERT(a->first == 0 && a->last == 3 && a->size == 16);
    CU_ASSERT(xb->first == 0 && xb->last == 0);
    CU_ASSERT(y->first == 3 && y->last == 3);
    uint64_t load = 0;
    uint32_t peak = 0;
    CU_ASSERT(fp_memgraph_load(&lv->mg, order, 1, &load, &peak, NULL));
    CU_ASSERT_EQUAL(load, 48);
    CU_ASSERT_EQUAL(peak, 3);
    CU_ASSERT_EQUAL(fp_diag_count(diag, FP_DIAG_INFO), 0);
    CU_ASSERT(naive_matches(x.g, 1) && naive_matches(x.g, 64));
    fp_model_free(x.m);
}

static void test_liveness_inplace(void)
{
    ir x = ir_new();
    input(&x, vec(&x, "x", 8));
    weight(&x, val(&x, "w", 2, (int64_t[]){8, 4}));
    vec(&x, "xr", 8), vec(&x, "a", 4), vec(&x, "b", 4), vec(&x, "c", 4), vec(&x, "d", 4);
    val(&x, "big", 2, (int64_t[]){4, 4}), val(&x, "z", 2, (int64_t[]){4, 4});
    output(&x, fp_graph_find(x.g, "z"));
    op(&x, FP_OP_RELU, "relu0", "x", "xr"); /* x dies here, but a graph input is never reused */
    op(&x, FP_OP_MATMUL, "mm", "xr,w", "a");
    op(&x, FP_OP_RELU, "relu", "a", "b");      /* a dies here, same size: in place */
    op(&x, FP_OP_SIGMOID, "sig", "b", "c");    /* b dies here too: in place */
    op(&x, FP_OP_NEG, "neg", "c", "d");        /* c is read again by mm2: not in place */
    op(&x, FP_OP_MATMUL, "mm2", "c,d", "big"); /* MatMul never works in place */
    op(&x, FP_OP_ADD, "add", "big,d", "z");    /* z is a graph output: never in place */
    fp_model_link(x.m);
    g_autoptr(fp_liveness) lv = fp_liveness_build(x.g, NULL, NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lv);
    CU_ASSERT_EQUAL(lv->mg.inplace_in[0], -1);
    CU_ASSERT_EQUAL(lv->mg.inplace_in[6], -1);
    CU_ASSERT(lv->mg.inplace_in[2] >= 0 && lv->mg.inplace_in[3] >= 0 && lv->mg.inplace_in[4] >= 0);
    g_autofree uint32_t *order = identity(lv->mg.n_nodes);
    fp_membuf out[16];
    uint32_t slot[8];
    CU_ASSERT_EQUAL(fp_memgraph_lifetimes(&lv->mg, order, out, slot), 2);
    const fp_value *a = fp_graph_find(x.g, "a"), *c = fp_graph_find(x.g, "c"), *d = fp_graph_find(x.g, "d");
    CU_ASSERT_EQUAL(slot[lv->value_buf[c->id]], (uint32_t)lv->value_buf[a->id]);
    CU_ASSERT_NOT_EQUAL(slot[lv->value_buf[d->id]], (uint32_t)lv->value_buf[a->id]);
    const fp_membuf *chain = &out[lv->value_buf[a->id]];
    CU_ASSERT(chain->first == 1 && chain->last == 5 && chain->size == 16);
    CU_ASSERT_EQUAL(out[lv->value_buf[c->id]].size, 0);
    CU_ASSERT(naive_matches(x.g, 1) && naive_matches(x.g, 64));
    fp_model_free(x.m);
}

static void test_liveness_weights_fused_unknown(void)
{
    ir x = ir_new();
    input(&x, val(&x, "x", 2, (int64_t[]){-1, 4}));
    input(&x, vec(&x, "x2", 4));
    weight(&x, vec(&x, "w", 16));
    fp_value *k = val(&x, "k", 1, (int64_t[]){2});
    fp_value *s = val(&x, "s", 1, (int64_t[]){2});
    s->dtype = k->dtype = FP_DT_INT64;
    vec(&x, "a", 4), vec(&x, "b", 4), vec(&x, "c", 4), vec(&x, "r", 4), vec(&x, "y", 4);
    val(&x, "u", 2, (int64_t[]){-1, 4});
    output(&x, fp_graph_find(x.g, "y"));
    output(&x, fp_graph_find(x.g, "u"));
    fp_node *cst = op(&x, FP_OP_CONSTANT, "const", "", "k");
    cst->n_inputs = 0;
    k->kind = FP_VALUE_CONSTANT;
    k->tensor = fp_arena_alloc(x.m->arena, sizeof *k->tensor);
    k->tensor->nbytes = 16;
    fp_node *shp = op(&x, FP_OP_SHAPE, "shape", "x2", "s");
    shp->flags |= FP_NODE_FOLDED;
    fp_node *n1 = op(&x, FP_OP_MUL, "f1", "x2,w", "a");
    fp_node *n2 = op(&x, FP_OP_RELU, "f2", "a", "b");
    n1->group = n2->group = 1; /* a internal to the group; b read outside it */
    op(&x, FP_OP_RESHAPE, "reshape", "b,s", "r");
    op(&x, FP_OP_ADD, "add", "r,k", "c");
    op(&x, FP_OP_SIGMOID, "sig", "c", "y");
    fp_node *dead = op(&x, FP_OP_EXP, "dead", "c", "gone");
    dead->flags |= FP_NODE_REMOVED;
    op(&x, FP_OP_RELU, "unk", "x", "u");
    fp_model_link(x.m);
    g_autoptr(fp_diag) diag = fp_diag_new();
    g_autoptr(fp_liveness) lv = fp_liveness_build(x.g, NULL, NULL, diag, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lv);
    CU_ASSERT_EQUAL(lv->n_free, 2);     /* Constant and the folded Shape */
    CU_ASSERT_EQUAL(lv->mg.n_nodes, 6); /* f1 f2 reshape add sig unk */
    CU_ASSERT_EQUAL(lv->weight_bytes, 64 + 16 + 16);
    CU_ASSERT_EQUAL(lv->folded_bytes, 16); /* s: folded, no tensor in the file */
    CU_ASSERT_EQUAL(lv->n_fused, 1);
    CU_ASSERT_EQUAL(lv->value_buf[fp_graph_find(x.g, "a")->id], -1);
    CU_ASSERT_EQUAL(lv->value_buf[fp_graph_find(x.g, "gone")->id], -1);
    CU_ASSERT(lv->value_buf[fp_graph_find(x.g, "b")->id] >= 0);
    CU_ASSERT_EQUAL(lv->n_unknown, 2); /* x and u: symbolic batch */
    CU_ASSERT_EQUAL(fp_diag_count(diag, FP_DIAG_WARNING), 1);
    fp_diag_entry *e = g_ptr_array_index(diag->entries, 0);
    CU_ASSERT_STRING_EQUAL(e->code, "memory-unknown-size");
    CU_ASSERT_PTR_NOT_NULL(strstr(e->message, "'x'"));
    int32_t bx = lv->value_buf[fp_graph_find(x.g, "x")->id];
    CU_ASSERT(lv->mg.bytes[bx] == 0 && (lv->mg.flags[bx] & FP_BUF_UNKNOWN) && (lv->mg.flags[bx] & FP_BUF_INPUT));
    /* the folded Shape reads x2 only for its shape: x2 dies at f1, its only real reader */
    g_autofree uint32_t *order = identity(lv->mg.n_nodes);
    fp_membuf out[32];
    fp_memgraph_lifetimes(&lv->mg, order, out, NULL);
    const fp_membuf *x2 = buf_of(lv, out, "x2");
    CU_ASSERT(x2->first == 0 && x2->last == 0);
    /* the full order puts the free nodes back, each after what it depends on */
    uint32_t total = lv->mg.n_nodes + lv->n_free, step_of[8];
    g_autofree fp_node **full = g_new(fp_node *, total);
    fp_liveness_full_order(lv, order, full, step_of);
    int pos_const = -1, pos_shape = -1, pos_reshape = -1;
    for (uint32_t i = 0; i < total; i++) {
        if (full[i] == cst)
            pos_const = (int)i;
        if (full[i] == shp)
            pos_shape = (int)i;
        if (strcmp(full[i]->name, "reshape") == 0)
            pos_reshape = (int)i;
    }
    CU_ASSERT(pos_const >= 0 && pos_shape >= 0 && pos_shape < pos_reshape);
    CU_ASSERT_PTR_EQUAL(full[step_of[2]], lv->nodes[2]);
    CU_ASSERT(naive_matches(x.g, 1) && naive_matches(x.g, 64));
    fp_model_free(x.m);
}

/* The naive sum with views in many arrangements: chains (in file order and against it), a view of
 * a fused value (a buffer of its own), of a weight, of a value of unknown size, a view larger than
 * its input, shared buffers with a graph output; and sizes whose sum overflows. */
static void test_liveness_naive_views(void)
{
    ir x = ir_new();
    input(&x, vec(&x, "x", 4));
    input(&x, val(&x, "xu", 2, (int64_t[]){-1, 4}));
    weight(&x, vec(&x, "w", 4));
    /* v3 is created (numbered) before v1 and v2: its chain is settled from the later values */
    vec(&x, "v3", 4), vec(&x, "a", 4), vec(&x, "v1", 4), vec(&x, "v2", 8), vec(&x, "f1", 4), vec(&x, "f2", 4);
    vec(&x, "fv", 4), vec(&x, "wv", 4), vec(&x, "e", 4), vec(&x, "y", 4);
    val(&x, "uv", 2, (int64_t[]){-1, 4});
    vec(&x, "ov", 4);
    output(&x, fp_graph_find(x.g, "y"));
    output(&x, fp_graph_find(x.g, "ov"));
    op(&x, FP_OP_RELU, "relu", "x", "a");
    op(&x, FP_OP_RESHAPE, "r1", "a", "v1");
    op(&x, FP_OP_RESHAPE, "r2", "v1", "v2"); /* larger than a: the shared buffer takes its size */
    op(&x, FP_OP_RESHAPE, "r3", "v2", "v3");
    fp_node *n1 = op(&x, FP_OP_EXP, "fa", "x", "f1");
    fp_node *n2 = op(&x, FP_OP_RESHAPE, "fb", "f1", "f2");
    n1->group = n2->group = 1; /* f1 internal */
    op(&x, FP_OP_RESHAPE, "fview", "f2", "fv");
    op(&x, FP_OP_RESHAPE, "wview", "w", "wv"); /* a view of a weight: no buffer */
    op(&x, FP_OP_RESHAPE, "uview", "xu", "uv");
    op(&x, FP_OP_RESHAPE, "oview", "a", "ov"); /* a's buffer holds a graph output */
    op(&x, FP_OP_ADD, "add", "v3,fv", "e");
    op(&x, FP_OP_ADD, "add2", "e,wv", "y");
    fp_model_link(x.m);
    CU_ASSERT(naive_matches(x.g, 1));
    CU_ASSERT(naive_matches(x.g, 64));
    fp_memory_opts mo = {.strategy = FP_MEMPLAN_NAIVE, .align = 1};
    fp_memory_naive_result nv;
    CU_ASSERT_FATAL(fp_memory_naive(x.g, &mo, &nv, NULL, NULL));
    CU_ASSERT_EQUAL(nv.n_unknown, 1);                        /* xu and its view */
    CU_ASSERT_EQUAL(nv.naive_bytes, 16 + 32 + 16 + 16 + 16); /* x, a with its views (v2: 32), f2 with fv, e, y */
    /* sizes whose sum overflows: the same error as the memory pass's, naming the same buffer */
    fp_value *e = fp_graph_find(x.g, "e"), *y = fp_graph_find(x.g, "y");
    e->shape.dims[0].value = y->shape.dims[0].value = (int64_t)1 << 61;
    mo.align = 64;
    g_autoptr(GError) err = NULL, err_full = NULL;
    CU_ASSERT(!fp_memory_naive(x.g, &mo, &nv, NULL, &err));
    CU_ASSERT(g_error_matches(err, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW));
    CU_ASSERT_PTR_NULL(fp_pass_memory(x.g, &mo, NULL, &err_full));
    CU_ASSERT(err && err_full && strcmp(err->message, err_full->message) == 0);
    fp_model_free(x.m);
}

/* The lifetimes of the buffers alone are the first n_bufs of fp_memgraph_lifetimes'; LOAD from the
 * memgraph is LOAD of its lifetimes. */
static void test_lifetimes_buffers_only(void)
{
    GRand *r = g_rand_new_with_seed(11);
    for (int iter = 0; iter < 50; iter++) {
        fp_memgraph mg = {0};
        uint32_t n = (uint32_t)g_rand_int_range(r, 1, 12);
        random_memgraph(r, &mg, n);
        g_autofree uint32_t *order = identity(n);
        g_autofree fp_membuf *a = g_new(fp_membuf, mg.n_bufs + n + 1), *b = g_new(fp_membuf, mg.n_bufs + 1);
        g_autofree uint32_t *sa = g_new(uint32_t, mg.n_bufs + 1), *sb = g_new(uint32_t, mg.n_bufs + 1);
        uint32_t ma = fp_memgraph_lifetimes(&mg, order, a, sa);
        uint32_t mb = fp_memgraph_lifetimes_n(&mg, order, false, b, sb);
        CU_ASSERT_EQUAL(ma, mb);
        CU_ASSERT(mg.n_bufs == 0 || (memcmp(a, b, mg.n_bufs * sizeof *a) == 0 && memcmp(sa, sb, mg.n_bufs * 4) == 0));
        bool ws = false;
        for (uint32_t v = 0; v < n; v++)
            ws |= mg.workspace[v] != 0;
        CU_ASSERT_EQUAL(fp_memgraph_has_workspace(&mg), ws);
        /* fp_memgraph_load is fp_memplan_load of the lifetimes, on the given order and another */
        g_autofree uint32_t *other = g_new(uint32_t, n + 1);
        fp_schedule_result sr;
        CU_ASSERT_FATAL(fp_schedule_optimize(&mg, order, NULL, other, &sr, NULL));
        for (int o = 0; o < 2; o++) {
            const uint32_t *ord = o ? other : order;
            fp_memgraph_lifetimes(&mg, ord, a, NULL);
            for (int al = 0; al < 2; al++) {
                uint64_t l1 = 0, l2 = 0;
                uint32_t p1 = 0, p2 = 0;
                CU_ASSERT(fp_memplan_load(a, mg.n_bufs + n, al ? 64 : 1, &l1, &p1, NULL));
                CU_ASSERT(fp_memgraph_load(&mg, ord, al ? 64 : 1, &l2, &p2, NULL));
                CU_ASSERT(l1 == l2 && p1 == p2);
            }
        }
        /* sizes that overflow (unless in-place merges zero them): the same error */
        if (mg.n_bufs >= 2) {
            mg.bytes[0] = mg.bytes[mg.n_bufs - 1] = UINT64_MAX - 100;
            mg.flags[0] |= FP_BUF_INPUT;
            mg.flags[mg.n_bufs - 1] |= FP_BUF_OUTPUT;
            fp_memgraph_lifetimes(&mg, order, a, NULL);
            g_autoptr(GError) e1 = NULL, e2 = NULL;
            uint64_t l = 0;
            bool ok1 = fp_memplan_load(a, mg.n_bufs + n, 64, &l, NULL, &e1);
            bool ok2 = fp_memgraph_load(&mg, order, 64, &l, NULL, &e2);
            CU_ASSERT_EQUAL(ok1, ok2);
            CU_ASSERT(ok1 || (e1 && e2 && strcmp(e1->message, e2->message) == 0));
        }
        fp_memgraph_clear(&mg);
    }
    g_rand_free(r);
}

/* Sizes, flags, in-place pairs and weights of lv equal those of a fresh build of its graph. */
static bool same_as_built(const fp_liveness *lv, const uint64_t *ws)
{
    g_autoptr(fp_liveness) fresh = fp_liveness_build(lv->graph, ws, NULL, NULL, NULL);
    const fp_memgraph *a = &lv->mg, *b = &fresh->mg;
    bool ok = a->n_bufs == b->n_bufs && a->n_nodes == b->n_nodes && lv->weight_bytes == fresh->weight_bytes &&
              lv->n_unknown == fresh->n_unknown;
    for (uint32_t i = 0; ok && i < a->n_bufs; i++)
        ok = a->bytes[i] == b->bytes[i] && a->flags[i] == b->flags[i];
    for (uint32_t v = 0; ok && v < a->n_nodes; v++)
        ok = a->inplace_in[v] == b->inplace_in[v] && a->inplace_out[v] == b->inplace_out[v] &&
             a->workspace[v] == b->workspace[v];
    return ok;
}

/* fp_liveness_resize after the shapes change: the sizes of a fresh build (in-place pairs lost and
 * regained with the sizes, unknown sizes and their finding, weights, workspaces); false when a
 * node's folded state changed. */
static void test_liveness_resize(void)
{
    ir x = ir_new();
    input(&x, vec(&x, "x", 8));
    fp_value *w = vec(&x, "w", 8);
    weight(&x, w);
    fp_value *a = vec(&x, "a", 8), *b = vec(&x, "b", 8), *s = vec(&x, "s", 2), *y = vec(&x, "y", 8);
    fp_value *k = vec(&x, "k", 2);
    vec(&x, "z", 8);
    s->dtype = k->dtype = FP_DT_INT64;
    output(&x, y);
    output(&x, fp_graph_find(x.g, "z"));
    op(&x, FP_OP_ADD, "add", "x,w", "a");
    op(&x, FP_OP_RELU, "relu", "a", "b"); /* in place while a and b have the same size */
    fp_node *shp = op(&x, FP_OP_SHAPE, "shape", "b", "s");
    op(&x, FP_OP_MUL, "mul", "b,s", "y");
    op(&x, FP_OP_SHAPE, "kshape", "x", "k")->flags |= FP_NODE_FOLDED; /* k: a weight sized by shapes */
    op(&x, FP_OP_ADD, "addk", "b,k", "z");
    fp_model_link(x.m);
    uint64_t ws[8] = {0};
    g_autoptr(fp_liveness) lv = fp_liveness_build(x.g, ws, NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lv);
    CU_ASSERT(lv->mg.inplace_in[1] >= 0);
    /* b larger than a: no in-place; a workspace at relu */
    b->shape.dims = fp_arena_memdup(x.m->arena, b->shape.dims, sizeof(fp_dim));
    b->shape.dims[0].value = 16;
    ws[1] = 100;
    g_autoptr(fp_diag) diag = fp_diag_new();
    CU_ASSERT_FATAL(fp_liveness_resize(lv, ws, diag));
    CU_ASSERT_EQUAL(lv->mg.inplace_in[1], -1);
    CU_ASSERT_EQUAL(lv->mg.workspace[1], 100);
    CU_ASSERT_EQUAL(fp_diag_count(diag, FP_DIAG_WARNING), 0);
    CU_ASSERT(same_as_built(lv, ws));
    /* a of unknown size (a finding), k twice as large (w, a tensor of the model, never changes) */
    CU_ASSERT_EQUAL(lv->weight_bytes, 32 + 16);
    a->shape.dims = fp_arena_memdup(x.m->arena, a->shape.dims, sizeof(fp_dim));
    a->shape.dims[0] = (fp_dim){-1, NULL};
    k->shape.dims[0].value = 4;
    CU_ASSERT_FATAL(fp_liveness_resize(lv, ws, diag));
    CU_ASSERT_EQUAL(lv->n_unknown, 1);
    CU_ASSERT_EQUAL(lv->weight_bytes, 32 + 32);
    CU_ASSERT_EQUAL(fp_diag_count(diag, FP_DIAG_WARNING), 1);
    CU_ASSERT(same_as_built(lv, ws));
    /* back to the first sizes: in place again */
    a->shape.dims[0].value = 16;
    CU_ASSERT_FATAL(fp_liveness_resize(lv, ws, NULL));
    CU_ASSERT(lv->mg.inplace_in[1] >= 0);
    CU_ASSERT_EQUAL(lv->n_unknown, 0);
    CU_ASSERT(same_as_built(lv, ws));
    /* the Shape folded: the structure changed, lv is kept as it was */
    shp->flags |= FP_NODE_FOLDED;
    CU_ASSERT(!fp_liveness_resize(lv, ws, NULL));
    CU_ASSERT(lv->mg.inplace_in[1] >= 0);
    fp_model_free(x.m);
}

/* A ConstantOfShape of a stored shape [2, 1000] (16 bytes) fills 2000 floats that the file does not
 * store: the plan's weights are the 16 bytes stored plus the 8000 folded (made at load, as ONNX
 * Runtime's constant folding makes them an initializer), and say which is which. */
static void test_folded_weights(void)
{
    const char *text =
        "ir_version: 8\nopset_import { version: 17 }\ngraph { name: 'g'\n"
        "  node { input: ['shape'] output: ['zeros'] op_type: 'ConstantOfShape' name: 'fill' }\n"
        "  node { input: ['x', 'zeros'] output: ['y'] op_type: 'Add' name: 'add' }\n"
        "  initializer { name: 'shape' dims: 2 data_type: 7 int64_data: [2, 1000] }\n"
        "  input { name: 'x' type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 1000 } } "
        "} } }\n  output { name: 'y' type { tensor_type { elem_type: 1 } } }\n}\n";
    g_autofree char *path = tu_write_temp(text, strlen(text), ".onnxtxt");
    g_autoptr(GError) err = NULL;
    fp_analysis_opts o = {0};
    g_autoptr(fp_analysis) a = fp_analysis_run(path, &o, &err);
    tu_run_result r = tu_run((const char *[]){"memory", path, "-f", "json", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"stored_weight_bytes\" : 16,\n    \"folded_weight_bytes\" : 8000"));
    tu_run_clear(&r);
    g_unlink(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->res.memory->weight_bytes, 16 + 2000 * 4);
    CU_ASSERT_EQUAL(a->res.memory->folded_bytes, 2000 * 4);
    g_autofree char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    fp_report_memory_text(a->model, a->res.memory, NULL, a->diag, 0, false, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "weights     7.8 KiB: 16 B stored in the file, 7.8 KiB folded from constants"));
}

FP_TEST_SUITE(register_memory)
{
    CU_pSuite s = CU_add_suite("memory", NULL, NULL);
    CU_add_test(s, "strategy names, alignment", test_strategy_names);
    CU_add_test(s, "planners on random lifetimes", test_plan_random);
    CU_add_test(s, "best equals exhaustive optimum", test_plan_exact);
    CU_add_test(s, "arena with a hint equals the plan's", test_plan_arena_hint);
    CU_add_test(s, "crafted plans", test_plan_crafted);
    CU_add_test(s, "size overflow", test_plan_overflow);
    CU_add_test(s, "naive sum one buffer at a time", test_plan_naive_sum);
    CU_add_test(s, "plan verifier", test_plan_verify);
    CU_add_test(s, "20000 buffers", test_plan_large);
    CU_add_test(s, "lifetimes, in-place chains", test_lifetimes_inplace);
    CU_add_test(s, "lifetimes of the buffers alone, LOAD", test_lifetimes_buffers_only);
    CU_add_test(s, "schedule equals exhaustive optimum", test_schedule_exact);
    CU_add_test(s, "schedule on random DAGs", test_schedule_random);
    CU_add_test(s, "schedule of two branches", test_schedule_branches);
    CU_add_test(s, "liveness: views", test_liveness_views);
    CU_add_test(s, "liveness: in-place", test_liveness_inplace);
    CU_add_test(s, "liveness: weights, fusion, unknown sizes", test_liveness_weights_fused_unknown);
    CU_add_test(s, "liveness: the naive sum of views", test_liveness_naive_views);
    CU_add_test(s, "liveness resized to new shapes", test_liveness_resize);
    CU_add_test(s, "weights stored and folded", test_folded_weights);
}
