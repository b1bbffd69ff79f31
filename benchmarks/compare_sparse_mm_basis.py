"""Check that a change of the SMSVM/SM3L solver keeps the model (run by hand):

    OMP_NUM_THREADS=1 python benchmarks/compare_sparse_mm_basis.py --before DIR [--quick]

Fits SMSVM ("fast", "greedy") and SM3L ("fast") on emotions, yeast train and a bibtex subset
(first 800 rows of the train split, linear kernel) with seeds 0 and 1, once with this tree and
once with the mlsvm of ``DIR`` (e.g. ``git archive main mlsvm`` unpacked), each in its own
process, and prints per fit whether the selected basis (in order) is the same, the relative
difference of the certified objectives and both CPU times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time, warnings
import numpy as np
from mlsvm import SM3L, SMSVM
from mlsvm.datasets import load_bibtex, load_emotions, load_yeast
data, model, solver, seed, d_max = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
if data == "emotions":
    d, kernel = load_emotions(), "rbf"
elif data == "yeast":
    d, kernel = load_yeast("train"), "rbf"
else:
    d, kernel = load_bibtex("train"), "linear"
X, Y = d.X, d.Y
if data == "bibtex":
    X, Y = X[:800], Y[:800]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    start = time.process_time()
    if model == "smsvm":
        est = SMSVM(1.0, solver=solver, kernel=kernel, d_max=d_max, tol=1e-10, random_state=seed).fit(X, Y.argmax(1))
    else:
        est = SM3L(1.0, solver=solver, kernel=kernel, d_max=d_max, tol=1e-10, random_state=seed).fit(X, Y)
    cpu = time.process_time() - start
report = est.fit_report_
print(json.dumps({"basis": [int(j) for j in est.basis_indices_], "objective": float(report.primal_objective),
                  "gap": float(report.relative_gap), "kkt": float(report.max_kkt), "converged": bool(report.converged),
                  "cpu": cpu, "warnings": sorted({str(w.message)[:80] for w in caught})}))
"""


def _fit(source, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.setdefault("MLSVM_DATASETS", "/work/shared/datasets")   # the earlier tree may sit elsewhere
    if source:
        env["PYTHONPATH"] = source
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, args)], capture_output=True, text=True, env=env,
                          check=True, cwd=source or None)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="source tree whose mlsvm is the reference")
    parser.add_argument("--quick", action="store_true", help="smaller bases")
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cases = [("emotions", "smsvm", "fast", 60), ("emotions", "smsvm", "greedy", 60), ("emotions", "sm3l", "fast", 60),
             ("yeast", "smsvm", "fast", 100), ("yeast", "smsvm", "greedy", 100), ("yeast", "sm3l", "fast", 100),
             ("bibtex", "smsvm", "fast", 20), ("bibtex", "sm3l", "fast", 40)]
    if args.quick:
        cases = [(data, model, solver, min(d_max, 30)) for data, model, solver, d_max in cases]
    same_all = True
    for data, model, solver, d_max in cases:
        for seed in (0, 1):
            after, before = _fit(here, data, model, solver, seed, d_max), _fit(args.before, data, model, solver, seed, d_max)
            same = after["basis"] == before["basis"]
            same_all &= same
            diff = abs(after["objective"] - before["objective"]) / max(1.0, abs(before["objective"]))
            print(f"{data:8s} {model:5s} {solver:6s} seed {seed}: |J| {len(after['basis']):3d}, same basis {same}, "
                  f"objective rel. diff {diff:.1e}, gap {after['gap']:.1e}, KKT {after['kkt']:.1e}, "
                  f"converged {after['converged']}, CPU {before['cpu']:.2f} -> {after['cpu']:.2f} s"
                  + (f", warnings {after['warnings']}" if after["warnings"] else ""), flush=True)
    print("all bases identical" if same_all else "SOME BASES DIFFER")


if __name__ == "__main__":
    main()
