/* formats.c - fp_formats_get (reports/formats.h): the writers' table of the formats module. Part
 * of the core: the table itself is in the module. */
#include "reports/formats.h"

const fp_formats *fp_formats_get(GError **error)
{
    const fp_module *m = fp_module_get(error);
    return m ? m->formats : NULL;
}
