"""Source texts kept on disk and read back one at a time: what an index built or loaded for Ray keeps.

On ``engine="ray"`` the driver must not hold the corpus: the texts go to the encoding actors block
by block, and afterwards the driver needs a text only for the segments a search returns (or to
save or fingerprint the index, which reads them again in order). :class:`DiskTexts` keeps, per
text, its byte offset and size in a file (8 bytes each), so the driver's memory grows with the
number of documents, not their length. :class:`SegmentTexts` is the segment-level view an index
encodes from.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, overload

__all__ = ["DiskTexts", "SegmentTexts"]


class DiskTexts(Sequence[str]):
    """Texts in a binary file, read back by position.

    Either a scratch file this object writes (:meth:`spool`: UTF-8 texts end to end, gone when the
    object is) or an index's ``sources.jsonl`` (:meth:`jsonl`: each text is its line's ``"text"``).
    The file stays open, so an index folder replaced on disk (``save(overwrite=True)``) does not
    change the texts of a collection that was loaded from it.

    >>> texts = DiskTexts.spool()
    >>> texts.append("héllo"); texts.append("world")
    >>> len(texts), texts[0], texts[-1], texts[0:2], list(texts)
    (2, 'héllo', 'world', ['héllo', 'world'], ['héllo', 'world'])
    """

    def __init__(self, file: IO[bytes], *, jsonl: bool) -> None:
        self._file = file
        self._jsonl = jsonl
        self._offsets = array("q")
        self._sizes = array("q")
        self._end = 0  # where the next spooled text goes
        self._dirty = False  # written but maybe still in the file object's buffer
        self._lock = threading.Lock()  # seek + read where os.pread is missing (Windows)

    @classmethod
    def spool(cls) -> DiskTexts:
        """An empty store in a scratch file (deleted on close; on POSIX it has no name at all)."""
        return cls(tempfile.TemporaryFile(prefix="ef-texts-"), jsonl=False)

    @classmethod
    def jsonl(cls, path: Path) -> tuple[DiskTexts, Iterator[tuple[int, Any]]]:
        """A store over the records of `path` and an iterator of ``(line number, record)`` that fills it.

        Each non-blank line's offset is kept as the iterator passes it; the caller checks the records
        (a record must hold a str ``"text"`` for the store to read it back).
        """
        store = cls(open(path, "rb"), jsonl=True)  # noqa: SIM115 - kept open for the store's lifetime
        return store, store._records(path)

    def _records(self, path: Path) -> Iterator[tuple[int, Any]]:
        self._file.seek(0)
        offset = 0
        for number, line in enumerate(self._file, 1):
            if line.strip():
                try:
                    record = json.loads(line)
                except ValueError as error:  # UnicodeDecodeError is one
                    raise ValueError(f"{path}:{number}: not a JSON line ({error})") from error
                self._offsets.append(offset)
                self._sizes.append(len(line))
                yield number, record
            offset += len(line)

    def append(self, text: str) -> None:
        data = text.encode("utf-8")
        if self._jsonl:  # pragma: no cover - an index's sources file is read, never written here
            raise RuntimeError("texts read from an index's sources file cannot grow")
        with self._lock:
            self._file.seek(self._end)
            self._file.write(data)
            self._dirty = True
        self._offsets.append(self._end)
        self._sizes.append(len(data))
        self._end += len(data)

    def truncate(self, length: int) -> None:
        """Forget the texts from position `length` on (a failed add leaves the store as it was)."""
        del self._offsets[length:], self._sizes[length:]
        self._end = self._offsets[-1] + self._sizes[-1] if self._offsets else 0

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, position: int) -> str: ...

    @overload
    def __getitem__(self, position: slice) -> list[str]: ...

    def __getitem__(self, position: int | slice) -> str | list[str]:
        if isinstance(position, slice):
            return [self._read(i) for i in range(*position.indices(len(self)))]
        n = len(self)
        if not -n <= position < n:
            raise IndexError(f"text {position} of {n}")
        return self._read(position % n)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield self._read(i)

    def _read(self, i: int) -> str:
        offset, size = self._offsets[i], self._sizes[i]
        if self._dirty:
            with self._lock:
                self._file.flush()
                self._dirty = False
        if hasattr(os, "pread"):
            data = os.pread(self._file.fileno(), size, offset)
        else:  # pragma: no cover - Windows
            with self._lock:
                self._file.seek(offset)
                data = self._file.read(size)
        if len(data) != size:
            raise ValueError(f"{self._file.name}: {size} bytes expected at offset {offset}, found {len(data)}; "
                             "the file changed after it was read")
        if self._jsonl:
            return str(json.loads(data)["text"])
        return data.decode("utf-8")

    def close(self) -> None:
        self._file.close()


class SegmentTexts(Sequence[str]):
    """Segment ``k``'s text, ``sources[source[k]][start[k]:end[k]]``, read when asked for.

    A slice reads each source once for its run of segments (a document cut into windows is read
    once per slice, not once per window).

    >>> texts = SegmentTexts(["one two three", "four"], [0, 0, 1], [0, 4, 0], [3, 13, 4])
    >>> len(texts), texts[1], texts[0:3]
    (3, 'two three', ['one', 'two three', 'four'])
    """

    def __init__(self, sources: Sequence[str], source: Sequence[int], start: Sequence[int],
                 end: Sequence[int]) -> None:
        self._sources = sources
        self._source, self._start, self._end = source, start, end

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, position: int) -> str: ...

    @overload
    def __getitem__(self, position: slice) -> list[str]: ...

    def __getitem__(self, position: int | slice) -> str | list[str]:
        if isinstance(position, slice):
            out: list[str] = []
            last, text = -1, ""
            for k in range(*position.indices(len(self))):
                if self._source[k] != last:
                    last = self._source[k]
                    text = self._sources[last]
                out.append(text[self._start[k] : self._end[k]])
            return out
        k = range(len(self))[position]  # IndexError as a list gives it
        return self._sources[self._source[k]][self._start[k] : self._end[k]]

    def __iter__(self) -> Iterator[str]:
        last, text = -1, ""
        for k in range(len(self)):  # one text held at a time, each source read once for its run of segments
            if self._source[k] != last:
                last = self._source[k]
                text = self._sources[last]
            yield text[self._start[k] : self._end[k]]
