/* fuzz_ini.c - libFuzzer target: device profiles and fusion targets (.ini) driving the analysis of a small model. */
#include "fuzz_target.h"

FZ_TARGET(fz_run_ini)
