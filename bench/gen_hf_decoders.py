#!/usr/bin/python3
"""gen_hf_decoders.py - tiny Llama-style decoders exported by torch.onnx.export (opset 17) the way a
Hugging Face-like module writes them, in several writings, for bench/hf_decoders_vs_ort.py and the
fusion regression models of tests/data/fuse/hf_decoders.

  /usr/bin/python3 bench/gen_hf_decoders.py [--tiny | --kv] OUT_DIR [NAME...]

Every model: input_ids [batch, seq], a mask over [batch, 1, seq, past + seq], position_ids
[batch, seq], past_key_values.N.key / .value [batch, kv_heads, past, head_dim] -> logits and
present.N.key / .value; 2 layers, hidden 64, 4 heads of 16, SiLU-gated MLP of 128, vocabulary 128.
The writings (NAME = hf_<attention>_<norm>_<mask>_<silu>_<softmax>):

  attention  mha: 4 KV heads; gqa: 2 KV heads repeated by transformers' repeat_kv
             (x[:, :, None].expand(...).reshape(...)). Not x.repeat_interleave(n, 1): torch 1.13
             exports it with dynamic axes as a Reshape to [0, -1, 0, D] that swaps heads and
             positions (bench/gen_torch_models.py's pt_llama_decoder has it, static)
  norm       rsqrt:  x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
             cast:   the same between x.to(torch.float32) and .to(input dtype) (transformers'
                     LlamaRMSNorm)
             div:    x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
             xx:     x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
  mask       add: an additive float mask (attention_mask, 0 or a large negative)
             bool: a boolean mask applied by torch.where(mask, scores, finfo.min)
             2d: a [batch, past + seq] padding mask of ones, made additive and causal inside the
                 model as transformers 4.3x's _prepare_decoder_attention_mask does
  silu       silu: F.silu(gate(x)) * up(x); sig: gate * torch.sigmoid(gate) * up(x)
  softmax    hf: torch.softmax(w, -1, dtype=torch.float32).to(q.dtype) (two no-op Casts after it);
             plain: torch.softmax(w, -1)

With --tiny (the regression models of tests/data/fuse/hf_decoders, 20 to 30 KB each): 1 layer,
hidden 16, 2 heads of 8 (gqa: 1 KV head), MLP of 32, vocabulary 16, 16 positions, short names.
With --kv (the headroom regression model of tests/data/decoder, 50 KB): the --tiny sizes but 2
layers of 2 heads of 32, named NAME_kv: the KV cache is then most of a sequence's bytes at a long
context, as in a real decoder (the attention scores of one layer against the cache of every layer:
heads / (layers * kv_heads * head_dim), 1/64 here, 1/8 in the --tiny ones).
torch 1.13 cannot trace a float16 Linear on the CPU, so every writing is float32.

Needs Debian's python3-torch (1.13); exit 2 without it. A model OUT_DIR already holds is not
exported again.
"""
import math
import os
import sys
import warnings

LAYERS, HIDDEN, HEADS, HEAD_DIM, FFN, VOCAB, MAX_POS = 2, 64, 4, 16, 128, 128, 256
TINY = dict(LAYERS=1, HIDDEN=16, HEADS=2, HEAD_DIM=8, FFN=32, VOCAB=16, MAX_POS=16)
KV = dict(TINY, LAYERS=2, HEAD_DIM=32)

# Every writing: (attention, norm, mask, silu, softmax). The product of all would be 96 models; these
# cover each choice against the others at least once.
WRITINGS = (
    ("mha", "rsqrt", "add", "silu", "hf"),
    ("gqa", "rsqrt", "add", "silu", "hf"),
    ("mha", "cast", "add", "silu", "plain"),
    ("gqa", "cast", "bool", "silu", "hf"),
    ("mha", "div", "bool", "sig", "plain"),
    ("gqa", "div", "add", "sig", "hf"),
    ("mha", "xx", "add", "sig", "hf"),
    ("gqa", "xx", "bool", "silu", "plain"),
    ("mha", "rsqrt", "bool", "silu", "hf"),
    ("mha", "rsqrt", "add", "silu", "plain"),
    ("gqa", "rsqrt", "add", "sig", "plain"),
    ("gqa", "cast", "2d", "silu", "hf"),
    ("mha", "rsqrt", "2d", "silu", "plain"),
)


def name_of(w):
    return "hf_" + "_".join(w)


NAMES = tuple(name_of(w) for w in WRITINGS)


def modules(torch, attention, norm, mask, silu, softmax):
    """The decoder class of one writing."""
    nn, F = torch.nn, torch.nn.functional
    kv_heads = HEADS if attention == "mha" else HEADS // 2

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(HIDDEN) + 0.01 * torch.randn(HIDDEN))

        def forward(self, x):
            dtype = x.dtype
            if norm == "cast":
                x = x.to(torch.float32)
            sq = x * x if norm == "xx" else x.pow(2)
            var = sq.mean(-1, keepdim=True) + 1e-6
            y = x / torch.sqrt(var) if norm == "div" else x * torch.rsqrt(var)
            return self.weight * y.to(dtype)

    def decoder_mask(mask2d, s, past, dtype):
        """transformers' (4.3x) _prepare_decoder_attention_mask: causal + padding, additive."""
        b, mn = mask2d.shape[0], torch.finfo(dtype).min
        causal = torch.full((s, s), mn)
        cond = torch.arange(causal.size(-1))
        causal = causal.masked_fill(cond < (cond + 1).view(causal.size(-1), 1), 0).to(dtype)
        causal = torch.cat([torch.zeros(s, past, dtype=dtype), causal], dim=-1)
        causal = causal[None, None, :, :].expand(b, 1, s, s + past)
        inverted = 1.0 - mask2d[:, None, None, :].expand(b, 1, s, s + past).to(dtype)
        return inverted.masked_fill(inverted.to(torch.bool), mn) + causal

    def rotate_half(x):
        a, b = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat([-b, a], dim=-1)

    def repeat_kv(x, n_rep):
        b, h, s, d = x.shape
        if n_rep == 1:
            return x
        return x[:, :, None, :, :].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
            self.k_proj = nn.Linear(HIDDEN, kv_heads * HEAD_DIM, bias=False)
            self.v_proj = nn.Linear(HIDDEN, kv_heads * HEAD_DIM, bias=False)
            self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

        def forward(self, x, m, cos, sin, past_k, past_v):
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
            k = self.k_proj(x).view(b, s, kv_heads, HEAD_DIM).transpose(1, 2)
            v = self.v_proj(x).view(b, s, kv_heads, HEAD_DIM).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
            present = (k, v)
            k, v = repeat_kv(k, HEADS // kv_heads), repeat_kv(v, HEADS // kv_heads)
            w = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)
            w = w + m if mask != "bool" else torch.where(m, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
            if softmax == "hf":
                w = torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            else:
                w = torch.softmax(w, dim=-1)
            o = (w @ v).transpose(1, 2).reshape(b, s, HEADS * HEAD_DIM)
            return self.o_proj(o), present

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(HIDDEN, FFN, bias=False)
            self.up_proj = nn.Linear(HIDDEN, FFN, bias=False)
            self.down_proj = nn.Linear(FFN, HIDDEN, bias=False)

        def forward(self, x):
            g = self.gate_proj(x)
            g = F.silu(g) if silu == "silu" else g * torch.sigmoid(g)
            return self.down_proj(g * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm, self.post_attention_layernorm = RMSNorm(), RMSNorm()
            self.self_attn, self.mlp = Attention(), MLP()

        def forward(self, x, m, cos, sin, past_k, past_v):
            a, present = self.self_attn(self.input_layernorm(x), m, cos, sin, past_k, past_v)
            x = x + a
            return x + self.mlp(self.post_attention_layernorm(x)), present

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
            self.norm = RMSNorm()
            self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
            inv = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
            freqs = torch.outer(torch.arange(MAX_POS).float(), inv)
            emb = torch.cat([freqs, freqs], dim=-1)
            self.register_buffer("cos_cached", emb.cos())
            self.register_buffer("sin_cached", emb.sin())

        def forward(self, input_ids, attention_mask, position_ids, *past):
            x = self.embed_tokens(input_ids)
            if mask == "2d":
                attention_mask = decoder_mask(attention_mask, input_ids.shape[1], past[0].shape[2], x.dtype)
            cos = self.cos_cached[position_ids].unsqueeze(1).to(x.dtype)
            sin = self.sin_cached[position_ids].unsqueeze(1).to(x.dtype)
            presents = []
            for i, layer in enumerate(self.layers):
                x, p = layer(x, attention_mask, cos, sin, past[2 * i], past[2 * i + 1])
                presents += list(p)
            return (self.lm_head(self.norm(x)), *presents)

    return Decoder(), kv_heads


def export(torch, w, path, tiny):
    torch.manual_seed(0)
    model, kv_heads = modules(torch, *w)
    mask = w[2]
    fdt = torch.float32
    model = model.eval()
    b, s, past = 1, 3, 5
    ids = torch.randint(0, VOCAB, (b, s))
    causal = torch.ones(s, past + s, dtype=torch.bool).tril(past)[None, None]
    m = causal if mask == "bool" else torch.where(causal, 0.0, torch.finfo(fdt).min).to(fdt)
    if mask == "2d":
        m = torch.ones(b, past + s, dtype=torch.int64)
    pos = torch.arange(past, past + s)[None]
    pkv = [torch.randn(b, kv_heads, past, HEAD_DIM).to(fdt) for _ in range(2 * LAYERS)]
    kv_names = [f"past_key_values.{i}.{t}" for i in range(LAYERS) for t in ("key", "value")]
    out_names = ["logits"] + [f"present.{i}.{t}" for i in range(LAYERS) for t in ("key", "value")]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"} if mask == "2d" else
            {0: "batch_size", 2: "sequence_length", 3: "total_sequence_length"},
            "position_ids": {0: "batch_size", 1: "sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in kv_names:
        axes[n] = {0: "batch_size", 2: "past_sequence_length"}
    for n in out_names[1:]:
        axes[n] = {0: "batch_size", 2: "total_sequence_length"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, m, pos, *pkv), path, opset_version=17, do_constant_folding=True,
                          input_names=["input_ids", "attention_mask", "position_ids"] + kv_names,
                          output_names=out_names, dynamic_axes=axes)
    import onnx
    saved = onnx.load(path)
    for n in saved.graph.node:  # the exporter's notes: most of a model's bytes
        n.ClearField("doc_string")
    if tiny:
        shorten_names(saved.graph)
    onnx.save(saved, path)


def shorten_names(g):
    """Node names n0, n1, ... and the values between nodes v0, v1, ...: the exporter's long names
    are most of a tiny model's bytes (inputs, outputs and weights keep theirs)."""
    keep = {v.name for v in list(g.input) + list(g.output) + list(g.initializer)}
    short = {}
    for i, n in enumerate(g.node):
        n.name = f"n{i}"
        for k, o in enumerate(n.output):
            if o and o not in keep:
                short[o] = n.output[k] = f"v{len(short)}"
        for k, x in enumerate(n.input):
            n.input[k] = short.get(x, x)


def main():
    if len(sys.argv) < 2 or sys.argv[1:] in (["--tiny"], ["--kv"]):
        sys.stderr.write(__doc__)
        return 2
    try:
        import torch
    except ImportError as e:
        sys.stderr.write(f"gen_hf_decoders: {e} (apt-get install python3-torch)\n")
        return 2
    warnings.filterwarnings("ignore")
    args = sys.argv[1:]
    tiny, suffix = args[0] in ("--tiny", "--kv"), "_kv" if args[0] == "--kv" else ""
    if tiny:
        globals().update(TINY if args[0] == "--tiny" else KV)
        args = args[1:]
    out, only = args[0], set(args[1:])
    os.makedirs(out, exist_ok=True)
    for w in WRITINGS:
        name = name_of(w)
        path = os.path.join(out, name + suffix + ".onnx")
        if (only and name not in only) or os.path.exists(path):
            continue
        export(torch, w, path, tiny)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
