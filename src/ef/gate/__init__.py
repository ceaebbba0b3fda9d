"""Gate releases on retrieval quality: is the candidate no worse than the baseline, by a stated margin?

:func:`gate` compares two per-query results (saved JSON, ``ef eval --json``, a report, a fastrag
``BenchmarkResult``, or a TREC run with qrels) measure by measure with a non-inferiority test:
a seeded paired randomization p-value and a paired bootstrap bound, Holm-corrected across the
measures. The :class:`GateReport` says **pass** (exit 0), **fail** (exit 1) or **inconclusive**
(exit 3, with the difference this query set can detect and the queries needed), and renders as
verdict lines, Markdown, JUnit XML, JSON and HTML. It refuses results of different queries,
qrels, datasets, options or measures, naming the difference. :func:`save_result` writes a
result with the metadata that makes that check possible.

>>> from ef.gate import gate
>>> base = {"per_query": {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 7)} for i in range(40)}}
>>> same = {"per_query": {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 7)} for i in range(40)}}
>>> report = gate(base, same, margin=0.01)
>>> report.outcome, report.exit_code, report.get("ndcg@10").worst
('pass', 0, 0.0)
"""

from typing import TYPE_CHECKING

from ef._lazy import lazy_names

if TYPE_CHECKING:
    from ef.gate._gate import DEFAULT_MARGIN, Margin, gate, parse_margin
    from ef.gate._report import EXIT_CODES, SCHEMA, GateReport, MeasureVerdict
    from ef.gate._result import (
        RESULT_SCHEMA,
        Result,
        dataset_checksum,
        load_result,
        qrels_hash,
        result_metadata,
        save_result,
    )

__all__ = [
    "DEFAULT_MARGIN",
    "EXIT_CODES",
    "RESULT_SCHEMA",
    "SCHEMA",
    "GateReport",
    "Margin",
    "MeasureVerdict",
    "Result",
    "dataset_checksum",
    "gate",
    "load_result",
    "parse_margin",
    "qrels_hash",
    "result_metadata",
    "save_result",
]

_LAZY = {
    **dict.fromkeys(("DEFAULT_MARGIN", "Margin", "gate", "parse_margin"), "ef.gate._gate"),
    **dict.fromkeys(("EXIT_CODES", "SCHEMA", "GateReport", "MeasureVerdict"), "ef.gate._report"),
    **dict.fromkeys(
        ("RESULT_SCHEMA", "Result", "dataset_checksum", "load_result", "qrels_hash", "result_metadata", "save_result"),
        "ef.gate._result",
    ),
}

__getattr__, __dir__ = lazy_names(globals(), __name__, _LAZY)
