"""mLODM benchmark (run by hand): dual BCD (exact and M³ block solvers, and the "fast" solver)
against the CVXPY ground truth, side by side in one run.

For each data set: the CVXPY primal (eq. 15, Clarabel at tight settings) time and value; for each
BCD variant at tol = 1e-6 the time, the time ratio CVXPY / BCD, the relative difference to the
CVXPY optimum, the sweeps needed to reach a relative duality gap of 1e-3 and 1e-6, and the test
ranking loss after every sweep (the paper's Fig. 1 claim: "the testing loss converges within one
iteration").

    OMP_NUM_THREADS=1 python benchmarks/bench_mlodm.py [--yeast-size 150] [--skip-cvxpy]
    OMP_NUM_THREADS=1 python benchmarks/bench_mlodm.py --table2     # Table 2 reproduction
    OMP_NUM_THREADS=1 python benchmarks/bench_mlodm.py --grid-cost [--samples 96]  # the paper grid's cost

``--table2`` selects (C, γ, θ, μ) by 3-fold cross-validation (mean ranking loss) on the training
part and reports the four Table 2 metrics on the test part beside the paper's numbers. The
paper's grid (C ∈ 2^{-2..10}, γ ∈ 2^{-10..2}, θ, μ ∈ {0.1..0.9}: 13 689 settings, 5 folds) is far
too slow here; the documented smaller grids are ``TABLE2_GRIDS`` (emotions: 108 settings on the
whole training part; yeast: 16 settings, cross-validated on a seeded 500-instance subsample of the
training part, then refitted on all 1500).

Setting: features scaled to [0, 1] on the training part (paper §6.1), RBF kernel, the paper's
Fig. 2 setting C = 1, γ = 2⁻¹, with θ = μ = 0.5. Emotions: a seeded 391 / 202 split (Table 1
sizes); yeast: the first ``--yeast-size`` training instances, tested on the standard test set.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.metrics import ranking_loss
from mlsvm.solvers.mlodm_bcd import solve_bcd
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference

C, GAMMA, THETA, MU = 1.0, 0.5, 0.5, 0.5
VARIANTS = {"bcd (exact)": dict(subproblem="exact"), "bcd-m3": dict(subproblem="m3"),
            "fast": dict(subproblem="exact", polish=True)}


def emotions_split():
    data = load_emotions()
    order = np.random.default_rng(0).permutation(data.X.shape[0])
    train, test = order[:391], order[391:]
    return data.X[train], data.Y[train], data.X[test], data.Y[test]


def yeast_subset(size):
    train, test = load_yeast("train"), load_yeast("test")
    return train.X[:size], train.Y[:size], test.X, test.Y


def first_sweep_below(history, level):
    hits = [k + 1 for k, value in enumerate(history) if value <= level]
    return hits[0] if hits else None


def run(name, X, Y, X_test, Y_test, skip_cvxpy):
    scaler = MinMaxScaler().fit(X)
    X, X_test = scaler.transform(X), np.clip(scaler.transform(X_test), 0.0, 1.0)
    kernel = make_kernel("rbf", GAMMA)
    gram, gram_test = kernel(X), kernel(X_test, X)
    problem = mlodm.MLODMProblem(gram, ranking_pairs(Y), C, THETA, MU)
    print(f"\n== {name}: n = {X.shape[0]}, q = {Y.shape[1]}, pairs T = {problem.pairs.n_pairs}")
    truth, cvxpy_time = float("nan"), float("nan")
    if not skip_cvxpy:
        start = time.perf_counter()
        truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
        cvxpy_time = time.perf_counter() - start
        print(f"CVXPY primal (Clarabel): {truth:.10g} in {cvxpy_time:.2f} s")
    print(f"{'solver':12s} {'time s':>8s} {'CVXPY/BCD':>10s} {'rel.diff':>9s} {'gap':>9s} {'max KKT':>9s} "
          f"{'sweeps':>6s} {'to 1e-3':>7s} {'to 1e-6':>7s}  test ranking loss per sweep")
    for label, options in VARIANTS.items():
        test_losses = []

        def record(sweep, primal, dual):
            test_losses.append(ranking_loss(Y_test, gram_test @ primal["coef"]))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = solve_bcd(problem, tol=1e-6, random_state=0, max_iter=200, callback=record, **options)
        alpha, beta = result.dual["alpha"], result.dual["beta"]
        # the callback's test-loss evaluation is excluded: time the solver alone once more
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            solve_bcd(problem, tol=1e-6, random_state=0, max_iter=200, **options)
        elapsed = time.perf_counter() - start
        primal = mlodm.primal_objective(problem, mlodm.coef_from_dual(problem, alpha, beta))
        kkt = max(mlodm.kkt_residuals(problem, alpha, beta).values())
        gaps = result.history["relative_gap"]
        print(f"{label:12s} {elapsed:8.3f} {cvxpy_time / elapsed:10.1f} {relative_difference(primal, truth):9.1e} "
              f"{gaps[-1]:9.1e} {kkt:9.1e} {result.n_iter:6d} {first_sweep_below(gaps, 1e-3)!s:>7s} "
              f"{first_sweep_below(gaps, 1e-6)!s:>7s}  " + " ".join(f"{v:.4f}" for v in test_losses[:8]))


#: paper Table 2, mLODM and Rank-SVM columns (%): ranking loss, Hamming loss, one-error, avg. precision
PAPER_TABLE2 = {"emotions": {"mLODM": (15.31, 19.50, 25.74, 81.56), "Rank-SVM": (15.79, 20.05, 28.71, 79.96)},
                "yeast": {"mLODM": (15.83, 19.08, 22.54, 77.07), "Rank-SVM": (15.82, 19.08, 23.12, 76.98)}}
TABLE2_GRIDS = {
    "emotions": dict(C=[2.0**-2, 1.0, 4.0, 16.0], gamma=[2.0**-3, 2.0**-1, 2.0], theta=[0.1, 0.5, 0.9], mu=[0.1, 0.5, 0.9]),
    "yeast": dict(C=[1.0, 4.0], gamma=[2.0**-3, 2.0**-1], theta=[0.5, 0.9], mu=[0.1, 0.5]),
}


def table2(name, X, Y, X_test, Y_test, cv_size=None):
    from itertools import product

    from sklearn.model_selection import KFold

    from mlsvm import MLODM
    from mlsvm.metrics import average_precision, hamming_loss, one_error

    scaler = MinMaxScaler().fit(X)
    X, X_test = scaler.transform(X), np.clip(scaler.transform(X_test), 0.0, 1.0)
    cv_index = np.arange(X.shape[0])
    if cv_size is not None:
        cv_index = np.sort(np.random.default_rng(0).choice(X.shape[0], cv_size, replace=False))
    grid = TABLE2_GRIDS[name]
    best, start = (np.inf, None), time.perf_counter()
    for C_, gamma, theta, mu in product(grid["C"], grid["gamma"], grid["theta"], grid["mu"]):
        losses = []
        for fit_part, held_out in KFold(3, shuffle=True, random_state=0).split(cv_index):
            fit_part, held_out = cv_index[fit_part], cv_index[held_out]
            model = MLODM(C=C_, gamma=gamma, theta=theta, mu=mu, tol=1e-4, random_state=0).fit(X[fit_part], Y[fit_part])
            losses.append(ranking_loss(Y[held_out], model.decision_function(X[held_out])))
        if np.mean(losses) < best[0]:
            best = (float(np.mean(losses)), dict(C=C_, gamma=gamma, theta=theta, mu=mu))
    cv_time = time.perf_counter() - start
    start = time.perf_counter()
    model = MLODM(**best[1], tol=1e-6, random_state=0).fit(X, Y)
    fit_time = time.perf_counter() - start
    scores, predicted = model.decision_function(X_test), model.predict(X_test)
    ours = (ranking_loss(Y_test, scores), hamming_loss(Y_test, predicted), one_error(Y_test, scores),
            average_precision(Y_test, scores))
    report = model.fit_report_
    print(f"\n== Table 2, {name}: CV ({cv_time:.0f} s) chose {best[1]} (CV ranking loss {best[0]:.4f}); "
          f"final fit {fit_time:.2f} s, {report.n_iter} sweeps, gap {report.relative_gap:.1e}, KKT {report.max_kkt:.1e}")
    print(f"margins of the training pairs: mean {model.margin_stats_['mean']:.4f}, variance {model.margin_stats_['variance']:.4f}")
    print(f"{'(%)':16s} {'ranking loss':>12s} {'Hamming':>8s} {'one-error':>9s} {'avg.prec':>8s}")
    print(f"{'mlsvm MLODM':16s} " + " ".join(f"{100 * v:{w}.2f}" for v, w in zip(ours, (12, 8, 9, 8))))
    for label, values in PAPER_TABLE2[name].items():
        print(f"{'paper ' + label:16s} " + " ".join(f"{v:{w}.2f}" for v, w in zip(values, (12, 8, 9, 8))))


def grid_cost(samples=96, folds=5):
    """Time single CV fits of the paper's grid (``paper_grid("mlodm")``) on emotions, as
    ``grid_search`` runs them: the 391-instance training part scaled to [0, 1], fold 0 of its
    shuffled 5-fold split, default ``MLODM`` (solver "fast", tol 1e-6), fit plus held-out scoring.
    Settings: a seeded uniform sample of the grid (its mean estimates the grid's mean fit time)
    and the four (C, γ) corners at θ = μ = 0.5. Prints the estimate settings × folds × mean / workers."""
    from itertools import product

    from sklearn.model_selection import KFold

    from mlsvm import MLODM
    from mlsvm.model_selection import PAPER_GRIDS

    X, Y, _, _ = emotions_split()
    X = MinMaxScaler().fit_transform(X)
    fit_part, held_out = next(KFold(folds, shuffle=True, random_state=0).split(X))
    grid = PAPER_GRIDS["mlodm"]
    settings = list(product(*(grid.searched[name] for name in ("C", "gamma", "theta", "mu"))))
    chosen = [settings[i] for i in np.random.default_rng(0).choice(len(settings), samples, replace=False)]
    corners = [(C_, gamma, 0.5, 0.5) for C_ in (2.0**-2, 2.0**10) for gamma in (2.0**-10, 2.0**2)]
    print(f"\n== grid cost: emotions, {len(fit_part)} fit / {len(held_out)} held out, {len(settings)} settings × {folds} folds")
    print(f"{'C':>8s} {'gamma':>10s} {'theta':>5s} {'mu':>4s} {'time s':>7s} {'sweeps':>6s} {'gap':>8s}  sample")
    times = []
    for index, (C_, gamma, theta, mu) in enumerate(chosen + corners):
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model = MLODM(C=C_, gamma=gamma, theta=theta, mu=mu, kernel="rbf").fit(X[fit_part], Y[fit_part])
            ranking_loss(Y[held_out], model.decision_function(X[held_out]))
        elapsed = time.perf_counter() - start
        in_sample = index < len(chosen)
        times += [elapsed] if in_sample else []
        note = " not converged" if caught else ""
        print(f"{C_:8g} {gamma:10g} {theta:5.1f} {mu:4.1f} {elapsed:7.2f} {model.fit_report_.n_iter:6d} "
              f"{model.fit_report_.relative_gap:8.1e}  {'yes' if in_sample else 'corner'}{note}")
    mean = float(np.mean(times))
    total = len(settings) * folds * mean
    slowest = np.sort(times)[-max(1, len(times) // 10):]
    print(f"sample of {len(times)}: mean {mean:.2f} s, median {np.median(times):.2f} s, 90th percentile "
          f"{np.quantile(times, 0.9):.2f} s, max {max(times):.2f} s per fit; the slowest 10% take "
          f"{slowest.sum() / np.sum(times):.0%} of the time")
    print("estimate (settings × folds × mean / workers): " + ", ".join(
        f"{workers} worker{'s' * (workers > 1)} {total / workers / 3600:.1f} h" for workers in (1, 2, 8, 32)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--yeast-size", type=int, default=150)
    parser.add_argument("--skip-cvxpy", action="store_true")
    parser.add_argument("--table2", action="store_true", help="the Table 2 reproduction instead of the timing benchmark")
    parser.add_argument("--grid-cost", action="store_true", help="time fits of the paper's full grid instead")
    parser.add_argument("--samples", type=int, default=96, help="--grid-cost: grid settings sampled")
    args = parser.parse_args()
    if args.grid_cost:
        grid_cost(args.samples)
        return
    if args.table2:
        table2("emotions", *emotions_split())
        train, test = load_yeast("train"), load_yeast("test")
        table2("yeast", train.X, train.Y, test.X, test.Y, cv_size=500)
        return
    run("emotions (391 train / 202 test)", *emotions_split(), args.skip_cvxpy)
    run(f"yeast (first {args.yeast_size} train / 917 test)", *yeast_subset(args.yeast_size), args.skip_cvxpy)


if __name__ == "__main__":
    main()
