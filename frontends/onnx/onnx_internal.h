/* onnx_internal.h - shared between the ONNX binary and text readers; protobuf-c types stay
 * inside frontends/. */
#ifndef FP_ONNX_INTERNAL_H
#define FP_ONNX_INTERNAL_H

#include "frontends/onnx/onnx.h"
#include "frontends/pbskel.h"
#include "onnx.pb-c.h"

/* Translates an unpacked ModelProto into a new, linked model (see fp_onnx_load for the contract).
 * The protobuf may be freed as soon as this returns. */
fp_model *fp_onnx_from_proto(const char *path, const char *format, const Onnx__ModelProto *mp, uint64_t file_size,
                             GError **error);

/* Converts one TensorProto into a tensor in m's arena (see fp_onnx_load_tensor). */
fp_tensor *fp_onnx_tensor_from_proto(fp_model *m, const Onnx__TensorProto *tp, GError **error);

#endif
