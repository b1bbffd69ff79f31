"""
Matrix-SVM eq. (13): ‖Y∘Z‖² is not ‖Y‖²‖Z‖²
=============================================

Jain & Rastogi derive the least-squares Matrix-SVM (eq. 14) from eq. (12) with the step

.. math:: \\|Y \\circ (Y - XW)\\|_F^2 = \\|Y\\|_F^2 \\, \\|Y - XW\\|_F^2,

and then drop the factor :math:`\\|Y\\|_F^2` with "≃". The step is false: it multiplies the loss
by :math:`\\|Y\\|_F^2 = nq`. The truth is stronger and needs no approximation: every entry of
:math:`Y_s = 2Y - 1` is :math:`\\pm 1`, so :math:`\\|Y_s \\circ Z\\|_F = \\|Z\\|_F` exactly, and
eq. (14) *is* eq. (12) with the same :math:`C`: a ridge regression on the augmented features,
:math:`W = (\\bar X^\\top \\bar X + I/(2C))^{-1}\\bar X^\\top Y_s`.
Discussed on the :doc:`Matrix-SVM page </matrix_svm>`.
"""

# %%
# The identity, on random numbers
# -------------------------------
import numpy as np

rng = np.random.default_rng(0)
n, d, q = 12, 4, 3
Ys = 2.0 * rng.integers(0, 2, size=(n, q)) - 1.0          # ±1 labels
X_bar = np.hstack([rng.normal(size=(n, d)), np.ones((n, 1))])
W = rng.normal(size=(d + 1, q))
Z = Ys - X_bar @ W

hadamard = np.sum((Ys * Z) ** 2)
print(f"‖Ys∘Z‖²_F              = {hadamard:.10f}")
print(f"‖Z‖²_F  (the truth)     = {np.sum(Z ** 2):.10f}")
print(f"‖Ys‖²_F ‖Z‖²_F (eq. 13) = {np.sum(Ys ** 2) * np.sum(Z ** 2):.10f}   (= nq = {n * q} times too large)")
assert np.isclose(hadamard, np.sum(Z ** 2), rtol=1e-14)

# %%
# Consequence: eq. (12) and the closed form (14) have the same optimum with the same C
# ------------------------------------------------------------------------------------
# The constrained least-squares problem (12), solved by CVXPY, against the ridge closed form.
import cvxpy as cp

from mlsvm.formulations.matrix_svm import MatrixSVMProblem, cvxpy_primal
from mlsvm.solvers.cvxpy_tools import solve

C = 0.7
Y = (Ys > 0).astype(int)
problem = MatrixSVMProblem(gram=X_bar[:, :d] @ X_bar[:, :d].T, Y=Y, C=C, loss="squared")
cvx, variables = cvxpy_primal(problem)
eq12 = solve(cvx)
W_ridge = np.linalg.solve(X_bar.T @ X_bar + np.eye(d + 1) / (2 * C), X_bar.T @ Ys)
eq14 = 0.5 * np.sum(W_ridge ** 2) + C * np.sum((Ys - X_bar @ W_ridge) ** 2)
print(f"eq. (12) optimum, CVXPY            {eq12:.10f}")
print(f"eq. (14) ridge closed form, same C {eq14:.10f}")
print(f"relative difference                {abs(eq12 - eq14) / max(1, abs(eq12)):.1e}")
