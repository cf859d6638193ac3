/* json_common.c - JSON pieces shared by every JSON emitter. */
#include "json_common.h"

void fp_jsonw_shape(fp_jsonw *w, const char *member, const fp_shape *s)
{
    if (s->rank < 0) {
        fp_jsonw_null(w, member);
        return;
    }
    fp_jsonw_begin_array(w, member);
    for (int32_t i = 0; i < s->rank; i++) {
        if (s->dims[i].sym)
            fp_jsonw_str(w, NULL, s->dims[i].sym);
        else if (s->dims[i].value >= 0)
            fp_jsonw_int(w, NULL, s->dims[i].value);
        else
            fp_jsonw_null(w, NULL);
    }
    fp_jsonw_end_array(w);
}

void fp_jsonw_value(fp_jsonw *w, const fp_value *v)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_str(w, "name", v->name);
    fp_jsonw_name(w, "dtype", fp_dtype_name(v->dtype));
    fp_jsonw_shape(w, "shape", &v->shape);
    fp_jsonw_end_object(w);
}

void fp_jsonw_bound(fp_jsonw *w, const char *batch_note, uint32_t unknown_values)
{
    fp_jsonw_str(w, "batch_note", batch_note);
    fp_jsonw_uint(w, "unknown_values", unknown_values);
}

void fp_jsonw_diagnostics(fp_jsonw *w, const char *member, const fp_diag *diag)
{
    fp_jsonw_begin_array(w, member);
    for (guint i = 0; diag && i < diag->entries->len; i++) {
        const fp_diag_entry *e = diag->entries->pdata[i];
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_name(w, "level",
                      e->level == FP_DIAG_WARNING ? "warning"
                      : e->level == FP_DIAG_ERROR ? "error"
                                                  : "info");
        fp_jsonw_str(w, "code", e->code);
        fp_jsonw_str(w, "node", e->node);
        fp_jsonw_str(w, "message", e->message);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
}
