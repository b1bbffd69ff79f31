"""Reading bibtex.arff (7395 × 1836 sparse rows, 159 labels): ``load_arff`` with a CSR ``X``
(``sparse=None``, the default for a sparse file) against a dense ``X`` (``sparse=False``).

    OMP_NUM_THREADS=1 python benchmarks/bench_arff.py [--rounds 3] [--path bibtex.arff]

Alternates the two sides over several rounds in one run; prints the median wall time, the peak
memory traced during one more read of each (tracemalloc: Python objects and numpy buffers) and the size of
the returned X, and their ratios. Results: docs/datasets.md.
"""

import argparse
import time
import tracemalloc

import numpy as np

from mlsvm.datasets import _dataset_path, load_arff


def measure(path, sparse, traced):
    """Wall time of one read (untraced: tracemalloc slows Python allocations) or its peak memory."""
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    data = load_arff(path, n_labels=159, sparse=sparse)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    if traced:
        tracemalloc.stop()
    X = data.X
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sparse is not False else X.nbytes
    return elapsed, peak, size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--path", default=None)
    args = parser.parse_args()
    path = args.path or _dataset_path("bibtex.arff")
    results = {"sparse (CSR)": [], "dense": []}
    sides = (("sparse (CSR)", None), ("dense", False))
    peaks = {label: measure(path, sparse, traced=True)[1] for label, sparse in sides}
    for _ in range(args.rounds):
        for label, sparse in sides:
            results[label].append(measure(path, sparse, traced=False))
    print(f"load_arff({path.name if hasattr(path, 'name') else path}), {args.rounds} rounds alternated")
    print(f"{'X':14s} {'time s':>8s} {'peak MB':>8s} {'X MB':>8s}")
    summary = {}
    for label, runs in results.items():
        times, _, sizes = zip(*runs)
        summary[label] = (float(np.median(times)), peaks[label] / 1e6, sizes[0] / 1e6)
        print(f"{label:14s} {summary[label][0]:8.2f} {summary[label][1]:8.1f} {summary[label][2]:8.1f}")
    (ts, ps, xs), (td, pd, xd) = summary["sparse (CSR)"], summary["dense"]
    print(f"ratio dense/sparse: time {td / ts:.2f}, peak memory {pd / ps:.2f}, X size {xd / xs:.1f}")


if __name__ == "__main__":
    main()
