"""How other implementations' constants and outputs map onto mlsvm's (SPEC §2), with converters
whose output :func:`mlsvm.testing.certify` takes. Each mapping is derived in docs/testing.md and
tested (tests/test_conventions.py) by certifying the other code's answer.

* **LIBLINEAR / scikit-learn's LinearSVC, Matrix-SVM (hinge, linear kernel, no A):** Matrix-SVM
  is q independent binary SVMs with a *regularized* bias, ``½(‖w_k‖² + b_k²) + C Σ_i hinge``:
  exactly LIBLINEAR's L2-regularized hinge SVM with the bias as a feature of value 1
  (``LinearSVC(loss="hinge", C=C, fit_intercept=True, intercept_scaling=1)``), same C, one model per
  label. :func:`from_linear_svc` turns the per-label models into ``{"W", "b"}``.
* **LIBSVM / scikit-learn's SVC, Rank-SVM with Q = 2 and one label per instance:** every
  instance gives one pair, weight 1; with ``v = w_0 − w_1`` (and ``w_0 + w_1 = 0`` at the optimum)
  Rank-SVM's ``½(‖w_0‖² + ‖w_1‖²) + C Σ ξ`` is ``½ · (½‖v‖² + 2C Σ ξ)``: the binary C-SVM on
  ``y_i = +1`` iff label 0 is relevant, with ``C_svm = 2C``, ``v = w_svm``, ``b_0 − b_1 = b_svm``
  (``b_0 + b_1 = 0``), and pair multipliers ``α = α_svm / 2``. :func:`rank_svm_from_svc`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["matrix_svm_linear_svc_parameters", "from_linear_svc", "rank_svm_svc_parameters",
           "rank_svm_from_svc"]


def matrix_svm_linear_svc_parameters(C: float) -> dict:
    """The ``LinearSVC`` parameters whose per-label solutions are Matrix-SVM's at ``C``."""
    return dict(C=C, loss="hinge", fit_intercept=True, intercept_scaling=1.0)


def from_linear_svc(models) -> dict:
    """``{"W": (d, q), "b": (q,)}`` from one fitted ``LinearSVC`` per label (a list, or a fitted
    ``OneVsRestClassifier`` / ``MultiOutputClassifier`` of them). LIBLINEAR reports
    ``intercept_ = intercept_scaling · b``; with the mapping above ``intercept_scaling = 1``.
    Raises ``ValueError`` when a model was fitted with other constants (its optimum is another
    problem's)."""
    models = list(getattr(models, "estimators_", models))
    weights, biases = [], []
    for k, model in enumerate(models):
        params = model.get_params()
        if params["loss"] != "hinge" or not params["fit_intercept"] or params["intercept_scaling"] != 1:
            raise ValueError(f"models[{k}] is not Matrix-SVM's problem: needs loss='hinge', "
                             f"fit_intercept=True, intercept_scaling=1 (got loss={params['loss']!r}, "
                             f"fit_intercept={params['fit_intercept']}, "
                             f"intercept_scaling={params['intercept_scaling']})")
        weights.append(np.ravel(model.coef_))
        biases.append(float(np.ravel(model.intercept_)[0]))
    return {"W": np.column_stack(weights), "b": np.asarray(biases)}


def rank_svm_svc_parameters(C: float) -> dict:
    """The ``SVC`` parameters whose solution is Rank-SVM's at ``C`` (Q = 2, one label per instance)."""
    return dict(C=2.0 * C)


def rank_svm_from_svc(svc, Y) -> dict:
    """``{"beta", "b", "alpha"}`` of Rank-SVM (Q = 2) from an ``SVC`` fitted on ``Y[:, 0]``
    (label 0 relevant ↔ class 1) with ``C = 2C``. Every row of ``Y`` must have exactly one label
    (then every instance gives one ranking pair, in instance order)."""
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] != 2 or not np.all(Y.sum(axis=1) == 1):
        raise ValueError("Y must be an (n, 2) indicator with exactly one label per row: Rank-SVM with "
                         "Q = 2 is the binary C-SVM only then")
    if list(svc.classes_) != [0, 1]:
        raise ValueError(f"svc must be fitted on Y[:, 0] (classes [0, 1]); got classes {list(svc.classes_)}")
    n = Y.shape[0]
    signed_alpha = np.zeros(n)
    signed_alpha[svc.support_] = np.ravel(svc.dual_coef_)       # y_i α_i, y = +1 iff label 0 relevant
    beta = np.column_stack([signed_alpha / 2.0, -signed_alpha / 2.0])
    b_svm = float(np.ravel(svc.intercept_)[0])
    return {"beta": beta, "b": np.array([b_svm / 2.0, -b_svm / 2.0]), "alpha": np.abs(signed_alpha) / 2.0}
