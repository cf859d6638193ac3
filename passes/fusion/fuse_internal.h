/* fuse_internal.h - what the files of the fusion pass share, private to passes/fusion/: the pass's
 * state (fp_fuser), and the entry points of its matcher (fuse_match.c), its rewrites
 * (fuse_rewrite.c) and its upkeep of the use lists (fuse_uses.c), which the driver in fuse.c runs. */
#ifndef FP_FUSE_INTERNAL_H
#define FP_FUSE_INTERNAL_H

#include "passes/fusion/fuse.h"

/* The pass's state over one model. */
typedef struct {
    fp_model *m;
    const fp_target *t;
    fp_fuse_phase phase; /* which of t's rules this call applies */
    fp_fusion_list *out;
    /* the records of this pass by anchor: per node of the model, the first record anchored there,
     * then per record (from rec_base on) the next one and its rule key; a record index is + 1 in
     * out->fusions, 0 for none. The anchors come in node order: a list, not a hash of them. */
    uint32_t *first_rec;
    GArray *rec_next, *rec_rule;     /* uint32_t */
    guint rec_base;                  /* out->fusions->len before this pass */
    size_t *rule_key;                /* index in fp_rules -> the first index with its id (variants share records) */
    const char **op_name, **domain;  /* per rule index: its fused op and domain, interned in the model */
    GPtrArray *ins, *outs;           /* rewrite_fuse's scratch (fuse_rewrite.c) */
    fp_list_memo memo[FP_LIST_MEMO]; /* fp_match.memo */
    uint32_t *dirty;                 /* per node of the model: the rule pass that rewrote it (not matched again in
                          that pass), 0 = never */
    uint32_t pass;                   /* the current rule pass, from 1 */
    fp_arena *tmp;                   /* a candidate's reasons while its constraints run (fp_match.tmp) */
    uint32_t groups;
    uint8_t *kind;                     /* per node of the model: its op when it may be matched (op_ok's tests of the
                          node itself: live, not folded, has input 0 and output 0), else
                          FP_FUSE_KIND_SKIP, or FP_FUSE_KIND_REMOVED once a rewrite removed it; kept
                          up to date by the rewrites, so the sweeps and extend read a byte instead of
                          the node's fields */
    uint32_t n_kind[256];              /* nodes of the model per kind (of `kind`), kept up to date with it */
    bool (*kind_tab)[FP_PAT_MAX][256]; /* per rule index: kind_row of each pattern node */
    bool *kind_tab_set;
    int16_t *only; /* per rule index: the one kind its anchor can have, or -1 (made with kind_tab) */
    /* the use lists are updated where a rewrite changes them (fuse_uses.c), not relinked */
    GPtrArray *chg;                /* nodes whose inputs a rewrite changes (or removes) */
    GArray *before, *after;        /* their uses before and after it, by value and key (fuse_uses.c) */
    size_t link_work, link_budget; /* use entries rewritten in this rule pass, and how many before a
                          whole fp_model_link at its end is the cheaper way (relink) */
    bool relink;                   /* gave up the local updates in this rule pass: fp_model_link at its end */
    GArray *squeezes;              /* Split outputs that need a Squeeze after them, made at the end of the pass (a
                          node added mid-pass would shift the per-node arrays; fuse_rewrite.c) */
    bool order_broken;             /* a rewrite in this rule pass made the graph's node array no longer topological */
} fp_fuser;

/* fp_fuser.kind of a node no pattern node can stand for, and of a node a rewrite removed. */
enum { FP_FUSE_KIND_SKIP = 254, FP_FUSE_KIND_REMOVED = 255 };

/* ---------------------------------------------------------------- matching (fuse_match.c) */

/* Sets up fz's kinds (fz->kind, fz->n_kind), dirty marks and per-rule tables for the `total` nodes
 * of the model (fp_model_number); fp_fuse_match_free frees them. */
void fp_fuse_match_init(fp_fuser *fz, size_t total);
void fp_fuse_match_free(fp_fuser *fz);
/* What fz->kind holds for n: its op when the node itself lets a pattern node match it. */
uint8_t fp_fuse_match_kind_of(const fp_node *n);
/* Rule index ri's table of the kinds each pattern node may match (FP_FUSE_KIND_SKIP and
 * FP_FUSE_KIND_REMOVED: false), made on first use with its anchor's only kind (fz->only). */
bool (*fp_fuse_match_kinds(fp_fuser *fz, size_t ri))[256];
/* Whether rule index ri may match anywhere in the model: every node of its pattern has a kind that
 * some node has (a sweep that cannot match changes and records nothing). */
bool fp_fuse_match_possible(fp_fuser *fz, size_t ri);
/* Matches rule r at `anchor`, whose kind the caller found right for pattern node 0 (fz->kind);
 * idx is its model-wide index. */
bool fp_fuse_match_at(fp_fuser *fz, const fp_rule *r, fp_node *anchor, size_t idx, fp_match *mt);

/* ---------------------------------------------------------------- rewrites (fuse_rewrite.c) */

/* Sets up the rewrites' scratch and names in fz; fp_fuse_rewrite_free frees them. */
void fp_fuse_rewrite_init(fp_fuser *fz);
void fp_fuse_rewrite_free(fp_fuser *fz);
/* Rewrites the graph for applied match mt as its rule says, after marking the nodes it touches
 * dirty (not matched again in this rule pass). The use lists are the caller's (fuse_uses.c). */
void fp_fuse_rewrite(fp_fuser *fz, const fp_match *mt);
/* At the end of the pass, the Squeezes the Splits made of Gathers of a scalar index asked for (the
 * model is linked again when it made any). */
void fp_fuse_rewrite_squeezes(fp_fuser *fz);

/* ---------------------------------------------------------------- use lists (fuse_uses.c) */

/* Sets up the use-list upkeep of fz for a model of `total` nodes; fp_fuse_uses_free frees it. */
void fp_fuse_uses_init(fp_fuser *fz, size_t total);
void fp_fuse_uses_free(fp_fuser *fz);
/* Before rewriting match mt: notes the nodes the rewrite changes (fz->chg) and their uses
 * (fz->before). Returns false, and sets fz->relink, when the lists are to be made again by
 * fp_model_link at the end of the rule pass instead. */
bool fp_fuse_uses_begin(fp_fuser *fz, const fp_match *mt);
/* After the rewrite: for each value the changed nodes read before or after it, whose uses by them
 * differ, the list is updated. Gives up (fz->relink) when a list is not as expected, or when the
 * local work of this rule pass outgrows what a whole relink costs. */
void fp_fuse_uses_end(fp_fuser *fz);

#endif
