/* device.c - device profiles: lookup by name or path, GKeyFile parsing and validation, and
 * writing a profile back (fuseplan calibrate, fuseplan fit).
 *
 * A profile file has the groups [device], [peak], optionally [efficiency], [saturation] (work at
 * which a class reaches half its efficiency), [launch] (launch overhead per op class), [cache]
 * (levels of a cache-aware roofline) and [calibration], and any number of
 * [rule.*] groups that belong to the fusion pass and are kept here unvalidated. Every error names
 * the file, the group and the key; an unknown key lists the valid ones.
 */
#include "device.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(fp-device-error-quark, fp_device_error);

static const char *const class_names[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) name,
    FP_OP_CLASSES(X)
#undef X
};

static const fp_op_class class_parents[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) FP_CLASS_##parent,
    FP_OP_CLASSES(X)
#undef X
};

static const bool class_refines[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) refines,
    FP_OP_CLASSES(X)
#undef X
};

static const bool class_phased[FP_CLASS_COUNT] = {
#define X(id, name, parent, refines, phased) phased,
    FP_OP_CLASSES(X)
#undef X
};

bool fp_op_class_refines(fp_op_class c) { return (unsigned)c < FP_CLASS_COUNT && class_refines[c]; }

bool fp_op_class_phased(fp_op_class c) { return (unsigned)c < FP_CLASS_COUNT && class_phased[c]; }

bool fp_op_class_nchw_conv(fp_op_class c)
{
    return c == FP_CLASS_CONV || c == FP_CLASS_POINTWISE_CONV || c == FP_CLASS_GROUPED_CONV ||
           c == FP_CLASS_STRIDED_DEPTHWISE;
}

const char *fp_op_class_name(fp_op_class c) { return (unsigned)c < FP_CLASS_COUNT ? class_names[c] : "other"; }

fp_op_class fp_op_class_parent(fp_op_class c)
{
    return (unsigned)c < FP_CLASS_COUNT ? class_parents[c] : FP_CLASS_OTHER;
}

/* [peak] keys and their dtypes, index by index, in display order. */
static const char *const peak_names[] = {"fp64", "fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "int8", "int4"};
static const fp_dtype peak_order[] = {FP_DT_DOUBLE,       FP_DT_FLOAT,      FP_DT_FLOAT16, FP_DT_BFLOAT16,
                                      FP_DT_FLOAT8E4M3FN, FP_DT_FLOAT8E5M2, FP_DT_INT8,    FP_DT_INT4};
G_STATIC_ASSERT(G_N_ELEMENTS(peak_order) == G_N_ELEMENTS(peak_names));

static const char *const targets[] = {"ort-cpu",       "ort-cpu-all", "ort-cpu-extended",
                                      "ort-cpu-basic", "cuda",        "tensorrt",
                                      "ascend910b",    "ascend310p",  NULL};
static const char *const device_keys[] =
    {"description",     "target",           "bandwidth",           "memory_bytes",
     "launch_overhead", "align_bytes",      "run_overhead",        "nchwc_block",
     "threads",         "weight_bandwidth", "weight_l3_bandwidth", "denormal_mac_s",
     "denormal_exp_s",  "input_overhead",   "output_overhead",     NULL};
static const char *const calibration_keys[] = {"date",
                                               "cpu",
                                               "kernel",
                                               "threads",
                                               "seconds",
                                               "fp32_flops_1t",
                                               "fp32_flops",
                                               "triad_bandwidth_1t",
                                               "triad_bandwidth",
                                               "triad_sweep",
                                               "conv_flops_1t",
                                               "conv_small_flops_1t",
                                               "grouped_conv_flops_1t",
                                               "nchwc_conv_flops_1t",
                                               "nchwc_conv_small_flops_1t",
                                               "nchwc_depthwise_flops_1t",
                                               "isa",
                                               "runtime",
                                               "runtime_version",
                                               "runtime_library",
                                               "runtime_points",
                                               "runtime_unconfirmed",
                                               "runtime_seconds",
                                               "runtime_rms_log",
                                               NULL};
/* [calibration] keys holding positive numbers (the others are free text). */
static const char *const calibration_numbers[] =
    {"threads", "seconds", "fp32_flops_1t", "fp32_flops", "triad_bandwidth_1t", "triad_bandwidth", NULL};
/* [cache] keys: l1_bytes, l1_bandwidth, l2_bytes, ... */
static const char *const cache_keys[] = {"l1_bytes", "l1_bandwidth", "l2_bytes", "l2_bandwidth",
                                         "l3_bytes", "l3_bandwidth", NULL};
G_STATIC_ASSERT(G_N_ELEMENTS(cache_keys) == 2 * FP_CACHE_LEVELS + 1);
#define VALID_GROUPS "device, peak, efficiency, saturation, launch, cache, calibration, rule.*"
#define MAX_HALF_WORK 1e15 /* FLOP: beyond any one kernel */
/* Values below these are unit mistakes (GB/s written as a plain number, microseconds as seconds). */
#define MIN_RATE 1e6
#define MIN_MEMORY (1u << 20)
#define MAX_LAUNCH 1.0
#define MAX_ALIGN (1u << 30)

const fp_dtype *fp_device_peak_dtypes(size_t *n)
{
    *n = G_N_ELEMENTS(peak_order);
    return peak_order;
}

const char *fp_device_peak_key(fp_dtype t)
{
    for (size_t i = 0; i < G_N_ELEMENTS(peak_names); i++)
        if (peak_order[i] == t)
            return peak_names[i];
    return NULL;
}

const char *const *fp_device_targets(void) { return targets; }

/* Dtype whose peak t borrows when it has none of its own; UNDEFINED when none. */
static fp_dtype sibling(fp_dtype t)
{
    switch (t) {
    case FP_DT_UINT8:
        return FP_DT_INT8;
    case FP_DT_UINT4:
        return FP_DT_INT4;
    case FP_DT_FLOAT8E5M2:
        return FP_DT_FLOAT8E4M3FN;
    case FP_DT_FLOAT8E4M3FNUZ:
        return FP_DT_FLOAT8E4M3FN;
    case FP_DT_FLOAT8E5M2FNUZ:
        return FP_DT_FLOAT8E5M2;
    default:
        return FP_DT_UNDEFINED;
    }
}

uint64_t fp_device_last_level(const fp_device *d)
{
    uint64_t capacity = 0;
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        capacity = MAX(capacity, d->cache[i].bytes);
    return capacity;
}

uint64_t fp_device_private_levels(const fp_device *d)
{
    uint64_t last = fp_device_last_level(d), below = 0;
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        if (d->cache[i].bytes < last)
            below = MAX(below, d->cache[i].bytes);
    return below;
}

bool fp_device_phased(const fp_device *d, fp_op_class c)
{
    return fp_op_class_phased(c) || (d->nchwc_block && (c == FP_CLASS_CONV || c == FP_CLASS_POINTWISE_CONV));
}

double fp_device_launch(const fp_device *d, fp_op_class c)
{
    g_assert((unsigned)c < FP_CLASS_COUNT);
    for (fp_op_class k = c;; k = class_parents[k]) {
        if (d->launch_own[k])
            return d->launch[k];
        if (class_parents[k] == k)
            break;
    }
    if (c == FP_CLASS_VIEW)
        return 0; /* views launch nothing unless the runtime is known to dispatch them */
    return d->launch_overhead;
}

double fp_device_bandwidth_for(const fp_device *d, uint64_t bytes, int *level)
{
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        if (d->cache[i].bytes && bytes <= d->cache[i].bytes) {
            if (level)
                *level = i + 1;
            return d->cache[i].bandwidth;
        }
    }
    if (level)
        *level = 0;
    return d->bandwidth;
}

double fp_device_last_from(const fp_device *d) { return d->last_from > 0 ? d->last_from : 1; }

double fp_device_peak(const fp_device *d, fp_dtype t)
{
    for (int hops = 0; hops < 3 && fp_dtype_valid(t) && t != FP_DT_UNDEFINED; hops++) {
        if (d->peak_flops[t] > 0)
            return d->peak_flops[t];
        t = sibling(t);
    }
    return d->peak_flops[FP_DT_FLOAT];
}

void fp_device_free(fp_device *d)
{
    if (!d)
        return;
    g_free(d->name);
    g_free(d->description);
    g_free(d->path);
    g_free(d->target);
    if (d->keyfile)
        g_key_file_unref(d->keyfile);
    g_free(d);
}

/* ---- validation ---- */

typedef struct {
    GKeyFile *kf;
    const char *path;
    GError **error;
} reader;

/* Sets "PATH: [GROUP] KEY: message" (or "PATH: [GROUP]: message" when key is NULL); returns false. */
static bool G_GNUC_PRINTF(4, 5) fail(reader *r, const char *group, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (key)
        g_set_error(r->error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID, "%s: [%s] %s: %s", r->path, group, key, msg);
    else
        g_set_error(r->error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID, "%s: [%s]: %s", r->path, group, msg);
    return false;
}

static bool in_list(const char *const *list, const char *s) { return g_strv_contains(list, s); }

/* Keys valid in `group`, NULL-terminated (caller frees the array, not the strings); NULL for a
 * [rule.*] group (anything goes) or an unknown group (*known = false). */
static const char **group_keys(const char *group, bool *known)
{
    *known = true;
    GPtrArray *a = g_ptr_array_new();
    if (strcmp(group, "device") == 0) {
        for (size_t i = 0; device_keys[i]; i++)
            g_ptr_array_add(a, (gpointer)device_keys[i]);
    } else if (strcmp(group, "peak") == 0) {
        for (size_t i = 0; i < G_N_ELEMENTS(peak_names); i++)
            g_ptr_array_add(a, (gpointer)peak_names[i]);
    } else if (strcmp(group, "efficiency") == 0) {
        for (int c = 0; c < FP_CLASS_COUNT; c++)
            g_ptr_array_add(a, (gpointer)class_names[c]);
        g_ptr_array_add(a, (gpointer) "bandwidth");
    } else if (strcmp(group, "launch") == 0 || strcmp(group, "saturation") == 0) {
        for (int c = 0; c < FP_CLASS_COUNT; c++)
            g_ptr_array_add(a, (gpointer)class_names[c]);
        if (strcmp(group, "launch") == 0) {
            g_ptr_array_add(a, (gpointer) "group");
            g_ptr_array_add(a, (gpointer) "im2col_row");
            g_ptr_array_add(a, (gpointer) "output");
            g_ptr_array_add(a, (gpointer) "mixed");
        }
    } else if (strcmp(group, "cache") == 0) {
        for (size_t i = 0; cache_keys[i]; i++)
            g_ptr_array_add(a, (gpointer)cache_keys[i]);
        g_ptr_array_add(a, (gpointer) "last_from");
        g_ptr_array_add(a, (gpointer) "last_life");
    } else if (strcmp(group, "calibration") == 0) {
        for (size_t i = 0; calibration_keys[i]; i++)
            g_ptr_array_add(a, (gpointer)calibration_keys[i]);
    } else {
        *known = g_str_has_prefix(group, "rule.") && group[5] != '\0';
        g_ptr_array_free(a, TRUE);
        return NULL;
    }
    g_ptr_array_add(a, NULL);
    return (const char **)g_ptr_array_free(a, FALSE);
}

/* Every group is known and every key of a validated group is valid; [device] and [peak] exist. */
static bool check_layout(reader *r)
{
    g_auto(GStrv) groups = g_key_file_get_groups(r->kf, NULL);
    for (size_t g = 0; groups[g]; g++) {
        bool known = false;
        g_autofree const char **valid = group_keys(groups[g], &known);
        if (!known)
            return fail(r, groups[g], NULL, "unknown group (valid groups: " VALID_GROUPS ")");
        if (!valid)
            continue;
        g_auto(GStrv) keys = g_key_file_get_keys(r->kf, groups[g], NULL, NULL);
        for (size_t k = 0; keys && keys[k]; k++) {
            if (!in_list(valid, keys[k])) {
                g_autofree char *list = g_strjoinv(", ", (char **)valid);
                return fail(r, groups[g], keys[k], "unknown key (valid keys: %s)", list);
            }
        }
    }
    if (!g_key_file_has_group(r->kf, "device"))
        return fail(r, "device", NULL, "missing required group");
    if (!g_key_file_has_group(r->kf, "peak"))
        return fail(r, "peak", NULL, "missing required group");
    return true;
}

/* The stripped raw text of group/key, or NULL when the key is absent. */
static char *raw_value(reader *r, const char *group, const char *key)
{
    char *v = g_key_file_get_value(r->kf, group, key, NULL);
    return v ? g_strstrip(v) : NULL;
}

/* Reads a finite number. Absent key: an error when required, else true with *found = false. */
static bool read_number(reader *r, const char *group, const char *key, bool required, double *out, bool *found)
{
    g_autofree char *v = raw_value(r, group, key);
    *found = v != NULL;
    if (!v)
        return required ? fail(r, group, key, "missing required key") : true;
    char *end = NULL;
    double x = g_ascii_strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(x))
        return fail(r, group, key, "'%s' is not a number", v);
    *out = x;
    return true;
}

/* A number > 0 and >= min_plausible (below it, a unit mistake: `unit` names the expected unit). */
static bool read_positive(reader *r, const char *group, const char *key, bool required, double min_plausible,
                          const char *unit, double *out)
{
    bool found = false;
    double x = 0;
    if (!read_number(r, group, key, required, &x, &found))
        return false;
    if (!found)
        return true;
    g_autofree char *v = raw_value(r, group, key);
    if (x <= 0)
        return fail(r, group, key, "%s must be > 0", v);
    if (x < min_plausible)
        return fail(r, group, key, "%s is implausibly small: the unit is %s", v, unit);
    *out = x;
    return true;
}

/* A whole number in [min, max]: plain digits, or a number such as 80e9 whose value is whole. */
static bool read_uint(reader *r, const char *group, const char *key, uint64_t min, uint64_t max, uint64_t *out)
{
    g_autofree char *v = raw_value(r, group, key);
    if (!v)
        return fail(r, group, key, "missing required key");
    guint64 u = 0;
    if (!g_ascii_string_to_unsigned(v, 10, 0, G_MAXUINT64, &u, NULL)) {
        char *end = NULL;
        double x = g_ascii_strtod(v, &end);
        if (end == v || *end != '\0' || !isfinite(x))
            return fail(r, group, key, "'%s' is not a number", v);
        if (x < 0)
            return fail(r, group, key, "%s must be > 0", v);
        if (x != floor(x) || x >= 18446744073709551616.0)
            return fail(r, group, key, "'%s' is not a whole number of bytes", v);
        u = (guint64)x;
    }
    if (u < min)
        return fail(r, group, key, u == 0 ? "%s must be > 0" : "%s is implausibly small: the unit is bytes", v);
    if (u > max)
        return fail(r, group, key, "%s is too large", v);
    *out = u;
    return true;
}

/* A launch overhead in seconds, in [0, MAX_LAUNCH). Absent: an error when required, else *found = false. */
static bool read_launch(reader *r, const char *group, const char *key, bool required, double *out, bool *found)
{
    double x = 0;
    if (!read_number(r, group, key, required, &x, found))
        return false;
    if (!*found)
        return true;
    g_autofree char *v = raw_value(r, group, key);
    if (x < 0)
        return fail(r, group, key, "%s must be >= 0", v);
    if (x >= MAX_LAUNCH)
        return fail(r, group, key, "%s is implausibly large: the unit is seconds (5e-6 is 5 us)", v);
    *out = x;
    return true;
}

static bool read_device(reader *r, fp_device *d)
{
    g_autoptr(GError) err = NULL;
    /* GLib 2.74 warns (its GError set twice) parsing a value with a bad escape that ends in a lone '\' */
    g_autofree char *raw = g_key_file_get_value(r->kf, "device", "description", NULL);
    size_t n = raw ? strlen(raw) : 0, lone = 0;
    while (lone < n && raw[n - 1 - lone] == '\\')
        lone++;
    if (lone & 1)
        return fail(r, "device", "description", "the value ends in a lone '\\'");
    d->description = g_key_file_get_string(r->kf, "device", "description", &err);
    if (!d->description) {
        if (g_error_matches(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND))
            return fail(r, "device", "description", "missing required key");
        return fail(r, "device", "description", "%s", err->message);
    }
    for (char *p = d->description; *p; p++) /* escapes such as \n must not break the one-line contract */
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    g_strstrip(d->description);
    if (!*d->description)
        return fail(r, "device", "description", "must not be empty");
    d->target = raw_value(r, "device", "target");
    if (!d->target)
        return fail(r, "device", "target", "missing required key");
    if (!in_list(targets, d->target)) {
        g_autofree char *list = g_strjoinv(", ", (char **)targets);
        return fail(r, "device", "target", "unknown target '%s' (one of: %s)", d->target, list);
    }
    if (!read_positive(r, "device", "bandwidth", true, MIN_RATE, "bytes/s (2.039e12 is 2039 GB/s)", &d->bandwidth))
        return false;
    if (!read_uint(r, "device", "memory_bytes", MIN_MEMORY, G_MAXUINT64, &d->memory_bytes) ||
        !read_positive(r, "device", "weight_bandwidth", false, MIN_RATE, "bytes/s (2e10 is 20 GB/s)",
                       &d->weight_bandwidth) ||
        !read_positive(r, "device", "weight_l3_bandwidth", false, MIN_RATE, "bytes/s (5e10 is 50 GB/s)",
                       &d->weight_l3_bandwidth))
        return false;
    bool found = false;
    if (!read_launch(r, "device", "launch_overhead", true, &d->launch_overhead, &found) ||
        !read_launch(r, "device", "run_overhead", false, &d->run_overhead, &found) ||
        !read_launch(r, "device", "denormal_mac_s", false, &d->denormal_mac_s, &found) ||
        !read_launch(r, "device", "denormal_exp_s", false, &d->denormal_exp_s, &found) ||
        !read_launch(r, "device", "input_overhead", false, &d->input_overhead, &found) ||
        !read_launch(r, "device", "output_overhead", false, &d->output_overhead, &found))
        return false;
    if (!read_uint(r, "device", "align_bytes", 1, MAX_ALIGN, &d->align_bytes))
        return false;
    if (d->align_bytes & (d->align_bytes - 1)) {
        g_autofree char *al = raw_value(r, "device", "align_bytes");
        return fail(r, "device", "align_bytes", "%s is not a power of two", al);
    }
    g_autofree char *nb = raw_value(r, "device", "nchwc_block");
    if (nb &&
        (!read_uint(r, "device", "nchwc_block", 1, 64, &d->nchwc_block) || (d->nchwc_block & (d->nchwc_block - 1))))
        return d->nchwc_block ? fail(r, "device", "nchwc_block", "%s is not a power of two", nb) : false;
    g_autofree char *th = raw_value(r, "device", "threads");
    return !th || read_uint(r, "device", "threads", 1, 4096, &d->threads);
}

static bool read_peaks(reader *r, fp_device *d)
{
    for (size_t i = 0; i < G_N_ELEMENTS(peak_names); i++) {
        bool required = peak_order[i] == FP_DT_FLOAT;
        if (!read_positive(r, "peak", peak_names[i], required, MIN_RATE, "FLOP/s (19.5e12 is 19.5 TFLOP/s)",
                           &d->peak_flops[peak_order[i]]))
            return false;
    }
    return true;
}

/* A fraction in (0, 1]; absent keys keep *out. */
static bool read_fraction(reader *r, const char *key, double *out)
{
    bool found = false;
    double x = 0;
    if (!read_number(r, "efficiency", key, false, &x, &found))
        return false;
    if (!found)
        return true;
    if (!(x > 0 && x <= 1)) {
        g_autofree char *v = raw_value(r, "efficiency", key);
        return fail(r, "efficiency", key, "%s is outside (0, 1]", v);
    }
    *out = x;
    return true;
}

/* Classes without a key take their parent's value (grouped_conv and nchwc_conv: conv's,
 * nchwc_depthwise: grouped_conv's, dilated_pool: pool's, as profiles written before the class
 * existed meant; parents come first in the table), the others `other`'s; `other` and `bandwidth`
 * default to 1. */
static bool read_efficiency(reader *r, fp_device *d)
{
    double other = 1.0;
    if (!read_fraction(r, "other", &other))
        return false;
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        g_assert(class_parents[c] <= (fp_op_class)c);
        d->efficiency[c] = class_parents[c] != (fp_op_class)c ? d->efficiency[class_parents[c]] : other;
        if (!read_fraction(r, class_names[c], &d->efficiency[c]))
            return false;
    }
    d->bw_efficiency = 1.0;
    return read_fraction(r, "bandwidth", &d->bw_efficiency);
}

/* [saturation]: per op class, the work (FLOP, > 0) of one kernel (of one group, for grouped_conv) at
 * which its efficiency is half the [efficiency] value; a class without a key has none, but a
 * refinement (device.h) takes its parent's (parents come first in the table) unless it says 0. */
static bool read_saturation(reader *r, fp_device *d)
{
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        d->half_work[c] = class_refines[c] ? d->half_work[class_parents[c]] : 0;
        bool found = false;
        double x = 0;
        if (!read_number(r, "saturation", class_names[c], false, &x, &found))
            return false;
        if (!found)
            continue;
        g_autofree char *v = raw_value(r, "saturation", class_names[c]);
        if (class_refines[c] ? !(x >= 0) : !(x > 0))
            return fail(r, "saturation", class_names[c],
                        class_refines[c] ? "%s must be >= 0 (FLOP; 0: none)" : "%s must be > 0 (FLOP)", v);
        if (x > MAX_HALF_WORK)
            return fail(r, "saturation", class_names[c], "%s is implausibly large: the unit is FLOP", v);
        d->half_work[c] = x;
    }
    return true;
}

void fp_device_refine_from_parents(fp_device *d)
{
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        if (!class_refines[c])
            continue;
        d->efficiency[c] = d->efficiency[class_parents[c]];
        d->half_work[c] = d->half_work[class_parents[c]];
        d->launch_own[c] = false;
    }
}

/* [launch]: a launch overhead per op class (classes without a key use fp_device_launch's fallback),
 * `group`, the overhead per group of a grouped convolution, `im2col_row`, per row a grouped
 * convolution's im2col copies, `output`, per output of a kernel past its first, and `mixed`, per
 * kernel of a graph of several classes (fp_kernel.mixed; all four default 0). */
static bool read_launch_group(reader *r, fp_device *d)
{
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        bool found = false;
        if (!read_launch(r, "launch", class_names[c], false, &d->launch[c], &found))
            return false;
        d->launch_own[c] = found;
    }
    bool found = false;
    return read_launch(r, "launch", "group", false, &d->launch_group, &found) &&
           read_launch(r, "launch", "im2col_row", false, &d->launch_row, &found) &&
           read_launch(r, "launch", "output", false, &d->launch_output, &found) &&
           read_launch(r, "launch", "mixed", false, &d->launch_mixed, &found);
}

/* [cache]: each level lN is absent or has both lN_bytes (a whole number >= 1 KiB) and lN_bandwidth
 * (bytes/s); capacities grow outward; last_from, when given, in (0, FP_DEVICE_MAX_LAST_FROM]; last_life, when
 * given, positive (seconds). */
static bool read_cache(reader *r, fp_device *d)
{
    uint64_t inner = 0;
    const char *inner_key = NULL;
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        const char *kb = cache_keys[2 * i], *kw = cache_keys[2 * i + 1];
        bool has_b = g_key_file_has_key(r->kf, "cache", kb, NULL), has_w = g_key_file_has_key(r->kf, "cache", kw, NULL);
        if (!has_b && !has_w)
            continue;
        if (!has_b || !has_w)
            return fail(r, "cache", has_b ? kw : kb, "missing: a cache level needs both %s and %s", kb, kw);
        fp_cache_level *lv = &d->cache[i];
        if (!read_uint(r, "cache", kb, 1024, G_MAXUINT64, &lv->bytes) ||
            !read_positive(r, "cache", kw, true, MIN_RATE, "bytes/s (200e9 is 200 GB/s)", &lv->bandwidth))
            return false;
        if (lv->bytes <= inner) {
            g_autofree char *v = raw_value(r, "cache", kb);
            return fail(r, "cache", kb, "%s is not larger than %s: levels grow outward", v, inner_key);
        }
        inner = lv->bytes;
        inner_key = kb;
    }
    if (!read_positive(r, "cache", "last_from", false, 0, "", &d->last_from))
        return false;
    if (d->last_from > FP_DEVICE_MAX_LAST_FROM) {
        g_autofree char *v = raw_value(r, "cache", "last_from");
        return fail(r, "cache", "last_from", "%s is above %g: a share of the last level's capacity", v,
                    FP_DEVICE_MAX_LAST_FROM);
    }
    return read_positive(r, "cache", "last_life", false, 0, "", &d->last_life);
}

static bool check_calibration(reader *r)
{
    for (size_t i = 0; calibration_numbers[i]; i++) {
        double x = 0;
        if (!read_positive(r, "calibration", calibration_numbers[i], false, 0, "", &x))
            return false;
    }
    return true;
}

fp_device *fp_device_from_keyfile(GKeyFile *kf, const char *path, GError **error)
{
    reader r = {kf, path, error};
    if (!check_layout(&r))
        return NULL;
    g_autoptr(fp_device) d = g_new0(fp_device, 1);
    d->keyfile = g_key_file_ref(kf);
    d->path = g_strdup(path);
    g_autofree char *base = g_path_get_basename(path);
    d->name = g_str_has_suffix(base, ".ini") ? g_strndup(base, strlen(base) - 4) : g_strdup(base);
    if (!read_device(&r, d) || !read_peaks(&r, d) || !read_efficiency(&r, d) || !read_saturation(&r, d) ||
        !read_launch_group(&r, d) || !read_cache(&r, d) || !check_calibration(&r))
        return NULL;
    return g_steal_pointer(&d);
}

/* ---- lookup ---- */

char **fp_device_dirs(void)
{
    GPtrArray *a = g_ptr_array_new();
    const char *env = g_getenv("FUSEPLAN_DEVICES");
    if (env && *env)
        g_ptr_array_add(a, g_strdup(env));
    g_ptr_array_add(a, g_build_filename(FP_SOURCE_DIR, "devices", NULL));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* A profile name: letters, digits, '.', '_', '-', not starting with '.'. */
static bool valid_name(const char *s)
{
    if (!*s || *s == '.')
        return false;
    for (; *s; s++)
        if (!g_ascii_isalnum(*s) && *s != '.' && *s != '_' && *s != '-')
            return false;
    return true;
}

static int cmp_str(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **fp_device_list(void)
{
    g_auto(GStrv) dirs = fp_device_dirs();
    GPtrArray *names = g_ptr_array_new();
    for (size_t i = 0; dirs[i]; i++) {
        GDir *dir = g_dir_open(dirs[i], 0, NULL);
        if (!dir)
            continue;
        const char *e;
        while ((e = g_dir_read_name(dir))) {
            if (!g_str_has_suffix(e, ".ini"))
                continue;
            g_autofree char *name = g_strndup(e, strlen(e) - 4);
            g_autofree char *full = g_build_filename(dirs[i], e, NULL);
            if (!valid_name(name) || !g_file_test(full, G_FILE_TEST_IS_REGULAR))
                continue;
            bool seen = false;
            for (guint k = 0; k < names->len && !seen; k++)
                seen = strcmp(names->pdata[k], name) == 0;
            if (!seen)
                g_ptr_array_add(names, g_steal_pointer(&name));
        }
        g_dir_close(dir);
    }
    g_ptr_array_sort(names, cmp_str);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* Path of profile `name` in the first directory that has it, or NULL. */
static char *find_profile(const char *name)
{
    g_auto(GStrv) dirs = fp_device_dirs();
    g_autofree char *file = g_strconcat(name, ".ini", NULL);
    for (size_t i = 0; dirs[i]; i++) {
        char *path = g_build_filename(dirs[i], file, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
            return path;
        g_free(path);
    }
    return NULL;
}

static void not_found(const char *name, GError **error)
{
    g_auto(GStrv) known = fp_device_list();
    g_auto(GStrv) dirs = fp_device_dirs();
    g_autofree char *k = g_strjoinv(", ", known);
    g_autofree char *d = g_strjoinv(", ", dirs);
    g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_NOT_FOUND,
                "no device profile '%s' (known: %s; searched %s; a path to an .ini file also works)", name,
                *k ? k : "none", d);
}

fp_device *fp_device_load(const char *name_or_path, GError **error)
{
    g_autofree char *path = NULL;
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".ini")) {
        path = g_strdup(name_or_path);
    } else if (!valid_name(name_or_path) || !(path = find_profile(name_or_path))) {
        not_found(name_or_path, error);
        return NULL;
    }
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_NOT_FOUND, "%s: is a directory, not a profile", path);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_NOT_FOUND, "%s: cannot open: %s", path, g_strerror(errno));
        return NULL;
    }
    fclose(f);
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) err = NULL;
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &err)) {
        g_set_error(error, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID, "%s: %s", path, err->message);
        return NULL;
    }
    return fp_device_from_keyfile(kf, path, error);
}

/* ---- writing ---- */

static void set_number(GKeyFile *kf, const char *group, const char *key, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_key_file_set_value(kf, group, key, g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

GKeyFile *fp_device_to_keyfile(const fp_device *d)
{
    GKeyFile *kf = g_key_file_new();
    g_key_file_set_string(kf, "device", "description", d->description);
    g_key_file_set_string(kf, "device", "target", d->target);
    set_number(kf, "device", "bandwidth", d->bandwidth);
    g_key_file_set_uint64(kf, "device", "memory_bytes", d->memory_bytes);
    set_number(kf, "device", "launch_overhead", d->launch_overhead);
    g_key_file_set_uint64(kf, "device", "align_bytes", d->align_bytes);
    if (d->nchwc_block)
        g_key_file_set_uint64(kf, "device", "nchwc_block", d->nchwc_block);
    if (d->threads)
        g_key_file_set_uint64(kf, "device", "threads", d->threads);
    if (d->run_overhead > 0)
        set_number(kf, "device", "run_overhead", d->run_overhead);
    if (d->weight_bandwidth > 0)
        set_number(kf, "device", "weight_bandwidth", d->weight_bandwidth);
    if (d->weight_l3_bandwidth > 0)
        set_number(kf, "device", "weight_l3_bandwidth", d->weight_l3_bandwidth);
    if (d->denormal_mac_s > 0)
        set_number(kf, "device", "denormal_mac_s", d->denormal_mac_s);
    if (d->denormal_exp_s > 0)
        set_number(kf, "device", "denormal_exp_s", d->denormal_exp_s);
    if (d->input_overhead > 0)
        set_number(kf, "device", "input_overhead", d->input_overhead);
    if (d->output_overhead > 0)
        set_number(kf, "device", "output_overhead", d->output_overhead);
    for (size_t i = 0; i < G_N_ELEMENTS(peak_names); i++)
        if (d->peak_flops[peak_order[i]] > 0)
            set_number(kf, "peak", peak_names[i], d->peak_flops[peak_order[i]]);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        set_number(kf, "efficiency", class_names[c], d->efficiency[c]);
    set_number(kf, "efficiency", "bandwidth", d->bw_efficiency);
    for (int c = 0; c < FP_CLASS_COUNT; c++) /* a refinement's none, where its parent has one: 0 */
        if (d->half_work[c] > 0 || (class_refines[c] && d->half_work[class_parents[c]] > 0))
            set_number(kf, "saturation", class_names[c], d->half_work[c]);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        if (d->launch_own[c])
            set_number(kf, "launch", class_names[c], d->launch[c]);
    if (d->launch_group > 0)
        set_number(kf, "launch", "group", d->launch_group);
    if (d->launch_row > 0)
        set_number(kf, "launch", "im2col_row", d->launch_row);
    if (d->launch_output > 0)
        set_number(kf, "launch", "output", d->launch_output);
    if (d->launch_mixed > 0)
        set_number(kf, "launch", "mixed", d->launch_mixed);
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        if (!d->cache[i].bytes)
            continue;
        g_key_file_set_uint64(kf, "cache", cache_keys[2 * i], d->cache[i].bytes);
        set_number(kf, "cache", cache_keys[2 * i + 1], d->cache[i].bandwidth);
    }
    if (d->last_from > 0)
        set_number(kf, "cache", "last_from", d->last_from);
    if (d->last_life > 0)
        set_number(kf, "cache", "last_life", d->last_life);
    if (!d->keyfile)
        return kf;
    static const char *const own[] = {"device", "peak", "efficiency", "saturation", "launch", "cache", NULL};
    g_auto(GStrv) groups = g_key_file_get_groups(d->keyfile, NULL);
    for (size_t g = 0; groups[g]; g++) {
        if (g_strv_contains(own, groups[g]))
            continue;
        g_auto(GStrv) keys = g_key_file_get_keys(d->keyfile, groups[g], NULL, NULL);
        for (size_t k = 0; keys && keys[k]; k++) {
            g_autofree char *v = g_key_file_get_value(d->keyfile, groups[g], keys[k], NULL);
            g_key_file_set_value(kf, groups[g], keys[k], v ? v : "");
        }
    }
    return kf;
}

char *fp_device_nchwc_reason(const fp_device *d)
{
    if (d->nchwc_block < 2)
        return NULL;
    g_autofree char *isa = d->keyfile ? g_key_file_get_string(d->keyfile, "calibration", "isa", NULL) : NULL;
    const char *mlas = d->nchwc_block == 16  ? "AVX-512F"
                       : d->nchwc_block == 8 ? "AVX2, AVX or SSE2, no AVX-512F"
                                             : NULL;
    const char *other = d->nchwc_block == 16 ? "a CPU without AVX-512F blocks by 8 (--device cpu-avx2)"
                                             : "an AVX-512F host blocks by 16 (--device cpu-avx512)";
    if (isa)
        return g_strdup_printf("NCHWc block %" G_GUINT64_FORMAT ": device %s was calibrated on a CPU with %s, where "
                               "ONNX Runtime's MLAS (platform.cpp, NchwcBlockSize) blocks by %" G_GUINT64_FORMAT,
                               d->nchwc_block, d->name, isa, d->nchwc_block);
    if (!mlas)
        return g_strdup_printf("NCHWc block %" G_GUINT64_FORMAT ": device %s's nchwc_block (ONNX Runtime's MLAS "
                               "blocks by 16 with AVX-512F, else 8 on x86-64)",
                               d->nchwc_block, d->name);
    return g_strdup_printf("NCHWc block %" G_GUINT64_FORMAT ": device %s's nchwc_block, ONNX Runtime's MLAS block on a "
                           "CPU with %s (platform.cpp, NchwcBlockSize); %s, or use `fuseplan calibrate` on the host",
                           d->nchwc_block, d->name, mlas, other);
}
