"""mlsvm: reference multiclass and multilabel support vector machines.

Each model has a CVXPY primal and dual (ground truth, :mod:`mlsvm.formulations`), a hand-written
solver (:mod:`mlsvm.solvers`), a scikit-learn estimator, and cross-checks (:mod:`mlsvm.verification`).
"""

from importlib import import_module

__version__ = "0.1.0"

# Estimators are imported on first use, so ``import mlsvm`` stays light and one model's module
# never depends on another's.
_ESTIMATORS = {
    "RankSVM": "mlsvm.estimators.rank_svm",
    "OvNSVM": "mlsvm.estimators.ovn",
    "SMSVM": "mlsvm.estimators.sparse_mm",
    "SM3L": "mlsvm.estimators.sparse_mm",
    "MLODM": "mlsvm.estimators.mlodm",
    "MatrixSVM": "mlsvm.estimators.matrix_svm",
    "BinaryApproachSVM": "mlsvm.estimators.rank_binary",
    "CategoricalRegressionSVM": "mlsvm.estimators.rank_binary",
}

__all__ = ["__version__", *_ESTIMATORS]


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module 'mlsvm' has no attribute {name!r}")
