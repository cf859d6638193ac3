/* pair.h - one model analyzed against one measured profile (calibration/pair.c): input shapes
 * bound from the profile, the analysis of the model, the stage chosen, kernels matched. What
 * `fuseplan compare` reports and `fuseplan fit` fits to. */
#ifndef FP_PAIR_H
#define FP_PAIR_H

#include "analysis/analysis.h"
#include "calibration/match.h"
#include "ir/profile.h"

typedef enum { FP_PAIR_AUTO, FP_PAIR_ORIGINAL, FP_PAIR_FUSED } fp_pair_stage;

typedef struct {
    fp_analysis *a;          /* the model analyzed (its original graph too unless the stage is FUSED) */
    const fp_model *final;   /* a->model: the model after the pipeline (the fused stage's graph) */
    fp_match_result *match;  /* of the chosen stage */
    fp_match_result *other;  /* auto: the stage not chosen; else NULL */
    fp_pair_stage stage;     /* ORIGINAL or FUSED */
    char *stage_note;        /* how the stage was chosen (one line) */
    const char *inputs_note; /* where the input shapes came from (one line), or NULL */
    fp_diag *diag;           /* a->diag, with the chosen stage's matching findings after the analysis' */
    fp_target *level;        /* the target the profile's level picked (see fp_pair_run), or NULL */
    const char *target;      /* the name of the target compared with */
} fp_pair;

/* Parses "auto", "original", "fused"; false for anything else. */
bool fp_pair_stage_parse(const char *s, fp_pair_stage *out);
const char *fp_pair_stage_name(fp_pair_stage s);

/* Loads the model at `path`, binds its inputs (base's inputs / batch, else the shapes the profile
 * recorded for the nodes reading them, else batch 1), runs the pipeline on dev / t and matches p
 * to the stage asked for (AUTO: the one whose match covers more measured time, then the one with
 * fewer disagreements). With `by_level` (t is the device's, no target was named), a profile with
 * no NCHWc kernel (ReorderInput, ReorderOutput) is compared with the target t names in `[target]
 * below_nchwc` when t blocks to NCHWc (ONNX Runtime's level all against a run at level extended),
 * said in the stage note. False with a one-line error naming the file. Clear with
 * fp_pair_clear even after a failure. */
bool fp_pair_run(fp_pair *pr, const char *path, const fp_profile *p, const fp_device *dev, const fp_target *t,
                 bool by_level, const fp_analysis_opts *base, fp_pair_stage stage, GError **error);
void fp_pair_clear(fp_pair *pr);

/* One line explaining why p cannot be compared at all (no kernels, aggregate rows only), or NULL.
 * Caller frees. */
char *fp_pair_profile_unusable(const fp_profile *p);
/* The one-line error for a profile none of whose kernels matches the model. Caller frees. */
char *fp_pair_no_match_message(const char *model_path, const fp_model *m, const fp_profile *p);

#endif
