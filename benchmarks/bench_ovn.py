"""OvN benchmark (run by hand): exact dual IPM and MM against CVXPY on emotions, and the paper's
real-data protocol beside Tables 5 and 6.

    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py speed      # emotions, linear and RBF
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py ratio      # the same without MM (minutes less)
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py realdata   # iris, wine, emotions, 3-fold CV
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py yeast      # "fast" vs BR-SVC vs the dense route
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py yeast-memory   # peak memory of each side
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py scaling    # synthetic n = 1000..4000, linear and RBF
    OMP_NUM_THREADS=1 python benchmarks/bench_ovn.py defaults   # issue 14 item 16: iris / yeast accuracy

``speed``: soft w / hard b (the paper's Sw-Hb), canonical α = 0.25, β = 1, on all 593 emotions
samples (features standardised). CVXPY = the Clarabel primal (build + solve), timed side by side
with ``fast`` in one run; MM runs with ε = 1e-8 (at most 4000 iterations linear, 1500 RBF) and reports the iterations and time it needs to
come within 1e-3 and 1e-6 (relative) of the CVXPY optimum.

``yeast``: yeast train (1500 × 103, 14 labels, T = 6342 memberships), RBF (γ = "scale"), β = 1:
OvNSVM "fast" (the class-block interior point) at tol 1e-6 and at its default 1e-10, binary-relevance
``SVC(C = β/2)`` (the §3.5 mapping: OvN with K = 2, hard w, hard b is SVC with C = β/2) with
``tol=1e-6``, and the route it replaced (the same IPM on the dense T × T Newton matrix and the dense
(T+1)² dual QP for the certificate, rebuilt here as it was), in alternating rounds (CPU time,
medians), and the agreement of fast with the dense route. ``yeast-memory``: one child process per side
for the peak memory (VmHWM growth during the fit, and tracemalloc's peak of Python/numpy
allocations; the Gram matrix is 17 MiB).

``scaling``: ``make_multilabel(n, 50, 10)``, linear and RBF, fast vs BR-SVC / BR-LinearSVC (issue 18).

``realdata``: the paper's protocol (§5): 3-fold CV (shuffled) for each point of a small grid, the
best mean score is reported (as the paper does), for OvN Sw-Hb (``fast``) and for scikit-learn's
one-vs-rest SVC (binary relevance) on the same grid of C = β/2.
"""

from __future__ import annotations

import itertools
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import KFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

from mlsvm import OvNSVM
from mlsvm.datasets import load_emotions
from mlsvm.formulations import ovn
from mlsvm.kernels import make_kernel
from mlsvm.metrics import example_accuracy, hamming_loss
from mlsvm.solvers.ovn_mm import mm
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference


def _standardize(X):
    scale = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def speed(with_mm: bool = True) -> None:
    data = load_emotions()
    X, Y = _standardize(data.X), data.Y
    print(f"emotions: n={X.shape[0]}, d={X.shape[1]}, K={Y.shape[1]}, memberships T={int(Y.sum())}")
    print(f"{'kernel':7} {'solver':8} {'time s':>8} {'objective':>14} {'rel.diff':>9} {'rel.gap':>9} {'KKT':>9} {'iters':>6} {'CVXPY/x':>8}")
    for kernel in ("linear", "rbf"):
        common = dict(alpha=0.25, beta=1.0, w_constraint="soft", b_constraint="hard", kernel=kernel)
        fast = OvNSVM(solver="fast", **common).fit(X, Y)
        gram = fast.kernel_(X)
        problem = ovn.OvNProblem(gram, Y, 0.25, 1.0, "soft", "hard", features=X if kernel == "linear" else None)
        start = time.perf_counter()
        optimum = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
        cvxpy_time = time.perf_counter() - start
        report = fast.fit_report_
        print(f"{kernel:7} {'cvxpy':8} {cvxpy_time:8.2f} {optimum:14.8f} {'':>9} {'':>9} {'':>9} {'':>6} {1.0:8.1f}")
        print(f"{kernel:7} {'fast':8} {report.solve_time:8.3f} {report.primal_objective:14.8f} "
              f"{relative_difference(report.primal_objective, optimum):9.1e} {report.relative_gap:9.1e} "
              f"{report.max_kkt:9.1e} {report.n_iter:6d} {cvxpy_time / report.solve_time:8.1f}")
        if not with_mm:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mm(problem, epsilon=1e-8, tol=1e-13,
                        max_iter=4000 if kernel == "linear" else 1500)
        history = np.asarray(result.history["primal"])
        per_iteration = result.solve_time / result.n_iter
        distance = (history - optimum) / max(1.0, abs(optimum))
        increases = np.diff(history)
        for target in (1e-3, 1e-6):
            reached = np.flatnonzero(distance <= target)
            if reached.size:
                iterations = int(reached[0]) + 1
                seconds = iterations * per_iteration
                print(f"{kernel:7} {'mm':8} {seconds:8.2f} {history[iterations - 1]:14.8f} {distance[iterations - 1]:9.1e} "
                      f"{'':>9} {'':>9} {iterations:6d} {cvxpy_time / seconds:8.1f}   (to {target:.0e} of the optimum)")
            else:
                print(f"{kernel:7} {'mm':8} not within {target:.0e} after {result.n_iter} iterations "
                      f"(reached {distance.min():.1e}, {result.solve_time:.1f} s)")
        smoothed_rise = max(np.diff(result.history["smoothed_objective"]).max(), 0.0)
        steps = np.asarray(result.history["step"])
        print(f"{'':7} mm: {result.n_iter} iterations, {per_iteration * 1e3:.1f} ms each; largest rise of the true "
              f"objective {max(increases.max(), 0.0):.1e}, of F_eps {smoothed_rise:.1e}; safeguard: "
              f"{int(np.sum((steps > 0) & (steps < 1)))} partial steps, {int(np.sum(steps == 0))} floor reductions "
              f"(final floor {result.history['epsilon'][-1]:.0e})")


def _cv_scores(make, X, Y, multiclass: bool):
    accuracies, losses = [], []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predicted = make().fit(X[train], Y[train]).predict(X[test])
        if multiclass:
            accuracies.append(np.mean(predicted == Y[test]))
            losses.append(1.0 - accuracies[-1])
        else:
            accuracies.append(example_accuracy(Y[test], predicted))
            losses.append(hamming_loss(Y[test], predicted))
    return float(np.mean(accuracies)), float(np.mean(losses))


PAPER = {  # (AS, HL) of OvN Sw-Hb and of OvR, Tables 5 and 6
    ("iris", "linear"): ((0.987, 0.013), (0.960, 0.04)), ("iris", "rbf"): ((0.987, 0.013), (0.967, 0.033)),
    ("wine", "linear"): ((0.843, 0.157), (0.967, 0.033)), ("wine", "rbf"): ((0.966, 0.034), (0.986, 0.014)),
    ("emotions", "linear"): ((0.494, 0.235), (0.530, 0.195)), ("emotions", "rbf"): ((0.50, 0.255), (0.575, 0.175)),
}


def realdata() -> None:
    iris, wine, emotions = load_iris(), load_wine(), load_emotions()
    sets = [("iris", _standardize(iris.data), iris.target, True), ("wine", _standardize(wine.data), wine.target, True),
            ("emotions", _standardize(emotions.X), emotions.Y, False)]
    alphas, betas = (-0.15, 0.0, 0.25, 0.5, 0.75, 0.9), (0.1, 1.0, 10.0, 100.0)
    print(f"{'data':9} {'kernel':7} {'OvN AS':>7} {'OvN HL':>7} {'paper':>13} {'BR AS':>7} {'BR HL':>7} {'paper':>13}  best OvN (α, β)")
    for name, X, Y, multiclass in sets:
        for kernel in ("linear", "rbf"):
            ovn_best = max(((_cv_scores(lambda a=a, b=b: OvNSVM(alpha=a, beta=b, kernel=kernel), X, Y, multiclass), (a, b))
                            for a, b in itertools.product(alphas, betas)), key=lambda t: t[0][0])
            svc = lambda b: OneVsRestClassifier(SVC(C=b / 2, kernel=kernel))  # noqa: E731 - OvR / BR, as in the paper
            br_best = max((_cv_scores(lambda b=b: svc(b), X, Y, multiclass) for b in betas), key=lambda t: t[0])
            paper_ovn, paper_br = PAPER[(name, kernel)]
            print(f"{name:9} {kernel:7} {ovn_best[0][0]:7.3f} {ovn_best[0][1]:7.3f} {str(paper_ovn):>13} "
                  f"{br_best[0]:7.3f} {br_best[1]:7.3f} {str(paper_br):>13}  {ovn_best[1]}")


def _dense_route(problem, tol):
    """The route "fast" replaced (before this change): the IPM on the dense T × T Newton matrix built
    from ``dual_qp``, certified with the dense (T+1)² dual QP (``qp_residuals`` on ``dual_qp``)."""
    from mlsvm.formulations.evaluation import qp_residuals
    from mlsvm.solvers.ovn_ipm import equal_mass_ipm

    sample, cls = problem.members
    T = sample.size
    nu_weight = 1.0 / (2.0 * problem.gamma_b) if problem.soft_b else 0.0
    result = equal_mass_ipm(ovn.dual_qp(problem)["P"][:T, :T], cls, problem.n_classes, problem.beta, nu_weight,
                            tol=tol, max_iter=200)
    qp = ovn.dual_qp(problem)
    y = result.dual["y"] - (result.dual["y"].mean() if problem.b_constraint == "hard" else 0.0)
    x = np.append(result.primal["lambda"], result.primal["nu"])
    gradient = qp["P"] @ x + qp["q"] + qp["A"].T @ y
    kkt = qp_residuals(qp["P"], qp["q"], x, A=qp["A"], b=qp["b"], y=y, lb=qp["lb"], ub=qp["ub"], z_box=-gradient)
    return result, max(kkt.values())


def _yeast_sides(variant, tol):
    from mlsvm.datasets import load_yeast

    data = load_yeast("train")
    X, Y = data.X, data.Y
    beta = variant.get("beta", 1.0)

    def fast():
        return OvNSVM(kernel="rbf", tol=tol, **variant).fit(X, Y)

    def svc():
        return OneVsRestClassifier(SVC(C=beta / 2, kernel="rbf", tol=1e-6)).fit(X, Y)

    def dense():
        model = OvNSVM(kernel="rbf", **variant)
        gram = make_kernel("rbf", "scale", X=X)(X)
        problem = ovn.OvNProblem(gram, Y, model.alpha, model.beta, model.w_constraint, model.b_constraint, model.gamma_b)
        return _dense_route(problem, tol)

    return {"fast": fast, "BR-SVC": svc, "dense route": dense}


def _child_memory(variant, tol, side):
    """Run one side in a fresh interpreter; return (growth of its peak RSS during the fit in MiB, from
    /proc/self/status VmHWM — ``ru_maxrss`` is inherited from the parent across exec, so it is not
    usable here —, and tracemalloc's peak of Python/numpy allocations in MiB)."""
    import json
    import os
    import subprocess

    code = (f"import json, sys, tracemalloc, warnings; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import bench_ovn as b; sides = b._yeast_sides({variant!r}, {tol!r}); "
            f"from mlsvm.datasets import load_yeast; load_yeast('train'); "
            f"hwm = lambda: next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')); "
            f"base = hwm(); tracemalloc.start(); "
            f"warnings.simplefilter('ignore'); sides[{side!r}](); peak = tracemalloc.get_traced_memory()[1]; "
            f"print(json.dumps([(hwm() - base) / 1024, peak / 2**20]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def yeast_memory() -> None:
    """Peak memory of each side of ``yeast`` (one fresh child process per side)."""
    for variant, tol in (({}, 1e-6), ({"alpha": 0.25}, 1e-6), ({"w_constraint": "hard"}, 1e-6)):
        for side in ("fast", "BR-SVC", "dense route"):
            rss, traced = _child_memory(variant, tol, side)
            print(f"  {str(variant or 'defaults'):26} {side:12} peak RSS +{rss:6.0f} MiB  tracemalloc peak {traced:6.0f} MiB",
                  flush=True)


def _yeast_Y():
    from mlsvm.datasets import load_yeast

    return load_yeast("train").Y


def yeast(rounds: int = 3) -> None:
    print("yeast train 1500 × 103, 14 labels, T = 6342; RBF γ='scale'; CPU seconds, medians of alternating rounds")
    cases = [({}, 1e-6, rounds), ({}, 1e-10, 1), ({"alpha": 0.25}, 1e-6, 1), ({"w_constraint": "hard"}, 1e-6, 1)]
    for variant, tol, n_rounds in cases:
        sides = _yeast_sides(variant, tol)
        times = {name: [] for name in sides}
        outputs = {}
        for round_ in range(n_rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for name in order:
                start = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outputs[name] = sides[name]()
                times[name].append(time.process_time() - start)
        median = {name: float(np.median(t)) for name, t in times.items()}
        report = outputs["fast"].fit_report_
        dense_result, dense_kkt = outputs["dense route"]
        print(f"\n== variant {variant or 'defaults (α = 0, soft w, hard b)'}, β = 1, tol {tol:g}, {n_rounds} round(s)")
        for name in sides:
            print(f"  {name:12} median {median[name]:7.2f} s  (rounds {', '.join(f'{t:.2f}' for t in times[name])})")
        print(f"  fast: converged {report.converged}, {report.n_iter} iterations, relative gap {report.relative_gap:.1e}, "
              f"max KKT {report.max_kkt:.1e}, primal {report.primal_objective:.10f}")
        fitted = outputs["fast"]
        problem = ovn.OvNProblem(fitted.kernel_(fitted.X_fit_), _yeast_Y(), fitted.alpha, fitted.beta, fitted.w_constraint, fitted.b_constraint, fitted.gamma_b)
        sample, cls = problem.members
        Lam = np.zeros(problem.Y.shape)
        Lam[sample, cls] = dense_result.primal["lambda"]
        dense_dual = ovn.dual_objective(problem, Lam, dense_result.primal["nu"])
        print(f"  dense route: converged {dense_result.converged}, {dense_result.n_iter} iterations, max KKT {dense_kkt:.1e}, "
              f"dual {dense_dual:.10f}; fast vs dense: objective rel. diff "
              f"{relative_difference(report.primal_objective, dense_dual):.1e}, max |Δλ| "
              f"{np.abs(fitted.multipliers_ - Lam).max():.1e}")
        print(f"  ratios: fast / BR-SVC {median['fast'] / median['BR-SVC']:.2f}; dense route / fast "
              f"{median['dense route'] / median['fast']:.1f}  (peak memory: `bench_ovn.py yeast-memory`)")


def scaling(rounds: int = 3) -> None:
    from sklearn.svm import LinearSVC

    from mlsvm.datasets import make_multilabel

    print("make_multilabel(n, 50, 10), β = 1, tol 1e-6; CPU seconds, medians of alternating rounds")
    for kernel, sizes in (("linear", (1000, 2000, 4000)), ("rbf", (1000, 2000, 4000))):
        for n in sizes:
            data = make_multilabel(n, 50, 10, random_state=0)
            X, Y = _standardize(data.X), data.Y
            sides = {"fast": lambda: OvNSVM(kernel=kernel, tol=1e-6).fit(X, Y),
                     "BR": (lambda: OneVsRestClassifier(LinearSVC(C=0.5, loss="hinge", tol=1e-6, max_iter=100000)).fit(X, Y))
                     if kernel == "linear" else (lambda: OneVsRestClassifier(SVC(C=0.5, kernel="rbf", tol=1e-6)).fit(X, Y))}
            times = {name: [] for name in sides}
            for round_ in range(rounds):
                for name in (sides if round_ % 2 == 0 else reversed(list(sides))):
                    start = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fitted = sides[name]()
                    times[name].append(time.process_time() - start)
                    if name == "fast":
                        report = fitted.fit_report_
            import tracemalloc
            tracemalloc.start()
            sides["fast"]()
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            fast, br = float(np.median(times["fast"])), float(np.median(times["BR"]))
            print(f"  {kernel:6} n={n:5d} T={int(Y.sum()):6d}  fast {fast:7.2f} s  BR {br:6.2f} s  ratio {fast / br:5.2f}  "
                  f"fast tracemalloc peak {peak:6.0f} MiB (Gram {n * n * 8 / 2**20:.0f} MiB)  converged {report.converged} "
                  f"gap {report.relative_gap:.1e} KKT {report.max_kkt:.1e} iterations {report.n_iter}")


def defaults() -> None:
    """Issue 14 item 16: default OvNSVM on raw / standardised iris and on yeast (test split)."""
    from mlsvm.datasets import load_yeast

    X, y = load_iris(return_X_y=True)
    for name, data in (("raw", X), ("standardised", _standardize(X))):
        for kernel in ("linear", "rbf"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                predicted = OvNSVM(kernel=kernel).fit(data, y).predict(data)
            flagged = any(w.category.__name__ == "UncenteredDataWarning" for w in caught)
            print(f"  iris {name:12} {kernel:6} training accuracy {np.mean(predicted == y):.3f}  predicted classes "
                  f"{np.bincount(predicted, minlength=3).tolist()}  UncenteredDataWarning {flagged}")
    train, test = load_yeast("train"), load_yeast("test")
    for kernel in ("linear", "rbf"):
        predicted = OvNSVM(kernel=kernel).fit(train.X, train.Y).predict(test.X)
        print(f"  yeast test {kernel:6} OvN Hamming {hamming_loss(test.Y, predicted):.3f}  labels/instance "
              f"{predicted.sum(1).mean():.2f} (true {test.Y.sum(1).mean():.2f})")
    br = OneVsRestClassifier(SVC(C=0.5)).fit(train.X, train.Y).predict(test.X)
    print(f"  yeast test BR-SVC rbf Hamming {hamming_loss(test.Y, br):.3f}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["speed", "realdata"]
    for part in parts:
        {"speed": speed, "ratio": lambda: speed(with_mm=False), "realdata": realdata, "yeast": yeast,
         "scaling": scaling, "defaults": defaults, "yeast-memory": yeast_memory}[part]()
