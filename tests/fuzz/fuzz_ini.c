/* fuzz_ini.c - libFuzzer target: device profiles, fusion targets and gate policies (.ini) driving the analysis
 * of a small model, and runtime-calibration timings files (calibrate --from-timings). */
#include "fuzz_target.h"

FZ_TARGET(fz_run_ini)
