/* ort_run.c - fp_bench_ort_run: ONNX Runtime's inference latency without profiling and without a
 * language binding, for bench/latency_vs_ort.py (never part of the product build or of make test).
 *
 *   fp_bench_ort_run LIBONNXRUNTIME SPEC
 *
 * Loads the libonnxruntime.so that onnxruntime-node ships (dlopen; its C API through
 * OrtGetApiBase), creates one session (CPU EP, one intra-op and one inter-op thread, sequential
 * execution, the level SPEC names), binds the SPEC's inputs and times OrtApi::Run alone with
 * CLOCK_MONOTONIC: 10 warm-up runs, then runs until the budget is spent (at least --min, at most
 * --max). Prints one JSON line: {"runs": N, "min_us", "median_us", "robust_us", "error": null}, where
 * robust_us is the mean of the runs within 1.5x (or 2 us) of the fastest (noise on a shared machine
 * only adds time; bench/ort_robust.py uses the same statistic on profiles). On failure: a JSON line
 * with "error" and exit status 2.
 *
 * SPEC (text, one item per line, written by bench/latency_vs_ort.py):
 *   level disabled|basic|extended|all   (GraphOptimizationLevel 0, 1, 2, 99)
 *   budget_ms 1000
 *   model PATH
 *   input NAME TYPE RANK D1 .. DRANK DATAFILE   (TYPE: the ONNX TensorProto data type number; DATAFILE:
 *                                               the raw little-endian bytes)
 *   output NAME
 *   mode time|memory                    (default time)
 *   arena on|off                        (the CPU arena, default on; off: plain malloc per tensor)
 *   prepack on|off                      (MLAS weight pre-packing, default on: session.disable_prepacking)
 *
 * Memory mode (bench/ort_memory.py) runs the model twice instead of timing it and prints what the
 * session's CPU allocator reports (OrtApi::CreateAllocator on the session, then
 * OrtApi::AllocatorGetStats: the BFC arena's counters InUse, MaxInUse, TotalAllocated, NumAllocs,
 * NumReserves, NumArenaExtensions, MaxAllocSize) after session creation and after each run, beside
 * the process's VmRSS / VmHWM (/proc/self/status, bytes) at the same points:
 *   {"session": {...}, "run1": {...}, "run2": {...}, "rss": [...], "hwm": [...], "version": "1.30.0", "error": null}
 *
 * The OrtApi is a table of function pointers whose order is ONNX Runtime's public ABI (it only
 * grows at the end): the slot numbers below are the members' positions in `struct OrtApi` of
 * onnxruntime's public header include/onnxruntime/core/session/onnxruntime_c_api.h (API version
 * 13), counted by hand; the header itself is not needed here. The first three are checked at
 * start-up (a status made with CreateStatus must read back through GetErrorCode and
 * GetErrorMessage).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    API_CREATE_STATUS = 0,
    API_GET_ERROR_CODE = 1,
    API_GET_ERROR_MESSAGE = 2,
    API_CREATE_ENV = 3,
    API_CREATE_SESSION = 7,
    API_RUN = 9,
    API_CREATE_SESSION_OPTIONS = 10,
    API_SET_EXECUTION_MODE = 13,
    API_DISABLE_CPU_MEM_ARENA = 19,
    API_SET_OPTIMIZATION_LEVEL = 23,
    API_SET_INTRA_OP_THREADS = 24,
    API_SET_INTER_OP_THREADS = 25,
    API_CREATE_TENSOR_WITH_DATA = 49,
    API_CREATE_CPU_MEMORY_INFO = 69,
    API_RELEASE_VALUE = 96,
    API_ADD_SESSION_CONFIG_ENTRY = 130,
    API_CREATE_ALLOCATOR = 131,
    API_RELEASE_ALLOCATOR = 132,
    API_GET_BUILD_INFO_STRING = 254,
    API_CREATE_KEY_VALUE_PAIRS = 295,
    API_ADD_KEY_VALUE_PAIR = 296,
    API_GET_KEY_VALUE = 297,
    API_GET_KEY_VALUE_PAIRS = 298,
    API_RELEASE_KEY_VALUE_PAIRS = 300,
    API_ALLOCATOR_GET_STATS = 319,
};
#define API_VERSION 13        /* the oldest OrtApi version holding every slot above */
#define API_MEMORY_VERSION 23 /* asked for in memory mode (ORT 1.30 gives its whole table, slot 319 included) */
#define MAX_IO 64
#define MAX_RANK 16
#define MAX_RUNS 200000

typedef void *status_t;
typedef struct {
    const void *(*get_api)(uint32_t version);
    const char *(*get_version_string)(void);
} api_base_t;

static void *const *api;
#define FN(slot, type) ((type)api[slot])

typedef struct {
    char name[256];
    int type, rank;
    int64_t dims[MAX_RANK];
    void *data;
    size_t bytes;
} tensor_t;

static void fail(const char *fmt, const char *what)
{
    printf("{\"error\": \"");
    for (const char *p = what; p && *p; p++) /* a message as a JSON string: escape what JSON needs */
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            printf(" ");
        else
            putchar(*p);
    printf("\", \"stage\": \"%s\"}\n", fmt);
    exit(2);
}

static void check(status_t st, const char *stage)
{
    if (st)
        fail(stage, FN(API_GET_ERROR_MESSAGE, const char *(*)(status_t))(st));
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail("input", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n))
        fail("input", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Copies src into dst[size]; a spec item too long for it is an error, not a truncation. */
static void copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        fail("spec", src);
    memcpy(dst, src, n + 1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One of /proc/self/status's fields (kB) in bytes; -1 when missing. */
static long long proc_status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':')
            v = atoll(line + n + 1) * 1024;
    if (f)
        fclose(f);
    return v;
}

/* Prints the allocator's statistics as a JSON object (every key AllocatorGetStats gives, its value
 * as a number). */
static void print_stats(void *allocator)
{
    void *kvp = NULL;
    check(FN(API_ALLOCATOR_GET_STATS, status_t(*)(const void *, void **))(allocator, &kvp), "stats");
    const char *const *keys, *const *vals;
    size_t n = 0;
    FN(API_GET_KEY_VALUE_PAIRS, void (*)(const void *, const char *const **, const char *const **, size_t *))
    (kvp, &keys, &vals, &n);
    printf("{");
    for (size_t i = 0; i < n; i++)
        printf("%s\"%s\": %lld", i ? ", " : "", keys[i], atoll(vals[i]));
    printf("}");
    FN(API_RELEASE_KEY_VALUE_PAIRS, void (*)(void *))(kvp);
}

/* The slots above API 13 are checked before use: a key-value pair set through slots 295/296 must
 * read back through 297. */
static void check_memory_slots(const api_base_t *base)
{
    api = base->get_api(API_MEMORY_VERSION);
    if (!api)
        fail("api", "OrtApi version 23 not available (AllocatorGetStats)");
    void *kvp = NULL;
    FN(API_CREATE_KEY_VALUE_PAIRS, void (*)(void **))(&kvp);
    FN(API_ADD_KEY_VALUE_PAIR, void (*)(void *, const char *, const char *))(kvp, "probe", "42");
    const char *v = FN(API_GET_KEY_VALUE, const char *(*)(const void *, const char *))(kvp, "probe");
    if (!v || strcmp(v, "42") != 0)
        fail("api", "the OrtApi key-value slots are not laid out as expected");
    FN(API_RELEASE_KEY_VALUE_PAIRS, void (*)(void *))(kvp);
}

typedef status_t (*run_fn)(void *, const void *, const char *const *, void *const *, size_t, const char *const *,
                           size_t, void **);

/* Memory mode: two runs, the allocator's statistics and the RSS after creation and after each. */
static void measure_memory(void *session, void *mem, long long rss0, const char *const *names, void *const *values,
                           int n_in, const char *const *onames, int n_out, const char *version)
{
    void *allocator = NULL;
    check(FN(API_CREATE_ALLOCATOR, status_t(*)(const void *, const void *, void **))(session, mem, &allocator),
          "allocator");
    long long rss[3], hwm[3];
    rss[0] = proc_status_bytes("VmRSS");
    hwm[0] = proc_status_bytes("VmHWM");
    printf("{\"rss_before_session\": %lld, \"session\": ", rss0);
    print_stats(allocator);
    run_fn run = FN(API_RUN, run_fn);
    for (int r = 1; r <= 2; r++) {
        void *outs[MAX_IO] = {0};
        check(run(session, NULL, names, values, (size_t)n_in, onames, (size_t)n_out, outs), "run");
        printf(", \"run%d\": ", r);
        print_stats(allocator); /* the outputs are still held here */
        for (int i = 0; i < n_out; i++)
            FN(API_RELEASE_VALUE, void (*)(void *))(outs[i]);
        rss[r] = proc_status_bytes("VmRSS");
        hwm[r] = proc_status_bytes("VmHWM");
    }
    printf(", \"rss\": [%lld, %lld, %lld], \"hwm\": [%lld, %lld, %lld], \"version\": \"%s\", \"error\": null}\n",
           rss[0], rss[1], rss[2], hwm[0], hwm[1], hwm[2], version);
    FN(API_RELEASE_ALLOCATOR, void (*)(void *))(allocator);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBONNXRUNTIME SPEC\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail("dlopen", dlerror());
    const api_base_t *(*get_base)(void) = (const api_base_t *(*)(void))dlsym(lib, "OrtGetApiBase");
    if (!get_base)
        fail("dlsym", "OrtGetApiBase");
    api = get_base()->get_api(API_VERSION);
    if (!api)
        fail("api", "OrtApi version 13 not available");
    status_t probe = FN(API_CREATE_STATUS, status_t(*)(int, const char *))(1, "probe");
    if (FN(API_GET_ERROR_CODE, int (*)(status_t))(probe) != 1 ||
        strcmp(FN(API_GET_ERROR_MESSAGE, const char *(*)(status_t))(probe), "probe") != 0)
        fail("api", "the OrtApi table is not laid out as expected");

    char model[4096] = "", level[32] = "extended", mode[32] = "time", arena[8] = "on", prepack[8] = "on", line[8192];
    double budget_ms = 1000;
    tensor_t in[MAX_IO];
    char out_names[MAX_IO][256];
    int n_in = 0, n_out = 0;
    FILE *spec = fopen(argv[2], "r");
    if (!spec)
        fail("spec", argv[2]);
    while (fgets(line, sizeof line, spec)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "model ", 6)) {
            copy(model, sizeof model, line + 6);
        } else if (!strncmp(line, "level ", 6)) {
            copy(level, sizeof level, line + 6);
        } else if (!strncmp(line, "mode ", 5)) {
            copy(mode, sizeof mode, line + 5);
        } else if (!strncmp(line, "arena ", 6)) {
            copy(arena, sizeof arena, line + 6);
        } else if (!strncmp(line, "prepack ", 8)) {
            copy(prepack, sizeof prepack, line + 8);
        } else if (!strncmp(line, "budget_ms ", 10)) {
            budget_ms = atof(line + 10);
        } else if (!strncmp(line, "output ", 7) && n_out < MAX_IO) {
            copy(out_names[n_out++], sizeof out_names[0], line + 7);
        } else if (!strncmp(line, "input ", 6) && n_in < MAX_IO) {
            tensor_t *t = &in[n_in++];
            char *save = NULL, *tok = strtok_r(line + 6, " ", &save);
            copy(t->name, sizeof t->name, tok ? tok : "");
            t->type = atoi(strtok_r(NULL, " ", &save));
            t->rank = atoi(strtok_r(NULL, " ", &save));
            if (t->rank < 0 || t->rank > MAX_RANK)
                fail("spec", "rank");
            for (int d = 0; d < t->rank; d++)
                t->dims[d] = atoll(strtok_r(NULL, " ", &save));
            t->data = read_file(strtok_r(NULL, " ", &save), &t->bytes);
        }
    }
    fclose(spec);

    bool memory = !strcmp(mode, "memory");
    if (memory)
        check_memory_slots(get_base());
    long long rss0 = proc_status_bytes("VmRSS");
    void *env, *opts, *session, *mem;
    check(FN(API_CREATE_ENV, status_t(*)(int, const char *, void **))(3, "fp_bench", &env), "env");
    check(FN(API_CREATE_SESSION_OPTIONS, status_t(*)(void **))(&opts), "options");
    check(FN(API_SET_INTRA_OP_THREADS, status_t(*)(void *, int))(opts, 1), "options");
    check(FN(API_SET_INTER_OP_THREADS, status_t(*)(void *, int))(opts, 1), "options");
    check(FN(API_SET_EXECUTION_MODE, status_t(*)(void *, int))(opts, 0), "options");
    int opt_level = !strcmp(level, "disabled") ? 0 : !strcmp(level, "basic") ? 1 : !strcmp(level, "all") ? 99 : 2;
    check(FN(API_SET_OPTIMIZATION_LEVEL, status_t(*)(void *, int))(opts, opt_level), "options");
    if (!strcmp(arena, "off"))
        check(FN(API_DISABLE_CPU_MEM_ARENA, status_t(*)(void *))(opts), "options");
    if (!strcmp(prepack, "off"))
        check(FN(API_ADD_SESSION_CONFIG_ENTRY,
                 status_t(*)(void *, const char *, const char *))(opts, "session.disable_prepacking", "1"),
              "options");
    check(FN(API_CREATE_SESSION, status_t(*)(void *, const char *, void *, void **))(env, model, opts, &session),
          "session");
    check(FN(API_CREATE_CPU_MEMORY_INFO, status_t(*)(int, int, void **))(1, 0, &mem), "memory info");
    void *values[MAX_IO];
    const char *names[MAX_IO], *onames[MAX_IO];
    for (int i = 0; i < n_in; i++) {
        names[i] = in[i].name;
        check(FN(API_CREATE_TENSOR_WITH_DATA, status_t(*)(void *, void *, size_t, const int64_t *, size_t, int,
                                                          void **))(mem, in[i].data, in[i].bytes, in[i].dims,
                                                                    (size_t)in[i].rank, in[i].type, &values[i]),
              "input tensor");
    }
    for (int i = 0; i < n_out; i++)
        onames[i] = out_names[i];
    if (memory) {
        measure_memory(session, mem, rss0, names, values, n_in, onames, n_out, get_base()->get_version_string());
        return 0;
    }

    run_fn run = FN(API_RUN, run_fn);
    void (*release)(void *) = FN(API_RELEASE_VALUE, void (*)(void *));
    static double t[MAX_RUNS];
    int n = 0;
    double start = now_us();
    for (int r = 0; r < 10 + MAX_RUNS; r++) {
        void *outs[MAX_IO] = {0};
        double t0 = now_us();
        check(run(session, NULL, names, values, (size_t)n_in, onames, (size_t)n_out, outs), "run");
        double t1 = now_us();
        for (int i = 0; i < n_out; i++)
            release(outs[i]);
        if (r < 10) { /* warm-up: the arena grows, pages fault in */
            start = now_us();
            continue;
        }
        t[n++] = t1 - t0;
        if (n >= 20 && now_us() - start > budget_ms * 1e3)
            break;
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    double lo = t[0], limit = lo * 1.5 > lo + 2 ? lo * 1.5 : lo + 2, sum = 0;
    int kept = 0;
    for (int i = 0; i < n && t[i] <= limit; i++, kept++)
        sum += t[i];
    printf("{\"runs\": %d, \"kept\": %d, \"min_us\": %.3f, \"median_us\": %.3f, \"robust_us\": %.3f, \"version\": "
           "\"%s\", \"error\": null}\n",
           n, kept, lo, t[n / 2], sum / kept, get_base()->get_version_string());
    return 0;
}
