/* profile.c - fp_profile_load: format detection by content and dispatch to the readers, and the
 * pieces they share (dtype names, event order, strict numbers, JSON members). The profile form
 * itself is ir/profile.c. */
#include "prof_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(fp-profile-error-quark, fp_profile_error);

fp_dtype fp_prof_dtype(const char *s)
{
    static const struct {
        const char *name;
        fp_dtype t;
    } names[] = {
        {"c10::Half", FP_DT_FLOAT16},   {"c10::BFloat16", FP_DT_BFLOAT16},
        {"long int", FP_DT_INT64},      {"long", FP_DT_INT64},
        {"int", FP_DT_INT32},           {"short int", FP_DT_INT16},
        {"short", FP_DT_INT16},         {"signed char", FP_DT_INT8},
        {"unsigned char", FP_DT_UINT8}, {"double", FP_DT_DOUBLE},
        {"float32", FP_DT_FLOAT},       {"c10::complex<float>", FP_DT_COMPLEX64},
    };
    if (!s || !*s)
        return FP_DT_UNDEFINED;
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(s, names[i].name) == 0)
            return names[i].t;
    if (g_str_has_prefix(s, "DT_"))
        s += 3;
    return fp_dtype_from_name(s);
}

int fp_prof_event_order(double ts_a, double dur_a, guint index_a, double ts_b, double dur_b, guint index_b)
{
    if (ts_a != ts_b)
        return ts_a < ts_b ? -1 : 1;
    if (dur_a != dur_b)
        return dur_a > dur_b ? -1 : 1;
    return index_a < index_b ? -1 : index_a > index_b;
}

/* The cell s with its leading whitespace skipped; NULL when nothing else is left. */
static const char *cell_start(const char *s)
{
    while (g_ascii_isspace(*s))
        s++;
    return *s ? s : NULL;
}

/* True when only whitespace follows the number that ends at `end`. */
static bool cell_ends(const char *end)
{
    while (g_ascii_isspace(*end))
        end++;
    return !*end;
}

bool fp_prof_parse_double(const char *s, double *out)
{
    if (!(s = cell_start(s)))
        return false;
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || !cell_ends(end))
        return false;
    *out = v;
    return true;
}

bool fp_prof_parse_int(const char *s, int64_t *out)
{
    if (!(s = cell_start(s)))
        return false;
    char *end = NULL;
    errno = 0;
    gint64 v = g_ascii_strtoll(s, &end, 10);
    if (end == s || errno == ERANGE || !cell_ends(end))
        return false;
    *out = v;
    return true;
}

/* ---- JSON helpers ---- */

bool fp_prof_json_number(JsonObject *o, const char *member, bool strings, double *out)
{
    JsonNode *n = json_object_get_member(o, member);
    if (!n || !JSON_NODE_HOLDS_VALUE(n))
        return false;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64) {
        *out = (double)json_node_get_int(n);
        return true;
    }
    if (t == G_TYPE_DOUBLE) {
        *out = json_node_get_double(n);
        return isfinite(*out);
    }
    if (t == G_TYPE_STRING && strings)
        return fp_prof_parse_double(json_node_get_string(n), out);
    return false;
}

const char *fp_prof_json_string(JsonObject *o, const char *member)
{
    JsonNode *n = json_object_get_member(o, member);
    if (!n || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

static bool is_fusion_entry(JsonObject *o)
{
    return json_object_has_member(o, "graph_fusion") || json_object_has_member(o, "ub_fusion") ||
           json_object_has_member(o, "session_and_graph_id") ||
           (json_object_has_member(o, "graphId") && json_object_has_member(o, "sessionId"));
}

bool fp_prof_json_is_fusion(JsonNode *root)
{
    if (JSON_NODE_HOLDS_ARRAY(root)) {
        JsonArray *a = json_node_get_array(root);
        if (json_array_get_length(a) == 0)
            return false;
        JsonNode *first = json_array_get_element(a, 0);
        return JSON_NODE_HOLDS_OBJECT(first) && is_fusion_entry(json_node_get_object(first));
    }
    if (!JSON_NODE_HOLDS_OBJECT(root))
        return false;
    JsonObject *o = json_node_get_object(root);
    if (is_fusion_entry(o))
        return true;
    g_autoptr(GList) names = json_object_get_members(o);
    for (GList *l = names; l; l = l->next)
        if (g_str_has_prefix(l->data, "session_and_graph_id"))
            return true;
    return false;
}

bool fp_prof_json_is_ort(JsonArray *events)
{
    guint n = json_array_get_length(events);
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(events, i);
        if (!JSON_NODE_HOLDS_OBJECT(e))
            continue;
        JsonObject *o = json_node_get_object(e);
        const char *cat = fp_prof_json_string(o, "cat");
        const char *name = fp_prof_json_string(o, "name");
        if (g_strcmp0(cat, "Node") == 0 && name && g_str_has_suffix(name, "_kernel_time"))
            return true;
        if (g_strcmp0(cat, "Session") == 0 && g_strcmp0(name, "session_initialization") == 0)
            return true;
    }
    return false;
}

/* ---- JSON: top-level values ---- */

/* Deeper nesting is refused before the (recursive) JSON parser sees it. */
#define MAX_JSON_DEPTH 256

typedef struct {
    gsize off, len;
    guint line;
    bool open; /* not closed before the end of the data */
} json_span;

/* Splits data into top-level JSON values by bracket depth (strings and escapes respected).
 * Returns false with an error for text outside a value. A value left open at the end becomes
 * the last span (the JSON parser reports what is wrong with it). */
static bool split_values(const char *data, gsize len, GArray *spans, GError **error)
{
    guint line = 1, col = 1;
    int depth = 0;
    bool in_str = false, esc = false;
    json_span cur = {0};
    gsize start = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* UTF-8 BOM */
    for (gsize i = start; i < len; i++, col++) {
        char c = data[i];
        if (depth == 0) {
            if (c == '\n') {
                line++;
                col = 0;
            } else if (c == '{' || c == '[') {
                cur = (json_span){.off = i, .line = line};
                depth = 1;
            } else if (!g_ascii_isspace(c)) {
                g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE,
                            "line %u, column %u: unexpected '%c' outside a JSON object or array", line, col,
                            g_ascii_isprint(c) ? c : '?');
                return false;
            }
            continue;
        }
        if (c == '\n') {
            line++;
            col = 0;
        }
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_JSON_DEPTH) {
                g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE,
                            "line %u, column %u: JSON nested deeper than %d levels", line, col, MAX_JSON_DEPTH);
                return false;
            }
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                cur.len = i + 1 - cur.off;
                g_array_append_val(spans, cur);
            }
        }
    }
    if (depth > 0) {
        cur.len = len - cur.off;
        cur.open = true;
        g_array_append_val(spans, cur);
    }
    return true;
}

/* Parses one span; json-glib's "<data>:L:C: Parse error: ..." becomes "line L', column C: ..."
 * with L' counted from the start of the file. */
static JsonNode *parse_span(const char *data, const json_span *s, bool complete, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) err = NULL;
    if (json_parser_load_from_data(parser, data + s->off, (gssize)s->len, &err) && complete &&
        json_parser_get_root(parser))
        return json_node_copy(json_parser_get_root(parser));
    int l = 0, c = 0, used = 0;
    if (err && sscanf(err->message, "<data>:%d:%d: %n", &l, &c, &used) == 2 && used > 0) {
        const char *msg = err->message + used;
        if (g_str_has_prefix(msg, "Parse error: "))
            msg += strlen("Parse error: ");
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE, "line %d, column %d: invalid JSON: %s",
                    (int)s->line + l - 1, c, msg);
    } else if (err) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE, "line %u: invalid JSON: %s", s->line,
                    err->message);
    } else {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE,
                    "line %u: invalid JSON: the value starting here is not closed (truncated file?)", s->line);
    }
    return NULL;
}

static bool read_json(fp_profile *p, const char *data, gsize len, GError **error)
{
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(json_span));
    if (!split_values(data, len, spans, error))
        return false;
    g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < spans->len; i++) {
        const json_span *s = &g_array_index(spans, json_span, i);
        JsonNode *v = parse_span(data, s, !s->open, error);
        if (!v)
            return false;
        g_ptr_array_add(values, v);
        g_array_append_val(lines, s->line);
    }
    JsonNode *root = values->pdata[0];
    if (values->len > 1 || fp_prof_json_is_fusion(root)) {
        p->format = FP_PROF_FUSION_RESULT;
        return fp_prof_read_fusion(p, values, lines, error);
    }
    if (JSON_NODE_HOLDS_OBJECT(root)) {
        JsonNode *ev = json_object_get_member(json_node_get_object(root), "traceEvents");
        if (!ev) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT,
                        "unrecognized JSON profile: an object with neither 'traceEvents' (Chrome trace) nor "
                        "'graph_fusion'/'ub_fusion'/'session_and_graph_id*' (fusion_result)");
            return false;
        }
        if (!JSON_NODE_HOLDS_ARRAY(ev)) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "$.traceEvents: expected an array");
            return false;
        }
        p->format = FP_PROF_CHROME_TRACE;
        return fp_prof_read_trace(p, "$.traceEvents", json_node_get_array(ev), error);
    }
    JsonArray *events = json_node_get_array(root);
    if (fp_prof_json_is_ort(events)) {
        p->format = FP_PROF_ORT;
        return fp_prof_read_ort(p, events, error);
    }
    p->format = FP_PROF_CHROME_TRACE;
    return fp_prof_read_trace(p, "$", events, error);
}

/* ---- loading ---- */

fp_profile *fp_profile_load_data(const char *path, const char *data, gsize len, GError **error)
{
    g_autoptr(fp_profile) p = fp_profile_new(path);
    g_autoptr(GError) err = NULL;
    gsize skip = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        skip = 3;
    while (skip < len && g_ascii_isspace(data[skip]))
        skip++;
    bool ok = false;
    if (len == 0) {
        g_set_error(&err, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT, "empty file");
    } else if (skip == len) {
        g_set_error(&err, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT, "no data (only white space)");
    } else if (data[skip] == '{' || data[skip] == '[') {
        ok = read_json(p, data, len, &err);
    } else {
        const char *nl = memchr(data + skip, '\n', len - skip);
        if (memchr(data + skip, ',', (nl ? (gsize)(nl - data) : len) - skip)) {
            ok = fp_prof_read_ascend(p, data, len, &err);
        } else {
            g_set_error(&err, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT,
                        "unrecognized format: expected a JSON profile (ONNX Runtime, Chrome trace, "
                        "fusion_result.json) or a CSV profile (op_summary, kernel_details, op_statistic, task_time)");
        }
    }
    if (!ok) {
        g_propagate_prefixed_error(error, g_steal_pointer(&err), "%s: ", path);
        return NULL;
    }
    fp_profile_index(p);
    return g_steal_pointer(&p);
}

fp_profile *fp_profile_load(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) err = NULL;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT, "%s: cannot open: is a directory", path);
        return NULL;
    }
    if (!g_file_get_contents(path, &data, &len, &err)) {
        int code = err->domain == G_FILE_ERROR ? err->code : -1;
        const char *why = code == G_FILE_ERROR_NOENT ? "no such file" : err->message;
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT, "%s: cannot open: %s", path, why);
        return NULL;
    }
    return fp_profile_load_data(path, data, len, error);
}
