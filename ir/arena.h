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
/* Blocks handed out by any arena of the process already faulted in by the background thread that
 * a big model starts (arena.c, "prefaulting"). */
unsigned fp_arena_prefaulted(void);
/* Blocks the background thread holds faulted in and not yet handed out (for tests and benches). */
unsigned fp_arena_prefault_ready(void);
/* A hint that malloc's heap will soon grow by about `bytes`: the background thread of
 * "prefaulting" (started if need be) faults that much of the heap's huge-page reservation in,
 * beyond what malloc uses now, while the caller goes on. Only pages the heap will use should be
 * asked for: the rest stays resident unused. No effect without the reservation (under
 * AddressSanitizer, or when fp_arena_tune_malloc was not called). */
void fp_arena_prefault_heap(size_t bytes);
/* A hint that about `bytes` more will be allocated from a soon (a frontend that has counted a
 * big model's nodes): from FP_ARENA_EXPECT_BIG bytes on, a takes its largest blocks from now on
 * (no more doubling from small ones) and the background thread of "prefaulting" starts now, so
 * that it has blocks faulted in before a asks for them: `now` bytes of them (at most 1 GiB) as
 * fast as it can, then two ahead of what the arenas ask for. `now` should not exceed what the
 * process's arenas will use: the rest stays resident unused. Smaller amounts change nothing. */
#define FP_ARENA_EXPECT_BIG ((size_t)32 << 20)
void fp_arena_expect(fp_arena *a, size_t bytes, size_t now);
/* Lane k (< FP_ARENA_LANES) of a: another arena that a owns, made on first call (then the same
 * one), for objects that walks read one after the other (ir/graph.c: the IR's nodes in one lane,
 * its values in the other): they then lie next to each other instead of between everything else a
 * holds, which made the analysis of 100k-1M nodes faster (docs/benchmarks.md). Freed and reset
 * with a, counted in fp_arena_reserved(a), announced big with it by fp_arena_expect(a, ...). */
#define FP_ARENA_LANES 2
fp_arena *fp_arena_lane(fp_arena *a, unsigned k);
/* Bytes reserved from the system so far (its lane's included). */
size_t fp_arena_reserved(const fp_arena *a);

/* Process-wide malloc settings for the passes' temporaries (call once, first thing in main):
 * every block, however big, comes from malloc's heap instead of its own mapping, and the heap is
 * not trimmed, so the arrays each pass allocates per node (liveness, plans, orders, costs) reuse
 * pages already touched instead of faulting in fresh ones on every pass (docs/benchmarks.md); and
 * the heap grows from a 2 MiB boundary into a reservation advised to use transparent huge pages
 * (arena.c: heap_advise_huge). */
void fp_arena_tune_malloc(void);

#endif
