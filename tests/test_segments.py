"""ef.segments: the Segment record and the overlapping-window segmenter."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.segments import Segment, segment_text, window_spans


def test_long_text_becomes_overlapping_windows_with_exact_offsets() -> None:
    text = "  alpha beta gamma\tdelta epsilon zeta eta  "
    segments = segment_text("doc", text, size=3, overlap=1)
    assert [(s.index, s.text, s.start, s.end) for s in segments] == [
        (0, "  alpha beta gamma", 0, 18),
        (1, "gamma\tdelta epsilon", 13, 32),
        (2, "epsilon zeta eta  ", 25, 43),
    ]
    assert all(s.source_id == "doc" and text[s.start : s.end] == s.text for s in segments)


def test_short_text_stays_one_segment_spanning_all_of_it() -> None:
    assert segment_text("d", " a b c ", size=3, overlap=2) == [Segment("d", 0, " a b c ", 0, 7)]


def test_size_none_keeps_any_text_whole() -> None:
    text = " ".join(["word"] * 1000)
    assert segment_text("d", text, size=None, overlap=0) == [Segment("d", 0, text, 0, len(text))]


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_or_blank_text_is_one_segment(text: str) -> None:
    assert segment_text("d", text, size=2, overlap=1) == [Segment("d", 0, text, 0, len(text))]


def test_no_window_holds_only_the_previous_overlap() -> None:
    # 5 words, size 4, overlap 2: windows start at words 0 and 2; a third at word 4 would add nothing new.
    assert window_spans("a b c d e", size=4, overlap=2) == [(0, 7), (4, 9)]


def test_zero_overlap_tiles_the_words() -> None:
    assert [s.text for s in segment_text("d", "a b c d e", size=2, overlap=0)] == ["a b", "c d", "e"]


@pytest.mark.parametrize(
    ("size", "overlap", "error", "message"),
    [
        (0, 0, ValueError, "'size' must be a positive integer number of words or None (got 0)"),
        (True, 0, TypeError, "'size' must be a positive integer number of words or None (got True)"),
        (2.5, 0, TypeError, "'size' must be a positive integer number of words or None (got 2.5)"),
        (3, -1, ValueError, "'overlap' must be a non-negative integer number of words (got -1)"),
        (3, 3, ValueError, "'overlap' must be smaller than 'size' (got overlap=3, size=3)"),
        (None, 2, ValueError, "'overlap' needs a window 'size' (got overlap=2, size=None)"),
    ],
)
def test_bad_window_parameters_are_named(size: object, overlap: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        segment_text("d", "a b c d", size=size, overlap=overlap)  # type: ignore[arg-type]


def test_non_str_text_is_a_type_error_naming_the_source() -> None:
    with pytest.raises(TypeError, match=r"^'text' of source 'd7' must be a str \(got 42\)$"):
        segment_text("d7", 42)  # type: ignore[arg-type]


def test_empty_source_id_is_rejected_by_segment() -> None:
    with pytest.raises(ValueError, match=r"'source_id' must be a non-empty str \(got ''\)"):
        segment_text("", "text")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"index": -1}, ValueError, "'index' must be a non-negative integer (got -1)"),
        ({"index": 0.5}, TypeError, "'index' must be a non-negative integer (got 0.5)"),
        ({"start": -1}, ValueError, "'start' must be a non-negative integer (got -1)"),
        ({"start": 3, "end": 2, "text": ""}, ValueError, "'start' must be at most 'end' (got start=3, end=2)"),
        ({"text": "abc"}, ValueError, "'text' must have end - start = 5 characters (got 3)"),
        ({"text": b"Hello"}, TypeError, "'text' must be a str (got b'Hello')"),
        ({"source_id": 1}, TypeError, "'source_id' must be a non-empty str (got 1)"),
    ],
)
def test_segment_validation(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    fields: dict[str, object] = {"source_id": "d", "index": 0, "text": "Hello", "start": 0, "end": 5}
    fields.update(kwargs)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Segment(**fields)  # type: ignore[arg-type]


def test_segment_is_frozen() -> None:
    seg = Segment("d", 0, "x", 0, 1)
    with pytest.raises(AttributeError):
        seg.text = "y"  # type: ignore[misc]


@given(
    words=st.lists(st.text(alphabet="abc", min_size=1, max_size=4), max_size=40),
    gaps=st.lists(st.sampled_from([" ", "  ", "\n", "\t "]), min_size=41, max_size=41),
    size=st.integers(1, 8),
    data=st.data(),
)
def test_windows_cover_the_text_and_share_exactly_overlap_words(
    words: list[str], gaps: list[str], size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    text = gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:], strict=False))
    segments = segment_text("d", text, size=size, overlap=overlap)
    assert [s.index for s in segments] == list(range(len(segments)))
    assert segments[0].start == 0
    assert segments[-1].end == len(text)
    assert all(text[s.start : s.end] == s.text for s in segments)
    counts = [len(s.text.split()) for s in segments]
    if len(words) <= size:
        assert len(segments) == 1
    else:
        assert all(c <= size for c in counts)
        for before, after in itertools.pairwise(segments):
            shared = text[after.start : before.end].split() if after.start < before.end else []
            assert len(shared) == overlap
        # Every word is in some window, and windows advance by size - overlap words.
        assert sum(counts) - overlap * (len(segments) - 1) == len(words)
