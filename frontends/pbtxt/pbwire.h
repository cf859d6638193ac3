/* pbwire.h - a protobuf wire-format writer driven by protobuf-c field descriptors.
 *
 * The text and JSON readers parse into wire bytes and let protobuf-c unpack them, so the result
 * is an ordinary unpacked message (free it with protobuf_c_message_free_unpacked(msg, NULL)) and
 * no reader touches protobuf-c's struct layout. Nested messages are built one buffer per depth:
 * fp_pbwire_begin() opens a child, fp_pbwire_end() emits it, length-prefixed, into its parent.
 */
#ifndef FP_PBWIRE_H
#define FP_PBWIRE_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

/* Deepest message nesting the writer accepts (readers check it before calling begin). */
#define FP_PBWIRE_MAX_DEPTH 100

typedef struct fp_pbwire fp_pbwire;

fp_pbwire *fp_pbwire_new(void);
void fp_pbwire_free(fp_pbwire *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_pbwire, fp_pbwire_free)

/* Current nesting depth (0 = the top-level message). */
unsigned fp_pbwire_depth(const fp_pbwire *w);
/* Opens a nested message; the caller keeps depth below FP_PBWIRE_MAX_DEPTH (asserted). */
void fp_pbwire_begin(fp_pbwire *w);
/* Closes the innermost nested message and writes it as field `field` of its parent. False when
 * the message grew past 2 GiB (the wire format's limit). */
bool fp_pbwire_end(fp_pbwire *w, uint32_t field);

void fp_pbwire_varint(fp_pbwire *w, uint32_t field, uint64_t v);
void fp_pbwire_fixed32(fp_pbwire *w, uint32_t field, uint32_t v);
void fp_pbwire_fixed64(fp_pbwire *w, uint32_t field, uint64_t v);
void fp_pbwire_bytes(fp_pbwire *w, uint32_t field, const void *data, size_t len);

/* Writes an integer to field f of an integer, enum or bool type; the value is `neg ? -mag : mag`.
 * Returns false (writing nothing) when the value is out of the type's range or f is not of such
 * a type. */
bool fp_pbwire_int(fp_pbwire *w, const ProtobufCFieldDescriptor *f, bool neg, uint64_t mag);
/* Writes a float or double field (a double is narrowed to float for FLOAT). False if f is neither. */
bool fp_pbwire_real(fp_pbwire *w, const ProtobufCFieldDescriptor *f, double v);

/* True when the whole buffer stayed under 2 GiB (checked by fp_pbwire_unpack too) and, after
 * fp_pbwire_unpack, when the message unpacked within FP_PBSKEL_MAX_UNPACKED bytes. */
bool fp_pbwire_ok(const fp_pbwire *w);

/* Unpacks the top-level bytes as a message of type d (depth must be 0). NULL when protobuf-c
 * rejects them (e.g. a proto2 required field is missing) or the size limit was exceeded. */
ProtobufCMessage *fp_pbwire_unpack(fp_pbwire *w, const ProtobufCMessageDescriptor *d);

/* The top-level bytes written so far (valid until the next write). */
const uint8_t *fp_pbwire_data(const fp_pbwire *w, size_t *len);

#endif
