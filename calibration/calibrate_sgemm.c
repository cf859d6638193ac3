/* calibrate_sgemm.c - the SGEMM of `fuseplan calibrate` (calibrate.h): its micro-kernels, picked
 * at run time, and the blocked product around them.
 *
 * SGEMM uses the classic five-loop blocking (Goto and van de Geijn; BLIS): B is packed into
 * KC x NC blocks of NR-column panels, A into MC x KC blocks of MR-row panels, and an MR x NR
 * micro-kernel keeps its tile of C in registers for a whole KC-long rank-k update. The
 * micro-kernel is picked at run time (CPUID, cpu_has); the AVX2 and AVX-512 ones are
 * compiled with __attribute__((target)) so the binary itself needs only baseline x86-64.
 */
#include "calibrate_internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define FP_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

#define KC 256       /* depth of one packed block: A panel (MR x KC) + B panel (KC x NR) stay in L1/L2 */
#define MC_PANELS 16 /* MC = MR * MC_PANELS rows of A per packed block (L2) */
#define NC 4096      /* columns of B per packed block (L3) */
#define BUF_ALIGN 64

/* C[mr x nr] += T[mr x nr] (row stride ldt): the edge tiles of every micro-kernel. */
static void tile_add(float *c, size_t ldc, const float *t, size_t ldt, size_t mr, size_t nr)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] += t[i * ldt + j];
}

/* ---- micro-kernels: C[mr x nr] += Ap (kc x MR, k-major) * Bp (kc x NR, k-major) ---- */

typedef float v4f __attribute__((vector_size(16), __may_alias__));

/* 4x8 tile with 16-byte GCC vectors: SSE2 on x86-64, NEON or scalar code elsewhere. */
/* clang-format off */
static void ukernel_portable(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t mr, size_t nr)
{
    v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
    for (size_t p = 0; p < kc; p++, a += 4, b += 8) {
        v4f b0 = *(const v4f *)b, b1 = *(const v4f *)(b + 4);
#define P_ROW(i)                                      \
    {                                                 \
        v4f ai = {a[i], a[i], a[i], a[i]};            \
        c##i##0 += ai * b0;                           \
        c##i##1 += ai * b1;                           \
    }
        P_ROW(0) P_ROW(1) P_ROW(2) P_ROW(3)
#undef P_ROW
    }
    v4f t[8] = {c00, c01, c10, c11, c20, c21, c30, c31};
    tile_add(c, ldc, (const float *)t, 8, mr, nr);
}

#ifdef FP_X86
/* 6x16 tile: 12 ymm accumulators, 2 loads of B and 6 broadcasts of A per 12 FMAs. */
__attribute__((target("avx2,fma"))) static void ukernel_avx2(size_t kc, const float *a, const float *b, float *c,
                                                             size_t ldc, size_t mr, size_t nr)
{
    __m256 z = _mm256_setzero_ps();
    __m256 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    for (size_t p = 0; p < kc; p++, a += 6, b += 16) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), ai;
#define A2_ROW(i)                                     \
    ai = _mm256_broadcast_ss(a + i);                  \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);       \
    c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);
        A2_ROW(0) A2_ROW(1) A2_ROW(2) A2_ROW(3) A2_ROW(4) A2_ROW(5)
#undef A2_ROW
    }
    if (mr == 6 && nr == 16) {
#define A2_ST(i)                                                                           \
    _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc), c##i##0));   \
    _mm256_storeu_ps(c + i * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + i * ldc + 8), c##i##1));
        A2_ST(0) A2_ST(1) A2_ST(2) A2_ST(3) A2_ST(4) A2_ST(5)
#undef A2_ST
        return;
    }
    float t[6 * 16] __attribute__((aligned(32)));
    __m256 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    for (int i = 0; i < 12; i++)
        _mm256_store_ps(t + 8 * i, acc[i]);
    tile_add(c, ldc, t, 16, mr, nr);
}

/* 6x32 tile: 12 zmm accumulators. */
__attribute__((target("avx512f"))) static void ukernel_avx512(size_t kc, const float *a, const float *b, float *c,
                                                              size_t ldc, size_t mr, size_t nr)
{
    __m512 z = _mm512_setzero_ps();
    __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    for (size_t p = 0; p < kc; p++, a += 6, b += 32) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), ai;
#define A5_ROW(i)                                     \
    ai = _mm512_set1_ps(a[i]);                        \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);       \
    c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);
        A5_ROW(0) A5_ROW(1) A5_ROW(2) A5_ROW(3) A5_ROW(4) A5_ROW(5)
#undef A5_ROW
    }
    if (mr == 6 && nr == 32) {
#define A5_ST(i)                                                                             \
    _mm512_storeu_ps(c + i * ldc, _mm512_add_ps(_mm512_loadu_ps(c + i * ldc), c##i##0));     \
    _mm512_storeu_ps(c + i * ldc + 16, _mm512_add_ps(_mm512_loadu_ps(c + i * ldc + 16), c##i##1));
        A5_ST(0) A5_ST(1) A5_ST(2) A5_ST(3) A5_ST(4) A5_ST(5)
#undef A5_ST
        return;
    }
    float t[6 * 32] __attribute__((aligned(64)));
    __m512 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    for (int i = 0; i < 12; i++)
        _mm512_store_ps(t + 16 * i, acc[i]);
    tile_add(c, ldc, t, 32, mr, nr);
}
#endif

/* clang-format on */
static const fp_calibrate_kernel_info kernels[FP_CALIBRATE_KERNEL_COUNT] = {
    [FP_CALIBRATE_KERNEL_AUTO] = {"auto", 0, 0, NULL},
    [FP_CALIBRATE_KERNEL_PORTABLE] = {"portable", 4, 8, ukernel_portable},
#ifdef FP_X86
    [FP_CALIBRATE_KERNEL_AVX2] = {"avx2-fma", 6, 16, ukernel_avx2},
    [FP_CALIBRATE_KERNEL_AVX512] = {"avx512f", 6, 32, ukernel_avx512},
#else
    [FP_CALIBRATE_KERNEL_AVX2] = {"avx2-fma", 6, 16, NULL},
    [FP_CALIBRATE_KERNEL_AVX512] = {"avx512f", 6, 32, NULL},
#endif
};

const char *fp_calibrate_kernel_name(fp_calibrate_kernel k)
{
    return (unsigned)k < FP_CALIBRATE_KERNEL_COUNT ? kernels[k].name : "unknown";
}

fp_calibrate_kernel fp_calibrate_kernel_from_name(const char *name)
{
    for (int k = 0; k < FP_CALIBRATE_KERNEL_COUNT; k++)
        if (g_strcmp0(name, kernels[k].name) == 0)
            return (fp_calibrate_kernel)k;
    return FP_CALIBRATE_KERNEL_COUNT;
}

#ifdef FP_X86
/* CPUID and XGETBV by hand, asked only when calibrating: __builtin_cpu_supports links libgcc's
 * constructor, which runs CPUID at every start of the program (a trap to the hypervisor each in a
 * VM, ~0.2 ms of every `fuseplan` run there). `ymm`: the OS saves the AVX state (XCR0 bits 1-2);
 * `zmm`: also the AVX-512 state (bits 5-7). */
static bool os_saves(bool zmm)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    unsigned need = zmm ? 0xe6u : 0x6u;
    return (lo & need) == need;
}

static bool cpu_has(bool avx512)
{
    unsigned a, b, c, d;
    if (!os_saves(avx512))
        return false;
    if (avx512)
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F);
    unsigned c1 = 0;
    if (!__get_cpuid(1, &a, &b, &c1, &d) || !(c1 & bit_FMA))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}
#endif

bool fp_calibrate_kernel_supported(fp_calibrate_kernel k)
{
    switch (k) {
    case FP_CALIBRATE_KERNEL_AUTO:
    case FP_CALIBRATE_KERNEL_PORTABLE:
        return true;
#ifdef FP_X86
    case FP_CALIBRATE_KERNEL_AVX2:
        return cpu_has(false);
    case FP_CALIBRATE_KERNEL_AVX512:
        return cpu_has(true);
#endif
    default:
        return false;
    }
}

fp_calibrate_kernel fp_calibrate_kernel_best(void)
{
    if (fp_calibrate_kernel_supported(FP_CALIBRATE_KERNEL_AVX512))
        return FP_CALIBRATE_KERNEL_AVX512;
    if (fp_calibrate_kernel_supported(FP_CALIBRATE_KERNEL_AVX2))
        return FP_CALIBRATE_KERNEL_AVX2;
    return FP_CALIBRATE_KERNEL_PORTABLE;
}

const fp_calibrate_kernel_info *fp_calibrate_sgemm_kernel(fp_calibrate_kernel k)
{
    g_assert((unsigned)k < FP_CALIBRATE_KERNEL_COUNT);
    return &kernels[k];
}

/* ---- blocked SGEMM ---- */

void *fp_calibrate_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, BUF_ALIGN, n ? n : BUF_ALIGN) == 0 ? p : NULL;
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

void fp_calibrate_sgemm_ws_clear(fp_calibrate_sgemm_ws *ws)
{
    free(ws->ap);
    free(ws->bp);
    ws->ap = ws->bp = NULL;
}

bool fp_calibrate_sgemm_ws_init(fp_calibrate_sgemm_ws *ws, const fp_calibrate_kernel_info *ki, size_t m, size_t n,
                                size_t k)
{
    size_t kc = MIN(k, (size_t)KC);
    size_t mc = MIN(round_up(m, ki->mr), ki->mr * MC_PANELS);
    size_t nc = MIN(round_up(n, ki->nr), NC / ki->nr * ki->nr);
    ws->ap = fp_calibrate_alloc(mc * kc * sizeof(float));
    ws->bp = fp_calibrate_alloc(nc * kc * sizeof(float));
    if (ws->ap && ws->bp)
        return true;
    fp_calibrate_sgemm_ws_clear(ws);
    return false;
}

/* Packs A[mc x kc] into MR-row panels, each kc x MR (k-major), rows past mc zero. */
static void pack_a(size_t mc, size_t kc, const float *a, size_t lda, size_t MR, float *ap)
{
    for (size_t i0 = 0; i0 < mc; i0 += MR) {
        size_t mr = MIN(MR, mc - i0);
        for (size_t p = 0; p < kc; p++, ap += MR) {
            for (size_t i = 0; i < mr; i++)
                ap[i] = a[(i0 + i) * lda + p];
            for (size_t i = mr; i < MR; i++)
                ap[i] = 0;
        }
    }
}

/* Packs B[kc x nc] into NR-column panels, each kc x NR (k-major), columns past nc zero. */
static void pack_b(size_t kc, size_t nc, const float *b, size_t ldb, size_t NR, float *bp)
{
    for (size_t j0 = 0; j0 < nc; j0 += NR) {
        size_t nr = MIN(NR, nc - j0);
        for (size_t p = 0; p < kc; p++, bp += NR) {
            memcpy(bp, b + p * ldb + j0, nr * sizeof(float));
            for (size_t j = nr; j < NR; j++)
                bp[j] = 0;
        }
    }
}

void fp_calibrate_sgemm_blocked(const fp_calibrate_kernel_info *ki, fp_calibrate_sgemm_ws *ws, size_t m, size_t n,
                                size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c, size_t ldc)
{
    size_t MR = ki->mr, NR = ki->nr, MC = MR * MC_PANELS, NCB = NC / NR * NR;
    for (size_t jc = 0; jc < n; jc += NCB) {
        size_t nc = MIN(NCB, n - jc);
        for (size_t pc = 0; pc < k; pc += KC) {
            size_t kc = MIN((size_t)KC, k - pc);
            pack_b(kc, nc, b + pc * ldb + jc, ldb, NR, ws->bp);
            for (size_t ic = 0; ic < m; ic += MC) {
                size_t mc = MIN(MC, m - ic);
                pack_a(mc, kc, a + ic * lda + pc, lda, MR, ws->ap);
                for (size_t jr = 0; jr < nc; jr += NR)
                    for (size_t ir = 0; ir < mc; ir += MR)
                        ki->fn(kc, ws->ap + ir * kc, ws->bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                               MIN(MR, mc - ir), MIN(NR, nc - jr));
            }
        }
    }
}

void fp_calibrate_sgemm(fp_calibrate_kernel kern, size_t m, size_t n, size_t k, const float *a, size_t lda,
                        const float *b, size_t ldb, float *c, size_t ldc)
{
    if (kern == FP_CALIBRATE_KERNEL_AUTO)
        kern = fp_calibrate_kernel_best();
    g_assert((unsigned)kern < FP_CALIBRATE_KERNEL_COUNT && fp_calibrate_kernel_supported(kern));
    if (!m || !n || !k)
        return;
    fp_calibrate_sgemm_ws ws = {NULL, NULL};
    if (!fp_calibrate_sgemm_ws_init(&ws, &kernels[kern], m, n, k))
        g_error("fp_calibrate_sgemm: out of memory for packing buffers");
    fp_calibrate_sgemm_blocked(&kernels[kern], &ws, m, n, k, a, lda, b, ldb, c, ldc);
    fp_calibrate_sgemm_ws_clear(&ws);
}
