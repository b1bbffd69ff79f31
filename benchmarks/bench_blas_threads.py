"""Default fits with one BLAS thread against one per core, on an idle machine and beside one busy
process (another job, a second experiment, a test worker).

OpenBLAS's threads wait for one another at every step of a blocked factorisation; when a core is
taken by another process, a Cholesky factor of a few hundred rows then takes 20-200 times longer
than on one thread (OpenBLAS issue 5517). This benchmark measures what that does to whole fits.
Each fit runs in its own subprocess with ``MLSVM_BLAS_THREADS`` set to 1 (the default) or to the
number of cores, and the libraries' own thread variables (``OMP_NUM_THREADS`` …) unset, the two
alternating within each round: first with the machine otherwise idle, then with a busy loop in
another process. It prints the median wall-clock seconds of each side and their
ratio (cores / one thread: above 1, the extra threads cost time).

Run: ``python benchmarks/bench_blas_threads.py [--rounds 3] [--cases A,B] [--no-load]``; the
shared datasets are read from ``$MLSVM_DATASETS`` or ``../shared/datasets``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

# Runs in the child: one fit, timed, as one JSON line.
CHILD = r"""
import json, sys, time, warnings
import numpy as np
import mlsvm
from mlsvm import datasets

case = sys.argv[1]
if case == "verify":   # the README's main job, in process (its table is discarded)
    import contextlib, io
    from mlsvm.cli import main
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(["verify"])
    print(json.dumps({"wall": time.perf_counter() - start_wall, "cpu": time.process_time() - start_cpu,
                      "solver": "mlsvm verify", "converged": status == 0}))
    sys.exit(0)
model, data, kernel = case.split(":")
if data == "yeast":
    d = datasets.load_yeast("train")
    X, Y = d.X, d.Y
elif data == "emotions":
    d = datasets.load_emotions()
    X, Y = d.X, d.Y
else:   # bibtex-N: the first N rows of bibtex (CSR)
    d = datasets.load_bibtex("train")
    rows = int(data.split("-")[1])
    X, Y = d.X[:rows], d.Y[:rows]
target = Y.argmax(axis=1) if model == "SMSVM" else Y
estimator = getattr(mlsvm, model)(kernel=kernel, tol=1e-6)
start_cpu, start_wall = time.process_time(), time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    estimator.fit(X, target)
report = estimator.fit_report_
print(json.dumps({"wall": time.perf_counter() - start_wall, "cpu": time.process_time() - start_cpu,
                  "solver": str(report.solver), "converged": bool(report.converged)}))
"""

CASES = ("MatrixSVM:bibtex-4880:linear", "OvNSVM:bibtex-4880:linear", "RankSVM:yeast:linear",
         "RankSVM:yeast:rbf", "MLODM:yeast:rbf", "MLODM:bibtex-1500:linear", "SM3L:yeast:rbf",
         "SMSVM:yeast:rbf", "verify")


#: the thread settings of the BLAS and OpenMP libraries, left at their defaults in the children
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def run_one(case: str, threads: int) -> dict:
    env = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    env["MLSVM_BLAS_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-c", CHILD, case], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{case}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--no-load", action="store_true", help="only the idle machine")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    cases = args.cases.split(",")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {cores} cores, {args.rounds} alternating round(s); "
          "wall-clock seconds of one default fit (tol 1e-6) or of `mlsvm verify` per subprocess")
    for loaded in ([False] if args.no_load else [False, True]):
        busy = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if loaded else None)
        try:
            print(f"\n## {'one busy process beside' if loaded else 'idle machine'}")
            for case in cases:
                walls = {1: [], cores: []}
                for round_ in range(args.rounds):
                    for threads in ((1, cores) if round_ % 2 == 0 else (cores, 1)):
                        result = run_one(case, threads)
                        walls[threads].append(result["wall"])
                one, many = np.median(walls[1]), np.median(walls[cores])
                print(f"{case:32s} {result['solver']:>14s} converged {result['converged']!s:5s} | "
                      f"1 thread {one:7.2f} s | {cores} threads {many:7.2f} s | {cores}/1 {many / one:5.2f}x"
                      f"   (rounds: {', '.join(f'{w:.2f}' for w in walls[1])} | "
                      f"{', '.join(f'{w:.2f}' for w in walls[cores])})", flush=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()


if __name__ == "__main__":
    main()
