/* ort.c - ONNX Runtime through its C API, loaded with dlopen (see ort.h).
 *
 * OrtGetApiBase() gives GetApi(version), a table of function pointers (struct OrtApi) whose order
 * is ONNX Runtime's public ABI: it only grows at its end, so the slot numbers below hold for every
 * release at or after the API version asked. They are the members' positions in `struct OrtApi`
 * of include/onnxruntime/core/session/onnxruntime_c_api.h (microsoft/onnxruntime), counted by hand
 * (the header is not needed to build): CreateStatus is member 0, CreateEnv 3, CreateSessionFromArray
 * 8, Run 9, ..., CreateCpuMemoryInfo 69, the Release functions from 92 (Env) to 100
 * (SessionOptions), AllocatorGetStats 319 (C API 23, asked for only when the counters are read,
 * its key-value slots checked first). A library whose GetApi(13) answers NULL is older than 1.13 and refused; one
 * that answers is checked at open: a status made with CreateStatus must read back through
 * GetErrorCode and GetErrorMessage, and GetVersionString must read "MAJOR.MINOR...". */
#include "runtime/ort.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

G_DEFINE_QUARK(fp-ort-error-quark, fp_ort_error);

/* Slots of struct OrtApi, each named by its member. */
enum {
    API_CREATE_STATUS = 0,             /* CreateStatus */
    API_GET_ERROR_CODE = 1,            /* GetErrorCode */
    API_GET_ERROR_MESSAGE = 2,         /* GetErrorMessage */
    API_CREATE_ENV = 3,                /* CreateEnv */
    API_CREATE_SESSION = 7,            /* CreateSession */
    API_CREATE_SESSION_FROM_ARRAY = 8, /* CreateSessionFromArray */
    API_RUN = 9,                       /* Run */
    API_CREATE_SESSION_OPTIONS = 10,   /* CreateSessionOptions */
    API_SET_EXECUTION_MODE = 13,       /* SetSessionExecutionMode */
    API_DISABLE_CPU_MEM_ARENA = 19,    /* DisableCpuMemArena */
    API_SET_OPTIMIZATION_LEVEL = 23,   /* SetSessionGraphOptimizationLevel */
    API_SET_INTRA_OP_THREADS = 24,     /* SetIntraOpNumThreads */
    API_SET_INTER_OP_THREADS = 25,     /* SetInterOpNumThreads */
    API_CREATE_TENSOR_WITH_DATA = 49,  /* CreateTensorWithDataAsOrtValue */
    API_CREATE_CPU_MEMORY_INFO = 69,   /* CreateCpuMemoryInfo */
    API_RELEASE_ENV = 92,              /* ReleaseEnv */
    API_RELEASE_STATUS = 93,           /* ReleaseStatus */
    API_RELEASE_MEMORY_INFO = 94,      /* ReleaseMemoryInfo */
    API_RELEASE_SESSION = 95,          /* ReleaseSession */
    API_RELEASE_VALUE = 96,            /* ReleaseValue */
    API_RELEASE_SESSION_OPTIONS = 100, /* ReleaseSessionOptions */
    API_ADD_SESSION_CONFIG = 130,      /* AddSessionConfigEntry */
    API_CREATE_ALLOCATOR = 131,        /* CreateAllocator */
    API_RELEASE_ALLOCATOR = 132,       /* ReleaseAllocator */
    API_CREATE_KEY_VALUES = 295,       /* CreateKeyValuePairs (C API 23) */
    API_ADD_KEY_VALUE = 296,           /* AddKeyValuePair */
    API_GET_KEY_VALUE = 297,           /* GetKeyValue */
    API_GET_KEY_VALUES = 298,          /* GetKeyValuePairs */
    API_RELEASE_KEY_VALUES = 300,      /* ReleaseKeyValuePairs */
    API_ALLOCATOR_GET_STATS = 319,     /* AllocatorGetStats */
};
#define API_VERSION 13       /* the oldest OrtApi version holding every slot up to 132 (ONNX Runtime 1.13) */
#define API_STATS_VERSION 23 /* the oldest holding the key-value slots and AllocatorGetStats (1.23) */
#define LOG_ERROR 3          /* OrtLoggingLevel ORT_LOGGING_LEVEL_ERROR */
#define TYPE_FLOAT 1         /* ONNXTensorElementDataType FLOAT */
#define WARMUP_RUNS 3
#define MIN_RUNS 10
#define MAX_RUNS 20000

typedef void *status_t;
typedef struct {
    const void *(*get_api)(uint32_t version);
    const char *(*get_version_string)(void);
} api_base_t;

struct fp_ort {
    void *lib;
    const api_base_t *base;
    void *const *api;
    void *env;
    char *path, *version;
};

#define FN(o, slot, type) ((type)(o)->api[slot])

/* ---------------------------------------------------------------- finding the library */

/* Appends to out the files matching pattern (glob(3)), sorted, newest name last. */
static void glob_into(GPtrArray *out, const char *pattern)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            g_ptr_array_add(out, g_strdup(g.gl_pathv[i]));
    globfree(&g);
}

/* The node_modules folders fp_ort_find searches, in order. */
static GPtrArray *node_module_dirs(void)
{
    GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *d = g_get_current_dir();
    for (;;) {
        g_ptr_array_add(dirs, g_build_filename(d, "node_modules", NULL));
        char *up = g_path_get_dirname(d);
        if (strcmp(up, d) == 0) {
            g_free(up);
            break;
        }
        g_free(d);
        d = up;
    }
    const char *np = g_getenv("NODE_PATH");
    g_auto(GStrv) parts = np && *np ? g_strsplit(np, ":", -1) : NULL;
    for (size_t i = 0; parts && parts[i]; i++)
        if (*parts[i])
            g_ptr_array_add(dirs, g_strdup(parts[i]));
    g_ptr_array_add(dirs, g_strdup("/usr/lib/node_modules"));
    g_ptr_array_add(dirs, g_strdup("/usr/local/lib/node_modules"));
    g_ptr_array_add(dirs, g_build_filename(g_get_home_dir(), ".npm-global/lib/node_modules", NULL));
    return dirs;
}

char *fp_ort_find(GError **error)
{
#if defined(__aarch64__)
    const char *arch = "arm64";
#else
    const char *arch = "x64";
#endif
    g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) dirs = node_module_dirs();
    for (guint i = 0; i < dirs->len && !found->len; i++) {
        g_autofree char *p = g_strdup_printf("%s/onnxruntime-node/bin/napi-v*/linux/%s/libonnxruntime.so*",
                                             (const char *)dirs->pdata[i], arch);
        glob_into(found, p);
    }
    g_autofree char *home = g_build_filename(g_get_home_dir(), ".local/lib", NULL);
    const char *roots[] = {"/usr/lib", "/usr/local/lib", home};
    for (size_t i = 0; i < G_N_ELEMENTS(roots) && !found->len; i++) {
        g_autofree char *p = g_strdup_printf("%s/python3*/*-packages/onnxruntime/capi/libonnxruntime.so*", roots[i]);
        glob_into(found, p);
    }
    if (!found->len) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_NOT_FOUND,
                    "no ONNX Runtime library found (onnxruntime-node in node_modules of the current directory, its "
                    "parents, $NODE_PATH or the global ones; the Python onnxruntime package): give its path with "
                    "--runtime onnxruntime=PATH");
        return NULL;
    }
    return g_strdup(found->pdata[found->len - 1]);
}

/* ---------------------------------------------------------------- loading */

/* Checks that the table behaves as the slots say and records the version; false with an error. */
static bool check_api(fp_ort *o, const api_base_t *base, GError **error)
{
    status_t probe = FN(o, API_CREATE_STATUS, status_t(*)(int, const char *))(1, "probe");
    bool ok = probe && FN(o, API_GET_ERROR_CODE, int (*)(status_t))(probe) == 1 &&
              strcmp(FN(o, API_GET_ERROR_MESSAGE, const char *(*)(status_t))(probe), "probe") == 0;
    if (probe)
        FN(o, API_RELEASE_STATUS, void (*)(status_t))(probe);
    const char *v = base->get_version_string ? base->get_version_string() : NULL;
    unsigned major = 0, minor = 0;
    if (!ok || !v || sscanf(v, "%u.%u", &major, &minor) != 2) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_LOAD, "%s: its C API is not laid out as ONNX Runtime's", o->path);
        return false;
    }
    o->version = g_strdup(v);
    return true;
}

/* Takes st: false with its message as an FP_ORT_ERROR_RUN prefixed by `what`, true when NULL. */
static bool ok_status(fp_ort *o, status_t st, const char *what, GError **error)
{
    if (!st)
        return true;
    g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_RUN, "ONNX Runtime %s: %s", what,
                FN(o, API_GET_ERROR_MESSAGE, const char *(*)(status_t))(st));
    FN(o, API_RELEASE_STATUS, void (*)(status_t))(st);
    return false;
}

fp_ort *fp_ort_open(const char *path, GError **error)
{
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_NOT_FOUND, "%s: no such file", path);
        return NULL;
    }
    g_autoptr(fp_ort) o = g_new0(fp_ort, 1);
    o->path = g_strdup(path);
    if (!(o->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_LOAD, "%s: cannot load: %s", path, why ? why : "unknown");
        return NULL;
    }
    const api_base_t *(*get_base)(void) = (const api_base_t *(*)(void))dlsym(o->lib, "OrtGetApiBase");
    const api_base_t *base = get_base ? get_base() : NULL;
    if (!base || !base->get_api) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_LOAD, "%s: not ONNX Runtime (no OrtGetApiBase)", path);
        return NULL;
    }
    if (!(o->api = base->get_api(API_VERSION))) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_LOAD, "%s: ONNX Runtime %s is older than 1.13 (C API %d)", path,
                    base->get_version_string ? base->get_version_string() : "?", API_VERSION);
        return NULL;
    }
    o->base = base;
    if (!check_api(o, base, error))
        return NULL;
    status_t st = FN(o, API_CREATE_ENV, status_t(*)(int, const char *, void **))(LOG_ERROR, "fuseplan", &o->env);
    if (!ok_status(o, st, "environment", error))
        return NULL;
    return g_steal_pointer(&o);
}

void fp_ort_free(fp_ort *o)
{
    if (!o)
        return;
    if (o->env)
        FN(o, API_RELEASE_ENV, void (*)(void *))(o->env);
    /* the library stays loaded: ONNX Runtime's threads and atexit handlers may still refer to it */
    g_free(o->path);
    g_free(o->version);
    g_free(o);
}

const char *fp_ort_version(const fp_ort *o) { return o->version; }
const char *fp_ort_path(const fp_ort *o) { return o->path; }

/* ---------------------------------------------------------------- sessions and runs */

struct fp_ort_session {
    fp_ort *o;
    void *session, *mem;
    int n_in, n_out;
    const char *in_names[FP_ORT_MAX_IO], *out_names[FP_ORT_MAX_IO];
    char *names; /* the names' text, in_names and out_names point into it */
    void *in_values[FP_ORT_MAX_IO], *out_values[FP_ORT_MAX_IO];
    void *in_data[FP_ORT_MAX_IO]; /* the inputs' copies, FP_ORT_ALIGN-aligned, in_values wrap them */
};

static double clock_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The session options of opts into *opts_out (the caller releases them). */
static bool new_options(fp_ort *o, const fp_ort_session_opts *opts, void **out, GError **error)
{
    if (!ok_status(o, FN(o, API_CREATE_SESSION_OPTIONS, status_t(*)(void **))(out), "session options", error))
        return false;
    status_t st = FN(o, API_SET_INTRA_OP_THREADS, status_t(*)(void *, int))(*out, opts->threads);
    if (!st)
        st = FN(o, API_SET_INTER_OP_THREADS, status_t(*)(void *, int))(*out, 1);
    if (!st)
        st = FN(o, API_SET_EXECUTION_MODE, status_t(*)(void *, int))(*out, 0);
    if (!st)
        st = FN(o, API_SET_OPTIMIZATION_LEVEL, status_t(*)(void *, int))(*out, (int)opts->level);
    if (!st && opts->no_arena)
        st = FN(o, API_DISABLE_CPU_MEM_ARENA, status_t(*)(void *))(*out);
    if (!st && opts->no_prepack)
        st = FN(o, API_ADD_SESSION_CONFIG,
                status_t(*)(void *, const char *, const char *))(*out, "session.disable_prepacking", "1");
    return ok_status(o, st, "session options", error);
}

fp_ort_session *fp_ort_session_new(fp_ort *o, const char *path, GBytes *model, const fp_ort_session_opts *opts,
                                   GError **error)
{
    g_autoptr(fp_ort_session) s = g_new0(fp_ort_session, 1);
    s->o = o;
    void *so = NULL;
    if (!new_options(o, opts, &so, error)) {
        if (so)
            FN(o, API_RELEASE_SESSION_OPTIONS, void (*)(void *))(so);
        return NULL;
    }
    status_t st;
    if (model) {
        gsize len = 0;
        const void *data = g_bytes_get_data(model, &len);
        st = FN(o, API_CREATE_SESSION_FROM_ARRAY,
                status_t(*)(void *, const void *, size_t, void *, void **))(o->env, data, len, so, &s->session);
    } else {
        st = FN(o, API_CREATE_SESSION, status_t(*)(void *, const char *, void *, void **))(o->env, path, so,
                                                                                           &s->session);
    }
    FN(o, API_RELEASE_SESSION_OPTIONS, void (*)(void *))(so);
    if (!ok_status(o, st, "session", error) ||
        !ok_status(o, FN(o, API_CREATE_CPU_MEMORY_INFO, status_t(*)(int, int, void **))(1, 0, &s->mem), "memory info",
                   error))
        return NULL;
    return g_steal_pointer(&s);
}

void fp_ort_session_release(fp_ort_session *s)
{
    for (int i = 0; i < s->n_out; i++)
        if (s->out_values[i]) {
            FN(s->o, API_RELEASE_VALUE, void (*)(void *))(s->out_values[i]);
            s->out_values[i] = NULL;
        }
}

/* Releases the bound inputs and the held outputs. */
static void unbind(fp_ort_session *s)
{
    fp_ort_session_release(s);
    for (int i = 0; i < s->n_in; i++) {
        if (s->in_values[i])
            FN(s->o, API_RELEASE_VALUE, void (*)(void *))(s->in_values[i]);
        s->in_values[i] = NULL;
        g_clear_pointer(&s->in_data[i], g_aligned_free);
    }
    s->n_in = s->n_out = 0;
    g_clear_pointer(&s->names, g_free);
}

void fp_ort_session_free(fp_ort_session *s)
{
    if (!s)
        return;
    unbind(s);
    if (s->mem)
        FN(s->o, API_RELEASE_MEMORY_INFO, void (*)(void *))(s->mem);
    if (s->session)
        FN(s->o, API_RELEASE_SESSION, void (*)(void *))(s->session);
    g_free(s);
}

/* Copies the names of inputs and outputs into s->names, in_names and out_names pointing into it. */
static void keep_names(fp_ort_session *s, const fp_ort_tensor *inputs, const char *const *outputs)
{
    GString *text = g_string_new(NULL);
    gsize at[2 * FP_ORT_MAX_IO];
    for (int i = 0; i < s->n_in + s->n_out; i++) {
        at[i] = text->len;
        g_string_append_len(text, i < s->n_in ? inputs[i].name : outputs[i - s->n_in],
                            (gssize)strlen(i < s->n_in ? inputs[i].name : outputs[i - s->n_in]) + 1);
    }
    s->names = g_string_free(text, FALSE);
    for (int i = 0; i < s->n_in + s->n_out; i++)
        *(i < s->n_in ? &s->in_names[i] : &s->out_names[i - s->n_in]) = s->names + at[i];
}

bool fp_ort_session_bind(fp_ort_session *s, const fp_ort_tensor *inputs, int n_inputs, const char *const *outputs,
                         int n_outputs, GError **error)
{
    unbind(s);
    if (n_inputs < 0 || n_inputs > FP_ORT_MAX_IO || n_outputs < 1 || n_outputs > FP_ORT_MAX_IO) {
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_RUN, "%d inputs and %d outputs: 0 to %d inputs, 1 to %d outputs",
                    n_inputs, n_outputs, FP_ORT_MAX_IO, FP_ORT_MAX_IO);
        return false;
    }
    s->n_in = n_inputs;
    s->n_out = n_outputs;
    keep_names(s, inputs, outputs);
    for (int i = 0; i < n_inputs; i++) {
        const fp_ort_tensor *t = &inputs[i];
        s->in_data[i] = g_aligned_alloc(MAX(t->bytes, 1), 1, FP_ORT_ALIGN);
        if (t->bytes)
            memcpy(s->in_data[i], t->data, t->bytes);
        status_t st = FN(s->o, API_CREATE_TENSOR_WITH_DATA,
                         status_t(*)(void *, void *, size_t, const int64_t *, size_t, int,
                                     void **))(s->mem, s->in_data[i], t->bytes, t->dims, (size_t)t->rank, t->type,
                                               &s->in_values[i]);
        if (!ok_status(s->o, st, "input", error))
            return false;
    }
    return true;
}

typedef status_t (*run_fn)(void *, const void *, const char *const *, void *const *, size_t, const char *const *,
                           size_t, void **);

bool fp_ort_session_run(fp_ort_session *s, GError **error)
{
    fp_ort_session_release(s);
    status_t st = FN(s->o, API_RUN, run_fn)(s->session, NULL, s->in_names, s->in_values, (size_t)s->n_in, s->out_names,
                                            (size_t)s->n_out, s->out_values);
    return ok_status(s->o, st, "run", error);
}

bool fp_ort_session_times(fp_ort_session *s, clockid_t clock, int warmup, int min_runs, int max_runs, double budget_s,
                          GArray *times, GError **error)
{
    double start = clock_s(CLOCK_MONOTONIC);
    for (int r = 0; r < warmup + max_runs; r++) {
        double t0 = clock_s(clock);
        bool ok = fp_ort_session_run(s, error);
        double t = clock_s(clock) - t0;
        fp_ort_session_release(s);
        if (!ok)
            return false;
        if (r < warmup) { /* the arena grows, pages fault in */
            start = clock_s(CLOCK_MONOTONIC);
            continue;
        }
        g_array_append_val(times, t);
        if (r + 1 - warmup >= min_runs && clock_s(CLOCK_MONOTONIC) - start > budget_s)
            break;
    }
    return true;
}

/* ---------------------------------------------------------------- the arena's counters */

/* The C API 23 table, its key-value slots checked (a pair set must read back); NULL with an error. */
static void *const *stats_api(fp_ort *o, GError **error)
{
    void *const *api = o->base->get_api(API_STATS_VERSION);
    bool ok = api != NULL;
    void *kvp = NULL;
    if (ok) {
        ((void (*)(void **))api[API_CREATE_KEY_VALUES])(&kvp);
        ((void (*)(void *, const char *, const char *))api[API_ADD_KEY_VALUE])(kvp, "probe", "42");
        const char *v = ((const char *(*)(const void *, const char *))api[API_GET_KEY_VALUE])(kvp, "probe");
        ok = v && strcmp(v, "42") == 0;
        ((void (*)(void *))api[API_RELEASE_KEY_VALUES])(kvp);
    }
    if (!ok)
        g_set_error(error, FP_ORT_ERROR, FP_ORT_ERROR_LOAD,
                    "%s: ONNX Runtime %s has no allocator statistics (C API %d)", o->path, o->version,
                    API_STATS_VERSION);
    return ok ? api : NULL;
}

static void stat_clear(gpointer p) { g_free(((fp_ort_stat *)p)->key); }

GArray *fp_ort_session_stats(fp_ort_session *s, GError **error)
{
    void *const *api = stats_api(s->o, error), *allocator = NULL, *kvp = NULL;
    if (!api || !ok_status(s->o,
                           ((status_t(*)(const void *, const void *,
                                         void **))api[API_CREATE_ALLOCATOR])(s->session, s->mem, &allocator),
                           "allocator", error))
        return NULL;
    status_t st = ((status_t(*)(const void *, void **))api[API_ALLOCATOR_GET_STATS])(allocator, &kvp);
    GArray *out = NULL;
    if (ok_status(s->o, st, "allocator statistics", error)) {
        const char *const *keys, *const *vals;
        size_t n = 0;
        ((void (*)(const void *, const char *const **, const char *const **,
                   size_t *))api[API_GET_KEY_VALUES])(kvp, &keys, &vals, &n);
        out = g_array_new(FALSE, FALSE, sizeof(fp_ort_stat));
        g_array_set_clear_func(out, stat_clear);
        for (size_t i = 0; i < n; i++) {
            fp_ort_stat v = {g_strdup(keys[i]), g_ascii_strtoll(vals[i], NULL, 10)};
            g_array_append_val(out, v);
        }
        ((void (*)(void *))api[API_RELEASE_KEY_VALUES])(kvp);
    }
    ((void (*)(void *))api[API_RELEASE_ALLOCATOR])(allocator);
    return out;
}

/* ---------------------------------------------------------------- timing a micro-model */

double fp_ort_window_best(const double *t, size_t n, double window_s)
{
    double best = G_MAXDOUBLE, sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        while (k < n && sum < window_s)
            sum += t[k++];
        if (sum < window_s && i > 0)
            break; /* the tail: shorter than a window */
        best = MIN(best, sum / (double)(k - i));
        sum -= t[i];
    }
    return n ? best : 0;
}

float fp_ort_pattern(size_t i, double scale)
{
    return (float)(((double)(i % 97) / 97.0 - 0.5) * (scale != 0 ? scale : 1));
}

bool fp_ort_time_bound(fp_ort *o, GBytes *model, const fp_ort_tensor *inputs, int n_inputs, const char *const *outputs,
                       int n_outputs, fp_ort_level level, int threads, double budget_s, double *seconds, GError **error)
{
    fp_ort_session_opts so = {.level = level, .threads = threads};
    g_autoptr(fp_ort_session) s = fp_ort_session_new(o, NULL, model, &so, error);
    g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(double));
    if (!s || !fp_ort_session_bind(s, inputs, n_inputs, outputs, n_outputs, error) ||
        !fp_ort_session_times(s, threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, WARMUP_RUNS, MIN_RUNS,
                              MAX_RUNS, budget_s, times, error))
        return false;
    *seconds = fp_ort_window_best((const double *)times->data, times->len, FP_ORT_WINDOW_S);
    return true;
}

/* m's input filled (fp_ort_pattern), its data a new block *data. */
static fp_ort_tensor model_input(const fp_ort_model *m, float **data)
{
    size_t count = 1;
    for (int i = 0; i < m->rank; i++)
        count *= (size_t)MAX(m->dims[i], 0);
    *data = g_new(float, MAX(count, 1));
    for (size_t i = 0; i < count; i++)
        (*data)[i] = fp_ort_pattern(i, m->scale);
    return (fp_ort_tensor){m->input, TYPE_FLOAT, m->dims, m->rank, *data, count * sizeof **data};
}

bool fp_ort_time(fp_ort *o, const fp_ort_model *m, fp_ort_level level, int threads, double budget_s, double *seconds,
                 GError **error)
{
    g_autofree float *data = NULL;
    fp_ort_tensor in = model_input(m, &data);
    return fp_ort_time_bound(o, m->model, &in, 1, &m->output, 1, level, threads, budget_s, seconds, error);
}

bool fp_ort_time_apart(fp_ort *o, const fp_ort_model *m, int threads, const double *gaps_s, int n_gaps, int runs,
                       GArray *times, GError **error)
{
    g_autofree float *data = NULL;
    fp_ort_tensor in = model_input(m, &data);
    fp_ort_session_opts so = {.level = FP_ORT_DISABLED, .threads = threads};
    g_autoptr(fp_ort_session) s = fp_ort_session_new(o, NULL, m->model, &so, error);
    clockid_t clock = threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    if (!s || !fp_ort_session_bind(s, &in, 1, &m->output, 1, error) ||
        !fp_ort_session_times(s, clock, WARMUP_RUNS, 0, 0, 0, times, error))
        return false;
    for (int g = 0; g < n_gaps; g++)
        for (int r = 0; r < runs; r++) {
            g_usleep((gulong)(gaps_s[g] * 1e6));
            if (!fp_ort_session_times(s, clock, 0, 1, 1, 0, times, error))
                return false;
        }
    return true;
}
