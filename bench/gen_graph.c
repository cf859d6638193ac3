/* gen_graph.c - synthetic ONNX graphs of any size for the benchmarks (bench/run.sh builds it;
 * never part of the product build or of make test).
 *
 *   fp_gen_graph -n NODES -o OUT.onnx [--channels C] [--size HW]
 *
 * The graph repeats four kinds of blocks on an activation of shape batch x C x HW x HW (symbolic
 * batch), in the proportions of a CNN with an attention stage:
 *   residual  Conv+BN+Relu, Conv+BN, Add (skip), Relu                                  7 nodes
 *   branch    Conv 1x1 + Relu | Conv 3x3 + Relu, Concat on channels                    5 nodes
 *   attention torch-style Shape->Gather->Unsqueeze->Concat->Reshape to batch x C x HW^2,
 *             Transpose, MatMul+Add, Softmax, MatMul, Add (skip), Transpose, and the same
 *             Shape chain to Reshape back                                             17 nodes
 * and pads with Relu nodes to exactly NODES. Conv and MatMul weights are shared by every block
 * (one initializer per shape, so the file stays small); each BatchNormalization has its own
 * scale/bias/mean/var, so initializers grow with the graph as in real models.
 *
 * The output is streamed: every node and initializer is packed with protobuf-c on its own and
 * written at once, so memory stays constant whatever NODES is. ModelProto.graph needs its length
 * before its content, so the same deterministic walk runs three times: once to count the bytes,
 * once to write the nodes and once to write the initializers (a protobuf message may be written
 * as consecutive parts: parsers merge them). The file is written to OUT.tmp and renamed.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx.pb-c.h"

#define OPSET 13
#define NAME_MAX_LEN 64

enum { EMIT_NODES = 1, EMIT_INITS = 2 };

typedef struct {
    FILE *f;         /* NULL: only count */
    unsigned mask;   /* EMIT_NODES | EMIT_INITS: which parts this walk writes */
    uint64_t bytes;  /* bytes of graph content emitted (or counted) so far */
    GByteArray *buf; /* scratch for one packed part */
    float *fbuf;     /* scratch for initializer values */
    size_t fbuf_len;
    bool io_failed;
} sink;

typedef struct {
    sink *s;
    uint64_t target;        /* nodes to produce */
    uint64_t count;         /* nodes produced so far */
    int64_t c, hw;          /* channels, spatial size */
    char cur[NAME_MAX_LEN]; /* the current activation (batch x C x HW x HW) */
} gen;

/* ---------------------------------------------------------------- output */

/* Packs one part of the graph (a GraphProto holding one node, one initializer, or the name,
 * inputs and outputs) and writes it, or only counts its bytes when the sink has no file. */
static void emit_part(sink *s, const Onnx__GraphProto *part)
{
    size_t n = protobuf_c_message_get_packed_size(&part->base);
    s->bytes += n;
    if (!s->f || s->io_failed)
        return;
    g_byte_array_set_size(s->buf, (guint)n);
    protobuf_c_message_pack(&part->base, s->buf->data);
    if (fwrite(s->buf->data, 1, n, s->f) != n)
        s->io_failed = true;
}

static void emit_node(gen *g, Onnx__NodeProto *np)
{
    g->count++;
    if (!(g->s->mask & EMIT_NODES))
        return;
    Onnx__GraphProto part = ONNX__GRAPH_PROTO__INIT;
    part.n_node = 1;
    part.node = &np;
    emit_part(g->s, &part);
}

static void emit_init(gen *g, Onnx__TensorProto *tp)
{
    if (!(g->s->mask & EMIT_INITS))
        return;
    Onnx__GraphProto part = ONNX__GRAPH_PROTO__INIT;
    part.n_initializer = 1;
    part.initializer = &tp;
    emit_part(g->s, &part);
}

/* ---------------------------------------------------------------- initializers */

/* Deterministic values in [-0.05, 0.05) from a 32-bit LCG seeded by the element count. */
static void fill_values(float *v, size_t n, bool ones)
{
    uint32_t x = (uint32_t)n * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = ones ? 1.0f : ((float)(x >> 8) / 16777216.0f - 0.5f) * 0.1f;
    }
}

/* A float32 initializer `name` of the given dims with deterministic values (ones if `ones`). */
static void init_f32(gen *g, const char *name, const int64_t *dims, size_t rank, bool ones)
{
    if (!(g->s->mask & EMIT_INITS))
        return;
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    sink *s = g->s;
    if (n > s->fbuf_len) {
        s->fbuf = g_renew(float, s->fbuf, n);
        s->fbuf_len = n;
    }
    fill_values(s->fbuf, n, ones);
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.name = (char *)name;
    tp.has_data_type = true;
    tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tp.n_dims = rank;
    tp.dims = (int64_t *)dims;
    tp.has_raw_data = true;
    tp.raw_data.len = n * sizeof(float);
    tp.raw_data.data = (uint8_t *)s->fbuf;
    emit_init(g, &tp);
}

/* An int64 initializer (rank 0 when rank == 0, else 1-D of n values). */
static void init_i64(gen *g, const char *name, const int64_t *vals, size_t n, bool scalar)
{
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dim = (int64_t)n;
    tp.name = (char *)name;
    tp.has_data_type = true;
    tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    tp.n_dims = scalar ? 0 : 1;
    tp.dims = &dim;
    tp.n_int64_data = n;
    tp.int64_data = (int64_t *)vals;
    emit_init(g, &tp);
}

/* ---------------------------------------------------------------- nodes */

static Onnx__AttributeProto attr_int(const char *name, int64_t v)
{
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = (char *)name;
    a.has_type = true;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a.has_i = true;
    a.i = v;
    return a;
}

static Onnx__AttributeProto attr_ints(const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
    a.name = (char *)name;
    a.has_type = true;
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a.n_ints = n;
    a.ints = (int64_t *)v;
    return a;
}

/* Emits node `name` (its one output has the same name) with up to 3 inputs and 3 attributes. */
static void node(gen *g, const char *op, const char *name, const char *in0, const char *in1, const char *in2,
                 const Onnx__AttributeProto *attrs, size_t n_attrs)
{
    char *ins[3] = {(char *)in0, (char *)in1, (char *)in2};
    size_t n_in = in2 ? 3 : in1 ? 2 : 1;
    char *out = (char *)name;
    Onnx__AttributeProto a[3];
    Onnx__AttributeProto *ap[3];
    g_assert(n_attrs <= 3);
    for (size_t i = 0; i < n_attrs; i++) {
        a[i] = attrs[i];
        ap[i] = &a[i];
    }
    Onnx__NodeProto np = ONNX__NODE_PROTO__INIT;
    np.n_input = n_in;
    np.input = ins;
    np.n_output = 1;
    np.output = &out;
    np.name = (char *)name;
    np.op_type = (char *)op;
    np.domain = (char *)"";
    np.n_attribute = n_attrs;
    np.attribute = ap;
    emit_node(g, &np);
}

static void conv(gen *g, const char *name, const char *x, const char *w, int64_t k)
{
    int64_t ks[2] = {k, k}, pads[4] = {k / 2, k / 2, k / 2, k / 2}, strides[2] = {1, 1};
    Onnx__AttributeProto at[3] = {attr_ints("kernel_shape", ks, 2), attr_ints("pads", pads, 4),
                                  attr_ints("strides", strides, 2)};
    node(g, "Conv", name, x, w, NULL, at, 3);
}

/* BatchNormalization with its own four parameters, named <name>.scale etc. */
static void batchnorm(gen *g, const char *name, const char *x)
{
    static const char *const parts[4] = {"scale", "bias", "mean", "var"};
    char pn[4][NAME_MAX_LEN];
    for (int i = 0; i < 4; i++) {
        g_snprintf(pn[i], sizeof pn[i], "%s.%s", name, parts[i]);
        init_f32(g, pn[i], &g->c, 1, i == 3);
    }
    Onnx__NodeProto np = ONNX__NODE_PROTO__INIT;
    char *ins[5] = {(char *)x, pn[0], pn[1], pn[2], pn[3]};
    char *out = (char *)name;
    np.n_input = 5;
    np.input = ins;
    np.n_output = 1;
    np.output = &out;
    np.name = (char *)name;
    np.op_type = (char *)"BatchNormalization";
    np.domain = (char *)"";
    emit_node(g, &np);
}

/* ---------------------------------------------------------------- blocks */

#define NAME(buf, ...) g_snprintf(buf, sizeof buf, __VA_ARGS__)

static void residual_block(gen *g, uint64_t b)
{
    char c1[NAME_MAX_LEN], n1[NAME_MAX_LEN], r1[NAME_MAX_LEN], c2[NAME_MAX_LEN], n2[NAME_MAX_LEN], add[NAME_MAX_LEN],
        out[NAME_MAX_LEN];
    NAME(c1, "b%" G_GUINT64_FORMAT ".conv1", b);
    NAME(n1, "b%" G_GUINT64_FORMAT ".bn1", b);
    NAME(r1, "b%" G_GUINT64_FORMAT ".relu1", b);
    NAME(c2, "b%" G_GUINT64_FORMAT ".conv2", b);
    NAME(n2, "b%" G_GUINT64_FORMAT ".bn2", b);
    NAME(add, "b%" G_GUINT64_FORMAT ".add", b);
    NAME(out, "b%" G_GUINT64_FORMAT ".out", b);
    conv(g, c1, g->cur, "w.conv3x3", 3);
    batchnorm(g, n1, c1);
    node(g, "Relu", r1, n1, NULL, NULL, NULL, 0);
    conv(g, c2, r1, "w.conv3x3", 3);
    batchnorm(g, n2, c2);
    node(g, "Add", add, n2, g->cur, NULL, NULL, 0);
    node(g, "Relu", out, add, NULL, NULL, NULL, 0);
    memcpy(g->cur, out, sizeof out);
}

static void branch_block(gen *g, uint64_t b)
{
    char c1[NAME_MAX_LEN], r1[NAME_MAX_LEN], c3[NAME_MAX_LEN], r3[NAME_MAX_LEN], cat[NAME_MAX_LEN];
    NAME(c1, "b%" G_GUINT64_FORMAT ".br1.conv", b);
    NAME(r1, "b%" G_GUINT64_FORMAT ".br1.relu", b);
    NAME(c3, "b%" G_GUINT64_FORMAT ".br3.conv", b);
    NAME(r3, "b%" G_GUINT64_FORMAT ".br3.relu", b);
    NAME(cat, "b%" G_GUINT64_FORMAT ".concat", b);
    conv(g, c1, g->cur, "w.branch1x1", 1);
    node(g, "Relu", r1, c1, NULL, NULL, NULL, 0);
    conv(g, c3, g->cur, "w.branch3x3", 3);
    node(g, "Relu", r3, c3, NULL, NULL, NULL, 0);
    Onnx__AttributeProto axis = attr_int("axis", 1);
    node(g, "Concat", cat, r1, r3, NULL, &axis, 1);
    memcpy(g->cur, cat, sizeof cat);
}

/* Shape(x) -> Gather(0) -> Unsqueeze -> Concat(tail) -> Reshape(x): the batch is read at run time,
 * as torch.onnx exports x.view(x.size(0), ...). 5 nodes; the result is named `out`. */
static void dynamic_reshape(gen *g, const char *prefix, const char *x, const char *tail, const char *out)
{
    char sh[NAME_MAX_LEN], ga[NAME_MAX_LEN], un[NAME_MAX_LEN], cat[NAME_MAX_LEN];
    NAME(sh, "%s.shape", prefix);
    NAME(ga, "%s.gather", prefix);
    NAME(un, "%s.unsqueeze", prefix);
    NAME(cat, "%s.concat", prefix);
    node(g, "Shape", sh, x, NULL, NULL, NULL, 0);
    Onnx__AttributeProto axis0 = attr_int("axis", 0);
    node(g, "Gather", ga, sh, "k.zero", NULL, &axis0, 1);
    node(g, "Unsqueeze", un, ga, "k.axes0", NULL, NULL, 0);
    node(g, "Concat", cat, un, tail, NULL, &axis0, 1);
    node(g, "Reshape", out, x, cat, NULL, NULL, 0);
}

static void attention_block(gen *g, uint64_t b)
{
    char p1[NAME_MAX_LEN], p2[NAME_MAX_LEN], flat[NAME_MAX_LEN], tr[NAME_MAX_LEN], q[NAME_MAX_LEN], qa[NAME_MAX_LEN],
        sm[NAME_MAX_LEN], v[NAME_MAX_LEN], res[NAME_MAX_LEN], tb[NAME_MAX_LEN], out[NAME_MAX_LEN];
    NAME(p1, "b%" G_GUINT64_FORMAT ".flat", b);
    NAME(p2, "b%" G_GUINT64_FORMAT ".unflat", b);
    NAME(flat, "b%" G_GUINT64_FORMAT ".flat.reshape", b);
    NAME(tr, "b%" G_GUINT64_FORMAT ".transpose_in", b);
    NAME(q, "b%" G_GUINT64_FORMAT ".q", b);
    NAME(qa, "b%" G_GUINT64_FORMAT ".q_bias", b);
    NAME(sm, "b%" G_GUINT64_FORMAT ".softmax", b);
    NAME(v, "b%" G_GUINT64_FORMAT ".v", b);
    NAME(res, "b%" G_GUINT64_FORMAT ".residual", b);
    NAME(tb, "b%" G_GUINT64_FORMAT ".transpose_out", b);
    NAME(out, "b%" G_GUINT64_FORMAT ".out", b);
    static const int64_t perm[3] = {0, 2, 1};
    Onnx__AttributeProto aperm = attr_ints("perm", perm, 3), aaxis = attr_int("axis", -1);
    dynamic_reshape(g, p1, g->cur, "k.flat_tail", flat);
    node(g, "Transpose", tr, flat, NULL, NULL, &aperm, 1);
    node(g, "MatMul", q, tr, "w.q", NULL, NULL, 0);
    node(g, "Add", qa, q, "w.q_bias", NULL, NULL, 0);
    node(g, "Softmax", sm, qa, NULL, NULL, &aaxis, 1);
    node(g, "MatMul", v, sm, "w.v", NULL, NULL, 0);
    node(g, "Add", res, v, tr, NULL, NULL, 0);
    node(g, "Transpose", tb, res, NULL, NULL, &aperm, 1);
    dynamic_reshape(g, p2, tb, "k.image_tail", out);
    memcpy(g->cur, out, sizeof out);
}

/* The weights and constants every block shares. */
static void shared_inits(gen *g)
{
    int64_t c = g->c, half = g->c / 2;
    int64_t w3[4] = {c, c, 3, 3}, wb1[4] = {half, c, 1, 1}, wb3[4] = {c - half, c, 3, 3}, wq[2] = {c, c};
    init_f32(g, "w.conv3x3", w3, 4, false);
    init_f32(g, "w.branch1x1", wb1, 4, false);
    init_f32(g, "w.branch3x3", wb3, 4, false);
    init_f32(g, "w.q", wq, 2, false);
    init_f32(g, "w.v", wq, 2, false);
    init_f32(g, "w.q_bias", &c, 1, false);
    static const int64_t zero = 0;
    int64_t flat_tail[2] = {c, g->hw * g->hw}, image_tail[3] = {c, g->hw, g->hw};
    init_i64(g, "k.zero", &zero, 1, true);
    init_i64(g, "k.axes0", &zero, 1, false);
    init_i64(g, "k.flat_tail", flat_tail, 2, false);
    init_i64(g, "k.image_tail", image_tail, 3, false);
}

/* The whole graph body (nodes and initializers; which are written depends on the sink's mask). */
static void walk(gen *g)
{
    static const struct {
        void (*fn)(gen *, uint64_t);
        uint64_t nodes;
    } cycle[] = {{residual_block, 7}, {residual_block, 7}, {branch_block, 5}, {attention_block, 17}};
    g->count = 0;
    g_strlcpy(g->cur, "input", sizeof g->cur);
    shared_inits(g);
    for (uint64_t b = 0;; b++) {
        size_t k = b % G_N_ELEMENTS(cycle);
        if (g->count + cycle[k].nodes > g->target)
            break;
        cycle[k].fn(g, b);
    }
    for (uint64_t i = 0; g->count < g->target; i++) {
        char r[NAME_MAX_LEN];
        NAME(r, "pad%" G_GUINT64_FORMAT ".relu", i);
        node(g, "Relu", r, g->cur, NULL, NULL, NULL, 0);
        memcpy(g->cur, r, sizeof r);
    }
}

/* Name, input and output of the graph: float32 batch x C x HW x HW. */
static void graph_header(gen *g, const char *output)
{
    Onnx__TensorShapeProto__Dimension d[4], *dp[4];
    for (int i = 0; i < 4; i++) {
        d[i] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dp[i] = &d[i];
    }
    d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    d[0].dim_param = (char *)"batch";
    d[1].dim_value = g->c;
    d[2].dim_value = d[3].dim_value = g->hw;
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 4;
    shape.dim = dp;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = true;
    tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt.shape = &shape;
    Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
    type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type.tensor_type = &tt;
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__ValueInfoProto *inp = &in, *outp = &out;
    in.name = (char *)"input";
    in.type = &type;
    out.name = (char *)output;
    out.type = &type;
    Onnx__GraphProto part = ONNX__GRAPH_PROTO__INIT;
    part.name = (char *)"synthetic";
    part.n_input = 1;
    part.input = &inp;
    part.n_output = 1;
    part.output = &outp;
    emit_part(g->s, &part);
}

/* ModelProto fields other than the graph: ir_version, producer, opset_import. */
static GByteArray *model_header(void)
{
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
    os.domain = (char *)"";
    os.has_version = true;
    os.version = OPSET;
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = true;
    mp.ir_version = 8;
    mp.producer_name = (char *)"fuseplan-bench gen_graph";
    mp.n_opset_import = 1;
    mp.opset_import = &osp;
    GByteArray *b = g_byte_array_sized_new((guint)protobuf_c_message_get_packed_size(&mp.base) + 16);
    g_byte_array_set_size(b, (guint)protobuf_c_message_get_packed_size(&mp.base));
    protobuf_c_message_pack(&mp.base, b->data);
    /* ModelProto.graph (field 7, length-delimited): tag, then the length the caller appends */
    guint8 tag = (7 << 3) | 2;
    g_byte_array_append(b, &tag, 1);
    return b;
}

static void append_varint(GByteArray *b, uint64_t v)
{
    do {
        guint8 byte = (guint8)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        g_byte_array_append(b, &byte, 1);
        v >>= 7;
    } while (v);
}

/* Writes the model to `path` (through path.tmp, renamed on success). */
static bool write_model(const char *path, uint64_t nodes, int64_t channels, int64_t hw, GError **error)
{
    sink s = {.buf = g_byte_array_new()};
    gen g = {.s = &s, .target = nodes, .c = channels, .hw = hw};
    bool ok = false;
    g_autofree char *tmp = g_strconcat(path, ".tmp", NULL);
    GByteArray *head = NULL;
    /* pass 1: length of the graph */
    s.mask = EMIT_NODES | EMIT_INITS;
    walk(&g);
    char last[NAME_MAX_LEN];
    memcpy(last, g.cur, sizeof last);
    graph_header(&g, last);
    uint64_t graph_len = s.bytes;
    /* pass 2 and 3: nodes, then initializers, then the header part */
    s.f = g_fopen(tmp, "wb");
    if (!s.f) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", tmp, g_strerror(errno));
        goto out_buf;
    }
    head = model_header();
    append_varint(head, graph_len);
    if (fwrite(head->data, 1, head->len, s.f) != head->len)
        s.io_failed = true;
    s.bytes = 0;
    s.mask = EMIT_NODES;
    walk(&g);
    s.mask = EMIT_INITS;
    walk(&g);
    graph_header(&g, last);
    g_assert(s.bytes == graph_len);
    if (fclose(s.f) != 0)
        s.io_failed = true;
    if (s.io_failed || g_rename(tmp, path) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path, g_strerror(errno));
        g_unlink(tmp);
        goto out_head;
    }
    ok = true;
out_head:
    g_byte_array_free(head, TRUE);
out_buf:
    g_byte_array_free(s.buf, TRUE);
    g_free(s.fbuf);
    return ok;
}

int main(int argc, char **argv)
{
    gint64 nodes = 1000, channels = 32, hw = 16;
    g_autofree char *output = NULL;
    GOptionEntry entries[] = {
        {"nodes", 'n', 0, G_OPTION_ARG_INT64, &nodes, "Number of nodes (default 1000)", "N"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Output .onnx file (required)", "FILE"},
        {"channels", 'c', 0, G_OPTION_ARG_INT64, &channels, "Channels of the activation (default 32)", "C"},
        {"size", 's', 0, G_OPTION_ARG_INT64, &hw, "Height and width of the activation (default 16)", "HW"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- write a synthetic ONNX graph for benchmarks");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, "fp_gen_graph: %s\n", err->message);
        return 2;
    }
    if (!output || argc != 1 || nodes < 1 || nodes > (gint64)1 << 31 || channels < 2 || channels > 4096 || hw < 1 ||
        hw > 4096) {
        fprintf(stderr, "fp_gen_graph: usage: fp_gen_graph -n NODES (1..2^31) -o OUT.onnx [-c 2..4096] "
                        "[-s 1..4096]\n");
        return 2;
    }
    if (!write_model(output, (uint64_t)nodes, channels, hw, &err)) {
        fprintf(stderr, "fp_gen_graph: %s\n", err->message);
        return 2;
    }
    return 0;
}
