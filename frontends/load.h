/* load.h - open any supported model file; the format is detected from the content. */
#ifndef FP_LOAD_H
#define FP_LOAD_H

#include "ir/graph.h"

#define FP_LOAD_ERROR (fp_load_error_quark())
GQuark fp_load_error_quark(void);
enum { FP_LOAD_ERROR_FORMAT };

/* Reads `path` (ONNX binary; more formats as frontends land), links and verifies it. On failure
 * returns NULL and sets an error whose message starts with the path and names the object at
 * fault, e.g. "m.onnx: graph 'main': node 'conv1' (Conv): input 1 'w' is produced by no node". */
fp_model *fp_load_model(const char *path, GError **error);

/* A model held in memory for this thread (the C library's bytes, lib/fuseplan.c): while set,
 * fp_load_model(name) reads bytes (borrowed) instead of a file, as it would read a file holding
 * them (gzip-compressed bytes excepted: an error). name NULL ends it. */
void fp_load_set_memory(const char *name, GBytes *bytes);

#endif
