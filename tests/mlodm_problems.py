"""Hypothesis strategies for small mLODM problems with the awkward label structures of SPEC §3."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from mlsvm.data import ranking_pairs
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.testing.strategies import hyperparameters, multilabel_data


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
    params = draw(hyperparameters("MLODM"))     # C ∈ {0.1, 1, 10}, θ ∈ {0, 0.3, 1}, μ ∈ {0.1, 0.5, 1}
    return params["C"], params["theta"], params["mu"]


def _points_and_labels(draw, max_samples, max_labels):
    # the public strategy's layout: label 0 nobody has / label 1 everybody has (q ≥ 3), row 0 with
    # every label, row 1 with none, row 3 a copy of row 2; the last row keeps a ranking pair
    return draw(multilabel_data(min_samples=4, max_samples=max_samples, max_features=4, min_labels=2,
                                max_labels=max_labels, need_pair=True))


def random_dual_point(problem: mlodm.MLODMProblem, seed: int = 0):
    """Non-negative α, β with about half their entries zero."""
    rng = np.random.default_rng(seed)
    T = problem.pairs.n_pairs
    alpha = rng.random(T) * (rng.random(T) < 0.5)
    beta = rng.random(T) * (rng.random(T) < 0.5)
    return alpha, beta
