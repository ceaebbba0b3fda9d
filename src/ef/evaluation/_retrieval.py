"""Scoring a live retriever against a BEIR-shaped evaluation set."""

from __future__ import annotations

import errno
import inspect
import os
import re
import shutil
import tempfile
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ef._console import format_table, progress
from ef._validate import check_bool, check_positive_number, finite_float
from ef._validate import check_positive_int as _check_k
from ef.evaluation._inputs import warn_unreached_level
from ef.io.frames import PerQueryFrames
from ef.measures import RETRIEVAL_METRICS, cutoff_metric, parse_measure
from ef.retrieval import hit_doc_id, retrieval_function, source_ranking

if TYPE_CHECKING:
    from ef.datasets._facts import DatasetFacts, JudgedSet
    from ef.measures.registry import Measure

__all__ = ["RetrievalEvalReport", "evaluate_retrieval"]

_PRIMARY = "ndcg"


@dataclass(frozen=True)
class RetrievalEvalReport(PerQueryFrames):
    """The outcome of :func:`evaluate_retrieval` — metrics over a query set.

    ``metrics`` maps a ``"<metric>@<k>"`` key (e.g. ``"ndcg@10"``) to the mean of that metric over
    every scored query; ``per_query`` keeps the same keys per query for drill-down. ``n_queries``
    is how many queries were actually scored (a query with no positive judgement is skipped).

    >>> report = RetrievalEvalReport(
    ...     metrics={'ndcg@10': 0.83}, per_query={}, n_queries=12, k_values=(10,))
    >>> report.primary
    0.83
    """

    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    n_queries: int
    k_values: tuple[int, ...]
    missing_texts: tuple[str, ...] = field(default=(), kw_only=True)
    """Judged query ids with a positive judgement but no text in ``queries``: not scored."""
    run: Mapping[str, Mapping[str, float]] = field(default_factory=dict, kw_only=True, repr=False)
    """What was scored: ``{query_id: {doc_id: score}}``, each query's docs in the retriever's order
    (de-duplicated to sources), one entry per scored query (``{}`` if it retrieved nothing).
    Scores are the retriever's own (``SearchHit.score``); where it gave none, ``n - rank + 1``
    (see ``rank_scores``). The metrics score this order, ties included: :func:`evaluate_run` on
    this run orders tied scores by doc id, as trec_eval does, and may differ where scores tie."""
    rank_scores: tuple[str, ...] = field(default=(), kw_only=True)
    """The queries of ``run`` whose scores stand for ranks: the retriever gave no score (bare ids,
    ``Segment``\\ s) for at least one of their results."""

    def __post_init__(self) -> None:
        for label, value in (("metrics", self.metrics), ("per_query", self.per_query)):
            if not isinstance(value, Mapping):
                raise TypeError(f"'{label}' must be a mapping (got {type(value).__name__})")
        for key, mean in self.metrics.items():
            if not isinstance(key, str) or "@" not in key or finite_float(mean) is None:
                # Printed as a table and written as JSON, where NaN would be invalid.
                raise ValueError(f"'metrics' must map '<metric>@<k>' keys to finite numbers (got {key!r}: {mean!r})")
        if isinstance(self.n_queries, bool) or not isinstance(self.n_queries, int) or self.n_queries < 0:
            raise ValueError(f"'n_queries' must be a non-negative integer (got {self.n_queries!r})")
        given: object = self.k_values
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            raise TypeError(f"'k_values' must be a sequence of positive integers (got {given!r})")
        object.__setattr__(self, "k_values", tuple(_check_k(k, name="k_values") for k in self.k_values))
        object.__setattr__(self, "missing_texts", tuple(self.missing_texts))
        if not isinstance(self.run, Mapping):
            raise TypeError(f"'run' must be a mapping {{query_id: {{doc_id: score}}}} (got {type(self.run).__name__})")
        object.__setattr__(self, "rank_scores", tuple(self.rank_scores))

    def ranking(self, query_id: str) -> list[str]:
        """The doc ids retrieved for `query_id`, best first, as scored (``KeyError`` if not scored)."""
        return list(self.run[query_id])

    @property
    def primary(self) -> float | None:
        """The headline number — mean NDCG@10, or ``None`` if it was not computed."""
        return self.primary_at(10)

    def primary_at(self, k: int) -> float | None:
        """Mean NDCG at cutoff `k` — ``None`` if NDCG@``k`` was not computed.

        Raises ``TypeError`` for a `k` that is not an integer (``"10"`` would find ``ndcg@10``,
        ``True`` nothing) and ``ValueError`` for one below 1.
        """
        return self.metrics.get(f"{_PRIMARY}@{_check_k(k, name='k')}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``metrics``, ``per_query``, ``n_queries``, ``k_values``, and the
        judged queries left out for want of a text (``n_missing_texts``, ``missing_texts``)."""
        return {
            "metrics": dict(self.metrics),
            "per_query": {q: dict(v) for q, v in self.per_query.items()},
            "n_queries": self.n_queries,
            "k_values": list(self.k_values),
            "n_missing_texts": len(self.missing_texts),
            "missing_texts": list(self.missing_texts),
        }

    def __str__(self) -> str:
        """The means as a table: one row per metric, one column per cutoff.

        >>> print(RetrievalEvalReport({'ndcg@1': 0.5, 'recall@1': 0.25}, {}, 2, (1,)))
        Retrieval evaluation over 2 queries
        metric      @1
        ---------  ------
        ndcg       0.5000
        recall     0.2500
        """
        names: list[str] = []
        for key in self.metrics:
            name = key.rsplit("@", 1)[0]
            if name not in names:
                names.append(name)
        rows = [[name, *(self.metrics.get(f"{name}@{k}") for k in self.k_values)] for name in names]
        title = f"Retrieval evaluation over {self.n_queries} queries"
        if self.missing_texts:
            n = len(self.missing_texts)
            title += (f" ({n} judged {'query' if n == 1 else 'queries'} had no text and {'was' if n == 1 else 'were'} "
                      "not scored)")
        return format_table(["metric".ljust(9), *(f"@{k}" for k in self.k_values)], rows, title=title)


def _result_doc_id(result: object) -> str:
    """The source document id of one retrieval result (a SearchHit, a Chunk, a Segment or a doc id)."""
    return hit_doc_id(result)


def _dedupe(query_id: str, results: object) -> tuple[list[str], list[float | None]]:
    """Map results to source ids, keeping each source at its best (first) rank."""
    return source_ranking(results, query_id=query_id)


def _search_function(retriever: Any) -> Callable[[str, int], Sequence[object]]:
    return retrieval_function(retriever)


def _retrieve_all(
    retriever: Any, jobs: Sequence[tuple[str, str]], limit: int, show_progress: bool
) -> list[Sequence[object]]:
    """Run every ``(query_id, text)`` job, batched through ``search_many`` when available."""
    search_many = getattr(retriever, "search_many", None)
    if callable(search_many):
        texts = [text for _, text in jobs]
        try:
            if "show_progress" in inspect.signature(search_many).parameters:
                results = search_many(texts, limit=limit, show_progress=show_progress)
            else:
                results = search_many(texts, limit=limit)
        except Exception as error:
            error.add_note(f"while retrieving for {len(jobs)} queries through search_many")
            raise
        given: object = results
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            raise TypeError(
                f"retriever.search_many returned a {type(given).__name__}; expected one result list per query"
            )
        results = list(results)
        if len(results) != len(jobs):
            raise ValueError(f"retriever.search_many returned {len(results)} result lists for {len(jobs)} queries")
        return list(results)
    search = _search_function(retriever)
    out: list[Sequence[object]] = []
    for query_id, text in progress(jobs, desc="retrieving", enabled=show_progress):
        try:
            out.append(search(text, limit))
        except Exception as error:
            error.add_note(f"while retrieving for query {query_id!r}")
            raise
    return out


def evaluate_retrieval(
    retriever: Any,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | JudgedSet,
    queries: Mapping[str, str] | None = None,
    *,
    k_values: Sequence[int] = (1, 5, 10, 100),
    metrics: Sequence[str] = ("ndcg", "recall", "precision", "mrr", "map"),
    limit: int | None = None,
    ignore_identical_ids: bool | None = None,
    run_path: str | os.PathLike[str] | None = None,
    show_progress: bool = False,
    relevance_level: float | None = None,
) -> RetrievalEvalReport:
    """Score a retriever against a BEIR-shaped evaluation set.

    For every query judged in `qrels`, the `retriever` is run, its results are mapped back to
    *source document ids* (``_result_doc_id()``, de-duplicated to the best rank per source), and
    each requested metric is computed at each cutoff in `k_values`. The report holds the mean of
    each ``"<metric>@<k>"`` over all scored queries — primary metric **NDCG@10**.

    The rankings are scored as a run, with the bulk kernels of :func:`evaluate_run` (one
    implementation of every metric), in the retriever's order: tied scores and results without
    a score keep their rank. The report's ``run`` holds that run, with the retriever's scores.

    Parameters
    ----------
    retriever
        What answers a query — a ``SearchableCorpus`` (its batched ``search_many`` is used when
        present), a ``SourceManager``, or any callable ``query -> ranked results``. Results may
        be ``SearchHit``\\ s, ``Segment``\\ s or bare doc-id strings; anything else is a
        ``TypeError``. An exception raised by the retriever propagates with the query id added
        as a note. A retriever with an int ``query_block`` (a ``SearchableCorpus`` that searches
        on Ray) is asked for that many queries at a time, and each block's rankings are written
        to a run file in a scratch folder (under ``TMPDIR``) that is scored streaming, so memory
        does not grow with the rankings of the query set; the numbers are the same. The report's
        ``run`` is then read from that file when first used (tied scores in trec_eval's order).
    qrels
        The relevance judgements — ``{query_id: {doc_id: relevance}}``, str ids and finite
        grades (a NaN grade is an error, not a reason to skip). Queries with no positive
        judgement are skipped. Or a dataset: a name (``"beir/scifact"``), a BEIR folder or zip,
        or an :class:`ef.datasets.Dataset`; its qrels and query texts are used (see
        :func:`ef.datasets.load`), and its facts give the defaults of `relevance_level` and
        `ignore_identical_ids`.
    queries
        The query texts — ``{query_id: query_text}``. A judged query absent here is skipped;
        the report's ``missing_texts`` lists those, and its table title counts them. Required
        with qrels given as a mapping; with a dataset, left out (its own queries are used).
    k_values
        The rank cutoffs to evaluate at.
    metrics
        Which metrics to compute — any of the keys of ``RETRIEVAL_METRICS``, each once.
    limit
        How many results to retrieve per query. ``None`` uses ``max(k_values)``; raise it when
        sources segment into many pieces (de-duplication to source level can otherwise shorten
        the ranking).
    ignore_identical_ids
        Drop results whose doc id equals the query id (BEIR's option, for ArguAna and Quora); one
        extra result is retrieved so the ranking still reaches ``limit``. ``None`` (the default):
        the dataset's convention when `qrels` is a dataset, else ``False``.
    run_path
        If given, the rankings are also written there as a TREC run file (run id ``ef``), with
        the scores the retriever gave (see ``_write_rankings``); the report's ``run`` holds them
        in any case.
    show_progress
        Draw a progress bar while retrieving query by query.
    relevance_level
        The smallest grade that counts as relevant in the binary metrics (recall, precision,
        MRR, MAP), as trec_eval's ``-l``; NDCG takes the grades themselves as gains, whatever it
        is. ``None`` (the default): the dataset's relevance level when `qrels` is a dataset (2
        for TREC DL), else every positive grade counts.

    Raises
    ------
    TypeError
        For a non-str query or doc id, a str as `metrics`, a non-integer cutoff.
    ValueError
        For an unknown or repeated metric name, a bad cutoff, a non-finite grade, if no query
        can be scored, or (with `run_path`) if no query retrieved anything: a run file with no
        ranking line is one trec_eval and :func:`evaluate_run` refuse, so none is written.

    Examples
    --------
    >>> qrels = {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}}
    >>> queries = {'q1': 'alpha', 'q2': 'beta'}
    >>> def retriever(query, *, limit=10):
    ...     return {'alpha': ['d1', 'd2'], 'beta': ['d1', 'd2']}[query][:limit]
    >>> report = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 2))
    >>> report.metrics['recall@2'], report.n_queries
    (1.0, 2)

    The spec's two-query example, scored at NDCG@1:

    >>> qrels = {'q1': {'d1': 1.0, 'd2': 1.0}, 'q2': {'d3': 1.0}}
    >>> queries = {'q1': 'first query', 'q2': 'second query'}
    >>> rankings = {'first query': ['d1', 'd9', 'd2'], 'second query': ['d9', 'd3']}
    >>> def retriever(query, *, limit=10):
    ...     return rankings[query][:limit]
    >>> report = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 3))
    >>> report.metrics['recall@3']
    1.0
    >>> round(report.primary_at(1), 3)  # NDCG@1, averaged over the two queries
    0.5
    """
    names = _names(metrics)
    ks = _cutoffs(k_values)
    depth = max(ks) if limit is None else _check_k(limit, name="limit")
    if depth < max(ks):
        raise ValueError(f"'limit' must be at least max(k_values) = {max(ks)} (got {limit!r})")
    check_bool(show_progress, "show_progress")
    if run_path is not None:
        _check_run_path(run_path)  # before any retrieval: a typo must not cost the whole run
    qrels, queries, facts = _judgements(qrels, queries)
    if ignore_identical_ids is None:
        ignore_identical_ids = False if facts is None else facts.query_ids_are_doc_ids
    check_bool(ignore_identical_ids, "ignore_identical_ids")
    if relevance_level is None:
        level: float | None = None if facts is None else facts.relevance_level
    else:
        level = check_positive_number(relevance_level, "relevance_level")
    _check_argument_order(qrels, queries)
    _check_qrels(qrels)
    _check_queries(queries)

    jobs: list[tuple[str, str]] = []
    missing: list[str] = []
    for query_id, judged in qrels.items():
        if any(grade > 0 for grade in judged.values()):
            if query_id in queries:
                jobs.append((query_id, queries[query_id]))
            else:
                missing.append(query_id)
    if not jobs:
        raise ValueError(
            "no query can be scored: no query in 'qrels' has a positive judgement and a text in 'queries'"
            + (f" ({len(missing)} judged {'query has' if len(missing) == 1 else 'queries have'} no text, "
               f"e.g. {missing[0]!r})" if missing else "")
        )

    # BEIR asks for one extra hit when the query's own id may be dropped, so `depth` results remain.
    fetch = depth + 1 if ignore_identical_ids else depth
    judgements = {query_id: qrels[query_id] for query_id, _ in jobs}
    if level is not None:
        top = max(float(grade) for grades in judgements.values() for grade in grades.values())
        warn_unreached_level(top, level, stacklevel=3)  # through ef.evaluation.evaluate_retrieval (_named.py)
    block = _query_block(retriever)
    run: Mapping[str, Mapping[str, float]]
    if block is not None:
        means, per_query, run, unscored = _evaluate_in_blocks(
            retriever,
            jobs,
            judgements,
            names,
            ks,
            block=block,
            fetch=fetch,
            depth=depth,
            ignore_identical_ids=ignore_identical_ids,
            run_path=run_path,
            show_progress=show_progress,
            level=level,
        )
    else:
        results = _retrieve_all(retriever, jobs, fetch, show_progress)
        rankings = _rankings(jobs, results, depth=depth, ignore_identical_ids=ignore_identical_ids)
        run, unscored, mixed = _as_run(rankings)
        per_query = _scored(rankings, judgements, names, ks, _level(judgements, level))
        means = _means(per_query, names, ks)
        if run_path is not None:
            _write_rankings(run_path, run, mixed)
    return RetrievalEvalReport(
        metrics=means,
        per_query=per_query,
        n_queries=len(per_query),
        k_values=ks,
        missing_texts=tuple(missing),
        run=run,
        rank_scores=tuple(unscored),
    )


def _query_block(retriever: Any) -> int | None:
    """The retriever's ``query_block`` (a :class:`~ef.source_manager.SearchableCorpus` on Ray), if any."""
    block = getattr(retriever, "query_block", None)
    return None if block is None else _check_k(block, "retriever.query_block")


def _rankings(
    jobs: Sequence[tuple[str, str]], results: Sequence[Sequence[object]], *, depth: int, ignore_identical_ids: bool
) -> dict[str, tuple[list[str], list[float | None]]]:
    """Each job's results as source doc ids and scores, de-duplicated, cut to `depth`."""
    rankings: dict[str, tuple[list[str], list[float | None]]] = {}
    for (query_id, _), found in zip(jobs, results, strict=True):
        doc_ids, scores = _dedupe(query_id, found)
        if ignore_identical_ids:
            if query_id in doc_ids:
                at = doc_ids.index(query_id)
                del doc_ids[at], scores[at]
            del doc_ids[depth:], scores[depth:]
        rankings[query_id] = (doc_ids, scores)
    return rankings


def _scored(
    rankings: Mapping[str, tuple[list[str], list[float | None]]],
    judged: Mapping[str, Mapping[str, float]],
    names: Sequence[str],
    ks: Sequence[int],
    level: float,
) -> dict[str, dict[str, float]]:
    """Per-query values of every ``<metric>@<k>`` for the queries of `rankings`, from the bulk
    kernels of ``evaluate_run`` on a table made straight from the rankings (the retriever's order
    is the rank: ``HitTable.from_rankings``). A doc is relevant when its grade is at least `level`.
    A query's values depend on its ranking alone, so rankings can come block by block."""
    from ef.measures.bulk import HitTable  # numpy, loaded when something is scored

    measures = _measures(names, ks)
    query_ids = list(rankings)
    table = HitTable.from_rankings(
        [rankings[q][0] for q in query_ids], [judged[q] for q in query_ids], relevance_level=level
    )
    columns = {key: m.evaluate(table).tolist() for key, m in measures.items()}
    return {q: {key: columns[key][i] for key in measures} for i, q in enumerate(query_ids)}


def _means(per_query: Mapping[str, Mapping[str, float]], names: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    """Each measure's summary over `per_query`, summed in trec_eval's query order (byte-wise ids)."""
    import numpy as np

    from ef.evaluation._run import _summary

    order = sorted(per_query)
    return {
        key: _summary(m, np.array([per_query[q][key] for q in order], dtype=np.float64))
        for key, m in _measures(names, ks).items()
    }


def _measures(names: Sequence[str], ks: Sequence[int]) -> dict[str, Measure]:
    return {f"{name}@{k}": parse_measure(f"{name}@{k}") for name in names for k in ks}


def _level(judged: Mapping[str, Mapping[str, float]], level: float | None) -> float:
    """`level`, or the smallest positive grade (the per-query functions' rule: a grade ``> 0`` is relevant)."""
    if level is not None:
        return level
    return min(float(grade) for grades in judged.values() for grade in grades.values() if grade > 0)


def _check_run_path(run_path: object) -> None:
    """Refuse a `run_path` that could not be written at the end: not a path, a directory, or in a
    folder that does not exist."""
    if not isinstance(run_path, str | os.PathLike):
        raise TypeError(f"'run_path' must be a path or None (got {type(run_path).__name__})")
    path = os.fspath(run_path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "'run_path' is a directory; name the run file to write", path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"'run_path' is in a folder that does not exist ({folder})", path)


def _evaluate_in_blocks(
    retriever: Any,
    jobs: Sequence[tuple[str, str]],
    judged: Mapping[str, Mapping[str, float]],
    names: Sequence[str],
    ks: tuple[int, ...],
    *,
    block: int,
    fetch: int,
    depth: int,
    ignore_identical_ids: bool,
    run_path: str | os.PathLike[str] | None,
    show_progress: bool,
    level: float | None,
) -> tuple[dict[str, float], dict[str, dict[str, float]], Mapping[str, Mapping[str, float]], list[str]]:
    """:func:`evaluate_retrieval`'s means, per-query values, run and unscored queries, for a retriever
    with a ``query_block``: the rankings go to disk, not memory.

    `block` queries at a time are retrieved and scored straight from their rankings (a query's
    values depend on its ranking alone: the numbers are the in-memory path's), and their
    retriever scores appended, grouped by query, to a run file in a scratch folder, which becomes
    the report's ``run`` (read when first used) and `run_path`.
    """
    from ef.io.trec import format_run, write_lines

    folder = tempfile.mkdtemp(prefix="ef-retrieval-")
    run_file = os.path.join(folder, "run.trec")
    unscored: list[str] = []
    per_query: dict[str, dict[str, float]] = {}
    relevant = _level(judged, level)
    try:
        with open(run_file, "wb") as real:
            for start in range(0, len(jobs), block):
                chunk = jobs[start : start + block]
                rankings = _rankings(
                    chunk,
                    _retrieve_all(retriever, chunk, fetch, show_progress),
                    depth=depth,
                    ignore_identical_ids=ignore_identical_ids,
                )
                per_query.update(_scored(rankings, judged, names, ks, relevant))
                run, block_unscored, mixed = _as_run(rankings)
                unscored += block_unscored
                if run_path is None:  # ids as tokens (_token): an id a TREC line cannot hold still reads back
                    lines = format_run(_tokens_of(run))
                else:  # the user's file holds the ids themselves: refused as the in-memory path refuses them
                    _refuse_mixed(mixed)
                    lines = format_run({query_id: docs for query_id, docs in run.items() if docs})
                real.write("".join(lines).encode())
        per_query = {query_id: per_query[query_id] for query_id, _ in jobs}
        means = _means(per_query, names, ks)
        if run_path is not None:
            if not os.path.getsize(run_file):
                _refuse_empty()
            with open(run_file, encoding="utf-8") as written:
                write_lines(run_path, written)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return means, per_query, _RunOnDisk(run_file, list(per_query), folder, tokens=run_path is None), unscored


# What a TREC line cannot hold in an id (whitespace, NUL, a leading '#'), and '%', the escape.
_UNSAFE = re.compile(r"[%\s\x00]|^#|^$")


def _token(text: str) -> str:
    """`text` as a token a TREC line holds: itself, or percent-encoded (UTF-8, lone surrogates
    kept) when it holds whitespace, NUL, ``%``, a leading ``#`` or a lone surrogate, or is empty.
    One to one: only an encoded token holds ``%``; :func:`_untoken` inverts it.

    >>> [_token(t) for t in ("d1", "my doc", "#1", "50%", "")], _untoken(_token("my doc"))
    (['d1', 'my%20doc', '%231', '50%25', '%'], 'my doc')
    """
    if not _UNSAFE.search(text):
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass
    return urllib.parse.quote(text, safe="", errors="surrogatepass") or "%"


def _untoken(token: str) -> str:
    if "%" not in token:
        return token
    return "" if token == "%" else urllib.parse.unquote(token, errors="surrogatepass")


def _tokens_of(run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    return {_token(q): {_token(d): score for d, score in docs.items()} for q, docs in run.items() if docs}


class _RunOnDisk(Mapping[str, Mapping[str, float]]):
    """The ``run`` of a report scored from disk: the run file, read whole the first time it is used.

    One entry per scored query, in the report's order (``{}`` for one that retrieved nothing),
    each query's docs as the file has them (trec_eval's order: by score, tied scores by doc id).
    The scratch folder goes with the last reference to this mapping.
    """

    def __init__(self, path: str, query_ids: Sequence[str], folder: str, *, tokens: bool) -> None:
        self._path = path
        self._tokens = tokens  # ids written as _token()s (else as themselves: run_path's checked ids)
        self._query_ids = tuple(query_ids)
        self._run: dict[str, dict[str, float]] | None = None
        weakref.finalize(self, shutil.rmtree, folder, True)

    def _loaded(self) -> dict[str, dict[str, float]]:
        if self._run is None:
            from ef.evaluation._hits import read_run

            found = read_run(self._path)
            if self._tokens:
                found = {_untoken(q): {_untoken(d): s for d, s in docs.items()} for q, docs in found.items()}
            self._run = {query_id: found.get(query_id, {}) for query_id in self._query_ids}
        return self._run

    def __getitem__(self, query_id: str) -> Mapping[str, float]:
        return self._loaded()[query_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._query_ids)

    def __len__(self) -> int:
        return len(self._query_ids)


def _as_run(
    rankings: Mapping[str, tuple[list[str], list[float | None]]],
) -> tuple[dict[str, dict[str, float]], list[str], list[str]]:
    """The rankings as a run ``{query_id: {doc_id: score}}``, each query's docs in rank order.

    Scores are the retriever's own when every result of the query has one (``SearchHit``);
    otherwise (bare ids, ``Segment``, or a mix) they stand for the rank, ``n - rank + 1``, which
    keeps the order. Returned with the queries so scored by rank, and those of them that mixed
    scored and unscored results.
    """
    run: dict[str, dict[str, float]] = {}
    unscored: list[str] = []
    mixed: list[str] = []
    for query_id, (doc_ids, scores) in rankings.items():
        real = [float(s) for s in scores if s is not None]
        if len(real) == len(scores):
            run[query_id] = dict(zip(doc_ids, real, strict=True))
            continue
        unscored.append(query_id)
        if real:
            mixed.append(query_id)
        n = len(doc_ids)
        run[query_id] = {doc_id: float(n - i) for i, doc_id in enumerate(doc_ids)}
    return run, unscored, mixed


def _names(metrics: Iterable[str]) -> tuple[str, ...]:
    given: object = metrics
    if isinstance(given, str) or not isinstance(given, Iterable):
        raise TypeError(f"'metrics' must be a sequence of metric names such as ('ndcg', 'recall') (got {given!r})")
    names = tuple(metrics)  # a generator is read once, here
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"'metrics' must hold metric names as str (got {name!r})")
    if not names:
        raise ValueError("'metrics' must name at least one metric")
    unknown = [m for m in names if m not in RETRIEVAL_METRICS and not cutoff_metric(m)]
    if unknown:
        raise ValueError(
            f"'metrics' has unknown metric name(s) {unknown!r}; valid names are {sorted(RETRIEVAL_METRICS)}, "
            "or any ranking measure of ef.measures that takes a cutoff (hit_rate, err, judged, ndcg_exp, "
            "P(rel=2), nDCG ...)"
        )
    repeated = sorted({m for m in names if names.count(m) > 1})
    if repeated:
        raise ValueError(f"'metrics' names {', '.join(map(repr, repeated))} more than once (got {names!r})")
    return names


def _cutoffs(k_values: Iterable[int]) -> tuple[int, ...]:
    given: object = k_values
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise TypeError(f"'k_values' must be a non-empty sequence of positive integers (got {given!r})")
    values = tuple(k_values)
    if not values:
        raise ValueError(f"'k_values' must be a non-empty sequence of positive integers (got {given!r})")
    ks = tuple(_check_k(k, name="k_values") for k in values)
    if len(set(ks)) != len(ks):
        raise ValueError(f"'k_values' lists a cutoff more than once (got {values!r})")
    return ks


def _judgements(
    qrels: object, queries: Mapping[str, str] | None
) -> tuple[Mapping[str, Mapping[str, float]], Mapping[str, str], DatasetFacts | None]:
    """`qrels` and `queries` as given, or a loaded dataset's and its facts.

    A dataset is known by its :class:`~ef.datasets._facts.DatasetFacts`, not its class: this
    module imports nothing of :mod:`ef.datasets._load`, whose ``Dataset.evaluate`` calls it. A
    name or a path is loaded by the ``evaluate_retrieval`` that :mod:`ef.evaluation` exports
    (:mod:`ef.evaluation._named`) before it comes here."""
    if isinstance(qrels, Mapping):
        if queries is None:
            raise TypeError("'queries' is required when 'qrels' is a mapping (or pass a dataset as 'qrels')")
        return qrels, queries, None
    from ef.datasets._facts import DatasetFacts

    if isinstance(qrels, str | os.PathLike):
        if queries is not None:  # before anything is read: a qrels file's path is no dataset
            raise _queries_given(repr(os.fspath(qrels)))
        raise TypeError(f"a dataset name or path ({os.fspath(qrels)!r}) is loaded by ef.evaluation.evaluate_retrieval")
    facts = getattr(qrels, "facts", None)
    if not isinstance(facts, DatasetFacts):
        raise TypeError(
            "'qrels' must be a mapping {query_id: {doc_id: grade}}, a dataset name or path, or an "
            f"ef.datasets.Dataset (got {type(qrels).__name__})"
        )
    dataset = cast("JudgedSet", qrels)
    if queries is not None:
        raise _queries_given(dataset.name)
    return dataset.qrels, dataset.queries, facts


def _queries_given(dataset: str) -> TypeError:
    return TypeError(
        f"'queries' must be left out when 'qrels' is a dataset ({dataset}): its queries are used "
        "(a qrels file is read with ef.trec.read_qrels)"
    )


def _check_argument_order(qrels: object, queries: object) -> None:
    """Texts where the judgements belong, and judgements where the texts do: a swapped call."""
    if not (isinstance(qrels, Mapping) and isinstance(queries, Mapping) and qrels and queries):
        return
    if isinstance(next(iter(qrels.values())), str) and isinstance(next(iter(queries.values())), Mapping):
        raise TypeError(
            "'qrels' holds query texts and 'queries' judgements: the arguments look swapped; "
            "evaluate_retrieval takes (retriever, qrels, queries)"
        )


def _check_qrels(qrels: Mapping[str, Mapping[str, float]]) -> None:
    """Every query id a str, every judgement a ``{str: finite number}``: nothing is skipped for it."""
    if not isinstance(qrels, Mapping):
        raise TypeError(f"'qrels' must be a mapping {{query_id: {{doc_id: grade}}}} (got {type(qrels).__name__})")
    for query_id, judged in qrels.items():
        if not isinstance(query_id, str):
            # An int id never matches the str ids of 'queries': the query would silently not run.
            raise TypeError(f"'qrels' must be keyed by str query ids (got {query_id!r})")
        if not isinstance(judged, Mapping):
            raise TypeError(f"'qrels'[{query_id!r}] must be a mapping {{doc_id: grade}} (got {type(judged).__name__})")
        for doc_id, grade in judged.items():
            if not isinstance(doc_id, str):
                raise TypeError(f"'qrels'[{query_id!r}] must be keyed by str doc ids (got {doc_id!r})")
            if finite_float(grade) is None:
                raise ValueError(f"'qrels'[{query_id!r}][{doc_id!r}] must be a finite number (got {grade!r:.60})")


def _check_queries(queries: Mapping[str, str]) -> None:
    if not isinstance(queries, Mapping):
        raise TypeError(f"'queries' must be a mapping {{query_id: text}} (got {type(queries).__name__})")
    for query_id, text in queries.items():
        if not isinstance(query_id, str):
            raise TypeError(f"'queries' must be keyed by str query ids (got {query_id!r})")
        if not isinstance(text, str):
            raise TypeError(f"'queries'[{query_id!r}] must be a str (got {type(text).__name__})")


def _write_rankings(path: str | os.PathLike[str], run: Mapping[str, Mapping[str, float]], mixed: Sequence[str]) -> None:
    """Write the report's run (see ``_as_run``) as a TREC run file, run id ``ef``.

    A query whose results carry scores (``SearchHit``) is written with them, ties included, as
    the retriever gave them: a TREC reader orders tied documents by doc id, as trec_eval does.
    Results without any score (bare ids, ``Segment``) are written with their rank scores. A
    ranking that mixes scored and unscored results is an error: no single column could say
    what its numbers mean. A query that retrieved nothing has no line (trec_eval -c scores it
    0, as the report did).
    """
    from ef.trec import write_run

    _refuse_mixed(mixed)
    # a TREC run has no way to list a query without documents
    ranked = {query_id: docs for query_id, docs in run.items() if docs}
    if not ranked:
        _refuse_empty()
    write_run(path, ranked, run_id="ef")


def _refuse_empty() -> None:
    raise ValueError(
        "cannot write 'run_path': no query retrieved any document, and a run file with no ranking line is "
        "one trec_eval, evaluate_run and ef trec-eval refuse to score (nothing was written)"
    )


def _refuse_mixed(mixed: Sequence[str]) -> None:
    """No run file for a ranking that mixes scored and unscored results: no column could say what its numbers mean."""
    if mixed:
        raise ValueError(
            f"cannot write 'run_path': the retriever returned scored and unscored results for query "
            f"{mixed[0]!r}; return all SearchHits or none"
        )
