"""Segments: the pieces of a source document that an index stores and a search returns."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Segment"]


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
        if self.index < 0:
            raise ValueError(f"'index' must be >= 0 (got {self.index!r})")
        if not 0 <= self.start <= self.end:
            raise ValueError(f"'start' and 'end' must satisfy 0 <= start <= end (got {self.start}, {self.end})")
        if self.end - self.start != len(self.text):
            raise ValueError(
                f"'text' has {len(self.text)} characters but end - start is {self.end - self.start}"
            )
