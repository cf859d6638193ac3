/* analysis.h - one analysis of one model (analysis/analysis.c): the device and target, the model
 * with its inputs bound, the pass pipeline, and the batch headroom, in one result that the
 * commands and the reports read. Nothing in the result changes once fp_analysis_run returns:
 * the headroom search leaves the model inferred as the pipeline left it. */
#ifndef FP_ANALYSIS_H
#define FP_ANALYSIS_H

#include <stdio.h>

#include "analysis/decoder.h"
#include "analysis/pipeline.h"
#include "analysis/precision.h"
#include "devices/device.h"
#include "passes/memory/headroom.h"

/* Input shapes found by the caller once the model is read (e.g. from a measured profile): a table
 * as fp_bind_input_shapes gives (name -> fp_shape* in m's arena), the batch for the inputs it
 * leaves symbolic (0: none), and a one-line note of what was bound from where (g_free; may stay
 * NULL). NULL with an error. */
typedef GHashTable *(*fp_analysis_bind_fn)(fp_model *m, void *data, int64_t *batch, char **note,
                                           GError **error);

typedef struct {
    const char *device;        /* profile name or .ini path; NULL: cpu-avx2 */
    const fp_device *device_profile; /* a profile the caller loaded (not owned), instead of `device` */
    const char *target;        /* target name or .ini path; NULL: the device's */
    const fp_target *target_rules; /* a target the caller loaded (not owned), instead of `target` */
    char **inputs;             /* NAME:DIMS specs (--input), NULL-terminated; NULL: none */
    int64_t batch;             /* binds the batch dimension; 0: not given (a symbolic batch is bound
                                  to 1 when no input is given either) */
    const char *batch_dim;     /* the symbol --batch binds; NULL: first dim of each input */
    char **dims;               /* NAME=N specs (--dim): symbolic dims bound by name; NULL: none */
    int64_t context;           /* a decoder's tokens per sequence (--context); 0: FP_DECODER_DEFAULT_CONTEXT */
    const char *phase;         /* "decode" (default) or "prefill" (--phase); NULL: decode */
    fp_analysis_bind_fn bind;  /* optional, used when neither inputs nor batch are given */
    void *bind_data;
    fp_dtype what_if;          /* compute float32 ops in this dtype; FP_DT_UNDEFINED: as the model */
    const char *precision_mode; /* ATC's --precision_mode (--precision-mode), overriding the target's;
                                   NULL: the target's */
    const char *weight_dtype;  /* the storage what-ifs as fp_precision_parse takes them (--weight-dtype, */
    int64_t group_size;        /* --group-size, --kv-dtype, --kv-block); NULL and 0: none */
    const char *kv_dtype;
    int64_t kv_block;
    bool strict;               /* op types fuseplan does not know are an error, not a warning */
    bool headroom;             /* also search the batch headroom (not with inputs: see headroom_note) */
    bool original;             /* also keep the model before fusion (shapes and metrics) with its cost */
    const char *dump_after;    /* pass after which the IR is printed to dump_out, or NULL */
    FILE *dump_out;
} fp_analysis_opts;

typedef struct fp_analysis_owned fp_analysis_owned;

typedef struct {
    char *path;                /* the model's path (a copy) */
    const fp_device *device;
    const fp_target *target;
    fp_model *model;           /* the final graph (fusion, layout) as the pipeline left it */
    fp_diag *diag;             /* every finding, in pipeline order */
    fp_pipeline_result res;    /* stages, fusions, layout, memory plan, cost */
    fp_model *original;        /* opts.original: the model with shapes and metrics only; else NULL */
    fp_cost_result *original_cost;
    fp_dtype what_if;          /* as asked (FP_DT_UNDEFINED: none) */
    int64_t batch;             /* the batch the pipeline bound (0: none) */
    char *batch_note;          /* how symbolic dims were bound, or NULL */
    char *inputs_note;         /* the binder's note, or NULL */
    char *warning;             /* op types fuseplan does not know, one line for stderr, or NULL */
    const char *precision_mode; /* the target's, or the one asked; NULL for a target without one */
    fp_precision precision;    /* the storage what-ifs asked, with precision_mode's defaults */
    fp_weight_plan weights;    /* the model's weights as stored and at precision.weight */
    uint64_t weight_bytes;     /* the final graph's weights at precision.weight (the stages' too) */
    fp_kv_cache *kv;           /* the KV cache of a decoder; NULL for a model without one. Its
                                  tensors are held apart from the activation arena */
    uint64_t kv_bytes;         /* the cache held at the analysed point (fp_kv_cache_held at
                                  precision.kv and kv_block); 0 when not known */
    const char *phase;         /* "decode" or "prefill" when the decoder's step bound the tokens, else NULL */
    uint64_t kv_past_bytes;    /* the past inputs at precision.kv: the copy a runtime that keeps
                                  past and present apart holds besides (0 when not known) */
    const fp_headroom_result *headroom; /* NULL when not computed */
    const char *headroom_note; /* why not, when asked and not computed; NULL when not asked */
    fp_analysis_owned *owned;  /* what the result owns besides the fields above */
} fp_analysis;

/* Analyzes the model at path with opts. NULL with a one-line error naming the file and the
 * object (device, target, input spec, node, pass) when any step fails; a headroom search that
 * cannot run is no error (headroom_note says why). Free with fp_analysis_free. */
fp_analysis *fp_analysis_run(const char *path, const fp_analysis_opts *opts, GError **error);
void fp_analysis_free(fp_analysis *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_analysis, fp_analysis_free)

#endif
