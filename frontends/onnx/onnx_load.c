/* onnx_load.c - read a binary .onnx file: element by element through a reader that skips tensor
 * payloads (fp_onnx_from_reader); a file it cannot read is built as an exact skeleton (pread
 * window, payloads skipped) and translated, which names the first fault in file order. */
#include "onnx_internal.h"

#include <unistd.h>

/* Tensor payload fields of onnx.TensorProto that may hold weights: over fp_inline_max of the
 * tensor's data_type (field 2, written before the payload), FP_INLINE_MAX when it is not known yet;
 * seen NULL (may it be stripped somewhere?): the floating-point limit. */
static bool strip_payload(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f, size_t len,
                          const uint64_t *seen)
{
    if (d != &onnx__tensor_proto__descriptor)
        return false;
    uint64_t dt = seen ? seen[2] : FP_DT_FLOAT;
    uint64_t limit = dt < FP_DT_COUNT ? fp_inline_max((fp_dtype)dt) : FP_INLINE_MAX;
    switch (f->id) {
    case 4:  /* float_data */
    case 10: /* double_data */
        return len > FP_INLINE_FLOAT_MAX;
    case 5: /* int32_data (also float16 and bfloat16 payloads) */
    case 9: /* raw_data */
        return len > limit;
    case 7:  /* int64_data */
    case 11: /* uint64_data */
        return len > FP_INLINE_MAX;
    default:
        return false;
    }
}

/* Translates a skeleton. Takes ownership of skel, released once translated. */
static fp_model *from_skeleton(const char *path, GBytes *skel, uint64_t file_size, GError **error)
{
    gsize slen = 0;
    const uint8_t *sdata = g_bytes_get_data(skel, &slen);
    if (!sdata) /* an empty skeleton has no data pointer: pointer arithmetic on NULL is undefined */
        sdata = (const uint8_t *)"";
    fp_model *m = fp_onnx_from_skeleton(path, "onnx", sdata, slen, file_size, error);
    g_bytes_unref(skel);
    return m;
}

static fp_model *skeleton_failed(GError *err, GError **error)
{
    g_set_error(error, FP_ONNX_ERROR, err->code == FP_PBSKEL_ERROR_IO ? FP_ONNX_ERROR_IO : FP_ONNX_ERROR_MALFORMED,
                "%s%s", err->code == FP_PBSKEL_ERROR_IO ? "" : "not a valid ONNX protobuf: ", err->message);
    g_error_free(err);
    return NULL;
}

/* The bytes of a model: a buffer (mem) or an open file. */
typedef struct {
    const uint8_t *data; /* mem: the buffer */
    int fd;              /* else: the file */
    uint64_t size;
    bool mem;
} source;

/* The skeleton of the whole source, built by the exact walk (a fault is reported with its offset
 * and field). */
static GBytes *build_skeleton(const source *src, GError **error)
{
    if (src->mem)
        return fp_pbskel_build(&onnx__model_proto__descriptor, src->data, (size_t)src->size, strip_payload, error);
    return fp_pbskel_build_fd(&onnx__model_proto__descriptor, src->fd, src->size, strip_payload, error);
}

/* Element by element through a reader (fp_onnx_from_reader); when that fails, through the
 * skeleton of the whole source, then its translation, whose verdict stands: a malformed file
 * fails with the first fault in file order. */
static fp_model *load_source(const char *path, const source *src, GError **error)
{
    if (src->size) { /* first element by element, without a skeleton of the whole file */
        fp_pbskel_reader *r = fp_pbskel_reader_new(&onnx__model_proto__descriptor, src->mem ? src->data : NULL, src->fd,
                                                   src->size, strip_payload, FP_PBSKEL_FAST);
        GError *ignored = NULL;
        fp_model *m = fp_onnx_from_reader(path, "onnx", r, src->size, src->size, &ignored);
        fp_pbskel_reader_free(r);
        g_clear_error(&ignored);
        if (m)
            return m;
    }
    GError *err = NULL;
    GBytes *skel = build_skeleton(src, &err);
    if (!skel)
        return skeleton_failed(err, error);
    return from_skeleton(path, skel, src->size, error);
}

fp_model *fp_onnx_load_buffer(const char *path, const uint8_t *data, size_t len, GError **error)
{
    source src = {.data = data, .fd = -1, .size = len, .mem = true};
    return load_source(path, &src, error);
}

fp_model *fp_onnx_load(const char *path, GError **error)
{
    source src = {0};
    src.fd = fp_pbskel_open(path, FP_ONNX_ERROR, FP_ONNX_ERROR_IO, FP_ONNX_ERROR_MALFORMED, &src.size, error);
    if (src.fd < 0)
        return NULL;
    fp_model *m = load_source(path, &src, error);
    close(src.fd);
    return m;
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
    case 0x12:
    case 0x1a:
    case 0x22: /* 2,3,4: bytes */
    case 0x28: /* 5: varint */
    case 0x32:
    case 0x3a:
    case 0x42: /* 6,7,8: bytes */
    case 0x72: /* 14 */
        return true;
    default:
        return false;
    }
}
