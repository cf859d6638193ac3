/* module.c - the entry of fuseplan-formats.so (formats/formats.h): the formats table and the
 * subcommands built into the module whole (profile, compare, fit read measured profiles, which are
 * JSON). Never linked into the executable: it looks "fp_formats_entry" up after loading. */
#include "cli.h"
#include "formats/formats.h"

const fp_formats_module fp_formats_entry = {
    .abi = FP_FORMATS_ABI,
    .formats = &fp_formats_table,
    .profile = fp_cmd_profile,
    .compare = fp_cmd_compare,
    .fit = fp_cmd_fit,
};
