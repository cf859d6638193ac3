/* platform.c - malloc and transparent-huge-page settings of the fuseplan process (platform.h).
 * glibc only; elsewhere, or under AddressSanitizer (whose allocator does not use the heap), the
 * heap is left as it is. */
#include "platform.h"

#include <glib.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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
 * on ResNet-50, and a million-node graph ~1 GB.
 * How: takes what is left of malloc's first top chunk (mostly never touched) for good, so that
 * small requests are not cut from its 4 KiB pages; moves the program break to one page below a
 * 2 MiB boundary and has malloc grow its heap there with one request of heap_reserve() bytes
 * (glibc takes a break moved by someone else as the new start of its top chunk), which it frees
 * again into the top chunk (never trimmed: fp_platform_tune); then advises huge pages over the
 * whole reservation. malloc writes chunk headers only on the page below the boundary and at the
 * end of the request, so the 2 MiB regions in between are untouched when advised and each takes
 * one huge page fault on its first use. A heap that outgrows the reservation goes on in 4 KiB
 * pages. Costs: ~2 MiB more peak RSS, a command that allocates almost nothing (--version) takes
 * the one huge fault for the small ones it saves; the reservation is address space only (commit
 * charge under strict overcommit, where a refused request leaves the heap as it was). Any failure
 * leaves malloc as it was: the advice is advisory. Not under AddressSanitizer, whose allocator
 * does not use the heap. */
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
    if ((uintptr_t)p > start && (uintptr_t)p < start + page && end > start + page)
        (void)madvise((void *)(start + page), end - (start + page), MADV_HUGEPAGE);
    free(p);
#endif
}

void fp_platform_tune(void)
{
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
    (void)mallopt(M_MMAP_MAX, 0);       /* big blocks too come from the heap, in its huge pages */
    (void)mallopt(M_ARENA_MAX, 1);      /* the passes' second thread (ir/par.c) too: a thread's own malloc
                                      arena would be 4 KiB pages, and could not grow past 64 MiB
                                      without mmap */
    (void)mallopt(M_TOP_PAD, 16 << 20); /* grow the heap by 16 MiB steps: fewer brk calls */
    heap_advise_huge();
}
