"""Rank-SVM and mLODM, linear kernel, on raw (unscaled) features over C, run by hand::

    OMP_NUM_THREADS=1 python benchmarks/bench_raw_features.py [--before <tree>] [--rounds 1]

emotions as MULAN ships it (593 × 72, columns up to 237, ‖x‖² up to 7e4): with a large C the Newton
systems of both "fast" routes are ill-conditioned (docs/rank_svm.md, docs/mlodm.md). Each fit runs
in its own process (CPU seconds of the fit alone) at the estimator's defaults but C:
``RankSVM(kernel="linear")`` ("fast" = the interior point, tol 1e-8) on all 593 rows and on the
first 100, ``MLODM(kernel="linear")`` ("fast" = Newton, tol 1e-6) on all 593 rows. ``--before``
runs the same from another tree (e.g. ``git archive <rev> mlsvm`` unpacked) in the same rounds,
alternating. The table gives whether the fit certified, its stopping value, its iterations and
the first words of its warning.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

FIT = r'''
import json, sys, time, warnings
import mlsvm
from mlsvm.datasets import load_emotions
name, n, C = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
data = load_emotions()
estimator = getattr(mlsvm, name)(kernel="linear", C=C)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    start = time.process_time()
    estimator.fit(data.X[:n], data.Y[:n])
    seconds = time.process_time() - start
report = estimator.fit_report_
print(json.dumps({"converged": bool(report.converged), "stop": float(report.stop_value), "iterations": int(report.n_iter),
                  "seconds": seconds, "warning": " | ".join(str(w.message)[:60] for w in caught)}))
'''

CASES = [("RankSVM", 100, C) for C in (1.0, 10.0, 100.0, 1e3, 1e4)] + \
        [("RankSVM", 593, C) for C in (1.0, 10.0, 100.0, 1e3, 1e4)] + \
        [("MLODM", 593, C) for C in (1.0, 10.0, 100.0, 1e3, 1e4)]


def _fit(tree, case):
    environment = dict(os.environ, OMP_NUM_THREADS="1")
    if tree:
        environment["PYTHONPATH"] = tree
    out = subprocess.run([sys.executable, "-c", FIT, *map(str, case)], capture_output=True, text=True,
                         env=environment, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a tree holding the mlsvm package to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    arguments = parser.parse_args()
    sides = [("mlsvm", None)] + ([("before", arguments.before)] if arguments.before else [])
    for case in CASES:
        results = {side: [] for side, _ in sides}
        for round_ in range(arguments.rounds):
            for side, tree in sides if round_ % 2 == 0 else sides[::-1]:
                results[side].append(_fit(tree, case))
        for side, _ in sides:
            runs = results[side]
            last = runs[-1]
            seconds = sorted(run["seconds"] for run in runs)[len(runs) // 2]
            print(f"{case[0]:8} n={case[1]:<4} C={case[2]:<7g} {side:7} converged={last['converged']!s:5} "
                  f"stop {last['stop']:.1e} {last['iterations']:5d} it {seconds:8.2f} s  {last['warning']}", flush=True)


if __name__ == "__main__":
    main()
