/* onnx_load.c - read a binary .onnx file: mmap, build a skeleton without tensor payloads,
 * unpack it with protobuf-c, translate, free the protobuf. */
#include "onnx_internal.h"

#include <errno.h>
#include <string.h>

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

fp_model *fp_onnx_load_buffer(const char *path, const uint8_t *data, size_t len, GError **error)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GBytes) skel = fp_pbskel_build(&onnx__model_proto__descriptor, data, len, strip_payload, &err);
    if (!skel) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, "not a valid ONNX protobuf: %s", err->message);
        return NULL;
    }
    gsize slen = 0;
    const uint8_t *sdata = g_bytes_get_data(skel, &slen);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, slen, sdata);
    if (!mp) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED,
                    "not a valid ONNX protobuf: a field has the wrong wire type for onnx.ModelProto");
        return NULL;
    }
    fp_model *m = fp_onnx_from_proto(path, "onnx", mp, len, error);
    onnx__model_proto__free_unpacked(mp, NULL);
    return m;
}

fp_model *fp_onnx_load(const char *path, GError **error)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GMappedFile) mf = g_mapped_file_new(path, FALSE, &err);
    if (!mf) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_IO, "cannot read: %s",
                    err ? err->message : "unknown error");
        return NULL;
    }
    const uint8_t *data = (const uint8_t *)g_mapped_file_get_contents(mf);
    size_t len = g_mapped_file_get_length(mf);
    if (len == 0) {
        g_set_error(error, FP_ONNX_ERROR, FP_ONNX_ERROR_MALFORMED, "empty file");
        return NULL;
    }
    return fp_onnx_load_buffer(path, data, len, error);
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
