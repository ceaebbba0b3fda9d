"""Is system B better than A? Paired significance tests, corrected, with effect sizes and intervals.

:func:`compare` scores runs (or reports that hold per-query values) on the same queries and
returns a :class:`ComparisonReport`: for every (system, measure) comparison both means, the
difference with its paired-bootstrap confidence interval, paired Cohen's d, the raw and the
corrected p-value, whether it is significant and the per-query wins, ties and losses. The report
prints as a table and renders as Markdown, LaTeX, CSV, JSON and DataFrames.

>>> from ef.compare import compare
>>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
>>> old = {"q1": {"d1": 0.2, "x": 0.9}, "q2": {"d2": 0.9}, "q3": {"d3": 0.1, "x": 0.5}}
>>> new = {"q1": {"d1": 0.9, "x": 0.2}, "q2": {"d2": 0.9}, "q3": {"d3": 0.6, "x": 0.5}}
>>> report = compare({"old": old, "new": new}, qrels, ["mrr"], baseline="old")
>>> c = report.get("new", "mrr")
>>> c.baseline_mean, c.system_mean, (c.wins, c.ties, c.losses)
(0.6666666666666666, 1.0, (2, 1, 0))
"""

from ef.evaluation._compare import SCHEMA, Comparison, ComparisonReport, compare

__all__ = ["SCHEMA", "Comparison", "ComparisonReport", "compare"]
