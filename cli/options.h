/* options.h - the options the analyzing commands share, parsed by GOption as given and validated
 * in one place (cli/options.c): the bindings (--input, --batch, --batch-dim, --dim), a decoder's
 * step (--context, --phase, --genai-config), the storage what-ifs, the memory planner (--strategy, --schedule,
 * --align), the device memory (--memory, --reserve, --max-batch), --top and the output. A value is
 * refused the same way, with the same one line naming the option and the value, by every command
 * that takes the option, and by the C library, which runs the commands. */
#ifndef FP_CLI_OPTIONS_H
#define FP_CLI_OPTIONS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"

/* The groups of shared options a command takes (fp_cli_add_model_options). --format, --output,
 * --verbose and --strict come with every group. */
enum {
    FP_CLI_BIND = 1u << 0,     /* --input, --batch-dim, --dim */
    FP_CLI_BATCH = 1u << 6,    /* --batch (not for headroom, which searches it) */
    FP_CLI_STEP = 1u << 1,     /* --context, --phase, --genai-config */
    FP_CLI_WHATIF = 1u << 2,   /* --weight-dtype, --group-size, --kv-dtype, --kv-block, --precision-mode */
    FP_CLI_PLAN = 1u << 3,     /* --strategy, --schedule, --align */
    FP_CLI_CAPACITY = 1u << 4, /* --memory, --reserve, --max-batch */
    FP_CLI_TOP = 1u << 5,      /* --top */
    FP_CLI_ANALYSIS = FP_CLI_BIND | FP_CLI_BATCH | FP_CLI_STEP | FP_CLI_WHATIF,
};

/* Largest count an option takes (--batch, --context, --max-batch, ...): 2^62. */
#define FP_CLI_MAX_COUNT ((int64_t)1 << 62)

/* The options as given: every number a string until fp_cli_model_opts_resolve checks it. */
typedef struct {
    char **inputs, **dims;
    char *batch, *batch_dim, *context, *phase, *genai_config;
    char *weight_dtype, *group_size, *kv_dtype, *kv_block, *precision_mode;
    char *strategy, *schedule, *align;
    char *memory, *reserve, *max_batch;
    char *top;
    char *format, *output;
    gboolean verbose, strict;
} fp_cli_model_opts;

/* What fp_cli_model_opts_resolve made of them. */
typedef struct {
    fp_analysis_opts ao;           /* bindings, step, what-ifs, strict; the rest as fp_analysis_opts' defaults */
    fp_memory_opts plan;           /* FP_CLI_PLAN: strategy (best), schedule (given), align (0: the device's) */
    fp_analysis_headroom headroom; /* FP_CLI_CAPACITY: capacity (0: the device's), reserve, max batch; not on.
                                  Its reserve points into this struct: use it in place */
    fp_reserve reserve;
    unsigned top;       /* FP_CLI_TOP: the caller's default when not given */
    const char *format; /* "text" when not given */
} fp_cli_resolved;

/* Adds the groups of shared options (FP_CLI_* bits) to ctx's main group, into o. --top's help
 * names top_help (what it lists and its default). */
void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o, unsigned groups, const char *top_help);
void fp_cli_model_opts_clear(fp_cli_model_opts *o);

/* Checks every option of o and fills *r; `formats` lists the formats the command writes
 * (comma-separated; text is the default) and `top` is --top's default. False after printing the
 * one-line error of the first bad value ("--batch -1: ..."), the same for every command. */
bool fp_cli_model_opts_resolve(const fp_cli_model_opts *o, const char *cmd, const char *formats, unsigned top,
                               fp_cli_resolved *r);

/* A whole number from min to max given to option `name` (e.g. "--batch"); false with the error
 * "NAME VALUE: expected a whole number from MIN to MAX". */
bool fp_cli_parse_count(const char *name, const char *text, int64_t min, int64_t max, int64_t *out, GError **error);

/* Parses a byte size: a number (decimals allowed) and an optional unit, any case: B; K, KiB, M,
 * MiB, G, GiB, T, TiB (powers of 1024); KB, MB, GB, TB (powers of 1000). False with an error
 * naming `what` on anything else or on overflow. */
bool fp_cli_parse_size(const char *text, const char *what, uint64_t *bytes, GError **error);

/* A percentage, "N%" (decimals allowed): 1 with N in *percent; 0 when text does not end in '%'
 * (a size, say); -1 when it does but N is no number. The caller checks the range. */
int fp_cli_parse_percent(const char *text, double *percent);

/* A reserve "P%" (0 <= P < 100: of the capacity) or a size into *r; false with the error naming
 * the option `what`. */
bool fp_cli_parse_reserve(const char *text, const char *what, fp_reserve *r, GError **error);

/* A budget "P%" (0 < P <= 100) into *share, or a size above 0 into *bytes (the other left 0);
 * false with the error naming `what`. */
bool fp_cli_parse_budget(const char *text, const char *what, double *share, uint64_t *bytes, GError **error);

#endif
