/* analyze.h - what every analyzing command does around the one analysis (analysis/analysis.h): run
 * it with the options cli/options.c resolved, print its one-line error or its warnings. */
#ifndef FP_CLI_ANALYZE_H
#define FP_CLI_ANALYZE_H

#include <glib.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "options.h"

/* Prints a's warnings on standard error, a line each: op types fuseplan does not know, values of
 * unknown size. */
void fp_cli_analysis_warnings(const fp_analysis *a);

/* fp_analysis_run, with its error printed (one line, exit code 2 for the caller: NULL) and, once
 * it succeeded, its warnings (fp_cli_analysis_warnings). */
fp_analysis *fp_cli_analyze(const char *path, const fp_analysis_opts *ao);

#endif
