"""EvalSample / QueryOutcome records and their JSONL files: round trips and file:line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastrag.benchmark import EvalSample, QueryOutcome, load_samples, read_outcomes, save_samples
from fastrag.documents import Chunk


def test_samples_round_trip(tmp_path: Path) -> None:
    samples = [
        EvalSample("q1", "capital of France?", ("paris", "france"), "Paris", {"topic": "geo"}),
        EvalSample("q2", "ünïcödé ?"),
    ]
    path = tmp_path / "samples.jsonl"
    save_samples(samples, path)
    assert path.read_text(encoding="utf-8").splitlines()[1] == (
        '{"id": "q2", "query": "ünïcödé ?", "relevant_ids": [], "reference_answer": null, "metadata": {}}'
    )
    loaded = load_samples(path)
    assert loaded == samples
    assert loaded[0].metadata == {"topic": "geo"}


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('\n{"id": "a", "query": "x"}\n   \n', encoding="utf-8")
    assert load_samples(path) == [EvalSample("a", "x")]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes)"),
        ("[1, 2]", "sample must be a JSON object (got list)"),
        ('{"id": "b"}', "sample is missing 'query'"),
        ('{"id": "b", "query": "x", "answer": "y"}', "sample has unknown field(s) 'answer'"),
        ('{"id": "b", "query": "x", "relevant_ids": "d1"}', "'relevant_ids' must be a list of str ids (got 'd1')"),
        ('{"id": "b", "query": "x", "relevant_ids": ["d1", "d1"]}', "'relevant_ids' lists 'd1' more than once"),
        ('{"id": "b", "query": "x", "relevant_ids": [3]}', "'relevant_ids' must hold str ids (got 3)"),
        ('{"id": "", "query": "x"}', "'id' must be a non-empty str (got '')"),
        ('{"id": "a", "query": "x"}', "sample id 'a' already used on line 1"),
    ],
)
def test_bad_sample_lines_report_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"id": "a", "query": "x"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_samples(path)
    assert str(error.value) == f"{path}:2: {reason}"


def test_outcomes_round_trip(tmp_path: Path) -> None:
    outcome = QueryOutcome(
        "q1", "query", (Chunk("p", 0, "a", {"score": 1.5}), Chunk("p", 1, "b")), "answer", 12.5, 300, 0.002
    )
    failed = QueryOutcome("q2", "other", latency_ms=3.0, error="ValueError: boom")
    path = tmp_path / "outcomes.jsonl"
    path.write_text("".join(json.dumps(o.to_dict()) + "\n" for o in (outcome, failed)), encoding="utf-8")
    assert list(read_outcomes(path)) == [(1, outcome), (2, failed)]
    assert (outcome.ok, failed.ok) == (True, False)


def test_edited_chunk_in_an_outcomes_file_is_caught(tmp_path: Path) -> None:
    record = QueryOutcome("q1", "query", (Chunk("p", 0, "a"),)).to_dict()
    record["retrieved"][0]["content"] = "edited"
    path = tmp_path / "outcomes.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        list(read_outcomes(path))
    assert str(error.value) == (
        f"{path}:1: 'id' does not match sha256(source_uri, chunk_index, content): the chunk was edited"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retrieved": ["not a chunk"]}, "'retrieved' must hold Chunk objects (got str)"),
        ({"retrieved": "abc"}, "'retrieved' must be a sequence of Chunk (got str)"),
        ({"latency_ms": float("nan")}, "'latency_ms' must be finite and >= 0 (got nan)"),
        ({"total_tokens": 1.5}, "'total_tokens' must be an int or None (got 1.5)"),
        ({"cost_usd": -0.1}, "'cost_usd' must be finite and >= 0 (got -0.1)"),
        ({"answer": 3}, "'answer' must be a str or None (got int)"),
        ({"cost_usd": "0.1"}, "'cost_usd' must be a number or None (got '0.1')"),
    ],
)
def test_bad_outcomes_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as error:
        QueryOutcome("q1", "query", **kwargs)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_records_are_frozen_values() -> None:
    sample = EvalSample("q1", "x", ["a"])
    with pytest.raises(AttributeError):
        sample.query = "y"  # type: ignore[misc]
    assert sample == EvalSample("q1", "x", ("a",), metadata={"ignored": True})
    assert hash(sample) == hash(EvalSample("q1", "x", ["a"]))
