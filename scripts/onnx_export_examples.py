#!/usr/bin/python3
"""Writes the example ONNX models that the docs show, with PyTorch's exporter.

  examples/onnx/tiny_cnn.onnx  a small CNN for 1x3x32x32 images: two blocks of
                               conv 3x3 / batch norm / ReLU / 2x2 max pool, then
                               a linear layer to 10 logits ('image' -> 'logits').
  examples/onnx/tiny_gpt.onnx  a GPT-style decoder: token and position
                               embeddings from int64 token ids, 2 blocks of
                               pre-LayerNorm causal self-attention (written by
                               hand: a triu mask, softmax) and a GELU MLP, a
                               final LayerNorm and an output head tied to the
                               token embedding; d_model 64, 4 heads, vocab
                               256, at most 128 positions ('tokens' [batch, seq]
                               int64 -> 'logits' [batch, seq, 256] f32, both
                               axes dynamic).

Random weights (torch.manual_seed(0)), eval mode, opset 17. The batch norms of
tiny_cnn are given random statistics and kept as BatchNormalization nodes
(exported with TrainingMode.PRESERVE from eval mode and without constant
folding, so the exporter does not fold them into the convolutions).

The model classes are also used by tests/onnx_pytorch_test.py.

Usage: /usr/bin/python3 scripts/onnx_export_examples.py [OUT_DIR]
       (default OUT_DIR: examples/onnx of this checkout)
Needs torch (Debian: python3-torch) and onnx (python3-onnx).
"""
import math
import os
import sys

import torch
import torch.nn as nn

OPSET = 17


class TinyCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                                 nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))
        self.features = nn.Sequential(block(3, 8), block(8, 16))
        self.head = nn.Linear(16 * 8 * 8, classes)

    def forward(self, image):
        return self.head(torch.flatten(self.features(image), 1))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # [b, t, c] -> [b, heads, t, c / heads]
        q, k, v = (z.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=256, d_model=64, heads=4, layers=2, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, tokens):
        t = tokens.shape[1]
        positions = torch.arange(t, device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.tok.weight.t()  # the head tied to the embedding


def randomize_batch_norms(model):
    """Non-trivial running statistics and affine parameters for eval mode."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)


def tiny_cnn():
    torch.manual_seed(0)
    model = TinyCNN()
    randomize_batch_norms(model)
    return model.eval()


def tiny_gpt():
    torch.manual_seed(0)
    return TinyGPT().eval()


def export_tiny_cnn(path, opset=OPSET):
    model = tiny_cnn()
    with torch.no_grad():
        torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), path, opset_version=opset,
                          input_names=["image"], output_names=["logits"],
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)


def export_tiny_gpt(path, opset=OPSET):
    model = tiny_gpt()
    tokens = torch.randint(0, 256, (2, 16), dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(model, (tokens,), path, opset_version=opset,
                          input_names=["tokens"], output_names=["logits"],
                          dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                                        "logits": {0: "batch", 1: "seq"}})


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "examples", "onnx")
    os.makedirs(out, exist_ok=True)
    import onnx
    for name, export in (("tiny_cnn", export_tiny_cnn), ("tiny_gpt", export_tiny_gpt)):
        path = os.path.join(out, f"{name}.onnx")
        export(path)
        model = onnx.load(path)
        onnx.checker.check_model(model)
        ops = sorted({n.op_type for n in model.graph.node})
        print(f"{path}: {os.path.getsize(path)} bytes, opset {OPSET}, ops {', '.join(ops)}")


if __name__ == "__main__":
    main()
