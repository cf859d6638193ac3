/* platform.h - process-wide settings of the C library and the OS for the command-line tool
 * (cli/platform.c): one call, first thing in main. The library code (ir/, passes/, ...) runs the
 * same with or without them. */
#ifndef FP_CLI_PLATFORM_H
#define FP_CLI_PLATFORM_H

/* malloc's settings for the passes' temporaries: every block, however big, comes from malloc's
 * heap instead of its own mapping, and the heap is not trimmed, so the arrays each pass allocates
 * per node reuse pages already touched instead of faulting in fresh ones on every pass; and the
 * heap grows from a 2 MiB boundary into a reservation advised to use transparent huge pages. Every
 * step is advisory: a failure leaves malloc as it was. */
void fp_platform_tune(void);

#endif
