/* diag.h - diagnostics: findings of passes (a fusion refused, a layout conversion kept, an op we
 * could not infer). Passes append here and never print. */
#ifndef FP_DIAG_H
#define FP_DIAG_H

#include <glib.h>

typedef enum { FP_DIAG_INFO, FP_DIAG_WARNING, FP_DIAG_ERROR } fp_diag_level;

typedef struct {
    fp_diag_level level;
    const char *pass; /* static string: "shapes", "fuse", "layout", ... */
    const char *code; /* static string: a stable machine-readable id, e.g. "shape-unknown-op" */
    char *node;       /* node name or NULL (owned) */
    char *message;    /* one line (owned) */
} fp_diag_entry;

typedef struct {
    GPtrArray *entries; /* fp_diag_entry*, owned */
} fp_diag;

fp_diag *fp_diag_new(void);
void fp_diag_free(fp_diag *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_diag, fp_diag_free)
/* Appends a finding; `node` may be NULL. d may be NULL (the finding is dropped). */
void fp_diag_add(fp_diag *d, fp_diag_level level, const char *pass, const char *code, const char *node, const char *fmt,
                 ...) G_GNUC_PRINTF(6, 7);
/* fp_diag_add with a message already formatted (g_malloc'd, taken over). */
void fp_diag_add_message(fp_diag *d, fp_diag_level level, const char *pass, const char *code, const char *node,
                         char *message);
/* Moves every entry of `from` to the end of `to`, in order; `from` is left empty. */
void fp_diag_move(fp_diag *to, fp_diag *from);
/* The first entry of `code`, or NULL (d may be NULL). */
const fp_diag_entry *fp_diag_find(const fp_diag *d, const char *code);
/* Number of entries at `level` or above. */
guint fp_diag_count(const fp_diag *d, fp_diag_level level);

#endif
