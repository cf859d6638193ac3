/* load.c - format detection and the one entry point every subcommand uses to read a model. */
#include "load.h"

#include <errno.h>
#include <stdio.h>

#include "frontends/ge/ge.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_text.h"

G_DEFINE_QUARK(fp-load-error-quark, fp_load_error)

/* Reads up to n leading bytes of path into buf; returns how many, or -1 with errno. */
static gssize read_head(const char *path, uint8_t *buf, size_t n, GError **error)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot open: %s", g_strerror(errno));
        return -1;
    }
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    return (gssize)got;
}

fp_model *fp_load_model(const char *path, GError **error)
{
    uint8_t head[4096]; /* text formats are told apart by their first fields */
    g_autoptr(GError) err = NULL;
    gssize got = read_head(path, head, sizeof head, &err);
    fp_model *m = NULL;
    if (got < 0) {
        /* fall through: err already set */
    } else if (got == 0) {
        g_set_error(&err, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "empty file");
    } else if (fp_ge_sniff(head, (size_t)got) != FP_GE_NONE) {
        m = fp_ge_load(path, fp_ge_sniff(head, (size_t)got), &err);
    } else if (fp_onnx_sniff(head, (size_t)got)) {
        m = fp_onnx_load(path, &err);
    } else if (fp_onnx_text_sniff(head, (size_t)got)) {
        m = fp_onnx_text_load(path, &err);
    } else {
        g_set_error(&err, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT,
                    "unrecognized format (first byte 0x%02x): expected ONNX (binary or text) or an Ascend GE "
                    "graph (text dump, binary, .om or JSON)", head[0]);
    }
    if (m && !fp_model_verify(m, &err)) {
        fp_model_free(m);
        m = NULL;
    }
    if (!m)
        g_propagate_prefixed_error(error, g_steal_pointer(&err), "%s: ", path);
    return m;
}
