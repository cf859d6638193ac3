/* pagefault.c - fp_bench_pagefault: the cost of a first touch of anonymous memory on this machine,
 * for bench/run.sh (never part of the product build or of make test).
 *
 * Every page fuseplan touches for the first time is a page fault; on bare metal one costs well
 * under a microsecond, on some virtual machines tens of microseconds, which then dominates the
 * wall time of small runs. Maps 64 MiB, writes one byte per 4 KiB page, prints one line:
 * us_per_fault=X (median of 5 rounds). Exit 2 when the mapping fails.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SIZE ((size_t)64 << 20)
#define PAGE 4096
#define ROUNDS 5

static int cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    double us[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        volatile char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("fp_bench_pagefault: mmap");
            return 2;
        }
        gint64 t0 = g_get_monotonic_time();
        for (size_t i = 0; i < SIZE; i += PAGE)
            p[i] = 1;
        us[r] = (double)(g_get_monotonic_time() - t0) / (double)(SIZE / PAGE);
        munmap((void *)p, SIZE);
    }
    qsort(us, ROUNDS, sizeof us[0], cmp_double);
    printf("us_per_fault=%.3f\n", us[ROUNDS / 2]);
    return 0;
}
