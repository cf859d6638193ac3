/* compare.h - one model analyzed against one measured profile (cli/compare.c): input shapes
 * bound from the profile, the pipeline on the model, the stage chosen, kernels matched. Shared
 * by `fuseplan compare` and `fuseplan fit`. */
#ifndef FP_CLI_COMPARE_H
#define FP_CLI_COMPARE_H

#include "analyze.h"
#include "frontends/profile/profile.h"
#include "calibration/match.h"
#include "analysis/pipeline.h"

typedef enum { FP_STAGE_AUTO, FP_STAGE_ORIGINAL, FP_STAGE_FUSED } fp_cmp_stage;

typedef struct {
    fp_analysis *a;           /* the model analyzed (its original graph too unless the stage is FUSED) */
    const fp_model *final;    /* a->model: the model after the pipeline (the fused stage's graph) */
    fp_match_result *match;   /* of the chosen stage */
    fp_match_result *other;   /* auto: the stage not chosen; else NULL */
    fp_cmp_stage stage;       /* ORIGINAL or FUSED */
    char *stage_note;         /* how the stage was chosen (one line) */
    const char *inputs_note;  /* where the input shapes came from (one line), or NULL */
    fp_diag *diag;            /* a->diag, with the chosen stage's matching findings after the analysis' */
    fp_target *level;         /* the target the profile's level picked (see fp_cmp_pair_run), or NULL */
    const char *target;       /* the name of the target compared with */
} fp_cmp_pair;

/* Parses "auto", "original", "fused"; false for anything else. */
bool fp_cmp_stage_parse(const char *s, fp_cmp_stage *out);
const char *fp_cmp_stage_name(fp_cmp_stage s);

/* Loads the model at `path`, binds its inputs (base's inputs / batch, else the shapes the profile
 * recorded for the nodes reading them, else batch 1), runs the pipeline on dev / t and matches p
 * to the stage asked for (AUTO: the one whose match covers more measured time, then the one with
 * fewer disagreements). With `by_level` (t is the device's, no target was named), a profile with
 * no NCHWc kernel (ReorderInput, ReorderOutput) is compared with the target t names in `[target]
 * below_nchwc` when t blocks to NCHWc (ONNX Runtime's level all against a run at level extended),
 * said in the stage note. False with a one-line error naming the file. Clear with
 * fp_cmp_pair_clear even after a failure. */
bool fp_cmp_pair_run(fp_cmp_pair *pr, const char *path, const fp_profile *p, const fp_device *dev,
                     const fp_target *t, bool by_level, const fp_analysis_opts *base, fp_cmp_stage stage,
                     GError **error);
void fp_cmp_pair_clear(fp_cmp_pair *pr);

/* One line explaining why p cannot be compared at all (no kernels, aggregate rows only), or NULL.
 * Caller frees. */
char *fp_cmp_profile_unusable(const fp_profile *p);
/* The one-line error for a profile none of whose kernels matches the model. Caller frees. */
char *fp_cmp_no_match_message(const char *model_path, const fp_model *m, const fp_profile *p);

#endif
