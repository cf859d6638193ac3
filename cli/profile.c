/* profile.c - `fuseplan profile FILE`: a measured profile on its own (kernels, time by op type
 * and core type, top kernels; GE fusion passes for a fusion_result.json). */
#include <stdio.h>

#include "cli.h"
#include "frontends/profile/profile.h"
#include "reports/profile.h"

#define DEFAULT_TOP 10

typedef struct {
    const fp_profile *p;
    guint top;
} text_args;

static void emit(FILE *out, gpointer data)
{
    const text_args *a = data;
    fp_report_profile_text(a->p, a->top, out);
}

int fp_cmd_profile(int argc, char **argv)
{
    g_autofree char *format = NULL;
    g_autofree char *output = NULL;
    gint top = DEFAULT_TOP;
    GOptionEntry entries[] = {
        {"top", 'n', 0, G_OPTION_ARG_INT, &top, "List the N longest kernels (default 10; 0: none)", "N"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "PROFILE - summarize a measured profile: ONNX Runtime JSON, PyTorch Chrome trace, Ascend "
        "op_summary / kernel_details / op_statistic / task_time CSV, or GE fusion_result.json");
    fp_cli_add_output_options(ctx, &format, &output);
    g_option_context_add_main_entries(ctx, entries, NULL);
    fp_cli_set_prgname("fuseplan profile");
    if (!fp_cli_parse(ctx, "profile", &argc, &argv))
        return FP_EXIT_BAD;
    if (argc != 2) {
        fp_cli_error("profile: expected one PROFILE argument (see 'fuseplan profile --help')");
        return FP_EXIT_BAD;
    }
    if (top < 0) {
        fp_cli_error("profile: --top must be 0 or more, got %d", top);
        return FP_EXIT_BAD;
    }
    if (!format)
        format = g_strdup("text");
    if (!fp_cli_check_format("profile", format, "text,json"))
        return FP_EXIT_BAD;

    g_autoptr(GError) err = NULL;
    g_autoptr(fp_profile) p = fp_profile_load(argv[1], &err);
    if (!p) {
        fp_cli_error("%s", err->message);
        return FP_EXIT_BAD;
    }
    if (g_strcmp0(format, "json") == 0) {
        if (!fp_report_profile_json(p, (guint)top, output, &err)) {
            fp_cli_error("%s: %s", output ? output : "stdout", err ? err->message : "write failed");
            return FP_EXIT_BAD;
        }
        return FP_EXIT_OK;
    }
    text_args a = {p, (guint)top};
    return fp_cli_emit_text(output, emit, &a) ? FP_EXIT_OK : FP_EXIT_BAD;
}
