"""SM3L / SMSVM on bibtex at scale (issue 16), side by side with LIBLINEAR (run by hand):

    OMP_NUM_THREADS=1 python benchmarks/bench_sparse_mm_bibtex.py [--rounds 3] [--d-max 200]

* SM3L (solver "fast", linear kernel, |J| = d_max basis functions: ``min_rel_decrease=0``, κ = 25)
  against binary-relevance ``LinearSVC`` (hinge, ``C = 1/λ``: SM3L with R = I is q squared-hinge
  SVMs with C = 1/λ, SPEC §2.3; ``tol=1e-6``), one model per label.
* SMSVM (solver "fast", linear kernel, ``--smsvm-d-max`` basis functions) on the argmax classes
  ``y = Y.argmax(1)`` against multiclass (one-vs-rest) ``LinearSVC``, same C and tol: with the hinge (the
  issue's peer, the target) and with SMSVM's own loss, the squared hinge, by LIBLINEAR's dual coordinate
  descent (``dual=True``; for this shape ``dual="auto"`` picks the primal Newton route, 4-5x slower).
* SMSVM full (solver "full": J = all points, dual coordinate descent on X), the same peer, and beside it
  LIBLINEAR's own coupled multiclass SVM, ``LinearSVC(multi_class="crammer_singer")`` (same C and tol): the
  full model is a coupled multiclass SVM too (Weston–Watkins pairs with the squared hinge).

bibtex train = the first 4880 rows of MULAN's bibtex.arff, test = the other 2515
(:func:`mlsvm.datasets.load_bibtex`); X stays a CSR matrix: the kernel columns are computed from it
on demand (:class:`mlsvm.formulations.sparse_mm.KernelColumns`), never the 4880² Gram matrix.

Each fit runs in its own subprocess (``OMP_NUM_THREADS=1``), the sides alternating round by round;
time is the fit's CPU time (the machine is shared), peak memory the growth of the process's peak
RSS during the fit (beyond the data already loaded), gap and KKT from the fit report (the
formulation's own recomputation), test metrics from :mod:`mlsvm.metrics`. Medians over rounds.
Every LIBLINEAR peer runs to its own ``tol`` (``max_iter`` = :data:`PEER_MAX_ITER`, as in
``bench_bibtex.py``; LIBLINEAR's default of 1000 iterations stopped the hinge peers short of it) and
reports its iterations and whether it converged.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

LAM = 1.0
#: Newton steps of the whole greedy run (the default 1000 ran out at |J| = 186 on SM3L: ~5 per addition)
MAX_ITER = 5000
#: LIBLINEAR's iteration cap: high enough that every peer stops on its own tol, not on the cap
PEER_MAX_ITER = 100_000


def _fit(name: str, d_max: int, smsvm_d_max: int) -> dict:
    """One fit in this process; returns its measurements."""
    from sklearn.svm import LinearSVC

    from mlsvm import SM3L, SMSVM
    from mlsvm import metrics
    from mlsvm.datasets import load_bibtex

    train, test = load_bibtex("train"), load_bibtex("test")
    y_train, y_test = train.Y.argmax(1), test.Y.argmax(1)
    if name in ("SM3L", "SMSVM", "SMSVM full"):   # warm-up, not timed: the compiled loops' machine code is loaded from numba's cache
        SM3L(LAM, d_max=3, kernel="linear", random_state=0).fit(train.X[:60], train.Y[:60])
        SMSVM(LAM, d_max=3, kernel="linear", random_state=0).fit(train.X[:60], y_train[:60])
        SMSVM(LAM, solver="full", kernel="linear", random_state=0).fit(train.X[:60], y_train[:60])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, wall = time.process_time(), time.perf_counter()
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name == "BR-LinearSVC":
            models = [LinearSVC(C=1 / LAM, loss="hinge", tol=1e-6, max_iter=PEER_MAX_ITER)
                      .fit(train.X, train.Y[:, r]) for r in range(train.Y.shape[1])]
        elif name == "LinearSVC (multiclass)":
            model = LinearSVC(C=1 / LAM, loss="hinge", tol=1e-6, max_iter=PEER_MAX_ITER).fit(train.X, y_train)
        elif name == "LinearSVC (multiclass, squared hinge)":
            model = LinearSVC(C=1 / LAM, loss="squared_hinge", dual=True, tol=1e-6,
                              max_iter=PEER_MAX_ITER).fit(train.X, y_train)
        elif name == "LinearSVC (Crammer-Singer)":
            model = LinearSVC(C=1 / LAM, multi_class="crammer_singer", tol=1e-6,
                              max_iter=PEER_MAX_ITER).fit(train.X, y_train)
        elif name == "SM3L":
            model = SM3L(LAM, d_max=d_max, kernel="linear", tol=1e-6, min_rel_decrease=0.0, max_iter=MAX_ITER,
                         random_state=0).fit(train.X, train.Y)
        elif name == "SMSVM full":   # J = all points: dual coordinate descent on X (no n × n matrix)
            model = SMSVM(LAM, solver="full", kernel="linear", tol=1e-6, max_iter=MAX_ITER,
                          random_state=0).fit(train.X, y_train)
        else:
            model = SMSVM(LAM, d_max=smsvm_d_max, kernel="linear", tol=1e-6, min_rel_decrease=0.0, max_iter=MAX_ITER,
                          random_state=0).fit(train.X, y_train)
    out["cpu"] = time.process_time() - start
    out["wall"] = time.perf_counter() - wall
    out["peak_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out["warnings"] = sorted({str(w.message)[:120] for w in caught})
    if "LinearSVC" in name:   # LIBLINEAR's iterations (the most of any one-vs-rest problem)
        out["peer_iter"] = int(max(np.max(m.n_iter_) for m in (models if name == "BR-LinearSVC" else [model])))
        out["converged"] = not any("failed to converge" in message for message in out["warnings"])
    if name == "BR-LinearSVC":
        scores = np.column_stack([m.decision_function(test.X) for m in models])
        out["metrics"] = _multilabel(metrics, test.Y, (scores > 0).astype(int), scores)
    elif name == "SM3L":
        out["metrics"] = _multilabel(metrics, test.Y, model.predict(test.X), model.decision_function(test.X))
    else:
        out["metrics"] = {"accuracy": float(np.mean(model.predict(test.X) == y_test))}
    if name in ("SM3L", "SMSVM", "SMSVM full"):
        report = model.fit_report_
        out.update(gap=report.relative_gap, kkt=report.max_kkt, converged=report.converged,
                   n_basis=model.n_basis_, n_iter=report.n_iter)
    return out


def _multilabel(metrics, Y, predicted, scores) -> dict:
    return {"hamming": metrics.hamming_loss(Y, predicted), "ranking_loss": metrics.ranking_loss(Y, scores),
            "one_error": metrics.one_error(Y, scores), "avg_precision": metrics.average_precision(Y, scores),
            "micro_f1": metrics.micro_f1(Y, predicted), "macro_f1": metrics.macro_f1(Y, predicted)}


def _run(name: str, args) -> dict:
    """One fit in a subprocess; ``"<model> (before)"`` imports mlsvm from ``args.before``."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if name.endswith(" (before)"):
        name, env["PYTHONPATH"] = name[:-len(" (before)")], args.before
    command = [sys.executable, os.path.abspath(__file__), "--worker", name, "--d-max", str(args.d_max),
               "--smsvm-d-max", str(args.smsvm_d_max)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(runs, key):
    return float(np.median([run[key] for run in runs]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--d-max", type=int, default=200, help="SM3L's |J|")
    parser.add_argument("--smsvm-d-max", type=int, default=100, help="SMSVM's |J|")
    parser.add_argument("--only", choices=["sm3l", "smsvm", "smsvm-full"], default=None)
    parser.add_argument("--before", default=None,
                        help="also time the model from this earlier source tree (git archive <commit> mlsvm, unpacked)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_fit(args.worker, args.d_max, args.smsvm_d_max)))
        return
    # each model with its peers; the first is the one the target (≤ 10x) is set against
    pairs = [("SM3L", ("BR-LinearSVC",)),
             ("SMSVM", ("LinearSVC (multiclass)", "LinearSVC (multiclass, squared hinge)")),
             ("SMSVM full", ("LinearSVC (multiclass)", "LinearSVC (Crammer-Singer)"))]
    pairs = [p for p in pairs if args.only is None or p[0].lower().replace(" ", "-") == args.only]
    print(f"bibtex train 4880 x 1836 (CSR), 159 labels; λ = {LAM} (LinearSVC C = {1 / LAM}), tol 1e-6, "
          f"SM3L |J| = {args.d_max}, SMSVM |J| = {args.smsvm_d_max}, {args.rounds} alternating round(s), "
          "CPU seconds, OMP_NUM_THREADS=1")
    for ours, peers in pairs:
        peer = peers[0]
        names = peers + (ours,) + ((f"{ours} (before)",) if args.before else ())
        runs = {name: [] for name in names}
        for _ in range(args.rounds):
            for name in names:
                runs[name].append(_run(name, args))
                print(f"  {name}: {runs[name][-1]['cpu']:.1f} s CPU", flush=True)
        width = max(len(name) for name in names)
        for name in names:
            last = runs[name][-1]
            line = (f"{name:{width}s} CPU {_median(runs[name], 'cpu'):7.1f} s "
                    f"(wall {_median(runs[name], 'wall'):7.1f} s), peak +{_median(runs[name], 'peak_mb'):6.0f} MB")
            if "peer_iter" in last:
                line += f", LIBLINEAR iterations {last['peer_iter']}, converged {last['converged']}"
            if "gap" in last:
                line += (f", |J| {last['n_basis']}, Newton steps {last['n_iter']}, gap {last['gap']:.1e}, "
                         f"max KKT {last['kkt']:.1e}, converged {last['converged']}")
            print(line)
            print("    test: " + ", ".join(f"{key} {value:.4f}" for key, value in last["metrics"].items()))
            for message in last["warnings"]:
                print(f"    warning: {message}")
        for other in peers:
            ratio = _median(runs[ours], "cpu") / _median(runs[other], "cpu")
            print(f"-> {ours} / {other}: {ratio:.1f}x CPU time" + (" (target ≤ 10x)" if other == peer else ""))
        if args.before:
            before = runs[f"{ours} (before)"]
            print(f"-> {ours} before / after: {_median(before, 'cpu') / _median(runs[ours], 'cpu'):.2f}x CPU time; "
                  f"before {_median(before, 'cpu') / _median(runs[peer], 'cpu'):.1f}x {peer}")


if __name__ == "__main__":
    main()
