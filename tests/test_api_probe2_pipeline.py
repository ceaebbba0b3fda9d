"""ef.pipeline probed: an infinite k1 made a Pipeline whose id failed (JSON holds no infinity),
model='' was taken for the default model, and collapse_to_sources took a NaN score (the source's
score then hung on the order of its chunks), a missing chunk (a bare KeyError), a None source and
runs of the wrong shape (AttributeError). Each is now an exception naming the argument."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ef.pipeline import Pipeline, collapse_to_sources


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


def by_hash(chunk: str) -> str:
    return chunk.split("#")[0]


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"k1": float("inf")}, ValueError, "'k1' must be a finite number (got inf)"),
        ({"retriever": "dense", "model": ""}, ValueError, "'model' must be a non-empty str (got '')"),
        ({"retriever": "hybrid", "model": ""}, ValueError, "'model' must be a non-empty str (got '')"),
    ],
)
def test_a_pipeline_refuses(fields: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        Pipeline(**fields)


def test_none_is_still_the_default_model() -> None:
    assert Pipeline("dense").model == Pipeline("dense", model=None).model == "all-MiniLM-L6-v2"
    assert len(Pipeline(k1=1e308).id) == 16  # finite, however large: its id is made


@pytest.mark.parametrize(
    ("run", "source_of", "error", "message"),
    [
        (None, by_hash, TypeError, "'run' must be a mapping {query_id: {chunk_id: score}} (got None)"),
        ([("q", {})], by_hash, TypeError, "'run' must be a mapping {query_id: {chunk_id: score}} (got list)"),
        ({"q": {"a#0": 1.0}}, 3, TypeError, "'source_of' must be a mapping chunk_id -> source id or a function "
                                            "(got 3)"),
        ({"q": "ab"}, by_hash, TypeError, "'run'['q'] must be a mapping {chunk_id: score} or a list of "
                                          "(chunk_id, score) pairs (got 'ab')"),
        ({"q": ["a#0"]}, by_hash, TypeError, "'run'['q'] must hold (chunk_id, score) pairs (got 'a#0')"),
        ({"q": {"a#0": float("nan"), "a#1": 1.0}}, by_hash, ValueError, "'run'['q']['a#0'] must be a number, not NaN"),
        ({"q": {"a#1": 1.0, "a#0": float("nan")}}, by_hash, ValueError, "'run'['q']['a#0'] must be a number, not NaN"),
        ({"q": {"a#0": "1"}}, by_hash, TypeError, "'run'['q']['a#0'] must be a number (got '1')"),
        ({"q": {"a#0": True}}, by_hash, TypeError, "'run'['q']['a#0'] must be a number (got True)"),
        ({"q": {"a": 1.0}}, {}, KeyError, "\"'source_of' has no source for chunk 'a' (query 'q')\""),
        ({"q": {"a#0": 1.0}}, lambda chunk: None, TypeError, "'source_of' must give a str source id (got None for "
                                                             "chunk 'a#0')"),
    ],
)
def test_collapse_to_sources_names_what_is_wrong(run: Any, source_of: Any, error: type[Exception],
                                                 message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        collapse_to_sources(run, source_of)


def test_collapse_to_sources_still_collapses() -> None:
    assert collapse_to_sources({"q1": {"a#0": 0.2, "b#0": 0.9, "a#1": 0.7}}, by_hash) == {"q1": {"b": 0.9, "a": 0.7}}
    assert collapse_to_sources({"q2": [("c#0", float("-inf")), ("c#1", -1.0)]}, by_hash) == {"q2": {"c": -1.0}}
    assert collapse_to_sources({"q": {"a#0": 1.0}}, {"a#0": "a"}) == {"q": {"a": 1.0}}


@pytest.mark.parametrize(
    ("schema", "data", "error", "message"),
    [
        ("x/1", float("nan"), ValueError, "'data' must be JSON data without NaN or infinity, to have one id (Out of "
                                          "range float values are not JSON compliant)"),
        ("x/1", {1, 2}, TypeError, "'data' must be JSON data without NaN or infinity, to have one id (Object of "
                                   "type set is not JSON serializable)"),
        (None, 1, TypeError, "'schema' must be a non-empty str (got None)"),
    ],
)
def test_content_id_names_what_has_no_id(schema: Any, data: Any, error: type[Exception], message: str) -> None:
    from ef.pipeline import content_id

    with pytest.raises(error, match=exactly(message)):
        content_id(schema, data)
    assert content_id("x/1", {"b": 1, "a": [1.0, None]}) == content_id("x/1", {"a": [1.0, None], "b": 1})
