"""OvN benchmark (run by hand): exact dual IPM and MM against CVXPY on emotions, and the paper's
real-data protocol beside Tables 5 and 6.

    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py speed      # emotions, linear and RBF
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py ratio      # the same without MM (minutes less)
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py realdata   # iris, wine, emotions, 3-fold CV

``speed``: soft w / hard b (the paper's Sw-Hb), canonical α = 0.25, β = 1, on all 593 emotions
samples (features standardised). CVXPY = the Clarabel primal (build + solve), timed side by side
with ``fast`` in one run; MM runs with ε = 1e-8 (at most 4000 iterations linear, 1500 RBF) and reports the iterations and time it needs to
come within 1e-3 and 1e-6 (relative) of the CVXPY optimum.

``realdata``: the paper's protocol (§5): 3-fold CV (shuffled) for each point of a small grid, the
best mean score is reported (as the paper does), for OvN Sw-Hb (``fast``) and for scikit-learn's
one-vs-rest SVC (binary relevance) on the same grid of C = β/2.
"""

from __future__ import annotations

import itertools
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import KFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

from mlsvm import OvNSVM
from mlsvm.datasets import load_emotions
from mlsvm.formulations import ovn
from mlsvm.metrics import example_accuracy, hamming_loss
from mlsvm.solvers.ovn_mm import mm
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference


def _standardize(X):
    scale = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def speed(with_mm: bool = True) -> None:
    data = load_emotions()
    X, Y = _standardize(data.X), data.Y
    print(f"emotions: n={X.shape[0]}, d={X.shape[1]}, K={Y.shape[1]}, memberships T={int(Y.sum())}")
    print(f"{'kernel':7} {'solver':8} {'time s':>8} {'objective':>14} {'rel.diff':>9} {'rel.gap':>9} {'KKT':>9} {'iters':>6} {'CVXPY/x':>8}")
    for kernel in ("linear", "rbf"):
        common = dict(alpha=0.25, beta=1.0, w_constraint="soft", b_constraint="hard", kernel=kernel)
        fast = OvNSVM(solver="fast", **common).fit(X, Y)
        gram = fast.kernel_(X)
        problem = ovn.OvNProblem(gram, Y, 0.25, 1.0, "soft", "hard", features=X if kernel == "linear" else None)
        start = time.perf_counter()
        optimum = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
        cvxpy_time = time.perf_counter() - start
        report = fast.fit_report_
        print(f"{kernel:7} {'cvxpy':8} {cvxpy_time:8.2f} {optimum:14.8f} {'':>9} {'':>9} {'':>9} {'':>6} {1.0:8.1f}")
        print(f"{kernel:7} {'fast':8} {report.solve_time:8.3f} {report.primal_objective:14.8f} "
              f"{relative_difference(report.primal_objective, optimum):9.1e} {report.relative_gap:9.1e} "
              f"{report.max_kkt:9.1e} {report.n_iter:6d} {cvxpy_time / report.solve_time:8.1f}")
        if not with_mm:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mm(problem, epsilon=1e-8, tol=1e-13,
                        max_iter=4000 if kernel == "linear" else 1500)
        history = np.asarray(result.history["primal"])
        per_iteration = result.solve_time / result.n_iter
        distance = (history - optimum) / max(1.0, abs(optimum))
        increases = np.diff(history)
        for target in (1e-3, 1e-6):
            reached = np.flatnonzero(distance <= target)
            if reached.size:
                iterations = int(reached[0]) + 1
                seconds = iterations * per_iteration
                print(f"{kernel:7} {'mm':8} {seconds:8.2f} {history[iterations - 1]:14.8f} {distance[iterations - 1]:9.1e} "
                      f"{'':>9} {'':>9} {iterations:6d} {cvxpy_time / seconds:8.1f}   (to {target:.0e} of the optimum)")
            else:
                print(f"{kernel:7} {'mm':8} not within {target:.0e} after {result.n_iter} iterations "
                      f"(reached {distance.min():.1e}, {result.solve_time:.1f} s)")
        smoothed_rise = max(np.diff(result.history["smoothed_objective"]).max(), 0.0)
        steps = np.asarray(result.history["step"])
        print(f"{'':7} mm: {result.n_iter} iterations, {per_iteration * 1e3:.1f} ms each; largest rise of the true "
              f"objective {max(increases.max(), 0.0):.1e}, of F_eps {smoothed_rise:.1e}; safeguard: "
              f"{int(np.sum((steps > 0) & (steps < 1)))} partial steps, {int(np.sum(steps == 0))} floor reductions "
              f"(final floor {result.history['epsilon'][-1]:.0e})")


def _cv_scores(make, X, Y, multiclass: bool):
    accuracies, losses = [], []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predicted = make().fit(X[train], Y[train]).predict(X[test])
        if multiclass:
            accuracies.append(np.mean(predicted == Y[test]))
            losses.append(1.0 - accuracies[-1])
        else:
            accuracies.append(example_accuracy(Y[test], predicted))
            losses.append(hamming_loss(Y[test], predicted))
    return float(np.mean(accuracies)), float(np.mean(losses))


PAPER = {  # (AS, HL) of OvN Sw-Hb and of OvR, Tables 5 and 6
    ("iris", "linear"): ((0.987, 0.013), (0.960, 0.04)), ("iris", "rbf"): ((0.987, 0.013), (0.967, 0.033)),
    ("wine", "linear"): ((0.843, 0.157), (0.967, 0.033)), ("wine", "rbf"): ((0.966, 0.034), (0.986, 0.014)),
    ("emotions", "linear"): ((0.494, 0.235), (0.530, 0.195)), ("emotions", "rbf"): ((0.50, 0.255), (0.575, 0.175)),
}


def realdata() -> None:
    iris, wine, emotions = load_iris(), load_wine(), load_emotions()
    sets = [("iris", _standardize(iris.data), iris.target, True), ("wine", _standardize(wine.data), wine.target, True),
            ("emotions", _standardize(emotions.X), emotions.Y, False)]
    alphas, betas = (-0.15, 0.0, 0.25, 0.5, 0.75, 0.9), (0.1, 1.0, 10.0, 100.0)
    print(f"{'data':9} {'kernel':7} {'OvN AS':>7} {'OvN HL':>7} {'paper':>13} {'BR AS':>7} {'BR HL':>7} {'paper':>13}  best OvN (α, β)")
    for name, X, Y, multiclass in sets:
        for kernel in ("linear", "rbf"):
            ovn_best = max(((_cv_scores(lambda a=a, b=b: OvNSVM(alpha=a, beta=b, kernel=kernel), X, Y, multiclass), (a, b))
                            for a, b in itertools.product(alphas, betas)), key=lambda t: t[0][0])
            svc = lambda b: OneVsRestClassifier(SVC(C=b / 2, kernel=kernel))  # noqa: E731 - OvR / BR, as in the paper
            br_best = max((_cv_scores(lambda b=b: svc(b), X, Y, multiclass) for b in betas), key=lambda t: t[0])
            paper_ovn, paper_br = PAPER[(name, kernel)]
            print(f"{name:9} {kernel:7} {ovn_best[0][0]:7.3f} {ovn_best[0][1]:7.3f} {str(paper_ovn):>13} "
                  f"{br_best[0]:7.3f} {br_best[1]:7.3f} {str(paper_br):>13}  {ovn_best[1]}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["speed", "realdata"]
    for part in parts:
        {"speed": speed, "ratio": lambda: speed(with_mm=False), "realdata": realdata}[part]()
