/* json_common.c - JSON pieces shared by every JSON emitter. */
#include "json_common.h"
#include "reports/output.h"

#include <math.h>
#include <stdio.h>

void fp_jsonw_shape(fp_jsonw *w, const char *member, const fp_shape *s)
{
    if (s->rank < 0) {
        fp_jsonw_null(w, member);
        return;
    }
    fp_jsonw_begin_array(w, member);
    for (int32_t i = 0; i < s->rank; i++) {
        if (s->dims[i].sym)
            fp_jsonw_str(w, NULL, s->dims[i].sym);
        else if (s->dims[i].value >= 0)
            fp_jsonw_int(w, NULL, s->dims[i].value);
        else
            fp_jsonw_null(w, NULL);
    }
    fp_jsonw_end_array(w);
}

void fp_jsonw_value(fp_jsonw *w, const fp_value *v)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "name", v->name);
    fp_jsonw_name(w, "dtype", fp_dtype_name(v->dtype));
    fp_jsonw_shape(w, "shape", &v->shape);
    fp_jsonw_end_object(w);
}

void fp_jsonw_diagnostics(fp_jsonw *w, const char *member, const fp_diag *diag)
{
    fp_jsonw_begin_array(w, member);
    for (guint i = 0; diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "level", e->level == FP_DIAG_WARNING ? "warning" : e->level == FP_DIAG_ERROR ? "error" : "info");
        fp_jsonw_str(w, "code", e->code);
        fp_jsonw_str(w, "node", e->node);
        fp_jsonw_str(w, "message", e->message);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}

bool fp_json_write(JsonNode *root, const char *path, GError **error)
{
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    gsize len = 0;
    g_autofree char *text = json_generator_to_data(gen, &len);
    g_autofree char *withnl = g_strconcat(text, "\n", NULL);
    if (!path || g_strcmp0(path, "-") == 0) {
        FILE *out = fp_output_stdout();
        fputs(withnl, out);
        fflush(out);
        return !ferror(out);
    }
    return fp_output_write(path, withnl, -1, error);
}

void fp_json_str(JsonBuilder *b, const char *member, const char *v)
{
    json_builder_set_member_name(b, member);
    if (v)
        json_builder_add_string_value(b, v);
    else
        json_builder_add_null_value(b);
}

void fp_json_int(JsonBuilder *b, const char *member, gint64 v)
{
    json_builder_set_member_name(b, member);
    json_builder_add_int_value(b, v);
}

void fp_json_uint(JsonBuilder *b, const char *member, uint64_t v)
{
    fp_json_int(b, member, v > (uint64_t)G_MAXINT64 ? G_MAXINT64 : (gint64)v);
}

void fp_json_num(JsonBuilder *b, const char *member, double v)
{
    json_builder_set_member_name(b, member);
    if (isfinite(v))
        json_builder_add_double_value(b, v);
    else
        json_builder_add_null_value(b);
}

void fp_json_bool(JsonBuilder *b, const char *member, bool v)
{
    json_builder_set_member_name(b, member);
    json_builder_add_boolean_value(b, v);
}
