/* test_pbtxt.c - protobuf text-format reader suite: every syntax feature, error messages with
 * line:column, conformance with protoc (the reference peer) on hand-written texts and on all of
 * libonnx-testdata decoded by `protoc --decode`. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_text.h"
#include "frontends/pbtxt/pbtxt.h"
#include "ge_ir.pb-c.h"
#include "onnx.pb-c.h"
#include "tmodel.h"
#include "tutil.h"

#define TESTDATA_DIR "/usr/share/libonnx-testdata/data"
#define ONNX_PROTO_DIR "/usr/include/onnx"
#define GE_PROTO_DIR FP_SOURCE_DIR "/frontends/ge"

static Onnx__ModelProto *parse_model(const char *text, GError **err)
{
    return (Onnx__ModelProto *)fp_pbtxt_parse(&onnx__model_proto__descriptor, text, strlen(text), 0, NULL, err);
}

static Ge__Proto__ModelDef *parse_ge(const char *text, unsigned flags, GError **err)
{
    return (Ge__Proto__ModelDef *)fp_pbtxt_parse(&ge__proto__model_def__descriptor, text, strlen(text), flags, NULL,
                                                 err);
}

/* The one op of a one-graph ModelDef text. */
static Ge__Proto__ModelDef *parse_op(const char *op_body, GError **err)
{
    g_autofree char *text = g_strdup_printf("graph { op { %s } }", op_body);
    return parse_ge(text, 0, err);
}

static void test_nested_and_lists(void)
{
    g_autoptr(GError) err = NULL;
    Onnx__ModelProto *mp =
        parse_model("ir_version: 7\n"
                    "opset_import: [ { domain: \"\" version: 13 }, < domain: 'x' version: 1 > ]\n"
                    "graph: < name: \"g\" node { op_type: \"Relu\" input: [\"a\", \"b\"] input: \"c\" } >\n"
                    "graph_doc_is_not_here_so: 1\n",
                    &err);
    CU_ASSERT_PTR_NULL(mp); /* unknown field: error by default */
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err->message, "line 4:1: unknown field 'graph_doc_is_not_here_so' in onnx.ModelProto"));
    g_clear_error(&err);
    mp =
        parse_model("ir_version: 7\n"
                    "opset_import: [ { domain: \"\" version: 13 }, < domain: 'x' version: 1 > ]\n"
                    "graph: < name: \"g\" node { op_type: \"Relu\" input: [\"a\", \"b\"] input: \"c\" }; node: {}, >\n",
                    &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_EQUAL(mp->ir_version, 7);
    CU_ASSERT_EQUAL_FATAL(mp->n_opset_import, 2);
    CU_ASSERT_EQUAL(mp->opset_import[0]->version, 13);
    CU_ASSERT_STRING_EQUAL(mp->opset_import[1]->domain, "x");
    CU_ASSERT_STRING_EQUAL(mp->graph->name, "g");
    CU_ASSERT_EQUAL_FATAL(mp->graph->n_node, 2);
    CU_ASSERT_EQUAL_FATAL(mp->graph->node[0]->n_input, 3);
    CU_ASSERT_STRING_EQUAL(mp->graph->node[0]->input[2], "c");
    onnx__model_proto__free_unpacked(mp, NULL);
}

static void test_enums_and_maps(void)
{
    g_autoptr(GError) err = NULL;
    Ge__Proto__ModelDef *md = parse_op("name: \"n\" type: \"Cast\"\n"
                                       "output_desc { dtype: DT_FLOAT16 shape { dim: [1, -1] dim: 3 } }\n"
                                       "output_desc { dtype: 8 }\n"
                                       "attr { key: \"dst_type\" value { i: 1 } }\n"
                                       "attr { key: \"l\" value { list { val_type: VT_LIST_INT i: [1, 2] } } }\n",
                                       &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    const Ge__Proto__OpDef *op = md->graph[0]->op[0];
    CU_ASSERT_EQUAL(op->output_desc[0]->dtype, GE__PROTO__DATA_TYPE__DT_FLOAT16);
    CU_ASSERT_EQUAL(op->output_desc[1]->dtype, GE__PROTO__DATA_TYPE__DT_INT64);
    CU_ASSERT_EQUAL_FATAL(op->output_desc[0]->shape->n_dim, 3);
    CU_ASSERT_EQUAL(op->output_desc[0]->shape->dim[1], -1);
    CU_ASSERT_EQUAL_FATAL(op->n_attr, 2);
    CU_ASSERT_EQUAL(op->attr[1]->key.len, 1);
    CU_ASSERT_EQUAL(op->attr[1]->key.data[0], 'l');
    CU_ASSERT_EQUAL(op->attr[1]->value->list->val_type, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT);
    CU_ASSERT_EQUAL(op->attr[1]->value->list->n_i, 2);
    ge__proto__model_def__free_unpacked(md, NULL);
    /* an enum by number in ONNX (proto2): AttributeProto.type */
    Onnx__ModelProto *mp =
        parse_model("graph { node { attribute { name: 'a' type: 7 ints: 1 } attribute { type: INTS } } }", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_EQUAL(mp->graph->node[0]->attribute[0]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    CU_ASSERT_EQUAL(mp->graph->node[0]->attribute[1]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    onnx__model_proto__free_unpacked(mp, NULL);
}

static void test_integers(void)
{
    g_autoptr(GError) err = NULL;
    Onnx__ModelProto *mp =
        parse_model("graph { initializer {\n"
                    "  int64_data: [-9223372036854775808, 9223372036854775807, 0x10, 017, -0x7fffffffffffffff]\n"
                    "  uint64_data: 18446744073709551615 uint64_data: 0\n"
                    "  int32_data: -2147483648 data_type: 2147483647 } }",
                    &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    const Onnx__TensorProto *t = mp->graph->initializer[0];
    CU_ASSERT_EQUAL_FATAL(t->n_int64_data, 5);
    CU_ASSERT_EQUAL(t->int64_data[0], G_MININT64);
    CU_ASSERT_EQUAL(t->int64_data[1], G_MAXINT64);
    CU_ASSERT_EQUAL(t->int64_data[2], 16);
    CU_ASSERT_EQUAL(t->int64_data[3], 15);
    CU_ASSERT_EQUAL(t->int64_data[4], -G_MAXINT64);
    CU_ASSERT_EQUAL(t->uint64_data[0], G_MAXUINT64);
    CU_ASSERT_EQUAL(t->int32_data[0], G_MININT32);
    CU_ASSERT_EQUAL(t->data_type, G_MAXINT32);
    onnx__model_proto__free_unpacked(mp, NULL);
}

static void test_floats(void)
{
    g_autoptr(GError) err = NULL;
    Onnx__ModelProto *mp =
        parse_model("graph { initializer {\n"
                    "  float_data: [1e-05, -inf, nan, 1.0f, .5, inf, -0.0, 3, 2.5E+3F, Infinity, -NaN]\n"
                    "  double_data: 0.1 double_data: -1e300 double_data: 1e-320 } }",
                    &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    const Onnx__TensorProto *t = mp->graph->initializer[0];
    CU_ASSERT_EQUAL_FATAL(t->n_float_data, 11);
    CU_ASSERT_EQUAL(t->float_data[0], 1e-05f);
    CU_ASSERT(isinf(t->float_data[1]) && t->float_data[1] < 0);
    CU_ASSERT(isnan(t->float_data[2]));
    CU_ASSERT_EQUAL(t->float_data[3], 1.0f);
    CU_ASSERT_EQUAL(t->float_data[4], 0.5f);
    CU_ASSERT(isinf(t->float_data[5]) && t->float_data[5] > 0);
    CU_ASSERT(t->float_data[6] == 0.0f && signbit(t->float_data[6]));
    CU_ASSERT_EQUAL(t->float_data[7], 3.0f);
    CU_ASSERT_EQUAL(t->float_data[8], 2500.0f);
    CU_ASSERT(isinf(t->float_data[9]));
    CU_ASSERT(isnan(t->float_data[10]));
    CU_ASSERT_EQUAL(t->double_data[0], 0.1);
    CU_ASSERT_EQUAL(t->double_data[1], -1e300);
    CU_ASSERT_EQUAL(t->double_data[2], 1e-320);
    onnx__model_proto__free_unpacked(mp, NULL);
}

static void test_bools(void)
{
    g_autoptr(GError) err = NULL;
    Ge__Proto__ModelDef *md = parse_op("name: 'n' type: 'T' attr { key: 'a' value { b: True } }\n"
                                       "attr { key: 'b' value { list { b: [true, false, 1, 0, t, f, True, False] } } }",
                                       &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    const Ge__Proto__OpDef *op = md->graph[0]->op[0];
    CU_ASSERT_EQUAL(op->attr[0]->value->value_case, GE__PROTO__ATTR_DEF__VALUE_B);
    CU_ASSERT_TRUE(op->attr[0]->value->b);
    const Ge__Proto__AttrDef__ListValue *l = op->attr[1]->value->list;
    CU_ASSERT_EQUAL_FATAL(l->n_b, 8);
    const protobuf_c_boolean want[] = {1, 0, 1, 0, 1, 0, 1, 0};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(!!l->b[i], want[i]);
    ge__proto__model_def__free_unpacked(md, NULL);
}

static void test_strings(void)
{
    g_autoptr(GError) err = NULL;
    Onnx__ModelProto *mp =
        parse_model("doc_string: \"a\\101\\x42\\n\\\"\\'\\\\\" 'c\"' \"d\\t\\u00e9\\U0001F600\\0\\7\\77\"\n"
                    "producer_name: 'it''s'\n",
                    &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    const char want[] = "aAB\n\"'\\c\"d\t\xc3\xa9\xf0\x9f\x98\x80";
    CU_ASSERT_EQUAL(memcmp(mp->doc_string, want, sizeof want - 1), 0);
    /* the \0 ends the C string of a `string` field; bytes fields keep everything (below) */
    CU_ASSERT_STRING_EQUAL(mp->producer_name, "its");
    onnx__model_proto__free_unpacked(mp, NULL);
    Ge__Proto__ModelDef *md =
        parse_op("name: 'n' type: 'T' attr { key: 'k' value { s: \"\\0\\7\\77\\177\\377\\x0\\xfF\" } }", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    const ProtobufCBinaryData *s = &md->graph[0]->op[0]->attr[0]->value->s;
    CU_ASSERT_EQUAL_FATAL(s->len, 7);
    CU_ASSERT_EQUAL(memcmp(s->data, "\0\7\77\177\377\0\377", 7), 0);
    ge__proto__model_def__free_unpacked(md, NULL);
}

static void test_comments_and_separators(void)
{
    g_autoptr(GError) err = NULL;
    Onnx__ModelProto *mp = parse_model("# a comment\n"
                                       "ir_version: 3, # trailing comment with \"quotes\" and { braces\n"
                                       "producer_name: \"#not a comment\";\n"
                                       "graph {\n# only a comment\n}\n# last line without newline",
                                       &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_EQUAL(mp->ir_version, 3);
    CU_ASSERT_STRING_EQUAL(mp->producer_name, "#not a comment");
    CU_ASSERT_PTR_NOT_NULL(mp->graph);
    onnx__model_proto__free_unpacked(mp, NULL);
    /* fields named by number, as protoc prints unknown fields */
    mp = parse_model("1: 9 2: \"p\"", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_EQUAL(mp->ir_version, 9);
    CU_ASSERT_STRING_EQUAL(mp->producer_name, "p");
    onnx__model_proto__free_unpacked(mp, NULL);
}

static void test_long_line(void)
{
    /* a 100 KB `bt:` line of octal escapes, as GE dumps have */
    GString *t = g_string_new("graph { op { name: 'c' type: 'Const' attr { key: 'v' value { bt: \"");
    for (int i = 0; i < 25000; i++)
        g_string_append_printf(t, "\\%03o", i % 256);
    g_string_append(t, "\" } } } }");
    CU_ASSERT(t->len > 100000);
    g_autoptr(GError) err = NULL;
    Ge__Proto__ModelDef *md = parse_ge(t->str, 0, &err);
    g_string_free(t, TRUE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    const ProtobufCBinaryData *bt = &md->graph[0]->op[0]->attr[0]->value->bt;
    CU_ASSERT_EQUAL_FATAL(bt->len, 25000);
    CU_ASSERT_EQUAL(bt->data[255], 255);
    CU_ASSERT_EQUAL(bt->data[24999], 24999 % 256);
    ge__proto__model_def__free_unpacked(md, NULL);
}

static void test_skip_unknown(void)
{
    const char *text = "future_scalar: -1.5e3 graph { name: 'g'\n"
                       "  future_msg { a: 1 b < c: [1, 2] > d: [{x: 1}, {y: 'z' 'w'}] e: IDENT }\n"
                       "  op { name: 'n' type: 'T' future_list: [1, -2, inf] }\n"
                       "  future_empty: [] } 99: 'numbered'\n";
    g_autoptr(GError) err = NULL;
    Ge__Proto__ModelDef *md = parse_ge(text, 0, &err);
    CU_ASSERT_PTR_NULL(md);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "line 1:1: unknown field 'future_scalar' in ge.proto.ModelDef"));
    g_clear_error(&err);
    unsigned skipped = 0;
    md = (Ge__Proto__ModelDef *)fp_pbtxt_parse(&ge__proto__model_def__descriptor, text, strlen(text),
                                               FP_PBTXT_SKIP_UNKNOWN, &skipped, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_EQUAL(skipped, 5);
    CU_ASSERT_STRING_EQUAL(md->graph[0]->name, "g");
    CU_ASSERT_STRING_EQUAL(md->graph[0]->op[0]->type, "T");
    ge__proto__model_def__free_unpacked(md, NULL);
}

/* Parsing `text` as onnx.ModelProto (or ge.proto.ModelDef) fails with `needle` in a one-line message. */
static void expect_error(bool ge, const char *text, const char *needle)
{
    g_autoptr(GError) err = NULL;
    ProtobufCMessage *msg = fp_pbtxt_parse(ge ? &ge__proto__model_def__descriptor : &onnx__model_proto__descriptor,
                                           text, strlen(text), 0, NULL, &err);
    CU_ASSERT_PTR_NULL(msg);
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
    tu_expect_error(err, needle);
}

static void test_errors(void)
{
    expect_error(false, "ir_version: 1\ngraph {\n  name: 'x'\n",
                 "line 4:1: end of input inside 'graph' opened at line 2:7 (missing '}')");
    expect_error(false, "graph < name: 'x' }", "line 1:19: unexpected '}'");
    expect_error(false, "producer_name: \"abc\nx\"", "line 1:16: string literal is not closed");
    expect_error(false, "producer_name: \"a\\qb\"",
                 "line 1:18: invalid escape sequence in string of field 'producer_name'");
    expect_error(false, "producer_name: \"\\x\"", "line 1:17: invalid escape");
    expect_error(false, "ir_version: 1 ir_version: 2",
                 "line 1:15: field 'ir_version' of onnx.ModelProto is given more than once");
    expect_error(false, "ir_version: [1, 2]", "line 1:13: field 'ir_version' is not repeated");
    expect_error(false, "ir_version 3", "line 1:12: expected ':' after field 'ir_version', found '3'");
    expect_error(false, "ir_version: 'x'", "line 1:13: field 'ir_version' expects an integer, found a string");
    expect_error(false, "ir_version: 1.5", "line 1:13: field 'ir_version' expects an integer, found '1.5'");
    expect_error(false, "ir_version: 99999999999999999999", "line 1:13: field 'ir_version': integer out of range");
    expect_error(false, "graph { node { attribute { type: NOPE } } }",
                 "line 1:34: field 'type': 'NOPE' is not a value of enum onnx.AttributeProto.AttributeType");
    expect_error(false, "graph { initializer { data_type: 2147483648 } }",
                 "line 1:34: field 'data_type': value 2147483648 is out of range");
    expect_error(false, "graph { initializer { uint64_data: -1 } }",
                 "line 1:36: field 'uint64_data': value -1 is out of range");
    expect_error(false, "graph { initializer { float_data: [1, 2 3] } }",
                 "line 1:41: expected ',' or ']' in the list of field 'float_data', found '3'");
    expect_error(false, "graph { initializer { float_data: abc } }",
                 "line 1:35: field 'float_data' expects a number, found 'abc'");
    expect_error(false, "graph: 3", "line 1:8: field 'graph' expects a message in {} or <>, found '3'");
    expect_error(false, "[ext.field]: 1", "line 1:1: extension and Any fields ([...]) are not supported");
    expect_error(false, "ir_version: 12abc", "line 1:13: malformed number");
    expect_error(false, "ir_version: 1 @", "line 1:15: unexpected character '@'");
    expect_error(false, "doc_string: 'a' \x01", "line 1:17: unexpected byte 0x01");
    expect_error(false, "ir_version: 1\n}", "line 2:1: unexpected '}' at top level");
    expect_error(true, "graph { op { attr { key: 'k' value { i: 1 f: 2 } } } }",
                 "line 1:43: fields 'i' and 'f' of ge.proto.AttrDef are both given but belong to one oneof");
    expect_error(true, "graph { op { attr { key: 'k' value { b: maybe } } } }",
                 "field 'b' expects true or false, found 'maybe'");
    expect_error(true, "graph { op { attr { key: 'k' value { b: 2 } } } }", "field 'b': value 2 is out of range");
    /* nesting deeper than the limit */
    GString *deep = g_string_new("graph { op { attr { key: 'k' value {");
    for (int i = 0; i < 60; i++)
        g_string_append(deep, " func { attr { key: 'k' value {");
    expect_error(true, deep->str, "messages nested deeper than 100");
    g_string_free(deep, TRUE);
}

static bool collect_fields(unsigned depth, const char *name, bool message, void *user)
{
    g_string_append_printf(user, "%u%s%s ", depth, name, message ? "{" : "");
    return strcmp(name, "stop") != 0;
}

static void test_peek(void)
{
    GString *s = g_string_new(NULL);
    const char *t = "graph { name: 'x' input: 'a:0' op { type: 'T' } } attr: [{}] stop: 1 after: 2";
    CU_ASSERT_TRUE(fp_pbtxt_peek(t, strlen(t), collect_fields, s));
    CU_ASSERT_STRING_EQUAL(s->str, "0graph{ 1name 1input 1op{ 2type 0attr 0stop ");
    /* a head cut inside a string: the fields before the cut are reported */
    g_string_truncate(s, 0);
    CU_ASSERT_FALSE(fp_pbtxt_peek("ir_version: 3\nproducer_name: \"trunc", 34, collect_fields, s));
    CU_ASSERT_STRING_EQUAL(s->str, "0ir_version 0producer_name ");
    /* binary data is not text */
    g_string_truncate(s, 0);
    CU_ASSERT_FALSE(fp_pbtxt_peek("\x08\x07\x12\x03", 4, collect_fields, s));
    CU_ASSERT_STRING_EQUAL(s->str, "");
    g_string_free(s, TRUE);
}

/* ---------------------------------------------------------------- protoc as the reference peer */

/* The message's canonical serialization: protobuf-c's own packing of its unpacked form. */
static GBytes *canonical(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, data);
    if (!m)
        return NULL;
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = g_malloc(n ? n : 1);
    protobuf_c_message_pack(m, buf);
    protobuf_c_message_free_unpacked(m, NULL);
    return g_bytes_new_take(buf, n);
}

/* `text` encoded by protoc and by fp_pbtxt_to_wire unpack to the same message. */
static void expect_same_as_protoc(const ProtobufCMessageDescriptor *d, const char *proto_dir, const char *proto,
                                  const char *text)
{
    g_autofree char *dir = tm_tmpdir();
    g_autofree char *in = g_build_filename(dir, "in.txt", NULL), *out = g_build_filename(dir, "out.pb", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(in, text, -1, NULL));
    g_autofree char *inc = g_strdup_printf("-I%s", proto_dir), *enc = g_strdup_printf("--encode=%s", d->name);
    g_autofree char *perr = NULL;
    bool ran = tm_protoc((const char *[]){inc, enc, proto, NULL}, in, out, &perr);
    if (!ran)
        fprintf(stderr, "\n  protoc: %s\n", perr);
    CU_ASSERT_FATAL(ran);
    gchar *ref = NULL;
    gsize ref_len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(out, &ref, &ref_len, NULL));
    g_autoptr(GError) err = NULL;
    g_autoptr(GBytes) ours = fp_pbtxt_to_wire(d, text, strlen(text), 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ours);
    gsize n = 0;
    const uint8_t *p = g_bytes_get_data(ours, &n);
    g_autoptr(GBytes) a = canonical(d, (const uint8_t *)ref, ref_len);
    g_autoptr(GBytes) b = canonical(d, p, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_TRUE(g_bytes_equal(a, b));
    g_free(ref);
    tm_rmdir(dir);
}

static void test_same_as_protoc(void)
{
    expect_same_as_protoc(
        &onnx__model_proto__descriptor, ONNX_PROTO_DIR, "onnx.proto",
        "# features\nir_version: 0x7 producer_name: 'p\\'q' doc_string: \"\\001\\x7f\\n\" \"more\"\n"
        "opset_import [{version: 13}, <domain: 'ai.onnx.ml' version: 2>]\n"
        "graph { name: \"g\" node: { input: [\"x\", \"\"] output: \"y\" op_type: \"LeakyRelu\"\n"
        "  attribute { name: \"alpha\" f: 1e-05 type: FLOAT }\n"
        "  attribute { name: \"v\" floats: [-inf, nan, 1.0f, .25, 3] type: FLOATS }\n"
        "  attribute { name: \"w\" ints: [-1, 9223372036854775807] type: 7 } }\n"
        "  initializer { dims: 2 data_type: 1 float_data: [1.5, -2] name: 'w'\n"
        "    uint64_data: 18446744073709551615 double_data: 1e-300 raw_data: '\\000\\377' }\n"
        "  input { name: 'x' type { tensor_type { elem_type: 1 shape { dim { dim_param: 'N' } dim { dim_value: 3 } } } } }\n"
        "}\n");
    expect_same_as_protoc(
        &ge__proto__model_def__descriptor, GE_PROTO_DIR, "ge_ir.proto",
        "graph { name: 'g' op { name: 'c' type: 'Cast' input: 'x:0' input: 'y:-1' input: ''\n"
        "  attr { key: 'dst_type' value { i: 1 } } attr { key: 'z' value { b: false } }\n"
        "  attr { key: 'l' value { list { val_type: VT_LIST_FLOAT f: [1e-05, -0.0] } } }\n"
        "  output_desc { dtype: DT_FLOAT16 shape { } layout: 'NC1HWC0' attr { key: 'origin_shape' value { list { i: [1, 2] val_type: VT_LIST_INT } } } }\n"
        "  id: 0 is_input_const: [false, true] } }\n"
        "version: 2 attr { key: 'soc' value { s: \"Ascend\\3102\" } }\n");
}

/* `fuseplan info` detects ONNX text by content, whatever the file is called. */
static void test_cli_onnx_text(void)
{
    const char *text =
        "ir_version: 8\nopset_import { version: 13 }\n"
        "graph { node { op_type: 'Relu' input: 'x' output: 'y' } name: 'g'\n"
        "  input { name: 'x' type { tensor_type { elem_type: 1 shape { dim { dim_value: 4 } } } } }\n"
        "  output { name: 'y' type { tensor_type { elem_type: 1 shape { dim { dim_value: 4 } } } } } }\n";
    g_autofree char *path = tu_write_temp(text, strlen(text), ".model");
    tu_run_result r = tu_run((const char *[]){"info", "--format", "json", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"format\" : \"onnx-text\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"Relu\" : 1"));
    tu_run_clear(&r);
    g_unlink(path);
}

/* ---------------------------------------------------------------- libonnx-testdata through protoc --decode */

static void collect(const char *dir, GPtrArray *out)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR))
            collect(path, out);
        else if (strcmp(name, "model.onnx") == 0)
            g_ptr_array_add(out, g_strdup(path));
        g_free(path);
    }
    if (d)
        g_dir_close(d);
}

static int cmp_str(gconstpointer a, gconstpointer b) { return strcmp(*(char **)a, *(char **)b); }

static void put_varint(GByteArray *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        g_byte_array_append(b, &c, 1);
        v >>= 7;
    } while (v);
}

/* Every model of libonnx-testdata, decoded to text by protoc in one run (all models wrapped as
 * `repeated onnx.ModelProto model = 1` of a batch message), imports to the same IR as its binary. */
static void test_onnx_testdata_text(void)
{
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    collect(TESTDATA_DIR, paths);
    g_ptr_array_sort(paths, cmp_str);
    CU_ASSERT_EQUAL_FATAL(paths->len, 1072);
    g_autofree char *dir = tm_tmpdir();
    g_autofree char *proto = g_build_filename(dir, "batch.proto", NULL);
    g_autofree char *bin = g_build_filename(dir, "batch.pb", NULL), *txt = g_build_filename(dir, "batch.txt", NULL);
    CU_ASSERT_FATAL(
        g_file_set_contents(proto,
                            "syntax = \"proto2\";\nimport \"onnx.proto\";\noption optimize_for = LITE_RUNTIME;\n"
                            "message FpBatch { repeated onnx.ModelProto model = 1; }\n",
                            -1, NULL));
    GByteArray *batch = g_byte_array_new();
    for (guint i = 0; i < paths->len; i++) {
        gchar *data = NULL;
        gsize len = 0;
        CU_ASSERT_FATAL(g_file_get_contents(paths->pdata[i], &data, &len, NULL));
        put_varint(batch, (1 << 3) | 2);
        put_varint(batch, len);
        g_byte_array_append(batch, (const guint8 *)data, (guint)len);
        g_free(data);
    }
    CU_ASSERT_FATAL(g_file_set_contents(bin, (const char *)batch->data, batch->len, NULL));
    g_byte_array_free(batch, TRUE);
    g_autofree char *inc1 = g_strdup_printf("-I%s", dir), *perr = NULL;
    bool ran = tm_protoc((const char *[]){inc1, "-I" ONNX_PROTO_DIR, "--decode=FpBatch", "batch.proto", NULL}, bin, txt,
                         &perr);
    if (!ran)
        fprintf(stderr, "\n  protoc: %s\n", perr);
    CU_ASSERT_FATAL(ran);
    gchar *all = NULL;
    gsize all_len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(txt, &all, &all_len, NULL));
    /* protoc prints each model as "model {" ... "}" at column 0; strings never span lines */
    unsigned idx = 0, same = 0;
    uint64_t nodes = 0, text_bytes = 0;
    GString *one = g_string_new(NULL);
    for (const char *l = all, *end = all + all_len; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
        const char *line = l;
        l += n + 1;
        if (n == 7 && memcmp(line, "model {", 7) == 0) {
            g_string_truncate(one, 0);
            continue;
        }
        if (n != 1 || line[0] != '}') {
            g_string_append_len(one, line, (gssize)n);
            g_string_append_c(one, '\n');
            continue;
        }
        CU_ASSERT_FATAL(idx < paths->len);
        const char *path = paths->pdata[idx++];
        text_bytes += one->len;
        g_autoptr(GError) e1 = NULL, e2 = NULL;
        g_autoptr(fp_model) a = fp_onnx_load(path, &e1);
        g_autoptr(fp_model) b = fp_onnx_text_load_buffer(path, one->str, one->len, &e2);
        if (!a || !b) {
            fprintf(stderr, "\n  %s: %s", path, e1 ? e1->message : e2->message);
            continue;
        }
        CU_ASSERT_STRING_EQUAL(b->format, "onnx-text");
        g_autofree char *d = tm_model_diff(a, b);
        if (d)
            fprintf(stderr, "\n  %s: %s", path + strlen(TESTDATA_DIR) + 1, d);
        else
            same++;
        fp_model_stats st;
        fp_model_get_stats(b, &st);
        nodes += st.nodes;
    }
    g_string_free(one, TRUE);
    g_free(all);
    printf("\n  protoc --decode text of %u libonnx-testdata models (%" G_GUINT64_FORMAT " KiB): %u import to the "
           "same IR as the binary (%" G_GUINT64_FORMAT " nodes)\n",
           idx, text_bytes / 1024, same, nodes);
    CU_ASSERT_EQUAL(idx, 1072);
    CU_ASSERT_EQUAL(same, 1072);
    tm_rmdir(dir);
}

FP_TEST_SUITE(register_pbtxt)
{
    CU_pSuite s = CU_add_suite("pbtxt", NULL, NULL);
    CU_add_test(s, "nested_and_lists", test_nested_and_lists);
    CU_add_test(s, "enums_and_maps", test_enums_and_maps);
    CU_add_test(s, "integers", test_integers);
    CU_add_test(s, "floats", test_floats);
    CU_add_test(s, "bools", test_bools);
    CU_add_test(s, "strings", test_strings);
    CU_add_test(s, "comments_and_separators", test_comments_and_separators);
    CU_add_test(s, "long_line", test_long_line);
    CU_add_test(s, "skip_unknown", test_skip_unknown);
    CU_add_test(s, "errors", test_errors);
    CU_add_test(s, "peek", test_peek);
    CU_add_test(s, "same_as_protoc", test_same_as_protoc);
    CU_add_test(s, "cli_onnx_text", test_cli_onnx_text);
    CU_add_test(s, "onnx_testdata_text", test_onnx_testdata_text);
}
