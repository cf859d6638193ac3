/* profile.c - the profile form (ir/profile.h): allocation, interning, indexes, grouping. */
#include "ir/profile.h"

#include <math.h>
#include <string.h>

const char *fp_prof_format_name(fp_prof_format f)
{
    switch (f) {
    case FP_PROF_ORT:
        return "ort";
    case FP_PROF_CHROME_TRACE:
        return "chrome_trace";
    case FP_PROF_OP_SUMMARY:
        return "op_summary";
    case FP_PROF_KERNEL_DETAILS:
        return "kernel_details";
    case FP_PROF_OP_STATISTIC:
        return "op_statistic";
    case FP_PROF_TASK_TIME:
        return "task_time";
    case FP_PROF_FUSION_RESULT:
        return "fusion_result";
    }
    return "unknown";
}

const char *fp_prof_pass_kind_name(fp_prof_pass_kind k)
{
    return k == FP_PROF_UB_FUSION ? "ub_fusion" : "graph_fusion";
}

fp_profile *fp_profile_new(const char *path)
{
    fp_profile *p = g_new0(fp_profile, 1);
    p->arena = fp_arena_new();
    p->strings = g_hash_table_new(g_str_hash, g_str_equal);
    p->kernels = g_array_new(FALSE, TRUE, sizeof(fp_prof_kernel));
    p->passes = g_array_new(FALSE, TRUE, sizeof(fp_prof_pass));
    p->warnings = g_ptr_array_new_with_free_func(g_free);
    p->by_name = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
    p->path = fp_prof_intern(p, path, -1);
    return p;
}

void fp_profile_free(fp_profile *p)
{
    if (!p)
        return;
    g_hash_table_destroy(p->by_name);
    g_ptr_array_free(p->warnings, TRUE);
    g_array_free(p->passes, TRUE);
    g_array_free(p->kernels, TRUE);
    g_hash_table_destroy(p->strings);
    fp_arena_free(p->arena);
    g_free(p);
}

const char *fp_prof_intern(fp_profile *p, const char *s, gssize len)
{
    if (!s)
        return NULL;
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    g_autofree char *key = g_strndup(s, n);
    const char *hit = g_hash_table_lookup(p->strings, key);
    if (hit)
        return hit;
    char *copy = fp_arena_strndup(p->arena, s, n);
    g_hash_table_insert(p->strings, copy, copy);
    return copy;
}

fp_prof_kernel *fp_prof_add_kernel(fp_profile *p)
{
    fp_prof_kernel k = {
        .name = fp_prof_intern(p, "", 0),
        .start_us = NAN,
        .wait_us = NAN,
        .count = 1,
        .samples = 1,
        .step = -1,
    };
    g_array_append_val(p->kernels, k);
    return &g_array_index(p->kernels, fp_prof_kernel, p->kernels->len - 1);
}

void fp_prof_add_pass(fp_profile *p, fp_prof_pass_kind kind, const char *name, uint64_t match, uint64_t effect,
                      uint64_t hits)
{
    const char *iname = fp_prof_intern(p, name, -1);
    fp_prof_pass *pass = NULL;
    for (guint i = 0; i < p->passes->len && !pass; i++) {
        fp_prof_pass *q = fp_profile_pass(p, i);
        if (q->name == iname && q->kind == kind)
            pass = q;
    }
    if (!pass) {
        fp_prof_pass fresh = {.name = iname, .kind = kind};
        g_array_append_val(p->passes, fresh);
        pass = fp_profile_pass(p, p->passes->len - 1);
    }
    /* saturating sums: counts come from the file */
    pass->match_times = pass->match_times + match < match ? UINT64_MAX : pass->match_times + match;
    pass->effect_times = pass->effect_times + effect < effect ? UINT64_MAX : pass->effect_times + effect;
    pass->repository_hit_times = pass->repository_hit_times + hits < hits ? UINT64_MAX
                                                                          : pass->repository_hit_times + hits;
    pass->graphs++;
}

void fp_prof_warn(fp_profile *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(p->warnings, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

void fp_profile_index(fp_profile *p)
{
    g_autoptr(GHashTable) steps = g_hash_table_new(g_int64_hash, g_int64_equal);
    p->total_us = 0;
    for (guint i = 0; i < p->kernels->len; i++) {
        fp_prof_kernel *k = fp_profile_kernel(p, i);
        if (!(k->flags & FP_PROF_K_NESTED))
            p->total_us += k->dur_us;
        if (k->step >= 0)
            g_hash_table_add(steps, &k->step);
        GPtrArray *same = g_hash_table_lookup(p->by_name, k->name);
        if (!same) {
            same = g_ptr_array_new();
            g_hash_table_insert(p->by_name, (gpointer)k->name, same);
        }
        g_ptr_array_add(same, k);
    }
    p->steps = g_hash_table_size(steps);
}

const GPtrArray *fp_profile_find(const fp_profile *p, const char *name)
{
    const char *key = g_hash_table_lookup(p->strings, name);
    return key ? g_hash_table_lookup(p->by_name, key) : NULL;
}

static int group_cmp(const void *a, const void *b)
{
    const fp_prof_group *x = a, *y = b;
    if (x->total_us != y->total_us)
        return x->total_us < y->total_us ? 1 : -1;
    if (!x->key || !y->key)
        return x->key ? -1 : y->key ? 1 : 0;
    return strcmp(x->key, y->key);
}

fp_prof_group *fp_profile_group(const fp_profile *p, fp_prof_group_by by, guint *n)
{
    /* keys are interned (or NULL), so direct hashing works; the NULL key is stored as `p` */
    g_autoptr(GHashTable) idx = g_hash_table_new(g_direct_hash, g_direct_equal);
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(fp_prof_group));
    for (guint i = 0; i < p->kernels->len; i++) {
        const fp_prof_kernel *k = fp_profile_kernel(p, i);
        if (k->flags & FP_PROF_K_NESTED)
            continue;
        const char *key = by == FP_PROF_BY_CORE ? k->core : k->op_type;
        gpointer hkey = key ? (gpointer)key : (gpointer)p;
        gpointer slot = NULL;
        guint r;
        if (g_hash_table_lookup_extended(idx, hkey, NULL, &slot)) {
            r = GPOINTER_TO_UINT(slot);
        } else {
            fp_prof_group g = {.key = key};
            g_array_append_val(rows, g);
            r = rows->len - 1;
            g_hash_table_insert(idx, hkey, GUINT_TO_POINTER(r));
        }
        fp_prof_group *g = &g_array_index(rows, fp_prof_group, r);
        g->calls += k->count;
        g->kernels++;
        g->total_us += k->dur_us;
    }
    g_array_sort(rows, group_cmp);
    *n = rows->len;
    return (fp_prof_group *)g_array_free(rows, FALSE);
}

static gint time_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const fp_profile *p = data;
    guint i = *(const guint *)a, j = *(const guint *)b;
    double x = fp_profile_kernel(p, i)->dur_us, y = fp_profile_kernel(p, j)->dur_us;
    if (x != y)
        return x < y ? 1 : -1;
    return i < j ? -1 : i > j;
}

guint *fp_profile_by_time(const fp_profile *p)
{
    guint *order = g_new(guint, p->kernels->len + 1);
    for (guint i = 0; i < p->kernels->len; i++)
        order[i] = i;
    g_qsort_with_data(order, (gint)p->kernels->len, sizeof *order, time_cmp, (gpointer)p);
    return order;
}
