"""Segments: the pieces of a source document that an index stores and a search returns.

A :class:`Segment` is one contiguous window of a source's text; :func:`segment_text` cuts a
source into overlapping windows of whole words, so a long document becomes several segments
and a short one stays a single segment. Offsets are character offsets into the source text,
so every hit can be traced back to the exact span it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from numbers import Integral

__all__ = ["Segment", "segment_text", "window_spans"]

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Segment:
    """A contiguous piece of one source document.

    ``text == source_text[start:end]``: the offsets are character offsets into the source's text,
    so a hit can always be traced back and highlighted.

    >>> seg = Segment(source_id="doc-1", index=0, text="Hello", start=0, end=5)
    >>> seg.source_id, seg.index, seg.end - seg.start
    ('doc-1', 0, 5)
    """

    source_id: str
    index: int
    text: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not isinstance(self.source_id, str) or not self.source_id:
            raise ValueError(f"'source_id' must be a non-empty str (got {self.source_id!r})")
        for name in ("index", "start", "end"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise TypeError(f"'{name}' must be an int (got {type(value).__name__})")
        if not isinstance(self.text, str):
            raise TypeError(f"'text' must be a str (got {type(self.text).__name__})")
        if self.index < 0:
            raise ValueError(f"'index' must be >= 0 (got {self.index!r})")
        if not 0 <= self.start <= self.end:
            raise ValueError(f"'start' and 'end' must satisfy 0 <= start <= end (got {self.start}, {self.end})")
        if self.end - self.start != len(self.text):
            raise ValueError(
                f"'text' has {len(self.text)} characters but end - start is {self.end - self.start}"
            )


def _check_window(size: int | None, overlap: int) -> None:
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(f"'size' must be a positive integer number of words or None (got {size!r})")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ValueError(f"'overlap' must be a non-negative integer number of words (got {overlap!r})")
    if size is not None and overlap >= size:
        raise ValueError(f"'overlap' must be smaller than 'size' (got overlap={overlap}, size={size})")
    if size is None and overlap:
        raise ValueError(f"'overlap' needs a window 'size' (got overlap={overlap}, size=None)")


def window_spans(text: str, *, size: int | None, overlap: int = 0) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans :func:`segment_text` cuts `text` into.

    >>> window_spans("a b c d e", size=3, overlap=1)
    [(0, 5), (4, 9)]
    """
    _check_window(size, overlap)
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


def segment_text(source_id: str, text: str, *, size: int | None = 200, overlap: int = 40) -> list[Segment]:
    """Cut one source's `text` into overlapping windows of whole words.

    Parameters
    ----------
    source_id
        The id of the source document; every segment carries it.
    text
        The source's full text.
    size
        Words per window (a word is a run of non-whitespace characters). A text of at most
        `size` words, and any text when `size` is ``None``, stays one segment spanning all of it.
    overlap
        Words each window shares with the previous one; must be smaller than `size`.

    Returns
    -------
    list[Segment]
        The windows in order, ``index`` counting from 0. The first starts at character 0 and the
        last ends at ``len(text)``; consecutive windows overlap by `overlap` words.

    Raises
    ------
    ValueError
        If `size` is not a positive integer or ``None``, if `overlap` is negative or not smaller
        than `size`, or if `source_id` is empty.

    Examples
    --------
    >>> [s.text for s in segment_text("d1", "one two three four five six", size=3, overlap=1)]
    ['one two three', 'three four five', 'five six']
    >>> segment_text("d1", "short text", size=3, overlap=1)
    [Segment(source_id='d1', index=0, text='short text', start=0, end=10)]
    """
    if not isinstance(text, str):
        raise TypeError(f"'text' of source {source_id!r} must be a str (got {type(text).__name__})")
    return [
        Segment(source_id, i, text[start:end], start, end)
        for i, (start, end) in enumerate(window_spans(text, size=size, overlap=overlap))
    ]
