"""
mLODM eqs. (12)–(14): the dropped ½'s (and the dropped C)
=========================================================

Tan, Tan, Jiang & Zhou state mLODM as eq. (14),
:math:`\\sum_k\\|w_k\\|^2 + \\sum_i \\frac{1}{|Y_i||\\bar Y_i|}\\sum(\\xi^2 + \\mu\\epsilon^2)` (no ½, and
no :math:`C`, although eqs. 12–13 have one), and then derive the dual (18) from eq. (15),
:math:`\\tfrac12\\sum_k\\|w_k\\|^2 + \\tfrac C2\\sum_i\\frac{1}{|Y_i||\\bar Y_i|}\\sum(\\xi^2 + \\mu\\epsilon^2)`.
The dual (18) is the dual of (15) only: its optimum is minus the optimum of (15), half that of (13)
with the same C, and (14) has a different minimizer unless C = 1. Eq. (15) is canonical (SPEC
§2.4). See the :doc:`mLODM page </mlodm>`.
"""

import cvxpy as cp
import numpy as np

from mlsvm.data import ranking_pairs
from mlsvm.datasets import make_multilabel
from mlsvm.formulations.mlodm import MLODMProblem, cvxpy_dual, cvxpy_primal
from mlsvm.kernels import gram_factor, make_kernel
from mlsvm.solvers.cvxpy_tools import solve

data = make_multilabel(n_samples=25, n_features=4, n_labels=3, random_state=3)
gram = make_kernel("rbf", gamma=0.5)(data.X, data.X)
pairs = ranking_pairs(data.Y)
C, theta, mu = 4.0, 0.3, 0.5
problem = MLODMProblem(gram=gram, pairs=pairs, C=C, theta=theta, mu=mu)

eq15 = solve(cvxpy_primal(problem)[0])
eq18 = solve(cvxpy_dual(problem)[0])             # a minimisation; primal optimum = −eq18


def paper_form(halves: bool, with_C: bool):
    """Eq. (13)/(14) literally (``halves=False``), or eq. (15) (``halves=True``), in CVXPY."""
    factor = gram_factor(gram)
    V = cp.Variable((factor.shape[1], pairs.n_labels))
    xi, eps = cp.Variable(pairs.n_pairs), cp.Variable(pairs.n_pairs)
    margins = pairs.gather_matrix("F") @ cp.vec(factor @ V, order="F")
    loss = cp.sum(cp.multiply(pairs.weight, cp.square(xi) + mu * cp.square(eps)))
    scale = 0.5 if halves else 1.0
    objective = scale * cp.sum_squares(V) + scale * (C if with_C else 1.0) * loss
    value = solve(cp.Problem(cp.Minimize(objective), [margins >= 1 - theta - xi, margins <= 1 + theta + eps]))
    return value, factor @ V.value


value13, scores13 = paper_form(halves=False, with_C=True)
value14, scores14 = paper_form(halves=False, with_C=False)
value15, scores15 = paper_form(halves=True, with_C=True)
print(f"eq. (15) optimum (mlsvm's CVXPY primal)     {eq15:.10f}")
print(f"−(eq. 18 minimum) (mlsvm's CVXPY dual)      {-eq18:.10f}")
print(f"eq. (13) as printed, same C, μ-weighted     {value13:.10f}  = {value13 / eq15:.6f} × eq. (15)")
print(f"eq. (14) as printed (no ½, no C)            {value14:.10f}")
print(f"scores of (13) vs (15): max difference      {np.abs(scores13 - scores15).max():.1e}  (same minimizer)")
print(f"scores of (14) vs (15): max difference      {np.abs(scores14 - scores15).max():.1e}  (C = {C} is lost)")
