"""
mLODM §5.2: the literal shrinking test never fires at a bound
=============================================================

The shrinking heuristic of Tan et al. (§5.2) skips the block of instance :math:`i` when
":math:`\\nabla F(\\eta_i) = 0`". But the block problem (24) is a *non-negative* QP: at its
optimum a variable at its bound :math:`\\eta = 0` has a gradient that is :math:`\\ge 0`, not 0.
So the literal test rejects most optimal blocks. mlsvm tests the natural residual
:math:`\\|\\min(\\eta_i, \\nabla F(\\eta_i))\\|_\\infty`, which is 0 exactly at a block optimum.
Below, both tests at the solution of a real problem (emotions, 150 instances).
See the :doc:`mLODM page </mlodm>`.
"""

import numpy as np
from sklearn.preprocessing import MinMaxScaler

from mlsvm import MLODM
from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_emotions
from mlsvm.formulations.mlodm import MLODMProblem, dual_gradient
from mlsvm.kernels import make_kernel

data = load_emotions()
X, Y = MinMaxScaler().fit_transform(data.X[:150]), data.Y[:150]
model = MLODM(C=1.0, gamma=0.5, theta=0.5, mu=0.5, tol=1e-10).fit(X, Y)
report = model.fit_report_
print(f"fit: relative gap {report.relative_gap:.1e}, max KKT {report.max_kkt:.1e}, converged {report.converged}")

pairs = ranking_pairs(Y)
problem = MLODMProblem(gram=make_kernel("rbf", gamma=0.5)(X, X), pairs=pairs, C=1.0, theta=0.5, mu=0.5)
alpha, beta = model.dual_coef_["alpha"], model.dual_coef_["beta"]
grad_alpha, grad_beta = dual_gradient(problem, alpha, beta)
eta, grad = np.concatenate([alpha, beta]), np.concatenate([grad_alpha, grad_beta])
block = np.concatenate([pairs.instance, pairs.instance])

literal = np.array([np.abs(grad[block == i]).max() <= 1e-8 for i in np.unique(pairs.instance)])
natural = np.array([np.abs(np.minimum(eta[block == i], grad[block == i])).max() <= 1e-8
                    for i in np.unique(pairs.instance)])
at_bound = np.sum(eta == 0)
print(f"dual variables at the bound η = 0: {at_bound} of {eta.size}; "
      f"their smallest / largest gradient {grad[eta == 0].min():.3g} / {grad[eta == 0].max():.3g}")
print(f"blocks (instances with pairs): {literal.size}")
print(f"  optimal by the natural residual ‖min(η, ∇F)‖∞ ≤ 1e-8: {natural.sum()}")
print(f"  passing the literal test ‖∇F(η_i)‖∞ ≤ 1e-8:          {literal.sum()}")
assert natural.all() and literal.sum() < natural.sum()
