"""Worst case of a default fit: every estimator, constructed with no arguments, on emotions, yeast
and a scene-sized synthetic set, raw and standardised features (issue 14, "defaults that trap").

Each fit runs in its own subprocess with ``OMP_NUM_THREADS=1`` and a wall-clock cap, so a hang is
recorded as a hang and cannot stop the run. For each fit the table gives CPU seconds, peak
resident memory, the certificate (converged, relative gap, max KKT residual), the warnings the fit
raised and the training Hamming loss (multilabel estimators) or accuracy (SMSVM and
CategoricalRegressionSVM, on the argmax class). "scene-like" is ``make_multilabel`` at the size of MULAN scene's train split (1211 × 294,
6 labels); scene itself is not among the shared datasets.

Run: ``python benchmarks/bench_defaults.py [--cap SECONDS] [--estimators A,B] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ESTIMATORS = ("RankSVM", "OvNSVM", "SMSVM", "SM3L", "MLODM", "MatrixSVM", "BinaryApproachSVM",
              "CategoricalRegressionSVM")
DATASETS = ("emotions", "yeast", "scene-like")
SCALINGS = ("raw", "scaled")

# Runs in the child: one default fit, its certificate and its warnings, as one JSON line.
CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
import mlsvm
from mlsvm import datasets
from sklearn.preprocessing import StandardScaler

name, data, scaling = sys.argv[1:4]
if data == "emotions":
    d = datasets.load_emotions()
elif data == "yeast":
    d = datasets.load_yeast("train")
else:
    d = datasets.make_multilabel(n_samples=1211, n_features=294, n_labels=6, random_state=0)
X, Y = np.asarray(d.X, dtype=float), np.asarray(d.Y)
if scaling == "scaled":
    X = StandardScaler().fit_transform(X)
multiclass = name in ("SMSVM", "CategoricalRegressionSVM")   # the argmax class
target = Y.argmax(axis=1) if multiclass else Y
estimator = getattr(mlsvm, name)()
start_cpu, start_wall = time.process_time(), time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    estimator.fit(X, target)
cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
report = estimator.fit_report_
predicted = estimator.predict(X)
quality = float(np.mean(predicted == target)) if multiclass else float(np.mean(predicted != Y))
print(json.dumps({
    "cpu": cpu, "wall": wall, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "converged": bool(report.converged), "gap": float(report.relative_gap),
    "kkt": float(max(report.kkt.values(), default=0.0)), "solver": str(report.solver),
    "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:90]}" for w in caught}),
    "quality": quality, "quality_name": "accuracy" if multiclass else "Hamming",
}))
"""


def run_one(name: str, data: str, scaling: str, cap: float) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, name, data, scaling], capture_output=True,
                              text=True, timeout=cap, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {cap:g} s wall (stopped)"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": f"exit {done.returncode}: {last[:120]}", "wall": time.perf_counter() - start}
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(name: str, data: str, scaling: str, result: dict) -> str:
    head = f"{name:<25} {data:<10} {scaling:<6}"
    if "error" in result:
        return f"{head} {result['error']}"
    warned = "; ".join(result["warnings"]) or "-"
    return (f"{head} {result['cpu']:8.2f} {result['peak_mib']:8.0f} {str(result['converged']):>5} "
            f"{result['gap']:9.1e} {result['kkt']:9.1e} {result['quality_name']} {result['quality']:.3f}"
            f"  [{result['solver']}]  {warned}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=300.0, help="wall-clock seconds per fit")
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args(argv)
    lines = [f"# default fits, OMP_NUM_THREADS=1, cap {args.cap:g} s wall per fit, {time.strftime('%Y-%m-%d %H:%M')}",
             f"{'estimator':<25} {'data':<10} {'X':<6} {'CPU s':>8} {'MiB':>8} {'conv':>5} {'rel.gap':>9} "
             f"{'max KKT':>9} quality [solver] warnings"]
    print("\n".join(lines), flush=True)
    worst: dict[str, float] = {}
    for name in args.estimators.split(","):
        for data in args.datasets.split(","):
            for scaling in SCALINGS:
                result = run_one(name, data, scaling, args.cap)
                lines.append(row(name, data, scaling, result))
                print(lines[-1], flush=True)
                worst[name] = max(worst.get(name, 0.0), result.get("cpu", float("inf")))
    lines.append("worst CPU s per estimator: " + ", ".join(f"{k} {v:.1f}" for k, v in worst.items()))
    print(lines[-1])
    if args.out:
        with open(args.out + ".tmp", "w") as handle:
            handle.write("\n".join(lines) + "\n")
        os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
