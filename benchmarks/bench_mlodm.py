"""mLODM benchmark (run by hand): dual BCD (exact and M³ block solvers, and the "fast" solver)
against the CVXPY ground truth, side by side in one run.

For each data set: the CVXPY primal (eq. 15, Clarabel at tight settings) time and value; for each
BCD variant at tol = 1e-6 the time, the time ratio CVXPY / BCD, the relative difference to the
CVXPY optimum, the sweeps needed to reach a relative duality gap of 1e-3 and 1e-6, and the test
ranking loss after every sweep (the paper's Fig. 1 claim: "the testing loss converges within one
iteration").

    OMP_NUM_THREADS=1 python benchmarks/bench_mlodm.py [--yeast-size 150] [--skip-cvxpy]

Setting: features scaled to [0, 1] on the training part (paper §6.1), RBF kernel, the paper's
Fig. 2 setting C = 1, γ = 2⁻¹, with θ = μ = 0.5. Emotions: a seeded 391 / 202 split (Table 1
sizes); yeast: the first ``--yeast-size`` training instances, tested on the standard test set.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.metrics import ranking_loss
from mlsvm.solvers.bcd import solve_bcd
from mlsvm.verification.cvxpy_tools import solve
from mlsvm.verification.report import relative_difference

C, GAMMA, THETA, MU = 1.0, 0.5, 0.5, 0.5
VARIANTS = {"bcd (exact)": dict(subproblem="exact"), "bcd-m3": dict(subproblem="m3"),
            "fast": dict(subproblem="exact", polish=True)}


def emotions_split():
    data = load_emotions()
    order = np.random.default_rng(0).permutation(data.X.shape[0])
    train, test = order[:391], order[391:]
    return data.X[train], data.Y[train], data.X[test], data.Y[test]


def yeast_subset(size):
    train, test = load_yeast("train"), load_yeast("test")
    return train.X[:size], train.Y[:size], test.X, test.Y


def first_sweep_below(history, level):
    hits = [k + 1 for k, value in enumerate(history) if value <= level]
    return hits[0] if hits else None


def run(name, X, Y, X_test, Y_test, skip_cvxpy):
    scaler = MinMaxScaler().fit(X)
    X, X_test = scaler.transform(X), np.clip(scaler.transform(X_test), 0.0, 1.0)
    kernel = make_kernel("rbf", GAMMA)
    gram, gram_test = kernel(X), kernel(X_test, X)
    problem = mlodm.MLODMProblem(gram, ranking_pairs(Y), C, THETA, MU)
    print(f"\n== {name}: n = {X.shape[0]}, q = {Y.shape[1]}, pairs T = {problem.pairs.n_pairs}")
    truth, cvxpy_time = float("nan"), float("nan")
    if not skip_cvxpy:
        start = time.perf_counter()
        truth = solve(mlodm.primal_problem(problem)[0], "CLARABEL")
        cvxpy_time = time.perf_counter() - start
        print(f"CVXPY primal (Clarabel): {truth:.10g} in {cvxpy_time:.2f} s")
    print(f"{'solver':12s} {'time s':>8s} {'CVXPY/BCD':>10s} {'rel.diff':>9s} {'gap':>9s} {'max KKT':>9s} "
          f"{'sweeps':>6s} {'to 1e-3':>7s} {'to 1e-6':>7s}  test ranking loss per sweep")
    for label, options in VARIANTS.items():
        test_losses = []

        def record(sweep, alpha, beta):
            test_losses.append(ranking_loss(Y_test, gram_test @ mlodm.coef_from_dual(problem, alpha, beta)))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = solve_bcd(problem, tol=1e-6, random_state=0, max_iter=200, callback=record, **options)
        alpha, beta = result.dual["alpha"], result.dual["beta"]
        # the callback's test-loss evaluation is excluded: time the solver alone once more
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            solve_bcd(problem, tol=1e-6, random_state=0, max_iter=200, **options)
        elapsed = time.perf_counter() - start
        primal = mlodm.primal_objective(problem, mlodm.coef_from_dual(problem, alpha, beta))
        kkt = max(mlodm.kkt_residuals(problem, alpha, beta).values())
        gaps = result.history["relative_gap"]
        print(f"{label:12s} {elapsed:8.3f} {cvxpy_time / elapsed:10.1f} {relative_difference(primal, truth):9.1e} "
              f"{gaps[-1]:9.1e} {kkt:9.1e} {result.n_iter:6d} {first_sweep_below(gaps, 1e-3)!s:>7s} "
              f"{first_sweep_below(gaps, 1e-6)!s:>7s}  " + " ".join(f"{v:.4f}" for v in test_losses[:8]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yeast-size", type=int, default=150)
    parser.add_argument("--skip-cvxpy", action="store_true")
    args = parser.parse_args()
    run("emotions (391 train / 202 test)", *emotions_split(), args.skip_cvxpy)
    run(f"yeast (first {args.yeast_size} train / 917 test)", *yeast_subset(args.yeast_size), args.skip_cvxpy)


if __name__ == "__main__":
    main()
