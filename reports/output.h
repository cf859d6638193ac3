/* output.h - writing a finished report (text, JSON, XML) to the file the user named. */
#ifndef FP_REPORT_OUTPUT_H
#define FP_REPORT_OUTPUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* Writes the len bytes at data (len < 0: a NUL-terminated string) to path. A regular file, or a
 * path that does not exist yet, is replaced atomically (g_file_set_contents: a reader never sees
 * half a report, and a failed write leaves the old file as it was). Anything else that exists
 * (/dev/null, /dev/stdout, a FIFO, a terminal) is opened and written in place: replacing it would
 * put a regular file where the device was. False with error set (G_FILE_ERROR) on failure. */
bool fp_output_write(const char *path, const void *data, gssize len, GError **error);

/* A report written to path in pieces, as fp_output_write writes it whole: a regular file (or a
 * path that does not exist yet) gets a new file beside it, renamed over it by a successful
 * fp_output_stream_close (and removed by a failed one: the old file stays as it was); anything
 * else is written in place. Open and write fail with error set (G_FILE_ERROR). */
typedef struct fp_output_stream fp_output_stream;
fp_output_stream *fp_output_stream_open(const char *path, GError **error);
bool fp_output_stream_write(fp_output_stream *s, const void *data, size_t len, GError **error);
/* commit: replace the file with what was written; true when done, false with error set when that
 * failed. Not commit: drop what was written (false, error untouched). Frees s in either case. */
bool fp_output_stream_close(fp_output_stream *s, bool commit, GError **error);

/* Standard output for this thread: stdout, unless fp_output_capture gave the thread a stream of
 * its own (the C library, lib/fuseplan.c, captures a command's output in memory). */
FILE *fp_output_stdout(void);
/* Whether this thread's standard output and error are captured (then no terminal reads them). */
bool fp_output_captured(void);
/* Writes line and a newline where this thread's standard error goes: the capture's buffer, else
 * stderr (standard output flushed first, so that the two interleave as written). */
void fp_output_error_line(const char *line);
/* Captures this thread's standard output into out and its standard error lines into err (both
 * borrowed until the capture ends); out NULL ends it. */
void fp_output_capture(FILE *out, GString *err);

#endif
