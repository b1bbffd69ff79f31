"""Certify anyone's solver: grade a solution of one of mlsvm's formulations against our exact one.

``certify(model, X, Y, solution, **hyperparameters)`` builds the formulation's problem exactly as
the estimator would (same validation, kernel and constants: SPEC §2), evaluates the given point
with the formulation's own ``evaluate`` (canonical primal objective, and with a dual point the dual
objective and the scaled KKT residuals), solves the same problem with mlsvm's exact solver for a
certified bracket ``[D_ref, P_ref]`` of the optimal value, and states:

* ``suboptimality`` = ``(P_user − D_ref) / max(1, |P_user|, |D_ref|)``: a rigorous bound on how far
  the user's primal value is above the optimum (weak duality; negative beyond the reference's own
  gap means the point is infeasible, i.e. not a point of this problem);
* the user's KKT residuals and dual objective when a dual point is given;
* ``decision_difference``: the largest difference of training decision values to the reference,
  relative to ``max(1, ‖f_ref‖∞)`` (informational: strong convexity makes it about
  ``√suboptimality``, and biases need not be unique).

``solution`` is a dict with the names the formulation's ``evaluate`` reads (its docstring lists
them, e.g. ``{"coef": (n, q)}`` for Matrix-SVM and mLODM, plus the dual variables such as
``{"alpha": ...}`` when a dual point is given). :func:`solution_keys` lists them per model, with
their shapes; a name outside that list, an entry of another shape, or one that is not finite real
numbers is a ``ValueError`` naming it, before anything is graded.
``assert_optimal`` is the pytest form: it raises ``AssertionError`` with the verdict.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mlsvm import registry
from mlsvm.data import check_scalar
from mlsvm.estimators._base import check_hyperparameter_names, float_guard
from mlsvm.formulations.evaluation import relative_gap
from mlsvm.solvers.blas_threads import blas_threads

__all__ = ["Certificate", "certify", "assert_optimal", "estimator_class", "solution_keys"]

#: relative gap the reference solve is asked for (well below any rtol a user asks of their point)
REFERENCE_TOL = 1e-10

#: the names each formulation's ``evaluate`` reads, and their shapes: n training points, q labels
#: (classes for SMSVM), P ranking pairs, d the columns of the linear kernel's features as the
#: problem holds them, m the basis size ``|J|`` (SMSVM/SM3L: the length of ``basis``). A name
#: outside the table would be ignored by ``evaluate`` (and a misspelt primal name would let the dual
#: stand in for it), so it is an error.
_SOLUTION_SHAPES = {
    "matrix_svm": {"coef": ("n", "q"), "W": ("d", "q"), "b": ("q",), "alpha": ("n", "q")},
    "mlodm": {"coef": ("n", "q"), "W": ("d", "q"), "alpha": ("P",), "beta": ("P",)},
    "ovn": {"coef": ("n", "q"), "W": ("d", "q"), "b": ("q",), "Lam": ("n", "q"), "nu": ()},
    "rank_binary": {"coef": ("n", "q"), "b": ("q",), "alpha": ("n", "q"), "lam": ("q",)},
    "rank_svm": {"beta": ("n", "q"), "W": ("d", "q"), "b": ("q",), "alpha": ("P",)},
    # F: the training scores a solver may return beside A (not graded: evaluate recomputes them)
    "sparse_mm": {"coef": ("m", "q"), "basis": ("m",), "W": ("d", "q"), "mu": ("n", "q"), "F": ("n", "q")},
}

#: the primal points each ``evaluate`` grades (a solution holds one of these sets; a set without
#: coefficients — coef, W, beta — takes the primal point the dual implies, and then no coefficients
#: may be given), the names its dual point needs (all of them, or no dual point) and those it may add
#: (OvN's ``nu``; without it, the mean class mass)
_SOLUTION_FORMS = {
    "matrix_svm": ([{"coef"}, {"W"}, set()], {"alpha"}, set()),
    "mlodm": ([{"coef"}, {"W"}, set()], {"alpha", "beta"}, set()),
    "ovn": ([{"coef", "b"}, {"W", "b"}], {"Lam"}, {"nu"}),
    "rank_binary": ([{"coef", "b"}, set()], {"alpha", "lam"}, set()),
    "rank_svm": ([{"beta", "b"}, {"W", "b"}, {"b"}], {"alpha"}, set()),
    "sparse_mm": ([{"coef"}, {"W"}], {"mu"}, set()),
}
_COEFFICIENTS = {"coef", "W", "beta"}


def estimator_class(model):
    """The estimator class of ``model``: a class, an instance, or a name (``"MatrixSVM"``,
    ``"matrix_svm"``, ``"matrix-svm"``; a registry name shared by two estimators is ambiguous).

    Parameters
    ----------
    model : str, class or estimator
        The model.
    """
    import mlsvm

    names = [name for name in mlsvm.__all__ if name != "__version__"]
    if not isinstance(model, str):
        cls = model if isinstance(model, type) else type(model)
        if not any(issubclass(cls, getattr(mlsvm, name)) for name in names):
            raise ValueError(f"model must be an mlsvm estimator ({', '.join(names)}), its class or its name; "
                             f"got {model!r}"[:300])
        return cls
    if model in names:
        return getattr(mlsvm, model)
    key = registry.normalize_model_name(model)
    matches = [getattr(mlsvm, name) for name in names if getattr(mlsvm, name)._registry_model == key
               or name.lower() == key.replace("_", "")]
    if len(matches) != 1:
        raise ValueError(f"model must name one estimator ({', '.join(names)}) or its registry model "
                         f"({', '.join(registry.MODEL_NAMES)}); got {model!r}"
                         + (f", which names {len(matches)} estimators" if matches else ""))
    return matches[0]


@dataclass
class Certificate:
    """The verdict on one solution (module docstring). ``passed`` is the verdict at ``rtol``.

    Parameters
    ----------
    model : str
        Model name.
    rtol : float
        The bar of the verdict.
    primal_objective : float
        Primal objective of the solution.
    infeasibility : float
        Its largest scaled constraint violation.
    dual_objective : float
        Dual objective of its dual point (NaN without one).
    kkt : dict
        Scaled KKT residuals of the solution.
    reference_primal : float
        Primal objective of the reference solve.
    reference_dual : float
        Dual objective of the reference solve.
    reference_solver : str
        The reference solver.
    suboptimality : float
        Relative distance of the solution's objective above the reference bracket.
    decision_difference : float
        Largest difference of the decision values to the reference's.
    failures : list of str
        Why the verdict failed (empty when passed).
    """

    model: str
    rtol: float
    primal_objective: float
    infeasibility: float
    dual_objective: float
    kkt: dict
    reference_primal: float
    reference_dual: float
    reference_solver: str
    suboptimality: float
    decision_difference: float
    failures: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def reference_gap(self) -> float:
        return float(relative_gap(self.reference_primal, self.reference_dual))

    def as_dict(self) -> dict:
        """Plain floats and strings; non-finite numbers as ``None`` (strict JSON)."""
        def clean(value):
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, list):
                return [clean(v) for v in value]
            if isinstance(value, float) and not math.isfinite(value):
                return None
            return value
        return clean({**asdict(self), "passed": self.passed, "reference_gap": self.reference_gap})

    def __str__(self) -> str:
        verdict = "OPTIMAL" if self.passed else "NOT OPTIMAL"
        lines = [f"{self.model}: {verdict} at rtol {self.rtol:.0e}"]
        lines += [f"  FAILED: {failure}" for failure in self.failures]
        lines.append(f"  your primal objective   {self.primal_objective:.12g}")
        lines.append(f"  optimum lies in         [{self.reference_dual:.12g}, {self.reference_primal:.12g}]"
                     f"  ({self.reference_solver}, relative gap {self.reference_gap:.1e})")
        lines.append(f"  suboptimality (bound)   {self.suboptimality:.2e}")
        if math.isfinite(self.dual_objective):
            lines.append(f"  your dual objective     {self.dual_objective:.12g}")
        if self.kkt:
            worst = max(self.kkt, key=self.kkt.get)
            lines.append(f"  your largest KKT residual {self.kkt[worst]:.2e} ({worst})")
        lines.append(f"  decision values differ  {self.decision_difference:.2e} (relative, informational)")
        return "\n".join(lines)


def solution_keys(model) -> dict:
    """The names :func:`certify` accepts in a solution of ``model`` and their shapes, e.g.
    ``{"coef": "(n, q)", "alpha": "(n, q)", ...}`` for Matrix-SVM (n training points, q labels or
    classes, P ranking pairs, d feature columns of the linear kernel's problem, m = ``|J|``).

    Parameters
    ----------
    model : str, class or estimator
        The model.
    """
    shapes = _SOLUTION_SHAPES[estimator_class(model)._registry_model]
    return {name: "(" + ", ".join(shape) + ("," if len(shape) == 1 else "") + ")" for name, shape in shapes.items()}


def _checked_solution(solution, cls, problem, n_labels: int) -> dict:
    """The user's solution as finite float64 arrays of the shapes :func:`solution_keys` lists;
    a ``ValueError`` (``TypeError`` for a solution that is not a mapping) naming the entry
    otherwise. Without it NumPy's broadcasting or shape errors surfaced from ``evaluate``, a
    misspelt name was ignored, and an array with extra unit dimensions could be graded."""
    if not isinstance(solution, Mapping):
        raise TypeError(f"solution must be a dict of named arrays; got {type(solution).__name__}")
    shapes = _SOLUTION_SHAPES[cls._registry_model]
    unknown = [key for key in solution if key not in shapes]
    if unknown:
        raise ValueError(f"solution has {', '.join(map(repr, unknown))}, which {cls.__name__} does not read; "
                         f"it reads {solution_keys(cls)}")
    primal_forms, dual_names, optional = _SOLUTION_FORMS[cls._registry_model]
    given = set(solution)
    if given & (dual_names | optional) and not dual_names <= given:
        raise ValueError(f"solution's dual point needs all of {sorted(dual_names)}; "
                         f"{sorted(dual_names - given)} missing")
    if not any(form <= given and (form & _COEFFICIENTS or (dual_names <= given and not given & _COEFFICIENTS))
               for form in primal_forms):
        forms = " or ".join(str(sorted(form)) for form in primal_forms if form)
        raise ValueError(f"solution must hold a primal point {forms} of {cls.__name__}"
                         + (f", or a dual point {sorted(dual_names)}" if set() in primal_forms else "")
                         + f"; got {sorted(given)}")
    arrays = {}
    for key, value in solution.items():
        if key == "W" and given & {"coef", "beta"}:
            continue   # evaluate grades W only without the coefficients over the training points
        try:
            array = np.asarray(value)
            if array.dtype.kind not in "biuf":
                raise TypeError
            arrays[key] = array.astype(np.float64)
        except (TypeError, ValueError):
            kind = getattr(value, "dtype", None) or type(value).__name__
            raise ValueError(f"solution[{key!r}] must be an array of real numbers; got {kind}") from None
        if not np.all(np.isfinite(arrays[key])):
            raise ValueError(f"solution[{key!r}] holds NaN or infinite entries: it is not a point of the problem")
    features = getattr(problem, "features", None)
    gram = getattr(problem, "gram", None)
    sizes = {"n": (gram.shape[0] if gram is not None else features.shape[0]), "q": n_labels}
    if hasattr(problem, "pairs"):
        sizes["P"] = problem.pairs.n_pairs
    if features is not None:
        sizes["d"] = features.shape[1]
    if "basis" in arrays:
        basis = arrays["basis"]
        if basis.ndim != 1 or not np.array_equal(basis, np.round(basis)) or basis.size == 0 \
                or basis.min() < 0 or basis.max() >= sizes["n"] or np.unique(basis).size != basis.size:
            raise ValueError(f"solution['basis'] must list distinct training-point indices in 0..{sizes['n'] - 1}")
        sizes["m"] = basis.size
    elif cls._registry_model == "sparse_mm":
        sizes["m"] = problem.basis.size if problem.basis is not None else sizes["n"]
    for key, array in arrays.items():
        if any(symbol not in sizes for symbol in shapes[key]):
            raise ValueError(f"solution[{key!r}] needs the linear kernel's features (kernel='linear')")
        expected = tuple(sizes[symbol] for symbol in shapes[key])
        if array.shape != expected and array.size == math.prod(expected) and array.ndim < len(expected) \
                and expected[-1:] == (1,):   # one label or class: (n,) for (n, 1), a scalar for (1,)
            array = arrays[key] = array.reshape(expected)
        if array.shape != expected:
            raise ValueError(f"solution[{key!r}] must have shape {solution_keys(cls)[key]} = {expected}; "
                             f"got {array.shape}")
    return arrays


def _split(solution: dict, dual_names) -> tuple[dict, dict | None]:
    """The checked solution split into the primal and dual dicts ``evaluate`` reads (the dual names
    are those of the reference solver's dual point)."""
    primal, dual = {}, {}
    for key, value in solution.items():
        (dual if key in dual_names else primal)[key] = value
    return primal, (dual or None)


def _solve_reference(spec, problem, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # the bracket is valid regardless
        return registry.run(spec, problem, **params)


def certify(model, X, Y, solution: dict, *, rtol: float = 1e-6, **hyperparameters) -> Certificate:
    """Grade ``solution`` for ``model`` on ``(X, Y)`` with ``hyperparameters`` (module docstring).

    ``model``: an estimator name, class or instance (its parameters are taken when no
    hyperparameters are given). ``rtol``: the bar of the verdict for the suboptimality and, with a
    dual point, for every scaled KKT residual.

    Parameters
    ----------
    model : str, class or estimator
        The model.
    X : array of shape (n, d)
        Feature matrix.
    Y : array of shape (n, q)
        Label indicator in {0, 1}.
    solution : dict
        The solution's named primal (and optionally dual) arrays.
    rtol : float
        The bar of the verdict.
    **hyperparameters
        The model's hyperparameters (default: those of an estimator instance).
    """
    check_scalar(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True,
                 explain="The verdict's relative tolerance")
    cls = estimator_class(model)
    params = model.get_params(deep=False) if not isinstance(model, (str, type)) else {}
    check_hyperparameter_names(cls, hyperparameters)
    params.update(hyperparameters)
    estimator = cls(**params)
    gram, indicator = estimator._training_data(X, Y)
    spec = registry.model(cls._registry_model)
    problem = estimator._problem(gram, indicator)
    primal, dual = _split(_checked_solution(solution, cls, problem, indicator.shape[1]), spec.dual_names)
    with blas_threads(), float_guard(estimator):   # a point far off overflows: inf and NaN fail below
        user = spec.formulation.evaluate(problem, primal, dual)
        # a point may fix part of the problem itself (SMSVM/SM3L: its basis J): the reference then
        # solves the problem the point is graded on, with the formulation's CVXPY dual
        graded = user.extra.get("problem", problem)
        solver = "fast" if graded is problem else "cvxpy"
        run_params = estimator.get_params(deep=False) | {"solver": solver, "tol": REFERENCE_TOL}
        reference_name, reference = _solve_reference(spec, graded, run_params)
        reference_eval = spec.formulation.evaluate(graded, reference.primal, reference.dual)
        if reference_eval.extra.get("problem", graded) is not graded:
            # the fast solver chose its own basis (SMSVM/SM3L's greedy selection): its bracket bounds
            # that restricted problem, not the one the point is graded on; CVXPY solves the latter
            reference_name, reference = _solve_reference(spec, graded, run_params | {"solver": "cvxpy"})
            reference_eval = spec.formulation.evaluate(graded, reference.primal, reference.dual)
    p_user, d_ref = user.primal_objective, reference_eval.dual_objective
    suboptimality = float(relative_gap(p_user, d_ref))
    reference_slack = max(abs(reference_eval.relative_gap), 1e-12)
    scores, reference_scores = user.extra.get("scores"), reference_eval.extra.get("scores")
    difference = float("nan")
    if scores is not None and reference_scores is not None:
        scale = max(1.0, float(np.max(np.abs(reference_scores))) if reference_scores.size else 1.0)
        difference = float(np.max(np.abs(scores - reference_scores))) / scale if scores.size else 0.0

    failures = []
    if not (math.isfinite(d_ref) and math.isfinite(reference_eval.primal_objective)):
        # no bracket, no certificate (NaN would pass every comparison below unnoticed)
        failures.append(f"mlsvm's reference solve gave no finite bracket of the optimum "
                        f"[{d_ref}, {reference_eval.primal_objective}] at these hyperparameters")
    if not user.infeasibility <= rtol:
        failures.append(f"the primal point violates its constraints by {user.infeasibility:.2e} "
                        f"(scaled) > rtol {rtol:.0e}: infeasible")
    if not math.isfinite(p_user):
        failures.append(f"primal objective is {p_user}")
    elif not suboptimality <= rtol:
        failures.append(f"suboptimality {suboptimality:.2e} > rtol {rtol:.0e}: the primal objective is "
                        f"above the certified optimum's lower bound by that much")
    elif suboptimality < -reference_slack - rtol:
        failures.append(f"primal objective below the certified lower bound (suboptimality "
                        f"{suboptimality:.2e}): the point is infeasible for this problem")
    if dual is not None:
        d_user = user.dual_objective
        dual_excess = float(relative_gap(reference_eval.primal_objective, d_user))
        if not math.isfinite(d_user):
            failures.append(f"dual objective is {d_user}")
        elif dual_excess < -reference_slack - rtol:
            failures.append(f"dual objective {d_user:.12g} above the certified upper bound "
                            f"{reference_eval.primal_objective:.12g}: the dual point is infeasible")
        for name, value in user.kkt.items():
            if not value <= rtol:
                failures.append(f"KKT {name} residual {value:.2e} > rtol {rtol:.0e}")
    return Certificate(
        model=cls.__name__, rtol=rtol, primal_objective=float(p_user), infeasibility=float(user.infeasibility),
        dual_objective=float(user.dual_objective), kkt=dict(user.kkt),
        reference_primal=float(reference_eval.primal_objective), reference_dual=float(d_ref),
        reference_solver=f"mlsvm {reference_name}", suboptimality=suboptimality,
        decision_difference=difference, failures=failures)


def assert_optimal(model, X, Y, solution: dict, rtol: float = 1e-6, **hyperparameters) -> Certificate:
    """:func:`certify`, raising ``AssertionError`` with the verdict when it fails (for pytest).

    Parameters
    ----------
    model : str, class or estimator
        The model.
    X : array of shape (n, d)
        Feature matrix.
    Y : array of shape (n, q)
        Label indicator in {0, 1}.
    solution : dict
        The solution's named primal (and optionally dual) arrays.
    rtol : float
        The bar of the verdict.
    **hyperparameters
        The model's hyperparameters.
    """
    certificate = certify(model, X, Y, solution, rtol=rtol, **hyperparameters)
    if not certificate.passed:
        raise AssertionError(str(certificate))
    return certificate
