"""Binary approach (E&W Problem 3), run by hand: ``python benchmarks/bench_rank_binary.py``.

1. CVXPY (ECOS, the estimator's default backend) vs the experimental alternating solver (called directly) on an emotions subset,
   side by side: time ratio, objective agreement, gaps.
2. Yeast (train 1500 × 103 → test 917, 14 labels), linear kernel, Problem 3 with CVXPY/ECOS:
   Hamming loss (sign decoding, eq. 2), ranking loss, one-error, average precision, beside the
   paper's binary-SVM numbers (Fig. 8, polynomial degree 2; the paper's binary approach is C = ∞,
   i.e. independent two-class SVMs) and scikit-learn one-vs-rest SVC with the same kernel.
"""

import time
import warnings

import numpy as np
from sklearn.svm import SVC

from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.estimators.rank_binary import BinaryApproachSVM
from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import make_kernel
from mlsvm.solvers.rank_binary_alternating import solve_binary_approach
from mlsvm.metrics import average_precision, hamming_loss, one_error, ranking_loss
from mlsvm.report import build_report, relative_difference


def standardize(train, *others):
    mean, scale = train.mean(0), train.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    return [(a - mean) / scale for a in (train, *others)]


def solver_ratio(n=200):
    data = load_emotions()
    (X,) = standardize(data.X[:n])
    rows = {}
    for solver in ("cvxpy", "alternating"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            if solver == "cvxpy":
                report = BinaryApproachSVM(C=1.0, kernel="rbf", solver=solver).fit(X, data.Y[:n]).fit_report_
            else:   # not an estimator solver (experimental, see its module): call it directly
                problem = formulation.BinaryApproachProblem(make_kernel("rbf", "scale", X=X)(X), data.Y[:n], 1.0)
                r = solve_binary_approach(problem)
                report = build_report(formulation.evaluate(problem, r.primal, r.dual), r, 1e-7, solver="alternating")
            rows[solver] = (time.perf_counter() - start, report, len(caught))
    for solver, (seconds, report, warned) in rows.items():
        print(f"  {solver:12s} {seconds:7.2f} s  objective {report.primal_objective:.8f}  "
              f"rel.gap {report.relative_gap:.1e}  max KKT {report.max_kkt:.1e}  iterations {report.n_iter}"
              f"  warnings {warned}")
    print(f"  time ratio cvxpy / alternating: {rows['cvxpy'][0] / rows['alternating'][0]:.2f}; objective "
          f"difference {relative_difference(rows['cvxpy'][1].primal_objective, rows['alternating'][1].primal_objective):.1e}")


def yeast(C=1.0):
    train, test = load_yeast("train"), load_yeast("test")
    Xtr, Xte = standardize(train.X, test.X)
    start = time.perf_counter()
    est = BinaryApproachSVM(C=C, kernel="linear").fit(Xtr, train.Y)
    seconds = time.perf_counter() - start
    scores = est.decision_function(Xte)
    report = est.fit_report_
    print(f"  Problem 3 (C={C}, linear, ECOS): {seconds:.1f} s, rel.gap {report.relative_gap:.1e}, "
          f"max KKT {report.max_kkt:.1e}")
    ovr = np.column_stack([SVC(C=C, kernel="linear").fit(Xtr, train.Y[:, k]).decision_function(Xte)
                           for k in range(train.Y.shape[1])])
    print(f"  {'':22s} {'Problem 3':>10s} {'OvR SVC':>10s} {'paper binary deg 2':>19s}")
    for name, metric, paper, use_sign in (
            ("precision (avg prec.)", average_precision, 0.692, False),
            ("ranking loss", ranking_loss, 0.241, False), ("Hamming loss", hamming_loss, 0.247, True),
            ("one-error", one_error, 0.341, False)):
        ours = metric(test.Y, (scores > 0).astype(int) if use_sign else scores)
        base = metric(test.Y, (ovr > 0).astype(int) if use_sign else ovr)
        print(f"  {name:22s} {ours:10.3f} {base:10.3f} {paper:19.3f}")


if __name__ == "__main__":
    print("1. solvers side by side (emotions, first 200, rbf, C=1)")
    solver_ratio()
    print("2. yeast, linear kernel")
    yeast()
