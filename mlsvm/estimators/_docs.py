"""Parameter descriptions the estimators share, written once.

An estimator's docstring names a shared entry by a line ``%(name)s`` in its ``Parameters``
section; :func:`fill` replaces the line by the entry, indented like the line. ``%(solver)s`` is
generated from the model's registry table (:mod:`mlsvm.registry`), so the docstring lists exactly
the solvers the estimator accepts, with the registry's own one-line summaries.
"""

from __future__ import annotations

import re
import textwrap

from mlsvm import registry
from mlsvm.kernels import KERNEL_PARAMETERS
from mlsvm.solvers.cvxpy_tools import BACKENDS

__all__ = ["SHARED", "fill", "solver_entry"]

SHARED = {
    "kernel": KERNEL_PARAMETERS,
    "tol": '''\
tol : float
    Tolerance of the certificate: the fit is ``converged`` when the formulation's recomputed
    relative duality gap and scaled KKT residuals are all ≤ ``tol`` (the solvers stop on it).''',
    "max_iter": '''\
max_iter : int
    Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the values reached.''',
    "random_state": '''\
random_state : int, Generator or None
    Seed of the randomised parts of the solver (sweep order, candidate sets); the deterministic
    solvers ignore it.''',
    "cvxpy_solver": f'''\
cvxpy_solver : {{{", ".join(f'"{name}"' for name in BACKENDS)}}}
    Backend of ``solver="cvxpy"``. Only that backend runs: an answer other than ``optimal`` is
    reported with ``converged=False`` and a ``ConvergenceWarning`` when it comes with a point,
    and raises :class:`~mlsvm.solvers.cvxpy_tools.GroundTruthError` (naming the other backends)
    when it does not.''',
}


def solver_entry(model: str) -> str:
    """The ``solver`` parameter of a model's estimator, from its registry table.

    Parameters
    ----------
    model : str
        The model's registry name (e.g. ``"ovn"``).
    """
    spec = registry.model(model)
    names = ", ".join(f'"{name}"' for name in spec.solver_names())
    items = [f'``"fast"`` (the default): {spec.fast_summary}.']
    for name, solver in spec.solvers.items():
        certified = " Certified only: graded on the gap it certifies itself." if solver.grade == registry.CERTIFIED else ""
        items.append(f'``"{name}"``: {solver.summary}.{certified}')
    items.append("``fit_report_.solver`` names the solver that ran.")
    wrapped = (textwrap.fill(item, width=96, initial_indent="    ", subsequent_indent="    ") for item in items)
    return "\n".join([f"solver : {{{names}}}", *wrapped])


def fill(docstring: str, model: str, extra: dict | None = None) -> str:
    """Replace each ``%(name)s`` line of ``docstring`` by the shared entry, at the line's indent.

    Parameters
    ----------
    docstring : str
        A class docstring with placeholder lines.
    model : str
        The model's registry name, for the ``solver`` entry.
    extra : dict or None
        Further entries, e.g. the parameters sibling estimators of one model share.
    """
    entries = {**SHARED, "solver": solver_entry(model), **(extra or {})}

    def replace(match: re.Match) -> str:
        indent, name = match.group(1), match.group(2)
        if name not in entries:
            raise KeyError(f"no shared docstring entry {name!r}; known: {sorted(entries)}")
        return "\n".join(indent + line if line else line for line in entries[name].splitlines())

    return re.sub(r"^([ \t]*)%\((\w+)\)s[ \t]*$", replace, docstring, flags=re.MULTILINE)
