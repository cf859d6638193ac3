/* sarif.c - gate results as SARIF 2.1.0, built with json-glib (see sarif.h). Members follow the
 * OASIS SARIF 2.1.0 standard: sarifLog {$schema, version, runs[]}, run {tool.driver {name,
 * version, rules[]}, invocations[], artifacts[], results[]}, result {ruleId, kind,
 * ruleIndex, level, message.text, locations[] {physicalLocation, logicalLocations[]}}. */
#include "sarif.h"

#include <string.h>

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

static void m_str(JsonBuilder *b, const char *k, const char *v)
{
    json_builder_set_member_name(b, k);
    json_builder_add_string_value(b, v ? v : "");
}

static void m_text(JsonBuilder *b, const char *k, const char *text)
{
    json_builder_set_member_name(b, k);
    json_builder_begin_object(b);
    m_str(b, "text", text);
    json_builder_end_object(b);
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

static void driver(JsonBuilder *b, const fp_gate_result *g, const GPtrArray *ids)
{
    json_builder_set_member_name(b, "tool");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "driver");
    json_builder_begin_object(b);
    m_str(b, "name", "fuseplan");
    m_str(b, "version", FP_VERSION);
    json_builder_set_member_name(b, "rules");
    json_builder_begin_array(b);
    for (guint i = 0; i < ids->len; i++) {
        const char *id = ids->pdata[i];
        bool gate = g_str_has_prefix(id, "gate/");
        const char *name = strchr(id, '/') + 1;
        json_builder_begin_object(b);
        m_str(b, "id", id);
        m_str(b, "name", name);
        const char *desc = NULL, *brief = NULL;
        for (int k = 0; gate && k < FP_GATE_KEY_COUNT; k++)
            if (strcmp(fp_gate_key_name(k), name) == 0)
                desc = key_help[k], brief = key_short[k];
        g_autofree char *fdesc = gate ? NULL : g_strdup_printf("Fusion rule %s: %s. fuseplan explain shows each "
                                                               "candidate, the constraint that refused it and a fix.",
                                                               name, fusion_title(name));
        m_text(b, "shortDescription", gate ? brief : fusion_title(name));
        m_text(b, "fullDescription", gate ? desc : fdesc);
        json_builder_set_member_name(b, "defaultConfiguration");
        json_builder_begin_object(b);
        m_str(b, "level", gate || forbidden(g, name) ? "error" : "note");
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_end_object(b);
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

/* locations[0]: the model file (line 1: code-scanning UIs want a region; a model has no lines)
 * and the nodes as logical locations. */
static void locations(JsonBuilder *b, const fp_gate_result *g, const char *const *nodes, guint n)
{
    g_autofree char *uri = model_uri(g->report->model->path);
    json_builder_set_member_name(b, "locations");
    json_builder_begin_array(b);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "physicalLocation");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "artifactLocation");
    json_builder_begin_object(b);
    m_str(b, "uri", uri);
    json_builder_set_member_name(b, "index");
    json_builder_add_int_value(b, 0);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "region");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "startLine");
    json_builder_add_int_value(b, 1);
    json_builder_end_object(b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "logicalLocations");
    json_builder_begin_array(b);
    for (guint i = 0; i < n; i++) {
        json_builder_begin_object(b);
        m_str(b, "name", nodes[i]);
        g_autofree char *fq = g_strdup_printf("%s/%s", g->report->model->main->name, nodes[i]);
        m_str(b, "fullyQualifiedName", fq);
        m_str(b, "kind", "function");
        json_builder_end_object(b);
    }
    if (!n) {
        json_builder_begin_object(b);
        m_str(b, "name", g->report->model->main->name);
        m_str(b, "kind", "module");
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_end_array(b);
}

static void result_head(JsonBuilder *b, const GPtrArray *ids, const char *rule_id, const char *level,
                        const char *kind, const char *text)
{
    guint idx = 0;
    g_ptr_array_find_with_equal_func((GPtrArray *)ids, rule_id, g_str_equal, &idx);
    json_builder_begin_object(b);
    m_str(b, "ruleId", rule_id);
    json_builder_set_member_name(b, "ruleIndex");
    json_builder_add_int_value(b, idx);
    m_str(b, "kind", kind);
    m_str(b, "level", level);
    m_text(b, "message", text);
}

/* A violated (or not evaluated) policy rule; forbid_unfused is reported per candidate instead. */
static void check_result(JsonBuilder *b, const fp_gate_result *g, const GPtrArray *ids, const fp_gate_check *c)
{
    g_autofree char *rule_id = g_strdup_printf("gate/%s", fp_gate_key_name(c->key));
    bool fail = c->status == FP_GATE_FAIL;
    g_autofree char *text = g_strdup_printf("%s: %s%s%s", c->name, fail ? "" : "not evaluated: ", c->summary,
                                            c->detail ? ". " : "");
    g_autofree char *full = g_strconcat(text, c->detail ? c->detail : "", NULL);
    result_head(b, ids, rule_id, fail ? "error" : "none", fail ? "fail" : "open", full);
    const char *node = c->node;
    locations(b, g, &node, node ? 1 : 0);
    json_builder_set_member_name(b, "properties");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "actual");
    json_builder_add_double_value(b, c->actual);
    json_builder_set_member_name(b, "limit");
    json_builder_add_double_value(b, c->limit);
    json_builder_end_object(b);
    json_builder_end_object(b);
}

static void fusion_result(JsonBuilder *b, const fp_gate_result *g, const GPtrArray *ids, const fp_fusion *f)
{
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
    result_head(b, ids, rule_id, err ? "error" : "note", "fail", s->str);
    g_string_free(s, TRUE);
    locations(b, g, (const char *const *)f->nodes->pdata, f->nodes->len);
    json_builder_end_object(b);
}

static void results(JsonBuilder *b, const fp_gate_result *g, const GPtrArray *ids)
{
    json_builder_set_member_name(b, "results");
    json_builder_begin_array(b);
    for (guint i = 0; i < g->checks->len; i++) {
        const fp_gate_check *c = g->checks->pdata[i];
        if (c->status != FP_GATE_PASS && c->key != FP_GATE_KEY_FORBID_UNFUSED)
            check_result(b, g, ids, c);
    }
    const GPtrArray *fl = g->report->res->fusions->fusions;
    for (guint i = 0; i < fl->len; i++) {
        const fp_fusion *f = fl->pdata[i];
        if (!f->applied)
            fusion_result(b, g, ids, f);
    }
    json_builder_end_array(b);
}

JsonNode *fp_report_sarif(const fp_gate_result *g, int exit_code)
{
    g_autoptr(GPtrArray) ids = rule_ids(g);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    m_str(b, "$schema", SARIF_SCHEMA);
    m_str(b, "version", "2.1.0");
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    json_builder_begin_object(b);
    driver(b, g, ids);
    json_builder_set_member_name(b, "invocations");
    json_builder_begin_array(b);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "executionSuccessful");
    json_builder_add_boolean_value(b, g->not_evaluated == 0);
    json_builder_set_member_name(b, "exitCode");
    json_builder_add_int_value(b, exit_code);
    json_builder_end_object(b);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "artifacts");
    json_builder_begin_array(b);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "location");
    json_builder_begin_object(b);
    g_autofree char *uri = model_uri(g->report->model->path);
    m_str(b, "uri", uri);
    json_builder_end_object(b);
    json_builder_end_object(b);
    json_builder_end_array(b);
    results(b, g, ids);
    json_builder_end_object(b);
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
