/* fuzz_target.h - the libFuzzer entry points of one target: FZ_TARGET(fz_run_x) in a file of its
 * own. GLib criticals and warnings abort (a g_return_if_fail on fuzzed input is a bug), and so
 * does an FZ_BAD_ERROR outcome (see fuzz_run.h). */
#ifndef FP_FUZZ_TARGET_H
#define FP_FUZZ_TARGET_H

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_run.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_TARGET(run)                                                                        \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                         \
    {                                                                                         \
        (void)argc;                                                                           \
        (void)argv;                                                                           \
        g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING); \
        return 0;                                                                             \
    }                                                                                         \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                              \
    {                                                                                         \
        if (run(data, size) == FZ_BAD_ERROR) {                                                \
            fprintf(stderr, "fuzz: refusal without a message, or IR left invalid: '%s'\n", fz_last_error()); \
            abort();                                                                          \
        }                                                                                     \
        return 0;                                                                             \
    }

#endif
