/* fusion.c - ATC/GE fusion_result.json: per graph, the fusion passes that matched and took
 * effect, under "graph_fusion" and "ub_fusion", counts written as strings. Four layouts are
 * found in the wild: objects written back to back (not JSON as a whole), one object, a list of
 * objects, and a dict keyed "session_and_graph_id_S_G". */
#include "prof_internal.h"

#include <math.h>
#include <string.h>

/* Where an object sits, for messages: "$[2].graph_fusion.X.match_times" or, for back-to-back
 * objects, "object 3 (line 40): $.graph_fusion...". */
typedef struct {
    fp_profile *p;
    GString *path;
} fusion_ctx;

static void value_error(fusion_ctx *x, const char *member, const char *what, GError **error)
{
    g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "%s%s%s: %s", x->path->str, member ? "." : "",
                member ? member : "", what);
}

/* JSON's name for the kind of a value: "object", "array", "number", "boolean", "null". */
static const char *json_kind(JsonNode *n)
{
    if (JSON_NODE_HOLDS_OBJECT(n))
        return "an object";
    if (JSON_NODE_HOLDS_ARRAY(n))
        return "an array";
    if (JSON_NODE_HOLDS_NULL(n))
        return "null";
    GType t = json_node_get_value_type(n);
    return t == G_TYPE_BOOLEAN ? "a boolean" : t == G_TYPE_STRING ? "a string" : "a number";
}

/* A count written as a string ("12") or an integer; absent -> false with an error. */
static bool count_member(fusion_ctx *x, JsonObject *o, const char *member, bool required, uint64_t *out, GError **error)
{
    *out = 0;
    JsonNode *n = json_object_get_member(o, member);
    if (!n) {
        if (required)
            value_error(x, member, "missing", error);
        return !required;
    }
    double v = 0;
    if (!fp_prof_json_number(o, member, true, &v) || v < 0 || v != floor(v) || v > 9.0e15) {
        g_autofree char *got = JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
                                   ? g_strdup_printf("'%s'", json_node_get_string(n))
                                   : g_strdup(json_kind(n));
        g_autofree char *what = g_strdup_printf("expected a count, got %s", got);
        value_error(x, member, what, error);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

static bool read_kind(fusion_ctx *x, JsonObject *entry, const char *kind_name, fp_prof_pass_kind kind, GError **error)
{
    JsonNode *n = json_object_get_member(entry, kind_name);
    if (!n || JSON_NODE_HOLDS_NULL(n))
        return true;
    if (!JSON_NODE_HOLDS_OBJECT(n)) {
        value_error(x, kind_name, "expected an object of passes", error);
        return false;
    }
    JsonObject *passes = json_node_get_object(n);
    g_autoptr(GList) names = json_object_get_members(passes);
    gsize base = x->path->len;
    for (GList *l = names; l; l = l->next) {
        const char *pname = l->data;
        g_string_append_printf(x->path, ".%s.%s", kind_name, pname);
        JsonNode *pn = json_object_get_member(passes, pname);
        uint64_t match = 0, effect = 0, hits = 0;
        bool ok = true;
        if (!JSON_NODE_HOLDS_OBJECT(pn)) {
            value_error(x, NULL, "expected an object with match_times and effect_times", error);
            ok = false;
        } else {
            JsonObject *po = json_node_get_object(pn);
            ok = count_member(x, po, "match_times", true, &match, error) &&
                 count_member(x, po, "effect_times", true, &effect, error) &&
                 count_member(x, po, "repository_hit_times", false, &hits, error);
        }
        g_string_truncate(x->path, base);
        if (!ok)
            return false;
        fp_prof_add_pass(x->p, kind, pname, match, effect, hits);
        x->p->records++;
    }
    return true;
}

/* One graph entry: {graph_fusion?, ub_fusion?, session_and_graph_id | graphId+sessionId}. */
static bool read_entry(fusion_ctx *x, JsonNode *n, GError **error)
{
    if (!JSON_NODE_HOLDS_OBJECT(n)) {
        value_error(x, NULL, "expected a graph object with graph_fusion / ub_fusion", error);
        return false;
    }
    JsonObject *o = json_node_get_object(n);
    x->p->graphs++;
    return read_kind(x, o, "graph_fusion", FP_PROF_GRAPH_FUSION, error) &&
           read_kind(x, o, "ub_fusion", FP_PROF_UB_FUSION, error);
}

static bool is_entry(JsonObject *o)
{
    return json_object_has_member(o, "graph_fusion") || json_object_has_member(o, "ub_fusion") ||
           json_object_has_member(o, "session_and_graph_id") || json_object_has_member(o, "graphId");
}

/* A top-level value: an entry, a list of entries, or a dict of entries. */
static bool read_root(fusion_ctx *x, JsonNode *root, const char **layout, GError **error)
{
    gsize base = x->path->len;
    if (JSON_NODE_HOLDS_ARRAY(root)) {
        *layout = "list";
        JsonArray *a = json_node_get_array(root);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            g_string_append_printf(x->path, "[%u]", i);
            bool ok = read_entry(x, json_array_get_element(a, i), error);
            g_string_truncate(x->path, base);
            if (!ok)
                return false;
        }
        return true;
    }
    if (!JSON_NODE_HOLDS_OBJECT(root)) {
        value_error(x, NULL, "expected an object or a list of graph objects", error);
        return false;
    }
    JsonObject *o = json_node_get_object(root);
    if (is_entry(o)) {
        *layout = "object";
        return read_entry(x, root, error);
    }
    *layout = "dict";
    g_autoptr(GList) names = json_object_get_members(o);
    for (GList *l = names; l; l = l->next) {
        g_string_append_printf(x->path, ".%s", (const char *)l->data);
        bool ok = read_entry(x, json_object_get_member(o, l->data), error);
        g_string_truncate(x->path, base);
        if (!ok)
            return false;
    }
    return true;
}

bool fp_prof_read_fusion(fp_profile *p, GPtrArray *values, GArray *lines, GError **error)
{
    g_autoptr(GString) path = g_string_new(NULL);
    fusion_ctx x = {.p = p, .path = path};
    const char *layout = "object";
    for (guint i = 0; i < values->len; i++) {
        g_string_truncate(path, 0);
        if (values->len > 1)
            g_string_printf(path, "object %u (line %u): ", i + 1, g_array_index(lines, guint, i));
        g_string_append_c(path, '$');
        if (!read_root(&x, values->pdata[i], &layout, error))
            return false;
    }
    p->layout = values->len > 1 ? "concatenated" : layout;
    return true;
}
