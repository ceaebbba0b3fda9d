"""How fast is the fastrag benchmark harness? Prints figures; asserts nothing.

1. Concurrency: a retriever that sleeps 20 ms per query, 2,000 samples at concurrency 50. The
   ideal is 2,000 / 50 x 20 ms = 0.8 s; the target is within 1.25x of it.
2. Overhead: an instant retriever, 2,000 samples, the five retrieval metrics: the harness's own
   cost per sample (everything run_benchmark does: scheduling, timing, outcome records, the
   five scores, the five distribution summaries). The target is under 0.2 ms per sample.
   Also printed: the same with a sync retriever (thread pool) and with a results_path JSONL file.

Run: ``.venv/bin/python benchmarks/bench_harness.py``
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from fastrag.benchmark import EvalSample, run_benchmark
from fastrag.benchmark.metrics import MRR, NDCG, HitRate, Metric, Precision, Recall
from fastrag.documents import Chunk

N_SAMPLES = 2000
CONCURRENCY = 50
SLEEP_S = 0.020
REPEATS = 5

PAGES = [Chunk(f"page-{i}", j, f"text {i} {j}") for i in range(20) for j in range(2)]


def make_samples() -> list[EvalSample]:
    return [EvalSample(f"q{i}", f"query {i}", [PAGES[i % 40].id, PAGES[(i * 7 + 1) % 40].id]) for i in range(N_SAMPLES)]


def five_metrics() -> list[Metric]:
    return [Recall(k=5), Precision(k=5), MRR(k=5), NDCG(k=5), HitRate(k=5)]


class SleepyRetriever:
    async def retrieve(self, query: str, k: int) -> list[Chunk]:
        await asyncio.sleep(SLEEP_S)
        return PAGES[:k]


class SleepySyncRetriever:
    def retrieve(self, query: str, k: int) -> list[Chunk]:
        time.sleep(SLEEP_S)
        return PAGES[:k]


class InstantAsyncRetriever:
    async def retrieve(self, query: str, k: int) -> list[Chunk]:
        offset = len(query) % 30
        return PAGES[offset : offset + k]


class InstantSyncRetriever:
    def retrieve(self, query: str, k: int) -> list[Chunk]:
        offset = len(query) % 30
        return PAGES[offset : offset + k]


def timed(target: object, samples: Sequence[EvalSample], concurrency: int, results_path: Path | None = None) -> float:
    if results_path is not None and results_path.exists():
        results_path.unlink()
    start = time.perf_counter()
    asyncio.run(
        run_benchmark(
            target,  # type: ignore[arg-type]
            samples,
            five_metrics(),
            concurrency=concurrency,
            results_path=results_path,
            show_progress=False,
        )
    )
    return time.perf_counter() - start


def main() -> None:
    samples = make_samples()
    timed(InstantAsyncRetriever(), samples, CONCURRENCY)  # warm imports and caches

    ideal = N_SAMPLES / CONCURRENCY * SLEEP_S
    for label, sleeper in (
        ("sleeping async retriever", SleepyRetriever()),
        ("sleeping sync retriever (thread pool)", SleepySyncRetriever()),
    ):
        sleepy = min(timed(sleeper, samples, CONCURRENCY) for _ in range(REPEATS))
        print(
            f"{label}: {N_SAMPLES} samples x {SLEEP_S * 1000:.0f} ms at concurrency {CONCURRENCY}: "
            f"{sleepy:.3f} s, ideal {ideal:.3f} s, ratio {sleepy / ideal:.3f}x (target <= 1.25x)"
        )

    scratch = Path(tempfile.mkdtemp()) / "outcomes.jsonl"
    for label, target, path in (
        ("instant async retriever", InstantAsyncRetriever(), None),
        ("instant sync retriever (thread pool)", InstantSyncRetriever(), None),
        ("instant async retriever + results_path JSONL", InstantAsyncRetriever(), scratch),
    ):
        runs = [timed(target, samples, CONCURRENCY, path) for _ in range(REPEATS)]
        per_sample_ms = min(runs) / N_SAMPLES * 1000
        median_ms = statistics.median(runs) / N_SAMPLES * 1000
        print(
            f"{label}, five retrieval metrics: {per_sample_ms:.4f} ms/sample "
            f"(best of {REPEATS}; median {median_ms:.4f}) (target < 0.2 ms)"
        )


if __name__ == "__main__":
    main()
