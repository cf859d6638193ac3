/* ge_format.h - the storage formats and dtypes Ascend's graph engine gives each tensor of a graph
 * that has none yet (passes/ge_format.c), on targets that ask for it (`[layout] ge_formats`): the
 * TransData and Cast ops GE inserts, those that run on the device and those it folds into the
 * weights at build. Rules and sources: docs/rules.md, "GE formats". */
#ifndef FP_PASS_GE_FORMAT_H
#define FP_PASS_GE_FORMAT_H

#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "passes/fusion/fuse.h"

typedef struct {
    bool ran;                  /* formats chosen (false: not asked, or the graph had its own) */
    bool preset;               /* the graph already carries GE's formats: nothing inserted */
    uint32_t c0;               /* NC1HWC0's C0: 32 for a 1-byte compute dtype, else 16 */
    uint32_t ops_5hd;          /* ops that run in NC1HWC0 (Conv2D, pools, FullyConnection, ...) */
    uint32_t transdata;        /* TransData ops on activations (run on the device) */
    uint32_t cast;             /* Cast ops on activations (graph inputs and outputs) */
    uint32_t transdata_folded; /* TransData ops on weights, folded into them at build */
    uint32_t cast_folded;      /* Cast ops on weights, folded into them at build */
    uint32_t to_5hd;           /* TransData by destination: NC1HWC0 */
    uint32_t to_fractal_z;     /* FRACTAL_Z (FRACTAL_Z_C04 included) */
    uint32_t to_fractal_nz;    /* FRACTAL_NZ */
    uint32_t to_origin;        /* back to NCHW or ND */
} fp_ge_format_result;

/* Gives m's main graph GE's formats when target t asks for it (`[layout] ge_formats = true`) and
 * the graph has no device format yet: conversions inserted where a reader needs another format
 * (TransData) or dtype (Cast: float32 read as `compute`, FP_DT_FLOAT16 under force_fp16; graph
 * outputs back to their dtype), one per value and format. Those of weights are marked folded.
 * Each runtime conversion is a finding in diag. Returns whether it changed m (then linked again;
 * its metrics need making again). Needs shapes. */
bool fp_pass_ge_format(fp_model *m, const fp_target *t, fp_dtype compute, fp_ge_format_result *res, fp_diag *diag);

#endif
