"""CG products per joint Newton system of SMSVM on bibtex, by preconditioner (run by hand):

    OMP_NUM_THREADS=1 python benchmarks/bench_smsvm_preconditioners.py [--d-max 90] [--systems 4]

The joint Newton step of ``solver="fast"`` solves its system by CG, preconditioned by the per-class
Hessian blocks with the common-class mode solved exactly (``sparse_mm_greedy._preconditioner``). The
blocks leave out the coupling between a point's true class and its active classes. This fits SMSVM
(linear kernel, the 147 argmax classes of bibtex train, λ = 1, tol 1e-6) to ``|J|`` = d_max, takes the
first Newton systems on the final basis (rebuilt from the iterates the callback sees) and counts the
Hessian products CG needs to reach relative residuals 1e-2, 1e-3 and 1e-5 with

* ``blocks``: the preconditioner the solver uses;
* ``sgs``: symmetric block Gauss–Seidel over the classes, ``(D + L) D⁻¹ (D + Lᵀ)`` with D the class
  blocks and L the class-pair coupling below the diagonal, written here in numpy;
* ``sgs+common``: the same with the common-class mode solved exactly, as in ``blocks``.

Only the counts are compared: an application of ``sgs`` visits every active pair twice (one dot
product and one scatter of length ``|J|`` each, as a Hessian product does) and applies the class
blocks twice, so it costs about two Hessian products plus two of the solver's preconditioner
applications. Results: ``bench_sparse_mm_bibtex_results.txt``.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.sparse.linalg import LinearOperator, cg

from mlsvm.datasets import load_bibtex
from mlsvm.formulations.sparse_mm import KernelColumns, MarginOperator
from mlsvm.kernels import make_kernel
from mlsvm.solvers.sparse_mm_greedy import (_active, _ActivePairs, _ClassHessians, _curvature, _preconditioner,
                                            _with_common_mode, greedy_sparse)


def _systems(X, ops, d_max, count):
    """The first ``count`` iterates on the final basis of a fit to ``|J|`` = d_max: (Z, C, F) each."""
    iterates = []

    def callback(n_iter, primal, dual):
        if len(primal["basis"]) == d_max and len(iterates) < count:
            iterates.append((primal["basis"].copy(), primal["coef"].copy(), primal["F"].copy()))

    greedy_sparse(KernelColumns(make_kernel("linear"), X), ops, 1.0, d_max=d_max, tol=1e-6, max_iter=5000,
                  min_rel_decrease=0.0, random_state=0, callback=callback)
    basis = iterates[0][0]
    K_J = (X @ X[basis].T).toarray()
    L = cholesky(K_J[basis], lower=True)
    Z = solve_triangular(L, K_J.T, lower=True).T      # Z = K_J L⁻ᵀ, C = Lᵀ A
    return [(Z, L.T @ A, F) for _, A, F in iterates]


def _symmetric_gauss_seidel(Z, hessians, active, label, weight):
    """``V ↦ M⁻¹V`` for ``M = (D + L) D⁻¹ (D + Lᵀ)``, classes as blocks (V and the result d × k)."""
    n, k = active.shape
    blocks = hessians.inverses()
    points, classes = np.nonzero(active)
    links = []                    # per class r: the points and partner classes of the pairs coupling r
    for r in range(k):
        own = label[points] == r  # pairs (i, c) with y_i = r couple r and c; pairs (i, r) couple r and y_i
        links.append((np.concatenate([points[classes == r], points[own]]),
                      np.concatenate([label[points[classes == r]], classes[own]])))

    def coupled(r, X, below):
        """``−Σ_q H_rq X_q`` over the partner classes q below (or above) r: ``+w Σ z_i z_iᵀ X_q``."""
        i, q = links[r]
        keep = q < r if below else q > r
        i, q = i[keep], q[keep]
        return weight * Z[i].T @ np.einsum("ij,ji->i", Z[i], X[:, q]) if i.size else np.zeros(X.shape[0])

    def apply(V):
        Y = np.zeros_like(V)
        for r in range(k):
            Y[:, r] = blocks[r] @ (V[:, r] + coupled(r, Y, True))
        X = Y.copy()
        for r in range(k - 1, -1, -1):
            X[:, r] = Y[:, r] + blocks[r] @ coupled(r, X, False)
        return X

    return apply


def _products(product, precondition, gradient, rtol):
    shape, calls = gradient.shape, [0]

    def matvec(v):
        calls[0] += 1
        return product(v.reshape(shape)).ravel()

    size = gradient.size
    hessian = LinearOperator((size, size), dtype=np.float64, matvec=matvec)
    preconditioner = LinearOperator((size, size), dtype=np.float64,
                                    matvec=lambda v: precondition(v.reshape(shape)).ravel())
    _, info = cg(hessian, -gradient.ravel(), rtol=rtol, atol=0.0, maxiter=500, M=preconditioner)
    return calls[0] if info == 0 else f">{calls[0]}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--d-max", type=int, default=90)
    parser.add_argument("--systems", type=int, default=4)
    args = parser.parse_args()
    train = load_bibtex("train")
    classes, label = np.unique(train.Y.argmax(axis=1), return_inverse=True)
    ops = MarginOperator("smsvm", np.eye(classes.size)[label])
    lam, weight = 1.0, 2 * ops.weight
    print(f"bibtex train, {classes.size} argmax classes, |J| = {args.d_max}: Hessian products of CG")
    for number, (Z, C, F) in enumerate(_systems(train.X, ops, args.d_max, args.systems)):
        margin = 1.0 + ops.forward(F)
        active = _active(ops, margin)
        hessians = _ClassHessians(lam, np.eye(classes.size), *F.shape, Z.shape[1])
        hessians.reset(Z.shape[1])
        hessians.refresh(Z, _curvature(ops, F, active))
        pairs = _ActivePairs(active, ops.label, Z)
        gradient = lam * C + pairs.adjoint(weight * np.maximum(margin, 0.0)[pairs.points, pairs.classes])
        product = lambda D: lam * D + pairs.product(D, weight)
        sgs = _symmetric_gauss_seidel(Z, hessians, active, ops.label.astype(np.int64), weight)
        candidates = {"blocks": _preconditioner(ops, hessians, lam), "sgs": sgs,
                      "sgs+common": _with_common_mode(sgs, lam)}
        for rtol in (1e-2, 1e-3, 1e-5):
            counts = ", ".join(f"{name} {_products(product, apply, gradient, rtol)}"
                               for name, apply in candidates.items())
            print(f"Newton step {number}, {pairs.classes.size} active pairs, rtol {rtol:.0e}: {counts}", flush=True)


if __name__ == "__main__":
    main()
