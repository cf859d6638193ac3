/* ort.h - ONNX Runtime on this host, loaded at run time (dlopen: nothing of it at build time):
 * finding its shared library, creating CPU sessions (of model bytes in memory or a file), timing their
 * runs, and reading its arena's counters. Used by `fuseplan calibrate --runtime onnxruntime` and by
 * the bench tool bench/ort_run.c; nothing here prints. */
#ifndef FP_RUNTIME_ORT_H
#define FP_RUNTIME_ORT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define FP_ORT_ERROR (fp_ort_error_quark())
GQuark fp_ort_error_quark(void);
typedef enum {
    FP_ORT_ERROR_NOT_FOUND, /* no library at the path, or none installed where fp_ort_find looks */
    FP_ORT_ERROR_LOAD,      /* not loadable, not ONNX Runtime, or too old */
    FP_ORT_ERROR_RUN,       /* ONNX Runtime refused a session or a run (its message) */
} fp_ort_error_code;

/* Graph optimization levels (GraphOptimizationLevel): ORT_DISABLE_ALL .. ORT_ENABLE_ALL. */
typedef enum { FP_ORT_DISABLED = 0, FP_ORT_BASIC = 1, FP_ORT_EXTENDED = 2, FP_ORT_ALL = 99 } fp_ort_level;

typedef struct fp_ort fp_ort;

/* The path of an installed ONNX Runtime library, first found of: onnxruntime-node's
 * bin/napi-v*\/linux/<arch>/libonnxruntime.so* in a node_modules folder (the current directory and
 * its parents, $NODE_PATH, the global ones: /usr/lib, /usr/local/lib, ~/.npm-global/lib), then the
 * Python package's onnxruntime/capi/libonnxruntime.so* in dist-packages or site-packages of
 * /usr/lib/python3*, /usr/local/lib/python3*, ~/.local/lib/python3*. NULL with
 * FP_ORT_ERROR_NOT_FOUND naming where it looked. Caller frees. */
char *fp_ort_find(GError **error);

/* Loads the library at path and checks that it is ONNX Runtime with the C API version the slot
 * table in ort.c needs (1.13 or newer), then creates its environment (errors only logged). NULL
 * with an error naming path when it is missing (FP_ORT_ERROR_NOT_FOUND), not loadable, or not
 * ONNX Runtime (FP_ORT_ERROR_LOAD). One per process: ONNX Runtime keeps one environment. */
fp_ort *fp_ort_open(const char *path, GError **error);
void fp_ort_free(fp_ort *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_ort, fp_ort_free)

/* The runtime's version string ("1.30.0") and the path it was loaded from. */
const char *fp_ort_version(const fp_ort *o);
const char *fp_ort_path(const fp_ort *o);

/* A session's options: CPU execution provider, sequential execution, one inter-op thread. */
typedef struct {
    fp_ort_level level;
    int threads;     /* intra-op threads */
    bool no_arena;   /* DisableCpuMemArena: a plain allocation per tensor instead of the BFC arena */
    bool no_prepack; /* the session config entry session.disable_prepacking */
} fp_ort_session_opts;

typedef struct fp_ort_session fp_ort_session;

/* A session of the model at path (when model is NULL) or of the serialized ModelProto model. NULL
 * with FP_ORT_ERROR_RUN and ONNX Runtime's message. */
fp_ort_session *fp_ort_session_new(fp_ort *o, const char *path, GBytes *model, const fp_ort_session_opts *opts,
                                   GError **error);
void fp_ort_session_free(fp_ort_session *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_ort_session, fp_ort_session_free)

/* An input of a run: `bytes` of raw little-endian data of ONNX TensorProto data type `type`
 * (1: float) and shape dims[rank]. The data is not copied: it must outlive the session. */
typedef struct {
    const char *name;
    int type;
    const int64_t *dims;
    int rank;
    const void *data;
    size_t bytes;
} fp_ort_tensor;

/* Sets the inputs and the outputs fetched of every later run (at most FP_ORT_MAX_IO of each). Each
 * input is copied into a block of its own aligned to FP_ORT_ALIGN bytes, as ONNX Runtime's allocator
 * aligns the tensors it makes: MLAS reads a buffer 16 bytes off a cache line (where malloc puts large
 * blocks) slower, a one-row product by such a B 1.3-1.4x (docs/benchmarks.md), which no graph shows.
 * False with FP_ORT_ERROR_RUN when ONNX Runtime refuses a tensor or there are too many. */
#define FP_ORT_MAX_IO 64
#define FP_ORT_ALIGN 64
bool fp_ort_session_bind(fp_ort_session *s, const fp_ort_tensor *inputs, int n_inputs, const char *const *outputs,
                         int n_outputs, GError **error);

/* One run; its outputs stay held (in the arena) until the next run or fp_ort_session_release. */
bool fp_ort_session_run(fp_ort_session *s, GError **error);
void fp_ort_session_release(fp_ort_session *s);

/* Runs warmup times, then Run alone, each timed by `clock` and appended to times (double,
 * seconds), until budget_s of wall time is spent after the warm-up (at least min_runs runs, at
 * most max_runs). False with FP_ORT_ERROR_RUN. */
bool fp_ort_session_times(fp_ort_session *s, clockid_t clock, int warmup, int min_runs, int max_runs, double budget_s,
                          GArray *times, GError **error);

/* A counter of the session's CPU allocator (OrtApi::AllocatorGetStats: the BFC arena's InUse,
 * MaxInUse, TotalAllocated, NumAllocs, ...). */
typedef struct {
    char *key;
    int64_t value;
} fp_ort_stat;

/* The counters of the session's CPU allocator, in ONNX Runtime's order (fp_ort_stat; the array
 * frees the keys). Needs C API 23 (ONNX Runtime 1.23); NULL with FP_ORT_ERROR_LOAD when the
 * library is older or its key-value slots do not read back, FP_ORT_ERROR_RUN when it refuses. */
GArray *fp_ort_session_stats(fp_ort_session *s, GError **error);

/* What fp_ort_time runs: model bytes with one float input and the outputs named. */
typedef struct {
    GBytes *model;       /* a serialized ModelProto */
    const char *input;   /* its one float input */
    const int64_t *dims; /* the input's shape */
    int rank;
    const char *output; /* the output fetched */
    double scale;       /* the input's fill: fp_ort_pattern with this scale (0: 1) */
} fp_ort_model;

/* Element i of the input fp_ort_time fills: ((i mod 97) / 97 - 0.5) times scale (0: 1). */
float fp_ort_pattern(size_t i, double scale);

/* The time a run takes in the fastest stretch of t (n runs' times, in the order run) at least
 * window_s long: the least mean over consecutive runs summing to window_s or more (one run when it
 * alone is longer; all of them when together they are shorter); 0 for none. */
double fp_ort_window_best(const double *t, size_t n, double window_s);

/* The window of fp_ort_time: a network's run of milliseconds on a shared host bears its
 * neighbours' interference averaged, a micro-model's run of 100 us can slip between it
 * (docs/devices.md, runtime calibration) */
#define FP_ORT_WINDOW_S 0.01

/* Times model m on the CPU execution provider: a session at `level` with `threads` intra-op
 * threads (sequential execution, one inter-op thread), the input filled with fp_ort_pattern (m->scale),
 * 3 warm-up runs, then Run alone timed until budget_s of wall time is spent (at least 10 runs).
 * *seconds: a run's time in the fastest stretch of FP_ORT_WINDOW_S (fp_ort_window_best; the
 * fastest run when runs are longer). On one thread ONNX Runtime runs the kernels in the calling thread, and
 * a run is timed by that thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the time the neighbours of a
 * shared machine take from it by preemption is not counted (a run of 25 ms on a loaded machine is
 * preempted almost surely, one of 100 us seldom); on more threads, by CLOCK_MONOTONIC. False with
 * FP_ORT_ERROR_RUN and ONNX Runtime's message. */
bool fp_ort_time(fp_ort *o, const fp_ort_model *m, fp_ort_level level, int threads, double budget_s, double *seconds,
                 GError **error);
/* m's runs at ORT_DISABLE_ALL on `threads` intra-op threads, apart: for each of the n_gaps gaps,
 * `runs` runs (after a few warm-up runs), each after sleeping gaps_s[i] seconds, their times in
 * seconds appended to `times` (doubles: gap 0's runs first; timed as fp_ort_time times). What a
 * cache level keeps of the model's weights while its process sleeps and others run is what
 * `calibrate --runtime` reads from them. */
bool fp_ort_time_apart(fp_ort *o, const fp_ort_model *m, int threads, const double *gaps_s, int n_gaps, int runs,
                       GArray *times, GError **error);
/* fp_ort_time's timing of the serialized ModelProto `model` with the inputs given (their data
 * outliving the call) and the outputs named fetched. */
bool fp_ort_time_bound(fp_ort *o, GBytes *model, const fp_ort_tensor *inputs, int n_inputs, const char *const *outputs,
                       int n_outputs, fp_ort_level level, int threads, double budget_s, double *seconds,
                       GError **error);

#endif
