/* genai.c - genai_config.json outside its parser (genai.h): the file read, the templates, the
 * config found beside a model. */
#include "frontends/genai/genai.h"

#include <string.h>

#include "frontends/readers.h"

/* Largest genai_config.json read (the real ones are a few KiB). */
#define FP_GENAI_MAX_BYTES (16u << 20)

bool fp_genai_template_ok(const char *tmpl)
{
    const char *d = strstr(tmpl, "%d");
    if (!d || strchr(d + 2, '%'))
        return false;
    const char *pct = strchr(tmpl, '%');
    return pct == d;
}

char *fp_genai_name(const char *tmpl, uint32_t layer)
{
    const char *d = strstr(tmpl, "%d");
    g_assert(d);
    return g_strdup_printf("%.*s%u%s", (int)(d - tmpl), tmpl, layer, d + 2);
}

fp_genai_config *fp_genai_config_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    GError *err = NULL;
    if (!g_file_get_contents(path, &text, &len, &err)) {
        g_set_error(error, G_FILE_ERROR, err->code, "%s: %s", path, err->message);
        g_error_free(err);
        return NULL;
    }
    if (len > FP_GENAI_MAX_BYTES) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: larger than %u MiB: no genai_config.json", path,
                    FP_GENAI_MAX_BYTES >> 20);
        return NULL;
    }
    const fp_readers *r = fp_readers_get(error);
    return r ? r->genai_config(path, text, len, error) : NULL;
}

void fp_genai_config_free(fp_genai_config *c)
{
    if (!c)
        return;
    char *strings[] = {c->path,          c->filename,    c->past_key,       c->past_value, c->present_key,
                       c->present_value, c->past_packed, c->present_packed, c->cross_key,  c->cross_value,
                       c->model_type,    c->past_conv,   c->present_conv};
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++)
        g_free(strings[i]);
    g_strfreev(c->layer_types);
    g_free(c);
}

bool fp_genai_layer_attends(const fp_genai_config *c, uint32_t layer)
{
    if (!c->layer_types)
        return true;
    for (uint32_t i = 0; c->layer_types[i]; i++)
        if (i == layer)
            return strcmp(c->layer_types[i], "full_attention") == 0;
    return false;
}

int64_t fp_genai_encoder_tokens(const fp_genai_config *c)
{
    return g_strcmp0(c->model_type, "whisper") == 0 ? 1500 : -1;
}

char *fp_genai_config_beside(const char *model_path)
{
    g_autofree char *dir = g_path_get_dirname(model_path);
    char *path = g_build_filename(dir, "genai_config.json", NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return path;
    g_free(path);
    return NULL;
}

bool fp_genai_config_names(const fp_genai_config *c, const char *model_path)
{
    g_autofree char *base = g_path_get_basename(model_path);
    return !c->filename || strcmp(c->filename, base) == 0;
}
