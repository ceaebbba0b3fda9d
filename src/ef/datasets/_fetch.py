"""``fetch``: the one thing in ef that goes online, into ef's own cache, resumable, checked, atomic.

Each file is downloaded to ``<file>.part`` beside its place in ef's cache, under an exclusive lock
on ``<file>.lock`` (a second fetcher of the same file stops at once with an error naming the
first one's pid, rather than both writing it); an interrupted download is resumed from where it
stopped with an HTTP ``Range`` request; the whole file is checked against its published md5 and
only then renamed into place, so a reader sees no file or the whole, checked one. A file whose
md5 differs is removed, and the error says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from ef._validate import check_bool, check_positive_number
from ef.datasets._places import ChecksumError, ef_root, fsync_directory, md5_of, verify_download
from ef.datasets._registry import Download, resolve_name

__all__ = ["fetch"]

_CHUNK = 1 << 16


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    lock = target.with_name(target.name + ".lock")
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode("ascii", "replace").strip() or "?"
            raise OSError(
                f"{target}: another process (pid {holder}) is fetching it now; wait for it to finish"
            ) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        os.close(descriptor)  # releases the lock; the lock file stays (removing it would race)


def _offline_hint(target: Path) -> str:
    return f"ef goes online only here; on an offline machine, copy the file from elsewhere to {target}"


def _download(download: Download, part: Path, target: Path, show_progress: bool, timeout: float) -> None:
    from ef._console import Progress

    start = part.stat().st_size if part.is_file() else 0
    headers = dict(download.headers)
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(download.url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and start:  # nothing past what we have: the part is whole (or too long)
            return
        raise OSError(f"cannot fetch {download.url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise OSError(f"cannot fetch {download.url}: {error.reason}; {_offline_hint(target)}") from None
    except (TimeoutError, OSError) as error:
        raise OSError(f"cannot fetch {download.url}: {error}; {_offline_hint(target)}") from None
    with response:
        resumed = start > 0 and response.status == 206
        answered = response.headers.get("Content-Range", "")
        if resumed and not answered.startswith(f"bytes {start}-"):
            raise OSError(
                f"{download.url} answered a request for bytes {start}- with {answered!r}; "
                f"remove {part} to fetch the file from the start"
            )
        done = start if resumed else 0  # a server that ignores Range sends the whole file again
        length = response.headers.get("Content-Length")
        total = done + int(length) if length is not None and length.isdigit() else download.size
        with open(part, "ab" if resumed else "wb") as out, Progress(
            total, f"fetch {download.filename} (bytes)", enabled=show_progress
        ) as bar:
            bar.update(done)
            try:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    bar.update(len(chunk))
            except (http.client.HTTPException, TimeoutError, OSError) as error:
                out.flush()
                raise OSError(
                    f"fetching {download.url} stopped at {done:,} of {total or 0:,} bytes ({error!r}); "
                    f"{part} keeps them: run the same command again to resume"
                ) from None
            out.flush()
            os.fsync(out.fileno())
    if total is not None and done < total:
        raise OSError(
            f"fetching {download.url} stopped at {done:,} of {total:,} bytes; "
            f"{part} keeps them: run the same command again to resume"
        )


def _fetch_one(download: Download, name: str, show_progress: bool, timeout: float) -> Path:
    target = ef_root() / download.cache_path
    if target.is_file():
        verify_download(target, download, name)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target):
        if target.is_file():  # another fetcher finished while we waited for the lock
            verify_download(target, download, name)
            return target
        part = target.with_name(target.name + ".part")
        _download(download, part, target, show_progress, timeout)
        actual = md5_of(part)
        if actual != download.md5:
            part.unlink()
            raise ChecksumError(
                f"{download.url} gave a file with md5 {actual}, not the published md5 {download.md5}; "
                f"the download was removed ({part}): the server's file has changed or the transfer was corrupted"
            )
        os.replace(part, target)
        fsync_directory(target.parent)
    return target


def fetch(name: str, *, show_progress: bool = True, timeout: float = 60.0) -> list[Path]:
    """Download the files of dataset `name` into ef's cache (``ef datasets fetch NAME``); their paths.

    Files already there are checked, not downloaded again. The only function of ef that uses
    the network; ``load`` never does.

    Raises
    ------
    ValueError
        For a name ef does not know, or a dataset with no public download.
    OSError
        When the server cannot be reached or answers with an error (the message names the
        URL), or the transfer stops early (what arrived is kept for the next try).
    ChecksumError
        When the file downloaded does not have the published md5 (it is removed).
    """
    check_bool(show_progress, "show_progress")
    # before anything is looked at: a bad timeout was found by urllib, mid-download
    check_positive_number(timeout, "timeout", what="a finite number of seconds > 0")
    resolved = resolve_name(name)
    if resolved is None:
        raise ValueError(f"unknown dataset {name!r}; the names ef knows: ef datasets list")
    known = resolved[0]
    if not known.downloads:
        raise ValueError(f"{known.name} cannot be fetched: {known.note}")
    return [_fetch_one(download, known.name, show_progress, timeout) for download in known.downloads]

