/* analyze.c - the analysis run for a command, its error and warnings printed (analyze.h). */
#include "analyze.h"

#include <stdio.h>

#include "cli.h"

void fp_cli_analysis_warnings(const fp_analysis *a)
{
    if (a->warning)
        fp_cli_error("%s", a->warning);
    if (a->config_warning)
        fp_cli_error("%s", a->config_warning);
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
