"""The comparison report: is B better than A, by how much, and where does it lose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.report import _figures
from ef.report._evaluation import _snippet, ranked, results_table
from ef.report._page import Cell, Figure, Report, Section, Table, Text, cell

__all__ = ["comparison_report"]

Run = Mapping[str, Mapping[str, float]]
_BETTER, _WORSE = "▲", "▼"  # as ef compare's table marks them
_SORTED_SHOWN = 12  # sorted-difference panels: one per comparison, at most this many
_SENTENCES = 12  # comparisons said in words under the table, at most this many


def _as_dict(comparison: object) -> Mapping[str, Any]:
    if hasattr(comparison, "to_dict") and not isinstance(comparison, Mapping):
        comparison = comparison.to_dict()
    if not isinstance(comparison, Mapping) or "comparisons" not in comparison:
        raise TypeError(
            "'comparison' must be an ef.compare ComparisonReport (from compare() or compare_results()) or its "
            f"to_dict(); got {type(comparison).__name__}"
        )
    if "per_query" not in comparison or "queries" not in comparison:
        raise ValueError("'comparison' has no per-query values: save it with to_dict(per_query=True)")
    return comparison


def _one(data: Mapping[str, Any]) -> str:
    unit = str(data.get("unit", "queries"))
    return {"queries": "query", "samples": "sample"}.get(unit, unit)


def _label(c: Mapping[str, Any]) -> str:
    return f"{c['system']} − {c['baseline']}: {c['measure']}"


def _outcome(diff: float, higher_is_better: bool) -> str:
    if diff == 0:
        return "tie"
    return "win" if (diff > 0) == higher_is_better else "loss"


def _p_cell(value: float) -> Cell:
    return Cell("<0.0001" if value < 0.0001 else f"{value:.4f}", value, css="num")


def _verdict(c: Mapping[str, Any], data: Mapping[str, Any], level: str) -> str:
    """One comparison in words: which system is better, by how much, how sure (CI and corrected p).

    ``"better"`` and ``"worse"`` are in the measure's direction (lower is better for some), as decided
    by the report's test and correction; anything else is no significant difference.
    """
    says = {"better": "is better than", "worse": "is worse than"}.get(
        c["verdict"], "is not significantly better or worse than"
    )
    correction = str(data.get("correction", "none"))
    p_name = "p" if correction == "none" else f"{correction}-corrected p"
    p = c["p_adjusted"]
    p_text = "< 0.0001" if p < 0.0001 else f"{p:.4f}"
    alpha = data.get("alpha")
    direction = "" if c["higher_is_better"] else " (lower is better)"
    n = c.get("n_queries", data.get("n_queries"))
    return (
        f"{c['system']} {says} {c['baseline']} on {c['measure']}{direction}: {c['diff']:+.4f} "
        f"({level} {c['ci_low']:+.4f} to {c['ci_high']:+.4f}); {p_name} {p_text} (alpha {alpha:g}), "
        f"over {n} {data.get('unit', 'queries')}."
    )


def _signed(value: float) -> Cell:
    return Cell(f"{value:+.4f}", value, css="num")


def comparison_report(
    comparison: object,
    *,
    runs: Mapping[str, Run] | None = None,
    qrels: Mapping[str, Mapping[str, float]] | None = None,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, str] | None = None,
    title: str | None = None,
    facts: Mapping[str, str] | None = None,
    losses: int = 5,
    depth: int = 10,
) -> Report:
    """The report of a comparison: table with marks, forest plot, sorted differences, W/T/L, losses.

    Parameters
    ----------
    comparison
        An ``ef.compare.ComparisonReport`` (:func:`ef.compare.compare` or fastrag's
        ``compare_results``), or its ``to_dict()`` / ``ef compare --format json`` output.
    runs
        System name → ``{query_id: {doc_id: score}}``: the largest losses then show both
        rankings side by side (without it, only their values).
    qrels, queries, corpus
        Relevance marks, query texts and result snippets for those rankings.
    title, facts
        The page title and ``label: value`` lines shown under it.
    losses
        How many of the largest-loss queries to drill into, for the first comparison.
    depth
        How many results of each ranking to show.
    """
    if isinstance(losses, bool) or not isinstance(losses, int) or losses < 0:
        raise ValueError(f"'losses' must be a non-negative integer (got {losses!r})")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"'depth' must be a positive integer (got {depth!r})")
    data = _as_dict(comparison)
    comparisons: list[Mapping[str, Any]] = list(data["comparisons"])
    query_ids: list[str] = list(data["queries"])
    unit = str(data.get("unit", "queries"))
    one = {"queries": "query", "samples": "sample"}.get(unit, unit)
    per_query: Mapping[str, Mapping[str, Sequence[float | None]]] = data["per_query"]
    confidence = float(data.get("confidence", 0.95))
    level = f"{round(confidence * 100, 6):g}% CI"
    correction = str(data.get("correction", "none"))

    rows = []
    for c in comparisons:
        mark = {"better": _BETTER, "worse": _WORSE}.get(c["verdict"], "")
        rows.append(
            (
                Cell(c["system"]),
                Cell(c["baseline"]),
                Cell(c["measure"] + ("" if c["higher_is_better"] else " ↓")),
                cell(c["system_mean"]),
                cell(c["baseline_mean"]),
                _signed(c["diff"]),
                _signed(c["ci_low"]),
                _signed(c["ci_high"]),
                cell(c["effect_size"]),
                _p_cell(c["p_value"]),
                _p_cell(c["p_adjusted"]),
                Cell(f"{c['wins']}/{c['ties']}/{c['losses']}"),
                Cell(mark, css={"better": "win", "worse": "loss"}.get(c["verdict"], "")),
            )
        )
    adjusted = "p" if correction == "none" else f"p ({correction})"
    legend = (
        f"{_BETTER} / {_WORSE}: system significantly better / worse than 'vs' ({adjusted} < {data.get('alpha')}). "
        f"{data.get('test_name', data.get('test', ''))}; family: "
        f"{data.get('family', {}).get('description', len(comparisons))}. d: paired Cohen's d; "
        f"W/T/L: {unit} won / tied / lost; ↓: lower is better."
    )
    table_blocks: list[Table | Figure | Text | Section] = [
        Table(
            "comparisons",
            (
                "system",
                "vs",
                "measure",
                "mean",
                "vs mean",
                "diff",
                f"{level} low",
                f"{level} high",
                "d",
                "p",
                adjusted,
                "W/T/L",
                "sig",
            ),
            tuple(rows),
            caption=legend,
        )
    ]
    table_blocks.extend(Text(_verdict(c, data, level), css="verdict") for c in comparisons[:_SENTENCES])
    if len(comparisons) > _SENTENCES:
        table_blocks.append(Text(f"… and {len(comparisons) - _SENTENCES} more comparisons in the table.", css="note"))
    table_blocks.extend(Text(f"Warning: {warning}", css="note") for warning in data.get("warnings", ()))
    sections = [Section("summary-section", "Comparisons", tuple(table_blocks))]

    forest = [
        {
            "metric": _label(c),
            "difference": c["diff"],
            "low": c["ci_low"],
            "high": c["ci_high"],
            "p_value": c["p_adjusted"],
            "verdict": {"better": "better", "worse": "worse"}.get(c["verdict"], "no significant difference"),
        }
        for c in comparisons
    ]
    sections.append(
        Section(
            "forest-section",
            "Differences with their confidence intervals",
            (
                Figure(
                    "forest",
                    f"Mean difference (system − vs) and its {level}",
                    _figures.forest_chart("forest", forest),
                    caption="Green: significantly better in the measure's direction; red: significantly worse; "
                    "grey: no significant difference after the correction.",
                ),
            ),
        )
    )

    sorted_rows: list[dict[str, Any]] = []
    for c in comparisons[:_SORTED_SHOWN]:
        base = per_query[c["baseline"]][c["measure"]]
        system = per_query[c["system"]][c["measure"]]
        paired = [(q, a, b) for q, a, b in zip(query_ids, base, system, strict=True) if a is not None and b is not None]
        for position, (q, a, b) in enumerate(sorted(paired, key=lambda item: (item[2] - item[1], item[0]))):
            sorted_rows.append(
                {
                    "comparison": _label(c),
                    "query_id": q,
                    "a": a,
                    "b": b,
                    "difference": b - a,
                    "position": position,
                    "outcome": _outcome(b - a, c["higher_is_better"]),
                }
            )
    if sorted_rows:
        sections.append(
            Section(
                "sorted-section",
                f"Per-{one} differences, sorted",
                (
                    Figure(
                        "sorted",
                        f"Every {one}'s difference (system − vs), smallest first",
                        _figures.sorted_differences_chart(
                            "sorted",
                            sorted_rows,
                            facet="comparison",
                            order=[_label(c) for c in comparisons[:_SORTED_SHOWN]],
                        ),
                        caption=f"One bar per {one} (hover for its id and both values); "
                        "green: the system won, red: it lost, in the measure's direction.",
                    ),
                ),
            )
        )

    wins = [
        {"metric": _label(c), "outcome": outcome, "count": c[key], "order": order}
        for c in comparisons
        for order, (outcome, key) in enumerate((("win", "wins"), ("tie", "ties"), ("loss", "losses")))
    ]
    sections.append(
        Section(
            "wins-section",
            "Wins, ties and losses",
            (
                Figure(
                    "wins",
                    f"{unit.capitalize()} won, tied and lost by the system",
                    _figures.wins_chart("wins", wins, unit=unit),
                ),
            ),
        )
    )

    if comparisons and losses:
        sections.append(_loss_section(comparisons[0], data, runs, qrels, queries, corpus, losses, depth))

    shown_facts = {
        unit: str(data.get("n_queries", len(query_ids))),
        "systems": ", ".join(data.get("systems", ())),
        **(facts or {}),
    }
    if data.get("baseline") is not None:
        shown_facts["baseline"] = str(data["baseline"])
    return Report("comparison", title or "Comparison", tuple(sections), shown_facts)


def _loss_section(
    c: Mapping[str, Any],
    data: Mapping[str, Any],
    runs: Mapping[str, Run] | None,
    qrels: Mapping[str, Mapping[str, float]] | None,
    queries: Mapping[str, str] | None,
    corpus: Mapping[str, str] | None,
    losses: int,
    depth: int,
) -> Section:
    per_query = data["per_query"]
    base, system = per_query[c["baseline"]][c["measure"]], per_query[c["system"]][c["measure"]]
    sign = 1.0 if c["higher_is_better"] else -1.0
    paired = [
        (sign * (b - a), q, a, b)
        for q, a, b in zip(data["queries"], base, system, strict=True)
        if a is not None and b is not None and sign * (b - a) < 0
    ]
    worst = sorted(paired)[:losses]
    blocks: list[Table | Figure | Text | Section] = []
    if not worst:
        blocks.append(Text(f"{c['system']} lost no {_one(data)} on {c['measure']}.", css="note"))
    for position, (_, query_id, a, b) in enumerate(worst, start=1):
        inner: list[Table | Figure | Text | Section] = []
        if queries is not None and query_id in queries:
            inner.append(Text(queries[query_id], css="query"))
        judged = (qrels or {}).get(query_id, {})
        sides: list[Table | Figure | Text | Section] = []
        for name, value in ((c["baseline"], a), (c["system"], b)) if runs else ():
            side: list[Table | Figure | Text | Section] = []
            run = (runs or {}).get(name)
            if run is not None:
                top = ranked(run.get(query_id, {}))[:depth]
                rows = [
                    (rank, doc_id, score, judged.get(doc_id), _snippet(corpus, doc_id))
                    for rank, (doc_id, score) in enumerate(top, start=1)
                ]
                side.append(results_table(f"loss-{position}-{name}", rows))
            else:
                side.append(Text(f"(no run of {name} was given)", css="note"))
            sides.append(Section(f"loss-{position}-{name}-side", f"{name}: {c['measure']} {value:.4f}", tuple(side)))
        if sides:
            inner.append(Section(f"loss-{position}-sides", "Rankings side by side", tuple(sides), side_by_side=True))
        else:
            inner.append(
                Text(
                    f"{c['baseline']}: {a:.4f}, {c['system']}: {b:.4f} (pass the runs to see both rankings)", css="note"
                )
            )
        blocks.append(
            Section(
                f"loss-{position}",
                f"{position}. {query_id}: {c['measure']} {a:.4f} → {b:.4f} ({b - a:+.4f})",
                tuple(inner),
            )
        )
    return Section(
        "losses-section", f"Largest losses of {c['system']} against {c['baseline']} on {c['measure']}", tuple(blocks)
    )
