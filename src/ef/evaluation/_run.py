"""Bulk run evaluation: a whole run against qrels, trec_eval's numbers, every query at once."""

from __future__ import annotations

import gc
import numbers
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ef._console import format_table
from ef._validate import check_choice, check_positive_int, check_positive_number
from ef.evaluation._hits import RunBytes, RunFile, hit_table, open_run
from ef.evaluation._inputs import normalise, refuse_swap, warn_unreached_level
from ef.io._source import display_name
from ef.io.frames import DataFrameLike, PerQueryFrames
from ef.io.ranked import RankedRun
from ef.io.trec import read_qrels
from ef.measures import Measure, resolve
from ef.measures.bulk import geometric_mean

__all__ = ["RunEvalReport", "evaluate_run"]

Missing = Literal["zero", "skip"]
Run = Mapping[str, Mapping[str, float]]

DEFAULT_MEASURES = ("ndcg@10", "recall@100", "map", "mrr")


@dataclass(frozen=True)
class RunEvalReport(PerQueryFrames):
    """The outcome of :func:`evaluate_run`: each measure over the evaluated queries.

    ``metrics`` maps each measure name, exactly as the caller gave it, to its summary over the
    queries: the mean for scores, the sum for trec_eval's counts (``num_ret``, ``num_rel``,
    ``num_rel_ret``), the number of queries for ``num_q`` and the geometric mean for ``gm_map``.
    ``per_query`` keeps every measure per query id (for ``gm_map`` the query's average
    precision); ``n_queries`` is how many queries were evaluated.

    >>> report = RunEvalReport({'ndcg@10': 0.5, 'mrr': 0.75}, {}, 2)
    >>> print(report)
    Run evaluation over 2 queries
    measure   value
    -------  ------
    ndcg@10  0.5000
    mrr      0.7500
    """

    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    n_queries: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``metrics``, ``per_query`` and ``n_queries``."""
        return {
            "metrics": dict(self.metrics),
            "per_query": {query_id: dict(values) for query_id, values in self.per_query.items()},
            "n_queries": self.n_queries,
        }

    def __str__(self) -> str:
        """The summaries as a two-column table (floats with 4 decimals, counts as integers)."""
        return format_table(
            ["measure", "value"],
            [[name, value] for name, value in self.metrics.items()],
            title=f"Run evaluation over {self.n_queries} queries",
        )


@dataclass(frozen=True)
class _Evaluation:
    """What both :func:`evaluate_run` and ``ef trec-eval`` print from: values per measure."""

    query_ids: list[str]
    values: dict[Measure, npt.NDArray[np.float64]]
    summary: dict[Measure, float]
    skipped: int = 0  # judged queries the run lacks, left out (missing="skip")
    run_id: str = ""  # the run file's last line's run id (trec_eval's runid); "" for a dict


def _check_options(missing: str, relevance_level: object, max_docs: object) -> tuple[float, int | None]:
    """The options checked (ef._validate's template: a wrong type is a TypeError), as plain Python
    numbers; numpy scalars are accepted."""
    check_choice(missing, "missing", ("zero", "skip"))
    level = check_positive_number(relevance_level, "relevance_level")
    depth = None if max_docs is None else check_positive_int(max_docs, "max_docs", what="a positive integer or None")
    return (int(level) if isinstance(relevance_level, numbers.Integral) else level), depth


def _summary(measure: Measure, values: npt.NDArray[np.float64]) -> float:
    n = len(values)
    aggregate = measure.spec.aggregate
    if aggregate == "count":
        return float(n)
    if aggregate == "sum":
        return float(values.sum())
    if aggregate == "geometric":
        return geometric_mean(values, n)
    # A running sum, query after query, as trec_eval accumulates (not numpy's pairwise sum).
    return float(np.cumsum(values)[-1]) / n


def _evaluate(
    run: Run | RunFile | RunBytes,
    qrels: Run,
    measures: Sequence[Measure],
    *,
    missing: Missing,
    relevance_level: float,
    max_docs: int | None,
) -> _Evaluation:
    # trec_eval's query order: ids compared byte-wise (str order is UTF-8 byte order). A query with no
    # judgement at all ({"q2": {}}, as qrels filtered to grade > 0 give) is not judged: no qrels file
    # can hold it, and pytrec_eval, BEIR and evaluate_retrieval leave it out (it scored 0 and counted).
    query_ids = sorted(query for query, judged in qrels.items() if len(judged))
    # The cyclic GC would rescan the caller's (maybe millions of) objects while the hits are made,
    # none of which can form a cycle: it waits until they are.
    collecting = gc.isenabled()
    gc.disable()
    try:
        table, evaluated, run_id = hit_table(
            run, qrels, query_ids, missing=missing, max_docs=max_docs, relevance_level=relevance_level
        )
    finally:
        if collecting:
            gc.enable()
    if not evaluated:
        raise ValueError(
            "no query to evaluate: 'qrels' is empty"
            if not qrels
            else "no query to evaluate: 'qrels' holds no judgement (every query's mapping is empty)"
            if not query_ids
            else "no query to evaluate: no query of the run is judged in 'qrels' (missing='skip')"
        )
    grades = table.judged_grade
    warn_unreached_level(float(grades.max()) if len(grades) else None, relevance_level, stacklevel=3)
    values = {m: m.evaluate(table) for m in dict.fromkeys(measures)}
    summary = {m: _summary(m, v) for m, v in values.items() if m.spec.aggregate != "none"}
    if missing == "zero":
        # trec_eval 10.0 with -c sums num_rel over the qrels itself: every grade > 0 of every
        # judged query, whatever -l says (m_num_rel.c, te_calc_avg_num_rel).
        everything = sum(1 for judged in qrels.values() for grade in judged.values() if grade > 0)
        summary.update({m: float(everything) for m in values if m.family == "num_rel"})
    return _Evaluation(evaluated, values, summary, skipped=len(query_ids) - len(evaluated), run_id=run_id)


def _load_qrels(qrels: Run | str | os.PathLike[str]) -> Run:
    if isinstance(qrels, str | os.PathLike):
        judged = read_qrels(qrels)
        if not judged:  # as trec_eval, which refuses an empty qrels file
            raise ValueError(f"{display_name(qrels)}: the qrels hold no judgement")
        return judged
    if not isinstance(qrels, Mapping):
        raise TypeError(f"'qrels' must be a mapping or a path (got {type(qrels).__name__})")
    _check_nested(qrels, "qrels", "grade", every_doc=True)
    return qrels


def _check_nested(value: Run, name: str, what: str, *, every_doc: bool) -> None:
    """Ids are str and each query maps doc ids to values: an int id would silently match nothing.

    Every query id is checked, and every doc id of the qrels; of a run (millions of entries) the
    first doc id of each query, which catches a run keyed by ints without a pass over it all.
    A dict of dicts of str ids passes in a few passes in C; anything else, and every fault, is
    found by the loop below, query by query, which names the first.
    """
    if type(value) is dict and set(map(type, value)) <= {str} and set(map(type, value.values())) <= {dict}:
        heads = chain.from_iterable(value.values()) if every_doc else map(next, map(iter, value.values()), repeat(""))
        if set(map(type, heads)) <= {str}:
            return
    for query_id, docs in value.items():
        if not isinstance(query_id, str):
            raise TypeError(f"'{name}' has a query id that is not a str: {query_id!r} ({type(query_id).__name__})")
        if type(docs) is not dict and not isinstance(docs, Mapping):  # the ABC check costs ~1 us
            raise TypeError(f"'{name}[{query_id!r}]' must be a mapping of doc id -> {what} (got {type(docs).__name__})")
        if every_doc:
            if type(docs) is dict and set(map(type, docs)) <= {str}:  # one pass in C: every id a plain str
                continue
            doc_ids: Collection[object] = docs
        else:
            first = next(iter(docs), "")
            doc_ids = () if isinstance(first, str) else (first,)
        for doc_id in doc_ids:
            if not isinstance(doc_id, str):
                raise TypeError(
                    f"'{name}[{query_id!r}]' has a doc id that is not a str: {doc_id!r} ({type(doc_id).__name__})"
                )


def _load(
    run: Run | str | os.PathLike[str], qrels: Run | str | os.PathLike[str]
) -> tuple[Run | RunFile | RunBytes, Run]:
    """Both inputs: the qrels read first (a bad qrels file is the error reported), then the run
    (a regular file only named, a pipe opened; either read when scored)."""
    judged = _load_qrels(qrels)
    loaded = _load_run(run)
    if isinstance(qrels, str | os.PathLike) and isinstance(loaded, Mapping):
        refuse_swap(loaded, judged)  # a run file given as the qrels shows itself once read
    return loaded, judged


def _load_run(run: Run | str | os.PathLike[str]) -> Run | RunFile | RunBytes:
    if isinstance(run, str | os.PathLike):
        return open_run(run)
    if isinstance(run, RunFile | RunBytes):  # opened already (ef.evaluation.scoring.load_run_and_qrels)
        return run
    if not isinstance(run, Mapping):
        raise TypeError(f"'run' must be a mapping or a path (got {type(run).__name__})")
    if not run:  # as a run file with no ranking line: most likely a retriever's output lost on the way
        raise ValueError(
            "'run' holds no query (it would score 0 on every query); a query that retrieved nothing is "
            "{query_id: {}}"
        )
    if type(run) is not RankedRun:  # a RankedRun's ids are checked str when it is made
        _check_nested(run, "run", "score", every_doc=False)
    return run


def evaluate_run(
    run: Run | str | os.PathLike[str] | DataFrameLike,
    qrels: Run | str | os.PathLike[str] | DataFrameLike,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    missing: Missing = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
) -> RunEvalReport:
    """Evaluate a whole run against qrels with trec_eval's semantics, all queries at once.

    Documents are ranked by score descending, ties broken by doc id descending (byte-wise); the
    file's rank column is ignored. A document is relevant when its grade is
    ``>= relevance_level``; a negative grade counts as unjudged; nDCG's gain is the grade.
    Queries are those judged in `qrels`; a run query without judgements is ignored, and a judged
    query without a relevant document scores 0 and counts. A query whose mapping in `qrels` is
    empty is judged by nothing, and left out (as pytrec_eval leaves it out; no qrels file holds one).

    Parameters
    ----------
    run
        ``{query_id: {doc_id: score}}``, the path of a TREC run file (plain or ``.gz``), or a
        pandas or polars DataFrame with the columns ``query_id``, ``doc_id``, ``score``.
    qrels
        ``{query_id: {doc_id: grade}}``, the path of a TREC qrels file or a BEIR qrels TSV, or a
        DataFrame with the columns ``query_id``, ``doc_id``, ``relevance``. ranx, BEIR and
        ir_measures take ``(qrels, run)``: pass ``run=`` and ``qrels=`` by keyword to be safe; a
        swap that the data shows (frame columns, or integer "run" values against distinct
        fractional "qrels" values) is a ``ValueError`` saying so.
    measures
        Measure names in ef's spelling (``ndcg@10``, ``recall@100``, ``precision@5``, ``mrr``,
        ``mrr@10``, ``map``, ``map@100``, ``hit_rate@10``) or trec_eval's (``ndcg_cut_10``,
        ``P_5``, ``recip_rank``, ``Rprec``, ``bpref``, ``gm_map``, ``iprec_at_recall_0.50``,
        ``num_rel`` …), ir_measures' (``nDCG@10``, ``P(rel=2)@5``, ``AP``) or trec_eval's ``-m``
        forms (``P.5,10``, ``official``, ``all_trec``); see ``ef.measures.resolve``.
    missing
        A judged query absent from the run: ``"zero"`` counts it with zeros (trec_eval ``-c``,
        ir-measures), ``"skip"`` leaves it out (pytrec_eval, BEIR).
    relevance_level
        The lowest grade that counts as relevant (trec_eval ``-l``).
    max_docs
        Evaluate only the top ``max_docs`` documents of each query (trec_eval ``-M``).

    Returns
    -------
    RunEvalReport
        Keyed by the measure names exactly as given; the measures of a trec_eval ``-m`` form
        (``official``, ``P.5,10``) by their canonical names (``P_5``, ``P_10``).

    Raises
    ------
    ValueError
        For an unknown measure name (the message lists the valid forms), a bad option, a score
        or grade that is not a number or is NaN, a malformed file (``file:line: ...``), a
        DataFrame with other columns, arguments that look swapped, a run that holds no query, or
        when no query can be evaluated.

    Examples
    --------
    >>> run = {'q1': {'d1': 0.9, 'd2': 0.8, 'd3': 0.1}, 'q2': {'d4': 0.5, 'd5': 0.4}}
    >>> qrels = {'q1': {'d1': 1, 'd3': 2}, 'q2': {'d5': 1}, 'q3': {'d6': 1}}
    >>> report = evaluate_run(run, qrels, ['P_2', 'mrr', 'num_rel_ret'])
    >>> report.metrics['mrr'], report.metrics['num_rel_ret'], report.n_queries
    (0.5, 3, 3)
    >>> evaluate_run(run, qrels, ['mrr'], missing='skip').metrics['mrr']  # q3 not in the run
    0.75
    >>> report.per_query['q2']
    {'P_2': 0.5, 'mrr': 0.5, 'num_rel_ret': 1}
    """
    if isinstance(measures, str):
        raise TypeError(f"'measures' must be a sequence of measure names, not a str (got {measures!r})")
    names = resolve(measures)  # (the name as given, its Measure): official, P.5,10 ... expanded
    textual = [name for name, m in names if m.spec.aggregate == "none"]
    if textual:
        raise ValueError(
            f"'measures': {textual[0]!r} is a string per query, printed by `ef trec-eval -q`, not a number"
        )
    if not names:
        raise ValueError("'measures' must name at least one measure")
    relevance_level, max_docs = _check_options(missing, relevance_level, max_docs)
    plain_run, plain_qrels = normalise(run, qrels)  # DataFrames read; a swapped (qrels, run) refused
    loaded_run, loaded_qrels = _load(plain_run, plain_qrels)
    result = _evaluate(
        loaded_run,
        loaded_qrels,
        [m for _, m in names],
        missing=missing,
        relevance_level=relevance_level,
        max_docs=max_docs,
    )

    def typed(measure: Measure, value: float) -> float:
        return int(value) if measure.spec.integer else value

    metrics = {name: typed(m, result.summary[m]) for name, m in names}
    # Counts become ints column by column; then one dict per query, built in C by zip.
    columns = [
        result.values[m].astype(np.int64).tolist() if m.spec.integer else result.values[m].tolist() for _, m in names
    ]
    keys = [name for name, _ in names]
    rows = zip(*columns, strict=True)
    per_query = dict(zip(result.query_ids, map(dict, map(zip, repeat(keys), rows)), strict=True))
    return RunEvalReport(metrics=metrics, per_query=per_query, n_queries=len(result.query_ids))
