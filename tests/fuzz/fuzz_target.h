/* fuzz_target.h - the libFuzzer entry points of one target: FZ_TARGET(fz_run_x) in a file of its
 * own. GLib criticals and warnings abort (a g_return_if_fail on fuzzed input is a bug), and so
 * does an FZ_BAD_ERROR outcome (see fuzz_run.h). They abort through abort(), which libFuzzer turns
 * into a crash artifact: GLib's own fatal-log path raises SIGTRAP, which kills the fuzzer without
 * saving the input. */
#ifndef FP_FUZZ_TARGET_H
#define FP_FUZZ_TARGET_H

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_run.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* GLib log writer: errors, criticals and warnings print their message and abort(). */
static GLogWriterOutput fz_glib_writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer user)
{
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) {
        for (gsize i = 0; i < n; i++)
            if (strcmp(fields[i].key, "MESSAGE") == 0 && fields[i].length < 0)
                fprintf(stderr, "fuzz: GLib: %s\n", (const char *)fields[i].value);
        abort();
    }
    return g_log_writer_default(level, fields, n, user);
}

static inline void fz_glib_fatal(void)
{
    g_log_set_writer_func(fz_glib_writer, NULL, NULL);
    g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

#define FZ_TARGET(run)                                                                                       \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                                        \
    {                                                                                                        \
        (void)argc;                                                                                          \
        (void)argv;                                                                                          \
        fz_glib_fatal();                                                                                     \
        return 0;                                                                                            \
    }                                                                                                        \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                             \
    {                                                                                                        \
        if (run(data, size) == FZ_BAD_ERROR) {                                                               \
            fprintf(stderr, "fuzz: refusal without a message, or IR left invalid: '%s'\n", fz_last_error()); \
            abort();                                                                                         \
        }                                                                                                    \
        return 0;                                                                                            \
    }

#endif
