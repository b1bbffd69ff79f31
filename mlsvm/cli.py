"""The ``mlsvm`` command line. Only this module prints.

``mlsvm verify`` runs every registered cross-check (mlsvm/verification/checks/) on the built-in
problems and exits non-zero when any check fails.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

__all__ = ["main"]


def _format(value: float, spec: str = ".1e") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _verify(args) -> int:
    from mlsvm.verification.registry import all_checks, run_check

    checks = all_checks(quick=not args.full, models=args.model or None)
    if args.list:
        for check in checks:
            print(f"{check.model:12s} {check.problem:45s} {check.formulation:28s} {check.solver}")
        return 0
    header = (f"{'model':11s} {'problem':44s} {'formulation':26s} {'solver':17s} {'objective':>13s} "
              f"{'rel.diff':>8s} {'rel.gap':>8s} {'max KKT':>8s} {'time s':>7s}  status")
    if not args.json:
        print(header)
        print("-" * len(header))
    results = []
    for check in checks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_check(check)
        results.append(result)
        if not args.json:
            status = "ok" if result.passed else f"FAIL {result.detail}"
            print(f"{result.model:11s} {result.problem[:44]:44s} {result.formulation[:26]:26s} {result.solver:17s} "
                  f"{_format(result.objective, '13.6g'):>13s} {_format(result.relative_difference):>8s} "
                  f"{_format(result.duality_gap):>8s} {_format(result.max_kkt):>8s} {result.time:7.2f}  {status}",
                  flush=True)
    failed = [r for r in results if not r.passed]
    if args.json:
        json.dump({"passed": not failed, "n_checks": len(results), "n_failed": len(failed),
                   "checks": [r.as_dict() for r in results]}, sys.stdout, indent=1, default=str)
        print()
    else:
        print(f"\n{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not results else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsvm", description="Reference multiclass and multilabel SVMs: verification, fitting, reproduction.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    verify = commands.add_parser(
        "verify", help="cross-check every model and solver against its CVXPY ground truth",
        description="Run every registered cross-check on the built-in problems (synthetic multilabel "
                    "sets, scikit-learn's iris/wine/breast-cancer) and print one row per check: the "
                    "objective, its relative difference to the ground truth, the relative duality gap, "
                    "the largest scaled KKT residual and the time. Exit status 0 only when every check "
                    "passes its tolerance (mlsvm/verification/tolerances.py).")
    scope = verify.add_mutually_exclusive_group()
    scope.add_argument("--quick", action="store_true", help="the small problem set (the default; under a minute)")
    scope.add_argument("--full", action="store_true", help="the larger problem set and more kernels")
    verify.add_argument("--model", action="append", metavar="NAME",
                        help="only this model (repeatable): binary_svm, rank_svm, ovn, sparse_mm, mlodm, matrix_svm")
    verify.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    verify.add_argument("--list", action="store_true", help="list the checks without running them")
    verify.set_defaults(handler=_verify)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
