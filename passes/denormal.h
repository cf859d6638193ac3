/* denormal.h - denormal floats an attention mask makes (passes/denormal.c): a Softmax over logits
 * plus a mask whose masked entries sit about 87 to 104 below the row's largest one computes
 * exp() of them as denormal floats (torchvision's Swin masks with -100: exp(-100) = 3.7e-44, below
 * the smallest normal float, 1.2e-38), and the MatMul that reads the weights then multiplies
 * denormals, which many x86 CPUs do by a microcode assist per operation (one MatMul of Swin-T's
 * shape 45x slower with every weight denormal on an Intel Xeon, docs/benchmarks.md). A mask of
 * -inf or of the dtype's lowest value underflows to 0, which costs nothing. */
#ifndef FP_PASS_DENORMAL_H
#define FP_PASS_DENORMAL_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"

/* Whether n is a product whose denormal operands the cost model counts (MatMul, Gemm, FusedMatMul). */
bool fp_denormal_product(const fp_node *n);
/* The share of n's multiply-adds with a denormal operand: for a product, the larger
 * fp_value_denormal of its first two inputs; else 0. */
double fp_denormal_share(const fp_node *n);
/* n's denormal operations, which the cost model prices (passes/roofline.h): a product's
 * multiply-adds with a denormal operand (fp_denormal_share of its FLOPs / 2), a Softmax's denormal
 * results (its output's fp_value_denormal of its elements); else 0 (and with unknown metrics). */
uint64_t fp_denormal_events(const fp_node *n);

/* Largest mask evaluated (fp_shape_evaluate) to count its denormal entries. */
#define FP_DENORMAL_EVAL_MAX (1u << 20)

/* Whether x is a denormal float: not 0, below FLT_MIN in magnitude. */
bool fp_denormal_float(float x);
/* Whether exp(d) is a denormal float (fp_denormal_float): d about -103.97 to -87.34. */
bool fp_denormal_exp(double d);

/* The fraction of the Softmax weights that are denormal under a mask of n elements, rows of
 * `row` along the Softmax's axis: per row, the entries whose exp(v - the row's largest v) is a
 * denormal (fp_denormal_exp), over n; logits are taken as alike within a row (their spread, a few
 * units, is small beside the band's 17). -1 when row is 0 or does not divide n. */
double fp_denormal_fraction(const float *mask, uint64_t n, uint64_t row);

/* In the main graph of m: each live Softmax over its last axis whose input is, through views, an
 * Add of a mask (an operand fp_shape_evaluate computes, or an initializer left in the ONNX file, up
 * to FP_DENORMAL_EVAL_MAX elements) that
 * makes a share of the weights denormal (fp_denormal_fraction) records that share on its output
 * and on the views of it (fp_value_denormal), and a warning naming the Softmax, the mask's value,
 * the share and the products that read them; a mask not evaluable that is a Where or Mul with a
 * scalar constant in the band gets the warning without a share. Shares found by an earlier run
 * are cleared first. Returns the count of Softmaxes with a share. */
uint32_t fp_pass_denormal(fp_model *m, fp_diag *diag);

/* The shares fp_pass_denormal recorded on the main graph of `from`, set on the values of the same
 * names in `to`'s, a load of the same file bound alike (analysis/analysis.c's model as exported):
 * what the pass would find there, without evaluating the masks again. */
void fp_denormal_copy(const fp_model *from, fp_model *to);

#endif
