/* ascend.c - Ascend CSV profiles: msprof op_summary and task_time, torch_npu kernel_details
 * (level0 with 8 columns, level1/2 with shapes and per-core metrics) and op_statistic.
 * Columns are found by header name (names vary by version; see docs/profiles.md). */
#include "prof_internal.h"

#include <math.h>
#include <string.h>

typedef enum {
    COL_NAME,
    COL_TYPE,
    COL_CORE,
    COL_START,
    COL_DUR,
    COL_WAIT,
    COL_STEP,
    COL_COUNT,
    COL_IN_SHAPES,
    COL_IN_DTYPES,
    COL_IN_FORMATS,
    COL_OUT_SHAPES,
    COL_OUT_DTYPES,
    COL_OUT_FORMATS,
    COL_N
} col_id;

/* Header names per column, in every spelling seen (first = the one named in messages). */
static const char *const col_names[COL_N][5] = {
    [COL_NAME] = {"Name", "Op Name", "kernel_name"},
    [COL_TYPE] = {"Type", "OP Type"},
    [COL_CORE] = {"Accelerator Core", "Task Type", "Core Type", "kernel_type"},
    [COL_START] = {"Start Time(us)", "Task Start Time(us)", "task_start(us)"},
    [COL_DUR] = {"Duration(us)", "Task Duration(us)", "task_time(us)", "Total Time(us)"},
    [COL_WAIT] = {"Wait Time(us)", "Task Wait Time(us)"},
    [COL_STEP] = {"Step Id"},
    [COL_COUNT] = {"Count"},
    [COL_IN_SHAPES] = {"Input Shapes"},
    [COL_IN_DTYPES] = {"Input Data Types"},
    [COL_IN_FORMATS] = {"Input Formats"},
    [COL_OUT_SHAPES] = {"Output Shapes"},
    [COL_OUT_DTYPES] = {"Output Data Types"},
    [COL_OUT_FORMATS] = {"Output Formats"},
};

typedef struct {
    fp_profile *p;
    int col[COL_N];  /* field index, -1 if absent */
    GPtrArray *head; /* header names (trimmed) */
    uint32_t line;   /* of the current record */
    GPtrArray *row;
} csv_ctx;

static bool has_header(GPtrArray *head, const char *name)
{
    for (guint i = 0; i < head->len; i++)
        if (g_ascii_strcasecmp(head->pdata[i], name) == 0)
            return true;
    return false;
}

/* Maps columns and decides the format from the header. */
static bool map_header(csv_ctx *x, GError **error)
{
    for (int c = 0; c < COL_N; c++) {
        x->col[c] = -1;
        for (guint i = 0; i < x->head->len && x->col[c] < 0; i++)
            for (int a = 0; col_names[c][a] && x->col[c] < 0; a++)
                if (g_ascii_strcasecmp(x->head->pdata[i], col_names[c][a]) == 0)
                    x->col[c] = (int)i;
    }
    const char *name_col, *dur_col;
    if (x->col[COL_COUNT] >= 0 && has_header(x->head, "Total Time(us)")) {
        x->p->format = FP_PROF_OP_STATISTIC;
        x->col[COL_NAME] = x->col[COL_TYPE]; /* one row per op type */
        name_col = "OP Type";
        dur_col = "Total Time(us)";
    } else if (has_header(x->head, "kernel_name")) {
        x->p->format = FP_PROF_TASK_TIME;
        name_col = "kernel_name";
        dur_col = "task_time(us)";
    } else if (has_header(x->head, "Op Name")) {
        x->p->format = FP_PROF_OP_SUMMARY;
        name_col = "Op Name";
        dur_col = "Task Duration(us)";
    } else if (has_header(x->head, "Name") &&
               (x->col[COL_CORE] >= 0 || x->col[COL_DUR] >= 0 || x->col[COL_START] >= 0)) {
        x->p->format = FP_PROF_KERNEL_DETAILS;
        name_col = "Name";
        dur_col = "Duration(us)";
    } else {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_FORMAT,
                    "line %u: unrecognized CSV header: expected the columns of op_summary ('Op Name'), "
                    "kernel_details ('Name', 'Duration(us)'), op_statistic ('OP Type', 'Count', "
                    "'Total Time(us)') or task_time ('kernel_name')",
                    x->line);
        return false;
    }
    if (x->col[COL_NAME] < 0 || x->col[COL_DUR] < 0) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "line %u: %s header: missing column '%s'", x->line,
                    fp_prof_format_name(x->p->format), x->col[COL_NAME] < 0 ? name_col : dur_col);
        return false;
    }
    return true;
}

/* Cell of column c in the current row, trimmed (in place); NULL when the column is absent or
 * the row is too short. "N/A" is returned as is. */
static const char *cell(csv_ctx *x, col_id c)
{
    int i = x->col[c];
    if (i < 0 || (guint)i >= x->row->len)
        return NULL;
    return g_strstrip((char *)x->row->pdata[i]);
}

static bool is_na(const char *s) { return !s || !*s || strcmp(s, "N/A") == 0; }

static void bad_value(csv_ctx *x, col_id c, const char *what, const char *got, GError **error)
{
    g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "line %u, column %d '%s': expected %s, got '%s'",
                x->line, x->col[c] + 1, (const char *)x->head->pdata[x->col[c]], what, got);
}

/* Optional number: absent/N/A -> NAN. `lenient` (a misaligned row): unparsable -> NAN too. */
static bool num_cell(csv_ctx *x, col_id c, bool lenient, double *out, GError **error)
{
    const char *s = cell(x, c);
    *out = NAN;
    if (is_na(s))
        return true;
    if (!fp_prof_parse_double(s, out)) {
        *out = NAN;
        if (lenient)
            return true;
        bad_value(x, c, "a number", s, error);
        return false;
    }
    return true;
}

typedef struct {
    double start, dur, wait, step, count;
} row_nums;

/* The numeric cells of the row, checked: duration >= 0, Count and Step Id whole numbers. */
static bool row_numbers(csv_ctx *x, bool aligned, row_nums *v, GError **error)
{
    if (!num_cell(x, COL_START, !aligned, &v->start, error) || !num_cell(x, COL_DUR, false, &v->dur, error) ||
        !num_cell(x, COL_WAIT, !aligned, &v->wait, error) || !num_cell(x, COL_STEP, !aligned, &v->step, error) ||
        !num_cell(x, COL_COUNT, false, &v->count, error))
        return false;
    if (v->dur < 0) {
        bad_value(x, COL_DUR, "a duration of 0 or more", cell(x, COL_DUR), error);
        return false;
    }
    if (!isnan(v->count) && (v->count < 0 || v->count > UINT32_MAX || v->count != floor(v->count))) {
        bad_value(x, COL_COUNT, "a count", cell(x, COL_COUNT), error);
        return false;
    }
    if (!isnan(v->step) && (v->step < 0 || v->step > 9.0e18 || v->step != floor(v->step))) {
        if (!aligned) {
            v->step = NAN;
            return true;
        }
        bad_value(x, COL_STEP, "a step number", cell(x, COL_STEP), error);
        return false;
    }
    return true;
}

static const char *str_cell(csv_ctx *x, col_id c)
{
    const char *s = cell(x, c);
    return is_na(s) ? NULL : fp_prof_intern(x->p, s, -1);
}

/* Tensors of the row from the shapes column c and the dtype and format columns after it. */
static bool row_tensors(csv_ctx *x, col_id c, fp_prof_tensor **t, uint32_t *n, GError **error)
{
    g_autoptr(GError) err = NULL;
    if (fp_prof_ascend_tensors(x->p, cell(x, c), cell(x, c + 1), cell(x, c + 2), t, n, &err))
        return true;
    g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "line %u, column %d '%s': %s", x->line, x->col[c] + 1,
                (const char *)x->head->pdata[x->col[c]], err->message);
    return false;
}

static bool read_row(csv_ctx *x, GError **error)
{
    fp_profile *p = x->p;
    if (x->row->len != x->head->len) {
        int need = MAX(x->col[COL_NAME], x->col[COL_DUR]);
        if ((int)x->row->len <= need) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE,
                        "line %u: row has %u fields but column %d '%s' is required (header has %u)", x->line,
                        x->row->len, need + 1, (const char *)x->head->pdata[need], x->head->len);
            return false;
        }
        fp_prof_warn(p, "line %u: row has %u fields, header has %u: its values may be shifted (shapes not read)",
                     x->line, x->row->len, x->head->len);
    }
    bool aligned = x->row->len == x->head->len;
    row_nums v;
    if (!row_numbers(x, aligned, &v, error))
        return false;
    fp_prof_tensor *in = NULL, *out = NULL;
    uint32_t n_in = 0, n_out = 0;
    if (aligned &&
        (!row_tensors(x, COL_IN_SHAPES, &in, &n_in, error) || !row_tensors(x, COL_OUT_SHAPES, &out, &n_out, error)))
        return false;
    fp_prof_kernel *k = fp_prof_add_kernel(p);
    const char *name = str_cell(x, COL_NAME);
    k->name = name ? name : fp_prof_intern(p, cell(x, COL_NAME) ? cell(x, COL_NAME) : "", -1);
    k->op_type = str_cell(x, COL_TYPE);
    k->core = str_cell(x, COL_CORE);
    k->start_us = v.start;
    k->dur_us = isnan(v.dur) ? 0 : v.dur;
    k->wait_us = v.wait;
    k->step = isnan(v.step) ? -1 : (int64_t)v.step;
    k->line = x->line;
    if (isnan(v.dur))
        k->flags |= FP_PROF_K_UNTIMED;
    if (p->format == FP_PROF_OP_STATISTIC) {
        k->flags |= FP_PROF_K_AGGREGATE;
        k->count = isnan(v.count) ? 1 : (uint32_t)v.count;
    }
    k->inputs = in;
    k->n_inputs = n_in;
    k->outputs = out;
    k->n_outputs = n_out;
    p->records++;
    return true;
}

bool fp_prof_read_ascend(fp_profile *p, const char *data, gsize len, GError **error)
{
    fp_csv csv;
    fp_csv_init(&csv, data, len);
    g_autoptr(GPtrArray) head = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) row = g_ptr_array_new_with_free_func(g_free);
    csv_ctx x = {.p = p, .head = head, .row = row};
    int r = fp_csv_next(&csv, head, &x.line, error);
    if (r < 0)
        return false;
    for (guint i = 0; i < head->len; i++)
        g_strstrip(head->pdata[i]);
    if (!map_header(&x, error))
        return false;
    while ((r = fp_csv_next(&csv, row, &x.line, error)) > 0)
        if (!read_row(&x, error))
            return false;
    return r == 0;
}

/* ---- tensor cells ---- */

/* "a;b;;c" -> entries; strips surrounding double quotes and white space first. NULL/N/A -> none. */
static gchar **split_list(const char *cell)
{
    if (!cell)
        return NULL;
    g_autofree char *s = g_strstrip(g_strdup(cell));
    char *b = s;
    size_t n = strlen(b);
    while (n >= 2 && b[0] == '"' && b[n - 1] == '"') {
        b[n - 1] = '\0';
        b++;
        n -= 2;
    }
    g_strstrip(b);
    if (strcmp(b, "N/A") == 0)
        return NULL;
    return g_strsplit(b, ";", -1);
}

static bool parse_dims(fp_profile *p, const char *entry, fp_prof_tensor *t, GError **error)
{
    g_autofree char *e = g_strstrip(g_strdup(entry));
    if (!*e) {
        t->rank = 0; /* scalar */
        return true;
    }
    g_auto(GStrv) dims = g_strsplit(e, ",", -1);
    guint rank = g_strv_length(dims);
    if (rank > 64) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "shape '%s' has more than 64 dims", e);
        return false;
    }
    t->rank = (int32_t)rank;
    t->dims = fp_arena_calloc(p->arena, rank, sizeof(int64_t));
    for (guint i = 0; i < rank; i++) {
        if (!fp_prof_parse_int(dims[i], &t->dims[i])) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "shape '%s': dim %u '%s' is not an integer", e,
                        i + 1, g_strstrip(dims[i]));
            return false;
        }
    }
    return true;
}

bool fp_prof_ascend_tensors(fp_profile *p, const char *shapes, const char *dtypes, const char *formats,
                            fp_prof_tensor **out, uint32_t *n, GError **error)
{
    g_auto(GStrv) sv = split_list(shapes);
    g_auto(GStrv) dv = split_list(dtypes);
    g_auto(GStrv) fv = split_list(formats);
    guint ns = sv ? g_strv_length(sv) : 0, nd = dv ? g_strv_length(dv) : 0, nf = fv ? g_strv_length(fv) : 0;
    guint cnt = MAX(ns, MAX(nd, nf));
    *out = NULL;
    *n = 0;
    if (cnt == 0)
        return true;
    fp_prof_tensor *t = fp_arena_calloc(p->arena, cnt, sizeof *t);
    for (guint i = 0; i < cnt; i++) {
        t[i].rank = -1;
        if (i < ns && !parse_dims(p, sv[i], &t[i], error))
            return false;
        if (i < nd) {
            const char *d = g_strstrip(dv[i]);
            t[i].dtype = *d ? fp_prof_intern(p, d, -1) : NULL;
            t[i].dt = fp_prof_dtype(d);
        }
        if (i < nf) {
            const char *f = g_strstrip(fv[i]);
            t[i].layout = *f ? fp_prof_intern(p, f, -1) : NULL;
        }
    }
    *out = t;
    *n = cnt;
    return true;
}
