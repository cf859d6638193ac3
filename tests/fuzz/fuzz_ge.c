/* fuzz_ge.c - libFuzzer target: Ascend GE graphs (text, binary, .om, JSON: fp_ge_load_buffer) through the whole analysis. */
#include "fuzz_target.h"

FZ_TARGET(fz_run_ge)
