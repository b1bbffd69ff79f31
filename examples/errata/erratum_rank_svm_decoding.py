"""
Elisseeff & Weston eq. (6) is not a rewriting of eq. (5)
========================================================

To decode a vector of scores :math:`f` into one of a set of allowed label codes, the paper gives
eq. (5), :math:`\\arg\\min_y \\sum_k |1 - y_k f_k|_+`, and calls eq. (6),
:math:`\\arg\\min_y \\sum_k |y_k - \\sigma(f_k)|` with :math:`\\sigma` the clip to :math:`[-1, 1]`, a
rewriting of it. The two agree when every :math:`|f_k| \\le 1`, not in general: for
:math:`y_k f_k < -1`, (5) charges :math:`1 - y_k f_k` and (6) only 2. SPEC §2.1 says categorical
regression decodes by (6); mlsvm offers both (:func:`mlsvm.estimators.rank_binary.decoding_cost`).
See the :doc:`binary approach page </rank_binary>`.
"""

import numpy as np

from mlsvm.estimators.rank_binary import decoding_cost

scores = np.array([[-2.0, 0.6, 0.6]])
codes = np.array([[1, 1, 1], [0, 0, 0]])                 # Y1 = all +1, Y2 = all −1
ahl = decoding_cost(scores, codes, "ahl")[0]
clipped = decoding_cost(scores, codes, "clipped")[0]
print(f"f = {scores[0]}")
print(f"eq. (5) costs  Y1 {ahl[0]:.1f}  Y2 {ahl[1]:.1f}  -> picks Y{np.argmin(ahl) + 1}")
print(f"eq. (6) costs  Y1 {clipped[0]:.1f}  Y2 {clipped[1]:.1f}  -> picks Y{np.argmin(clipped) + 1}")
assert np.argmin(ahl) != np.argmin(clipped)
