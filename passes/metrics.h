/* metrics.h - per-op work (FLOPs, bytes, parameters) into fp_node.metrics (passes/metrics.c). */
#ifndef FP_PASS_METRICS_H
#define FP_PASS_METRICS_H

#include "ir/diag.h"
#include "ir/graph.h"

/* Fills every node's metrics from the inferred shapes. Folded and removed nodes cost nothing;
 * view ops move no data. Nodes whose shapes are not static get fp_node.metrics_known = false and
 * a diagnostic. Returns true when every node's metrics are known. */
bool fp_pass_metrics(fp_model *m, fp_diag *diag);

/* FLOPs per byte moved (activations + weights + output); 0 when nothing moves. */
double fp_metrics_intensity(const fp_metrics *mt);
/* The attention scores a fused attention op (com.microsoft Attention, MultiHeadAttention,
 * GroupQueryAttention) computes, B x heads x S x T (S query tokens, T key tokens: past and new);
 * 0 for another op or when its shapes are not known. */
uint64_t fp_metrics_attention_scores(const fp_node *n);

/* The FLOPs n's op does by its own count (docs/metrics.md), also for a fused node, whose metrics
 * keep its members' sum: what the runtime's kernel for that op computes. 0 when unknown. */
uint64_t fp_metrics_op_flops(const fp_node *n);

#endif
