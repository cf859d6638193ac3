/* common.c - helpers shared by the subcommands: option parsing, one-line errors. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "devices/device.h"
#include "reports/formats.h"
#include "reports/output.h"

void fp_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++) /* names from a file may hold newlines or terminal escapes */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    g_autofree char *line = g_strconcat("fuseplan: ", msg, NULL);
    fp_output_error_line(line);
}

bool fp_cli_color(bool no_color, const char *output)
{
    return !no_color && !output && !fp_output_captured() && isatty(STDOUT_FILENO);
}

void fp_cli_set_prgname(const char *name)
{
    if (!fp_output_captured())
        g_set_prgname(name);
}

void fp_cli_add_output_options(GOptionContext *ctx, char **format, char **output)
{
    GOptionEntry entries[] = {
        {"format", 'f', 0, G_OPTION_ARG_STRING, format, "Output format: text (default) or json", "FMT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, output, "Write to FILE instead of standard output", "FILE"},
        {NULL},
    };
    g_option_context_add_main_entries(ctx, entries, NULL);
}

bool fp_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv)
{
    g_autoptr(GError) err = NULL;
    if (fp_output_captured()) /* GOption's --help prints and exits the process */
        g_option_context_set_help_enabled(ctx, FALSE);
    if (!g_option_context_parse(ctx, argc, argv, &err)) {
        fp_cli_error("%s: %s (see 'fuseplan %s --help')", cmd, err->message, cmd);
        return false;
    }
    return true;
}

const fp_formats *fp_cli_formats(const char *cmd, const char *why)
{
    g_autoptr(GError) err = NULL;
    const fp_formats *f = fp_formats_get(&err);
    if (!f)
        fp_cli_error("%s: %s: %s", cmd, why, err->message);
    return f;
}

bool fp_cli_check_format(const char *cmd, const char *fmt, const char *allowed)
{
    g_auto(GStrv) names = g_strsplit(allowed, ",", -1);
    if (!g_strv_contains((const char *const *)names, fmt)) {
        fp_cli_error("%s: unknown format '%s' (one of: %s)", cmd, fmt, allowed);
        return false;
    }
    /* JSON and HTML are written by the formats module: loaded now, before any work or output */
    if (strcmp(fmt, "json") == 0 || strcmp(fmt, "html") == 0) {
        g_autofree char *why = g_strdup_printf("-f %s", fmt);
        return fp_cli_formats(cmd, why) != NULL;
    }
    return true;
}

bool fp_cli_write_device_profile(GKeyFile *kf, const char *path, const char *cmd)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) check = fp_device_from_keyfile(kf, path, &err);
    if (!check) {
        fp_cli_error("%s: internal error, the profile does not validate: %s", cmd, err->message);
        return false;
    }
    gsize len = 0;
    g_autofree char *data = g_key_file_to_data(kf, &len, NULL);
    if (!fp_output_write(path, data, (gssize)len, &err)) {
        fp_cli_error("%s: cannot write: %s", path, err->message);
        return false;
    }
    return true;
}

int fp_cli_module_command(const char *cmd, int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    const fp_module *m = fp_module_get(&err);
    if (!m) {
        fp_cli_error("%s: %s", cmd, err->message);
        return FP_EXIT_BAD;
    }
    fp_module_cmd fn = strcmp(cmd, "profile") == 0   ? m->profile
                       : strcmp(cmd, "compare") == 0 ? m->compare
                       : strcmp(cmd, "fit") == 0     ? m->fit
                                                     : NULL;
    if (!fn) {
        fp_cli_error("%s: not a command of the formats module", cmd);
        return FP_EXIT_BAD;
    }
    return fn(argc, argv);
}

bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data)
{
    if (!output || strcmp(output, "-") == 0) {
        FILE *out = fp_output_stdout();
        emit(out, data);
        fflush(out);
        return !ferror(out);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fp_cli_error("%s: %s", output, g_strerror(errno));
        return false;
    }
    emit(mem, data);
    fclose(mem);
    g_autoptr(GError) err = NULL;
    bool ok = fp_output_write(output, buf, (gssize)len, &err);
    if (!ok)
        fp_cli_error("%s: %s", output, err->message);
    free(buf);
    return ok;
}
