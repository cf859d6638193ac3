/* arena.c - bump allocator: blocks of growing size, large requests get their own block. Under
 * AddressSanitizer what fp_arena_reset forgets is poisoned until handed out again, so that a
 * pointer kept past a reset of a scratch arena is reported where it is used. */
#include "arena.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_ALIGN 16
#define ARENA_FIRST_BLOCK (64 * 1024)
#define ARENA_MAX_BLOCK (8 * 1024 * 1024)

typedef struct block {
    struct block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} block;

static void block_free(block *b);

struct fp_arena {
    block *head;
    size_t next_size;
    size_t reserved;
    fp_arena *lanes[FP_ARENA_LANES]; /* fp_arena_lane, NULL until asked for */
};

fp_arena *fp_arena_new(void)
{
    fp_arena *a = g_new0(fp_arena, 1);
    a->next_size = ARENA_FIRST_BLOCK;
    return a;
}

void fp_arena_free(fp_arena *a)
{
    if (!a)
        return;
    for (int k = 0; k < FP_ARENA_LANES; k++)
        fp_arena_free(a->lanes[k]);
    for (block *b = a->head, *n; b; b = n) {
        n = b->next;
        block_free(b);
    }
    g_free(a);
}

/* A block of `bytes` from g_malloc, not zeroed: its pages are touched only as it is handed out.
 * Aborts on out-of-memory. */
static block *block_alloc(size_t bytes) { return g_malloc(bytes); }

static void block_free(block *b)
{
    UNPOISON(b->data, b->size); /* the memory goes back to malloc */
    g_free(b);
}

static block *new_block(fp_arena *a, size_t need)
{
    size_t size = need > a->next_size ? need : a->next_size;
    if (a->next_size < ARENA_MAX_BLOCK)
        a->next_size *= 2;
    g_assert(size <= SIZE_MAX - sizeof(block));
    block *b = block_alloc(sizeof(block) + size);
    b->size = size;
    b->used = 0;
    a->reserved += size;
    return b;
}

/* fp_arena_alloc, zeroing only when `zero`. */
static inline void *arena_alloc(fp_arena *a, size_t size, bool zero)
{
    g_assert(size <= SIZE_MAX - ARENA_ALIGN);
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0)
        size = ARENA_ALIGN;
    block *b = a->head;
    if (!b || b->size - b->used < size) {
        block *nb = new_block(a, size);
        if (b && size > a->next_size / 4 && b->size - b->used >= ARENA_ALIGN) {
            /* a big one-off request: keep the current block as head for small ones */
            nb->next = b->next;
            b->next = nb;
            nb->used = size;
            UNPOISON(nb->data, size);
            if (zero)
                memset(nb->data, 0, size);
            return nb->data;
        }
        nb->next = b;
        a->head = b = nb;
    }
    size_t at = b->used;
    b->used += size;
    UNPOISON(b->data + at, size);
    if (zero)
        memset(b->data + at, 0, size);
    return b->data + at;
}

void *fp_arena_alloc(fp_arena *a, size_t size) { return arena_alloc(a, size, true); }
void *fp_arena_alloc_raw(fp_arena *a, size_t size) { return arena_alloc(a, size, false); }

void *fp_arena_calloc(fp_arena *a, size_t n, size_t size)
{
    size_t total;
    gboolean ok = g_size_checked_mul(&total, n, size);
    g_assert(ok);
    return fp_arena_alloc(a, total);
}

void *fp_arena_memdup(fp_arena *a, const void *p, size_t size)
{
    void *q = fp_arena_alloc(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

char *fp_arena_strndup(fp_arena *a, const char *s, size_t len)
{
    g_assert(len < SIZE_MAX);
    char *q = arena_alloc(a, len + 1, false);
    if (len)
        memcpy(q, s, len);
    q[len] = 0;
    return q;
}

/* A lane starts with the smallest blocks. */
fp_arena *fp_arena_lane(fp_arena *a, unsigned k)
{
    g_assert(k < FP_ARENA_LANES);
    if (!a->lanes[k]) {
        a->lanes[k] = fp_arena_new();
    }
    return a->lanes[k];
}

void fp_arena_reset(fp_arena *a)
{
    for (int k = 0; k < FP_ARENA_LANES; k++)
        if (a->lanes[k])
            fp_arena_reset(a->lanes[k]);
    block *keep = a->head;
    if (!keep)
        return;
    for (block *b = keep->next, *n; b; b = n) {
        n = b->next;
        block_free(b);
    }
    keep->next = NULL;
    keep->used = 0;
    POISON(keep->data, keep->size);
    a->reserved = keep->size;
}

size_t fp_arena_reserved(const fp_arena *a)
{
    size_t n = a->reserved;
    for (int k = 0; k < FP_ARENA_LANES; k++)
        n += a->lanes[k] ? fp_arena_reserved(a->lanes[k]) : 0;
    return n;
}
