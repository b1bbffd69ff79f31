"""Hypothesis strategies for small mLODM problems with the awkward label structures of SPEC §3."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from mlsvm.data import ranking_pairs
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel


@st.composite
def mlodm_problems(draw, max_samples: int = 10, max_labels: int = 4):
    """An :class:`MLODMProblem` with a drawn kernel, hyperparameters and label structure.

    Label quirks (each drawn): a label nobody has, a label everybody has, an instance with every
    label, an instance with none, a duplicated point. At least one instance keeps a ranking pair.
    """
    X, Y = _points_and_labels(draw, max_samples, max_labels)
    kernel = draw(st.sampled_from(["linear", "rbf", "poly"]))
    gram = make_kernel(kernel, "scale", degree=2, coef0=1.0, X=X)(X)
    return mlodm.MLODMProblem(gram, ranking_pairs(Y), *_hyperparameters(draw)), Y


@st.composite
def linear_mlodm_problems(draw, max_samples: int = 10, max_labels: int = 4):
    """A :class:`LinearMLODMProblem` (features, no Gram matrix) with the label quirks of
    :func:`mlodm_problems`; about a third of the feature entries are zero."""
    X, Y = _points_and_labels(draw, max_samples, max_labels)
    duplicated = np.array_equal(X[2], X[3])
    X[np.random.default_rng(X.shape[0]).random(X.shape) < 0.3] = 0.0
    if duplicated:
        X[3] = X[2]
    return mlodm.LinearMLODMProblem(X, ranking_pairs(Y), *_hyperparameters(draw)), Y


def _hyperparameters(draw):
    C = draw(st.sampled_from([0.1, 1.0, 10.0]))
    theta = draw(st.sampled_from([0.0, 0.3, 1.0]))
    mu = draw(st.sampled_from([0.1, 0.5, 1.0]))
    return C, theta, mu


def _points_and_labels(draw, max_samples, max_labels):
    n = draw(st.integers(4, max_samples))
    d = draw(st.integers(1, 4))
    q = draw(st.integers(2, max_labels))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, q)) < draw(st.sampled_from([0.3, 0.5]))).astype(np.int8)
    if q >= 3 and draw(st.booleans()):
        Y[:, 0] = 0                       # a label nobody has
    if q >= 3 and draw(st.booleans()):
        Y[:, 1] = 1                       # a label everybody has
    if draw(st.booleans()):
        Y[0, :] = 1                       # an instance with every label
    if draw(st.booleans()):
        Y[1, :] = 0                       # an instance with none
    if draw(st.booleans()):
        X[3] = X[2]                       # a duplicated point
    # make sure some instance has a relevant and an irrelevant label
    Y[n - 1, :] = 0
    Y[n - 1, q - 1] = 1
    return X, Y


def random_dual_point(problem: mlodm.MLODMProblem, seed: int = 0):
    """Non-negative α, β with about half their entries zero."""
    rng = np.random.default_rng(seed)
    T = problem.pairs.n_pairs
    alpha = rng.random(T) * (rng.random(T) < 0.5)
    beta = rng.random(T) * (rng.random(T) < 0.5)
    return alpha, beta
