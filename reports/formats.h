/* formats.h - the writers that need json-glib or libxml2 (JSON documents, SARIF, JUnit, HTML),
 * as one table built into the formats module (module/module.h): the executable reaches them
 * through fp_formats_get, never directly, so that text output never loads those libraries.
 * (Number formatting for the text emitters is reports/format.h.) */
#ifndef FP_FORMATS_H
#define FP_FORMATS_H

#include <glib.h>
#include <stdio.h>

#include "module/module.h"
#include "reports/devices.h"
#include "reports/diff.h"
#include "reports/explain.h"
#include "reports/gate.h"
#include "reports/memory.h"
#include "reports/report.h"
#include "reports/train.h"

/* The JSON writers serialize their document (pretty, trailing newline) to stdout when path is
 * NULL or "-", else write the file atomically; false with an error when a write failed. */
struct fp_formats_s {
    bool (*report_json)(const fp_report *r, const char *path, GError **error);
    bool (*memory_json)(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                        const char *path, GError **error);
    bool (*headroom_json)(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                          const fp_diag *diag, const char *path, GError **error);
    bool (*info_json)(const fp_model *m, const char *path, GError **error);
    bool (*shapes_json)(const fp_model *m, const fp_diag *diag, const char *batch_note, uint32_t unknown_values,
                        const char *path, GError **error);
    bool (*explain_json)(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, const char *path,
                         GError **error);
    bool (*diff_json)(const fp_diff *d, const char *path, GError **error);
    bool (*devices_json)(GPtrArray *devs, bool one, const char *path, GError **error);
    bool (*train_json)(const fp_train_report *r, const char *path, GError **error);
    /* reports/train_html.c: fp_report_train_html. */
    void (*train_html)(const fp_train_report *r, FILE *out);
    /* The gate's document (exit_code: the verdict's status) and its SARIF log. */
    bool (*gate_json)(const fp_gate_result *g, int exit_code, const char *path, GError **error);
    bool (*sarif)(const fp_gate_result *g, int exit_code, const char *path, GError **error);
    /* reports/junit.h: fp_report_junit. */
    char *(*junit)(const fp_gate_result *g, gsize *len);
    /* reports/html.h: fp_report_html. */
    void (*html)(const fp_report *r, FILE *out);
};

/* The table (reports/formats_table.c, in the module). */
extern const fp_formats fp_formats_table;

/* The module's table (module/module.h: loaded on first use in the executable, linked in
 * elsewhere); NULL with fp_module_get's one-line error. */
const fp_formats *fp_formats_get(GError **error);

#endif
