/* main.c - fuseplan: dispatch to one subcommand per file. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "platform.h"

/* fn NULL: the command is built into the formats module (profile, compare, fit). */
static const fp_cmd commands[] = {
    {"report", "stage table (ops, memory, latency, speedup), fusions, memory plan, hotspots, headroom", fp_cmd_report},
    {"gate", "check a deployment policy (memory, speedup, fusions); JUnit and SARIF for CI; exit 1 on a violation", fp_cmd_gate},
    {"diff", "compare two exports: stage tables, fusions gained and lost, memory and latency deltas", fp_cmd_diff},
    {"info", "summary of a model: producer, opsets, op histogram, parameters, inputs and outputs", fp_cmd_info},
    {"shapes", "infer every tensor's shape; per-op FLOPs, bytes and arithmetic intensity", fp_cmd_shapes},
    {"explain", "what the target compiler fuses, and why a fusion did not happen", fp_cmd_explain},
    {"memory", "activation memory after buffer reuse, its floor, a memory-aware order, the peak explained", fp_cmd_memory},
    {"headroom", "largest batch whose weights + activations + reserve fit in a device's memory", fp_cmd_headroom},
    {"train", "memory of a training step: saved activations, gradients, optimizer state, peak, training headroom", fp_cmd_train},
    {"profile", "summary of a measured profile: kernels, time by op and core type; GE fusion passes", NULL},
    {"compare", "estimated vs measured time per op, error statistics, fusions the real compiler made", NULL},
    {"fit", "fit a device profile's efficiencies and launch overhead to measured profiles", NULL},
    {"devices", "list the device profiles (peaks, bandwidth, memory), or show one in full", fp_cmd_devices},
    {"calibrate", "measure this machine (SGEMM FLOP/s, STREAM bandwidth) and write a device profile", fp_cmd_calibrate},
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: fuseplan COMMAND [OPTION...] MODEL\n"
            "\n"
            "Predicts what a target compiler will fuse, how much memory a model's activations\n"
            "need after reuse, and how much faster the optimized graph should run.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
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
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn ? commands[i].fn(argc - 1, argv + 1)
                                  : fp_cli_module_command(cmd, argc - 1, argv + 1);
    fp_cli_error("unknown command '%s' (run 'fuseplan --help' for the list)", cmd);
    return FP_EXIT_BAD;
}
