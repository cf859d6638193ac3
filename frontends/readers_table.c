/* readers_table.c - the readers' table (frontends/readers.h). Built into the formats module
 * (module/module.h), or linked in with it (libfuseplan_core.a, libfuseplan.so). */
#include "frontends/readers.h"

#include "frontends/ge/ge_internal.h"
#include "frontends/genai/genai_json.h"

const fp_readers fp_readers_table = {
    .ge_json = fp_ge_json_load,
    .genai_config = fp_genai_json_load,
};
