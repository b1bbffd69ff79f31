"""The bibtex table (issue 16, "Measure"): every model's ``"fast"`` route with the linear kernel on
bibtex train (4880 × 1836 sparse, 159 labels, 2.76 M ranking pairs over the whole file), certified
at ``tol=1e-6``, beside binary-relevance ``LinearSVC`` (hinge, same C, ``tol=1e-6``), run by hand:

    OMP_NUM_THREADS=1 python benchmarks/bench_bibtex.py [--rounds 2] [--models matrix rank ...]
                                                         [--timeout 1800] [--out FILE]

Each fit runs in its own process (``--worker NAME``), so its peak memory (``ru_maxrss``) is its own;
the table gives that peak and the increase over the process after loading the data (imports and
data ≈ the first number minus the second). The two sides alternate: every round runs, for each model, its
baseline and then the model; each time is the median of the fit's wall time over every run of that
side (``fit`` only: loading and prediction are not timed).

Settings (one C everywhere): C = 1 for MatrixSVM, RankSVM, MLODM (θ = μ = 0.5) and BR-LinearSVC;
OvNSVM β = 1 (α = 0, soft w, hard b: the defaults); SM3L and SMSVM λ = 1 (C = 1/λ), greedy
``d_max = 200``. SMSVM is trained on the "argmax classes" ``y = argmax_k Y_ik`` (the first relevant
label of each row) beside multiclass ``LinearSVC`` (one-vs-rest, squared hinge, C = 1/λ, tol 1e-6).
The certificate columns are the fit report's own (relative duality gap and largest scaled KKT
residual of the formulation); for LinearSVC, LIBLINEAR's stopping rule (projected gradient) only.
Test metrics on bibtex test (the last 2515 rows) from :mod:`mlsvm.metrics`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

C, TOL, D_MAX = 1.0, 1e-6, 200

#: model → (baseline it is compared with, budget as a multiple of the baseline's time)
TARGETS = {
    "matrix": ("br-linearsvc", 2.0),
    "rank": ("br-linearsvc", 20.0),
    "mlodm": ("br-linearsvc", 20.0),
    "ovn": ("br-linearsvc", 10.0),
    "sm3l": ("br-linearsvc", 10.0),
    "smsvm": ("mc-linearsvc", 10.0),
}
BASELINES = ("br-linearsvc", "mc-linearsvc")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: kilobytes


def _estimator(name: str):
    from mlsvm import MLODM, SM3L, SMSVM, MatrixSVM, OvNSVM, RankSVM
    common = dict(kernel="linear", tol=TOL)
    return {
        "matrix": lambda: MatrixSVM(C=C, **common),
        "rank": lambda: RankSVM(C=C, **common),
        "mlodm": lambda: MLODM(C=C, theta=0.5, mu=0.5, **common),
        "ovn": lambda: OvNSVM(beta=C, **common),
        "sm3l": lambda: SM3L(lam=1.0 / C, d_max=D_MAX, random_state=0, **common),
        "smsvm": lambda: SMSVM(lam=1.0 / C, d_max=D_MAX, random_state=0, **common),
    }[name]()


def _baseline_fit(name, X, Y):
    """BR-LinearSVC: one LIBLINEAR hinge SVM per label (Matrix-SVM's problem, bias regularized);
    MC-LinearSVC: multiclass one-vs-rest on the argmax classes."""
    from sklearn.svm import LinearSVC
    if name == "mc-linearsvc":
        return LinearSVC(C=C, tol=TOL, max_iter=100_000).fit(X, Y)
    return [LinearSVC(C=C, loss="hinge", tol=TOL, max_iter=100_000, intercept_scaling=1.0).fit(X, Y[:, k])
            for k in range(Y.shape[1])]


def worker(name: str) -> dict:
    """Fit one side on bibtex train, return timings, memory, certificate and test metrics."""
    from mlsvm import metrics
    from mlsvm.datasets import load_bibtex
    train, test = load_bibtex("train"), load_bibtex("test")
    X, Y, Xt, Yt = train.X, np.asarray(train.Y), test.X, np.asarray(test.Y)
    multiclass = name in ("smsvm", "mc-linearsvc")
    y = np.argmax(Y, axis=1) if multiclass else Y
    if name == "rank":   # compile (or load from numba's cache) bcd's compiled pass before the timed fit
        from mlsvm import RankSVM
        labels = (np.arange(20)[:, None] % 3 == np.arange(3)[None, :]).astype(int)
        RankSVM(C=C, kernel="linear", solver="bcd", tol=TOL).fit(X[:20], labels)
    if name == "mlodm":  # the same for the Newton route's compiled passes (certificate, Hessian)
        labels = (np.arange(20)[:, None] % 3 == np.arange(3)[None, :]).astype(int)
        _estimator(name).fit(X[:20], labels)
    loaded = _rss_mb()
    record = {"name": name}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start, cpu = time.perf_counter(), time.process_time()
        model = _baseline_fit(name, X, y) if name in BASELINES else _estimator(name).fit(X, y)
        record["time"], record["cpu"] = time.perf_counter() - start, time.process_time() - cpu
    record["peak_mb"], record["fit_mb"] = _rss_mb(), _rss_mb() - loaded
    record["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
    if name == "br-linearsvc":
        scores = np.column_stack([m.decision_function(Xt) for m in model])
        predicted = (scores > 0).astype(int)
        record["n_iter"] = int(max(int(np.max(m.n_iter_)) for m in model))
        record["converged"] = not any("ConvergenceWarning" in w for w in record["warnings"])
    elif name == "mc-linearsvc":
        record["n_iter"], record["converged"] = int(np.max(model.n_iter_)), not record["warnings"]
        scores, predicted = model.decision_function(Xt), model.predict(Xt)
    else:
        report = model.fit_report_
        record.update(solver=report.solver, converged=bool(report.converged), n_iter=int(report.n_iter),
                      gap=float(report.relative_gap) if hasattr(report, "relative_gap") else float("nan"),
                      kkt=float(max(report.kkt.values())) if report.kkt else float("nan"))
        scores, predicted = model.decision_function(Xt), model.predict(Xt)
    if multiclass:
        truth = np.argmax(Yt, axis=1)
        record["metrics"] = {"accuracy (argmax class)": float(np.mean(predicted == truth)),
                             "relevant (predicted class is a label)": float(np.mean(Yt[np.arange(len(Yt)), predicted]))}
    else:
        record["metrics"] = {"hamming": metrics.hamming_loss(Yt, predicted),
                             "ranking loss": metrics.ranking_loss(Yt, scores),
                             "one-error": metrics.one_error(Yt, scores),
                             "avg precision": metrics.average_precision(Yt, scores),
                             "micro F1": metrics.micro_f1(Yt, predicted),
                             "macro F1": metrics.macro_f1(Yt, predicted)}
    return record


def run_worker(name: str, timeout: float) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__, "--worker", name], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"name": name, "timeout": timeout, "time": float("nan")}
    if done.returncode != 0:
        return {"name": name, "error": done.stderr.strip().splitlines()[-1:] or ["?"],
                "time": float("nan"), "wall": time.perf_counter() - start}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fmt(value, spec):
    if value is None or value != value:
        return "—".rjust(int(spec.split(".")[0]) if spec[0].isdigit() else 1)
    return format(value, spec)


def table(records: dict[str, list[dict]], rounds: int) -> str:
    lines = [f"# benchmarks/bench_bibtex.py, {rounds} round(s), OMP_NUM_THREADS=1, 2 shared cores; "
             f"C = {C}, tol = {TOL:g}, linear kernel, bibtex train 4880 × 1836 (nnz 330,859), 159 labels",
             f"{'side':14s} {'solver':>16s} {'time s':>9s} {'ratio':>7s} {'budget':>7s} {'peak MB':>8s} "
             f"{'fit MB':>7s} {'gap':>8s} {'KKT':>8s} {'conv':>5s} {'iter':>6s}"]
    medians = {name: statistics.median([r["time"] for r in rs]) for name, rs in records.items() if rs}
    for name, rs in records.items():
        if not rs:
            continue
        last = rs[-1]
        if "timeout" in last or "error" in last:
            why = f"timed out after {last['timeout']:.0f} s" if "timeout" in last else f"error: {last['error']}"
            lines.append(f"{name:14s} {why}")
            continue
        base, budget = TARGETS.get(name, (None, None))
        ratio = medians[name] / medians[base] if base in medians else float("nan")
        lines.append(f"{name:14s} {last.get('solver', 'liblinear'):>16s} {medians[name]:9.2f} {_fmt(ratio, '7.2f')} "
                     f"{_fmt(budget, '7.0f')} {last['peak_mb']:8.0f} {last['fit_mb']:7.0f} "
                     f"{_fmt(last.get('gap'), '8.1e')} {_fmt(last.get('kkt'), '8.1e')} {str(last['converged']):>5s} "
                     f"{last['n_iter']:6d}")
        times = ", ".join(f"{r['time']:.2f}" for r in rs)
        lines.append(f"{'':14s} rounds: {times} s")
    lines.append("")
    lines.append("test metrics (bibtex test, 2515 rows)")
    for name, rs in records.items():
        if rs and "metrics" in rs[-1]:
            lines.append(f"{name:14s} " + "  ".join(f"{k} {v:.4f}" for k, v in rs[-1]["metrics"].items()))
    for name, rs in records.items():
        for w in (rs[-1].get("warnings", []) if rs else []):
            lines.append(f"warning ({name}): {w}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models", nargs="*", default=list(TARGETS))
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per fit")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return
    needed = sorted({TARGETS[m][0] for m in args.models})
    records = {name: [] for name in [*needed, *args.models]}
    for round_ in range(args.rounds):
        for model in args.models:   # alternate: the model's baseline, then the model
            if records[model][-1:] and ("timeout" in records[model][-1] or "error" in records[model][-1]):
                continue   # do not repeat a fit that could not finish
            base = TARGETS[model][0]
            records[base].append(run_worker(base, args.timeout))
            print(f"round {round_}: {base} {records[base][-1].get('time', float('nan')):.2f} s", flush=True)
            records[model].append(run_worker(model, args.timeout))
            print(f"round {round_}: {model} {records[model][-1].get('time', float('nan')):.2f} s "
                  f"{records[model][-1].get('error', '')}", flush=True)
    text = table(records, args.rounds)
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
