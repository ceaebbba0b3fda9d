"""Approximate nearest-neighbour search over a dense index, through FAISS (the ``ann`` extra).

Two index types, both over inner product (= cosine: ef's embeddings are normalized):

- ``"hnsw"``: ``faiss.IndexHNSWFlat``, a graph over the full vectors. Parameters ``M`` (links
  per node, default 32), ``ef_construction`` (build-time beam, default 128) and ``ef_search``
  (query-time beam, default 128; raised to the number of hits asked for when that is larger).
- ``"ivf"``: ``faiss.IndexIVFFlat``, the vectors bucketed by k-means. Parameters ``nlist``
  (buckets; default about 4·√n, and at most n/39 so k-means has the 39 points per centroid
  FAISS asks for), ``nprobe`` (buckets searched per query; default min(nlist, 64)) and
  ``train_size`` (vectors k-means trains on, drawn with a fixed seed; default min(n, 64·nlist)).

The resolved parameters go to the index manifest, and the FAISS index is saved beside the
embeddings as ``ann.faiss``; exact search stays available for :func:`recall_against_exact`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ef._validate import check_choice, check_instance, check_positive_int
from ef.source_manager._topk import Ranking

__all__ = [
    "ANN_FILE",
    "ANN_KINDS",
    "INSTALL_HINT",
    "QUERY_PARAMS",
    "AnnIndex",
    "AnnSpec",
    "recall_against_exact",
    "require_faiss",
]

INSTALL_HINT = "pip install 'ef-eval[ann]'"
ANN_FILE = "ann.faiss"
ANN_KINDS = ("none", "hnsw", "ivf")
_DEFAULTS: dict[str, dict[str, int | None]] = {
    "hnsw": {"M": 32, "ef_construction": 128, "ef_search": 128},
    "ivf": {"nlist": None, "nprobe": None, "train_size": None},  # None: derived from the corpus size
}
_ADD_CHUNK = 65_536  # rows handed to FAISS at a time, so a memory-mapped shard is never read whole
_SEED = 1234


def require_faiss() -> Any:
    try:
        import faiss
    except ImportError as error:
        raise ImportError(
            f"approximate search ('ann' = 'hnsw' or 'ivf') needs faiss, which is not installed ({error}): "
            f"{INSTALL_HINT}"
        ) from error
    return faiss


@dataclass(frozen=True, slots=True)
class AnnSpec:
    """Which ANN index to build and the parameters the user set (the rest take their defaults).

    >>> AnnSpec("hnsw", {"M": 16}).resolve(1000)
    {'M': 16, 'ef_construction': 128, 'ef_search': 128}
    >>> AnnSpec("ivf").resolve(100_000)
    {'nlist': 1265, 'nprobe': 64, 'train_size': 80960}
    >>> AnnSpec("hnsw", {"m": 16})
    Traceback (most recent call last):
    ...
    ValueError: 'ann_params' for 'hnsw' takes M, ef_construction, ef_search (got 'm')
    """

    kind: str
    params: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice(self.kind, "ann", ANN_KINDS)
        if self.kind not in _DEFAULTS:  # 'none' names no index to build
            raise ValueError(f"'ann' must be one of {', '.join(map(repr, _DEFAULTS))} (got {self.kind!r})")
        check_instance(self.params, "ann_params", Mapping, what="a mapping")
        for name, value in self.params.items():
            if name not in _DEFAULTS[self.kind]:
                raise ValueError(
                    f"'ann_params' for {self.kind!r} takes {', '.join(_DEFAULTS[self.kind])} (got {name!r})"
                )
            check_positive_int(value, f"'ann_params'[{name!r}]")

    def resolve(self, n: int) -> dict[str, int]:
        """Every parameter for an index over `n` vectors: the user's where given, else the default."""
        if self.kind == "hnsw":
            return {name: int(self.params.get(name, default or 0)) for name, default in _DEFAULTS["hnsw"].items()}
        nlist = int(self.params.get("nlist", max(1, min(round(4 * math.sqrt(n)), n // 39))))
        nlist = min(nlist, max(n, 1))  # k-means cannot make more centroids than points
        nprobe = int(self.params.get("nprobe", min(nlist, 64)))
        train_size = int(self.params.get("train_size", min(n, 64 * nlist)))
        return {"nlist": nlist, "nprobe": min(nprobe, nlist), "train_size": min(max(train_size, nlist), n)}


QUERY_PARAMS = {"hnsw": ("ef_search",), "ivf": ("nprobe",)}  # read at search time; the rest shape the build


class AnnIndex:
    """A FAISS index over the rows of a dense index (row number = segment position)."""

    def __init__(self, kind: str, params: Mapping[str, int], faiss_index: Any) -> None:
        self.kind = kind
        self.params = dict(params)
        self._index = faiss_index

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @classmethod
    def build(cls, spec: AnnSpec, parts: Sequence[npt.NDArray[np.float32]]) -> AnnIndex:
        """Index the rows of `parts` (one matrix, or the shards of one, in order)."""
        faiss = require_faiss()
        n = sum(len(p) for p in parts)
        if n == 0:
            raise ValueError("cannot build an ANN index over an empty corpus")
        dim = int(parts[0].shape[1])
        params = spec.resolve(n)
        if spec.kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, params["M"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = params["ef_construction"]
        else:
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quantizer, dim, params["nlist"], faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = _SEED
            sample = np.sort(np.random.default_rng(_SEED).choice(n, size=params["train_size"], replace=False))
            index.train(_rows(parts, sample))
        for part in parts:
            for start in range(0, len(part), _ADD_CHUNK):
                index.add(np.ascontiguousarray(part[start : start + _ADD_CHUNK], dtype=np.float32))
        return cls(spec.kind, params, index)

    def set_query_params(self, params: Mapping[str, int]) -> None:
        """Change the parameters read at search time (``ef_search``, ``nprobe``) of this index.

        A build parameter is a ``ValueError``: changing it takes a new index. ``nprobe`` is kept
        at most ``nlist``, as a build resolves it.
        """
        for name, value in params.items():
            if name not in QUERY_PARAMS[self.kind]:
                raise ValueError(
                    f"{name} is a build parameter of {self.kind}; only {', '.join(QUERY_PARAMS[self.kind])} "
                    "can change on a built index"
                )
            check_positive_int(value, f"'ann_params'[{name!r}]")
            self.params[name] = min(int(value), self.params["nlist"]) if name == "nprobe" else int(value)

    def search(self, vectors: npt.NDArray[np.float32], limit: int) -> list[Ranking]:
        """The approximate `limit` best rows per query, by score descending then row ascending."""
        faiss_index = self._index
        if self.kind == "hnsw":
            faiss_index.hnsw.efSearch = max(self.params["ef_search"], limit)
        else:
            faiss_index.nprobe = self.params["nprobe"]
        k = min(limit, len(self))
        scores, rows = faiss_index.search(np.ascontiguousarray(vectors, dtype=np.float32), k)
        out: list[Ranking] = []
        for row_scores, row_ids in zip(scores, rows, strict=True):
            found = row_ids >= 0  # FAISS pads with -1 when it finds fewer than k
            ids, values = row_ids[found].astype(np.int64), row_scores[found].astype(np.float32)
            order = np.lexsort((ids, -values))  # the same tie order as exact search
            out.append((ids[order], values[order]))
        return out

    def info(self) -> dict[str, Any]:
        faiss = require_faiss()
        return {"kind": self.kind, "params": dict(self.params), "file": ANN_FILE, "faiss_version": faiss.__version__}

    def save(self, directory: Path) -> None:
        require_faiss().write_index(self._index, str(directory / ANN_FILE))

    @classmethod
    def load(cls, directory: Path, meta: Mapping[str, Any], *, n_rows: int, dimension: int) -> AnnIndex:
        """Read the index :meth:`save` wrote, checking it against the manifest's `meta`."""
        from ef.source_manager._index import DAMAGED

        path = directory / ANN_FILE
        kind, params = meta.get("kind"), meta.get("params")
        if kind not in _DEFAULTS or not isinstance(params, dict):
            raise ValueError(f"{directory / 'manifest.json'}: 'index.dense.ann' is not an ANN description; {DAMAGED}")
        try:  # search() reads every parameter of its kind: each must be there, a positive integer
            AnnSpec(str(kind), params)
            if set(params) != set(_DEFAULTS[str(kind)]):
                raise ValueError(f"expected {', '.join(_DEFAULTS[str(kind)])}")
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"{directory / 'manifest.json'}: 'index.dense.ann.params' ({error}); {DAMAGED}"
            ) from None
        faiss = require_faiss()
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as error:
            raise ValueError(f"{path}: unreadable FAISS index ({error}); {DAMAGED}") from error
        # The kind decides which attributes search() sets (efSearch, nprobe): a file of another
        # kind would fail there with an AttributeError, or search with the wrong metric.
        expected = {"hnsw": faiss.IndexHNSWFlat, "ivf": faiss.IndexIVFFlat}[kind]
        if type(index) is not expected:
            raise ValueError(f"{path}: a FAISS {type(index).__name__}, but the manifest says {kind}; {DAMAGED}")
        if index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise ValueError(f"{path}: a FAISS index that does not rank by inner product; {DAMAGED}")
        if index.ntotal != n_rows or index.d != dimension:
            raise ValueError(
                f"{path}: holds {index.ntotal} vectors of dimension {index.d}, the manifest {n_rows} of "
                f"dimension {dimension}; {DAMAGED}"
            )
        if kind == "ivf" and index.nlist != params.get("nlist"):
            raise ValueError(f"{path}: has {index.nlist} IVF lists, the manifest {params.get('nlist')!r}; {DAMAGED}")
        return cls(str(kind), params, index)


def _rows(parts: Sequence[npt.NDArray[np.float32]], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """The given (sorted) global rows of the concatenation of `parts`, read part by part."""
    out = []
    offset = 0
    for part in parts:
        inside = rows[(rows >= offset) & (rows < offset + len(part))] - offset
        out.append(np.asarray(part[inside], dtype=np.float32))
        offset += len(part)
    return np.ascontiguousarray(np.concatenate(out))


def recall_against_exact(approximate: Sequence[Ranking], exact: Sequence[Ranking], k: int) -> float:
    """Mean over queries of |ANN top-k ∩ exact top-k| / |exact top-k|: what the approximation misses.

    >>> exact = [(np.array([1, 2, 3]), np.zeros(3, dtype=np.float32))]
    >>> recall_against_exact([(np.array([1, 3, 9]), np.zeros(3, dtype=np.float32))], exact, 3)
    0.6666666666666666
    """
    if len(approximate) != len(exact) or not exact:
        raise ValueError(f"need the same, non-zero number of rankings (got {len(approximate)} and {len(exact)})")
    total = 0.0
    for (ann_ids, _), (exact_ids, _) in zip(approximate, exact, strict=True):
        truth = set(exact_ids[:k].tolist())
        total += len(truth & set(ann_ids[:k].tolist())) / len(truth) if truth else 1.0
    return total / len(exact)
