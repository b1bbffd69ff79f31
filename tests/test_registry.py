"""STYLE rule 5: one parametrized test runs every registered check (every solver of every model
on every built-in reference problem) and grades it with the tolerance table."""

import warnings

import pytest

from mlsvm.verification.registry import all_checks, run_check

CHECKS = all_checks(quick=True)


def test_every_model_registers_checks():
    assert {check.model for check in CHECKS} >= {"binary_svm"}


@pytest.mark.parametrize("check", CHECKS, ids=[f"{c.model}:{c.problem}:{c.formulation}:{c.solver}" for c in CHECKS])
def test_check_passes(check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # convergence warnings are graded by the row itself
        result = run_check(check)
    assert result.passed, result.detail
