"""Rank-SVM instance BCD benchmark (run by hand): bibtex text as users scale it, against BR-LinearSVC.

For the first ``--rows`` bibtex train rows (all 159 labels, 1836 words, CSR) scaled three ways —
binary as distributed, rows of unit length (``normalize(X)``) and rows summing to 1 (term
frequencies, ``normalize(X, "l1")``) — at C = 1 and C = 0.01, tol 1e-6:

* ``bcd``: :func:`mlsvm.solvers.rank_svm_bcd.instance_bcd` (the route ``RankSVM(solver="fast")``
  takes on such wide data), timed without building the problem, its default budget of passes;
* ``before`` (with ``--before PATH``): the ``rank_svm_bcd.py`` of another tree (e.g. ``git archive
  main mlsvm`` unpacked in PATH; loaded beside this tree's package, so only that file differs);
* ``linearsvc``: binary relevance with scikit-learn's ``LinearSVC`` (hinge, the same C, tol 1e-6,
  ``max_iter=100_000`` as in ``bench_bibtex.py`` so that LIBLINEAR reaches its tolerance), what a
  user would otherwise run on these data (a different model: the scale, not the answer).

Every side prints its CPU time (``time.process_time``: the machine is shared); the BCD sides also
their passes, whether they certified, and the relative gap and largest scaled KKT residual by the
formulation's own functions. Each BCD side first fits a small problem once untimed (numba compiles
the passes, or loads them from its cache). The sides alternate over ``--rounds`` rounds; medians
and the ratios bcd/before and bcd/linearsvc are printed.

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_svm_bcd.py [--rows 1500] [--rounds 2] [--before PATH] [--only l1-C1 ...]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

from alternating import graded_fit, print_summary, report_case
from before_tree import solver_from_tree
from mlsvm.datasets import load_bibtex
from mlsvm.formulations import rank_svm as rs
from mlsvm.solvers.rank_svm_bcd import instance_bcd

TOL = 1e-6
SCALINGS = {"binary": lambda X: X, "l2": lambda X: normalize(X), "l1": lambda X: normalize(X, "l1")}
CASES = [f"{scaling}-C{C:g}" for scaling in SCALINGS for C in (1, 0.01)]


def run_bcd(solve, problem):
    """(CPU seconds, summary) of one BCD fit graded by the formulation's own functions."""
    seconds, result, evaluation = graded_fit(solve, problem, rs.evaluate)
    return seconds, (f"certified {result.converged!s:5s} gap {evaluation.relative_gap:8.1e}  "
                     f"KKT {evaluation.max_kkt:8.1e}  passes {result.n_iter}")


def run_linearsvc(X, Y, C):
    """(CPU seconds, summary) of binary relevance LinearSVC (hinge, tol 1e-6), one label at a time
    (a label constant on these rows has nothing to fit)."""
    labels = [k for k in range(Y.shape[1]) if 0 < Y[:, k].sum() < Y.shape[0]]
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        for k in labels:
            LinearSVC(C=C, loss="hinge", tol=TOL, max_iter=100_000).fit(X, Y[:, k])
    seconds = time.process_time() - start
    unconverged = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return seconds, f"{len(labels)} labels fitted, {unconverged} warned (LIBLINEAR's budget)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", help="a tree whose rank_svm_bcd.py runs as another side")
    parser.add_argument("--only", nargs="*", choices=CASES)
    args = parser.parse_args()
    sides = {"bcd": lambda problem: instance_bcd(problem, tol=TOL, max_iter=20_000)}
    if args.before:
        before = solver_from_tree(args.before, "rank_svm_bcd", "instance_bcd")
        sides["before"] = lambda problem: before(problem, tol=TOL, max_iter=20_000)
    data = load_bibtex("train")
    X, Y = data.X[: args.rows], np.asarray(data.Y[: args.rows])
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, bibtex train first {X.shape[0]} rows × "
          f"{X.shape[1]} words (CSR), {Y.shape[1]} labels, tol {TOL:g}, {args.rounds} alternating rounds, CPU seconds")
    warm_up = rs.make_problem(None, Y[:50, :5], 1.0, features=X[:50])
    for side, solve in sides.items():
        print(f"warm-up {side}: {run_bcd(solve, warm_up)[0]:.2f} s", flush=True)
    summary = []
    for case in args.only or CASES:
        scaling, C = case.split("-C")
        Xs, C = SCALINGS[scaling](X), float(C)
        problem = rs.make_problem(None, Y, C, features=Xs)
        print(f"\n[{case}] pairs={problem.n_pairs}", flush=True)
        times = {side: [] for side in [*sides, "linearsvc"]}
        for _ in range(args.rounds):
            for side in times:
                seconds, line = (run_linearsvc(Xs, Y, C) if side == "linearsvc" else run_bcd(sides[side], problem))
                times[side].append(seconds)
                print(f"  {side:9s} {seconds:7.2f} s  {line}", flush=True)
        summary.append((case, *report_case(times, "bcd")))
    print_summary(summary, "bcd", "case")


if __name__ == "__main__":
    main()
