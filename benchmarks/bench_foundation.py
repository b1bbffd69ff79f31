"""Foundation timings, run by hand: Gram matrices on yeast train (1500 × 103) against
scikit-learn's pairwise kernels, and the ranking-pair structure (58,248 pairs).

    python benchmarks/bench_foundation.py
"""

import time

from sklearn.metrics.pairwise import pairwise_kernels

from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_yeast
from mlsvm.kernels import make_kernel


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    data = load_yeast("train")
    X = data.X
    print(f"yeast train {X.shape}, {data.Y.shape[1]} labels")
    for name, params in (("linear", {}), ("rbf", {"gamma": 0.1}), ("poly", {"gamma": 0.1, "degree": 3, "coef0": 1.0})):
        kernel = make_kernel(name, params.get("gamma", 1.0), params.get("degree", 3), params.get("coef0", 0.0), X)
        ours = best_of(lambda: kernel(X))
        theirs = best_of(lambda: pairwise_kernels(X, metric=name, **params))
        print(f"gram {name:6s}: mlsvm {ours * 1e3:7.1f} ms   scikit-learn {theirs * 1e3:7.1f} ms   ratio {theirs / ours:5.2f}x")
    pairs_time = best_of(lambda: ranking_pairs(data.Y))
    pairs = ranking_pairs(data.Y)
    print(f"ranking pairs: {pairs.n_pairs} pairs, {pairs.n_without_pairs} instances without pairs, {pairs_time * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
