/* memory_table.c - planner benchmark (bench only, never part of make test).
 *
 *   memory_table random N [SEED]   N model-like random lifetimes: time and arena of every strategy
 *   memory_table random-heavy N    the same with twice the skip connections and 0.2% long-lived buffers
 *   memory_table file FILE...      lifetimes from text files, one buffer per line: "size first last"
 *
 * Every plan is checked with fp_memplan_verify. Built and run by bench/memory_table.sh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "passes/memory/memplan.h"

/* Lifetimes shaped like a long network: one or two buffers per step, most read by the next step or
 * two, `skip` per mille skip connections spanning up to 64 steps, `longp` per mille long-lived
 * buffers spanning up to 20000 steps; sizes from 16 B to 8 MiB. */
static fp_membuf *random_bufs(size_t n, uint32_t seed, int skip, int longp)
{
    GRand *r = g_rand_new_with_seed(seed);
    fp_membuf *b = g_new(fp_membuf, n);
    uint32_t step = 0;
    for (size_t i = 0; i < n; i++) {
        if (g_rand_int_range(r, 0, 3) != 0)
            step++;
        uint32_t len = 1 + (uint32_t)g_rand_int_range(r, 0, 3);
        int kind = g_rand_int_range(r, 0, 1000);
        if (kind < skip)
            len = (uint32_t)g_rand_int_range(r, 4, 65);
        else if (kind < skip + longp)
            len = (uint32_t)g_rand_int_range(r, 65, 20000);
        uint64_t size = (uint64_t)1 << g_rand_int_range(r, 4, 23);
        size += (uint64_t)g_rand_int_range(r, 0, (gint32)size);
        b[i] = (fp_membuf){size, step, step + len};
    }
    g_rand_free(r);
    return b;
}

static bool run_all(const char *label, const fp_membuf *b, size_t n, uint64_t align, bool timing)
{
    uint64_t *off = g_new(uint64_t, n + 1);
    uint64_t arena[FP_MEMPLAN_COUNT] = {0}, load = 0;
    const char *method = "";
    double secs[FP_MEMPLAN_COUNT] = {0};
    for (unsigned s = 0; s < FP_MEMPLAN_COUNT; s++) {
        fp_memplan_result res;
        g_autoptr(GError) err = NULL;
        gint64 t0 = g_get_monotonic_time();
        if (!fp_memplan_plan(b, n, align, (fp_memplan_strategy)s, off, &res, &err)) {
            fprintf(stderr, "%s: %s\n", label, err->message);
            g_free(off);
            return false;
        }
        secs[s] = (double)(g_get_monotonic_time() - t0) / 1e6;
        size_t bad[2];
        uint64_t checked = 0;
        if (!fp_memplan_verify(b, n, align, off, &checked, bad) || checked != res.arena) {
            fprintf(stderr, "%s: %s plan invalid (buffers %zu, %zu)\n", label,
                    fp_memplan_strategy_name((fp_memplan_strategy)s), bad[0], bad[1]);
            g_free(off);
            return false;
        }
        arena[s] = res.arena;
        load = res.load;
        if (s == FP_MEMPLAN_BEST)
            method = res.method;
    }
    double ratio = load ? (double)arena[FP_MEMPLAN_BEST] / (double)load : 1.0;
    printf("%-44s %8zu %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT
           " %14" G_GUINT64_FORMAT " %8.4f %s\n",
           label, n, arena[FP_MEMPLAN_NAIVE], arena[FP_MEMPLAN_GREEDY_BY_SIZE], arena[FP_MEMPLAN_BEST_FIT],
           arena[FP_MEMPLAN_BEST], load, ratio, method);
    if (timing)
        printf("  seconds: naive %.3f, greedy_by_size %.3f, best_fit %.3f, best %.3f\n", secs[0], secs[1], secs[2],
               secs[3]);
    g_free(off);
    return true;
}

static fp_membuf *read_file(const char *path, size_t *n)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &text, NULL, &err)) {
        fprintf(stderr, "%s\n", err->message);
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GArray *a = g_array_new(FALSE, FALSE, sizeof(fp_membuf));
    for (char **l = lines; *l; l++) {
        guint64 size;
        unsigned first, last;
        if (sscanf(*l, "%" G_GUINT64_FORMAT " %u %u", &size, &first, &last) == 3 && first <= last)
            g_array_append_val(a, ((fp_membuf){size, first, last}));
    }
    *n = a->len;
    return (fp_membuf *)g_array_free(a, FALSE);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && (g_strcmp0(argv[1], "random") == 0 || g_strcmp0(argv[1], "random-heavy") == 0)) {
        bool heavy = g_strcmp0(argv[1], "random-heavy") == 0;
        size_t n = strtoull(argv[2], NULL, 10);
        fp_membuf *b = random_bufs(n, argc > 3 ? (uint32_t)atoi(argv[3]) : 1, heavy ? 100 : 50, heavy ? 2 : 0);
        bool ok = run_all(argv[1], b, n, 64, true);
        g_free(b);
        return ok ? 0 : 1;
    }
    if (argc >= 3 && g_strcmp0(argv[1], "file") == 0) {
        bool ok = true;
        for (int i = 2; i < argc; i++) {
            size_t n = 0;
            fp_membuf *b = read_file(argv[i], &n);
            if (!b)
                return 1;
            g_autofree char *base = g_path_get_basename(argv[i]);
            ok = run_all(base, b, n, 64, false) && ok;
            g_free(b);
        }
        return ok ? 0 : 1;
    }
    fprintf(stderr, "usage: memory_table random|random-heavy N [SEED] | memory_table file FILE...\n");
    return 2;
}
