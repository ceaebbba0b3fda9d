"""What a sweep found (:class:`SweepResult`), and its renderings: the text table, the decision in
words, JSON, and the HTML report with three figures (Vega-Lite, built with Altair).

The result and its renderings share a module: the page reads the result, and the result's
methods make the page, so apart they would import each other. :mod:`ef.sweep._sweep` makes the
result; the cells it holds are :class:`~ef.sweep._result.CellResult`.

The figures:

- ``chunk_size``: the primary measure against the chunking, one line per retriever (and
  reranker, k), with the 95% CI of each mean as a band;
- ``at_k``: the measure against k, one line per pipeline less its k, with CI bands;
- ``quality_latency``: each cell at its latency and quality, the Pareto front (no other cell is
  at least as good and at least as fast, and better in one) drawn as a line through its cells.

A figure is left out when the sweep does not vary what it plots (one chunking, one k).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef._console import format_table
from ef.sweep._result import CellResult

if TYPE_CHECKING:
    from ef.comparison._report import ComparisonReport
    from ef.report._page import Report, Table

# ef.report is imported where a page or a figure is made: importing ef.sweep (a sweep, its
# table and its JSON) does not load the report package.

__all__ = ["SweepResult", "pareto_front", "sweep_report"]

@dataclass(frozen=True)
class SweepResult:
    """A sweep's cells (in grid order) and its decision.

    ``comparison`` tests every cell against ``baseline`` (a :class:`~ef.compare.ComparisonReport`,
    paired over the queries, p-values corrected over the whole family); ``versus_best`` tests
    every cell against ``best`` (the same report when the baseline is the best cell); both are
    ``None`` when there is nothing to compare (one cell, or one query). ``indistinguishable``
    lists the cells whose difference from the best is not significant.
    ``scored`` and ``loaded`` are the ids this call scored and read back; ``counts`` what its
    workspace computed (see :class:`ef.pipeline_stages.Workspace`).
    """

    dataset: str
    measures: tuple[str, ...]
    higher_is_better: bool
    cells: tuple[CellResult, ...]
    best: str
    baseline: str
    comparison: ComparisonReport | None
    versus_best: ComparisonReport | None
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
            f"{report.family_size} comparison{'s' if report.family_size != 1 else ''}, alpha {report.alpha:g}"
        )
        same = [self.cell(i).label for i in self.indistinguishable]
        others = len(self.cells) - 1 - len(same)
        if same:
            lines.append(f"Indistinguishable from it ({how}): " + "; ".join(same) + ".")
        else:
            lines.append(f"Every other cell is significantly different from it ({how}).")
        if same and others:
            lines.append(f"The other {others} cell(s) are significantly worse.")
        if self.baseline != self.best and self.comparison is not None:
            base = self.cell(self.baseline)
            versus = self.comparison.get(best.label, self.primary)
            lines.append(
                f"Against the baseline {base.label} ({base.metrics[self.primary]:.4f}) the best differs by "
                f"{versus.diff:+.4f} ({versus.verdict}, adjusted p {versus.p_adjusted:.3g})."
            )
        return " ".join(lines)

    def table(self) -> str:
        """The table as text."""
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

    def report(self) -> Report:
        """The HTML report (:class:`ef.report.Report`): the table, the text and the figures."""
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


_WIDTH = 640


def pareto_front(points: Sequence[tuple[float, float]], *, higher_is_better: bool = True) -> list[int]:
    """Indices of the points (latency, quality) no other point dominates, by latency ascending.

    A point dominates another when it is at least as fast and at least as good, and strictly
    one of the two.

    >>> pareto_front([(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (2.0, 0.4), (0.5, 0.5)])
    [4, 1]
    >>> pareto_front([(1.0, float("nan"))])  # NaN compares false: it was on the front, undominated
    Traceback (most recent call last):
    ...
    ValueError: 'points'[0] must be a (latency, quality) pair of numbers, not NaN (got (1.0, nan))
    """
    given: object = points  # typed, but a caller's may be anything
    if _is_array(given):  # an (n, 2) array of latencies and qualities is a sequence of pairs too
        given = given.tolist()  # type: ignore[attr-defined]
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise TypeError(f"'points' must be a sequence of (latency, quality) pairs (got {type(given).__name__})")
    pairs: list[tuple[float, float]] = []
    for i, point in enumerate(given):
        values: object = point.tolist() if _is_array(point) else point
        if not isinstance(values, Sequence) or isinstance(values, str) or len(values) != 2 or not all(
            type(v) is not bool and isinstance(v, Real) for v in values
        ):
            raise ValueError(f"'points'[{i}] must be a (latency, quality) pair of numbers (got {point!r:.80})")
        if any(math.isnan(v) for v in values):
            raise ValueError(f"'points'[{i}] must be a (latency, quality) pair of numbers, not NaN (got {point!r:.80})")
        pairs.append((values[0], values[1]))
    points = pairs
    sign = 1.0 if higher_is_better else -1.0
    front = []
    for i, (latency, quality) in enumerate(points):
        dominated = any(
            (other_latency <= latency and sign * other_quality >= sign * quality)
            and (other_latency < latency or sign * other_quality > sign * quality)
            for j, (other_latency, other_quality) in enumerate(points)
            if j != i
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -sign * points[i][1]))


def _is_array(value: object) -> bool:
    """Whether `value` is a numpy array (told without importing numpy for a list)."""
    return type(value).__module__ == "numpy" and type(value).__name__ == "ndarray"


def _chunk_order(cells: Sequence[CellResult]) -> list[str]:
    keyed = {(c.pipeline.unit, c.pipeline.size if c.pipeline.size is not None else float("inf"), c.pipeline.overlap):
             c.pipeline.chunking_label for c in cells}
    return [keyed[key] for key in sorted(keyed)]


_COLOURS = 20  # the category20 scheme's


def _band_lines(name: str, rows: Sequence[Mapping[str, Any]], *, x: Any, y_title: str) -> dict[str, Any]:
    from ef.report import _deps
    from ef.report._figures import _data, _finish

    alt = _deps.altair()
    # 20 colours (a sweep draws a dozen lines and more) and opaque legend symbols (not the bands' opacity).
    legend = alt.Legend(orient="bottom", columns=1, labelLimit=600, symbolOpacity=1)
    series = list(dict.fromkeys(row["series"] for row in rows))
    if len(series) > _COLOURS:  # the legend shows each line's stroke, dashes included
        legend = alt.Legend(orient="bottom", columns=1, labelLimit=600, symbolOpacity=1, symbolType="stroke",
                            symbolStrokeWidth=3, symbolSize=400)
    colour = alt.Color("series:N", title=None, sort=None, legend=legend,
                       scale=alt.Scale(scheme="category20", domain=series))
    base = alt.Chart(_data(name)).encode(x=x, color=colour)
    if len(series) > _COLOURS:  # colours come round again: the 21st line on is dashed (one legend for both)
        dashes = [[1, 0] if i < _COLOURS else [6, 3] for i in range(len(series))]
        base = base.encode(strokeDash=alt.StrokeDash(
            "series:N", title=None, sort=None, legend=legend, scale=alt.Scale(domain=series, range=dashes)
        ))
    tooltip = [alt.Tooltip("label:N", title="cell"), alt.Tooltip("value:Q", format=".4f"),
               alt.Tooltip("low:Q", title="95% CI low", format=".4f"),
               alt.Tooltip("high:Q", title="95% CI high", format=".4f")]
    y = alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False))
    band = base.mark_area(opacity=0.08).encode(
        y=alt.Y("low:Q", title=y_title, scale=alt.Scale(zero=False)), y2="high:Q"
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True)).encode(y=y, tooltip=tooltip)
    return _finish(alt.layer(band, line).properties(width=_WIDTH, height=300), (name, rows))


def _row(cell: CellResult, primary: str, series: str) -> dict[str, Any]:
    return {"label": cell.label, "id": cell.id, "series": series, "value": cell.metrics[primary],
            "low": cell.ci_low, "high": cell.ci_high}


def chunk_size_chart(result: SweepResult) -> dict[str, Any] | None:
    """The measure against the chunking (x ordered by size, whole documents last)."""
    from ef.report import _deps

    cells = result.cells
    order = _chunk_order(cells)
    if len(order) < 2:
        return None
    alt = _deps.altair()
    rows = []
    for c in cells:
        p = c.pipeline
        series = " | ".join(x for x in (p.retriever_label, p.rerank_label, f"k={p.k}") if x)
        rows.append({**_row(c, result.primary, series), "chunking": p.chunking_label})
    x = alt.X("chunking:O", title="chunk size (whole docs last)", sort=order, axis=alt.Axis(labelAngle=0))
    return _band_lines("chunk_size", rows, x=x, y_title=result.primary)


def at_k_chart(result: SweepResult) -> dict[str, Any] | None:
    """The measure against k, one line per pipeline less its k."""
    from ef.report import _deps

    ks = sorted({c.pipeline.k for c in result.cells})
    if len(ks) < 2:
        return None
    alt = _deps.altair()
    rows = []
    for c in result.cells:
        p = c.pipeline
        series = " | ".join(x for x in (p.retriever_label, p.chunking_label, p.rerank_label) if x)
        rows.append({**_row(c, result.primary, series), "k": p.k})
    log = max(ks) >= 10 * min(ks)
    x = alt.X("k:Q", title="k (chunks passed on)", scale=alt.Scale(type="log") if log else alt.Undefined,
              axis=alt.Axis(values=ks, format="d"))
    return _band_lines("at_k", rows, x=x, y_title=result.primary)


def quality_latency_chart(result: SweepResult) -> dict[str, Any]:
    """Each cell at (latency, quality); the Pareto front as a line through its cells."""
    from ef.report import _deps
    from ef.report._figures import _data, _finish

    alt = _deps.altair()
    cells = result.cells
    front = pareto_front([(c.latency_ms, c.metrics[result.primary]) for c in cells],
                         higher_is_better=result.higher_is_better)
    on_front = set(front)
    rows = [{**_row(c, result.primary, c.pipeline.retriever), "latency_ms": c.latency_ms,
             "pareto": "on the Pareto front" if i in on_front else "dominated"} for i, c in enumerate(cells)]
    front_rows = [{"latency_ms": cells[i].latency_ms, "value": cells[i].metrics[result.primary], "order": n}
                  for n, i in enumerate(front)]
    latencies = [c.latency_ms for c in cells if c.latency_ms > 0]
    log = bool(latencies) and len(latencies) == len(cells) and max(latencies) >= 10 * min(latencies)
    x = alt.X("latency_ms:Q", title="latency (ms per query)", scale=alt.Scale(type="log") if log else alt.Undefined)
    y = alt.Y("value:Q", title=result.primary, scale=alt.Scale(zero=False))
    line = (alt.Chart(_data("pareto_front")).mark_line(color="#e45756", strokeDash=[5, 3])
            .encode(x=x, y=y, order="order:Q"))
    points = alt.Chart(_data("quality_latency")).mark_point(size=90, filled=True).encode(
        x=x, y=y,
        color=alt.Color("series:N", title="retriever"),
        shape=alt.Shape("pareto:N", title=None, scale=alt.Scale(domain=["on the Pareto front", "dominated"],
                                                                  range=["diamond", "circle"])),
        tooltip=[alt.Tooltip("label:N", title="cell"), alt.Tooltip("value:Q", format=".4f"),
                 alt.Tooltip("latency_ms:Q", title="ms/query", format=".3f"), alt.Tooltip("pareto:N")],
    )
    return _finish(alt.layer(line, points).properties(width=_WIDTH, height=320),
                   ("pareto_front", front_rows), ("quality_latency", rows))


def _table(result: SweepResult) -> Table:
    from ef.report._page import Cell, Table

    rows = []
    for row in result.rows():
        mark = " (best)" if row["best"] else " (= best)" if row["indistinguishable_from_best"] else ""
        rows.append((
            Cell(row["label"] + mark), Cell(row["id"]),
            Cell(f"{row['mean']:.4f}", row["mean"], "num"),
            Cell(f"{row['ci_low']:.4f}–{row['ci_high']:.4f}"),
            Cell("-") if row["delta"] is None else Cell(f"{row['delta']:+.4f}", row["delta"], "num"),
            Cell("-") if row["p_adjusted"] is None else Cell(f"{row['p_adjusted']:.3g}", row["p_adjusted"], "num"),
            Cell(row["verdict"]),
            Cell(f"{row['latency_ms']:.2f}", row["latency_ms"], "num"),
            Cell(f"{row['index_mb']:.2f}", row["index_mb"], "num"),
            Cell(f"{row['build_seconds']:.2f}", row["build_seconds"], "num"),
        ))
    headers = ("cell", "id", result.primary, "95% CI", "delta vs baseline", "p (adjusted)", "vs baseline",
               "ms/query", "index MB", "build s")
    caption = (f"{result.n_queries} queries; chunk runs collapsed to their source documents by max score; "
               f"CI: percentile bootstrap of the mean; delta and p: paired {result.settings.get('test')} test "
               f"against the baseline, {result.settings.get('correction')} correction over the family.")
    return Table("sweep", headers, tuple(rows), caption)


def sweep_report(result: SweepResult) -> Report:
    """The report of a sweep: the table, the decision in words, the figures and the cache counts."""
    from ef.report import _deps
    from ef.report._page import Figure, Report, Section, Table, Text

    _deps.require_report_extra()
    figures: list[Figure] = []
    chunk = chunk_size_chart(result)
    if chunk is not None:
        figures.append(Figure("chunk_size", f"{result.primary} vs chunk size", chunk,
                              "One line per retriever (with its reranker and k); bands: 95% CI of the mean."))
    at_k = at_k_chart(result)
    if at_k is not None:
        figures.append(Figure("at_k", f"{result.primary} vs k", at_k,
                              "One line per pipeline without its k; bands: 95% CI of the mean."))
    figures.append(Figure("quality_latency", f"{result.primary} vs latency", quality_latency_chart(result),
                          "Diamonds and the dashed line: the Pareto front (no cell is both better and faster)."))
    counts = [(name, key, value) for name, values in result.counts.items() for key, value in values.items()]
    sections = [
        Section("decision", "Decision", (Text(result.summary_text()), _table(result))),
        Section("figures", "Figures", tuple(figures)),
        Section("caching", "What was computed", (
            Table.of("counts", ["stage", "key", "times"], counts,
                     caption="Computed by this run (cells read back from the sweep folder compute nothing; "
                             "'loaded' counts vectors read from the cache)."),
        )),
    ]
    facts = {
        "dataset": result.dataset,
        "queries": str(result.n_queries),
        "cells": f"{len(result.cells)} ({len(result.scored)} scored now, {len(result.loaded)} read back)",
        "measure": result.primary,
        "baseline": result.cell(result.baseline).label,
        "hybrid fusion": str(result.settings.get("fusion")),
    }
    return Report("sweep", f"Sweep over {result.dataset}", tuple(sections), facts)
