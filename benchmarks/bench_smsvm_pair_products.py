"""SMSVM's Hessian product on the listed active pairs against the dense n × k products (run by hand):

    OMP_NUM_THREADS=1 python benchmarks/bench_smsvm_pair_products.py [--rounds 5]

The joint Newton step of ``solver="fast"`` multiplies by the generalized Hessian about ten times per
step. Dense, that is two n × |J| × k BLAS products; on the listed pairs (``_ActivePairs``), one dot
product of length |J| per active pair and per point, and one scatter of a row per pair. The pairs win
when few are active; ``sparse_mm_greedy.PAIRS_BELOW`` is the fraction of the n × k entries (pairs plus
one own-class entry per point) below which the Newton step lists them. This prints, for bibtex's shape
(n = 4880, 147 classes) and yeast's (n = 1500, 13 classes), the time of both products and their
ratio at several fractions, the two sides alternating in each round (median over rounds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlsvm.formulations.sparse_mm import MarginOperator
from mlsvm.solvers.sparse_mm_greedy import PAIRS_BELOW, _ActivePairs, _hessian_product


def _time(run, repeats=5):
    start = time.perf_counter()
    for _ in range(repeats):
        run()
    return (time.perf_counter() - start) / repeats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"PAIRS_BELOW = {PAIRS_BELOW}")
    for n, k in ((4880, 147), (1500, 13)):
        ops = MarginOperator("smsvm", np.eye(k)[rng.integers(k, size=n)])
        for d in (20, 100):
            Z = np.asfortranarray(rng.standard_normal((n, d)))
            D = rng.standard_normal((d, k))
            for fraction in (0.05, 0.1, 0.2, 0.3, 0.5):
                active = ops.mask & (rng.random((n, k)) < fraction)
                entries = (np.count_nonzero(active) + n) / active.size
                pairs = _ActivePairs(active, ops.label, Z)
                omega = active.astype(np.float64)
                times = {"dense": [], "pairs": []}
                for _ in range(args.rounds):
                    times["dense"].append(_time(lambda: _hessian_product(Z, ops, omega, 1.0, np.eye(k), D)))
                    times["pairs"].append(_time(lambda: D + pairs.product(D, 1.0)))
                dense, listed = np.median(times["dense"]), np.median(times["pairs"])
                print(f"n={n:5d} k={k:3d} |J|={d:3d} entries {entries:.2f}: dense {dense * 1e3:6.2f} ms, "
                      f"pairs {listed * 1e3:6.2f} ms, dense/pairs {dense / listed:5.2f}")


if __name__ == "__main__":
    main()
