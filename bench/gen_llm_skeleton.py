#!/usr/bin/python3
"""gen_llm_skeleton.py - weight-free ONNX skeletons of three published decoder LLMs for `make bench`.

  /usr/bin/python3 bench/gen_llm_skeleton.py OUT_DIR [--layers N] [--only NAME ...]

Writes OUT_DIR/llama2_7b.onnx, llama3_8b.onnx and qwen2_7b.onnx: the graphs of Llama-2-7B, Llama-3-8B
and Qwen2-7B (their Hugging Face config.json: layers, heads, KV heads, hidden, intermediate, vocab,
untied lm_head, Qwen2's q/k/v biases) in the layout of a Hugging Face Optimum decoder-with-past
export, every tensor float16:

  inputs   input_ids [batch_size, sequence_length] int64,
           attention_mask [batch_size, "past_sequence_length + sequence_length"] int64,
           position_ids [batch_size, sequence_length] int64,
           past_key_values.{i}.key / .value [batch_size, Hkv, past_sequence_length, 128]
  outputs  logits [batch_size, sequence_length, vocab],
           present.{i}.key / .value [batch_size, Hkv, "past_sequence_length + sequence_length", 128]

Per layer: RMSNorm decomposed as transformers writes it (Cast to float32, Pow 2, ReduceMean on the
last axis, Add eps, Sqrt, Reciprocal, Mul, Cast back, Mul weight); q/k/v MatMuls with weights
[hidden, out] (+ bias Add for Qwen2); Reshape to [B,S,H,d] and Transpose to BNSH; rotary embeddings
(cos/sin tables [max_position_embeddings, d] gathered once by position_ids; rotate_half as
Slice/Neg/Concat; Mul, Add); Concat(past, new, axis=2) -> present.{i}.*; repeat_kv for GQA
(Unsqueeze, Expand, Reshape to Hq heads); MatMul Q K^T, Div by sqrt(d), Add of an additive mask
[B,1,1,T] built once from attention_mask (Cast, Sub from 1, Mul by the fp16 minimum), Softmax,
MatMul V, Transpose + Reshape, o_proj, residual Add; MLP gate/up MatMuls, SiLU as Sigmoid * x, Mul,
down MatMul, residual Add. The embedding Gather comes first; final RMSNorm and lm_head last.

Weight-free: every initializer of more than SMALL elements (weights, norms, biases, cos/sin) is
declared as ONNX external data (data_location EXTERNAL, location "weights.bin", offset and length
packed one after the other) and weights.bin is never written: fuseplan reads no weights. Shape
constants and scalars stay inline. The parameter count (embedding + layers + final norm + lm_head,
not cos/sin) is asserted against the published figures, and onnx.checker checks every model
(without full_check, beside an empty placeholder weights.bin: the checker stat()s the file). A model file is a few hundred KB.
"""
import argparse
import math
import os
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

OPSET = 14     # Optimum's default opset for Llama and Qwen2 exports
SMALL = 16     # initializers with more elements than this are external data
HEAD_DIM = 128

# Hugging Face config.json of each model; params = the published parameter count
# (/work/shared/ref/llm_memory_facts.md section 8.1).
CONFIGS = {
    "llama2_7b": dict(hf="meta-llama/Llama-2-7b-hf", layers=32, heads=32, kv_heads=32, hidden=4096,
                      ffn=11008, vocab=32000, tied=False, qkv_bias=False, eps=1e-5, rope_theta=10000.0,
                      max_pos=4096, params=6_738_415_616),
    "llama3_8b": dict(hf="meta-llama/Meta-Llama-3-8B", layers=32, heads=32, kv_heads=8, hidden=4096,
                      ffn=14336, vocab=128256, tied=False, qkv_bias=False, eps=1e-5, rope_theta=500000.0,
                      max_pos=8192, params=8_030_261_248),
    "qwen2_7b": dict(hf="Qwen/Qwen2-7B", layers=28, heads=28, kv_heads=4, hidden=3584,
                     ffn=18944, vocab=152064, tied=False, qkv_bias=True, eps=1e-6, rope_theta=1000000.0,
                     max_pos=131072, params=7_615_616_512),
}


def param_count(c, layers=None):
    """Parameters from the config alone: embedding + layers + final norm + lm_head (no cos/sin)."""
    L = c["layers"] if layers is None else layers
    h, d, ff = c["hidden"], HEAD_DIM, c["ffn"]
    q, kv = c["heads"] * d, c["kv_heads"] * d
    layer = h * q + 2 * h * kv + q * h + 3 * h * ff + 2 * h
    if c["qkv_bias"]:
        layer += q + 2 * kv
    emb = c["vocab"] * h
    return emb + L * layer + h + (0 if c["tied"] else emb)


class Skeleton:
    """Nodes and initializers of one model; big initializers become external data, packed in order."""

    def __init__(self, name):
        self.name = name
        self.nodes, self.inits = [], []
        self.offset = 0          # next offset in the (absent) weights.bin
        self.params = 0          # elements of the model's parameters (not cos/sin, not constants)
        self.n_external = 0
        self.consts = {}

    def external(self, name, shape, dtype=TensorProto.FLOAT16, param=True):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(shape)
        n = math.prod(shape)
        assert n > SMALL, name
        length = n * {TensorProto.FLOAT16: 2, TensorProto.FLOAT: 4}[dtype]
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(self.offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += length
        self.inits.append(t)
        self.n_external += 1
        if param:
            self.params += n
        return name

    def const(self, name, dtype, dims, values):
        """An inline constant (shape, axes, scalar), made once and shared by every layer."""
        if name not in self.consts:
            assert math.prod(dims) <= SMALL, name
            self.inits.append(helper.make_tensor(name, dtype, dims, values))
            self.consts[name] = name
        return name

    def i64(self, name, values):
        return self.const(name, TensorProto.INT64, [len(values)], values)

    def scalar(self, name, value, dtype=TensorProto.FLOAT16):
        return self.const(name, dtype, [], [value])

    def node(self, op, inputs, name, outputs=None, **attrs):
        outs = outputs or [name + "_output_0"]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0]


def rms_norm(b, x, hidden, eps, prefix):
    """transformers' LlamaRMSNorm / Qwen2RMSNorm: in float32, then back to float16 and the weight."""
    w = b.external(f"{prefix}.weight", [hidden])
    x32 = b.node("Cast", [x], f"/{prefix}/Cast", to=TensorProto.FLOAT)
    sq = b.node("Pow", [x32, b.scalar("const_two_f32", 2.0, TensorProto.FLOAT)], f"/{prefix}/Pow")
    var = b.node("ReduceMean", [sq], f"/{prefix}/ReduceMean", axes=[-1], keepdims=1)
    var = b.node("Add", [var, b.scalar(f"const_eps_{eps:g}", eps, TensorProto.FLOAT)], f"/{prefix}/Add")
    rs = b.node("Reciprocal", [b.node("Sqrt", [var], f"/{prefix}/Sqrt")], f"/{prefix}/Reciprocal")
    y = b.node("Mul", [x32, rs], f"/{prefix}/Mul")
    y = b.node("Cast", [y], f"/{prefix}/Cast_1", to=TensorProto.FLOAT16)
    return b.node("Mul", [w, y], f"/{prefix}/Mul_1")


def rotate_half(b, x, prefix):
    half = HEAD_DIM // 2
    axes = b.i64("const_axis_3", [3])
    x1 = b.node("Slice", [x, b.i64("const_zero", [0]), b.i64("const_half", [half]), axes], f"{prefix}/Slice")
    x2 = b.node("Slice", [x, b.i64("const_half", [half]), b.i64("const_int64_max", [2**63 - 1]), axes],
                f"{prefix}/Slice_1")
    return b.node("Concat", [b.node("Neg", [x2], f"{prefix}/Neg"), x1], f"{prefix}/Concat", axis=-1)


def rotary(b, x, cos, sin, prefix):
    """x * cos + rotate_half(x) * sin on a BNSH tensor; cos/sin are [B, 1, S, d]."""
    a = b.node("Mul", [x, cos], f"{prefix}/Mul")
    r = b.node("Mul", [rotate_half(b, x, prefix), sin], f"{prefix}/Mul_1")
    return b.node("Add", [a, r], f"{prefix}/Add")


def layer(b, c, x, i, cos, sin, mask, presents):
    p = f"model.layers.{i}"
    h, d, H, Hkv, ff = c["hidden"], HEAD_DIM, c["heads"], c["kv_heads"], c["ffn"]
    t = rms_norm(b, x, h, c["eps"], f"{p}/input_layernorm")

    def proj(n, dout):
        y = b.node("MatMul", [t, b.external(f"{p}.self_attn.{n}_proj.weight", [h, dout])],
                   f"/{p}/self_attn/{n}_proj/MatMul")
        if c["qkv_bias"]:
            y = b.node("Add", [b.external(f"{p}.self_attn.{n}_proj.bias", [dout]), y], f"/{p}/self_attn/{n}_proj/Add")
        return y

    def heads(y, n, nh):
        r = b.node("Reshape", [y, b.i64(f"const_shape_{nh}_heads", [0, 0, nh, d])], f"/{p}/self_attn/{n}/Reshape")
        return b.node("Transpose", [r], f"/{p}/self_attn/{n}/Transpose", perm=[0, 2, 1, 3])

    q = rotary(b, heads(proj("q", H * d), "q", H), cos, sin, f"/{p}/self_attn/q_rotary")
    k = rotary(b, heads(proj("k", Hkv * d), "k", Hkv), cos, sin, f"/{p}/self_attn/k_rotary")
    v = heads(proj("v", Hkv * d), "v", Hkv)
    kv = []
    for n, new in (("key", k), ("value", v)):
        present = f"present.{i}.{n}"
        b.node("Concat", [f"past_key_values.{i}.{n}", new], f"/{p}/self_attn/Concat_{n}", outputs=[present], axis=2)
        presents.append(present)
        if H != Hkv:  # repeat_kv: [B, Hkv, T, d] -> [B, Hkv, H/Hkv, T, d] -> [B, H, T, d]
            u = b.node("Unsqueeze", [present, b.i64("const_axis_2", [2])], f"/{p}/self_attn/repeat_{n}/Unsqueeze")
            e = b.node("Expand", [u, b.i64(f"const_expand_{H // Hkv}", [1, 1, H // Hkv, 1, 1])],
                       f"/{p}/self_attn/repeat_{n}/Expand")
            present = b.node("Reshape", [e, b.i64(f"const_shape_{H}_heads_t", [0, H, -1, d])],
                             f"/{p}/self_attn/repeat_{n}/Reshape")
        kv.append(present)
    kt = b.node("Transpose", [kv[0]], f"/{p}/self_attn/Transpose_k", perm=[0, 1, 3, 2])
    s = b.node("MatMul", [q, kt], f"/{p}/self_attn/MatMul")
    s = b.node("Div", [s, b.scalar("const_sqrt_head_dim", math.sqrt(d))], f"/{p}/self_attn/Div")
    s = b.node("Add", [s, mask], f"/{p}/self_attn/Add_mask")
    a = b.node("Softmax", [s], f"/{p}/self_attn/Softmax", axis=-1)
    o = b.node("MatMul", [a, kv[1]], f"/{p}/self_attn/MatMul_1")
    o = b.node("Transpose", [o], f"/{p}/self_attn/Transpose_out", perm=[0, 2, 1, 3])
    o = b.node("Reshape", [o, b.i64("const_shape_hidden", [0, 0, H * d])], f"/{p}/self_attn/Reshape_out")
    o = b.node("MatMul", [o, b.external(f"{p}.self_attn.o_proj.weight", [H * d, h])], f"/{p}/self_attn/o_proj/MatMul")
    x = b.node("Add", [x, o], f"/{p}/Add")
    t = rms_norm(b, x, h, c["eps"], f"{p}/post_attention_layernorm")
    gate = b.node("MatMul", [t, b.external(f"{p}.mlp.gate_proj.weight", [h, ff])], f"/{p}/mlp/gate_proj/MatMul")
    up = b.node("MatMul", [t, b.external(f"{p}.mlp.up_proj.weight", [h, ff])], f"/{p}/mlp/up_proj/MatMul")
    act = b.node("Mul", [gate, b.node("Sigmoid", [gate], f"/{p}/mlp/act_fn/Sigmoid")], f"/{p}/mlp/act_fn/Mul")
    down = b.node("MatMul", [b.node("Mul", [act, up], f"/{p}/mlp/Mul"),
                             b.external(f"{p}.mlp.down_proj.weight", [ff, h])], f"/{p}/mlp/down_proj/MatMul")
    return b.node("Add", [x, down], f"/{p}/Add_1")


def build(name, c, layers):
    b = Skeleton(name)
    h, Hkv, d, V = c["hidden"], c["kv_heads"], HEAD_DIM, c["vocab"]
    x = b.node("Gather", [b.external("model.embed_tokens.weight", [V, h]), "input_ids"],
               "/model/embed_tokens/Gather", axis=0)
    # rotary tables, gathered once by position_ids: [B, S, d] -> [B, 1, S, d]
    cos_sin = []
    for n in ("cos", "sin"):
        tab = b.external(f"model.rotary_emb.{n}_cached", [c["max_pos"], d], param=False)
        g = b.node("Gather", [tab, "position_ids"], f"/model/rotary_emb/Gather_{n}", axis=0)
        cos_sin.append(b.node("Unsqueeze", [g, b.i64("const_axis_1", [1])], f"/model/rotary_emb/Unsqueeze_{n}"))
    # additive mask [B, 1, 1, T] from attention_mask: (1 - m) * fp16 min
    m = b.node("Cast", [b.node("Unsqueeze", ["attention_mask", b.i64("const_axes_1_2", [1, 2])],
                               "/model/mask/Unsqueeze")], "/model/mask/Cast", to=TensorProto.FLOAT16)
    m = b.node("Sub", [b.scalar("const_one", 1.0), m], "/model/mask/Sub")
    mask = b.node("Mul", [m, b.scalar("const_fp16_min", -65504.0)], "/model/mask/Mul")
    presents = []
    for i in range(layers):
        x = layer(b, c, x, i, cos_sin[0], cos_sin[1], mask, presents)
    x = rms_norm(b, x, h, c["eps"], "model/norm")
    assert not c["tied"], name  # all three configs have tie_word_embeddings false
    b.node("MatMul", [x, b.external("lm_head.weight", [h, V])], "/lm_head/MatMul", outputs=["logits"])

    total = "past_sequence_length + sequence_length"
    f16, i64 = TensorProto.FLOAT16, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", i64, ["batch_size", total]),
              helper.make_tensor_value_info("position_ids", i64, ["batch_size", "sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", f16, ["batch_size", "sequence_length", V])]
    for pr in presents:
        inputs.append(helper.make_tensor_value_info(pr.replace("present.", "past_key_values."), f16,
                                                    ["batch_size", Hkv, "past_sequence_length", d]))
        outputs.append(helper.make_tensor_value_info(pr, f16, ["batch_size", Hkv, total, d]))
    graph = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    model = helper.make_model(graph, producer_name="fuseplan-bench", producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    model.doc_string = (f"Weight-free skeleton of {c['hf']} (bench/gen_llm_skeleton.py): every initializer "
                        f"of more than {SMALL} elements is external data in weights.bin, which is not written.")
    return model, b


def check_external(model, total):
    """Every external tensor: location weights.bin, length = its bytes, packed without gaps or overlap."""
    end = 0
    for t in model.graph.initializer:
        if t.data_location != TensorProto.EXTERNAL:
            assert math.prod(t.dims) <= SMALL, t.name
            continue
        e = {x.key: x.value for x in t.external_data}
        size = math.prod(t.dims) * {TensorProto.FLOAT16: 2, TensorProto.FLOAT: 4}[t.data_type]
        assert e["location"] == "weights.bin" and int(e["length"]) == size and int(e["offset"]) == end, t.name
        assert not t.raw_data, t.name
        end += size
    assert end == total


def check(data, name):
    """onnx.checker on the model without full_check (that would read the weights); the checker also
    stat()s each external file, so it runs on a copy beside an empty placeholder weights.bin."""
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "weights.bin"), "wb").close()
        path = os.path.join(d, name + ".onnx")
        with open(path, "wb") as f:
            f.write(data)
        onnx.checker.check_model(path, full_check=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--layers", type=int, help="decoder layers (default: the config's)")
    ap.add_argument("--only", action="append", choices=sorted(CONFIGS), help="make only this model (repeatable)")
    a = ap.parse_args()
    if not hasattr(onnx, "helper"):
        sys.exit("gen_llm_skeleton: needs Debian's python3-onnx: run with /usr/bin/python3")
    os.makedirs(a.out_dir, exist_ok=True)
    for name in a.only or CONFIGS:
        c = CONFIGS[name]
        layers = a.layers or c["layers"]
        model, b = build(name, c, layers)
        expect = param_count(c, layers)
        assert b.params == expect, f"{name}: graph has {b.params} parameters, the config gives {expect}"
        if layers == c["layers"]:
            assert b.params == c["params"], f"{name}: {b.params} parameters, published {c['params']}"
        check_external(model, b.offset)
        data = model.SerializeToString()
        check(data, name)
        path = os.path.join(a.out_dir, name + ".onnx")
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        print(f"{path}: {layers} layers, {len(b.nodes)} nodes, {b.params:,} parameters, "
              f"{b.n_external} external tensors ({b.offset:,} bytes in weights.bin, not written), "
              f"{os.path.getsize(path):,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
