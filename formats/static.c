/* static.c - fp_formats_get where the formats are linked in (libfuseplan_core.a: tests,
 * benchmarks, fuzz targets): the table itself, nothing to load. */
#include "formats/formats.h"

const fp_formats *fp_formats_get(GError **error)
{
    (void)error;
    return &fp_formats_table;
}
