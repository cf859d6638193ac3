/* ge_json.c - GE's JSON of a ModelDef (`atc --mode=1` on an .om, `--mode=5` on a dump) into
 * ge.proto.ModelDef, generic over protobuf-c descriptors, then into the IR (fp_ge_json_load). In
 * the formats module (json-glib): frontends/ge/ge_load.c reaches it through frontends/readers.h.
 *
 * GE's JSON writer (Pb2Json) follows the proto field names; repeated fields are arrays; maps are
 * arrays of {"key", "value"} objects (a plain JSON object is accepted too); enums are names;
 * singular floats are strings ("1e-05"); bytes are C-escaped strings. Members the schema does
 * not know are skipped, like unknown fields of binary files. The walk writes wire bytes
 * (pbwire.h) that protobuf-c unpacks.
 */
#include "ge_internal.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "frontends/json_depth.h"
#include "frontends/pbtxt/pbtxt.h"
#include "frontends/pbtxt/pbwire.h"

typedef struct {
    fp_pbwire *w;
    GString *path; /* JSON path of the member being read, for messages */
    GError **error;
    GByteArray *scratch;
} jctx;

static bool jfail(jctx *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool jfail(jctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (c->error && !*c->error)
        g_set_error(c->error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "JSON member %s: %s",
                    c->path->len ? c->path->str : "(top level)", msg);
    return false;
}

static bool j_message(jctx *c, const ProtobufCMessageDescriptor *d, JsonObject *o);

/* A protobuf-c map entry: a nested message "...Entry" with exactly key = 1 and value = 2. */
static bool is_map_entry(const ProtobufCFieldDescriptor *f)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
        return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    return d->n_fields == 2 && g_str_has_suffix(d->name, "Entry") && d->fields[0].id == 1 &&
           strcmp(d->fields[0].name, "key") == 0 && d->fields[1].id == 2 && strcmp(d->fields[1].name, "value") == 0;
}

/* Integer from a JSON number or a decimal string. */
static bool j_int(jctx *c, const ProtobufCFieldDescriptor *f, JsonNode *n)
{
    bool neg = false;
    uint64_t mag = 0;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64) {
        gint64 v = json_node_get_int(n);
        neg = v < 0;
        mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    } else if (t == G_TYPE_BOOLEAN && f->type == PROTOBUF_C_TYPE_BOOL) {
        mag = json_node_get_boolean(n);
    } else if (t == G_TYPE_STRING) {
        const char *s = json_node_get_string(n);
        if (f->type == PROTOBUF_C_TYPE_BOOL && (!strcmp(s, "true") || !strcmp(s, "false"))) {
            mag = s[0] == 't';
        } else {
            neg = s[0] == '-';
            if (!g_ascii_string_to_unsigned(s + neg, 10, 0, G_MAXUINT64, &mag, NULL))
                return jfail(c, "expected an integer, found \"%.40s\"", s);
        }
    } else {
        return jfail(c, "expected an integer");
    }
    if (!fp_pbwire_int(c->w, f, neg, mag))
        return jfail(c, "integer out of range for the field's type");
    return true;
}

/* One value of field f. */
static bool j_value(jctx *c, const ProtobufCFieldDescriptor *f, JsonNode *n)
{
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (!JSON_NODE_HOLDS_OBJECT(n))
            return jfail(c, "expected an object");
        if (fp_pbwire_depth(c->w) + 1 >= FP_PBWIRE_MAX_DEPTH)
            return jfail(c, "objects nested deeper than %d", FP_PBWIRE_MAX_DEPTH);
        fp_pbwire_begin(c->w);
        if (!j_message(c, f->descriptor, json_node_get_object(n)))
            return false;
        if (!fp_pbwire_end(c->w, f->id))
            return jfail(c, "message larger than 2 GiB");
        return true;
    }
    if (!JSON_NODE_HOLDS_VALUE(n))
        return jfail(c, "expected a scalar");
    GType t = json_node_get_value_type(n);
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        if (t != G_TYPE_STRING)
            return jfail(c, "expected a string");
        fp_pbwire_bytes(c->w, f->id, json_node_get_string(n), strlen(json_node_get_string(n)));
        return true;
    case PROTOBUF_C_TYPE_BYTES: {
        if (t != G_TYPE_STRING)
            return jfail(c, "expected a string");
        const char *s = json_node_get_string(n);
        g_byte_array_set_size(c->scratch, 0);
        if (!fp_pbtxt_unescape(s, strlen(s), c->scratch, NULL))
            return jfail(c, "invalid escape sequence in a bytes string");
        fp_pbwire_bytes(c->w, f->id, c->scratch->data, c->scratch->len);
        return true;
    }
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double v = 0;
        if (t == G_TYPE_DOUBLE || t == G_TYPE_INT64) {
            v = json_node_get_double(n);
        } else if (t == G_TYPE_STRING) {
            const char *s = json_node_get_string(n);
            if (!fp_pbtxt_parse_real(s, strlen(s), &v))
                return jfail(c, "expected a number, found \"%.40s\"", s);
        } else {
            return jfail(c, "expected a number");
        }
        fp_pbwire_real(c->w, f, v);
        return true;
    }
    case PROTOBUF_C_TYPE_ENUM:
        if (t == G_TYPE_STRING) {
            const char *s = json_node_get_string(n);
            const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, s);
            if (!ev)
                return jfail(c, "'%.60s' is not a value of enum %s", s,
                             ((const ProtobufCEnumDescriptor *)f->descriptor)->name);
            fp_pbwire_int(c->w, f, ev->value < 0,
                          ev->value < 0 ? (uint64_t)0 - (uint64_t)(int64_t)ev->value : (uint64_t)ev->value);
            return true;
        }
        return j_int(c, f, n);
    default:
        return j_int(c, f, n);
    }
}

/* A map given as a JSON object {"k": v, ...}. */
static bool j_map_object(jctx *c, const ProtobufCFieldDescriptor *f, JsonObject *o)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    JsonObjectIter it;
    const char *k;
    JsonNode *v;
    json_object_iter_init(&it, o);
    gsize mark = c->path->len;
    while (json_object_iter_next(&it, &k, &v)) {
        g_string_append_printf(c->path, "[\"%s\"]", k);
        if (fp_pbwire_depth(c->w) + 2 >= FP_PBWIRE_MAX_DEPTH)
            return jfail(c, "objects nested deeper than %d", FP_PBWIRE_MAX_DEPTH);
        fp_pbwire_begin(c->w);
        fp_pbwire_bytes(c->w, 1, k, strlen(k));
        if (!JSON_NODE_HOLDS_NULL(v) && !j_value(c, &ed->fields[1], v))
            return false;
        if (!fp_pbwire_end(c->w, f->id))
            return jfail(c, "message larger than 2 GiB");
        g_string_truncate(c->path, mark);
    }
    return true;
}

static bool j_message(jctx *c, const ProtobufCMessageDescriptor *d, JsonObject *o)
{
    JsonObjectIter it;
    const char *name;
    JsonNode *v;
    json_object_iter_init(&it, o);
    gsize mark = c->path->len;
    while (json_object_iter_next(&it, &name, &v)) {
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
        if (!f || JSON_NODE_HOLDS_NULL(v))
            continue;
        g_string_append_printf(c->path, "%s%s", c->path->len ? "." : "", name);
        bool ok = true;
        if (d == &ge__proto__attr_map_entry__descriptor && f->id == 1 && JSON_NODE_HOLDS_VALUE(v) &&
            json_node_get_value_type(v) == G_TYPE_STRING) {
            /* an attribute name: a string in GE's schema (bytes here), written without escapes */
            fp_pbwire_bytes(c->w, 1, json_node_get_string(v), strlen(json_node_get_string(v)));
        } else if (f->label == PROTOBUF_C_LABEL_REPEATED && JSON_NODE_HOLDS_OBJECT(v) && is_map_entry(f)) {
            ok = j_map_object(c, f, json_node_get_object(v));
        } else if (f->label == PROTOBUF_C_LABEL_REPEATED && JSON_NODE_HOLDS_ARRAY(v)) {
            JsonArray *a = json_node_get_array(v);
            gsize elem_mark = c->path->len;
            for (guint i = 0; i < json_array_get_length(a) && ok; i++) {
                g_string_append_printf(c->path, "[%u]", i);
                JsonNode *e = json_array_get_element(a, i);
                ok = JSON_NODE_HOLDS_NULL(e) || j_value(c, f, e);
                g_string_truncate(c->path, elem_mark);
            }
        } else {
            ok = j_value(c, f, v);
        }
        if (!ok)
            return false;
        g_string_truncate(c->path, mark);
    }
    return true;
}

/* Parses GE's JSON of a ModelDef into a ModelDef; NULL with an error naming the JSON path of the
 * bad member. Free with ge__proto__model_def__free_unpacked(md, NULL). */
static Ge__Proto__ModelDef *parse(const char *text, size_t len, GError **error)
{
    if (len > G_MAXSSIZE) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "JSON text too large");
        return NULL;
    }
    gssize deep = fp_json_too_deep(text, len, 2 * FP_PBWIRE_MAX_DEPTH);
    if (deep >= 0) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "JSON nested deeper than %d at byte %" G_GSSIZE_FORMAT,
                    2 * FP_PBWIRE_MAX_DEPTH, deep);
        return NULL;
    }
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    GError *err = NULL;
    if (!json_parser_load_from_data(parser, text, (gssize)len, &err)) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "not valid JSON: %s", err->message);
        g_error_free(err);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "JSON: the top level is not an object (a GE ModelDef)");
        return NULL;
    }
    jctx c = {.w = fp_pbwire_new(), .path = g_string_new(NULL), .error = error, .scratch = g_byte_array_new()};
    Ge__Proto__ModelDef *md = NULL;
    if (j_message(&c, &ge__proto__model_def__descriptor, json_node_get_object(root))) {
        md = (Ge__Proto__ModelDef *)fp_pbwire_unpack(c.w, &ge__proto__model_def__descriptor);
        if (!md)
            g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "JSON: the model is too large");
    }
    fp_pbwire_free(c.w);
    g_string_free(c.path, TRUE);
    g_byte_array_free(c.scratch, TRUE);
    return md;
}

fp_model *fp_ge_json_load(const char *path, const char *text, size_t len, GError **error)
{
    Ge__Proto__ModelDef *md = parse(text, len, error);
    if (!md)
        return NULL;
    fp_model *m = fp_ge_from_model_def(path, "ge-json", md, len, NULL, error);
    ge__proto__model_def__free_unpacked(md, NULL);
    return m;
}
