"""What a sweep found: every cell's scores and costs, the comparison, and the decision in words."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ef.pipeline import Pipeline

__all__ = ["CellResult", "SweepResult"]


@dataclass(frozen=True)
class CellResult:
    """One scored pipeline of a sweep.

    ``metrics`` are the means over the sweep's queries, ``per_query[query_id][measure]`` the
    values (scored at the source level: see :func:`ef.pipeline.collapse_to_sources`);
    ``ci_low``/``ci_high`` bound the primary measure's mean (percentile bootstrap).
    ``latency_ms`` is the mean time per query of the first stage (its share of a batch, query
    encoding included) plus the reranker; ``index_bytes`` and ``build_seconds`` are the index's
    size and what chunking, tokenizing, BM25 indexing and encoding took (recorded when first
    computed, so a cached index reports its real cost). ``loaded``: read back from the sweep's
    folder instead of scored by this call.
    """

    pipeline: Pipeline
    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    ci_low: float
    ci_high: float
    retrieve_ms: float
    rerank_ms: float
    index_bytes: int
    build_seconds: float
    run_path: str | None
    loaded: bool

    @property
    def id(self) -> str:
        return self.pipeline.id

    @property
    def label(self) -> str:
        return self.pipeline.label

    @property
    def latency_ms(self) -> float:
        return self.retrieve_ms + self.rerank_ms

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "pipeline": self.pipeline.to_dict(),
            "metrics": dict(self.metrics),
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "latency_ms": self.latency_ms,
            "retrieve_ms": self.retrieve_ms,
            "rerank_ms": self.rerank_ms,
            "index_bytes": self.index_bytes,
            "build_seconds": self.build_seconds,
            "run": self.run_path,
            "loaded": self.loaded,
        }


@dataclass(frozen=True)
class SweepResult:
    """A sweep's cells (in grid order) and its decision.

    ``comparison`` tests every cell against ``baseline`` (a :class:`~ef.compare.ComparisonReport`,
    paired over the queries, p-values corrected over the whole family); ``versus_best`` tests
    every cell against ``best`` (the same report when the baseline is the best cell), and
    ``indistinguishable`` lists the cells whose difference from the best is not significant.
    ``scored`` and ``loaded`` are the ids this call scored and read back; ``counts`` what its
    workspace computed (see :class:`ef.pipeline_stages.Workspace`).
    """

    dataset: str
    measures: tuple[str, ...]
    higher_is_better: bool
    cells: tuple[CellResult, ...]
    best: str
    baseline: str
    comparison: Any
    versus_best: Any
    indistinguishable: tuple[str, ...]
    n_queries: int
    scored: tuple[str, ...]
    loaded: tuple[str, ...]
    counts: Mapping[str, Mapping[str, int]]
    settings: Mapping[str, Any] = field(default_factory=dict)
    directory: str | None = None
    seconds: float = 0.0

    @property
    def primary(self) -> str:
        """The measure the sweep decides on: the first of ``measures``."""
        return self.measures[0]

    def cell(self, key: str) -> CellResult:
        """The cell with this id or label."""
        for cell in self.cells:
            if key in (cell.id, cell.label):
                return cell
        raise KeyError(f"no cell {key!r} in this sweep")

    def _versus(self, report: Any, cell: CellResult, against: str) -> Any:
        if report is None or cell.id == against:
            return None
        return report.get(cell.label, self.primary)

    def rows(self) -> list[dict[str, Any]]:
        """One row per cell: what the table shows, as numbers."""
        out = []
        for cell in self.cells:
            versus = self._versus(self.comparison, cell, self.baseline)
            out.append({
                "id": cell.id,
                "label": cell.label,
                "mean": cell.metrics[self.primary],
                "ci_low": cell.ci_low,
                "ci_high": cell.ci_high,
                "delta": None if versus is None else versus.diff,
                "p_adjusted": None if versus is None else versus.p_adjusted,
                "verdict": "baseline" if cell.id == self.baseline else versus.verdict if versus is not None else "-",
                "latency_ms": cell.latency_ms,
                "index_mb": cell.index_bytes / 2**20,
                "build_seconds": cell.build_seconds,
                "best": cell.id == self.best,
                "indistinguishable_from_best": cell.id in self.indistinguishable,
            })
        return out

    def summary_text(self) -> str:
        """The decision in words: the best cell, those indistinguishable from it, and the rest."""
        best = self.cell(self.best)
        value = best.metrics[self.primary]
        lines = [f"Best on {self.primary}: {best.label} ({value:.4f}, 95% CI {best.ci_low:.4f}-{best.ci_high:.4f})."]
        if self.versus_best is None:
            lines.append("Only one cell: nothing to compare.")
            return " ".join(lines)
        report = self.versus_best
        how = (
            f"paired {report.test} test over {self.n_queries} queries, {report.correction} correction over "
            f"{report.family_size} comparisons, alpha {report.alpha:g}"
        )
        same = [self.cell(i).label for i in self.indistinguishable]
        others = len(self.cells) - 1 - len(same)
        if same:
            lines.append(f"Indistinguishable from it ({how}): " + "; ".join(same) + ".")
        else:
            lines.append(f"Every other cell is significantly different from it ({how}).")
        if same and others:
            lines.append(f"The other {others} cell(s) are significantly worse.")
        if self.baseline != self.best:
            base = self.cell(self.baseline)
            versus = self.comparison.get(best.label, self.primary)
            lines.append(
                f"Against the baseline {base.label} ({base.metrics[self.primary]:.4f}) the best differs by "
                f"{versus.diff:+.4f} ({versus.verdict}, adjusted p {versus.p_adjusted:.3g})."
            )
        return " ".join(lines)

    def table(self) -> str:
        """The table as text."""
        from ef._console import format_table

        headers = [
            "cell", self.primary, "95% CI", "delta", "p (adj.)", "vs baseline", "ms/query", "index MB", "build s",
        ]
        rows = []
        for row in self.rows():
            mark = " *" if row["best"] else " =" if row["indistinguishable_from_best"] else ""
            rows.append([
                row["label"] + mark,
                f"{row['mean']:.4f}",
                f"{row['ci_low']:.4f}-{row['ci_high']:.4f}",
                "-" if row["delta"] is None else f"{row['delta']:+.4f}",
                "-" if row["p_adjusted"] is None else f"{row['p_adjusted']:.3g}",
                row["verdict"],
                f"{row['latency_ms']:.2f}",
                f"{row['index_mb']:.2f}",
                f"{row['build_seconds']:.2f}",
            ])
        return format_table(headers, rows)

    def __str__(self) -> str:
        legend = "* best; = indistinguishable from the best"
        return f"{self.table()}\n{legend}\n\n{self.summary_text()}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the settings, every cell (without per-query values), the rows and the text."""
        return {
            "dataset": self.dataset,
            "measures": list(self.measures),
            "n_queries": self.n_queries,
            "best": self.best,
            "baseline": self.baseline,
            "indistinguishable": list(self.indistinguishable),
            "settings": dict(self.settings),
            "cells": [cell.to_dict() for cell in self.cells],
            "rows": self.rows(),
            "summary": self.summary_text(),
            "scored": list(self.scored),
            "loaded": list(self.loaded),
            "counts": {name: dict(values) for name, values in self.counts.items()},
            "seconds": self.seconds,
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def report(self) -> Any:
        """The HTML report (:class:`ef.report.Report`): the table, the text and the figures."""
        from ef.sweep._report import sweep_report

        return sweep_report(self)

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`report` as one self-contained HTML file (the ``report`` extra)."""
        written: Path = self.report().to_html(path)
        return written

    def _repr_html_(self) -> str:
        """In a notebook: the page :meth:`to_html` writes, in a sandboxed frame; without the ``report``
        extra, the table."""
        try:
            return str(self.report()._repr_html_())
        except ImportError:
            import html

            return f"<pre>{html.escape(self.table())}</pre>"


def per_query_table(cells: Sequence[CellResult], measure: str) -> dict[str, dict[str, float]]:
    """``{label: {query_id: value}}`` of one measure (what a comparison pairs)."""
    return {c.label: {q: v[measure] for q, v in c.per_query.items()} for c in cells}
