"""The outcome of a benchmark run: per-metric distributions plus everything per sample."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ef._console import format_table
from ef._validate import check_instance, finite_float
from fastrag.benchmark._jsonl import read_jsonl, write_jsonl
from fastrag.benchmark.samples import QueryOutcome
from fastrag.benchmark.summary import DistributionSummary

__all__ = ["BenchmarkResult"]


@dataclass(frozen=True, slots=True, repr=False)
class BenchmarkResult:
    """Every metric summarised as a distribution, with the per-sample outcomes and scores.

    Parameters
    ----------
    summary
        Metric name → :class:`DistributionSummary`, in the order the metrics were given.
    outcomes
        One :class:`QueryOutcome` per sample, in sample order.
    scores
        Metric name → the per-sample scores, aligned with `outcomes` (``None`` = missing).
    higher_is_better
        Metric name → its direction, for the table's arrows.

    Examples
    --------
    >>> outcomes = (QueryOutcome("q1", "alpha", latency_ms=2.0), QueryOutcome("q2", "beta", latency_ms=4.0))
    >>> result = BenchmarkResult(
    ...     summary={"latency_ms": DistributionSummary.from_scores([2.0, 4.0])},
    ...     outcomes=outcomes, scores={"latency_ms": (2.0, 4.0)}, higher_is_better={"latency_ms": False})
    >>> print(result)
    Benchmark over 2 samples (0 failed)
    metric        n  missing    mean         95% CI     std     p50     p90     p95     p99     min     max
    ------------  -  -------  ------  -------------  ------  ------  ------  ------  ------  ------  ------
    latency_ms ↓  2        0  3.0000  2.0000–4.0000  1.4142  3.0000  3.8000  3.9000  3.9800  2.0000  4.0000
    >>> result.per_sample("q1")
    {'latency_ms': 2.0}
    """

    summary: Mapping[str, DistributionSummary]
    outcomes: tuple[QueryOutcome, ...]
    scores: Mapping[str, tuple[float | None, ...]]
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, value in (("summary", self.summary), ("scores", self.scores)):
            if not isinstance(value, Mapping):
                raise TypeError(f"'{label}' must be a mapping keyed by metric name (got {type(value).__name__})")
        for name, summary in self.summary.items():
            if not isinstance(summary, DistributionSummary):
                # A Metric.aggregate override returning something else would fail only when printed.
                raise TypeError(f"'summary'[{name!r}] must be a DistributionSummary (got {type(summary).__name__})")
        object.__setattr__(self, "outcomes", tuple(self.outcomes))
        object.__setattr__(self, "scores", {name: tuple(values) for name, values in self.scores.items()})
        if set(self.summary) != set(self.scores):
            raise ValueError("'summary' and 'scores' must name the same metrics")
        for name, values in self.scores.items():
            if len(values) != len(self.outcomes):
                raise ValueError(
                    f"'scores'[{name!r}] must have one entry per outcome, {len(self.outcomes)} "
                    f"(got {len(values)})"
                )
        for position, outcome in enumerate(self.outcomes):
            check_instance(outcome, f"'outcomes'[{position}]", QueryOutcome)
        check_instance(self.higher_is_better, "higher_is_better", Mapping, what="a mapping")
        for name, better in self.higher_is_better.items():
            check_instance(better, f"'higher_is_better'[{name!r}]", bool, what="a bool")

    @property
    def errors(self) -> dict[str, str]:
        """Sample id → error message, for every sample whose call raised or timed out."""
        return {o.sample_id: o.error for o in self.outcomes if o.error is not None}

    def per_sample(self, sample_id: str) -> dict[str, float | None]:
        """Metric name → score for one sample; ``KeyError`` naming it if it is not in the run."""
        for position, outcome in enumerate(self.outcomes):
            if outcome.sample_id == sample_id:
                return {name: values[position] for name, values in self.scores.items()}
        raise KeyError(f"no sample {sample_id!r} in this result")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``summary``, ``higher_is_better`` and one record per sample."""
        return {
            "summary": {name: s.to_dict() for name, s in self.summary.items()},
            "higher_is_better": dict(self.higher_is_better),
            "samples": [self._sample_record(i) for i in range(len(self.outcomes))],
        }

    def to_json(self, *, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON text; never contains NaN (missing values are ``null``)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, indent=indent)

    def save_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write one line per sample — its outcome, a ``scores`` object and the metrics'
        ``higher_is_better`` (on every line, so that each line reads alone) — to `path`."""
        directions = dict(self.higher_is_better)
        write_jsonl(
            path, ({**self._sample_record(i), "higher_is_better": directions} for i in range(len(self.outcomes)))
        )

    def to_html(self, path: str | os.PathLike[str], *, title: str | None = None, samples: object = None) -> Path:
        """Write a self-contained HTML report with charts to `path` (atomically); returns the path.

        `samples` (the benchmark's EvalSamples) give the worst answers' reference answers.
        Needs the ``report`` extra (``pip install 'ef-eval[report]'``); see :func:`ef.report.benchmark_report`.
        """
        from ef.report import benchmark_report

        return benchmark_report(self, title=title, samples=samples).to_html(path)

    def _repr_html_(self) -> str:
        """In a notebook: the page :meth:`to_html` writes, in a sandboxed frame; without the ``report``
        extra, the summary table."""
        from ef.report import benchmark_report, notebook_html

        try:
            return notebook_html(benchmark_report(self).html())
        except ImportError:
            import html

            return f"<pre>{html.escape(str(self))}</pre>"

    @classmethod
    def load_jsonl(
        cls, path: str | os.PathLike[str], *, higher_is_better: Mapping[str, bool] | None = None
    ) -> BenchmarkResult:
        """Read back what :meth:`save_jsonl` wrote; each summary is recomputed from the scores.

        Every line must be an outcome with a ``scores`` object naming the same metrics, in the same
        order, as the first line, each score a finite number or ``null``; sample ids are distinct.
        The summaries are :meth:`DistributionSummary.from_scores` of the scores (a metric with its
        own ``aggregate`` is not known here). The metrics' directions are read from the file's
        ``higher_is_better`` (the same on every line); a file written before they were recorded
        has none: pass `higher_is_better` for them. Given for a file that records them, they
        must agree.

        Raises
        ------
        ValueError
            ``"<path>:<line>: <reason>"`` for a line that does not fit.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "result.jsonl"
        >>> outcomes = (QueryOutcome("q1", "a", latency_ms=2.0), QueryOutcome("q2", "b", latency_ms=4.0))
        >>> result = BenchmarkResult({"latency_ms": DistributionSummary.from_scores([2.0, 4.0])}, outcomes,
        ...                          {"latency_ms": (2.0, 4.0)}, {"latency_ms": False})
        >>> result.save_jsonl(path)
        >>> loaded = BenchmarkResult.load_jsonl(path)
        >>> loaded.outcomes == result.outcomes, loaded.scores, loaded.summary == result.summary
        (True, {'latency_ms': (2.0, 4.0)}, True)
        >>> loaded.higher_is_better
        {'latency_ms': False}
        """
        names: list[str] | None = None
        recorded: list[dict[str, bool] | None] = []  # each line's directions, None where absent

        def parse(record: Any) -> tuple[QueryOutcome, list[float | None]]:
            nonlocal names
            if not isinstance(record, dict):
                raise ValueError(f"a result line must be a JSON object (got {type(record).__name__})")
            fields = dict(record)
            scores = fields.pop("scores", None)
            if not isinstance(scores, dict):
                raise ValueError("a result line needs a 'scores' object (is this an outcomes file?)")
            directions = fields.pop("higher_is_better", None)
            if directions is not None and (
                not isinstance(directions, dict) or not all(isinstance(v, bool) for v in directions.values())
            ):
                raise ValueError(f"'higher_is_better' must map metric names to true or false (got {directions!r:.60})")
            if recorded and directions != recorded[0]:
                raise ValueError(f"'higher_is_better' is {directions!r:.60}, the first line's {recorded[0]!r:.60}")
            recorded.append(directions)
            outcome = QueryOutcome.from_dict(fields)
            if names is None:
                names = list(scores)
            elif list(scores) != names:
                raise ValueError(f"'scores' names {list(scores)}, the first line {names}")
            values: list[float | None] = []
            for name, value in scores.items():
                if value is not None and (
                    finite_float(value) is None
                ):
                    raise ValueError(f"score {name!r} must be a finite number or null (got {value!r})")
                values.append(None if value is None else float(value))
            return outcome, values

        outcomes: list[QueryOutcome] = []
        columns: list[list[float | None]] = []
        first_line: dict[str, int] = {}
        for number, (outcome, values) in read_jsonl(path, parse):
            if outcome.sample_id in first_line:
                raise ValueError(
                    f"{os.fspath(path)}:{number}: sample id {outcome.sample_id!r} already used on line "
                    f"{first_line[outcome.sample_id]}"
                )
            first_line[outcome.sample_id] = number
            outcomes.append(outcome)
            columns.append(values)
        metric_names = names or []
        scores = {name: tuple(row[i] for row in columns) for i, name in enumerate(metric_names)}
        directions = dict(recorded[0] or {}) if recorded else {}
        if higher_is_better is not None:
            differing = [name for name, value in higher_is_better.items() if directions.get(name, value) != value]
            if differing:
                raise ValueError(
                    f"{os.fspath(path)}: records higher_is_better {directions[differing[0]]} for "
                    f"{differing[0]!r}, 'higher_is_better' says {higher_is_better[differing[0]]}"
                )
            directions = {**directions, **higher_is_better}
        return cls(
            summary={name: DistributionSummary.from_scores(values) for name, values in scores.items()},
            outcomes=tuple(outcomes),
            scores=scores,
            higher_is_better=directions,
        )

    def _sample_record(self, position: int) -> dict[str, Any]:
        record = self.outcomes[position].to_dict()
        record["scores"] = {name: values[position] for name, values in self.scores.items()}
        return record

    def __repr__(self) -> str:
        """Short on purpose: asyncio formats the result's repr when ``asyncio.run`` exits, and a
        full dataclass repr of thousands of outcomes took longer than scoring them.

        >>> BenchmarkResult({}, (), {})
        BenchmarkResult(0 samples, 0 failed, metrics=[])
        """
        return f"BenchmarkResult({len(self.outcomes)} samples, {len(self.errors)} failed, metrics={list(self.summary)})"

    def __str__(self) -> str:
        """The summary as a table, one row per metric; ``↑``/``↓`` mark the better direction."""
        rows = []
        for name, s in self.summary.items():
            arrow = {True: " ↑", False: " ↓"}.get(self.higher_is_better.get(name, True), "")
            ci = "-" if s.ci_low is None or s.ci_high is None else f"{s.ci_low:.4f}–{s.ci_high:.4f}"
            rows.append([name + arrow, s.count, s.missing, s.mean, ci, s.std, s.p50, s.p90, s.p95, s.p99, s.min, s.max])
        headers = ["metric", "n", "missing", "mean", "95% CI", "std", "p50", "p90", "p95", "p99", "min", "max"]
        title = f"Benchmark over {len(self.outcomes)} samples ({len(self.errors)} failed)"
        return format_table(headers, rows, title=title)
