/* intern_internal.h - what ir/graph.c needs of the intern tables (ir/intern.c) beyond intern.h:
 * setting them up with a model, and the entry of a name, which holds the value of that name in one
 * graph (the index of values by name is graph.c's). Not for use outside ir/. */
#ifndef FP_INTERN_INTERNAL_H
#define FP_INTERN_INTERNAL_H

#include <stdbool.h>

#include "graph.h"

/* The entry of an interned name: the string behind a header. */
typedef struct {
    fp_value *val; /* the value of this name in val->graph, or NULL (set by ir/graph.c) */
    uint32_t len;  /* of s, or UINT32_MAX for that length and longer ones */
    char s[];      /* NUL-terminated */
} fp_intern_entry;

/* Makes m->strings and m->blobs, empty; fp_intern_tables_free frees them. */
void fp_intern_tables_new(fp_model *m);
void fp_intern_tables_free(fp_model *m);

/* The hash of the n bytes at s that the table of names looks them up by. */
uint64_t fp_intern_hash(const char *s, size_t n);
/* fp_intern_prefetch of a name whose fp_intern_hash is h. */
void fp_intern_prefetch_hash(const fp_model *m, uint64_t h);
/* The entry of the n bytes at s (no NUL among them), whose fp_intern_hash is h; added (val NULL)
 * when absent and `add`, else NULL. Entries never move. */
fp_intern_entry *fp_intern_entry_hashed(fp_model *m, const char *s, size_t n, uint64_t h, bool add);
/* fp_intern_entry_hashed, hashing s. */
fp_intern_entry *fp_intern_entry_of(fp_model *m, const char *s, size_t n, bool add);
/* Makes room for `more` new names without the table growing on the way. A hint. */
void fp_intern_reserve(fp_model *m, size_t more);

#endif
