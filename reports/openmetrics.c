/* openmetrics.c - the report's and the gate's headline figures as OpenMetrics 1.0 text: one gauge
 * family per figure (TYPE, UNIT where the name ends in one, HELP, then its samples), "# EOF" last.
 * Family names and labels: docs/openmetrics.md. */
#include "openmetrics.h"

#include <math.h>
#include <string.h>

/* Where the samples go and the labels every sample carries. */
typedef struct {
    FILE *out;
    char *common; /* model="...",device="...",target="..." (escaped) */
} om_writer;

static const char *const stage_labels[3] = {"original", "fusion", "final"};

char *fp_openmetrics_escape(const char *s)
{
    g_autofree char *valid = g_utf8_make_valid(s ? s : "", -1);
    GString *e = g_string_sized_new(strlen(valid) + 8);
    for (const char *p = valid; *p; p++) {
        if (*p == '\\')
            g_string_append(e, "\\\\");
        else if (*p == '"')
            g_string_append(e, "\\\"");
        else if (*p == '\n')
            g_string_append(e, "\\n");
        else
            g_string_append_c(e, *p);
    }
    return g_string_free(e, FALSE);
}

/* name="value" with value escaped. Caller frees. */
static char *label(const char *name, const char *value)
{
    g_autofree char *v = fp_openmetrics_escape(value);
    return g_strdup_printf("%s=\"%s\"", name, v);
}

static void writer_init(om_writer *w, const fp_report *r, FILE *out)
{
    g_autofree char *model = label("model", r->model->path), *device = label("device", r->device->name);
    g_autofree char *target = label("target", r->target->name);
    w->out = out;
    w->common = g_strdup_printf("%s,%s,%s", model, device, target);
}

/* The family's descriptors: TYPE gauge, UNIT when unit is not NULL (name ends in _UNIT), HELP
 * (plain text: no backslash, quote or newline, which would need escapes). */
static void family(om_writer *w, const char *name, const char *unit, const char *help)
{
    g_assert(!unit || g_str_has_suffix(name, unit));
    g_assert(!strpbrk(help, "\\\"\n"));
    fprintf(w->out, "# TYPE %s gauge\n", name);
    if (unit)
        fprintf(w->out, "# UNIT %s %s\n", name, unit);
    fprintf(w->out, "# HELP %s %s\n", name, help);
}

/* "NAME{common[,extra]} " before a sample's value; extra: more labels (name="value", ...) or NULL. */
static void sample_start(om_writer *w, const char *name, const char *extra)
{
    fprintf(w->out, "%s{%s%s%s} ", name, w->common, extra ? "," : "", extra ? extra : "");
}

static void sample_int(om_writer *w, const char *name, const char *extra, uint64_t v)
{
    sample_start(w, name, extra);
    fprintf(w->out, "%" G_GUINT64_FORMAT "\n", v);
}

/* v in the C locale, the shortest of %.15g, %.16g and %.17g that reads back as v (so 1.54 stays
 * 1.54); NaN and the infinities as OpenMetrics spells them. */
static void sample_double(om_writer *w, const char *name, const char *extra, double v)
{
    sample_start(w, name, extra);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (isnan(v)) {
        g_strlcpy(buf, "NaN", sizeof buf);
    } else if (isinf(v)) {
        g_strlcpy(buf, v > 0 ? "+Inf" : "-Inf", sizeof buf);
    } else {
        static const char *const formats[] = {"%.15g", "%.16g", "%.17g"};
        for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
            if (g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, formats[i], v), NULL) == v)
                break;
    }
    fprintf(w->out, "%s\n", buf);
}

/* The stage table's columns. */
typedef enum { FIG_OPS, FIG_KERNELS, FIG_ACTIVATION, FIG_WEIGHTS, FIG_LATENCY, FIG_SPEEDUP } stage_figure;

/* One sample of column `fig` of stage s. */
static void stage_sample(om_writer *w, const char *name, const char *stage, const fp_stage *s, stage_figure fig)
{
    switch (fig) {
    case FIG_OPS:
        sample_int(w, name, stage, s->ops);
        break;
    case FIG_KERNELS:
        sample_int(w, name, stage, s->kernels);
        break;
    case FIG_ACTIVATION:
        sample_int(w, name, stage, s->activation_bytes);
        break;
    case FIG_WEIGHTS:
        sample_int(w, name, stage, s->weight_bytes);
        break;
    case FIG_LATENCY:
        sample_double(w, name, stage, s->latency_s);
        break;
    case FIG_SPEEDUP:
        sample_double(w, name, stage, s->speedup);
        break;
    }
}

/* The stage table: one family per column, one sample per stage. */
static void stage_families(om_writer *w, const fp_report *r)
{
    static const struct {
        const char *name, *unit, *help;
        stage_figure fig;
    } fams[] = {
        {"fuseplan_ops", NULL, "Runtime ops of the graph at this stage (folded shape computations not counted)",
         FIG_OPS},
        {"fuseplan_kernels", NULL, "Ops that launch a kernel at this stage (views launch nothing)", FIG_KERNELS},
        {"fuseplan_activation_bytes", "bytes",
         "Activation memory at this stage: without reuse for original and fusion; the final stage's is the planned "
         "arena",
         FIG_ACTIVATION},
        {"fuseplan_weight_bytes", "bytes", "Weights the ops of this stage read (at the weight what-if, if any)",
         FIG_WEIGHTS},
        {"fuseplan_estimated_latency_seconds", "seconds",
         "Estimated latency of one inference at this stage (roofline per kernel, run sequentially)", FIG_LATENCY},
        {"fuseplan_speedup", NULL,
         "Estimated speedup of this stage over the original graph (original latency / this latency)", FIG_SPEEDUP},
    };
    for (size_t f = 0; f < G_N_ELEMENTS(fams); f++) {
        family(w, fams[f].name, fams[f].unit, fams[f].help);
        for (int i = 0; i < 3; i++) {
            g_autofree char *stage = label("stage", stage_labels[i]);
            stage_sample(w, fams[f].name, stage, &r->res->stages[i], fams[f].fig);
        }
    }
}

/* Each rule of the target once, in its order (a rule listed twice is one series). */
static GPtrArray *distinct_rules(const fp_target *t)
{
    GPtrArray *rules = g_ptr_array_new();
    for (char **id = t->rules; id && *id; id++)
        if (!g_ptr_array_find_with_equal_func(rules, *id, g_str_equal, NULL))
            g_ptr_array_add(rules, *id);
    return rules;
}

/* Fusion candidates of each rule of the target, applied and not applied (0 for a rule without
 * candidates, so that every rule's series exists). */
static void fusion_families(om_writer *w, const fp_report *r)
{
    g_autoptr(GPtrArray) rules = distinct_rules(r->target);
    g_autofree guint *applied = g_new0(guint, rules->len + 1), *missed = g_new0(guint, rules->len + 1);
    const GPtrArray *fl = r->res->fusions->fusions;
    for (guint k = 0; k < fl->len; k++) {
        const fp_fusion *f = fl->pdata[k];
        guint i = 0;
        if (!g_ptr_array_find_with_equal_func(rules, f->rule, g_str_equal, &i))
            continue;
        if (f->applied)
            applied[i]++;
        else
            missed[i]++;
    }
    const char *names[2] = {"fuseplan_fusions_applied", "fuseplan_fusions_not_applied"};
    const char *helps[2] = {"Fusion candidates of this rule the target compiler applies",
                            "Fusion candidates of this rule the target compiler does not apply (fuseplan explain "
                            "says why)"};
    for (int f = 0; f < 2; f++) {
        family(w, names[f], NULL, helps[f]);
        for (guint i = 0; i < rules->len; i++) {
            g_autofree char *rule = label("rule", rules->pdata[i]);
            sample_int(w, names[f], rule, f ? missed[i] : applied[i]);
        }
    }
}

/* The memory plan of the final graph, the KV cache (when the model has one of known size) and the
 * batch headroom (when it was searched). */
static void memory_families(om_writer *w, const fp_report *r)
{
    const fp_memory_result *mem = r->res->memory;
    family(w, "fuseplan_memory_arena_bytes", "bytes", "Activation arena of the final graph's memory plan");
    sample_int(w, "fuseplan_memory_arena_bytes", NULL, mem->arena);
    family(w, "fuseplan_memory_lower_bound_bytes", "bytes",
           "Lower bound of any activation plan for the planned order: the largest live bytes at one step (LOAD)");
    sample_int(w, "fuseplan_memory_lower_bound_bytes", NULL, mem->lower_bound);
    if (r->kv && r->kv_bytes) {
        family(w, "fuseplan_kv_cache_bytes", "bytes",
               "KV cache a decoder holds at the analysed step, apart from the arena (at the KV what-if, if any)");
        sample_int(w, "fuseplan_kv_cache_bytes", NULL, r->kv_bytes);
    }
    if (r->headroom) {
        family(w, "fuseplan_headroom_max_batch", NULL,
               "Largest batch whose weights, activations and KV cache fit in the device memory after a 10 percent "
               "reserve (0: not even batch 1; the search limit when memory allows more)");
        sample_int(w, "fuseplan_headroom_max_batch", NULL, (uint64_t)MAX(r->headroom->max_batch, 0));
    }
}

/* Every family of the report, without the closing # EOF. */
static void report_families(om_writer *w, const fp_report *r)
{
    stage_families(w, r);
    fusion_families(w, r);
    memory_families(w, r);
}

void fp_openmetrics_report(const fp_report *r, FILE *out)
{
    om_writer w;
    writer_init(&w, r, out);
    report_families(&w, r);
    fputs("# EOF\n", out);
    g_free(w.common);
}

/* Per check of the policy: passed, evaluated, the measured value (evaluated checks only) and the
 * limit, each family labelled by policy and check. */
static void check_families(om_writer *w, const fp_gate_result *g, const char *policy)
{
    static const struct {
        const char *name, *help;
    } fams[] = {
        {"fuseplan_gate_check_passed", "1 when the policy check passed, else 0 (failed or not evaluated)"},
        {"fuseplan_gate_check_evaluated", "1 when the policy check could be evaluated, 0 when the report lacks its "
                                          "number (no headroom search)"},
        {"fuseplan_gate_check_value", "Measured value of the policy check in the policy key unit: MB of 10^6 bytes, "
                                      "batch, speedup, conversions; forbid_unfused: candidates not applied"},
        {"fuseplan_gate_check_limit", "Limit the policy sets for the check, in the same unit (forbid_unfused: 0)"},
    };
    for (size_t f = 0; f < G_N_ELEMENTS(fams) && g->checks->len; f++) {
        family(w, fams[f].name, NULL, fams[f].help);
        for (guint i = 0; i < g->checks->len; i++) {
            const fp_gate_check *c = g->checks->pdata[i];
            bool evaluated = c->status != FP_GATE_NOT_EVALUATED;
            g_autofree char *check = label("check", c->name);
            g_autofree char *extra = g_strdup_printf("%s,%s", policy, check);
            if (f == 0)
                sample_int(w, fams[f].name, extra, c->status == FP_GATE_PASS);
            else if (f == 1)
                sample_int(w, fams[f].name, extra, evaluated);
            else if (f == 2 && evaluated)
                sample_double(w, fams[f].name, extra, c->actual);
            else if (f == 3)
                sample_double(w, fams[f].name, extra, c->limit);
        }
    }
}

void fp_openmetrics_gate(const fp_gate_result *g, FILE *out)
{
    om_writer w;
    writer_init(&w, g->report, out);
    report_families(&w, g->report);
    g_autofree char *policy = label("policy", g->policy->path);
    family(&w, "fuseplan_gate_passed", NULL,
           "1 when every check of the policy passed (fuseplan gate exits 0), else 0 (exit 1 or 2)");
    sample_int(&w, "fuseplan_gate_passed", policy, g->failed == 0 && g->not_evaluated == 0);
    check_families(&w, g, policy);
    fputs("# EOF\n", out);
    g_free(w.common);
}
