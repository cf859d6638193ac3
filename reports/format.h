/* format.h - number formatting shared by the text emitters. */
#ifndef FP_REPORT_FORMAT_H
#define FP_REPORT_FORMAT_H

#include <glib.h>
#include <stdint.h>

/* "12.3 MiB" (binary units, B below 1 KiB). Caller frees. */
char *fp_format_bytes(uint64_t bytes);
/* "25,557,032". Caller frees. */
char *fp_format_count(uint64_t n);
/* "1.80 MB" (decimal megabytes, as in the stage table). Caller frees. */
char *fp_format_mb(uint64_t bytes);
/* "29.10 GFLOP", "11.14 MFLOP", "344.1 kFLOP" or "512 FLOP" (decimal). Caller frees. */
char *fp_format_flops(uint64_t flops);
/* "2.10 s", "181.30 ms" or "110.5 us". Caller frees. */
char *fp_format_time(double seconds);

#endif
