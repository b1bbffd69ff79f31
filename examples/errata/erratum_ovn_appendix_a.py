"""
One-vs-None Appendix A: the dropped ½
=====================================

Shajari & Rangarajan's eq. (5) regularizes with :math:`\\tfrac12\\operatorname{tr}(WMW^\\top)`,
:math:`M = (1-\\alpha)I + \\alpha\\mathbf 1\\mathbf 1^\\top`, i.e.
:math:`\\tfrac12\\sum_k\\|w_k\\|^2 + \\alpha\\sum_{k<l}w_k^\\top w_l`. Appendix A writes the same
objective without the ½: :math:`\\sum_k\\|w_k\\|^2 + \\alpha\\sum_{k<l}w_k^\\top w_l + \\beta\\sum\\xi`.
That is twice the canonical objective at :math:`(\\alpha/2, \\beta/2)`:

.. math:: \\text{App-A}(\\alpha, \\beta) = 2\\,\\text{canonical}(\\alpha/2, \\beta/2),

so the two have the same minimizer only after halving α and β, and the paper's Fig. 1 range
":math:`\\alpha\\in[1, 2]`" is canonical :math:`\\alpha \\in [\\tfrac12, 1)` (canonical α ≥ 1 makes
:math:`M` indefinite and the problem unbounded). See the :doc:`OvN page </ovn>`.
"""

import cvxpy as cp
import numpy as np

from mlsvm import OvNSVM
from mlsvm.datasets import make_multilabel
from mlsvm.solvers.cvxpy_tools import solve

data = make_multilabel(n_samples=40, n_features=3, n_labels=3, random_state=2)
X, Y = data.X, data.Y
K = Y.shape[1]
alpha_paper, beta_paper = 1.5, 2.0                     # inside the paper's Fig. 1 range α ∈ [1, 2]

# Appendix A's objective, literally (hard b: Σ_k b_k = 0), in CVXPY.
W, b = cp.Variable((X.shape[1], K)), cp.Variable(K)
scores = X @ W + np.ones((len(X), 1)) @ cp.reshape(b, (1, K), order="C")
hinge = cp.sum(cp.multiply(Y, cp.pos(1 - scores)))      # members of each class only
# Σ_k ‖w_k‖² + α Σ_{k<l} w_kᵀw_l = tr(W D Wᵀ) with D = I + (α/2)(11ᵀ − I); CVXPY needs it as ‖W R‖²,
# D = R Rᵀ (D is positive definite for the paper's α < 2 with K = 3).
D = np.eye(K) + alpha_paper / 2 * (np.ones((K, K)) - np.eye(K))
appendix_a = cp.sum_squares(W @ np.linalg.cholesky(D)) + beta_paper * hinge
value_a = solve(cp.Problem(cp.Minimize(appendix_a), [cp.sum(b) == 0]))

# The canonical model (eq. 5 with ½) at (α/2, β/2), by the exact solver.
model = OvNSVM(alpha=alpha_paper / 2, beta=beta_paper / 2, kernel="linear").fit(X, Y)
value_c = model.fit_report_.primal_objective
print(f"App. A objective at (α, β) = ({alpha_paper}, {beta_paper}), optimum    {value_a:.10f}")
print(f"canonical objective at (α/2, β/2) = ({alpha_paper / 2}, {beta_paper / 2}), optimum {value_c:.10f}")
print(f"ratio                                                   {value_a / value_c:.10f}")
assert abs(value_a / value_c - 2.0) < 1e-6

# %%
# The paper's α is twice the canonical one: canonical α = 1.5 is not a convex problem.
try:
    OvNSVM(alpha=alpha_paper, beta=beta_paper).fit(X, Y)
except ValueError as error:
    print("canonical alpha = 1.5 is refused:", str(error).split(". ")[0])
print("eigenvalues of M at canonical α = 0.75:", np.linalg.eigvalsh(0.25 * np.eye(K) + 0.75 * np.ones((K, K))).round(3))
print("eigenvalues of M at canonical α = 1.5: ", np.linalg.eigvalsh(-0.5 * np.eye(K) + 1.5 * np.ones((K, K))).round(3))
