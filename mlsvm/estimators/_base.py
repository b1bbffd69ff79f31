"""What every mlsvm estimator shares: validation, kernels, multiclass handling, the FitReport.

A model's estimator subclasses :class:`KernelMultilabelEstimator`, names its registry table
(``_registry_model``, see :mod:`mlsvm.registry`) and implements ``_problem(gram, Y)`` (the formulation's
problem, which validates the hyperparameters), ``_set_fitted(problem, result, evaluation, Y)`` (the
fitted attributes from the solver's point) and ``_decision(gram_test)`` (scores ``(m, q)`` from the
test-vs-train Gram matrix). The path between them is written once, in :meth:`_fit`: problem →
registry solver → the formulation's ``evaluate`` → :func:`mlsvm.report.build_report`. Predictions of a
multiclass fit are ``classes_[argmax]`` of the per-class scores; of a multilabel fit, the model's
``_decide(scores)``.

``decision_function`` follows scikit-learn: a multilabel fit (2-D indicator Y) returns ``(m, q)``;
a multiclass fit (1-D y) returns ``(m, n_classes)``, except with two classes, where it returns the
1-D ``s_1 − s_0`` (positive for ``classes_[1]``, and ``> 0`` exactly when ``predict`` says
``classes_[1]``: argmax breaks ties to the first class). Multiclass-only models set
``_single_output = True``: they accept a column vector y with a ``DataConversionWarning`` and
reject a multilabel indicator.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from mlsvm import registry
from mlsvm.estimators._docs import fill
from mlsvm.data import LabelTarget, check_class_vector, check_X, check_X_Y, check_scalar
from mlsvm.formulations.evaluation import Evaluation
from mlsvm.kernels import check_gram, check_row_norms, make_kernel
from mlsvm.report import FitReport, build_report
from mlsvm.solvers.blas_threads import blas_threads
from mlsvm.solvers.cvxpy_tools import check_backend
from mlsvm.solvers.result import SolverResult, check_finite_point

__all__ = ["KernelMultilabelEstimator", "check_solver", "check_hyperparameter_names", "check_n_features",
           "float_guard"]


def check_solver(solver: str, allowed: tuple[str, ...]) -> str:
    """Return ``solver`` if it is one of ``allowed``, else raise a ``ValueError`` naming them.

    Parameters
    ----------
    solver : str
        The ``solver=`` argument of an estimator.
    allowed : tuple of str
        The solver names the estimator accepts.
    """
    if solver not in allowed:
        raise ValueError(f"solver must be one of {allowed}; got {solver!r}")
    return solver


def check_hyperparameter_names(estimator_class, params, error: type[Exception] = ValueError) -> None:
    """Raise ``error`` naming the keys of ``params`` that are not hyperparameters of
    ``estimator_class``, and its hyperparameters (the constructor's own TypeError names only the
    first).

    Parameters
    ----------
    estimator_class : type
        An estimator class.
    params : iterable of str
        The names given.
    error : type, default=ValueError
        The exception raised.
    """
    valid = estimator_class().get_params(deep=False)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise error(f"{estimator_class.__name__} has no hyperparameter {', '.join(map(repr, unknown))}; "
                    f"its hyperparameters: {', '.join(valid)}")


@contextmanager
def float_guard(estimator):
    """Run a solver (and grade its point) for ``estimator`` at the edge of float64.

    Hyperparameters there (a weight λ of 1e-300, a C of 1e300) overflow inside the solvers: the
    recomputed certificate then fails, and the fit is ``converged=False`` with the solver's
    ``ConvergenceWarning``; NumPy's overflow warnings would only add noise, so they are silenced here.
    A solve that breaks down (``LinAlgError``; ``FloatingPointError`` where a solver finds its
    Newton direction not finite) becomes a ``ValueError`` naming the estimator's parameters
    (scikit-learn's repr shows those changed from their defaults) instead of an exception from
    inside the solver.

    Parameters
    ----------
    estimator : KernelMultilabelEstimator
        The estimator whose parameters the message names.
    """
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            yield
    except (np.linalg.LinAlgError, FloatingPointError) as exc:
        raise ValueError(_breakdown(estimator, exc)) from None


def _breakdown(estimator, exc: Exception) -> str:
    return (f"{estimator!r}: the solver broke down in floating point ({exc}); its regularisation is "
            "outside what float64 resolves on this data (a weight near 0, or a C near the float limit): "
            "choose a value nearer 1 or scale the data")


class KernelMultilabelEstimator(ClassifierMixin, BaseEstimator):
    """Base class: subclasses define ``__init__`` with their hyperparameters (scikit-learn style:
    stored unchanged), ``_fit``, ``_decision`` and optionally ``_decide``."""

    #: the model's table in :mod:`mlsvm.registry` (its solvers, grades and ``"fast"`` rule)
    _registry_model: str | None = None
    #: solvers of a subclass that implements ``_fit`` itself (no registry table yet)
    _solvers: tuple[str, ...] = ("fast", "cvxpy")
    #: docstring entries sibling estimators of one model share (``%(name)s`` lines, see ``_docs.fill``)
    _doc_entries: dict = {}
    #: True for multiclass-only models (1-D y; no multilabel indicator)
    _single_output: bool = False
    #: True when ``_problem`` takes ``gram=None`` for the linear kernel (it reads ``X_fit_``): the
    #: n × n Gram matrix is then not formed at ``fit`` (memory O(nnz(X)) instead of O(n²))
    _linear_without_gram: bool = False

    def __init_subclass__(cls, **kwargs):
        """Fill the shared parameter entries (``%(kernel)s`` …) of the subclass's docstring."""
        super().__init_subclass__(**kwargs)
        if cls.__doc__ and "%(" in cls.__doc__ and cls._registry_model:
            cls.__doc__ = fill(cls.__doc__, cls._registry_model, cls._doc_entries)

    # ---- to implement -------------------------------------------------------------------
    def _problem(self, gram: np.ndarray, Y: np.ndarray):  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_fitted(self, problem, result: SolverResult, evaluation: Evaluation, Y: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        """Multilabel decision from scores; default: label k iff ``f_k > 0``."""
        return (scores > 0).astype(np.int8)

    def _class_scores(self, scores: np.ndarray) -> np.ndarray:
        """Multiclass fit: per-class scores whose argmax is the prediction; default: the scores."""
        return scores

    # ---- shared machinery ---------------------------------------------------------------
    @classmethod
    def solver_names(cls) -> tuple[str, ...]:
        """The values ``solver`` accepts (``"fast"``, the default, first)."""
        return registry.model(cls._registry_model).solver_names() if cls._registry_model else cls._solvers

    def _fit(self, gram: np.ndarray, Y: np.ndarray) -> FitReport:
        """Problem → registry solver → the formulation's own grade → the one report builder."""
        spec = registry.model(self._registry_model)
        problem = self._problem(gram, Y)
        with float_guard(self):
            name, result = registry.run(spec, problem, **self.get_params(deep=False))
            check_finite_point(result.primal, result.dual)
            evaluation = spec.formulation.evaluate(problem, result.primal, result.dual)
            self._set_fitted(problem, result, evaluation, Y)
        return build_report(evaluation, result, self.tol, solver=name)

    def fit(self, X, Y):
        """Fit on ``X`` (n, d) — or an (n, n) Gram matrix with ``kernel="precomputed"`` — and ``Y``:
        an (n, q) {0,1} indicator (multilabel) or a 1-D class vector (multiclass). The fit runs with
        one BLAS thread unless ``MLSVM_BLAS_THREADS`` says otherwise (:mod:`mlsvm.solvers.blas_threads`)."""
        with blas_threads():
            gram, indicator = self._training_data(X, Y)
            self.fit_report_ = self._fit(gram, indicator)
        self.n_iter_ = self.fit_report_.n_iter
        return self

    def _training_data(self, X, Y) -> tuple[np.ndarray, np.ndarray]:
        """Validate the parameters and the data; returns the training Gram matrix and the (n, q)
        {0,1} indicator the formulation's problem is built from (``fit`` and
        :func:`mlsvm.testing.certify` share this path)."""
        check_solver(self.solver, self.solver_names())
        check_scalar(self.tol, "tol", low=0.0, low_open=True)
        if self.max_iter is not None:   # None: each solver's own budget (where an estimator allows it)
            check_scalar(self.max_iter, "max_iter", low=1, integer=True)
        try:   # checked here for every solver, rather than by NumPy inside the one that draws from it
            np.random.default_rng(self.random_state)
        except (TypeError, ValueError):
            raise ValueError(f"random_state must be None, a non-negative int or a numpy Generator; got "
                             f"{self.random_state!r}") from None
        if hasattr(self, "cvxpy_solver"):   # whatever the solver, as the other parameters
            check_backend(self.cvxpy_solver)
        if self._single_output:
            Y = check_class_vector(Y, "y")
        X, target = check_X_Y(X, Y)
        if self.kernel != "precomputed":   # before any route: the linear ones form no Gram matrix to check
            check_row_norms(X)
        given = Y.dtype if issparse(Y) else np.asarray(Y).dtype   # a sparse Y arrives as a dense indicator
        self._indicator_dtype = given.str if given.kind in "biuf" else "|i1"  # predict returns Y's dtype
        gram = self._train_gram(X)
        self._set_target(target)
        return gram, target.Y

    def _set_target(self, target: LabelTarget) -> None:
        self.n_labels_ = target.Y.shape[1]
        self.classes_ = target.classes if target.is_multiclass else np.arange(self.n_labels_)
        self._multiclass = target.is_multiclass

    def _train_gram(self, X: np.ndarray) -> np.ndarray | None:
        self.kernel_ = make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
        self.n_features_in_ = X.shape[1]
        if self.kernel == "precomputed":
            self.X_fit_ = None
            return check_gram(X, "X (precomputed Gram matrix)")
        self.X_fit_ = X
        if self.kernel == "linear" and self._linear_without_gram:
            return None
        gram = self.kernel_(X)
        if self.kernel == "poly" and self.coef0 < 0:  # the only built-in kernel that can be indefinite
            gram = check_gram(gram, "the poly kernel's Gram matrix (coef0 < 0)")
        return gram

    def _test_gram(self, X) -> np.ndarray:
        check_is_fitted(self, "fit_report_")
        if self.kernel == "precomputed":
            gram = check_gram(X, "X (precomputed test Gram matrix)", square=False)
            if gram.shape[1] != self.n_features_in_:
                raise ValueError(f"X (precomputed) must have {self.n_features_in_} columns, one per training sample; got {gram.shape[1]}")
            return gram
        X = check_X(X, "X")
        check_n_features(self, X)
        check_row_norms(X)
        return self.kernel_(X, self.X_fit_)

    def _scores(self, X) -> np.ndarray:
        """The model's outputs ``f_k(x)``, shape (m, q) (one column per label or class)."""
        return self._decision(self._test_gram(X))

    def _linear_scores(self, X) -> np.ndarray:
        """``X coef_ + intercept_`` for a linear-kernel fit that stores ``coef_`` (d, q): no test
        Gram matrix (a subclass's ``_scores`` calls it for ``kernel="linear"``)."""
        check_is_fitted(self, "fit_report_")
        X = check_X(X, "X")
        check_n_features(self, X)
        check_row_norms(X)
        return np.asarray(X @ self.coef_) + self.intercept_

    def _finite_scores(self, X) -> np.ndarray:
        """:meth:`_scores`, or a ``ValueError`` when they overflow float64: a fit at the edge of
        float64 (C = 1e300) can end, not converged, with coefficients near 1e304."""
        with np.errstate(over="ignore", invalid="ignore"):
            scores = self._scores(X)
        if not np.all(np.isfinite(scores)):
            rows = int(np.count_nonzero(~np.all(np.isfinite(scores), axis=1)))
            raise ValueError(
                f"the decision values of X overflow float64 for {rows} row(s): the coefficients of {self!r} "
                f"are too large for float64 (its fit reported converged={self.fit_report_.converged}); refit "
                "with parameters float64 can solve (e.g. a smaller C), or scale X")
        return scores

    def decision_function(self, X) -> np.ndarray:
        """Multilabel fit: the scores ``f_k(x)``, shape (m, q). Multiclass fit: per-class scores
        (m, n_classes); with two classes the 1-D ``s_1 − s_0``, positive for ``classes_[1]``."""
        scores = self._finite_scores(X)
        if not self._multiclass:
            return scores
        scores = self._class_scores(scores)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X) -> np.ndarray:
        """Class labels (multiclass fit: argmax of the per-class scores) or an (m, q) {0,1} indicator."""
        scores = self._finite_scores(X)
        if self._multiclass:
            return self.classes_[np.argmax(self._class_scores(scores), axis=1)]
        return self._decide(scores).astype(np.dtype(self._indicator_dtype), copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = True   # scipy sparse X: kernels.py forms the Gram matrix from CSR
        tags.target_tags.multi_output = not self._single_output
        tags.classifier_tags.multi_label = not self._single_output
        return tags


def check_n_features(estimator, X: np.ndarray) -> None:
    """scikit-learn's wording, which its checks look for.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator (``n_features_in_``).
    X : ndarray
        Input whose number of columns must match.
    """
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
