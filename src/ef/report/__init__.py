"""One-file HTML reports with charts, for evaluations, comparisons and fastrag benchmarks.

Each ``*_report`` function returns a :class:`Report`; ``report.to_html(path)`` writes a single
self-contained HTML file (Vega's JavaScript inlined: no CDN, no request of any kind when it is
opened) and ``report.save_figures(directory, "png")`` writes the same charts as images.
Charts are Vega-Lite specs built with Altair and rendered offline by vl-convert: the ``report``
extra (``pip install 'ef-eval[report]'``).

>>> from ef.evaluation import evaluate_run
>>> run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.4, "d4": 0.3}}
>>> qrels = {"q1": {"d1": 1}, "q2": {"d4": 1, "d5": 1}}
>>> data = evaluation_data(evaluate_run(run, qrels, ["ndcg@10", "P_1", "P_2"]), run=run, qrels=qrels)
>>> [(q.query_id, q.value, [d.doc_id for d in q.results], [m[0] for m in q.missed]) for q in data.worst]
[('q2', 0.3868528072345416, ['d3', 'd4'], ['d5']), ('q1', 1.0, ['d1', 'd2'], [])]
>>> [(row["metric"], row["k"], row["value"]) for row in data.curves]
[('precision', 1, 0.5), ('precision', 2, 0.5)]
"""

from ef.report._benchmark import benchmark_report
from ef.report._comparison import comparison_report
from ef.report._deps import require_report_extra
from ef.report._evaluation import EvaluationData, QueryDrillDown, RankedDoc, evaluation_data, evaluation_report
from ef.report._page import Figure, Report, Section, Table, Text, notebook_html

__all__ = [
    "EvaluationData",
    "Figure",
    "QueryDrillDown",
    "RankedDoc",
    "Report",
    "Section",
    "Table",
    "Text",
    "benchmark_report",
    "comparison_report",
    "evaluation_data",
    "evaluation_report",
    "notebook_html",
    "require_report_extra",
]
