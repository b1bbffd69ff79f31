"""Scaling benchmark (run by hand): CPU time and peak memory of every model's ``solver="fast"``
against n, beside binary-relevance ``SVC`` / ``LinearSVC`` at the same n, with fitted growth
exponents, a text table and a log–log figure.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_scaling.py [--models RankSVM,MatrixSVM]
        [--kernels linear,rbf] [--sizes 500,1000,2000] [--max-n 8000] [--cap 600] [--mem-cap 16]
        [--records benchmarks/bench_scaling_records.jsonl] [--out benchmarks/bench_scaling_results.txt]

Data: :func:`mlsvm.datasets.make_multilabel` (d = 50, q = 10, about 3.3 labels on per row, 10 %
of the entries flipped, seed 0). Multiclass models (``SMSVM``, ``CategoricalRegressionSVM``) get
the argmax of the same labels' scores as a 10-class target (the first on label of each row, else
class 0). Every model: its defaults except ``tol=1e-6``, the kernel and ``gamma = 1/d`` (RBF).
The baselines: one ``SVC(kernel="rbf", gamma=1/d, C=1, tol=1e-6)`` or one
``LinearSVC(loss="hinge", C=1, tol=1e-6)`` per label (binary relevance).

Each fit runs in its own subprocess (``python bench_scaling.py --worker ...``) with
``RLIMIT_CPU`` = the cap (so a fit past the cap is killed by the kernel and the series stops there,
said as "> cap") and ``RLIMIT_AS`` = the memory cap (a ``MemoryError`` stops the series, said as
"> mem"). The child reports the CPU time of the fit alone (``time.process_time`` around
``fit``; the Gram matrix is part of the fit) and its peak resident set (``ru_maxrss``) minus the
resident set before the fit (imports and data): the peak *extra* memory of the fit.

``--ab-polish 1000,2000,4000``: MatrixSVM (RBF, "fast") with the polish's free-set systems solved
by CG from ``ITERATIVE_FROM`` free indices on (the default) against Cholesky only
(``ITERATIVE_FROM`` = ∞), alternated over ``--rounds`` rounds in this process; prints the median
CPU times and their ratio per n (the measurement behind ``ITERATIVE_FROM``).

Results accumulate as JSON lines in ``--records`` (one per fit; a later record of the same model,
kernel and n replaces an earlier one), so the benchmark runs in pieces; the table (``--out``) and
the figure (same name, ``.png``) are rebuilt from all records each time. Growth exponents: least
squares slope of log(CPU s) and log(extra MiB) against log n over the measured n in 500…8000.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS = ("RankSVM", "OvNSVM", "MatrixSVM", "MLODM", "SMSVM", "SM3L", "BinaryApproachSVM",
          "CategoricalRegressionSVM")
BASELINE = "BR-SVC"                      # SVC (rbf) / LinearSVC (linear), one per label
#: MatrixSVM with the polish's free-set systems always by Cholesky (ITERATIVE_FROM = ∞): the route
#: as it was before the CG solves, for the before/after rows
MATRIX_CHOLESKY = "MatrixSVM-cholesky"
MULTICLASS = ("SMSVM", "CategoricalRegressionSVM")
SIZES = (500, 1000, 2000, 4000, 8000, 16000)
N_FEATURES, N_LABELS, TOL, SEED = 50, 10, 1e-6, 0
GAMMA = 1.0 / N_FEATURES
EXPONENT_RANGE = (500, 8000)


# ---- the worker: one fit in this process -----------------------------------------------------
def _data(n: int, multiclass: bool):
    from mlsvm.datasets import make_multilabel
    data = make_multilabel(n, N_FEATURES, N_LABELS, noise=0.1, random_state=SEED)
    if multiclass:
        return data.X, np.argmax(data.Y, axis=1)
    return data.X, data.Y


def _fit(model: str, kernel: str, X, Y) -> dict:
    """Run one fit; returns what the record shows besides time and memory."""
    import warnings
    if model == BASELINE:
        from sklearn.svm import SVC, LinearSVC
        for k in range(Y.shape[1]):
            est = (SVC(kernel="rbf", gamma=GAMMA, C=1.0, tol=TOL) if kernel == "rbf"
                   else LinearSVC(loss="hinge", C=1.0, tol=TOL, max_iter=100_000))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, Y[:, k])
        return {"solver": "SVC" if kernel == "rbf" else "LinearSVC", "converged": None, "gap": None}
    import mlsvm
    if model == MATRIX_CHOLESKY:
        from mlsvm.solvers import matrix_svm_polish
        matrix_svm_polish.ITERATIVE_FROM, model = 10**12, "MatrixSVM"
    params = {"kernel": kernel, "tol": TOL}
    if kernel == "rbf":
        params["gamma"] = GAMMA
    est = getattr(mlsvm, model)(**params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, Y)
    report = est.fit_report_
    return {"solver": report.solver, "converged": bool(report.converged), "gap": float(report.relative_gap),
            "n_iter": int(report.n_iter), "stop_rule": report.stop_rule,
            "warnings": sorted({type(w.message).__name__ for w in caught})}


def worker(model: str, kernel: str, n: int, mem_cap_gib: float) -> None:
    """Child process: data, then one timed fit; prints one JSON line."""
    X, Y = _data(n, model in MULTICLASS)
    if model == BASELINE:
        Y = _data(n, False)[1]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux
    limit = int(mem_cap_gib * 2**30) + before * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    start = time.process_time()
    try:
        info = _fit(model, kernel, X, Y)
    except MemoryError:
        print(json.dumps({"status": "mem"}))
        return
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"status": "ok", "cpu": cpu, "extra_mib": (peak - before) / 1024.0,
                      "peak_mib": peak / 1024.0, **info}))


def ab_polish(sizes: list[int], rounds: int) -> None:
    """The A/B run of ``--ab-polish`` (module docstring)."""
    import statistics
    import mlsvm
    from mlsvm.solvers import matrix_svm_polish as polish
    default = polish.ITERATIVE_FROM
    print(f"MatrixSVM rbf fast: polish by CG from |F| >= {default} vs Cholesky only; CPU s, median of {rounds}")
    for n in sizes:
        X, Y = _data(n, False)
        times = {"cg": [], "cholesky": []}
        for _ in range(rounds):
            for side, threshold in (("cg", default), ("cholesky", 10**12)):
                polish.ITERATIVE_FROM = threshold
                start = time.process_time()
                est = mlsvm.MatrixSVM(kernel="rbf", gamma=GAMMA, tol=TOL).fit(X, Y)
                times[side].append(time.process_time() - start)
                assert est.fit_report_.converged, (n, side)
        polish.ITERATIVE_FROM = default
        cg, chol = statistics.median(times["cg"]), statistics.median(times["cholesky"])
        print(f"n={n:6d}  cg {cg:8.3f} s  cholesky {chol:8.3f} s  cholesky/cg {chol / cg:5.2f}", flush=True)


# ---- the driver ---------------------------------------------------------------------------------
def run_one(model: str, kernel: str, n: int, cap: float, mem_cap: float) -> dict:
    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (int(cap) + 1, int(cap) + 2))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": str(HERE.parent)}
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__, "--worker", model, kernel, str(n), str(mem_cap)],
                              capture_output=True, text=True, env=env, preexec_fn=limits,
                              timeout=max(8 * cap, 60))
    except subprocess.TimeoutExpired:
        record = {"status": "wall"}
    else:
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if lines:
            record = json.loads(lines[-1])
        elif done.returncode in (-24, -9):      # SIGXCPU / SIGKILL at the CPU cap
            record = {"status": "cap"}
        elif "bad_alloc" in done.stderr or "MemoryError" in done.stderr:   # C++ (a CVXPY backend) at RLIMIT_AS
            record = {"status": "mem", "stderr": done.stderr[-2000:]}
        else:
            record = {"status": "error", "stderr": done.stderr[-2000:]}
    record.update(model=model, kernel=kernel, n=n, cap=cap, wall=time.perf_counter() - started,
                  date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return record


def load_records(path: Path) -> dict:
    records = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                records[(r["model"], r["kernel"], r["n"])] = r
    return records


def exponent(records: list[dict], key: str) -> float | None:
    points = [(r["n"], r[key]) for r in records
              if r["status"] == "ok" and EXPONENT_RANGE[0] <= r["n"] <= EXPONENT_RANGE[1] and r[key] > 0]
    if len(points) < 2:
        return None
    n, value = np.log(np.array(points, dtype=float)).T
    return float(np.polyfit(n, value, 1)[0])


def last_slope(records: list[dict], key: str) -> float | None:
    """log₂ of the ratio between the two largest measured n in the exponent range (the local
    growth, which the least-squares exponent understates when small n are overhead-bound)."""
    points = sorted((r["n"], r[key]) for r in records
                    if r["status"] == "ok" and EXPONENT_RANGE[0] <= r["n"] <= EXPONENT_RANGE[1] and r[key] > 0)
    if len(points) < 2:
        return None
    (n0, v0), (n1, v1) = points[-2:]
    return float(np.log(v1 / v0) / np.log(n1 / n0))


def cell(r: dict | None) -> str:
    if r is None:
        return "–"
    if r["status"] == "error" and "bad_alloc" in r.get("stderr", ""):   # recorded before "mem" knew it
        r = {**r, "status": "mem"}
    if r["status"] == "ok":
        flag = "" if r.get("converged") in (True, None) else "*"
        return f"{r['cpu']:.3g} s/{r['extra_mib']:.0f}M{flag}"
    return {"cap": f"> {r['cap']:.0f} s", "wall": f"> {8 * r['cap']:.0f} s wall", "mem": "> mem"}.get(r["status"], "error")


def table(records: dict) -> str:
    sizes = sorted({n for (_, _, n) in records})
    kernels = [k for k in ("linear", "rbf") if any(kk == k for (_, kk, _) in records)]
    lines = []
    header = ["model (fast route)", *[f"n={n}" for n in sizes], "exp t", "exp mem", "last t"]
    for kernel in kernels:
        rows = []
        for model in (*MODELS, MATRIX_CHOLESKY, BASELINE):
            series = [records[key] for key in records if key[0] == model and key[1] == kernel]
            if not series:
                continue
            solvers = sorted({r.get("solver", "?") for r in series if r["status"] == "ok"})
            et, em, lt = exponent(series, "cpu"), exponent(series, "extra_mib"), last_slope(series, "cpu")
            rows.append([f"{model} [{','.join(solvers)}]",
                         *[cell(records.get((model, kernel, n))) for n in sizes],
                         *("–" if v is None else f"{v:.2f}" for v in (et, em, lt))])
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        lines.append(f"kernel = {kernel}")
        for row in [header, *rows]:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
        lines.append("")
    return "\n".join(lines)


def figure(records: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kernels = sorted({k for (_, k, _) in records})
    fig, axes = plt.subplots(2, len(kernels), figsize=(6 * len(kernels), 9), squeeze=False)
    for j, kernel in enumerate(kernels):
        for model in (*MODELS, MATRIX_CHOLESKY, BASELINE):
            series = sorted((r for (m, k, _), r in records.items() if m == model and k == kernel
                             and r["status"] == "ok"), key=lambda r: r["n"])
            if not series:
                continue
            n = [r["n"] for r in series]
            style = dict(marker="o", label=model, **({"color": "k", "linestyle": "--"} if model == BASELINE else {}))
            axes[0, j].loglog(n, [r["cpu"] for r in series], **style)
            axes[1, j].loglog(n, [max(r["extra_mib"], 1.0) for r in series], **style)
        axes[0, j].set(title=f"{kernel}: CPU time of fit", xlabel="n", ylabel="CPU s")
        axes[1, j].set(title=f"{kernel}: peak extra memory", xlabel="n", ylabel="MiB")
        for ax in axes[:, j]:
            ax.grid(True, which="both", alpha=0.3)
        axes[0, j].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


CONDITIONS = (f"make_multilabel(n, d={N_FEATURES}, q={N_LABELS}, noise=0.1, seed={SEED}); tol={TOL:g}; "
              f"rbf gamma=1/d; estimator defaults otherwise; OMP_NUM_THREADS=1; one fit per cell, in a "
              f"subprocess; 'CPU s/extra MiB' = process_time of fit / peak RSS beyond the pre-fit RSS; "
              f"'*' = not converged (ConvergenceWarning); '> N s' = killed at the CPU cap (series stops); "
              f"'> mem' = over the memory cap; exponents: log-log least squares over n in "
              f"{EXPONENT_RANGE[0]}..{EXPONENT_RANGE[1]} (measured cells only); 'last t' = the time slope between "
              f"the two largest measured n; [..] = the route that ran.")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", nargs=4, metavar=("MODEL", "KERNEL", "N", "MEM_GIB"), help=argparse.SUPPRESS)
    parser.add_argument("--models", default=",".join((*MODELS, BASELINE)))
    parser.add_argument("--kernels", default="linear,rbf")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--max-n", type=int, default=max(SIZES))
    parser.add_argument("--cap", type=float, default=600.0, help="CPU seconds per fit")
    parser.add_argument("--mem-cap", type=float, default=16.0, help="GiB per fit")
    parser.add_argument("--records", type=Path, default=HERE / "bench_scaling_records.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "bench_scaling_results.txt")
    parser.add_argument("--ab-polish", default="", help="sizes for the MatrixSVM polish A/B run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--note", default="", help="a line written under the conditions (how the run was made)")
    parser.add_argument("--report-only", action="store_true", help="rebuild table and figure from the records")
    args = parser.parse_args(argv)
    if args.worker:
        model, kernel, n, mem = args.worker
        worker(model, kernel, int(n), float(mem))
        return
    if args.ab_polish:
        ab_polish([int(n) for n in args.ab_polish.split(",")], args.rounds)
        return
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = set(models) - {*MODELS, BASELINE, MATRIX_CHOLESKY}
    if unknown:
        parser.error(f"--models: unknown {sorted(unknown)}; known: {', '.join((*MODELS, BASELINE))}")
    kernels = [k.strip() for k in args.kernels.split(",")]
    if not set(kernels) <= {"linear", "rbf"}:
        parser.error("--kernels takes linear and/or rbf")
    sizes = [int(s) for s in args.sizes.split(",") if int(s) <= args.max_n]
    if not args.report_only:
        for kernel in kernels:
            for model in models:
                for n in sizes:
                    record = run_one(model, kernel, n, args.cap, args.mem_cap)
                    print(f"{kernel:6s} {model:26s} n={n:6d}  {cell(record):22s} {record.get('solver', '')} "
                          f"gap={record.get('gap')} wall={record['wall']:.1f}s", flush=True)
                    with args.records.open("a") as f:
                        f.write(json.dumps(record) + "\n")
                    if record["status"] != "ok":
                        print(f"  series {model}/{kernel} stopped at n={n} ({record['status']})", flush=True)
                        break
    records = load_records(args.records)
    text = table(records)
    dates = sorted({r["date"][:10] for r in records.values()})
    note = f"{args.note}\n" if args.note else ""
    args.out.write_text(f"bench_scaling.py, {', '.join(dates)}\n{CONDITIONS}\n{note}\n{text}\n")
    figure(records, args.out.with_suffix(".png"))
    print(text)


if __name__ == "__main__":
    main()
