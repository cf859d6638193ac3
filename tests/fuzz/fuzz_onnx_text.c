/* fuzz_onnx_text.c - libFuzzer target: ONNX in protobuf text format (fp_onnx_text_load_buffer) through the whole analysis. */
#include "fuzz_target.h"

FZ_TARGET(fz_run_onnx_text)
