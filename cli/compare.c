/* compare.c - `fuseplan compare MODEL --profile FILE`: fuseplan's per-op estimates next to a
 * measured profile (matched by name, then op type and shapes), error statistics, the worst
 * outliers with their roofline bound, and the fusions the real compiler performed next to the
 * predicted ones. Also the model-against-profile analysis `fuseplan fit` reuses (compare.h). */
#include "compare.h"

#include <string.h>

#include "cli.h"
#include "frontends/load.h"
#include "passes/metrics.h"
#include "reports/compare.h"

#define DEFAULT_TOP 20
#define DEFAULT_OUTLIERS 5
#define AUTO_SHARE 0.10 /* measured-time share by which one stage's match must beat the other's */

bool fp_cmp_stage_parse(const char *s, fp_cmp_stage *out)
{
    static const char *const names[] = {"auto", "original", "fused"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (fp_cmp_stage)i;
            return true;
        }
    return false;
}

const char *fp_cmp_stage_name(fp_cmp_stage s) { return s == FP_STAGE_ORIGINAL ? "original" : s == FP_STAGE_FUSED ? "fused" : "auto"; }

char *fp_cmp_profile_unusable(const fp_profile *p)
{
    if (p->format == FP_PROF_FUSION_RESULT)
        return g_strdup_printf("%s: a fusion_result.json lists fusion passes, not kernels: nothing to compare "
                               "(give an op_summary / kernel_details CSV or an ORT profile)", p->path);
    guint counted = 0, aggregate = 0;
    for (guint k = 0; k < p->kernels->len; k++) {
        const fp_prof_kernel *pk = fp_profile_kernel(p, k);
        aggregate += (pk->flags & FP_PROF_K_AGGREGATE) != 0;
        counted += !(pk->flags & (FP_PROF_K_AGGREGATE | FP_PROF_K_NESTED));
    }
    if (aggregate && !counted)
        return g_strdup_printf("%s: %s rows are totals per op type: they cannot be matched to nodes "
                               "(give the kernel_details / op_summary CSV of the same run)", p->path,
                               fp_prof_format_name(p->format));
    if (!counted)
        return g_strdup_printf("%s: the profile holds no kernel", p->path);
    return NULL;
}

char *fp_cmp_no_match_message(const char *model_path, const fp_model *m, const fp_profile *p)
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
                ok = t->dims[d] >= 0 && (v->shape.rank < 0 || !fp_dim_known(v->shape.dims[d]) ||
                                         v->shape.dims[d].value == t->dims[d]);
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

/* The target of p's level in place of t (see fp_cmp_pair_run), loaded into pr->level with its
 * note in *note; t when there is none. NULL with the error of a bad below_nchwc. */
static const fp_target *level_target(fp_cmp_pair *pr, const fp_profile *p, const fp_target *t, char **note,
                                     GError **error)
{
    g_autofree char *below = g_key_file_get_string(t->keyfile, "target", "below_nchwc", NULL);
    if (!below || !g_key_file_get_boolean(t->keyfile, "layout", "nchwc", NULL) || has_nchwc_kernel(p))
        return t;
    if (!(pr->level = fp_target_load(g_strstrip(below), error))) {
        g_prefix_error(error, "%s: [target] below_nchwc: ", t->path);
        return NULL;
    }
    *note = g_strdup_printf("the profile has no NCHWc kernel (ReorderInput, ReorderOutput): compared with %s, "
                            "not %s (-t to choose)", pr->level->name, t->name);
    return pr->level;
}

bool fp_cmp_pair_run(fp_cmp_pair *pr, const char *path, const fp_profile *p, const fp_device *dev,
                     const fp_target *t, bool by_level, const fp_analysis_opts *base, fp_cmp_stage stage,
                     GError **error)
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
    ao.original = stage != FP_STAGE_FUSED;
    if (!(pr->a = fp_analysis_run(path, &ao, error)))
        return false;
    fp_cli_analysis_warnings(pr->a); /* after the analysis: a failing run prints its one error line only */
    pr->final = pr->a->model;
    pr->inputs_note = pr->a->inputs_note;
    pr->diag = pr->a->diag;
    fp_match_result *fused = NULL, *orig = NULL;
    g_autoptr(fp_diag) dfused = fp_diag_new(), dorig = fp_diag_new(); /* the chosen stage's go to pr->diag */
    if (stage != FP_STAGE_ORIGINAL)
        fused = fp_match_run(pr->a->model, pr->a->res.cost, pr->a->res.fusions, p, dfused);
    if (stage != FP_STAGE_FUSED)
        orig = fp_match_run(pr->a->original, pr->a->original_cost, pr->a->res.fusions, p, dorig);
    if (stage != FP_STAGE_AUTO) {
        pr->stage = stage;
        pr->match = fused ? fused : orig;
        pr->stage_note = g_strdup_printf("as asked (--stage)%s%s", level_note ? "; " : "", level_note ? level_note : "");
        fp_diag_move(pr->diag, fused ? dfused : dorig);
        return true;
    }
    /* auto: fewer disagreements, unless the other graph matches clearly more measured time; ties:
     * the fused graph */
    double total = MAX(fused->measured_s, 1e-300);
    double df = fused->measured_matched_s / total, dor = orig->measured_matched_s / total;
    bool pick_orig = dor > df + AUTO_SHARE || (dor >= df - AUTO_SHARE && disagreements(orig) < disagreements(fused));
    pr->stage = pick_orig ? FP_STAGE_ORIGINAL : FP_STAGE_FUSED;
    pr->match = pick_orig ? orig : fused;
    pr->other = pick_orig ? fused : orig;
    fp_diag_move(pr->diag, pick_orig ? dorig : dfused);
    pr->stage_note = g_strdup_printf("auto: %u disagreements against the %s graph, %u against the %s graph "
                                     "(units measured as several kernels, absorbed into a neighbour, or unmeasured)%s%s",
                                     disagreements(pr->match), fp_cmp_stage_name(pr->stage), disagreements(pr->other),
                                     pick_orig ? "fused" : "original", level_note ? "; " : "",
                                     level_note ? level_note : "");
    return true;
}

void fp_cmp_pair_clear(fp_cmp_pair *pr)
{
    fp_match_result_free(pr->match);
    fp_match_result_free(pr->other);
    fp_analysis_free(pr->a);
    fp_target_free(pr->level);
    g_free(pr->stage_note);
    memset(pr, 0, sizeof *pr);
}

/* ---------------------------------------------------------------- command */

typedef struct {
    const fp_compare_report *r;
} emit_args;

static void emit(FILE *out, gpointer data)
{
    emit_args *a = data;
    fp_report_compare_text(a->r, out);
}

typedef struct {
    const char *profile, *device, *target, *stage;
    int outliers;
} compare_opts;

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r, const compare_opts *co)
{
    const char *format = r->format;
    fp_cmp_stage stage;
    if (!fp_cmp_stage_parse(co->stage ? co->stage : "auto", &stage)) {
        fp_cli_error("compare: --stage %s: one of auto, original, fused", co->stage);
        return FP_EXIT_BAD;
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = fp_profile_load(co->profile, &err);
    g_autoptr(fp_device) dev = p ? fp_device_load(co->device ? co->device : "cpu-avx2", &err) : NULL;
    g_autoptr(fp_target) t = dev ? fp_target_load(co->target ? co->target : dev->target, &err) : NULL;
    if (!t) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    g_autofree char *unusable = fp_cmp_profile_unusable(p);
    if (unusable) {
        fp_cli_error("%s", unusable);
        return FP_EXIT_BAD;
    }
    fp_cmp_pair pr;
    if (!fp_cmp_pair_run(&pr, path, p, dev, t, !co->target, &r->ao, stage, &err)) {
        fp_cli_error("%s", err->message);
        fp_cmp_pair_clear(&pr);
        return FP_EXIT_BAD;
    }
    int rc = FP_EXIT_OK;
    if (pr.match->matched == 0) {
        g_autofree char *msg = fp_cmp_no_match_message(path, pr.final, p);
        fp_cli_error("%s", msg);
        rc = FP_EXIT_BAD;
    } else {
        fp_compare_report rep = {.model_path = path, .profile = p, .device = dev, .target = pr.target,
                                 .stage = fp_cmp_stage_name(pr.stage), .stage_note = pr.stage_note,
                                 .inputs_note = pr.inputs_note, .match = pr.match,
                                 .top = r->top, .outliers = (unsigned)co->outliers,
                                 .diag = pr.diag, .verbose = o->verbose};
        if (strcmp(format, "json") == 0) {
            if (!fp_report_compare_json(&rep, o->output, &err)) {
                fp_cli_error("%s: %s", o->output ? o->output : "stdout", err ? err->message : "write failed");
                rc = FP_EXIT_BAD;
            }
        } else {
            emit_args a = {&rep};
            rc = fp_cli_emit_text(o->output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
        }
    }
    fp_cmp_pair_clear(&pr);
    return rc;
}

int fp_cmd_compare(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    g_autofree char *profile = NULL, *device = NULL, *target = NULL, *stage = NULL;
    gint outliers = DEFAULT_OUTLIERS;
    GOptionEntry entries[] = {
        {"profile", 'p', 0, G_OPTION_ARG_FILENAME, &profile, "Measured profile (ORT JSON, Ascend CSV, Chrome trace)", "FILE"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &device, "Device profile name or .ini (default cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &target, "Fusion target (default: the device's)", "T"},
        {"stage", 0, 0, G_OPTION_ARG_STRING, &stage,
         "Graph the profile ran: original (no fusion, e.g. ORT level disabled), fused (after the target's "
         "fusions, e.g. ORT extended) or auto (default: the one the kernels match better)", "STAGE"},
        {"outliers", 0, 0, G_OPTION_ARG_INT, &outliers, "Worst estimates listed (default 5)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("MODEL - estimated vs measured time per op, error statistics, fusions the compiler made");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS | FP_CLI_TOP, "Rows listed, longest measured first (default 20; 0: all)");
    fp_cli_set_prgname("fuseplan compare");
    int rc = FP_EXIT_BAD;
    fp_cli_resolved r;
    if (!fp_cli_parse(ctx, "compare", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("compare: expected one MODEL argument (see 'fuseplan compare --help')");
    else if (!profile)
        fp_cli_error("compare: --profile FILE is required");
    else if (outliers < 0)
        fp_cli_error("compare: --outliers %d: must be 0 or more", outliers);
    else if (fp_cli_model_opts_resolve(&o, "compare", "text,json", DEFAULT_TOP, &r)) {
        compare_opts co = {profile, device, target, stage, outliers};
        rc = run(argv[1], &o, &r, &co);
    }
    fp_cli_model_opts_clear(&o);
    return rc;
}
