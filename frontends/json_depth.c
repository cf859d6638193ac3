/* json_depth.c - the nesting check before json-glib parses a text (json_depth.h). */
#include "frontends/json_depth.h"

#include <stdbool.h>

gssize fp_json_too_deep(const char *s, size_t len, unsigned max)
{
    unsigned depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max)
                return (gssize)i;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return -1;
}
