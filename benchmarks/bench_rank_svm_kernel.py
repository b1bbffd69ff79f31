"""Kernel Rank-SVM benchmark (run by hand): the decomposition solver against binary-relevance SVC.

For each problem (same Gram matrix, same C = 1 on both sides; the paper scales yeast's features,
so every dataset is standardised here):

* ``decomposition``: :func:`mlsvm.solvers.rank_svm_decomposition.decomposition`, tol 1e-6 (relative
  duality gap and scaled KKT by the formulation's own functions), timed without building the Gram;
* ``BR-SVC``: one scikit-learn ``SVC(kernel="precomputed", C=1, tol=1e-7)`` per label (labels with a
  single class skipped), the binary-relevance baseline of the papers: Q binary problems on n points
  against one problem on T pairs; its own largest relative duality gap over the labels (primal
  ``½‖w‖² + C Σ hinge`` at LIBSVM's w and bias, dual ``Σα − ½αᵀQα``) is printed: ≤ 1e-6 is the
  accuracy the comparison asks of it;
* ``alm``: the existing proximal ALM (tol 1e-6), once per problem, given up after 60 s.

``--before PATH``: the decomposition solver file of another tree (e.g. ``git archive main mlsvm``
unpacked in PATH; loaded beside this tree's package, so only that file differs) runs as a third side
in the same rounds, and its time, iterations and the two duals' relative difference are printed.

Each side fits once untimed first (numba compiles the solver's kernels, or loads them from its
cache, at the first call in a process: the first problem's warm-up time is printed). The sides
then alternate over ``--rounds`` rounds; times are CPU seconds of this process
(``time.process_time``: the machine is shared, wall time depends on the other jobs); medians and the
ratio decomposition/BR-SVC are printed, then where the decomposition's time goes (cProfile, top
functions by own time).

    OMP_NUM_THREADS=1 python benchmarks/bench_rank_svm_kernel.py [--rounds 3] [--only emotions-rbf ...]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse            # noqa: E402
import cProfile            # noqa: E402
import io                  # noqa: E402
import pstats              # noqa: E402
import time                # noqa: E402
import warnings            # noqa: E402

import numpy as np         # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.preprocessing import StandardScaler   # noqa: E402
from sklearn.svm import SVC                        # noqa: E402

from before_tree import solver_from_tree                              # noqa: E402
from mlsvm.datasets import load_emotions, load_yeast, make_multilabel  # noqa: E402
from mlsvm.formulations import rank_svm as rs                          # noqa: E402
from mlsvm.kernels import make_kernel                                  # noqa: E402
from mlsvm.solvers.rank_svm_alm import proximal_alm                    # noqa: E402
from mlsvm.solvers.rank_svm_decomposition import decomposition         # noqa: E402

C, TOL, SVC_TOL, ALM_BUDGET = 1.0, 1e-6, 1e-7, 60.0


def problems():
    """name -> (X standardised, Y, kernel keyword arguments)."""
    emotions, yeast = load_emotions(), load_yeast("train")
    synthetic = make_multilabel(1200, 300, 6, noise=0.1, random_state=0)
    poly = lambda degree: dict(kernel="poly", gamma="scale", degree=degree, coef0=1.0)  # noqa: E731
    rbf = dict(kernel="rbf", gamma="scale")
    return {
        "emotions-poly2": (emotions, poly(2)),
        "emotions-rbf": (emotions, rbf),
        "yeast-poly2": (yeast, poly(2)),
        "yeast-poly3": (yeast, poly(3)),
        "yeast-rbf": (yeast, rbf),
        "synthetic-1200x300-rbf": (synthetic, rbf),
    }


def run_decomposition(problem, solver=decomposition):
    start = time.process_time()
    result = solver(problem, tol=TOL)
    return time.process_time() - start, result


def run_br_svc(gram, Y):
    start = time.process_time()
    models = [SVC(C=C, kernel="precomputed", tol=SVC_TOL).fit(gram, Y[:, k])
              for k in range(Y.shape[1]) if 0 < Y[:, k].sum() < Y.shape[0]]
    seconds = time.process_time() - start
    return seconds, models


def svc_gap(gram, Y, models):
    """Largest relative duality gap of the BR-SVC label problems (C-SVM primal at LIBSVM's w, b)."""
    gaps, labels = [], [k for k in range(Y.shape[1]) if 0 < Y[:, k].sum() < Y.shape[0]]
    for k, model in zip(labels, models):
        y = np.where(Y[:, k] > 0, 1.0, -1.0)
        coef = np.zeros(Y.shape[0])
        coef[model.support_] = model.dual_coef_.ravel()           # y_i α_i
        scores = gram @ coef
        quadratic = float(coef @ scores)
        primal = 0.5 * quadratic + C * float(np.sum(np.maximum(0.0, 1.0 - y * (scores + model.intercept_[0]))))
        dual = float(np.abs(coef).sum()) - 0.5 * quadratic
        gaps.append((primal - dual) / max(1.0, abs(primal), abs(dual)))
    return max(gaps)


def run_alm(problem):
    start = time.process_time()

    def give_up(iteration, alpha, gap):
        if time.process_time() - start > ALM_BUDGET:
            raise TimeoutError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = proximal_alm(problem, tol=TOL, max_iter=1000, callback=give_up)
    except TimeoutError:
        return None, None
    return time.process_time() - start, result


def certificate(problem, result):
    alpha, b = result.dual["alpha"], result.primal["b"]
    beta = problem.scatter(alpha)
    primal, dual = rs.primal_objective(problem, beta, b), rs.dual_objective(problem, alpha)
    return primal, dual, (primal - dual) / max(1.0, abs(primal), abs(dual)), max(rs.kkt_residuals(problem, alpha, b).values())


def profile(problem, top=8):
    profiler = cProfile.Profile()
    profiler.enable()
    decomposition(problem, tol=TOL)
    profiler.disable()
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]
    lines = [f"    {tt / total:5.1%} own  {ct / total:5.1%} cum  {calls:6d} calls  {func[2]} ({os.path.basename(func[0])}:{func[1]})"
             for func, (calls, _, tt, ct, _) in rows]
    return total, "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="problem names to run (default: all)")
    parser.add_argument("--no-alm", action="store_true")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--before", help="a tree whose decomposition solver file runs as a third side")
    args = parser.parse_args()
    before = solver_from_tree(args.before, "rank_svm_decomposition", "decomposition") if args.before else None
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, C={C}, tol={TOL}, SVC tol={SVC_TOL}, "
          f"{args.rounds} alternating rounds, CPU seconds")
    summary, first_fit = [], None
    for name, (data, kernel) in problems().items():
        if args.only and name not in args.only:
            continue
        X = StandardScaler().fit_transform(data.X)
        Y = data.Y
        gram = make_kernel(X=X, **kernel)(X)
        problem = rs.make_problem(gram, Y, C)
        ours, svc, old = [], [], []
        # one untimed fit per side first: the compiled kernels are compiled (or loaded from numba's
        # cache) at the first call in a process, which the first problem's warm-up reports
        warm_up, _ = run_decomposition(problem)
        if before is not None:
            run_decomposition(problem, before)
        if first_fit is None:
            first_fit = warm_up
            print(f"  first fit in this process (compiled kernels loaded or compiled): {warm_up:.2f} s")
        for _ in range(args.rounds):
            if before is not None:
                seconds, old_result = run_decomposition(problem, before)
                old.append(seconds)
            seconds, result = run_decomposition(problem)
            ours.append(seconds)
            seconds, models = run_br_svc(gram, Y)
            svc.append(seconds)
        primal, dual, gap, kkt = certificate(problem, result)
        ratio = np.median(ours) / np.median(svc)
        print(f"\n[{name}] n={X.shape[0]} d={X.shape[1]} Q={Y.shape[1]} pairs={problem.n_pairs}")
        print(f"  decomposition: median {np.median(ours):.2f} s (runs {', '.join(f'{t:.2f}' for t in ours)}), "
              f"{result.n_iter} iterations, converged={result.converged}, gap {gap:.1e}, max KKT {kkt:.1e}, "
              f"dual {dual:.10g}")
        print(f"  BR-SVC:        median {np.median(svc):.2f} s (runs {', '.join(f'{t:.2f}' for t in svc)}), "
              f"largest label gap {svc_gap(gram, Y, models):.1e}")
        print(f"  ratio decomposition / BR-SVC = {ratio:.1f}x")
        before_text = ""
        if before is not None:
            _, old_dual, old_gap, old_kkt = certificate(problem, old_result)
            print(f"  before:        median {np.median(old):.2f} s (runs {', '.join(f'{t:.2f}' for t in old)}), "
                  f"{old_result.n_iter} iterations, converged={old_result.converged}, gap {old_gap:.1e}, "
                  f"max KKT {old_kkt:.1e}; before / BR-SVC = {np.median(old) / np.median(svc):.1f}x, "
                  f"before / after = {np.median(old) / np.median(ours):.2f}x, dual rel. diff "
                  f"{abs(old_dual - dual) / max(1.0, abs(dual)):.1e}")
            before_text = f" | {np.median(old):.2f} | {np.median(old) / np.median(svc):.1f}x"
        alm_text = "not run"
        if not args.no_alm:
            alm_seconds, alm = run_alm(problem)
            if alm is None:
                alm_text = f"> {ALM_BUDGET:.0f} s (given up)"
            else:
                alm_primal, alm_dual, alm_gap, alm_kkt = certificate(problem, alm)
                alm_text = (f"{alm_seconds:.2f} s, gap {alm_gap:.1e}, KKT {alm_kkt:.1e}, ALM/decomposition = "
                            f"{alm_seconds / np.median(ours):.1f}x, dual rel. diff "
                            f"{abs(alm_dual - dual) / max(1.0, abs(dual)):.1e}")
            print(f"  ALM: {alm_text}")
        if not args.no_profile:
            total, lines = profile(problem)
            print(f"  profile of one decomposition run ({total:.2f} s under cProfile):\n{lines}")
        summary.append((name, np.median(ours), np.median(svc), ratio, alm_text, before_text))
    print("\nsummary: problem | decomposition s | BR-SVC s | ratio | ALM"
          + (" | before s | before ratio" if before is not None else ""))
    for name, ours, svc, ratio, alm_text, before_text in summary:
        print(f"  {name} | {ours:.2f} | {svc:.2f} | {ratio:.1f}x | {alm_text}{before_text}")


if __name__ == "__main__":
    main()
