/* profile.h - a measured profile in memory (fp_profile): per kernel its name, op type, task/core
 * type, start, duration and tensor shapes; per GE fusion pass its match/effect counts.
 *
 * Here in ir/ beside the graph IR because it is the same kind of thing: fuseplan's own form of an
 * input, filled by the readers of frontends/profile/ (which know the file formats) and read by
 * calibration/ (matching kernels to nodes, fitting devices) and reports/ (profile, compare),
 * neither of which needs to know how a profile was written.
 *
 * Ownership: one fp_profile owns one arena; every string (interned: equal strings are the same
 * pointer within a profile), dims array and tensor array reachable from it lives there and is
 * freed by fp_profile_free. Kernel and pass arrays are GArrays owned by the profile.
 *
 * Matching kernels to IR nodes (calibration/match.h) uses `name` (ORT node names; GE fused names
 * such as "a + b"; torch_npu "aclnnX_Y_Z" names), `op_type`, and the tensors' int64 dims.
 */
#ifndef FP_IR_PROFILE_H
#define FP_IR_PROFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/dtype.h"

typedef enum {
    FP_PROF_ORT,            /* "ort": onnxruntime enableProfiling output */
    FP_PROF_CHROME_TRACE,   /* "chrome_trace": PyTorch profiler export_chrome_trace */
    FP_PROF_OP_SUMMARY,     /* "op_summary": msprof op_summary_*.csv */
    FP_PROF_KERNEL_DETAILS, /* "kernel_details": torch_npu kernel_details.csv */
    FP_PROF_OP_STATISTIC,   /* "op_statistic": per op type aggregates (msprof, torch_npu) */
    FP_PROF_TASK_TIME,      /* "task_time": msprof task_time_*.csv */
    FP_PROF_FUSION_RESULT,  /* "fusion_result": ATC/GE fusion_result.json */
} fp_prof_format;

/* Stable name used in reports and JSON ("ort", "kernel_details", ...). */
const char *fp_prof_format_name(fp_prof_format f);

/* One input or output tensor of a kernel, as the profile wrote it. */
typedef struct {
    int32_t rank;       /* -1: no shape recorded; 0: scalar */
    int64_t *dims;      /* rank entries (arena); a dim written as negative (dynamic) stays negative */
    const char *dtype;  /* as written: "FLOAT", "DT_BF16", "float", "c10::BFloat16"; NULL if absent */
    fp_dtype dt;        /* dtype mapped to the IR's; FP_DT_UNDEFINED when unknown */
    const char *layout; /* memory format as written: "ND", "NC1HWC0", "FRACTAL_Z"; NULL if absent */
} fp_prof_tensor;

/* Kernel flags */
enum {
    FP_PROF_K_NESTED = 1u << 0,    /* runs inside another kernel (ORT If/Loop body): excluded from totals */
    FP_PROF_K_AGGREGATE = 1u << 1, /* an op_statistic row: dur_us is the total of `count` calls */
    FP_PROF_K_UNTIMED = 1u << 2,   /* the duration was written as N/A (dur_us is 0) */
};

typedef struct {
    const char *name;    /* kernel / node name as written; "" when absent; never NULL */
    const char *op_type; /* "Conv", "MatMulV2", "aten::addmm"; NULL when the profile does not say */
    const char *core;    /* task/core type or where it ran: "AI_CORE", "MIX_AIC", "HCCL",
                            "CPUExecutionProvider", "kernel", "cpu_op"; NULL when absent */
    double start_us;     /* start timestamp in µs (file's clock); NAN when unknown */
    double dur_us;       /* µs: one call; ORT: per run, averaged over measured runs; aggregate: total */
    double wait_us;      /* gap before it (Ascend "Wait Time"); NAN when unknown */
    uint32_t count;      /* calls it stands for: op_statistic Count; ORT calls per run; else 1 */
    uint32_t samples;    /* ORT: occurrences averaged over measured runs; else 1 */
    int64_t step;        /* Step Id / PyTorch ProfilerStep#N; -1 when none */
    uint32_t line;       /* where it came from: CSV line, or 1-based index of the JSON event */
    uint32_t flags;      /* FP_PROF_K_* */
    uint32_t n_inputs, n_outputs;
    fp_prof_tensor *inputs, *outputs; /* arena; NULL when none were recorded */
} fp_prof_kernel;

typedef enum { FP_PROF_GRAPH_FUSION, FP_PROF_UB_FUSION } fp_prof_pass_kind;
/* "graph_fusion" / "ub_fusion" */
const char *fp_prof_pass_kind_name(fp_prof_pass_kind k);

/* One GE fusion pass, counts summed over every graph entry of the file. */
typedef struct {
    const char *name;
    fp_prof_pass_kind kind;
    uint64_t match_times, effect_times;
    uint64_t repository_hit_times; /* 0 when never written */
    uint32_t graphs;               /* graph entries listing this pass */
} fp_prof_pass;

typedef struct {
    fp_arena *arena;
    GHashTable *strings; /* intern table: key = value = arena string */
    const char *path;
    fp_prof_format format;
    uint64_t records;     /* data rows (CSV), kernel events (ORT, trace), pass entries (fusion_result) */
    GArray *kernels;      /* fp_prof_kernel, in file / execution order */
    GArray *passes;       /* fp_prof_pass, in first-seen order (fusion_result only; else empty) */
    double total_us;      /* sum of dur_us over kernels without FP_PROF_K_NESTED */
    uint32_t runs;        /* ORT: model_run events (0 if none); trace: ProfilerStep# spans */
    uint32_t warmup_runs; /* ORT: leading runs skipped as warm-up (1 when runs >= 2) */
    uint32_t steps;       /* distinct step ids among kernels */
    uint32_t graphs;      /* fusion_result: graph entries */
    const char *layout;   /* fusion_result: "concatenated", "object", "list", "dict"; else NULL */
    GPtrArray *warnings;  /* char*, one line each: data read with a doubt (a short CSV row) */
    GHashTable *by_name;  /* interned name -> GPtrArray* of fp_prof_kernel* (built after reading) */
} fp_profile;

/* ---- building (the readers) ---- */

/* An empty profile of the file at `path` (recorded, interned). */
fp_profile *fp_profile_new(const char *path);
/* Interns s (len < 0: NUL-terminated) in p; NULL for NULL. */
const char *fp_prof_intern(fp_profile *p, const char *s, gssize len);
/* Appends a kernel with defaults (times NAN, count 1, samples 1, step -1, name ""). The pointer
 * is valid until the next append. */
fp_prof_kernel *fp_prof_add_kernel(fp_profile *p);
/* Adds counts to the pass (kind, name), creating it on first sight (sums saturate). */
void fp_prof_add_pass(fp_profile *p, fp_prof_pass_kind kind, const char *name, uint64_t match, uint64_t effect,
                      uint64_t hits);
/* Appends a warning line (printf format). */
void fp_prof_warn(fp_profile *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Once every kernel is read: total_us, steps and the index of kernels by name. */
void fp_profile_index(fp_profile *p);

/* ---- reading ---- */

void fp_profile_free(fp_profile *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_profile, fp_profile_free)

static inline fp_prof_kernel *fp_profile_kernel(const fp_profile *p, guint i)
{
    return &g_array_index(p->kernels, fp_prof_kernel, i);
}
static inline fp_prof_pass *fp_profile_pass(const fp_profile *p, guint i)
{
    return &g_array_index(p->passes, fp_prof_pass, i);
}

/* Kernels called `name` (any string; need not be interned), in file order; NULL if none.
 * The array belongs to the profile. */
const GPtrArray *fp_profile_find(const fp_profile *p, const char *name);

/* Time grouped by op type or by core type, over kernels without FP_PROF_K_NESTED. */
typedef enum { FP_PROF_BY_OP_TYPE, FP_PROF_BY_CORE } fp_prof_group_by;
typedef struct {
    const char *key;  /* NULL: the profile did not say */
    uint64_t calls;   /* sum of `count` */
    uint64_t kernels; /* kernels (rows, nodes) in the group */
    double total_us;
} fp_prof_group;
/* Groups sorted by total_us descending, then key. Caller g_free()s; *n receives the count. */
fp_prof_group *fp_profile_group(const fp_profile *p, fp_prof_group_by by, guint *n);

/* Indices of kernels sorted by dur_us descending (ties: file order). Caller g_free()s. */
guint *fp_profile_by_time(const fp_profile *p);

#endif
