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

/* The same from a serialized ModelProto skeleton (fp_pbskel_build), which must stay valid until
 * this returns: the main graph is unpacked and translated one element at a time, so the unpacked
 * protobuf of a large graph is never resident whole. Malformed input fails as protobuf-c's unpack
 * of the whole message would (FP_ONNX_ERROR_MALFORMED). */
fp_model *fp_onnx_from_skeleton(const char *path, const char *format, const uint8_t *data, size_t len,
                                uint64_t file_size, GError **error);

/* The same, reading the ModelProto in the first `size` bytes of r's source: the main graph's
 * elements are read one at a time, so that no skeleton of the whole graph is ever built. NULL when
 * anything fails, the error then not necessarily the one of fp_onnx_from_skeleton (nor set): the
 * caller then loads through fp_onnx_from_skeleton, whose verdict stands. */
fp_model *fp_onnx_from_reader(const char *path, const char *format, fp_pbskel_reader *r, uint64_t size,
                              uint64_t file_size, GError **error);

/* Converts one TensorProto into a tensor in m's arena (see fp_onnx_load_tensor). */
fp_tensor *fp_onnx_tensor_from_proto(fp_model *m, const Onnx__TensorProto *tp, GError **error);

#endif
