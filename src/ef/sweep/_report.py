"""The sweep's HTML report: the table, the decision, and three figures (Vega-Lite, built with Altair).

- ``chunk_size``: the primary measure against the chunking, one line per retriever (and
  reranker, k), with the 95% CI of each mean as a band;
- ``at_k``: the measure against k, one line per pipeline less its k, with CI bands;
- ``quality_latency``: each cell at its latency and quality, the Pareto front (no other cell is
  at least as good and at least as fast, and better in one) drawn as a line through its cells.

A figure is left out when the sweep does not vary what it plots (one chunking, one k).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.report import _deps
from ef.report._figures import _data, _finish
from ef.report._page import Cell, Figure, Report, Section, Table, Text

if TYPE_CHECKING:
    from ef.sweep._result import CellResult, SweepResult

__all__ = ["pareto_front", "sweep_report"]

_WIDTH = 640


def pareto_front(points: Sequence[tuple[float, float]], *, higher_is_better: bool = True) -> list[int]:
    """Indices of the points (latency, quality) no other point dominates, by latency ascending.

    A point dominates another when it is at least as fast and at least as good, and strictly
    one of the two.

    >>> pareto_front([(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (2.0, 0.4), (0.5, 0.5)])
    [4, 1]
    """
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


def _chunk_order(cells: Sequence[CellResult]) -> list[str]:
    keyed = {(c.pipeline.unit, c.pipeline.size if c.pipeline.size is not None else float("inf"), c.pipeline.overlap):
             c.pipeline.chunking_label for c in cells}
    return [keyed[key] for key in sorted(keyed)]


_COLOURS = 20  # the category20 scheme's


def _band_lines(name: str, rows: Sequence[Mapping[str, Any]], *, x: Any, y_title: str) -> dict[str, Any]:
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
