"""Where datasets live on disk, what state a file there is in, and checking it against its checksum.

Three caches are read, none is written but ef's own:

- ir_datasets: ``$IR_DATASETS_HOME``, else ``~/.ir_datasets``;
- the Hugging Face hub: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
  ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``;
- ef: ``$EF_HOME/datasets``, else ``$XDG_CACHE_HOME/ef/datasets``, else ``~/.cache/ef/datasets``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ef.datasets._registry import Download

__all__ = [
    "ChecksumError",
    "DatasetNotFoundError",
    "Looked",
    "ef_root",
    "file_state",
    "hf_hub",
    "hf_snapshot",
    "irds_home",
    "lock_holder",
    "md5_of",
    "verify_blob",
    "verify_download",
]

_CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX40 = re.compile(r"[0-9a-f]{40}")


class DatasetNotFoundError(FileNotFoundError):
    """A dataset is on none of the places looked at; ``looked`` says what was found at each."""

    def __init__(self, message: str, looked: tuple[Looked, ...]) -> None:
        super().__init__(message)
        self.looked = looked

    def __str__(self) -> str:
        return str(self.args[0])


class ChecksumError(ValueError):
    """A file's checksum is not the one its publisher gives: corrupt, truncated or another release."""


@dataclass(frozen=True, slots=True)
class Looked:
    """One place looked at, and what was there."""

    place: str
    path: str
    state: str

    def __str__(self) -> str:
        return f"{self.place} {self.path} ({self.state})"


def _cache_home() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


def irds_home() -> Path:
    """ir_datasets' folder: ``$IR_DATASETS_HOME``, else ``~/.ir_datasets``."""
    home = os.environ.get("IR_DATASETS_HOME")
    return Path(home) if home else Path.home() / ".ir_datasets"


def hf_hub() -> Path:
    """The Hugging Face hub cache, as ``huggingface_hub`` finds it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return _cache_home() / "huggingface" / "hub"


def ef_root() -> Path:
    """ef's own dataset cache, the only one ef writes (``ef datasets fetch``)."""
    if os.environ.get("EF_HOME"):
        return Path(os.environ["EF_HOME"]) / "datasets"
    return _cache_home() / "ef" / "datasets"


def lock_holder(path: Path) -> int | None:
    """The pid written in ef's lock file `path` while another process holds its lock; else ``None``."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(descriptor, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)


def _partials(path: Path) -> list[Path]:
    """Files a writer leaves beside `path` while writing it: ef's ``.part``, ir_datasets' ``.tmp``/``.tmpN``."""
    found = [path.with_name(path.name + ".part"), path.with_name(path.name + ".tmp")]
    found += [path.with_name(f"{path.name}.tmp{i}") for i in range(3)]
    return [candidate for candidate in found if candidate.is_file()]


def file_state(path: Path) -> str:
    """``present`` for a readable regular file (after links); else what is there instead."""
    if path.is_file():
        return "present"
    if path.is_symlink():
        return f"a broken link to {os.readlink(path)}"
    if path.exists():
        return "not a file"
    partials = _partials(path)
    if partials:
        partial = partials[0]
        size = partial.stat().st_size
        holder = lock_holder(path.with_name(path.name + ".lock"))
        if holder is not None:
            return f"being written by another process (pid {holder}): {partial.name}, {size:,} bytes so far"
        if partial.name.endswith(".part"):
            return f"an interrupted fetch: {partial.name}, {size:,} bytes"
        return f"being written by ir_datasets, or interrupted: {partial.name}, {size:,} bytes"
    return "absent"


def md5_of(path: Path) -> str:
    digest = hashlib.md5()  # the publishers' tables give md5; it checks integrity, not authenticity
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(path: Path) -> str:
    """What identifies one unchanged file: real path, size, modification time (ns), inode."""
    status = path.stat()
    return f"{os.path.realpath(path)}\t{status.st_size}\t{status.st_mtime_ns}\t{status.st_ino}"


def _memo(md5: str) -> Path:
    return ef_root() / ".verified" / md5


def _remembered(path: Path, md5: str) -> bool:
    try:
        return _stamp(path) in _memo(md5).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False


def _remember(path: Path, md5: str) -> None:
    """Note in ef's cache that `path`, as it is now, has `md5` (housekeeping: failures are ignored)."""
    from ef.io._atomic import atomic_writer

    memo = _memo(md5)
    try:
        old = memo.read_text(encoding="utf-8").splitlines() if memo.is_file() else []
        memo.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(memo) as stream:
            stream.write("".join(f"{line}\n" for line in [*old[-15:], _stamp(path)]).encode("utf-8"))
    except OSError:
        pass


def verify_download(path: Path, download: Download, name: str) -> None:
    """Raise :class:`ChecksumError` unless `path` has `download`'s published md5.

    A file found good is remembered in ef's cache (``.verified/<md5>``: its real path, size,
    modification time and inode), so an unchanged large archive is hashed once, not on every load.
    """
    if _remembered(path, download.md5):
        return
    actual = md5_of(path)
    if actual == download.md5:
        _remember(path, download.md5)
        return
    size = path.stat().st_size
    sized = "" if download.size is None or size == download.size else (
        f"; it has {size:,} bytes where the published file has {download.size:,}"
        + (" (truncated: an interrupted download?)" if size < download.size else "")
    )
    raise ChecksumError(
        f"{path}: md5 {actual} is not the published md5 {download.md5} of {download.filename}{sized}; "
        f"the file is corrupt, truncated or another release: remove it and run: ef datasets fetch {name}"
    )


def _git_blob_sha1(path: Path) -> str:
    digest = hashlib.sha1()  # git's object id of a file: sha1 of "blob <size>\0" + the bytes
    digest.update(f"blob {path.stat().st_size}\0".encode("ascii"))
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify_blob(path: Path) -> str:
    """Check a hub snapshot file against the blob name it links to; say how it was checked.

    The hub cache names each blob by its content: the sha256 of a large (LFS) file, the git
    object id of a small one. That checks the bytes against what the hub served, not against a
    pinned table (none is published for the BeIR parquet files). A blob found good is remembered
    as archives are (:func:`verify_download`).
    """
    blob = path.resolve()
    name = blob.name
    kinds = {64: "sha256", 40: "git blob id"}
    if len(name) in kinds and _remembered(blob, name):  # checked before, unchanged since
        return f"{kinds[len(name)]} matches the hub's content address (not a pinned checksum)"
    if _HEX64.fullmatch(name):
        digest = hashlib.sha256()
        with open(blob, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
        actual, kind = digest.hexdigest(), "sha256"
    elif _HEX40.fullmatch(name):
        actual, kind = _git_blob_sha1(blob), "git blob id"
    else:
        return "not verified (not a link into the cache's blobs/)"
    if actual != name:
        raise ChecksumError(
            f"{path}: {kind} {actual} is not the hub's {name} for this file; the cached blob {blob} is corrupt "
            "or truncated: remove it and download it again with huggingface_hub"
        )
    _remember(blob, name)
    return f"{kind} matches the hub's content address (not a pinned checksum)"


def hf_snapshot(repo: str) -> tuple[Path, Path | None, str]:
    """The hub cache folder of dataset `repo`, its snapshot to read (or ``None``), and why.

    The snapshot is the one ``refs/main`` names, else the only one there is.
    """
    folder = hf_hub() / f"datasets--{repo.replace('/', '--')}"
    if not folder.is_dir():
        return folder, None, "absent"
    snapshots = folder / "snapshots"
    main = folder / "refs" / "main"
    if main.is_file():
        revision = main.read_text(encoding="ascii", errors="replace").strip()
        chosen = snapshots / revision
        if chosen.is_dir():
            return folder, chosen, f"snapshot {revision}"
        return folder, None, f"refs/main names {revision}, which has no snapshot"
    found = sorted(p for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    if len(found) == 1:
        return folder, found[0], f"snapshot {found[0].name}"
    incomplete = [p.name for p in (folder / "blobs").glob("*.incomplete")] if (folder / "blobs").is_dir() else []
    if incomplete:
        return folder, None, f"a download in progress or interrupted ({incomplete[0]})"
    return folder, None, "no snapshot" if not found else f"{len(found)} snapshots and no refs/main"


def fsync_directory(path: Path) -> None:
    """Make a rename in `path` durable (where the file system allows it)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.EBADF):
                raise
        finally:
            os.close(descriptor)
