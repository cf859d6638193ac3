/* op.c - the op table built from ops.def, and the name -> kind lookup. */
#include "op.h"

#include <assert.h>
#include <glib.h>
#include <string.h>

#define EW FP_OPF_EW
#define UNARY FP_OPF_UNARY
#define VIEW FP_OPF_VIEW
#define INPLACE FP_OPF_INPLACE
#define ACT FP_OPF_ACT
#define CTRL FP_OPF_CTRL
#define SHAPEOF FP_OPF_SHAPEOF
#define NOCOMPUTE FP_OPF_NOCOMPUTE
#define RANDOM FP_OPF_RANDOM
#define TRANSC FP_OPF_TRANSC

const fp_op_info fp_op_table[FP_OP_COUNT] = {
#define X(id, name, flags, fk) [FP_OP_##id] = {name, (flags), FP_FK_##fk},
#include "ops.def"
#undef X
};

static_assert(FP_OP_COUNT == FP_OP_COUNT_EXPECTED, "ops.def row count changed: update FP_OP_COUNT_EXPECTED");

static GHashTable *op_index; /* op name -> fp_op + 1 */

static gpointer build_index(gpointer unused)
{
    (void)unused;
    GHashTable *h = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 1; i < FP_OP_COUNT; i++)
        g_hash_table_insert(h, (gpointer)fp_op_table[i].name, GINT_TO_POINTER(i + 1));
    return h;
}

fp_op fp_op_from_onnx(const char *domain, const char *op_type)
{
    static GOnce once = G_ONCE_INIT;
    op_index = g_once(&once, build_index, NULL);
    if (domain && *domain && strcmp(domain, "ai.onnx") != 0 && strcmp(domain, "com.microsoft") != 0)
        return FP_OP_OPAQUE;
    int v = GPOINTER_TO_INT(g_hash_table_lookup(op_index, op_type));
    return v ? (fp_op)(v - 1) : FP_OP_OPAQUE;
}
