/* analyze.c - the analysis run for a command, its error printed; text output written atomically
 * (analyze.h). */
#include "analyze.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "reports/output.h"

void fp_cli_analysis_warnings(const fp_analysis *a)
{
    if (a->warning)
        fp_cli_error("%s", a->warning);
    if (a->unknown_note)
        fp_cli_error("%s", a->unknown_note);
}

fp_analysis *fp_cli_analyze(const char *path, const fp_analysis_opts *ao)
{
    g_autoptr(GError) err = NULL;
    fp_analysis *a = fp_analysis_run(path, ao, &err);
    if (!a)
        fp_cli_error("%s", err->message);
    else /* after the analysis: a failing run prints its one error line only */
        fp_cli_analysis_warnings(a);
    return a;
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
