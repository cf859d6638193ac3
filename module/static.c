/* static.c - fp_module_get where the module's code is linked in (libfuseplan_core.a: tests,
 * benchmarks, fuzz targets; libfuseplan.so): the tables themselves, nothing to load. */
#include "module/module.h"

#include "frontends/readers.h"
#include "reports/formats.h"

/* The subcommands of the module (cli/module.c) are not linked in here. */
const fp_module *fp_module_get(GError **error)
{
    static const fp_module linked = {
        .abi = FP_MODULE_ABI,
        .formats = &fp_formats_table,
        .readers = &fp_readers_table,
    };
    (void)error;
    return &linked;
}
