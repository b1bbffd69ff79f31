"""SMSVM / SM3L on real data (the paper's Tables 2 and 7, at test-suite scale): accuracy or
Hamming loss beside scikit-learn's SVC, with far fewer basis vectors than SVC support vectors."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mlsvm import SM3L, SMSVM
from mlsvm.datasets import load_yeast
from mlsvm.metrics import hamming_loss


def test_wine_smsvm_matches_svc_accuracy_with_a_fraction_of_the_basis():
    """Paper Table 2 (wine, 3-fold CV): SMSVM 14 basis vectors, 98.15 %; WW-SVM 55 SVs, 98.88 %."""
    data = load_wine()
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    sparse_acc, svc_acc, n_basis, n_support = [], [], [], []
    for train, test in folds.split(data.data, data.target):
        scaler = StandardScaler().fit(data.data[train])
        Xtr, Xte = scaler.transform(data.data[train]), scaler.transform(data.data[test])
        est = SMSVM(lam=0.3, d_max=14, random_state=0).fit(Xtr, data.target[train])
        svc = SVC(C=1.0, kernel="rbf", gamma="scale").fit(Xtr, data.target[train])
        sparse_acc.append(est.score(Xte, data.target[test]))
        svc_acc.append(svc.score(Xte, data.target[test]))
        n_basis.append(est.n_basis_)
        n_support.append(svc.n_support_.sum())
    assert np.mean(sparse_acc) >= np.mean(svc_acc) - 0.02
    assert np.mean(sparse_acc) >= 0.95
    assert 3 * np.mean(n_basis) <= np.mean(n_support)


def test_yeast_sm3l_hamming_loss_beside_binary_relevance_svc(datasets_dir):
    """Paper Table 7 (yeast): SM3L 198 basis vectors, Hamming loss 18.71 %; M3L (full) 1468, 18.67 %.
    Here 60 basis vectors must stay within one point of binary-relevance SVC."""
    train, test = load_yeast("train"), load_yeast("test")
    est = SM3L(lam=1.0, d_max=60, random_state=0, min_rel_decrease=0.0).fit(train.X, train.Y)
    sparse = hamming_loss(test.Y, est.predict(test.X))
    support = set()
    predicted = np.zeros_like(test.Y)
    for r in range(train.Y.shape[1]):
        svc = SVC(C=1.0, kernel="rbf", gamma="scale").fit(train.X, train.Y[:, r])
        predicted[:, r] = svc.predict(test.X)
        support.update(svc.support_.tolist())
    binary_relevance = hamming_loss(test.Y, predicted)
    assert est.n_basis_ == 60 and np.all(np.diff(est.objective_path_) < 0)
    assert sparse <= binary_relevance + 0.01
    assert 10 * est.n_basis_ <= len(support)
