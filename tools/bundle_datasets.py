"""Regenerate the datasets bundled in mlsvm/data_files/ from the MULAN ARFF files.

    python tools/bundle_datasets.py [DATASETS_DIR]     # default: $MLSVM_DATASETS or ../shared/datasets

Each ``.npz`` (compressed, no pickle) holds ``X`` (float64), ``Y`` (int8), ``feature_names`` and
``label_names`` exactly as :func:`mlsvm.datasets.load_arff` reads them from the ARFF file; the
test ``tests/test_datasets.py::test_bundled_equal_the_arff_files`` checks they still agree.
Sources and citations: docs/datasets.md.
"""

import sys
from pathlib import Path

import numpy as np

from mlsvm.datasets import BUNDLED, find_datasets_dir, load_arff

OUT = Path(__file__).resolve().parent.parent / "mlsvm" / "data_files"


def main(argv) -> int:
    source = Path(argv[1]) if len(argv) > 1 else find_datasets_dir()
    if source is None:
        raise SystemExit("no datasets directory: pass it, or set MLSVM_DATASETS")
    OUT.mkdir(exist_ok=True)
    for name, (bundled, arff, n_labels) in BUNDLED.items():
        data = load_arff(source / arff, n_labels=n_labels, sparse=False)
        target = OUT / bundled
        np.savez_compressed(target, X=data.X, Y=data.Y, feature_names=np.array(data.feature_names),
                            label_names=np.array(data.label_names))
        print(f"{name}: {data.X.shape[0]} x {data.X.shape[1]}, {data.Y.shape[1]} labels -> {target} "
              f"({target.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
