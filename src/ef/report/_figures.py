"""The charts, as Vega-Lite specs built with Altair; each takes plain rows and returns a dict.

Every chart names its data (``"curves"``, ``"per_query"`` …) so the page's script, and the
browser test, can read back exactly what a chart draws from its Vega view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.report import _deps

__all__ = [
    "at_k_chart",
    "bar_chart",
    "forest_chart",
    "precision_recall_chart",
    "share_chart",
    "sorted_differences_chart",
    "strip_chart",
    "wins_chart",
]

Rows = Sequence[Mapping[str, Any]]
_WIDTH = 640
_FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


def _finish(chart: Any, *datasets: tuple[str, Rows]) -> dict[str, Any]:
    """The chart's spec with its rows in top-level ``datasets``.

    Altair validates a spec against the Vega-Lite schema row by row; the rows are added after
    that (300 queries x 25 measures took half a minute to validate), under the names the
    chart's ``{"name": ...}`` data refer to.
    """
    spec: dict[str, Any] = chart.configure(font=_FONT).configure_view(stroke=None).to_dict()
    spec["datasets"] = {name: [dict(row) for row in rows] for name, rows in datasets}
    return spec


def _data(name: str) -> Any:
    return _deps.altair().NamedData(name=name)


def at_k_chart(name: str, rows: Rows, *, y_title: str, band: bool = False) -> dict[str, Any]:
    """Lines of ``value`` against ``k``, one per ``metric``; with `band`, each ``low``–``high`` an error bar.

    A log scale on k when the cutoffs span a factor of ten or more (1, 10, 100 …). With `band`,
    the lines differ in dash as well as colour, each is named at its right end (no legend to
    match), and the metrics' intervals at one k are set slightly apart (``k_shown``) so that none
    hides another; the tooltip gives the exact k, mean and interval.
    """
    alt = _deps.altair()
    ks = [row["k"] for row in rows]
    log = bool(ks) and max(ks) >= 10 * min(ks)
    metrics = list(dict.fromkeys(str(row["metric"]) for row in rows))
    if band:
        rows = _dodged(rows, metrics, log)
    x = alt.X(
        "k_shown:Q" if band else "k:Q",
        title="k (cutoff)",
        scale=alt.Scale(type="log") if log else alt.Undefined,
        axis=alt.Axis(values=sorted(set(ks)), format="d"),
    )
    base = alt.Chart(_data(name)).encode(
        x=x,
        color=alt.Color("metric:N", title="metric", sort=metrics, legend=None if band else alt.Undefined),
    )
    tooltip = [alt.Tooltip("metric:N"), alt.Tooltip("k:Q"), alt.Tooltip("value:Q", format=".4f")]
    if not band:
        line = base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True)).encode(
            y=alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=True)), tooltip=tooltip
        )
        return _finish(line.properties(width=_WIDTH, height=300), (name, rows))
    tooltip += [
        alt.Tooltip("low:Q", title="95% CI low", format=".4f"),
        alt.Tooltip("high:Q", title="95% CI high", format=".4f"),
    ]
    interval = base.mark_rule(strokeWidth=2).encode(y=alt.Y("low:Q", title=y_title), y2="high:Q", tooltip=tooltip)
    line = base.mark_line(point=alt.OverlayMarkDef(size=50, filled=True)).encode(
        y=alt.Y("value:Q", scale=alt.Scale(zero=True)),
        strokeDash=alt.StrokeDash("metric:N", sort=metrics, legend=None),
        tooltip=tooltip,
    )
    text = (
        alt.Chart(_data(f"{name}_labels"))
        .mark_text(align="left", dx=8, fontSize=12, fontWeight="bold")
        .encode(x=x, y="label_y:Q", text="metric:N", color=alt.Color("metric:N", sort=metrics, legend=None))
    )
    labels = _end_labels(rows)
    return _finish(
        alt.layer(interval, line, text).properties(width=_WIDTH - 140, height=320),
        (name, rows),
        (f"{name}_labels", labels),
    )


def _end_labels(rows: Rows) -> list[dict[str, Any]]:
    """Each metric's row at the largest k, with ``label_y``: its value, moved down just enough that
    no two labels overlap (lines that end at one value would otherwise print their names on top
    of each other). In the metrics' order."""
    last = max(row["k"] for row in rows)
    ends = [dict(row) for row in rows if row["k"] == last]
    top = max([1.0, *(float(row.get("high") or row["value"]) for row in rows)])
    gap = 0.055 * top  # about one 12 px line on the 320 px axis
    right = max((float(row.get("k_shown", row["k"])) for row in ends), default=float(last))
    for row in ends:
        row["k_shown"] = right  # the names start together, right of the last (dodged) point
    placed: float | None = None
    for row in sorted(ends, key=lambda r: -float(r["value"])):
        y = float(row["value"]) if placed is None else min(float(row["value"]), placed - gap)
        row["label_y"] = placed = y
    return ends


def _dodged(rows: Rows, metrics: Sequence[str], log: bool) -> list[dict[str, Any]]:
    """Each row with ``k_shown``: k moved a little left or right by its metric's place, so that intervals
    at one k stand side by side (multiplicatively on a log scale)."""
    spread = 0.06 if log else 0.015
    ks = sorted({row["k"] for row in rows})
    width = (ks[-1] - ks[0]) if len(ks) > 1 else 1.0
    out = []
    for row in rows:
        offset = metrics.index(str(row["metric"])) - (len(metrics) - 1) / 2
        k = row["k"]
        shown = k * (1 + spread) ** offset if log else k + offset * spread * width
        out.append({**row, "k_shown": shown})
    return out


def precision_recall_chart(name: str, rows: Rows) -> dict[str, Any]:
    """Interpolated ``precision`` against ``recall`` (trec_eval's 11 points), both from 0 to 1."""
    alt = _deps.altair()
    chart = (
        alt.Chart(_data(name))
        .mark_line(point=alt.OverlayMarkDef(size=50, filled=True), color="#4c78a8")
        .encode(
            x=alt.X("recall:Q", title="recall", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("precision:Q", title="interpolated precision (mean over queries)", scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("measure:N"),
                alt.Tooltip("recall:Q", format=".2f"),
                alt.Tooltip("precision:Q", format=".4f"),
            ],
        )
    )
    return _finish(chart.properties(width=420, height=320), (name, rows))


def share_chart(name: str, rows: Rows, *, order: Sequence[str], bands: Sequence[str]) -> dict[str, Any]:
    """Per ``metric`` one bar from 0 to 1, split into the ``share`` of queries in each ``band`` (in `bands`
    order, red for the first through to green for the last); hover shows the ``count``."""
    alt = _deps.altair()
    palette = ["#cf222e", "#f4a261", "#e9c46a", "#a7c957", "#6a994e", "#1a7f37"]
    chart = (
        alt.Chart(_data(name))
        .mark_bar()
        .encode(
            y=alt.Y("metric:N", title=None, sort=list(order), axis=alt.Axis(labelLimit=260)),
            x=alt.X(
                "share:Q",
                title="share of queries",
                stack="zero",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=alt.Color(
                "band:N",
                title="value",
                sort=list(bands),
                scale=alt.Scale(domain=list(bands), range=palette[: len(bands)]),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("metric:N"),
                alt.Tooltip("band:N", title="value"),
                alt.Tooltip("count:Q", title="queries"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
    )
    return _finish(chart.properties(width=_WIDTH - 120, height=alt.Step(22)), (name, rows))


def strip_chart(
    name: str,
    rows: Rows,
    means: Rows,
    *,
    order: Sequence[str],
    x_title: str = "per-query value",
    tooltip: Sequence[str] = ("query_id", "metric", "value"),
    intervals: bool = False,
) -> dict[str, Any]:
    """Each row a point at ``value``, one line per ``metric`` (jittered by ``jitter`` in [0, 1]).

    `means` (``metric``, ``value``, optional ``low``/``high``) marks each mean with a red tick
    and, with `intervals`, its confidence interval as a rule. Hovering a point shows `tooltip`.
    """
    alt = _deps.altair()
    # A band scale: on a point scale (the default for dots) the jitter offset would have no room.
    y = alt.Y(
        "metric:N",
        title=None,
        sort=list(order),
        axis=alt.Axis(labelLimit=260),
        scale=alt.Scale(type="band", paddingInner=0.25, paddingOuter=0.1),
    )
    points = (
        alt.Chart(_data(name))
        .mark_circle(size=22, opacity=0.45)
        .encode(
            x=alt.X("value:Q", title=x_title),
            y=y,
            yOffset=alt.YOffset("jitter:Q", scale=alt.Scale(domain=[0, 1])),
            color=alt.value("#4c78a8"),
            tooltip=[
                alt.Tooltip(f"{f}:{'Q' if f == 'value' else 'N'}", format=".4f")
                if f == "value"
                else alt.Tooltip(f"{f}:N")
                for f in tooltip
            ],
        )
    )
    summary = alt.Chart(_data(f"{name}_mean"))
    mean_tooltip = [alt.Tooltip("metric:N"), alt.Tooltip("value:Q", title="mean", format=".4f")]
    layers = [points]
    if intervals:
        mean_tooltip += [
            alt.Tooltip("low:Q", title="95% CI low", format=".4f"),
            alt.Tooltip("high:Q", title="95% CI high", format=".4f"),
        ]
        layers.append(summary.mark_rule(color="#e45756", strokeWidth=2).encode(x="low:Q", x2="high:Q", y=y))
    layers.append(
        summary.mark_tick(color="#e45756", thickness=3, size=18).encode(x="value:Q", y=y, tooltip=mean_tooltip)
    )
    height = max(60, 34 * len(order))
    return _finish(alt.layer(*layers).properties(width=_WIDTH, height=height), (name, rows), (f"{name}_mean", means))


def bar_chart(name: str, rows: Rows, *, x_title: str, facet: str | None = None) -> dict[str, Any]:
    """Horizontal bars of ``value`` per ``label``; with `facet`, one panel per value of that field."""
    alt = _deps.altair()
    chart = (
        alt.Chart(_data(name))
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X("value:Q", title=x_title),
            y=alt.Y("label:N", title=None, sort=None),
            tooltip=[alt.Tooltip("label:N"), alt.Tooltip("value:Q", format=",.4f")],
        )
    )
    text = chart.mark_text(align="left", dx=3, color="#1f2328").encode(text=alt.Text("value:Q", format=",.4~f"))
    layered = alt.layer(chart, text).properties(width=_WIDTH if facet is None else 260, height=alt.Step(18))
    if facet is not None:
        layered = layered.facet(row=alt.Row(f"{facet}:N", title=None, sort=None)).resolve_scale(x="independent")
    return _finish(layered, (name, rows))


def forest_chart(name: str, rows: Rows) -> dict[str, Any]:
    """Each ``metric``'s mean ``difference`` (B − A) as a point with its ``low``–``high`` interval."""
    alt = _deps.altair()
    base = alt.Chart(_data(name)).encode(y=alt.Y("metric:N", title=None, sort=None))
    colour = alt.Color(
        "verdict:N",
        title=None,
        scale=alt.Scale(
            domain=["better", "worse", "no significant difference"], range=["#1a7f37", "#cf222e", "#6e7781"]
        ),
    )
    tooltip = [
        alt.Tooltip("metric:N"),
        alt.Tooltip("difference:Q", format="+.4f"),
        alt.Tooltip("low:Q", title="CI low", format="+.4f"),
        alt.Tooltip("high:Q", title="CI high", format="+.4f"),
        alt.Tooltip("p_value:Q", title="p", format=".4g"),
    ]
    zero = alt.Chart(_data(f"{name}_zero")).mark_rule(color="#8c959f", strokeDash=[4, 3]).encode(x="zero:Q")
    rule = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="difference (system − vs)"), x2="high:Q", color=colour
    )
    point = base.mark_point(filled=True, size=70).encode(x="difference:Q", color=colour, tooltip=tooltip)
    return _finish(
        alt.layer(zero, rule, point).properties(width=_WIDTH, height=alt.Step(26)),
        (name, rows),
        (f"{name}_zero", [{"zero": 0}]),
    )


def sorted_differences_chart(name: str, rows: Rows, *, facet: str, order: Sequence[str]) -> dict[str, Any]:
    """One bar per query at ``position`` (sorted by ``difference``), a panel per value of `facet`.

    Green where the system won, red where it lost (``outcome``); hover shows both values.
    """
    alt = _deps.altair()
    chart = (
        alt.Chart(_data(name))
        .mark_bar()
        .encode(
            x=alt.X("position:O", title="sorted by the difference", axis=alt.Axis(labels=False, ticks=False)),
            y=alt.Y("difference:Q", title="system − vs"),
            color=alt.Color(
                "outcome:N",
                title=None,
                scale=alt.Scale(domain=["win", "tie", "loss"], range=["#1a7f37", "#8c959f", "#cf222e"]),
            ),
            tooltip=[
                alt.Tooltip("query_id:N", title="id"),
                alt.Tooltip("a:Q", title="vs", format=".4f"),
                alt.Tooltip("b:Q", title="system", format=".4f"),
                alt.Tooltip("difference:Q", format="+.4f"),
            ],
        )
        .properties(width=_WIDTH, height=150)
    )
    faceted = chart.facet(
        row=alt.Row(f"{facet}:N", title=None, sort=list(order), header=alt.Header(labelAngle=0, labelAlign="left"))
    ).resolve_scale(x="independent", y="independent")
    return _finish(faceted, (name, rows))


def wins_chart(name: str, rows: Rows, *, unit: str = "queries") -> dict[str, Any]:
    """Stacked bars per ``metric``: how many queries (samples) the system won, tied and lost."""
    alt = _deps.altair()
    chart = (
        alt.Chart(_data(name))
        .mark_bar()
        .encode(
            y=alt.Y("metric:N", title=None, sort=None),
            x=alt.X("count:Q", title=unit, stack="zero", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color(
                "outcome:N",
                title=None,
                sort=["win", "tie", "loss"],
                scale=alt.Scale(domain=["win", "tie", "loss"], range=["#1a7f37", "#8c959f", "#cf222e"]),
            ),
            order=alt.Order("order:Q"),
            tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("outcome:N"), alt.Tooltip("count:Q")],
        )
    )
    return _finish(chart.properties(width=_WIDTH, height=alt.Step(24)), (name, rows))
