/* arena.h - bump allocator that owns an IR model and everything in it; freed once. */
#ifndef FP_ARENA_H
#define FP_ARENA_H

#include <stddef.h>

typedef struct fp_arena fp_arena;

fp_arena *fp_arena_new(void);
/* Frees every block the arena handed out. NULL is ignored. */
void fp_arena_free(fp_arena *a);
/* Zeroed memory, 16-byte aligned, valid until fp_arena_free. Aborts on out-of-memory
 * (as g_malloc does); a size whose rounding would overflow is a bug (g_assert). */
void *fp_arena_alloc(fp_arena *a, size_t size);
/* fp_arena_alloc without the zeroing: the caller writes every byte it reads. */
void *fp_arena_alloc_raw(fp_arena *a, size_t size);
/* n elements of size each, with overflow check. */
void *fp_arena_calloc(fp_arena *a, size_t n, size_t size);
void *fp_arena_memdup(fp_arena *a, const void *p, size_t size);
char *fp_arena_strndup(fp_arena *a, const char *s, size_t len);
/* Forgets every allocation, keeping the current block for reuse and freeing the others: a
 * scratch arena reused for many short-lived objects. Every pointer it handed out becomes invalid. */
void fp_arena_reset(fp_arena *a);
/* Lane k (< FP_ARENA_LANES) of a: another arena that a owns, made on first call (then the same
 * one), for objects that walks read one after the other (ir/graph.c: the IR's nodes in one lane,
 * its values in the other): they then lie next to each other instead of between everything else a
 * holds, so that those walks read memory in order. Freed and reset
 * with a, counted in fp_arena_reserved(a). */
#define FP_ARENA_LANES 2
fp_arena *fp_arena_lane(fp_arena *a, unsigned k);
/* Bytes reserved from the system so far (its lane's included). */
size_t fp_arena_reserved(const fp_arena *a);

#endif
