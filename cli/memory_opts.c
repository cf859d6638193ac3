/* memory_opts.c - --strategy, --schedule, --align and byte sizes for memory and headroom. */
#include "memory_opts.h"

#include <math.h>
#include <string.h>

#include "cli.h"

void fp_cli_add_memory_options(GOptionContext *ctx, fp_cli_memory_opts *o)
{
    GOptionEntry entries[] = {
        {"strategy", 's', 0, G_OPTION_ARG_STRING, &o->strategy,
         "Offset planner: naive, greedy_by_size, best_fit or best (default)", "NAME"},
        {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
         "Order to plan: given (the graph's, default) or optimized (memory-aware search)", "ORDER"},
        {"align", 0, 0, G_OPTION_ARG_INT64, &o->align, "Buffer alignment in bytes (default: the device's, else 64)",
         "BYTES"},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
}

void fp_cli_memory_opts_clear(fp_cli_memory_opts *o)
{
    g_free(o->strategy);
    g_free(o->schedule);
    memset(o, 0, sizeof *o);
}

bool fp_cli_memory_opts_resolve(const fp_cli_memory_opts *o, const char *cmd, fp_memory_opts *out)
{
    memset(out, 0, sizeof *out);
    out->strategy = FP_MEMPLAN_BEST;
    if (o->strategy && !fp_memplan_strategy_from_name(o->strategy, &out->strategy)) {
        fp_cli_error("%s: unknown strategy '%s' (one of: naive, greedy_by_size, best_fit, best)", cmd, o->strategy);
        return false;
    }
    if (!o->schedule || strcmp(o->schedule, "given") == 0) {
        out->schedule = FP_SCHEDULE_GIVEN;
    } else if (strcmp(o->schedule, "optimized") == 0) {
        out->schedule = FP_SCHEDULE_OPTIMIZED;
    } else {
        fp_cli_error("%s: unknown schedule '%s' (one of: given, optimized)", cmd, o->schedule);
        return false;
    }
    if (o->align < 0 || o->align > ((gint64)1 << 30)) {
        fp_cli_error("%s: --align %" G_GINT64_FORMAT ": must be between 1 and 2^30 bytes", cmd, o->align);
        return false;
    }
    out->align = (uint64_t)o->align;
    return true;
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
                    "%s '%s': expected a size such as 32GiB, 80GB or 1048576", what, text);
        return false;
    }
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
        if (g_ascii_strcasecmp(end, units[i].unit) != 0)
            continue;
        double b = v * units[i].scale;
        if (b >= 18446744073709551616.0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s '%s': larger than 2^64 bytes", what, text);
            return false;
        }
        *bytes = (uint64_t)floor(b + 0.5);
        return true;
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s '%s': unknown unit '%s' (B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)", what, text, end);
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
