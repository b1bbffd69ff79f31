"""The ``mlsvm`` command line. Only this module prints.

``mlsvm verify`` runs every registered cross-check (mlsvm/verification/checks/) on the built-in
problems and exits non-zero when any check fails.

Every command first parses and checks its arguments with light imports only (argparse, os,
pathlib, numpy): model names, hyperparameter syntax, every input file (exists, readable, a known
format) and every output (its directory exists and is writable). The heavy modules (scikit-learn,
CVXPY, the estimators) are imported after that, so a mistyped command fails at once and never
after a long fit. Errors are one line on stderr and exit status 2; Ctrl-C exits 130 with one
line. An unexpected exception is one line too (``MLSVM_TRACEBACK=1`` shows its traceback).

A data file with one label column holds class labels: the models fit it as a multiclass problem,
and its metrics are those of the one-hot indicator over the classes (subset accuracy is then the
accuracy).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

__all__ = ["main", "build_parser"]

#: papers of ``mlsvm reproduce`` (the keys of mlsvm.reproduce.PAPERS, which imports scikit-learn)
PAPERS = ("matrix-svm", "mlodm", "ovn", "rank-svm", "sparse-mm")
DATA_SUFFIXES = (".arff", ".npz", ".csv")
DATA_HELP = ("data file: .arff (MULAN, dense or sparse rows; needs --labels), .npz (arrays X, Y; or one "
             "scipy.sparse.save_npz matrix [X | Y] with --labels) or .csv (numeric; the last --labels columns are "
             "the labels). One label column holds class labels (multiclass)")
PARAM_HELP = ("hyperparameters NAME=VALUE (values read as JSON, else text), e.g. --param C=1 kernel=rbf; "
              "repeatable")


class UsageError(Exception):
    """A bad argument, found before any work: one line, exit status 2."""


# ---- names ------------------------------------------------------------------------------------
def _estimator_names() -> list[str]:
    from mlsvm import _ESTIMATORS   # mlsvm/__init__ is light: the table, not the modules

    return list(_ESTIMATORS)


def _check_model_names() -> list[str]:
    """The models ``mlsvm verify`` knows: the modules of mlsvm/verification/checks/, found on disk
    (importing the package would load CVXPY)."""
    import pkgutil

    import mlsvm

    folder = Path(mlsvm.__file__).resolve().parent / "verification" / "checks"
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if not m.name.startswith("_"))


def _spelled(name: str, valid, separator: str, what: str) -> str:
    """``name`` in ``valid``, hyphens and underscores alike (``rank-svm`` = ``rank_svm``)."""
    normal = name.strip().lower().replace("-", separator).replace("_", separator)
    if normal not in valid:
        raise UsageError(f"unknown {what} {name!r}; choose one of {', '.join(valid)}")
    return normal


def _model_name(name: str) -> str:
    valid = _estimator_names()
    if name in valid:
        return name
    folded = {n.lower(): n for n in valid}
    if name.lower() in folded:
        return folded[name.lower()]
    raise UsageError(f"unknown model {name!r}; choose one of {', '.join(valid)}")


# ---- paths ------------------------------------------------------------------------------------
def _input_file(path: str, what: str) -> Path:
    if path == "":
        raise UsageError(f"{what} is empty: give a file name")
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{what} {path} does not exist")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a directory; expected a file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{what} {path} is not readable (permission denied)")
    return path


def _input_dir(path: str, what: str) -> Path:
    if path == "":
        raise UsageError(f"{what} is empty: give a directory")
    folder = Path(path)
    if not folder.is_dir():
        raise UsageError(f"{what} {folder} is not an existing directory")
    return folder


def _data_file(path: str, labels: int | None, what: str) -> Path:
    path = _input_file(path, what)
    suffix = path.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise UsageError(f"{what} {path}: unsupported format {suffix or '(no extension)'!r}; "
                         f"expected {', '.join(DATA_SUFFIXES)}")
    if labels is None and suffix != ".npz":
        raise UsageError(f"{what} {path} needs --labels N: the last N columns/attributes are the labels")
    return path


def _output_file(path: str | None, what: str) -> Path | None:
    if path is None:
        return None
    from mlsvm.persistence import check_writable   # numpy only

    try:
        return check_writable(path)
    except ValueError:
        raise UsageError(f"{what} is empty: give a file name, e.g. {what} model.npz") from None
    except OSError as exc:
        raise UsageError(f"{what}: {exc}") from None


def _output_dir(path: str, what: str) -> Path:
    """A directory to write into: created if needed, and a file tried in it."""
    if path == "":
        raise UsageError(f"{what} is empty: give a directory")
    folder = Path(path)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{what} {folder}: {existing} is not a directory")
    try:   # created now, and a file tried in it: permissions, read-only file systems and root alike
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(f"{what} {folder}: cannot write there ({exc.strerror})") from None
    return folder


def _positive_int(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}; got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}; got {value}")
        return value
    return parse


def _parse_params(items) -> dict:
    """``["C=1", "kernel=rbf"]`` → ``{"C": 1, "kernel": "rbf"}`` (values read as JSON, else text)."""
    params = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param expects NAME=VALUE; got {item!r} (positional arguments go before --param)")
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return params


# ---- heavy part: estimators, data, metrics ------------------------------------------------------
def _estimator(name: str, params: dict):
    import mlsvm

    from mlsvm.estimators._base import check_hyperparameter_names

    cls = getattr(mlsvm, name)
    check_hyperparameter_names(cls, params, UsageError)
    return cls(**params)


def _load(path: Path, labels: int | None):
    """The data of ``path``; ``(data, y)`` with ``y`` the class vector when it has one label column."""
    import numpy as np

    from mlsvm.datasets import load_file

    data = load_file(path, labels)
    if data.Y.shape[1] != 1:
        return data, None
    y = data.Y[:, 0]
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        y = y.astype(np.int64)   # class labels read from a CSV as floats: print them as integers
    return data, y


def _metrics(model, data, y) -> dict:
    """Every metric of ``model`` on ``data``; a multiclass model is scored on one-hot indicators
    over its classes (a class it never saw is a row without a relevant label)."""
    import numpy as np

    from mlsvm.metrics import all_metrics

    predicted = model.predict(data.X)
    scores = model.decision_function(data.X)
    if predicted.ndim == 2:   # multilabel
        if data.Y.shape[1] != predicted.shape[1]:
            raise UsageError(f"the model predicts {predicted.shape[1]} labels; the data has {data.Y.shape[1]} "
                             f"(check --labels)")
        return all_metrics(data.Y, predicted, scores)
    if y is None:
        raise UsageError(f"the model was fitted on class labels (one label column); the data has "
                         f"{data.Y.shape[1]} label columns (check --labels)")
    classes = model.classes_
    if scores.ndim == 1:   # two classes: s_1 − s_0, positive for classes_[1]
        scores = np.column_stack([-0.5 * scores, 0.5 * scores])
    unseen = sorted(set(np.unique(y).tolist()) - set(classes.tolist()))
    if unseen:
        print(f"note: classes {unseen} are not among the model's {classes.tolist()}; those samples "
              f"count as errors", file=sys.stderr)
    truth = (y[:, None] == classes[None, :]).astype(np.int8)
    return all_metrics(truth, (predicted[:, None] == classes[None, :]).astype(np.int8), scores)


def _print_metrics(title: str, values: dict) -> None:
    print(title)
    for key, value in values.items():
        print(f"  {key:20s} {value:.4f}")


def _describe(data, y) -> str:
    import numpy as np

    if y is None:
        return f"{data.X.shape[0]} x {data.X.shape[1]}, {data.Y.shape[1]} labels"
    classes = np.unique(y)
    shown = ", ".join(map(str, classes[:10].tolist())) + (", ..." if classes.size > 10 else "")
    return f"{data.X.shape[0]} x {data.X.shape[1]}, {classes.size} classes ({shown}; multiclass)"


# ---- commands ---------------------------------------------------------------------------------
def _finite(value):
    """JSON has no NaN or infinity: those become null (and tuples lists)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    import numpy as np

    if isinstance(value, np.generic):
        return _finite(value.item())
    return value


def _json(document) -> None:
    json.dump(_finite(document), sys.stdout, indent=1, allow_nan=False, default=str)
    print()


def _format(value, spec: str = ".1e") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _verify(args) -> int:
    models = [_spelled(name, _check_model_names(), "_", "model") for name in args.model or []]
    from mlsvm.verification.registry import all_checks, run_check

    checks = all_checks(quick=not args.full, models=models or None)
    if args.list:
        if args.json:
            _json([{"model": c.model, "problem": c.problem, "formulation": c.formulation, "solver": c.solver}
                   for c in checks])
        else:
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
        _json({"passed": not failed, "n_checks": len(results), "n_failed": len(failed),
               "checks": [r.as_dict() for r in results]})
    else:
        print(f"\n{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not results else 0


def _fit(args) -> int:
    name = _model_name(args.model)
    params = _parse_params(args.param)
    train_path = _data_file(args.train, args.labels, "--train")
    test_path = _data_file(args.test, args.labels, "--test") if args.test is not None else None
    out = _output_file(args.out, "--out")
    for flag, read in (("--train", train_path), ("--test", test_path)):
        if out is not None and read is not None and out.exists() and out.samefile(read):
            raise UsageError(f"--out {out} is the {flag} file: the model would replace the data; choose another name")
    # arguments checked: now the heavy imports and the work
    model = _estimator(name, params)
    from mlsvm.persistence import save_model

    train, y = _load(train_path, args.labels)
    test, y_test = _load(test_path, args.labels) if test_path is not None else (None, None)
    if test is not None and test.X.shape[1] != train.X.shape[1]:
        raise UsageError(f"--test {test_path} has {test.X.shape[1]} features; --train has {train.X.shape[1]}")
    model.fit(train.X, train.Y if y is None else y)
    report = model.fit_report_
    print(f"{name} on {train.name}: {_describe(train, y)}")
    print(f"  solver {report.solver}: primal {report.primal_objective:.8g}, dual {report.dual_objective:.8g}, "
          f"rel. gap {report.relative_gap:.1e}, max KKT {report.max_kkt:.1e}, {report.n_iter} iterations, "
          f"{report.solve_time:.2f} s, converged={report.converged}")
    _print_metrics("training set:", _metrics(model, train, y))
    if test is not None:
        _print_metrics("test set:", _metrics(model, test, y_test))
    if out is not None:
        print(f"saved to {save_model(model, out)}")
    return 0


def _evaluate(args) -> int:
    data_path = _data_file(args.data, args.labels, "DATA")
    if args.saved is not None:
        if args.param:
            raise UsageError("--param applies to --model (cross-validation), not to a --saved model")
        saved = _input_file(args.saved, "--saved")
        from mlsvm.persistence import load_model

        model = load_model(saved)
        data, y = _load(data_path, args.labels)
        _print_metrics(f"{type(model).__name__} ({saved}) on {data.name}:", _metrics(model, data, y))
        return 0
    if args.model is None:
        raise UsageError("evaluate needs --saved MODEL_FILE, or --model NAME for cross-validation")
    name = _model_name(args.model)
    params = _parse_params(args.param)
    _estimator(name, params)   # unknown hyperparameters fail before the data is read
    import numpy as np
    from sklearn.model_selection import KFold, StratifiedKFold

    from mlsvm.progress import progress

    data, y = _load(data_path, args.labels)
    if data.X.shape[0] < args.cv:
        raise UsageError(f"--cv {args.cv} needs at least {args.cv} samples; {data.name} has {data.X.shape[0]}")
    # class labels: stratified folds, so that every fold's training part holds every class
    splitter = (KFold if y is None else StratifiedKFold)(n_splits=args.cv, shuffle=True, random_state=args.seed)
    folds = []
    target = data.Y if y is None else y
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        splits = list(splitter.split(data.X, target))
    if y is not None:   # a class with fewer samples than folds is missing from some training parts
        for train, _ in splits:
            if np.unique(y[train]).size < 2:
                classes, counts = np.unique(y, return_counts=True)
                only = y[train][:1].tolist()[0]
                raise UsageError(f"--cv {args.cv}: a fold's training part holds only class {only!r} "
                                 f"(class sizes: {dict(zip(classes.tolist(), counts.tolist()))}); a classifier "
                                 "needs two classes in every training part (lower --cv, or give the small classes "
                                 "more samples)")
    for train, test in progress(splits, label=f"{args.cv}-fold CV", stream=sys.stderr):
        model = _estimator(name, params).fit(data.X[train], target[train])
        fold = type(data)(data.X[test], data.Y[test], data.feature_names, data.label_names, data.name)
        folds.append(_metrics(model, fold, None if y is None else y[test]))
    kind = "KFold" if y is None else "StratifiedKFold"
    print(f"{name}, {args.cv}-fold CV ({kind}, shuffled, seed {args.seed}) on {data.name}: mean ± std over folds")
    for key in folds[0]:
        values = np.array([fold[key] for fold in folds])
        print(f"  {key:20s} {values.mean():.4f} ± {values.std():.4f}")
    return 0


def _reproduce(args) -> int:
    papers = list(PAPERS) if args.paper.strip().lower() == "all" else [
        _spelled(args.paper, PAPERS, "-", "paper (or 'all')")]
    out_dir = _output_dir(args.out_dir, "--out-dir")
    from mlsvm.progress import progress
    from mlsvm.reproduce import reproduce

    for paper in progress(papers, label="reproduce", stream=sys.stderr):
        out, text = reproduce(paper, out_dir, quick=not args.full)
        print(text)
        print(f"written to {out}")
    return 0


def _bench(args) -> int:
    import mlsvm

    if args.dir is not None:
        folder = Path(args.dir)
        if not folder.is_dir():
            raise UsageError(f"--dir {folder} is not a directory")
    else:
        folder = next((base / "benchmarks" for base in (Path.cwd(), Path(mlsvm.__file__).resolve().parent.parent)
                       if (base / "benchmarks").is_dir()), None)
        if folder is None:
            raise UsageError("no benchmarks/ folder found: run from a checkout of mlsvm or pass --dir")
    available = {script.stem.removeprefix("bench_"): script for script in sorted(folder.glob("bench_*.py"))}
    if not available:
        raise UsageError(f"no bench_*.py script in {folder}")
    names = [_spelled(name, list(available), "_", "benchmark") for name in args.name] or list(available)
    import platform
    import runpy

    import cvxpy
    import numpy
    import scipy
    import sklearn

    print(f"# mlsvm {mlsvm.__version__} bench — {platform.platform()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print(f"# numpy {numpy.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
          f"cvxpy {cvxpy.__version__} ({', '.join(cvxpy.installed_solvers())})")
    for name in names:
        script = available[name]
        print(f"\n## {script.stem}", flush=True)
        saved = sys.argv
        sys.argv = [str(script), *args.args]
        try:
            runpy.run_path(str(script), run_name="__main__")
        finally:
            sys.argv = saved
    return 0


def _export_reference(args) -> int:
    directory = _input_dir(args.directory, "DIR") if args.check else _output_dir(args.directory, "DIR")
    from mlsvm.testing.reference_suite import check_reference, default_cases, export_reference

    if args.check:
        problems = check_reference(directory)
        for problem in problems:
            print(f"FAIL {problem}")
        n_cases = len(list(Path(directory).glob("*/case.json")))
        print(f"{n_cases} cases checked, {len(problems)} problems")
        return 1 if problems else 0
    skipped = []
    records = export_reference(directory, default_cases(), skipped=skipped)
    for record in records:
        print(f"{record['case']:40s} objective {record['primal_objective']:.12g}  gap {_format(record['relative_gap'])}"
              f"  max KKT {_format(max(record['kkt'].values()))}")
    for name, reason in skipped:   # a case that no two backends certify is left out, never written half-true
        print(f"not written (not certified): {name}: {reason}")
    print(f"{len(records)} certified cases written to {directory}, {len(skipped)} left out")
    return 0 if records else 1


def _load_solution(path: Path) -> dict:
    """A solution file: ``.npz`` (one array per name), or ``.json`` (a dict of nested lists)."""
    import numpy as np

    from mlsvm.data import read_npz

    if path.suffix == ".npz":
        return read_npz(path, "solution file", UsageError, " (--solution: one array per name, e.g. np.savez)")
    if path.suffix == ".json":
        try:
            document = json.loads(path.read_text())
        except ValueError as exc:   # UnicodeDecodeError is one
            raise UsageError(f"--solution {path} is not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise UsageError(f"--solution {path}: expected a JSON object mapping names to arrays")
        solution = {}
        for key, value in document.items():
            try:   # the types of the entries are certify's to check, naming each
                solution[key] = np.asarray(value)
            except ValueError:
                raise UsageError(f"--solution {path}: {key!r} is not an array (its rows differ in length)") from None
        return solution
    raise UsageError(f"--solution {path}: expected a .npz or .json file (got {path.suffix or 'no suffix'})")


def _certify(args) -> int:
    case = _input_dir(args.case, "CASE")
    solution_path = _input_file(args.solution, "--solution")
    from mlsvm.testing import certify
    from mlsvm.testing.reference_suite import load_case

    record, X, Y, _ = load_case(case)
    certificate = certify(record["model"], X, Y, _load_solution(solution_path), rtol=args.rtol,
                          **record["hyperparameters"])
    if args.json:
        _json(certificate.as_dict())
    else:
        print(certificate)
    return 0 if certificate.passed else 1


def build_parser() -> argparse.ArgumentParser:
    """The ``mlsvm`` argument parser: one subcommand per command, each with its handler.

    Returns
    -------
    argparse.ArgumentParser
        Parsing only: names and paths are checked by the handlers, before any heavy import.
    """
    models = ", ".join(_estimator_names())
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
                        help=f"only this model (repeatable; rank-svm = rank_svm): {', '.join(_check_model_names())}")
    verify.add_argument("--json", action="store_true",
                        help="print the results (or with --list the checks) as strict JSON (NaN → null)")
    verify.add_argument("--list", action="store_true", help="list the checks without running them")
    verify.set_defaults(handler=_verify)

    fit = commands.add_parser("fit", help="train a model on a data file, print its certificate and metrics, save it",
                              description="Train MODEL on --train, print the fit report (objectives, gap, KKT) "
                                          "and every metric on the training (and --test) data; --out saves it "
                                          "(plain arrays + JSON, no pickle). Every path is checked before training.")
    fit.add_argument("model", metavar="MODEL", help=f"one of {models}")
    fit.add_argument("--train", required=True, help=DATA_HELP)
    fit.add_argument("--test", help="optional test file, same format")
    fit.add_argument("--labels", type=_positive_int(1), help="number of labels (the last columns/attributes)")
    fit.add_argument("--param", action="extend", nargs="+", metavar="NAME=VALUE", help=PARAM_HELP)
    fit.add_argument("--out", help="where to save the fitted model (.npz; written whole or not at all)")
    fit.set_defaults(handler=_fit)

    evaluate = commands.add_parser("evaluate", help="metrics of a saved model on a file, or k-fold CV of a model",
                                   description="With --saved: every metric of a saved model on DATA. With --model: "
                                               "k-fold cross-validation (shuffled KFold; StratifiedKFold for class "
                                               "labels) of a fresh model on DATA.")
    evaluate.add_argument("data", metavar="DATA", help=DATA_HELP)
    evaluate.add_argument("--labels", type=_positive_int(1), help="number of labels (the last columns/attributes)")
    source = evaluate.add_mutually_exclusive_group()
    source.add_argument("--saved", help="a model file written by 'mlsvm fit --out'")
    source.add_argument("--model", help=f"model for cross-validation: {models}")
    evaluate.add_argument("--param", action="extend", nargs="+", metavar="NAME=VALUE", help=PARAM_HELP)
    evaluate.add_argument("--cv", type=_positive_int(2), default=5, help="number of folds (default 5)")
    evaluate.add_argument("--seed", type=_positive_int(0, 2**32 - 1), default=0,   # scikit-learn's seed range
                          help="shuffling seed of the folds (default 0)")
    evaluate.set_defaults(handler=_evaluate)

    reproduce = commands.add_parser("reproduce", help="re-run a paper's experiments and write a markdown report",
                                    description="Re-run the experiments of PAPER that the reference data allows "
                                                "(emotions, yeast; scikit-learn's iris/wine) with the paper's protocol, "
                                                "and write reproduce-PAPER.md: our number, the paper's, the difference "
                                                "and every setting used (including those the paper leaves out).")
    reproduce.add_argument("paper", metavar="PAPER", help=f"one of {', '.join(PAPERS)} or all (rank_svm = rank-svm)")
    reproduce.add_argument("--full", action="store_true", help="the paper's full protocol (default: the quick one)")
    reproduce.add_argument("--out-dir", default=".", help="directory for the report (default: current; created)")
    reproduce.set_defaults(handler=_reproduce)

    bench = commands.add_parser("bench", help="run the ratio benchmarks of benchmarks/ with a machine/version header",
                                description="Run benchmarks/bench_NAME.py (all, or the NAMEs given) one after another. "
                                            "Each prints timings measured side by side in one run and their ratios "
                                            "(hand solver vs CVXPY backends vs scikit-learn). Run by hand, not in CI.")
    bench.add_argument("name", nargs="*", help="benchmark names, e.g. rank_svm matrix-svm (default: all)")
    bench.add_argument("--dir", help="the benchmarks folder (default: ./benchmarks or the checkout's)")
    bench.add_argument("--args", nargs=argparse.REMAINDER, default=[], help="arguments passed on to each script")
    bench.set_defaults(handler=_bench)

    export = commands.add_parser("export-reference", help="write (or --check) the certified reference suite",
                                 description="Write certified instances of every model as .npy arrays plus a "
                                             "case.json each (schema: docs/testing.md), readable without mlsvm; "
                                             "each case agrees on three solvers to 1e-8. --check re-certifies.")
    export.add_argument("directory", metavar="DIR", help="folder to write the cases into (created)")
    export.add_argument("--check", action="store_true", help="re-certify the cases in DIR instead of writing")
    export.set_defaults(handler=_export_reference)

    certify = commands.add_parser("certify", help="grade a solution of a reference case (exit 1 when it fails)",
                                  description="Grade FILE's solution of the reference case CASE (a folder written by "
                                              "export-reference) against mlsvm's exact optimum: suboptimality bound, "
                                              "KKT residuals, feasibility (docs/testing.md).")
    certify.add_argument("case", metavar="CASE", help="a case folder of the reference suite")
    certify.add_argument("--solution", required=True, metavar="FILE",
                         help="the solution: .npz (one array per name) or .json ({name: nested lists})")
    certify.add_argument("--rtol", type=float, default=1e-6, help="the verdict's tolerance (default 1e-6)")
    certify.add_argument("--json", action="store_true", help="the certificate as strict JSON")
    certify.set_defaults(handler=_certify)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr, without the source line of the library that raised them."""
    print(f"mlsvm: {category.__name__}: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Run the ``mlsvm`` command (``verify``, ``fit``, ``evaluate``, ``reproduce``, ``bench``,
    ``export-reference``, ``certify``).

    Parameters
    ----------
    argv : list of str or None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 1 when a check fails (or an unexpected error), 2 on bad
        input, 130 when interrupted (Ctrl-C).
    """
    command = "mlsvm"
    shown = warnings.showwarning
    try:
        args = build_parser().parse_args(argv)
        command = f"mlsvm {args.command}"
        warnings.showwarning = _show_warning
        return args.handler(args)
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:   # e.g. `mlsvm verify | head`: the reader left; nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error at exit
        return 1
    except (UsageError, ValueError, TypeError, OSError) as exc:   # bad input or file: a message, not a traceback
        print(f"{command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - an unexpected failure is still one line (traceback on request)
        # --solver cvxpy whose backend failed is a known outcome, not an unexpected one (the class is
        # looked up where it was raised from: importing CVXPY here would slow every command's start)
        ground_truth = sys.modules.get("mlsvm.solvers.cvxpy_tools")
        if ground_truth is not None and isinstance(exc, ground_truth.GroundTruthError):
            print(f"{command}: {exc}", file=sys.stderr)
            return 1
        if os.environ.get("MLSVM_TRACEBACK"):
            raise
        print(f"{command}: unexpected error: {type(exc).__name__}: {exc} (set MLSVM_TRACEBACK=1 to see the "
              "traceback; please report it)", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = shown   # main() called in-process leaves the caller's warnings as they were


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
