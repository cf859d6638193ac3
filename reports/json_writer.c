/* json_writer.c - a JSON document written piece by piece (json_writer.h). The layout follows
 * json-glib's pretty generator with an indent of 2: a container's first item on a new line, the
 * others after ",\n", each indented by two spaces per level, the closing bracket on a line of its
 * own at the container's level; an empty array is "[]" and an empty object "{", two spaces per
 * level, "}" (tests/test_reports.c compares the two on a document with every case). */
#include "reports/json_writer.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/output.h"

/* Containers open at once, at most; and the text a streamed writer holds before it writes it. */
enum { MAX_DEPTH = 64, FLUSH_BYTES = 1 << 20 };

struct fp_jsonw {
    GString *out;  /* the text (a streamed writer's: not written yet) */
    bool started;  /* the document's value has begun */
    bool streamed; /* fp_jsonw_open: out goes to `file`, or stdout when NULL */
    fp_output_stream *file;
    GError *error;             /* the first failed write of a streamed writer */
    int depth;                 /* containers open */
    bool is_object[MAX_DEPTH]; /* per open container */
    uint32_t count[MAX_DEPTH]; /* items written in it so far */
    JsonGenerator *gen;        /* scalars and names, compact */
    JsonNode *scalar;          /* the value node scalars are generated from */
    GHashTable *escaped;       /* a name (by pointer) -> its escaped form in quotes */
};

fp_jsonw *fp_jsonw_new(void)
{
    fp_jsonw *w = g_new0(fp_jsonw, 1);
    w->out = g_string_sized_new(4096);
    w->gen = json_generator_new();
    w->scalar = json_node_new(JSON_NODE_VALUE);
    w->escaped = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return w;
}

void fp_jsonw_free(fp_jsonw *w)
{
    if (!w)
        return;
    if (w->file)
        fp_output_stream_close(w->file, false, NULL);
    g_clear_error(&w->error);
    if (w->out)
        g_string_free(w->out, TRUE);
    g_object_unref(w->gen);
    json_node_unref(w->scalar);
    g_hash_table_destroy(w->escaped);
    g_free(w);
}

char *fp_jsonw_finish(fp_jsonw *w, gsize *len)
{
    g_assert(!w->streamed && w->depth == 0 && w->started);
    g_string_append_c(w->out, '\n');
    if (len)
        *len = w->out->len;
    char *text = g_string_free(g_steal_pointer(&w->out), FALSE);
    fp_jsonw_free(w);
    return text;
}

fp_jsonw *fp_jsonw_open(const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_new();
    w->streamed = true;
    if (path && strcmp(path, "-") != 0 && !(w->file = fp_output_stream_open(path, error))) {
        fp_jsonw_free(w);
        return NULL;
    }
    return w;
}

/* A streamed writer's text so far to its destination (nothing more after a failure). */
static void flush(fp_jsonw *w)
{
    if (!w->error && w->file) {
        fp_output_stream_write(w->file, w->out->str, w->out->len, &w->error);
    } else if (!w->error && fwrite(w->out->str, 1, w->out->len, fp_output_stdout()) != w->out->len) {
        int e = errno;
        g_set_error(&w->error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write to standard output: %s",
                    g_strerror(e));
    }
    g_string_truncate(w->out, 0);
}

bool fp_jsonw_close(fp_jsonw *w, GError **error)
{
    g_assert(w->streamed && w->depth == 0 && w->started);
    g_string_append_c(w->out, '\n');
    flush(w);
    if (!w->file && !w->error && fflush(fp_output_stdout()) != 0) {
        int e = errno;
        g_set_error(&w->error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write to standard output: %s",
                    g_strerror(e));
    }
    bool ok = !w->error;
    if (w->file) {
        ok = fp_output_stream_close(w->file, ok, ok ? error : NULL) && ok;
        w->file = NULL;
    }
    if (w->error)
        g_propagate_error(error, g_steal_pointer(&w->error));
    fp_jsonw_free(w);
    return ok;
}

static void indent(fp_jsonw *w, int level)
{
    for (int i = 0; i < level; i++)
        g_string_append(w->out, "  ");
}

/* The current scalar node, as json-glib writes it, appended to the output. */
static void generate_scalar(fp_jsonw *w, GString *to)
{
    json_generator_set_root(w->gen, w->scalar);
    json_generator_to_gstring(w->gen, to);
}

/* Appends "v" escaped by json-glib, from the cache of names by pointer. */
static void append_name(fp_jsonw *w, const char *v)
{
    const char *e = g_hash_table_lookup(w->escaped, v);
    if (!e) {
        GString *s = g_string_new(NULL);
        json_node_set_string(w->scalar, v);
        generate_scalar(w, s);
        e = g_string_free(s, FALSE);
        g_hash_table_insert(w->escaped, (gpointer)v, (gpointer)e);
    }
    g_string_append(w->out, e);
}

/* Starts an item of the innermost container (or the document): its separator, indentation and
 * member name. */
static void item(fp_jsonw *w, const char *member)
{
    if (w->depth == 0) {
        g_assert(!member && !w->started); /* one document */
        w->started = true;
        return;
    }
    int d = w->depth - 1;
    g_assert(w->is_object[d] == (member != NULL));
    g_string_append(w->out, w->count[d]++ ? ",\n" : "\n");
    indent(w, w->depth);
    if (member) {
        append_name(w, member);
        g_string_append(w->out, " : ");
    }
}

static void begin(fp_jsonw *w, const char *member, bool object)
{
    item(w, member);
    g_assert(w->depth < MAX_DEPTH);
    g_string_append_c(w->out, object ? '{' : '[');
    w->is_object[w->depth] = object;
    w->count[w->depth] = 0;
    w->depth++;
}

static void end(fp_jsonw *w, bool object)
{
    g_assert(w->depth > 0 && w->is_object[w->depth - 1] == object);
    int d = --w->depth;
    if (w->count[d]) {
        g_string_append_c(w->out, '\n');
        indent(w, d);
    } else if (object) {
        indent(w, d); /* json-glib's empty object: "{", the level's indentation, "}" */
    }
    g_string_append_c(w->out, object ? '}' : ']');
    if (w->streamed && w->out->len >= FLUSH_BYTES)
        flush(w);
}

void fp_jsonw_begin_object(fp_jsonw *w, const char *member) { begin(w, member, true); }
void fp_jsonw_end_object(fp_jsonw *w) { end(w, true); }
void fp_jsonw_begin_array(fp_jsonw *w, const char *member) { begin(w, member, false); }
void fp_jsonw_end_array(fp_jsonw *w) { end(w, false); }

void fp_jsonw_null(fp_jsonw *w, const char *member)
{
    item(w, member);
    g_string_append(w->out, "null");
}

void fp_jsonw_str(fp_jsonw *w, const char *member, const char *v)
{
    if (!v) {
        fp_jsonw_null(w, member);
        return;
    }
    item(w, member);
    json_node_set_string(w->scalar, v);
    generate_scalar(w, w->out);
}

void fp_jsonw_name(fp_jsonw *w, const char *member, const char *v)
{
    if (!v) {
        fp_jsonw_null(w, member);
        return;
    }
    item(w, member);
    append_name(w, v);
}

void fp_jsonw_int(fp_jsonw *w, const char *member, gint64 v)
{
    item(w, member);
    g_string_append_printf(w->out, "%" G_GINT64_FORMAT, v); /* json-glib's integer format */
}

void fp_jsonw_int_or_null(fp_jsonw *w, const char *member, gint64 v)
{
    if (v < 0)
        fp_jsonw_null(w, member);
    else
        fp_jsonw_int(w, member, v);
}

void fp_jsonw_uint(fp_jsonw *w, const char *member, uint64_t v)
{
    fp_jsonw_int(w, member, v > (uint64_t)G_MAXINT64 ? G_MAXINT64 : (gint64)v);
}

void fp_jsonw_num(fp_jsonw *w, const char *member, double v)
{
    if (!isfinite(v)) {
        fp_jsonw_null(w, member);
        return;
    }
    item(w, member);
    json_node_set_double(w->scalar, v);
    generate_scalar(w, w->out);
}

void fp_jsonw_bool(fp_jsonw *w, const char *member, bool v)
{
    item(w, member);
    g_string_append(w->out, v ? "true" : "false");
}
