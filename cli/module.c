/* module.c - the entry of fuseplan-formats.so (module/module.h): the writers' and readers' tables
 * and the subcommands built into the module whole (profile, compare, fit read measured profiles,
 * which are JSON). Never linked into the executable: it looks "fp_module_entry" up after loading. */
#include "cli.h"
#include "frontends/readers.h"
#include "reports/formats.h"

const fp_module fp_module_entry = {
    .abi = FP_MODULE_ABI,
    .formats = &fp_formats_table,
    .readers = &fp_readers_table,
    .profile = fp_cmd_profile,
    .compare = fp_cmd_compare,
    .fit = fp_cmd_fit,
};
