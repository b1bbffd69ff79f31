"""Hypothesis strategies for OvN problems with awkward label structures (SPEC §3)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from mlsvm.formulations import ovn
from mlsvm.kernels import make_kernel
from mlsvm.testing.strategies import hyperparameters

LABEL_STRUCTURES = ("random", "one-member class", "empty class", "overlapping", "everybody in class 0")

# Explore seed 2526: 8 points, 3 classes, hard b (α = 0.2, β = 1). At the optimum class 0's bias can be
# anything in about [−1.81, 0.15] (class 2's moves with it); before ovn.optimal_biases, Clarabel, ECOS,
# OSQP and SCS returned −0.70, −0.85, −0.90 and −0.87, the interior point −0.57868 and −0.57874 from
# dense and sparse X.
FLAT_X = np.array([[0.0, -2.55566503, 0.74740799], [0, 0, 0], [0, 1.11163321, 0], [0, -0.20552305, 0],
                   [0, -0.92589957, 0], [0, 0, 0.58405831], [0, 0, 0.58253842], [0, -0.21482891, -0.50522874]])
FLAT_LABELS = np.array([0, 1, 1, 1, 0, 2, 0, 2])


@st.composite
def ovn_problems(draw, structures=LABEL_STRUCTURES, max_samples=10):
    """A small OvN problem: data, labels with the chosen structure, kernel, variant, hyperparameters."""
    n = draw(st.integers(3, max_samples))
    d = draw(st.integers(1, 3))
    K = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    structure = draw(st.sampled_from(structures))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if draw(st.booleans()):
        X[1] = X[0]  # a duplicated point
    Y = (rng.random((n, K)) < 0.5).astype(np.int8)
    if structure == "one-member class":
        Y[:, 0] = 0
        Y[rng.integers(n), 0] = 1
    elif structure == "empty class":
        Y[:, rng.integers(K)] = 0
    elif structure == "overlapping":
        Y[: max(1, n // 2), :] = 1
    elif structure == "everybody in class 0":
        Y[:, 0] = 1
    if structure != "empty class":  # keep the structure asked for: otherwise every class non-empty
        for k in range(K):
            if not Y[:, k].any():
                Y[rng.integers(n), k] = 1
    kernel = draw(st.sampled_from(["linear", "rbf"]))
    params = draw(hyperparameters("OvNSVM", n_labels=K))   # α inside the convexity interval, both variants
    gram = make_kernel(kernel, "scale", X=X)(X)
    return ovn.OvNProblem(gram, Y, params["alpha"], params["beta"], params["w_constraint"], params["b_constraint"],
                          params["gamma_b"], features=X if kernel == "linear" else None), X, kernel
