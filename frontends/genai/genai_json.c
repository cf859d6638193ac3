/* genai_json.c - genai_config.json into fp_genai_config (genai_json.h) with json-glib. Members
 * fuseplan does not use are skipped; those it uses must have their type: objects, whole numbers from
 * 0 to 2^31 - 1, strings (name templates with one %d), booleans. */
#include "frontends/genai/genai_json.h"

#include <json-glib/json-glib.h>

#include "frontends/json_depth.h"

/* Nesting accepted: the real configs nest 4 deep (model.decoder.session_options.provider_options). */
#define FP_GENAI_MAX_DEPTH 64

typedef struct {
    const char *path;
    GError **error;
} jctx;

static bool bad(jctx *c, const char *field, const char *what)
{
    g_set_error(c->error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s: %s", c->path, field, what);
    return false;
}

/* Member `name` of o, or NULL when o is NULL or the member absent or null. */
static JsonNode *member(JsonObject *o, const char *name)
{
    JsonNode *n = o ? json_object_get_member(o, name) : NULL;
    return n && !JSON_NODE_HOLDS_NULL(n) ? n : NULL;
}

/* Member `name` of o (NULL o: absent) as an object into *out (NULL when absent); false on another type. */
static bool member_object(jctx *c, JsonObject *o, const char *name, const char *field, JsonObject **out)
{
    JsonNode *n = member(o, name);
    *out = NULL;
    if (!n)
        return true;
    if (!JSON_NODE_HOLDS_OBJECT(n))
        return bad(c, field, "expected an object");
    *out = json_node_get_object(n);
    return true;
}

/* Member `name` of o as a whole number from 0 to 2^31 - 1 (genai's int) into *out (left as it is
 * when absent). */
static bool member_count(jctx *c, JsonObject *o, const char *name, const char *field, int64_t *out)
{
    JsonNode *n = member(o, name);
    if (!n)
        return true;
    if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64)
        return bad(c, field, "expected a whole number");
    gint64 v = json_node_get_int(n);
    if (v < 0)
        return bad(c, field, "must be 0 or more");
    if (v > G_MAXINT32)
        return bad(c, field, "larger than 2147483647 (an int in onnxruntime-genai)");
    *out = v;
    return true;
}

/* Member `name` of o as a boolean into *out (left as it is when absent). */
static bool member_bool(jctx *c, JsonObject *o, const char *name, const char *field, bool *out)
{
    JsonNode *n = member(o, name);
    if (!n)
        return true;
    if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_BOOLEAN)
        return bad(c, field, "expected true or false");
    *out = json_node_get_boolean(n);
    return true;
}

/* Member `name` of o as a string into *out (g_free'd and replaced; left as it is when absent); a
 * template (tmpl) must hold one %d and no other '%'. */
static bool member_string(jctx *c, JsonObject *o, const char *name, const char *field, bool tmpl, char **out)
{
    JsonNode *n = member(o, name);
    if (!n)
        return true;
    if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return bad(c, field, "expected a string");
    const char *s = json_node_get_string(n);
    if (tmpl && !fp_genai_template_ok(s))
        return bad(c, field, "expected a name template with one %d (the layer) and no other '%'");
    g_free(*out);
    *out = g_strdup(s);
    return true;
}

/* Member `name` of o as an array of strings into *out (a NULL-terminated vector, g_strfreev'd and
 * replaced; left as it is when absent). */
static bool member_strings(jctx *c, JsonObject *o, const char *name, const char *field, char ***out)
{
    JsonNode *n = member(o, name);
    if (!n)
        return true;
    if (!JSON_NODE_HOLDS_ARRAY(n))
        return bad(c, field, "expected an array of strings");
    JsonArray *a = json_node_get_array(n);
    guint len = json_array_get_length(a);
    g_auto(GStrv) v = g_new0(char *, len + 1);
    for (guint i = 0; i < len; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (!JSON_NODE_HOLDS_VALUE(e) || json_node_get_value_type(e) != G_TYPE_STRING)
            return bad(c, field, "expected an array of strings");
        v[i] = g_strdup(json_node_get_string(e));
    }
    g_strfreev(*out);
    *out = g_steal_pointer(&v);
    return true;
}

/* engine.dynamic_batching: the paged KV cache's block size and block count (src/config.h's
 * Engine::DynamicBatching; block_size defaults to 256 there). */
static bool read_engine(jctx *c, JsonObject *root, fp_genai_config *g)
{
    JsonObject *engine = NULL, *dyn = NULL;
    if (!member_object(c, root, "engine", "engine", &engine) ||
        !member_object(c, engine, "dynamic_batching", "engine.dynamic_batching", &dyn))
        return false;
    g->paged = dyn != NULL;
    if (!member_count(c, dyn, "block_size", "engine.dynamic_batching.block_size", &g->block_size) ||
        !member_count(c, dyn, "num_blocks", "engine.dynamic_batching.num_blocks", &g->num_blocks))
        return false;
    if (g->paged && g->block_size < 1)
        return bad(c, "engine.dynamic_batching.block_size", "must be 1 or more");
    return true;
}

/* model.decoder's inputs and outputs: the KV cache's name templates. */
static bool read_names(jctx *c, JsonObject *dec, fp_genai_config *g)
{
    JsonObject *in = NULL, *out = NULL;
    return member_object(c, dec, "inputs", "model.decoder.inputs", &in) &&
           member_object(c, dec, "outputs", "model.decoder.outputs", &out) &&
           member_string(c, in, "past_key_names", "model.decoder.inputs.past_key_names", true, &g->past_key) &&
           member_string(c, in, "past_value_names", "model.decoder.inputs.past_value_names", true, &g->past_value) &&
           member_string(c, in, "past_names", "model.decoder.inputs.past_names", true, &g->past_packed) &&
           member_string(c, in, "cross_past_key_names", "model.decoder.inputs.cross_past_key_names", true,
                         &g->cross_key) &&
           member_string(c, in, "cross_past_value_names", "model.decoder.inputs.cross_past_value_names", true,
                         &g->cross_value) &&
           member_string(c, out, "present_key_names", "model.decoder.outputs.present_key_names", true,
                         &g->present_key) &&
           member_string(c, out, "present_value_names", "model.decoder.outputs.present_value_names", true,
                         &g->present_value) &&
           member_string(c, out, "present_names", "model.decoder.outputs.present_names", true, &g->present_packed) &&
           member_string(c, in, "past_conv_names", "model.decoder.inputs.past_conv_names", true, &g->past_conv) &&
           member_string(c, out, "present_conv_names", "model.decoder.outputs.present_conv_names", true,
                         &g->present_conv);
}

/* model (context_length), model.decoder and search into g. */
static bool read_config(jctx *c, JsonObject *root, fp_genai_config *g)
{
    JsonObject *model = NULL, *dec = NULL, *search = NULL;
    int64_t context_length = 0;
    if (!member_object(c, root, "model", "model", &model) ||
        !member_object(c, model, "decoder", "model.decoder", &dec) ||
        !member_object(c, root, "search", "search", &search) ||
        !member_count(c, model, "context_length", "model.context_length", &context_length) ||
        !member_string(c, dec, "filename", "model.decoder.filename", false, &g->filename) ||
        !member_count(c, dec, "num_hidden_layers", "model.decoder.num_hidden_layers", &g->layers) ||
        !member_count(c, dec, "num_key_value_heads", "model.decoder.num_key_value_heads", &g->kv_heads) ||
        !member_count(c, dec, "num_attention_heads", "model.decoder.num_attention_heads", &g->heads) ||
        !member_string(c, model, "type", "model.type", false, &g->model_type) ||
        !member_count(c, dec, "head_size", "model.decoder.head_size", &g->head_size) ||
        !member_count(c, dec, "hidden_size", "model.decoder.hidden_size", &g->hidden_size) || !read_names(c, dec, g) ||
        !member_strings(c, dec, "layer_types", "model.decoder.layer_types", &g->layer_types) ||
        !read_engine(c, root, g) || !member_count(c, search, "max_length", "search.max_length", &g->max_length) ||
        !member_bool(c, search, "past_present_share_buffer", "search.past_present_share_buffer", &g->share_buffer))
        return false;
    if (!dec)
        return bad(c, "model.decoder", "missing: no decoder described");
    if (!g->max_length)
        g->max_length = context_length;
    return true;
}

fp_genai_config *fp_genai_json_load(const char *path, const char *text, size_t len, GError **error)
{
    jctx c = {path, error};
    gssize deep = len <= G_MAXSSIZE ? fp_json_too_deep(text, len, FP_GENAI_MAX_DEPTH) : 0;
    if (deep >= 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: JSON nested deeper than %d at byte %" G_GSSIZE_FORMAT,
                    path, FP_GENAI_MAX_DEPTH, deep);
        return NULL;
    }
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) err = NULL;
    if (!json_parser_load_from_data(parser, text, (gssize)len, &err)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not valid JSON: %s", path, err->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        bad(&c, "(top level)", "expected an object");
        return NULL;
    }
    g_autoptr(fp_genai_config) g = g_new0(fp_genai_config, 1);
    *g = (fp_genai_config){.path = g_strdup(path),
                           .layers = -1,
                           .kv_heads = -1,
                           .heads = -1,
                           .head_size = -1,
                           .hidden_size = -1,
                           .past_key = g_strdup("past_key_values.%d.key"),
                           .past_value = g_strdup("past_key_values.%d.value"),
                           .present_key = g_strdup("present.%d.key"),
                           .present_value = g_strdup("present.%d.value"),
                           .past_conv = g_strdup("past_conv.%d"),
                           .present_conv = g_strdup("present_conv.%d"),
                           .block_size = 256,
                           .num_blocks = -1};
    return read_config(&c, json_node_get_object(root), g) ? g_steal_pointer(&g) : NULL;
}
