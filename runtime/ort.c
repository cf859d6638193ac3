/* ort.c - ONNX Runtime through its C API, loaded with dlopen (see ort.h).
 *
 * OrtGetApiBase() gives GetApi(version), a table of function pointers (struct OrtApi) whose order
 * is ONNX Runtime's public ABI: it only grows at its end, so the slot numbers below hold for every
 * release at or after the API version asked. They are the members' positions in `struct OrtApi`
 * of include/onnxruntime/core/session/onnxruntime_c_api.h (microsoft/onnxruntime), counted by hand
 * (the header is not needed to build): CreateStatus is member 0, CreateEnv 3, CreateSessionFromArray
 * 8, Run 9, ..., CreateCpuMemoryInfo 69, the Release functions from 92 (Env) to 100
 * (SessionOptions). A library whose GetApi(13) answers NULL is older than 1.13 and refused; one
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
    API_CREATE_SESSION_FROM_ARRAY = 8, /* CreateSessionFromArray */
    API_RUN = 9,                       /* Run */
    API_CREATE_SESSION_OPTIONS = 10,   /* CreateSessionOptions */
    API_SET_EXECUTION_MODE = 13,       /* SetSessionExecutionMode */
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
};
#define API_VERSION 13 /* the oldest OrtApi version holding every slot above (ONNX Runtime 1.13) */
#define LOG_ERROR 3    /* OrtLoggingLevel ORT_LOGGING_LEVEL_ERROR */
#define TYPE_FLOAT 1   /* ONNXTensorElementDataType FLOAT */
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

static double clock_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A session of m's bytes at level with threads intra-op threads into *session. */
static bool new_session(fp_ort *o, const fp_ort_model *m, fp_ort_level level, int threads, void **session,
                        GError **error)
{
    void *opts = NULL;
    if (!ok_status(o, FN(o, API_CREATE_SESSION_OPTIONS, status_t(*)(void **))(&opts), "session options", error))
        return false;
    status_t st = FN(o, API_SET_INTRA_OP_THREADS, status_t(*)(void *, int))(opts, threads);
    if (!st)
        st = FN(o, API_SET_INTER_OP_THREADS, status_t(*)(void *, int))(opts, 1);
    if (!st)
        st = FN(o, API_SET_EXECUTION_MODE, status_t(*)(void *, int))(opts, 0);
    if (!st)
        st = FN(o, API_SET_OPTIMIZATION_LEVEL, status_t(*)(void *, int))(opts, (int)level);
    gsize len = 0;
    const void *data = g_bytes_get_data(m->model, &len);
    if (!st)
        st = FN(o, API_CREATE_SESSION_FROM_ARRAY,
                status_t(*)(void *, const void *, size_t, void *, void **))(o->env, data, len, opts, session);
    FN(o, API_RELEASE_SESSION_OPTIONS, void (*)(void *))(opts);
    return ok_status(o, st, "session", error);
}

typedef status_t (*run_fn)(void *, const void *, const char *const *, void *const *, size_t, const char *const *,
                           size_t, void **);

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* Runs the session until budget_s (of wall time) is spent after the warm-up; *seconds: the fastest
 * run by `clock`. */
static bool timed_runs(fp_ort *o, void *session, const fp_ort_model *m, void *input, clockid_t clock, double budget_s,
                       double *seconds, GError **error)
{
    run_fn run = FN(o, API_RUN, run_fn);
    void (*release)(void *) = FN(o, API_RELEASE_VALUE, void (*)(void *));
    double best = G_MAXDOUBLE, start = now_s();
    for (int r = 0; r < WARMUP_RUNS + MAX_RUNS; r++) {
        void *out = NULL;
        double t0 = clock_s(clock);
        status_t st = run(session, NULL, &m->input, &input, 1, &m->output, 1, &out);
        double t1 = clock_s(clock);
        if (out)
            release(out);
        if (!ok_status(o, st, "run", error))
            return false;
        if (r < WARMUP_RUNS) {
            start = now_s();
            continue;
        }
        best = MIN(best, t1 - t0);
        if (r + 1 - WARMUP_RUNS >= MIN_RUNS && now_s() - start > budget_s)
            break;
    }
    *seconds = best;
    return true;
}

bool fp_ort_time(fp_ort *o, const fp_ort_model *m, fp_ort_level level, int threads, double budget_s, double *seconds,
                 GError **error)
{
    size_t count = 1;
    for (int i = 0; i < m->rank; i++)
        count *= (size_t)MAX(m->dims[i], 0);
    g_autofree float *data = g_new(float, MAX(count, 1));
    for (size_t i = 0; i < count; i++)
        data[i] = (float)(i % 97) / 97.0f - 0.5f;
    void *session = NULL, *mem = NULL, *input = NULL;
    bool ok = new_session(o, m, level, threads, &session, error) &&
              ok_status(o, FN(o, API_CREATE_CPU_MEMORY_INFO, status_t(*)(int, int, void **))(1, 0, &mem), "memory info",
                        error) &&
              ok_status(o,
                        FN(o, API_CREATE_TENSOR_WITH_DATA,
                           status_t(*)(void *, void *, size_t, const int64_t *, size_t, int,
                                       void **))(mem, data, count * sizeof *data, m->dims, (size_t)m->rank, TYPE_FLOAT,
                                                 &input),
                        "input", error) &&
              timed_runs(o, session, m, input, threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, budget_s,
                         seconds, error);
    if (input)
        FN(o, API_RELEASE_VALUE, void (*)(void *))(input);
    if (mem)
        FN(o, API_RELEASE_MEMORY_INFO, void (*)(void *))(mem);
    if (session)
        FN(o, API_RELEASE_SESSION, void (*)(void *))(session);
    return ok;
}
