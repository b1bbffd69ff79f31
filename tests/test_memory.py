"""Memory refusal (issue 16, item 3): a Gram matrix that cannot fit in the available memory is
refused with a ValueError naming the memory it needs and the memory there is, before it is formed;
the linear kernel's gram-free models (MatrixSVM, MLODM) form none."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlsvm import MLODM, MatrixSVM, RankSVM
from mlsvm import kernels
from mlsvm.datasets import make_multilabel


def test_available_memory_reads_the_system():
    available = kernels.available_memory()
    assert available is None or available > 0


@pytest.mark.parametrize("sparse_input, kernel, per_entry", [(False, "linear", 8), (False, "rbf", 16),
                                                             (True, "linear", 20), (True, "rbf", 28)])
def test_gram_bytes_counts_result_and_temporaries(sparse_input, kernel, per_entry):
    assert kernels.gram_bytes(4880, 4880, sparse_input=sparse_input, kernel=kernel) == 4880 * 4880 * per_entry


@pytest.mark.parametrize("sparse_input", [False, True])
def test_a_gram_matrix_that_cannot_fit_is_refused_with_both_numbers(monkeypatch, sparse_input):
    data = make_multilabel(50, 4, 3, random_state=0)
    X = sp.csr_matrix(data.X) if sparse_input else data.X
    needed = kernels.gram_bytes(50, 50, sparse_input=sparse_input, kernel="rbf")
    monkeypatch.setattr(kernels, "available_memory", lambda: needed - 1)
    with pytest.raises(ValueError, match=r"training Gram matrix of kernel='rbf' is 50 × 50 .* need about "
                                         r"\d.* but only \d.* is available"):
        kernels.make_kernel("rbf", 0.5)(X)
    with pytest.raises(ValueError, match="is available"):   # through an estimator's fit
        RankSVM(kernel="rbf", gamma=0.5).fit(X, data.Y)
    rectangle = kernels.gram_bytes(10, 50, sparse_input=sparse_input, kernel="rbf")
    monkeypatch.setattr(kernels, "available_memory", lambda: rectangle - 1)
    with pytest.raises(ValueError, match="test-vs-training Gram matrix of kernel='rbf' is 10 × 50"):
        kernels.make_kernel("rbf", 0.5)(X[:10], X)
    monkeypatch.setattr(kernels, "available_memory", lambda: needed)   # exactly enough: formed
    assert kernels.make_kernel("rbf", 0.5)(X).shape == (50, 50)


def test_unknown_available_memory_does_not_refuse(monkeypatch):
    monkeypatch.setattr(kernels, "available_memory", lambda: None)
    assert kernels.make_kernel("linear")(np.ones((3, 2))).shape == (3, 3)


@pytest.mark.parametrize("estimator", [MatrixSVM(kernel="linear", solver="dcd", tol=1e-6),
                                       MatrixSVM(kernel="linear", solver="ipm", tol=1e-6),
                                       MLODM(kernel="linear", tol=1e-6)])
def test_gram_free_linear_models_fit_with_no_memory_for_a_gram_matrix(monkeypatch, estimator):
    data = make_multilabel(40, 5, 3, random_state=1)
    monkeypatch.setattr(kernels, "available_memory", lambda: 1)   # any n × n matrix would be refused
    model = estimator.fit(sp.csr_matrix(data.X), data.Y)
    assert model.fit_report_.converged
    if isinstance(model, MatrixSVM):   # predicts from X coef_ + intercept_: no test Gram matrix either
        assert model.predict(data.X).shape == data.Y.shape
