/* tmodel.h - test helpers over imported models and targets: compare two models field by field,
 * count a graph's nodes of one op, check a bad target file's error, run protoc, read test data
 * files (gzip-compressed ones decompressed). */
#ifndef FP_TMODEL_H
#define FP_TMODEL_H

#include <glib.h>
#include <stdbool.h>

#include "ir/graph.h"

/* NULL when a and b hold the same IR, else a one-line description of the first difference
 * (caller frees). Compared: model header, graphs, nodes (kind, type, name, inputs, outputs,
 * control edges, attributes with their values, subgraphs), values (kind, type, dtype, shapes,
 * layouts, tensor metadata). Not compared: where payloads live (a binary file records a file
 * range where a text file has the bytes) beyond "inline payloads are equal". */
char *tm_model_diff(const fp_model *a, const fp_model *b);

/* The model in `text` (a file format fp_load_model knows by `suffix`: ".onnxtxt", ".txt" for GE
 * text), written to a temp file, loaded (asserted) and the file removed. */
fp_model *tm_load_text(const char *text, const char *suffix);

/* How many nodes of g of op type `op` execute (neither removed nor folded). */
guint tm_count_ops(const fp_graph *g, const char *op);

/* Asserts that the target file text `ini` does not load and that its error (one line) holds
 * `needle`. */
void tm_expect_target_error(const char *ini, const char *needle);

/* Runs protoc with NULL-terminated args, stdin from in_path, stdout into out_path. On failure
 * returns false and sets *err (caller frees) to protoc's stderr. */
bool tm_protoc(const char *const *args, const char *in_path, const char *out_path, char **err);

/* The bytes of tests/data/<rel>, decompressed when rel ends in ".gz"; NULL if unreadable. */
GBytes *tm_data(const char *rel);

/* A new temp directory (caller removes it with tm_rmdir and frees the path). */
char *tm_tmpdir(void);
void tm_rmdir(const char *dir);

#endif
