"""mlsvm.model_selection: grid search serial = loky = Dask (a LocalCluster on loopback), mlsvm
metrics as scorers, the CV splitter, and the papers' grids as data."""

import numpy as np
import pytest
from sklearn.model_selection import KFold, ParameterGrid, StratifiedKFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC, LinearSVC

import mlsvm
from mlsvm.datasets import make_multiclass, make_multilabel
from mlsvm.metrics import hamming_loss, ranking_loss
from mlsvm.model_selection import PAPER_GRIDS, grid_search, make_cv, metric_scorer, paper_grid

SVC_GRID = {"C": [0.1, 1.0, 10.0], "gamma": [0.05, 0.5, 5.0]}
OVR_GRID = {"estimator__C": [0.01, 0.1, 1.0]}


@pytest.fixture(scope="module")
def multiclass():
    return make_multiclass(60, 3, 3, random_state=0)


@pytest.fixture(scope="module")
def multilabel():
    data = make_multilabel(60, 4, 3, random_state=1)
    return data.X, data.Y


@pytest.fixture
def dask_client(request):
    """A Dask cluster bound to 127.0.0.1 (tcp; dashboard off), closed after the test.

    Indirect parameter ``(processes, n_workers, threads_per_worker)``, default ``(False, 2, 1)``.
    ``processes=True`` puts the worker in its own process, so every task crosses a process
    boundary as on a real cluster. Two worker threads in all, at least: with a single one, joblib
    takes n_jobs = 1 and runs every fit locally (see test_single_thread_cluster_warns...)."""
    distributed = pytest.importorskip("distributed", reason='Dask is the optional extra "mlsvm[dask]"')
    processes, n_workers, threads_per_worker = getattr(request, "param", (False, 2, 1))
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=processes,
                                       dashboard_address=None, host="127.0.0.1", protocol="tcp://")
    client = distributed.Client(cluster)
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    assert all(address.startswith("tcp://127.0.0.1:") for address in client.scheduler_info()["workers"])
    yield client
    client.close()
    cluster.close()


def _assert_same_search(a, b):
    assert a.best_params_ == b.best_params_
    for key in a.cv_results_:
        if key.startswith(("split", "mean_test", "std_test", "rank_test", "param")):
            np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key], err_msg=key)


def _run_counting_dask_tasks(client, run):
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        result = run()
    return result, len(stream.data)


@pytest.mark.parametrize("dask_client", [(False, 2, 1), (True, 1, 2)], indirect=True, ids=["in-process", "worker-process"])
def test_dask_equals_serial(dask_client, multiclass):
    X, y = multiclass
    serial = grid_search(SVC(), SVC_GRID, X, y, cv=3)
    dask, n_tasks = _run_counting_dask_tasks(
        dask_client, lambda: grid_search(SVC(), SVC_GRID, X, y, cv=3, backend="dask", n_jobs=-1))
    assert n_tasks > 0  # the fits really ran on the cluster
    _assert_same_search(serial, dask)
    np.testing.assert_array_equal(serial.best_estimator_.decision_function(X), dask.best_estimator_.decision_function(X))


@pytest.mark.parametrize("dask_client", [(False, 1, 1)], indirect=True, ids=["one-thread"])
def test_single_thread_cluster_warns_that_joblib_runs_locally(dask_client, multiclass):
    X, y = multiclass
    with pytest.warns(RuntimeWarning, match="single worker thread"):
        dask, n_tasks = _run_counting_dask_tasks(
            dask_client, lambda: grid_search(SVC(), SVC_GRID, X, y, cv=3, backend="dask", n_jobs=-1))
    assert n_tasks == 0  # what the warning says: nothing went to the cluster
    _assert_same_search(grid_search(SVC(), SVC_GRID, X, y, cv=3), dask)


def test_dask_multilabel_with_an_mlsvm_metric(dask_client, multilabel):
    X, Y = multilabel
    estimator = OneVsRestClassifier(LinearSVC())
    serial = grid_search(estimator, OVR_GRID, X, Y, cv=3, scoring="hamming_loss")
    dask = grid_search(estimator, OVR_GRID, X, Y, cv=3, scoring="hamming_loss", backend="dask", n_jobs=-1)
    _assert_same_search(serial, dask)
    # independent reference: refit every fold by hand and score with mlsvm.metrics
    best = serial.best_params_["estimator__C"]
    losses = []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        model = OneVsRestClassifier(LinearSVC(C=best)).fit(X[train], Y[train])
        losses.append(hamming_loss(Y[test], model.predict(X[test])))
    assert serial.best_score_ == pytest.approx(-np.mean(losses), rel=1e-12, abs=1e-15)


def test_joblib_threads_equal_serial(multiclass):
    """The local backends go through the same ``joblib.parallel_backend`` path; threads keep the test cheap
    (loky's worker processes cost seconds to start; the Dask worker-process test covers pickling)."""
    X, y = multiclass
    _assert_same_search(grid_search(SVC(), SVC_GRID, X, y, cv=3),
                        grid_search(SVC(), SVC_GRID, X, y, cv=3, backend="threading", n_jobs=2))


def test_dask_without_a_client_says_what_to_do(multiclass):
    pytest.importorskip("distributed")
    from distributed import get_client

    with pytest.raises(ValueError):
        get_client()  # precondition: no client left over from another test
    X, y = multiclass
    with pytest.raises(ValueError, match="active distributed.Client"):
        grid_search(SVC(), SVC_GRID, X, y, backend="dask")


def test_ranking_metric_scorer_uses_decision_function(multilabel):
    X, Y = multilabel
    model = OneVsRestClassifier(LinearSVC(C=0.1)).fit(X, Y)
    scorer = metric_scorer("ranking_loss")
    assert scorer(model, X, Y) == -ranking_loss(Y, model.decision_function(X))
    assert metric_scorer("micro_f1")(model, X, Y) > 0  # gains keep their sign


def test_sklearn_scoring_names_pass_through(multiclass):
    X, y = multiclass
    search = grid_search(SVC(), {"C": [1.0]}, X, y, cv=3, scoring="balanced_accuracy")
    assert 0.0 < search.best_score_ <= 1.0


def test_cv_splitters():
    y = np.arange(30) % 3
    Y = np.eye(3, dtype=int)[y]
    assert isinstance(make_cv(y, 5), StratifiedKFold) and make_cv(y, 5).shuffle
    assert isinstance(make_cv(Y, 4), KFold) and make_cv(Y, 4).n_splits == 4
    splitter = KFold(2)
    assert make_cv(Y, splitter) is splitter
    folds = [(np.arange(10), np.arange(10, 30))]
    assert make_cv(Y, folds) is folds


@pytest.mark.parametrize("call, message", [
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, backend="ray"), "backend must be one of"),
    (lambda X, y: grid_search(SVC(), {}, X, y), "param_grid"),
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, cv=1), "at least 2"),
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, cv=2.5), "cv must be"),
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, cv=None), "cv must be"),
    (lambda X, y: metric_scorer("accuracy_of_nothing"), "scoring must be one of"),
    # before: scikit-learn's InvalidParameterError listing only its own scorers, and joblib's
    # "n_jobs == 0 in Parallel has no meaning"
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, scoring="accuracy_of_nothing"),
     r"scoring must be one of mlsvm's metrics \['hamming_loss'.* or a scikit-learn scorer"),
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, n_jobs=0), "n_jobs must be None, a positive number"),
    (lambda X, y: grid_search(SVC(), SVC_GRID, X, y, n_jobs=1.5), "n_jobs must be None"),
    (lambda X, y: paper_grid("svm-light"), "model must be one of"),
])
def test_bad_input(multiclass, call, message):
    with pytest.raises(ValueError, match=message):
        call(*multiclass)


def test_failed_fits_raise_instead_of_scoring_nan(multiclass):
    X, y = multiclass
    with pytest.raises(ValueError, match="C"):
        grid_search(SVC(), {"C": [-1.0]}, X, y, cv=3)


# ---- the papers' grids -----------------------------------------------------------------------

def test_mlodm_grid_is_the_papers():
    """§6.1.3: C ∈ {2^-2, …, 2^10}, γ ∈ {2^-10, …, 2^2}, θ, μ ∈ {0.1, …, 0.9}; 5-fold CV."""
    grid = PAPER_GRIDS["mlodm"]
    assert grid.searched["C"] == tuple(2.0 ** e for e in range(-2, 11))
    assert grid.searched["C"][0] == 0.25 and grid.searched["C"][-1] == 1024.0
    assert grid.searched["gamma"][0] == 2.0 ** -10 and grid.searched["gamma"][-1] == 4.0
    assert grid.searched["theta"] == grid.searched["mu"] == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    assert grid.n_candidates == 13 * 13 * 9 * 9 == len(ParameterGrid(paper_grid("mlodm")))
    assert "5-fold" in grid.protocol


def test_matrix_svm_settings_are_fixed_as_stated():
    grid = PAPER_GRIDS["matrix_svm"]
    assert grid.searched == {} and grid.fixed == {"C": 1.0, "kernel": "rbf", "gamma": 0.3}
    assert paper_grid("matrix_svm") == {"C": [1.0], "kernel": ["rbf"], "gamma": [0.3]}


def test_unstated_settings_are_said_so():
    assert "C" in PAPER_GRIDS["rank_svm"].not_stated
    assert PAPER_GRIDS["rank_svm"].searched["degree"] == tuple(range(2, 10))
    assert {"alpha", "beta"} <= set(PAPER_GRIDS["ovn"].not_stated)
    for grid in PAPER_GRIDS.values():
        assert grid.source and grid.protocol


#: hyperparameter names of SPEC §4, per estimator
SPEC_NAMES = {
    "RankSVM": {"C"}, "OvNSVM": {"alpha", "beta", "w_constraint", "b_constraint", "gamma_b"},
    "SMSVM": {"lam", "d_max", "kappa", "R"}, "SM3L": {"lam", "d_max", "kappa", "R"},
    "MLODM": {"C", "theta", "mu"}, "MatrixSVM": {"C", "correlation", "loss"},
}
COMMON = {"kernel", "gamma", "degree", "coef0", "solver", "tol", "max_iter", "random_state"}


@pytest.mark.parametrize("model", sorted(PAPER_GRIDS))
def test_grid_names_are_the_estimators_hyperparameters(model):
    grid = PAPER_GRIDS[model]
    assert set(paper_grid(model)) <= SPEC_NAMES[grid.estimator] | COMMON
    try:
        estimator = getattr(mlsvm, grid.estimator)()
    except (ImportError, AttributeError):
        return  # that model's estimator is not on this branch yet: the SPEC names above are the contract
    assert set(paper_grid(model)) <= set(estimator.get_params())


def test_progress_on_a_terminal_counts_candidates_and_changes_no_result(multiclass):
    import io
    import pickle

    from sklearn.model_selection import GridSearchCV

    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    X, y = multiclass
    terminal, log = FakeTTY(), io.StringIO()
    shown = grid_search(SVC(), SVC_GRID, X, y, cv=3, progress=terminal)
    plain = grid_search(SVC(), SVC_GRID, X, y, cv=3, progress=log)
    _assert_same_search(plain, shown)
    assert "grid search [" in terminal.getvalue() and "9/9 100%" in terminal.getvalue()
    assert log.getvalue() == "" and type(plain) is GridSearchCV
    assert pickle.loads(pickle.dumps(shown)).best_params_ == shown.best_params_  # no stream left inside


def test_paper_grids_are_read_only():
    with pytest.raises(TypeError):
        PAPER_GRIDS["smsvm"].fixed["kappa"] = 50
    grid = paper_grid("smsvm")
    grid["kappa"].append(50)  # the returned grid is the caller's copy
    assert paper_grid("smsvm")["kappa"] == [25]
