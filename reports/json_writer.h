/* json_writer.h - the one way fuseplan writes JSON: a document written piece by piece, byte for
 * byte as json-glib's generator (pretty, indent 2) writes the same document built as a tree
 * (tests/test_reports.c compares the two). A tree costs kilobytes per element and report's ops
 * and fusions are as long as the model: `report -f json` on a million nodes streams its document
 * in constant memory instead. Strings, member names and floating-point numbers are formatted by
 * json-glib itself (no hand escaping); only the layout (indentation, separators) is written here. */
#ifndef FP_JSON_WRITER_H
#define FP_JSON_WRITER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct fp_jsonw fp_jsonw;

/* A writer that keeps the document in memory (fp_jsonw_finish). */
fp_jsonw *fp_jsonw_new(void);
/* The document written, with a final newline; w is freed. Every container
 * begun must have been ended (g_assert). */
char *fp_jsonw_finish(fp_jsonw *w, gsize *len);
/* A writer whose text goes to path (stdout when NULL or "-") about a mebibyte at a time as it is
 * written, so that the document is never whole in memory; a file is replaced only by a successful
 * fp_jsonw_close (reports/output.h). NULL with error set when path cannot be opened. */
fp_jsonw *fp_jsonw_open(const char *path, GError **error);
/* Ends a writer of fp_jsonw_open: the rest of the text and the final newline, then the file
 * replaced. False with error set when a write failed (the first failure stops the writes). w is
 * freed. */
bool fp_jsonw_close(fp_jsonw *w, GError **error);
/* Frees w and drops what it wrote (on an error path: a file being written is removed). NULL is
 * ignored. */
void fp_jsonw_free(fp_jsonw *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_jsonw, fp_jsonw_free)

/* Containers and values. `member` names the value inside an object and must be NULL inside an
 * array and for the document itself (g_assert); member names are kept by pointer for the life of
 * w (string literals). */
void fp_jsonw_begin_object(fp_jsonw *w, const char *member);
void fp_jsonw_end_object(fp_jsonw *w);
void fp_jsonw_begin_array(fp_jsonw *w, const char *member);
void fp_jsonw_end_array(fp_jsonw *w);
/* A NULL string and a non-finite number are written as null; an unsigned value above INT64_MAX is
 * clamped. */
void fp_jsonw_str(fp_jsonw *w, const char *member, const char *v);
/* fp_jsonw_str for strings from a small set that stay valid for the life of w (operator types,
 * rule ids, enum names): each is escaped once. */
void fp_jsonw_name(fp_jsonw *w, const char *member, const char *v);
void fp_jsonw_int(fp_jsonw *w, const char *member, gint64 v);
void fp_jsonw_uint(fp_jsonw *w, const char *member, uint64_t v);
void fp_jsonw_num(fp_jsonw *w, const char *member, double v);
void fp_jsonw_bool(fp_jsonw *w, const char *member, bool v);
void fp_jsonw_null(fp_jsonw *w, const char *member);
/* fp_jsonw_int, or null when v is negative (unknown, not asked). */
void fp_jsonw_int_or_null(fp_jsonw *w, const char *member, gint64 v);

#endif
