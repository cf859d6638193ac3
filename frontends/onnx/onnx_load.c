/* onnx_load.c - read a binary .onnx file: build a skeleton (pread window, payloads skipped) without tensor payloads,
 * unpack it with protobuf-c, translate, free the protobuf. */
#include "onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tensor payload fields of onnx.TensorProto that may hold weights. */
static bool strip_payload(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f, size_t len)
{
    if (d != &onnx__tensor_proto__descriptor || len <= FP_INLINE_MAX)
        return false;
    switch (f->id) {
    case 4:  /* float_data */
    case 5:  /* int32_data */
    case 7:  /* int64_data */
    case 9:  /* raw_data */
    case 10: /* double_data */
    case 11: /* uint64_data */
        return true;
    default:
        return false;
    }
}

/* Unpacks a skeleton and translates it. */
static fp_model *from_skeleton(const char *path, GBytes *skel, uint64_t file_size, GError **error)
{
    gsize slen = 0;
    const uint8_t *sdata = g_bytes_get_data(skel, &slen);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, slen, sdata);
    if (!mp) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED,
                    "not a valid ONNX protobuf: a field has the wrong wire type for onnx.ModelProto");
        return NULL;
    }
    fp_model *m = fp_onnx_from_proto(path, "onnx", mp, file_size, error);
    onnx__model_proto__free_unpacked(mp, NULL);
    return m;
}

static fp_model *skeleton_failed(GError *err, GError **error)
{
    g_set_error(error, FP_ONNX_ERROR, err->code == FP_PBSKEL_ERROR_IO ? FP_ONNX_ERROR_IO : FP_ONNX_ERROR_MALFORMED,
                "%s%s", err->code == FP_PBSKEL_ERROR_IO ? "" : "not a valid ONNX protobuf: ", err->message);
    g_error_free(err);
    return NULL;
}

fp_model *fp_onnx_load_buffer(const char *path, const uint8_t *data, size_t len, GError **error)
{
    GError *err = NULL;
    g_autoptr(GBytes) skel = fp_pbskel_build(&onnx__model_proto__descriptor, data, len, strip_payload, &err);
    if (!skel)
        return skeleton_failed(err, error);
    return from_skeleton(path, skel, len, error);
}

fp_model *fp_onnx_load(const char *path, GError **error)
{
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_IO, "cannot read: %s", g_strerror(e));
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
        return NULL;
    }
    GError *err = NULL;
    g_autoptr(GBytes) skel = fp_pbskel_build_fd(&onnx__model_proto__descriptor, fd, (uint64_t)st.st_size, strip_payload, &err);
    close(fd);
    if (!skel)
        return skeleton_failed(err, error);
    return from_skeleton(path, skel, (uint64_t)st.st_size, error);
}

fp_tensor *fp_onnx_load_tensor(fp_model *m, const char *path, const char **name, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, error))
        return NULL;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)data);
    if (!tp) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, "%s: not a valid onnx.TensorProto", path);
        return NULL;
    }
    fp_tensor *t = fp_onnx_tensor_from_proto(m, tp, error);
    if (name)
        *name = fp_intern(m, tp->name ? tp->name : "", -1);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return t;
}

bool fp_onnx_sniff(const uint8_t *data, size_t len)
{
    /* A ModelProto starts with one of its fields: ir_version (1, varint), opset_import (8),
     * producer_name (2), producer_version (3), domain (4), model_version (5), doc_string (6),
     * graph (7), metadata_props (14), training_info (20), functions (25). */
    if (len < 2)
        return false;
    uint8_t tag = data[0];
    switch (tag) {
    case 0x08: /* 1:varint */
    case 0x12: case 0x1a: case 0x22: /* 2,3,4: bytes */
    case 0x28: /* 5: varint */
    case 0x32: case 0x3a: case 0x42: /* 6,7,8: bytes */
    case 0x72: /* 14 */
        return true;
    default:
        return false;
    }
}
