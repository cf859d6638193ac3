/* static.c - fp_formats_get where the formats are linked in (libfuseplan_core.a: tests,
 * benchmarks, fuzz targets): the table itself, nothing to load. */
#include "formats/formats.h"

const fp_formats *fp_formats_get(GError **error)
{
    (void)error;
    return &fp_formats_table;
}

/* The subcommands of the module (cli/module.c) are not linked in here. */
const fp_formats_module *fp_formats_module_get(GError **error)
{
    static const fp_formats_module linked = {.abi = FP_FORMATS_ABI, .formats = &fp_formats_table};
    (void)error;
    return &linked;
}
