"""Kernels agree with scikit-learn's pairwise kernels; Gram validation rejects what is not a kernel."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics.pairwise import pairwise_kernels

from mlsvm.kernels import check_gram, gram_factor, make_kernel


@given(st.integers(1, 20), st.integers(1, 6), st.sampled_from(["linear", "rbf", "poly"]),
       st.floats(0.01, 2.0), st.integers(1, 4), st.floats(-1.0, 1.0), st.integers(0, 1000))
def test_matches_scikit_learn(n, d, name, gamma, degree, coef0, seed):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, d)), rng.standard_normal((n + 2, d))
    kernel = make_kernel(name, gamma, degree, coef0, A)
    params = {"linear": {}, "rbf": dict(gamma=gamma), "poly": dict(gamma=gamma, degree=degree, coef0=coef0)}[name]
    np.testing.assert_allclose(kernel(A, B), pairwise_kernels(A, B, metric=name, **params), rtol=1e-10, atol=1e-10)
    gram = kernel(A)
    np.testing.assert_array_equal(gram, gram.T)


def test_gamma_scale_and_auto_follow_scikit_learn():
    X = np.random.default_rng(0).standard_normal((30, 4)) * 3.0
    assert make_kernel("rbf", "scale", X=X).gamma == pytest.approx(1.0 / (4 * X.var()))
    assert make_kernel("rbf", "auto", X=X).gamma == pytest.approx(0.25)


@pytest.mark.parametrize("value", [1e-6, 0.7, 123.456, 1e300, 0.0])
@pytest.mark.parametrize("shape", [(10, 1), (7, 3)])
def test_gamma_scale_of_equal_entries_is_one(value, shape):
    """Entries all equal have variance 0, so gamma="scale" is 1 (scikit-learn's fallback); numpy's
    var of equal entries is the round-off of their mean (4.5e-44 at 1e-6, inf at 1e300), which gave
    gamma = 1 / round-off and a kernel at 1e94, or an overflow error. CSR input, with every entry
    stored or with implicit zeros, gives the same gamma as the dense array."""
    X = np.full(shape, value)
    for data in (X, sp.csr_matrix(X), sp.csr_matrix((np.full(X.size, value), np.nonzero(np.ones(shape))), shape)):
        assert make_kernel("rbf", "scale", X=data).gamma == 1.0
    assert make_kernel("rbf", "scale", X=sp.csr_matrix(shape)).gamma == 1.0   # no stored value
    if 0.0 < value < 1e150:   # equal stored values beside implicit zeros: not all entries are equal
        partial = np.zeros(shape)
        partial[0] = value
        dense = make_kernel("rbf", "scale", X=partial).gamma
        assert dense == pytest.approx(1.0 / (shape[1] * partial.var()), rel=1e-14)
        assert make_kernel("rbf", "scale", X=sp.csr_matrix(partial)).gamma == pytest.approx(dense, rel=1e-14)


@given(st.integers(2, 25), st.integers(1, 8), st.integers(0, 1000))
def test_factor_reproduces_the_gram_matrix(n, d, seed):
    X = np.random.default_rng(seed).standard_normal((n, d))
    gram = make_kernel("rbf", 0.5, X=X)(X)
    factor = gram_factor(gram)
    np.testing.assert_allclose(factor @ factor.T, gram, atol=1e-9)


@pytest.mark.parametrize("gram, message", [
    (np.array([[1.0, 2.0], [2.0, 1.0]]), "not positive semidefinite"),
    (np.array([[1.0, 0.5], [0.0, 1.0]]), "not symmetric"),
    (np.ones((2, 3)), "square"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN or infinite"),
    (np.ones(3), "2-D Gram matrix"),
    (np.array([["a", "b"], ["c", "d"]]), "Gram matrix of real numbers; got ndarray <U1"),
])
def test_bad_gram(gram, message):
    """check_gram, and gram_factor, which returned a factor of [[1, 2], [2, 1]] (dropping the
    eigenvalue −1), zeros for a NaN matrix and raw numpy errors for a vector or strings."""
    with pytest.raises(ValueError, match=message):
        check_gram(gram)
    with pytest.raises(ValueError, match=message):
        gram_factor(gram)


@given(st.integers(1, 30), st.integers(1, 5), st.integers(0, 1000))
def test_the_psd_test_on_eigh_is_check_gram_s(n, rank, seed):
    """gram_factor tests the eigenvalues of its own decomposition with check_gram's rule: a
    rank-deficient Gram matrix shifted by −t·I fails both or neither (t around the tolerance)."""
    X = np.random.default_rng(seed).standard_normal((n, rank))
    gram = X @ X.T
    norm = max(1.0, float(np.linalg.eigvalsh(gram)[-1]))
    for factor in (0.0, 0.5, 2.0, 10.0):
        shifted = gram - factor * 1e-8 * norm * np.eye(n)
        outcomes = []
        for check in (check_gram, gram_factor):
            try:
                check(shifted)
                outcomes.append(True)
            except ValueError as exc:
                assert "not positive semidefinite" in str(exc)
                outcomes.append(False)
        assert outcomes[0] == outcomes[1]
        if factor >= 2.0 and n > rank:
            assert outcomes == [False, False]


def test_kernel_arguments_of_the_wrong_shape_are_clear_errors():
    X = np.random.default_rng(0).standard_normal((5, 3))
    with pytest.raises(ValueError, match=r"same number of features; got shapes \(5, 3\) and \(5, 2\)"):
        make_kernel("rbf", 1.0)(X, X[:, :2])
    for bad in (X[0], X.astype(str)):
        with pytest.raises(ValueError, match=r"gamma='scale' is resolved on X, a 2-D array of real numbers"):
            make_kernel("rbf", "scale", X=bad)


def test_round_off_negative_eigenvalue_is_accepted():
    X = np.random.default_rng(1).standard_normal((40, 3))
    gram = X @ X.T      # rank 3: eigenvalues at round-off level, some slightly negative
    check_gram(gram)


@pytest.mark.parametrize("kwargs, message", [
    (dict(kernel="sigmoid"), "kernel must be one of"),
    (dict(kernel="rbf", gamma=0.0), "gamma must lie in"),
    (dict(kernel="rbf", gamma="big"), "gamma must be a positive number"),
    (dict(kernel="poly", degree=0), "degree must lie in"),
])
def test_bad_kernel_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_kernel(X=np.ones((2, 2)), **kwargs)
