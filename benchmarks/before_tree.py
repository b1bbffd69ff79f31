"""The ``--before PATH`` side of the benchmarks that compare a solver file with another tree's."""

from __future__ import annotations

import importlib.util
import os


def solver_from_tree(tree: str, module: str, function: str):
    """``function`` of ``tree/mlsvm/solvers/<module>.py``, loaded beside this tree's package (so only
    that file differs; e.g. ``git archive main mlsvm`` unpacked in ``tree``)."""
    path = os.path.join(tree, "mlsvm", "solvers", f"{module}.py")
    spec = importlib.util.spec_from_file_location(f"before_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return getattr(loaded, function)
