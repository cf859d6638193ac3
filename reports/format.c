/* format.c - number formatting shared by the text emitters. */
#include "format.h"

#include <string.h>

char *fp_format_bytes(uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1 < G_N_ELEMENTS(units)) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
    return g_strdup_printf("%.1f %s", v, units[u]);
}

char *fp_format_count(uint64_t n)
{
    char digits[32];
    g_snprintf(digits, sizeof digits, "%" G_GUINT64_FORMAT, n);
    GString *s = g_string_new(NULL);
    size_t len = strlen(digits);
    for (size_t i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            g_string_append_c(s, ',');
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

char *fp_format_mb(uint64_t bytes) { return g_strdup_printf("%.2f MB", (double)bytes / 1e6); }

char *fp_format_flops(uint64_t f)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e15, "PFLOP"}, {1e12, "TFLOP"}, {1e9, "GFLOP"}, {1e6, "MFLOP"}, {1e3, "kFLOP"}};
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
        if ((double)f >= units[i].scale)
            return g_strdup_printf("%.2f %s", (double)f / units[i].scale, units[i].unit);
    return g_strdup_printf("%" G_GUINT64_FORMAT " FLOP", f);
}

char *fp_format_time(double s)
{
    if (s >= 1)
        return g_strdup_printf("%.2f s", s);
    if (s >= 1e-3)
        return g_strdup_printf("%.2f ms", s * 1e3);
    return g_strdup_printf("%.1f us", s * 1e6);
}
