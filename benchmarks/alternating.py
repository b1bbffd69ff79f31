"""Helpers of the benchmarks whose sides alternate over rounds: a timed, graded fit, and the medians
and ratios of CPU seconds."""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning


def graded_fit(solve, problem, evaluate):
    """``(CPU seconds, result, evaluation)`` of ``solve(problem)`` graded by ``evaluate(problem,
    primal, dual)``; a ConvergenceWarning is silenced (the result says whether it certified)."""
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solve(problem)
    seconds = time.process_time() - start
    return seconds, result, evaluate(problem, result.primal, result.dual)


def report_case(times: dict, reference: str):
    """Print the medians of ``times`` (side → seconds of each round) and the ratios of ``reference``
    to every other side; return ``(medians, ratios)``."""
    medians = {side: float(np.median(values)) for side, values in times.items()}
    ratios = {side: medians[reference] / medians[side] for side in medians if side != reference}
    print("  medians: " + ", ".join(f"{side} {value:.2f} s" for side, value in medians.items())
          + "; " + ", ".join(f"{reference}/{side} {ratio:.2f}x" for side, ratio in ratios.items()))
    return medians, ratios


def print_summary(summary: list, reference: str, label: str):
    """The closing table: one row ``(name, medians, ratios)`` per problem, from :func:`report_case`."""
    if not summary:
        return
    sides = list(summary[0][1])
    print(f"\n{label} | " + " | ".join(f"{side} s" for side in sides) + " | "
          + " | ".join(f"{reference}/{side}" for side in sides if side != reference))
    for name, medians, ratios in summary:
        print(f"{name} | " + " | ".join(f"{medians[side]:.2f}" for side in sides) + " | "
              + " | ".join(f"{ratios[side]:.2f}x" for side in ratios))
