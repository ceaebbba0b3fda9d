"""Chunks: the id encoding, validation, and the chunker."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrag import Chunk, chunk_id, chunk_pages, chunk_text


def prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def test_id_is_sha256_of_length_prefixed_utf8_fields() -> None:
    expected = hashlib.sha256(prefixed("ü/π".encode()) + prefixed(b"12") + prefixed("naïve\n".encode())).hexdigest()
    assert chunk_id("ü/π", 12, "naïve\n") == expected
    assert Chunk("ü/π", 12, "naïve\n").id == expected


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("ab", 0, "c"), ("a", 0, "bc")),
        (("a", 1, "2x"), ("a", 12, "x")),
        (("a\x00", 0, ""), ("a", 0, "\x00")),
    ],
)
def test_id_encoding_is_unambiguous(left: tuple[str, int, str], right: tuple[str, int, str]) -> None:
    assert chunk_id(*left) != chunk_id(*right)


def test_metadata_is_not_identity() -> None:
    assert Chunk("p", 0, "x", {"score": 1.0}) == Chunk("p", 0, "x", {"score": 2.0})
    assert hash(Chunk("p", 0, "x", {"score": 1.0})) == hash(Chunk("p", 0, "x"))


@pytest.mark.parametrize(
    ("args", "error_type", "message"),
    [
        (("", 0, "x"), ValueError, "'source_uri' must be a non-empty str (got '')"),
        ((7, 0, "x"), TypeError, "'source_uri' must be a non-empty str (got 7)"),
        (("p", -1, "x"), ValueError, "'chunk_index' must be a non-negative integer (got -1)"),
        (("p", True, "x"), TypeError, "'chunk_index' must be a non-negative integer (got True)"),
        (("p", 0, b"x"), TypeError, "'content' must be a str (got b'x')"),
        (("p", 0, "x", []), TypeError, "'metadata' must be a mapping (got list)"),
        (("p", 0, "\ud800"), ValueError, "'content' is not encodable as UTF-8: surrogates not allowed at 0"),
    ],
)
def test_bad_chunks_name_the_field(args: tuple[object, ...], error_type: type[Exception], message: str) -> None:
    with pytest.raises(error_type) as error:
        Chunk(*args)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_chunk_is_frozen_and_id_is_derived() -> None:
    chunk = Chunk("p", 0, "x")
    with pytest.raises(AttributeError):
        chunk.content = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Chunk("p", 0, "x", {}, "deadbeef")  # type: ignore[call-arg]


def test_from_dict_round_trip_and_errors() -> None:
    chunk = Chunk("p", 3, "text", {"start": 4})
    assert Chunk.from_dict(chunk.to_dict()) == chunk
    assert Chunk.from_dict(chunk.to_dict()).metadata == {"start": 4}
    with pytest.raises(ValueError, match=r"^unknown chunk field\(s\): url$"):
        Chunk.from_dict({**chunk.to_dict(), "url": "x"})
    with pytest.raises(ValueError, match=r"^a chunk needs 'content'$"):
        Chunk.from_dict({"source_uri": "p", "chunk_index": 0})


def test_chunk_text_hand_example_with_offsets() -> None:
    chunks = chunk_text("doc", "alpha beta gamma delta", size=12, overlap=6)
    assert [(c.chunk_index, c.content, c.metadata["start"], c.metadata["end"]) for c in chunks] == [
        (0, "alpha beta ", 0, 11),
        (1, " beta gamma ", 5, 17),  # starts overlap=6 characters before the previous end
        (2, "gamma delta", 11, 22),
    ]
    assert chunk_text("doc", "") == []
    assert chunk_text("doc", "   \n  ") == []


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, 0, "'size' must be a positive integer number of characters or None (got 0)"),
        (10, 10, "'overlap' must be smaller than 'size' (got overlap=10, size=10)"),
        (10, -1, "'overlap' must be a non-negative integer number of characters (got -1)"),
    ],
)
def test_chunk_text_bad_sizes(size: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError) as error:
        chunk_text("doc", "text", size=size, overlap=overlap)
    assert str(error.value) == message


def test_chunk_pages_errors() -> None:
    with pytest.raises(ValueError, match=r"^'pages' lists source_uri 'a' more than once$"):
        chunk_pages([("a", "x"), ("a", "y")])
    with pytest.raises(ValueError, match=r"^'pages' item 0 must be a \(source_uri, text\) pair \(got 'abc'\)$"):
        chunk_pages(["abc"])  # type: ignore[list-item]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab \n", max_size=120),
    size=st.integers(min_value=1, max_value=30),
    data=st.data(),
)
def test_chunks_cover_the_text_and_match_their_offsets(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    chunks = chunk_text("doc", text, size=size, overlap=overlap)
    covered = [False] * len(text)
    for position, chunk in enumerate(chunks):
        start, end = chunk.metadata["start"], chunk.metadata["end"]
        assert chunk.chunk_index == position
        assert chunk.content == text[start:end]
        assert 0 < len(chunk.content) <= size
        covered[start:end] = [True] * (end - start)
    # Every non-blank character lands in some chunk.
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def test_chunk_metadata_must_be_json_safe() -> None:
    import math

    import pytest

    from fastrag.documents import Chunk

    with pytest.raises(ValueError, match=r"^chunk 'p'#2: metadata\['score'\] is nan, which JSON cannot hold$"):
        Chunk("p", 2, "x", metadata={"score": math.nan})
    assert Chunk("p", 2, "x", metadata={"score": 1.5}).metadata == {"score": 1.5}
