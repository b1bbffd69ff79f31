"""Tan, Tan, Jiang & Zhou, mLODM on emotions and yeast (Table 2)."""

from __future__ import annotations

import numpy as np

from sklearn.preprocessing import MinMaxScaler

from mlsvm.datasets import load_emotions, load_yeast
from mlsvm.reproduce import Row, evaluate_split

TITLE = "Tan, Tan, Jiang & Zhou, mLODM — Table 2 (emotions, yeast)"

PROTOCOL = """
The paper trains with an RBF kernel, selects C, γ, θ, μ from grids by cross-validation on the
training part, and reports ranking loss, Hamming loss, one-error and average precision (×100) on
the test part; emotions uses a 391/202 split that does not ship with the data.

Our choices: yeast uses the standard 1500/917 split; emotions a seeded random 391/202 split
(numpy seed 0). Features are scaled to [0, 1] on the training part (paper §6.1). The paper's full
grid (C × γ × θ × μ = 13,689 settings × 5 folds) is too slow here; the hyperparameters below were
selected by 3-fold CV over the smaller grids `TABLE2_GRIDS` of `benchmarks/bench_mlodm.py`
(ranking loss; yeast cross-validated on a seeded 500-instance subsample), and this report refits
them: emotions C = 4, γ = 2⁻¹, θ = 0.1, μ = 0.5; yeast C = 4, γ = 2⁻¹, θ = 0.5, μ = 0.1. Quick and
full protocols are the same. Numbers are reported ×100 like the paper.
"""

#: Table 2, mLODM column: ranking loss, Hamming loss, one-error, average precision (×100)
PAPER = {"emotions": (15.31, 19.50, 25.74, 81.56), "yeast": (15.83, 19.08, 22.54, 77.07)}
METRICS = ("ranking_loss", "hamming_loss", "one_error", "average_precision")


def experiments(quick: bool) -> list[Row]:
    from mlsvm import MLODM

    emotions = load_emotions()
    order = np.random.default_rng(0).permutation(emotions.X.shape[0])
    train, test = order[:391], order[391:]
    yeast_train, yeast_test = load_yeast("train"), load_yeast("test")
    splits = {"emotions": (emotions.X[train], emotions.Y[train], emotions.X[test], emotions.Y[test]),
              "yeast": (yeast_train.X, yeast_train.Y, yeast_test.X, yeast_test.Y)}
    selected = {"emotions": dict(C=4.0, gamma=0.5, theta=0.1, mu=0.5), "yeast": dict(C=4.0, gamma=0.5, theta=0.5, mu=0.1)}
    rows = []
    for name, split in splits.items():
        params = selected[name]
        values = evaluate_split(lambda: MLODM(kernel="rbf", **params), *split, scaler=MinMaxScaler())
        settings = (f"C={params['C']:g}, rbf γ={params['gamma']:g}, θ={params['theta']:g}, μ={params['mu']:g}, [0,1] scaling"
                    + (", 391/202 seeded split" if name == "emotions" else ", standard split"))
        rows += [Row(f"{name} mLODM", metric, 100 * values[metric], paper, settings)
                 for metric, paper in zip(METRICS, PAPER[name])]
    return rows
