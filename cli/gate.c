/* gate.c - `fuseplan gate MODEL --policy FILE [--junit FILE] [--sarif FILE] [-f openmetrics]`: checks
 * a deployment policy against the report of MODEL; exit 0 pass, 1 violations, 2 error. */
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "reports/gate.h"
#include "reports/openmetrics.h"
#include "reports/formats.h"
#include "reports/output.h"

/* ---------------------------------------------------------------- gate */

typedef struct {
    char *policy, *junit, *sarif, *device, *target;
    gboolean no_color;
} gate_opts;

typedef struct {
    const fp_gate_result *g;
    bool color;
    bool openmetrics; /* -f openmetrics instead of the text summary */
} text_args;

static void emit(FILE *out, gpointer data)
{
    const text_args *t = data;
    if (t->openmetrics)
        fp_openmetrics_gate(t->g, out);
    else
        fp_gate_text(t->g, out, t->color);
}

/* The gate's document on standard output or -o (the module loaded by the format check); false
 * (printed) when it cannot be written. */
static bool write_json(const fp_gate_result *g, const char *output, int rc)
{
    g_autoptr(GError) err = NULL;
    const fp_formats *fx = fp_cli_formats("gate", "-f json");
    if (fx && fx->gate_json(g, rc, output, &err))
        return true;
    if (fx)
        fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
    return false;
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

/* The device and target the analysis runs on: the command line's names (loaded by the analysis),
 * else the policy's, loaded here so that an error names the policy and its key. False after
 * printing the error. */
static bool policy_profiles(const fp_gate_policy *p, const gate_opts *go, fp_device **dev, fp_target **t)
{
    g_autoptr(GError) err = NULL;
    if (!go->device && p->device && !(*dev = fp_device_load(p->device, &err))) {
        fp_cli_error("policy %s: [gate] device: %s", p->path, err->message);
        return false;
    }
    if (!go->target && p->target && !(*t = fp_target_load(p->target, &err))) {
        fp_cli_error("policy %s: [gate] target: %s", p->path, err->message);
        return false;
    }
    return true;
}

/* Evaluates the policy on the analysis and writes the verdict; the exit status. */
static int verdict(const fp_gate_policy *p, const fp_analysis *a, const fp_cli_model_opts *o, const char *format,
                   const gate_opts *go)
{
    fp_report rep = fp_report_of(a);
    g_autoptr(fp_gate_result) g = fp_gate_evaluate(p, &rep);
    if (go->device && p->device && strcmp(go->device, p->device) != 0)
        g_ptr_array_add(g->notes,
                        g_strdup_printf("device %s from --device; the policy names %s", go->device, p->device));
    if (go->target && p->target && strcmp(go->target, p->target) != 0)
        g_ptr_array_add(g->notes,
                        g_strdup_printf("target %s from --target; the policy names %s", go->target, p->target));
    int rc = g->not_evaluated ? FP_EXIT_BAD : g->failed ? FP_EXIT_GATE : FP_EXIT_OK;
    text_args t = {g, fp_cli_color(go->no_color, o->output), strcmp(format, "openmetrics") == 0};
    bool json = strcmp(format, "json") == 0;
    if (!write_reports(g, go, rc) || !(json ? write_json(g, o->output, rc) : fp_cli_emit_text(o->output, emit, &t)))
        rc = FP_EXIT_BAD;
    return rc;
}

static int run(const char *path, const fp_cli_model_opts *o, const fp_cli_resolved *r, const gate_opts *go)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_gate_policy) p = fp_gate_policy_load(go->policy, &err);
    if (!p) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    g_autoptr(fp_device) dev = NULL;
    g_autoptr(fp_target) t = NULL;
    if (!policy_profiles(p, go, &dev, &t))
        return FP_EXIT_BAD;
    fp_analysis_opts ao = r->ao;
    ao.device = go->device;
    ao.device_profile = dev;
    ao.target = go->target;
    ao.target_rules = t;
    ao.headroom.on = fp_gate_policy_needs_headroom(p);
    g_autoptr(fp_analysis) a = fp_cli_analyze(path, &ao);
    return a ? verdict(p, a, o, r->format, go) : FP_EXIT_BAD;
}

int fp_cmd_gate(int argc, char **argv)
{
    fp_cli_model_opts o = {0};
    gate_opts go = {0};
    GOptionEntry entries[] = {
        {"policy", 'p', 0, G_OPTION_ARG_FILENAME, &go.policy, "Policy file (.ini with a [gate] group; required)",
         "FILE"},
        {"junit", 0, 0, G_OPTION_ARG_FILENAME, &go.junit, "Also write the checks as JUnit XML", "FILE"},
        {"sarif", 0, 0, G_OPTION_ARG_FILENAME, &go.sarif, "Also write the findings as SARIF 2.1.0", "FILE"},
        {"device", 'd', 0, G_OPTION_ARG_STRING, &go.device, "Device profile (default: the policy's, else cpu-avx2)",
         "NAME"},
        {"target", 't', 0, G_OPTION_ARG_STRING, &go.target, "Fusion target (default: the policy's, else the device's)",
         "T"},
        {"no-color", 0, 0, G_OPTION_ARG_NONE, &go.no_color, "No ANSI colour even on a terminal", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext)
        ctx = g_option_context_new("MODEL - check a deployment policy (exit 0 pass, 1 fail, 2 error)");
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_add_model_options(ctx, &o, FP_CLI_ANALYSIS, NULL);
    g_option_context_set_description(ctx, "Formats (-f): text (default: one line per check and the verdict), "
                                          "json (the verdict and the checks, docs/json.md), openmetrics (the "
                                          "report's figures and the checks as OpenMetrics text, docs/openmetrics.md).");
    fp_cli_set_prgname("fuseplan gate");
    int rc = FP_EXIT_BAD;
    fp_cli_resolved r;
    if (!fp_cli_parse(ctx, "gate", &argc, &argv))
        ;
    else if (argc != 2)
        fp_cli_error("gate: expected one MODEL argument (see 'fuseplan gate --help')");
    else if (!go.policy)
        fp_cli_error("gate: --policy FILE is required (see docs/user-guide.md, 'Gating a pipeline')");
    else if (!fp_cli_model_opts_resolve(&o, "gate", "text,json,openmetrics", 0, &r))
        ;
    else if ((go.junit || go.sarif) && !fp_cli_formats("gate", go.junit ? "--junit" : "--sarif"))
        ; /* loaded before the analysis: a missing module costs no work and loses no output */
    else
        rc = run(argv[1], &o, &r, &go);
    g_free(go.policy);
    g_free(go.junit);
    g_free(go.sarif);
    g_free(go.device);
    g_free(go.target);
    fp_cli_model_opts_clear(&o);
    return rc;
}
