"""Benchmarks of atomic-jupyter, each measured side by side with its baseline in the same run.

Run them all with ``python -m benchmarks`` (or ``make bench``); ``--quick`` is a short smoke
run. Benchmarks are not tests: they print numbers, they do not assert. See BENCHMARKS.md for
what each figure means and how it is measured.
"""

import os as _os
import sys as _sys


def _pythonpath_first() -> None:
    """Let ``PYTHONPATH`` choose the package measured, as it does for the kernel.

    ``python -m benchmarks`` puts the current directory (the repository, with its own
    ``atomic_jupyter``) first on ``sys.path``, before ``PYTHONPATH``; so that
    ``PYTHONPATH=/tmp/before python -m benchmarks`` measures the copy in ``/tmp/before`` in
    this process too (as in the kernels it starts, which inherit the variable), the
    ``PYTHONPATH`` entries are moved ahead of it. The repository stays on the path for
    ``benchmarks`` and ``tests.harness``.
    """
    entries = [
        _os.path.abspath(p) for p in _os.environ.get("PYTHONPATH", "").split(_os.pathsep) if p
    ]
    if not entries:
        return
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") not in entries]
    _sys.path[:] = entries + rest


_pythonpath_first()
