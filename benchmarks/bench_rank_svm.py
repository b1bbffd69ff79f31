"""Rank-SVM benchmark (run by hand): every number side by side in one run.

1. the exact solvers ("ipm": interior point in the primal's Newton system, what "fast" runs for
   the linear kernel; "alm": proximal ALM, L-BFGS-B then projected Newton–CG) vs CVXPY/Clarabel
   on the dual, yeast train, linear kernel: a 300-instance subset and the full 1500 (58,248
   pairs); time ratio, agreement of the optima, each solver's relative gap and KKT residual;
2. Frank–Wolfe's certified gap vs iterations (300 subset; first iterations on full yeast);
3. peak memory (tracemalloc) of the hand-written solvers on full yeast;
4. yeast test metrics of Rank-SVM (RBF) beside binary-relevance SVC with the same kernel and the
   paper's Fig. 8/9 numbers (polynomial kernels; the paper's split is its own, not MULAN's).

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_svm.py [--skip-full-cvxpy] [--skip-metrics]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.svm import SVC

from mlsvm import RankSVM
from mlsvm.datasets import load_yeast
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.metrics import average_precision, hamming_loss, one_error, ranking_loss
from mlsvm.solvers.rank_svm_frank_wolfe import frank_wolfe
from mlsvm.solvers.rank_svm_alm import proximal_alm
from mlsvm.solvers.rank_svm_ipm import interior_point
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference

#: Elisseeff & Weston, Fig. 8/9: Rank-SVM on yeast (their 1500/917 split), polynomial kernels
PAPER = {"degree": [2, 3, 4, 5, 6, 7, 8, 9],
         "average_precision": [0.703, 0.740, 0.746, 0.762, 0.765, 0.770, 0.773, 0.769],
         "ranking_loss": [0.227, 0.191, 0.190, 0.175, 0.170, 0.166, 0.163, 0.163],
         "hamming_loss": [0.238, 0.217, 0.209, 0.201, 0.199, 0.198, 0.196, 0.197],
         "one_error": [0.334, 0.262, 0.255, 0.232, 0.232, 0.223, 0.217, 0.225]}
C = 1.0


EXACT_SOLVERS = {
    "ipm": lambda problem, X: interior_point(problem, X, tol=1e-8),
    "alm": lambda problem, X: proximal_alm(problem, tol=1e-8, factor=X),
}


def exact_vs_cvxpy(X, Y, label, run_cvxpy=True):
    gram = make_kernel("linear")(X)
    problem = rs.make_problem(gram, Y, C)
    times, primals = {}, {}
    for name, run in EXACT_SOLVERS.items():
        start = time.perf_counter()
        result = run(problem, X)
        times[name] = time.perf_counter() - start
        alpha, b = result.dual["alpha"], result.primal["b"]
        primals[name] = primal = rs.primal_objective(problem, problem.scatter(alpha), b)
        dual = rs.dual_objective(problem, alpha)
        kkt = max(rs.kkt_residuals(problem, alpha, b).values())
        print(f"[{label}] n={X.shape[0]} pairs={problem.n_pairs}: {name} {times[name]:.2f} s, "
              f"relative gap {(primal - dual) / max(1, abs(primal)):.1e}, max KKT {kkt:.1e}, "
              f"{result.n_iter} iterations")
    if run_cvxpy:
        start = time.perf_counter()
        cvx, _ = rs.cvxpy_dual(problem)
        reference = -solve(cvx, "CLARABEL")
        cvxpy_time = time.perf_counter() - start
        print(f"[{label}] CVXPY/Clarabel {cvxpy_time:.2f} s (incl. compile), optimum {reference:.10g}")
        for name in EXACT_SOLVERS:
            print(f"[{label}] {name} vs Clarabel: relative difference "
                  f"{relative_difference(primals[name], reference):.1e}, time ratio Clarabel/{name} = "
                  f"{cvxpy_time / times[name]:.1f}x")
    return problem


def frank_wolfe_trace(problem, label, max_iter):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = frank_wolfe(problem, tol=1e-6, max_iter=max_iter)
    elapsed = time.perf_counter() - start
    gaps, duals = result.history["fw_gap"], result.history["dual"]
    marks = [i for i in (0, 1, 3, 10, 30, 100, 300, 1000, 3000) if i < len(gaps)] + [len(gaps) - 1]
    rows = ", ".join(f"it {i}: {gaps[i] / max(1, abs(duals[i] + gaps[i])):.1e}" for i in sorted(set(marks)))
    print(f"[{label}] Frank-Wolfe relative gap vs iterations ({elapsed:.1f} s): {rows}")


def peak_memory(problem, X):
    """tracemalloc peak of each solver's own arrays (the Gram matrix is not counted); the exact
    solvers for 2 (outer) iterations (their arrays are all allocated by then; tracemalloc slows numpy
    allocation too much for a full timed run), Frank–Wolfe for 20 iterations."""
    for name, run in (("ipm (2 its)", lambda: interior_point(problem, X, tol=1e-12, max_iter=2)),
                      ("alm (2 outer its)", lambda: proximal_alm(problem, tol=1e-12, max_iter=2, factor=X)),
                      ("frank-wolfe (20 its)", lambda: frank_wolfe(problem, tol=1e-12, max_iter=20))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tracemalloc.start()
            run()
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        print(f"[memory] {name}: peak {peak / 2**20:.1f} MiB (Gram {problem.gram.nbytes / 2**20:.1f} MiB not "
              f"counted; T = {problem.n_pairs}, a T×T matrix would be {problem.n_pairs ** 2 * 8 / 2**30:.0f} GiB)")


def yeast_metrics(train, test):
    print("[metrics] yeast test (917), C=1, RBF gamma='scale'")
    start = time.perf_counter()
    model = RankSVM(C=C, kernel="rbf", gamma="scale", tol=1e-6).fit(train.X, train.Y)
    fit_time = time.perf_counter() - start
    scores, predicted = model.decision_function(test.X), model.predict(test.X)
    report = model.fit_report_
    rows = {"Rank-SVM rbf": (scores, predicted)}
    print(f"  Rank-SVM fit {fit_time:.1f} s, converged={report.converged}, relative gap "
          f"{report.relative_gap:.1e}, max KKT {report.max_kkt:.1e}")
    gamma = model.kernel_.gamma
    br_scores = np.zeros_like(scores)
    br_pred = np.zeros_like(predicted)
    for k in range(train.Y.shape[1]):
        svc = SVC(C=C, kernel="rbf", gamma=gamma).fit(train.X, train.Y[:, k])
        br_scores[:, k] = svc.decision_function(test.X)
        br_pred[:, k] = svc.predict(test.X)
    rows["binary-relevance SVC rbf"] = (br_scores, br_pred)
    print(f"  {'':26s} {'Hamming':>8s} {'rank loss':>9s} {'one-err':>8s} {'avg prec':>8s}")
    for name, (F, P) in rows.items():
        print(f"  {name:26s} {hamming_loss(test.Y, P):8.3f} {ranking_loss(test.Y, F):9.3f} "
              f"{one_error(test.Y, F):8.3f} {average_precision(test.Y, F):8.3f}")
    for j, degree in enumerate(PAPER["degree"]):
        print(f"  {'paper Rank-SVM poly d=' + str(degree):26s} {PAPER['hamming_loss'][j]:8.3f} "
              f"{PAPER['ranking_loss'][j]:9.3f} {PAPER['one_error'][j]:8.3f} {PAPER['average_precision'][j]:8.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-full-cvxpy", action="store_true")
    parser.add_argument("--skip-metrics", action="store_true")
    args = parser.parse_args()
    train = load_yeast("train")
    small = exact_vs_cvxpy(train.X[:300], train.Y[:300], "yeast-300 linear")
    frank_wolfe_trace(small, "yeast-300 linear", 1000)
    full = exact_vs_cvxpy(train.X, train.Y, "yeast-1500 linear", run_cvxpy=not args.skip_full_cvxpy)
    frank_wolfe_trace(full, "yeast-1500 linear", 100)
    peak_memory(full, train.X)
    if not args.skip_metrics:
        yeast_metrics(train, load_yeast("test"))


if __name__ == "__main__":
    main()
