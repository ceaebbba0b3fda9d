"""The pieces of source documents that an index stores and a search returns, and the one chunker.

Two records name a piece, one per vocabulary, and one function cuts every piece:

- :class:`Segment` (ef's): one contiguous window of a source's text, with character offsets into
  it, so every hit can be traced back to the exact span it came from.
- :class:`Chunk` (fastrag's, re-exported by :mod:`fastrag.documents`): a piece identified by
  ``sha256(source_uri, chunk_index, content)`` (see :func:`chunk_id`), with free-form metadata.
- :func:`window_spans` is the chunker: it cuts a text into overlapping windows counted in whole
  words (``unit="words"``) or in characters (``unit="chars"``, each window ending at whitespace
  when it can). :func:`segment_text` (words, 200/40) and :func:`fastrag.documents.chunk_text`
  (characters, 1000/200) are thin calls of it, with their own defaults.

>>> window_spans("one two three four", size=2, overlap=0)  # words
[(0, 7), (8, 18)]
>>> window_spans("one two three four", size=9, overlap=0, unit="chars")
[(0, 8), (8, 14), (14, 18)]
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ef._validate import (
    check_choice,
    check_instance,
    check_non_empty_str,
    check_non_negative_int,
    check_positive_int,
    check_str,
    describe,
    find_not_json,
    to_plain,
)

__all__ = ["UNITS", "Chunk", "Segment", "Unit", "chunk_id", "segment_text", "window_spans"]

Unit = Literal["words", "chars"]
UNITS: tuple[Unit, ...] = ("words", "chars")
"""What a window's `size` and `overlap` count: whole words, or characters."""

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Segment:
    """A contiguous piece of one source document.

    ``text == source_text[start:end]``: the offsets are character offsets into the source's text,
    so a hit can always be traced back and highlighted.

    >>> seg = Segment(source_id="doc-1", index=0, text="Hello", start=0, end=5)
    >>> seg.source_id, seg.index, seg.end - seg.start
    ('doc-1', 0, 5)
    >>> Segment("doc-1", -1, "Hello", 0, 5)
    Traceback (most recent call last):
    ...
    ValueError: 'index' must be a non-negative integer (got -1)
    """

    source_id: str
    index: int
    text: str
    start: int
    end: int

    def __post_init__(self) -> None:
        check_non_empty_str(self.source_id, "source_id")
        # Stored as Python ints: numpy.int64 offsets would not survive json.dumps in a saved index.
        for name in ("index", "start", "end"):
            object.__setattr__(self, name, check_non_negative_int(getattr(self, name), name))
        check_str(self.text, "text")
        if self.start > self.end:
            raise ValueError(f"'start' must be at most 'end' (got start={self.start}, end={self.end})")
        if self.end - self.start != len(self.text):
            raise ValueError(
                f"'text' must have end - start = {self.end - self.start} characters (got {len(self.text)})"
            )


def _field_bytes(name: str, value: str) -> bytes:
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as error:
        # A lone surrogate has no UTF-8 form, so no stable id: refuse rather than guess.
        raise ValueError(f"'{name}' is not encodable as UTF-8: {error.reason} at {error.start}") from None
    return len(data).to_bytes(8, "big") + data


def chunk_id(source_uri: str, chunk_index: int, content: str) -> str:
    """The id of a chunk: the hex sha256 of its three identifying fields.

    Encoding: each field as UTF-8 bytes prefixed by its byte length as an 8-byte big-endian
    unsigned integer, concatenated in the order ``source_uri``, ``chunk_index`` (as its decimal
    ASCII form, e.g. ``"3"``), ``content``. Length prefixes make the encoding injective: no two
    different triples hash the same bytes, whatever characters the fields contain.

    Parameters
    ----------
    source_uri
        The page the chunk was cut from.
    chunk_index
        The chunk's 0-based position within that page.
    content
        The chunk's text.

    Returns
    -------
    str
        64 lowercase hex digits.

    Examples
    --------
    >>> chunk_id("https://example.org/a", 0, "Hello")
    'f60e0c98aa1505ec3344150d5842115c397d39221aa055bfbb45e6f75a301694'
    >>> import hashlib  # the same digest, spelled out
    >>> field = lambda data: len(data).to_bytes(8, "big") + data
    >>> hashlib.sha256(field(b"https://example.org/a") + field(b"0") + field(b"Hello")).hexdigest()[:16]
    'f60e0c98aa1505ec'
    >>> chunk_id("ab", 0, "c") == chunk_id("a", 0, "bc")  # the length prefix tells them apart
    False
    """
    digest = hashlib.sha256()
    digest.update(_field_bytes("source_uri", source_uri))
    digest.update(_field_bytes("chunk_index", str(chunk_index)))
    digest.update(_field_bytes("content", content))
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable piece of a source page; ``id`` is derived, never passed.

    Parameters
    ----------
    source_uri
        The page the chunk comes from (a URL, a path, an ef source id); non-empty.
    chunk_index
        0-based position of the chunk within its page.
    content
        The chunk's text.
    metadata
        Free-form JSON-ready extras (offsets, scores, titles); not part of the id, nor of
        equality or the hash. Stored as a copy in which numpy scalars and arrays are Python
        numbers and lists; what JSON cannot hold (NaN, a set, a datetime, a key that is not a
        string) is a ``ValueError``.

    Examples
    --------
    >>> chunk = Chunk("doc-1", 0, "Hello")
    >>> chunk.id == chunk_id("doc-1", 0, "Hello")
    True
    >>> Chunk("doc-1", -1, "Hello")
    Traceback (most recent call last):
    ...
    ValueError: 'chunk_index' must be a non-negative integer (got -1)
    """

    source_uri: str
    chunk_index: int
    content: str
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    id: str = field(init=False)

    def __post_init__(self) -> None:
        check_non_empty_str(self.source_uri, "source_uri")
        # numpy.int64(3) is stored (and hashed) as 3
        object.__setattr__(self, "chunk_index", check_non_negative_int(self.chunk_index, "chunk_index"))
        check_str(self.content, "content")
        check_instance(self.metadata, "metadata", Mapping, what="a mapping")
        if self.metadata:
            object.__setattr__(self, "metadata", to_plain(self.metadata))
            # Outcomes are saved as JSON, which cannot hold NaN, a set or a datetime: refuse them
            # here, at the source, rather than when a run writes its results file.
            bad = find_not_json(self.metadata, "metadata")
            if bad is not None:
                raise ValueError(f"chunk {self.source_uri!r}#{self.chunk_index}: {bad}")
        # Stored once: the metrics read ids for every sample, hashing each time would be waste.
        object.__setattr__(self, "id", chunk_id(self.source_uri, self.chunk_index, self.content))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``id`` included so a reader can check it.

        >>> Chunk("p", 1, "x").to_dict()["chunk_index"]
        1
        """
        return {
            "id": self.id,
            "source_uri": self.source_uri,
            "chunk_index": self.chunk_index,
            "content": self.content,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chunk:
        """Rebuild a chunk from :meth:`to_dict` output; a stored ``id`` must match the fields.

        >>> chunk = Chunk("p", 1, "x")
        >>> Chunk.from_dict(chunk.to_dict()) == chunk
        True
        >>> Chunk.from_dict({**chunk.to_dict(), "content": "y"})
        Traceback (most recent call last):
        ...
        ValueError: 'id' does not match sha256(source_uri, chunk_index, content): the chunk was edited
        """
        check_instance(data, "chunk", Mapping, what="a JSON object")
        unknown = set(data) - {"id", "source_uri", "chunk_index", "content", "metadata"}
        if unknown:
            raise ValueError(f"unknown chunk field(s): {', '.join(sorted(unknown))}")
        for required in ("source_uri", "chunk_index", "content"):
            if required not in data:
                raise ValueError(f"a chunk needs '{required}'")
        metadata = data.get("metadata")  # absent or null is none; [] or "" is a mistake, not {}
        chunk = cls(data["source_uri"], data["chunk_index"], data["content"], {} if metadata is None else metadata)
        if "id" in data and data["id"] != chunk.id:
            raise ValueError("'id' does not match sha256(source_uri, chunk_index, content): the chunk was edited")
        return chunk


def _check_window(size: int | None, overlap: int, unit: str) -> tuple[int | None, int]:
    """`size` and `overlap` as Python ints, after checking they make a window of `unit`."""
    noun = "words" if unit == "words" else "characters"
    if size is not None:
        size = check_positive_int(size, "size", what=f"a positive integer number of {noun} or None")
    overlap = check_non_negative_int(overlap, "overlap", what=f"a non-negative integer number of {noun}")
    if size is not None and overlap >= size:
        raise ValueError(f"'overlap' must be smaller than 'size' (got overlap={overlap}, size={size})")
    if size is None and overlap:
        raise ValueError(f"'overlap' needs a window 'size' (got overlap={overlap}, size=None)")
    return size, overlap


def window_spans(
    text: str, *, size: int | None, overlap: int = 0, unit: Unit = "words"
) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of the overlapping windows that cut `text`: the chunker.

    Parameters
    ----------
    text
        The text to cut.
    size
        The window's length in `unit`\\ s; ``None`` makes one window of the whole text.
    overlap
        How much of each window the next one repeats, in `unit`\\ s; smaller than `size`.
    unit
        ``"words"``: windows of `size` whole words (a word is a run of non-whitespace), the first
        starting at 0 and the last ending at ``len(text)``, so together they cover the text; a
        text of at most `size` words is one window. ``"chars"``: windows of at most `size`
        characters, each ending at the last whitespace inside it when that keeps at least half
        the window (so words are not split), the next starting `overlap` characters before that
        end; an empty text has no window.

    Raises
    ------
    TypeError
        If `size` or `overlap` is not an integer (``size`` may be ``None``), `text` not a str.
    ValueError
        If `size` is below 1, `overlap` negative or not smaller than `size`, or `unit` unknown.

    Examples
    --------
    >>> window_spans("a b c d e", size=3, overlap=1)
    [(0, 5), (4, 9)]
    >>> window_spans("abcdefghij", size=4, overlap=1, unit="chars")
    [(0, 4), (3, 7), (6, 10)]
    """
    check_choice(unit, "unit", UNITS)
    size, overlap = _check_window(size, overlap, unit)
    check_str(text, "text")
    if unit == "chars":
        return _char_spans(text, size, overlap)
    if size is None:
        return [(0, len(text))]
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if len(words) <= size:
        return [(0, len(text))]
    step = size - overlap
    # Stop before a window that would hold nothing but the previous window's overlap.
    firsts = range(0, len(words) - overlap, step)
    spans = []
    for i, first in enumerate(firsts):
        last = min(first + size, len(words)) - 1
        # The first window starts at 0 and the last ends at len(text), so the windows cover the
        # whole text, leading and trailing whitespace included.
        start = 0 if i == 0 else words[first][0]
        end = len(text) if i == len(firsts) - 1 else words[last][1]
        spans.append((start, end))
    return spans


def _char_spans(text: str, size: int | None, overlap: int) -> list[tuple[int, int]]:
    if size is None:
        return [(0, len(text))] if text else []
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end)) + 1
            if cut - start >= math.ceil(size / 2):
                end = cut
        spans.append((start, end))
        if end == len(text):
            break
        start = max(end - overlap, start + 1)  # always advance, even when overlap eats the window
    return spans


def segment_text(
    source_id: str, text: str, *, size: int | None = 200, overlap: int = 40, unit: Unit = "words"
) -> list[Segment]:
    """Cut one source's `text` into overlapping windows (:func:`window_spans`), as segments.

    Parameters
    ----------
    source_id
        The id of the source document; every segment carries it.
    text
        The source's full text.
    size
        Window length in `unit`\\ s (a word is a run of non-whitespace characters). A text of at
        most `size` words, and any text when `size` is ``None``, stays one segment spanning all of it.
    overlap
        How much each window shares with the previous one; must be smaller than `size`.
    unit
        ``"words"`` (the default) or ``"chars"`` — see :func:`window_spans`.

    Returns
    -------
    list[Segment]
        The windows in order, ``index`` counting from 0. In words, the first starts at character 0
        and the last ends at ``len(text)``; consecutive windows overlap by `overlap` words.

    Raises
    ------
    TypeError
        If `source_id` or `text` is not a str, `size` not an integer or ``None``, `overlap` not an integer.
    ValueError
        If `size` is below 1, if `overlap` is negative or not smaller than `size`, or if
        `source_id` is empty.

    Examples
    --------
    >>> [s.text for s in segment_text("d1", "one two three four five six", size=3, overlap=1)]
    ['one two three', 'three four five', 'five six']
    >>> segment_text("d1", "short text", size=3, overlap=1)
    [Segment(source_id='d1', index=0, text='short text', start=0, end=10)]
    >>> [s.text for s in segment_text("d1", "one two three", size=8, overlap=0, unit="chars")]
    ['one two ', 'three']
    """
    if not isinstance(text, str):  # names the source: one of thousands ingested
        raise TypeError(f"'text' of source {source_id!r} must be a str (got {describe(text)})")
    spans = window_spans(text, size=size, overlap=overlap, unit=unit) or [(0, 0)]  # a source is >= 1 segment
    return [Segment(source_id, i, text[start:end], start, end) for i, (start, end) in enumerate(spans)]
