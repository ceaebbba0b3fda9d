"""Run :class:`~ef.pipeline.Pipeline`\\ s over one corpus, each stage computed once and cached by content.

A :class:`Workspace` holds one corpus and keeps what its pipelines compute, keyed by the
parameters each stage depends on and nothing else:

- chunks, by chunking (``unit``, ``size``, ``overlap``): a chunking shared by cells is cut once;
- BM25 token ids, by chunking, stemmer and stopwords; a BM25 score matrix, also by ``k1`` and ``b``;
- dense vectors, by chunking and model, also on disk under `cache_dir` (``vectors/<key>.npy``,
  the key a hash of the corpus, the chunking and the model): each (chunking, embedder) is encoded
  once, and reused by the dense and hybrid first stages and by a bi-encoder reranker of the same
  model, across k, rerank depths, resumed sweeps and other sweeps sharing the cache;
- query vectors, by model and query texts (on disk too);
- first-stage rankings, by chunking and first stage, at the deepest depth asked: every k and
  rerank depth is a prefix of them.

:attr:`Workspace.counts` counts what was computed (``chunked``, ``tokenized``, ``bm25_indexed``,
``encoded``, ``queries_encoded``, ``retrieved``, ``reranked``) and what came from the disk cache
(``loaded``), so a test can prove that nothing was computed twice. :class:`PipelineRetriever` is
one pipeline as a retriever (``search_many``) for :func:`ef.evaluation.evaluate_retrieval`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ef._validate import check_bool, check_device, check_positive_int
from ef.pipeline import Pipeline, content_id, parse_rerank
from ef.retrieval import SearchHit
from ef.segments import Segment, segment_text

__all__ = ["Chunks", "PipelineRetriever", "StageOutput", "Workspace", "fusion_method"]

Ranking = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]
_QUERY_CHUNK = 1024  # query vectors scored per matrix product


@dataclass(frozen=True, slots=True)
class Chunks:
    """A chunking's segments, in corpus order, with how long cutting them took."""

    segments: tuple[Segment, ...]
    texts: tuple[str, ...]
    seconds: float


@dataclass(frozen=True, slots=True)
class StageOutput:
    """What a pipeline returned for each query (chunk positions and scores, best first, at most k)
    and what it cost: first-stage and rerank seconds over all the queries, and the index."""

    rankings: tuple[Ranking, ...]
    retrieve_seconds: float
    rerank_seconds: float
    index_bytes: int
    build_seconds: float


class _Identity:
    """The stemmer of ``stemmer="none"``."""

    @staticmethod
    def stemWord(word: str) -> str:  # noqa: N802  # PyStemmer's method name
        return word


def _tokenizer(stemmer: str, stopwords: str) -> Any:
    """ef's BM25 tokenizer (bm25s's tokens), with the stemmer or the stopwords turned off on request."""
    from ef.source_manager._bm25 import _Tokenizer

    tokenizer = _Tokenizer({})
    if stemmer == "none":
        tokenizer._stemmer = _Identity()
    if stopwords == "none":
        tokenizer._stopwords = frozenset()
    return tokenizer


def fusion_method() -> str:
    """Which fusion hybrid pipelines use: ``"ef.fusion.fuse"`` when that module exists, else
    ``"ef.source_manager (reciprocal rank fusion, k=60)"``, the fusion of ``ef eval --embedder hybrid``."""
    return "ef.fusion.fuse" if _fusion_module() is not None else "ef.source_manager (reciprocal rank fusion, k=60)"


def _fusion_module() -> Any:
    try:
        import ef.fusion as fusion  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return fusion if callable(getattr(fusion, "fuse", None)) else None


def _fuse(lexical: Sequence[Ranking], dense: Sequence[Ranking], limit: int) -> list[Ranking]:
    """Reciprocal rank fusion (k=60) of two rankings per query, the top `limit` of each fused list.

    Through ``ef.fusion.fuse(method="rrf")`` when that module exists, else ``ef eval --embedder
    hybrid``'s fusion; both rank each list in its own order (score, then position) and break
    fused ties by position, so they agree.
    """
    module = _fusion_module()
    if module is None:
        from ef.source_manager._embedders import fuse

        return [fuse([lex, den], limit) for (lex, _), (den, _) in zip(lexical, dense, strict=True)]
    # RRF reads ranks only: each list goes in as rank scores (n, n - 1, ...), so ef.fusion ranks
    # the list in its own order, tied scores included (trec_eval's order would break ties by id).
    runs = [
        {str(q): {str(p): float(len(pos) - i) for i, p in enumerate(pos.tolist())}
         for q, (pos, _) in enumerate(rankings) if len(pos)}
        for rankings in (lexical, dense)
    ]
    given = [run for run in runs if run]
    fused = module.fuse(given, method="rrf", params={"k": 60}) if given else {}
    out: list[Ranking] = []
    for q in range(len(lexical)):
        best = sorted(((-score, int(doc)) for doc, score in fused.get(str(q), {}).items()))[:limit]
        out.append((np.array([p for _, p in best], dtype=np.int64), np.array([-s for s, _ in best], dtype=np.float32)))
    return out


def _digest(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


class Workspace:
    """One corpus and everything its pipelines have computed; see the module's docstring.

    Parameters
    ----------
    corpus
        ``{doc_id: text}``, as :func:`ef.evaluation.read_beir` returns it.
    cache_dir
        Where dense vectors (and query vectors) are kept across processes; ``None``: in memory only.
    device, batch_size
        Where and in what batches dense models encode.
    show_progress
        Draw encoding bars.

    Examples
    --------
    >>> ws = Workspace({"d1": "cats purr softly", "d2": "dogs bark loudly at cats"})
    >>> out = ws.run(Pipeline("bm25", k=2), ["barking dogs"])
    >>> [(ws.chunks(Pipeline()).segments[p].source_id, round(float(s), 3)) for p, s in zip(*out.rankings[0])]
    [('d2', 0.595)]
    >>> ws.counts["chunked"], ws.counts["bm25_indexed"]
    (Counter({('words', None, 0): 1}), Counter({('words', None, 0, 'english', 'english', 1.2, 0.75): 1}))
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        device: str | None = None,
        batch_size: int = 32,
        show_progress: bool = False,
    ) -> None:
        from ef.source_manager._collection import read_sources

        pairs = read_sources(corpus, known={}, name="corpus")
        if not pairs:
            raise ValueError("'corpus' has no documents")
        # Checked here, where they are given: a dense cell reads them later, and BM25 never
        # (device=3, batch_size=0 and show_progress='no' were kept silently).
        if cache_dir is not None and not isinstance(cache_dir, str | os.PathLike):
            raise TypeError(f"'cache_dir' must be a folder path or None (got {type(cache_dir).__name__})")
        self.corpus = dict(pairs)
        self.fingerprint = _digest([t for pair in pairs for t in pair])
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.device = check_device(device)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.show_progress = check_bool(show_progress, "show_progress")
        self.counts: dict[str, Counter[Any]] = {
            name: Counter()
            for name in ("chunked", "tokenized", "bm25_indexed", "encoded", "queries_encoded", "loaded",
                         "retrieved", "reranked")
        }
        self._chunks: dict[tuple[Any, ...], Chunks] = {}
        self._tokens: dict[tuple[Any, ...], tuple[list[list[int]], Any, float]] = {}
        self._bm25: dict[tuple[Any, ...], tuple[Any, int, float]] = {}
        self._vectors: dict[tuple[Any, ...], tuple[npt.NDArray[np.float32], float]] = {}
        self._queries: dict[tuple[Any, ...], tuple[npt.NDArray[np.float32], float]] = {}
        self._first: dict[tuple[Any, ...], tuple[int, list[Ranking], float]] = {}
        self._reranked: dict[tuple[Any, ...], tuple[list[Ranking], float]] = {}
        self._rerankers: dict[str, Any] = {}

    def check_corpus(self, corpus: Mapping[str, str], name: str = "corpus") -> None:
        """Refuse a `corpus` that is not this workspace's: with a workspace given, a caller's corpus
        was not read at all, and another corpus's chunks, index and vectors were searched silently."""
        from ef.source_manager._collection import read_sources

        if corpus is self.corpus:  # its own (benchmark_grid checks once, then hands on this one)
            return
        pairs = read_sources(corpus, known={}, name=name)
        # the same documents in another order are this corpus (a dict compares regardless of order;
        # the fingerprint, which keys the vector cache by position, does not)
        if dict(pairs) != self.corpus:
            raise ValueError(
                f"'workspace' was made for another corpus than {name!r} ({len(self.corpus)} documents, "
                f"{name!r} has {len(pairs)}): make a Workspace of this corpus, or pass none"
            )

    # -- chunks -----------------------------------------------------------------------------
    def chunks(self, pipeline: Pipeline) -> Chunks:
        """The pipeline's chunking of the corpus, cut once per chunking."""
        key = pipeline.chunking()
        found = self._chunks.get(key)
        if found is None:
            start = time.perf_counter()
            unit, size, overlap = key
            segments = tuple(
                segment
                for doc_id, text in self.corpus.items()
                for segment in segment_text(doc_id, text, size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
            )
            found = Chunks(segments, tuple(s.text for s in segments), time.perf_counter() - start)
            self._chunks[key] = found
            self.counts["chunked"][key] += 1
        return found

    # -- bm25 -------------------------------------------------------------------------------
    def _token_ids(self, pipeline: Pipeline) -> tuple[list[list[int]], Any, float]:
        key = (*pipeline.chunking(), pipeline.stemmer, pipeline.stopwords)
        found = self._tokens.get(key)
        if found is None:
            chunks = self.chunks(pipeline)
            tokenizer = _tokenizer(pipeline.stemmer, pipeline.stopwords)  # imports bm25s: not indexing time
            start = time.perf_counter()
            ids = [tokenizer.ids(text, grow=True) for text in chunks.texts]
            found = (ids, tokenizer, time.perf_counter() - start)
            self._tokens[key] = found
            self.counts["tokenized"][key] += 1
        return found

    def _bm25_model(self, pipeline: Pipeline) -> tuple[Any, Any, int, float]:
        """The bm25s model, the tokenizer, the score matrix's bytes and the seconds to build it."""
        key = (*pipeline.chunking(), pipeline.stemmer, pipeline.stopwords, pipeline.k1, pipeline.b)
        ids, tokenizer, token_seconds = self._token_ids(pipeline)
        found = self._bm25.get(key)
        if found is None:
            import bm25s

            start = time.perf_counter()
            model = bm25s.BM25(k1=pipeline.k1, b=pipeline.b, method="lucene")
            vocab = dict(tokenizer.vocab)  # bm25s appends its empty-document token to the dict it is given
            if vocab:
                model.index((ids, vocab), show_progress=False)
            else:  # no chunk holds an indexable word: an index that matches nothing (as ef's Bm25Index)
                with np.errstate(divide="ignore", invalid="ignore"):
                    model.index((ids, {"": 0}), show_progress=False)
            size = sum(int(np.asarray(model.scores[name]).nbytes) for name in ("data", "indices", "indptr"))
            found = (model, size, time.perf_counter() - start + token_seconds)
            self._bm25[key] = found
            self.counts["bm25_indexed"][key] += 1
        return found[0], tokenizer, found[1], found[2]

    def _bm25_search(self, pipeline: Pipeline, queries: Sequence[str], depth: int) -> list[Ranking]:
        from ef.source_manager._topk import top_k

        model, tokenizer, _, _ = self._bm25_model(pipeline)
        empty: Ranking = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))
        out: list[Ranking] = []
        for query in queries:
            tokens = tokenizer.ids(query, grow=False)
            # A score of 0 means no query term occurs: Lucene does not return such chunks.
            out.append(top_k(model.get_scores_from_ids(tokens), depth, minimum=0.0) if tokens else empty)
        return out

    # -- dense ------------------------------------------------------------------------------
    def _cache_file(self, kind: str, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / kind / f"{key}.npy"

    def _encode(self, model: str, texts: Sequence[str], desc: str) -> Callable[[], npt.NDArray[np.float32]]:
        """Load `model` now (its loading is not encoding time), and return the encoding to time."""
        from ef.source_manager._models import encode, load_model

        loaded = load_model(model, device=self.device)
        return lambda: encode(loaded, texts, batch_size=self.batch_size, show_progress=self.show_progress, desc=desc)

    def _cached_matrix(
        self, kind: str, key: str, rows: int, prepare: Callable[[], Callable[[], npt.NDArray[np.float32]]]
    ) -> tuple[npt.NDArray[np.float32], float, bool]:
        """The matrix cached under `key`, or the one `prepare`'s function computes (then saved); the
        seconds computing it took (recorded with it); whether it was computed now."""
        path = self._cache_file(kind, key)
        if path is not None and path.is_file():
            try:
                matrix = np.load(path, allow_pickle=False)
                meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
                if matrix.dtype == np.float32 and matrix.ndim == 2 and len(matrix) == rows:
                    return matrix, float(meta["seconds"]), False
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged entry is recomputed and replaced
        compute = prepare()
        start = time.perf_counter()
        matrix = compute()
        seconds = time.perf_counter() - start
        if path is not None:
            from ef.io._atomic import atomic_writer

            path.parent.mkdir(parents=True, exist_ok=True)
            buffer = io.BytesIO()
            np.save(buffer, matrix, allow_pickle=False)
            # The metadata first: a matrix on disk always has its seconds beside it.
            with atomic_writer(path.with_suffix(".json")) as stream:
                metadata = {"key": key, "rows": rows, "seconds": seconds}
                stream.write(json.dumps(metadata, allow_nan=False).encode("utf-8"))
            with atomic_writer(path) as stream:
                stream.write(buffer.getvalue())
        return matrix, seconds, True

    def vectors(self, pipeline: Pipeline, model: str) -> tuple[npt.NDArray[np.float32], float]:
        """Normalized embeddings of the pipeline's chunks by `model`, and the seconds encoding took."""
        chunking = pipeline.chunking()
        key = (*chunking, model)
        found = self._vectors.get(key)
        if found is None:
            chunks = self.chunks(pipeline)
            cache_key = content_id(
                "ef.vectors/1", {"corpus": self.fingerprint, "chunking": list(chunking), "model": model}
            )
            matrix, seconds, computed = self._cached_matrix(
                "vectors", cache_key, len(chunks.texts), lambda: self._encode(model, chunks.texts, "encoding chunks")
            )
            self.counts["encoded" if computed else "loaded"][key] += 1
            found = (matrix, seconds)
            self._vectors[key] = found
        return found

    def query_vectors(self, model: str, queries: Sequence[str]) -> tuple[npt.NDArray[np.float32], float]:
        """Normalized embeddings of `queries` by `model`, and the seconds encoding them took."""
        digest = _digest(queries)
        key = (model, digest)
        found = self._queries.get(key)
        if found is None:
            cache_key = content_id("ef.query-vectors/1", {"queries": digest, "model": model})
            matrix, seconds, computed = self._cached_matrix(
                "queries", cache_key, len(queries), lambda: self._encode(model, list(queries), "encoding queries")
            )
            self.counts["queries_encoded" if computed else "loaded"][key] += 1
            found = (matrix, seconds)
            self._queries[key] = found
        return found

    def _dense_search(self, pipeline: Pipeline, queries: Sequence[str], depth: int) -> list[Ranking]:
        from ef.source_manager._topk import top_k

        model = str(pipeline.model)  # a dense or hybrid Pipeline always names its model
        matrix, _ = self.vectors(pipeline, model)
        vectors, _ = self.query_vectors(model, queries)
        out: list[Ranking] = []
        for start in range(0, len(vectors), _QUERY_CHUNK):
            scores = vectors[start : start + _QUERY_CHUNK] @ matrix.T
            out.extend(top_k(row, depth) for row in scores)
        return out

    # -- stages -----------------------------------------------------------------------------
    def first_stage(
        self, pipeline: Pipeline, queries: Sequence[str], depth: int | None = None
    ) -> tuple[list[Ranking], float]:
        """Each query's top `depth` chunks (default the pipeline's first-stage depth) and the
        seconds retrieving them took for all queries (query encoding included, cached or not).

        Computed once per (chunking, first stage, queries) at the deepest depth asked so far;
        a shallower depth is its prefix (rankings are ordered by score, then chunk position).
        """
        want = pipeline.first_stage_depth if depth is None else depth
        key = (pipeline.chunking(), pipeline.first_stage(), _digest(queries))
        found = self._first.get(key)
        if found is None or found[0] < want:
            # The index is built first: its cost is the index's (build seconds), not retrieval latency.
            if pipeline.retriever != "dense":
                self._bm25_model(pipeline)
            extra = 0.0
            if pipeline.model is not None:
                self.vectors(pipeline, pipeline.model)
                # Encoding the queries is part of retrieving: its recorded seconds (the model's
                # loading left out), whether the vectors were encoded now or read from the cache.
                _, extra = self.query_vectors(pipeline.model, queries)
            start = time.perf_counter()
            if pipeline.retriever == "bm25":
                rankings = self._bm25_search(pipeline, queries, want)
            elif pipeline.retriever == "dense":
                rankings = self._dense_search(pipeline, queries, want)
            else:
                # Each list's top fusion_depth, whatever `want` is: the fused list does not depend on it.
                lexical = self._bm25_search(pipeline, queries, pipeline.fusion_depth)
                dense = self._dense_search(pipeline, queries, pipeline.fusion_depth)
                rankings = _fuse(lexical, dense, pipeline.fusion_depth)
                want = max(want, pipeline.fusion_depth)
            seconds = time.perf_counter() - start + extra
            found = (want, rankings, seconds)
            self._first[key] = found
            self.counts["retrieved"][key[:2]] += 1
        cut = pipeline.first_stage_depth if depth is None else depth
        return [(p[:cut], s[:cut]) for p, s in found[1]], found[2]

    def _reranker(self, spec: str) -> Any:
        if spec not in self._rerankers:
            from ef.rerank import make_reranker

            self._rerankers[spec] = make_reranker(spec, device=self.device, batch_size=self.batch_size)
        return self._rerankers[spec]

    def reranked(self, pipeline: Pipeline, queries: Sequence[str]) -> tuple[list[Ranking], float]:
        """The first stage's top `rerank_depth` chunks reordered by the reranker, and its seconds.

        A bi-encoder scores with the chunk vectors of the vector cache (encoded once per chunking
        and model, as for dense retrieval) and the query vectors; its seconds are the scoring's,
        plus the queries' encoding when no dense stage of this pipeline paid for it. Ties keep
        the first stage's order.
        """
        if pipeline.rerank is None:
            raise ValueError(f"pipeline {pipeline.label!r} has no reranker")
        key = (pipeline.chunking(), pipeline.first_stage(), pipeline.rerank, pipeline.rerank_depth, _digest(queries))
        found = self._reranked.get(key)
        if found is None:
            candidates, _ = self.first_stage(pipeline, queries)
            kind, model = parse_rerank(pipeline.rerank)
            start = time.perf_counter()
            out: list[Ranking] = []
            extra = 0.0
            if kind == "bi":
                matrix, _ = self.vectors(pipeline, model)
                vectors, encode_seconds = self.query_vectors(model, queries)
                start = time.perf_counter()  # the lookups above are the index's and the queries' cost
                if pipeline.model != model:
                    extra = encode_seconds
                for (positions, _), vector in zip(candidates, vectors, strict=True):
                    scores = (matrix[positions] @ vector).astype(np.float32)
                    order = np.argsort(-scores, kind="stable")
                    out.append((positions[order], scores[order]))
            else:
                from ef.rerank import rerank

                reranker = self._reranker(pipeline.rerank)
                texts = self.chunks(pipeline).texts
                for (positions, _), query in zip(candidates, queries, strict=True):
                    ordered = rerank(query, [texts[p] for p in positions.tolist()], reranker)
                    out.append((
                        positions[[i for i, _ in ordered]].astype(np.int64),
                        np.array([s for _, s in ordered], dtype=np.float32),
                    ))
            found = (out, time.perf_counter() - start + extra)
            self._reranked[key] = found
            self.counts["reranked"][key[:4]] += 1
        return found

    def index_cost(self, pipeline: Pipeline) -> tuple[int, float]:
        """The bytes of the pipeline's index (BM25 score matrix, dense vectors) and the seconds
        building it took (chunking, tokenizing, indexing, encoding: the encoding's recorded
        time when its vectors came from the disk cache). Builds what is missing."""
        chunks = self.chunks(pipeline)
        size, seconds = 0, chunks.seconds
        if pipeline.retriever != "dense":
            _, _, bm25_bytes, bm25_seconds = self._bm25_model(pipeline)
            size, seconds = size + bm25_bytes, seconds + bm25_seconds
        if pipeline.model is not None:
            matrix, encode_seconds = self.vectors(pipeline, pipeline.model)
            size, seconds = size + int(matrix.nbytes), seconds + encode_seconds
        return size, seconds

    def run(self, pipeline: Pipeline, queries: Sequence[str]) -> StageOutput:
        """Run `pipeline` for `queries`: first stage, reranker, the top k; with what each cost."""
        first, retrieve_seconds = self.first_stage(pipeline, queries)
        rerank_seconds = 0.0
        if pipeline.rerank is not None:
            first, rerank_seconds = self.reranked(pipeline, queries)
        size, build = self.index_cost(pipeline)
        return StageOutput(
            tuple((p[: pipeline.k], s[: pipeline.k]) for p, s in first), retrieve_seconds, rerank_seconds, size, build
        )


class PipelineRetriever:
    """One pipeline over one corpus as a retriever: ``search_many`` returns :class:`~ef.retrieval.SearchHit`\\ s.

    What ``ef eval`` runs when a pipeline flag (``--segment-size``, ``--bm25-k1``, ``--rerank`` ...)
    is given. ``stage_seconds`` adds up the first stage's and the reranker's seconds. A reranked
    pipeline orders its top ``rerank_depth`` hits, a hybrid one fuses ``fusion_depth``: a `limit`
    past that is an error, but one past it exactly (what evaluate_retrieval asks for, to keep its
    deepest cutoff's hits once a query's own document is dropped) gets that many.

    >>> retriever = PipelineRetriever(Pipeline("bm25", k1=0.9, k=1), {"d1": "cats purr", "d2": "dogs bark"})
    >>> [[h.segment.source_id for h in hits] for hits in retriever.search_many(["dogs"], limit=1)]
    [['d2']]
    """

    query_block = None  # evaluate_retrieval: every query at once, scored in memory

    def __init__(self, pipeline: Pipeline, corpus: Mapping[str, str], *, workspace: Workspace | None = None) -> None:
        if not isinstance(pipeline, Pipeline):
            raise TypeError(f"'pipeline' must be an ef.pipeline.Pipeline (got {type(pipeline).__name__})")
        if workspace is not None and not isinstance(workspace, Workspace):
            raise TypeError(f"'workspace' must be a Workspace or None (got {type(workspace).__name__})")
        if workspace is not None:
            workspace.check_corpus(corpus)
        self.pipeline = pipeline
        self.workspace = workspace if workspace is not None else Workspace(corpus)
        self.stage_seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def embedder(self) -> str:
        return self.pipeline.label

    @property
    def n_sources(self) -> int:
        return len(self.workspace.corpus)

    def __len__(self) -> int:
        return len(self.workspace.chunks(self.pipeline).segments)

    def search_many(
        self, queries: Sequence[str], *, limit: int = 10, show_progress: bool = False
    ) -> list[list[SearchHit]]:
        p = self.pipeline
        if p.rerank is not None or p.retriever == "hybrid":
            depth = p.rerank_depth if p.rerank is not None else p.fusion_depth
            limit = depth if limit == depth + 1 else limit  # deeper: Pipeline's error names the depth
        pipeline = p if limit == p.k else p.replace(k=limit)
        output = self.workspace.run(pipeline, list(queries))
        self.stage_seconds["first stage"] = self.stage_seconds.get("first stage", 0.0) + output.retrieve_seconds
        if pipeline.rerank is not None:
            self.stage_seconds["rerank"] = self.stage_seconds.get("rerank", 0.0) + output.rerank_seconds
        segments = self.workspace.chunks(pipeline).segments
        return [
            SearchHit.ranked([segments[p] for p in positions.tolist()], scores.tolist())
            for positions, scores in output.rankings
        ]

    def retrieve(self, query: str, limit: int = 10) -> list[SearchHit]:
        """The one retriever protocol (:class:`ef.retrieval.Retriever`): a pipeline runs as it is in
        :func:`fastrag.benchmark.run_benchmark`, with the harness's latency metrics; calls from its
        threads run one at a time (the workspace's caches are shared)."""
        with self._lock:
            return self.search_many([query], limit=limit)[0]

    def build(self) -> None:
        """Build the index now (chunks, BM25, vectors, a bi-encoder reranker's vectors), not at the first search."""
        self.workspace.index_cost(self.pipeline)
        if self.pipeline.rerank is not None:
            kind, model = parse_rerank(self.pipeline.rerank)
            if kind == "bi":
                self.workspace.vectors(self.pipeline, model)
            else:
                self.workspace._reranker(self.pipeline.rerank)
