/* analysis.h - one analysis of one model (analysis/analysis.c), the one path every analyzing
 * command takes: the device and target, the model read and its inputs bound (input specs, the
 * batch, --dim, a decoder's step), the storage what-ifs, the pass pipeline up to a stop point, and
 * the batch headroom, in one result that the commands and the reports read. Nothing in the result
 * changes once fp_analysis_run returns, but through fp_analysis_rebatch: the headroom search
 * leaves the model inferred as the pipeline left it. */
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
typedef GHashTable *(*fp_analysis_bind_fn)(fp_model *m, void *data, int64_t *batch, char **note, GError **error);

/* Device memory kept free for the runtime, the framework and other tenants: a share of the
 * capacity, or bytes. */
typedef struct {
    bool in_bytes; /* bytes, else share */
    double share;  /* of the capacity, in [0, 1) */
    uint64_t bytes;
} fp_reserve;

/* The reserve when none is asked: a tenth of the capacity. */
#define FP_RESERVE_DEFAULT_SHARE 0.1

/* The bytes r keeps free of `capacity` (NULL: the default share). */
uint64_t fp_reserve_bytes(const fp_reserve *r, uint64_t capacity);

/* The batch headroom asked of an analysis: the largest batch whose weights, planned activations
 * (and a decoder's cache) fit in the capacity less the reserve. */
typedef struct {
    bool on;                   /* search it */
    uint64_t capacity;         /* bytes; 0: the device's memory */
    const fp_reserve *reserve; /* NULL: FP_RESERVE_DEFAULT_SHARE of the capacity */
    int64_t max_batch;         /* search limit; 0: FP_HEADROOM_MAX_BATCH */
    bool findings;             /* plan the answer again for its findings (fp_analysis.headroom_diag) */
} fp_analysis_headroom;

typedef struct {
    const char *device;              /* profile name or .ini path; NULL: cpu-avx2 */
    const fp_device *device_profile; /* a profile the caller loaded (not owned), instead of `device` */
    const char *target;              /* target name or .ini path; NULL: the device's */
    const fp_target *target_rules;   /* a target the caller loaded (not owned), instead of `target` */
    char **inputs;                   /* NAME:DIMS specs (--input), NULL-terminated; NULL: none */
    int64_t batch;                   /* binds the batch dimension; 0: not given (a symbolic batch is bound
                                  to 1 when no input is given either) */
    const char *batch_dim;           /* the symbol --batch binds; NULL: first dim of each input */
    char **dims;                     /* NAME=N specs (--dim): symbolic dims bound by name; NULL: none */
    int64_t context;                 /* a decoder's tokens per sequence (--context); 0: the genai config's
                                        max_length, else FP_DECODER_DEFAULT_CONTEXT */
    const char *phase;               /* "decode" (default) or "prefill" (--phase); NULL: decode */
    const char *genai_config;        /* onnxruntime-genai's genai_config.json (--genai-config); NULL: the one
                                        in the model's folder when it names the model's file (or none)
                                        and the model has a KV cache or an input named "past..." */
    bool training;                   /* a decoder's step is a training step of `context` tokens
                                        (fp_decoder_step.training); phase NULL */
    fp_analysis_bind_fn bind;        /* optional, used when neither inputs nor batch are given */
    void *bind_data;
    fp_dtype what_if;           /* compute float32 ops in this dtype; FP_DT_UNDEFINED: as the model */
    const char *precision_mode; /* ATC's --precision_mode (--precision-mode), overriding the target's;
                                   NULL: the target's */
    const char *weight_dtype;   /* the storage what-ifs as fp_precision_parse takes them (--weight-dtype, */
    int64_t group_size;         /* --group-size, --kv-dtype, --kv-block); NULL and 0: none */
    const char *kv_dtype;
    int64_t kv_block;
    bool strict;                /* op types fuseplan does not know are an error, not a warning */
    fp_pipeline_stop stop;      /* where the pipeline stops (FULL: every pass). At the shapes stop no
                                  target is loaded: the model is analyzed as exported */
    const fp_memory_opts *plan; /* how the memory is planned (strategy, schedule, alignment; NULL: the
                                  best strategy in the given order at the device's alignment). At the
                                  shapes stop the model as exported is planned only when given */
    bool cost;                  /* at the shapes stop: also the cost of the model as exported */
    fp_analysis_headroom headroom;
    bool original;          /* FULL: also keep the model before fusion (shapes and metrics) with its cost */
    const char *dump_after; /* pass after which the IR is printed to dump_out, or NULL */
    FILE *dump_out;
} fp_analysis_opts;

typedef struct fp_analysis_owned fp_analysis_owned;

typedef struct {
    char *path; /* the model's path (a copy) */
    const fp_device *device;
    const fp_target *target;
    fp_pipeline_stop stop;  /* as asked */
    fp_model *model;        /* the graph as the pipeline left it: final (fusion, layout), after the
                                  fusions, or as exported (shapes stop) */
    fp_diag *diag;          /* every finding, in pipeline order */
    fp_pipeline_result res; /* stages, fusions, layout, memory plan, cost */
    fp_model *original;     /* opts.original: the model with shapes and metrics only; else NULL */
    fp_cost_result *original_cost;
    fp_dtype what_if;           /* as asked (FP_DT_UNDEFINED: none) */
    int64_t batch;              /* the batch the pipeline bound (0: none) */
    char *batch_note;           /* how symbolic dims were bound, or NULL */
    char *inputs_note;          /* the binder's note, or NULL */
    char *warning;              /* op types fuseplan does not know, one line for stderr, or NULL */
    char *config_warning;       /* the genai_config.json beside the model disagrees with it and is not
                                   used (the KV facts are the graph's): one line for stderr, or NULL */
    char *unknown_note;         /* res.unknown_values values of unknown size, the first named with why
                                  (an op type fuseplan does not know, a symbolic dim left unbound, a
                                  shape not inferred): one line for stderr, or NULL when there are none */
    const char *precision_mode; /* the target's, or the one asked; NULL for a target without one */
    fp_precision precision;     /* the storage what-ifs asked, with precision_mode's defaults */
    fp_weight_plan weights;     /* the model's weights as stored and at precision.weight */
    uint64_t weight_bytes;      /* the final graph's weights at precision.weight (the stages' too) */
    fp_kv_cache *kv;            /* the KV cache of a decoder; NULL for a model without one. Its
                                  tensors are held apart from the activation arena */
    uint64_t kv_bytes;          /* the cache held at the analysed point (fp_kv_cache_held at
                                  precision.kv and kv_block); 0 when not known */
    const char *phase;          /* "decode", "prefill" or "train" when the decoder's step bound the tokens,
                                  else NULL */
    uint64_t kv_past_bytes;     /* the past inputs at precision.kv: the copy a runtime that keeps
                                  past and present apart holds besides (0 when not known) */
    uint64_t headroom_capacity, headroom_reserve; /* what the search had (when searched) */
    const fp_headroom_result *headroom;           /* NULL when not computed */
    fp_diag *headroom_diag;                       /* the findings of the plan at the headroom's answer (NULL when not
                                  computed or not asked) */
    char *headroom_note;                          /* why not, when asked and not computed; NULL when not asked */
    fp_analysis_owned *owned;                     /* what the result owns besides the fields above */
} fp_analysis;

/* Checks what of opts needs no model: counts not negative, the input specs' and --dim values'
 * syntax, the what-ifs' names and group size, the phase. False with a one-line error naming the
 * option and the value. fp_analysis_run checks so first. */
bool fp_analysis_opts_check(const fp_analysis_opts *opts, GError **error);

/* Analyzes the model at path with opts. NULL with a one-line error naming the file and the
 * object (device, target, input spec, node, pass, a value whose size overflows 64 bits) when any
 * step fails; a headroom search that cannot run is no error (headroom_note says why). Free with
 * fp_analysis_free. */
fp_analysis *fp_analysis_run(const char *path, const fp_analysis_opts *opts, GError **error);

/* Infers a's model again with the batch bound to `batch` (1 and up; 0: none, as a->batch says of an
 * analysis that bound none), as the analysis bound it but for the batch: shapes, metrics, the storage what-ifs and, when the analysis made them, the cost
 * and the memory plan (a->res). Only for an analysis stopped after shapes (g_assert). A search over
 * batches calls it per batch and once more with a->batch when it is done. False with the error of
 * the shape pass or of a size that overflows. */
bool fp_analysis_rebatch(fp_analysis *a, int64_t batch, GError **error);

/* Whether the batch of a can be searched: NULL, or why not (a static string): input specs that
 * fix it, a --dim that binds it, or no symbolic batch dimension. */
const char *fp_analysis_batch_refusal(const fp_analysis *a);
void fp_analysis_free(fp_analysis *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_analysis, fp_analysis_free)

#endif
