/* micro_models.c - the calibration micro-models (see micro_models.h): the case list and each
 * chain's ONNX text. */
#include "calibration/micro_models.h"

#include <stdarg.h>
#include <string.h>

#include "frontends/onnx/onnx_write.h"

#define OPSET 17
#define WORK_CHAIN 5       /* ops in a work case's long chain */
#define TINY_CHAIN 9       /* in a tiny case's: its kernels are short, the difference needs more of them */
#define SPILL_CHAIN 12     /* in a FP_MICRO_SPILL case's */
#define MIXED_CYCLES 4     /* cycles of its ops in a FP_MICRO_MIXED case's, after its first op */
#define BIG_CHAIN 3        /* in a case whose kernel takes milliseconds */
#define BOTTLENECK_PAIRS 2 /* expansions and reductions in a bottleneck case's long chain, after its first op */
/* a LayerNormalization case's scale and bias, over the last axis */
#define LN_EXTRA "input: \"s\" input: \"b\" attribute { name: \"axis\" type: INT i: -1 }"

static void case_clear(gpointer p)
{
    fp_micro_case *c = p;
    g_free(c->name);
    g_free(c->op);
    g_free(c->extra);
    g_free(c->inits);
    if (c->cycle)
        g_array_unref(c->cycle);
}

/* Appends a case; dims is a 0-terminated list of up to FP_MICRO_MAX_RANK sizes. Takes name, extra
 * and inits (may be NULL). */
static void add(GArray *cs, char *name, const char *op, char *extra, char *inits, const int64_t *dims, int chain,
                unsigned flags)
{
    g_assert(!(flags & FP_MICRO_FAN) || !(flags & FP_MICRO_ALL)); /* a fan is timed at ORT_DISABLE_ALL only */
    fp_micro_case c = {.name = name,
                       .op = g_strdup(op),
                       .extra = extra ? extra : g_strdup(""),
                       .inits = inits ? inits : g_strdup(""),
                       .chain = chain,
                       .flags = flags};
    while (c.rank < FP_MICRO_MAX_RANK && dims[c.rank])
        c.dims[c.rank] = dims[c.rank], c.rank++;
    g_array_append_val(cs, c);
}

/* Initializer declarations, float without data (filled by the writer): (name, dims) pairs, each
 * dims 0-terminated, the list ended by a NULL name. */
static char *inits(const char *name, const int64_t *dims, ...)
{
    GString *s = g_string_new(NULL);
    va_list ap;
    va_start(ap, dims);
    while (name) {
        g_string_append_printf(s, "initializer { name: \"%s\" data_type: 1", name);
        for (int i = 0; dims[i]; i++)
            g_string_append_printf(s, " dims: %" G_GINT64_FORMAT, dims[i]);
        g_string_append(s, " }\n");
        if ((name = va_arg(ap, const char *)))
            dims = va_arg(ap, const int64_t *);
    }
    va_end(ap);
    return g_string_free(s, FALSE);
}

/* head, then n ints of ap each as " field: value", then tail. Frees head. */
static char *int_list(char *head, const char *field, int n, va_list ap, const char *tail)
{
    GString *s = g_string_new(head);
    g_free(head);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, " %s: %d", field, va_arg(ap, int));
    g_string_append(s, tail);
    return g_string_free(s, FALSE);
}

/* An INTS attribute of n values. */
static char *attr_ints(const char *name, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    char *s = int_list(g_strdup_printf(" attribute { name: \"%s\" type: INTS", name), "ints", n, ap, " }");
    va_end(ap);
    return s;
}

/* A Gather of every channel of dims (axis 1, the indices 0..C-1 in order): a copy in blocks of
 * one channel's elements that no level of ONNX Runtime removes, the data class's rate (a Cast to
 * the type it reads is a no-op; Concat, Split, Slice and Tile are the copy class: copies()). */
static void gather_all(GArray *cs, const char *name, const int64_t *dims, int chain, unsigned flags)
{
    GString *idx = g_string_new(NULL);
    g_string_append_printf(idx, "initializer { name: \"idx\" data_type: 7 dims: %" G_GINT64_FORMAT, dims[1]);
    for (int64_t i = 0; i < dims[1]; i++)
        g_string_append_printf(idx, " int64_data: %" G_GINT64_FORMAT, i);
    g_string_append(idx, " }\n");
    add(cs, g_strdup(name), "Gather", g_strdup("input: \"idx\" attribute { name: \"axis\" type: INT i: 1 }"),
        g_string_free(idx, FALSE), dims, chain, flags);
}

/* A Conv case: c channels in and out, hw x hw pixels, k x k kernel, stride, group, and a bias, as a
 * network's convolution has one (a batch norm folded into it): MLAS adds it in a pass of its own
 * over the output (MlasActivation, onnxruntime/core/mlas/lib/convolve.cpp). */
static void conv(GArray *cs, const char *name, int c, int hw, int k, int stride, int group, int chain, unsigned flags)
{
    int64_t x[] = {1, c, hw, hw, 0}, w[] = {c, c / group, k, k, 0}, b[] = {c, 0};
    g_autofree char *pads = attr_ints("pads", 4, k / 2, k / 2, k / 2, k / 2);
    g_autofree char *strides = attr_ints("strides", 2, stride, stride);
    g_autofree char *kernel = attr_ints("kernel_shape", 2, k, k);
    add(cs, g_strdup(name), "Conv",
        g_strdup_printf("input: \"w\" input: \"b\"%s%s%s attribute { name: \"group\" type: INT i: %d }", pads, strides,
                        kernel, group),
        inits("w", w, "b", b, NULL), x, chain, flags | FP_MICRO_ALL);
}

/* A cycle of two 1x1 convolutions, c channels to e and back, on hw x hw pixels, each with weights of
 * its own and a bias (a ResNet bottleneck's or a MobileNet block's expansion and reduction): where the e
 * channels outgrow the L2, ONNX Runtime's GEMM on NCHW reads and writes them at the next level's
 * rate besides its compute (the class's phase, devices/device.h), which chains of c channels to
 * c never show. */
static void bottleneck(GArray *cs, int c, int e, int hw)
{
    int64_t x[] = {1, c, hw, hw, 0}, up[] = {e, c, 1, 1, 0}, down[] = {c, e, 1, 1, 0}, be[] = {e, 0}, bc[] = {c, 0};
    GArray *cycle = g_array_new(FALSE, FALSE, sizeof(fp_micro_case));
    g_array_set_clear_func(cycle, case_clear);
    add(cycle, g_strdup("expand"), "Conv", g_strdup("input: \"w\" input: \"b\""), inits("w", up, "b", be, NULL), x, 1,
        0);
    add(cycle, g_strdup("reduce"), "Conv", g_strdup("input: \"w\" input: \"b\""), inits("w", down, "b", bc, NULL), x, 1,
        0);
    add(cs, g_strdup_printf("conv1x1_c%dx%d_%d", c, e, hw), "Conv", NULL, NULL, x, 1 + 2 * BOTTLENECK_PAIRS,
        FP_MICRO_ALL);
    g_array_index(cs, fp_micro_case, cs->len - 1).cycle = cycle;
}

static void convolutions(GArray *cs)
{
    static const int dense[][2] = {{16, 56}, {32, 28}, {64, 28}, {64, 56}, {128, 14}, {256, 14}, {512, 7}, {20, 28}};
    static const int point[][2] = {{32, 28}, {64, 56}, {256, 14}, {20, 28}, {128, 28}, {512, 7}};
    static const int depth[][2] = {{16, 14}, {64, 28}, {32, 112}, {256, 14}, {512, 7}, {24, 28}};
    char name[64];
    for (size_t i = 0; i < G_N_ELEMENTS(dense); i++) {
        g_snprintf(name, sizeof name, "conv3x3_c%d_%d", dense[i][0], dense[i][1]);
        conv(cs, name, dense[i][0], dense[i][1], 3, 1, 1, WORK_CHAIN, 0);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(point); i++) {
        g_snprintf(name, sizeof name, "conv1x1_c%d_%d", point[i][0], point[i][1]);
        conv(cs, name, point[i][0], point[i][1], 1, 1, 1, WORK_CHAIN, 0);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(depth); i++) {
        g_snprintf(name, sizeof name, "dwconv3x3_c%d_%d", depth[i][0], depth[i][1]);
        conv(cs, name, depth[i][0], depth[i][1], 3, 1, depth[i][0], WORK_CHAIN, 0);
    }
    /* the largest: its columns and output past the L2 (a first stage's at 112 x 112), in a shorter chain */
    conv(cs, "conv3x3_c32_112", 32, 112, 3, 1, 1, BIG_CHAIN, 0);
    conv(cs, "dwconv5x5_c64_28", 64, 28, 5, 1, 64, WORK_CHAIN, 0);
    /* larger filters on fewer pixels (EfficientNet's, MnasNet's, ConvNeXt's): per tap less work and
     * as many im2col rows, the points that tell a row's cost from the work's */
    conv(cs, "dwconv5x5_c256_14", 256, 14, 5, 1, 256, WORK_CHAIN, 0);
    conv(cs, "dwconv5x5_c512_7", 512, 7, 5, 1, 512, WORK_CHAIN, 0);
    conv(cs, "dwconv7x7_c192_28", 192, 28, 7, 1, 192, WORK_CHAIN, 0);
    conv(cs, "dwconv7x7_c768_7", 768, 7, 7, 1, 768, WORK_CHAIN, 0);
    conv(cs, "conv3x3s2_c16_112", 16, 112, 3, 2, 1, 4, 0); /* 112 -> 56 -> 28 -> 14 -> 7 */
    conv(cs, "dwconv3x3s2_c32_112", 32, 112, 3, 2, 32, 4, 0);
    conv(cs, "dwconv3x3s2_c96_112", 96, 112, 3, 2, 96, 4, 0); /* MobileNetV2's first strided one */
    conv(cs, "dwconv5x5s2_c64_56", 64, 56, 5, 2, 64, 4, 0);
    bottleneck(cs, 64, 256, 56); /* ResNet-50's first stage */
    bottleneck(cs, 16, 96, 112); /* MobileNetV2's first expansion */
    conv(cs, "gconv3x3_c64_28_g4", 64, 28, 3, 1, 4, WORK_CHAIN, 0);
    conv(cs, "gconv3x3_c128_14_g8", 128, 14, 3, 1, 8, WORK_CHAIN, 0);
    conv(cs, "conv_tiny", 4, 2, 3, 1, 1, TINY_CHAIN, FP_MICRO_TINY);
    conv(cs, "conv1x1_tiny", 4, 2, 1, 1, 1, TINY_CHAIN, FP_MICRO_TINY);
    conv(cs, "dwconv_tiny", 4, 2, 3, 1, 4, TINY_CHAIN, FP_MICRO_TINY);
}

/* A decoder's step through GroupQueryAttention: the query of one token [1, 1, heads x d] (the
 * previous op's output), a new key and value of kv_heads x d, a past of `past` tokens, with rotary
 * embeddings of Q and K (cos and sin caches of past + 1 rows of d / 2: onnxruntime-genai's builder
 * layout) or not (ONNX Runtime's CPU kernel; its present key and value are the op's other
 * outputs). */
static void attention(GArray *cs, int heads, int kv_heads, int d, int past, bool rotary)
{
    int64_t q[] = {1, 1, (int64_t)heads * d, 0}, kv[] = {1, 1, (int64_t)kv_heads * d, 0};
    int64_t cache[] = {1, kv_heads, past, d, 0}, rot[] = {past + 1, d / 2, 0};
    char *decl = rotary ? inits("k", kv, "v", kv, "pk", cache, "pv", cache, "cos", rot, "sin", rot, NULL)
                        : inits("k", kv, "v", kv, "pk", cache, "pv", cache, NULL);
    char *ints = g_strdup_printf("%sinitializer { name: \"sk\" data_type: 6 dims: 1 int32_data: %d }\n"
                                 "initializer { name: \"tl\" data_type: 6 int32_data: %d }\n",
                                 decl, past, past + 1);
    g_free(decl);
    add(cs, g_strdup_printf("gqa_h%d_kv%d_d%d_past%d%s", heads, kv_heads, d, past, rotary ? "_rotary" : ""),
        "GroupQueryAttention",
        g_strdup_printf("input: \"k\" input: \"v\" input: \"pk\" input: \"pv\" input: \"sk\" input: \"tl\"%s"
                        " attribute { name: \"num_heads\" type: INT i: %d }"
                        " attribute { name: \"kv_num_heads\" type: INT i: %d }%s",
                        rotary ? " input: \"cos\" input: \"sin\"" : "", heads, kv_heads,
                        rotary ? " attribute { name: \"do_rotary\" type: INT i: 1 }" : ""),
        ints, q, WORK_CHAIN, FP_MICRO_CONTRIB);
    g_array_index(cs, fp_micro_case, cs->len - 1).outputs = 2;
}

/* One row [1, 1, k] times a k x k weight of 4 bits in blocks of 32 (MatMulNBits, accuracy_level 4:
 * int8 compute): the packed weight [k, k / 32, 16] uint8 and its scales. */
static void nbits(GArray *cs, int k)
{
    int64_t x[] = {1, 1, k, 0}, sc[] = {(int64_t)k * (k / 32), 0};
    char *decl = inits("sc", sc, NULL);
    char *all = g_strdup_printf("initializer { name: \"q\" data_type: 2 dims: %d dims: %d dims: 16 }\n%s", k, k / 32,
                                decl);
    g_free(decl);
    add(cs, g_strdup_printf("matmulnbits4_1x%d", k), "MatMulNBits",
        g_strdup_printf("input: \"q\" input: \"sc\" attribute { name: \"K\" type: INT i: %d }"
                        " attribute { name: \"N\" type: INT i: %d } attribute { name: \"bits\" type: INT i: 4 }"
                        " attribute { name: \"block_size\" type: INT i: 32 }"
                        " attribute { name: \"accuracy_level\" type: INT i: 4 }",
                        k, k),
        all, x, WORK_CHAIN, FP_MICRO_CONTRIB);
}

/* x [m, k] times a [k, k] weight (MatMul; one row: the GEMV path), or Gemm with a bias and transB. */
static void matmuls(GArray *cs)
{
    static const int mk[][2] = {{1, 256}, {1, 512}, {16, 64}, {64, 256}, {128, 512}, {128, 768}};
    char name[64];
    for (size_t i = 0; i < G_N_ELEMENTS(mk); i++) {
        int64_t x[] = {mk[i][0], mk[i][1], 0}, w[] = {mk[i][1], mk[i][1], 0};
        g_snprintf(name, sizeof name, "matmul_%dx%d", mk[i][0], mk[i][1]);
        add(cs, g_strdup(name), "MatMul", g_strdup("input: \"w\""), inits("w", w, NULL), x, WORK_CHAIN, 0);
    }
    /* 32 rows times 1 MB of weights: one weight the L2 holds, then SPILL_CHAIN of them, 12 MB in all */
    int64_t px[] = {32, 512, 0}, pw[] = {512, 512, 0};
    add(cs, g_strdup("matmul_32x512_shared"), "MatMul", g_strdup("input: \"w\""), inits("w", pw, NULL), px, WORK_CHAIN,
        FP_MICRO_SHARED);
    add(cs, g_strdup("matmul_32x512_spill"), "MatMul", g_strdup("input: \"w\""), inits("w", pw, NULL), px, SPILL_CHAIN,
        FP_MICRO_SPILL);
    /* 16 one-row MatMuls of 4 MB weights each: 64 MB, past twice any CPU's last cache level of up
     * to 32 MB (passes/cost.h: all read from memory), the single one's 4 MB in it */
    int64_t cx[] = {1, 1024, 0}, cw[] = {1024, 1024, 0};
    add(cs, g_strdup("matmul_cold_1x1024"), "MatMul", g_strdup("input: \"w\""), inits("w", cw, NULL), cx, 16,
        FP_MICRO_COLD);
    int64_t gx[] = {64, 512, 0}, gw[] = {512, 512, 0}, gb[] = {512, 0};
    add(cs, g_strdup("gemm_64x512"), "Gemm",
        g_strdup("input: \"w\" input: \"b\" attribute { name: \"transB\" type: INT i: 1 }"),
        inits("w", gw, "b", gb, NULL), gx, WORK_CHAIN, 0);
    int64_t ax[] = {12, 128, 64, 0}, aw[] = {12, 64, 64, 0}; /* attention: a batched MatMul per head */
    add(cs, g_strdup("bmatmul_12x128x64"), "MatMul", g_strdup("input: \"w\""), inits("w", aw, NULL), ax, WORK_CHAIN, 0);
    /* B packed on every call or read where it lies (passes/cost.c, packed_once): a batch of
     * matrices, which ONNX Runtime does not prepack; one row each on MLAS's one-row kernel, or,
     * scaled (MatMulScaleFusion's FusedMatMul), on its general one */
    int64_t rx[] = {4, 1, 256, 0}, rw[] = {4, 256, 256, 0}, sx[] = {8, 1, 64, 0}, sw[] = {8, 64, 64, 0};
    add(cs, g_strdup("bmatmul_4x1x256"), "MatMul", g_strdup("input: \"w\""), inits("w", rw, NULL), rx, WORK_CHAIN, 0);
    add(cs, g_strdup("bmatmul_8x1x64"), "MatMul", g_strdup("input: \"w\""), inits("w", sw, NULL), sx, WORK_CHAIN, 0);
    const char *scaled = "input: \"w\" attribute { name: \"transB\" type: INT i: 1 }"
                         " attribute { name: \"alpha\" type: FLOAT f: 0.125 }";
    add(cs, g_strdup("fmatmul_t_4x1x256"), "FusedMatMul", g_strdup(scaled), inits("w", rw, NULL), rx, WORK_CHAIN,
        FP_MICRO_CONTRIB);
    add(cs, g_strdup("fmatmul_t_12x128x64"), "FusedMatMul", g_strdup(scaled), inits("w", aw, NULL), ax, WORK_CHAIN,
        FP_MICRO_CONTRIB);
    /* Swin's attention weights times its values, on normal floats and on denormals (x0 within
     * +-5e-41; a fan: along a chain the products would underflow to 0) */
    int64_t dx[] = {12, 49, 49, 0}, dw[] = {12, 49, 32, 0};
    add(cs, g_strdup("bmatmul_12x49x49"), "MatMul", g_strdup("input: \"w\""), inits("w", dw, NULL), dx, 4,
        FP_MICRO_FAN);
    add(cs, g_strdup("bmatmul_12x49x49_denormal"), "MatMul", g_strdup("input: \"w\""), inits("w", dw, NULL), dx, 4,
        FP_MICRO_FAN | FP_MICRO_DENORMAL);
    g_array_index(cs, fp_micro_case, cs->len - 1).scale = 1e-40;
    /* a decoder step's attention products of a few keys: each head's call into MLAS */
    int64_t hx[] = {4, 1, 16, 0}, hw[] = {4, 16, 16, 0};
    add(cs, g_strdup("bmatmul_tiny"), "MatMul", g_strdup("input: \"w\""), inits("w", hw, NULL), hx, TINY_CHAIN,
        FP_MICRO_TINY);
    add(cs, g_strdup("fmatmul_t_tiny"), "FusedMatMul", g_strdup(scaled), inits("w", hw, NULL), hx, TINY_CHAIN,
        FP_MICRO_TINY | FP_MICRO_CONTRIB);
    int64_t g1[] = {1, 768, 0}, gw1[] = {768, 768, 0}, gb1[] = {768, 0};
    add(cs, g_strdup("gemm_1x768"), "Gemm",
        g_strdup("input: \"w\" input: \"b\" attribute { name: \"transB\" type: INT i: 1 }"),
        inits("w", gw1, "b", gb1, NULL), g1, WORK_CHAIN, 0);
    /* a decoder's int4 projections as onnxruntime-genai's builder writes them for the CPU */
    for (int k = 64; k <= 1024; k *= 4)
        nbits(cs, k);
    /* launch, rate and cost per score (passes/cost.h) need three shapes at least */
    attention(cs, 4, 2, 16, 127, false);
    attention(cs, 8, 2, 64, 255, false);
    attention(cs, 2, 1, 32, 63, false);
    attention(cs, 8, 2, 32, 127, true);
    attention(cs, 1, 1, 16, 15, false);
    attention(cs, 12, 12, 64, 255, false);
    int64_t tx[] = {2, 8, 0}, vx[] = {1, 8, 0}, tw[] = {8, 8, 0};
    add(cs, g_strdup("matmul_tiny"), "MatMul", g_strdup("input: \"w\""), inits("w", tw, NULL), tx, TINY_CHAIN,
        FP_MICRO_TINY);
    add(cs, g_strdup("gemv_tiny"), "MatMul", g_strdup("input: \"w\""), inits("w", tw, NULL), vx, TINY_CHAIN,
        FP_MICRO_TINY);
}

/* Elementwise ops, with and without broadcast, at working sets from the caches to memory. */
static void elementwise(GArray *cs)
{
    static const int64_t sizes[] = {8, 16384, 262144, 1048576, 4194304};
    char name[64];
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        int64_t x[] = {1, sizes[i], 0};
        g_snprintf(name, sizeof name, i ? "add_%" G_GINT64_FORMAT : "add_tiny", sizes[i]);
        add(cs, g_strdup(name), "Add", g_strdup("input: \"x0\""), NULL, x, i ? WORK_CHAIN : TINY_CHAIN,
            i ? 0 : FP_MICRO_TINY);
    }
    int64_t x[] = {1, 64, 56, 56, 0}, b[] = {1, 64, 1, 1, 0}, s[] = {1, 0};
    add(cs, g_strdup("add_bcast_c64_56"), "Add", g_strdup("input: \"b\""), inits("b", b, NULL), x, WORK_CHAIN, 0);
    add(cs, g_strdup("mul_scalar_c64_56"), "Mul", g_strdup("input: \"s\""), inits("s", s, NULL), x, WORK_CHAIN, 0);
    static const char *const unary[] = {"Relu", "Sigmoid", "Erf", "Tanh", "Exp"};
    for (size_t i = 0; i < G_N_ELEMENTS(unary); i++) {
        g_autofree char *lower = g_ascii_strdown(unary[i], -1);
        add(cs, g_strdup_printf("%s_c64_56", lower), unary[i], NULL, NULL, x, WORK_CHAIN, 0);
    }
    /* the transcendental class across working sets, and its launch */
    int64_t small[] = {1, 16384, 0}, large[] = {1, 1048576, 0}, v8[] = {1, 8, 0};
    add(cs, g_strdup("sigmoid_16384"), "Sigmoid", NULL, NULL, small, WORK_CHAIN, 0);
    add(cs, g_strdup("tanh_1048576"), "Tanh", NULL, NULL, large, WORK_CHAIN, 0);
    add(cs, g_strdup("sigmoid_tiny"), "Sigmoid", NULL, NULL, v8, TINY_CHAIN, FP_MICRO_TINY);
}

/* An int64 initializer of n values, the list's length its one dim. */
static char *int_init(const char *name, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    char *s = int_list(g_strdup_printf("initializer { name: \"%s\" data_type: 7 dims: %d", name, n), "int64_data", n,
                       ap, " }\n");
    va_end(ap);
    return s;
}

/* The copy class (Concat, Split, Slice, Tile): fans, their outputs shaped unlike their input.
 * Tiny ones as a decoder's rotary embedding splits a head (its launch), a past key's
 * concatenation and a Tile on ONNX Runtime's general path (a tiled axis behind a dim of size > 1
 * other than the first: a copy per row of the last dim, as a grouped-query decoder repeats its key
 * heads), all in the L1 and L2 caches: larger copies, timed as the bandwidths' cases are, pull the
 * fitted bandwidths up rather than the copy rate (docs/devices.md). */
static void copies(GArray *cs)
{
    int64_t head[] = {1, 4, 1, 16, 0}, half[] = {1, 4, 1, 8, 0}, kv[] = {1, 2, 127, 16, 0};
    int64_t rows[] = {1, 2, 128, 16, 0};
    const unsigned tiny = FP_MICRO_FAN | FP_MICRO_TINY;
    add(cs, g_strdup("concat_tiny"), "Concat", g_strdup("input: \"x0\" attribute { name: \"axis\" type: INT i: 3 }"),
        NULL, half, TINY_CHAIN, tiny);
    const char *sl = "input: \"st\" input: \"en\" input: \"ax\"";
    g_autofree char *st = int_init("st", 1, 0), *en = int_init("en", 1, 8), *ax = int_init("ax", 1, 3);
    add(cs, g_strdup("slice_tiny"), "Slice", g_strdup(sl), g_strconcat(st, en, ax, NULL), head, TINY_CHAIN, tiny);
    add(cs, g_strdup("split_tiny"), "Split", g_strdup("input: \"sp\" attribute { name: \"axis\" type: INT i: 3 }"),
        int_init("sp", 2, 8, 8), head, TINY_CHAIN, tiny);
    g_array_index(cs, fp_micro_case, cs->len - 1).outputs = 1;
    add(cs, g_strdup("concat_kv_2x127x16"), "Concat",
        g_strdup("input: \"x0\" attribute { name: \"axis\" type: INT i: 2 }"), NULL, kv, WORK_CHAIN, FP_MICRO_FAN);
    add(cs, g_strdup("tile_rows_2x128x16"), "Tile", g_strdup("input: \"reps\""), int_init("reps", 4, 1, 1, 2, 1), rows,
        WORK_CHAIN, FP_MICRO_FAN);
}

/* Norms, Softmax, pooling, reductions, Transpose and a view. */
static void others(GArray *cs)
{
    int64_t x[] = {1, 64, 56, 56, 0}, c64[] = {64, 0}, tiny[] = {1, 4, 2, 2, 0}, c4[] = {4, 0};
    const char *bn = "input: \"s\" input: \"b\" input: \"m\" input: \"v\"";
    add(cs, g_strdup("batchnorm_c64_56"), "BatchNormalization", g_strdup(bn),
        inits("s", c64, "b", c64, "m", c64, "v", c64, NULL), x, WORK_CHAIN, 0);
    add(cs, g_strdup("batchnorm_tiny"), "BatchNormalization", g_strdup(bn),
        inits("s", c4, "b", c4, "m", c4, "v", c4, NULL), tiny, TINY_CHAIN, FP_MICRO_TINY);
    int64_t ln[] = {128, 768, 0}, h[] = {768, 0}, v8[] = {1, 8, 0}, h8[] = {8, 0};
    add(cs, g_strdup("layernorm_128x768"), "LayerNormalization", g_strdup(LN_EXTRA), inits("s", h, "b", h, NULL), ln,
        WORK_CHAIN, 0);
    add(cs, g_strdup("layernorm_tiny"), "LayerNormalization", g_strdup(LN_EXTRA), inits("s", h8, "b", h8, NULL), v8,
        TINY_CHAIN, FP_MICRO_TINY);
    /* ONNX Runtime's fusion of a residual Add and a LayerNormalization: BERT's tokens, one token (a
     * tiny decoder's token below) */
    int64_t sln[] = {1, 128, 768, 0}, sln1[] = {1, 1, 2048, 0}, h2k[] = {2048, 0};
    const char *slnx = "input: \"k\" input: \"s\" input: \"b\" attribute { name: \"epsilon\" type: FLOAT f: 1e-05 }";
    add(cs, g_strdup("skiplayernorm_128x768"), "SkipLayerNormalization", g_strdup(slnx),
        inits("k", sln, "s", h, "b", h, NULL), sln, WORK_CHAIN, FP_MICRO_CONTRIB);
    add(cs, g_strdup("skiplayernorm_1x2048"), "SkipLayerNormalization", g_strdup(slnx),
        inits("k", sln1, "s", h2k, "b", h2k, NULL), sln1, WORK_CHAIN, FP_MICRO_CONTRIB);
    int64_t sm[] = {12, 128, 128, 0};
    const char *axis = "attribute { name: \"axis\" type: INT i: -1 }";
    add(cs, g_strdup("softmax_12x128x128"), "Softmax", g_strdup(axis), NULL, sm, WORK_CHAIN, 0);
    /* Swin's attention Softmax on logits a mask of -100 moved into the denormal band: x0 within
     * +-50, a row that wraps the fill's period spread over 100, those 87-100 below their row's
     * largest (a tenth of x0) making denormal weights and none below the band (whose exp() would
     * underflow to 0 through other assists: with x0 within +-100, 48 ns a denormal result
     * against Swin-T's 18) */
    int64_t ds[] = {12, 49, 49, 0};
    add(cs, g_strdup("softmax_12x49x49"), "Softmax", g_strdup(axis), NULL, ds, 4, FP_MICRO_FAN);
    add(cs, g_strdup("softmax_12x49x49_denormal"), "Softmax", g_strdup(axis), NULL, ds, 4,
        FP_MICRO_FAN | FP_MICRO_DENORMAL);
    g_array_index(cs, fp_micro_case, cs->len - 1).scale = 100;
    add(cs, g_strdup("softmax_tiny"), "Softmax", g_strdup(axis), NULL, v8, TINY_CHAIN, FP_MICRO_TINY);
    g_autofree char *k3 = attr_ints("kernel_shape", 2, 3, 3), *p1 = attr_ints("pads", 4, 1, 1, 1, 1),
                    *s2 = attr_ints("strides", 2, 2, 2), *k1 = attr_ints("kernel_shape", 2, 1, 1);
    add(cs, g_strdup("maxpool3x3_c64_56"), "MaxPool", g_strconcat(k3, p1, NULL), NULL, x, WORK_CHAIN, 0);
    add(cs, g_strdup("avgpool3x3_c64_56"), "AveragePool", g_strconcat(k3, p1, NULL), NULL, x, WORK_CHAIN, 0);
    int64_t big[] = {1, 64, 112, 112, 0}, gp[] = {1, 256, 14, 14, 0}, dil[] = {1, 4, 64, 64, 0};
    add(cs, g_strdup("maxpool3x3s2_c64_112"), "MaxPool", g_strconcat(k3, p1, s2, NULL), NULL, big, WORK_CHAIN,
        FP_MICRO_FAN);
    /* global pooling from an early SE block's large image to a late one's 49 pixels a channel */
    int64_t gp7[] = {1, 1152, 7, 7, 0}, gp112[] = {1, 32, 112, 112, 0};
    add(cs, g_strdup("globalavgpool_c256_14"), "GlobalAveragePool", NULL, NULL, gp, WORK_CHAIN, FP_MICRO_FAN);
    add(cs, g_strdup("globalavgpool_c1152_7"), "GlobalAveragePool", NULL, NULL, gp7, WORK_CHAIN, FP_MICRO_FAN);
    add(cs, g_strdup("globalavgpool_c32_112"), "GlobalAveragePool", NULL, NULL, gp112, WORK_CHAIN, FP_MICRO_FAN);
    g_autofree char *k5 = attr_ints("kernel_shape", 2, 5, 5), *p4 = attr_ints("pads", 4, 4, 4, 4, 4),
                    *d2 = attr_ints("dilations", 2, 2, 2);
    add(cs, g_strdup("maxpool5x5d2_c4_64"), "MaxPool", g_strconcat(k5, p4, d2, NULL), NULL, dil, WORK_CHAIN, 0);
    add(cs, g_strdup("maxpool_tiny"), "MaxPool", g_strdup(k1), NULL, tiny, TINY_CHAIN, FP_MICRO_TINY);
    g_autofree char *last = attr_ints("axes", 1, -1), *first = attr_ints("axes", 1, 0);
    add(cs, g_strdup("reducemean_128x768"), "ReduceMean", g_strdup(last), NULL, ln, WORK_CHAIN, FP_MICRO_FAN);
    add(cs, g_strdup("reducemean_tiny"), "ReduceMean", g_strdup(first), NULL, v8, TINY_CHAIN, FP_MICRO_TINY);
    int64_t heads[] = {1, 128, 12, 64, 0};
    add(cs, g_strdup("transpose_heads_128x12x64"), "Transpose", attr_ints("perm", 4, 0, 2, 1, 3), NULL, heads,
        WORK_CHAIN, 0);
    add(cs, g_strdup("transpose_c64_56"), "Transpose", attr_ints("perm", 4, 0, 1, 3, 2), NULL, x, WORK_CHAIN, 0);
    int64_t keys[] = {1, 12, 128, 64, 0}, wide[] = {1, 512, 8, 64, 0};
    add(cs, g_strdup("transpose_keys_12x128x64"), "Transpose", attr_ints("perm", 4, 0, 1, 3, 2), NULL, keys, WORK_CHAIN,
        0);
    add(cs, g_strdup("transpose_heads_512x8x64"), "Transpose", attr_ints("perm", 4, 0, 2, 1, 3), NULL, wide, WORK_CHAIN,
        0);
    gather_all(cs, "gather_c64_56", x, WORK_CHAIN, 0);
    gather_all(cs, "gather_tiny", tiny, TINY_CHAIN, FP_MICRO_TINY);
    add(cs, g_strdup("transpose_tiny"), "Transpose", attr_ints("perm", 4, 0, 1, 3, 2), NULL, tiny, TINY_CHAIN,
        FP_MICRO_TINY);
    add(cs, g_strdup("reshape_tiny"), "Reshape", g_strdup("input: \"shape\""),
        g_strdup("initializer { name: \"shape\" data_type: 7 dims: 2 int64_data: 1 int64_data: 8 }\n"), v8, TINY_CHAIN,
        FP_MICRO_TINY);
    int64_t sln32[] = {1, 1, 32, 0}, h32[] = {32, 0}; /* a tiny decoder's token: the kernel's launch */
    add(cs, g_strdup("skiplayernorm_tiny"), "SkipLayerNormalization", g_strdup(slnx),
        inits("k", sln32, "s", h32, "b", h32, NULL), sln32, TINY_CHAIN, FP_MICRO_TINY | FP_MICRO_CONTRIB);
}

/* A decode step's one-row attention products on matrices the L2 keeps (2 heads of 128 x 128, 640 KB
 * along a chain), beside matmuls()'s that outgrow it: MLAS's one-row kernel reads B where it lies,
 * and a scaled one packs B first (cost.c, past_l2). Listed last, so the cases before keep their
 * places. */
static void decode_products(GArray *cs)
{
    int64_t x[] = {2, 1, 128, 0}, w[] = {2, 128, 128, 0};
    add(cs, g_strdup("bmatmul_2x1x128"), "MatMul", g_strdup("input: \"w\""), inits("w", w, NULL), x, WORK_CHAIN, 0);
    add(cs, g_strdup("fmatmul_t_2x1x128"), "FusedMatMul",
        g_strdup("input: \"w\" attribute { name: \"transB\" type: INT i: 1 }"
                 " attribute { name: \"alpha\" type: FLOAT f: 0.125 }"),
        inits("w", w, NULL), x, WORK_CHAIN, FP_MICRO_CONTRIB);
}

/* A chain of a decoder token's small ops [1, 1, 64], each with weights of its own: an Add of a bias,
 * a Sigmoid, a MatMul by a 64 x 64 weight, a Softmax, a LayerNormalization and a Transpose of the
 * first two axes, in turn (seven classes with the ReduceMax; FP_MICRO_MIXED). Listed last. */
static void mixed(GArray *cs)
{
    int64_t x[] = {1, 1, 64, 0}, h[] = {64, 0}, w[] = {64, 64, 0};
    GArray *cycle = g_array_new(FALSE, FALSE, sizeof(fp_micro_case));
    g_array_set_clear_func(cycle, case_clear);
    add(cycle, g_strdup("add"), "Add", g_strdup("input: \"c\""), inits("c", h, NULL), x, 1, 0);
    add(cycle, g_strdup("sigmoid"), "Sigmoid", NULL, NULL, x, 1, 0);
    add(cycle, g_strdup("matmul"), "MatMul", g_strdup("input: \"w\""), inits("w", w, NULL), x, 1, 0);
    add(cycle, g_strdup("softmax"), "Softmax", g_strdup("attribute { name: \"axis\" type: INT i: -1 }"), NULL, x, 1, 0);
    add(cycle, g_strdup("layernorm"), "LayerNormalization", g_strdup(LN_EXTRA), inits("s", h, "b", h, NULL), x, 1, 0);
    add(cycle, g_strdup("transpose"), "Transpose", attr_ints("perm", 3, 1, 0, 2), NULL, x, 1, 0);
    add(cs, g_strdup("mixed_1x64"), "Add", NULL, NULL, x, 1 + MIXED_CYCLES * (int)cycle->len, FP_MICRO_MIXED);
    g_array_index(cs, fp_micro_case, cs->len - 1).cycle = cycle;
}

/* A decoder token's LayerNormalization [1, 1, 64], then the same with its Mean and InvStdDev
 * outputs, which no op reads: their difference is the runtime's cost of a kernel's output. Listed
 * last too. */
static void kernel_outputs(GArray *cs)
{
    int64_t x[] = {1, 1, 64, 0}, h[] = {64, 0};
    add(cs, g_strdup("layernorm_1x64"), "LayerNormalization", g_strdup(LN_EXTRA), inits("s", h, "b", h, NULL), x,
        TINY_CHAIN, FP_MICRO_TINY);
    add(cs, g_strdup("layernorm_1x64_outputs"), "LayerNormalization", g_strdup(LN_EXTRA), inits("s", h, "b", h, NULL),
        x, TINY_CHAIN, FP_MICRO_TINY | FP_MICRO_OUTPUTS);
    g_array_index(cs, fp_micro_case, cs->len - 1).outputs = 2;
}

GArray *fp_micro_cases(void)
{
    GArray *cs = g_array_new(FALSE, FALSE, sizeof(fp_micro_case));
    g_array_set_clear_func(cs, case_clear);
    convolutions(cs);
    matmuls(cs);
    elementwise(cs);
    copies(cs);
    others(cs);
    decode_products(cs);
    kernel_outputs(cs);
    mixed(cs);
    return cs;
}

/* text with every name that inits declares (`name: "w"`) written as name_i, where it is declared
 * (`name: "w"`) and where a node reads it (`input: "w"`): op i's own copy of the case's weights. */
static char *own_names(const char *text, const char *inits, int i)
{
    g_autoptr(GRegex) decl = g_regex_new("name: \"([^\"]+)\"", 0, 0, NULL);
    g_autoptr(GMatchInfo) m = NULL;
    char *out = g_strdup(text);
    for (g_regex_match(decl, inits, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
        g_autofree char *name = g_match_info_fetch(m, 1);
        g_autofree char *quoted = g_regex_escape_string(name, -1);
        g_autofree char *pattern = g_strdup_printf("(name|input): \"%s\"", quoted);
        g_autofree char *repl = g_strdup_printf("\\1: \"%s_%d\"", name, i);
        g_autoptr(GRegex) use = g_regex_new(pattern, 0, 0, NULL);
        char *next = g_regex_replace(use, out, -1, 0, repl, 0, NULL);
        g_free(out);
        out = next;
    }
    return out;
}

/* A new model text up to its graph's name: IR 8, opset OPSET, com.microsoft 1 when `contrib`. */
static GString *model_head(bool contrib, const char *name)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "ir_version: 8\nproducer_name: \"fuseplan calibrate\"\n"
                           "opset_import { domain: \"\" version: %d }\n%sgraph {\n  name: \"%s\"\n",
                           OPSET, contrib ? "opset_import { domain: \"com.microsoft\" version: 1 }\n" : "", name);
    return s;
}

char *fp_micro_text(const fp_micro_case *c, int n)
{
    GString *s = model_head(c->flags & FP_MICRO_CONTRIB, c->name);
    g_string_append(s, "  input { name: \"x0\" type { tensor_type { elem_type: 1 shape {");
    for (int i = 0; i < c->rank; i++)
        g_string_append_printf(s, " dim { dim_value: %" G_GINT64_FORMAT " }", c->dims[i]);
    g_string_append(s, " } } } }\n  output { name: \"y\" type { tensor_type { elem_type: 1 shape { } } } }\n");
    for (int i = 0; i < n; i++) {
        const fp_micro_case *op = c->cycle ? &g_array_index(c->cycle, fp_micro_case, i % c->cycle->len) : c;
        bool shared = c->flags & FP_MICRO_SHARED;
        g_autofree char *inits = shared ? g_strdup(i ? "" : op->inits) : own_names(op->inits, op->inits, i);
        g_autofree char *extra = shared ? g_strdup(op->extra) : own_names(op->extra, op->inits, i);
        g_string_append(s, inits);
        g_string_append_printf(s, "  node { name: \"n%d\" op_type: \"%s\" input: \"x%d\" %s output: \"x%d\"", i, op->op,
                               c->flags & FP_MICRO_FAN ? 0 : i, extra, i + 1);
        for (int k = 1; k <= c->outputs; k++)
            g_string_append_printf(s, " output: \"x%d_%d\"", i + 1, k);
        g_string_append_printf(s, "%s }\n", op->flags & FP_MICRO_CONTRIB ? " domain: \"com.microsoft\"" : "");
    }
    g_string_append_printf(s,
                           "  node { name: \"out\" op_type: \"ReduceMax\" input: \"x%d\" output: \"y\" "
                           "attribute { name: \"keepdims\" type: INT i: 0 } }\n}\n",
                           n);
    return g_string_free(s, FALSE);
}

char *fp_micro_io_text(bool inputs, bool outputs)
{
    GString *s = model_head(false, "run_io");
    const char *f16 = "type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } dim { dim_value: 16 } } } }";
    for (int i = 0; i <= (inputs ? FP_MICRO_IO_OPS : 0); i++)
        g_string_append_printf(s, "  input { name: \"x%d\" %s }\n", i, f16);
    for (int i = outputs ? 1 : FP_MICRO_IO_OPS; i <= FP_MICRO_IO_OPS; i++)
        g_string_append_printf(s, "  output { name: \"a%d\" %s }\n", i, f16);
    for (int i = 1; i <= FP_MICRO_IO_OPS; i++)
        g_string_append_printf(s, "  node { op_type: \"Add\" input: \"%s%d\" input: \"x%d\" output: \"a%d\" }\n",
                               i == 1 ? "x" : "a", i - 1, inputs ? i : 0, i);
    g_string_append(s, "}\n");
    return g_string_free(s, FALSE);
}

GBytes *fp_micro_bytes(const fp_micro_case *c, int n, GError **error)
{
    g_autofree char *text = fp_micro_text(c, n);
    return fp_onnx_write_text(text, strlen(text), error);
}
