/* readers.h - the input readers that need json-glib (GE JSON graphs, genai_config.json), as one table built into the
 * formats module (module/module.h): the frontends reach them through fp_readers_get, so that the
 * executable never links json-glib and reads every other input without loading the module. The
 * readers return fuseplan's own types; protobuf-c types stay inside frontends/. */
#ifndef FP_READERS_H
#define FP_READERS_H

#include <glib.h>
#include <stddef.h>

#include "frontends/genai/genai.h"
#include "ir/graph.h"
#include "module/module.h"

struct fp_readers_s {
    /* frontends/ge/ge_json.c: fp_ge_json_load (the contract of fp_ge_load, on text in memory). */
    fp_model *(*ge_json)(const char *path, const char *text, size_t len, GError **error);
    /* frontends/genai/genai_json.c: the contract of fp_genai_config_load on the file's text. */
    fp_genai_config *(*genai_config)(const char *path, const char *text, size_t len, GError **error);
};

/* The table (frontends/readers_table.c, in the module). */
extern const fp_readers fp_readers_table;

/* The module's table (module/module.h: loaded on first use in the executable, linked in
 * elsewhere); NULL with fp_module_get's one-line error. */
const fp_readers *fp_readers_get(GError **error);

#endif
