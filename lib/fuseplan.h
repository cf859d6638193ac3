/* fuseplan.h - fuseplan as a C library (libfuseplan.so.1): the commands of the `fuseplan`
 * executable run in the caller's process, on a model file or on a model's bytes in memory, their
 * output and their error lines returned as strings. Every exported symbol starts with fuseplan_. */
#ifndef FUSEPLAN_H
#define FUSEPLAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What fuseplan_run returns: the executable's exit status. */
enum {
    FUSEPLAN_OK = 0,            /* done */
    FUSEPLAN_POLICY_FAILED = 1, /* gate (or diff --fail-on-regression): a check failed; the output
                                   is complete */
    FUSEPLAN_BAD_INPUT = 2,     /* bad input or usage: the messages say what, in one line */
};

/* A model in memory: its bytes as a file would hold them (ONNX binary or text, an Ascend GE text
 * dump, binary, .om or JSON; not gzip-compressed) and the name that stands for it among the
 * arguments and in messages (NULL: "<memory>"). */
typedef struct {
    const char *name;
    const void *data;
    size_t len;
} fuseplan_model;

/* Runs `fuseplan argv[0] ... argv[argc - 1]` as the executable would: argv[0] one of the commands
 * report, gate, diff, info, shapes, explain, memory, headroom, train, devices; then its options and
 * arguments, with the executable's defaults, results and exit status, which it returns. What the
 * command would print on standard output goes to *out (NUL-terminated, *out_len bytes before the
 * NUL; `-o FILE` still writes the file), the lines it would print on standard error (its one-line
 * error, or warnings) to *messages, each line ending in a newline. Both are set on every return,
 * possibly empty; free them with fuseplan_free; out_len may be NULL. model: NULL, or a model in
 * memory that an argument equal to model->name reads instead of a file (the bytes are borrowed for
 * the call). Calls on different threads may run at once; nothing persists from one call to the
 * next. Not run here (FUSEPLAN_BAD_INPUT): calibrate, profile, compare, fit, and --help. */
int fuseplan_run(int argc, const char *const *argv, const fuseplan_model *model, char **out, size_t *out_len,
                 char **messages);

/* Frees what fuseplan_run returned (NULL: nothing). */
void fuseplan_free(void *p);

/* The version, as `fuseplan --version` prints it after "fuseplan ". */
const char *fuseplan_version(void);

#ifdef __cplusplus
}
#endif

#endif
