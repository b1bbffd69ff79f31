"""
Certify an outside solver: LIBLINEAR and LIBSVM as mlsvm optima
===============================================================

:mod:`mlsvm.testing` grades a solution computed by *any* code against mlsvm's formulation of the
same problem. Two exact equivalences make scikit-learn's solvers a test case:

* ``LinearSVC(loss="hinge", intercept_scaling=1)`` per label is Matrix-SVM with the linear kernel
  and the same C (LIBLINEAR regularizes its bias exactly as Matrix-SVM does);
* ``SVC`` with ``C = 2C`` on two labels with one label per instance is Rank-SVM with Q = 2.

The converters of :mod:`mlsvm.testing.conventions` map their outputs onto our names; a solver
stopped too early fails, and the verdict says by how much.
"""

import numpy as np
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC, LinearSVC

from mlsvm.datasets import load_emotions
from mlsvm.testing import certify
from mlsvm.testing.conventions import (from_linear_svc, matrix_svm_linear_svc_parameters, rank_svm_from_svc,
                                      rank_svm_svc_parameters)

emotions = load_emotions()
X, Y = MinMaxScaler().fit_transform(emotions.X[:200]), emotions.Y[:200]
C = 1.0

# %%
# LIBLINEAR, one model per label, at a tight tolerance: certified.
per_label = [LinearSVC(**matrix_svm_linear_svc_parameters(C), tol=1e-10, max_iter=1_000_000).fit(X, y)
             for y in Y.T]
print(certify("MatrixSVM", X, Y, from_linear_svc(per_label), kernel="linear", C=C))

# %%
# The same solver stopped early (``tol=0.1``): the verdict names the suboptimality.
early = [LinearSVC(**matrix_svm_linear_svc_parameters(C), tol=1e-1).fit(X, y) for y in Y.T]
print(certify("MatrixSVM", X, Y, from_linear_svc(early), kernel="linear", C=C))

# %%
# LIBSVM as Rank-SVM with two labels (each instance has exactly one: label 0 or not).
y = Y[:, 0]
two_labels = np.column_stack([y, 1 - y])
svc = SVC(kernel="rbf", gamma=0.5, tol=1e-10, **rank_svm_svc_parameters(C)).fit(X, y)
solution = rank_svm_from_svc(svc, two_labels)
print(certify("RankSVM", X, two_labels, {"beta": solution["beta"], "b": solution["b"]},
              kernel="rbf", gamma=0.5, C=C))
