/* onnx_wire.h - the protobuf wire decoder of the ONNX reader (frontends/onnx/onnx_wire.c), private
 * to frontends/onnx/: a serialized ModelProto (a skeleton, or read through an fp_pbskel_reader) is
 * unpacked without its main graph, whose elements are then unpacked one at a time and handed to the
 * importer (onnx_import.c), so that the unpacked protobuf of a large graph never exists whole. */
#ifndef FP_ONNX_WIRE_H
#define FP_ONNX_WIRE_H

#include "frontends/pbskel.h"
#include "ir/arena.h"
#include "onnx.pb-c.h"

/* The element fields of onnx.GraphProto (numbers from onnx.proto) read one element at a time. */
enum {
    FP_ONNX_WIRE_NODE = 1,
    FP_ONNX_WIRE_INITIALIZER = 5,
    FP_ONNX_WIRE_INPUT = 11,
    FP_ONNX_WIRE_OUTPUT = 12,
    FP_ONNX_WIRE_VALUE_INFO = 13,
    FP_ONNX_WIRE_SPARSE_INITIALIZER = 15,
};

/* What an element is handed to, and a hint ahead of it. */
typedef struct {
    /* Imports element number `index` of field `field`, unpacked as msg (an Onnx__NodeProto,
     * Onnx__TensorProto, Onnx__SparseTensorProto or Onnx__ValueInfoProto), valid during the call.
     * lens: NULL, or for a node read straight from the wire the lengths of its input names then of
     * its output names, which are then not NUL-terminated. False stops the walk. */
    bool (*element)(void *data, uint32_t field, size_t index, const ProtobufCMessage *msg, const size_t *lens);
    /* A hint, may be NULL: the name (len bytes, not NUL-terminated) that the next element will
     * look up (a node's input, output and own names, an initializer's name). */
    void (*ahead)(void *data, const char *name, size_t len);
    void *data;
} fp_onnx_sink;

/* The structs one node read from the wire is made of: carved from a reused buffer, and from the
 * scratch arena when it is full. Not zeroed. */
typedef struct {
    uint8_t *buf;
    size_t used, cap;
    fp_arena *more;
} fp_onnx_wire_mem;

/* A ModelProto whose main graph is read element by element: from a serialized skeleton in memory
 * (fp_onnx_wire_open) or from a reader (fp_onnx_wire_open_reader). */
typedef struct {
    const uint8_t *data; /* the GraphProto's fields, serialized */
    size_t len;
    const Onnx__GraphProto *head;         /* its other fields (name, doc_string, ...), unpacked */
    size_t n_node, n_values;              /* nodes, and initializers + inputs + nodes: a lower bound of the values */
    const uint8_t *from[16], *to[16];     /* per element field (numbers below 16): from its first element
                                         to the end of its last one (split_graph); NULL when none */
    fp_pbskel_reader *reader;             /* else elements are read from here, at these offsets of its source */
    uint64_t rfrom[16], rto[16];          /* (rto 0: none) */
    bool odd;                             /* an element field that is not length-delimited */
    fp_arena *keep;                       /* the ModelProto and the graph's head */
    fp_arena *scratch;                    /* one element at a time */
    ProtobufCAllocator keep_alloc, alloc; /* protobuf-c's allocators from keep and from scratch */
    fp_onnx_wire_mem mem;                 /* node_from_wire's, one node at a time */
    GByteArray *model_rest, *graph_rest;  /* fp_onnx_wire_open: what was unpacked besides the elements */
} fp_onnx_wire;

/* Sets wg up to read elements from r (NULL: from the skeleton fp_onnx_wire_open is given);
 * fp_onnx_wire_clear frees what it holds, whatever happened in between. */
void fp_onnx_wire_init(fp_onnx_wire *wg, fp_pbskel_reader *r);
void fp_onnx_wire_clear(fp_onnx_wire *wg);

/* The serialized ModelProto skeleton [data, data+len), valid while wg is used: *mp receives its
 * fields but the main graph (ModelProto.graph NULL), unpacked in wg, and wg the main graph's. False
 * when the skeleton is not of the usual layout (exactly one graph, every element field
 * length-delimited) or does not unpack: the caller then unpacks it whole (fp_onnx_wire_whole). */
bool fp_onnx_wire_open(fp_onnx_wire *wg, const uint8_t *data, size_t len, const Onnx__ModelProto **mp);
/* The same for the ModelProto in the first `size` bytes of wg's reader, its fields but the main
 * graph, and the main graph's fields but its elements, built as skeletons; the elements are read
 * when they are walked. False when anything is odd or fails (no error: the caller loads the
 * skeleton of the whole file instead). */
bool fp_onnx_wire_open_reader(fp_onnx_wire *wg, uint64_t size, const Onnx__ModelProto **mp);
/* The whole ModelProto serialized at [data, data+len), unpacked in wg by protobuf-c; NULL when it
 * does not unpack or a field number is out of range (fp_pbskel_numbers_valid). */
const Onnx__ModelProto *fp_onnx_wire_whole(fp_onnx_wire *wg, const uint8_t *data, size_t len);

/* Hands every element of GraphProto field `field` of the opened graph to sink->element in file
 * order; *index counts them. False when sink->element says so, or when an element does not unpack
 * (*malformed set). Nodes and usual initializers are read straight from the wire (protobuf-c's
 * unpack costs most of a large graph's load), the rest by protobuf-c. */
bool fp_onnx_wire_elements(fp_onnx_wire *wg, uint32_t field, size_t *index, const fp_onnx_sink *sink, bool *malformed);
/* Whether every element of the opened graph unpacks, as an unpack of the whole graph would need
 * (true when read from a reader: that path gives no verdict of its own). */
bool fp_onnx_wire_elements_valid(fp_onnx_wire *wg);

#endif
