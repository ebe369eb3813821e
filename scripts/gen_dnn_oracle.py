#!/usr/bin/env python3
"""Generates PyTorch oracle files for the strata::dnn convolution tests.

For a fixed set of problems it draws float32 inputs, runs torch's convolution in float64
(forward, and the gradients of sum(y * dy) with respect to x and w) and writes one text file
per problem under tests/dnn/oracle/. tests/dnn/test_conv_oracle.cpp compares strata against
these files, so the test needs no torch; rerun this script (with torch installed) to refresh
them:   python3 scripts/gen_dnn_oracle.py [output_dir]

File format (whitespace separated):
  strata-dnn-oracle 1
  name <name>
  spatial <rank>  n <N> c <C> k <K> groups <G>
  in <sizes...>  filter <sizes...>  pad <...>  stride <...>  dilation <...>
  tensor <name> <count>  followed by <count> values (x, w, dy in float32; y, dx, dw from float64)
Tensors are NCHW / KCRS, packed.
"""
import os
import sys

import torch
import torch.nn.functional as F

PROBLEMS = [
    # name, spatial rank, n, c, k, groups, in, filter, pad, stride, dilation
    ("odd_3x3", 2, 2, 3, 4, 1, [7, 9], [3, 3], [1, 1], [1, 1], [1, 1]),
    ("stride2_3x3", 2, 1, 4, 6, 1, [10, 10], [3, 3], [1, 1], [2, 2], [1, 1]),
    ("groups_dilated", 2, 2, 6, 6, 3, [8, 8], [3, 3], [2, 2], [1, 1], [2, 2]),
    ("depthwise", 2, 1, 8, 8, 8, [9, 9], [3, 3], [1, 1], [1, 1], [1, 1]),
    ("pointwise", 2, 2, 5, 7, 1, [6, 6], [1, 1], [0, 0], [1, 1], [1, 1]),
    ("k5", 2, 1, 3, 4, 1, [13, 11], [5, 5], [2, 2], [1, 1], [1, 1]),
    ("stem_k7_s2", 2, 1, 3, 5, 1, [16, 16], [7, 7], [3, 3], [2, 2], [1, 1]),
    ("wide_3x3", 2, 1, 16, 16, 1, [12, 12], [3, 3], [1, 1], [1, 1], [1, 1]),
    ("conv1d", 1, 2, 3, 4, 1, [20], [5], [2], [1], [1]),
    ("conv3d", 3, 1, 2, 3, 1, [5, 5, 5], [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1]),
]

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def write_tensor(f, name, t):
    flat = t.detach().reshape(-1).tolist()
    f.write(f"tensor {name} {len(flat)}\n")
    for i in range(0, len(flat), 8):
        f.write(" ".join(repr(float(v)) for v in flat[i:i + 8]) + "\n")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "dnn", "oracle")
    os.makedirs(out_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(20240605)
    for name, sr, n, c, k, g, size, filt, pad, stride, dil in PROBLEMS:
        x32 = torch.rand([n, c] + size, generator=gen, dtype=torch.float32) * 2 - 1
        w32 = torch.rand([k, c // g] + filt, generator=gen, dtype=torch.float32) * 2 - 1
        x = x32.double().requires_grad_(True)
        w = w32.double().requires_grad_(True)
        y = CONV[sr](x, w, None, stride, pad, dil, g)
        dy32 = torch.rand(y.shape, generator=gen, dtype=torch.float32) * 2 - 1
        (y * dy32.double()).sum().backward()
        path = os.path.join(out_dir, f"{name}.txt")
        with open(path, "w") as f:
            f.write("strata-dnn-oracle 1\n")
            f.write(f"name {name}\n")
            f.write(f"spatial {sr} n {n} c {c} k {k} groups {g}\n")
            for label, vals in (("in", size), ("filter", filt), ("pad", pad), ("stride", stride), ("dilation", dil)):
                f.write(label + " " + " ".join(str(v) for v in vals) + "\n")
            write_tensor(f, "x", x32)
            write_tensor(f, "w", w32)
            write_tensor(f, "dy", dy32)
            write_tensor(f, "y", y)
            write_tensor(f, "dx", x.grad)
            write_tensor(f, "dw", w.grad)
        print("wrote", path, tuple(y.shape), "torch", torch.__version__)


if __name__ == "__main__":
    main()
