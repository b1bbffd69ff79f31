"""Numba issue 10486, the reason mlsvm's compiled functions never call numba's np.sort / np.argsort
(docs/compiled.md, "Sorting and searching"):

    python tools/numba_cache_collision.py

Writes a module with two cached functions, ``np.sort(x)`` and ``np.argsort(x)``, into a temporary
folder, caches the first in one process and the second in another (after ``k`` small uncached
compilations, which move numba's per-process counter), then calls both in a third process. For the
``k`` at which the two quicksorts get the same machine-code name, the third process's argsort runs
the sort's body. Prints each ``k`` and what the argsort returned there.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

MODULE = '''import numpy as np
import numba


@numba.njit(cache=True)
def sort_it(x):
    return np.sort(x)


@numba.njit(cache=True)
def order_of(x):
    return np.argsort(x)
'''

RUN = '''import sys
import numba
import numpy as np

for i in range(int(sys.argv[1])):   # uncached compilations: each takes numbers from numba's counter
    exec(f"@numba.njit\\ndef dummy{i}(x):\\n    return x + {i}\\n")
    eval(f"dummy{i}")(1.0)
import collision_module
x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
for name in sys.argv[2:]:
    print(name, getattr(collision_module, name)(x).tolist())
'''


def main():
    for k in range(8):
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "collision_module.py").write_text(MODULE)
            Path(folder, "run.py").write_text(RUN)

            def run(*args):
                return subprocess.run([sys.executable, "run.py", *args], cwd=folder, capture_output=True, text=True)

            run("0", "sort_it")
            run(str(k), "order_of")
            both = run("0", "sort_it", "order_of")
            answer = both.stdout.splitlines()[-1] if both.returncode == 0 else f"died with status {both.returncode}"
            print(f"k = {k}: {answer}")


if __name__ == "__main__":
    main()
