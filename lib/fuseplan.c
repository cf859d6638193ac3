/* fuseplan.c - the C library's entry (fuseplan.h): a command of the executable (cli/commands.c)
 * run on the caller's thread, its standard output and error captured in memory
 * (reports/output.h) and a model's bytes read in place of a file (frontends/load.h). */
#include "fuseplan.h"

#include <libxml/parser.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "frontends/load.h"
#include "reports/output.h"

#define EXPORT __attribute__((visibility("default")))

/* Whether the library runs c: not calibrate, which measures the machine (minutes of every core),
 * nor profile, compare and fit, which live in the executable's formats module (fn NULL). */
static bool runs_here(const fp_cmd *c) { return c->fn && strcmp(c->name, "calibrate") != 0; }

/* The command argv[0] names when the library runs it, else NULL after an error line. */
static const fp_cmd *library_command(int argc, const char *const *argv)
{
    if (argc < 1 || !argv || !argv[0]) {
        fp_cli_error("no command: argv[0] names one (report, gate, explain, ...)");
        return NULL;
    }
    for (int i = 1; i < argc; i++) {
        if (!argv[i]) {
            fp_cli_error("%s: argument %d is NULL", argv[0], i);
            return NULL;
        }
    }
    const fp_cmd *c = fp_cli_command(argv[0]);
    if (c && runs_here(c))
        return c;
    GString *names = g_string_new(NULL);
    for (size_t i = 0; i < fp_cli_n_commands; i++)
        if (runs_here(&fp_cli_commands[i]))
            g_string_append_printf(names, "%s%s", names->len ? ", " : "", fp_cli_commands[i].name);
    fp_cli_error("%s command '%s' (the library runs %s)", c ? "no library" : "unknown", argv[0], names->str);
    g_string_free(names, TRUE);
    return NULL;
}

/* Runs the command of argv with the output already captured; its exit status. */
static int dispatch(int argc, const char *const *argv)
{
    const fp_cmd *c = library_command(argc, argv);
    if (!c)
        return FP_EXIT_BAD;
    /* the command's parser takes the array apart: it gets a copy, the strings freed from another */
    g_auto(GStrv) own = g_new0(char *, (gsize)argc + 1);
    for (int i = 0; i < argc; i++)
        own[i] = g_strdup(argv[i]);
    g_autofree char **args = g_memdup2(own, sizeof(char *) * ((gsize)argc + 1));
    return c->fn(argc, args);
}

/* libxml2 (the HTML report, JUnit) is to be initialised once, before threads use it. */
static gpointer init_libxml(gpointer data)
{
    xmlInitParser();
    return data;
}

EXPORT int fuseplan_run(int argc, const char *const *argv, const fuseplan_model *model, char **out, size_t *out_len,
                        char **messages)
{
    static GOnce libxml_once = G_ONCE_INIT;
    g_once(&libxml_once, init_libxml, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    GString *err = g_string_new(NULL);
    int rc = FP_EXIT_BAD;
    if (!mem) {
        g_string_append(err, "fuseplan: out of memory for the output\n");
    } else {
        g_autoptr(GBytes) bytes = model ? g_bytes_new_static(model->data, model->len) : NULL;
        fp_output_capture(mem, err);
        if (model)
            fp_load_set_memory(model->name ? model->name : "<memory>", bytes);
        rc = dispatch(argc, argv);
        fp_load_set_memory(NULL, NULL);
        fp_output_capture(NULL, NULL);
        fclose(mem);
    }
    *out = buf ? buf : g_strdup("");
    if (out_len)
        *out_len = buf ? len : 0;
    *messages = g_string_free(err, FALSE);
    return rc;
}

EXPORT void fuseplan_free(void *p) { free(p); }

EXPORT const char *fuseplan_version(void) { return FP_VERSION; }
