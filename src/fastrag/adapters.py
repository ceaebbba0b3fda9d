"""Adapters that make other retrieval back ends fastrag Retrievers.

:class:`CorpusRetriever` wraps an ef ``SearchableCorpus`` (anything with
``search(query, *, limit)`` returning ``SearchHit``\\ s), so an ef index can be benchmarked with
the fastrag metrics: each hit becomes a :class:`~fastrag.documents.Chunk` with
``source_uri`` = the segment's source document id and ``chunk_index`` = the segment's index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ef.validate import check_positive_int
from ef.source_manager._hit import SearchHit
from fastrag.documents import Chunk

__all__ = ["CorpusRetriever", "SearchableCorpusLike", "hit_to_chunk"]


class SearchableCorpusLike(Protocol):
    """The part of ef's ``SearchableCorpus`` the adapter uses."""

    def search(self, query: str, *, limit: int = 10) -> Sequence[SearchHit]:
        """The best `limit` hits for `query`, best first."""
        ...


def hit_to_chunk(hit: SearchHit) -> Chunk:
    """One ef ``SearchHit`` as a Chunk; score, rank and offsets go to ``metadata``.

    >>> from ef.segments import Segment
    >>> from ef.source_manager import SearchHit
    >>> chunk = hit_to_chunk(SearchHit(Segment("doc-1", 2, "Hello", 10, 15), score=3.5, rank=1))
    >>> chunk.source_uri, chunk.chunk_index, chunk.content, chunk.metadata["score"]
    ('doc-1', 2, 'Hello', 3.5)
    """
    if not isinstance(hit, SearchHit):
        raise TypeError(f"'hit' must be an ef SearchHit (got {type(hit).__name__})")
    segment = hit.segment
    return Chunk(
        segment.source_id,
        segment.index,
        segment.text,
        {"score": hit.score, "rank": hit.rank, "start": segment.start, "end": segment.end},
    )


@dataclass(frozen=True, slots=True)
class CorpusRetriever:
    """An ef ``SearchableCorpus`` seen as a fastrag :class:`~fastrag.benchmark.Retriever`.

    ``retrieve(query, k)`` is ``corpus.search(query, limit=k)`` with each hit turned into a
    Chunk by :func:`hit_to_chunk`. It is synchronous; the harness runs it in its thread pool.

    Parameters
    ----------
    corpus
        Anything with ``search(query, *, limit)`` returning ``SearchHit``\\ s.

    Examples
    --------
    >>> from ef.segments import Segment
    >>> from ef.source_manager import SearchHit
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
            raise TypeError(f"'corpus' must have search(query, *, limit) (got {type(self.corpus).__name__})")

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        """The top `k` hits of ``corpus.search`` as Chunks, best first."""
        hits = self.corpus.search(query, limit=check_positive_int(k, "k"))
        return [hit_to_chunk(hit) for hit in hits]
