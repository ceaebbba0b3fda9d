"""Atomic file writes: a temporary file beside the target, renamed over it only when complete.

A reader or a crash sees the old file or the new one, never half of either; on error the old
file is untouched and the temporary file is removed. New files get the permissions ``open()``
would give them (``0o666`` less the umask; ``mkstemp``'s ``0o600`` would survive the rename).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from typing import IO

__all__ = ["atomic_writer", "create_temporary"]


def create_temporary(target: str | os.PathLike[str]) -> tuple[str, IO[bytes]]:
    """A new, empty file in `target`'s directory, opened for binary writing.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path, stream = create_temporary(os.path.join(folder, "out.txt"))
    >>> stream.close(); os.path.basename(path).startswith(".out.txt.")
    True
    """
    target = os.path.abspath(os.fspath(target))
    directory, name = os.path.split(target)
    while True:
        path = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:  # O_EXCL and a random name keep two writers from sharing a temporary file
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return path, os.fdopen(fd, "wb")


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
    temporary, stream = create_temporary(target)
    try:
        with stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
