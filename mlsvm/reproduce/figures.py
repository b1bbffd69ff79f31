"""The figures of each reproduction report, on small problems that take a second or two.

* every paper: the convergence curve (objective and duality gap against iteration) of its solvers;
* mLODM: the label-pair margin histogram of mLODM beside Rank-SVM (the paper's Fig. 2);
* One-vs-None: 2-D decision regions, linear and Gaussian kernels (the paper's Fig. 1–3);
* sparse max-margin: SMSVM's 2-D decision regions (the paper's Fig. 1).

The figures illustrate the solvers and models on toy data (stated in each caption); the numbers of
the report come from the paper's datasets. :func:`write_figures` saves them as PNGs next to the
report (atomically, :func:`mlsvm.plot.save_figure`) and returns the markdown that links them by
relative path; without matplotlib it returns a note saying the figures were skipped and why.
"""

from __future__ import annotations

from pathlib import Path

from mlsvm.datasets import make_multiclass, make_multilabel

__all__ = ["FIGURES", "paper_figures", "write_figures"]


def _multilabel():
    data = make_multilabel(60, 5, 4, random_state=0)
    return data.X, data.Y


def _toy_2d():
    """Three classes in the plane (60 points), the setting of OvN Fig. 1–3 and SMSVM Fig. 1."""
    return make_multiclass(60, 2, 3, random_state=0)


def _histories(fits: dict) -> dict:
    """name → history of a fitted estimator's report (hand-written solvers record one)."""
    return {name: model.fit_report_.history for name, model in fits.items()}


def _rank_svm():
    from mlsvm import RankSVM
    from mlsvm.plot import plot_convergence

    X, Y = _multilabel()
    # "fast" runs the interior point on this linear problem; the ALM is its choice for kernels
    runs = _histories({"ipm (fast, linear kernel)": RankSVM(C=1.0, solver="ipm").fit(X, Y),
                       "alm (fast, other kernels)": RankSVM(C=1.0, solver="alm").fit(X, Y)})
    frank_wolfe = RankSVM(C=1.0, solver="frank-wolfe", tol=1e-3, max_iter=2000).fit(X, Y).fit_report_.history
    runs["frank-wolfe (dual objective, FW gap)"] = {"objective": frank_wolfe["dual"],
                                                    "gap": frank_wolfe["fw_gap"]}
    return [("convergence", "Rank-SVM solvers on a toy multilabel problem (60 × 5, 4 labels, linear, C = 1): "
             "relative gap of the interior point and the ALM, dual objective and FW gap of Frank–Wolfe",
             plot_convergence(runs))]


def _ovn():
    from mlsvm import OvNSVM
    from mlsvm.plot import plot_convergence, plot_decision_regions

    X, y = _toy_2d()
    figures = []
    for kernel in ("linear", "rbf"):
        model = OvNSVM(beta=1.0, w_constraint="hard", b_constraint="hard", kernel=kernel).fit(X, y)
        figures.append((f"regions-{kernel}", f"OvN hard w – hard b, {kernel} kernel, on a toy 3-class 2-D problem "
                        "(cf. the paper's Fig. 1–3)", plot_decision_regions(model, X, y, resolution=120)))
    X, Y = _multilabel()
    runs = _histories({"fast (interior point)": OvNSVM(alpha=0.2, solver="fast").fit(X, Y),
                       "mm (paper Alg. 1)": OvNSVM(alpha=0.2, solver="mm", tol=1e-6).fit(X, Y)})
    figures.append(("convergence", "OvN solvers on a toy multilabel problem (60 × 5, 4 labels, soft w, α = 0.2, β = 1)",
                    plot_convergence(runs)))
    return figures


def _sparse_mm():
    from mlsvm import SMSVM
    from mlsvm.plot import plot_convergence, plot_decision_regions

    X, y = _toy_2d()
    model = SMSVM(lam=0.3, kernel="rbf", d_max=12, random_state=0).fit(X, y)
    regions = plot_decision_regions(model, X, y, resolution=120)
    regions.axes[0].scatter(*X[model.basis_indices_].T, s=90, facecolors="none", edgecolors="k",
                            linewidths=1.2, label="basis vectors")
    regions.axes[0].legend(fontsize="small")
    path = {"SMSVM objective e_J": {"objective": model.objective_path_}}
    return [("regions", f"SMSVM (λ = 0.3, rbf) on a toy 3-class 2-D problem, {model.n_basis_} basis vectors "
             "circled (cf. the paper's Fig. 1)", regions),
            ("convergence", "SMSVM: objective after each added basis vector (greedy path)", plot_convergence(path))]


def _mlodm():
    from mlsvm import MLODM, RankSVM
    from mlsvm.data import ranking_pairs
    from mlsvm.plot import plot_convergence, plot_margin_histogram

    X, Y = _multilabel()
    pairs = ranking_pairs(Y)
    fits = {"mLODM": MLODM(C=1.0, theta=0.2, mu=0.5, kernel="rbf", gamma=0.5, solver="bcd").fit(X, Y),
            "Rank-SVM": RankSVM(C=1.0, kernel="rbf", gamma=0.5).fit(X, Y)}
    margins = {name: pairs.gather(model.decision_function(X)) for name, model in fits.items()}
    return [("margins", "Training label-pair margins f_k(x) − f_l(x) of mLODM and Rank-SVM on a toy multilabel "
             "problem (60 × 5, 4 labels, rbf γ = 0.5; cf. the paper's Fig. 2)", plot_margin_histogram(margins)),
            ("convergence", "mLODM block coordinate descent (paper Alg. 1, exact blocks) on the same problem",
             plot_convergence(_histories({"bcd": fits["mLODM"]})))]


def _matrix_svm():
    from mlsvm import MatrixSVM
    from mlsvm.plot import plot_convergence

    X, Y = _multilabel()
    runs = _histories({"fast (restarted AGD)": MatrixSVM(C=1.0, solver="fast").fit(X, Y),
                       "agd (paper Alg. 1)": MatrixSVM(C=1.0, solver="agd").fit(X, Y)})
    return [("convergence", "Matrix-SVM solvers on a toy multilabel problem (60 × 5, 4 labels, rbf, C = 1)",
             plot_convergence(runs))]


#: paper → function returning ``[(stem, caption, Figure), …]``
FIGURES = {"rank-svm": _rank_svm, "ovn": _ovn, "sparse-mm": _sparse_mm, "mlodm": _mlodm, "matrix-svm": _matrix_svm}


def paper_figures(paper: str):
    """The figures of one paper's report: ``[(stem, caption, Figure), …]`` (needs matplotlib).

    Parameters
    ----------
    paper : str
        Paper key: ``rank-svm``, ``ovn``, ``sparse-mm``, ``mlodm`` or ``matrix-svm``.
    """
    if paper not in FIGURES:
        raise ValueError(f"paper must be one of {sorted(FIGURES)}; got {paper!r}")
    return FIGURES[paper]()


def write_figures(paper: str, out_dir) -> str:
    """Save the paper's figures as ``reproduce-PAPER-STEM.png`` in ``out_dir`` and return the
    markdown section linking them (relative paths). Without matplotlib: a note that they were skipped.

    Parameters
    ----------
    paper : str
        Paper key: ``rank-svm``, ``ovn``, ``sparse-mm``, ``mlodm`` or ``matrix-svm``.
    out_dir : str or Path
        Output directory.
    """
    from mlsvm.plot import _matplotlib, save_figure

    try:
        _matplotlib()
    except ImportError as exc:  # the message says how to install the extra
        return f"## Figures\n\nFigures skipped: matplotlib is not installed ({exc}).\n"

    lines = ["## Figures", "", "Illustrations on small toy problems (not the datasets of the table above).", ""]
    for stem, caption, figure in paper_figures(paper):
        name = f"reproduce-{paper}-{stem}.png"
        save_figure(figure, Path(out_dir) / name, dpi=90)
        lines += [f"![{caption}]({name})", "", f"*{caption}.*", ""]
    return "\n".join(lines)
