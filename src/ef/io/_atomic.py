"""Atomic file writes: a temporary file beside the target, renamed over it only when complete.

A reader or a crash sees the old file or the new one, never half of either. What "the target"
is, and how it is written:

- A symlink is followed: its (final) target is the file replaced, the link stays a link, and the
  temporary file is made beside the real file, on its file system.
- An existing regular file keeps its permission bits (and, when run as root, its owner); a new
  file gets what ``open()`` would give it, ``0o666`` less the umask.
- A character device or a FIFO (``/dev/null``, ``/dev/full``, ``<(…)`` of a shell) is a stream,
  not a file: it is written straight, never renamed over. ``/dev/stdout``, ``/dev/stderr`` and
  ``/dev/fd/N`` write to this process's open descriptor, so ``--json /dev/stdout > out`` appends
  to ``out`` like the rest of the output instead of replacing it.
- A directory, block device or socket is refused with an ``OSError`` naming the path.

Every error names the caller's path, never the temporary one. On any failure, ``KeyboardInterrupt``
or ``SIGTERM`` (while the write runs in the main thread and nobody else handles ``SIGTERM``, the
default handler is swapped for one that unwinds, then the signal is re-delivered) the temporary
file is removed and the old file is left as it was.

A writer killed outright (``SIGKILL``, power loss) cannot clean up. Temporary names are short and
recognisable, ``.ef-<host>-<pid>-<random>.tmp`` (``<host>`` is 8 hex digits of a hash of the host
name), so they fit next to a 250-character file name; the next write into the same directory
removes those whose process is gone: same host, pid no longer running. A live writer's file, a
file of another host (a shared file system) or one that merely looks old is never touched.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import io
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import IO, Any, NoReturn

__all__ = [
    "atomic_files",
    "atomic_writer",
    "create_temporary",
    "remove_stale_temporaries",
    "replace_directory",
    "temporary_directory",
    "temporary_name",
]

_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]
_TEMPORARY = re.compile(r"\.ef-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[0-9a-f]{12}\.tmp")
# /proc/self/fd, /proc/<pid>/fd, and /dev/fd (a link to /proc/self/fd on Linux).
_FD_DIRECTORY = re.compile(r"/proc/(?:self|[0-9]+)/fd|/dev/fd")
_MAX_LINKS = 40  # as the kernel's ELOOP limit
# Write errors of the stream itself, which Python raises without a file name.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EPIPE})


def temporary_name() -> str:
    """A fresh temporary name, ``.ef-<host>-<pid>-<random>.tmp``, 40 characters or fewer.

    >>> import re
    >>> bool(re.fullmatch(r"\\.ef-[0-9a-f]{8}-[0-9]+-[0-9a-f]{12}\\.tmp", temporary_name()))
    True
    """
    return f".ef-{_HOST}-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def temporary_directory(parent: str | os.PathLike[str]) -> str:
    """A new, empty folder in `parent` with a :func:`temporary_name`, and ``mkdir``'s usual
    permissions (``0o777`` less the umask, not ``mkdtemp``'s ``0o700``); stale ones are cleared first."""
    remove_stale_temporaries(parent)
    while True:
        path = os.path.join(os.fspath(parent), temporary_name())
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: str, second: str) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where the
    system or the file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), second)


def replace_directory(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the finished folder `source` at `target`, replacing the folder there, and remove the old one.

    Where the system can swap two paths in one step, a reader or a crash sees the old folder or
    the new one, never neither; the old one is then deleted (a crash during that leaves a stale
    temporary folder, cleared by the next write). Elsewhere it takes two renames: an error
    between them puts the old folder back, and only a crash in that instant leaves the old
    folder beside `target` as ``.ef-…old`` (never cleared automatically, so nothing is lost).
    """
    source, target = os.fspath(source), os.fspath(target)
    if _exchange(source, target):
        shutil.rmtree(source, ignore_errors=True)  # it now holds the old folder
        _sync_directory(os.path.dirname(os.path.abspath(target)))
        return
    old = os.path.join(os.path.dirname(os.path.abspath(target)), temporary_name()[: -len(".tmp")] + ".old")
    os.replace(target, old)
    try:
        os.replace(source, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
    _sync_directory(os.path.dirname(os.path.abspath(target)))


def _pid_running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone (or a number no kernel gives a process)
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temporaries(directory: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files and folders a killed ef writer left in `directory`.

    Only names matching ``.ef-<host>-<pid>-<random>.tmp`` of this host whose process is no longer
    running are removed; returns their paths. Errors (a folder one cannot list) are ignored: this
    is housekeeping, never a reason for a write to fail.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or match["host"] != _HOST or _pid_running(int(match["pid"])):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.path)
    return removed


def _resolve(path: str) -> tuple[str, int | None]:
    """The real path written for `path`, following symlinks; and the descriptor number when the
    chain reaches one of this process's descriptors (``/dev/stdout`` → ``/proc/self/fd/1``)."""
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        parent, name = os.path.split(current)
        # A descriptor link is a "magic" symlink: following it by name would reopen (and truncate)
        # the file behind it, so it is recognised before resolving the folder.
        if _FD_DIRECTORY.fullmatch(parent) and name.isdigit():
            owner = parent.split("/")[2] if parent.startswith("/proc/") else "self"
            # Another process's descriptor is opened by name: what it points to decides.
            return (current, int(name)) if owner in ("self", str(os.getpid())) else (current, None)
        real_parent = os.path.realpath(parent)
        if real_parent != parent and _FD_DIRECTORY.fullmatch(real_parent):
            current = os.path.join(real_parent, name)
            continue
        current = os.path.join(real_parent, name)
        try:
            link = os.readlink(current)
        except OSError:  # not a link, or nothing there yet: this is the file to write
            return current, None
        current = os.path.join(real_parent, link)  # ".." is resolved by realpath next round
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def _reraise(error: OSError, path: str) -> NoReturn:
    """Raise `error` again, naming `path` (the caller's) instead of whatever file it named.

    An error without an errno is not the system's; it is raised unchanged.
    """
    if error.errno is None:
        raise error
    # OSError(errno, ...) builds the matching subclass (FileNotFoundError, PermissionError, ...).
    raise OSError(error.errno, error.strerror or str(error), path) from error


class _Writer(io.BufferedWriter):
    """A buffered binary file whose write errors name the caller's path."""

    def __init__(self, raw: io.RawIOBase, target: str) -> None:
        super().__init__(raw)
        self._target = target

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except OSError as error:
            _reraise(error, self._target)

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as error:
            _reraise(error, self._target)


def create_temporary(target: str | os.PathLike[str]) -> tuple[str, IO[bytes]]:
    """A new, empty temporary file for `target`, in the directory of `target`, opened for writing.

    `target` is used as given (resolve symlinks first); errors name it, not the temporary file.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path, stream = create_temporary(os.path.join(folder, "out.txt"))
    >>> stream.close(); os.path.basename(path).startswith(".ef-"), os.path.dirname(path) == folder
    (True, True)
    """
    name = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(name))
    while True:
        path = os.path.join(directory, temporary_name())
        try:  # O_EXCL and a random name keep two writers from sharing a temporary file
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
        except OSError as error:
            _reraise(error, name)
        return path, _Writer(io.FileIO(fd, "wb", closefd=True), name)


class _Target:
    """One file being written: its temporary file, or the stream it is written to directly."""

    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.user = os.fspath(target)
        self.real, descriptor = _resolve(self.user)
        self.temporary: str | None = None
        self.existing: os.stat_result | None = None
        self.stream: IO[bytes]
        if descriptor is not None:  # /dev/stdout and friends: this process's own descriptor
            for std in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    std.flush()  # what Python buffered comes first
            try:
                raw = io.FileIO(os.dup(descriptor), "wb", closefd=True)
            except OSError as error:
                _reraise(error, self.user)
            self.stream = _Writer(raw, self.user)
            return
        try:
            info = os.stat(self.real)
        except FileNotFoundError:
            info = None
        except OSError as error:
            _reraise(error, self.user)
        if info is not None and not stat.S_ISREG(info.st_mode):
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.user)
            if not (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
                raise OSError(errno.EINVAL, "not a regular file, character device or FIFO; refusing to write it",
                              self.user)
            try:  # a device or a pipe: a stream to write into, not a file to replace
                self.stream = _Writer(io.FileIO(self.real, "wb"), self.user)
            except OSError as error:
                _reraise(error, self.user)
            return
        self.existing = info
        remove_stale_temporaries(os.path.dirname(self.real))
        self.temporary, self.stream = create_temporary_for(self.real, self.user)

    def commit(self) -> None:
        """Flush, sync and close the stream; then, for a file, put it in place."""
        if self.temporary is None:
            self.stream.flush()
            self.stream.close()
            return
        with self.stream:
            self.stream.flush()
            try:
                fd = self.stream.fileno()
                if self.existing is not None:
                    os.fchmod(fd, stat.S_IMODE(self.existing.st_mode))
                    if os.geteuid() == 0:  # root rewriting someone's file keeps it theirs
                        with contextlib.suppress(OSError):
                            os.fchown(fd, self.existing.st_uid, self.existing.st_gid)
                os.fsync(fd)
            except OSError as error:
                _reraise(error, self.user)

    def rename(self) -> None:
        if self.temporary is None:
            return
        try:
            os.replace(self.temporary, self.real)
        except OSError as error:
            _reraise(error, self.user)
        self.temporary = None
        _sync_directory(os.path.dirname(self.real))

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self.stream.close()
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None


def create_temporary_for(real: str, user: str) -> tuple[str, IO[bytes]]:
    """:func:`create_temporary` beside `real`, naming `user` in errors (module-level so tests can fail it)."""
    try:
        return create_temporary(real)
    except OSError as error:
        _reraise(error, user)


def _sync_directory(directory: str) -> None:
    """Make the rename durable; best effort (some file systems cannot sync a folder)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Terminated(BaseException):
    """Raised by the temporary SIGTERM handler so that cleanup runs before the process ends."""


@contextlib.contextmanager
def _unwind_on_sigterm() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`_Terminated` (if no one else handles it)."""
    # Only the default action is replaced: a handler of the program's own (or one installed outside
    # Python, which getsignal reports as None) stays in charge.
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # cleanup done: now end as SIGTERM would have
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def atomic_files(targets: Sequence[str | os.PathLike[str]]) -> Iterator[list[IO[bytes]]]:
    """Write several files atomically: all are complete before the first is renamed into place.

    Yields one stream per target, in order. On an error none of them is touched (a crash during
    the renames, a few microseconds, can leave some new and some old).

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with atomic_files([os.path.join(folder, "a"), os.path.join(folder, "b")]) as (a, b):
    ...     _ = a.write(b"1"), b.write(b"2")
    >>> sorted(os.listdir(folder)), open(os.path.join(folder, "b")).read()
    (['a', 'b'], '2')
    """
    pending: list[_Target] = []
    with _unwind_on_sigterm():
        try:
            for target in targets:
                pending.append(_Target(target))
            yield [item.stream for item in pending]
            for item in pending:
                item.commit()
            for item in pending:
                item.rename()
        except BaseException as error:
            for item in pending:
                item.discard()
            if isinstance(error, OSError) and error.errno in _WRITE_ERRNOS and error.filename is None and (
                len(pending) == 1
            ):
                # A write error of our stream that reached the caller's block through a wrapper
                # (gzip, a codec) without its file name.
                _reraise(error, pending[0].user)
            raise


@contextlib.contextmanager
def atomic_writer(target: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Write `target` atomically: ``with atomic_writer(path) as stream: stream.write(b"...")``.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "report.json")
    >>> with atomic_writer(path) as stream:
    ...     _ = stream.write(b"{}")
    >>> open(path).read()
    '{}'
    >>> try:
    ...     with atomic_writer(path) as stream:
    ...         _ = stream.write(b"half")
    ...         raise RuntimeError("failed midway")
    ... except RuntimeError:
    ...     pass
    >>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))  # old content, no leftovers
    ('{}', ['report.json'])
    """
    with atomic_files([target]) as (stream,):
        yield stream
