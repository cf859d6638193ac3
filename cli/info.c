/* info.c - `fuseplan info MODEL`: producer, opsets, op histogram, parameters, inputs, outputs. */
#include <stdio.h>

#include "cli.h"
#include "frontends/load.h"
#include "reports/info.h"
#include "reports/formats.h"

static void emit(FILE *out, gpointer data) { fp_report_info_text(data, out); }

int fp_cmd_info(int argc, char **argv)
{
    g_autofree char *format = NULL;
    g_autofree char *output = NULL;
    g_autoptr(GOptionContext) ctx = g_option_context_new("MODEL - summarize a model");
    fp_cli_add_output_options(ctx, &format, &output);
    fp_cli_set_prgname("fuseplan info");
    if (!fp_cli_parse(ctx, "info", &argc, &argv))
        return FP_EXIT_BAD;
    if (argc != 2) {
        fp_cli_error("info: expected one MODEL argument (see 'fuseplan info --help')");
        return FP_EXIT_BAD;
    }
    if (!format)
        format = g_strdup("text");
    if (!fp_cli_check_format("info", format, "text,json"))
        return FP_EXIT_BAD;

    g_autoptr(GError) err = NULL;
    g_autoptr(fp_model) m = fp_load_model(argv[1], &err);
    if (!m) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    if (g_strcmp0(format, "json") == 0) {
        const fp_formats *fx = fp_cli_formats("info", "-f json");
        if (!fx)
            return FP_EXIT_BAD;
        if (!fx->info_json(m, output, &err)) {
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    return fp_cli_emit_text(output, emit, m) ? FP_EXIT_OK : FP_EXIT_BAD;
}
