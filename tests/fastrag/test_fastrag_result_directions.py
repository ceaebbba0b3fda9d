"""BenchmarkResult.save_jsonl keeps each metric's direction, so a loaded result can be compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastrag.benchmark import BenchmarkResult, EvalSample, compare_results, run_benchmark_sync
from fastrag.benchmark.metrics import HitRate, Latency
from fastrag.documents import Chunk


class Echo:
    def __init__(self, good: set[int]) -> None:
        self.good = good

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        number = int(query.split()[-1])
        return [Chunk(f"p{number}" if number in self.good else "x", 0, "t")]


def _result(good: set[int]) -> BenchmarkResult:
    samples = [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(6)]
    return run_benchmark_sync(Echo(good), samples, [HitRate(k=1, key="source_uri"), Latency()], show_progress=False)


def test_directions_survive_save_and_load(tmp_path: Path) -> None:
    result = _result({0, 1, 2})
    path = tmp_path / "r.jsonl"
    result.save_jsonl(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 6  # still one line per sample
    assert {json.dumps(line["higher_is_better"]) for line in lines} == {
        '{"hit_rate@1[source_uri]": true, "latency_ms": false}'
    }
    loaded = BenchmarkResult.load_jsonl(path)
    assert loaded.higher_is_better == {"hit_rate@1[source_uri]": True, "latency_ms": False}


def test_compare_results_of_loaded_results_knows_the_directions(tmp_path: Path) -> None:
    for name, good in (("a", {0, 1, 2}), ("b", {0, 1, 2, 3, 4, 5})):
        _result(good).save_jsonl(tmp_path / f"{name}.jsonl")
    loaded = {name: BenchmarkResult.load_jsonl(tmp_path / f"{name}.jsonl") for name in ("a", "b")}
    report = compare_results(loaded, metrics=["hit_rate@1[source_uri]", "latency_ms"], resamples=200)
    assert dict(report.higher_is_better) == {"hit_rate@1[source_uri]": True, "latency_ms": False}


def test_a_direction_given_against_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    _result({0}).save_jsonl(path)
    with pytest.raises(ValueError) as error:
        BenchmarkResult.load_jsonl(path, higher_is_better={"latency_ms": True})
    assert str(error.value) == f"{path}: records higher_is_better False for 'latency_ms', 'higher_is_better' says True"


def test_lines_that_disagree_on_directions_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    _result({0}).save_jsonl(path)
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace('"latency_ms": false}', '"latency_ms": true}')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as error:
        BenchmarkResult.load_jsonl(path)
    assert str(error.value) == (
        f"{path}:4: 'higher_is_better' is {{'hit_rate@1[source_uri]': True, 'latency_ms': True}}, the first line's "
        "{'hit_rate@1[source_uri]': True, 'latency_ms': False}"
    )
