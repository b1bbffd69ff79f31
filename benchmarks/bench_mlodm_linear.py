"""mLODM with the linear kernel (run by hand): the Gram-free exact solver
(:func:`mlsvm.solvers.mlodm_linear.solve_linear`) against the Gram-based "fast" route (dual BCD +
whole-dual active-set polish, :func:`mlsvm.solvers.mlodm_bcd.solve_bcd`), a binary ODM dual coordinate
descent written here, and CVXPY.

    OMP_NUM_THREADS=1 python benchmarks/bench_mlodm_linear.py [--rounds 3] [--skip-cvxpy] [--skip-dcd]

Setting: C = 1, θ = μ = 0.5, tol = 1e-6, features MinMax-scaled to [0, 1] (paper §6.1).
(a) yeast train (1500 × 103, 14 labels, 58,248 pairs): Newton vs "fast" (Gram X Xᵀ precomputed,
    not timed), alternating over ``--rounds`` rounds; the pair-wise DCD of the same module and the
    CVXPY primal (Clarabel; O(T) variables) once each.
(b) binary ODM: yeast train, label 0 against the rest as q = 2 with one label each (n_t = 1). With
    ``v = w_1 − w_2`` the optimum has ``w_2 = −w_1`` and mLODM is half of the binary ODM problem
    ``min ½‖v‖² + C Σ_i (ξ_i² + μ ε_i²)``, ``1 − θ − ξ_i ≤ y_i vᵀx_i ≤ 1 + θ + ε_i`` (Zhang & Zhou's
    ODM with λ/(2m(1−θ)²) = C), whose dual coordinate descent (:func:`binary_odm_dcd`) is the
    reference: same optimum, time ratio.
(c) synthetic ``make_multilabel(4000, 50, 10)`` (83,400 pairs): Newton vs "fast".
Times are CPU seconds (``time.process_time``); medians over the rounds and their ratios.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_yeast, make_multilabel
from mlsvm.formulations import mlodm
from mlsvm.solvers.mlodm_bcd import solve_bcd
from mlsvm.solvers.mlodm_linear import solve_linear
from mlsvm.solvers.result import relative_gap
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference

C, THETA, MU, TOL = 1.0, 0.5, 0.5, 1e-6


def timed(function):
    start = time.process_time()
    result = function()
    return result, time.process_time() - start


def binary_odm_dcd(X, y, C, theta, mu, tol=TOL, max_sweeps=20_000, seed=0):
    """Binary ODM by dual coordinate descent (one coordinate pair (ζ_i, β_i) per instance, random
    order per sweep), the textbook method of the ODM packages. Dual (minimised)::

        ½‖v‖² − (1 − θ) Σ ζ + (1 + θ) Σ β + Σ (ζ² + β²/μ) / (4C),   v = Σ (ζ_i − β_i) y_i x_i

    The joint exact step on (ζ_i, β_i): with ``b = y_i vᵀx_i − ‖x_i‖² u_i`` (``u = ζ − β``),
    ``ζ_i = (1 − θ − b)₊ / (‖x_i‖² + 1/(2C))`` or ``β_i = (b − 1 − θ)₊ / (‖x_i‖² + 1/(2Cμ))``.
    Stops when the relative duality gap and the natural residual ``‖min(η, ∇)‖_∞`` are both ≤ tol,
    checked every 5 sweeps. Returns ``(v, primal objective, sweeps)``."""
    n = X.shape[0]
    Z = X * y[:, None]
    norms = np.einsum("ij,ij->i", X, X)
    u = np.zeros(n)
    v = np.zeros(X.shape[1])
    rng = np.random.default_rng(seed)
    lower, upper = 1.0 - theta, 1.0 + theta
    for sweep in range(1, max_sweeps + 1):
        for i in rng.permutation(n):
            z = Z[i]
            b = float(z @ v) - norms[i] * u[i]
            if b < lower:
                new = (lower - b) / (norms[i] + 0.5 / C)
            elif b > upper:
                new = (upper - b) / (norms[i] + 0.5 / (C * mu))
            else:
                new = 0.0
            if new != u[i]:
                v += (new - u[i]) * z
                u[i] = new
        if sweep % 5:
            continue
        v = Z.T @ u                                   # re-anchor, then certify
        zeta, beta = np.maximum(u, 0.0), np.maximum(-u, 0.0)
        margins = Z @ v
        primal = 0.5 * v @ v + C * np.sum(np.maximum(0.0, lower - margins) ** 2
                                           + mu * np.maximum(0.0, margins - upper) ** 2)
        dual = lower * zeta.sum() - upper * beta.sum() - 0.5 * v @ v - (zeta @ zeta + beta @ beta / mu) / (4 * C)
        grad_zeta = margins - lower + zeta / (2 * C)
        grad_beta = upper - margins + beta / (2 * C * mu)
        residual = max(np.abs(np.minimum(zeta, grad_zeta)).max(), np.abs(np.minimum(beta, grad_beta)).max())
        if relative_gap(primal, dual) <= tol and residual <= tol:
            break
    return v, primal, sweep


def old_fast(problem_gram):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve_bcd(problem_gram, tol=TOL, random_state=0, polish=True)


def compare_with_fast(name, X, Y, rounds):
    pairs = ranking_pairs(Y)
    linear = mlodm.LinearMLODMProblem(X, pairs, C, THETA, MU)
    gram = mlodm.MLODMProblem(linear.gram, pairs, C, THETA, MU)
    print(f"\n== {name}: n = {X.shape[0]}, d = {X.shape[1]}, q = {Y.shape[1]}, pairs T = {pairs.n_pairs}")
    times = {"newton": [], "fast": []}
    for round_ in range(rounds):
        order = ("newton", "fast") if round_ % 2 == 0 else ("fast", "newton")
        for side in order:
            if side == "newton":
                new, elapsed = timed(lambda: solve_linear(linear, tol=TOL))
            else:
                old, elapsed = timed(lambda: old_fast(gram))
            times[side].append(elapsed)
    for label, result in (("newton", new), ("fast", old)):
        primal = result.history["primal"][-1]
        print(f"  {label:7s} median {np.median(times[label]):7.3f} s  (rounds {', '.join(f'{t:.3f}' for t in times[label])})"
              f"  converged {result.converged}  iterations {result.n_iter}  stop value {result.stop_value:.1e}"
              f"  primal {primal:.12g}")
    print(f"  fast / newton time ratio {np.median(times['fast']) / np.median(times['newton']):.1f}; "
          f"objective rel. diff {relative_difference(new.history['primal'][-1], old.history['primal'][-1]):.1e}; "
          f"max |Δα| {np.abs(new.dual['alpha'] - old.dual['alpha']).max():.1e}, "
          f"max |Δβ| {np.abs(new.dual['beta'] - old.dual['beta']).max():.1e}")
    return linear, new, float(np.median(times["newton"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-cvxpy", action="store_true")
    parser.add_argument("--skip-dcd", action="store_true")
    args = parser.parse_args()
    train = load_yeast("train")
    X = MinMaxScaler().fit_transform(train.X)

    # (a) yeast train
    linear, new, newton_time = compare_with_fast("(a) yeast train, linear", X, train.Y, args.rounds)
    if not args.skip_dcd:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            dcd, elapsed = timed(lambda: solve_linear(linear, method="dcd", tol=TOL, max_iter=2000, random_state=0))
        print(f"  dcd     {elapsed:7.3f} s (one run)  converged {dcd.converged}  sweeps {dcd.n_iter}  "
              f"stop value {dcd.stop_value:.1e}  objective rel. diff to newton "
              f"{relative_difference(dcd.history['primal'][-1], new.history['primal'][-1]):.1e}"
              + (f"  [{caught[0].message}]" if caught else ""))
    if not args.skip_cvxpy:
        value, elapsed = timed(lambda: solve(mlodm.cvxpy_primal(linear)[0], "CLARABEL"))
        print(f"  CVXPY primal (Clarabel) {elapsed:7.3f} s (one run)  value {value:.12g}  rel. diff to newton "
              f"{relative_difference(value, new.history['primal'][-1]):.1e}  ratio CVXPY / newton "
              f"{elapsed / newton_time:.0f} (newton's median)")

    # (b) binary ODM
    y = 2.0 * train.Y[:, 0] - 1.0
    binary = np.column_stack([train.Y[:, 0], 1 - train.Y[:, 0]])
    problem = mlodm.LinearMLODMProblem(X, ranking_pairs(binary), C, THETA, MU)
    print(f"\n== (b) binary ODM: yeast train label 0 vs rest as q = 2 (n = {X.shape[0]}, T = {problem.pairs.n_pairs})")
    times = {"newton": [], "odm-dcd": []}
    for round_ in range(args.rounds):
        order = ("newton", "odm-dcd") if round_ % 2 == 0 else ("odm-dcd", "newton")
        for side in order:
            if side == "newton":
                new, elapsed = timed(lambda: solve_linear(problem, tol=TOL))
            else:
                (v, binary_primal, sweeps), elapsed = timed(lambda: binary_odm_dcd(X, y, C, THETA, MU))
            times[side].append(elapsed)
    W = new.primal["W"]
    print(f"  newton  median {np.median(times['newton']):7.3f} s  iterations {new.n_iter}  stop value {new.stop_value:.1e}  "
          f"primal {new.history['primal'][-1]:.12g}")
    print(f"  odm-dcd median {np.median(times['odm-dcd']):7.3f} s  sweeps {sweeps}  ½·binary primal {0.5 * binary_primal:.12g}")
    print(f"  odm-dcd / newton time ratio {np.median(times['odm-dcd']) / np.median(times['newton']):.1f}; objective rel. diff "
          f"{relative_difference(new.history['primal'][-1], 0.5 * binary_primal):.1e}; "
          f"max |(w_1 − w_2) − v| {np.abs(W[:, 0] - W[:, 1] - v).max():.1e}")

    # (c) synthetic
    data = make_multilabel(4000, 50, 10, random_state=0)
    compare_with_fast("(c) synthetic make_multilabel(4000, 50, 10)", data.X, data.Y, args.rounds)


if __name__ == "__main__":
    main()
