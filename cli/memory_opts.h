/* memory_opts.h - options shared by the memory-planning subcommands (memory, headroom):
 * --strategy, --schedule, --align, and byte sizes such as "32GiB". */
#ifndef FP_CLI_MEMORY_OPTS_H
#define FP_CLI_MEMORY_OPTS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "passes/memory/memory.h"

typedef struct {
    char *strategy; /* --strategy */
    char *schedule; /* --schedule */
    gint64 align;   /* --align (0 = not given) */
} fp_cli_memory_opts;

/* Adds --strategy, --schedule and --align to ctx's main group. */
void fp_cli_add_memory_options(GOptionContext *ctx, fp_cli_memory_opts *o);
void fp_cli_memory_opts_clear(fp_cli_memory_opts *o);

/* Checks the parsed options and fills *out (strategy default `best`, schedule default `given`,
 * align 0 when not given). On a bad value prints "fuseplan: CMD: ..." and returns false. */
bool fp_cli_memory_opts_resolve(const fp_cli_memory_opts *o, const char *cmd, fp_memory_opts *out);

/* Parses a byte size: a number (decimals allowed) and an optional unit, any case: B; K, KiB, M,
 * MiB, G, GiB, T, TiB (powers of 1024); KB, MB, GB, TB (powers of 1000). False with an error
 * naming `what` on anything else or on overflow. */
bool fp_cli_parse_size(const char *text, const char *what, uint64_t *bytes, GError **error);

/* A percentage, "N%" (decimals allowed): 1 with N in *percent; 0 when text does not end in '%'
 * (a size, say); -1 when it does but N is no number. The caller checks the range. */
int fp_cli_parse_percent(const char *text, double *percent);

#endif
