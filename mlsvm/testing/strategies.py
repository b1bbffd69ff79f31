"""Hypothesis strategies for property tests of multilabel SVM solvers (SPEC §3), the ones mlsvm's
own tests draw from.

* :func:`multilabel_data` draws ``(X, Y)``: small ``X`` and a {0, 1} indicator ``Y`` with the
  awkward label structures, each drawn independently (:data:`LABEL_QUIRKS`): a label nobody has,
  a label everybody has, a row with every label, a row with none, a duplicated point; ``q = 1`` or
  ``2`` where the range asked for allows it. With ``need_pair=True`` (Rank-SVM, mLODM) some row
  keeps a relevant and an irrelevant label, so the ranking problem is not empty.
* :func:`kernels` draws the kernel parameters (``kernel``, ``gamma``, ``degree``, ``coef0``).
* :func:`hyperparameters` draws valid hyperparameters of one model (OvN's α inside its convexity
  interval, which depends on the number of labels).
* :func:`problems` draws everything for one model: ``(X, targets, params)``, ready for
  ``certify(model, X, targets, solution, **params)`` or ``Estimator(**params).fit(X, targets)``.

hypothesis is an optional dependency (the ``test`` extra)::

    from hypothesis import given
    from mlsvm.testing import certify
    from mlsvm.testing.strategies import problems

    @given(problems("MatrixSVM"))
    def test_my_solver(problem):
        X, Y, params = problem
        assert certify("MatrixSVM", X, Y, my_solver(X, Y, **params), **params).passed
"""

from __future__ import annotations

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError("mlsvm.testing.strategies needs hypothesis, an optional dependency: install the "
                      "'test' extra (pip install 'mlsvm[test]') or hypothesis itself") from exc

from mlsvm.formulations.ovn import CONSTRAINTS, alpha_interval
from mlsvm.testing import estimator_class

__all__ = ["LABEL_QUIRKS", "KERNELS", "multilabel_data", "kernels", "hyperparameters", "problems"]

#: the awkward label structures of SPEC §3, each drawn independently by :func:`multilabel_data`
LABEL_QUIRKS = ("label nobody has", "label everybody has", "row with every label", "row with no label",
                "duplicated point")
KERNELS = ("linear", "rbf", "poly")
#: models whose problem is built from ranking pairs: they need a row with both kinds of labels
_PAIR_MODELS = {"rank_svm", "mlodm"}
_GRID = (0.1, 1.0, 10.0)


def multilabel_data(min_samples: int = 4, max_samples: int = 10, max_features: int = 4,
                    min_labels: int = 1, max_labels: int = 4, quirks=LABEL_QUIRKS, need_pair: bool = False):
    """``(X, Y)`` with ``X`` (n, d) standard normal and ``Y`` (n, q) in {0, 1}.

    Layout of the quirks (each drawn): column 0 all 0 (nobody), column 1 all 1 (everybody) — both
    only when ``q ≥ 3``, so that other labels remain —, row 0 all 1, row 1 all 0, row 3 a copy of
    row 2. With ``need_pair`` the last row has exactly the last label (relevant and irrelevant
    labels both, for ``q ≥ 2``).

    Parameters
    ----------
    min_samples : int
        Smallest n (at least 4, the rows the quirks use).
    max_samples : int
        Largest n.
    max_features : int
        Largest d.
    min_labels : int
        Smallest q.
    max_labels : int
        Largest q.
    quirks : sequence of str
        The label structures that may be drawn (a subset of :data:`LABEL_QUIRKS`).
    need_pair : bool
        Keep a row with a relevant and an irrelevant label (needs ``min_labels ≥ 2``).
    """
    unknown = set(quirks) - set(LABEL_QUIRKS)
    if unknown:
        raise ValueError(f"quirks must be among {LABEL_QUIRKS}; got {sorted(unknown)}")
    if min_samples < 4 or max_samples < min_samples:
        raise ValueError(f"need 4 <= min_samples <= max_samples; got {min_samples}, {max_samples}")
    if need_pair and min_labels < 2:
        raise ValueError("need_pair needs min_labels >= 2: a ranking pair takes two labels")
    return _multilabel_data(min_samples, max_samples, max_features, min_labels, max_labels, tuple(quirks), need_pair)


@st.composite
def _multilabel_data(draw, min_samples, max_samples, max_features, min_labels, max_labels, quirks, need_pair):
    n = draw(st.integers(min_samples, max_samples))
    d = draw(st.integers(1, max_features))
    q = draw(st.integers(min_labels, max_labels))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, q)) < draw(st.sampled_from([0.3, 0.5]))).astype(np.int8)

    def wanted(quirk, allowed=True):
        return allowed and quirk in quirks and draw(st.booleans())

    if wanted("label nobody has", q >= 3):
        Y[:, 0] = 0
    if wanted("label everybody has", q >= 3):
        Y[:, 1] = 1
    if wanted("row with every label"):
        Y[0, :] = 1
    if wanted("row with no label"):
        Y[1, :] = 0
    if wanted("duplicated point"):
        X[3] = X[2]
    if need_pair:
        Y[n - 1, :] = 0
        Y[n - 1, q - 1] = 1
    return X, Y


def kernels(names=KERNELS):
    """Kernel parameters ``{"kernel", "gamma", "degree", "coef0"}`` (scikit-learn's names):
    RBF and poly with ``gamma ∈ {0.1, 0.5, 1}``, poly of degree 2 or 3 with ``coef0 = 1``.

    Parameters
    ----------
    names : sequence of str
        The kernels to draw from.
    """
    unknown = set(names) - set(KERNELS)
    if unknown or not names:
        raise ValueError(f"names must be a non-empty subset of {KERNELS}; got {list(names)}")
    return _kernels(tuple(names))


@st.composite
def _kernels(draw, names):
    kernel = draw(st.sampled_from(list(names)))
    params = {"kernel": kernel}
    if kernel in ("rbf", "poly"):
        params["gamma"] = draw(st.sampled_from([0.1, 0.5, 1.0]))
    if kernel == "poly":
        params.update(degree=draw(st.sampled_from([2, 3])), coef0=1.0)
    return params


def hyperparameters(model, n_labels: int = 2):
    """Valid hyperparameters of ``model`` (an estimator name, class or instance), in our constants
    (SPEC §2): C, λ, β, γ_b from {0.1, 1, 10}; OvN's α uniformly inside its convexity interval
    ``(max(−1/(K−1), −1), 1)`` away from its ends, both w and b variants; SM3L's R the identity or
    a random ``PᵀP``; mLODM's θ ∈ {0, 0.3, 1}, μ ∈ {0.1, 0.5, 1}; Matrix-SVM's hinge or squared loss.

    Parameters
    ----------
    model : str, class or estimator
        The model.
    n_labels : int
        The number of labels (classes) of the problem: OvN's α interval and SM3L's R depend on it.
    """
    return _hyperparameters(estimator_class(model).__name__, int(n_labels))


@st.composite
def _hyperparameters(draw, name, n_labels):
    if name == "OvNSVM":
        low, high = alpha_interval(n_labels)
        low = max(low, -1.0)
        return {"alpha": low + (high - low) * draw(st.floats(0.05, 0.95)),
                "beta": draw(st.sampled_from(_GRID)), "gamma_b": draw(st.sampled_from(_GRID)),
                "w_constraint": draw(st.sampled_from(CONSTRAINTS)), "b_constraint": draw(st.sampled_from(CONSTRAINTS))}
    if name in ("SMSVM", "SM3L"):
        params = {"lam": draw(st.sampled_from(_GRID))}
        if name == "SM3L" and draw(st.booleans()):
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            P = np.eye(n_labels) + 0.3 * rng.standard_normal((n_labels, n_labels))
            params["R"] = P.T @ P + 1e-3 * np.eye(n_labels)
        return params
    if name == "MLODM":
        return {"C": draw(st.sampled_from(_GRID)), "theta": draw(st.sampled_from([0.0, 0.3, 1.0])),
                "mu": draw(st.sampled_from([0.1, 0.5, 1.0]))}
    if name == "MatrixSVM":
        return {"C": draw(st.sampled_from(_GRID)), "loss": draw(st.sampled_from(["hinge", "squared"]))}
    return {"C": draw(st.sampled_from(_GRID))}          # RankSVM and the binary approach


def problems(model, max_samples: int = 10, max_labels: int = 4, kernel_names=KERNELS):
    """``(X, targets, params)`` for ``model``: :func:`multilabel_data` with the quirks the model
    allows, its kernel and hyperparameters. ``targets`` is the (n, q) indicator, or for the
    single-output models (SMSVM, the categorical regression) a class vector with at least two classes.

    Parameters
    ----------
    model : str, class or estimator
        The model.
    max_samples : int
        Largest n.
    max_labels : int
        Largest q (number of classes for the single-output models).
    kernel_names : sequence of str
        The kernels to draw from.
    """
    return _problems(estimator_class(model), max_samples, max_labels, tuple(kernel_names))


@st.composite
def _problems(draw, cls, max_samples, max_labels, kernel_names):
    pairs = cls._registry_model in _PAIR_MODELS
    X, Y = draw(multilabel_data(max_samples=max_samples, max_labels=max_labels, need_pair=pairs,
                                min_labels=2 if pairs or cls._single_output else 1))
    if cls._single_output:
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        targets = rng.integers(0, Y.shape[1], X.shape[0])
        targets[:2] = [0, 1]                             # at least two classes
        n_labels = np.unique(targets).size
    else:
        targets, n_labels = Y, Y.shape[1]
    params = {**draw(kernels(kernel_names)), **draw(hyperparameters(cls, n_labels))}
    return X, targets, params
