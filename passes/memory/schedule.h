/* schedule.h - memory-aware scheduling: a topological order of a memgraph with a lower LOAD than
 * the given one (passes/memory/schedule.c). */
#ifndef FP_PASS_SCHEDULE_H
#define FP_PASS_SCHEDULE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "passes/memory/liveness.h"

typedef struct {
    uint64_t align;       /* sizes are rounded to this, as the planner does (0 or 1: none) */
    uint32_t beam;        /* most states kept per DP layer; 0 = default (adapts to segment size) */
    uint32_t max_segment; /* segments with more nodes use the greedy order; 0 = default (2000) */
} fp_schedule_opts;

typedef struct {
    uint64_t load_given; /* LOAD of the given order */
    uint64_t load_best;  /* LOAD of the returned order (<= load_given) */
    const char *method;  /* "given" (nothing better found), "dp", "greedy" */
    bool exact;          /* every segment was solved by the DP without pruning: load_best is the
                            smallest LOAD of any topological order */
    uint32_t n_segments; /* forced segments of the graph (see docs/memory.md) */
    uint32_t largest_segment;
} fp_schedule_result;

/* Searches a topological order of mg with a smaller LOAD than `given` (a valid order): the graph
 * is cut where every order must pass through (all earlier nodes precede all later ones), each
 * segment is scheduled by a dynamic program over sets of executed nodes (SERENITY-style; the
 * memory after a set does not depend on its order), pruned to the best `beam` states per layer,
 * and a greedy lowest-peak-first order is tried too. `best` (n_nodes entries) receives the order
 * with the smallest LOAD, the given one on ties. False only on 64-bit overflow. */
bool fp_schedule_optimize(const fp_memgraph *mg, const uint32_t *given, const fp_schedule_opts *opts, uint32_t *best,
                          fp_schedule_result *res, GError **error);

#endif
