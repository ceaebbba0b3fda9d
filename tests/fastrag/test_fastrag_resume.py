"""Resuming a benchmark: only a results file of ours is touched, and only by the target that wrote it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fastrag.adapters import CorpusRetriever
from fastrag.benchmark import BenchmarkResult, EvalSample, run_benchmark
from fastrag.benchmark._results import default_run_name
from fastrag.benchmark.metrics import Metric, Recall
from fastrag.documents import Chunk

SAMPLES = [EvalSample("q0", "query 0", ["right"]), EvalSample("q1", "query 1", ["right"])]


class Right:
    def retrieve(self, query: str, k: int) -> list[Chunk]:
        return [Chunk("right", 0, "the right page")]


class Wrong:
    def retrieve(self, query: str, k: int) -> list[Chunk]:
        return [Chunk("wrong", 0, "another page")]


def run(target: Any, metrics: Sequence[Metric] = (Recall(k=1, key="source_uri"),), **options: Any) -> BenchmarkResult:
    options.setdefault("show_progress", False)
    return asyncio.run(run_benchmark(target, SAMPLES, list(metrics), **options))


@pytest.mark.parametrize("resume", [True, False])
def test_a_one_line_config_without_newline_is_refused_and_left_as_it_is(tmp_path: Path, resume: bool) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"model": "bm25", "k": 10}')
    message = (
        f'{path}:1: not a fastrag results file (it does not start with a {{"fastrag_outcomes": …}} header line); '
        "it was left as it is: pass another results_path"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(Right(), results_path=path, resume=resume)
    assert path.read_bytes() == b'{"model": "bm25", "k": 10}'


def test_a_samples_file_passed_by_mistake_keeps_its_last_sample(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    content = b'{"id": "q0", "query": "query 0"}\n{"id": "q1", "query": "query 1"}'  # no final newline
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a fastrag results file"):
        run(Right(), results_path=path)
    assert path.read_bytes() == content


def test_resuming_with_another_retriever_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    assert run(Right(), results_path=path).summary["recall@1[source_uri]"].mean == 1.0
    before = path.read_bytes()
    message = (
        f"{path}:1: written with run_name='test_fastrag_resume.Right', this run asks for "
        "run_name='test_fastrag_resume.Wrong'; use a new results_path or resume=False"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(Wrong(), results_path=path)
    assert path.read_bytes() == before
    assert run(Wrong(), results_path=path, resume=False).summary["recall@1[source_uri]"].mean == 0.0


def test_an_explicit_run_name_is_recorded_and_compared(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(Right(), results_path=path, run_name="bm25 k1=0.9")
    assert json.loads(path.read_text().splitlines()[0])["run_name"] == "bm25 k1=0.9"
    with pytest.raises(ValueError, match=re.escape(f"{path}:1: written with run_name='bm25 k1=0.9', this run asks "
                                                   "for run_name='bm25 k1=1.2'")):
        run(Right(), results_path=path, run_name="bm25 k1=1.2")
    with pytest.raises(ValueError, match=r"^'run_name' must be a non-empty str or None \(got ''\)$"):
        run(Right(), results_path=path, run_name="")


def test_a_torn_tail_stays_when_the_header_does_not_match(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(Right(), results_path=path)
    torn = path.read_bytes() + b'{"sample_id": "q2", "que'
    path.write_bytes(torn)
    with pytest.raises(ValueError, match=re.escape("this run asks for run_name='test_fastrag_resume.Wrong'")):
        run(Wrong(), results_path=path)
    assert path.read_bytes() == torn  # checked before anything was cut


def test_a_torn_tail_of_our_file_is_dropped_and_the_sample_rerun(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(Right(), results_path=path)
    header, first, second = path.read_text().splitlines()
    path.write_text(f"{header}\n{first}\n{second}")  # the last outcome lost its newline: cut short
    result = run(Right(), results_path=path)
    assert result.summary["recall@1[source_uri]"].count == 2
    lines = path.read_text().splitlines()
    assert (len(lines), lines[:2]) == (3, [header, first])
    assert json.loads(lines[2])["sample_id"] == json.loads(second)["sample_id"]


def test_the_default_run_name_tells_ef_indexes_and_dataclass_settings_apart() -> None:
    from ef.source_manager import ingest

    a = CorpusRetriever(ingest({"d1": "alpha"}, show_progress=False))
    b = CorpusRetriever(ingest({"d1": "beta"}, show_progress=False))
    name = default_run_name(a)
    assert name.startswith("ef.retrieval.CorpusRetriever embedder=bm25 fingerprint=")
    assert name != default_run_name(b)

    @dataclass
    class Tuned:
        k1: float
        name: str = "bm25"

        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return []

    assert default_run_name(Tuned(0.9)).endswith("Tuned k1=0.9 name='bm25'")
