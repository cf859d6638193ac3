"""provenance.py - which original nodes each runtime node came from, derived from tensor names alone
and so the same way for any runtime graph of a model (ONNX Runtime's optimized model, fuseplan's
predicted graph from `report -f json`), and the node-by-node comparison of two such graphs.

Tensor names: a name the original model has is original; any other (ONNX Runtime's "_output",
"reorder_token_N", fuseplan's "x/nchw") is generated. Runtime nodes joined by a generated tensor
form one cluster (an NCHWc chain with its reorders, a Split with its Squeezes): only a cluster's
boundary tensors can be placed in the original model. A cluster's cone is the original nodes
between its tensors: those met walking back from its original outputs through the original model,
stopping at tensors the runtime graph holds (materialized) and at tensors fixed before the model
runs (initializers, Constants, the outputs of Shape and Size, and what is computed from them alone:
the shape computations and constants a runtime folds when it knows the shapes; folding is no
fusion). Views (VIEWS) and Constants are walked through, a view by its data input alone, but are
part of no cone or op list, as the kernel histogram leaves views aside; the NCHWc reorders (CONVERSIONS) join clusters but are in no op list:
they come from no original node, and which cluster a reorder falls in depends only on which of its
tensors a runtime names anew (ONNX Runtime the blocked ones, fuseplan the NCHW copies), while the
histogram counts them.

Matching (compare): clusters of the two graphs that write a common original tensor are linked; a
cluster that writes no original tensor the other graph writes is linked to the other graph's
clusters whose cones it overlaps (ONNX Runtime's NCHWc chain writes only its last tensor, where
fuseplan's blocked Convs keep their outputs' names). Each linked component is then one of:
  node     one runtime node each side, the same op and cone
  cluster  one cluster each side, or one side's several clusters inside the other's single
           multi-node cluster, the same ops and the same cone in all
  ops      the same pairing but other ops (domain-qualified)
  cone     the same pairing and ops but another cone: a fused node covers other original nodes
  split    the original nodes grouped otherwise (several clusters against one runtime node, or
           several against several)
  only     a cluster on one side only
The first two agree."""
import collections

VIEWS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
CONVERSIONS = {"com.microsoft.nchwc:ReorderInput", "com.microsoft.nchwc:ReorderOutput"}
NOT_IN_CONE = VIEWS | {"Constant"}
SHAPE_OPS = {"Shape", "Size"}
RANDOM = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"}
AGREE = ("node", "cluster")


class Original:
    """The original model's main graph: op by node name, producer and inputs by tensor, the tensor
    names, and the tensors fixed before it runs."""

    def __init__(self, graph):
        self.op, self.inputs, self.outputs, self.producer = {}, {}, {}, {}
        self.tensors = {t.name for t in graph.input} | {t.name for t in graph.initializer}
        self.fixed = {t.name for t in graph.initializer} - {t.name for t in graph.input}
        for i, n in enumerate(graph.node):
            name = n.name or f"{n.op_type}_{i}"
            self.op[name] = n.op_type
            self.inputs[name] = [t for t in n.input if t]
            self.outputs[name] = [t for t in n.output if t]
            for t in n.output:
                if t:
                    self.producer[t] = name
            self.tensors.update(t for t in list(n.input) + list(n.output) if t)
            if n.op_type in SHAPE_OPS or n.op_type == "Constant":
                self.fixed.update(t for t in n.output if t)
        changed = True
        while changed:  # closure: a node reading only fixed tensors writes fixed ones
            changed = False
            for name, ins in self.inputs.items():
                if self.op[name] in RANDOM or not all(t in self.fixed for t in ins):
                    continue
                for t in self.outputs[name]:
                    if t not in self.fixed:
                        self.fixed.add(t)
                        changed = True

    def cone(self, outputs, materialized):
        """The original nodes between the runtime tensors `materialized` and outputs (see the module
        comment), views and Constants aside."""
        seen, stack = set(), [self.producer[t] for t in outputs if t in self.producer and t not in self.fixed]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            data = self.inputs[n][:1] if self.op[n] in VIEWS else self.inputs[n]
            stack.extend(self.producer[t] for t in data
                         if t in self.producer and t not in materialized and t not in self.fixed)
        return frozenset(n for n in seen if self.op[n] not in NOT_IN_CONE)


def qualified(domain, op):
    """The op as ONNX Runtime names a kernel: "op" in the default domain, else "domain:op"."""
    return op if domain in ("", "ai.onnx") else f"{domain}:{op}"


def ort_nodes(model):
    """The runtime nodes of an ONNX model (ONNX Runtime's optimized graph): dicts {name, op, inputs,
    outputs}, op domain-qualified."""
    return [{"name": n.name, "op": qualified(n.domain, n.op_type), "inputs": list(n.input), "outputs": list(n.output)}
            for n in model.graph.node]


def fuseplan_nodes(report):
    """The runtime nodes of fuseplan's `report -f json` document ("ops": op, domain, inputs,
    outputs, from), op domain-qualified, with fuseplan's own provenance as "from"."""
    return [{"name": o["name"], "op": qualified(o.get("domain", ""), o["op"]), "inputs": o.get("inputs", []),
             "outputs": o.get("outputs", []), "from": o.get("from")} for o in report["ops"]]


Cluster = collections.namedtuple("Cluster", "nodes ops outputs cone")


def clusters(orig, nodes, graph_inputs=()):
    """The clusters of runtime nodes (see the module comment) of one runtime graph of orig, those
    of views alone aside: [Cluster(node indexes, Counter of ops but views, original outputs, cone)].
    A cluster of an empty cone (a conversion a pass added: a reorder, a transpose) joins the cluster
    that writes its input, else one that reads its output."""
    parent = list(range(len(nodes)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    producer = {t: i for i, n in enumerate(nodes) for t in n["outputs"] if t}
    readers = collections.defaultdict(list)
    materialized = set(graph_inputs)
    for i, n in enumerate(nodes):
        materialized.update(t for t in n["inputs"] + n["outputs"] if t)
        for t in n["inputs"]:
            readers[t].append(i)
            if t and t not in orig.tensors and t in producer:
                parent[find(i)] = find(producer[t])
    for c in grouped(orig, nodes, find, materialized):
        if c.cone:
            continue
        ins = [producer[t] for i in c.nodes for t in nodes[i]["inputs"] if t in producer and find(producer[t]) != find(i)]
        outs = [r for i in c.nodes for t in nodes[i]["outputs"] for r in readers[t] if find(r) != find(i)]
        if ins or outs:
            parent[find(c.nodes[0])] = find((ins or outs)[0])
    return grouped(orig, nodes, find, materialized)


def grouped(orig, nodes, find, materialized):
    """The clusters of nodes by find, those of views alone aside."""
    groups = collections.defaultdict(list)
    for i in range(len(nodes)):
        groups[find(i)].append(i)
    out = []
    for members in groups.values():
        ops = collections.Counter(nodes[i]["op"] for i in members
                                  if nodes[i]["op"].split(":")[-1] not in VIEWS and nodes[i]["op"] not in CONVERSIONS)
        if not ops:
            continue
        outs = frozenset(t for i in members for t in nodes[i]["outputs"] if t in orig.tensors)
        out.append(Cluster(tuple(members), ops, outs, orig.cone(outs, materialized)))
    return out


def components(a, b):
    """The linked components (see the module comment) of clusters a and b: [(a's, b's)]."""
    items = [("a", i) for i in range(len(a))] + [("b", i) for i in range(len(b))]
    side = {"a": a, "b": b}
    parent = {x: x for x in items}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    def union(x, y):
        parent[find(x)] = find(y)

    writer = {s: {t: i for i, c in enumerate(side[s]) for t in c.outputs} for s in side}
    linked = set()
    for s, o in (("a", "b"), ("b", "a")):
        for i, c in enumerate(side[s]):
            for t in c.outputs:
                if t in writer[o]:
                    union((s, i), (o, writer[o][t]))
                    linked.add((s, i))
    for s, o in (("a", "b"), ("b", "a")):
        for i, c in enumerate(side[s]):
            if (s, i) not in linked:
                for j, d in enumerate(side[o]):
                    if c.cone & d.cone:
                        union((s, i), (o, j))
    comp = collections.defaultdict(lambda: ([], []))
    for s, i in items:
        comp[find((s, i))][0 if s == "a" else 1].append(side[s][i])
    return list(comp.values())


def verdict(ca, cb):
    """The kind of one component (see the module comment)."""
    if not ca or not cb:
        return "only"
    ops_a, ops_b = sum((c.ops for c in ca), collections.Counter()), sum((c.ops for c in cb), collections.Counter())
    cone_a, cone_b = frozenset().union(*(c.cone for c in ca)), frozenset().union(*(c.cone for c in cb))
    if len(ca) > 1 and len(cb) > 1:
        return "split"
    if len(ca) > 1 or len(cb) > 1:
        single = ca[0] if len(ca) == 1 else cb[0]
        if len(single.nodes) == 1:
            return "split"
    if ops_a != ops_b:
        return "ops"
    if cone_a != cone_b:
        return "cone"
    one = len(ca) == len(cb) == 1 and len(ca[0].nodes) == len(cb[0].nodes) == 1
    return "node" if one else "cluster"


def describe(ca, cb):
    """One line naming a component's two sides: ops and cone of each."""
    def side(cs):
        ops = sum((c.ops for c in cs), collections.Counter())
        cone = sorted(frozenset().union(*(c.cone for c in cs)))
        return "%s from %s" % ("+".join(f"{k}x{v}" if v > 1 else k for k, v in sorted(ops.items())) or "-", cone)
    return f"{side(ca)} | {side(cb)}"


def compare(orig, a_nodes, b_nodes, graph_inputs=()):
    """The components of two runtime graphs of orig: [(kind, line)] (kind as verdict). An original
    node in a cone of one graph and in none of the other (a no-op both drop, whose tensor one runtime
    names after it and the other after its input: a Dropout before a view) is compared in neither."""
    ca, cb = clusters(orig, a_nodes, graph_inputs), clusters(orig, b_nodes, graph_inputs)
    one_sided = frozenset().union(*(c.cone for c in ca)) ^ frozenset().union(*(c.cone for c in cb))
    ca, cb = [c._replace(cone=c.cone - one_sided) for c in ca], [c._replace(cone=c.cone - one_sided) for c in cb]
    return [(verdict(x, y), describe(x, y)) for x, y in components(ca, cb)]


def eliminated(report):
    """The nodes fuseplan's `report -f json` document says a rule eliminated (applied fusions of no
    fused op): they go into no runtime node's own provenance, while a cone holds them."""
    return {f["anchor"] for f in report.get("fusions", []) if f["applied"] and f["fused_op"] is None}


def own_mismatches(orig, nodes, graph_inputs=(), gone=frozenset()):
    """Of runtime nodes carrying their own provenance ("from", as fuseplan's), those alone in their
    cluster whose "from" (views, Constants and nodes of fixed outputs aside) is not the cone derived
    from tensors, the nodes `gone` (eliminated) aside: [(name, from, cone)]."""
    out = []
    for c in clusters(orig, nodes, graph_inputs):
        if len(c.nodes) != 1:
            continue
        n = nodes[c.nodes[0]]
        if n.get("from") is None:
            continue
        own = frozenset(x for x in n["from"] if orig.op.get(x) not in NOT_IN_CONE and
                        not all(t in orig.fixed for t in orig.outputs.get(x, [])))
        if own != c.cone - (gone - own):
            out.append((n["name"], sorted(own), sorted(c.cone)))
    return out
