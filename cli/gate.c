/* gate.c - `fuseplan gate MODEL --policy FILE [--junit FILE] [--sarif FILE]`: checks a deployment
 * policy against the report of MODEL; exit 0 pass, 1 violations, 2 error. Also the analysis shared
 * with `diff` (gate.h). */
#include "gate.h"

#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frontends/load.h"
#include "reports/gate.h"
#include "formats/formats.h"
#include "reports/output.h"

/* ---------------------------------------------------------------- the shared analysis */

/* Symbolic dims of the main graph's inputs, comma-separated, or NULL. Caller frees. */
static char *symbolic_dims(const fp_model *m)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < m->main->inputs->len; i++) {
        const fp_value *v = m->main->inputs->pdata[i];
        for (int32_t d = 0; d < v->shape.rank; d++)
            if (v->shape.dims[d].sym && !strstr(s->str, v->shape.dims[d].sym))
                g_string_append_printf(s, "%s%s", s->len ? ", " : "", v->shape.dims[d].sym);
    }
    return g_string_free(s, s->len == 0);
}

/* The headroom search on the final graph (it re-infers the model: run it last). plan_at_1: the
 * pipeline's final plan when it is at batch 1 (not planned again); mem.reuse holds its liveness. */
static void headroom(fp_cli_analysis *a, const fp_cli_model_opts *o, const fp_pipeline_opts *po,
                     const fp_memory_result *plan_at_1)
{
    fp_headroom_opts ho = {.capacity = a->dev->memory_bytes, .reserve = a->dev->memory_bytes / 10,
                           .batch_dim = o->batch_dim, .mem = po->memory, .plan_at_1 = plan_at_1, .shapes = po->shapes};
    g_autoptr(GError) err = NULL;
    if (fp_pass_headroom(a->model, &ho, &a->hr, NULL, &err)) {
        a->rep.headroom = &a->hr;
        return;
    }
    a->rep.headroom_note = err && g_error_matches(err, FP_HEADROOM_ERROR, FP_HEADROOM_ERROR_NO_BATCH)
                               ? "not computed: the model has no symbolic batch dimension (name one with --batch-dim)"
                               : "not computed";
}

/* Binds --input shapes (into the model's arena) and the batch; NULL on a bad spec (printed). */
static GHashTable *input_shapes(fp_cli_analysis *a, const fp_cli_model_opts *o, int64_t *batch)
{
    GHashTable *shapes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (char **s = o->inputs; s && *s; s++) {
        char *name = NULL;
        fp_shape *shape = fp_arena_alloc(a->model->arena, sizeof *shape);
        g_autoptr(GError) err = NULL;
        if (!fp_cli_parse_input_spec(a->model, *s, &name, shape, &err)) {
            fp_cli_error("%s", err->message);
            g_hash_table_unref(shapes);
            return NULL;
        }
        g_hash_table_insert(shapes, name, shape);
    }
    g_autofree char *syms = symbolic_dims(a->model);
    *batch = o->batch;
    if (!o->batch && !o->inputs && syms) {
        *batch = 1;
        a->batch_note = g_strdup_printf("symbolic input dims: %s; batch (first dim of each input) bound to 1 "
                                        "(--batch N or --input NAME:DIMS to change)", syms);
    }
    return shapes;
}

bool fp_cli_analyze(const char *path, const fp_cli_model_opts *o, const char *device, const char *target,
                    bool headroom_too, fp_cli_analysis *a)
{
    memset(a, 0, sizeof *a);
    g_autoptr(GError) err = NULL;
    if (!(a->dev = fp_device_load(device ? device : "cpu-avx2", &err)) ||
        !(a->target = fp_target_load(target ? target : a->dev->target, &err)) || !(a->model = fp_cli_load_for_pipeline(path, &err))) {
        fp_cli_error("%s", err->message);
        return false;
    }
    int64_t batch = 0;
    g_autoptr(GHashTable) shapes = input_shapes(a, o, &batch);
    if (!shapes)
        return false;
    /* as `report`: the final plan's liveness, resized by the headroom search at other batches */
    bool with_headroom = headroom_too && !o->inputs;
    g_autoptr(fp_memory_reuse) reuse = with_headroom ? fp_memory_reuse_new(NULL) : NULL;
    fp_pipeline_opts po = {
        .shapes = {.input_shapes = shapes, .batch = batch, .batch_dim = o->batch_dim},
        .target = a->target,
        .device = a->dev,
        .memory = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN, .align = a->dev->align_bytes,
                   .reuse = reuse},
        .what_if = FP_DT_UNDEFINED,
    };
    a->diag = fp_diag_new();
    g_autofree char *warning = NULL;
    if (!fp_cli_check_ops(path, a->model, o->strict, a->diag, &warning))
        return false;
    if (!fp_pipeline_run(a->model, &po, &a->res, a->diag, &err)) {
        fp_cli_error("%s: %s", path, err->message);
        if (a->res.memory)
            a->res.memory->opts.reuse = NULL; /* freed on return */
        return false;
    }
    if (warning) /* after the analysis: a failing run prints its one error line only */
        fp_cli_error("%s", warning);
    a->rep = (fp_report){.model = a->model, .target = a->target, .device = a->dev, .res = &a->res, .diag = a->diag,
                         .batch_note = a->batch_note, .what_if = FP_DT_UNDEFINED, .top = 10,
                         .headroom_note = "not computed"};
    if (headroom_too && o->inputs)
        a->rep.headroom_note = "not computed with --input (bind the batch with --batch, or run fuseplan headroom)";
    else if (with_headroom)
        headroom(a, o, &po, batch == 1 ? a->res.memory : NULL);
    if (a->res.memory)
        a->res.memory->opts.reuse = NULL; /* freed on return; the plan outlives it */
    return true;
}

void fp_cli_analysis_clear(fp_cli_analysis *a)
{
    fp_pipeline_result_clear(&a->res);
    fp_diag_free(a->diag);
    fp_model_free(a->model);
    fp_target_free(a->target);
    fp_device_free(a->dev);
    g_free(a->batch_note);
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------------- gate */

typedef struct {
    char *policy, *junit, *sarif, *device, *target;
    gboolean no_color;
} gate_opts;

typedef struct {
    const fp_gate_result *g;
    bool color;
} text_args;

static void emit(FILE *out, gpointer data)
{
    const text_args *t = data;
    fp_gate_text(t->g, out, t->color);
}

/* JUnit and SARIF files, written atomically; false (printed) when one cannot be written. */
static bool write_reports(const fp_gate_result *g, const gate_opts *go, int rc)
{
    g_autoptr(GError) err = NULL;
    const fp_formats *fx = go->junit || go->sarif ? fp_cli_formats("gate", go->junit ? "--junit" : "--sarif") : NULL;
    if ((go->junit || go->sarif) && !fx)
        return false;
    if (go->junit) {
        gsize len = 0;
        g_autofree char *xml = fx->junit(g, &len);
        if (!fp_output_write(go->junit, xml, (gssize)len, &err)) {
            fp_cli_error("%s", err->message);
            return false;
        }
    }
    if (go->sarif) {
        if (strcmp(go->sarif, "-") == 0 || !fx->sarif(g, rc, go->sarif, &err)) {
            fp_cli_error("%s: %s", go->sarif, err ? err->message : "SARIF goes to a file, not stdout");
            return false;
        }
    }
    return true;
}

static int run(const char *path, const fp_cli_model_opts *o, const gate_opts *go)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_gate_policy) p = fp_gate_policy_load(go->policy, &err);
    if (!p) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    fp_cli_analysis a;
    const char *device = go->device ? go->device : p->device, *target = go->target ? go->target : p->target;
    int rc = FP_EXIT_BAD;
    if (fp_cli_analyze(path, o, device, target, fp_gate_policy_needs_headroom(p), &a)) {
        g_autoptr(fp_gate_result) g = fp_gate_evaluate(p, &a.rep);
        if (go->device && p->device && strcmp(go->device, p->device) != 0)
            g_ptr_array_add(g->notes, g_strdup_printf("device %s from --device; the policy names %s", go->device,
                                                      p->device));
        if (go->target && p->target && strcmp(go->target, p->target) != 0)
            g_ptr_array_add(g->notes, g_strdup_printf("target %s from --target; the policy names %s", go->target,
                                                      p->target));
        rc = g->not_evaluated ? FP_EXIT_BAD : g->failed ? FP_EXIT_GATE : FP_EXIT_OK;
        text_args t = {g, !go->no_color && !o->output && isatty(STDOUT_FILENO)};
        if (!write_reports(g, go, rc) || !fp_cli_emit_text(o->output, emit, &t))
            rc = FP_EXIT_BAD;
    }
    fp_cli_analysis_clear(&a);
    return rc;
}

int fp_cmd_gate(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    gate_opts go = {0};
    GOptionEntry entries[] = {
        {"policy", 'p', 0, G_OPTION_ARG_FILENAME, &go.policy, "Policy file (.ini with a [gate] group; required)", "FILE"},
        {"junit", 0, 0, G_OPTION_ARG_FILENAME, &go.junit, "Also write the checks as JUnit XML", "FILE"},
        {"sarif", 0, 0, G_OPTION_ARG_FILENAME, &go.sarif, "Also write the findings as SARIF 2.1.0", "FILE"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &go.device, "Device profile (default: the policy's, else cpu-avx2)", "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &go.target, "Fusion target (default: the policy's, else the device's)", "T"},
        {"no-color", 0, 0, G_OPTION_ARG_NONE, &go.no_color, "No ANSI colour even on a terminal", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - check a deployment policy (exit 0 pass, 1 fail, 2 error)");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o);
    g_set_prgname("fuseplan gate");
    int rc = FP_EXIT_BAD;
    if (!fp_cli_parse(ctx, "gate", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("gate: expected one MODEL argument (see 'fuseplan gate --help')");
    else if (!go.policy)
        fp_cli_error("gate: --policy FILE is required (see docs/user-guide.md, 'Gating a pipeline')");
    else if (!fp_cli_check_format("gate", o.format ? o.format : "text", "text"))
        ;
    else if ((go.junit || go.sarif) && !fp_cli_formats("gate", go.junit ? "--junit" : "--sarif"))
        ; /* loaded before the analysis: a missing module costs no work and loses no output */
    else
        rc = run(argv[1], &o, &go);
    g_free(go.policy);
    g_free(go.junit);
    g_free(go.sarif);
    g_free(go.device);
    g_free(go.target);
    fp_cli_model_opts_clear(&o);
    return rc;
}
