"""The one retriever protocol and hit type of ef and fastrag, and every adapter between them.

- :class:`Retriever`: anything with ``retrieve(query, limit)`` returning up to `limit` hits, best
  first (sync or async). ef's :class:`~ef.source_manager.SearchableCorpus` and
  :class:`~ef.source_manager.SourceManager` are Retrievers, and so is every fastrag retriever
  (``retrieve(query, k)``): :func:`fastrag.benchmark.run_benchmark` runs an ef index as it is, and
  :func:`ef.evaluation.evaluate_retrieval` runs a fastrag retriever as it is.
- :class:`SearchHit`: one ranked result — a :class:`~ef.segments.Segment`, its score, its rank.
  A retriever may also return :class:`~ef.segments.Chunk`\\ s (fastrag's recorded form), bare
  :class:`~ef.segments.Segment`\\ s, or (for evaluation only) bare doc-id strings: :data:`Hit`.
- The adapters, all here: :func:`retrieval_function` (how any retriever is called),
  :func:`hit_doc_id`, :func:`hit_score` and :func:`source_ranking` (how evaluation reads hits),
  :func:`as_chunks`, :func:`as_chunk` and :func:`hit_to_chunk` (how a benchmark records them), :func:`check_retriever`
  (what a benchmark checks before it runs) and :class:`CorpusRetriever` (the older wrapper of an
  ef index, kept for code that uses it).

A result of any other type is a ``TypeError`` naming the retriever, the query and the rank.

>>> from ef.segments import Segment
>>> hits = [SearchHit(Segment("d1", 0, "alpha", 0, 5), 2.0, 1), SearchHit(Segment("d1", 1, "beta", 6, 10), 1.0, 2)]
>>> source_ranking(hits, query_id="q1")
(['d1'], [2.0])
>>> hit_to_chunk(hits[1]).source_uri, as_chunk(hits[1]).chunk_index
('d1', 1)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from numbers import Real
from typing import Protocol, TypeAlias, runtime_checkable

from ef._validate import check_instance, check_positive_int, describe, finite_float
from ef.segments import Chunk, Segment

__all__ = [
    "CorpusRetriever",
    "Hit",
    "Retriever",
    "SearchHit",
    "SearchableCorpusLike",
    "as_chunk",
    "as_chunks",
    "check_retriever",
    "hit_doc_id",
    "hit_score",
    "hit_to_chunk",
    "retrieval_function",
    "source_ranking",
]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked search result: a segment, its score and its 1-based rank.

    >>> hit = SearchHit(Segment("doc-1", 0, "Hello", 0, 5), score=3.5, rank=1)
    >>> hit.segment.source_id, hit.rank
    ('doc-1', 1)
    >>> SearchHit(Segment("doc-1", 0, "Hello", 0, 5), score=float("nan"), rank=1)
    Traceback (most recent call last):
    ...
    ValueError: 'score' must be a finite number (got nan)
    """

    segment: Segment
    score: float
    rank: int

    def __post_init__(self) -> None:
        check_instance(self.segment, "segment", Segment)
        score: object = self.score  # callers pass anything: check it as such
        value = finite_float(score)
        if value is None:
            error = TypeError if isinstance(score, bool) or not isinstance(score, Real) else ValueError
            raise error(f"'score' must be a finite number (got {describe(score)})")
        # Stored as Python numbers: a numpy float32 score would not survive json.dumps in a report.
        object.__setattr__(self, "score", value)
        object.__setattr__(self, "rank", check_positive_int(self.rank, "rank"))

    @classmethod
    def ranked(cls, segments: Sequence[Segment], scores: Sequence[float]) -> list[SearchHit]:
        """One hit per segment, ranked 1, 2, ... in the order given, checked once for the whole
        list (a search's 100 hits per query are built ~3x faster than one by one).

        >>> hits = SearchHit.ranked([Segment("d1", 0, "a", 0, 1), Segment("d2", 0, "b", 0, 1)], [2.0, 1.5])
        >>> [(h.segment.source_id, h.score, h.rank) for h in hits]
        [('d1', 2.0, 1), ('d2', 1.5, 2)]
        >>> SearchHit.ranked([Segment("d1", 0, "a", 0, 1)], [float("inf")])
        Traceback (most recent call last):
        ...
        ValueError: 'score' must be a finite number (got inf)
        """
        values = list(scores)
        if len(values) != len(segments):
            raise ValueError(f"'scores' must hold one score per segment (got {len(values)} for {len(segments)})")
        checked = (
            all(type(s) is Segment for s in segments)
            and not set(map(type, values)) - {float}
            and all(map(math.isfinite, values))
        )
        if not checked:  # one by one, so that the error names what is wrong
            pairs = zip(segments, values, strict=True)
            return [cls(segment, score, rank) for rank, (segment, score) in enumerate(pairs, 1)]
        new, put = object.__new__, object.__setattr__
        hits = []
        for rank, (segment, score) in enumerate(zip(segments, values, strict=True), 1):
            hit = new(cls)
            put(hit, "segment", segment)
            put(hit, "score", score)
            put(hit, "rank", rank)
            hits.append(hit)
        return hits


Hit: TypeAlias = SearchHit | Chunk | Segment | str
"""What a retriever may return for one query, best first (a bare str id for evaluation only)."""


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``retrieve(query, limit)`` returning up to `limit` hits, best first (sync or async).

    The limit is passed by position, so ef's ``retrieve(query, limit=10)`` and fastrag's
    ``retrieve(query, k)`` both fit.
    """

    def retrieve(self, query: str, limit: int, /) -> Sequence[Hit] | Awaitable[Sequence[Hit]]:
        """The best `limit` hits for `query`."""
        ...


class SearchableCorpusLike(Protocol):
    """The part of ef's ``SearchableCorpus`` that :class:`CorpusRetriever` uses."""

    def search(self, query: str, *, limit: int = 10) -> Sequence[SearchHit]:
        """The best `limit` hits for `query`, best first."""
        ...


def _name(retriever: object) -> str:
    return type(retriever).__name__


def _resolved(result: object) -> object:
    """A sync caller's value of `result`: an awaitable (an async retriever's answer) is run to completion."""
    if not inspect.isawaitable(result):
        return result
    import asyncio  # only an async retriever needs it (~25 ms to import)

    try:
        asyncio.get_running_loop()
    except RuntimeError:

        async def wait() -> object:
            return await result

        return asyncio.run(wait())
    if inspect.iscoroutine(result):
        result.close()  # never awaited: close it rather than leave a warning behind
    raise RuntimeError(
        "an async retriever cannot be evaluated from inside a running event loop; "
        "call evaluate_retrieval from synchronous code (or a thread)"
    )


def _takes_limit_keyword(method: Callable[..., object]) -> bool:
    try:
        inspect.signature(method).bind("query", limit=1)
    except (TypeError, ValueError):  # no such keyword, or no signature to read (a builtin): by position
        return False
    return True


def retrieval_function(retriever: object) -> Callable[[str, int], Sequence[object]]:
    """How a synchronous caller (``evaluate_retrieval``) runs `retriever`: ``(query, limit) -> results``.

    An ef index's ``search(query, limit=...)``; any :class:`Retriever`'s ``retrieve``, with
    ``limit=`` when it takes that keyword (a SourceManager), else by position (a fastrag
    ``retrieve(query, k)``; an async one is run to completion); else a callable
    ``retriever(query, limit=...)``, or ``retriever(query)`` when it takes no ``limit``.

    Raises
    ------
    TypeError
        If `retriever` is none of these.

    Examples
    --------
    >>> class Fastrag:
    ...     def retrieve(self, query, k):
    ...         return [Chunk("d1", 0, query)][:k]
    >>> retrieval_function(Fastrag())("alpha", 1)[0].source_uri
    'd1'
    >>> retrieval_function(42)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: 'retriever' must be a SearchableCorpus, a SourceManager, a fastrag Retriever or ... (got 42)
    """
    search = getattr(retriever, "search", None)
    if callable(search):
        return lambda q, n: search(q, limit=n)
    retrieve = getattr(retriever, "retrieve", None)
    if callable(retrieve):
        if _takes_limit_keyword(retrieve):  # ef's retrieve(query, *, limit), the spec's SourceManager style
            return lambda q, n: _resolved(retrieve(q, limit=n))  # type: ignore[return-value]
        return lambda q, n: _resolved(retrieve(q, n))  # type: ignore[return-value]  # fastrag's (query, k)
    if callable(retriever):
        if _takes_limit_keyword(retriever):
            return lambda q, n: _resolved(retriever(q, limit=n))  # type: ignore[return-value]
        # A plain `query -> results` (the spec's "any callable"): its ranking is cut at the cutoffs.
        return lambda q, n: _resolved(retriever(q))  # type: ignore[return-value]
    raise TypeError(
        "'retriever' must be a SearchableCorpus, a SourceManager, a fastrag Retriever or a callable "
        f"query -> results (got {describe(retriever)})"
    )


def _wrong_hit(result: object, expected: str) -> TypeError:
    return TypeError(f"retriever returned a {type(result).__name__}; expected {expected}")


def hit_doc_id(result: object) -> str:
    """The source document id of one result: a SearchHit's segment's, a Segment's, a Chunk's page, a str.

    >>> hit_doc_id(Chunk("page-1", 3, "text")), hit_doc_id("d7")
    ('page-1', 'd7')
    """
    if isinstance(result, str):
        return result
    if isinstance(result, SearchHit):
        return result.segment.source_id
    if isinstance(result, Segment):
        return result.source_id
    if isinstance(result, Chunk):
        return result.source_uri
    raise _wrong_hit(result, "SearchHit, Chunk, Segment or str doc ids")


def hit_score(result: object) -> float | None:
    """The retriever's own score of one result, or ``None`` when it gave none.

    A SearchHit's ``score``; a Chunk's ``metadata["score"]`` when it is a finite number (what
    :func:`hit_to_chunk` writes there); nothing for a Segment or a str.

    >>> hit_score(Chunk("p", 0, "x", {"score": 0.5})), hit_score("d1")
    (0.5, None)
    """
    if isinstance(result, SearchHit):
        return result.score
    if isinstance(result, Chunk):
        return finite_float(result.metadata.get("score"))
    return None


def source_ranking(results: object, *, query_id: str) -> tuple[list[str], list[float | None]]:
    """A retriever's results for one query as source doc ids, each at its best (first) rank, with scores.

    Raises
    ------
    TypeError
        If `results` is not an ordered collection (a str, a set, a mapping) or holds something
        that is not a :data:`Hit`; the message names the query and the rank.

    Examples
    --------
    >>> source_ranking(["d1", "d2", "d1"], query_id="q1")
    (['d1', 'd2'], [None, None])
    >>> source_ranking({"d1"}, query_id="q1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: retriever returned a set for query 'q1'; expected a list of SearchHit, Chunk, ..., best first
    """
    # A bare string is iterable too: its characters would be scored as doc ids; a set has no order.
    if isinstance(results, str | bytes | AbstractSet | Mapping) or not isinstance(results, Iterable):
        raise TypeError(
            f"retriever returned a {type(results).__name__} for query {query_id!r}; "
            "expected a list of SearchHit, Chunk, Segment or str doc ids, best first"
        )
    if isinstance(results, list | tuple) and all(type(result) is SearchHit for result in results):
        best: dict[str, float | None] = {}  # ef's own hits, checked when built: the fast path
        for hit in results:
            best.setdefault(hit.segment.source_id, hit.score)
        return list(best), list(best.values())
    doc_ids: list[str] = []
    scores: list[float | None] = []
    seen: set[str] = set()
    for rank, result in enumerate(results, start=1):
        try:
            doc_id = hit_doc_id(result)
        except TypeError as error:
            error.add_note(f"while retrieving for query {query_id!r} (rank {rank})")
            raise
        if doc_id not in seen:
            seen.add(doc_id)
            doc_ids.append(doc_id)
            scores.append(hit_score(result))
    return doc_ids, scores


def hit_to_chunk(hit: SearchHit) -> Chunk:
    """One ef ``SearchHit`` as a Chunk; score, rank and offsets go to ``metadata``.

    >>> chunk = hit_to_chunk(SearchHit(Segment("doc-1", 2, "Hello", 10, 15), score=3.5, rank=1))
    >>> chunk.source_uri, chunk.chunk_index, chunk.content, chunk.metadata["score"]
    ('doc-1', 2, 'Hello', 3.5)
    """
    check_instance(hit, "hit", SearchHit, what="an ef SearchHit")
    segment = hit.segment
    return Chunk(
        segment.source_id,
        segment.index,
        segment.text,
        {"score": hit.score, "rank": hit.rank, "start": segment.start, "end": segment.end},
    )


def as_chunk(result: object) -> Chunk:
    """One result as the Chunk a benchmark records: a Chunk as it is, a SearchHit or a Segment converted.

    A bare str doc id is refused: a chunk's id is the hash of its content, which an id alone lacks.

    >>> as_chunk(Segment("d1", 0, "alpha", 0, 5)).metadata
    {'start': 0, 'end': 5}
    >>> as_chunk("d1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: retriever returned a str; expected Chunk, SearchHit or Segment (a benchmark records content, ...)
    """
    if isinstance(result, Chunk):
        return result
    if isinstance(result, SearchHit):
        return hit_to_chunk(result)
    if isinstance(result, Segment):
        return Chunk(result.source_id, result.index, result.text, {"start": result.start, "end": result.end})
    if isinstance(result, str):
        raise _wrong_hit(result, "Chunk, SearchHit or Segment (a benchmark records content, which a bare doc id lacks)")
    raise _wrong_hit(result, "Chunk, SearchHit or Segment")


def as_chunks(results: object, what: str) -> tuple[Chunk, ...]:
    """A ranking as the chunks a benchmark records (:func:`as_chunk` each); `what` names it in errors.

    >>> as_chunks([Segment("d1", 0, "a", 0, 1)], "'retrieved'")[0].source_uri
    'd1'
    >>> as_chunks({Chunk("d1", 0, "a")}, "'retrieved'")
    Traceback (most recent call last):
    ...
    TypeError: 'retrieved' must be a sequence of Chunk or SearchHit, best first (got set)
    """
    if isinstance(results, str | bytes | AbstractSet | Mapping) or not isinstance(results, Iterable):
        # A set has no order: its chunks would be ranked in hash order.
        raise TypeError(f"{what} must be a sequence of Chunk or SearchHit, best first (got {type(results).__name__})")
    chunks = []
    for rank, result in enumerate(results, start=1):
        try:
            chunks.append(as_chunk(result))
        except TypeError as error:
            raise TypeError(f"{what} at rank {rank}: {error}") from None
    return tuple(chunks)


def check_retriever(target: object, method: str, name: str = "target") -> None:
    """Refuse, before anything runs, a `target` whose `method` cannot be called as ``method(query, k)``.

    ``retrieve(query, *, limit)`` passes ``isinstance(target, Retriever)`` (a runtime protocol
    checks only that the method exists) and then fails at every call: named here instead.

    >>> class KeywordOnly:
    ...     def retrieve(self, query, *, limit=10): return []
    >>> check_retriever(KeywordOnly(), "retrieve")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: 'target' must accept retrieve(query, k) with k by position; ...retrieve(query, *, limit=10) does not
    """
    function = getattr(target, method)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: trust it
        return
    try:
        signature.bind("query", 1)
    except TypeError:
        shown = str(signature).replace("'", "")
        raise TypeError(
            f"'{name}' must accept {method}(query, k) with k by position; "
            f"{_name(target)}.{method}{shown} does not"
        ) from None


@dataclass(frozen=True, slots=True)
class CorpusRetriever:
    """An ef ``SearchableCorpus`` seen as a fastrag Retriever that returns Chunks.

    An ef index is a :class:`Retriever` itself (``run_benchmark(index, ...)`` works); this wrapper
    stays for code written before. ``retrieve(query, k)`` is ``corpus.search(query, limit=k)``
    with each hit turned into a Chunk by :func:`hit_to_chunk`.

    Parameters
    ----------
    corpus
        Anything with ``search(query, *, limit)`` returning ``SearchHit``\\ s.

    Examples
    --------
    >>> class TinyCorpus:
    ...     def search(self, query, *, limit=10):
    ...         hits = [SearchHit(Segment("d1", 0, "alpha", 0, 5), 2.0, 1),
    ...                 SearchHit(Segment("d2", 0, "beta", 0, 4), 1.0, 2)]
    ...         return hits[:limit]
    >>> [c.source_uri for c in CorpusRetriever(TinyCorpus()).retrieve("alpha", 1)]
    ['d1']
    """

    corpus: SearchableCorpusLike

    def __post_init__(self) -> None:
        if not callable(getattr(self.corpus, "search", None)):
            raise TypeError(f"'corpus' must have search(query, *, limit) (got {describe(self.corpus)})")

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        """The top `k` hits of ``corpus.search`` as Chunks, best first."""
        hits = self.corpus.search(query, limit=check_positive_int(k, "k"))
        return [hit_to_chunk(hit) for hit in hits]
