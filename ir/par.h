/* par.h - one side job on another core (ir/par.c), for a pass that splits the work over a big
 * graph's own data in two (the shape pass's reset, metrics, liveness, the verifier). A side job
 * must not touch what the caller's thread reads or writes meanwhile: no diagnostics list, no graph
 * caches (fill fp_graph_order's first), no arena the caller allocates from. */
#ifndef FP_IR_PAR_H
#define FP_IR_PAR_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Graphs from this many nodes on split their work (fp_par_worth): below it a side job costs more
 * than it saves (docs/benchmarks.md). The other thread also takes memory bandwidth and, on a
 * virtual machine, a vCPU that may be slower. */
#define FP_PAR_MIN_NODES 200000

typedef struct {
    void (*fn)(void *arg);
    void *arg;
    GMutex lock;
    GCond cond;
    bool done;
    bool side; /* running on the side thread (fp_par_join waits for it) */
} fp_par_job;

/* Whether work over n nodes is worth a side job: n >= FP_PAR_MIN_NODES, the process may run on
 * more than one core, splitting is allowed (fp_par_allow), the caller is not the side thread
 * itself (whose own job would wait behind it for ever), and the side thread is not running a job
 * (one pushed behind it would wait: the caller is better off doing the work). */
bool fp_par_worth(size_t n);

/* Starts fn(arg): on the side thread when `split` and it is available (idle), else runs it now, on the
 * caller's thread. Every fp_par_start is paired with one fp_par_join on the same job. */
void fp_par_start(fp_par_job *j, void (*fn)(void *arg), void *arg, bool split);

/* Returns once the job's fn has returned; its writes are then visible to the caller. */
void fp_par_join(fp_par_job *j);

/* Runs fn(arg, h, from, to) for the two halves of [0, n): h = 0 for [0, n / 2) on the caller's
 * thread, h = 1 for [n / 2, n) on the side thread when fp_par_worth(worth), else on the caller's
 * thread too; returns when both are done. fn must keep each half's results apart (by h). */
void fp_par_halves(size_t n, size_t worth, void (*fn)(void *arg, int h, size_t from, size_t to), void *arg);

/* fp_par_allow(false): from now on every job runs on the caller's thread (tests compare the two
 * ways; default: allowed). fp_par_side_jobs: how many jobs ran on the side thread so far. */
void fp_par_allow(bool allow);
unsigned fp_par_side_jobs(void);

#endif
