#!/usr/bin/env python3
"""Streaming peers for `streamer eval`: scikit-learn learners run
prequentially on the very labels `eval` reveals.

The stream is a JSONL file in the example schema (`vector` or `text`, and
`label`). Every example is predicted on arrival by the model in force (an
example that arrives before any model counts as wrong); its label is then
revealed with probability --label-rate, --label-delay examples later, drawn
exactly as `eval` draws it: Go's math/rand/v2 PCG seeded (seed, 0x5bd1e995),
one Float64 per labeled example, seeds 1..N. A peer refits after
--refit-examples examples or --refit-labels revealed labels since its last
fit, whichever comes first, on the last --window examples.

  linearsvc       LinearSVC (C = 1) on the revealed labels in the window
  labelspreading  LabelSpreading (kNN kernel, --knn neighbours, alpha
                  --alpha) on the whole window; an arrival is predicted from
                  its neighbours' spread labels

Text rows are hashed (HashingVectorizer: words and bigrams, 2^18 columns,
l2-normalized); LabelSpreading, which takes dense rows only, sees them
folded into 2^12 columns. It prints one JSON line a peer: all_accuracy (every
example's prediction against its label) as the mean over the seeds, its
sample standard deviation, and every seed's figure.
"""

import argparse
import gzip
import json
import math
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.semi_supervised import LabelSpreading
from sklearn.svm import LinearSVC

MASK64 = (1 << 64) - 1
DENSE_TEXT_COLUMNS = 1 << 12


class GoPCG:
    """Go's math/rand/v2 PCG (128-bit LCG, DXSM output) and Rand.Float64."""

    MUL = (2549297995355413924 << 64) | 4865540595714422341
    INC = (6364136223846793005 << 64) | 1442695040888963407

    def __init__(self, seed1, seed2):
        self.state = ((seed1 & MASK64) << 64) | (seed2 & MASK64)

    def uint64(self):
        self.state = (self.state * self.MUL + self.INC) & ((1 << 128) - 1)
        hi, lo = self.state >> 64, self.state & MASK64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & MASK64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & MASK64
        return hi


def go_float64(rng):
    # float64(r.Uint64()<<11>>11) / (1 << 53): the low 53 bits
    return (rng.uint64() & ((1 << 53) - 1)) / float(1 << 53)


def read_stream(path):
    opener = gzip.open if path.endswith(".gz") else open
    ids, labels, vectors, texts = [], [], [], []
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            row = json.loads(line)
            ids.append(str(row.get("id", len(ids))))
            labels.append(row.get("label"))
            if "vector" in row:
                vectors.append(row["vector"])
            elif "text" in row:
                texts.append(row["text"])
            else:
                raise SystemExit("%s: row %d has neither vector nor text" % (path, len(ids)))
    if texts and vectors:
        raise SystemExit("%s: mixes vector and text rows" % path)
    if texts:
        hv = HashingVectorizer(n_features=1 << 18, ngram_range=(1, 2), alternate_sign=False, norm="l2")
        X = hv.transform(texts).tocsr()
    else:
        X = np.asarray(vectors, dtype=np.float64)
    return ids, [None if l is None else str(l) for l in labels], X


class Peer:
    """A learner refit at the cadence on the window; predicts arrivals."""

    def __init__(self, kind, args):
        self.kind, self.args = kind, args
        self.model = None

    def fit(self, X, y):
        """X: window rows; y: label or None for each."""
        known = [i for i, l in enumerate(y) if l is not None]
        classes = sorted({y[i] for i in known})
        if len(classes) < 2:
            return
        if self.kind == "linearsvc":
            m = LinearSVC(C=1.0)
            m.fit(X[known], [y[i] for i in known])
            self.model = m
            return
        index = {c: k for k, c in enumerate(classes)}
        target = np.array([index[l] if l is not None else -1 for l in y])
        if sp.issparse(X):
            X = self.dense(X)
        m = LabelSpreading(kernel="knn", n_neighbors=self.args.knn, alpha=self.args.alpha, max_iter=100)
        m.fit(X, target)
        self.model, self.classes = m, classes

    def predict(self, X):
        if self.model is None:
            return [None] * X.shape[0]
        if self.kind == "linearsvc":
            return list(self.model.predict(X))
        if sp.issparse(X):
            X = self.dense(X)
        return [self.classes[k] for k in self.model.predict(X)]

    @staticmethod
    def dense(X):
        """LabelSpreading takes dense rows only: text rows are folded into
        DENSE_TEXT_COLUMNS columns (their hashed indices modulo it) and
        normalized again."""
        X = X.tocoo()
        folded = sp.csr_matrix((X.data, (X.row, X.col % DENSE_TEXT_COLUMNS)), shape=(X.shape[0], DENSE_TEXT_COLUMNS))
        d = folded.toarray()
        norms = np.linalg.norm(d, axis=1)
        norms[norms == 0] = 1
        return d / norms[:, None]


def run_seed(peer, seed, ids, labels, X, args):
    rng = GoPCG(seed, 0x5BD1E995)
    n = X.shape[0]
    revealed = [None] * n  # the labels the peer has been told
    queue = []  # (at, row)
    correct = scored = 0
    pending = []  # rows waiting for a prediction by the model in force
    since_examples = since_labels = 0
    start_row = 0
    examples = 0
    fits = 0

    def flush():
        nonlocal correct, scored
        if not pending:
            return
        preds = peer.predict(X[pending])
        for r, p in zip(pending, preds):
            scored += 1
            correct += int(p is not None and p == labels[r])
        pending.clear()

    for r in range(n):
        examples += 1
        since_examples += 1
        if labels[r] is not None:
            pending.append(r)
            if go_float64(rng) < args.label_rate:
                queue.append((examples + args.label_delay, r))
        k = 0
        while k < len(queue) and queue[k][0] <= examples:
            revealed[queue[k][1]] = labels[queue[k][1]]
            since_labels += 1
            k += 1
        del queue[:k]
        if since_examples >= args.refit_examples or since_labels >= args.refit_labels:
            flush()
            lo = max(0, r + 1 - args.window)
            peer.fit(X[lo:r + 1], revealed[lo:r + 1])
            fits += 1
            since_examples = since_labels = 0
    flush()
    return correct / max(scored, 1), fits, sum(l is not None for l in revealed) + len(queue)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--label-rate", type=float, default=0.05)
    ap.add_argument("--label-delay", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--peers", default="linearsvc,labelspreading")
    ap.add_argument("--refit-examples", type=int, default=100)
    ap.add_argument("--refit-labels", type=int, default=10)
    ap.add_argument("--window", type=int, default=20000)
    ap.add_argument("--knn", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=0.2)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    ids, labels, X = read_stream(args.data)
    for kind in args.peers.split(","):
        t0 = time.time()
        accs, fits, reveals = [], 0, []
        for seed in range(1, args.seeds + 1):
            acc, fits, n = run_seed(Peer(kind, args), seed, ids, labels, X, args)
            accs.append(acc)
            reveals.append(n)
        print(json.dumps({
            "peer": kind, "data": args.data, "label_rate": args.label_rate, "label_delay": args.label_delay,
            "refit_examples": args.refit_examples, "refit_labels": args.refit_labels, "window": args.window,
            "all_accuracy": round(statistics.mean(accs), 4),
            "all_accuracy_std": round(statistics.stdev(accs), 4) if len(accs) > 1 else 0.0,
            "per_seed": [round(a, 4) for a in accs], "fits_per_seed": fits,
            "labels_revealed": reveals,
            "seconds": round(time.time() - t0, 1),
        }), flush=True)


if __name__ == "__main__":
    main()
