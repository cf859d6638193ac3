/* ge.h - Ascend Graph Engine (GE) frontend: ModelDef graphs as GE writes them, into fuseplan's IR.
 *
 * Inputs: text dumps (ge_proto_*.txt, protobuf text of ge.proto.ModelDef), binary ModelDef,
 * offline models (.om: header, partition table, MODEL_DEF partition; weights never read),
 * `atc --mode=1` JSON of a ModelDef, and GE-written ONNX text (through onnx_text.h).
 * The mapping onto the IR is described in docs/ge.md.
 */
#ifndef FP_GE_H
#define FP_GE_H

#include "ir/graph.h"

#define FP_GE_ERROR (fp_ge_error_quark())
GQuark fp_ge_error_quark(void);
typedef enum {
    FP_GE_ERROR_IO,
    FP_GE_ERROR_MALFORMED, /* not parseable as the detected container or message */
    FP_GE_ERROR_INVALID,   /* parseable, but the graph is inconsistent (unknown source node, ...) */
    FP_GE_ERROR_LIMIT,     /* exceeds a resource limit (rank, nesting, sizes) */
} fp_ge_error_code;

typedef enum {
    FP_GE_NONE,   /* not a GE file */
    FP_GE_TEXT,   /* protobuf text of ModelDef: "ge-text" */
    FP_GE_BINARY, /* serialized ModelDef: "ge-binary" */
    FP_GE_OM,     /* offline model: "ge-om" */
    FP_GE_JSON,   /* atc --mode=1 JSON: "ge-json" */
} fp_ge_kind;

/* Which GE container the first bytes of a file look like (FP_GE_NONE if none). */
fp_ge_kind fp_ge_sniff(const uint8_t *head, size_t len);

/* Imports a GE file of the given kind. Returns a linked model (not verified) the caller frees, or
 * NULL with an error naming the object at fault (text: "line L:C: ...", binary: "at byte N"), but
 * not the path: callers prefix it. */
fp_model *fp_ge_load(const char *path, fp_ge_kind kind, GError **error);

/* The same from a buffer (tests, fuzzing); `path` is only recorded. FP_GE_OM reads the buffer as
 * the whole file. */
fp_model *fp_ge_load_buffer(const char *path, fp_ge_kind kind, const uint8_t *data, size_t len, GError **error);

/* IR op kind of a GE op type ("Conv2D" -> FP_OP_CONV); FP_OP_OPAQUE when none matches. Types whose
 * kind depends on attributes (Eltwise, Pooling) answer for their defaults here. */
fp_op fp_ge_op_kind(const char *ge_type);
/* The GE type of row i of that table, or NULL past its end (the ge suite checks the order). */
const char *fp_ge_op_table_type(size_t i);

/* fp_dtype of a TensorDescriptor.dtype (proto enum numbering: float32 = 1). */
fp_dtype fp_ge_dtype_from_proto(int64_t v);
/* fp_dtype of a C++ ge::DataType value (AttrDef.dt, Cast.dst_type: float32 = 0). */
fp_dtype fp_ge_dtype_from_cpp(int64_t v);

#endif
