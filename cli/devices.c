/* devices.c - `fuseplan devices [NAME|PATH]`: lists the device profiles, or shows one in full. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devices/device.h"
#include "reports/formats.h"
#include "reports/devices.h"

typedef struct {
    GPtrArray *devs;
    bool one;
} text_args;

static void emit_text(FILE *out, gpointer data)
{
    const text_args *a = data;
    fp_report_devices_text(a->devs, a->one, out);
}

/* Writes the report to `output` (atomically; stdout when NULL); false with a one-line error on failure. */
static bool emit(GPtrArray *devs, bool one, const char *format, const char *output)
{
    g_autoptr(GError) err = NULL;
    if (strcmp(format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("devices", "-f json");
        if (!fx)
            return false;
        if (!fx->devices_json(devs, one, output, &err)) {
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
            return false;
        }
        return true;
    }
    text_args a = {devs, one};
    return fp_cli_emit_text(output, emit_text, &a);
}

int fp_cmd_devices(int argc, char **argv)
{
    g_autofree char *format = NULL;
    g_autofree char *output = NULL;
    g_autoptr(GOptionContext) ctx = g_option_context_new("[NAME|PATH] - list device profiles, or show one");
    fp_cli_add_output_options(ctx, &format, &output);
    g_option_context_set_description(ctx, "Profiles are looked up by NAME in $FUSEPLAN_DEVICES, then in the source "
                                          "tree's devices/ directory; a PATH to an .ini file also works.");
    fp_cli_set_prgname("fuseplan devices");
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
