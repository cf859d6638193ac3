/* onnx_text.c - ONNX text format: parse with the generic pbtxt reader into onnx.ModelProto, then
 * translate exactly as binary ONNX (fp_onnx_from_proto). Unknown field names are errors: the
 * schema is Debian's onnx.proto, and a name it lacks is a typo or a different file type. */
#include "onnx_text.h"

#include <string.h>

#include "frontends/ge/ge_internal.h"
#include "frontends/pbtxt/pbtxt.h"
#include "onnx_internal.h"

static const char *const model_fields[] = {
    "ir_version", "opset_import", "producer_name",  "producer_version", "domain",    "model_version",
    "doc_string", "graph",        "metadata_props", "training_info",    "functions",
};

static bool first_field(unsigned depth, const char *name, bool message, void *user)
{
    (void)depth;
    (void)message;
    bool *found = user;
    for (size_t i = 0; i < G_N_ELEMENTS(model_fields); i++)
        if (strcmp(name, model_fields[i]) == 0)
            *found = true;
    return false; /* the first field decides */
}

bool fp_onnx_text_sniff(const uint8_t *head, size_t len)
{
    bool found = false;
    fp_pbtxt_peek((const char *)head, len, first_field, &found);
    return found;
}

fp_model *fp_onnx_text_load_buffer(const char *path, const char *text, size_t len, GError **error)
{
    Onnx__ModelProto *mp = (Onnx__ModelProto *)fp_pbtxt_parse(&onnx__model_proto__descriptor, text, len, 0, NULL,
                                                              error);
    if (!mp)
        return NULL;
    fp_model *m = fp_ge_onnx_is_ge(mp) ? fp_ge_from_onnx(path, mp, len, error)
                                       : fp_onnx_from_proto(path, "onnx-text", mp, len, error);
    onnx__model_proto__free_unpacked(mp, NULL);
    return m;
}

fp_model *fp_onnx_text_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    GError *err = NULL;
    if (!g_file_get_contents(path, &text, &len, &err)) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_IO, "cannot read: %s", err->message);
        g_error_free(err);
        return NULL;
    }
    return fp_onnx_text_load_buffer(path, text, len, error);
}
