"""Chunks: the retrievable pieces of source pages, with content-derived ids, and a chunker.

A :class:`Chunk` is identified by ``sha256(source_uri, chunk_index, content)``. The three fields
are hashed in one unambiguous encoding (see :func:`chunk_id`), so the same text cut the same way
always has the same id, and any change of chunker configuration gives new ids — which is why the
retrieval metrics can also compare at page level (``key="source_uri"``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

__all__ = ["Chunk", "chunk_id", "chunk_pages", "chunk_text"]


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


def _plain(value: object) -> object:
    """`value` with numpy scalars and arrays, at any depth, turned into Python numbers and lists.

    Vector stores hand back ``numpy.float32`` scores; JSON cannot write them, and
    ``isinstance(numpy.float32(nan), float)`` is false, so they would slip past the NaN check.

    >>> import numpy as np
    >>> _plain({"score": np.float32(0.5), "ids": np.array([1, 2]), "n": [np.int64(3)]})
    {'score': 0.5, 'ids': [1, 2], 'n': [3]}
    """
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return _plain(value.tolist())  # a numpy scalar's tolist() is its Python number, an array's a list
    return value


def _non_finite(value: object, where: str) -> tuple[str, float] | None:
    """The path and value of the first NaN or infinity inside `value` (dicts and lists), if any.

    >>> _non_finite({"a": [1.0, {"b": float("inf")}]}, "metadata")
    ("metadata['a'][1]['b']", inf)
    """
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, Mapping):
        items: Iterable[tuple[object, object]] = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _non_finite(item, f"{where}[{key!r}]")
        if found is not None:
            return found
    return None


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
        numbers and lists; NaN or infinity is a ``ValueError``.

    Examples
    --------
    >>> chunk = Chunk("doc-1", 0, "Hello")
    >>> chunk.id == chunk_id("doc-1", 0, "Hello")
    True
    >>> Chunk("doc-1", -1, "Hello")
    Traceback (most recent call last):
    ...
    ValueError: 'chunk_index' must be an int >= 0 (got -1)
    """

    source_uri: str
    chunk_index: int
    content: str
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    id: str = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.source_uri, str) or not self.source_uri:
            raise ValueError(f"'source_uri' must be a non-empty str (got {self.source_uri!r})")
        index: object = self.chunk_index
        if isinstance(index, bool) or not isinstance(index, Integral) or int(index) < 0:
            raise ValueError(f"'chunk_index' must be an int >= 0 (got {self.chunk_index!r})")
        object.__setattr__(self, "chunk_index", int(index))  # numpy.int64(3) is stored (and hashed) as 3
        if not isinstance(self.content, str):
            raise ValueError(f"'content' must be a str (got {type(self.content).__name__})")
        if not isinstance(self.metadata, Mapping):
            raise ValueError(f"'metadata' must be a mapping (got {type(self.metadata).__name__})")
        if self.metadata:
            object.__setattr__(self, "metadata", _plain(self.metadata))
        # Outcomes are saved as JSON, which cannot hold NaN or infinity: refuse them here, at the source.
        bad = _non_finite(self.metadata, "metadata") if self.metadata else None
        if bad is not None:
            where = f"chunk {self.source_uri!r}#{self.chunk_index}"
            raise ValueError(f"{where}: {bad[0]} is {bad[1]!r}, which JSON cannot hold")
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
        if not isinstance(data, Mapping):
            raise ValueError(f"a chunk must be a JSON object (got {type(data).__name__})")
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


def _check_sizes(size: int, overlap: int) -> tuple[int, int]:
    """`size` and `overlap` as Python ints (numpy integers count)."""
    given_size: object = size  # callers pass anything: check it as such
    given_overlap: object = overlap
    if isinstance(given_size, bool) or not isinstance(given_size, Integral) or int(given_size) < 1:
        raise ValueError(f"'size' must be a positive integer (got {size!r})")
    if (
        isinstance(given_overlap, bool)
        or not isinstance(given_overlap, Integral)
        or not 0 <= int(given_overlap) < int(given_size)
    ):
        raise ValueError(f"'overlap' must be an integer with 0 <= overlap < size={size} (got {overlap!r})")
    return int(given_size), int(given_overlap)


def chunk_text(source_uri: str, text: str, *, size: int = 1000, overlap: int = 200) -> list[Chunk]:
    """Cut one page into overlapping chunks of at most `size` characters.

    Each window ends at the last whitespace inside it when that keeps at least half the window,
    so words are not split; the next window starts `overlap` characters before the previous end.
    Whitespace-only pieces are skipped. ``metadata`` holds the ``start`` and ``end`` character
    offsets of each chunk in `text` (``content == text[start:end]``).

    Parameters
    ----------
    source_uri
        The page's identifier, copied to every chunk.
    text
        The page's text.
    size
        Maximum chunk length in characters.
    overlap
        Characters shared by consecutive chunks, ``0 <= overlap < size``.

    Returns
    -------
    list of Chunk
        Numbered ``0, 1, …`` in page order; empty for an empty or blank page.

    Examples
    --------
    >>> [c.content for c in chunk_text("p", "one two three four", size=9, overlap=0)]
    ['one two ', 'three ', 'four']
    >>> [c.content for c in chunk_text("p", "abcdefghij", size=4, overlap=1)]
    ['abcd', 'defg', 'ghij']
    >>> chunk_text("p", "abc", size=4, overlap=4)
    Traceback (most recent call last):
    ...
    ValueError: 'overlap' must be an integer with 0 <= overlap < size=4 (got 4)
    """
    size, overlap = _check_sizes(size, overlap)
    if not isinstance(text, str):
        raise ValueError(f"'text' must be a str (got {type(text).__name__})")
    chunks: list[Chunk] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end)) + 1
            if cut - start >= math.ceil(size / 2):
                end = cut
        piece = text[start:end]
        if piece.strip():
            chunks.append(Chunk(source_uri, len(chunks), piece, {"start": start, "end": end}))
        if end == len(text):
            break
        start = max(end - overlap, start + 1)  # always advance, even when overlap eats the window
    return chunks


def chunk_pages(
    pages: Mapping[str, str] | Iterable[tuple[str, str]], *, size: int = 1000, overlap: int = 200
) -> list[Chunk]:
    """Chunk many pages with :func:`chunk_text`; `pages` maps (or pairs) source_uri → text.

    >>> chunks = chunk_pages({"a": "alpha beta", "b": "gamma"}, size=6, overlap=0)
    >>> [(c.source_uri, c.chunk_index, c.content) for c in chunks]
    [('a', 0, 'alpha '), ('a', 1, 'beta'), ('b', 0, 'gamma')]
    """
    size, overlap = _check_sizes(size, overlap)
    items = pages.items() if isinstance(pages, Mapping) else pages
    out: list[Chunk] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ValueError(f"'pages' item {position} must be a (source_uri, text) pair (got {item!r:.60})")
        source_uri, text = item
        if source_uri in seen:
            raise ValueError(f"'pages' lists source_uri {source_uri!r} more than once")
        seen.add(source_uri)
        out.extend(chunk_text(source_uri, text, size=size, overlap=overlap))
    return out
