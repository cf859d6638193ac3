/* csv.c - a small RFC 4180 record reader for the profile CSVs: quoted fields may hold commas,
 * newlines and doubled quotes; records end with CRLF or LF; a UTF-8 BOM is skipped.
 *
 * Written here rather than taken from libcsv (Debian libcsv-dev): libcsv ships no pkg-config
 * file and reports no line/column positions, which every error message here must name. */
#include "prof_internal.h"

#include <string.h>

void fp_csv_init(fp_csv *c, const char *data, gsize len)
{
    c->p = data;
    c->end = data + len;
    c->line = 1;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        c->p += 3;
}

/* Consumes a record terminator at c->p (CRLF, LF or a lone CR); true if there was one. */
static bool eat_eol(fp_csv *c)
{
    if (c->p < c->end && *c->p == '\r') {
        c->p++;
        if (c->p < c->end && *c->p == '\n')
            c->p++;
        c->line++;
        return true;
    }
    if (c->p < c->end && *c->p == '\n') {
        c->p++;
        c->line++;
        return true;
    }
    return false;
}

/* One quoted field, c->p just past the opening quote. Appends the value to buf. */
static bool quoted_field(fp_csv *c, GString *buf, uint32_t line0, uint32_t field, GError **error)
{
    for (;;) {
        if (c->p >= c->end) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE,
                        "line %u, column %u: quoted field not closed before the end of the file", line0, field);
            return false;
        }
        char ch = *c->p++;
        if (ch == '"') {
            if (c->p < c->end && *c->p == '"') {
                g_string_append_c(buf, '"');
                c->p++;
                continue;
            }
            return true;
        }
        if (ch == '\n')
            c->line++;
        g_string_append_c(buf, ch);
    }
}

int fp_csv_next(fp_csv *c, GPtrArray *fields, uint32_t *line, GError **error)
{
    g_ptr_array_set_size(fields, 0);
    while (eat_eol(c)) /* empty lines */
        ;
    if (c->p >= c->end)
        return 0;
    *line = c->line;
    g_autoptr(GString) buf = g_string_new(NULL);
    for (;;) {
        uint32_t field = fields->len + 1;
        g_string_truncate(buf, 0);
        if (c->p < c->end && *c->p == '"') {
            c->p++;
            if (!quoted_field(c, buf, *line, field, error))
                return -1;
            if (c->p < c->end && *c->p != ',' && *c->p != '\r' && *c->p != '\n') {
                g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_PARSE,
                            "line %u, column %u: text after the closing quote of a quoted field", c->line, field);
                return -1;
            }
        } else {
            while (c->p < c->end && *c->p != ',' && *c->p != '\r' && *c->p != '\n')
                g_string_append_c(buf, *c->p++);
        }
        g_ptr_array_add(fields, g_strndup(buf->str, buf->len));
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        eat_eol(c);
        return 1;
    }
}
