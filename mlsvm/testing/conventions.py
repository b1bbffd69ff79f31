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
* **LIBSVM / SVC, One-vs-None with K = 2, hard w, hard b (paper §3.5):** every instance in exactly
  one class; ``w_1 = −w_2 = w``, ``b_1 = −b_2 = b`` (the hard constraints), so
  ``½(‖w_1‖² + ‖w_2‖²) + β Σ ξ = ‖w‖² + β Σ ξ = 2 · (½‖w‖² + (β/2) Σ ξ)``: the binary C-SVM with
  ``C = β/2``, ``f_1 = f_svm``, ``f_2 = −f_svm``. The dual: ``W = U P`` with the centring matrix
  ``P`` gives ``w = (u_1 − u_2)/2``, so the membership multipliers are ``λ = 2 α_svm`` (box
  ``[0, β] = [0, 2C]``) and the common class mass ``ν = Σ_{y=+1} λ``. :func:`ovn_from_svc`.
* **LIBLINEAR / LinearSVC, SM3L with R = I (or diagonal):** no bias, squared hinge without ½:
  ``λ/2 Σ_r ‖w_r‖²/R_rr + Σ_i Σ_r max(0, 1 − y_ir f_r)² = Σ_r (λ/R_rr) · (½‖w_r‖² + (R_rr/λ) Σ_i …)``:
  per label LIBLINEAR's L2-regularized squared-hinge SVM without intercept at ``C_r = R_rr/λ``
  (``C = 1/λ`` for ``R = I``). A non-diagonal R couples the labels: no per-label solver solves it.
  The SM3L point is ``{"W": (d, q)}`` on the full basis (the linear kernel), or the coefficients
  over the training points that give the same scores (:func:`sm3l_from_linear_svc`).

Research codes of the papers (read, derived, and tested: docs/testing.md names the files):

* **Min-Ling Zhang's MATLAB Rank-SVM** (``RankSVM_train.m``; its Python port in WORC,
  ``WORC/classification/RankedSVM.py``): Frank–Wolfe on Problem 10 with the box
  ``0 ≤ α_ikl ≤ cost/(|Y_i||Ȳ_i|)`` and ``Σ_i β_ki = 0``: our problem at ``C = cost``, same pair
  order. ``Weights`` (Q × n') is ``βᵀ`` over the instances that have both relevant and irrelevant
  labels (the MATLAB code drops the others); ``Bias`` solves ``b_k − b_l = 1 − ⟨w_k − w_l, x_i⟩``
  over the free α's by least squares (minimum norm: ``Σ b = 0``). Targets are ``Q × n`` in ±1.
  :func:`rank_svm_from_zhang`.
* **LIBODM** (Teng Zhang & Zhi-Hua Zhou's optimal margin distribution machine, ``odm.cpp``):
  binary, no bias by default, ``½‖w‖² + λ/(m(1−θ)²) Σ_i [(1−θ − y_i wᵀx_i)₊² + μ (y_i wᵀx_i − 1−θ)₊²]``.
  mLODM with Q = 2 and one label per instance has one pair per instance of weight 1; with
  ``v = w_0 − w_1`` (``w_0 + w_1 = 0`` at the optimum) its objective is
  ``½ · (½‖v‖² + C Σ (ξ² + μ ε²))``: LIBODM at ``λ = C·m·(1−θ)²``, the same θ and μ, ``v = w``,
  ``w_0 = −w_1 = w/2``; its dual multipliers are twice ours. :func:`mlodm_from_libodm`.
"""

from __future__ import annotations

import numpy as np

from mlsvm.data import check_scalar
from mlsvm.formulations.mlodm import check_hyperparameters

__all__ = ["matrix_svm_linear_svc_parameters", "from_linear_svc", "rank_svm_svc_parameters",
           "rank_svm_from_svc", "ovn_svc_parameters", "ovn_from_svc", "sm3l_linear_svc_parameters",
           "sm3l_from_linear_svc", "rank_svm_from_zhang", "mlodm_libodm_parameters", "mlodm_from_libodm"]


def matrix_svm_linear_svc_parameters(C: float) -> dict:
    """The ``LinearSVC`` parameters whose per-label solutions are Matrix-SVM's at ``C``.

    Parameters
    ----------
    C : float
        Matrix-SVM's C (the same C for ``LinearSVC``).
    """
    check_scalar(C, "C", low=0.0, low_open=True)
    return dict(C=C, loss="hinge", fit_intercept=True, intercept_scaling=1.0)


def from_linear_svc(models) -> dict:
    """``{"W": (d, q), "b": (q,)}`` from one fitted ``LinearSVC`` per label (a list, or a fitted
    ``OneVsRestClassifier`` / ``MultiOutputClassifier`` of them). LIBLINEAR reports
    ``intercept_ = intercept_scaling · b``; with the mapping above ``intercept_scaling = 1``.
    Raises ``ValueError`` when a model was fitted with other constants (its optimum is another
    problem's).

    Parameters
    ----------
    models : list of LinearSVC, OneVsRestClassifier or MultiOutputClassifier
        One fitted ``LinearSVC`` per label, or a fitted wrapper of them.
    """
    models = _fitted_models(models, "LinearSVC", ("coef_", "intercept_"))
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


def _fitted_models(models, kind: str, attributes: tuple, name: str = "models") -> list:
    """``models`` as a list (a wrapper's ``estimators_``), each with the fitted ``attributes``."""
    if hasattr(models, "estimators_"):
        models = list(models.estimators_)
    elif isinstance(models, (list, tuple)):
        models = list(models)
    else:
        raise TypeError(f"{name} must be a list of fitted {kind} models, one per label, or a fitted "
                        f"OneVsRestClassifier / MultiOutputClassifier of them; got {type(models).__name__}")
    for k, model in enumerate(models):
        if not all(hasattr(model, attribute) for attribute in attributes):
            where = name if name == "svc" else f"{name}[{k}]"
            raise TypeError(f"{where} must be a fitted {kind} (with {', '.join(attributes)}); "
                            f"got {type(model).__name__}")
    return models


def _binary_svc(svc, Y, which: str):
    """``(Y, y∘α, b)`` of an ``SVC`` fitted on ``Y[:, 0]`` (``y = +1`` iff the row is in label 0),
    ``y∘α`` over all training points (0 off the support); ``Y`` must have exactly ``which``."""
    _fitted_models([svc], "SVC", ("classes_", "support_", "dual_coef_", "intercept_"), name="svc")
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] != 2 or not np.all(Y.sum(axis=1) == 1):
        raise ValueError(f"Y must be an (n, 2) indicator with exactly {which} is the binary C-SVM only then")
    if list(svc.classes_) != [0, 1]:
        raise ValueError(f"svc must be fitted on Y[:, 0] (classes [0, 1]); got classes {list(svc.classes_)}")
    signed_alpha = np.zeros(Y.shape[0])
    signed_alpha[svc.support_] = np.ravel(svc.dual_coef_)
    return Y, signed_alpha, float(np.ravel(svc.intercept_)[0])


def rank_svm_svc_parameters(C: float) -> dict:
    """The ``SVC`` parameters whose solution is Rank-SVM's at ``C`` (Q = 2, one label per instance).

    Parameters
    ----------
    C : float
        Rank-SVM's C (``SVC`` gets ``2C``).
    """
    check_scalar(C, "C", low=0.0, low_open=True)
    return dict(C=2.0 * C)


def rank_svm_from_svc(svc, Y) -> dict:
    """``{"beta", "b", "alpha"}`` of Rank-SVM (Q = 2) from an ``SVC`` fitted on ``Y[:, 0]``
    (label 0 relevant ↔ class 1) with ``C = 2C``. Every row of ``Y`` must have exactly one label
    (then every instance gives one ranking pair, in instance order).

    Parameters
    ----------
    svc : SVC
        A ``SVC`` fitted on ``Y[:, 0]`` with :func:`rank_svm_svc_parameters`.
    Y : array-like of shape (n, 2)
        The label matrix, exactly one relevant label per row.
    """
    Y, signed_alpha, b_svm = _binary_svc(svc, Y, "one label per row: Rank-SVM with Q = 2")
    beta = np.column_stack([signed_alpha / 2.0, -signed_alpha / 2.0])
    return {"beta": beta, "b": np.array([b_svm / 2.0, -b_svm / 2.0]), "alpha": np.abs(signed_alpha) / 2.0}




def ovn_svc_parameters(beta: float) -> dict:
    """The ``SVC`` parameters whose solution is One-vs-None's (K = 2, hard w, hard b) at ``beta``.

    Parameters
    ----------
    beta : float
        OvN's hinge weight β (``SVC`` gets ``C = β/2``).
    """
    check_scalar(beta, "beta", low=0.0, low_open=True)
    return dict(C=0.5 * beta)


def ovn_from_svc(svc, Y) -> dict:
    """``{"coef", "b", "Lam", "nu"}`` of One-vs-None (K = 2, ``w_constraint="hard"``,
    ``b_constraint="hard"``) from an ``SVC`` fitted on ``Y[:, 0]`` (class 1 = member of class 0)
    with :func:`ovn_svc_parameters`. Every row of ``Y`` must be in exactly one of the two classes.
    ``coef`` (n, 2) holds ``w_k = Σ_i coef_ik φ(x_i)``: ``coef[:, 0] = −coef[:, 1] = y∘α_svm``;
    ``b = (b_svm, −b_svm)``; ``Lam`` the membership multipliers ``2 α_svm`` in the column of the
    instance's class; ``nu`` their common class mass.

    Parameters
    ----------
    svc : SVC
        A ``SVC`` fitted on ``Y[:, 0]`` with ``C = β/2``.
    Y : array-like of shape (n, 2)
        The class memberships, exactly one class per row.
    """
    Y, signed_alpha, b_svm = _binary_svc(svc, Y, "one class per row: One-vs-None with K = 2")
    Lam = 2.0 * np.abs(signed_alpha)[:, None] * Y
    return {"coef": np.column_stack([signed_alpha, -signed_alpha]), "b": np.array([b_svm, -b_svm]),
            "Lam": Lam, "nu": float(Lam[:, 0].sum())}


def sm3l_linear_svc_parameters(lam: float, R=None) -> list:
    """The ``LinearSVC`` parameters, one dict per label, whose solutions are SM3L's at ``lam`` with a
    diagonal ``R`` (identity by default): ``C_r = R_rr / λ``, squared hinge, no intercept.

    Parameters
    ----------
    lam : float
        SM3L's λ > 0.
    R : array of shape (q, q), 1-D array of its diagonal, int q, or None
        SM3L's label-correlation matrix; it must be diagonal (per-label solvers cannot couple
        labels). An int q, or None, means ``R = I`` (None: a single label; give q for more).
    """
    check_scalar(lam, "lam", low=0.0, low_open=True)
    if R is None or isinstance(R, (int, np.integer)):
        diagonal = np.ones(1 if R is None else int(R))
    else:
        R = np.asarray(R, dtype=np.float64)
        if R.ndim == 2 and np.any(R != np.diag(np.diag(R))):
            raise ValueError("R must be diagonal: a label-correlation matrix with off-diagonal entries couples "
                             "the labels, and no per-label LinearSVC solves SM3L then")
        diagonal = np.diag(R) if R.ndim == 2 else R
    if not np.all(diagonal > 0):
        raise ValueError(f"R's diagonal must be positive; got {diagonal}")
    return [dict(C=float(r) / lam, loss="squared_hinge", penalty="l2", fit_intercept=False) for r in diagonal]


def sm3l_from_linear_svc(models, X=None) -> dict:
    """SM3L's point from one fitted ``LinearSVC`` per label (:func:`sm3l_linear_svc_parameters`):
    ``{"W": (d, q)}`` (the linear kernel's weights, graded on the full basis), or with ``X`` the
    coefficients over the training points, ``{"coef": (n, q)}`` with ``Xᵀ coef = W`` (least
    squares; exact when W lies in the row space of X, which LIBLINEAR's dual solver guarantees).
    Raises ``ValueError`` for a model fitted with other constants.

    Parameters
    ----------
    models : list of LinearSVC, OneVsRestClassifier or MultiOutputClassifier
        One fitted ``LinearSVC`` per label, or a fitted wrapper of them.
    X : array of shape (n, d) or None
        The training features, to return coefficients over the training points instead of W.
    """
    models = _fitted_models(models, "LinearSVC", ("coef_",))
    weights = []
    for k, model in enumerate(models):
        params = model.get_params()
        if params["loss"] != "squared_hinge" or params["penalty"] != "l2" or params["fit_intercept"]:
            raise ValueError(f"models[{k}] is not SM3L's problem: needs loss='squared_hinge', penalty='l2', "
                             f"fit_intercept=False (got loss={params['loss']!r}, penalty={params['penalty']!r}, "
                             f"fit_intercept={params['fit_intercept']})")
        weights.append(np.ravel(model.coef_))
    W = np.column_stack(weights)
    if X is None:
        return {"W": W}
    return {"coef": np.linalg.lstsq(np.asarray(X, dtype=np.float64).T, W, rcond=None)[0]}


def rank_svm_from_zhang(weights, bias, Y) -> dict:
    """``{"beta", "b"}`` of Rank-SVM from Min-Ling Zhang's ``RankSVM_train`` (MATLAB, or WORC's
    Python port) run with ``cost = C`` on ``train_target = 2·Yᵀ − 1``.

    Parameters
    ----------
    weights : array of shape (Q, n) or (Q, n')
        Its ``Weights``: ``β_ki`` over all n instances (WORC's port), or over the n' instances that
        have both a relevant and an irrelevant label, in order (the MATLAB code drops the others).
    bias : array of shape (Q,) or (Q, 1), or a scalar
        Its ``Bias`` (a scalar, which the code returns when no α is free, is the same for every label).
    Y : array-like of shape (n, Q)
        The {0, 1} label matrix it was trained on.
    """
    Y = np.asarray(Y)
    weights = np.asarray(weights, dtype=np.float64)
    if Y.ndim != 2 or weights.ndim != 2 or weights.shape[0] != Y.shape[1]:
        raise ValueError(f"weights must be (Q, n) with Q = Y.shape[1]; got weights {weights.shape}, Y {Y.shape}")
    relevant = Y.sum(axis=1)
    kept = np.flatnonzero((relevant > 0) & (relevant < Y.shape[1]))
    beta = np.zeros((Y.shape[0], Y.shape[1]))
    if weights.shape[1] == Y.shape[0]:
        beta[:] = weights.T
    elif weights.shape[1] == kept.size:
        beta[kept] = weights.T
    else:
        raise ValueError(f"weights has {weights.shape[1]} columns; expected n = {Y.shape[0]} or the "
                         f"{kept.size} instances with both relevant and irrelevant labels")
    b = np.broadcast_to(np.ravel(np.asarray(bias, dtype=np.float64)), (Y.shape[1],)).copy()
    return {"beta": beta, "b": b}


def mlodm_libodm_parameters(C: float, theta: float, mu: float, n_samples: int) -> dict:
    """LIBODM's parameters whose binary solution is mLODM's (Q = 2, one label per instance).

    Parameters
    ----------
    C : float
        mLODM's C.
    theta : float
        mLODM's θ in [0, 1) (the same θ for LIBODM).
    mu : float
        mLODM's μ in (0, 1] (the same μ for LIBODM).
    n_samples : int
        The number of training instances m (LIBODM divides its loss weight by it).
    """
    check_hyperparameters(C, theta, mu)
    if theta == 1.0:
        raise ValueError(f"theta must be in [0, 1) (LIBODM divides by (1 − θ)²); got {theta!r}")
    check_scalar(n_samples, "n_samples", low=1, integer=True)
    return {"lambda": C * n_samples * (1.0 - theta) ** 2, "theta": theta, "mu": mu, "bias": 0}


def mlodm_from_libodm(n_samples: int, w=None, sv_coef=None, support=None) -> dict:
    """mLODM's point (Q = 2; label 0 relevant ↔ LIBODM's ``y = +1``) from a LIBODM model trained
    without bias at :func:`mlodm_libodm_parameters`: ``{"W": [w/2, −w/2]}`` from the linear
    kernel's ``w``, or ``{"coef": (n, 2)}`` from a kernel model's ``sv_coef`` (``y_i(α_i − α'_i)``)
    at the training indices ``support``.

    Parameters
    ----------
    n_samples : int
        The number of training instances n.
    w : array of shape (d,) or None
        The linear model's weights.
    sv_coef : array of shape (n_sv,) or None
        A kernel model's coefficients.
    support : array of int of shape (n_sv,) or None
        The training indices of the support vectors (with ``sv_coef``).
    """
    if (w is None) == (sv_coef is None):
        raise ValueError("give either w (linear kernel) or sv_coef with support (other kernels)")
    if w is not None:
        w = np.ravel(np.asarray(w, dtype=np.float64))
        return {"W": np.column_stack([w / 2.0, -w / 2.0])}
    if support is None:
        raise ValueError("sv_coef needs support: the training index of every support vector")
    coef = np.zeros(n_samples)
    coef[np.asarray(support, dtype=int)] = np.ravel(np.asarray(sv_coef, dtype=np.float64))
    return {"coef": np.column_stack([coef / 2.0, -coef / 2.0])}
