"""Issue 9, fastrag: nothing silently accepted, nothing silently dropped, no NaN out."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fastrag.benchmark import (
    BenchmarkResult,
    DistributionSummary,
    EvalSample,
    Pipeline,
    PipelineResponse,
    QueryOutcome,
    read_outcomes,
    run_benchmark,
    run_benchmark_sync,
)
from fastrag.benchmark.metrics import Latency, Metric, Recall
from fastrag.documents import Chunk


def samples(n: int) -> list[EvalSample]:
    return [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(n)]


def run(target: Any, items: Sequence[EvalSample], metrics: Sequence[Metric], **options: Any) -> BenchmarkResult:
    return run_benchmark_sync(target, items, metrics, show_progress=False, **options)


class Echo:
    def retrieve(self, query: str, k: int) -> list[Chunk]:
        return [Chunk("p" + query.split()[-1], 0, "text")]


# --- numpy in chunk metadata ----------------------------------------------------------------


def test_numpy_scalars_in_chunk_metadata_become_python_numbers() -> None:
    chunk = Chunk("p", 0, "x", {"score": np.float32(0.5), "rank": np.int64(1), "v": np.array([1.5, 2.0])})
    assert chunk.metadata == {"score": 0.5, "rank": 1, "v": [1.5, 2.0]}
    assert [type(chunk.metadata[k]) for k in ("score", "rank")] == [float, int]
    assert json.loads(json.dumps(chunk.to_dict()))["metadata"] == {"score": 0.5, "rank": 1, "v": [1.5, 2.0]}


def test_a_numpy_nan_in_chunk_metadata_is_caught() -> None:
    with pytest.raises(ValueError, match=r"^chunk 'p'#0: metadata\['score'\] is nan, which JSON cannot hold$"):
        Chunk("p", 0, "x", {"score": np.float32("nan")})
    with pytest.raises(ValueError, match=r"^chunk 'p'#0: metadata\['s'\]\[0\] is inf, which JSON cannot hold$"):
        Chunk("p", 0, "x", {"s": [np.float64("inf")]})


def test_numpy_sample_metadata_is_converted_and_checked() -> None:
    assert EvalSample("q", "x", metadata={"w": np.float32(2.0)}).metadata == {"w": 2.0}
    with pytest.raises(ValueError, match=r"^sample 'q': metadata\['w'\] is nan"):
        EvalSample("q", "x", metadata={"w": np.float32("nan")})


def test_a_vector_store_score_does_not_abort_a_run_with_results_path(tmp_path: Path) -> None:
    class VectorStore:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return [Chunk("p" + query.split()[-1], 0, "text", {"score": np.float32(0.25)})]

    path = tmp_path / "out.jsonl"
    result = run(VectorStore(), samples(3), [Recall(key="source_uri")], results_path=path)
    assert result.errors == {}
    assert result.summary["recall@5[source_uri]"].mean == 1.0
    scores = [o.retrieved[0].metadata["score"] for _, o in read_outcomes(path)]
    assert scores == [0.25, 0.25, 0.25]


# --- outcome files ----------------------------------------------------------------------------


def _outcome_line(sample_id: str, query: str, error: str | None = None) -> str:
    return json.dumps(QueryOutcome(sample_id, query, latency_ms=1.0, error=error).to_dict()) + "\n"


def test_a_duplicate_successful_outcome_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    header = json.dumps({"fastrag_outcomes": 1, "top_k": 5, "target": "retriever", "run_name": "echo"}) + "\n"
    path.write_text(header + _outcome_line("q0", "query 0") + _outcome_line("q0", "query 0"))
    message = (
        f"{path}:3: another outcome for sample 'q0', which already succeeded on line 2; "
        "a sample has no outcome after its successful one"
    )
    with pytest.raises(ValueError) as error:
        list(read_outcomes(path))
    assert str(error.value) == message
    with pytest.raises(ValueError) as error:  # resume reads the same lines
        run(Echo(), samples(1), [Recall()], results_path=path, run_name="echo")
    assert str(error.value) == message


def test_a_failure_then_a_retry_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(_outcome_line("q0", "query 0", "TimeoutError: x") + _outcome_line("q0", "query 0"))
    assert [(n, o.ok) for n, o in read_outcomes(path)] == [(1, False), (2, True)]


def test_save_jsonl_reads_back(tmp_path: Path) -> None:
    result = run(Echo(), samples(3), [Recall(key="source_uri"), Latency()])
    path = tmp_path / "result.jsonl"
    result.save_jsonl(path)
    loaded = BenchmarkResult.load_jsonl(path, higher_is_better=result.higher_is_better)
    assert loaded.outcomes == result.outcomes
    assert loaded.scores == result.scores
    assert loaded.summary == result.summary
    assert str(loaded) == str(result)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"sample_id": "q", "query": "x"}'], ":1: a result line needs a 'scores' object (is this an outcomes file?)"),
        (['{"sample_id": "q", "query": "x", "scores": {"a": "0.5"}}'], ":1: score 'a' must be a finite number or null"),
        (['{"sample_id": "q", "query": "x", "scores": {"a": NaN}}'], ":1: "),  # the JSONL reader refuses NaN
        (
            ['{"sample_id": "q", "query": "x", "scores": {"a": 1}}', '{"sample_id": "r", "query": "x", "scores": {}}'],
            ":2: 'scores' names [], the first line ['a']",
        ),
        (
            ['{"sample_id": "q", "query": "x", "scores": {}}', '{"sample_id": "q", "query": "x", "scores": {}}'],
            ":2: sample id 'q' already used on line 1",
        ),
    ],
)
def test_load_jsonl_names_the_bad_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "result.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as error:
        BenchmarkResult.load_jsonl(path)
    assert str(error.value).startswith(f"{path}{message}")


# --- what a target returns -------------------------------------------------------------------


def test_a_set_returned_as_a_ranking_stops_the_run_named() -> None:
    class Unordered:
        def retrieve(self, query: str, k: int) -> set[Chunk]:
            return {Chunk("a", 0, "x"), Chunk("b", 0, "y")}

    with pytest.raises(TypeError) as error:
        run(Unordered(), samples(1), [Recall()])
    assert str(error.value) == (
        "the result of Unordered.retrieve('query 0', k) for sample 'q0' must be a sequence of Chunk or SearchHit, "
        "best first (got set)"
    )


def test_a_pipeline_returning_a_set_of_chunks_is_that_samples_error() -> None:
    class SetPipeline:
        def answer(self, query: str, k: int) -> PipelineResponse:
            return PipelineResponse("x", frozenset({Chunk("a", 0, "x")}))  # type: ignore[arg-type]

    assert isinstance(SetPipeline(), Pipeline)
    result = run(SetPipeline(), samples(1), [Recall()])  # the pipeline's own PipelineResponse(...) raised
    assert result.errors == {
        "q0": "TypeError: 'retrieved' must be a sequence of Chunk or SearchHit, best first (got frozenset)"
    }


def test_a_metric_k_above_top_k_is_refused_before_anything_runs() -> None:
    class Counting(Echo):
        calls = 0

        def retrieve(self, query: str, k: int) -> list[Chunk]:
            Counting.calls += 1
            return super().retrieve(query, k)

    with pytest.raises(ValueError) as error:
        run(Counting(), samples(2), [Recall(k=10), Recall(k=3)], top_k=5)
    assert str(error.value) == (
        "metric(s) recall@10 look deeper than 'top_k'=5 chunks; raise top_k to at least 10 or lower their k"
    )
    assert Counting.calls == 0


def test_numpy_integers_are_accepted_as_k_top_k_and_concurrency(tmp_path: Path) -> None:
    metric = Recall(k=np.int64(2))  # type: ignore[arg-type]
    assert metric.name == "recall@2"
    assert type(metric.k) is int
    path = tmp_path / "out.jsonl"
    result = run(Echo(), samples(2), [metric], top_k=np.int64(3), concurrency=np.int64(2), results_path=path)
    assert result.summary["recall@2"].count == 2
    assert json.loads(path.read_text().splitlines()[0])["top_k"] == 3


# --- timeouts and cancellation ---------------------------------------------------------------


def test_an_async_target_blocking_the_loop_past_the_timeout_is_a_timeout() -> None:
    class Blocking:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            time.sleep(0.3)  # blocks the event loop: asyncio's deadline cannot fire
            return [Chunk("p0", 0, "x")]

    result = run(Blocking(), samples(1), [Recall()], timeout_s=0.05)
    error = result.errors["q0"]
    assert error.startswith("TimeoutError: no answer within 0.05 s (the call blocked the event loop for ")
    assert result.outcomes[0].retrieved == ()
    assert result.summary["recall@5"].missing == 1


def test_a_cancelled_error_raised_by_the_target_is_that_samples_error() -> None:
    class Cancelling:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            if query == "query 1":
                raise asyncio.CancelledError("upstream request cancelled")
            return [Chunk("p" + query.split()[-1], 0, "x")]

    result = run(Cancelling(), samples(3), [Recall(key="source_uri")])
    assert result.errors == {"q1": "CancelledError: upstream request cancelled"}
    assert result.scores["recall@5[source_uri]"] == (1.0, None, 1.0)


def test_cancelling_the_run_still_cancels_it() -> None:
    started = asyncio.Event()

    class Slow:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            started.set()
            await asyncio.sleep(10)
            return []

    async def main() -> None:
        task = asyncio.create_task(run_benchmark(Slow(), samples(2), [Recall()], show_progress=False))
        await started.wait()
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


# --- custom metrics --------------------------------------------------------------------------


class NanMetric(Metric):
    def __init__(self) -> None:
        self.calls = 0

    @property
    def name(self) -> str:
        return "judge"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        self.calls += 1
        return math.nan if sample.id == "q1" else 0.5


def test_a_metric_returning_nan_fails_fast_naming_it() -> None:
    metric = NanMetric()
    with pytest.raises(ValueError) as error:
        run(Echo(), samples(50), [metric], concurrency=1)
    assert str(error.value) == (
        "metric 'judge' scored sample 'q1' as nan; a score must be a finite number, "
        "or None when the sample cannot be measured"
    )
    assert metric.calls == 2  # stopped at the bad score, not after the 50 samples


def test_a_metric_numpy_score_is_stored_as_a_float() -> None:
    class NumpyMetric(NanMetric):
        async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
            return np.float32(0.5)  # type: ignore[return-value]

    result = run(Echo(), samples(2), [NumpyMetric()])
    assert result.scores["judge"] == (0.5, 0.5)
    assert [type(v) for v in result.scores["judge"]] == [float, float]


# --- summaries -------------------------------------------------------------------------------


def test_summary_of_huge_scores_is_finite() -> None:
    s = DistributionSummary.from_scores([1e308, 1e308])
    assert (s.mean, s.std, s.min, s.p50, s.p99, s.max, s.ci_low, s.ci_high) == (
        1e308, 0.0, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308,
    )
    s = DistributionSummary.from_scores([-1e308, 1e308, 1e308])
    assert s.mean == pytest.approx(1e308 / 3, rel=1e-15)
    assert s.ci_low is not None
    assert s.ci_high is not None
    assert s.mean is not None
    assert -1e308 <= s.ci_low <= s.mean <= s.ci_high <= 1e308


def test_summary_whose_spread_overflows_is_refused() -> None:
    with pytest.raises(ValueError) as error:
        DistributionSummary.from_scores([-1.7e308, 1.7e308])
    assert str(error.value) == (
        "'scores' spread too widely: their standard deviation is larger than a float can hold "
        "(scores from -1.7e+308 to 1.7e+308)"
    )


def test_summary_scaling_keeps_ordinary_values_exact() -> None:
    values = [0.1, 0.7, 0.3, 0.9, 0.2]
    data = np.asarray(values)
    s = DistributionSummary.from_scores(values)
    assert s.mean == float(data.mean())
    assert s.std == float(data.std(ddof=1))
    assert s.p90 == float(np.percentile(data, 90))


@pytest.mark.parametrize(("metadata", "name"), [(np.array([1, 2]), "ndarray"), ([], "list"), ("", "''")])
def test_chunk_from_dict_refuses_metadata_that_is_not_an_object(metadata: object, name: str) -> None:
    # "truth value of an array is ambiguous" before, and [] or "" silently became {}
    record = {"source_uri": "p", "chunk_index": 0, "content": "x", "metadata": metadata}
    with pytest.raises(TypeError) as error:
        Chunk.from_dict(record)
    assert str(error.value) == f"'metadata' must be a mapping (got {name})"
    assert Chunk.from_dict({**record, "metadata": None}).metadata == {}
