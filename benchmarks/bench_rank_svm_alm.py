"""Rank-SVM proximal ALM benchmark (run by hand): its inner solver, and the library's fast route beside it.

For each problem (C = 1, tol 1e-6; the linear kernel through X, other kernels through the Gram):

* ``alm``: :func:`mlsvm.solvers.rank_svm_alm.proximal_alm`, timed without building the problem;
* ``before`` (with ``--before PATH``): the ``rank_svm_alm.py`` of another tree (e.g. ``git archive
  main mlsvm`` unpacked in PATH; loaded beside this tree's package, so only that file differs);
* ``fast``: the route ``RankSVM(solver="fast")`` takes for the problem (the interior point for these
  linear problems, the working-set decomposition for the RBF one), the exact solver a user would run.

Every side prints its CPU time (``time.process_time``: the machine is shared), Hessian products,
outer iterations, whether it certified, and the relative gap and largest scaled KKT residual by the
formulation's own functions. Each side first fits the first problem once untimed (numba compiles
the fast routes' kernels, or loads them from its cache, at their first call). The sides alternate over ``--rounds`` rounds; medians and the ratios
alm/before and alm/fast are printed.

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_svm_alm.py [--rounds 3] [--before PATH] [--only yeast-300 ...]
"""

from __future__ import annotations

import argparse
import os

from sklearn.preprocessing import StandardScaler

from alternating import graded_fit, print_summary, report_case
from before_tree import solver_from_tree
from mlsvm.datasets import load_bibtex, load_emotions, load_yeast
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.registry import model
from mlsvm.solvers.rank_svm_alm import proximal_alm

TOL = 1e-6


def _subset(rows=None, labels=None, standardise=False, kernel="linear", loader=load_emotions):
    def build():
        data = loader()
        X, Y = data.X[:rows], data.Y[:rows, :labels]
        if standardise:
            X = StandardScaler().fit_transform(X)
        if kernel == "linear":   # as the estimator builds it: X, no Gram matrix
            return rs.make_problem(None, Y, 1.0, features=X)
        return rs.make_problem(make_kernel(kernel, X=X)(X), Y, 1.0)
    return build


PROBLEMS = {
    "yeast-300": _subset(300, loader=load_yeast),
    "yeast-rbf-300": _subset(300, kernel="rbf", loader=load_yeast),
    "yeast": _subset(loader=load_yeast),
    "emotions-std-300": _subset(300, standardise=True),
    "emotions-std-400": _subset(400, standardise=True),
    "emotions-std": _subset(standardise=True),
    "emotions-raw-300": _subset(300),
    "bibtex-400x30": _subset(400, 30, loader=load_bibtex),
}


def run(solve, problem):
    """(CPU seconds, result, Hessian products or None, relative gap, max scaled KKT)."""
    seconds, result, evaluation = graded_fit(solve, problem, rs.evaluate)
    products = result.history.get("n_matvec", [None])[-1]
    return seconds, result, products, evaluation.relative_gap, evaluation.max_kkt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="a tree whose rank_svm_alm.py runs as a third side")
    parser.add_argument("--only", nargs="*", choices=sorted(PROBLEMS))
    args = parser.parse_args()
    spec = model("rank_svm")
    sides = {"alm": lambda problem: proximal_alm(problem, tol=TOL, factor=problem.features)}
    if args.before:
        before = solver_from_tree(args.before, "rank_svm_alm", "proximal_alm")
        sides["before"] = lambda problem: before(problem, tol=TOL, factor=problem.features)
    sides["fast"] = lambda problem: spec.solvers[spec.resolve_fast(problem)].run(problem, tol=TOL, max_iter=None)
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, C = 1, tol {TOL:g}, {args.rounds} alternating "
          f"rounds, CPU seconds")
    summary = []
    names = args.only or list(PROBLEMS)
    warm_up = PROBLEMS[names[0]]()
    for side, solve in sides.items():
        print(f"warm-up {side}: {run(solve, warm_up)[0]:.2f} s", flush=True)
    for name in names:
        problem = PROBLEMS[name]()
        print(f"\n[{name}] n={problem.n_samples} Q={problem.n_labels} pairs={problem.n_pairs} "
              f"fast route: {spec.resolve_fast(problem)}", flush=True)
        times = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, solve in sides.items():
                seconds, result, products, gap, kkt = run(solve, problem)
                times[side].append(seconds)
                print(f"  {side:6s} {seconds:7.2f} s  certified {result.converged!s:5s} gap {gap:8.1e}  KKT {kkt:8.1e}"
                      f"  iterations {result.n_iter}" + (f"  products {products}" if products is not None else ""),
                      flush=True)
        summary.append((name, *report_case(times, "alm")))
    print_summary(summary, "alm", "problem")


if __name__ == "__main__":
    main()
