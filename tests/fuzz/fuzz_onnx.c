/* fuzz_onnx.c - libFuzzer target: binary ONNX (fp_onnx_load_buffer) through the whole analysis. */
#include "fuzz_target.h"

FZ_TARGET(fz_run_onnx)
