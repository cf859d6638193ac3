#!/usr/bin/python3
"""train_decoder.py - a decoder's training memory: fuseplan's saved_activation_bytes on a Llama-style
export with a KV cache against what PyTorch saves training it as a full sequence.

  /usr/bin/python3 bench/train_decoder.py --fuseplan build/fuseplan --out bench/out/train \\
      [--batch 2] [--seq 128 ...]

The model (random weights, seed 0, float32, 2 layers, hidden 256, 8 heads, 2 KV heads, FFN 512,
vocabulary 1000) is written as Hugging Face's LlamaForCausalLM computes it: embedding, RMSNorm in
float32 (pow, mean, rsqrt), rotary embeddings (rotate_half), repeat_kv, a causal mask [S, T] added
to the attention mask [B, 1, 1, T], softmax, SiLU MLP, lm_head, the cross-entropy on the logits.
  export    with a KV cache, as Optimum's decoder-with-past: inputs input_ids [batch_size,
            sequence_length], attention_mask [batch_size, total_sequence_length],
            past_key_values.{i}.key/.value [batch_size, 2, past_sequence_length, 32]; outputs
            logits and present.{i}.key/.value (the past concatenated with the new tokens); opset 17
  PyTorch   one training forward at --batch and each --seq, without the cache (use_cache=False:
            no past, no present), and the loss, under torch.autograd.graph.saved_tensors_hooks:
            every tensor an op saves, counted once per storage (bench/train_memory.py's measure),
            parameters and buffers left out
  fuseplan  `train MODEL --batch B --seq S --autograd 1.13 --no-headroom -f json` (the release
            measured: torch 1.13's mean(dim) keeps its input): training.saved_activation_bytes
Prints one row per sequence length (error = fuseplan / PyTorch - 1) and writes
OUT/train_decoder.json. Exit status 0, 2 when torch or fuseplan is missing.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_memory import bench_args, fuseplan_saved, measure, tools  # noqa: E402

D, HEADS, KV, FFN, VOCAB, LAYERS = 256, 8, 2, 512, 1000, 2
DH = D // HEADS


def build(torch, layers=LAYERS):
    """The decoder of `layers` layers (forward(ids, mask, past) -> logits, presents) and its loss
    wrapper."""
    nn = torch.nn

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(D))

        def forward(self, x):
            h = x.to(torch.float32)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
            return self.weight * h.to(x.dtype)

    def rotate_half(x):
        return torch.cat((-x[..., DH // 2:], x[..., :DH // 2]), dim=-1)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k = nn.Linear(D, D, bias=False), nn.Linear(D, KV * DH, bias=False)
            self.v, self.o = nn.Linear(D, KV * DH, bias=False), nn.Linear(D, D, bias=False)
            self.gate, self.up = nn.Linear(D, FFN, bias=False), nn.Linear(D, FFN, bias=False)
            self.down = nn.Linear(FFN, D, bias=False)

        def forward(self, x, cos, sin, mask, past):
            x, present = self.attend(x, cos, sin, mask, past)
            return self.mlp(x), present

        def attend(self, x, cos, sin, mask, past):
            """The attention half: x + o(attention(n1(x))), and the present key and value."""
            b, s, _ = x.shape
            y = self.n1(x)
            q = self.q(y).view(b, s, HEADS, DH).transpose(1, 2)
            k = self.k(y).view(b, s, KV, DH).transpose(1, 2)
            v = self.v(y).view(b, s, KV, DH).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            if past is not None:
                k, v = torch.cat((past[0], k), dim=2), torch.cat((past[1], v), dim=2)
            present = (k, v)
            kr = k[:, :, None].expand(b, KV, HEADS // KV, k.shape[2], DH).reshape(b, HEADS, k.shape[2], DH)
            vr = v[:, :, None].expand(b, KV, HEADS // KV, v.shape[2], DH).reshape(b, HEADS, v.shape[2], DH)
            w = torch.softmax(q @ kr.transpose(2, 3) / math.sqrt(DH) + mask, dim=-1, dtype=torch.float32)
            a = (w.to(q.dtype) @ vr).transpose(1, 2).reshape(b, s, D)
            return x + self.o(a), present

        def mlp(self, x):
            """The MLP half: x + down(silu(gate(n2(x))) * up(n2(x)))."""
            y = self.n2(x)
            return x + self.down(nn.functional.silu(self.gate(y)) * self.up(y))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D)
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])
            self.norm = RMSNorm()
            self.lm_head = nn.Linear(D, VOCAB, bias=False)
            inv = 1.0 / (10000 ** (torch.arange(0, DH, 2).float() / DH))
            freqs = torch.outer(torch.arange(4096).float(), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos", emb.cos(), persistent=False)
            self.register_buffer("sin", emb.sin(), persistent=False)

        def forward(self, ids, attention_mask, *past):
            x, cos, sin, mask = self.prepare(ids, attention_mask)
            presents = []
            for n, layer in enumerate(self.layers):
                x, p = layer(x, cos, sin, mask, (past[2 * n], past[2 * n + 1]) if past else None)
                presents += p
            return (self.lm_head(self.norm(x)).float(), *presents)

        def prepare(self, ids, attention_mask):
            """The embedded tokens and what every layer reads: the rotary cos and sin, the mask."""
            s, t = ids.shape[1], attention_mask.shape[1]
            start = t - s
            cos, sin = self.cos[start:t][None, None], self.sin[start:t][None, None]
            i = torch.arange(s)[:, None] + start
            causal = (torch.arange(t)[None, :] > i).to(torch.float32) * -1e9
            mask = causal[None, None] + (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e9
            return self.embed(ids), cos, sin, mask

    class WithLoss(nn.Module):
        """A training step's forward as Hugging Face runs it with labels and use_cache=False."""

        def __init__(self, dec, labels):
            super().__init__()
            self.dec, self.labels = dec, labels

        def forward(self, ids):
            logits = self.dec(ids, torch.ones_like(ids))[0]
            return nn.functional.cross_entropy(logits.view(-1, VOCAB), self.labels.view(-1))

    return Decoder, WithLoss


def export(torch, dec, path):
    if os.path.exists(path):
        return
    b, s, p, layers = 1, 4, 3, len(dec.layers)
    ids = torch.randint(0, VOCAB, (b, s))
    past = [torch.randn(b, KV, p, DH) for _ in range(2 * layers)]
    names = [f"past_key_values.{n // 2}.{'value' if n % 2 else 'key'}" for n in range(2 * layers)]
    outs = ["logits"] + [n.replace("past_key_values", "present") for n in names]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    axes.update({n: {0: "batch_size", 2: "past_sequence_length"} for n in names})
    axes.update({n: {0: "batch_size", 2: "total_sequence_length"} for n in outs[1:]})
    tmp = path + ".tmp"
    torch.onnx.export(dec, (ids, torch.ones(b, s + p, dtype=torch.int64), *past), tmp, opset_version=17,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                      input_names=["input_ids", "attention_mask"] + names, output_names=outs, dynamic_axes=axes)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    bench_args(ap)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, action="append")
    a = ap.parse_args()
    mods = tools("train_decoder", a.fuseplan, "torch")
    if not mods:
        return 2
    torch = mods[0]
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    Decoder, WithLoss = build(torch)
    dec = Decoder()
    dec.train()
    path = os.path.join(a.out, "llama_kv_decoder.onnx")
    export(torch, dec, path)
    rows = []
    for seq in a.seq or [128, 512]:
        ids = torch.randint(0, VOCAB, (a.batch, seq))
        saved, storages = measure(torch, WithLoss(dec, torch.randint(0, VOCAB, (a.batch, seq))), ids)
        fp, err = fuseplan_saved(a.fuseplan, path, a.batch, "--seq", str(seq), "--autograd", "1.13")
        row = {"batch": a.batch, "seq": seq, "torch_bytes": saved, "torch_storages": storages, "error": err,
               "fuseplan_bytes": fp["saved_activation_bytes"] if fp else None}
        if fp:
            row["error_pct"] = 100.0 * (fp["saved_activation_bytes"] / saved - 1.0)
        rows.append(row)
        print(f"batch {a.batch} seq {seq}: torch {saved:,} ({storages} storages) fuseplan "
              f"{row['fuseplan_bytes'] if fp else err} {row.get('error_pct', float('nan')):+.2f}%")
    with open(os.path.join(a.out, "train_decoder.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main())
