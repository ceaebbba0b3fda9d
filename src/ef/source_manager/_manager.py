""":class:`SourceManager`: a corpus that grows source by source and answers queries as it goes."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ef._validate import check_non_empty_str, check_str
from ef.retrieval import SearchHit
from ef.segments import Segment
from ef.source_manager._collection import Collection, check_limit, check_queries, read_sources
from ef.source_manager._embedders import parse_embedder

__all__ = ["SourceManager"]


class SourceManager:
    """Add sources over time and retrieve context segments for a query (the RAG side of ef).

    Parameters
    ----------
    embedder
        As in :func:`~ef.source_manager.ingest`: ``"bm25"``, ``"st:<model>"`` or
        ``"hybrid:st:<model>"``.
    segment_size, segment_overlap
        How each added source is cut into segments (words per window, words shared); the
        default ``None`` keeps every source whole.
    batch_size, device
        How a dense model encodes.
    show_progress
        Draw progress bars while adding and retrieving many at once (default off: a manager
        usually grows a few sources at a time).

    Examples
    --------
    >>> manager = SourceManager()
    >>> manager.add("guide", "Water the ferns weekly.")
    [Segment(source_id='guide', index=0, text='Water the ferns weekly.', start=0, end=23)]
    >>> _ = manager.add_many({"notes": "Ferns like shade.", "misc": "Taxes are due in April."})
    >>> [hit.segment.source_id for hit in manager.retrieve("fern watering")]
    ['guide', 'notes']
    >>> manager.add("guide", "again")
    Traceback (most recent call last):
    ...
    ValueError: source 'guide' was already added
    """

    def __init__(
        self,
        embedder: str = "bm25",
        *,
        segment_size: int | None = None,
        segment_overlap: int = 0,
        batch_size: int = 32,
        device: str | None = None,
        show_progress: bool = False,
    ) -> None:
        self._collection = Collection(
            parse_embedder(embedder),
            segment_size=segment_size,
            segment_overlap=segment_overlap,
            device=device,
            batch_size=batch_size,
        )
        self.show_progress = show_progress

    @property
    def embedder(self) -> str:
        """The canonical embedder name."""
        return str(self._collection.spec)

    @property
    def fingerprint(self) -> str:
        """SHA-256 over the sources' ids and texts so far: how a benchmark's results file tells managers apart."""
        return self._collection.fingerprint()

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The ids of the sources added so far, in order."""
        return tuple(self._collection.source_ids)

    def __len__(self) -> int:
        """The number of segments held."""
        return len(self._collection)

    def __contains__(self, source_id: object) -> bool:
        return source_id in self._collection.positions

    def __repr__(self) -> str:
        return (
            f"SourceManager(embedder={self.embedder!r}, n_sources={len(self._collection.source_ids)}, "
            f"n_segments={len(self)})"
        )

    def add(self, source_id: str, text: str) -> list[Segment]:
        """Add one source; returns the segments it was cut into.

        Raises
        ------
        ValueError
            If `source_id` is empty or was already added.
        TypeError
            If `source_id` or `text` is not a str.
        """
        check_non_empty_str(source_id, "source_id")
        check_str(text, "text")
        start = len(self._collection)
        self.add_many([(source_id, text)])
        return [self._collection.segment(i) for i in range(start, len(self._collection))]

    def add_many(self, sources: Mapping[str, str] | Iterable[tuple[str, str]]) -> int:
        """Add sources (``{source_id: text}`` or ``(source_id, text)`` pairs); returns segments added.

        All are checked before any is added: on an error nothing changes.
        """
        pairs = read_sources(sources, known=self._collection.positions, name="sources")
        return self._collection.add(pairs, show_progress=self.show_progress, build=False)

    def retrieve(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The `limit` best segments for `query`, best first; none while no source was added.

        The one retriever protocol (:class:`ef.retrieval.Retriever`): `limit` may be passed by
        position, so a manager runs as it is in :func:`fastrag.benchmark.run_benchmark`.

        Raises
        ------
        TypeError
            If `query` is not a str.
        ValueError
            If `limit` is not a positive integer.
        """
        check_str(query, "query")
        return self._collection.search_many([query], limit=check_limit(limit), show_progress=False)[0]

    def retrieve_many(self, queries: Sequence[str], *, limit: int = 10) -> list[list[SearchHit]]:
        """:meth:`retrieve` for many queries at once."""
        return self._collection.search_many(
            check_queries(queries), limit=check_limit(limit), show_progress=self.show_progress
        )

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the sources and the index to `directory`, atomically (see ``SearchableCorpus.save``)."""
        return self._collection.save(directory, overwrite=overwrite)

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        embedder: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        show_progress: bool = False,
    ) -> SourceManager:
        """Read a saved index back as a manager that can keep growing (see ``SearchableCorpus.load``)."""
        manager = cls.__new__(cls)
        manager._collection = Collection.load(directory, embedder=embedder, device=device, batch_size=batch_size)
        manager.show_progress = show_progress
        return manager
