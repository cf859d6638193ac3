/* cli.h - subcommand entry points and helpers shared by cli/ files. */
#ifndef FP_CLI_H
#define FP_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes used by every subcommand. */
enum { FP_EXIT_OK = 0, FP_EXIT_GATE = 1, FP_EXIT_BAD = 2 };

typedef int (*fp_cmd_fn)(int argc, char **argv);

typedef struct {
    const char *name;
    const char *summary;
    fp_cmd_fn fn; /* NULL: built into the formats module (fp_cli_module_command) */
} fp_cmd;

/* The subcommands in the order `fuseplan --help` lists them (commands.c). */
extern const fp_cmd fp_cli_commands[];
extern const size_t fp_cli_n_commands;
/* The subcommand called name, or NULL. */
const fp_cmd *fp_cli_command(const char *name);

int fp_cmd_info(int argc, char **argv);
int fp_cmd_shapes(int argc, char **argv);
int fp_cmd_explain(int argc, char **argv);
int fp_cmd_report(int argc, char **argv);
int fp_cmd_gate(int argc, char **argv);
int fp_cmd_diff(int argc, char **argv);
int fp_cmd_memory(int argc, char **argv);
int fp_cmd_headroom(int argc, char **argv);
int fp_cmd_train(int argc, char **argv);
/* in the formats module (cli/module.c) */
int fp_cmd_profile(int argc, char **argv);
int fp_cmd_compare(int argc, char **argv);
int fp_cmd_fit(int argc, char **argv);
int fp_cmd_devices(int argc, char **argv);
int fp_cmd_calibrate(int argc, char **argv);

/* Parses options; on a usage error prints one line "fuseplan CMD: ..." and returns false. While
 * the output is captured (the C library) --help is no option: GOption would exit the process.
 * Frees nothing: the caller owns ctx. */
bool fp_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv);
/* Whether text output gets ANSI colour: not --no-color, not to -o FILE, not captured (the C
 * library), and standard output a terminal. */
bool fp_cli_color(bool no_color, const char *output);
/* g_set_prgname(name), for --help's usage line; nothing while the output is captured (the C library
 * leaves the host program's name alone, and GLib's is not safe to set while threads read it). */
void fp_cli_set_prgname(const char *name);
/* Adds --format (text or json) and --output to ctx's main group, into *format and *output
 * (g_free). */
void fp_cli_add_output_options(GOptionContext *ctx, char **format, char **output);
/* Writes text produced by `emit` to `output` (atomically: a failure keeps the old file) or, for
 * NULL or "-", to standard output; false after printing the error. */
bool fp_cli_emit_text(const char *output, void (*emit)(FILE *out, gpointer data), gpointer data);
/* Prints "fuseplan: <message>" on one line to stderr (control characters in message, newlines
 * included, become spaces). */
void fp_cli_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Validates a device profile with the loader (fp_device_from_keyfile), then writes it to path
 * atomically; on failure prints one line (cmd names the subcommand) and returns false. */
bool fp_cli_write_device_profile(GKeyFile *kf, const char *path, const char *cmd);
/* True when fmt is one of the comma-separated names in `allowed`; else prints an error. For json
 * and html it also loads the formats module (fp_cli_formats), false when it cannot be loaded. */
bool fp_cli_check_format(const char *cmd, const char *fmt, const char *allowed);

typedef struct fp_formats_s fp_formats;
/* The formats module (reports/formats.h), loaded on first call (module/load.c); NULL after
 * printing one line "fuseplan: CMD: WHY: cannot load the formats module PATH...: REASON".
 * Call it before writing anything, so that a missing module loses no output. */
const fp_formats *fp_cli_formats(const char *cmd, const char *why);
/* Runs a subcommand built into the formats module (profile, compare, fit); exit 2 after one line
 * when the module cannot be loaded. */
int fp_cli_module_command(const char *cmd, int argc, char **argv);

#endif
