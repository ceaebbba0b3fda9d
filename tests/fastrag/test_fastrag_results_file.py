"""run_benchmark's results file: one run at a time, a regular file only, and a target's settings recorded."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from fastrag.benchmark import EvalSample, read_outcomes, run_benchmark_sync
from fastrag.benchmark.metrics import HitRate
from fastrag.documents import Chunk

SAMPLES = [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(3)]
METRICS = [HitRate(key="source_uri")]


class Gate:
    """Answers q0 at once, then blocks every other call until `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.waiting = threading.Event()

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        if query != "query 0":
            self.waiting.set()
            self.release.wait(10)
        return [Chunk(f"p{query[-1]}", 0, "t")]


def test_a_second_run_on_the_same_results_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    first = Gate()
    outcome: dict[str, Any] = {}

    def run_first() -> None:
        outcome["result"] = run_benchmark_sync(first, SAMPLES, METRICS, results_path=path, run_name="gate",
                                               concurrency=1, show_progress=False)

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert first.waiting.wait(10)  # the first run is writing the file
        with pytest.raises(ValueError) as error:
            run_benchmark_sync(Gate(), SAMPLES, METRICS, results_path=path, run_name="gate", show_progress=False)
        assert str(error.value) == (
            f"{path}: another run is writing this results file (it holds its lock); wait for it to end "
            "or pass another results_path"
        )
    finally:
        first.release.set()
        thread.join(10)
    assert outcome["result"].errors == {}
    assert [o.sample_id for _, o in read_outcomes(path)] == ["q0", "q1", "q2"]  # the first run's file is whole
    again = run_benchmark_sync(Gate(), SAMPLES, METRICS, results_path=path, run_name="gate", show_progress=False)
    assert again.scores == outcome["result"].scores  # resumed: the lock went with the first run


def test_a_fifo_is_refused_rather_than_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    caught: dict[str, BaseException] = {}

    def attempt() -> None:
        try:
            run_benchmark_sync(Gate(), SAMPLES, METRICS, results_path=fifo, show_progress=False)
        except BaseException as error:  # handed to the test's thread
            caught["error"] = error

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():  # it hangs waiting for a writer: give it one, then fail
        with open(fifo, "w"):
            pass
        thread.join(10)
        pytest.fail("run_benchmark waited on a FIFO as results_path")
    assert str(caught["error"]) == f"{fifo}: results_path must be a regular file (it is a FIFO)"


class Plain:
    """A target whose settings are plain attributes (not a dataclass)."""

    def __init__(self, k1: float, name: str = "bm25") -> None:
        self.k1 = k1
        self.name = name
        self._cache: dict[str, Any] = {}  # private: not a setting

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        return [Chunk(f"p{query[-1]}" if self.k1 > 1 else "x", 0, "t")]


def test_resuming_a_plain_class_with_other_settings_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    run_benchmark_sync(Plain(1.2), SAMPLES, METRICS, results_path=path, show_progress=False)
    with pytest.raises(ValueError) as error:
        run_benchmark_sync(Plain(0.9), SAMPLES, METRICS, results_path=path, show_progress=False)
    old, new = (f"{__name__}.Plain k1={k1} name='bm25'" for k1 in (1.2, 0.9))
    assert str(error.value) == (
        f"{path}:1: written with run_name={old!r}, this run asks for run_name={new!r}; "
        "use a new results_path or resume=False"
    )
    same = run_benchmark_sync(Plain(1.2), SAMPLES, METRICS, results_path=path, show_progress=False)
    assert same.scores == {"hit_rate@5[source_uri]": (1.0, 1.0, 1.0)}
