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


def _parse_params(items) -> dict:
    """``["C=1", "kernel=rbf"]`` → ``{"C": 1, "kernel": "rbf"}`` (values read as JSON, else text)."""
    params = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"mlsvm: --param expects NAME=VALUE; got {item!r}")
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return params


def _estimator(name: str, params: dict):
    import mlsvm

    if name not in mlsvm._ESTIMATORS:
        raise SystemExit(f"mlsvm: unknown model {name!r}; choose one of {sorted(mlsvm._ESTIMATORS)}")
    cls = getattr(mlsvm, name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise SystemExit(f"mlsvm: bad --param for {name}: {exc}") from None


def _print_metrics(title: str, values: dict) -> None:
    print(title)
    for key, value in values.items():
        print(f"  {key:20s} {value:.4f}")


def _fit(args) -> int:
    from mlsvm.datasets import load_file
    from mlsvm.metrics import all_metrics
    from mlsvm.persistence import save_model

    train = load_file(args.train, args.labels)
    model = _estimator(args.model, _parse_params(args.param)).fit(train.X, train.Y)
    report = model.fit_report_
    print(f"{args.model} on {train.name}: {train.X.shape[0]} x {train.X.shape[1]}, {train.Y.shape[1]} labels")
    print(f"  solver {report.solver}: primal {report.primal_objective:.8g}, dual {report.dual_objective:.8g}, "
          f"rel. gap {report.relative_gap:.1e}, max KKT {report.max_kkt:.1e}, {report.n_iter} iterations, "
          f"{report.solve_time:.2f} s, converged={report.converged}")
    _print_metrics("training set:", all_metrics(train.Y, model.predict(train.X), model.decision_function(train.X)))
    if args.test:
        test = load_file(args.test, args.labels)
        _print_metrics("test set:", all_metrics(test.Y, model.predict(test.X), model.decision_function(test.X)))
    if args.out:
        print(f"saved to {save_model(model, args.out)}")
    return 0


def _evaluate(args) -> int:
    import numpy as np
    from sklearn.model_selection import KFold

    from mlsvm.datasets import load_file
    from mlsvm.metrics import all_metrics
    from mlsvm.persistence import load_model

    data = load_file(args.data, args.labels)
    if args.saved:
        model = load_model(args.saved)
        _print_metrics(f"{type(model).__name__} ({args.saved}) on {data.name}:",
                       all_metrics(data.Y, model.predict(data.X), model.decision_function(data.X)))
        return 0
    if not args.model:
        raise SystemExit("mlsvm: evaluate needs --saved MODEL_FILE, or --model NAME for cross-validation")
    from mlsvm.progress import progress

    folds = []
    splitter = KFold(n_splits=args.cv, shuffle=True, random_state=args.seed)
    for train, test in progress(list(splitter.split(data.X)), label=f"{args.cv}-fold CV", stream=sys.stderr):
        model = _estimator(args.model, _parse_params(args.param)).fit(data.X[train], data.Y[train])
        folds.append(all_metrics(data.Y[test], model.predict(data.X[test]), model.decision_function(data.X[test])))
    print(f"{args.model}, {args.cv}-fold CV (shuffled, seed {args.seed}) on {data.name}: mean ± std over folds")
    for key in folds[0]:
        values = np.array([fold[key] for fold in folds])
        print(f"  {key:20s} {values.mean():.4f} ± {values.std():.4f}")
    return 0


def _reproduce(args) -> int:
    from mlsvm.progress import progress
    from mlsvm.reproduce import PAPERS, reproduce

    papers = sorted(PAPERS) if args.paper == "all" else [args.paper]
    for paper in progress(papers, label="reproduce", stream=sys.stderr):
        out, text = reproduce(paper, args.out_dir, quick=not args.full)
        print(text)
        print(f"written to {out}")
    return 0


def _bench(args) -> int:
    import os
    import platform
    import runpy
    from pathlib import Path

    import cvxpy
    import numpy
    import scipy
    import sklearn

    import mlsvm

    folder = Path(args.dir) if args.dir else next(
        (base / "benchmarks" for base in (Path.cwd(), Path(mlsvm.__file__).resolve().parent.parent)
         if (base / "benchmarks").is_dir()), None)
    if folder is None or not folder.is_dir():
        raise SystemExit("mlsvm: no benchmarks/ folder found: run from a checkout of mlsvm or pass --dir")
    scripts = sorted(folder.glob("bench_*.py"))
    if args.name:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.name]
    if not scripts:
        raise SystemExit(f"mlsvm: no benchmark matches {args.name}; found {[s.stem for s in sorted(folder.glob('bench_*.py'))]}")
    print(f"# mlsvm {mlsvm.__version__} bench — {platform.platform()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print(f"# numpy {numpy.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
          f"cvxpy {cvxpy.__version__} ({', '.join(cvxpy.installed_solvers())})")
    for script in scripts:
        print(f"\n## {script.stem}", flush=True)
        saved = sys.argv
        sys.argv = [str(script), *args.args]
        try:
            runpy.run_path(str(script), run_name="__main__")
        finally:
            sys.argv = saved
    return 0


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

    data_help = ("data file: .arff (MULAN, dense or sparse rows; needs --labels), .npz (arrays X, Y; or one "
                 "scipy.sparse.save_npz matrix [X | Y] with --labels) or .csv (last --labels columns)")
    fit = commands.add_parser("fit", help="train a model on a data file, print its certificate and metrics, save it",
                              description="Train MODEL on --train, print the fit report (objectives, gap, KKT) "
                                          "and every metric on the training (and --test) data; --out saves it "
                                          "(plain arrays + JSON, no pickle).")
    fit.add_argument("model", help="RankSVM, OvNSVM, SMSVM, SM3L, MLODM or MatrixSVM")
    fit.add_argument("--train", required=True, help=data_help)
    fit.add_argument("--test", help="optional test file, same format")
    fit.add_argument("--labels", type=int, help="number of labels (the last columns/attributes)")
    fit.add_argument("--param", action="append", metavar="NAME=VALUE", help="a hyperparameter (repeatable), e.g. C=1 kernel=rbf")
    fit.add_argument("--out", help="where to save the fitted model (.npz)")
    fit.set_defaults(handler=_fit)

    evaluate = commands.add_parser("evaluate", help="metrics of a saved model on a file, or k-fold CV of a model",
                                   description="With --saved: every metric of a saved model on DATA. With --model: "
                                               "k-fold cross-validation (shuffled KFold) of a fresh model on DATA.")
    evaluate.add_argument("data", help=data_help)
    evaluate.add_argument("--labels", type=int, help="number of labels (the last columns/attributes)")
    evaluate.add_argument("--saved", help="a model file written by 'mlsvm fit --out'")
    evaluate.add_argument("--model", help="model name for cross-validation")
    evaluate.add_argument("--param", action="append", metavar="NAME=VALUE", help="a hyperparameter (repeatable)")
    evaluate.add_argument("--cv", type=int, default=5, help="number of folds (default 5)")
    evaluate.add_argument("--seed", type=int, default=0, help="shuffling seed of the folds (default 0)")
    evaluate.set_defaults(handler=_evaluate)

    reproduce = commands.add_parser("reproduce", help="re-run a paper's experiments and write a markdown report",
                                    description="Re-run the experiments of PAPER that the reference data allows "
                                                "(emotions, yeast; scikit-learn's iris/wine) with the paper's protocol, "
                                                "and write reproduce-PAPER.md: our number, the paper's, the difference "
                                                "and every setting used (including those the paper leaves out).")
    reproduce.add_argument("paper", choices=["rank-svm", "ovn", "sparse-mm", "mlodm", "matrix-svm", "all"])
    reproduce.add_argument("--full", action="store_true", help="the paper's full protocol (default: the quick one)")
    reproduce.add_argument("--out-dir", default=".", help="directory for the report (default: current)")
    reproduce.set_defaults(handler=_reproduce)

    bench = commands.add_parser("bench", help="run the ratio benchmarks of benchmarks/ with a machine/version header",
                                description="Run benchmarks/bench_NAME.py (all, or the NAMEs given) one after another. "
                                            "Each prints timings measured side by side in one run and their ratios "
                                            "(hand solver vs CVXPY backends vs scikit-learn). Run by hand, not in CI.")
    bench.add_argument("name", nargs="*", help="benchmark names, e.g. rank_svm matrix_svm (default: all)")
    bench.add_argument("--dir", help="the benchmarks folder (default: ./benchmarks or the checkout's)")
    bench.add_argument("--args", nargs=argparse.REMAINDER, default=[], help="arguments passed on to each script")
    bench.set_defaults(handler=_bench)
    return parser


def main(argv=None) -> int:
    """Run the ``mlsvm`` command (``verify``, ``fit``, ``evaluate``, ``reproduce``, ``bench``).

    Parameters
    ----------
    argv : list of str or None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 1 when a check fails, 2 on bad input.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, FileNotFoundError, TypeError) as exc:   # bad input or file: a message, not a traceback
        print(f"mlsvm {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
