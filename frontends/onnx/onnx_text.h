/* onnx_text.h - ONNX models in protobuf text format: .pbtxt/.textproto files and the output of
 * `protoc --decode=onnx.ModelProto`. GE-written ONNX text (op types "ge:...") goes on to the GE
 * frontend. */
#ifndef FP_ONNX_TEXT_H
#define FP_ONNX_TEXT_H

#include "ir/graph.h"

/* True when the head of a file reads as protobuf text whose first field is one of
 * onnx.ModelProto's. (GE text dumps also start with `graph {`: test fp_ge_sniff first.) */
bool fp_onnx_text_sniff(const uint8_t *head, size_t len);

/* Reads the text model at `path` into a linked model, format "onnx-text" (or "ge-onnx-text" when
 * GE wrote it). Tensor payloads are parsed (text models are small); values over fp_inline_max
 * are not kept. NULL with an error naming line:column, or the object at fault, but not the path. */
fp_model *fp_onnx_text_load(const char *path, GError **error);

/* The same from text in memory; `path` is only recorded. */
fp_model *fp_onnx_text_load_buffer(const char *path, const char *text, size_t len, GError **error);

#endif
