/* commands.c - the subcommands, their one-line summaries and entry points: one table that the
 * executable's usage and dispatch (main.c) and the C library (lib/fuseplan.c) read. */
#include <string.h>

#include "cli.h"

/* fn NULL: the command is built into the formats module (profile, compare, fit). */
const fp_cmd fp_cli_commands[] = {
    {"report", "stage table (ops, memory, latency, speedup), fusions, memory plan, hotspots, headroom", fp_cmd_report},
    {"gate", "check a deployment policy (memory, speedup, fusions); JUnit and SARIF for CI; exit 1 on a violation",
     fp_cmd_gate},
    {"diff", "compare two exports: stage tables, fusions gained and lost, memory and latency deltas", fp_cmd_diff},
    {"info", "summary of a model: producer, opsets, op histogram, parameters, inputs and outputs", fp_cmd_info},
    {"shapes", "infer every tensor's shape; per-op FLOPs, bytes and arithmetic intensity", fp_cmd_shapes},
    {"explain", "what the target compiler fuses, and why a fusion did not happen", fp_cmd_explain},
    {"memory", "activation memory after buffer reuse, its floor, a memory-aware order, the peak explained",
     fp_cmd_memory},
    {"headroom", "largest batch whose weights + activations + reserve fit in a device's memory", fp_cmd_headroom},
    {"train", "memory of a training step: saved activations, gradients, optimizer state, peak, training headroom",
     fp_cmd_train},
    {"profile", "summary of a measured profile: kernels, time by op and core type; GE fusion passes", NULL},
    {"compare", "estimated vs measured time per op, error statistics, fusions the real compiler made", NULL},
    {"fit", "fit a device profile's efficiencies and launch overhead to measured profiles", NULL},
    {"devices", "list the device profiles (peaks, bandwidth, memory), or show one in full", fp_cmd_devices},
    {"calibrate", "measure this machine (SGEMM FLOP/s, STREAM bandwidth) and write a device profile", fp_cmd_calibrate},
};

const size_t fp_cli_n_commands = G_N_ELEMENTS(fp_cli_commands);

const fp_cmd *fp_cli_command(const char *name)
{
    for (size_t i = 0; i < fp_cli_n_commands; i++)
        if (strcmp(name, fp_cli_commands[i].name) == 0)
            return &fp_cli_commands[i];
    return NULL;
}
