"""
Rank-SVM Fig. 11: the Frank–Wolfe update that leaves the feasible set
=====================================================================

Step 8 of Elisseeff & Weston's Fig. 11 prints the update :math:`\\alpha \\leftarrow \\alpha +
\\lambda\\,\\alpha^{new}`, where :math:`\\alpha^{new}` is the vertex of the linear program
(Problem 12). Appendix A.2 (steps 3–4) describes the Frank–Wolfe step
:math:`\\alpha + \\lambda(\\alpha^{new} - \\alpha)`, a convex combination of two feasible points.
The printed update is not: the equalities are linear and survive, but the box
:math:`0 \\le \\alpha_{ikl} \\le C/(|Y_i||\\bar Y_i|)` does not. See the
:doc:`Rank-SVM page </rank_svm>`.
"""

import numpy as np

from mlsvm.datasets import make_multilabel
from mlsvm.formulations.rank_svm import dual_gradient, linear_minimizer, make_problem
from mlsvm.kernels import make_kernel

data = make_multilabel(n_samples=30, n_features=4, n_labels=3, random_state=0)
problem = make_problem(make_kernel("rbf", gamma=0.5)(data.X, data.X), data.Y, C=1.0)
upper = problem.upper

# A feasible point: five Frank–Wolfe steps α ← α + λ_t(α_LP − α), λ_t = 2/(t + 2), from α = 0,
# each α_LP the exact LP vertex (Problem 12) at the gradient of the (minimised) dual.
alpha = np.zeros(problem.n_pairs)
for t in range(5):
    vertex, _ = linear_minimizer(problem, dual_gradient(problem, alpha))
    alpha = alpha + 2.0 / (t + 2.0) * (vertex - alpha)
vertex, _ = linear_minimizer(problem, dual_gradient(problem, alpha))


def violation(point):
    """Largest violation of the box and of the Q equalities Σ_i β_ki = 0."""
    box = max(float(np.max(point - upper)), float(np.max(-point)), 0.0) + 0.0
    return box, np.abs(problem.equality @ point).max()


for step in (0.25, 0.5, 1.0):
    printed = alpha + step * vertex
    convex = alpha + step * (vertex - alpha)
    (box_p, eq_p), (box_c, eq_c) = violation(printed), violation(convex)
    print(f"λ = {step:4.2f}: Fig. 11 step 8  box violation {box_p:.3e}  equality {eq_p:.1e} | "
          f"α + λ(α_LP − α)  box {box_c:.1e}  equality {eq_c:.1e}")
assert violation(alpha + 0.5 * vertex)[0] > 0 and violation(alpha + 0.5 * (vertex - alpha))[0] <= 1e-15
