/* devices.c - `fuseplan devices [NAME|PATH]`: lists the device profiles, or shows one in full. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devices/device.h"
#include "passes/roofline.h"
#include "reports/format.h"
#include "reports/json_common.h"

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

/* Names of d's [rule.*] groups (NULL-terminated; caller g_strfreev()s). */
static char **rule_groups(const fp_device *d)
{
    GPtrArray *a = g_ptr_array_new();
    g_auto(GStrv) groups = d->keyfile ? g_key_file_get_groups(d->keyfile, NULL) : NULL;
    for (size_t i = 0; groups && groups[i]; i++)
        if (g_str_has_prefix(groups[i], "rule."))
            g_ptr_array_add(a, g_strdup(groups[i]));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* ---- JSON (docs/json.md, section devices) ---- */

static void json_device(JsonBuilder *b, const fp_device *d)
{
    size_t n = 0;
    const fp_dtype *dts = fp_device_peak_dtypes(&n);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, d->name);
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, d->description);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, d->path);
    json_builder_set_member_name(b, "target");
    json_builder_add_string_value(b, d->target);
    json_builder_set_member_name(b, "peak_flops");
    json_builder_begin_object(b);
    for (size_t i = 0; i < n; i++) {
        if (d->peak_flops[dts[i]] <= 0)
            continue;
        json_builder_set_member_name(b, fp_dtype_name(dts[i]));
        json_builder_add_double_value(b, d->peak_flops[dts[i]]);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "ridge_point");
    json_builder_begin_object(b);
    for (size_t i = 0; i < n; i++) {
        if (d->peak_flops[dts[i]] <= 0)
            continue;
        json_builder_set_member_name(b, fp_dtype_name(dts[i]));
        json_builder_add_double_value(b, fp_roofline_ridge(d, dts[i]));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "bandwidth");
    json_builder_add_double_value(b, d->bandwidth);
    json_builder_set_member_name(b, "memory_bytes");
    json_builder_add_int_value(b, (gint64)MIN(d->memory_bytes, (uint64_t)G_MAXINT64));
    json_builder_set_member_name(b, "launch_overhead");
    json_builder_add_double_value(b, d->launch_overhead);
    json_builder_set_member_name(b, "align_bytes");
    json_builder_add_int_value(b, (gint64)d->align_bytes);
    json_builder_set_member_name(b, "efficiency");
    json_builder_begin_object(b);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        json_builder_set_member_name(b, fp_op_class_name(c));
        json_builder_add_double_value(b, d->efficiency[c]);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "bandwidth_efficiency");
    json_builder_add_double_value(b, d->bw_efficiency);
    json_builder_set_member_name(b, "rule_groups");
    json_builder_begin_array(b);
    g_auto(GStrv) rules = rule_groups(d);
    for (size_t i = 0; rules[i]; i++)
        json_builder_add_string_value(b, rules[i]);
    json_builder_end_array(b);
}

/* {"schema": 1, "devices": [...]} for a list, {"schema": 1, <device members>} for one. */
static JsonNode *devices_json(GPtrArray *devs, bool one)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_int_value(b, FP_JSON_SCHEMA);
    if (one) {
        json_device(b, devs->pdata[0]);
    } else {
        json_builder_set_member_name(b, "devices");
        json_builder_begin_array(b);
        for (guint i = 0; i < devs->len; i++) {
            json_builder_begin_object(b);
            json_device(b, devs->pdata[i]);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

/* ---- text ---- */

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
    fprintf(out, "launch       %s per kernel\n", launch);
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
    g_auto(GStrv) rules = rule_groups(d);
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

/* Writes the report to `output` (stdout when NULL); false with a one-line error on failure. */
static bool emit(GPtrArray *devs, bool one, const char *format, const char *output)
{
    g_autoptr(GError) err = NULL;
    if (strcmp(format, "json") == 0) {
        g_autoptr(JsonNode) root = devices_json(devs, one);
        if (!fp_json_write(root, output, &err)) {
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
            return false;
        }
        return true;
    }
    FILE *out = stdout;
    if (output && !(out = fopen(output, "w"))) {
        fp_cli_error("%s: cannot write: %s", output, g_strerror(errno));
        return false;
    }
    if (one)
        text_show(devs->pdata[0], out);
    else
        text_list(devs, out);
    if (out != stdout)
        fclose(out);
    return true;
}

int fp_cmd_devices(int argc, char **argv)
{
    g_autofree char *format = NULL;
    g_autofree char *output = NULL;
    GOptionEntry entries[] = {
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format: text (default) or json", "FMT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write to FILE instead of standard output", "FILE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("[NAME|PATH] - list device profiles, or show one");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, "Profiles are looked up by NAME in $FUSEPLAN_DEVICES, then in the source "
                                          "tree's devices/ directory; a PATH to an .ini file also works.");
    g_set_prgname("fuseplan devices");
    if (!fp_cli_parse(ctx, "devices", &argc, &argv))
        return FP_EXIT_BAD;
    if (argc > 2) {
        fp_cli_error("devices: expected at most one NAME or PATH (see 'fuseplan devices --help')");
        return FP_EXIT_BAD;
    }
    if (!format)
        format = g_strdup("text");
    if (!fp_cli_check_format("devices", format, "text,json"))
        return FP_EXIT_BAD;

    g_autoptr(GPtrArray) devs = g_ptr_array_new_with_free_func((GDestroyNotify)fp_device_free);
    int status = FP_EXIT_OK;
    if (argc == 2) {
        g_autoptr(GError) err = NULL;
        fp_device *d = fp_device_load(argv[1], &err);
        if (!d) {
            fp_cli_error("%s", err->message);
            return FP_EXIT_BAD;
        }
        g_ptr_array_add(devs, d);
    } else {
        g_auto(GStrv) names = fp_device_list();
        for (size_t i = 0; names[i]; i++) {
            g_autoptr(GError) err = NULL;
            fp_device *d = fp_device_load(names[i], &err);
            if (d) {
                g_ptr_array_add(devs, d);
            } else {
                fp_cli_error("%s", err->message);
                status = FP_EXIT_BAD;
            }
        }
    }
    if (!emit(devs, argc == 2, format, output))
        return FP_EXIT_BAD;
    return status;
}
