/* provenance.h - the original nodes each runtime node of the final graph came from, read from the
 * pipeline's results: a node of the model as loaded stands for itself, for the nodes every applied
 * fusion merged into it (transitively, in the order the fusions applied) and for the removed nodes
 * whose tensor it now writes (the NCHWc conversion's folds); a node a pass added (a reorder, a
 * transpose, a cast) stands for none. */
#ifndef FP_REPORT_PROVENANCE_H
#define FP_REPORT_PROVENANCE_H

#include <glib.h>

#include "analysis/pipeline.h"

typedef struct fp_provenance fp_provenance;

/* The provenance of m, the final graph res was made with (res->fusions and res->loaded_nodes).
 * Borrows m's strings: free it before m. */
fp_provenance *fp_provenance_new(const fp_model *m, const fp_pipeline_result *res);
void fp_provenance_free(fp_provenance *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_provenance, fp_provenance_free)

/* How many original nodes n came from (0 for a node a pass added); *names (may be NULL) receives
 * their names in the model's order, owned by p or by n. */
uint32_t fp_provenance_of(const fp_provenance *p, const fp_node *n, const char *const **names);

#endif
