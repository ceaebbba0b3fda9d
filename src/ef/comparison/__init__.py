"""Comparing systems: paired significance tests, corrected, with effect sizes and intervals.

The code behind :mod:`ef.compare`, which is its public face (every name is imported from there);
``fastrag.benchmark.compare_results``, ``ef gate`` and ``ef sweep`` use the same code.

- ``_options``: the names of the tests and corrections (no numpy: ``--help`` lists them cheaply).
- ``_stats``: the paired tests, the bootstrap interval, Cohen's d and the p-value corrections.
- ``_report``: :class:`~ef.compare.ComparisonReport` and its renderings.
- ``_compare``: :func:`~ef.compare.compare` and :func:`~ef.compare.build_report`.
"""

__all__: list[str] = []
