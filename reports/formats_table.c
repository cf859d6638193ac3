/* formats_table.c - the writers' table (reports/formats.h): thin writers around the JSON, SARIF,
 * JUnit and HTML emitters. Built into the formats module (module/module.h), or linked in with it
 * (libfuseplan_core.a, libfuseplan.so). Each JSON writer opens a streamed writer on its path, lets
 * the emitter write the document into it and closes it: false when the open or a write failed. */
#include "reports/formats.h"

#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/sarif.h"

static bool report_json(const fp_report *r, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_json(r, w), fp_jsonw_close(w, error));
}

static bool memory_json(const fp_model *m, const fp_memory_result *r, const fp_memory_extra *x, const fp_diag *diag,
                        const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_memory_json(m, r, x, diag, w), fp_jsonw_close(w, error));
}

static bool headroom_json(const fp_model *m, const fp_headroom_request *q, const fp_headroom_result *res,
                          const fp_diag *diag, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_headroom_json(m, q, res, diag, w), fp_jsonw_close(w, error));
}

static bool info_json(const fp_model *m, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_info_json(m, w), fp_jsonw_close(w, error));
}

static bool shapes_json(const fp_model *m, const fp_diag *diag, const char *batch_note, uint32_t unknown_values,
                        const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_shapes_json(m, diag, batch_note, unknown_values, w), fp_jsonw_close(w, error));
}

static bool explain_json(const fp_fusion_list *l, const fp_target *t, const fp_explain_filter *f, const char *path,
                         GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_explain_json(l, t, f, w), fp_jsonw_close(w, error));
}

static bool diff_json(const fp_diff *d, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_diff_json(d, w), fp_jsonw_close(w, error));
}

static bool devices_json(GPtrArray *devs, bool one, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_devices_json(devs, one, w), fp_jsonw_close(w, error));
}

static bool sarif(const fp_gate_result *g, int exit_code, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_sarif(g, exit_code, w), fp_jsonw_close(w, error));
}

static bool gate_json(const fp_gate_result *g, int exit_code, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_gate_json(g, exit_code, w), fp_jsonw_close(w, error));
}

static bool train_json(const fp_train_report *r, const char *path, GError **error)
{
    fp_jsonw *w = fp_jsonw_open(path, error);
    return w && (fp_report_train_json(r, w), fp_jsonw_close(w, error));
}

const fp_formats fp_formats_table = {
    .report_json = report_json,
    .memory_json = memory_json,
    .headroom_json = headroom_json,
    .info_json = info_json,
    .shapes_json = shapes_json,
    .explain_json = explain_json,
    .diff_json = diff_json,
    .devices_json = devices_json,
    .train_json = train_json,
    .train_html = fp_report_train_html,
    .gate_json = gate_json,
    .sarif = sarif,
    .junit = fp_report_junit,
    .html = fp_report_html,
};
