/* onnx.h - ONNX frontend: binary .onnx files into fuseplan's IR, weights never resident. */
#ifndef FP_ONNX_H
#define FP_ONNX_H

#include "ir/graph.h"

#define FP_ONNX_ERROR (fp_onnx_error_quark())
GQuark fp_onnx_error_quark(void);
typedef enum {
    FP_ONNX_ERROR_IO,
    FP_ONNX_ERROR_MALFORMED, /* not a parseable protobuf / ModelProto */
    FP_ONNX_ERROR_INVALID,   /* parseable, but violates ONNX rules (duplicate names, bad attrs) */
    FP_ONNX_ERROR_LIMIT,     /* exceeds a resource limit (rank, nesting, element count) */
} fp_onnx_error_code;

/* Imports the binary ONNX model at `path`. Only the file's skeleton is read: tensor payloads over
 * FP_INLINE_MAX are skipped by position, never read. Returns a linked model (fp_model_link done)
 * that the caller frees, or NULL with an error whose message names the object at fault
 * (graph, node, tensor, field) but not the file: callers prefix the path. The model is not
 * verified (fp_model_verify) here. */
fp_model *fp_onnx_load(const char *path, GError **error);

/* The same from a buffer already in memory (tests, fuzzing). `path` is only recorded. */
fp_model *fp_onnx_load_buffer(const char *path, const uint8_t *data, size_t len, GError **error);

/* Reads a serialized onnx.TensorProto file (e.g. a test's input_0.pb) as a tensor owned by m's
 * arena: dtype, dims, and its values when at most FP_INLINE_MAX bytes. *name receives the
 * tensor's name (arena string, may be ""). */
fp_tensor *fp_onnx_load_tensor(fp_model *m, const char *path, const char **name, GError **error);

/* True when the first bytes look like a serialized ModelProto (used by format detection). */
bool fp_onnx_sniff(const uint8_t *data, size_t len);

#endif
