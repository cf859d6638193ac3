/* options.c - the shared options of the analyzing commands (options.h): added to a command's
 * GOption context by group, then every value checked here, once, into the analysis's options. */
#include "options.h"

#include <math.h>
#include <string.h>

#include "cli.h"

/* The entries of one group (a NULL-terminated GOptionEntry array copied into ctx). */
static void add(GOptionContext *ctx, const GOptionEntry *entries)
{
    g_option_context_add_main_entries(ctx, entries, NULL);
}

/* --input, --batch (with FP_CLI_BATCH), --batch-dim, --dim. */
static void add_bind(GOptionContext *ctx, fp_cli_model_opts *o, unsigned groups)
{
    GOptionEntry batch[] = {
        {"batch", 'b', 0, G_OPTION_ARG_STRING, &o->batch,
         "Bind the batch dimension of the inputs to N (default: a symbolic batch is bound to 1)", "N"},
        {NULL},
    };
    if (groups & FP_CLI_BATCH)
        add(ctx, batch);
    GOptionEntry e[] = {
        {"input", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &o->inputs,
         "Bind an input's shape, e.g. input:1x3x224x224 ('?' leaves a dim free; repeatable)", "NAME:DIMS"},
        {"batch-dim", 0, 0, G_OPTION_ARG_STRING, &o->batch_dim,
         "Name of the symbolic dimension --batch binds (default: first dim of each input)", "SYMBOL"},
        {"dim", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->dims,
         "Bind a symbolic dimension by name wherever the inputs use it, e.g. sequence_length=128 (repeatable)",
         "NAME=N"},
        {NULL},
    };
    add(ctx, e);
}

/* --context, --phase, --genai-config; the what-ifs. */
static void add_step_whatif(GOptionContext *ctx, fp_cli_model_opts *o, unsigned groups)
{
    GOptionEntry step[] = {
        {"context", 0, 0, G_OPTION_ARG_STRING, &o->context, "A decoder's tokens per sequence (default 2048)", "S"},
        {"phase", 0, 0, G_OPTION_ARG_STRING, &o->phase,
         "A decoder's step: decode (1 new token, S-1 past; default) or prefill (S new, no past)", "PHASE"},
        {"genai-config", 0, 0, G_OPTION_ARG_FILENAME, &o->genai_config,
         "onnxruntime-genai's genai_config.json for the decoder: KV names, layers, heads, max_length (the default "
         "context), past_present_share_buffer (default: genai_config.json beside the model when it names the model)",
         "FILE"},
        {NULL},
    };
    GOptionEntry whatif[] = {
        {"weight-dtype", 0, 0, G_OPTION_ARG_STRING, &o->weight_dtype,
         "What-if: weights stored as fp32, fp16, bf16 (every float weight) or fp8, int8, int4 (MatMul/Gemm/Conv "
         "weights, with their scales)",
         "DT"},
        {"group-size", 0, 0, G_OPTION_ARG_STRING, &o->group_size, "Weights per scale for int4 (default 128)", "G"},
        {"kv-dtype", 0, 0, G_OPTION_ARG_STRING, &o->kv_dtype,
         "What-if: a decoder's KV cache stored as fp32, fp16, bf16, fp8 or int8", "DT"},
        {"kv-block", 0, 0, G_OPTION_ARG_STRING, &o->kv_block,
         "What-if: a paged KV cache, each sequence in whole blocks of B tokens", "B"},
        {"precision-mode", 0, 0, G_OPTION_ARG_STRING, &o->precision_mode,
         "ATC's precision mode on an Ascend target: force_fp16 (ATC's default) or must_keep_origin_dtype", "MODE"},
        {NULL},
    };
    if (groups & FP_CLI_STEP)
        add(ctx, step);
    if (groups & FP_CLI_WHATIF)
        add(ctx, whatif);
}

/* --strategy, --schedule, --align; --memory, --reserve, --max-batch. */
static void add_memory(GOptionContext *ctx, fp_cli_model_opts *o, unsigned groups)
{
    GOptionEntry plan[] = {
        {"strategy", 's', 0, G_OPTION_ARG_STRING, &o->strategy,
         "Offset planner: naive, greedy_by_size, best_fit or best (default)", "NAME"},
        {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
         "Order to plan: given (the graph's, default) or optimized (memory-aware search)", "ORDER"},
        {"align", 0, 0, G_OPTION_ARG_STRING, &o->align, "Buffer alignment in bytes (default: the device's, else 64)",
         "BYTES"},
        {NULL},
    };
    GOptionEntry capacity[] = {
        {"memory", 'm', 0, G_OPTION_ARG_STRING, &o->memory, "Device memory, e.g. 32GiB (overrides the profile's)",
         "SIZE"},
        {"reserve", 'r', 0, G_OPTION_ARG_STRING, &o->reserve,
         "Memory kept free for the runtime: a size or a percentage of the capacity (default 10%)", "SIZE|P%"},
        {"max-batch", 0, 0, G_OPTION_ARG_STRING, &o->max_batch, "Largest batch to try (default 2^24)", "N"},
        {NULL},
    };
    if (groups & FP_CLI_PLAN)
        add(ctx, plan);
    if (groups & FP_CLI_CAPACITY)
        add(ctx, capacity);
}

void fp_cli_add_model_options(GOptionContext *ctx, fp_cli_model_opts *o, unsigned groups, const char *top_help)
{
    if (groups & FP_CLI_BIND)
        add_bind(ctx, o, groups);
    add_step_whatif(ctx, o, groups);
    add_memory(ctx, o, groups);
    GOptionEntry top[] = {
        {"top", 0, 0, G_OPTION_ARG_STRING, &o->top, top_help, "N"},
        {NULL},
    };
    if (groups & FP_CLI_TOP)
        add(ctx, top);
    fp_cli_add_output_options(ctx, &o->format, &o->output);
    GOptionEntry more[] = {
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "Print diagnostics (ops not inferred, ...)", NULL},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &o->strict,
         "Refuse op types fuseplan does not know (default: warn and analyze them as opaque)", NULL},
        {NULL},
    };
    add(ctx, more);
}

void fp_cli_model_opts_clear(fp_cli_model_opts *o)
{
    g_strfreev(o->inputs);
    g_strfreev(o->dims);
    char **strings[] = {&o->batch,        &o->batch_dim,  &o->context,  &o->phase,    &o->genai_config,
                        &o->weight_dtype, &o->group_size, &o->kv_dtype, &o->kv_block, &o->precision_mode,
                        &o->strategy,     &o->schedule,   &o->align,    &o->memory,   &o->reserve,
                        &o->max_batch,    &o->top,        &o->format,   &o->output};
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++)
        g_free(*strings[i]);
    memset(o, 0, sizeof *o);
}

bool fp_cli_parse_count(const char *name, const char *text, int64_t min, int64_t max, int64_t *out, GError **error)
{
    gint64 v = 0;
    if (g_ascii_string_to_signed(text, 10, min, max, &v, NULL)) {
        *out = v;
        return true;
    }
    g_autofree char *hi = max == FP_CLI_MAX_COUNT ? g_strdup("2^62") : g_strdup_printf("%" G_GINT64_FORMAT, max);
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s %s: expected a whole number from %" G_GINT64_FORMAT " to %s", name, text, min, hi);
    return false;
}

/* Option `name`'s count in text (NULL: not given, *out left as it is) from min to the largest. */
static bool count(const char *name, const char *text, int64_t min, int64_t *out, GError **error)
{
    return !text || fp_cli_parse_count(name, text, min, FP_CLI_MAX_COUNT, out, error);
}

/* The bindings, the step and the what-ifs into r->ao. */
static bool resolve_analysis(const fp_cli_model_opts *o, fp_cli_resolved *r, GError **error)
{
    fp_analysis_opts *a = &r->ao;
    *a = (fp_analysis_opts){.inputs = o->inputs,
                            .batch_dim = o->batch_dim,
                            .dims = o->dims,
                            .phase = o->phase,
                            .genai_config = o->genai_config,
                            .strict = o->strict,
                            .weight_dtype = o->weight_dtype,
                            .kv_dtype = o->kv_dtype,
                            .precision_mode = o->precision_mode,
                            .what_if = FP_DT_UNDEFINED};
    if (!count("--batch", o->batch, 1, &a->batch, error) || !count("--context", o->context, 1, &a->context, error) ||
        !count("--group-size", o->group_size, 1, &a->group_size, error) ||
        !count("--kv-block", o->kv_block, 1, &a->kv_block, error))
        return false;
    return fp_analysis_opts_check(a, error);
}

/* --strategy, --schedule, --align into r->plan. */
static bool resolve_plan(const fp_cli_model_opts *o, fp_cli_resolved *r, GError **error)
{
    r->plan = (fp_memory_opts){.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN};
    if (o->strategy && !fp_memplan_strategy_from_name(o->strategy, &r->plan.strategy)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--strategy %s: one of naive, greedy_by_size, best_fit, best", o->strategy);
        return false;
    }
    if (o->schedule && strcmp(o->schedule, "optimized") == 0) {
        r->plan.schedule = FP_SCHEDULE_OPTIMIZED;
    } else if (o->schedule && strcmp(o->schedule, "given") != 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--schedule %s: one of given, optimized",
                    o->schedule);
        return false;
    }
    int64_t align = 0;
    if (o->align && !fp_cli_parse_count("--align", o->align, 1, (int64_t)1 << 30, &align, error))
        return false;
    r->plan.align = (uint64_t)align;
    return true;
}

/* --memory, --reserve, --max-batch into r->headroom. */
static bool resolve_capacity(const fp_cli_model_opts *o, fp_cli_resolved *r, GError **error)
{
    if (o->memory && !fp_cli_parse_size(o->memory, "--memory", &r->headroom.capacity, error))
        return false;
    if (o->memory && !r->headroom.capacity) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--memory %s: must be above 0 bytes", o->memory);
        return false;
    }
    if (o->reserve) {
        if (!fp_cli_parse_reserve(o->reserve, "--reserve", &r->reserve, error))
            return false;
        r->headroom.reserve = &r->reserve;
    }
    return count("--max-batch", o->max_batch, 1, &r->headroom.max_batch, error);
}

bool fp_cli_model_opts_resolve(const fp_cli_model_opts *o, const char *cmd, const char *formats, unsigned top,
                               fp_cli_resolved *r)
{
    g_autoptr(GError) err = NULL;
    memset(r, 0, sizeof *r);
    int64_t t = top;
    bool ok = resolve_analysis(o, r, &err) && resolve_plan(o, r, &err) && resolve_capacity(o, r, &err) &&
              (!o->top || fp_cli_parse_count("--top", o->top, 0, G_MAXINT32, &t, &err));
    if (!ok) {
        fp_cli_error("%s", err->message);
        return false;
    }
    r->top = (unsigned)t;
    r->format = o->format ? o->format : "text";
    return fp_cli_check_format(cmd, r->format, formats);
}

bool fp_cli_parse_size(const char *text, const char *what, uint64_t *bytes, GError **error)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1024.0},
        {"KiB", 1024.0},
        {"KB", 1e3},
        {"M", 1048576.0},
        {"MiB", 1048576.0},
        {"MB", 1e6},
        {"G", 1073741824.0},
        {"GiB", 1073741824.0},
        {"GB", 1e9},
        {"T", 1099511627776.0},
        {"TiB", 1099511627776.0},
        {"TB", 1e12},
    };
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s %s: expected a size such as 32GiB, 80GB or 1048576", what, text);
        return false;
    }
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
        if (g_ascii_strcasecmp(end, units[i].unit) != 0)
            continue;
        double b = v * units[i].scale;
        if (b >= 18446744073709551616.0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: larger than 2^64 bytes", what, text);
            return false;
        }
        *bytes = (uint64_t)floor(b + 0.5);
        return true;
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s %s: unknown unit '%s' (B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)", what, text, end);
    return false;
}

int fp_cli_parse_percent(const char *text, double *percent)
{
    size_t len = strlen(text);
    if (!len || text[len - 1] != '%')
        return 0;
    g_autofree char *num = g_strndup(text, len - 1);
    char *end = NULL;
    *percent = g_ascii_strtod(num, &end);
    return end != num && !*end && isfinite(*percent) ? 1 : -1;
}

bool fp_cli_parse_reserve(const char *text, const char *what, fp_reserve *r, GError **error)
{
    double p;
    int pct = fp_cli_parse_percent(text, &p);
    *r = (fp_reserve){0};
    if (pct) {
        if (pct < 0 || !(p >= 0 && p < 100)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s %s: a percentage from 0%% to below 100%%, or a size", what, text);
            return false;
        }
        r->share = p / 100.0;
        return true;
    }
    r->in_bytes = true;
    return fp_cli_parse_size(text, what, &r->bytes, error);
}

bool fp_cli_parse_budget(const char *text, const char *what, double *share, uint64_t *bytes, GError **error)
{
    double p;
    int pct = fp_cli_parse_percent(text, &p);
    *share = 0;
    *bytes = 0;
    if (pct) {
        if (pct < 0 || !(p > 0 && p <= 100)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s %s: a share above 0%% and at most 100%%, or a size", what, text);
            return false;
        }
        *share = p / 100.0;
        return true;
    }
    if (!fp_cli_parse_size(text, what, bytes, error))
        return false;
    if (*bytes)
        return true;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: must be above 0 bytes", what, text);
    return false;
}
