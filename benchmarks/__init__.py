"""Benchmarks of atomic-jupyter, each measured side by side with its baseline in the same run.

Run them all with ``python -m benchmarks`` (or ``make bench``); ``--quick`` is a short smoke
run. Benchmarks are not tests: they print numbers, they do not assert. See BENCHMARKS.md for
what each figure means and how it is measured.
"""
