/* formats.h - the formats module: every output and input format that needs json-glib or libxml2
 * (JSON documents, HTML, JUnit, SARIF, measured profiles, GE JSON graphs) behind one table, so
 * that the `fuseplan` executable links only GLib, protobuf-c, zlib and libm and a text report
 * starts fast.
 *
 * The executable loads fuseplan-formats.so (built from formats/ and the sources CMakeLists.txt
 * lists as FP_FORMATS_SOURCES) the first time a format needs it, from the directory of the
 * executable, else from FP_MODULE_DIR (the installed location); the module resolves the core
 * functions it calls from the executable, which exports them. The static library
 * (libfuseplan_core.a: tests, benchmarks, fuzz targets) links the same code in directly. */
#ifndef FP_FORMATS_H
#define FP_FORMATS_H

#include <glib.h>
#include <stdio.h>

#include "reports/devices.h"
#include "reports/diff.h"
#include "reports/explain.h"
#include "reports/gate.h"
#include "reports/memory.h"
#include "reports/report.h"
#include "reports/train.h"

struct Ge__Proto__ModelDef;

/* Bumped whenever fp_formats or fp_formats_module changes: a module from another build is
 * refused instead of called through a wrong table. */
#define FP_FORMATS_ABI 5

/* File name of the module. */
#define FP_FORMATS_MODULE "fuseplan-formats.so"

/* The JSON writers serialize their document (pretty, trailing newline) to stdout when path is
 * NULL or "-", else write the file atomically; false with an error (or none when stdout failed). */
typedef struct fp_formats_s {
    bool (*report_json)(const fp_report *r, const char *path, GError **error);
    bool (*memory_json)(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                        const char *path,
                        GError **error);
    bool (*headroom_json)(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                          const fp_diag *diag, const char *path, GError **error);
    bool (*info_json)(const fp_model *m, const char *path, GError **error);
    bool (*shapes_json)(const fp_model *m, const fp_diag *diag, const char *path, GError **error);
    bool (*explain_json)(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, const char *path,
                         GError **error);
    bool (*diff_json)(const fp_diff *d, const char *path, GError **error);
    bool (*devices_json)(GPtrArray *devs, bool one, const char *path, GError **error);
    bool (*train_json)(const fp_train_report *r, const char *path, GError **error);
    /* formats/train_html.c: fp_report_train_html. */
    void (*train_html)(const fp_train_report *r, FILE *out);
    /* The gate's document (exit_code: the verdict's status) and its SARIF log. */
    bool (*gate_json)(const fp_gate_result *g, int exit_code, const char *path, GError **error);
    bool (*sarif)(const fp_gate_result *g, int exit_code, const char *path, GError **error);
    /* formats/junit.h: fp_report_junit. */
    char *(*junit)(const fp_gate_result *g, gsize *len);
    /* formats/html.h: fp_report_html. */
    void (*html)(const fp_report *r, FILE *out);
    /* frontends/ge/ge_internal.h: fp_ge_json_parse. */
    struct Ge__Proto__ModelDef *(*ge_json_parse)(const char *text, size_t len, GError **error);
} fp_formats;

/* The table (formats/table.c). */
extern const fp_formats fp_formats_table;

/* The formats, loading the module on first use in the executable (formats/load.c); the table
 * itself where the code is linked in (formats/static.c). NULL with a one-line error naming the
 * module's path and why it could not be loaded. */
const fp_formats *fp_formats_get(GError **error);

typedef int (*fp_formats_cmd)(int argc, char **argv);

/* What the module exports under the symbol "fp_formats_entry" (cli/module.c): its ABI, the table,
 * and the subcommands that live in it whole (they read profiles, whose formats are JSON). */
typedef struct {
    int abi;
    const fp_formats *formats;
    fp_formats_cmd profile, compare, fit;
} fp_formats_module;

/* The module, loaded on first call (formats/load.c; in the executable only); NULL with an error
 * naming its path and the reason. */
const fp_formats_module *fp_formats_module_get(GError **error);

#endif
