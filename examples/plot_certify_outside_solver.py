"""
Certify an outside solver: LIBLINEAR and LIBSVM as mlsvm optima
===============================================================

:mod:`mlsvm.testing` grades a solution computed by *any* code against mlsvm's formulation of the
same problem. Two exact equivalences make scikit-learn's solvers a test case:

* ``LinearSVC(loss="hinge", intercept_scaling=1)`` per label is Matrix-SVM with the linear kernel
  and the same C (LIBLINEAR regularizes its bias exactly as Matrix-SVM does);
* ``SVC`` with ``C = 2C`` on two labels with one label per instance is Rank-SVM with Q = 2;
* ``SVC`` with ``C = β/2`` is One-vs-None with K = 2, hard w and hard b (the paper's §3.5);
* ``LinearSVC(loss="squared_hinge", fit_intercept=False)`` with ``C = 1/λ`` per label is SM3L with
  ``R = I``.

The converters of :mod:`mlsvm.testing.conventions` map their outputs onto our names; a solver
stopped too early fails, and the verdict says by how much.
"""

import numpy as np
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC, LinearSVC

from mlsvm.datasets import load_emotions
from mlsvm.testing import certify
from mlsvm.testing.conventions import (from_linear_svc, matrix_svm_linear_svc_parameters, ovn_from_svc,
                                      ovn_svc_parameters, rank_svm_from_svc, rank_svm_svc_parameters,
                                      sm3l_from_linear_svc, sm3l_linear_svc_parameters)

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

# %%
# LIBSVM as One-vs-None with two classes: ``C = β/2``, ``f_1 = f_svm``, ``f_2 = −f_svm``. The converter
# also maps LIBSVM's multipliers onto OvN's (``λ = 2α``), so the KKT residuals are graded too.
beta = 2.0
ovn = dict(w_constraint="hard", b_constraint="hard", kernel="rbf", gamma=0.5, beta=beta)
svc = SVC(kernel="rbf", gamma=0.5, tol=1e-10, **ovn_svc_parameters(beta)).fit(X, y)
print(certify("OvNSVM", X, two_labels, ovn_from_svc(svc, two_labels), **ovn))

# %%
# The same SVC with ``C = β`` (a wrong reading of the constants) is another problem's optimum.
wrong = SVC(kernel="rbf", gamma=0.5, tol=1e-10, C=beta).fit(X, y)
print(certify("OvNSVM", X, two_labels, ovn_from_svc(wrong, two_labels), **ovn))

# %%
# LIBLINEAR's squared hinge without intercept, one model per label at ``C = 1/λ``, as SM3L (R = I).
lam = 0.5
sm3l = [LinearSVC(**params, tol=1e-12, max_iter=1_000_000).fit(X, y_k)
        for params, y_k in zip(sm3l_linear_svc_parameters(lam, Y.shape[1]), Y.T)]
print(certify("SM3L", X, Y, sm3l_from_linear_svc(sm3l), kernel="linear", lam=lam))
