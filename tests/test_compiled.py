"""The compiled-loop decorator: same answers as the Python it compiles, and no import failure
where no cache folder can be written."""

import numba
import numpy as np

from mlsvm.solvers import compiled as compiled_module
from mlsvm.solvers.compiled import compiled


def _clipped_sum(values, upper):
    total = 0.0
    for value in values:
        total += min(value, upper)
    return total


def test_compiled_function_matches_its_python():
    values = np.array([0.5, 3.0, -1.0, 2.0])
    fast = compiled(_clipped_sum)
    assert isinstance(fast, numba.core.registry.CPUDispatcher)
    assert fast(values, 1.0) == _clipped_sum(values, 1.0) == 1.5


def test_division_by_zero_follows_numpy():
    def ratio(a, b):
        return a / b

    assert compiled(ratio)(1.0, 0.0) == np.inf


def test_no_cache_folder_compiles_in_memory(monkeypatch):
    calls = []
    real_njit = numba.njit

    def njit_without_locator(*args, cache=False, **options):
        calls.append(cache)
        if cache:
            raise RuntimeError("cannot cache function: no locator available")
        return real_njit(*args, cache=cache, **options)

    monkeypatch.setattr(compiled_module.numba, "njit", njit_without_locator)
    fast = compiled(_clipped_sum)
    assert calls == [True, False]
    assert fast(np.array([2.0, 0.25]), 1.0) == 1.25


def test_dot_is_the_inner_product_to_round_off():
    """The one compiled function whose sum may be reordered: equal to numpy's (BLAS) inner product to a
    few units of round-off, on lengths that fill no SIMD lane, part of one, and many."""
    from mlsvm.solvers.compiled import dot

    rng = np.random.default_rng(0)
    for size in (0, 1, 3, 8, 13, 100, 1001):
        a, b = rng.normal(size=size), rng.normal(size=size)
        exact = float(np.dot(a, b))
        bound = 1e-15 * size * float(np.abs(a) @ np.abs(b))   # the a-priori error bound of any order
        assert abs(dot(a, b) - exact) <= 2 * bound
