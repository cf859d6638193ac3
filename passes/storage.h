/* storage.h - values a what-if stores in other bytes than their dtype and shape give (a weight
 * quantized, a KV cache in 8 bits), and the pass that moves the per-op traffic of the metrics to
 * those bytes (passes/storage.c), so that the cost model reads what the runtime would. */
#ifndef FP_PASS_STORAGE_H
#define FP_PASS_STORAGE_H

#include <glib.h>
#include <stdint.h>

#include "ir/graph.h"

typedef struct fp_storage fp_storage;

fp_storage *fp_storage_new(void);
void fp_storage_free(fp_storage *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_storage, fp_storage_free)

/* v is stored in exactly `bytes` whatever its shape (a converted weight). */
void fp_storage_set_bytes(fp_storage *s, const fp_value *v, uint64_t bytes);
/* v is stored at dtype: its elements as inferred x the dtype's size (a KV tensor). */
void fp_storage_set_dtype(fp_storage *s, const fp_value *v, fp_dtype dtype);
/* Whether s stores anything differently. */
bool fp_storage_any(const fp_storage *s);

/* After fp_pass_metrics: every node of m's main graph whose metrics are known and that reads or
 * writes a value of s moves that value's share of its traffic (bytes_weight for a weight,
 * bytes_act for another input, bytes_out for an output) to the stored bytes. Views move nothing
 * and stay as they are. */
void fp_pass_storage(fp_model *m, const fp_storage *s);

#endif
