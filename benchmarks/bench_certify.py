"""What certifying a solution costs (run by hand), and the size of the default reference suite.

For each estimator on yeast (``load_yeast("train")``: 1500 × 103, 14 labels; the single-output
models get ``argmax`` of the label rows as their classes): fit it with its defaults (the "fast"
solver) to get a solution, then time

* ``certify`` of that solution (primal and dual point), end to end;
* inside it, the reference solve (timed where certify runs it): the registry's exact solver on the
  problem the point is graded on at ``REFERENCE_TOL`` (1e-10) (for SMSVM/SM3L, whose point lives on
  the basis the greedy solver chose, CVXPY on that basis);

and print the reference solve's share. Then export the default reference suite to a temporary
folder and report its size on disk and the number of cases per formulation.

    OMP_NUM_THREADS=1 python benchmarks/bench_certify.py [--models RankSVM OvNSVM ...] [--n 1500]
        [--skip-suite]
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import mlsvm
import mlsvm.testing
from mlsvm import registry
from mlsvm.datasets import load_yeast
from mlsvm.testing import REFERENCE_TOL, certify
from mlsvm.testing.reference_suite import default_cases, export_reference

MODELS = [name for name in mlsvm.__all__ if name != "__version__"]


def _solve(estimator, X, Y, **overrides):
    gram, indicator = estimator._training_data(X, Y)
    problem = estimator._problem(gram, indicator)
    spec = registry.model(type(estimator)._registry_model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        name, result = registry.run(spec, problem, **estimator.get_params(deep=False) | overrides)
    return name, result, problem, spec


def bench_model(name: str, X, Y) -> dict:
    cls = getattr(mlsvm, name)
    targets = np.argmax(Y, axis=1) if cls._single_output else Y
    estimator = cls()
    start = time.perf_counter()
    solver, result, problem, spec = _solve(estimator, X, targets)
    fit_time = time.perf_counter() - start
    solution = {**result.primal, **result.dual}
    reference_times = []
    solve_reference = mlsvm.testing._solve_reference

    def timed(*args, **kwargs):   # certify's own reference solve(s), timed where they run
        start = time.perf_counter()
        try:
            return solve_reference(*args, **kwargs)
        finally:
            reference_times.append(time.perf_counter() - start)

    mlsvm.testing._solve_reference = timed
    try:
        start = time.perf_counter()
        certificate = certify(name, X, targets, solution)
        certify_time = time.perf_counter() - start
    finally:
        mlsvm.testing._solve_reference = solve_reference
    reference_time = sum(reference_times)
    return dict(model=name, fit_solver=solver, fit_time=fit_time, certify_time=certify_time,
                reference_time=reference_time, share=reference_time / certify_time,
                passed=certificate.passed, suboptimality=certificate.suboptimality,
                reference=certificate.reference_solver)


def bench_suite() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        skipped = []
        records = export_reference(folder, skipped=skipped)
        seconds = time.perf_counter() - start
        size = sum(path.stat().st_size for path in Path(folder).rglob("*") if path.is_file())
        per_model = collections.Counter(record["model"] for record in records)
    return dict(cases=len(records), bytes=size, seconds=seconds, per_model=dict(per_model),
                skipped=[name for name, _ in skipped], defined=len(default_cases()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS)
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    data = load_yeast("train")
    X, Y = data.X[: args.n], data.Y[: args.n]
    print(f"yeast train {X.shape[0]} x {X.shape[1]}, {Y.shape[1]} labels; certify at rtol 1e-6, reference tol "
          f"{REFERENCE_TOL:.0e}; default hyperparameters of each estimator")
    print(f"{'model':26s} {'fit':>9s} {'certify':>9s} {'reference':>10s} {'share':>6s}  verdict")
    for name in args.models:
        try:
            row = bench_model(name, X, Y)
        except Exception as exc:   # a solver that breaks on this data is a result too: say which
            print(f"{name:26s} failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        print(f"{name:26s} {row['fit_time']:8.2f}s {row['certify_time']:8.2f}s {row['reference_time']:9.2f}s "
              f"{row['share']:6.0%}  {'OPTIMAL' if row['passed'] else 'NOT OPTIMAL'} "
              f"(suboptimality {row['suboptimality']:.1e}; fit {row['fit_solver']}, reference {row['reference']})",
              flush=True)
    if not args.skip_suite:
        suite = bench_suite()
        print(f"default reference suite: {suite['cases']} of {suite['defined']} cases written, "
              f"{suite['bytes']} bytes ({suite['bytes'] / 1024:.0f} KiB), exported in {suite['seconds']:.0f} s")
        print("cases per model: " + json.dumps(suite["per_model"]))
        if suite["skipped"]:
            print("left out (no two backends certified): " + ", ".join(suite["skipped"]))


if __name__ == "__main__":
    main()
