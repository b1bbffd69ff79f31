"""Matrix-SVM, linear kernel, on raw (unscaled) features, run by hand::

    OMP_NUM_THREADS=1 python benchmarks/bench_matrix_svm_raw.py [--rounds 3] [--before <tree>]

emotions' columns reach 237 around means up to 155 (cond X̄ ≈ 2e5 for ``X̄ = [X, 1]``). Sides, each
fit in its own process after an untimed fit on 200 rows (CPU seconds of the fit alone), alternating
within each round, medians:

* ``mlsvm``: ``MatrixSVM(kernel="linear", C=C)`` at its defaults ("fast" = the interior point, tol
  1e-8), with its certificate (converged, relative gap);
* ``mlsvm (before)``: the same from the tree ``--before`` (e.g. ``git archive <rev>`` unpacked);
* ``LinearSVC``: what a user would otherwise run for exactly this problem, one
  ``LinearSVC(loss="hinge", C=C, intercept_scaling=1)`` per label at scikit-learn's defaults (tol
  1e-4, max_iter 1000; LIBLINEAR's dual coordinate descent, whose bias is regularized like the
  Matrix-SVM's). It exposes no dual point: the table gives its primal objective relative to mlsvm's
  certified one and the ConvergenceWarnings it raised. (Run to tol 1e-6 with max_iter 100,000 it took
  86 s on yeast at C = 1 and stopped at the cap, 4e-8 above the optimum.)

Cases: emotions raw at C = 1, 10, 100; emotions scaled to [−1, 1] at C = 1; yeast train at C = 1, 100.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASES = ["emotions:1", "emotions:10", "emotions:100", "emotions-scaled:1", "yeast:1", "yeast:100"]


def _data(name):
    import numpy as np

    from mlsvm.datasets import load_emotions, load_yeast

    data = load_yeast("train") if name == "yeast" else load_emotions()
    X = data.X
    if name == "emotions-scaled":
        low, high = X.min(axis=0), X.max(axis=0)
        X = (X - low) / np.where(high > low, high - low, 1.0) * 2.0 - 1.0
    return X, data.Y


def _objective(X, Y, C, W, b):
    import numpy as np

    margins = (2.0 * Y - 1.0) * (X @ W + b)
    return float(0.5 * np.sum(W * W) + 0.5 * np.sum(b * b) + C * np.maximum(0.0, 1.0 - margins).sum())


def _fit(side, X, Y, C):
    if side == "LinearSVC":
        from sklearn.svm import LinearSVC

        return [LinearSVC(loss="hinge", C=C, intercept_scaling=1.0).fit(X, Y[:, k]) for k in range(Y.shape[1])]
    from mlsvm import MatrixSVM

    return MatrixSVM(kernel="linear", C=C).fit(X, Y)


def _one_fit(side, case):
    """Runs in the child process: one fit, its CPU time and outcome as JSON on stdout."""
    import time
    import warnings

    import numpy as np

    name, C = case.split(":")
    C = float(C)
    X, Y = _data(name)
    with warnings.catch_warnings():   # untimed warm-up: the first call's imports and LAPACK set-up
        warnings.simplefilter("ignore")
        _fit(side, X[:200], Y[:200], C)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        fitted = _fit(side, X, Y, C)
        seconds = time.process_time() - start
        if side == "LinearSVC":
            W = np.column_stack([m.coef_.ravel() for m in fitted])
            b = np.array([m.intercept_[0] for m in fitted])
            out = {"converged": None, "gap": None, "iterations": int(max(m.n_iter_ for m in fitted)),
                   "objective": _objective(X, Y, C, W, b)}
        else:
            report = fitted.fit_report_   # the formulation's own primal, the same sum as _objective
            out = {"converged": bool(report.converged), "gap": float(report.relative_gap),
                   "iterations": int(report.n_iter), "objective": float(report.primal_objective)}
    out.update(seconds=seconds, warnings=len(caught))
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default=None, help="a tree of an older mlsvm to time beside this one")
    args = parser.parse_args()
    sides = ["mlsvm", "LinearSVC"] + (["mlsvm (before)"] if args.before else [])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = {}
    for _ in range(args.rounds):
        for case in CASES:
            for side in sides:
                env = dict(os.environ, OMP_NUM_THREADS="1",
                           PYTHONPATH=args.before if side == "mlsvm (before)" else here)
                child = subprocess.run([sys.executable, __file__, "--child", side, case], env=env,
                                       capture_output=True, text=True, check=True)
                runs.setdefault((case, side), []).append(json.loads(child.stdout))
    print(f"MatrixSVM(kernel='linear') at its defaults (tol 1e-8) against per-label LinearSVC (hinge, regularized "
          f"bias, scikit-learn's defaults); CPU seconds, median of {args.rounds} alternating round(s), OMP_NUM_THREADS=1")
    for case in CASES:
        ours = runs[(case, "mlsvm")]
        median = {side: sorted(r["seconds"] for r in runs[(case, side)])[len(ours) // 2] for side in sides}
        line = (f"{case:18s} mlsvm {median['mlsvm']:6.2f} s ({ours[0]['iterations']} it., converged "
                f"{ours[0]['converged']}, gap {ours[0]['gap']:.1e})")
        peer = runs[(case, "LinearSVC")][0]
        line += (f" | LinearSVC {median['LinearSVC']:6.2f} s ({peer['iterations']} it., {peer['warnings']} warnings, "
                 f"objective {(peer['objective'] - ours[0]['objective']) / abs(ours[0]['objective']):+.1e} rel. to mlsvm's)"
                 f" | ratio {median['mlsvm'] / median['LinearSVC']:.2f}x")
        if args.before:
            old = runs[(case, "mlsvm (before)")][0]
            line += (f" | before {median['mlsvm (before)']:6.2f} s (converged {old['converged']}, "
                     f"gap {old['gap']:.1e})")
        print(line)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _one_fit(sys.argv[2], sys.argv[3])
    else:
        main()
