/* fuzz_run.h - one input through one input surface, the way fuseplan reads it: shared by the
 * libFuzzer targets (tests/fuzz/fuzz_*.c) and the regression suite (tests/test_robustness.c), so a
 * committed crash input is replayed on exactly the code path that found it. */
#ifndef FP_FUZZ_RUN_H
#define FP_FUZZ_RUN_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FZ_OK,        /* read and analyzed */
    FZ_REJECTED,  /* refused with a one-line error (the contract for bad input) */
    FZ_BAD_ERROR, /* refused, but without a message, or because a pass left the IR invalid:
                     a bug, the fuzz targets abort on it */
} fz_outcome;

/* Binary ONNX: fp_onnx_load_buffer, verify, then the whole analysis (shapes, metrics, fuse,
 * layout, memory, cost, reports, headroom) with a target and device picked by the input length. */
fz_outcome fz_run_onnx(const uint8_t *data, size_t len);
/* ONNX in protobuf text format: fp_pbtxt_peek / fp_onnx_text_sniff, fp_onnx_text_load_buffer,
 * verify, the analysis. */
fz_outcome fz_run_onnx_text(const uint8_t *data, size_t len);
/* Ascend GE: the kind fp_ge_sniff sees (text, binary, .om, JSON), fp_ge_load_buffer, verify, the
 * analysis. Input no sniffer accepts is tried as a binary ModelDef. */
fz_outcome fz_run_ge(const uint8_t *data, size_t len);
/* A .ini file read as a device profile (fp_device_from_keyfile), a fusion target (fp_target_load
 * through a memfd path) and a gate policy (fp_gate_policy_from_data); whichever loads drives the
 * analysis of a small model (and the policy its gate evaluation). */
fz_outcome fz_run_ini(const uint8_t *data, size_t len);

/* onnxruntime-genai's genai_config.json (through a memfd path) driving the analysis, stopped after
 * shapes, of models/decoder_int4.onnx, which it names: the reader, the check against the decoder's
 * KV cache, the context and the shared buffer it sets. */
fz_outcome fz_run_genai_config(const uint8_t *data, size_t len);

/* The last FZ_REJECTED / FZ_BAD_ERROR message (static storage, until the next run). */
const char *fz_last_error(void);

/* Reads a whole file for the replay of regression inputs; g_free() the result. */
uint8_t *fz_read_file(const char *path, size_t *len);

#endif
