"""Binary approach (E&W Problem 3): the exact water-filling solver vs BR-SVC vs CVXPY, run by hand::

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_binary_fast.py [--rounds 3] [--cvxpy-n 150]

* water-filling: :func:`mlsvm.solvers.rank_binary_waterfill.solve_rank_binary_waterfill`, tol 1e-7,
  on the precomputed Gram matrix (the same Gram for every side);
* BR-SVC: one scikit-learn ``SVC(kernel="precomputed")`` per label at its default tol, with
  ``C_svc = C/2``: Problem 3's label subproblems are C-SVMs with ``C_k = C/(2Qμ_k)``, and ``C/2`` is
  ``C_k`` at the uniform ``μ_k = 1/Q`` (for Q = 1 Problem 3 is exactly the C/2 SVM, doubled);
* CVXPY: Problem 3's primal (ECOS, then Clarabel, SCS), on the first ``--cvxpy-n`` rows only (the
  full yeast took 219 s and 812 MB), where water-filling runs again for the ratio.

The sides alternate within each round; medians over the rounds, ratios of medians. Memory: the
tracemalloc peak of one extra run of each side (numpy allocations included), not timed.
"""

import argparse
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.svm import SVC

from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.solvers.rank_binary_cvxpy import solve_primal
from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import make_kernel
from mlsvm.solvers.rank_binary_waterfill import solve_rank_binary_waterfill
from mlsvm.formulations.evaluation import relative_difference


def standardize(X):
    scale = X.std(0)
    return (X - X.mean(0)) / np.where(scale > 0, scale, 1.0)


def br_svc(problem):
    return [SVC(C=problem.C / 2, kernel="precomputed").fit(problem.gram, problem.signed[:, k])
            for k in range(problem.n_labels)]


def waterfill(problem):
    return solve_rank_binary_waterfill(problem, tol=1e-7)


def cvxpy(problem):
    return solve_primal(problem, "ECOS", tol=1e-7)   # then Clarabel, SCS, … until one certifies


def measure(sides, problem, rounds):
    """Alternating rounds: {name: (median seconds, last result, tracemalloc peak MB)}."""
    times = {name: [] for name in sides}
    results = {}
    for _ in range(rounds):
        for name, run in sides.items():
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results[name] = (run(problem), len(caught))
            times[name].append(time.perf_counter() - start)
    peaks = {}
    for name, run in sides.items():
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(problem)
        peaks[name] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return {name: (float(np.median(times[name])), results[name], peaks[name]) for name in sides}


def describe(name, problem, rows):
    fast_time, (result, warned), fast_peak = rows["waterfill"]
    objective = formulation.primal_objective(problem, result.primal["coef"], result.primal["b"])
    kkt = formulation.kkt_residuals(problem, result.primal["coef"], result.primal["b"],
                                    result.dual["alpha"], result.dual["lam"])
    print(f"{name}: n = {problem.gram.shape[0]}, Q = {problem.n_labels}, C = {problem.C}")
    print(f"  waterfill  {fast_time:8.2f} s  peak {fast_peak:7.1f} MB  converged {result.converged}  "
          f"outer iterations {result.n_iter}  stop value {result.stop_value:.1e}  max KKT "
          f"{max(kkt.values()):.1e}  objective {objective:.10g}  warnings {warned}")
    for other in rows:
        if other == "waterfill":
            continue
        seconds, (value, _), peak = rows[other]
        line = f"  {other:9s}  {seconds:8.2f} s  peak {peak:7.1f} MB  waterfill/{other} time ratio {fast_time / seconds:.2f}"
        if other == "cvxpy":
            coef, b = value[0], value[1]
            truth = formulation.primal_objective(problem, coef, b)
            line += f"  objective {truth:.10g}  relative difference {relative_difference(objective, truth):.1e}"
        print(line)


def problem_of(X, Y, kernel, C):
    X = standardize(X)
    return formulation.BinaryApproachProblem(make_kernel(kernel, "scale", X=X)(X), Y, C)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cvxpy-n", type=int, default=150)
    parser.add_argument("--C", type=float, default=1.0)
    args = parser.parse_args()
    yeast, emotions = load_yeast("train"), load_emotions()
    cases = [("yeast train, rbf", yeast, "rbf"), ("yeast train, linear", yeast, "linear"),
             ("emotions, rbf", emotions, "rbf")]
    for name, data, kernel in cases:
        problem = problem_of(data.X, data.Y, kernel, args.C)
        describe(name, problem, measure({"waterfill": waterfill, "br-svc": br_svc}, problem, args.rounds))
        n = args.cvxpy_n
        subset = problem_of(data.X[:n], data.Y[:n], kernel, args.C)
        describe(f"{name}, first {n} rows", subset,
                 measure({"waterfill": waterfill, "br-svc": br_svc, "cvxpy": cvxpy}, subset, args.rounds))


if __name__ == "__main__":
    main()
