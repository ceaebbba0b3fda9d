"""The evaluation report: what a RetrievalEvalReport or RunEvalReport says, as tables and charts."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ef.report import _figures
from ef.report._page import Cell, Figure, Report, Section, Table, Text, cell

__all__ = [
    "EvaluationData",
    "QueryDrillDown",
    "RankedDoc",
    "evaluation_data",
    "evaluation_report",
    "ranked",
]

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, float]]

# Measure families that take a rank cutoff, with the label their curve gets.
_CUTOFF_FAMILIES = {
    "ndcg_cut": "nDCG",
    "recall": "recall",
    "P": "precision",
    "recip_rank": "MRR",
    "map_cut": "MAP",
    "success": "hit rate",
}
_CURVE_ORDER = tuple(_CUTOFF_FAMILIES)
_PRIMARY = ("ndcg@10", "ndcg_cut_10", "ndcg_cut.10")
_SNIPPET = 180
_STRIP_MAX = 50  # more queries than this and one dot each saturates into bars: shares per band instead
_JUDGED_OMITTED = (
    "Not drawn: these qrels judge only relevant documents (no grade of 0 or below), so the share of the "
    "top k that has a judgement is P@k, not a measure of how complete the judgements are."
)
_MISSED_SHOWN = 20  # TREC topics can have hundreds of relevant documents


@dataclass(frozen=True, slots=True)
class RankedDoc:
    """One retrieved document of a drilled-down query; ``grade`` is ``None`` when unjudged."""

    rank: int
    doc_id: str
    score: float
    grade: float | None
    snippet: str | None


@dataclass(frozen=True, slots=True)
class QueryDrillDown:
    """A query with its score, its top results and the relevant documents it missed."""

    query_id: str
    text: str | None
    value: float
    results: tuple[RankedDoc, ...]
    missed: tuple[tuple[str, float, str | None], ...]  # (doc id, grade, snippet), the first 20
    n_missed: int  # how many relevant documents are missing in all
    # Rank of the first relevant document in the whole ranking (None: none retrieved, or no run/qrels).
    first_relevant: int | None = None


@dataclass(frozen=True, slots=True)
class EvaluationData:
    """Everything an evaluation report shows, as plain values (what the charts are drawn from)."""

    n_queries: int
    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    curves: tuple[Mapping[str, Any], ...]  # {"metric", "k", "value", "measure"}
    judged: tuple[Mapping[str, Any], ...]  # {"metric": "judged", "k", "value", "queries"}
    worst_by: str | None
    worst: tuple[QueryDrillDown, ...]
    depth: int  # results shown per worst query
    integer: frozenset[str]  # measures that are counts (num_rel …): summed, not averaged
    # Why the judged share is not drawn (qrels that judge only relevant documents), else None.
    judged_omitted: str | None = None
    # How many queries score what the last worst query shown scores (more than shown: a cut tie).
    tied: int = 0
    # Whether ties among the worst are ordered by the depth of the first relevant document (run and qrels given).
    ordered_by_depth: bool = False
    precision_recall: tuple[Mapping[str, Any], ...] = ()  # {"recall", "precision", "measure"}


def ranked(ranking: Mapping[str, float]) -> list[tuple[str, float]]:
    """``(doc_id, score)`` best first, as trec_eval orders them: score descending, ties by doc id descending.

    >>> ranked({"d1": 0.5, "d2": 0.9, "d10": 0.5, "d9": 0.5})
    [('d2', 0.9), ('d9', 0.5), ('d10', 0.5), ('d1', 0.5)]
    """
    return sorted(ranking.items(), key=lambda item: (item[1], item[0].encode()), reverse=True)


def _parse(name: str) -> tuple[str, int | None, bool]:
    """``(family, integer cutoff or None, is a count)`` of a measure name in either spelling."""
    from ef.measures import parse_measure

    try:
        measure = parse_measure(name)
    except ValueError:
        return name, None, False
    param = measure.param
    cutoff = int(param) if isinstance(param, int | float) and float(param).is_integer() and param >= 1 else None
    return measure.family, cutoff, measure.spec.integer


def _param(name: str) -> float | None:
    """A measure's numeric parameter (``iprec_at_recall_0.10`` → 0.1), or ``None``."""
    from ef.measures import parse_measure

    try:
        param = parse_measure(name).param
    except ValueError:
        return None
    return float(param) if isinstance(param, int | float) and not isinstance(param, bool) else None


def _stem(name: str) -> str:
    """The name as given, less its cutoff: ``ndcg@10`` → ``ndcg``, ``P_5`` → ``P``, ``P.5`` → ``P``."""
    return re.sub(r"(@|_|\.)\d+$", "", name)


def _source(report: object) -> tuple[dict[str, float], dict[str, dict[str, float]], int, dict[str, str]]:
    """metrics, per_query, n_queries and descriptive facts of a report object or its JSON."""
    if hasattr(report, "to_dict") and not isinstance(report, Mapping):
        report = report.to_dict()
    if not isinstance(report, Mapping):
        raise TypeError(
            f"'report' must be a RetrievalEvalReport, a RunEvalReport or its to_dict() (got {type(report).__name__})"
        )
    metrics = report.get("metrics", report.get("measures"))  # `ef trec-eval --json` says "measures"
    if not isinstance(metrics, Mapping) or not metrics:
        raise ValueError("'report' has no 'metrics' (or 'measures') mapping of measure name to value")
    per_query = report.get("per_query") or {}
    if not isinstance(per_query, Mapping):
        raise ValueError(f"'report'['per_query'] must map query ids to measures (got {type(per_query).__name__})")
    out_metrics: dict[str, float] = {}
    for name, value in metrics.items():
        out_metrics[str(name)] = _number(value, f"'report'['metrics'][{name!r}]")
    out_per_query: dict[str, dict[str, float]] = {}
    for query_id, values in per_query.items():
        if not isinstance(values, Mapping):
            raise ValueError(f"'report'['per_query'][{query_id!r}] must map measures to values")
        out_per_query[str(query_id)] = {
            str(k): _number(v, f"'report'['per_query'][{query_id!r}][{k!r}]") for k, v in values.items()
        }
    n_queries = report.get("n_queries", len(out_per_query))
    if isinstance(n_queries, bool) or not isinstance(n_queries, int) or n_queries < 0:
        raise ValueError(f"'report'['n_queries'] must be a non-negative integer (got {n_queries!r})")
    facts = {
        label: str(report[key])
        for key, label in (
            ("dataset", "dataset"),
            ("split", "split"),
            ("embedder", "embedder"),
            ("n_documents", "documents"),
            ("run_id", "run"),
        )
        if report.get(key) not in (None, "")
    }
    return out_metrics, out_per_query, n_queries, facts


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} must be a number (got {value!r})")
    if not math.isfinite(value):
        raise ValueError(f"{where} must be finite (got {value!r})")
    return value


def _snippet(corpus: Mapping[str, str] | None, doc_id: str) -> str | None:
    if corpus is None or doc_id not in corpus:
        return None
    text = " ".join(str(corpus[doc_id]).split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1].rstrip() + "…"


def _as_ranked(ranking: Mapping[str, float]) -> list[tuple[str, float]]:
    """``(doc_id, score)`` in the mapping's own order: a retrieval report's run is in rank order."""
    return list(ranking.items())


def _judged_shares(
    run: Run,
    qrels: Qrels,
    query_ids: Iterable[str],
    ks: Sequence[int],
    order: Callable[[Mapping[str, float]], list[tuple[str, float]]] = ranked,
) -> list[dict[str, Any]]:
    """Mean share of each query's top k that has a judgement (grade >= 0), over queries that retrieved any."""
    totals = dict.fromkeys(ks, 0.0)
    counted = 0
    for query_id in query_ids:
        ranking = run.get(query_id)
        if not ranking:
            continue
        counted += 1
        judged = qrels.get(query_id, {})
        flags = [doc_id in judged and judged[doc_id] >= 0 for doc_id, _ in order(ranking)[: max(ks)]]
        for k in ks:
            top = flags[:k]
            totals[k] += sum(top) / len(top)
    if not counted:
        return []
    return [{"metric": "judged", "k": k, "value": totals[k] / counted, "queries": counted} for k in ks]


def _worst_by(metrics: Mapping[str, float], integer: frozenset[str]) -> str | None:
    for name in _PRIMARY:
        if name in metrics:
            return name
    return next((name for name in metrics if name not in integer), None)


def evaluation_data(
    report: object,
    *,
    run: Run | None = None,
    qrels: Qrels | None = None,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, str] | None = None,
    worst: int = 10,
    depth: int | None = None,
) -> EvaluationData:
    """What :func:`evaluation_report` draws, without drawing it (no plotting library needed).

    Parameters are those of :func:`evaluation_report`.
    """
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise ValueError(f"'worst' must be a non-negative integer (got {worst!r})")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"'depth' must be a positive integer or None (got {depth!r})")
    metrics, per_query, n_queries, _ = _source(report)
    order = ranked
    own_run = getattr(report, "run", None)
    if run is None and isinstance(own_run, Mapping) and own_run:
        # A retrieval report carries what it scored, in the retriever's order (ties included):
        # shown as scored, not re-sorted the way a TREC file is read.
        run, order = own_run, _as_ranked
    parsed = {name: _parse(name) for name in metrics}
    integer = frozenset(name for name, (_, _, is_count) in parsed.items() if is_count)

    by_family: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for name, (family, cutoff, _) in parsed.items():
        if family in _CUTOFF_FAMILIES and cutoff is not None:
            by_family.setdefault((family, _stem(name)), []).append((cutoff, name))
    curves: list[dict[str, Any]] = []
    for (family, stem), points in sorted(by_family.items(), key=lambda item: _CURVE_ORDER.index(item[0][0])):
        if len(points) < 2:
            continue  # one cutoff is not a curve; the table shows it
        label = stem if stem not in ("P", "ndcg_cut") else _CUTOFF_FAMILIES[family]
        curves.extend({"metric": label, "k": k, "value": metrics[name], "measure": name} for k, name in sorted(points))

    # trec_eval's 11-point interpolated precision (iprec_at_recall_0.00 … _1.00): the precision-recall curve.
    levels = sorted(
        (level, name)
        for name, (family, _, _) in parsed.items()
        if family == "iprec_at_recall" and (level := _param(name)) is not None
    )
    precision_recall: list[dict[str, Any]] = [
        {"recall": level, "precision": metrics[name], "measure": name} for level, name in levels
    ]
    if len(precision_recall) < 2:
        precision_recall = []

    cutoffs = sorted({cutoff for _, cutoff, _ in parsed.values() if cutoff is not None}) or [1, 5, 10, 20, 100]
    judged: list[dict[str, Any]] = []
    judged_omitted = None
    if run is not None and qrels is not None:
        # With only relevant documents judged (BEIR's qrels), "judged" means "relevant": the share is P@k.
        if any(grade <= 0 for judgements in qrels.values() for grade in judgements.values()):
            judged = _judged_shares(run, qrels, per_query or run, cutoffs, order)
        else:
            judged_omitted = _JUDGED_OMITTED

    worst_by = _worst_by(metrics, integer)
    drill: list[QueryDrillDown] = []
    shown = depth or (parsed[worst_by][1] if worst_by is not None else None) or 10
    by_depth = run is not None and qrels is not None
    tied = 0
    if worst and worst_by is not None and per_query:
        first: dict[str, int | None] = {}
        if run is not None and qrels is not None:
            for query_id in per_query:
                grades = qrels.get(query_id, {})
                ranking = order(run.get(query_id, {}))
                first[query_id] = next(
                    (rank for rank, (doc_id, _) in enumerate(ranking, 1) if grades.get(doc_id, 0) > 0), None
                )

        def tie_break(query_id: str) -> float:
            # Among equal scores the worse query is the one whose first relevant document lies deeper
            # (none retrieved: deepest of all); without a run and qrels there is no such order.
            if not by_depth:
                return 0.0
            rank = first[query_id]
            return -math.inf if rank is None else -rank

        scored = sorted(
            ((values[worst_by], query_id) for query_id, values in per_query.items() if worst_by in values),
            key=lambda item: (item[0], tie_break(item[1]), item[1]),
        )
        if scored[:worst]:
            last = scored[:worst][-1][0]
            tied = sum(1 for value, _ in scored if value == last)
        for value, query_id in scored[:worst]:
            judged_docs = (qrels or {}).get(query_id, {})
            top = order(run.get(query_id, {}))[:shown] if run is not None else []
            results = tuple(
                RankedDoc(rank, doc_id, score, judged_docs.get(doc_id), _snippet(corpus, doc_id))
                for rank, (doc_id, score) in enumerate(top, start=1)
            )
            in_top = {doc_id for doc_id, _ in top}
            missing = (
                [
                    (doc_id, grade)
                    for doc_id, grade in sorted(judged_docs.items(), key=lambda item: (-item[1], item[0]))
                    if grade > 0 and doc_id not in in_top
                ]
                if run is not None
                else []
            )
            missed = tuple((doc_id, grade, _snippet(corpus, doc_id)) for doc_id, grade in missing[:_MISSED_SHOWN])
            text = None if queries is None else queries.get(query_id)
            drill.append(QueryDrillDown(query_id, text, value, results, missed, len(missing), first.get(query_id)))
    return EvaluationData(
        n_queries=n_queries,
        metrics=metrics,
        per_query=per_query,
        curves=tuple(curves),
        judged=tuple(judged),
        worst_by=worst_by,
        worst=tuple(drill),
        depth=shown,
        integer=integer,
        judged_omitted=judged_omitted,
        tied=tied,
        ordered_by_depth=by_depth,
        precision_recall=tuple(precision_recall),
    )


def _summary_tables(data: EvaluationData) -> list[Table]:
    """One row per measure stem with a column per cutoff, and the measures without a cutoff apart."""
    rows: dict[str, dict[int, str]] = {}
    loose: list[str] = []
    for name in data.metrics:
        family, cutoff, _ = _parse(name)
        if cutoff is not None and family in _CUTOFF_FAMILIES:
            rows.setdefault(_stem(name), {})[cutoff] = name
        else:
            loose.append(name)
    tables = []
    if rows:
        ks = sorted({k for by_k in rows.values() for k in by_k})
        body = [[stem, *(data.metrics[by_k[k]] if k in by_k else None for k in ks)] for stem, by_k in rows.items()]
        tables.append(
            Table.of(
                "summary", ["measure", *(f"@{k}" for k in ks)], body, caption=f"Mean over {data.n_queries} queries."
            )
        )
    if loose:
        tables.append(
            Table.of(
                "summary-other",
                ["measure", "value"],
                [[name, data.metrics[name]] for name in loose],
                caption="Means over the queries; counts (num_rel, num_ret …) are sums.",
            )
        )
    return tables


def _mark(grade: float | None) -> Cell:
    if grade is None:
        return Cell("· unjudged", css="unjudged")
    if grade > 0:
        return Cell(f"✓ relevant ({grade:g})", grade, css="rel")
    return Cell(f"✗ not relevant ({grade:g})", grade, css="nonrel")


def results_table(table_id: str, results: Sequence[tuple[int, str, float, float | None, str | None]]) -> Table:
    """Ranked results: rank, doc id, score, relevance mark and, when any is known, a text snippet."""
    with_text = any(snippet is not None for *_, snippet in results)
    headers = ("rank", "doc id", "score", "relevance", *(("text",) if with_text else ()))
    rows = tuple(
        (
            cell(rank),
            Cell(doc_id),
            cell(float(score)),
            _mark(grade),
            *((Cell(snippet or "", css="snippet"),) if with_text else ()),
        )
        for rank, doc_id, score, grade, snippet in results
    )
    return Table(table_id, headers, rows)


def drill_down_section(
    query: QueryDrillDown, *, measure: str, position: int, id_prefix: str, depth: int, first_relevant: bool = False
) -> Section:
    """A worst query: its text, its ranked results with relevance marks, the relevant docs it missed.

    With `first_relevant` the title says where the query's first relevant document is ranked.
    """
    blocks: list[Table | Figure | Text | Section] = []
    if query.text is not None:
        blocks.append(Text(query.text, css="query"))
    if query.results:
        blocks.append(
            results_table(
                f"{id_prefix}-results", [(d.rank, d.doc_id, d.score, d.grade, d.snippet) for d in query.results]
            )
        )
    else:
        blocks.append(Text("No ranking for this query (pass the run to see its results).", css="note"))
    if query.missed:
        blocks.append(
            Table(
                f"{id_prefix}-missed",
                ("missed relevant doc", "grade", "text"),
                tuple(
                    (Cell(doc_id), cell(grade), Cell(snippet or "", css="snippet"))
                    for doc_id, grade, snippet in query.missed
                ),
                caption=f"Relevant documents not in the top {depth}"
                + (
                    f": the first {len(query.missed)} of {query.n_missed}."
                    if query.n_missed > len(query.missed)
                    else "."
                ),
            )
        )
    elif query.results:
        blocks.append(Text("No relevant document is missing from these results.", css="note"))
    title = f"{position}. query {query.query_id}: {measure} {query.value:.4f}"
    if first_relevant:
        title += (
            ", no relevant document retrieved"
            if query.first_relevant is None
            else f", first relevant document at rank {query.first_relevant}"
        )
    return Section(id_prefix, title, tuple(blocks))


def _worst_section(data: EvaluationData, measure: str) -> Section:
    """The worst queries by `measure`; when the cut splits queries of equal score, how the shown ones were chosen."""
    n = len(data.worst)
    last = data.worst[-1].value
    shown_tied = sum(1 for q in data.worst if q.value == last)
    blocks: list[Table | Figure | Text | Section] = []
    title = f"The {n} worst queries by {measure}"
    if data.tied > shown_tied:
        # Equal scores have no order of their own: say which of them are shown, and why those.
        if data.ordered_by_depth:
            how = (
                "those whose first relevant document is ranked deepest (not retrieved at all first), then by query id."
            )
        else:
            how = "the first by query id (pass the run to order them by the depth of their first relevant document)."
        blocks.append(
            Text(f"{data.tied} queries tie at {measure} {last:.4f}; these {shown_tied} are {how}", css="note")
        )
        if shown_tied == n:
            title = f"{n} of the {data.tied} queries tied at the lowest {measure} ({last:.4f})"
    elif len({q.value for q in data.worst}) < n:
        # Every tied query is shown, but their order among themselves still needs saying.
        how = (
            "by the depth of their first relevant document (deepest first, none retrieved before all), then by id"
            if data.ordered_by_depth
            else "by query id"
        )
        blocks.append(Text(f"Queries of equal {measure} are listed {how}.", css="note"))
    blocks.extend(
        drill_down_section(
            query,
            measure=measure,
            position=i,
            id_prefix=f"worst-{i}",
            depth=data.depth,
            first_relevant=data.ordered_by_depth,
        )
        for i, query in enumerate(data.worst, start=1)
    )
    return Section("worst-section", title, tuple(blocks))


_BANDS = ("0 (fails)", "(0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1)", "1 (perfect)")


def _band(value: float) -> int:
    if value <= 0.0:
        return 0
    if value >= 1.0:
        return 5
    return 1 + min(3, int(value * 4))


def _band_shares(per_query: Mapping[str, Mapping[str, float]], measures: Sequence[str]) -> list[dict[str, Any]]:
    """Per measure, how many queries (and what share) fall in each band of values; empty bands left out."""
    rows: list[dict[str, Any]] = []
    for name in measures:
        counts = [0] * len(_BANDS)
        for values in per_query.values():
            if name in values:
                counts[_band(values[name])] += 1
        total = sum(counts)
        rows.extend(
            {"metric": name, "band": band, "order": i, "count": count, "share": count / total}
            for i, (band, count) in enumerate(zip(_BANDS, counts, strict=True))
            if count
        )
    return rows


def _zero_share(data: EvaluationData, measures: Sequence[str]) -> Text | None:
    """How many queries score 0 on the primary measure: the share that fails, said in words."""
    name = data.worst_by
    if name is None or name not in measures:
        return None
    values = [v[name] for v in data.per_query.values() if name in v]
    if not values:
        return None
    zero = sum(1 for v in values if v == 0)
    return Text(f"{name}: {zero} of {len(values)} queries ({zero / len(values):.1%}) score 0.")


def evaluation_report(
    report: object,
    *,
    run: Run | None = None,
    qrels: Qrels | None = None,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, str] | None = None,
    title: str | None = None,
    facts: Mapping[str, str] | None = None,
    worst: int = 10,
    depth: int | None = None,
) -> Report:
    """The report of an evaluation: summary, metric@k curves, distributions, judged share, worst queries.

    Parameters
    ----------
    report
        A :class:`~ef.evaluation.RetrievalEvalReport` or :class:`~ef.evaluation.RunEvalReport`,
        or the JSON of either (``to_dict()``, ``ef eval --json``, ``ef trec-eval -q --json``).
    run
        The rankings that were scored, ``{query_id: {doc_id: score}}`` (what
        :func:`ef.trec.read_run` returns), ordered as trec_eval orders them. ``None`` takes a
        :class:`~ef.evaluation.RetrievalEvalReport`'s own ``run``, in the retriever's order;
        without either the worst queries show no results.
    qrels
        The judgements, for the relevance marks, the missed relevant documents and the judged
        share of the top k (which needs `run` too).
    queries, corpus
        ``{query_id: text}`` and ``{doc_id: text}``: the query texts and the result snippets.
    title, facts
        The page title and ``label: value`` lines shown under it (dataset, embedder …).
    worst
        How many of the lowest-scoring queries to drill into (by NDCG@10 when present).
    depth
        How many results to show per drilled-down query (default: that measure's cutoff, or 10).
    """
    data = evaluation_data(report, run=run, qrels=qrels, queries=queries, corpus=corpus, worst=worst, depth=depth)
    _, _, _, found_facts = _source(report)
    sections: list[Section] = [Section("summary-section", "Summary", tuple(_summary_tables(data)))]

    if data.curves:
        sections.append(
            Section(
                "curves-section",
                "Metrics at each cutoff",
                (
                    Figure(
                        "curves",
                        "Mean metric against the cutoff k",
                        _figures.at_k_chart("curves", data.curves, y_title="mean over queries"),
                        caption="Hover a point for its value.",
                    ),
                ),
            )
        )

    if data.precision_recall:
        sections.append(
            Section(
                "precision-recall-section",
                "Precision and recall",
                (
                    Figure(
                        "precision_recall",
                        "Interpolated precision at 11 recall levels",
                        _figures.precision_recall_chart("precision_recall", data.precision_recall),
                        caption="trec_eval's iprec_at_recall: at each recall level, the highest precision at that "
                        "recall or beyond, averaged over the queries.",
                    ),
                ),
            )
        )

    # One axis from 0 to 1 for all: a measure on another scale (utility, counts) is listed, not drawn.
    mean_measures: list[str] = []
    off_scale: list[str] = []
    for name in data.metrics:
        if name in data.integer:
            continue
        in_range = all(0.0 <= v[name] <= 1.0 for v in data.per_query.values() if name in v)
        (mean_measures if in_range else off_scale).append(name)
    not_drawn = f" Not drawn (values outside 0–1): {', '.join(off_scale)}." if off_scale else ""
    zero = _zero_share(data, mean_measures)
    if mean_measures and len(data.per_query) > _STRIP_MAX:
        # Hundreds of dots on one line merge into a bar: show how the queries split instead.
        shares = _band_shares(data.per_query, mean_measures)
        sections.append(
            Section(
                "distribution-section",
                "Per-query distributions",
                (
                    *((zero,) if zero is not None else ()),
                    Figure(
                        "per_query",
                        "Share of queries in each band of values, per measure",
                        _figures.share_chart("per_query_share", shares, order=mean_measures, bands=_BANDS),
                        caption=f"Each bar splits one measure's {len(data.per_query)} queries by their value, from "
                        "0 (red: the query fails) to 1 (green); hover a band for its count. The worst queries are "
                        "listed below." + not_drawn,
                    ),
                ),
            )
        )
        mean_measures = []
    points = []
    query_text = queries or {}
    for index, (query_id, values) in enumerate(data.per_query.items()):
        jitter = (index * 0.6180339887) % 1.0  # a fixed spread: the same report draws the same picture
        for name in mean_measures:
            if name in values:
                row: dict[str, Any] = {"query_id": query_id, "metric": name, "value": values[name], "jitter": jitter}
                if query_id in query_text:
                    row["query"] = query_text[query_id][:120]
                points.append(row)
    if points:
        tooltip = ("query_id", "query", "metric", "value") if queries else ("query_id", "metric", "value")
        sections.append(
            Section(
                "distribution-section",
                "Per-query distributions",
                (
                    *((zero,) if zero is not None else ()),
                    Figure(
                        "per_query",
                        "Each query's value, per measure",
                        _figures.strip_chart(
                            "per_query",
                            points,
                            [{"metric": n, "value": data.metrics[n]} for n in mean_measures],
                            order=mean_measures,
                            tooltip=tooltip,
                        ),
                        caption="One dot per query (hover for its id and value); the red tick is the mean." + not_drawn,
                    ),
                ),
            )
        )

    if data.judged_omitted is not None:
        sections.append(
            Section("judged-section", "Judged share of the top k", (Text(data.judged_omitted, css="note"),))
        )
    if data.judged:
        at = max((row for row in data.judged if row["k"] <= 10), key=lambda row: row["k"], default=data.judged[0])
        sections.append(
            Section(
                "judged-section",
                "Judged share of the top k",
                (
                    Figure(
                        "judged",
                        "Share of the top k that has a judgement",
                        _figures.at_k_chart("judged", data.judged, y_title="mean share judged"),
                        caption=f"Over the {data.judged[0]['queries']} queries with results. At k = {at['k']}, "
                        f"{at['value']:.1%} of the top k has a judgement; the unjudged {1 - at['value']:.1%} count "
                        "as not relevant, so the measures may understate the run if they are relevant.",
                    ),
                    Table.of(
                        "judged-table", ["k", "mean share judged"], [[row["k"], row["value"]] for row in data.judged]
                    ),
                ),
            )
        )

    if data.worst and data.worst_by is not None:
        sections.append(_worst_section(data, data.worst_by))

    shown_facts = {"queries": str(data.n_queries), **found_facts, **(facts or {})}
    heading = title or "Retrieval evaluation"
    return Report("evaluation", heading, tuple(sections), shown_facts)
