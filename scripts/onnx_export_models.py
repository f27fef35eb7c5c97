#!/usr/bin/python3
"""Exports the two large ONNX models that docs/onnx-models.md times.

  r50.onnx   torchvision ResNet-50, random weights, eval mode, a fixed input
             'image' f32 [8, 3, 224, 224] -> 'logits' [8, 1000] (batch norms
             folded into the convolutions by the exporter). About 100 MB.
  bert.onnx  a BERT-base-shaped encoder written in plain PyTorch: token,
             position and segment-0 embeddings (vocab 30522, 512 positions)
             from 'input_ids' int64 [batch, 128] (batch a dynamic axis), an
             embedding LayerNorm, 12 post-LayerNorm layers of 12-head
             self-attention (d_model 768, MatMul / scale / Softmax / MatMul
             written out, no mask) and a 3072-wide GELU (erf) MLP, and
             'hidden' f32 [batch, 128, 768] out. About 440 MB.

Random weights (torch.manual_seed(0)), opset 17, torch.onnx.export.

Usage: /usr/bin/python3 scripts/onnx_export_models.py OUT_DIR [r50|bert ...]
       (default: both). Needs torch, torchvision and onnx.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17


class SelfAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, c = x.shape

        def heads(y):
            return y.view(b, t, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, c)
        return self.out(y)


class EncoderLayer(nn.Module):
    def __init__(self, d_model, heads, d_ff):
        super().__init__()
        self.attn = SelfAttention(d_model, heads)
        self.ln1 = nn.LayerNorm(d_model, eps=1e-12)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab=30522, positions=512, d_model=768, heads=12, d_ff=3072, layers=12):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(positions, d_model)
        self.segments = nn.Embedding(2, d_model)
        self.ln = nn.LayerNorm(d_model, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(d_model, heads, d_ff) for _ in range(layers))

    def forward(self, input_ids):
        t = input_ids.shape[1]
        pos = torch.arange(t, dtype=torch.int64, device=input_ids.device)
        x = self.tokens(input_ids) + self.positions(pos)[None] + self.segments.weight[0]
        x = self.ln(x)
        for layer in self.layers:
            x = layer(x)
        return x


def export_r50(path):
    import torchvision
    model = torchvision.models.resnet50(weights=None).eval()
    image = torch.randn(8, 3, 224, 224)
    torch.onnx.export(model, (image,), path, opset_version=OPSET, input_names=["image"],
                      output_names=["logits"])


def export_bert(path):
    model = BertEncoder().eval()
    ids = torch.randint(0, 30522, (8, 128), dtype=torch.int64)
    torch.onnx.export(model, (ids,), path, opset_version=OPSET, input_names=["input_ids"],
                      output_names=["hidden"], dynamic_axes={"input_ids": {0: "batch"},
                                                             "hidden": {0: "batch"}})


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    which = sys.argv[2:] or ["r50", "bert"]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    with torch.no_grad():
        for name in which:
            path = os.path.join(out, name + ".onnx")
            {"r50": export_r50, "bert": export_bert}[name](path)
            print(f"wrote {path} ({os.path.getsize(path) / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
