"""The PyTorch twin of the train step `tpusim model --emit` writes.

What the emitted step computes (src/model/train_step.cc, gpt3_parts.cc), and
so what this twin computes, for a dense model (no mixture of experts):

  x      = embed[tokens] (+ positions[0:s] with learned positions)
  layer  h1 = norm(x, norm1[, norm1_bias]); q, k, v = h1 wq, h1 wk, h1 wv (+ biases)
         o  = causal softmax(q k^T / sqrt(head_dim)) v, kv heads shared by
              heads / kv_heads query heads; no rotary embedding: the step has
              none, its only positions are the learned table's
         x2 = x + o wo (+ wo_bias)
         h2 = norm(x2, norm2[, norm2_bias])   (h1 and no x2 with parallel_layers)
         y  = x2 + down(act(h2 gate) * (h2 up))   swiglu: silu; geglu: tanh gelu
              x2 + down(gelu(h2 up))              gelu: tanh gelu (JAX's default)
  head   logits = norm(y, final_norm[, final_norm_bias]) (embed^T if tied, else unembed)
  loss   mean over batch x seq of cross-entropy, in f32; no z-loss
  norm   rmsnorm: x rsqrt(mean(x^2) + 1e-5) g; layernorm the same of x - mean(x), + b
  AdamW  m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
         p -= lr (m / (1 - b1^step) / (sqrt(v / (1 - b2^step)) + eps) + wd p)
         lr 1e-4, b1 0.9, b2 0.95, eps 1e-8, wd 0.1 on every parameter (norms,
         biases and tables too); `step` is an input, the count of this step
         (1 for the first), not incremented by the program.

The program's parameters are (params..., m_params..., v_params..., step,
tokens, targets) and its results (params..., m..., v..., loss); parameters
stay f32 and per-layer ones are stacked [layers, ...]. With --dtype bf16 the
step converts every parameter to bf16 as it reads it and computes in bf16;
the logits widen to f32 for the loss, weight gradients come out of their
matmuls in f32, and flash attention computes exactly, rounding its output to
bf16. The twin in bf16 does the same with bf16 tensors, its attention core
in f32; its weight gradients round to bf16 before they widen (autograd's
cast), so bf16 results differ by bf16 rounding, not by the formula.

Not modelled: mixtures of experts, fp8/int8 matmuls (the twin refuses a
program whose parameters it does not know).

Used by bench/torch_pairs.py and tests/torch_twin_test.py; also a command:

  /usr/bin/python3 bench/torch_twin.py --toml m.toml --mlir step.mlir \
      --inputs DIR [--dtype f32] [--compare OUT_DIR]
"""

import argparse
import math
import os
import re
import sys
import time

import numpy as np

# tomllib is Python 3.11's; the system Python (/usr/bin/python3) is 3.11.
import tomllib

import torch
import torch.nn.functional as F

LAYER_PARAMS = {"norm1", "wq", "wk", "wv", "wo", "norm2", "gate", "up", "down"}
LAYER_PARAMS |= {name + "_bias" for name in LAYER_PARAMS}
GLOBAL_PARAMS = {"embed", "final_norm", "final_norm_bias", "unembed", "positions"}

# AdamW and the norms' epsilon as TrainStepOptions has them (train_step.h).
LR, BETA1, BETA2, EPS, WEIGHT_DECAY = 1e-4, 0.9, 0.95, 1e-8, 0.1
NORM_EPS = 1e-5


class Spec:
    """A model's [architecture] table as tpusim's models/*.toml spell it."""

    def __init__(self, path):
        with open(path, "rb") as f:
            arch = tomllib.load(f)["architecture"]
        self.layers = int(arch["layers"])
        self.d_model = int(arch["d_model"])
        self.heads = int(arch["heads"])
        self.kv_heads = int(arch["kv_heads"])
        self.head_dim = int(arch["head_dim"])
        self.d_ff = int(arch["d_ff"])
        self.vocab = int(arch["vocab"])
        self.mlp = arch.get("mlp", "swiglu")
        self.norm = arch.get("norm", "rmsnorm")
        self.bias = bool(arch.get("bias", False))
        self.tied = bool(arch.get("tied_embeddings", False))
        self.parallel = bool(arch.get("parallel_layers", False))
        self.positions = int(arch.get("position_embeddings", 0))
        if int(arch.get("experts", 1)) > 1:
            raise ValueError(f"{path}: the twin has no mixture of experts")


def signature(mlir_text):
    """@main's parameters in order: [(name, shape tuple, element type)]."""
    start = mlir_text.index("func.func public @main(")
    end = mlir_text.index("->", start)
    params = []
    for name, ty in re.findall(r"%(\w+): tensor<([^>]*)>", mlir_text[start:end]):
        parts = ty.split("x")
        params.append((name, tuple(int(p) for p in parts[:-1]), parts[-1]))
    return params


def make_inputs(spec, sig, seed=0, step=1, moments="zero"):
    """Inputs for the step's parameters `sig`, by name: weights N(0, 0.02),
    norm gains 1 + N(0, 0.1), biases and positions N(0, 0.02); tokens and
    targets uniform over the vocabulary; the optimizer's state by `moments`:

      "zero"    m and v zero: a first step. AdamW's update is then
                g / (|g| + eps), +-1 wherever |g| >> eps: a gradient near
                zero flips with its rounding, so updated parameters match
                only to ~lr;
      "grad"    m zero (the new m is 0.1 x the gradient: a gradient check),
                v uniform in [1e-7, 1e-6] (the update smooth in g);
      "random"  m N(0, 1e-3), v uniform in [0, 1e-6].
    """
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape, element in sig:
        base = name[2:] if name[:2] in ("m_", "v_") else name
        if name in ("tokens", "targets"):
            out[name] = rng.integers(0, spec.vocab, size=shape, dtype=np.int32)
        elif name == "step":
            out[name] = np.array(step, dtype=np.float32)
        elif name.startswith("m_"):
            out[name] = (np.zeros(shape, np.float32) if moments in ("zero", "grad") else
                         (rng.standard_normal(shape) * 1e-3).astype(np.float32))
        elif name.startswith("v_"):
            low = 1e-7 if moments == "grad" else 0.0
            out[name] = (np.zeros(shape, np.float32) if moments == "zero" else
                         rng.uniform(low, 1e-6, shape).astype(np.float32))
        elif base in ("norm1", "norm2", "final_norm"):
            out[name] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
        if element not in ("f32", "i32"):
            raise ValueError(f"parameter {name}: element type {element} (the twin takes f32)")
    return out


def write_inputs(arrays, sig, directory):
    """Writes each input as DIR/<i>_<name>.npy; returns the paths in order."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for i, (name, _, _) in enumerate(sig):
        path = os.path.join(directory, f"{i:03d}_{name}.npy")
        np.save(path, arrays[name])
        paths.append(path)
    return paths


def read_inputs(sig, directory):
    return {name: np.load(os.path.join(directory, f"{i:03d}_{name}.npy"))
            for i, (name, _, _) in enumerate(sig)}


class Twin:
    """The step in PyTorch: parameters as leaf tensors (per-layer stacks
    split into one tensor per layer, as an nn.Module holds them),
    torch.optim.AdamW with the step's hyperparameters, its state set from
    the given moments and step."""

    def __init__(self, spec, sig, dtype="f32"):
        self.spec, self.sig = spec, sig
        self.names = [n for n, _, _ in sig if n not in ("step", "tokens", "targets")]
        self.names = [n for n in self.names if not n.startswith(("m_", "v_"))]
        for n in self.names:
            if n not in LAYER_PARAMS and n not in GLOBAL_PARAMS:
                raise ValueError(f"the twin does not model parameter '{n}'")
        self.cdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]

    def load(self, arrays):
        """Parameters, moments, step and tokens from `arrays` (by name)."""
        L = self.spec.layers
        self.p = {}
        leaves = []
        for n in self.names:
            t = torch.from_numpy(np.array(arrays[n], np.float32))
            if n in LAYER_PARAMS:
                self.p[n] = [t[l].clone().requires_grad_(True) for l in range(L)]
                leaves += self.p[n]
            else:
                self.p[n] = t.clone().requires_grad_(True)
                leaves.append(self.p[n])
        self.opt = torch.optim.AdamW(leaves, lr=LR, betas=(BETA1, BETA2), eps=EPS,
                                     weight_decay=WEIGHT_DECAY)
        step = float(arrays["step"])
        for n in self.names:
            ps = self.p[n] if n in LAYER_PARAMS else [self.p[n]]
            ms = torch.from_numpy(np.array(arrays["m_" + n], np.float32))
            vs = torch.from_numpy(np.array(arrays["v_" + n], np.float32))
            if n not in LAYER_PARAMS:
                ms, vs = ms[None], vs[None]
            for l, leaf in enumerate(ps):
                # AdamW counts the step before using it: step - 1 taken.
                self.opt.state[leaf] = {"step": torch.tensor(step - 1),
                                        "exp_avg": ms[l].clone(),
                                        "exp_avg_sq": vs[l].clone()}
        self.tokens = torch.from_numpy(np.array(arrays["tokens"], np.int64))
        self.targets = torch.from_numpy(np.array(arrays["targets"], np.int64))

    # -- the model ---------------------------------------------------------

    def _c(self, t):
        return t if t is None or self.cdt == torch.float32 else t.to(self.cdt)

    def _get(self, name, layer=None):
        if name not in self.p:
            return None
        return self._c(self.p[name][layer] if layer is not None else self.p[name])

    def _norm(self, x, g, b):
        if self.spec.norm == "layernorm":
            return F.layer_norm(x, (x.shape[-1],), g, b, NORM_EPS)
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS) * g
        return y if b is None else y + b

    @staticmethod
    def _proj(x, w, b):
        lead = x.shape[:-1]
        x2 = x.reshape(-1, x.shape[-1])
        y = torch.mm(x2, w) if b is None else torch.addmm(b, x2, w)
        return y.reshape(*lead, w.shape[1])

    def _act(self, x):
        return F.silu(x) if self.spec.mlp == "swiglu" else F.gelu(x, approximate="tanh")

    def _attention(self, q, k, v):
        s = self.spec
        b, t = q.shape[0], q.shape[1]
        # [b, t, heads, d] -> [b, heads, t, d]; the core in f32, as flash
        # attention computes it exactly and rounds only its output.
        q = q.view(b, t, s.heads, s.head_dim).transpose(1, 2).float()
        k = k.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2).float()
        v = v.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2).float()
        if s.kv_heads != s.heads:
            k = k.repeat_interleave(s.heads // s.kv_heads, dim=1)
            v = v.repeat_interleave(s.heads // s.kv_heads, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1 / math.sqrt(s.head_dim))
        mask = torch.ones(t, t, dtype=torch.bool).triu_(1)
        p = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        o = torch.matmul(p, v).to(self.cdt)
        return o.transpose(1, 2).reshape(b, t, s.heads * s.head_dim)

    def _layer(self, x, l):
        g = lambda n: self._get(n, l)
        h1 = self._norm(x, g("norm1"), g("norm1_bias"))
        q = self._proj(h1, g("wq"), g("wq_bias"))
        k = self._proj(h1, g("wk"), g("wk_bias"))
        v = self._proj(h1, g("wv"), g("wv_bias"))
        attn = self._proj(self._attention(q, k, v), g("wo"), g("wo_bias"))
        if self.spec.parallel:
            x2, h2 = x, h1
        else:
            x2 = x + attn
            h2 = self._norm(x2, g("norm2"), g("norm2_bias"))
        up = self._proj(h2, g("up"), g("up_bias"))
        if self.spec.mlp == "gelu":
            act = self._act(up)
        else:
            act = self._act(self._proj(h2, g("gate"), g("gate_bias"))) * up
        mlp = self._proj(act, g("down"), g("down_bias"))
        return x + attn + mlp if self.spec.parallel else x2 + mlp

    def loss(self):
        s = self.spec
        embed = self._get("embed")
        x = F.embedding(self.tokens, embed)
        t = self.tokens.shape[1]
        if s.positions > 0:
            x = x + self._get("positions")[:t]
        for l in range(s.layers):
            x = self._layer(x, l)
        hf = self._norm(x, self._get("final_norm"), self._get("final_norm_bias"))
        out = embed.t() if s.tied else self._get("unembed")
        logits = torch.matmul(hf, out)
        return F.cross_entropy(logits.float().reshape(-1, s.vocab), self.targets.reshape(-1))

    def step(self):
        """One train step: forward, backward, AdamW. Returns the loss."""
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.opt.step()
        return float(loss.detach())

    def results(self):
        """The new parameters, moments (m_, v_) by name, stacked as tpusim's."""
        out = {}
        for n in self.names:
            ps = self.p[n] if n in LAYER_PARAMS else [self.p[n]]
            stack = lambda ts: (torch.stack(ts) if n in LAYER_PARAMS else ts[0]).numpy()
            with torch.no_grad():
                out[n] = stack([p.detach() for p in ps])
                out["m_" + n] = stack([self.opt.state[p]["exp_avg"] for p in ps])
                out["v_" + n] = stack([self.opt.state[p]["exp_avg_sq"] for p in ps])
        return out


# -- comparison -----------------------------------------------------------


def tpusim_results(sig, out_dir):
    """tpusim's results by name: result<i>.npy for params, m_, v_, then loss."""
    names = [n for n, _, _ in sig if n not in ("step", "tokens", "targets")]
    res = {n: np.load(os.path.join(out_dir, f"result{i}.npy")) for i, n in enumerate(names)}
    res["loss"] = np.load(os.path.join(out_dir, f"result{len(names)}.npy"))
    return res


def rel(a, b, floor=0.0):
    """max |a - b| / max(max |b|, floor): a tensor's difference relative to
    its scale (or to `floor` where its values are all smaller)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, floor)
    diff = float(np.max(np.abs(a - b))) if b.size else 0.0
    return diff / scale if scale > 0 else diff


def compare(twin_loss, twin_res, tpu_res):
    """Differences of the twin from tpusim: the loss's relative difference,
    and per group (params; m_, the gradients scaled by 1 - beta1 where m
    was zero; v_) the largest per-tensor rel() with its tensor's
    name. A tensor is measured against at least 1e-4 of its group's largest
    value: the key bias's gradient is zero in exact arithmetic (softmax
    ignores a shift common to a row's scores), so both sides hold rounding
    noise there (~1e-13 in f32), which a relative difference would magnify."""
    d = {"loss": abs(twin_loss - float(tpu_res["loss"])) / abs(float(tpu_res["loss"]))}
    for group, pick in (("params", lambda n: not n.startswith(("m_", "v_"))),
                        ("m", lambda n: n.startswith("m_")), ("v", lambda n: n.startswith("v_"))):
        names = [n for n in twin_res if pick(n)]
        floor = 1e-4 * max(float(np.max(np.abs(tpu_res[n]))) for n in names)
        d[group] = max((rel(twin_res[n], tpu_res[n], floor), n) for n in names)
    return d


def format_diffs(d):
    return (f"loss rel {d['loss']:.2e}; max rel: params {d['params'][0]:.2e} ({d['params'][1]}), "
            f"m {d['m'][0]:.2e} ({d['m'][1]}), v {d['v'][0]:.2e} ({d['v'][1]})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toml", required=True, help="the model file the step was emitted from")
    ap.add_argument("--mlir", required=True, help="the step `tpusim model --emit` wrote")
    ap.add_argument("--inputs", required=True, help="directory of <i>_<name>.npy inputs")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    ap.add_argument("--compare", help="tpusim's --output-dir for the same inputs")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    spec = Spec(args.toml)
    with open(args.mlir) as f:
        sig = signature(f.read())
    twin = Twin(spec, sig, args.dtype)
    twin.load(read_inputs(sig, args.inputs))
    t0 = time.perf_counter()
    loss = twin.step()
    print(f"twin loss {loss:.7g} in {time.perf_counter() - t0:.3f} s")
    if args.compare:
        print(format_diffs(compare(loss, twin.results(), tpusim_results(sig, args.compare))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
