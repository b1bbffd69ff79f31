"""BinaryApproachSVM and CategoricalRegressionSVM "fast" against their scikit-learn peers on yeast train
(issue 19), linear and RBF kernels, run by hand::

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_binary_linear.py [--rounds 3] [--out FILE]

* ``BinaryApproachSVM(kernel, C=1)`` ("fast" = water-filling; factor mode on the linear kernel's rank-103
  Gram matrix) against binary relevance: one ``SVC(kernel, C=1)`` per label;
* ``CategoricalRegressionSVM(kernel, C=1)`` on the argmax class of each row (13 classes, codes (7))
  against the same BR-SVC on its code columns and against the multiclass ``SVC(kernel, C=1)`` on the
  classes (the issue's peer);
* X standardised, ``gamma="scale"``, default tolerances (the estimators' tol 1e-7 certificate; SVC's
  own default tol).

Times are CPU seconds (``time.process_time``) of a whole ``fit`` (Gram matrix, solver, fit report). The
sides alternate within each round; medians over the rounds, ratios of medians.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mlsvm import BinaryApproachSVM, CategoricalRegressionSVM
from mlsvm.datasets import load_yeast
from mlsvm.estimators.rank_binary import categorical_codes


def br_svc(X, Y, kernel):
    return [SVC(C=1.0, kernel=kernel).fit(X, Y[:, k]) for k in range(Y.shape[1]) if np.ptp(Y[:, k]) > 0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="also write the output to this file")
    args = parser.parse_args(argv)
    data = load_yeast("train")
    X = StandardScaler().fit_transform(np.asarray(data.X, dtype=float))
    Y = np.asarray(data.Y)
    classes = Y.argmax(axis=1)
    codes = categorical_codes(np.unique(classes).size)[np.searchsorted(np.unique(classes), classes)]
    lines = [f"# yeast train 1500 x 103, X standardised, C = 1, OMP_NUM_THREADS=1, {args.rounds} alternating "
             f"rounds, medians of CPU s; {time.strftime('%Y-%m-%d %H:%M')}"]
    print(lines[0], flush=True)
    for kernel in ("linear", "rbf"):
        sides = {
            "BinaryApproachSVM": lambda: BinaryApproachSVM(kernel=kernel).fit(X, Y),
            "BR-SVC (labels)": lambda: br_svc(X, Y, kernel),
            "CategoricalRegressionSVM": lambda: CategoricalRegressionSVM(kernel=kernel).fit(X, classes),
            "BR-SVC (codes)": lambda: br_svc(X, codes, kernel),
            "SVC multiclass": lambda: SVC(C=1.0, kernel=kernel).fit(X, classes),
        }
        times = {name: [] for name in sides}
        fitted = {}
        for _ in range(args.rounds):
            for name, run in sides.items():
                start = time.process_time()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    fitted[name] = (run(), [str(w.message)[:80] for w in caught])
                times[name].append(time.process_time() - start)
        median = {name: float(np.median(values)) for name, values in times.items()}
        for name in sides:
            model, warned = fitted[name]
            report = getattr(model, "fit_report_", None)
            extra = ""
            if report is not None:
                extra = (f"  converged {report.converged}  rel.gap {report.relative_gap:.1e}  max KKT "
                         f"{max(report.kkt.values()):.1e}  solver {report.solver}")
            lines.append(f"{kernel:<6} {name:<25} {median[name]:8.2f} s  (rounds "
                         f"{', '.join(f'{v:.2f}' for v in times[name])}){extra}"
                         f"{'  warnings: ' + '; '.join(sorted(set(warned))) if warned else ''}")
            print(lines[-1], flush=True)
        for name, peer in (("BinaryApproachSVM", "BR-SVC (labels)"), ("CategoricalRegressionSVM", "BR-SVC (codes)"),
                           ("CategoricalRegressionSVM", "SVC multiclass")):
            lines.append(f"{kernel:<6} ratio {name} / {peer}: {median[name] / median[peer]:.1f}")
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
