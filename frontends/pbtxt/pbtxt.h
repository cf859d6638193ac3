/* pbtxt.h - protobuf text format ("textproto", protoc --decode output, GE ge_proto dumps) into
 * protobuf-c messages, generic over message descriptors: no per-message code.
 *
 * Supported: nested messages in {} or <> with an optional ':' before them; repeated fields given
 * one by one or as [a, b] lists; enums by name or number; map entries (`attr { key: .. value {..} }`);
 * integers in decimal, hex and octal; floats as `1e-05`, `.5`, `1.0f`, `inf`, `-inf`, `nan`;
 * bools as true/false/True/False/t/f/1/0; strings in single or double quotes with every C escape
 * (\ooo, \xHH, \n, \", \', \\, \uXXXX, ...) and adjacent-string concatenation; `#` comments; ','
 * or ';' after a field; fields named by number (`5: 1`, as protoc prints unknown fields).
 * Not supported: extensions and Any in `[...]`, groups. Errors are one line, prefixed with
 * "line L:C: " (1-based line and byte column).
 */
#ifndef FP_PBTXT_H
#define FP_PBTXT_H

#include <glib.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#define FP_PBTXT_ERROR (fp_pbtxt_error_quark())
GQuark fp_pbtxt_error_quark(void);
typedef enum {
    FP_PBTXT_ERROR_SYNTAX, /* malformed text: bad token, missing brace, bad escape */
    FP_PBTXT_ERROR_FIELD,  /* unknown field, duplicate field, value of the wrong kind */
    FP_PBTXT_ERROR_RANGE,  /* a number out of its type's range */
    FP_PBTXT_ERROR_LIMIT,  /* nesting deeper than FP_PBTXT_MAX_DEPTH, more than FP_PBTXT_MAX_MESSAGES
                              messages, message over 2 GiB (or FP_PBSKEL_MAX_UNPACKED unpacked) */
} fp_pbtxt_error_code;

#define FP_PBTXT_MAX_DEPTH 100
/* Messages in one text: "op{}" is 5 bytes of text but hundreds unpacked, and parsing takes time;
 * a real model's dump under 10 MB holds well under a million. */
#define FP_PBTXT_MAX_MESSAGES 2000000

enum {
    /* Skip fields the schema does not know (with their values) instead of failing. */
    FP_PBTXT_SKIP_UNKNOWN = 1u << 0,
};

/* Parses text[0..len) as a message of type d. Returns a message the caller frees with
 * protobuf_c_message_free_unpacked(msg, NULL), or NULL with an FP_PBTXT_ERROR naming the line and
 * column and the field. Never reads outside the buffer; `text` need not be NUL-terminated.
 * *n_skipped (may be NULL) receives the number of unknown fields skipped. */
ProtobufCMessage *fp_pbtxt_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len, unsigned flags,
                                 unsigned *n_skipped, GError **error);

/* The same, stopping at the wire encoding: returns the serialized message (tests, tools). */
GBytes *fp_pbtxt_to_wire(const ProtobufCMessageDescriptor *d, const char *text, size_t len, unsigned flags,
                         GError **error);

/* Called for each field name in file order while walking text without a schema: `depth` 0 for
 * top-level fields, `message` true when the value is a {...} or <...> block. Return false to stop. */
typedef bool (*fp_pbtxt_peek_fn)(unsigned depth, const char *name, bool message, void *user);

/* Walks text (possibly only the head of a file) calling fn for each field. Returns true when the
 * walk ended because fn returned false or the text ended cleanly; false when the text stops being
 * valid protobuf text (a truncated head also ends so, after the fields before the cut). */
bool fp_pbtxt_peek(const char *text, size_t len, fp_pbtxt_peek_fn fn, void *user);

/* Decodes the C escapes of a string literal's body s[0..n) (no quotes) and appends the bytes to
 * out. False on a malformed escape, with *bad_at (may be NULL) set to its offset in s. */
bool fp_pbtxt_unescape(const char *s, size_t n, GByteArray *out, size_t *bad_at);

/* Parses a float literal as text format writes it: decimal or exponent form with an optional
 * f/F suffix, integer, inf, infinity, nan (any case), optional leading '-'. The whole of s[0..n)
 * must be consumed. */
bool fp_pbtxt_parse_real(const char *s, size_t n, double *out);

#endif
