/* ge_internal.h - shared by the GE readers; protobuf-c types stay inside frontends/. */
#ifndef FP_GE_INTERNAL_H
#define FP_GE_INTERNAL_H

#include "frontends/ge/ge.h"
#include "frontends/pbskel.h"
#include "ge_ir.pb-c.h"
#include "onnx.pb-c.h"

/* Where payloads stripped by the skeleton reader live: marker offsets are relative to a buffer
 * that starts at byte `base` of the file. Weights of an .om live in its WEIGHTS partition
 * [weights_base, weights_base + weights_size), addressed by TensorDescriptor.data_offset. */
typedef struct {
    uint64_t base;
    uint64_t weights_base, weights_size; /* weights_size 0: no weights partition */
} fp_ge_locator;

/* Translates an unpacked ModelDef into a new, linked model (see fp_ge_load for the contract).
 * loc may be NULL (markers are offsets in the file itself). The protobuf may be freed afterwards. */
fp_model *fp_ge_from_model_def(const char *path, const char *format, const Ge__Proto__ModelDef *md, uint64_t file_size,
                               const fp_ge_locator *loc, GError **error);

/* True when an ONNX model was written by GE (producer "GE" or op types "ge:..."). */
bool fp_ge_onnx_is_ge(const Onnx__ModelProto *mp);

/* Imports GE-written ONNX (descriptors flattened into attributes, subgraphs as "subgraph" nodes)
 * by rebuilding the ModelDef it came from; format "ge-onnx-text". */
fp_model *fp_ge_from_onnx(const char *path, const Onnx__ModelProto *mp, uint64_t file_size, GError **error);

/* Imports GE's JSON of a ModelDef (atc --mode=1), format "ge-json" (see fp_ge_load for the
 * contract); an error names the JSON path of the bad member. Needs json-glib: built into the
 * formats module, reached through fp_readers_get (frontends/readers.h). */
fp_model *fp_ge_json_load(const char *path, const char *text, size_t len, GError **error);

#endif
