/* readers.c - fp_readers_get (frontends/readers.h): the readers' table of the formats module. Part
 * of the core: the table itself is in the module. */
#include "frontends/readers.h"

const fp_readers *fp_readers_get(GError **error)
{
    const fp_module *m = fp_module_get(error);
    return m ? m->readers : NULL;
}
