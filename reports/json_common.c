/* json_common.c - JSON pieces shared by every JSON emitter. */
#include "json_common.h"
#include "reports/output.h"

#include <math.h>
#include <stdio.h>

void fp_json_add_shape(JsonBuilder *b, const fp_shape *s)
{
    if (s->rank < 0) {
        json_builder_add_null_value(b);
        return;
    }
    json_builder_begin_array(b);
    for (int32_t i = 0; i < s->rank; i++) {
        if (s->dims[i].sym)
            json_builder_add_string_value(b, s->dims[i].sym);
        else if (s->dims[i].value >= 0)
            json_builder_add_int_value(b, s->dims[i].value);
        else
            json_builder_add_null_value(b);
    }
    json_builder_end_array(b);
}

void fp_json_add_value(JsonBuilder *b, const fp_value *v)
{
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, v->name);
    json_builder_set_member_name(b, "dtype");
    json_builder_add_string_value(b, fp_dtype_name(v->dtype));
    json_builder_set_member_name(b, "shape");
    fp_json_add_shape(b, &v->shape);
    json_builder_end_object(b);
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
        fputs(withnl, stdout);
        fflush(stdout);
        return !ferror(stdout);
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
