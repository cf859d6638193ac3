/* dtype.h - element types; numbering equals ONNX TensorProto.DataType so frontends map 1:1. */
#ifndef FP_DTYPE_H
#define FP_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

/* X(ID, onnx number, display name, bits per element; 0 = not a fixed-size type) */
#define FP_DTYPES(X)                           \
    X(UNDEFINED, 0, "undefined", 0)            \
    X(FLOAT, 1, "float32", 32)                 \
    X(UINT8, 2, "uint8", 8)                    \
    X(INT8, 3, "int8", 8)                      \
    X(UINT16, 4, "uint16", 16)                 \
    X(INT16, 5, "int16", 16)                   \
    X(INT32, 6, "int32", 32)                   \
    X(INT64, 7, "int64", 64)                   \
    X(STRING, 8, "string", 0)                  \
    X(BOOL, 9, "bool", 8)                      \
    X(FLOAT16, 10, "float16", 16)              \
    X(DOUBLE, 11, "float64", 64)               \
    X(UINT32, 12, "uint32", 32)                \
    X(UINT64, 13, "uint64", 64)                \
    X(COMPLEX64, 14, "complex64", 64)          \
    X(COMPLEX128, 15, "complex128", 128)       \
    X(BFLOAT16, 16, "bfloat16", 16)            \
    X(FLOAT8E4M3FN, 17, "float8e4m3fn", 8)     \
    X(FLOAT8E4M3FNUZ, 18, "float8e4m3fnuz", 8) \
    X(FLOAT8E5M2, 19, "float8e5m2", 8)         \
    X(FLOAT8E5M2FNUZ, 20, "float8e5m2fnuz", 8) \
    X(UINT4, 21, "uint4", 4)                   \
    X(INT4, 22, "int4", 4)                     \
    X(FLOAT4E2M1, 23, "float4e2m1", 4)

typedef enum {
#define X(id, num, name, bits) FP_DT_##id = num,
    FP_DTYPES(X)
#undef X
        FP_DT_COUNT
} fp_dtype;

/* Display name ("float32"); "dtype(N)" style names are not produced: unknown -> "undefined". */
const char *fp_dtype_name(fp_dtype t);
/* Bits per element; 0 for string/undefined/out of range. */
unsigned fp_dtype_bits(fp_dtype t);
/* dtype for a display name or ONNX enum name ("float32", "FLOAT", "fp16"); FP_DT_UNDEFINED if unknown. */
fp_dtype fp_dtype_from_name(const char *name);
/* Byte size of n elements (sub-byte types round up); false on overflow or unsized type. */
bool fp_dtype_bytes(fp_dtype t, uint64_t n, uint64_t *bytes);
static inline bool fp_dtype_valid(int t) { return t >= 0 && t < FP_DT_COUNT; }
/* True for the floating-point types (complex and the 8- and 4-bit float formats included). */
bool fp_dtype_is_float(fp_dtype t);
/* The value of IEEE 754 half-precision bits h (float16 tensor data). */
double fp_half_to_double(uint16_t h);
/* The IEEE 754 half-precision bits of d, rounded to float32 and then to float16 (the dropped
 * bits' top one rounds the magnitude up; overflow gives infinity, NaN stays NaN). */
uint16_t fp_double_to_half(double d);

#endif
