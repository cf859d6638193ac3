/* calibrate_conv.c - the convolution classes' micro-kernels of `fuseplan calibrate` (calibrate.h):
 * fuseplan's own kernels doing what ONNX Runtime's MLAS does in each class, timed on one thread:
 *   conv            NCHW 3x3: the input expanded (im2col), then one SGEMM (MLAS's ExpandThenGemm);
 *   grouped_conv    NCHW depthwise 3x3: per channel, its 9 x H x W expansion and a one-row SGEMM;
 *   nchwc_conv      NCHWc 3x3 (channels in blocks of the vector width): direct, a strip of output
 *                   pixels' blocks of output channels held in registers, the input broadcast;
 *   nchwc_depthwise NCHWc depthwise 3x3: direct, vectorized over the block of channels.
 * The layers are those most of a network's time goes to: 64 channels of 56 x 56 (ResNet's first
 * stage) for the convolutions, with 32 channels of 28 x 28 (a mobile network's) for their
 * saturation, and 96 (MobileNetV2's) for the depthwise ones; stride 1, padding 1. Inputs carry
 * their padding (a zero border), as the kernels read them. Also the saturation fit of the two. */
#include "calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define FP_X86 1
#endif

/* The layers timed: 3x3, stride 1, padding 1, c channels in and out of hw x hw (STRIP divides hw). A
 * small one beside each big one gives the saturation of the convolution classes. */
enum { TAPS = 9, STRIP = 7, CONV_C = 64, CONV_HW = 56, SMALL_C = 32, SMALL_HW = 28, DW_C = 96, DW_HW = 56 };

/* ---- direct NCHWc kernels, one per vector width (the NCHWc block) ---- */

/* y[ob][h][w][B] = sum over cb, kh, kw, ci of x[cb][h+kh][w+kw][ci] * wt[ob][cb][kh][kw][ci][B]
 * (x padded: PHW x PHW per block of channels): FB blocks of output channels times STRIP output
 * pixels of accumulators in registers, each input element broadcast once to the FB blocks (as
 * MLAS's NCHWc kernels do). */
/* clang-format off */
#define DIRECT_CONV(NAME, ATTR, B, FB)                                                                              \
    ATTR static void NAME(const float *restrict x, const float *restrict wt, float *restrict y, int cblocks, int hw) \
    {                                                                                                             \
        typedef float vec __attribute__((vector_size(4 * (B)), __may_alias__));                                   \
        const int phw = hw + 2;                                                                                   \
        for (int ob = 0; ob < cblocks; ob += (FB))                                                                \
            for (int h = 0; h < hw; h++)                                                                          \
                for (int w0 = 0; w0 < hw; w0 += STRIP) {                                                          \
                    vec acc[FB][STRIP] = {{{0}}};                                                                 \
                    for (int cb = 0; cb < cblocks; cb++)                                                          \
                        for (int t = 0; t < TAPS; t++) {                                                          \
                            const float *xr = x + ((size_t)(cb * phw + h + t / 3) * phw + w0 + t % 3) * (B);      \
                            for (int ci = 0; ci < (B); ci++) {                                                    \
                                vec wv[FB];                                                                       \
                                _Pragma("GCC unroll 4") for (int f = 0; f < (FB); f++) wv[f] =                   \
                                    *(const vec *)(wt + (((size_t)((ob + f) * cblocks + cb) * TAPS + t) * (B) + ci) * (B)); \
                                _Pragma("GCC unroll 8") for (int s = 0; s < STRIP; s++) {                        \
                                    float xs = xr[s * (B) + ci];                                                  \
                                    _Pragma("GCC unroll 4") for (int f = 0; f < (FB); f++) acc[f][s] += xs * wv[f]; \
                                }                                                                                 \
                            }                                                                                     \
                        }                                                                                         \
                    for (int f = 0; f < (FB); f++)                                                                \
                        for (int s = 0; s < STRIP; s++)                                                           \
                            *(vec *)(y + ((size_t)((ob + f) * hw + h) * hw + w0 + s) * (B)) = acc[f][s];          \
                }                                                                                                 \
    }

/* y[cb][h][w][B] = sum over kh, kw of x[cb][h+kh][w+kw][B] * wt[cb][kh][kw][B]: the block's nine
 * weight vectors held in registers over its plane. */
#define DIRECT_DEPTHWISE(NAME, ATTR, B)                                                                             \
    ATTR static void NAME(const float *restrict x, const float *restrict wt, float *restrict y, int cblocks, int hw) \
    {                                                                                                             \
        typedef float vec __attribute__((vector_size(4 * (B)), __may_alias__));                                   \
        const int phw = hw + 2;                                                                                   \
        for (int cb = 0; cb < cblocks; cb++) {                                                                    \
            vec wv[TAPS];                                                                                         \
            for (int t = 0; t < TAPS; t++)                                                                        \
                wv[t] = *(const vec *)(wt + ((size_t)cb * TAPS + t) * (B));                                       \
            for (int h = 0; h < hw; h++)                                                                          \
                for (int w = 0; w < hw; w++) {                                                                    \
                    vec acc = {0};                                                                                \
                    _Pragma("GCC unroll 9") for (int t = 0; t < TAPS; t++) acc +=                                \
                        *(const vec *)(x + ((size_t)(cb * phw + h + t / 3) * phw + w + t % 3) * (B)) * wv[t];     \
                    *(vec *)(y + ((size_t)(cb * hw + h) * hw + w) * (B)) = acc;                                   \
                }                                                                                                 \
        }                                                                                                         \
    }

DIRECT_CONV(direct_conv_4, , 4, 2)
DIRECT_DEPTHWISE(direct_dw_4, , 4)
#ifdef FP_X86
DIRECT_CONV(direct_conv_8, __attribute__((target("avx2,fma"))), 8, 2)
DIRECT_DEPTHWISE(direct_dw_8, __attribute__((target("avx2,fma"))), 8)
DIRECT_CONV(direct_conv_16, __attribute__((target("avx512f"))), 16, 4)
DIRECT_DEPTHWISE(direct_dw_16, __attribute__((target("avx512f"))), 16)
/* clang-format on */
#endif

typedef void (*direct_fn)(const float *x, const float *wt, float *y, int cblocks, int hw);

/* ---- NCHW expand-then-GEMM ---- */

/* col[(c * 9 + t) x (h * hw + w)] = x[c][h + t / 3][w + t % 3] (x padded, channels c0 .. c0+n). */
static void im2col(const float *x, int c0, int n, int hw, float *col)
{
    int phw = hw + 2;
    for (int c = 0; c < n; c++)
        for (int t = 0; t < TAPS; t++) {
            float *row = col + ((size_t)c * TAPS + t) * hw * hw;
            for (int h = 0; h < hw; h++)
                memcpy(row + (size_t)h * hw, x + ((size_t)(c0 + c) * phw + h + t / 3) * phw + t % 3,
                       hw * sizeof(float));
        }
}

typedef struct {
    fp_calibrate_kernel kern;
    float *x, *wt, *y, *col;
    direct_fn conv, depthwise;
    int block;
    int c, hw; /* the layer timed */
} bench;

static void run_conv(bench *b)
{
    size_t n = (size_t)b->hw * b->hw;
    im2col(b->x, 0, b->c, b->hw, b->col);
    memset(b->y, 0, sizeof(float) * b->c * n);
    fp_calibrate_sgemm(b->kern, b->c, n, (size_t)b->c * TAPS, b->wt, (size_t)b->c * TAPS, b->col, n, b->y, n);
}

/* Per channel: its expansion, and the one-row GEMM over it as nine row updates (what a GEMM of one
 * row comes to). */
static void run_grouped(bench *b)
{
    size_t n = (size_t)b->hw * b->hw;
    for (int c = 0; c < b->c; c++) {
        im2col(b->x, c, 1, b->hw, b->col);
        float *restrict y = b->y + (size_t)c * n;
        memset(y, 0, sizeof(float) * n);
        for (int t = 0; t < TAPS; t++) {
            const float *restrict row = b->col + (size_t)t * n;
            float a = b->wt[c * TAPS + t];
            for (size_t k = 0; k < n; k++)
                y[k] += a * row[k];
        }
    }
}

static void run_nchwc_conv(bench *b) { b->conv(b->x, b->wt, b->y, b->c / b->block, b->hw); }
static void run_nchwc_dw(bench *b) { b->depthwise(b->x, b->wt, b->y, b->c / b->block, b->hw); }

/* The best FLOP/s of fn on layer (c, hw) over repetitions for `seconds` (at least two, the first
 * a warm-up); flops its work, per_channel: 2 x 9 x hw^2 a channel (depthwise), else one per pair. */
static double rate(bench *b, void (*fn)(bench *), int c, int hw, bool depthwise, double seconds)
{
    b->c = c, b->hw = hw;
    double flops = 2.0 * TAPS * hw * hw * c * (depthwise ? 1 : c);
    double best = 0, start = g_get_monotonic_time() / 1e6;
    for (int i = 0;; i++) {
        double t0 = g_get_monotonic_time() / 1e6;
        fn(b);
        double dt = g_get_monotonic_time() / 1e6 - t0;
        if (i > 0 && dt > 0 && flops / dt > best)
            best = flops / dt;
        if (i > 0 && t0 + dt - start >= seconds)
            return best;
    }
}

/* The direct kernels for kern and their block (the vector width of the kernel's ISA). */
static void pick_direct(fp_calibrate_kernel kern, bench *b)
{
    b->conv = direct_conv_4, b->depthwise = direct_dw_4, b->block = 4;
#ifdef FP_X86
    if (kern == FP_CALIBRATE_KERNEL_AVX512)
        b->conv = direct_conv_16, b->depthwise = direct_dw_16, b->block = 16;
    else if (kern == FP_CALIBRATE_KERNEL_AVX2)
        b->conv = direct_conv_8, b->depthwise = direct_dw_8, b->block = 8;
#endif
}

/* M K + K N + M N of the 3x3 layer (c, hw) as a GEMM. */
static uint64_t operands(int c, int hw)
{
    uint64_t m = (uint64_t)c, n = (uint64_t)hw * hw, k = (uint64_t)c * TAPS;
    return m * k + k * n + m * n;
}

bool fp_calibrate_conv(fp_calibrate_kernel kern, double seconds, fp_calibrate_conv_rates *out, GError **error)
{
    if (kern == FP_CALIBRATE_KERNEL_AUTO)
        kern = fp_calibrate_kernel_best();
    bench b = {.kern = kern};
    pick_direct(kern, &b);
    size_t cmax = MAX(CONV_C, DW_C), pmax = (size_t)(CONV_HW + 2) * (CONV_HW + 2), wsize = (size_t)cmax * cmax * TAPS;
    b.x = aligned_alloc(64, sizeof(float) * cmax * pmax);
    b.wt = aligned_alloc(64, sizeof(float) * wsize);
    b.y = aligned_alloc(64, sizeof(float) * cmax * CONV_HW * CONV_HW);
    b.col = aligned_alloc(64, sizeof(float) * CONV_C * TAPS * CONV_HW * CONV_HW);
    bool ok = b.x && b.wt && b.y && b.col;
    if (ok) {
        for (size_t i = 0; i < cmax * pmax; i++)
            b.x[i] = (float)(i % 7) * 0.125f - 0.375f;
        for (size_t i = 0; i < wsize; i++)
            b.wt[i] = (float)(i % 5) * 0.0625f - 0.125f;
        double s = seconds / 6;
        *out = (fp_calibrate_conv_rates){
            .conv = rate(&b, run_conv, CONV_C, CONV_HW, false, s),
            .conv_small = rate(&b, run_conv, SMALL_C, SMALL_HW, false, s),
            .grouped_conv = rate(&b, run_grouped, DW_C, DW_HW, true, s),
            .nchwc_conv = rate(&b, run_nchwc_conv, CONV_C, CONV_HW, false, s),
            .nchwc_conv_small = rate(&b, run_nchwc_conv, SMALL_C, SMALL_HW, false, s),
            .nchwc_depthwise = rate(&b, run_nchwc_dw, DW_C, DW_HW, true, s),
            .conv_flops = 2 * TAPS * (uint64_t)CONV_C * CONV_C * CONV_HW * CONV_HW,
            .small_flops = 2 * TAPS * (uint64_t)SMALL_C * SMALL_C * SMALL_HW * SMALL_HW,
            .depthwise_flops = 2 * TAPS * (uint64_t)DW_C * DW_HW * DW_HW,
            .conv_operands = operands(CONV_C, CONV_HW),
            .small_operands = operands(SMALL_C, SMALL_HW),
        };
    } else {
        g_set_error(error, FP_CALIBRATE_ERROR, FP_CALIBRATE_ERROR_RESOURCES, "no memory for the convolution kernels");
    }
    free(b.x);
    free(b.wt);
    free(b.y);
    free(b.col);
    return ok;
}

void fp_calibrate_saturation_fit(double peak, double rate_big, double s_big, double rate_small, double s_small,
                                 double *e, double *h)
{
    double yb = peak / rate_big, ys = peak / rate_small, c = 0;
    *e = MIN(1 / yb, 1.0);
    *h = 0;
    if (ys <= yb || s_small <= s_big)
        return;
    double det = ys * s_big - yb * s_small;
    if (det < 0 && (s_big - s_small) / det <= 1) { /* the line through both, 0 < e <= 1 */
        *e = (s_big - s_small) / det;
        c = (yb - ys) / det;
    } else { /* e = 1: (1 + c s_big) / yb = ys / (1 + c s_small), the root c > 0 when yb ys > 1 */
        *e = 1;
        double qa = s_big * s_small, qb = s_big + s_small, qc = 1 - yb * ys;
        c = qc < 0 ? (-qb + sqrt(qb * qb - 4 * qa * qc)) / (2 * qa) : 0;
    }
    *h = 2 * c * c * c;
}
