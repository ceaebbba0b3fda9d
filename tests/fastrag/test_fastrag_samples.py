"""EvalSample / QueryOutcome records and their JSONL files: round trips and file:line errors."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from ef._validate import describe
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
        ("{not json", "malformed JSON: Expecting property name enclosed in double quotes (column 2)"),
        ("[1, 2]", "'sample' must be a JSON object (got list)"),
        ('{"id": "b"}', "sample is missing 'query'"),
        ('{"id": "b", "query": "x", "answer": "y"}', "sample has unknown field(s) 'answer'"),
        ('{"id": "b", "query": "x", "relevant_ids": "d1"}', "'relevant_ids' must be a list of str ids (got 'd1')"),
        (
            '{"id": "b", "query": "x", "relevant_ids": ["d1", "d1"]}',
            "'relevant_ids' must list each id once (got 'd1' twice or more)",
        ),
        ('{"id": "b", "query": "x", "relevant_ids": [3]}', "'relevant_ids' must hold str ids (got 3)"),
        ('{"id": "", "query": "x"}', "'id' must be a non-empty str (got '')"),
        ('{"id": "a", "query": "x"}', "sample id 'a' already used on line 1"),
        # Falsy non-lists are mistakes too, not "no relevant ids".
        ('{"id": "b", "query": "x", "relevant_ids": ""}', "'relevant_ids' must be a list of str ids (got '')"),
        ('{"id": "b", "query": "x", "relevant_ids": 0}', "'relevant_ids' must be a list of str ids (got 0)"),
        ('{"id": "b", "query": "x", "relevant_ids": {}}', "'relevant_ids' must be a list of str ids (got dict)"),
        ('{"id": "b", "query": "x", "relevant_ids": false}', "'relevant_ids' must be a list of str ids (got False)"),
        ('{"id": "b", "query": "x", "metadata": []}', "'metadata' must be a JSON object or null (got list)"),
        ('{"id": "b", "query": "x", "metadata": ""}', "'metadata' must be a JSON object or null (got '')"),
        (
            '{"id": "b", "query": "x", "metadata": {"x": NaN}}',
            "NaN is not valid JSON (JSON has no NaN or infinity)",
        ),
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
    ("kwargs", "error_type", "message"),
    [
        ({"retrieved": ["not a chunk"]}, TypeError, "'retrieved' must be a sequence of Chunk (got 'not a chunk')"),
        ({"retrieved": "abc"}, TypeError, "'retrieved' must be a sequence of Chunk (got 'abc')"),
        ({"latency_ms": float("nan")}, ValueError, "'latency_ms' must be a finite number >= 0 (got nan)"),
        ({"total_tokens": 1.5}, TypeError, "'total_tokens' must be a non-negative integer (got 1.5)"),
        ({"cost_usd": -0.1}, ValueError, "'cost_usd' must be a finite number >= 0 (got -0.1)"),
        ({"answer": 3}, TypeError, "'answer' must be a str or None (got 3)"),
        ({"cost_usd": "0.1"}, TypeError, "'cost_usd' must be a finite number >= 0 (got '0.1')"),
    ],
)
def test_bad_outcomes_name_the_field(kwargs: dict[str, object], error_type: type[Exception], message: str) -> None:
    with pytest.raises(error_type) as error:
        QueryOutcome("q1", "query", **kwargs)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_records_are_frozen_values() -> None:
    sample = EvalSample("q1", "x", ["a"])
    with pytest.raises(AttributeError):
        sample.query = "y"  # type: ignore[misc]
    assert sample == EvalSample("q1", "x", ("a",), metadata={"ignored": True})
    assert hash(sample) == hash(EvalSample("q1", "x", ["a"]))


def test_absent_or_null_relevant_ids_and_metadata_mean_none(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(
        '{"id": "a", "query": "x", "relevant_ids": null, "metadata": null}\n{"id": "b", "query": "y"}\n',
        encoding="utf-8",
    )
    loaded = load_samples(path)
    assert [(s.relevant_ids, dict(s.metadata)) for s in loaded] == [((), {}), ((), {})]


@pytest.mark.parametrize("retrieved", ["", 0, {}])
def test_falsy_non_list_retrieved_is_an_error(tmp_path: Path, retrieved: object) -> None:
    path = tmp_path / "outcomes.jsonl"
    path.write_text(json.dumps({"sample_id": "q1", "query": "q", "retrieved": retrieved}) + "\n", encoding="utf-8")
    message = f"{path}:1: 'retrieved' must be a list of chunks (got {describe(retrieved)})"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        list(read_outcomes(path))


@pytest.mark.parametrize(
    ("metadata", "where"),
    [
        ({"x": float("nan")}, "metadata['x'] is nan"),
        ({"x": [1.0, {"y": float("-inf")}]}, "metadata['x'][1]['y'] is -inf"),
    ],
)
def test_non_finite_metadata_is_refused_naming_the_sample(metadata: dict[str, object], where: str) -> None:
    message = f"sample 'q7': {where}, which JSON cannot hold; use null or a string"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        EvalSample("q7", "x", metadata=metadata)


def test_save_samples_keeps_the_old_file_when_a_record_is_bad(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    save_samples([EvalSample("old", "x")], path)
    before = path.read_text(encoding="utf-8")
    changed = EvalSample("q2", "y", metadata={"score": 1.0})
    changed.metadata["score"] = float("nan")  # type: ignore[index]  # mutated after the check
    message = f"{path}: record 1 (sample 'q2'): Out of range float values are not JSON compliant"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        save_samples([EvalSample("q1", "x"), changed, EvalSample("q3", "z")], path)
    assert path.read_text(encoding="utf-8") == before
    odd = EvalSample("q1", "x", metadata={"when": object()})
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: record 0 \(sample 'q1'\): Object of type object"):
        save_samples([odd], path)
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["samples.jsonl"]  # no temporary file left


def test_save_samples_replaces_the_file_with_umask_permissions(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    old_mask = os.umask(0o027)
    try:
        save_samples([EvalSample("q1", "x")], path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o640  # 0o666 less the umask, not mkstemp's 0o600
        save_samples([EvalSample("q2", "y")], path)
    finally:
        os.umask(old_mask)
    assert [s.id for s in load_samples(path)] == ["q2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["samples.jsonl"]


def test_outcomes_header_is_skipped_by_read_outcomes(tmp_path: Path) -> None:
    outcome = QueryOutcome("q1", "query", (Chunk("p", 0, "a"),), latency_ms=1.0)
    path = tmp_path / "outcomes.jsonl"
    header = {"fastrag_outcomes": 1, "top_k": 5, "target": "retriever"}
    path.write_text(json.dumps(header) + "\n" + json.dumps(outcome.to_dict()) + "\n", encoding="utf-8")
    assert list(read_outcomes(path)) == [(2, outcome)]
