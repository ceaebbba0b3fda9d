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
import tempfile
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

__all__ = [
    "BOM",
    "Spooled",
    "decode_utf8",
    "display_name",
    "is_plain_file",
    "iter_chunks",
    "iter_lines",
    "open_binary",
    "read_bytes",
    "read_some",
    "reread",
    "text_bytes",
]

BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 23

Source = str | os.PathLike[str]


def _fspath(source: object) -> str:
    """`source` as a path; a type ``os.fspath`` refuses (None, a file object) is named here, as
    the readers' ``path`` argument, rather than in ``os.fspath``'s message, which names none."""
    if not isinstance(source, str | bytes | os.PathLike):
        raise TypeError(
            f"'path' must be a str or os.PathLike path, or '-' for standard input (got {type(source).__name__})"
        )
    return os.fspath(source)  # type: ignore[return-value]  # bytes pass through, as they always did


def decode_utf8(raw: bytes, where: str) -> str:
    """`raw` as UTF-8 text, or ``ValueError("<where>: not valid UTF-8 (<reason>)")``.

    >>> decode_utf8(b"caf\\xc3\\xa9", "f.jsonl:3")
    'café'
    >>> decode_utf8(b"\\xff", "f.jsonl:4")
    Traceback (most recent call last):
    ...
    ValueError: f.jsonl:4: not valid UTF-8 (invalid start byte)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where}: not valid UTF-8 ({error.reason})") from None


def display_name(source: Source) -> str:
    """How errors name `source`: its path, or ``<stdin>`` for ``-``."""
    name = _fspath(source)
    return "<stdin>" if name == "-" else name


def is_plain_file(source: Source) -> bool:
    """Whether `source` is a regular file whose bytes are its text: not ``-``, not gzip by its
    name or its magic bytes, so it can be read in place or from any offset."""
    name = _fspath(source)
    if name == "-" or name.lower().endswith(".gz") or not os.path.isfile(name):
        return False
    with open(name, "rb") as stream:
        return stream.read(2) != _GZIP_MAGIC


@contextlib.contextmanager
def open_binary(source: Source) -> Iterator[IO[bytes]]:
    """A binary stream of `source`'s decompressed bytes, BOM not removed (see :func:`iter_chunks`)."""
    name = _fspath(source)
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


def read_some(stream: IO[bytes], size: int, name: str) -> bytes:
    """Up to `size` bytes of `stream` (all with -1); a truncated or corrupt gzip stream is an error naming `name`."""
    try:
        return stream.read(size)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        reason = "truncated gzip stream" if isinstance(error, EOFError) else f"corrupt gzip stream ({error})"
        raise ValueError(f"{name}: {reason}") from None


def reread(stream: IO[bytes], name: str) -> tuple[Callable[[int], bytes], int]:
    """A `read(size)` of what `open_binary` opened, again from its first byte, BOM dropped, through
    the descriptor already open; and how many bytes it holds (a gzip file's, from its trailer, or
    4x its size)."""
    stream.seek(0)
    first = True

    def read(size: int) -> bytes:
        nonlocal first
        more = read_some(stream, size, name)
        if first:
            first = False
            more = more[len(BOM) :] if more.startswith(BOM) else more
        return more

    fd = stream.fileno()
    size = os.fstat(fd).st_size
    if isinstance(stream, io.BufferedReader) or size < 4:
        return read, size
    # gzip: its last 4 bytes hold what it holds (mod 2^32, of its last member): at least 4x.
    tail = os.pread(fd, 4, size - 4) if hasattr(os, "pread") else b""
    return read, max(4 * size, int.from_bytes(tail, "little"))


class Spooled:
    """A pipe's bytes (decompressed, BOM dropped), read from it once, as they are asked for, and kept.

    A pipe cannot be read twice, and a run is: ranked whole when its queries turn out scattered,
    scored twice (``ef trec-eval -J`` takes the run id first), read whole by ``to_dict()``. The
    first `window` bytes are kept in memory (a small run makes no file); past them, every byte goes
    to an anonymous temporary file, unlinked at once, so that a long grouped pipe costs one window
    of memory and the rest is the page cache's, not the process's (a 90 MB pipe held as bytes took
    205 MB).
    """

    def __init__(self, source: Source, window: int) -> None:
        self.name = display_name(source)
        self._window = window
        stack = contextlib.ExitStack()
        self._stream: IO[bytes] | None = stack.enter_context(open_binary(source))  # opening errors now
        self._close = weakref.finalize(self, stack.close)  # a run never read to its end still closes
        self._first = True
        self._kept = bytearray()
        self._spool: IO[bytes] | None = None
        self._size = 0
        self._lost: OSError | None = None  # bytes read but not kept: every later read is refused

    def _pull(self, size: int) -> bytes:
        """Up to `size` more bytes of the pipe (all with -1), kept."""
        if self._lost is not None:
            raise self._lost
        if self._stream is None:
            return b""
        more = read_some(self._stream, size, self.name)
        if not more:
            self._stream = None
            self._close()
            return more
        if self._first:
            self._first = False
            more = more[len(BOM) :] if more.startswith(BOM) else more
        try:
            if self._spool is None and len(self._kept) + len(more) > self._window:
                self._spool = tempfile.TemporaryFile()  # noqa: SIM115  # closed when this is collected
                weakref.finalize(self, self._spool.close)
                self._spool.write(self._kept)
                self._kept = bytearray()
            if self._spool is None:
                self._kept += more
            else:
                self._spool.seek(0, os.SEEK_END)
                self._spool.write(more)
        except OSError as error:
            self._lost = OSError(
                f"{self.name}: cannot keep the run read from this pipe in {tempfile.gettempdir()} "
                f"({error.strerror or error}); set TMPDIR to a folder with room, or pass the run as a file"
            )
            raise self._lost from error
        self._size += len(more)
        return more

    def _kept_bytes(self, at: int, size: int) -> bytes:
        size = self._size - at if size < 0 else min(size, self._size - at)
        if self._spool is None:
            return bytes(self._kept[at : at + size])
        self._spool.seek(at)
        return self._spool.read(size)

    def reader(self) -> Callable[[int], bytes]:
        """A `read(size)` of the pipe's bytes from the first: those kept, then the pipe's next."""
        at = 0

        def read(size: int) -> bytes:
            nonlocal at
            got = self._kept_bytes(at, size) if at < self._size else b""
            if size < 0 or len(got) < size:
                got += self._pull(size - len(got) if size >= 0 else -1)
            at += len(got)
            return got

        return read

    def whole(self) -> bytes:
        """Every byte: the rest of the pipe read first (kept a window at a time), then all at once."""
        return self.again()[0](-1)

    def again(self) -> tuple[Callable[[int], bytes], int]:
        """A `read(size)` of every byte from the first, and how many there are (the rest of the
        pipe is read first, kept a window at a time)."""
        while self._stream is not None:
            self._pull(self._window)
        return self.reader(), self._size


def iter_chunks(source: Source, size: int = _CHUNK) -> Iterator[bytes]:
    """`source`'s bytes in chunks of about `size`, the leading BOM dropped; errors name `source`."""
    with open_binary(source) as stream:
        yield from _chunks(stream, size, display_name(source))


def _chunks(stream: IO[bytes], size: int, name: str) -> Iterator[bytes]:
    first = True
    while True:
        chunk = read_some(stream, size, name)
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
    with open_binary(source) as stream:
        raw = stream.raw if isinstance(stream, io.BufferedReader) else None
        if isinstance(raw, io.FileIO) and os.fspath(source) != "-" and raw.seekable():
            # A plain file: read at once into one buffer of its size (no chunks joined), from its
            # first byte (the descriptor's: the buffer's peek moved it on).
            raw.seek(0)
            data = raw.readall()
            return data[len(BOM) :] if data.startswith(BOM) else data
        return b"".join(_chunks(stream, _CHUNK, display_name(source)))


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


def text_bytes(value: Any, name: str, argument: str) -> tuple[str, bytes]:
    """A file's content given in memory, as the readers' bytes, and the name their errors give it: a
    str or bytes (the text), an open file (read whole; named by its path) or its lines (a list or a
    generator, ends or none), as pytrec_eval's and ir_measures' readers take them; `argument` names
    the parameter in a ``TypeError``.

    >>> text_bytes(["q1 0 d1 1", "q1 0 d2 0\\n"], "qrels", "f_qrel")
    ('qrels', b'q1 0 d1 1\\nq1 0 d2 0\\n')
    """
    if isinstance(value, str | bytes):
        data = value
    elif hasattr(value, "read"):
        data = value.read()
    elif isinstance(value, Iterable):
        lines = list(value)
        bad = next((line for line in lines if not isinstance(line, str)), None)
        if bad is not None:
            raise TypeError(f"{argument!r} lines must be str (got {type(bad).__name__}: {bad!r:.80})")
        data = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    else:
        raise TypeError(
            f"{argument!r} must be a path, the {name} text, an open file or its lines (got {type(value).__name__})"
        )
    return str(getattr(value, "name", name)), data.encode() if isinstance(data, str) else bytes(data)
