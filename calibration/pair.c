/* pair.c - one model analyzed against one measured profile (pair.h): the inputs bound from the
 * shapes the profile recorded, the analysis on the device and the target of the profile's level,
 * the stage whose graph the kernels match, the kernels matched. */
#include "calibration/pair.h"

#include <string.h>

#define AUTO_SHARE 0.10 /* measured-time share by which one stage's match must beat the other's */

bool fp_pair_stage_parse(const char *s, fp_pair_stage *out)
{
    static const char *const names[] = {"auto", "original", "fused"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (fp_pair_stage)i;
            return true;
        }
    return false;
}

const char *fp_pair_stage_name(fp_pair_stage s)
{
    return s == FP_PAIR_ORIGINAL ? "original" : s == FP_PAIR_FUSED ? "fused" : "auto";
}

char *fp_pair_profile_unusable(const fp_profile *p)
{
    if (p->format == FP_PROF_FUSION_RESULT)
        return g_strdup_printf("%s: a fusion_result.json lists fusion passes, not kernels: nothing to compare "
                               "(give an op_summary / kernel_details CSV or an ORT profile)",
                               p->path);
    guint counted = 0, aggregate = 0;
    for (guint k = 0; k < p->kernels->len; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(p, k);
        aggregate += (pk->flags & FP_PROF_K_AGGREGATE) != 0;
        counted += !(pk->flags & (FP_PROF_K_AGGREGATE | FP_PROF_K_NESTED));
    }
    if (aggregate && !counted)
        return g_strdup_printf("%s: %s rows are totals per op type: they cannot be matched to nodes "
                               "(give the kernel_details / op_summary CSV of the same run)",
                               p->path, fp_prof_format_name(p->format));
    if (!counted)
        return g_strdup_printf("%s: the profile holds no kernel", p->path);
    return NULL;
}

char *fp_pair_no_match_message(const char *model_path, const fp_model *m, const fp_profile *p)
{
    GString *s = g_string_new(NULL);
    g_string_printf(s, "%s: no kernel of the profile matches a node of %s (coverage 0 of %u kernels", p->path,
                    model_path, p->kernels->len);
    for (guint k = 0; k < p->kernels->len && k < 2; k++)
        g_string_append_printf(s, "%s'%s'", k ? ", " : "; profile names ", fp_profile_kernel(p, k)->name);
    for (guint i = 0; i < m->main->nodes->len && i < 2; i++)
        g_string_append_printf(s, "%s'%s'", i ? ", " : "; model nodes ",
                               ((const fp_node *)m->main->nodes->pdata[i])->name);
    g_string_append(s, "): is it the profile of another model?");
    return g_string_free(s, FALSE);
}

/* ---------------------------------------------------------------- input shapes */

/* The dims a kernel of p recorded for input v of the main graph: the first kernel named after a
 * node reading v whose tensor at that port agrees with v's known dims. */
static const fp_prof_tensor *profile_dims(const fp_profile *p, const fp_value *v)
{
    for (uint32_t u = 0; u < v->n_uses; u++) {
        const fp_use *use = &v->uses[u];
        const GPtrArray *ks = use->port != UINT32_MAX ? fp_profile_find(p, use->node->name) : NULL;
        for (guint i = 0; ks && i < ks->len; i++) {
            const fp_prof_kernel *k = ks->pdata[i];
            const fp_prof_tensor *t = use->port < k->n_inputs ? &k->inputs[use->port] : NULL;
            bool ok = t && t->rank >= 0 && (v->shape.rank < 0 || v->shape.rank == t->rank);
            for (int32_t d = 0; ok && d < t->rank; d++)
                ok = t->dims[d] >= 0 &&
                     (v->shape.rank < 0 || !fp_dim_known(v->shape.dims[d]) || v->shape.dims[d].value == t->dims[d]);
            if (ok)
                return t;
        }
    }
    return NULL;
}

/* fp_analysis_bind_fn for the inputs of m whose shape is not static: the dims the profile
 * recorded for them; batch 1 for those it does not show. */
static GHashTable *bind_from_profile(fp_model *m, void *data, int64_t *batch, char **note, GError **error)
{
    (void)error;
    const fp_profile *p = data;
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GString) from = g_string_new(NULL);
    bool unbound = false;
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        if (fp_shape_static(&v->shape))
            continue;
        const fp_prof_tensor *t = profile_dims(p, v);
        if (!t) {
            unbound = true;
            continue;
        }
        fp_shape *shape = fp_arena_alloc(m->arena, sizeof *shape);
        shape->rank = t->rank;
        shape->dims = fp_arena_calloc(m->arena, MAX(t->rank, 1), sizeof(fp_dim));
        g_string_append_printf(from, "%s%s ", from->len ? ", " : "", v->name);
        for (int32_t d = 0; d < t->rank; d++) {
            shape->dims[d] = (fp_dim){t->dims[d], NULL};
            g_string_append_printf(from, "%s%" G_GINT64_FORMAT, d ? "x" : "", t->dims[d]);
        }
        g_hash_table_insert(h, g_strdup(v->name), shape);
    }
    *batch = unbound ? 1 : 0;
    if (from->len)
        g_string_append(from, " (from the profile)");
    if (unbound)
        g_string_append_printf(from, "%sbatch bound to 1 for the inputs the profile does not show",
                               from->len ? "; " : "");
    *note = from->len ? g_strdup(from->str) : NULL;
    return h;
}

/* ---------------------------------------------------------------- the pair */

static uint32_t disagreements(const fp_match_result *r) { return r->split + r->absorbed + r->unmeasured; }

/* Whether p shows a kernel of ONNX Runtime's NCHWc layout. */
static bool has_nchwc_kernel(const fp_profile *p)
{
    for (guint i = 0; i < p->kernels->len; i++) {
        const char *op = fp_profile_kernel(p, i)->op_type;
        if (op && (strcmp(op, "ReorderInput") == 0 || strcmp(op, "ReorderOutput") == 0))
            return true;
    }
    return false;
}

/* The target of p's level in place of t (see fp_pair_run), loaded into pr->level with its
 * note in *note; t when there is none. NULL with the error of a bad below_nchwc. */
static const fp_target *level_target(fp_pair *pr, const fp_profile *p, const fp_target *t, char **note, GError **error)
{
    g_autofree char *below = g_key_file_get_string(t->keyfile, "target", "below_nchwc", NULL);
    if (!below || !g_key_file_get_boolean(t->keyfile, "layout", "nchwc", NULL) || has_nchwc_kernel(p))
        return t;
    if (!(pr->level = fp_target_load(g_strstrip(below), error))) {
        g_prefix_error(error, "%s: [target] below_nchwc: ", t->path);
        return NULL;
    }
    *note = g_strdup_printf("the profile has no NCHWc kernel (ReorderInput, ReorderOutput): compared with %s, "
                            "not %s (-t to choose)",
                            pr->level->name, t->name);
    return pr->level;
}

bool fp_pair_run(fp_pair *pr, const char *path, const fp_profile *p, const fp_device *dev, const fp_target *t,
                 bool by_level, const fp_analysis_opts *base, fp_pair_stage stage, GError **error)
{
    memset(pr, 0, sizeof *pr);
    g_autofree char *level_note = NULL;
    if (by_level && !(t = level_target(pr, p, t, &level_note, error)))
        return false;
    pr->target = t->name;
    fp_analysis_opts ao = *base;
    ao.device_profile = dev;
    ao.target_rules = t;
    ao.bind = bind_from_profile;
    ao.bind_data = (void *)p;
    ao.original = stage != FP_PAIR_FUSED;
    if (!(pr->a = fp_analysis_run(path, &ao, error)))
        return false;
    pr->final = pr->a->model;
    pr->inputs_note = pr->a->inputs_note;
    pr->diag = pr->a->diag;
    fp_match_result *fused = NULL, *orig = NULL;
    g_autoptr(fp_diag) dfused = fp_diag_new(), dorig = fp_diag_new(); /* the chosen stage's go to pr->diag */
    if (stage != FP_PAIR_ORIGINAL)
        fused = fp_match_run(pr->a->model, pr->a->res.cost, pr->a->res.fusions, p, dfused);
    if (stage != FP_PAIR_FUSED)
        orig = fp_match_run(pr->a->original, pr->a->original_cost, pr->a->res.fusions, p, dorig);
    if (stage != FP_PAIR_AUTO) {
        pr->stage = stage;
        pr->match = fused ? fused : orig;
        pr->stage_note = g_strdup_printf("as asked (--stage)%s%s", level_note ? "; " : "",
                                         level_note ? level_note : "");
        fp_diag_move(pr->diag, fused ? dfused : dorig);
        return true;
    }
    /* auto: fewer disagreements, unless the other graph matches clearly more measured time; ties:
     * the fused graph */
    double total = MAX(fused->measured_s, 1e-300);
    double df = fused->measured_matched_s / total, dor = orig->measured_matched_s / total;
    bool pick_orig = dor > df + AUTO_SHARE || (dor >= df - AUTO_SHARE && disagreements(orig) < disagreements(fused));
    pr->stage = pick_orig ? FP_PAIR_ORIGINAL : FP_PAIR_FUSED;
    pr->match = pick_orig ? orig : fused;
    pr->other = pick_orig ? fused : orig;
    fp_diag_move(pr->diag, pick_orig ? dorig : dfused);
    pr->stage_note =
        g_strdup_printf("auto: %u disagreements against the %s graph, %u against the %s graph "
                        "(units measured as several kernels, absorbed into a neighbour, or unmeasured)%s%s",
                        disagreements(pr->match), fp_pair_stage_name(pr->stage), disagreements(pr->other),
                        pick_orig ? "fused" : "original", level_note ? "; " : "", level_note ? level_note : "");
    return true;
}

void fp_pair_clear(fp_pair *pr)
{
    fp_match_result_free(pr->match);
    fp_match_result_free(pr->other);
    fp_analysis_free(pr->a);
    fp_target_free(pr->level);
    g_free(pr->stage_note);
    memset(pr, 0, sizeof *pr);
}
