/* sarif.c - gate results as SARIF 2.1.0, written piece by piece (reports/json_writer.h: a
 * result per fusion candidate not applied, as many as a quarter of the nodes) (see sarif.h). Members follow the
 * OASIS SARIF 2.1.0 standard: sarifLog {$schema, version, runs[]}, run {tool.driver {name,
 * version, rules[]}, invocations[], artifacts[], results[]}, result {ruleId, kind,
 * ruleIndex, level, message.text, locations[] {physicalLocation, logicalLocations[]}}. */
#include "sarif.h"

#include <string.h>

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

static void m_str(fp_jsonw *w, const char *k, const char *v) { fp_jsonw_str(w, k, v ? v : ""); }

static void m_text(fp_jsonw *w, const char *k, const char *text)
{
    fp_jsonw_begin_object(w, k);
    m_str(w, "text", text);
    fp_jsonw_end_object(w);
}

/* Rule ids in driver order: the policy keys that are rules, then the target's fusion rules. */
static GPtrArray *rule_ids(const fp_gate_result *g)
{
    GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
    for (int k = 0; k < FP_GATE_KEY_COUNT; k++)
        if (k != FP_GATE_KEY_DEVICE && k != FP_GATE_KEY_TARGET)
            g_ptr_array_add(ids, g_strdup_printf("gate/%s", fp_gate_key_name(k)));
    for (char **id = g->report->target->rules; *id; id++)
        g_ptr_array_add(ids, g_strdup_printf("fusion/%s", *id));
    return ids;
}

static const char *const key_help[] = {
    [FP_GATE_KEY_MAX_ACTIVATION_MB] = "Planned activation memory (the arena after buffer reuse) must not exceed the "
                                      "policy's max_activation_mb (MB = 10^6 bytes).",
    [FP_GATE_KEY_MAX_TOTAL_MB] = "Weights read by the final graph plus the planned activation arena must not exceed "
                                 "max_total_mb.",
    [FP_GATE_KEY_MIN_HEADROOM_BATCH] = "The largest batch whose weights and activations fit in the device's memory "
                                       "(10% reserved) must be at least min_headroom_batch.",
    [FP_GATE_KEY_MIN_EST_SPEEDUP] = "The estimated speedup of the optimized graph over the original must be at "
                                    "least min_est_speedup.",
    [FP_GATE_KEY_FORBID_UNFUSED] = "Every candidate of a fusion rule listed in forbid_unfused must be applied by "
                                   "the target compiler.",
    [FP_GATE_KEY_MAX_LAYOUT_CONVERSIONS] = "Layout conversions left after layout optimization must not exceed "
                                           "max_layout_conversions.",
};

static const char *const key_short[] = {
    [FP_GATE_KEY_MAX_ACTIVATION_MB] = "Activation memory over the policy's limit",
    [FP_GATE_KEY_MAX_TOTAL_MB] = "Weights + activations over the policy's limit",
    [FP_GATE_KEY_MIN_HEADROOM_BATCH] = "Batch headroom under the policy's minimum",
    [FP_GATE_KEY_MIN_EST_SPEEDUP] = "Estimated speedup under the policy's minimum",
    [FP_GATE_KEY_FORBID_UNFUSED] = "A fusion the policy requires was not applied",
    [FP_GATE_KEY_MAX_LAYOUT_CONVERSIONS] = "Layout conversions over the policy's limit",
};

static const char *fusion_title(const char *id)
{
    for (size_t i = 0; i < fp_n_rules; i++)
        if (strcmp(fp_rules[i].id, id) == 0)
            return fp_rules[i].title;
    return id;
}

static bool forbidden(const fp_gate_result *g, const char *rule)
{
    return g->policy->forbid_unfused && g_strv_contains((const char *const *)g->policy->forbid_unfused, rule);
}

static void driver(fp_jsonw *w, const fp_gate_result *g, const GPtrArray *ids)
{
    fp_jsonw_begin_object(w, "tool");
    fp_jsonw_begin_object(w, "driver");
    m_str(w, "name", "fuseplan");
    m_str(w, "version", FP_VERSION);
    fp_jsonw_begin_array(w, "rules");
    for (guint i = 0; i < ids->len; i++) {
        const char *id = ids->pdata[i];
        bool gate = g_str_has_prefix(id, "gate/");
        const char *name = strchr(id, '/') + 1;
        fp_jsonw_begin_object(w, NULL);
        m_str(w, "id", id);
        m_str(w, "name", name);
        const char *desc = NULL, *brief = NULL;
        for (int k = 0; gate && k < FP_GATE_KEY_COUNT; k++)
            if (strcmp(fp_gate_key_name(k), name) == 0)
                desc = key_help[k], brief = key_short[k];
        g_autofree char *fdesc = gate ? NULL
                                      : g_strdup_printf("Fusion rule %s: %s. fuseplan explain shows each "
                                                        "candidate, the constraint that refused it and a fix.",
                                                        name, fusion_title(name));
        m_text(w, "shortDescription", gate ? brief : fusion_title(name));
        m_text(w, "fullDescription", gate ? desc : fdesc);
        fp_jsonw_begin_object(w, "defaultConfiguration");
        m_str(w, "level", gate || forbidden(g, name) ? "error" : "note");
        fp_jsonw_end_object(w);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
}

/* The model as an artifactLocation: a relative path as a relative URI, an absolute one as file://. */
static char *model_uri(const char *path)
{
    if (g_path_is_absolute(path)) {
        g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
        if (uri)
            return g_steal_pointer(&uri);
    }
    return g_uri_escape_string(path, G_URI_RESERVED_CHARS_ALLOWED_IN_PATH, TRUE);
}

/* What every result repeats: the rule ids in driver order, the model's URI. */
typedef struct {
    const fp_gate_result *g;
    const GPtrArray *ids;
    char *uri;
} sarif_ctx;

/* locations[0]: the model file (line 1: code-scanning UIs want a region; a model has no lines)
 * and the nodes as logical locations. */
static void locations(fp_jsonw *w, const sarif_ctx *x, const char *const *nodes, guint n)
{
    const char *graph = x->g->report->model->main->name;
    fp_jsonw_begin_array(w, "locations");
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_begin_object(w, "physicalLocation");
    fp_jsonw_begin_object(w, "artifactLocation");
    m_str(w, "uri", x->uri);
    fp_jsonw_int(w, "index", 0);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_object(w, "region");
    fp_jsonw_int(w, "startLine", 1);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_array(w, "logicalLocations");
    for (guint i = 0; i < n; i++) {
        fp_jsonw_begin_object(w, NULL);
        m_str(w, "name", nodes[i]);
        g_autofree char *fq = g_strdup_printf("%s/%s", graph, nodes[i]);
        m_str(w, "fullyQualifiedName", fq);
        m_str(w, "kind", "function");
        fp_jsonw_end_object(w);
    }
    if (!n) {
        fp_jsonw_begin_object(w, NULL);
        m_str(w, "name", graph);
        m_str(w, "kind", "module");
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
    fp_jsonw_end_array(w);
}

static void result_head(fp_jsonw *w, const sarif_ctx *x, const char *rule_id, const char *level, const char *kind,
                        const char *text)
{
    guint idx = 0;
    g_ptr_array_find_with_equal_func((GPtrArray *)x->ids, rule_id, g_str_equal, &idx);
    fp_jsonw_begin_object(w, NULL);
    m_str(w, "ruleId", rule_id);
    fp_jsonw_int(w, "ruleIndex", idx);
    m_str(w, "kind", kind);
    m_str(w, "level", level);
    m_text(w, "message", text);
}

/* A violated (or not evaluated) policy rule; forbid_unfused is reported per candidate instead. */
static void check_result(fp_jsonw *w, const sarif_ctx *x, const fp_gate_check *c)
{
    g_autofree char *rule_id = g_strdup_printf("gate/%s", fp_gate_key_name(c->key));
    bool fail = c->status == FP_GATE_FAIL;
    g_autofree char *text = g_strdup_printf("%s: %s%s%s", c->name, fail ? "" : "not evaluated: ", c->summary,
                                            c->detail ? ". " : "");
    g_autofree char *full = g_strconcat(text, c->detail ? c->detail : "", NULL);
    result_head(w, x, rule_id, fail ? "error" : "none", fail ? "fail" : "open", full);
    const char *node = c->node;
    locations(w, x, &node, node ? 1 : 0);
    fp_jsonw_begin_object(w, "properties");
    fp_jsonw_num(w, "actual", c->actual);
    fp_jsonw_num(w, "limit", c->limit);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
}

static void fusion_result(fp_jsonw *w, const sarif_ctx *x, const fp_fusion *f)
{
    const fp_gate_result *g = x->g;
    GString *s = g_string_new(NULL);
    for (guint k = 0; k < f->nodes->len; k++)
        g_string_append_printf(s, "%s%s", k ? " + " : "", (const char *)f->nodes->pdata[k]);
    g_string_append_printf(s, ": not fused by %s%s.", f->rule, forbidden(g, f->rule) ? " (forbid_unfused)" : "");
    for (guint k = 0; k < f->reasons->len; k++) {
        const fp_reason *why = f->reasons->pdata[k];
        g_string_append_printf(s, " %s: %s (actual %s; required %s). Fix: %s", why->constraint, why->message,
                               why->actual, why->required, why->hint);
    }
    g_autofree char *rule_id = g_strdup_printf("fusion/%s", f->rule);
    bool err = forbidden(g, f->rule);
    /* kind "fail" for both: SARIF allows a level other than "none" only with kind "fail"; a note
     * is "an opportunity to improve" */
    result_head(w, x, rule_id, err ? "error" : "note", "fail", s->str);
    g_string_free(s, TRUE);
    locations(w, x, (const char *const *)f->nodes->pdata, f->nodes->len);
    fp_jsonw_end_object(w);
}

static void results(fp_jsonw *w, const sarif_ctx *x)
{
    const fp_gate_result *g = x->g;
    fp_jsonw_begin_array(w, "results");
    for (guint i = 0; i < g->checks->len; i++) {
        const fp_gate_check *c = g->checks->pdata[i];
        if (c->status != FP_GATE_PASS && c->key != FP_GATE_KEY_FORBID_UNFUSED)
            check_result(w, x, c);
    }
    const GPtrArray *fl = g->report->res->fusions->fusions;
    for (guint i = 0; i < fl->len; i++) {
        const fp_fusion *f = fl->pdata[i];
        if (!f->applied)
            fusion_result(w, x, f);
    }
    fp_jsonw_end_array(w);
}

void fp_report_sarif(const fp_gate_result *g, int exit_code, fp_jsonw *w)
{
    g_autoptr(GPtrArray) ids = rule_ids(g);
    g_autofree char *uri = model_uri(g->report->model->path);
    sarif_ctx x = {g, ids, uri};
    fp_jsonw_begin_object(w, NULL);
    m_str(w, "$schema", SARIF_SCHEMA);
    m_str(w, "version", "2.1.0");
    fp_jsonw_begin_array(w, "runs");
    fp_jsonw_begin_object(w, NULL);
    driver(w, g, ids);
    fp_jsonw_begin_array(w, "invocations");
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_bool(w, "executionSuccessful", g->not_evaluated == 0);
    fp_jsonw_int(w, "exitCode", exit_code);
    fp_jsonw_end_object(w);
    fp_jsonw_end_array(w);
    fp_jsonw_begin_array(w, "artifacts");
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_begin_object(w, "location");
    m_str(w, "uri", uri);
    fp_jsonw_end_object(w);
    fp_jsonw_end_object(w);
    fp_jsonw_end_array(w);
    results(w, &x);
    fp_jsonw_end_object(w);
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}
