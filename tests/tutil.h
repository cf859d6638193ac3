/* tutil.h - test helpers: an in-memory ONNX model builder, temp files, running the CLI. */
#ifndef FP_TUTIL_H
#define FP_TUTIL_H

#include <CUnit/CUnit.h>
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/graph.h"

/* ---- ONNX model builder (protobuf-c structs, packed to bytes) ---- */
typedef struct tb tb;
typedef struct Onnx__NodeProto tb_node_t;

tb *tb_new(int64_t opset);
void tb_free(tb *b);
/* dims: -1 = symbolic "N"; rank -1 = no shape */
void tb_input(tb *b, const char *name, int dtype, int rank, const int64_t *dims);
void tb_output(tb *b, const char *name, int dtype, int rank, const int64_t *dims);
/* initializer with raw_data of zeros (nbytes computed from dims and dtype size) */
void tb_init(tb *b, const char *name, int dtype, int rank, const int64_t *dims);
/* initializer holding int64 values (e.g. a Reshape target); vals NULL: the scalar 0 */
void tb_init_i64(tb *b, const char *name, int n, const int64_t *vals);
/* An int64 scalar initializer (rank 0) holding value. */
void tb_init_i64_scalar(tb *b, const char *name, int64_t value);
/* float32 initializer holding values; n 0 = a scalar holding vals[0] */
void tb_init_f32(tb *b, const char *name, int n, const float *vals);
/* A float16 scalar initializer (rank 0) holding the IEEE half bits `bits` (0x3c00 is 1.0). */
void tb_init_f16_scalar(tb *b, const char *name, uint16_t bits);
/* inputs/outputs: comma-separated names, "" entries allowed ("x,,b") */
tb_node_t *tb_node(tb *b, const char *op, const char *name, const char *inputs, const char *outputs);
/* Puts n in `domain` (e.g. "com.microsoft"), imported at version 1; one such domain per model. */
void tb_domain(tb *b, tb_node_t *n, const char *domain);
void tb_attr_i(tb *b, tb_node_t *n, const char *name, int64_t v);
void tb_attr_f(tb *b, tb_node_t *n, const char *name, float v);
void tb_attr_s(tb *b, tb_node_t *n, const char *name, const char *v);
void tb_attr_ints(tb *b, tb_node_t *n, const char *name, int cnt, const int64_t *v);
/* Attaches sub's graph as a GRAPH attribute; sub must outlive packing b. */
void tb_attr_graph(tb *b, tb_node_t *n, const char *name, tb *sub);
/* Moves initializer `name` to external data (location, offset, length). */
void tb_make_external(tb *b, const char *name, const char *location, uint64_t offset, uint64_t length);
GBytes *tb_pack(tb *b);
/* b packed and loaded (fp_onnx_load_buffer), its shapes inferred and metrics made; asserts each
 * step (b stays the caller's). */
fp_model *tu_load_tb(tb *b);
/* Whether node `name` of m was removed by a pass (it must exist). */
bool tu_removed(const fp_model *m, const char *name);
/* b packed, loaded, its shapes inferred and metrics made; NULL with *err when a step fails. */
fp_model *tu_analyze_tb(tb *b, GError **err);
/* Packs into a new temp file; caller g_free()s the path and unlinks it. */
char *tb_write_temp(tb *b, const char *suffix);

/* ---- files and processes ---- */
char *tu_write_temp(const void *data, size_t len, const char *suffix);
typedef struct {
    int status; /* exit code, or -1 if killed */
    char *out, *err;
} tu_run_result;
/* Runs the fuseplan binary with NULL-terminated args; caller tu_run_clear()s. */
tu_run_result tu_run(const char *const *args);
/* Runs the executable `exe` with args, in this process' environment plus `env` ("NAME=VALUE"
 * entries, NULL-terminated; NULL for none); caller tu_run_clear()s. */
tu_run_result tu_run_exe(const char *exe, const char *const *env, const char *const *args);
void tu_run_clear(tu_run_result *r);
/* Count of '\n' in s. */
int tu_lines(const char *s);
/* Asserts a one-line error containing needle (prints both when it is missing). */
void tu_expect_error(const GError *err, const char *needle);
/* Asserts that diag holds no finding of a value of unknown shape ("shape-unknown") or an op type
 * fuseplan does not know ("unknown-op"), printing those it holds. */
void tu_expect_nothing_unknown(const fp_diag *diag);
/* Runs fuseplan with args and asserts the bad-input contract: exit 2, nothing on stdout, exactly one
 * line on stderr naming path (when non-NULL) and containing needle. */
void tu_expect_cli_error(const char *const *args, const char *path, const char *needle);
/* Runs fuseplan with args from the source dir (stable paths in its output) and compares stdout
 * with tests/golden/NAME; FP_UPDATE_GOLDEN=1 rewrites the file instead (review the diff). */
void tu_golden(const char *const *args, const char *name);
/* Compares text with tests/golden/NAME; FP_UPDATE_GOLDEN=1 rewrites the file instead. */
void tu_golden_text(const char *text, const char *name);

/* ---- suites ----
 * Each tests/test_*.c registers its suite with FP_TEST_SUITE(register_fn); the runner calls every
 * registered function (sorted by name), so adding a suite never touches test_main.c. */
typedef void (*fp_test_register_fn)(void);
void fp_test_add_registrar(const char *name, fp_test_register_fn fn);
#define FP_TEST_SUITE(fn)                                                                        \
    static void fn(void);                                                                        \
    __attribute__((constructor)) static void fn##_ctor(void) { fp_test_add_registrar(#fn, fn); } \
    static void fn(void)

#endif
