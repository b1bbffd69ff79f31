"""Validation errors name the argument; the ranking-pair structure matches a brute-force list."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlsvm.data import check_scalar, check_X, check_Y, ranking_pairs, to_signed


@st.composite
def indicators(draw, max_n=12, max_q=6):
    n = draw(st.integers(1, max_n))
    q = draw(st.integers(1, max_q))
    return draw(arrays(np.int8, (n, q), elements=st.integers(0, 1)))


@given(indicators())
def test_pairs_match_brute_force(Y):
    n, q = Y.shape
    expected = [(i, k, l) for i in range(n) for k in range(q) for l in range(q) if Y[i, k] and not Y[i, l]]
    if not expected:
        with pytest.raises(ValueError, match="no ranking pairs"):
            ranking_pairs(Y)
        return
    pairs = ranking_pairs(Y)
    got = list(zip(pairs.instance.tolist(), pairs.relevant.tolist(), pairs.irrelevant.tolist()))
    assert sorted(got) == sorted(expected)
    counts = Y.sum(1) * (q - Y.sum(1))
    np.testing.assert_allclose(pairs.weight, 1.0 / counts[pairs.instance])
    # every instance's weights sum to one; instances without pairs are counted, not dropped
    assert pairs.n_without_pairs == int(np.sum(counts == 0))
    assert pairs.n_samples == n
    for i in range(n):
        block = slice(pairs.offsets[i], pairs.offsets[i + 1])
        assert np.all(pairs.instance[block] == i)
        if counts[i]:
            assert pairs.weight[block].sum() == pytest.approx(1.0)


@given(indicators(), st.integers(0, 2**31 - 1))
def test_scatter_is_the_adjoint_of_gather(Y, seed):
    if not np.any(Y.sum(1) * (Y.shape[1] - Y.sum(1))):
        return
    pairs = ranking_pairs(Y)
    rng = np.random.default_rng(seed)
    F = rng.standard_normal(Y.shape)
    a = rng.standard_normal(pairs.n_pairs)
    # ⟨gather(F), a⟩ = ⟨F, scatter(a)⟩, and scatter's rows sum to zero (Σ_k c^k = 0 per pair)
    assert pairs.gather(F) @ a == pytest.approx(np.sum(F * pairs.scatter(a)))
    np.testing.assert_allclose(pairs.scatter(a).sum(axis=1), 0.0, atol=1e-12)


@given(indicators(), st.integers(0, 2**31 - 1))
def test_laplacians_are_scatter_of_weighted_gather(Y, seed):
    """``Λ_i F_i = scatter(w ∘ gather(F))_i`` for every F, so the blocks are the operator's; a row
    range gives the same blocks as the whole, and each block is symmetric with zero row sums."""
    if not np.any(Y.sum(1) * (Y.shape[1] - Y.sum(1))):
        return
    pairs = ranking_pairs(Y)
    rng = np.random.default_rng(seed)
    w, F = rng.random(pairs.n_pairs), rng.standard_normal(Y.shape)
    blocks = pairs.laplacians(w)
    np.testing.assert_allclose(np.einsum("iab,ib->ia", blocks, F), pairs.scatter(w * pairs.gather(F)), atol=1e-12)
    np.testing.assert_allclose(blocks, np.swapaxes(blocks, 1, 2), atol=0)
    np.testing.assert_allclose(blocks.sum(axis=2), 0.0, atol=1e-12)
    start, stop = sorted(rng.integers(0, Y.shape[0] + 1, 2))
    np.testing.assert_array_equal(pairs.laplacians(w, start, stop), blocks[start:stop])


def test_to_signed():
    np.testing.assert_array_equal(to_signed(np.array([[0, 1]])), [[-1.0, 1.0]])


def test_multiclass_vector_is_one_hot():
    target = check_Y(np.array(["b", "a", "c", "a"]))
    assert target.is_multiclass
    np.testing.assert_array_equal(target.classes, ["a", "b", "c"])
    np.testing.assert_array_equal(target.Y.argmax(1), [1, 0, 2, 0])


@pytest.mark.parametrize("X, message", [
    (np.ones(3), "must be 2-D"),
    (np.array([[1.0, np.nan]]), "NaN or infinite"),
    (np.array([[1.0, np.inf]]), "NaN or infinite"),
    (np.ones((0, 2)), "at least one sample"),
    (np.ones((2, 0)), "0 feature"),
    (np.array([[1 + 2j, 0]]), "complex"),
    ([["a", "b"]], "numeric array"),
])
def test_bad_X_names_the_argument(X, message):
    with pytest.raises(ValueError, match=message) as error:
        check_X(X)
    assert str(error.value).startswith("X ")


@pytest.mark.parametrize("Y, message", [
    (np.array([[0, 2], [1, 0]]), "only 0 and 1"),
    (np.array([[0.0, np.nan]]), "NaN or infinite"),
    (np.array([1, 1, 1]), "one class"),
    (np.ones((2, 2, 2)), "1-D class vector or a 2-D"),
    (np.ones((2, 0)), "at least one sample and one label"),
    (np.array([0.5, 1.5, 2.0]), "Unknown label type: continuous"),
    (None, "requires y to be passed"),
])
def test_bad_Y_names_the_argument(Y, message):
    with pytest.raises(ValueError, match=message) as error:
        check_Y(Y)
    assert str(error.value).startswith("Y ")


def test_Y_rows_must_match_X():
    with pytest.raises(ValueError, match="Y has 2 samples but X has 3"):
        check_Y(np.eye(2, dtype=int), n_samples=3)


@pytest.mark.parametrize("value, kwargs, message", [
    (0.0, dict(low=0.0, low_open=True), r"C must lie in \(0.0, inf\]"),
    (-1, dict(low=0.0), r"C must lie in \[0.0, inf\]"),
    (2.0, dict(low=0.0, high=1.0), r"C must lie in \[0.0, 1.0\]"),
    (float("nan"), dict(), "C must be finite"),
    ("1", dict(), "C must be a real number"),
    (True, dict(), "C must be a real number"),
    (1.5, dict(integer=True), "C must be an integer"),
])
def test_check_scalar(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_scalar(value, "C", **kwargs)


@given(indicators(), st.integers(0, 2**31 - 1))
def test_gather_matrix_is_gather_in_both_orders(Y, seed):
    if not np.any(Y.sum(1) * (Y.shape[1] - Y.sum(1))):
        return
    pairs = ranking_pairs(Y)
    F = np.random.default_rng(seed).standard_normal(Y.shape)
    np.testing.assert_array_equal(pairs.gather_matrix("C") @ F.ravel(), pairs.gather(F))
    np.testing.assert_array_equal(pairs.gather_matrix("F") @ F.ravel(order="F"), pairs.gather(F))
