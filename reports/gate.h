/* gate.h - `fuseplan gate`: a deployment policy (GKeyFile, one [gate] group) checked against one
 * report: memory, latency, headroom, fusions that must happen, layout conversions. The JUnit and
 * SARIF emitters (reports/junit.h, reports/sarif.h) and the text summary read the same result. */
#ifndef FP_REPORT_GATE_H
#define FP_REPORT_GATE_H

#include <glib.h>
#include <stdio.h>

#include "reports/report.h"

#define FP_GATE_ERROR (fp_gate_error_quark())
GQuark fp_gate_error_quark(void);
enum { FP_GATE_ERROR_POLICY };

/* The policy keys, in the order checks are reported. */
#define FP_GATE_KEYS(X)                                 \
    X(MAX_ACTIVATION_MB, "max_activation_mb")           \
    X(MAX_TOTAL_MB, "max_total_mb")                     \
    X(MIN_HEADROOM_BATCH, "min_headroom_batch")         \
    X(MIN_EST_SPEEDUP, "min_est_speedup")               \
    X(FORBID_UNFUSED, "forbid_unfused")                 \
    X(MAX_LAYOUT_CONVERSIONS, "max_layout_conversions") \
    X(DEVICE, "device")                                 \
    X(TARGET, "target")

typedef enum {
#define X(id, name) FP_GATE_KEY_##id,
    FP_GATE_KEYS(X)
#undef X
        FP_GATE_KEY_COUNT
} fp_gate_key;

/* "max_activation_mb", ... */
const char *fp_gate_key_name(fp_gate_key k);

typedef struct {
    char *path;
    bool set[FP_GATE_KEY_COUNT]; /* which keys the file gives */
    double max_activation_mb;    /* MB = 10^6 bytes, as the report prints them */
    double max_total_mb;
    gint64 min_headroom_batch;
    double min_est_speedup;
    char **forbid_unfused; /* fusion rule ids (fp_rules), NULL-terminated, distinct */
    gint64 max_layout_conversions;
    char *device, *target; /* used when the command line does not name them */
} fp_gate_policy;

/* Reads and validates a policy: the [gate] group only; unknown groups or keys, values that are not
 * numbers or are negative, and unknown fusion rule ids are errors naming the file, the key and
 * the valid choices (FP_GATE_ERROR_POLICY, or GKeyFile's error for a file that does not parse). */
fp_gate_policy *fp_gate_policy_load(const char *path, GError **error);
/* The same from text (tests); `path` names it in errors. */
fp_gate_policy *fp_gate_policy_from_data(const char *data, const char *path, GError **error);
void fp_gate_policy_free(fp_gate_policy *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_gate_policy, fp_gate_policy_free)
/* True when the policy needs the batch-headroom search. */
bool fp_gate_policy_needs_headroom(const fp_gate_policy *p);

typedef enum {
    FP_GATE_PASS,
    FP_GATE_FAIL,
    FP_GATE_NOT_EVALUATED, /* the report lacks the number (no headroom): an error, exit 2 */
} fp_gate_status;

/* One checked rule of the policy (forbid_unfused: one check per listed fusion rule). */
typedef struct {
    char *name; /* "max_activation_mb", "forbid_unfused.conv_bn" */
    fp_gate_key key;
    const char *rule; /* forbid_unfused: the fusion rule id, else NULL */
    fp_gate_status status;
    double actual, limit; /* in the key's unit (MB, batch, x, count); forbid_unfused: candidates not applied, 0 */
    char *summary;        /* one line with the numbers */
    char *detail;         /* more lines (bytes; each candidate not applied with its reasons), or NULL */
    GPtrArray *unfused;   /* forbid_unfused: const fp_fusion* not applied (not owned), else NULL */
    const char *node;     /* node the check points at (the peak node for memory), or NULL */
} fp_gate_check;

typedef struct {
    const fp_gate_policy *policy;
    const fp_report *report;
    GPtrArray *checks; /* fp_gate_check*, owned, in FP_GATE_KEYS order */
    guint failed, not_evaluated;
    GPtrArray *notes; /* char*: e.g. a forbidden rule the target does not have */
} fp_gate_result;

/* Checks every key the policy sets against r (keys device/target only chose r's device and
 * target). The result points into p and r: free it first. */
fp_gate_result *fp_gate_evaluate(const fp_gate_policy *p, const fp_report *r);
void fp_gate_result_free(fp_gate_result *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_gate_result, fp_gate_result_free)

/* The summary printed on stdout: one line per check, the failures' details, the verdict. */
void fp_gate_text(const fp_gate_result *g, FILE *out, bool color);

#endif
