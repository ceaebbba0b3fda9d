"""run_benchmark's timeouts: a call's deadline starts when the call starts, not when it is queued.

A sync target runs in threads; a call that times out keeps its thread until it returns (Python
cannot stop a thread). The samples queued behind it must not inherit its timeout, and a sample
that never got to run is recorded as not run, not as the target's timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from fastrag.benchmark import EvalSample, run_benchmark_sync
from fastrag.benchmark.metrics import HitRate
from fastrag.documents import Chunk


def _samples(n: int) -> list[EvalSample]:
    return [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(n)]


class _Stuck:
    """Queries in `slow` block until `release` is set; the others answer at once. Counts calls."""

    def __init__(self, slow: set[str]) -> None:
        self.slow = slow
        self.release = threading.Event()
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        with self.lock:
            self.calls.append(query)
        if query in self.slow:
            self.release.wait(10)
        number = query.split()[-1]
        return [Chunk(f"p{number}", 0, "text")]


@pytest.fixture
def stuck() -> Iterator[list[_Stuck]]:
    made: list[_Stuck] = []
    yield made
    for target in made:  # let the abandoned threads end
        target.release.set()


def test_healthy_samples_behind_slow_ones_are_not_timed_out(stuck: list[_Stuck]) -> None:
    # The case: 40 samples, concurrency 4, only q0-q3 are slow.
    target = _Stuck({f"query {i}" for i in range(4)})
    stuck.append(target)
    result = run_benchmark_sync(
        target, _samples(40), [HitRate(key="source_uri")], concurrency=4, timeout_s=0.3, show_progress=False
    )
    assert result.errors == {f"q{i}": "TimeoutError: no answer within 0.3 s" for i in range(4)}
    assert len(target.calls) == 40
    assert result.scores["hit_rate@5[source_uri]"] == (None,) * 4 + (1.0,) * 36


def test_a_sample_that_never_ran_is_recorded_as_not_run(stuck: list[_Stuck]) -> None:
    # Every call blocks: the first calls time out holding their threads, and once the pool is
    # spent the rest never start.
    target = _Stuck({f"query {i}" for i in range(6)})
    stuck.append(target)
    result = run_benchmark_sync(
        target, _samples(6), [HitRate(key="source_uri")], concurrency=1, timeout_s=0.2, show_progress=False
    )
    ran = len(target.calls)
    assert ran == 2  # one thread per concurrency slot, plus one as many for the calls that timed out
    assert [result.errors[f"q{i}"] for i in range(ran)] == ["TimeoutError: no answer within 0.2 s"] * ran
    for i in range(ran, 6):
        assert result.errors[f"q{i}"] == (
            "not run: no thread came free within 0.2 s (2 calls that timed out still hold theirs)"
        )
        assert result.outcomes[i].latency_ms is None
    target.release.set()
