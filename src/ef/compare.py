"""Is system B better than A? Paired significance tests, corrected, with effect sizes and intervals.

:func:`compare` scores runs (or reports that hold per-query values) on the same queries and
returns a :class:`ComparisonReport`: for every (system, measure) comparison both means, the
difference with its paired-bootstrap confidence interval, paired Cohen's d, the raw and the
corrected p-value, whether it is significant and the per-query wins, ties and losses. The report
prints as a table and renders as Markdown, LaTeX, CSV, JSON and DataFrames.

Tools that score systems themselves (``fastrag.benchmark.compare_results``) build the same report
from per-query values with :func:`build_report`, after checking the options with
:func:`check_options`; :data:`TESTS` and :data:`CORRECTIONS` name the choices (``ef compare
--help`` lists them without loading numpy: every name here is imported on first use).

>>> from ef.compare import compare
>>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
>>> old = {"q1": {"d1": 0.2, "x": 0.9}, "q2": {"d2": 0.9}, "q3": {"d3": 0.1, "x": 0.5}}
>>> new = {"q1": {"d1": 0.9, "x": 0.2}, "q2": {"d2": 0.9}, "q3": {"d3": 0.6, "x": 0.5}}
>>> report = compare({"old": old, "new": new}, qrels, ["mrr"], baseline="old")
>>> c = report.get("new", "mrr")
>>> c.baseline_mean, c.system_mean, (c.wins, c.ties, c.losses)
(0.6666666666666666, 1.0, (2, 1, 0))
"""

from typing import TYPE_CHECKING

from ef._lazy import lazy_names

if TYPE_CHECKING:
    from ef.comparison._compare import build_report, compare
    from ef.comparison._options import CORRECTIONS, TESTS, Correction, Test, check_options
    from ef.comparison._report import SCHEMA, Comparison, ComparisonReport

__all__ = [
    "CORRECTIONS",
    "SCHEMA",
    "TESTS",
    "Comparison",
    "ComparisonReport",
    "Correction",
    "Test",
    "build_report",
    "check_options",
    "compare",
]

_LAZY = {
    "SCHEMA": "ef.comparison._report",
    "Comparison": "ef.comparison._report",
    "ComparisonReport": "ef.comparison._report",
    "build_report": "ef.comparison._compare",
    "compare": "ef.comparison._compare",
    "CORRECTIONS": "ef.comparison._options",
    "TESTS": "ef.comparison._options",
    "Correction": "ef.comparison._options",
    "Test": "ef.comparison._options",
    "check_options": "ef.comparison._options",
}


__getattr__, __dir__ = lazy_names(globals(), __name__, _LAZY)
