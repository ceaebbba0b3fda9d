"""Embedder names (``"bm25"``, ``"st:<model>"``, ``"hybrid:st:<model>"``) and the indexes they build."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ef._console import Progress
from ef._validate import check_choice
from ef.source_manager._index import DAMAGED, Index
from ef.source_manager._topk import Ranking

__all__ = ["DEFAULT_DENSE_MODEL", "RRF_K", "EmbedderSpec", "HybridIndex", "parse_embedder"]

DEFAULT_DENSE_MODEL = "all-MiniLM-L6-v2"
RRF_K = 60  # Cormack et al.'s constant for reciprocal rank fusion
RRF_DEPTH = 100  # each fused list contributes at least this many candidates
_FORMS = "'bm25', 'st:<model name or directory>' or 'hybrid:st:<model name or directory>'"


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    """A parsed embedder name: ``kind`` is ``"bm25"``, ``"st"`` or ``"hybrid"``; ``model`` the dense model.

    >>> str(parse_embedder("hybrid"))
    'hybrid:st:all-MiniLM-L6-v2'
    """

    kind: str
    model: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.kind, "kind", ("bm25", "st", "hybrid"))
        if (self.kind == "bm25") != (self.model is None) or self.model == "":
            raise ValueError(f"'model' must be None for bm25 and a model name otherwise (got {self.model!r})")

    def __str__(self) -> str:
        if self.kind == "bm25":
            return "bm25"
        if self.kind == "st":
            return f"st:{self.model}"
        return f"hybrid:st:{self.model}"

    def new_index(self, *, device: str | None, batch_size: int, engine: Any = None, ann: Any = None) -> Index:
        """A new, empty index; `engine` (a ``RayEngine``) and `ann` (an ``AnnSpec``) shape its dense part."""
        from ef.source_manager._bm25 import Bm25Index
        from ef.source_manager._dense import DenseIndex

        if self.kind == "bm25" or self.model is None:
            return Bm25Index()
        dense = DenseIndex(self.model, device=device, batch_size=batch_size, engine=engine, ann=ann)
        return dense if self.kind == "st" else HybridIndex(Bm25Index(), dense)

    def index_info(self, index: Index) -> dict[str, Any]:
        """What the manifest records about `index`, beyond its embedder name."""
        from ef.source_manager._bm25 import BM25_PARAMS
        from ef.source_manager._dense import DenseIndex

        info: dict[str, Any] = {}
        if self.kind in ("bm25", "hybrid"):
            info["bm25"] = dict(BM25_PARAMS)
        dense = index.dense if isinstance(index, HybridIndex) else index
        if isinstance(dense, DenseIndex):
            info["dense"] = dense.info()
        if isinstance(index, HybridIndex):
            info["fusion"] = {"method": "reciprocal rank fusion", "k": RRF_K, "depth": RRF_DEPTH}
        return info

    def load_index(
        self,
        directory: Path,
        info: dict[str, Any],
        *,
        n_rows: int,
        texts: Callable[[], Sequence[str]],
        device: str | None,
        batch_size: int,
        engine: Any = None,
    ) -> Index:
        from ef.source_manager._bm25 import Bm25Index
        from ef.source_manager._dense import DenseIndex

        lexical = Bm25Index.load(directory, texts=texts) if self.kind != "st" else None
        dense = None
        if self.kind != "bm25":
            meta = info.get("dense")
            if not isinstance(meta, dict) or not isinstance(meta.get("dimension"), int):
                raise ValueError(f"{directory / 'manifest.json'}: 'index.dense.dimension' is missing; {DAMAGED}")
            dense = DenseIndex.load(
                directory, model=str(self.model), dimension=meta["dimension"], n_rows=n_rows,
                device=device, batch_size=batch_size, meta=meta, engine=engine,
            )
        if lexical is None:
            return dense  # type: ignore[return-value]  # kind 'st' always loads a dense index
        return lexical if dense is None else HybridIndex(lexical, dense)


def parse_embedder(embedder: str) -> EmbedderSpec:
    """Parse an embedder name; ``"hybrid"`` alone fuses bm25 with all-MiniLM-L6-v2.

    Raises
    ------
    ValueError
        For a name that is none of the accepted forms.

    Examples
    --------
    >>> parse_embedder("st:all-MiniLM-L6-v2")
    EmbedderSpec(kind='st', model='all-MiniLM-L6-v2')
    >>> parse_embedder("tfidf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'embedder' must be 'bm25', 'st:<model name or directory>' or ... (got 'tfidf')
    """
    if not isinstance(embedder, str):
        raise TypeError(f"'embedder' must be a str such as {_FORMS} (got {type(embedder).__name__})")
    if embedder == "bm25":
        return EmbedderSpec("bm25")
    if embedder == "hybrid":
        return EmbedderSpec("hybrid", DEFAULT_DENSE_MODEL)
    for prefix, kind in (("st:", "st"), ("hybrid:st:", "hybrid")):
        if embedder.startswith(prefix) and embedder[len(prefix) :].strip():
            return EmbedderSpec(kind, embedder[len(prefix) :])
    raise ValueError(f"'embedder' must be {_FORMS} (got {embedder!r})")


class HybridIndex:
    """Reciprocal rank fusion of a lexical and a dense index over the same segments.

    A segment scores ``sum(1 / (RRF_K + rank))`` over the lists it appears in (rank from 1), each
    list holding the index's top ``max(limit, RRF_DEPTH)``; ties go to the earlier segment. The
    fusion is :func:`ef.fusion.methods.fuse_rankings` (method ``"rrf"``), the one behind ``ef fuse``.
    """

    def __init__(self, lexical: Index, dense: Any) -> None:
        self.lexical = lexical
        self.dense = dense

    def __len__(self) -> int:
        return len(self.lexical)

    def add(self, texts: Sequence[str], *, show_progress: bool) -> None:
        self.lexical.add(texts, show_progress=show_progress)
        self.dense.add(texts, show_progress=show_progress)

    def build(self) -> None:
        self.lexical.build()
        self.dense.build()

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[Ranking]:
        from ef.fusion.methods import fuse_rankings

        depth = max(limit, RRF_DEPTH)
        lexical = self.lexical.search_many(queries, limit=depth, show_progress=show_progress)
        dense = self.dense.search_many(queries, limit=depth, show_progress=show_progress)
        with Progress(len(queries), "fusing", enabled=show_progress) as bar:
            out = fuse_rankings([[p for p, _ in lexical], [p for p, _ in dense]], limit=limit, params={"k": RRF_K})
            bar.update(len(queries))
        return out

    def save(self, directory: Path) -> None:
        self.lexical.save(directory)
        self.dense.save(directory)


def fuse(rankings: Sequence[npt.NDArray[np.int64]], limit: int) -> Ranking:
    """Reciprocal rank fusion (k = ``RRF_K``) of one query's rankings of positions, by :mod:`ef.fusion`.

    >>> fuse([np.array([3, 1]), np.array([1, 2])], 3)[0]
    array([1, 3, 2])
    """
    from ef.fusion.methods import fuse_rankings

    return fuse_rankings([[ranking] for ranking in rankings], limit=limit, params={"k": RRF_K})[0]
