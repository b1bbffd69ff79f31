"""The shared interior-point loop (``mlsvm.solvers.ipm_tools.box_qp_ipm``) against the solvers of
another commit, side by side (run by hand).

The Matrix-SVM, Rank-SVM and OvN interior points and the Rank-SVM ALM (SciPy's CG) of the working
tree run alternately with the same files of ``--base`` (read by ``git show`` into a temporary
folder and imported beside the installed package) on emotions and a yeast subset, standardised;
the median time of ``--rounds`` runs each, the iterations, whether each converged and the ratio
new / old. ``--stall`` adds Rank-SVM's C = 1e8 on yeast[:300] (issue 14), once per side: time,
iterations and the warning.

    OMP_NUM_THREADS=1 python benchmarks/bench_ipm_loop.py [--base main] [--rounds 3] [--stall]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.formulations import ovn
from mlsvm.formulations import rank_svm as rs
from mlsvm.solvers import matrix_svm_ipm, ovn_ipm, rank_svm_alm, rank_svm_ipm

MODULES = {"matrix": matrix_svm_ipm, "rank": rank_svm_ipm, "ovn": ovn_ipm, "alm": rank_svm_alm}


def _old_modules(base: str, folder: Path) -> dict:
    """The solver files of ``base``, imported under other names (they import the rest of mlsvm
    from the working tree, whose shared pieces they use unchanged)."""
    modules = {}
    for key, module in MODULES.items():
        path = Path(module.__file__).relative_to(Path(module.__file__).parents[2])
        copy = folder / f"old_{path.stem}.py"
        copy.write_text(subprocess.run(["git", "show", f"{base}:{path.as_posix()}"], check=True,
                                       capture_output=True, text=True).stdout)
        spec = importlib.util.spec_from_file_location(f"old_{path.stem}", copy)
        modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[key])
    return modules


def _standard(X):
    return (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)


def _cases():
    emotions, yeast = load_emotions(), load_yeast()
    for label, data, n in (("emotions", emotions, None), ("yeast[:600]", yeast, 600)):
        X, Y = _standard(data.X[:n]), data.Y[:n]
        yield f"matrix ipm {label}", "matrix", lambda m, X=X, S=2.0 * Y - 1.0: m.interior_point_box(X, S, 1.0, tol=1e-8)
        problem = rs.make_problem(X @ X.T, Y, 1.0, check_psd=False, features=X)
        yield f"rank ipm {label}", "rank", lambda m, X=X, p=problem: m.interior_point(p, X, tol=1e-8, max_iter=200)
    X, Y = _standard(emotions.X), emotions.Y
    for kernel in ("linear", "rbf"):
        gram = X @ X.T if kernel == "linear" else rbf_kernel(X, gamma=1.0 / X.shape[1])
        problem = ovn.OvNProblem(gram, Y, 0.25, 1.0, "soft", "hard", features=X if kernel == "linear" else None)
        yield f"ovn ipm emotions {kernel}", "ovn", lambda m, p=problem: m.solve_ipm(p, tol=1e-10)
    problem = rs.make_problem(rbf_kernel(X, gamma=1.0 / X.shape[1]), Y, 1.0, check_psd=False)
    yield "rank alm emotions rbf", "alm", lambda m, p=problem: m.proximal_alm(p, tol=1e-8)


def _stall(modules: dict) -> None:
    yeast = load_yeast()
    X, Y = yeast.X[:300], yeast.Y[:300]
    problem = rs.make_problem(X @ X.T, Y, 1e8, check_psd=False, features=X)
    for side, module in (("old", modules["rank"]), ("new", rank_svm_ipm)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            result = module.interior_point(problem, X, tol=1e-8, max_iter=200)
            seconds = time.perf_counter() - start
        print(f"C=1e8 yeast[:300] {side}: {seconds:.1f} s, {result.n_iter} iterations, "
              f"stop value {result.stop_value:.2e}; {' | '.join(str(w.message) for w in caught)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stall", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        old = _old_modules(arguments.base, Path(folder))
        warnings.simplefilter("ignore")
        for title, key, run in _cases():
            seconds, results = {"old": [], "new": []}, {}
            for round_ in range(arguments.rounds):
                order = (("old", old[key]), ("new", MODULES[key]))
                for side, module in order if round_ % 2 == 0 else order[::-1]:
                    start = time.perf_counter()
                    results[side] = run(module)
                    seconds[side].append(time.perf_counter() - start)
            old_time, new_time = np.median(seconds["old"]), np.median(seconds["new"])
            print(f"{title:26} old {old_time:7.3f} s {results['old'].n_iter:3d} it conv={results['old'].converged!s:5} "
                  f"| new {new_time:7.3f} s {results['new'].n_iter:3d} it conv={results['new'].converged!s:5} "
                  f"| new/old {new_time / old_time:.3f}", flush=True)
        if arguments.stall:
            warnings.resetwarnings()
            _stall(old)


if __name__ == "__main__":
    main()
