"""Dense encoding and exact batch retrieval on a Ray cluster (the ``ray`` extra).

Encoding streams the segment texts through Ray Data: ``map_batches`` over a pool of actors, each
of which loads the model once, on a CPU or a GPU. The driver writes the embeddings it gets back
as shards, ``shard-000000.npy`` …, one per ``shard_rows`` segments, each written atomically into
a shard directory; a build that is interrupted (Ctrl-C, a lost driver, a failed node) and run
again with the same directory encodes only the shards that are missing. Actors are restarted
and their batches retried when a worker dies, so losing a worker slows a job down, no more.

Retrieval scores every shard in a Ray task of its own (each task keeps its shard's top ``limit``
per query) and merges those per-shard rankings on the driver with a heap
(:func:`~ef.source_manager._topk.merge_top_k`): the result is exactly the local exact search's.
:func:`~ef.evaluation.evaluate_retrieval` asks for ``RayEngine.query_block`` queries at a time and
streams each block's rankings to a run file that it scores window by window.

Ray is started with its usage statistics and its dashboard off, and a cluster started here binds
to 127.0.0.1 only: nothing leaves the machine unless ``address`` names a remote cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ef._console import Progress
from ef._validate import check_non_empty_str, check_positive_int
from ef.io._atomic import atomic_writer
from ef.source_manager._topk import Ranking, merge_top_k, top_k

__all__ = [
    "DEFAULT_QUERY_BLOCK",
    "DEFAULT_SHARD_ROWS",
    "INSTALL_HINT",
    "RayEngine",
    "arrow_blocks",
    "encode_on_ray",
    "encode_shards",
    "make_engine",
    "ray_session",
    "require_ray",
    "search_on_ray",
    "shard_path",
]

INSTALL_HINT = "pip install 'ef-eval[ray]'"
DEFAULT_SHARD_ROWS = 50_000  # 73 MiB of 384-d float32 per shard: small enough to redo, few enough to list
SHARD_STATE = "shards.json"
# Queries evaluate_retrieval retrieves at a time (and writes to its run file, then lets go): every
# block starts a pool of encoding actors, and its per-shard rankings (shards x block x limit) are
# what the driver holds at the most.
DEFAULT_QUERY_BLOCK = 10_000
_MAP_BATCHES_PER_ENCODE = 4  # rows per actor call = 4 model batches: fine-grained retries and progress
_QUERY_CHUNK = 1024


def require_ray() -> Any:
    try:
        import ray
        import ray.data  # the 'data' part of ray[data] is what ef uses
    except ImportError as error:
        raise ImportError(
            f"engine='ray' needs Ray Data, which is not installed ({error}): {INSTALL_HINT}"
        ) from error
    return ray


@dataclass(frozen=True, slots=True)
class RayEngine:
    """Where and how a dense index encodes and searches on Ray.

    Parameters
    ----------
    address
        The Ray cluster to join (``"127.0.0.1:6379"``, ``"ray://host:10001"``); ``None`` joins the
        cluster ``ray.init`` finds (``RAY_ADDRESS``), or starts a local one bound to 127.0.0.1.
    workers
        Encoding actors, one model each (``None``: one per CPU of the cluster, or per GPU when
        the device is a GPU).
    shard_dir
        Where shards are written and resumed from (``None``: a temporary directory).
    shard_rows
        Segments per shard.
    query_block
        Queries :func:`~ef.evaluation.evaluate_retrieval` retrieves at a time, streaming each
        block's rankings to a run file that is then scored (``SearchableCorpus.query_block``).
    """

    address: str | None = None
    workers: int | None = None
    shard_dir: Path | None = None
    shard_rows: int = DEFAULT_SHARD_ROWS
    query_block: int = DEFAULT_QUERY_BLOCK

    def __post_init__(self) -> None:
        if self.workers is not None:
            object.__setattr__(
                self, "workers", check_positive_int(self.workers, "workers", what="a positive integer or None")
            )
        object.__setattr__(self, "shard_rows", check_positive_int(self.shard_rows, "shard_rows"))
        object.__setattr__(self, "query_block", check_positive_int(self.query_block, "query_block"))
        if self.address is not None:
            # blank is as empty: "  " names no cluster
            check_non_empty_str(self.address.strip() if isinstance(self.address, str) else self.address,
                                "ray_address", what="a non-empty str or None")


@contextlib.contextmanager
def ray_session(address: str | None, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, initialised for the duration (and shut down after, when this call started it).

    Usage statistics are switched off before Ray starts, a local cluster starts no dashboard
    process (:func:`_no_api_server`: it would probe the cloud metadata services) and listens on
    127.0.0.1 only, and the notices Ray's driver relays go to stderr
    (:func:`_notices_to_stderr`). Inside an existing session it changes nothing.
    """
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # read by every Ray process this one starts
    starting = address is None and not os.environ.get("RAY_ADDRESS")
    if starting or _is_loopback(address or os.environ.get("RAY_ADDRESS", "")):
        # Ray swaps 127.0.0.1 for the address of the interface that routes to the internet (and binds
        # its servers there) unless clusters are "not supported": the switch meant for macOS and
        # Windows keeps a one-machine cluster on loopback.
        os.environ[_LOOPBACK_SWITCH] = "0"
    ray = require_ray()
    if os.environ.get(_LOOPBACK_SWITCH) == "0":
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False  # read at import; Ray may have been imported before
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.WARNING,
        "log_to_driver": False,  # worker chatter (model loading) stays in Ray's log files
    }
    if starting:
        options.update(num_cpus=num_cpus, _node_ip_address="127.0.0.1")
    with _notices_to_stderr():
        try:
            with _no_api_server() if starting else contextlib.nullcontext():
                ray.init(address=address, **options)
        except ConnectionError as error:
            raise ConnectionError(f"cannot reach the Ray cluster at {address!r} ({error})") from error
        try:
            yield ray
        finally:
            ray.shutdown()


@contextlib.contextmanager
def _no_api_server() -> Iterator[None]:
    """While ``ray.init`` starts a local cluster: no dashboard (API server) process at all.

    ``include_dashboard=False`` still starts Ray's dashboard process, loading its usage-stats
    module only, whose first act (``UsageStatsHead.run``: ``get_cluster_config_to_report``) is to
    probe the cloud metadata services — ``169.254.169.254`` and a DNS lookup of
    ``metadata.google.internal`` — before it reads ``RAY_USAGE_STATS_ENABLED``; Ray 2.x reads no
    setting or environment variable that stops it. Not starting the process is what Ray itself
    does when the dashboard fails to start (no URL, no process); ef uses none of its API.
    """
    from ray._private import node

    original = getattr(node.Node, "start_api_server", None)
    if original is None:  # pragma: no cover - a Ray that starts its dashboard some other way
        yield
        return

    def skip(self: Any, *, include_dashboard: bool | None, raise_on_failure: bool) -> None:
        return None

    node.Node.start_api_server = skip  # type: ignore[method-assign]
    try:
        yield
    finally:
        node.Node.start_api_server = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _notices_to_stderr() -> Iterator[None]:
    """Everything Ray's driver relays goes to stderr, never into ef's own output on stdout.

    ``log_to_driver=False`` stops the workers' output only: the driver's error listener thread
    still prints the cluster's notices ("(raylet) A worker died or was killed ...") through
    ``ray._private.worker.print_to_stdstream``, which picks stdout for anything not flagged as an
    error, and flushes what it held back to stdout at shutdown. Flagged as errors, they take the
    stderr path (its own de-duplication and flush included).
    """
    from ray._private import worker

    relay = getattr(worker, "print_to_stdstream", None)
    if relay is None:  # pragma: no cover - a Ray without it prints its notices some other way
        yield
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        relay({**data, "is_err": True}, ignore_prefix)

    worker.print_to_stdstream = to_stderr
    try:
        yield
    finally:
        worker.print_to_stdstream = relay


_LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _is_loopback(address: str) -> bool:
    """Whether a ``host:port`` Ray address names this machine's loopback interface.

    >>> _is_loopback("127.0.0.1:6379"), _is_loopback("localhost:6379"), _is_loopback("10.0.0.5:6379")
    (True, True, False)
    """
    host = address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def _quiet_data() -> None:
    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False  # ef draws one bar for the whole job
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def _default_workers(ray: Any, device: str | None) -> int:
    resources = ray.cluster_resources()
    key = "GPU" if device is not None and device.startswith("cuda") else "CPU"
    return max(1, int(resources.get(key, 1)))


class _Encoder:
    """A Ray Data actor: loads the model once, then encodes one batch of texts per call."""

    def __init__(self, model: str, device: str | None, batch_size: int) -> None:
        from ef.source_manager._models import load_model

        self.model = load_model(model, device=device)
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
        from ef.source_manager._models import encode

        texts = [str(text) for text in batch["text"]]
        vectors = encode(self.model, texts, batch_size=self.batch_size, show_progress=False)
        return {"row": np.asarray(batch["row"], dtype=np.int64), "embedding": vectors}


def arrow_blocks(texts: Sequence[str], ranges: Sequence[tuple[int, int]], step: int) -> Iterator[Any]:
    """The rows of `ranges` as Arrow tables (``row``, ``text``) of `step` rows, made one at a time.

    One block per actor call, so every actor of the pool has work from the start. A generator,
    not a list: ``ray.data.from_arrow`` puts each table into the object store as it takes it
    (``[ray.put(t) for t in tables]``), so the driver holds one block of Arrow text at a time,
    not a second copy of the whole corpus (the object store spills to disk as it fills).

    >>> [block.to_pydict() for block in arrow_blocks(["a", "b", "c"], [(0, 3)], 2)]
    [{'row': [0, 1], 'text': ['a', 'b']}, {'row': [2], 'text': ['c']}]
    """
    import pyarrow as pa

    for start, end in ranges:
        for a in range(start, end, step):
            b = min(a + step, end)
            yield pa.table({"row": pa.array(np.arange(a, b, dtype=np.int64)), "text": pa.array(list(texts[a:b]))})


def _encoded_batches(
    ray: Any,
    texts: Sequence[str],
    ranges: Sequence[tuple[int, int]],
    *,
    model: str,
    device: str | None,
    batch_size: int,
    workers: int | None,
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
    """``(rows, embeddings)`` for the rows in `ranges`, as the actors finish them (in any order)."""
    step = batch_size * _MAP_BATCHES_PER_ENCODE
    n_blocks = sum(-(-(end - start) // step) for start, end in ranges)
    gpu = device is not None and device.startswith("cuda")
    pool = workers if workers is not None else _default_workers(ray, device)
    # Ray Data restarts a dead worker's actor and sends its batches again, as often as it takes
    # (max_restarts=-1 and max_task_retries=-1 are its defaults for actor pools).
    dataset = ray.data.from_arrow(arrow_blocks(texts, ranges, step)).map_batches(
        _Encoder,
        fn_constructor_kwargs={"model": model, "device": device, "batch_size": batch_size},
        batch_size=step,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=min(pool, n_blocks)),
        num_cpus=0 if gpu else 1,
        num_gpus=1 if gpu else 0,
    )
    for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
        yield np.asarray(batch["row"], dtype=np.int64), np.asarray(batch["embedding"], dtype=np.float32)


def shard_path(directory: Path, number: int) -> Path:
    return directory / f"shard-{number:06d}.npy"


def _texts_sha256(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def _claim(directory: Path, state: dict[str, Any]) -> None:
    """Make `directory` the shard directory of this build, or fail if it holds another build's shards."""
    path = directory / SHARD_STATE
    if path.is_file():
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(
                f"{path}: not valid JSON ({error}); delete {directory} to start the build afresh"
            ) from error
        differing = [key for key in state if not isinstance(found, dict) or found.get(key) != state[key]]
        if differing:
            raise ValueError(
                f"{directory} holds the shards of another build ({', '.join(differing)} differ): "
                f"delete it or choose another shard directory"
            )
        return
    if directory.exists() and any(p.name != SHARD_STATE for p in directory.iterdir()):
        raise FileExistsError(f"shard directory {directory} is not empty and holds no {SHARD_STATE}")
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as stream:
        stream.write(json.dumps(state, indent=2, allow_nan=False).encode("utf-8") + b"\n")


def _digest_path(path: Path) -> Path:
    """Where the SHA-256 of the shard at `path` is recorded: ``shard-000000.npy.sha256``."""
    return path.with_name(path.name + ".sha256")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_shard(path: Path, matrix: npt.NDArray[np.float32]) -> None:
    """Write a shard, then the SHA-256 of its bytes beside it (a shard without one is not trusted)."""
    with atomic_writer(path) as stream:
        np.save(stream, matrix, allow_pickle=False)
    with atomic_writer(_digest_path(path)) as stream:
        stream.write(_file_sha256(path).encode("ascii") + b"\n")


def _read_shard(path: Path, rows: int, *, verify: bool = False) -> np.memmap | None:
    """The shard at `path`, memory-mapped, or None if it is missing or not a float32 block of `rows`.

    With `verify` (a shard a resumed build would keep) also None unless the file's SHA-256 is
    the one recorded when it was written and every value is finite: a shard overwritten or
    damaged since would otherwise be searched, and saved into the index, as if it were good.
    """
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError):
        return None
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != rows:
        return None
    if verify:
        try:
            recorded = _digest_path(path).read_text(encoding="ascii").strip()
            if recorded != _file_sha256(path):
                return None
        except (OSError, UnicodeDecodeError):
            return None
        if not all(np.isfinite(matrix[start : start + 65_536]).all() for start in range(0, rows, 65_536)):
            return None
    return matrix  # type: ignore[no-any-return]


def encode_shards(
    texts: Sequence[str],
    *,
    engine: RayEngine,
    directory: Path,
    model: str,
    device: str | None,
    batch_size: int,
    show_progress: bool,
    on_shard: Callable[[int], None] | None = None,
) -> tuple[list[np.memmap], int]:
    """Encode `texts` on Ray into shards in `directory`; returns the shards (memory-mapped) and how many were reused.

    Shards already in `directory` from an earlier, interrupted run of the same build (same model,
    texts and shard size, as ``shards.json`` records) are kept if their SHA-256, recorded beside
    each when it was written, still matches and their values are finite; the missing and the
    damaged ones are encoded (again).
    `on_shard` is called with each shard's number once it is on disk.
    """
    rows = engine.shard_rows
    n_shards = -(-len(texts) // rows)
    _claim(directory, {
        "format": "ef-shards", "model": model, "n_rows": len(texts), "shard_rows": rows,
        "texts_sha256": _texts_sha256(texts),
    })
    for stale in directory.glob(".*.tmp"):  # a writer killed mid-write leaves its temporary file
        stale.unlink(missing_ok=True)
    bounds = [(i * rows, min((i + 1) * rows, len(texts))) for i in range(n_shards)]
    shards: list[np.memmap | None] = [
        _read_shard(shard_path(directory, i), b - a, verify=True) for i, (a, b) in enumerate(bounds)
    ]
    missing = [i for i, shard in enumerate(shards) if shard is None]
    reused = n_shards - len(missing)
    if missing:
        done = sum(b - a for (a, b), s in zip(bounds, shards, strict=True) if s is not None)
        buffers: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]] = {}
        with ray_session(engine.address) as ray, Progress(len(texts), "encoding on Ray", enabled=show_progress) as bar:
            _quiet_data()
            bar.update(done)
            for batch_rows, vectors in _encoded_batches(
                ray, texts, [bounds[i] for i in missing], model=model, device=device, batch_size=batch_size,
                workers=engine.workers,
            ):
                for number in np.unique(batch_rows // rows).tolist():
                    start, end = bounds[number]
                    mine = (batch_rows >= start) & (batch_rows < end)
                    if number not in buffers:
                        buffers[number] = (
                            np.empty((end - start, vectors.shape[1]), dtype=np.float32),
                            np.zeros(end - start, dtype=bool),
                        )
                    matrix, filled = buffers[number]
                    matrix[batch_rows[mine] - start] = vectors[mine]
                    filled[batch_rows[mine] - start] = True
                    if filled.all():
                        path = shard_path(directory, number)
                        _write_shard(path, matrix)
                        del buffers[number]
                        shards[number] = _read_shard(path, end - start)
                        if on_shard is not None:
                            on_shard(number)
                bar.update(len(batch_rows))
    if any(s is None for s in shards):  # pragma: no cover - Ray returned fewer rows than it was given
        raise RuntimeError(f"Ray returned no embeddings for shards {[i for i, s in enumerate(shards) if s is None]}")
    out = [s for s in shards if s is not None]
    dims = {int(s.shape[1]) for s in out}
    if len(dims) > 1:
        raise ValueError(f"{directory} holds shards of different dimensions {sorted(dims)}; delete it and build again")
    return out, reused


def encode_on_ray(
    texts: Sequence[str],
    *,
    engine: RayEngine,
    model: str,
    device: str | None,
    batch_size: int,
    show_progress: bool,
    desc: str = "encoding queries on Ray",
) -> npt.NDArray[np.float32]:
    """Embeddings of `texts` (e.g. a large query set), encoded on Ray, in memory, in order."""
    out: npt.NDArray[np.float32] | None = None
    with ray_session(engine.address) as ray, Progress(len(texts), desc, enabled=show_progress) as bar:
        _quiet_data()
        for batch_rows, vectors in _encoded_batches(
            ray, texts, [(0, len(texts))], model=model, device=device, batch_size=batch_size, workers=engine.workers
        ):
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch_rows] = vectors
            bar.update(len(batch_rows))
    if out is None:
        raise ValueError("no texts to encode")
    return out


def _score_shard(
    shard: Any, offset: int, vectors: npt.NDArray[np.float32], limit: int
) -> list[Ranking]:
    """A Ray task: the top `limit` rows of one shard per query, positions made global by `offset`."""
    if isinstance(shard, str):
        try:
            shard = np.load(shard, mmap_mode="r", allow_pickle=False)
        except OSError as error:
            raise OSError(
                f"shard {shard} is not readable on this Ray node ({error}): a sharded index searched on a "
                f"multi-node cluster must be on a filesystem every node mounts"
            ) from error
    out: list[Ranking] = []
    for start in range(0, len(vectors), _QUERY_CHUNK):
        scores = vectors[start : start + _QUERY_CHUNK] @ shard.T
        for row in scores:
            positions, values = top_k(row, limit)
            out.append((positions + offset, values))
    return out


def search_on_ray(
    parts: Sequence[npt.NDArray[np.float32]],
    vectors: npt.NDArray[np.float32],
    *,
    limit: int,
    engine: RayEngine,
    show_progress: bool,
) -> list[Ranking]:
    """Exact top-`limit` per query vector over the rows of `parts`: one Ray task per part, heap-merged.

    A memory-mapped part is sent by file name (the task maps it itself); one in memory goes
    through Ray's object store.
    """
    with ray_session(engine.address) as ray:
        task = ray.remote(num_cpus=1)(_score_shard)
        query_ref = ray.put(np.ascontiguousarray(vectors, dtype=np.float32))
        pending = []
        offset = 0
        for part in parts:
            filename = getattr(part, "filename", None)
            on_disk = isinstance(part, np.memmap) and filename and os.path.isfile(filename)
            # A shard whose file went (a deleted shard folder) is still mapped here: send its rows.
            shard = str(filename) if on_disk else ray.put(np.asarray(part))
            pending.append(task.remote(shard, offset, query_ref, limit))
            offset += len(part)
        per_shard: list[list[Ranking]] = []
        with Progress(len(pending), "searching shards on Ray", enabled=show_progress) as bar:
            for ref in pending:
                per_shard.append(ray.get(ref))
                bar.update()
    return [merge_top_k([rankings[q] for rankings in per_shard], limit) for q in range(len(vectors))]


def make_engine(
    engine: str, *, address: str | None, workers: int | None, shard_dir: str | os.PathLike[str] | None,
    shard_rows: int | None = None,
) -> RayEngine | None:
    """The :class:`RayEngine` for ``engine="ray"``, None for ``"local"``; Ray options without Ray are an error.

    >>> make_engine("local", address=None, workers=None, shard_dir=None) is None
    True
    >>> make_engine("local", address=None, workers=2, shard_dir=None)
    Traceback (most recent call last):
    ...
    ValueError: 'workers' is an option of engine='ray' (got engine='local')
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"'engine' must be 'local' or 'ray' (got {engine!r})")
    if engine == "local":
        options = (("ray_address", address), ("workers", workers), ("shard_dir", shard_dir), ("shard_rows", shard_rows))
        for name, value in options:
            if value is not None:
                raise ValueError(f"{name!r} is an option of engine='ray' (got engine='local')")
        return None
    require_ray()
    return RayEngine(
        address=address, workers=workers, shard_dir=None if shard_dir is None else Path(shard_dir),
        shard_rows=DEFAULT_SHARD_ROWS if shard_rows is None else shard_rows,
    )
