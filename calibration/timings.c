/* timings.c - a runtime calibration's measurements to and from a key file (timings.h). */
#include "calibration/timings.h"

#include <math.h>
#include <string.h>

#include "devices/device.h"

#define G FP_RT_TIMINGS_GROUP

static const char *const extra_keys[] = {
    "format",          "runtime_version", "runtime_library",    "seconds",        "input_overhead",
    "output_overhead", "last_life",       "footprint_capacity", "footprint_from", NULL,
};

void fp_rt_extras_clear(fp_rt_extras *x)
{
    g_clear_pointer(&x->runtime_version, g_free);
    g_clear_pointer(&x->runtime_library, g_free);
}

static void set_double(GKeyFile *kf, const char *key, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_key_file_set_value(kf, G, key, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

/* A copy of kf, its comments kept. Caller frees. */
static GKeyFile *copy_of(GKeyFile *kf)
{
    gsize len = 0;
    g_autofree char *text = g_key_file_to_data(kf, &len, NULL);
    GKeyFile *copy = g_key_file_new();
    g_assert(g_key_file_load_from_data(copy, text, len, G_KEY_FILE_KEEP_COMMENTS, NULL));
    return copy;
}

GKeyFile *fp_rt_timings_keyfile(GKeyFile *native, const fp_rt_set *s, const fp_rt_extras *x)
{
    GKeyFile *kf = copy_of(native);
    g_key_file_set_integer(kf, G, "format", FP_RT_TIMINGS_FORMAT);
    g_key_file_set_string(kf, G, "runtime_version", x->runtime_version ? x->runtime_version : "");
    g_key_file_set_string(kf, G, "runtime_library", x->runtime_library ? x->runtime_library : "");
    set_double(kf, "seconds", x->seconds);
    set_double(kf, "input_overhead", x->input_overhead);
    set_double(kf, "output_overhead", x->output_overhead);
    set_double(kf, "last_life", x->last_life);
    g_key_file_set_uint64(kf, G, "footprint_capacity", x->foot_capacity);
    set_double(kf, "footprint_from", x->foot_from);
    for (guint i = 0; i < s->points->len; i++) {
        const fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        double t[] = {p->short_s, p->short2_s, p->long_s, p->long2_s};
        g_autofree char *key = fp_rt_point_name(s, p);
        g_key_file_set_double_list(kf, G, key, t, G_N_ELEMENTS(t));
    }
    return kf;
}

GKeyFile *fp_rt_timings_native(GKeyFile *kf, const char *path, GError **error)
{
    if (!g_key_file_has_group(kf, G)) {
        g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID,
                    "%s: no [%s] group: not a file of calibrate --runtime --save-timings", path, G);
        return NULL;
    }
    GKeyFile *native = copy_of(kf);
    g_key_file_remove_group(native, G, NULL);
    return native;
}

static bool G_GNUC_PRINTF(4, 5) fail(GError **error, const char *path, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID, "%s: [%s] %s: %s", path, G, key, msg);
    return false;
}

/* kf's [timings] key as a finite double into *v. */
static bool read_number(GKeyFile *kf, const char *path, const char *key, double *v, GError **error)
{
    g_autoptr(GError) err = NULL;
    *v = g_key_file_get_double(kf, G, key, &err);
    if (err)
        return fail(error, path, key, "%s", err->message);
    return isfinite(*v) ? true : fail(error, path, key, "not a finite number");
}

/* kf's [timings] key as a finite double of 0 or more into *v. */
static bool read_time(GKeyFile *kf, const char *path, const char *key, double *v, GError **error)
{
    if (!read_number(kf, path, key, v, error))
        return false;
    return *v >= 0 ? true : fail(error, path, key, "not a time of 0 or more");
}

/* The extras of kf's [timings] into x. */
static bool read_extras(GKeyFile *kf, const char *path, fp_rt_extras *x, GError **error)
{
    g_autoptr(GError) err = NULL;
    gint64 format = g_key_file_get_int64(kf, G, "format", &err);
    if (err || format != FP_RT_TIMINGS_FORMAT)
        return fail(error, path, "format", "%d expected", FP_RT_TIMINGS_FORMAT);
    x->runtime_version = g_key_file_get_string(kf, G, "runtime_version", NULL);
    x->runtime_library = g_key_file_get_string(kf, G, "runtime_library", NULL);
    if (!x->runtime_version || !x->runtime_library)
        return fail(error, path, x->runtime_version ? "runtime_library" : "runtime_version", "missing");
    guint64 capacity = g_key_file_get_uint64(kf, G, "footprint_capacity", &err);
    if (err)
        return fail(error, path, "footprint_capacity", "%s", err->message);
    x->foot_capacity = capacity;
    return read_time(kf, path, "seconds", &x->seconds, error) &&
           read_time(kf, path, "input_overhead", &x->input_overhead, error) &&
           read_time(kf, path, "output_overhead", &x->output_overhead, error) &&
           read_time(kf, path, "last_life", &x->last_life, error) &&
           read_number(kf, path, "footprint_from", &x->foot_from, error); /* a fraction, any sign with no finding */
}

/* Point p's four times from kf. */
static bool read_point(GKeyFile *kf, const char *path, const char *key, fp_rt_point *p, GError **error)
{
    g_autoptr(GError) err = NULL;
    gsize n = 0;
    g_autofree double *t = g_key_file_get_double_list(kf, G, key, &n, &err);
    if (!t)
        return fail(error, path, key, "%s", err ? err->message : "missing");
    if (n != 4)
        return fail(error, path, key, "%zu times, 4 expected (short, second short, long, second long)", n);
    for (gsize i = 0; i < n; i++)
        if (!isfinite(t[i]) || t[i] < 0)
            return fail(error, path, key, "not a time of 0 or more");
    p->short_s = t[0], p->short2_s = t[1], p->long_s = t[2], p->long2_s = t[3];
    return true;
}

bool fp_rt_timings_read(GKeyFile *kf, const char *path, fp_rt_set *s, fp_rt_extras *x, GError **error)
{
    if (!read_extras(kf, path, x, error))
        return false;
    g_autoptr(GHashTable) known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < s->points->len; i++) {
        fp_rt_point *p = &g_array_index(s->points, fp_rt_point, i);
        char *key = fp_rt_point_name(s, p);
        g_hash_table_add(known, key);
        if (!g_key_file_has_key(kf, G, key, NULL))
            return fail(error, path, key, "missing: a micro-model point of this fuseplan that the file does not time");
        if (!read_point(kf, path, key, p, error))
            return false;
    }
    g_auto(GStrv) keys = g_key_file_get_keys(kf, G, NULL, NULL);
    for (guint i = 0; keys && keys[i]; i++)
        if (!g_hash_table_contains(known, keys[i]) && !g_strv_contains(extra_keys, keys[i]))
            return fail(error, path, keys[i], "unknown key: not a micro-model point of this fuseplan");
    return true;
}
