"""How other implementations' constants and outputs map onto mlsvm's (SPEC §2), with converters
whose output :func:`mlsvm.testing.certify` takes. Each mapping is derived in docs/testing.md and
tested (tests/test_conventions.py) by certifying the other code's answer.

* **LIBLINEAR / scikit-learn's LinearSVC, Matrix-SVM (hinge, linear kernel, no A):** Matrix-SVM
  is q independent binary SVMs with a *regularized* bias, ``½(‖w_k‖² + b_k²) + C Σ_i hinge``:
  exactly LIBLINEAR's L2-regularized hinge SVM with the bias as a feature of value 1
  (``LinearSVC(loss="hinge", C=C, fit_intercept=True, intercept_scaling=1)``), same C, one model per
  label. :func:`from_linear_svc` turns the per-label models into ``{"W", "b"}``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["matrix_svm_linear_svc_parameters", "from_linear_svc"]


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
