"""
One-vs-None and SMSVM decision regions
======================================

Two 2-D problems drawn with :func:`mlsvm.plot.plot_decision_regions`: filled regions are the
argmax class, the solid line of label :math:`k` is :math:`f_k(x) = 0` and the dashed one
:math:`f_k(x) = 1`.

* **OvN** (multilabel): each class is fitted only on its members; a point is given every label
  with :math:`f_k(x) \\ge 1`, so it can receive a label *set* never seen in training (the paper's
  Table 3). Here the toy set of Table 3 is rebuilt: class 1 alone on the right, both labels up
  left, never class 2 alone.
* **SMSVM** (multiclass, three blobs): the scores use only the ``d_max`` greedily chosen basis
  points (circled), the sparsity that makes inference cheap.
"""

import matplotlib.pyplot as plt
import numpy as np

from mlsvm import SMSVM, OvNSVM
from mlsvm.datasets import make_multiclass
from mlsvm.plot import plot_decision_regions

# The training set of tests/test_ovn_estimator.py (the paper gives only the test points).
X = np.array([[3, 1], [0, 3], [2, 2], [3, 3], [4, 2], [-2, 4], [1, 5], [-1, 5]], float)
Y = np.array([[1, 0]] * 5 + [[1, 1]] * 3)
ovn = OvNSVM(alpha=0.0, beta=1.0, w_constraint="soft", b_constraint="hard").fit(X, Y)
table3 = np.array([[-4, 3], [-5, 2], [-3, 3], [-2, 4], [0, 3], [1, 5]], float)
for point, labels in zip(table3, ovn.predict(table3)):
    print(f"OvN at {point}: label set {labels.tolist()}")

fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
plot_decision_regions(ovn, X, Y, ax=axes[0])
axes[0].set_title("OvN, soft w / hard b, linear")

data = make_multiclass(n_samples=90, n_features=2, n_classes=3, random_state=1)
X_mc, y_mc = data if isinstance(data, tuple) else (data.X, data.Y)
smsvm = SMSVM(lam=0.1, kernel="rbf", gamma=1.0, d_max=8, random_state=0).fit(X_mc, y_mc)
plot_decision_regions(smsvm, X_mc, y_mc, ax=axes[1])
basis = X_mc[smsvm.basis_indices_]
axes[1].scatter(basis[:, 0], basis[:, 1], s=160, facecolors="none", edgecolors="k", linewidths=1.5)
axes[1].set_title(f"SMSVM, RBF, |J| = {smsvm.n_basis_} basis points")
print(f"SMSVM training accuracy {np.mean(smsvm.predict(X_mc) == y_mc):.3f} with {smsvm.n_basis_} basis points, "
      f"stop rule: {smsvm.fit_report_.stop_rule}")
fig.tight_layout()
