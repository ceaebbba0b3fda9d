"""The fastrag benchmark report: metric distributions with CIs, latency and cost, failures, metric@k."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ef.report import _figures
from ef.report._answers import references_by_id, worst_answers_section
from ef.report._page import Cell, Figure, Report, Section, Table, Text

__all__ = ["benchmark_report"]

_OPERATIONAL = ("latency_ms", "total_tokens", "cost_usd")
_PERCENTILES = ("p50", "p90", "p95", "p99", "max")
_AT_K = re.compile(r"^(?P<label>[a-z_0-9]+)@(?P<k>[0-9]+)(?P<key>\[[a-z_]+\])?$")


def _as_dict(result: object) -> Mapping[str, Any]:
    if hasattr(result, "to_dict") and not isinstance(result, Mapping):
        result = result.to_dict()
    if not isinstance(result, Mapping) or "summary" not in result or "samples" not in result:
        raise TypeError(
            "'result' must be a fastrag BenchmarkResult or its to_dict() (with 'summary' and 'samples'); "
            f"got {type(result).__name__}"
        )
    return result


def benchmark_report(
    result: object,
    *,
    title: str | None = None,
    facts: Mapping[str, str] | None = None,
    samples: object = None,
    worst: int = 10,
) -> Report:
    """The report of a fastrag benchmark run.

    Parameters
    ----------
    result
        A :class:`fastrag.benchmark.BenchmarkResult`, or its ``to_dict()`` / ``to_json()`` parsed.
    title, facts
        The page title and ``label: value`` lines shown under it.
    samples
        The benchmark's :class:`~fastrag.benchmark.EvalSample`\\ s (or a mapping of sample id to
        reference answer), for the reference answers of the worst-answers section.
    worst
        How many of the worst answers to show, with their answer, reference and contexts and
        each claim marked supported or not; ranked by the first of
        ``claim_f1``, ``token_f1``, ``rouge_l``, ``chrf``, ``claim_recall``, ``faithfulness``,
        ``answer_contains``, ``exact_match`` the result has. ``0`` leaves the section out.
    """
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise ValueError(f"'worst' must be a non-negative integer (got {worst!r})")
    references = references_by_id(samples)
    data = _as_dict(result)
    summary: Mapping[str, Mapping[str, Any]] = data["summary"]
    records: list[Mapping[str, Any]] = list(data["samples"])
    higher = data.get("higher_is_better", {})
    quality = [name for name in summary if name not in _OPERATIONAL]
    operational = [name for name in summary if name in _OPERATIONAL and summary[name]["count"]]
    failed = [s for s in records if s.get("error") is not None]

    arrow = {True: " ↑", False: " ↓"}
    rows = [
        [
            name + arrow.get(higher.get(name, True), ""),
            s["count"],
            s["missing"],
            s["mean"],
            s["ci_low"],
            s["ci_high"],
            s["std"],
            s["p50"],
            s["min"],
            s["max"],
        ]
        for name, s in summary.items()
    ]
    sections = [
        Section(
            "summary-section",
            "Summary",
            (
                Table.of(
                    "summary",
                    ["metric", "n", "missing", "mean", "95% CI low", "95% CI high", "std", "p50", "min", "max"],
                    rows,
                    caption="CI: 95% percentile bootstrap of the mean (2,000 resamples, seed 0). "
                    "↑ higher is better, ↓ lower.",
                ),
            ),
        )
    ]

    points = []
    for index, sample in enumerate(records):
        for name in quality:
            value = sample["scores"].get(name)
            if value is not None:
                points.append(
                    {
                        "query_id": sample["sample_id"],
                        "query": str(sample["query"])[:120],
                        "metric": name,
                        "value": value,
                        "jitter": (index * 0.6180339887) % 1.0,
                    }
                )
    measured = [name for name in quality if summary[name]["count"]]
    if points:
        means = [
            {"metric": n, "value": summary[n]["mean"], "low": summary[n]["ci_low"], "high": summary[n]["ci_high"]}
            for n in measured
        ]
        sections.append(
            Section(
                "distribution-section",
                "Metric distributions",
                (
                    Figure(
                        "distributions",
                        "Each sample's score, per metric, with the mean and its 95% CI",
                        _figures.strip_chart(
                            "distributions",
                            points,
                            means,
                            order=measured,
                            x_title="score",
                            tooltip=("query_id", "query", "metric", "value"),
                            intervals=True,
                        ),
                        caption="One dot per sample (hover for its id); red: the mean and its bootstrap "
                        "confidence interval.",
                    ),
                ),
            )
        )

    by_label: dict[str, list[dict[str, Any]]] = {}
    for name in measured:
        match = _AT_K.match(name)
        if match:
            label = match["label"] + (match["key"] or "")
            s = summary[name]
            by_label.setdefault(label, []).append(
                {"metric": label, "k": int(match["k"]), "value": s["mean"], "low": s["ci_low"], "high": s["ci_high"]}
            )
    curves = [row for rows_ in by_label.values() if len(rows_) > 1 for row in sorted(rows_, key=lambda r: r["k"])]
    for row in curves:  # a band needs both ends; one score has no interval
        if row["low"] is None or row["high"] is None:
            row["low"] = row["high"] = row["value"]
    if curves:
        sections.append(
            Section(
                "curves-section",
                "Metrics at each cutoff",
                (
                    Figure(
                        "curves",
                        "Mean metric against the cutoff k",
                        _figures.at_k_chart("curves", curves, y_title="mean", band=True),
                        caption="Shaded: the 95% bootstrap confidence interval of each mean.",
                    ),
                ),
            )
        )

    if operational:
        bars = [
            {"metric": name, "label": p, "value": summary[name][p]}
            for name in operational
            for p in _PERCENTILES
            if summary[name][p] is not None
        ]
        table = Table.of(
            "operational",
            ["metric", "n", "mean", *_PERCENTILES],
            [
                [name, summary[name]["count"], summary[name]["mean"], *(summary[name][p] for p in _PERCENTILES)]
                for name in operational
            ],
        )
        sections.append(
            Section(
                "operational-section",
                "Latency and cost",
                (
                    Figure(
                        "operational",
                        "Percentiles per sample",
                        _figures.bar_chart("operational", bars, x_title="value", facet="metric"),
                        caption="latency_ms is measured by the harness; tokens and cost are what the "
                        "pipeline reported.",
                    ),
                    table,
                ),
            )
        )

    worst_section = worst_answers_section(records, references, measured, worst) if worst else None
    if worst_section is not None:
        sections.append(worst_section)

    if failed:
        failures: tuple[Table | Figure | Text | Section, ...] = (
            Table(
                "failures",
                ("sample", "query", "error"),
                tuple(
                    (Cell(s["sample_id"]), Cell(str(s["query"])), Cell(str(s["error"]), css="nonrel")) for s in failed
                ),
                caption="Every score of a failed sample is missing.",
            ),
        )
    else:
        failures = (Text("No sample failed.", css="note"),)
    sections.append(Section("failures-section", f"Failed samples ({len(failed)})", failures))

    shown_facts = {"samples": str(len(records)), "failed": str(len(failed)), **(facts or {})}
    return Report("benchmark", title or "Benchmark", tuple(sections), shown_facts)
