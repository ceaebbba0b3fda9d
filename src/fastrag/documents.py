"""Chunks: the retrievable pieces of source pages, with content-derived ids, and the chunker.

A :class:`Chunk` is identified by ``sha256(source_uri, chunk_index, content)``. The three fields
are hashed in one unambiguous encoding (see :func:`chunk_id`), so the same text cut the same way
always has the same id, and any change of chunker configuration gives new ids — which is why the
retrieval metrics can also compare at page level (``key="source_uri"``).

:class:`Chunk` and :func:`chunk_id` are defined with ef's :class:`~ef.segments.Segment` in
:mod:`ef.segments` (one data model for both packages), and :func:`chunk_text` cuts with ef's one
chunker, :func:`ef.segments.window_spans`, counting characters by default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ef.segments import Chunk, Unit, chunk_id, window_spans

__all__ = ["Chunk", "chunk_id", "chunk_pages", "chunk_text"]


def chunk_text(
    source_uri: str, text: str, *, size: int = 1000, overlap: int = 200, unit: Unit = "chars"
) -> list[Chunk]:
    """Cut one page into overlapping chunks of at most `size` characters (or words).

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
    unit
        ``"chars"`` (the default) or ``"words"``: windows of whole words, as ef's
        :func:`~ef.segments.segment_text` cuts them (see :func:`ef.segments.window_spans`).

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
    >>> [c.content for c in chunk_text("p", "one two three four", size=2, overlap=0, unit="words")]
    ['one two', 'three four']
    >>> chunk_text("p", "abc", size=4, overlap=4)
    Traceback (most recent call last):
    ...
    ValueError: 'overlap' must be smaller than 'size' (got overlap=4, size=4)
    """
    spans = window_spans(text, size=size, overlap=overlap, unit=unit)
    pieces = [(start, end) for start, end in spans if text[start:end].strip()]
    return [
        Chunk(source_uri, index, text[start:end], {"start": start, "end": end})
        for index, (start, end) in enumerate(pieces)
    ]


def chunk_pages(
    pages: Mapping[str, str] | Iterable[tuple[str, str]], *, size: int = 1000, overlap: int = 200, unit: Unit = "chars"
) -> list[Chunk]:
    """Chunk many pages with :func:`chunk_text`; `pages` maps (or pairs) source_uri → text.

    >>> chunks = chunk_pages({"a": "alpha beta", "b": "gamma"}, size=6, overlap=0)
    >>> [(c.source_uri, c.chunk_index, c.content) for c in chunks]
    [('a', 0, 'alpha '), ('a', 1, 'beta'), ('b', 0, 'gamma')]
    """
    window_spans("", size=size, overlap=overlap, unit=unit)  # checks the window before any page
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
        out.extend(chunk_text(source_uri, text, size=size, overlap=overlap, unit=unit))
    return out
