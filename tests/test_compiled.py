"""The compiled-loop decorator: same answers as the Python it compiles, and no import failure
where no cache folder can be written; the sort and searches that replace numba's."""

import importlib
import inspect
import pkgutil
import re

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mlsvm
from mlsvm.solvers import compiled as compiled_module
from mlsvm.solvers.compiled import argsort, compiled, search, stable_argsort


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


# ---- sorting and searching without numba's factory-built numpy functions (numba issue 10486) ----

@numba.njit
def _numbas_argsort(values):   # uncached: the order argsort must reproduce
    return np.argsort(values)


_KEYS = st.lists(st.sampled_from([-2.0, -0.0, 0.0, 0.5, 1.0, 3.0]) | st.floats(-1e6, 1e6), max_size=70)


@settings(max_examples=60)
@given(_KEYS, st.booleans())
def test_argsort_is_numbas_argsort_permutation_for_permutation(values, integers):
    """The same permutation as numba's np.argsort, ties included (drawn from a few values, ±0
    among them), on lengths below, at and far above its insertion-sort size."""
    array = np.array(values, dtype=np.int64 if integers else np.float64)
    np.testing.assert_array_equal(argsort(array), _numbas_argsort(array))
    np.testing.assert_array_equal(array[argsort(array)], np.sort(array))


def test_argsort_on_long_sorted_reversed_and_constant_arrays():
    for array in (np.arange(5000.0), np.arange(5000.0)[::-1].copy(), np.ones(5000), np.random.default_rng(0).random(5000)):
        np.testing.assert_array_equal(argsort(array), _numbas_argsort(array))


@settings(max_examples=60)
@given(_KEYS, st.booleans())
def test_stable_argsort_is_numpys_stable_argsort(values, integers):
    """Equal keys keep their order; lengths cover no run, a part of one, several runs and an odd
    last merge."""
    array = np.array(values, dtype=np.int64 if integers else np.float64)
    np.testing.assert_array_equal(stable_argsort(array), np.argsort(array, kind="stable"))


@settings(max_examples=60)
@given(st.lists(st.sampled_from([-1.0, 0.0, 0.0, 2.0, 2.0, 5.0]), max_size=20),
       st.sampled_from([-3.0, -1.0, 0.0, 1.0, 2.0, 5.0, 7.0]))
def test_search_is_numpys_searchsorted(values, needle):
    ordered = np.sort(np.array(values))
    assert search(ordered, needle, False) == np.searchsorted(ordered, needle, side="left")
    assert search(ordered, needle, True) == np.searchsorted(ordered, needle, side="right")


_FACTORY_BUILT = re.compile(r"np\.(sort|argsort|searchsorted|lexsort|unique|median|percentile|quantile|partition"
                            r"|argpartition)\b|\.sort\(|\bsorted\(")


def test_no_compiled_function_calls_numbas_sorting_or_searching():
    """Numba compiles np.sort, np.argsort and np.searchsorted from factories whose bodies share one
    symbol name per counter value; two cached functions compiled in different processes can then
    run each other's body (docs/compiled.md: np.argsort returned the sorted values). Every compiled
    function of mlsvm uses compiled.argsort, stable_argsort and search instead.
    On the tree before them this test names five functions."""
    offenders, found = [], 0
    for info in pkgutil.walk_packages(mlsvm.__path__, "mlsvm."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.py_func.__module__ == info.name:
                found += 1
                source = re.sub(r'""".*?"""', "", inspect.getsource(value.py_func), flags=re.S)
                if any(_FACTORY_BUILT.search(line.split("#")[0]) for line in source.splitlines()):
                    offenders.append(f"{info.name}.{name}")
    assert found > 50 and offenders == []
