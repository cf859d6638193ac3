/* fuse.h - fusion simulation: rules as data (pattern + named constraints + fused op), targets
 * that select rules and set their parameters (passes/fusion/targets/NAME.ini), and the record of every
 * candidate match, fused or not, with the reasons a constraint refused it. */
#ifndef FP_PASS_FUSE_H
#define FP_PASS_FUSE_H

#include <glib.h>

#include "ir/diag.h"
#include "ir/graph.h"

#define FP_FUSE_ERROR (fp_fuse_error_quark())
GQuark fp_fuse_error_quark(void);
enum { FP_FUSE_ERROR_TARGET };

/* ---------------------------------------------------------------- rules (fuse_rules.c) */

#define FP_PAT_MAX 12
#define FP_RULE_MAX_CONSTRAINTS 11
#define FP_PAT_X (-2) /* in fp_pat_node.from or from2: the anchor's input 0 (the pattern's data input) */

/* One node of a pattern. Node 0 is the anchor. */
typedef struct {
    const char *label; /* used in messages: "conv", "bn", "act" */
    fp_op ops[8];      /* accepted kinds, terminated by FP_OP_COUNT (empty: use `flags`) */
    uint32_t flags;    /* or: any op with one of these FP_OPF_* traits */
    int8_t from;       /* pattern node whose output 0 feeds this node (-1 for the anchor; FP_PAT_X:
                           the node is another reader of the anchor's input 0) */
    int8_t port;       /* which input receives it (-1: any) */
    int8_t from2;      /* a second input from pattern node / FP_PAT_X, or -1 */
    int8_t port2;
    uint8_t repeat; /* last node only: match a chain of up to this many such nodes (0: one) */
    bool up;        /* the node is the producer of input `port` of pattern node `from` (a DequantizeLinear
                       feeding the anchor) rather than a reader of its output */
    bool opt;       /* with `up`, after every other pattern node: when that input has no such producer,
                       the match goes on without it (a constraint says what the unit then lacks) */
} fp_pat_node;

typedef enum {
    FP_RW_FOLD,      /* the last node folds into the anchor (Conv+BN, Conv+Mul, Conv+Add) */
    FP_RW_FUSE,      /* all nodes become one kernel of type fused_op */
    FP_RW_ELIMINATE, /* the anchor disappears (Identity, Dropout) */
    FP_RW_ABSORB,    /* node 1 absorbs the anchor, a Transpose it reads (MatMul -> FusedMatMul with
                        transA/transB): it reads the anchor's input instead, and the anchor goes
                        once nothing else reads it */
    FP_RW_SPLIT,     /* the anchor Slice and the other Slices of its input (the match's nodes past
                        the pattern: fp_match) become one Split, its outputs theirs in order */
    FP_RW_PAD,       /* the anchor Pad disappears (its reader reads its input) and its padding is
                        added to the `pads` of the last node (a Conv or pool) */
    FP_RW_QDQ,       /* a QDQ node unit (the anchor, the DequantizeLinears feeding it, the QuantizeLinear
                        reading it) becomes one kernel: fused_op reading the quantized inputs with their
                        scales and zero points, or with fused_op NULL the anchor's own op on the
                        quantized tensor (MaxPool, Reshape); a DequantizeLinear that something else
                        reads stays for it (ONNX Runtime gives each unit its own copy) */
} fp_rewrite;

/* The constraints, one per row of fuse_constraints.def: FP_CONSTRAINT_single_consumer, ... */
typedef enum {
#define X(name) FP_CONSTRAINT_##name,
#include "passes/fusion/fuse_constraints.def"
#undef X
    FP_CONSTRAINT_COUNT
} fp_constraint_id;

/* A constraint of a rule: a named predicate with a parameter the target may override. */
typedef struct {
    fp_constraint_id id; /* which predicate (fuse_constraints.c), named fp_fuse_constraint_names[id] */
    int8_t node;         /* pattern node it looks at (-1: the whole match) */
    int8_t port;         /* input port where relevant (-1: all / not used) */
    const char *param;   /* key in the target's [rule.ID] group that overrides the default */
    double num;          /* default numeric parameter (thresholds, constants) */
    const char *list;    /* default list parameter ("Relu,Sigmoid,...", "float32,float64") */
    bool gate;           /* part of what the pattern means (e.g. the Add's operand is a constant bias):
                          when it fails the match is not a candidate at all and is not recorded */
} fp_constraint;

typedef struct {
    const char *id; /* rule id; several entries may share one (pattern variants) */
    const char *title;
    const char *source; /* where its conditions come from (docs/rules.md cites it) */
    fp_pat_node pattern[FP_PAT_MAX];
    int n_pattern;
    fp_constraint constraints[FP_RULE_MAX_CONSTRAINTS];
    int n_constraints;
    fp_rewrite rewrite;
    const char *fused_op; /* op type of the result ("FusedConv"); NULL for FOLD/ELIMINATE */
    fp_op fused_kind;
    int8_t act_node; /* pattern node holding the activation (reported as `activation`), -1 */
    /* FP_RW_FUSE: the fused op's inputs in the order of its signature, each the input from outside
     * the match of that pattern node (fp_fuse_other_input; FP_PAT_X: the pattern's data input), so
     * the constants the op takes as attributes or drops (epsilon, the exponent) go; n_operands 0:
     * every input from outside the match */
    int8_t operands[4];
    int8_t n_operands;
    int8_t x_input; /* the anchor's input that is the pattern's data input x (FP_PAT_X): 0 unless
                        set; where set, the fused op reads x first and the constants last */
} fp_rule;

extern const fp_rule fp_rules[];
extern const size_t fp_n_rules;

/* ---------------------------------------------------------------- targets (target.c) */

typedef struct {
    char *name, *description, *path;
    char *stage_meaning[3];       /* [stages] original, fusion, final: what the report's three stages stand for on this
                                     compiler (e.g. its optimization levels); generic when the target does not say */
    char **rules;                 /* rule ids in application order */
    char **before_partition;      /* [target] before_partition: the rules of `rules` the runtime applies before it
                                     assigns the nodes to its execution providers (ONNX Runtime's level 1), each once
                                     before the others; NULL when none */
    char **again_after_partition; /* [target] again_after_partition: rules of `before_partition` the runtime applies
                                     after partitioning too, to what the partitioner made (a float16 op's inlined body);
                                     NULL when none */
    char **expand;                /* op types the runtime runs as their function body (passes/expand.h); NULL when
                                     none */
    char *precision_mode;         /* ATC's --precision_mode the target compiles with by default (force_fp16,
                                     must_keep_origin_dtype), or NULL: no such option */
    bool fold_declared;           /* [target] shape_folding = declared: the compiler folds shape computations on the
                                     dims the model declares, before a run binds its symbolic dims (ONNX Runtime
                                     optimizes at session creation); `bound` (the default): on the dims the analysis
                                     binds (ATC compiles for the given input shapes) */
    bool original_runs_folded;    /* [target] original_runs_shape_ops = true: at the stage "original" the runtime folds
                                     nothing, and the shape computations the analysis folds run as kernels (ONNX Runtime
                                     at ORT_DISABLE_ALL: its constant folding is a level-1 rewrite); false (the
                                     default): they are folded there too */
    GKeyFile *keyfile;            /* [rule.ID] parameter overrides */
    GHashTable *params;           /* constraint -> its parameter as read for its rule (fp_target_num and
                                     fp_target_list_param read the key file once per constraint); may be NULL */
} fp_target;

/* Loads a target by name (passes/fusion/targets/NAME.ini, or $FUSEPLAN_DEVICES/targets) or .ini path.
 * Unknown rule ids and unknown parameter keys are errors naming file, group and key. */
fp_target *fp_target_load(const char *name_or_path, GError **error);
/* Refuses a value of kf ending in a lone backslash (GLib 2.74 would warn parsing it), naming path,
 * group and key; for every GKeyFile read from a user's file. */
bool fp_keyfile_check_escapes(GKeyFile *kf, const char *path, GError **error);
void fp_target_free(fp_target *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_target, fp_target_free)
/* Whether `mode` is a precision_mode fuseplan models: force_fp16 (float32 computes and is stored
 * in float16) or must_keep_origin_dtype (as the model). */
bool fp_target_precision_mode_ok(const char *mode);
/* Whether rule id `id` is in `list`, one of a target's lists of rules (NULL: none). */
bool fp_target_listed(char *const *list, const char *id);

/* Names of the shipped targets; caller g_strfreev()s. */
char **fp_target_list(void);
/* A rule's numeric / list parameter: the target's override or the constraint's default. */
double fp_target_num(const fp_target *t, const char *rule, const fp_constraint *c);
char **fp_target_list_param(const fp_target *t, const char *rule, const fp_constraint *c);
/* Whether the list parameter holds s (ASCII case-insensitive), without copying the list. */
bool fp_target_list_has(const fp_target *t, const char *rule, const fp_constraint *c, const char *s);

/* ---------------------------------------------------------------- results */

/* A record's reasons live in its list's arena (fp_fusion_list.arena); its node names and op types
 * are the model's, so a list must be freed before the model it was made from. */
typedef struct {
    char *constraint; /* constraint name */
    char *actual;     /* what the model has ("0.001") */
    char *required;   /* what the rule needs ("<= 0.0001") */
    char *message;    /* one line naming the node */
    char *hint;       /* a concrete fix */
} fp_reason;

typedef struct {
    const char *rule;       /* rule id (static) */
    const fp_rule *variant; /* the rule of that id the record's match is of (static) */
    const char *anchor;     /* first node's name (the model's: a list lives no longer than its model) */
    GPtrArray *nodes;       /* node names (the model's strings) */
    bool applied;
    const char *fused_op;   /* op type of the result (or the anchor's for folds); NULL if eliminated */
    const char *activation; /* activation op type for activation rules (the model's string), else NULL */
    GPtrArray *reasons;     /* fp_reason* (in the list's arena); empty when applied (then a reference
                             to the list's no_reasons: never add to it) */
} fp_fusion;

typedef struct {
    GPtrArray *fusions; /* fp_fusion*, in the order found (records live in `arena`) */
    char *target;
    fp_arena *arena;       /* owns every record, name and reason: freed with the list */
    GPtrArray *no_reasons; /* the empty reasons every applied record holds a reference to */
} fp_fusion_list;

fp_fusion_list *fp_fusion_list_new(void);
void fp_fusion_list_free(fp_fusion_list *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fp_fusion_list, fp_fusion_list_free)

/* Which of the target's rules a call of fp_pass_fuse applies: all, or those of `before_partition`
 * (ONNX Runtime's level 1, before the partitioner inlines function bodies and InsertCastTransformer
 * runs float16 ops in float32), or the others (after it). */
typedef enum { FP_FUSE_ALL, FP_FUSE_BEFORE_PARTITION, FP_FUSE_AFTER_PARTITION } fp_fuse_phase;

/* Applies the target's rules of `phase` to every graph until nothing changes. Matched nodes are rewritten
 * (removed nodes keep FP_NODE_REMOVED; fused kernels get FP_NODE_FUSED and a group id). Every
 * candidate is recorded in `out`. The use lists and the kept orders (fp_graph_order) are left as
 * fp_model_link and fp_graph_topo would make them (the pass updates what its rewrites change
 * rather than relinking). Needs shapes, metrics and a linked model. The summary finding goes to diag
 * at the phases ALL and AFTER (counting the records of every call into `out`). */
bool fp_pass_fuse(fp_model *m, const fp_target *t, fp_fuse_phase phase, fp_fusion_list *out, fp_diag *diag,
                  GError **error);

/* ---------------------------------------------------------------- constraints (fuse_constraints.c) */

/* A remembered fp_target_list_has(target, rule of c, c, s): strings compared by address (interned
 * op types, static dtype names). */
typedef struct {
    const fp_constraint *c;
    const char *s;
    bool has;
} fp_list_memo;

#define FP_LIST_MEMO 64 /* entries of fp_match.memo (a power of two) */

typedef struct {
    const fp_rule *rule;
    const fp_target *target;
    fp_fuse_phase phase;            /* the phase of the call that matched it (fp_pass_fuse) */
    fp_node *nodes[FP_PAT_MAX + 8]; /* matched nodes; a repeated chain node appears once per link;
                                       FP_RW_SPLIT: the anchor, then the other Slice and Gather
                                       readers of its input 0 */
    int n;
    fp_value *x;        /* the anchor's data input */
    fp_arena *tmp;      /* where a failing constraint formats its reason (a scratch arena the pass resets
                      after each candidate; a recorded candidate's reasons are copied out) */
    fp_list_memo *memo; /* FP_LIST_MEMO entries (zeroed at first) the list predicates (dtype_in,
                           activation_in) keep their answers in for one target, or NULL */
} fp_match;

/* Whether n is one of mt's matched nodes. */
static inline bool fp_fuse_in_match(const fp_match *mt, const fp_node *n)
{
    for (int i = 0; i < mt->n; i++)
        if (mt->nodes[i] == n)
            return true;
    return false;
}

/* The DequantizeLinear of match mt that value v (an input of the anchor) comes from, or NULL. */
static inline fp_node *fp_fuse_unit_dq(const fp_match *mt, const fp_value *v)
{
    fp_node *p = v ? v->producer : NULL;
    return p && p->op == FP_OP_DEQUANTIZE_LINEAR && fp_fuse_in_match(mt, p) ? p : NULL;
}

/* The constraints' names ("single_consumer", ...), by fp_constraint_id: fuse_constraints.def's. */
extern const char *const fp_fuse_constraint_names[FP_CONSTRAINT_COUNT];
/* The id of the constraint called `name`, or -1 if there is none. */
int fp_fuse_constraint_find(const char *name);
/* Evaluates constraint c on match mt; on failure appends an fp_reason, allocated with its strings
 * in mt->tmp, to reasons and returns false. reasons may be NULL for a gate (fp_constraint.gate: its
 * failure is never explained), and then only for a gate: the verdict without the explanation. */
bool fp_fuse_constraint_check(const fp_constraint *c, const fp_match *mt, GPtrArray *reasons);
/* What Transpose t does to the matrix a MatMul reads, as FusedMatMul's flags take it: *trans when
 * it swaps the last two axes, *batch when it moves axis 0 behind the leading batch axes (perm
 * [1, .., r-2, 0, r-1] or [1, .., r-1, 0]). False (*why a static phrase) for any other perm, a
 * rank below 2, or a perm that cannot be known. */
bool fp_fuse_transpose_flags(const fp_node *t, bool *trans, bool *batch, const char **why);

/* Input of n (a node of match mt) not produced by a matched node, the "other" operand of a binary
 * op, or NULL. The pattern's data input counts as part of the match only where the pattern names
 * it (from or from2 FP_PAT_X). */
fp_value *fp_fuse_other_input(const fp_match *mt, const fp_node *n);
/* The value of v when it is a constant of one element (or of equal elements), in *value. */
bool fp_fuse_const_scalar(const fp_value *v, double *value);
/* Which input (0 or 1) of Mul or Div n is a constant scalar scaling the other (a Div's divisor
 * only; the other may be a constant too, a float16 one ORT's folding left: its GetScaleFromNode
 * does not look at it), with the factor it multiplies by (1/c for a Div) in *value (may be
 * NULL); -1 when none. */
int fp_fuse_scale_operand(const fp_node *n, double *value);

/* The interval Slice n takes of its input: one axis (normalized to >= 0) from a one-element int64
 * constant `axes`, start and end from one-element constants clamped to the axis's known size, step
 * 1 or absent. False when any of that does not hold. */
bool fp_fuse_slice_interval(const fp_node *n, int64_t *axis, int64_t *start, int64_t *end);
/* The interval a member of a Split made of Slices and Gathers takes (ONNX Runtime's
 * GatherSliceToSplitFusion): a Slice's (fp_fuse_slice_interval), or for a Gather (opset >= 13) of
 * one int64 constant index i along one axis of known size, [i, i + 1) with i normalized, and
 * *squeeze when the index is a scalar (the Gather's output lacks that axis). */
bool fp_fuse_split_member(const fp_node *n, int64_t *axis, int64_t *start, int64_t *end, bool *squeeze);

/* The pads of Pad node `pad` (its input 1 from opset 11, else its attribute): n values, all the
 * starts then all the ends (4 to 2 x FP_MAX_RANK of them, even). False when not known. */
bool fp_fuse_pad_pads(const fp_node *pad, int64_t *pads, int *n);

#endif
