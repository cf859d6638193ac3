/* onnx_write.h - binary ONNX models from their protobuf text: for models fuseplan builds itself
 * (the micro-models `fuseplan calibrate --runtime` runs), written as readable text and handed to
 * a runtime as the bytes of a .onnx file. protobuf-c stays inside frontends/onnx. */
#ifndef FP_ONNX_WRITE_H
#define FP_ONNX_WRITE_H

#include <glib.h>

/* Parses text[0..len) as an onnx.ModelProto in protobuf text format (frontends/pbtxt) and
 * serializes it. Every float initializer (data_type 1) declared with dims and no data gets a fixed
 * pattern: rank 0 or 1 (scales, biases, variances), values in [0.5, 1.5]; higher rank (weights),
 * zero-mean values of variance 1 / (its elements over dims[0]), so that a chain of such layers
 * keeps its activations of the same order and away from denormals. Each initializer's pattern is
 * shifted by its position: no two hold the same values (ONNX Runtime keeps one copy of identical
 * initializers, and a chain of layers sharing one weight would read it from a cache). A uint8
 * initializer declared likewise (packed 4-bit weights) gets hashed bytes. NULL with the parser's
 * error (line:column and field) when the text is not a ModelProto, or an FP_ONNX_ERROR_LIMIT when
 * an initializer would exceed 1 GiB. */
GBytes *fp_onnx_write_text(const char *text, size_t len, GError **error);

#endif
