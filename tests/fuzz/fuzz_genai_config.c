/* fuzz_genai_config.c - libFuzzer target: onnxruntime-genai's genai_config.json describing the int4 sample decoder. */
#include "fuzz_target.h"

FZ_TARGET(fz_run_genai_config)
