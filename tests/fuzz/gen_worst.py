#!/usr/bin/python3
"""gen_worst.py OUTDIR - writes the resource-limit cases of docs/robustness.md: small files (under
10 MB) that ask for much work or memory: millions of nodes, huge fan-in and fan-out, deep and wide
subgraphs, dims of 2^62, long names. tests/fuzz/worst.sh measures `fuseplan report` (and, asked,
`fuseplan memory`: the memory-aware schedule search) on each.

Protobuf is written by hand (a few lines of varint encoding) so that no ONNX package is needed."""
import os
import sys

LIMIT = int(os.environ.get("WORST_BYTES", 10 * 1000 * 1000))  # every file stays under 10 MB
NODES = 250000 - 10  # FP_MAX_NODES (ir/graph.h): larger graphs are refused while reading


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, payload):
    """Length-delimited field."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vint(num, v):
    return varint(num << 3) + varint(v)


# onnx.proto field numbers
def node(op, inputs=(), outputs=(), name=None, attrs=()):
    b = b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs)
    if name is not None:
        b += field(3, name)
    b += field(4, op)
    b += b"".join(field(5, a) for a in attrs)
    return field(1, b)  # GraphProto.node


def attr_graph(name, graph_body):
    return field(1, name) + vint(20, 5) + field(6, graph_body)  # type GRAPH = 5, g = 6


def attr_int(name, v):
    return field(1, name) + vint(20, 2) + vint(3, v)  # type INT = 2, i = 3


def attr_ints(name, vs):
    return field(1, name) + vint(20, 7) + b"".join(vint(8, v) for v in vs)  # INTS = 7, ints = 8


def value_info(name, dims, elem=1):
    """ValueInfoProto of a float tensor; a str dim is symbolic."""
    shape = b"".join(field(1, field(2, d) if isinstance(d, str) else vint(1, d)) for d in dims)
    tensor = vint(1, elem) + field(2, shape)
    return field(1, name) + field(2, field(1, tensor))


def graph(nodes, inputs=(), outputs=(), inits=b"", name="g"):
    return nodes + field(2, name) + inits + b"".join(field(11, i) for i in inputs) + \
        b"".join(field(12, o) for o in outputs)


def model(graph_body, opset=17):
    return vint(1, 8) + field(8, field(1, "") + vint(2, opset)) + field(7, graph_body)


def names(n):
    """Short distinct names: base-62."""
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for i in range(n):
        s = ""
        while True:
            s = alphabet[i % 62] + s
            i //= 62
            if not i:
                break
        yield "v" + s


def fill(make_one, overhead=64, cap=NODES):
    """As many copies of make_one() as fit in LIMIT, at most cap."""
    one = make_one()
    return one * min(cap, (LIMIT - overhead) // len(one))


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def empty_nodes():
    """5M empty NodeProtos (2 bytes each): counted before anything is imported."""
    return model(graph(fill(lambda: field(1, b""), cap=LIMIT), [value_info("x", [1])], [value_info("x", [1])]))


@case
def opaque_nodes():
    """250k nodes of an unknown op without inputs or outputs (5 bytes each)."""
    return model(graph(fill(lambda: node("A")), [value_info("x", [1])], [value_info("x", [1])]))


@case
def relu_nodes():
    """250k Relu nodes without inputs or outputs."""
    return model(graph(fill(lambda: node("Relu")), [value_info("x", [1])], [value_info("x", [1])]))


@case
def chain():
    """A chain of 250k Relu: x -> v0 -> v1 -> ..., with a symbolic batch (headroom runs)."""
    body, prev, size = [], "x", 0
    for n in names(NODES):
        b = node("Relu", [prev], [n])
        if size + len(b) > LIMIT - 200:
            break
        body.append(b)
        size += len(b)
        prev = n
    return model(graph(b"".join(body), [value_info("x", ["N", 64])], [value_info(prev, ["N", 64])]))


@case
def fan_out():
    """x read by 250k Relu nodes, every output a graph output of its own."""
    body, outs, size = [], [], 0
    for n in names(NODES):
        b = node("Relu", ["x"], [n])
        o = field(1, n)  # output without a type
        if size + len(b) + len(o) + 2 > LIMIT - 200:
            break
        body.append(b)
        outs.append(o)
        size += len(b) + len(o) + 2
    return model(graph(b"".join(body), [value_info("x", [1, 64])], outs))


@case
def fan_in():
    """One Sum node with a million inputs, all 'x' (the frontend's limit is 16 * 65535)."""
    n_in = 16 * 65535
    return model(graph(node("Sum", ["x"] * n_in, ["y"]), [value_info("x", [1, 64])], [value_info("y", [1, 64])]))


@case
def concat_distinct():
    """Concat of 250k distinct inputs, each made by its own Relu of x."""
    body, ins, size = [], [], 0
    for n in names(NODES - 1):
        b = node("Relu", ["x"], [n])
        if size + len(b) + len(n) + 2 > LIMIT - 300:
            break
        body.append(b)
        ins.append(n)
        size += len(b) + len(n) + 2
    body.append(node("Concat", ins, ["y"], attrs=[attr_int("axis", 0)]))
    return model(graph(b"".join(body), [value_info("x", [1, 64])], [value_info("y", ["M", 64])]))


@case
def wide_segment():
    """2000 Relu of x summed by one Sum: one schedule segment of 2001 nodes (memory-aware search)."""
    ins = list(names(2000))
    body = b"".join(node("Relu", ["x"], [n]) for n in ins) + node("Sum", ins, ["y"])
    return model(graph(body, [value_info("x", [1, 64])], [value_info("y", [1, 64])]))


@case
def wide_64():
    """64 Relu of x summed: the schedule search's exact DP on a 64-wide layer (was minutes)."""
    ins = list(names(64))
    body = b"".join(node("Relu", ["x"], [n]) for n in ins) + node("Sum", ins, ["y"])
    return model(graph(body, [value_info("x", [1, 64])], [value_info("y", [1, 64])]))


@case
def reads_of_x():
    """A chain of Add(x, previous): x is read by every node, each node its own schedule segment."""
    body, prev, size = [], "x", 0
    for n in names(NODES):
        b = node("Add", ["x", prev], [n])
        if size + len(b) > LIMIT - 200:
            break
        body.append(b)
        size += len(b)
        prev = n
    return model(graph(b"".join(body), [value_info("x", [1, 64])], [value_info(prev, [1, 64])]))


@case
def nested_if():
    """If inside If (then_branch only), 200 deep: past the protobuf readers' nesting limit."""
    inner = graph(node("Relu", ["x"], ["y0"]), outputs=[value_info("y0", [1])], name="leaf")
    for depth in range(200):
        inner = graph(node("If", ["c"], ["y%d" % (depth + 1)],
                           attrs=[attr_graph("then_branch", inner)]),
                      outputs=[value_info("y%d" % (depth + 1), [1])], name="l%d" % depth)
        if len(inner) > LIMIT // 4:
            break
    return model(inner + field(11, value_info("c", [], elem=9)) + field(11, value_info("x", [1])))


@case
def many_subgraphs():
    """5k If nodes, each with two tiny subgraphs: 10k graphs (FP_MAX_GRAPHS), each costing per pass."""
    sub = graph(b"", outputs=[value_info("x", [1])], name="s")
    one = node("If", ["c"], [], attrs=[attr_graph("then_branch", sub), attr_graph("else_branch", sub)])
    return model(graph(fill(lambda: one, cap=(10000 - 1) // 2), [value_info("c", [], elem=9), value_info("x", [1])],
                       [value_info("x", [1])]))


@case
def too_many_subgraphs():
    """~150k If nodes with two tiny subgraphs each: over FP_MAX_GRAPHS."""
    sub = graph(b"", outputs=[value_info("x", [1])], name="s")
    one = node("If", ["c"], [], attrs=[attr_graph("then_branch", sub), attr_graph("else_branch", sub)])
    return model(graph(fill(lambda: one), [value_info("c", [], elem=9), value_info("x", [1])],
                       [value_info("x", [1])]))


@case
def implicit_inputs():
    """One If whose branches read 83k distinct outer values (outer-scope resolution)."""
    outer, inner, size = [], [], 0
    for n in names(NODES // 3):
        a = node("Relu", ["x"], [n])
        b = node("Relu", [n], ["i" + n])
        if size + len(a) + 2 * len(b) > LIMIT - 300:
            break
        outer.append(a)
        inner.append(b)
        size += len(a) + 2 * len(b)
    sub = graph(b"".join(inner), outputs=[value_info("x", [1])], name="then")
    outer.append(node("If", ["c"], ["y"], attrs=[attr_graph("then_branch", sub), attr_graph("else_branch", sub)]))
    return model(graph(b"".join(outer), [value_info("c", [], elem=9), value_info("x", [1])],
                       [value_info("y", [1])]))


@case
def huge_dims():
    """Inputs of 2^62 x 2^62 elements through MatMul, Conv and Concat: sizes overflow 64 bits."""
    big = 1 << 62
    body = node("MatMul", ["a", "b"], ["m"]) + node("Concat", ["m", "m"], ["c"], attrs=[attr_int("axis", 0)]) + \
        node("Relu", ["c"], ["y"])
    return model(graph(body, [value_info("a", [big, big]), value_info("b", [big, big])], [value_info("y", [])]))


@case
def huge_dims_conv():
    """A 2^40-pixel image through Conv and pooling."""
    body = node("Conv", ["x", "w"], ["c"], attrs=[attr_ints("pads", [1, 1, 1, 1])]) + \
        node("MaxPool", ["c"], ["y"], attrs=[attr_ints("kernel_shape", [2, 2])])
    return model(graph(body, [value_info("x", [1 << 20, 3, 1 << 20, 1 << 20]), value_info("w", [1 << 30, 3, 3, 3])],
                       [value_info("y", [])]))


@case
def rank_1000():
    """An input of rank 1000 (limit 64)."""
    return model(graph(node("Relu", ["x"], ["y"]), [value_info("x", [1] * 1000)], [value_info("y", [])]))


@case
def long_names():
    """A 9 MB node name, value name and op type: they end up in messages and reports."""
    n = "n" * 2400000
    return model(graph(node("Relu", ["x"], [n], name=n) + node("Q" * 2400000, [n], ["y"]),
                       [value_info("x", [1])], [value_info("y", [1])]))


@case
def many_attrs():
    """One Conv with ~1.4M attributes (attribute lookup is a linear scan)."""
    attrs = [attr_int("a", 1)] * ((LIMIT - 200) // (len(field(5, attr_int("a", 1)))))
    return model(graph(node("Conv", ["x", "w"], ["y"], attrs=attrs), [value_info("x", [1, 3, 8, 8]),
                       value_info("w", [4, 3, 3, 3])], [value_info("y", [])]))


@case
def many_opsets():
    """2M opset_import entries (the importer keeps 4096)."""
    one = field(8, field(1, "d") + vint(2, 1))
    return vint(1, 8) + one * ((LIMIT - 100) // len(one)) + field(7, graph(node("Relu", ["x"], ["y"]),
                                                                            [value_info("x", [1])], [value_info("y", [1])]))


@case
def if_empty_nodes():
    """An If whose then_branch holds 5M empty nodes: unpacked as one element of the main graph."""
    sub = field(1, b"") * ((LIMIT - 200) // 2) + field(2, "s")
    return model(graph(node("If", ["c"], [], attrs=[attr_graph("then_branch", sub)]), [value_info("c", [], elem=9)]))


# GE (frontends/ge/ge_ir.proto: ModelDef.name 1, .graph 7; GraphDef.name 1, .op 6; OpDef.name 1,
# .type 2, .input 5) and text formats
EXT = {}


@case
def ge_binary_empty_ops():
    """5M empty OpDefs (2 bytes each) in a binary GE ModelDef."""
    g = field(1, "g") + field(6, b"") * ((LIMIT - 20) // 2)
    return field(1, "m") + field(7, g)


@case
def ge_binary_chain():
    """A binary GE ModelDef: a chain of 250k Relu ops."""
    ops = [field(6, field(1, "a0") + field(2, "Data"))]
    ops += [field(6, field(1, "a%d" % i) + field(2, "Relu") + field(5, "a%d:0" % (i - 1))) for i in range(1, NODES)]
    return field(1, "m") + field(7, field(1, "g") + b"".join(ops))


@case
def ge_text_empty_ops():
    """2M 'op{}' in a GE text dump (5 bytes each)."""
    return b'graph {\n  name: "g"\n' + b"op{}\n" * ((LIMIT - 40) // 5) + b"}\n"


@case
def ge_text_chain():
    """A GE text dump: a chain of Relu ops, as many as 10 MB hold (~235k)."""
    ops, size = [], 0
    for i in range(1, NODES):
        op = 'op{name:"a%d" type:"Relu" input:"a%d:0"}\n' % (i, i - 1)
        if size + len(op) > LIMIT - 100:
            break
        ops.append(op)
        size += len(op)
    return ('graph {\n  name: "g"\n op{name:"a0" type:"Data"}\n' + "".join(ops) + "}\n").encode()


@case
def onnx_text_nodes():
    """500k 'node{op_type:"A"}' in ONNX text (19 bytes each)."""
    return b"ir_version: 8\ngraph {\n" + b'node{op_type:"A"}\n' * ((LIMIT - 40) // 18) + b"}\n"


EXT.update(ge_binary_empty_ops=".pb", ge_binary_chain=".pb", ge_text_empty_ops=".txt", ge_text_chain=".txt",
           onnx_text_nodes=".pbtxt")


def main():
    out = sys.argv[1]
    only = sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    for name, fn in CASES.items():
        if only and name not in only:
            continue
        data = fn()
        assert len(data) < LIMIT, (name, len(data))
        with open(os.path.join(out, name + EXT.get(name, ".onnx")), "wb") as f:
            f.write(data)
        print("%-18s %9d bytes  %s" % (name, len(data), fn.__doc__.split("\n")[0]))


if __name__ == "__main__":
    main()
