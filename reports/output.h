/* output.h - writing a finished report (text, JSON, XML) to the file the user named. */
#ifndef FP_REPORT_OUTPUT_H
#define FP_REPORT_OUTPUT_H

#include <glib.h>
#include <stdbool.h>

/* Writes the len bytes at data (len < 0: a NUL-terminated string) to path. A regular file, or a
 * path that does not exist yet, is replaced atomically (g_file_set_contents: a reader never sees
 * half a report, and a failed write leaves the old file as it was). Anything else that exists
 * (/dev/null, /dev/stdout, a FIFO, a terminal) is opened and written in place: replacing it would
 * put a regular file where the device was. False with error set (G_FILE_ERROR) on failure. */
bool fp_output_write(const char *path, const void *data, gssize len, GError **error);

#endif
