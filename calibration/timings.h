/* timings.h - what a runtime calibration measured, in a key file (calibration/timings.c): the
 * profile of fuseplan's own kernels it started from, the runtime's per-run overheads and cache
 * life, and each micro-model point's chains' two fastest rounds. `calibrate --runtime
 * --save-timings FILE` writes one; `calibrate --from-timings FILE` fits a profile from it again,
 * measuring nothing: the same measurements under another cost model, or a profile made again from
 * the measurements it came from. */
#ifndef FP_CALIBRATION_TIMINGS_H
#define FP_CALIBRATION_TIMINGS_H

#include <glib.h>
#include <stdint.h>

#include "calibration/calibrate_runtime.h"

#define FP_RT_TIMINGS_GROUP "timings"
#define FP_RT_TIMINGS_FORMAT 1

/* What a runtime calibration measures besides its points (cli/calibrate.c). */
typedef struct {
    char *runtime_version, *runtime_library;
    double seconds;                         /* the points' measuring */
    double input_overhead, output_overhead; /* fp_rt_io_overheads */
    double last_life;                       /* fp_rt_weight_life */
    uint64_t foot_capacity;                 /* fp_rt_footprint */
    double foot_from;
} fp_rt_extras;

void fp_rt_extras_clear(fp_rt_extras *x);

/* A copy of `native` (the own-kernel profile the calibration started from) with a [timings]
 * group: x, and per point of s (a key CASE@LEVEL) its chains' rounds: short, second short, long,
 * second long (seconds a run). Caller frees. */
GKeyFile *fp_rt_timings_keyfile(GKeyFile *native, const fp_rt_set *s, const fp_rt_extras *x);

/* The own-kernel profile in kf (a timings file read from `path`): a copy without its [timings]
 * group. NULL with FP_DEVICE_ERROR_INVALID naming path when kf has no such group. */
GKeyFile *fp_rt_timings_native(GKeyFile *kf, const char *path, GError **error);

/* Reads kf's [timings] into x (set; fp_rt_extras_clear it) and into the points of s (a set of
 * the profile fp_rt_timings_native gave): every point of s must be there, with four finite times
 * of 0 or more, and every key there must be a point of s or an extra. False with
 * FP_DEVICE_ERROR_INVALID naming path, the group and the key. */
bool fp_rt_timings_read(GKeyFile *kf, const char *path, fp_rt_set *s, fp_rt_extras *x, GError **error);

#endif
