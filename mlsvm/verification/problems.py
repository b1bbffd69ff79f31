"""Built-in reference problems for ``mlsvm verify``: small, seeded, and awkward on purpose.

Multilabel problems come from :func:`mlsvm.datasets.make_multilabel` (plus one with the awkward
label structures of SPEC §3: a label nobody has, a label everybody has, instances with all or no
labels); multiclass ones from scikit-learn's bundled iris and wine; binary ones from its
breast-cancer set and a synthetic set. Features are standardised; subsets keep ``--quick`` under
a minute for every model together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

from mlsvm.datasets import make_multilabel

__all__ = ["ReferenceProblem", "multilabel_problems", "multiclass_problems", "binary_problems"]


@dataclass(frozen=True)
class ReferenceProblem:
    """A named reference problem of ``mlsvm verify``.

    Parameters
    ----------
    name : str
        Problem name (shown in the verify table).
    X : ndarray of shape (n, d)
        Features.
    Y : ndarray
        An (n, q) {0, 1} indicator; for binary problems a ±1 vector.
    """

    name: str
    X: np.ndarray
    Y: np.ndarray  # (n, q) {0,1} indicator; for binary problems a ±1 vector


def _standardize(X: np.ndarray) -> np.ndarray:
    scale = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


def _subset(X, y, n, seed=0):
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False))
    return X[index], y[index]


def _awkward(seed: int = 3) -> ReferenceProblem:
    data = make_multilabel(24, 3, 5, noise=0.15, random_state=seed)
    Y = data.Y.copy()
    Y[:, 0] = 0          # a label nobody has
    Y[:, 1] = 1          # a label everybody has
    Y[0, :] = 1          # an instance with every label
    Y[1, :] = 0          # an instance with none
    X = data.X.copy()
    X[3] = X[2]          # a duplicated point
    return ReferenceProblem("awkward-labels", X, Y)


def multilabel_problems(quick: bool = True) -> list[ReferenceProblem]:
    """The multilabel reference problems: seeded synthetic sets and one with awkward labels (a label
    nobody has, one everybody has, instances with all or no labels, a duplicated point).

    Parameters
    ----------
    quick : bool
        The small set (True) or the full one.
    """
    sizes = [(30, 4, 4)] if quick else [(30, 4, 4), (80, 6, 5)]
    problems = [ReferenceProblem(f"synthetic-{n}x{d}x{q}", *(lambda D: (D.X, D.Y))(make_multilabel(n, d, q, random_state=n)))
                for n, d, q in sizes]
    return problems + [_awkward()]


def multiclass_problems(quick: bool = True) -> list[ReferenceProblem]:
    """The multiclass reference problems: standardised subsets of scikit-learn's iris and wine, one-hot.

    Parameters
    ----------
    quick : bool
        The small set (True) or the full one.
    """
    n = 45 if quick else 150
    problems = []
    for name, loader in (("iris", load_iris), ("wine", load_wine)):
        data = loader()
        X, y = _subset(_standardize(data.data), data.target, n)
        problems.append(ReferenceProblem(f"{name}-{X.shape[0]}", X, np.eye(y.max() + 1, dtype=np.int8)[y]))
    return problems


def binary_problems(quick: bool = True) -> list[ReferenceProblem]:
    """The binary reference problems: a standardised subset of breast-cancer and a synthetic set, ±1 labels.

    Parameters
    ----------
    quick : bool
        The small set (True) or the full one.
    """
    data = load_breast_cancer()
    X, y = _subset(_standardize(data.data), data.target, 60 if quick else 200)
    rng = np.random.default_rng(7)
    Xs = rng.standard_normal((40, 3))
    ys = np.sign(Xs[:, 0] + 0.6 * rng.standard_normal(40))
    return [ReferenceProblem(f"breast-cancer-{X.shape[0]}", X, 2.0 * y - 1.0),
            ReferenceProblem("synthetic-40x3", Xs, ys)]
