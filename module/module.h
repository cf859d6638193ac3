/* module.h - fuseplan-formats.so, the optional module: the code that needs json-glib or libxml2
 * (the JSON, HTML, JUnit and SARIF writers of reports/, the readers of measured profiles and of GE
 * JSON in frontends/, the commands that read profiles), so that the `fuseplan` executable links
 * only GLib, protobuf-c, zlib and libm and a text report starts fast. Which sources go into it is
 * a list in CMakeLists.txt (FP_FORMATS_SOURCES), not a folder: each file lives where its job is.
 *
 * This folder is the mechanism alone, apart from reports/ and frontends/ because both (and cli/)
 * reach the module through it and neither may include the other: the entry the module exports,
 * the executable's loader (module/load.c: dlopen on first need, from the directory of the
 * executable, else FP_MODULE_DIR; the module resolves the core functions it calls from the
 * executable, which exports them), and the answer where the code is linked in instead
 * (module/static.c: libfuseplan_core.a for tests, benchmarks and fuzz targets, and
 * libfuseplan.so). The tables the entry points to are typed by their owners: reports/formats.h
 * for the writers, frontends/readers.h for the readers. */
#ifndef FP_MODULE_H
#define FP_MODULE_H

#include <glib.h>

/* Bumped whenever fp_module or a table it points to changes: a module from another build is
 * refused instead of called through a wrong table. */
#define FP_MODULE_ABI 7

/* File name of the module. */
#define FP_MODULE_FILE "fuseplan-formats.so"

typedef struct fp_formats_s fp_formats; /* reports/formats.h */
typedef struct fp_readers_s fp_readers; /* frontends/readers.h */
typedef int (*fp_module_cmd)(int argc, char **argv);

/* What the module exports under the symbol "fp_module_entry" (cli/module.c): its ABI, the writers,
 * the readers, and the subcommands that live in it whole (they read profiles, whose formats are
 * JSON); NULL where the code is linked in (module/static.c), which has no subcommands. */
typedef struct {
    int abi;
    const fp_formats *formats;
    const fp_readers *readers;
    fp_module_cmd profile, compare, fit;
} fp_module;

/* The module, loaded on first call in the executable (module/load.c), the linked-in tables
 * elsewhere (module/static.c); NULL with an error naming the module's path and the reason
 * ("cannot load the formats module PATH: ..."). */
const fp_module *fp_module_get(GError **error);

#endif
