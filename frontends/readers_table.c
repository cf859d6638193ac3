/* readers_table.c - the readers' table (frontends/readers.h). Built into the formats module
 * (module/module.h), or linked in with it (libfuseplan_core.a, libfuseplan.so). */
#include "frontends/readers.h"

#include "frontends/ge/ge_internal.h"

const fp_readers fp_readers_table = {
    .ge_json = fp_ge_json_load,
};
