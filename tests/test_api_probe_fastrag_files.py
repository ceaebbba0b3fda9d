"""Text UTF-8 cannot encode (a lone surrogate): an EvalSample refuses it, as a Chunk does, and a
fastrag file write names the file and the record, leaving no file behind."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fastrag.benchmark import EvalSample, load_samples, save_samples
from fastrag.benchmark._jsonl import write_jsonl


def test_write_jsonl_names_the_record_whose_text_utf8_cannot_encode(tmp_path: Path) -> None:
    # An outcome's answer comes from the caller's pipeline: nothing upstream checks its text.
    path = tmp_path / "outcomes.jsonl"
    records = [{"sample_id": "q1", "answer": "fine"}, {"sample_id": "q2", "answer": "bad \udcff"}]
    with pytest.raises(
        ValueError,
        match="^" + re.escape(f"{path}: record 1 (sample 'q2'): ") + r"'utf-8' codec can't "
        r"encode character '\\udcff' in position \d+: surrogates not allowed$",
    ):
        write_jsonl(path, records)
    assert os.listdir(tmp_path) == []


def test_write_jsonl_keeps_the_old_file_when_a_record_cannot_be_encoded(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    good = [EvalSample("q1", "fine", ["a"])]
    save_samples(good, path)
    with pytest.raises(ValueError, match=r"record 0 \(sample 'q1'\)"):
        write_jsonl(path, [{"id": "q1", "query": "\udcff"}])
    assert load_samples(path) == good
    assert os.listdir(tmp_path) == ["samples.jsonl"]


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"id": "q\udcff"}, "id"),
        ({"query": "what \udcff"}, "query"),
        ({"relevant_ids": ["a", "b\udcff"]}, "relevant_ids[1]"),
        ({"reference_answer": "\udcff"}, "reference_answer"),
    ],
)
def test_an_eval_sample_refuses_text_utf8_cannot_encode(fields: dict[str, object], name: str) -> None:
    # As a Chunk does: a results file could not hold the sample, and a benchmark would fail midway.
    given: dict[str, object] = {"id": "q1", "query": "?", "relevant_ids": ["a"], **fields}
    with pytest.raises(
        ValueError, match=rf"^'{re.escape(name)}' is not encodable as UTF-8: surrogates not allowed at \d+$"
    ):
        EvalSample(**given)  # type: ignore[arg-type]


def test_load_samples_names_the_line_of_an_escaped_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"id": "q1", "query": "?"}\n{"id": "q\\udcff", "query": "?"}\n')
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:2: 'id' is not encodable as UTF-8"):
        load_samples(path)
