/* main.c - fuseplan: dispatch to one subcommand per file. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "platform.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage: fuseplan COMMAND [OPTION...] MODEL\n"
                 "\n"
                 "Predicts what a target compiler will fuse, how much memory a model's activations\n"
                 "need after reuse, and how much faster the optimized graph should run.\n"
                 "\n"
                 "Commands:\n");
    for (size_t i = 0; i < fp_cli_n_commands; i++)
        fprintf(out, "  %-10s %s\n", fp_cli_commands[i].name, fp_cli_commands[i].summary);
    fprintf(out, "\n"
                 "Run 'fuseplan COMMAND --help' for a command's options.\n"
                 "Exit status: 0 ok, 1 a gate or policy failed, 2 bad input or usage.\n");
}

int main(int argc, char **argv)
{
    /* Only the categories fuseplan uses: LC_CTYPE for GLib's charset (GOption converts string
     * arguments, g_printerr converts messages) and LC_MESSAGES for GLib's and libc's translated
     * messages. LC_NUMERIC must stay "C": the reports and the profiles that calibrate writes print
     * numbers with printf, which a user locale would give a decimal comma. Loading LC_ALL from the
     * environment mapped a dozen locale files: ~13 more page faults at every start (C.UTF-8). */
    setlocale(LC_CTYPE, "");
    setlocale(LC_MESSAGES, "");
    fp_platform_tune();
    if (argc < 2) {
        usage(stderr);
        return FP_EXIT_BAD;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return FP_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("fuseplan %s\n", FP_VERSION);
        return FP_EXIT_OK;
    }
    const fp_cmd *c = fp_cli_command(cmd);
    if (!c) {
        fp_cli_error("unknown command '%s' (run 'fuseplan --help' for the list)", cmd);
        return FP_EXIT_BAD;
    }
    return c->fn ? c->fn(argc - 1, argv + 1) : fp_cli_module_command(cmd, argc - 1, argv + 1);
}
