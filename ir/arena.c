/* arena.c - bump allocator: blocks of growing size, large requests get their own block. Under
 * AddressSanitizer what fp_arena_reset forgets is poisoned until handed out again, so that a
 * pointer kept past a reset of a scratch arena is reported where it is used. */
#include "arena.h"

#include <glib.h>
#include <limits.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    size_t zero_from; /* data[zero_from..size) is known to be zero (fresh from mmap, never handed out) */
    void *map;      /* the mapping holding the block (block_alloc), NULL when from g_malloc */
    size_t map_len;
    _Alignas(16) unsigned char data[];
} block;

static void block_free(block *b);

struct fp_arena {
    block *head;
    size_t next_size;
    size_t reserved;
    bool big;        /* fp_arena_expect said a big model is coming */
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

/* Asks for transparent huge pages on the 2 MiB-aligned part of a big block (Linux, THP in
 * "madvise" mode): a model of a million nodes then takes thousands of page faults instead of
 * hundreds of thousands, and fewer TLB misses. Only blocks of 4 MiB and more, so that small
 * models keep their small footprint. Advisory: ignored where unsupported. */
static void advise_huge(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (size < 2 * huge)
        return;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1), end = ((uintptr_t)p + size) & ~(huge - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

/* A mapping for a block of `bytes` (>= 4 MiB), 2 MiB-aligned and advised to use huge pages, with
 * its header's map fields set; NULL when mmap fails. */
static block *map_block(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    size_t len = (bytes + 2 * huge - 1) & ~(huge - 1); /* room to align the start */
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    block *b = (block *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
    advise_huge(b, bytes);
    b->zero_from = 0;
    b->map = map;
    b->map_len = len;
    return b;
}

/* ---- prefaulting: a big model's blocks are faulted in ahead, on another core ----
 * On a virtual machine the first touch of fresh memory is dear: ~1-2 ms per 2 MiB huge page when
 * the host has to back it (docs/benchmarks.md), a third of a million-node `report`. Once the
 * process has mapped PREFAULT_AFTER blocks of the largest size (a big model: ~30 MiB of IR), or a
 * frontend said a big model is coming (fp_arena_expect), a background thread keeps
 * PREFAULT_READY more of them mapped and touched, and block_alloc takes
 * those first; it never waits for the thread. When the frontend said how much is coming, the
 * thread goes on at once to the part it is sure of (fp_arena_expect's `now`), then faults in the
 * parts of the heap asked for (fp_arena_prefault_heap), PREFAULT_HEAP_STEP at a time: on a
 * machine whose host takes back memory freed for ~2 s (free page reporting), what is taken in
 * the first ~0.2 s of a run is still backed when the run before it has just exited, what is taken
 * later may not be (docs/benchmarks.md #64). Costs: one thread, and at most PREFAULT_READY blocks
 * (16 MiB) plus what an estimate overshoots resident and never used. Small models never start it. */
#define PREFAULT_AFTER 4
#define PREFAULT_READY 2
#define PREFAULT_MAX 128       /* blocks the thread may hold ready at once (1 GiB) */
#define PREFAULT_HEAP_STEP ((uintptr_t)32 << 20) /* heap populated per turn, between blocks */
#define BIG_BLOCK_BYTES (sizeof(block) + ARENA_MAX_BLOCK)

static struct {
    GMutex lock; /* guards the rest; a zero-initialized static needs no g_mutex_init */
    GCond taken_one;
    unsigned mapped; /* blocks of BIG_BLOCK_BYTES asked for so far */
    bool started;
    block *ready[PREFAULT_MAX];
    unsigned n_ready;
    unsigned budget; /* blocks asked for (mapped) and ready together that the thread makes, when
                        more than PREFAULT_READY ahead (fp_arena_expect) */
    unsigned handed; /* blocks handed out faulted in (fp_arena_prefaulted) */
    uintptr_t heap_from, heap_to; /* part of the heap to fault in (fp_arena_prefault_heap), empty: none */
} pf;

/* The heap's part advised for huge pages (heap_advise_huge); 0, 0 when none. */
static uintptr_t heap_start, heap_end;

/* Whether the thread should fault another block in (pf.lock held). */
static bool want_more(void)
{
    return pf.n_ready < PREFAULT_MAX && (pf.n_ready < PREFAULT_READY || pf.mapped + pf.n_ready < pf.budget);
}

static gpointer prefault_main(gpointer unused)
{
    (void)unused;
    for (;;) {
        g_mutex_lock(&pf.lock);
        while (!want_more() && pf.heap_from == pf.heap_to)
            g_cond_wait(&pf.taken_one, &pf.lock);
        bool want_block = want_more();
        uintptr_t from = pf.heap_from, to = want_block ? from : MIN(pf.heap_to, from + PREFAULT_HEAP_STEP);
        pf.heap_from = to;
        if (pf.heap_from == pf.heap_to)
            pf.heap_from = pf.heap_to = 0;
        g_mutex_unlock(&pf.lock);
#ifdef MADV_POPULATE_WRITE
        /* malloc may be using these pages already: populating faults them in without writing */
        if (to > from)
            (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#endif
        if (!want_block)
            continue;
        block *b = map_block(BIG_BLOCK_BYTES);
        if (!b)
            return NULL; /* block_alloc maps its own, as without the thread */
        volatile unsigned char *p = (unsigned char *)b;
        for (size_t at = sizeof(block); at < BIG_BLOCK_BYTES; at += 4096)
            p[at] = 0; /* the page is zero already: the write only faults it in */
        g_mutex_lock(&pf.lock);
        pf.ready[pf.n_ready++] = b; /* handed over under the lock: its writes are seen */
        g_mutex_unlock(&pf.lock);
    }
}

static void prefault_start(void)
{
    GThread *t = g_thread_try_new("fp-prefault", prefault_main, NULL, NULL);
    if (t)
        g_thread_unref(t); /* runs until the process exits */
}

/* Starts the thread unless it runs; with to > from, also asks it to fault heap [from, to) in. */
static void prefault_request(uintptr_t from, uintptr_t to)
{
    bool start = false;
    g_mutex_lock(&pf.lock);
    if (to > from) {
        if (pf.heap_to > pf.heap_from) { /* one still pending: cover both */
            from = MIN(from, pf.heap_from);
            to = MAX(to, pf.heap_to);
        }
        pf.heap_from = from;
        pf.heap_to = to;
        g_cond_signal(&pf.taken_one);
    }
    if (!pf.started)
        start = pf.started = true;
    g_mutex_unlock(&pf.lock);
    if (start)
        prefault_start();
}

/* A block of BIG_BLOCK_BYTES the thread faulted in, or NULL (none ready, or not started); starts
 * the thread once enough have been asked for. */
static block *prefaulted(void)
{
    block *b = NULL;
    g_mutex_lock(&pf.lock);
    if (pf.n_ready) {
        b = pf.ready[--pf.n_ready];
        pf.handed++;
        g_cond_signal(&pf.taken_one);
    }
    bool start = ++pf.mapped >= PREFAULT_AFTER && !pf.started;
    g_mutex_unlock(&pf.lock);
    if (start)
        prefault_request(0, 0);
    return b;
}

static void expect_big(fp_arena *a)
{
    a->big = true;
    a->next_size = ARENA_MAX_BLOCK;
    for (int k = 0; k < FP_ARENA_LANES; k++)
        if (a->lanes[k])
            expect_big(a->lanes[k]);
}

void fp_arena_expect(fp_arena *a, size_t bytes, size_t now)
{
    if (bytes < FP_ARENA_EXPECT_BIG)
        return;
    expect_big(a);
    g_mutex_lock(&pf.lock);
    pf.budget = MAX(pf.budget, pf.mapped + (unsigned)MIN(now / ARENA_MAX_BLOCK, PREFAULT_MAX));
    g_cond_signal(&pf.taken_one); /* a thread waiting for a block to be taken has work now */
    g_mutex_unlock(&pf.lock);
    prefault_request(0, 0);
}

unsigned fp_arena_prefaulted(void)
{
    g_mutex_lock(&pf.lock);
    unsigned n = pf.handed;
    g_mutex_unlock(&pf.lock);
    return n;
}

unsigned fp_arena_prefault_ready(void)
{
    g_mutex_lock(&pf.lock);
    unsigned n = pf.n_ready;
    g_mutex_unlock(&pf.lock);
    return n;
}

void fp_arena_prefault_heap(size_t bytes)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && defined(MADV_POPULATE_WRITE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!heap_end || !bytes)
        return;
    /* malloc's top chunk ends at the break: the heap grows from its start */
    uintptr_t brk = (uintptr_t)sbrk(0), top = brk - mallinfo2().keepcost;
    uintptr_t from = MAX((top + huge - 1) & ~(huge - 1), heap_start);
    uintptr_t to = MIN(from + MIN(bytes, heap_end - MIN(from, heap_end)), heap_end);
    if (to > from)
        prefault_request(from, to);
#else
    (void)bytes;
#endif
}

/* A block of `bytes`: blocks of 4 MiB and more are mapped on their own, 2 MiB-aligned, and advised
 * to use huge pages (malloc would place them in its heap, where only their aligned middle could be,
 * or map them at 4 KiB alignment); those of the largest size may come faulted in already
 * (prefaulted); smaller ones come from g_malloc. Aborts on out-of-memory. */
static block *block_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    block *b = bytes == BIG_BLOCK_BYTES ? prefaulted() : NULL;
    if (!b && bytes >= 2 * huge && bytes <= SIZE_MAX - 2 * huge)
        b = map_block(bytes);
    if (b)
        return b;
    b = g_malloc(bytes);
    b->map = NULL;
    b->zero_from = SIZE_MAX;
    return b;
}

static void block_free(block *b)
{
    UNPOISON(b->data, b->size); /* the memory goes back to malloc or the system */
    if (b->map)
        munmap(b->map, b->map_len);
    else
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

/* Zeroes data[at..at+size) of b where it may not be zero yet: a mapped block is zero from the
 * system, so only what a reset gave back needs clearing (no write, and no page touched, for the
 * rest: the caller touches what it uses). Memory past b->used is never written, so zero_from
 * moves only on a reset. */
static inline void clear(block *b, size_t at, size_t size)
{
    if (at >= b->zero_from)
        return;
    memset(b->data + at, 0, MIN(size, b->zero_from - at));
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
                clear(nb, 0, size);
            return nb->data;
        }
        nb->next = b;
        a->head = b = nb;
    }
    size_t at = b->used;
    b->used += size;
    UNPOISON(b->data + at, size);
    if (zero)
        clear(b, at, size);
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

/* A lane starts with the smallest blocks, or as announced big when a was (fp_arena_expect). */
fp_arena *fp_arena_lane(fp_arena *a, unsigned k)
{
    g_assert(k < FP_ARENA_LANES);
    if (!a->lanes[k]) {
        a->lanes[k] = fp_arena_new();
        if (a->big)
            expect_big(a->lanes[k]);
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
    if (keep->zero_from != SIZE_MAX && keep->used > keep->zero_from)
        keep->zero_from = keep->used; /* what was handed out may be dirty now */
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

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && defined(MADV_HUGEPAGE) && \
    !defined(__SANITIZE_ADDRESS__) /* mallinfo2: glibc 2.33 */
/* Address space the heap grows by once, up front, advised for huge pages: 1 GiB, or a quarter
 * of the physical memory when that is less (never below 16 MiB). Only pages touched later become
 * resident. */
static size_t heap_reserve(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)1 << 30;
    if (pages > 0 && page > 0 && (size_t)pages / 4 < cap / (size_t)page)
        cap = (size_t)pages / 4 * (size_t)page;
    return MAX(cap, (size_t)16 << 20);
}

#endif

/* Backs the heap with transparent huge pages (THP in "madvise" mode): on a virtual machine a first
 * touch of a 4 KiB page can cost ~12-15 us, and the fault of a whole 2 MiB huge page ~130 us once
 * the machine has recycled huge pages (more the first time: bench/pagefault.c), so one huge page is
 * cheaper once ~10 of its small pages would be touched; `fuseplan report` touches ~40-60 heap pages
 * on ResNet-50, and a million-node graph ~1 GB (89,000 faults and ~1.2 s of its ~6.5 s, before).
 * How: takes what is left of malloc's first top chunk (mostly never touched) for good, so that
 * small requests are not cut from its 4 KiB pages; moves the program break to one page below a
 * 2 MiB boundary and has malloc grow its heap there with one request of heap_reserve() bytes
 * (glibc takes a break moved by someone else as the new start of its top chunk), which it frees
 * again into the top chunk (never trimmed: fp_arena_tune_malloc); then advises huge pages over the
 * whole reservation. malloc writes chunk headers only on the page below the boundary and at the
 * end of the request, so the 2 MiB regions in between are untouched when advised and each takes
 * one huge page fault on its first use. A heap that outgrows the reservation goes on in 4 KiB
 * pages. Costs: ~2 MiB more peak RSS, a command that allocates almost nothing (--version) takes
 * the one huge fault for the small ones it saves; the reservation is address space only (commit
 * charge under strict overcommit, where a refused request leaves the heap as it was). Any failure
 * leaves malloc as it was: the advice is advisory. Not under AddressSanitizer, whose allocator
 * does not use the heap. (MADV_COLLAPSE of pages already touched would avoid the break games, but
 * took 0.4-5 ms here.) */
static void heap_advise_huge(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && defined(MADV_HUGEPAGE) && \
    !defined(__SANITIZE_ADDRESS__) /* mallinfo2: glibc 2.33 */
    const uintptr_t huge = (uintptr_t)2 << 20, page = 4096;
    static void *old_top; /* malloc's first top chunk, never freed */
    size_t top = mallinfo2().keepcost;
    if (!old_top && top > 2 * page)
        old_top = malloc(top - 64);
    uintptr_t brk0 = (uintptr_t)sbrk(0);
    if (brk0 == (uintptr_t)-1)
        return;
    uintptr_t start = ((brk0 + page + huge - 1) & ~(huge - 1)) - page;
    if (start != brk0 && sbrk((intptr_t)(start - brk0)) == (void *)-1)
        return;
    void *p = malloc(heap_reserve()); /* beyond the top chunk: malloc grows the heap from `start` */
    uintptr_t end = (uintptr_t)sbrk(0) & ~(huge - 1);
    if ((uintptr_t)p > start && (uintptr_t)p < start + page && end > start + page &&
        madvise((void *)(start + page), end - (start + page), MADV_HUGEPAGE) == 0) {
        heap_start = start + page;
        heap_end = end;
    }
    free(p);
#endif
}

void fp_arena_tune_malloc(void)
{
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
    (void)mallopt(M_MMAP_MAX, 0); /* big blocks too come from the heap, in its huge pages */
    (void)mallopt(M_ARENA_MAX, 1); /* other threads (ir/par.c) too: a thread's own malloc arena
                                      would be 4 KiB pages, and could not grow past 64 MiB without mmap */
    (void)mallopt(M_TOP_PAD, 16 << 20); /* grow the heap by 16 MiB steps: fewer brk calls */
    heap_advise_huge();
}
