/* memory.h - the `fuseplan memory` and `fuseplan headroom` reports as text (JSON: formats/json.h). */
#ifndef FP_REPORT_MEMORY_H
#define FP_REPORT_MEMORY_H

#include <stdio.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/memory/headroom.h"
#include "passes/memory/memory.h"

/* Why the peak is where it is, one line each: multi-input nodes holding their inputs across it,
 * long-lived buffers (skip connections), graph inputs and outputs, subgraph workspace, what a
 * memory-aware order gains, fragmentation, unknown sizes. Caller frees (g_ptr_array_unref). */
GPtrArray *fp_report_memory_hints(const fp_memory_result *r);
/* The name a buffer is listed under: its value, or the node of a subgraph workspace. */
const char *fp_report_memory_tensor_name(const fp_memory_tensor *t);

/* Text report; at most `top` buffers live at the peak are listed (0 = all); with verbose, every
 * diagnostic too. */
void fp_report_memory_text(const fp_model *m, const fp_memory_result *r, const fp_diag *diag, unsigned top,
                           bool verbose, FILE *out);

/* What `headroom` was asked: the capacity, its source, the reserve. */
typedef struct {
    const char *device;  /* profile name, or NULL for --memory */
    uint64_t capacity;
    uint64_t reserve;
    const char *reserve_spec; /* as given ("10%", "2GiB") */
    const fp_memory_opts *mem;
    const char *batch_dim;
} fp_headroom_request;

void fp_report_headroom_text(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                             const fp_diag *diag, bool verbose, FILE *out);

#endif
