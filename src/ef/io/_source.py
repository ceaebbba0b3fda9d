"""Opening what a user names as input: one opener for every reader in the distribution.

A source is a path or ``-`` (standard input). It may be a regular file, a pipe, a FIFO or a
process substitution (``<(zcat run.gz)``), and plain or gzip-compressed: compression is told
by the gzip magic bytes, not by the name, so ``RUN.GZ`` and a pipe of gzip both read. A UTF-8
byte-order mark at the very start is dropped, once, here. Every failure is an error that names
the source: a truncated or corrupt gzip stream, a ``.gz`` name on a file that is not gzip.

>>> import gzip, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "lines.TXT.GZ")
>>> with gzip.open(path, "wb") as out:
...     _ = out.write(b"\\xef\\xbb\\xbfone\\ntwo\\n")
>>> read_bytes(path)
b'one\\ntwo\\n'
>>> [(number, line) for number, line in iter_lines(path)]
[(1, b'one'), (2, b'two')]
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from typing import IO

__all__ = ["BOM", "display_name", "is_plain_file", "iter_chunks", "iter_lines", "open_binary", "read_bytes"]

BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 23

Source = str | os.PathLike[str]


def display_name(source: Source) -> str:
    """How errors name `source`: its path, or ``<stdin>`` for ``-``."""
    name = os.fspath(source)
    return "<stdin>" if name == "-" else name


def is_plain_file(source: Source) -> bool:
    """Whether `source` is a regular file whose bytes are its text: not ``-``, not gzip by its
    name or its magic bytes, so it can be read in place or from any offset."""
    name = os.fspath(source)
    if name == "-" or name.lower().endswith(".gz") or not os.path.isfile(name):
        return False
    with open(name, "rb") as stream:
        return stream.read(2) != _GZIP_MAGIC


@contextlib.contextmanager
def open_binary(source: Source) -> Iterator[IO[bytes]]:
    """A binary stream of `source`'s decompressed bytes, BOM not removed (see :func:`iter_chunks`)."""
    name = os.fspath(source)
    if name == "-":
        raw: IO[bytes] = sys.stdin.buffer
        owned = False
    else:
        raw = open(name, "rb")  # noqa: SIM115  # closed below; pipes and FIFOs open like files
        owned = True
    try:
        buffered = raw if hasattr(raw, "peek") else _buffer(raw)
        head = buffered.peek(2)[:2]  # type: ignore[attr-defined]
        if head == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=buffered, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            if name.lower().endswith(".gz") and head:
                raise ValueError(f"{display_name(source)}: named '.gz' but not gzip-compressed")
            yield buffered
    finally:
        if owned:
            raw.close()


def _buffer(raw: IO[bytes]) -> IO[bytes]:
    return io.BufferedReader(raw)  # type: ignore[type-var]


def iter_chunks(source: Source, size: int = _CHUNK) -> Iterator[bytes]:
    """`source`'s bytes in chunks of about `size`, the leading BOM dropped; errors name `source`."""
    with open_binary(source) as stream:
        first = True
        while True:
            try:
                chunk = stream.read(size)
            except (EOFError, zlib.error, gzip.BadGzipFile) as error:
                reason = "truncated gzip stream" if isinstance(error, EOFError) else f"corrupt gzip stream ({error})"
                raise ValueError(f"{display_name(source)}: {reason}") from None
            if not chunk:
                return
            if first:
                first = False
                if chunk.startswith(BOM):
                    chunk = chunk[len(BOM) :]
                elif len(chunk) < len(BOM) and BOM.startswith(chunk):
                    more = stream.read(len(BOM) - len(chunk))
                    chunk += more
                    if chunk.startswith(BOM):
                        chunk = chunk[len(BOM) :]
            yield chunk


def read_bytes(source: Source) -> bytes:
    """All of `source`'s bytes (decompressed, BOM dropped)."""
    return b"".join(iter_chunks(source))


def iter_lines(source: Source) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for every line of `source`, without its ``\\n`` or ``\\r\\n`` end.

    Only ``\\n`` ends a line, so numbers match what ``grep -n`` and editors show; a final line
    without a newline is yielded too. Lines stream: memory stays at one chunk plus one line.
    """
    number = 0
    tail = b""
    for chunk in iter_chunks(source):
        lines = (tail + chunk).split(b"\n")
        tail = lines.pop()
        for line in lines:
            number += 1
            yield number, line[:-1] if line.endswith(b"\r") else line
    if tail:
        yield number + 1, tail[:-1] if tail.endswith(b"\r") else tail
