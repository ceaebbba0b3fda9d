"""Chunk metadata must be JSON: what JSON cannot hold is refused when the Chunk is built, named.

Outcomes are saved as JSON lines; a set, a datetime or any other object in a chunk's metadata
used to pass the Chunk and stop a run with ``results_path`` after its header, losing the run.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from ef.segments import Chunk
from fastrag.benchmark import EvalSample, QueryOutcome, run_benchmark_sync
from fastrag.benchmark.metrics import HitRate


@pytest.mark.parametrize(("metadata", "message"), [
    ({"tags": {"a", "b"}}, "metadata['tags'] is of type set, which JSON cannot hold"),
    ({"at": datetime.date(2024, 1, 2)}, "metadata['at'] is of type date, which JSON cannot hold"),
    ({"x": [1, {"y": object()}]}, "metadata['x'][1]['y'] is of type object, which JSON cannot hold"),
    ({"raw": b"bytes"}, "metadata['raw'] is of type bytes, which JSON cannot hold"),
    ({"n": float("nan")}, "metadata['n'] is nan, which JSON cannot hold"),
    ({1: "one"}, "metadata has the key 1 (of type int); JSON keys are strings"),
    ({"a": {None: 1}}, "metadata['a'] has the key None (of type NoneType); JSON keys are strings"),
])
def test_what_json_cannot_hold_is_refused_when_the_chunk_is_built(metadata: dict[Any, Any], message: str) -> None:
    with pytest.raises(ValueError) as error:
        Chunk("good", 0, "x", metadata)
    assert str(error.value) == f"chunk 'good'#0: {message}"


def test_json_metadata_is_kept() -> None:
    metadata = {"s": "t", "i": 1, "f": 0.5, "b": True, "n": None, "l": [1, "a"], "d": {"k": [None]}}
    chunk = Chunk("good", 0, "x", metadata)
    assert json.loads(json.dumps(chunk.to_dict()))["metadata"] == metadata


def test_a_bad_chunk_is_that_samples_error_and_the_run_goes_on(tmp_path: Path) -> None:
    class Tagged:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            tags: object = {"a", "b"} if query == "query 1" else ["a", "b"]
            return [Chunk(f"p{query[-1]}", 0, "x", {"tags": tags})]

    samples = [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(3)]
    path = tmp_path / "outcomes.jsonl"
    result = run_benchmark_sync(Tagged(), samples, [HitRate(key="source_uri")], results_path=path,
                                show_progress=False, concurrency=1, run_name="tagged")
    assert result.errors == {"q1": "ValueError: chunk 'p1'#0: metadata['tags'] is of type set, which JSON cannot hold"}
    assert result.scores["hit_rate@5[source_uri]"] == (1.0, None, 1.0)
    lines = path.read_text().splitlines()
    assert len(lines) == 4  # the header and three outcomes: nothing lost
    assert QueryOutcome.from_dict(json.loads(lines[2])).error == result.errors["q1"]
