/* format.h - number formatting shared by the text emitters. */
#ifndef FP_REPORT_FORMAT_H
#define FP_REPORT_FORMAT_H

#include <glib.h>
#include <stdint.h>

/* "12.3 MiB" (binary units, B below 1 KiB). Caller frees. */
char *fp_format_bytes(uint64_t bytes);
/* "25,557,032". Caller frees. */
char *fp_format_count(uint64_t n);

#endif
