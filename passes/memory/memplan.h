/* memplan.h - offset planning of buffers in one arena (passes/memory/memplan.c).
 *
 * The planners work on a plain array of buffers {size, first, last}: a buffer occupies
 * [offset, offset + size) from step `first` to step `last` inclusive. Two buffers whose step
 * ranges intersect must not intersect in address. Sizes are rounded up to the alignment before
 * planning, and LOAD (the largest sum of live rounded sizes at any step) is computed on the same
 * rounded sizes: no plan with that alignment can have a smaller arena. See docs/memory.md.
 */
#ifndef FP_PASS_MEMPLAN_H
#define FP_PASS_MEMPLAN_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FP_MEMPLAN_ERROR (fp_memplan_error_quark())
GQuark fp_memplan_error_quark(void);
typedef enum { FP_MEMPLAN_ERROR_OVERFLOW } fp_memplan_error_code;

typedef struct {
    uint64_t size;  /* bytes; 0 = occupies nothing (offset 0) */
    uint32_t first; /* first step the buffer is live (its definition) */
    uint32_t last;  /* last step it is live (its last use); first <= last */
} fp_membuf;

#define FP_MEMPLAN_STRATEGIES(X)        \
    X(NAIVE, "naive")                   \
    X(GREEDY_BY_SIZE, "greedy_by_size") \
    X(BEST_FIT, "best_fit")             \
    X(BEST, "best")

typedef enum {
#define X(id, name) FP_MEMPLAN_##id,
    FP_MEMPLAN_STRATEGIES(X)
#undef X
        FP_MEMPLAN_COUNT
} fp_memplan_strategy;

/* "greedy_by_size" ... */
const char *fp_memplan_strategy_name(fp_memplan_strategy s);
/* False when `name` is not a strategy. */
bool fp_memplan_strategy_from_name(const char *name, fp_memplan_strategy *out);

typedef struct {
    uint64_t arena;     /* max over buffers of offset + rounded size */
    uint64_t load;      /* LOAD: max over steps of live rounded bytes (the floor of any plan) */
    uint32_t peak_step; /* first step at which LOAD is reached (0 when nothing is live) */
    const char *method; /* the candidate that produced the plan (static string): for `best`, the
                           winner ("greedy_by_size", "size_lowest_fit", "exact", ...) */
} fp_memplan_result;

/* Rounds size up to a multiple of align (0 or 1 = no rounding); false on overflow. */
bool fp_memplan_align(uint64_t size, uint64_t align, uint64_t *out);

/* LOAD of the buffers with sizes rounded to `align`, and the first step reaching it (peak_step may
 * be NULL). False with an error when a sum overflows 64 bits. O(n + steps). */
bool fp_memplan_load(const fp_membuf *bufs, size_t n, uint64_t align, uint64_t *load, uint32_t *peak_step,
                     GError **error);

/* The naive strategy's arena summed one buffer at a time, in index order, without an array of
 * buffers: fp_memplan_naive_add adds buffer number `index` (then counts it), every buffer in its own
 * block, and stores its offset in *offset (may be NULL; 0 for a size of 0). total is then what
 * fp_memplan_plan with FP_MEMPLAN_NAIVE gives as the arena and the offsets for the same sizes, and an
 * overflow fails with the same error. */
typedef struct {
    uint64_t total;
    size_t index;
} fp_memplan_naive;
bool fp_memplan_naive_add(fp_memplan_naive *nv, uint64_t size, uint64_t align, uint64_t *offset, GError **error);

/* Lifetime-overlapping buffer pairs beyond which every strategy stacks the buffers as naive does
 * (method "naive (over the overlap budget)"): several thousand buffers live at once. The budget is
 * the larger of FP_MEMPLAN_MAX_PAIRS and FP_MEMPLAN_PAIRS_PER_BUF per buffer, so that big real
 * graphs (a few dozen buffers live at a step) are always planned. */
#define FP_MEMPLAN_MAX_PAIRS 10000000u
#define FP_MEMPLAN_PAIRS_PER_BUF 128u

/* Plans offsets for n buffers with strategy s: offsets (n entries, caller-allocated) receive byte
 * offsets, multiples of align; res receives the arena, LOAD and the method. O(n log n) plus the
 * number of (buffer, lifetime-overlapping buffer) pairs, which FP_MEMPLAN_MAX_PAIRS bounds. False
 * with an error only on 64-bit overflow of sizes. */
bool fp_memplan_plan(const fp_membuf *bufs, size_t n, uint64_t align, fp_memplan_strategy s, uint64_t *offsets,
                     fp_memplan_result *res, GError **error);

/* The arena, LOAD and peak step of fp_memplan_plan with the same arguments, without the offsets.
 * For FP_MEMPLAN_BEST, hint (may be NULL) names the method of an earlier plan (of the same buffers
 * at other sizes, say): that candidate is tried first, and when it reaches LOAD the search stops
 * there. The arena is the same either way (`best` keeps the first plan that reaches LOAD, and none
 * is below), but the method is then the hint's where fp_memplan_plan may report an earlier
 * candidate reaching LOAD too. One decode instead of several when the winner stays the same. */
bool fp_memplan_arena(const fp_membuf *bufs, size_t n, uint64_t align, fp_memplan_strategy s, const char *hint,
                      fp_memplan_result *res, GError **error);

/* Checks a plan: every offset is a multiple of align and no two buffers overlapping in time
 * overlap in address. On success stores the arena in *arena (may be NULL); on a violation returns
 * false and, when `bad` is not NULL, the indexes of two offending buffers (or of one misaligned
 * buffer twice). O(n log n). */
bool fp_memplan_verify(const fp_membuf *bufs, size_t n, uint64_t align, const uint64_t *offsets, uint64_t *arena,
                       size_t bad[2]);

#endif
