/* genai_json.h - genai_config.json parsed with json-glib (frontends/genai/genai_json.c), in the
 * formats module: the core reaches it through frontends/readers.h. */
#ifndef FP_GENAI_JSON_H
#define FP_GENAI_JSON_H

#include "frontends/genai/genai.h"

/* The contract of fp_genai_config_load on the file's text (len bytes); path names the file in
 * errors and is copied into the result. */
fp_genai_config *fp_genai_json_load(const char *path, const char *text, size_t len, GError **error);

#endif
