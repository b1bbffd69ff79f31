"""
Matrix-SVM eq. (11): the missing transpose
==========================================

For the label-correlated Matrix-SVM (MLRL, eq. 10: :math:`Y_s\\circ(\\bar X W A) + Q \\ge 1`) the
paper prints the primal point of a dual solution as :math:`W = \\bar X^\\top (\\alpha\\circ Y_s) A`.
The Lagrangian is stationary in :math:`W` at

.. math:: W = \\bar X^\\top (\\alpha \\circ Y_s) A^\\top ,

the same only for a symmetric :math:`A`. Below: a non-symmetric :math:`A`, the MLRL dual solved
by CVXPY, and the primal objective at both candidates against the primal optimum.
Derivation: :ref:`derivation-mlrl`.
"""

import numpy as np

from mlsvm.formulations.matrix_svm import MatrixSVMProblem, cvxpy_dual, cvxpy_primal, primal_objective
from mlsvm.solvers.cvxpy_tools import solve

rng = np.random.default_rng(1)
n, d, q = 20, 3, 3
X = rng.normal(size=(n, d))
Y = (rng.random((n, q)) < 0.5).astype(int)
A = np.array([[1.0, 0.6, 0.0],
              [0.0, 1.0, 0.3],
              [0.2, 0.0, 1.0]])                       # not symmetric
problem = MatrixSVMProblem(gram=X @ X.T, Y=Y, C=1.0, correlation=A)

primal_optimum = solve(cvxpy_primal(problem)[0])
cvx_dual, variables = cvxpy_dual(problem)
dual_optimum = -solve(cvx_dual)
B = variables["alpha"].value * problem.signed                      # α ∘ Ys

# The primal objective at W = X̄ᵀΘ for the two choices of Θ.
correct = primal_objective(problem, B @ A.T)
printed = primal_objective(problem, B @ A)
print(f"primal optimum (CVXPY)                      {primal_optimum:.8f}")
print(f"dual optimum (CVXPY)                        {dual_optimum:.8f}")
print(f"primal at W = X̄ᵀ(α∘Ys)Aᵀ  (derived)         {correct:.8f}")
print(f"primal at W = X̄ᵀ(α∘Ys)A   (eq. 11 printed)  {printed:.8f}   (+{printed - primal_optimum:.3g})")
assert abs(correct - primal_optimum) <= 1e-6 * max(1, primal_optimum)
assert printed > primal_optimum + 1e-3
