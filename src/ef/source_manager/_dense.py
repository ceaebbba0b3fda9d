"""The dense index: sentence-transformers embeddings, normalized, exact inner-product search."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ef._console import Progress
from ef.source_manager._index import DAMAGED
from ef.source_manager._models import dimension, encode, load_model, require_sentence_transformers, resolve_model
from ef.source_manager._topk import Ranking, merge_top_k, top_k

if TYPE_CHECKING:
    from ef.source_manager._ann import AnnIndex, AnnSpec
    from ef.source_manager._ray import RayEngine

__all__ = ["DenseIndex", "encode", "load_model", "resolve_model"]

EMBEDDINGS_FILE = "embeddings.npy"
SHARDS_DIR = "embeddings"  # a sharded index (built on Ray) keeps embeddings/shard-000000.npy, ...
_QUERY_CHUNK = 1024  # queries scored per matrix product, bounding memory to chunk x corpus floats


class DenseIndex:
    """Embeddings of every segment; a query scores by inner product (= cosine, all normalized).

    With a :class:`~ef.source_manager._ray.RayEngine`, encoding and exact search run on Ray and
    the embeddings are kept as memory-mapped shards; with an
    :class:`~ef.source_manager._ann.AnnSpec`, :meth:`build` adds a FAISS index that answers
    searches approximately (:meth:`exact_search_many` still searches exactly).
    """

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        batch_size: int = 32,
        engine: RayEngine | None = None,
        ann: AnnSpec | None = None,
    ) -> None:
        require_sentence_transformers()
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.engine = engine
        self.ann_spec = ann if ann is not None and ann.kind != "none" else None
        self.ann: AnnIndex | None = None
        self.build_info: dict[str, Any] | None = None  # None: encoded locally, by this process
        self.sharded = False
        self._parts: list[npt.NDArray[np.float32]] = []
        # The last batch of query vectors: ef eval's ANN recall re-searches a sample of the queries
        # it has just retrieved for, and on Ray every encode starts a pool of actors.
        self._last_queries: tuple[dict[str, int], npt.NDArray[np.float32]] | None = None

    @property
    def model(self) -> Any:
        return load_model(self.model_name, device=self.device)

    @property
    def embeddings(self) -> npt.NDArray[np.float32]:
        if len(self._parts) > 1:
            self._parts = [np.concatenate(self._parts)]
        if not self._parts:
            return np.empty((0, dimension(self.model)), dtype=np.float32)
        return self._parts[0]

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def add(self, texts: Sequence[str], *, show_progress: bool) -> None:
        if not texts:
            return
        if self.engine is None:
            self._parts.append(encode(self.model, texts, batch_size=self.batch_size, show_progress=show_progress))
            return
        from ef.source_manager._ray import encode_shards, require_ray

        ray = require_ray()
        if self._parts:
            raise ValueError("a dense index encoded on Ray is built in one go: ingest the whole corpus at once")
        directory = self.engine.shard_dir
        if directory is None:
            directory = Path(tempfile.mkdtemp(prefix="ef-shards-"))
            # The shards stay mapped after the directory goes (POSIX); save() copies them out first.
            weakref.finalize(self, shutil.rmtree, directory, True)
        shards, reused = encode_shards(
            texts, engine=self.engine, directory=Path(directory), model=self.model_name, device=self.device,
            batch_size=self.batch_size, show_progress=show_progress,
        )
        self._parts = list(shards)
        self.sharded = True
        self.build_info = {
            "engine": "ray", "ray_version": ray.__version__, "workers": self.engine.workers,
            "batch_size": self.batch_size, "device": self.device, "shard_rows": self.engine.shard_rows,
            "shards_resumed": reused,
        }

    def build(self) -> None:
        """Build the ANN index when one is asked for; exact search needs nothing beyond the embeddings."""
        if self.ann_spec is not None and len(self) and (self.ann is None or len(self.ann) != len(self)):
            from ef.source_manager._ann import AnnIndex

            self.ann = AnnIndex.build(self.ann_spec, self._parts)

    def encode_queries(self, queries: Sequence[str], *, show_progress: bool) -> npt.NDArray[np.float32]:
        """Query embeddings, on Ray when the index has an engine (reused when all were just encoded)."""
        if self._last_queries is not None and all(q in self._last_queries[0] for q in queries):
            known, matrix = self._last_queries
            return matrix[[known[q] for q in queries]]
        if self.engine is not None:
            from ef.source_manager._ray import encode_on_ray

            vectors = encode_on_ray(
                queries, engine=self.engine, model=self.model_name, device=self.device,
                batch_size=self.batch_size, show_progress=show_progress,
            )
        else:
            vectors = encode(
                self.model, queries, batch_size=self.batch_size, show_progress=show_progress,
                desc="encoding queries",
            )
        width = int(self._parts[0].shape[1])
        if vectors.shape[1] != width:
            raise ValueError(
                f"model {self.model_name!r} makes {vectors.shape[1]}-dimensional embeddings but the "
                f"index holds {width}-dimensional ones"
            )
        self._last_queries = ({q: i for i, q in enumerate(queries)}, vectors)
        return vectors

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[Ranking]:
        if not len(self) or not queries:
            return [(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)) for _ in queries]
        self.build()  # a SourceManager that grew since the last search
        vectors = self.encode_queries(queries, show_progress=show_progress)
        if self.ann is not None:
            return self.ann.search(vectors, limit)
        return self.exact_search(vectors, limit=limit, show_progress=show_progress)

    def exact_search(self, vectors: npt.NDArray[np.float32], *, limit: int, show_progress: bool) -> list[Ranking]:
        """The exact top `limit` rows per query vector: on Ray with an engine, else here."""
        if self.engine is not None:
            from ef.source_manager._ray import search_on_ray

            return search_on_ray(self._parts, vectors, limit=limit, engine=self.engine, show_progress=show_progress)
        # Shards on disk are scored one at a time and merged, never concatenated in memory.
        parts = self._parts if self.sharded else [self.embeddings]
        out: list[Ranking] = []
        with Progress(len(vectors), "retrieving (dense)", enabled=show_progress) as bar:
            for start in range(0, len(vectors), _QUERY_CHUNK):
                chunk = vectors[start : start + _QUERY_CHUNK]
                per_part: list[list[Ranking]] = []
                offset = 0
                for part in parts:
                    scores = chunk @ part.T
                    per_part.append([(p + offset, s) for p, s in (top_k(row, limit) for row in scores)])
                    offset += len(part)
                if len(per_part) == 1:
                    out.extend(per_part[0])
                else:
                    out.extend(merge_top_k([r[q] for r in per_part], limit) for q in range(len(chunk)))
                bar.update(len(chunk))
        return out

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"model": self.model_name, "dimension": int(self._parts[0].shape[1]), "normalized": True}
        if self.build_info is not None:
            info["build"] = dict(self.build_info)
        if self.sharded:
            info["shards"] = [len(part) for part in self._parts]
        if self.ann is not None:
            info["ann"] = self.ann.info()
        return info

    def save(self, directory: Path) -> None:
        if self.sharded:
            from ef.source_manager._ray import shard_path

            (directory / SHARDS_DIR).mkdir()
            for number, part in enumerate(self._parts):
                target = shard_path(directory / SHARDS_DIR, number)
                source = getattr(part, "filename", None)
                if isinstance(part, np.memmap) and source and Path(source).is_file():
                    try:
                        os.link(source, target)  # the shard is immutable once written: share it
                    except OSError:  # another filesystem, or no hard links there
                        shutil.copyfile(source, target)
                else:
                    np.save(target, np.ascontiguousarray(part), allow_pickle=False)
        else:
            np.save(directory / EMBEDDINGS_FILE, np.ascontiguousarray(self.embeddings), allow_pickle=False)
        if self.ann is not None:
            self.ann.save(directory)

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model: str,
        dimension: int,
        n_rows: int,
        device: str | None,
        batch_size: int,
        meta: Mapping[str, Any] | None = None,
        engine: RayEngine | None = None,
    ) -> DenseIndex:
        """Read the embeddings :meth:`save` wrote, memory-mapped; the model loads at first query.

        `meta` is the manifest's ``index.dense``: it lists the shards of a sharded index and
        describes its ANN index, if any.
        """
        meta = meta or {}
        index = cls(model, device=device, batch_size=batch_size, engine=engine)
        shards = meta.get("shards")
        if shards is None:
            index._parts = [_load_matrix(directory / EMBEDDINGS_FILE, n_rows, dimension)]
        else:
            if not isinstance(shards, list) or not all(isinstance(r, int) and r > 0 for r in shards) \
                    or sum(shards) != n_rows:
                raise ValueError(
                    f"{directory / 'manifest.json'}: 'index.dense.shards' must list positive row counts "
                    f"adding up to {n_rows} (got {shards!r:.80}); {DAMAGED}"
                )
            from ef.source_manager._ray import shard_path

            index._parts = [
                _load_matrix(shard_path(directory / SHARDS_DIR, number), rows, dimension)
                for number, rows in enumerate(shards)
            ]
            index.sharded = True
        build = meta.get("build")
        index.build_info = dict(build) if isinstance(build, dict) else None
        ann = meta.get("ann")
        if ann is not None:
            from ef.source_manager._ann import AnnIndex, AnnSpec

            if not isinstance(ann, dict):
                raise ValueError(f"{directory / 'manifest.json'}: 'index.dense.ann' must be an object; {DAMAGED}")
            index.ann = AnnIndex.load(directory, ann, n_rows=n_rows, dimension=dimension)
            index.ann_spec = AnnSpec(index.ann.kind, index.ann.params)
        return index


def _load_matrix(path: Path, n_rows: int, dimension: int) -> npt.NDArray[np.float32]:
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as error:
        raise ValueError(f"{path}: unreadable embeddings ({error}); {DAMAGED}") from error
    if matrix.dtype != np.float32 or matrix.shape != (n_rows, dimension):
        raise ValueError(
            f"{path}: expected a float32 matrix of shape ({n_rows}, {dimension}), found "
            f"{matrix.dtype} {matrix.shape}; {DAMAGED}"
        )
    # Checked in blocks (the file stays memory-mapped): a NaN row would surface only as a NaN
    # score at search time, far from the file that holds it.
    block = max(1, (1 << 24) // max(dimension, 1))
    for start in range(0, n_rows, block):
        if not np.isfinite(matrix[start : start + block]).all():
            raise ValueError(f"{path}: an embedding holds NaN or infinity; {DAMAGED}")
    return matrix  # type: ignore[no-any-return]
