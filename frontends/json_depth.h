/* json_depth.h - how deep a JSON text nests, checked before json-glib parses it (json-glib
 * recurses once per level without a limit): the readers of GE JSON graphs and of genai_config.json
 * share it. */
#ifndef FP_JSON_DEPTH_H
#define FP_JSON_DEPTH_H

#include <glib.h>

/* Byte offset where [ and { nest deeper than max in s (len bytes; strings skipped), or -1. */
gssize fp_json_too_deep(const char *s, size_t len, unsigned max);

#endif
