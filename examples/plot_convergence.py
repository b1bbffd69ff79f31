"""
A paper's algorithm against the exact solver
============================================

Rank-SVM's Frank–Wolfe algorithm (Elisseeff & Weston, Fig. 11) converges sublinearly but
certifies itself: its gap :math:`\\langle\\nabla, \\alpha - \\alpha_{LP}\\rangle` equals the
duality gap at the LP's biases. The exact solver reaches the
optimum to round-off (``solver="fast"`` is the proximal ALM for the RBF kernel). Both run on 120 emotions instances; the curves are the
``history`` of each ``fit_report_``.
"""

import warnings

import matplotlib.pyplot as plt
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm import RankSVM
from mlsvm.datasets import load_emotions

emotions = load_emotions()
X, Y = MinMaxScaler().fit_transform(emotions.X[:120]), emotions.Y[:120]

exact = RankSVM(C=1.0, kernel="rbf", gamma=0.5, solver="fast").fit(X, Y).fit_report_
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)     # a fixed budget on purpose
    frank_wolfe = RankSVM(C=1.0, kernel="rbf", gamma=0.5, solver="frank-wolfe", tol=1e-8, max_iter=150).fit(X, Y).fit_report_

optimum = exact.primal_objective
print(f"exact ({exact.solver}): objective {optimum:.10f}, relative gap {exact.relative_gap:.1e}, "
      f"{exact.n_iter} iterations, {exact.solve_time:.2f} s")
print(f"Frank-Wolfe after {frank_wolfe.n_iter} iterations: objective {frank_wolfe.primal_objective:.10f}, "
      f"certified relative gap {frank_wolfe.relative_gap:.1e}")
print(f"its true distance to the optimum {frank_wolfe.primal_objective - optimum:.3e} "
      f"<= its certified gap {frank_wolfe.duality_gap:.3e}: {frank_wolfe.primal_objective - optimum <= frank_wolfe.duality_gap}")

# Frank–Wolfe records its dual objective and its gap per iteration (primal = dual + gap); the
# exact solver (a proximal ALM: its iterates satisfy the equalities only in the limit, so its gap
# may be negative on the way) records its relative gap per outer iteration.
import numpy as np

history = frank_wolfe.history
dual = np.array(history["dual_objective"])
primal = dual + np.array(history["fw_gap"])
fw_relative = (primal - dual) / np.maximum(1.0, np.maximum(np.abs(primal), np.abs(dual)))

# An iteration is not the same work for both: a Frank–Wolfe iteration is one LP and one Hessian
# product; an ALM outer iteration runs a projected-Newton subproblem of many products.
print(f"ALM Hessian products in total: {exact.history['n_matvec'][-1]}; "
      f"Frank-Wolfe: {frank_wolfe.n_iter} LPs and products")

figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
iterations = np.arange(1, len(dual) + 1)
left.plot(iterations, primal, label="Frank–Wolfe primal (at the LP biases)")
left.plot(iterations, dual, label="Frank–Wolfe dual")
left.axhline(optimum, color="k", linestyle="--", linewidth=1, label="optimum (exact solver)")
left.set_ylim(optimum - 5, optimum + 5)
left.set_xlabel("iteration")
left.set_ylabel("objective")
left.legend(fontsize=8)
right.semilogy(iterations, fw_relative, label="Frank–Wolfe (Fig. 11)")
right.semilogy(np.arange(1, exact.n_iter + 1), np.abs(exact.history["relative_gap"]), marker="o",
               label=f"exact ({exact.solver})")
right.axhline(1e-6, color="k", linestyle="--", linewidth=1, label="bar 1e-6")
right.set_xlabel("iteration")
right.set_ylabel("|relative duality gap|")
right.legend(fontsize=8)
figure.suptitle("Rank-SVM on emotions (120 instances, RBF kernel)")
figure.tight_layout()
