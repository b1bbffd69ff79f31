"""Matrix-SVM benchmark (run by hand): the "fast" solver ("ipm" on the linear kernel, "apg" on RBF),
batched vs label-by-label AGD, Alg. 1,
scikit-learn and CVXPY on emotions and yeast-train, and the Table 4 metrics.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_matrix_svm.py [--cvxpy] [--paper] [--table4]
    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_matrix_svm.py --versus-svc 20

What is compared (features scaled to [−1, 1] as in the paper, C = 1, RBF p = 0.3; all times side
by side in one run, single-threaded BLAS; every row is the fastest of 3 runs when a run takes less
than 2 s, else one run):

* Our solvers stop on the relative duality gap of the Matrix-SVM objective (SPEC §2.5, eq. 1/8,
  regularized bias ``K̄ = K + 11ᵀ``) ≤ ``TOL`` = 1e-6, an exact certificate; the table shows the gap
  reached and the primal objective relative to the best one found (``rel. to best``).
* ``LinearSVC(loss="hinge", intercept_scaling=1)`` (linear kernel) and ``LinearSVC(fit_intercept=False)``
  on the Cholesky factor ``L`` of ``K̄ = LLᵀ`` (RBF; factorization time included) solve *exactly our
  problem* label by label (LIBLINEAR's dual coordinate descent). They stop on LIBLINEAR's own
  projected-gradient test (``tol`` = 1e-6 here, default 1e-4); we report their primal objective
  relative to the best (no dual point is exposed, so no gap).
* ``SVC(kernel="precomputed")`` per label solves a *different* problem: LIBSVM adds a free
  (unregularized) bias, i.e. the dual gets ``yᵀα = 0``, under which ``αᵀY11ᵀYα = 0``, so SVC on K̄
  and on K have the same optimum — the unregularized-bias SVM, not the Matrix-SVM (its α is 60–150 %
  off our objective). It is timed as the binary-relevance time reference of the issue, with
  ``tol`` = 1e-7 so that *its own* relative duality gap (primal with its intercept, dual at its α,
  same normalisation) is ≤ 1e-6; the table reports that own gap, and its objective is its own.
* CVXPY: the dual (eq. 8) with Clarabel, all labels in one problem (``--cvxpy``).

The paper's claim "batched 2–4× faster than label by label" is measured on plain AGD (exact λ_max,
restart, no polish) and on "apg"; per-label blocks make both runs perform the same
iterations, so only the products are batched.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from sklearn.model_selection import KFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC, LinearSVC

from mlsvm import MatrixSVM
from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.registry.matrix_svm import apg_options
from mlsvm.formulations import matrix_svm as ms
from mlsvm.kernels import make_kernel
from mlsvm.metrics import average_precision, hamming_loss, macro_f1, micro_f1, subset_accuracy
from mlsvm.solvers.matrix_svm_agd import solve_dual_agd, solve_label_by_label
from mlsvm.solvers.matrix_svm_ipm import interior_point_box
from mlsvm.solvers.cvxpy_tools import solve

GAMMA = 0.3
PAPER_TABLE4 = {  # BR-SVM(L), M-SVM(L), BR-SVM(RBF), M-SVM(RBF): exact match, HL, macro F1, micro F1, AP
    "emotions": {"linear": (0.27, 0.206, 0.616, 0.642, 0.739), "rbf": (0.307, 0.181, 0.639, 0.673, 0.765)},
    "yeast": {"linear": (0.149, 0.2, 0.327, 0.635, 0.671), "rbf": (0.204, 0.185, 0.385, 0.657, 0.684)},
}


def _scale(train, test=None):
    scaler = MinMaxScaler((-1, 1)).fit(train)
    return scaler.transform(train), None if test is None else np.clip(scaler.transform(test), -1, 1)


def _relative_gap(problem, coef, alpha):
    primal, dual = ms.primal_objective(problem, coef), ms.dual_objective(problem, alpha)
    return primal, (primal - dual) / max(1.0, abs(primal), abs(dual))


TOL = 1e-6
#: every row is timed the same way: runs shorter than REPEAT_BELOW seconds are repeated (REPEATS
#: runs in all) and the fastest run is reported (timeit's rule: the minimum is the least disturbed)
REPEATS, REPEAT_BELOW = 3, 2.0


def _timed(run):
    """``(fastest wall time, result of the last run)`` of ``run()`` under the rule above."""
    times = []
    while True:
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
        if len(times) == REPEATS or times[-1] >= REPEAT_BELOW:
            return min(times), result


def _svc_own_gap(problem, fits):
    """The largest relative duality gap of SVC's own (free-bias) problem over the labels."""
    gaps = []
    for y, svc in zip(problem.signed.T, fits):
        beta = np.zeros(y.size)
        beta[svc.support_] = svc.dual_coef_.ravel()
        scores = problem.gram @ beta
        primal = 0.5 * beta @ scores + np.maximum(0.0, 1.0 - y * (scores + svc.intercept_[0])).sum()
        dual = np.abs(beta).sum() - 0.5 * beta @ scores
        gaps.append((primal - dual) / max(1.0, abs(primal), abs(dual)))
    return max(gaps)


def _sklearn_rbf(problem):
    """SVC per label (its own problem, own gap) and LinearSVC on a factor of K̄ (our problem)."""
    elapsed, fits = _timed(lambda: [SVC(C=1.0, kernel="precomputed", tol=1e-7).fit(problem.gram, y)
                                    for y in problem.signed.T])
    svc_row = (elapsed, np.nan, _svc_own_gap(problem, fits), 0)

    def linear_svc_on_factor():
        factor = cholesky(problem.gram_bar, lower=True)
        weights = np.array([LinearSVC(C=1.0, loss="hinge", fit_intercept=False, tol=1e-6, max_iter=1_000_000)
                            .fit(factor, y).coef_.ravel() for y in problem.signed.T]).T
        return solve_triangular(factor.T, weights)                   # W = Lᵀ Θ
    elapsed, coef = _timed(linear_svc_on_factor)
    return svc_row, (elapsed, ms.primal_objective(problem, coef), np.nan, 0)


def _sklearn_linear(problem, X):
    elapsed, fits = _timed(lambda: [LinearSVC(C=1.0, loss="hinge", intercept_scaling=1.0, tol=1e-6,
                                              max_iter=1_000_000).fit(X, y) for y in problem.signed.T])
    W = np.array([f.coef_.ravel() for f in fits]).T
    b = np.array([f.intercept_[0] for f in fits])
    primal = 0.5 * (np.sum(W ** 2) + np.sum(b ** 2)) + np.maximum(0, 1 - problem.signed * (X @ W + b)).sum()
    return elapsed, primal, np.nan, 0


def timing(name, X, Y, kernel, max_iter, with_cvxpy, with_paper, with_gradient=True):
    gram = make_kernel(kernel, GAMMA)(X)
    problem = ms.MatrixSVMProblem(gram, Y, 1.0)
    G, S = problem.gram_bar, problem.signed
    plain = dict(tol=TOL, max_iter=max_iter)
    fast = dict(plain, **apg_options(problem))
    runs = {}
    if kernel == "linear":   # what "fast" runs on the linear hinge
        runs["ipm (= fast), batched"] = lambda: interior_point_box(X, S, 1.0, tol=TOL)
    if with_gradient:
        runs.update({"apg (= fast for rbf), batched": lambda: solve_dual_agd(G, S, 1.0, **fast),
                     "apg, label by label": lambda: solve_label_by_label(G, S, 1.0, **fast),
                     "AGD (exact L, restart), batched": lambda: solve_dual_agd(G, S, 1.0, **plain),
                     "AGD (exact L, restart), label by label": lambda: solve_label_by_label(G, S, 1.0, **plain)})
    if with_paper:
        runs["Alg. 1 as printed, batched"] = lambda: solve_dual_agd(
            G, S, 1.0, lipschitz="frobenius", restart=False, clip_extrapolation=True, **plain)
    rows = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, run in runs.items():
            elapsed, result = _timed(run)
            rows[label] = (elapsed, *_relative_gap(problem, result.primal["coef"], result.dual["alpha"]), result.n_iter)
        if kernel == "linear":
            rows["LinearSVC per label (same problem)"] = _sklearn_linear(problem, X)
        else:
            rows["SVC(K) per label (free bias; own gap)"], rows["LinearSVC on chol(K̄) (same problem)"] = _sklearn_rbf(problem)
        if with_cvxpy:
            elapsed, optimum = _timed(lambda: -solve(ms.cvxpy_dual(problem)[0], "CLARABEL"))
            rows["CVXPY dual (Clarabel)"] = (elapsed, optimum, np.nan, 0)
    best = np.nanmin([r[1] for r in rows.values()])
    base = rows["ipm (= fast), batched" if kernel == "linear" else "apg (= fast for rbf), batched"][0]
    print(f"\n{name} ({X.shape[0]}×{X.shape[1]}×{Y.shape[1]}), {kernel}, tol {TOL:g}")
    print(f"  {'solver':40s} {'time s':>8s} {'÷ fast':>8s} {'objective':>12s} {'rel. to best':>12s} {'rel.gap':>9s} {'iter':>6s}")
    for label, (elapsed, primal, gap, n_iter) in rows.items():
        print(f"  {label:40s} {elapsed:8.3f} {elapsed / base:8.2f} {primal:12.6f} {(primal - best) / best:12.1e} "
              f"{gap:9.1e} {n_iter:6d}")


def versus_svc(rounds):
    """Yeast-train RBF: "fast" (MatrixSVM's "apg") and SVC per label at their own gap ≤ 1e-6, run
    alternately ``rounds`` times; min, median and the median of the per-round ratio, which is what
    a shared machine's drift disturbs least."""
    yeast = load_yeast("train")
    problem = ms.MatrixSVMProblem(make_kernel("rbf", GAMMA)(_scale(yeast.X)[0]), yeast.Y, 1.0)
    runs = {"apg (= fast for rbf), batched": lambda: solve_dual_agd(
                problem.gram_bar, problem.signed, 1.0, tol=TOL, max_iter=50_000, **apg_options(problem)),
            "SVC(K) per label, tol 1e-7": lambda: [SVC(C=1.0, kernel="precomputed", tol=1e-7).fit(problem.gram, y)
                                                   for y in problem.signed.T]}
    times = {label: [] for label in runs}
    for _ in range(rounds):
        for label, run in runs.items():
            start = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - start)
    ours, svc = (np.array(t) for t in times.values())
    print(f"\nyeast-train rbf, {rounds} alternating rounds, tol {TOL:g}")
    for label, t in times.items():
        print(f"  {label:32s} min {min(t):.3f} s   median {np.median(t):.3f} s")
    print(f"  ours / SVC: median of rounds {np.median(ours / svc):.2f}, range {np.min(ours / svc):.2f}–{np.max(ours / svc):.2f}")


def table4_row(Y_true, model, X_test):
    scores = model.decision_function(X_test)
    predicted = model.predict(X_test)
    return np.array([subset_accuracy(Y_true, predicted), hamming_loss(Y_true, predicted), macro_f1(Y_true, predicted),
                     micro_f1(Y_true, predicted), average_precision(Y_true, scores)])


def table4(tol):
    names = ("exact match", "Hamming loss", "macro F1", "micro F1", "avg precision")
    emotions = load_emotions()
    for kernel in ("linear", "rbf"):
        rows = []
        for train, test in KFold(10, shuffle=True, random_state=0).split(emotions.X):
            X_train, X_test = _scale(emotions.X[train], emotions.X[test])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = MatrixSVM(kernel=kernel, gamma=GAMMA, tol=tol, max_iter=20_000).fit(X_train, emotions.Y[train])
            rows.append(table4_row(emotions.Y[test], model, X_test))
        rows = np.array(rows)
        print(f"\nemotions 10-fold CV (KFold shuffle, seed 0), M-SVM({kernel}), tol {tol:g}")
        for j, metric in enumerate(names):
            print(f"  {metric:14s} {rows[:, j].mean():.3f} ± {rows[:, j].std():.3f}   paper {PAPER_TABLE4['emotions'][kernel][j]}")
    train, test = load_yeast("train"), load_yeast("test")
    X_train, X_test = _scale(train.X, test.X)
    for kernel in ("linear", "rbf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = MatrixSVM(kernel=kernel, gamma=GAMMA, tol=tol, max_iter=20_000).fit(X_train, train.Y)
        row = table4_row(test.Y, model, X_test)
        report = model.fit_report_
        print(f"\nyeast train/test (1500/917), M-SVM({kernel}), rel.gap {report.relative_gap:.1e}, {report.n_iter} it")
        for j, metric in enumerate(names):
            print(f"  {metric:14s} {row[j]:.3f}   paper (10-fold CV on 2417) {PAPER_TABLE4['yeast'][kernel][j]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--table4", action="store_true")
    parser.add_argument("--cvxpy", action="store_true", help="also time the CVXPY dual")
    parser.add_argument("--paper", action="store_true", help="also Alg. 1 as printed (slow: 15 000 iterations on yeast)")
    parser.add_argument("--yeast-linear", action="store_true",
                        help="also the gradient solvers on the linear kernel on yeast (slow: K̄ has rank d + 1)")
    parser.add_argument("--versus-svc", type=int, default=0, metavar="ROUNDS",
                        help="only: yeast RBF, fast against SVC per label, alternating ROUNDS times")
    args = parser.parse_args()
    if args.versus_svc:
        versus_svc(args.versus_svc)
        return
    emotions = load_emotions()
    yeast = load_yeast("train")
    timing("emotions", _scale(emotions.X)[0], emotions.Y, "rbf", 50_000, args.cvxpy, args.paper)
    timing("emotions", _scale(emotions.X)[0], emotions.Y, "linear", 20_000, args.cvxpy, args.paper)
    timing("yeast-train", _scale(yeast.X)[0], yeast.Y, "rbf", 50_000, args.cvxpy, args.paper)
    timing("yeast-train", _scale(yeast.X)[0], yeast.Y, "linear", 20_000, args.cvxpy, args.paper,
           with_gradient=args.yeast_linear)
    if args.table4:
        table4(1e-3)


if __name__ == "__main__":
    main()
