/* devices.c - `fuseplan devices` as text: the list of device profiles, or one in full. */
#include "devices.h"

#include <string.h>

#include "passes/roofline.h"
#include "reports/format.h"

/* "19.5 TFLOP/s": v with an SI prefix and `unit`; "-" when v <= 0. Caller frees. */
static char *si(double v, const char *unit)
{
    static const char *prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!(v > 0))
        return g_strdup("-");
    unsigned p = 0;
    while (v >= 1000 && p + 1 < G_N_ELEMENTS(prefix)) {
        v /= 1000;
        p++;
    }
    return g_strdup_printf("%.4g %s%s", v, prefix[p], unit);
}

/* "5 us", "1.2 ms": a duration in seconds. Caller frees. */
static char *duration(double s)
{
    if (s == 0)
        return g_strdup("0 s");
    if (s < 1e-3)
        return g_strdup_printf("%.4g us", s * 1e6);
    if (s < 1)
        return g_strdup_printf("%.4g ms", s * 1e3);
    return g_strdup_printf("%.4g s", s);
}

char **fp_report_device_rule_groups(const fp_device *d)
{
    GPtrArray *a = g_ptr_array_new();
    g_auto(GStrv) groups = d->keyfile ? g_key_file_get_groups(d->keyfile, NULL) : NULL;
    for (size_t i = 0; groups && groups[i]; i++)
        if (g_str_has_prefix(groups[i], "rule."))
            g_ptr_array_add(a, g_strdup(groups[i]));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static void text_list(GPtrArray *devs, FILE *out)
{
    int wn = 4, wt = 6;
    for (guint i = 0; i < devs->len; i++) {
        const fp_device *d = devs->pdata[i];
        wn = MAX(wn, (int)strlen(d->name));
        wt = MAX(wt, (int)strlen(d->target));
    }
    fprintf(out, "%-*s  %-*s  %-14s  %-14s  %-11s  %-10s  %s\n", wn, "NAME", wt, "TARGET", "FP32", "FP16", "BANDWIDTH",
            "MEMORY", "DESCRIPTION");
    for (guint i = 0; i < devs->len; i++) {
        const fp_device *d = devs->pdata[i];
        g_autofree char *f32 = si(d->peak_flops[FP_DT_FLOAT], "FLOP/s");
        g_autofree char *f16 = si(d->peak_flops[FP_DT_FLOAT16], "FLOP/s");
        g_autofree char *bw = si(d->bandwidth, "B/s");
        g_autofree char *mem = si((double)d->memory_bytes, "B");
        fprintf(out, "%-*s  %-*s  %-14s  %-14s  %-11s  %-10s  %s\n", wn, d->name, wt, d->target, f32, f16, bw, mem,
                d->description);
    }
}

/* The "cache" line: each [cache] level's capacity and rate, and where a run's footprint starts
 * to lose the last; nothing without levels. */
static void cache_text(const fp_device *d, FILE *out)
{
    const char *sep = "cache        ";
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        if (!d->cache[i].bytes)
            continue;
        g_autofree char *size = fp_format_bytes(d->cache[i].bytes);
        g_autofree char *bw = si(d->cache[i].bandwidth, "B/s");
        fprintf(out, "%sL%d %s at %s", sep, i + 1, size, bw);
        sep = ", ";
    }
    if (*sep != ',')
        return;
    fprintf(out, "; a run's footprint loses the last from %g of its capacity%s", fp_device_last_from(d),
            d->last_from > 0 ? "" : " (not measured)");
    if (d->last_life > 0)
        fprintf(out, ", which keeps a run's weights %g ms (a mean life)", d->last_life * 1e3);
    fputc('\n', out);
}

static void text_show(const fp_device *d, FILE *out)
{
    g_autofree char *mem = si((double)d->memory_bytes, "B");
    g_autofree char *gib = fp_format_bytes(d->memory_bytes);
    g_autofree char *bw = si(d->bandwidth, "B/s");
    g_autofree char *launch = duration(d->launch_overhead);
    fprintf(out, "name         %s\n", d->name);
    fprintf(out, "description  %s\n", d->description);
    fprintf(out, "file         %s\n", d->path);
    fprintf(out, "target       %s\n", d->target);
    fprintf(out, "memory       %s (%" G_GUINT64_FORMAT " bytes, %s)\n", mem, d->memory_bytes, gib);
    fprintf(out, "bandwidth    %s, streaming efficiency %g\n", bw, d->bw_efficiency);
    if (d->launch_output > 0) {
        g_autofree char *o = duration(d->launch_output);
        fprintf(out, "launch       %s per kernel, %s per output of one past its first\n", launch, o);
    } else {
        fprintf(out, "launch       %s per kernel\n", launch);
    }
    if (d->launch_mixed > 0) {
        g_autofree char *m = duration(d->launch_mixed);
        fprintf(out, "             %s more per kernel of a graph of %d classes or more\n", m, FP_MIXED_CLASSES);
    }
    if (d->run_overhead > 0) {
        g_autofree char *run = duration(d->run_overhead);
        fprintf(out, "run          %s per inference, outside every kernel\n", run);
    }
    if (d->input_overhead > 0 || d->output_overhead > 0) {
        g_autofree char *in = duration(d->input_overhead), *o = duration(d->output_overhead);
        fprintf(out, "run I/O      %s per graph input and %s per output past the first\n", in, o);
    }
    if (d->weight_bandwidth > 0) {
        g_autofree char *wb = si(d->weight_bandwidth, "B/s");
        fprintf(out, "weights      %s where no cache holds them between runs\n", wb);
    }
    if (d->weight_l3_bandwidth > 0) {
        g_autofree char *wb = si(d->weight_l3_bandwidth, "B/s");
        fprintf(out, "weights L3   %s where a GEMM reads its packed weights from past the L2\n", wb);
    }
    if (d->denormal_mac_s > 0 || d->denormal_exp_s > 0)
        fprintf(out, "denormals    %.3g ns more per multiply-add on one, %.3g ns per Softmax result that is one\n",
                d->denormal_mac_s * 1e9, d->denormal_exp_s * 1e9);
    cache_text(d, out);
    fprintf(out, "alignment    %" G_GUINT64_FORMAT " B\n", d->align_bytes);
    fprintf(out, "peaks        %-8s  %-14s  %s\n", "dtype", "peak", "ridge point");
    size_t n = 0;
    const fp_dtype *dts = fp_device_peak_dtypes(&n);
    for (size_t i = 0; i < n; i++) {
        if (d->peak_flops[dts[i]] <= 0)
            continue;
        g_autofree char *p = si(d->peak_flops[dts[i]], "FLOP/s");
        fprintf(out, "             %-8s  %-14s  %.3g FLOP/B\n", fp_device_peak_key(dts[i]), p,
                fp_roofline_ridge(d, dts[i]));
    }
    fprintf(out, "efficiency  ");
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        fprintf(out, " %s %g%s", fp_op_class_name(c), d->efficiency[c], c + 1 < FP_CLASS_COUNT ? "," : "\n");
    g_auto(GStrv) rules = fp_report_device_rule_groups(d);
    g_autofree char *rl = g_strjoinv(", ", rules);
    fprintf(out, "rules        %s\n", *rl ? rl : "(none)");
    if (d->keyfile && g_key_file_has_group(d->keyfile, "calibration")) {
        g_auto(GStrv) keys = g_key_file_get_keys(d->keyfile, "calibration", NULL, NULL);
        fprintf(out, "calibration ");
        for (size_t i = 0; keys && keys[i]; i++) {
            g_autofree char *v = g_key_file_get_value(d->keyfile, "calibration", keys[i], NULL);
            fprintf(out, " %s=%s%s", keys[i], v ? v : "", keys[i + 1] ? "," : "");
        }
        fprintf(out, "\n");
    }
}

void fp_report_devices_text(GPtrArray *devs, bool one, FILE *out)
{
    if (one)
        text_show(devs->pdata[0], out);
    else
        text_list(devs, out);
}
