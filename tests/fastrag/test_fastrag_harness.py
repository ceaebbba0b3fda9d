"""run_benchmark: errors, timeouts, the concurrency limit, JSONL outcomes and resume."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from fastrag.benchmark import (
    BenchmarkResult,
    EvalSample,
    PipelineResponse,
    QueryOutcome,
    read_outcomes,
    run_benchmark,
    run_benchmark_sync,
)
from fastrag.benchmark.metrics import (
    MRR,
    Cost,
    ExactMatch,
    HitRate,
    Latency,
    Metric,
    Recall,
    TokenF1,
    TotalTokens,
)
from fastrag.documents import Chunk


def page(name: str) -> Chunk:
    return Chunk(name, 0, f"text of {name}")


def samples(n: int) -> list[EvalSample]:
    return [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(n)]


class EchoRetriever:
    """Returns page p<i> first for query i; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        self.calls.append(query)
        return [page("p" + query.split()[-1]), page("other")][:k]


HEADER_K5 = {"fastrag_outcomes": 1, "top_k": 5, "target": "retriever", "run_name": "echo"}


def run(target: Any, items: Sequence[EvalSample], metrics: Sequence[Metric], **options: Any) -> BenchmarkResult:
    options.setdefault("show_progress", False)
    return asyncio.run(run_benchmark(target, items, metrics, **options))


def test_sync_retriever_scores_and_summary() -> None:
    retriever = EchoRetriever()
    result = run(retriever, samples(3), [Recall(k=1, key="source_uri"), MRR(key="source_uri"), Latency()])
    assert sorted(retriever.calls) == ["query 0", "query 1", "query 2"]
    assert [o.sample_id for o in result.outcomes] == ["q0", "q1", "q2"]
    assert result.scores["recall@1[source_uri]"] == (1.0, 1.0, 1.0)
    assert result.summary["mrr@5[source_uri]"].mean == 1.0
    assert result.summary["latency_ms"].count == 3
    assert all(o.latency_ms is not None and o.latency_ms >= 0 for o in result.outcomes)
    assert result.higher_is_better == {"recall@1[source_uri]": True, "mrr@5[source_uri]": True, "latency_ms": False}


def test_top_k_defaults_to_the_largest_metric_k() -> None:
    seen: list[int] = []

    class Recorder:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            seen.append(k)
            return []

    run(Recorder(), samples(1), [Recall(k=3), MRR(k=7)])
    run(Recorder(), samples(1), [Latency()])
    run(Recorder(), samples(1), [Recall(k=3)], top_k=20)
    assert seen == [7, 10, 20]


def test_errors_are_recorded_and_the_run_goes_on() -> None:
    class Flaky:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            if query == "query 1":
                raise ConnectionError("index unreachable")
            return [page("p" + query.split()[-1])]

    result = run(Flaky(), samples(3), [HitRate(key="source_uri"), Latency()])
    failed = result.outcomes[1]
    assert failed.error == "ConnectionError: index unreachable"
    assert failed.retrieved == ()
    assert result.errors == {"q1": "ConnectionError: index unreachable"}
    assert result.scores["hit_rate@5[source_uri]"] == (1.0, None, 1.0)
    assert result.scores["latency_ms"][1] is None  # a failed sample's scores are all missing
    summary = result.summary["hit_rate@5[source_uri]"]
    assert (summary.count, summary.missing, summary.mean) == (2, 1, 1.0)
    assert str(result).splitlines()[0] == "Benchmark over 3 samples (1 failed)"


def test_a_bad_return_value_stops_the_run_naming_target_sample_and_type() -> None:
    class Wrong:
        def retrieve(self, query: str, k: int) -> Any:
            return "not chunks"

    with pytest.raises(TypeError) as error:
        run(Wrong(), samples(1), [Recall()])
    assert str(error.value) == (
        "the result of Wrong.retrieve('query 0', k) for sample 'q0' must be a sequence of Chunk or SearchHit, "
        "best first (got str)"
    )


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_timeouts_are_recorded(kind: str) -> None:
    class Slow:
        async def retrieve_async(self, query: str, k: int) -> list[Chunk]:
            if query == "query 0":
                await asyncio.sleep(5)
            return [page("p1")]

        def retrieve_sync(self, query: str, k: int) -> list[Chunk]:
            if query == "query 0":
                time.sleep(2.0)
            return [page("p1")]

    target = Slow()
    target.retrieve = target.retrieve_async if kind == "async" else target.retrieve_sync  # type: ignore[attr-defined]
    start = time.perf_counter()
    # The fast call gets 0.5 s: room for a thread to start on a loaded machine (0.05 s was not).
    result = run(target, samples(2), [HitRate(key="source_uri")], timeout_s=0.5)
    assert time.perf_counter() - start < 1.8  # did not wait for the slow call (2 s)
    timed_out = result.outcomes[0]
    assert timed_out.error == "TimeoutError: no answer within 0.5 s"
    assert timed_out.latency_ms is not None
    assert 450 <= timed_out.latency_ms < 1800  # answered at the timeout, not after the slow call
    assert result.scores["hit_rate@5[source_uri]"] == (None, 1.0)


def test_the_targets_own_timeout_error_keeps_its_message() -> None:
    class ReadTimeout:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            raise TimeoutError("read timed out")

    result = run(ReadTimeout(), samples(1), [Recall()], timeout_s=5)
    assert result.outcomes[0].error == "TimeoutError: read timed out"


def test_async_concurrency_limit_is_reached_and_never_exceeded() -> None:
    state = {"now": 0, "max": 0}

    class Counting:
        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.002)
            state["now"] -= 1
            return []

    run(Counting(), samples(40), [Recall()], concurrency=4)
    assert state == {"now": 0, "max": 4}


def test_sync_targets_run_in_threads_under_the_same_limit() -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    class Blocking:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.01)
            with lock:
                state["now"] -= 1
            return []

    run(Blocking(), samples(24), [Recall()], concurrency=6)
    assert state == {"now": 0, "max": 6}  # six at once: they overlapped, and never more


def test_pipeline_answers_tokens_and_cost() -> None:
    class Pipeline:
        async def answer(self, query: str, k: int) -> PipelineResponse:
            number = query.split()[-1]
            return PipelineResponse(f"the answer {number}", [page("p" + number)], total_tokens=100, cost_usd=0.5)

    items = [
        EvalSample("q0", "query 0", ["p0"], reference_answer="answer 0"),
        EvalSample("q1", "query 1", ["p9"], reference_answer="something else"),
    ]
    metrics = [ExactMatch(), TokenF1(), Recall(key="source_uri"), TotalTokens(), Cost()]
    result = run(Pipeline(), items, metrics)
    assert result.outcomes[0].answer == "the answer 0"
    assert result.scores["exact_match"] == (1.0, 0.0)  # "the" is an article, dropped by SQuAD
    assert result.scores["token_f1"] == (1.0, 0.0)
    assert result.scores["recall@5[source_uri]"] == (1.0, 0.0)
    assert result.summary["total_tokens"].mean == 100.0
    assert result.summary["cost_usd"].max == 0.5


def test_bare_retriever_asked_for_an_answer_metric_fails_before_running(tmp_path: Path) -> None:
    retriever = EchoRetriever()
    path = tmp_path / "outcomes.jsonl"
    with pytest.raises(ValueError) as error:
        run(retriever, samples(2), [Recall(), ExactMatch(), TokenF1()], results_path=path)
    assert str(error.value) == (
        "metric(s) exact_match, token_f1 need an answer, but 'target' is a bare Retriever "
        "(EchoRetriever has no answer(query, k)); pass a Pipeline or drop them"
    )
    assert retriever.calls == []
    assert not path.exists()


def test_operational_metrics_of_a_bare_retriever_are_missing() -> None:
    result = run(EchoRetriever(), samples(2), [TotalTokens(), Cost()])
    assert (result.summary["total_tokens"].count, result.summary["total_tokens"].missing) == (0, 2)
    assert result.summary["cost_usd"].mean is None


@pytest.mark.parametrize(
    ("target", "items", "metrics", "options", "error", "message"),
    [
        (
            object(),
            samples(1),
            [Recall()],
            {},
            TypeError,
            "'target' must have retrieve(query, k) or answer(query, k) (got object)",
        ),
        (
            EchoRetriever(), [], [Recall()], {}, ValueError,
            "'samples' must be a non-empty sequence of EvalSample (got an empty one)",
        ),
        (
            EchoRetriever(),
            [EvalSample("a", "x"), EvalSample("a", "y")],
            [Recall()],
            {},
            ValueError,
            "'samples' uses id 'a' more than once",
        ),
        (EchoRetriever(), ["query"], [Recall()], {}, TypeError, "'samples'[0] must be an EvalSample (got 'query')"),
        (
            EchoRetriever(), samples(1), [], {}, ValueError,
            "'metrics' must be a non-empty sequence of Metric (got an empty one)",
        ),
        (
            EchoRetriever(),
            samples(1),
            [Recall(), Recall()],
            {},
            ValueError,
            "'metrics' has two metrics named 'recall@5'",
        ),
        (
            EchoRetriever(),
            samples(1),
            [Recall()],
            {"concurrency": 0},
            ValueError,
            "'concurrency' must be a positive integer (got 0)",
        ),
        (
            EchoRetriever(),
            samples(1),
            [Recall()],
            {"timeout_s": -1},
            ValueError,
            "'timeout_s' must be a positive number of seconds or None (got -1)",
        ),
        (
            EchoRetriever(),
            samples(1),
            [Recall()],
            {"top_k": 0},
            ValueError,
            "'top_k' must be a positive integer or None (got 0)",
        ),
    ],
)
def test_bad_arguments_are_named(
    target: Any, items: Any, metrics: Any, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        run(target, items, metrics, **options)
    assert str(raised.value) == message


def test_outcomes_are_appended_as_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    result = run(EchoRetriever(), samples(3), [Recall(key="source_uri")], results_path=path)
    recorded = sorted((o for _, o in read_outcomes(path)), key=lambda o: o.sample_id)
    assert recorded == list(result.outcomes)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {
        "fastrag_outcomes": 1, "top_k": 5, "target": "retriever", "run_name": "test_fastrag_harness.EchoRetriever"
    }
    first = json.loads(lines[1])
    assert set(first) == {
        "sample_id",
        "query",
        "retrieved",
        "answer",
        "latency_ms",
        "total_tokens",
        "cost_usd",
        "error",
    }


def test_resume_runs_only_what_is_missing_or_failed(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    done = QueryOutcome("q0", "query 0", (page("p0"),), latency_ms=7.0)
    failed = QueryOutcome("q1", "query 1", latency_ms=1.0, error="TimeoutError: no answer within 1 s")
    torn = json.dumps(QueryOutcome("q2", "query 2").to_dict())[:25]  # the write the crash cut short
    header = json.dumps(HEADER_K5)
    path.write_text(
        "\n".join([header, json.dumps(done.to_dict()), json.dumps(failed.to_dict()), torn]), encoding="utf-8"
    )

    retriever = EchoRetriever()
    result = run(retriever, samples(4), [Recall(key="source_uri")], results_path=path, run_name="echo")
    assert sorted(retriever.calls) == ["query 1", "query 2", "query 3"]
    assert result.outcomes[0] == done  # kept as recorded, latency included
    assert result.scores["recall@5[source_uri]"] == (1.0, 1.0, 1.0, 1.0)
    lines = [o.sample_id for _, o in read_outcomes(path)]
    assert lines[:2] == ["q0", "q1"]
    assert sorted(lines[2:]) == ["q1", "q2", "q3"]  # the torn line is gone, the new ones appended

    again = EchoRetriever()
    run(again, samples(4), [Recall()], results_path=path, run_name="echo")
    assert again.calls == []  # everything recorded: nothing runs twice
    assert path.read_text(encoding="utf-8").count('"fastrag_outcomes"') == 1  # one header, not one per run


def test_an_interrupted_run_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"

    class Hangs:
        def __init__(self) -> None:
            self.calls = 0

        async def retrieve(self, query: str, k: int) -> list[Chunk]:
            self.calls += 1
            if query == "query 3":
                await asyncio.Event().wait()  # never set: the run is interrupted here
            return [page("p" + query.split()[-1])]

    async def interrupted() -> None:
        await asyncio.wait_for(
            run_benchmark(Hangs(), samples(6), [Recall()], concurrency=1, results_path=path, show_progress=False,
                          run_name="pages"),
            timeout=0.2,
        )

    with pytest.raises(TimeoutError):
        asyncio.run(interrupted())
    assert [o.sample_id for _, o in read_outcomes(path)] == ["q0", "q1", "q2"]

    retriever = EchoRetriever()
    result = run(retriever, samples(6), [Recall(key="source_uri")], results_path=path, run_name="pages")
    assert sorted(retriever.calls) == ["query 3", "query 4", "query 5"]  # each left one, once (threads: any order)
    assert result.summary["recall@5[source_uri]"].count == 6


def test_resume_false_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    run(EchoRetriever(), samples(2), [Recall()], results_path=path)
    retriever = EchoRetriever()
    run(retriever, samples(2), [Recall()], results_path=path, resume=False)
    assert sorted(retriever.calls) == ["query 0", "query 1"]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3  # the header and two outcomes


def test_resume_refuses_a_file_from_other_samples(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    run(EchoRetriever(), samples(2), [Recall()], results_path=path)
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([header, *sorted(lines)]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        run(
            EchoRetriever(),
            [EvalSample("q0", "a different query"), EvalSample("q1", "query 1")],
            [Recall()],
            results_path=path,
        )
    assert str(error.value) == (
        f"{path}:2: sample 'q0' was run with query 'query 0', not 'a different query'; pass resume=False to start over"
    )
    with pytest.raises(ValueError) as error:
        run(EchoRetriever(), samples(1), [Recall()], results_path=path)
    assert str(error.value) == (
        f"{path}:3: outcome for sample id 'q1', which is not among 'samples'; "
        "pass resume=False to start over or another 'results_path'"
    )


def test_a_metric_that_raises_stops_the_run_but_keeps_the_outcomes(tmp_path: Path) -> None:
    class Broken(Metric):
        @property
        def name(self) -> str:
            return "broken"

        async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
            raise RuntimeError("metric bug")

    path = tmp_path / "outcomes.jsonl"
    with pytest.raises(RuntimeError, match=r"^metric bug$"):
        run(EchoRetriever(), samples(3), [Broken()], results_path=path, concurrency=1)
    assert [o.sample_id for _, o in read_outcomes(path)] == ["q0"]


def test_result_to_json_and_save(tmp_path: Path) -> None:
    result = run(EchoRetriever(), samples(2), [Recall(key="source_uri"), Cost()])
    data = json.loads(result.to_json())
    assert data["summary"]["recall@5[source_uri]"]["mean"] == 1.0
    assert data["summary"]["cost_usd"]["mean"] is None  # missing stays null, never NaN
    assert data["samples"][1]["sample_id"] == "q1"
    assert data["samples"][1]["scores"] == {"recall@5[source_uri]": 1.0, "cost_usd": None}
    path = tmp_path / "result.jsonl"
    result.save_jsonl(path)
    assert [json.loads(line)["scores"]["recall@5[source_uri]"] for line in path.read_text().splitlines()] == [1.0, 1.0]
    assert result.per_sample("q0") == {"recall@5[source_uri]": 1.0, "cost_usd": None}
    with pytest.raises(KeyError, match="no sample 'zz' in this result"):
        result.per_sample("zz")
    assert repr(result) == "BenchmarkResult(2 samples, 0 failed, metrics=['recall@5[source_uri]', 'cost_usd'])"


def test_table_lists_every_metric_with_its_direction() -> None:
    result = run(EchoRetriever(), samples(2), [Recall(key="source_uri"), Latency()])
    lines = str(result).splitlines()
    assert lines[1].split() == [
        "metric",
        "n",
        "missing",
        "mean",
        "95%",
        "CI",
        "std",
        "p50",
        "p90",
        "p95",
        "p99",
        "min",
        "max",
    ]
    assert lines[3].split()[:5] == ["recall@5[source_uri]", "↑", "2", "0", "1.0000"]
    assert lines[4].split()[:4] == ["latency_ms", "↓", "2", "0"]


def test_progress_bar_and_silence(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    run(EchoRetriever(), samples(3), [Recall()], show_progress=False)
    assert capsys.readouterr().err == ""
    run(EchoRetriever(), samples(3), [Recall()], show_progress=True)
    err = capsys.readouterr().err  # not a terminal: a start line and a summary line, no "\r" redraws
    assert re.fullmatch(r"benchmark: 0/3 started\nbenchmark: 3/3 \[00:00, [0-9.]+ items/s\]\n", err), err


def test_sync_wrapper() -> None:
    result = run_benchmark_sync(EchoRetriever(), samples(2), [Recall(key="source_uri")], show_progress=False)
    assert result.summary["recall@5[source_uri]"].mean == 1.0

    async def inside_a_loop() -> None:
        run_benchmark_sync(EchoRetriever(), samples(1), [Recall()])

    with pytest.raises(RuntimeError, match=r"^run_benchmark_sync\(\) cannot run inside an event loop"):
        asyncio.run(inside_a_loop())


# --- resume checks what the recorded outcomes depend on: top_k and the kind of target ---


class TwoPages:
    """Retrieves page 'first' then page 'second' (cut to k); the relevant page is 'second'."""

    def __init__(self) -> None:
        self.calls = 0

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        self.calls += 1
        return [page("first"), page("second")][:k]


class TwoPagesPipeline(TwoPages):
    def answer(self, query: str, k: int) -> PipelineResponse:
        return PipelineResponse("an answer", self.retrieve(query, k))


SECOND = [EvalSample("q0", "query 0", ["second"])]


def test_resume_refuses_outcomes_retrieved_with_another_top_k(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(TwoPages(), SECOND, [Recall(k=1, key="source_uri")], results_path=path)
    before = path.read_text(encoding="utf-8")
    fresh = run(TwoPages(), SECOND, [Recall(k=2, key="source_uri")])
    assert fresh.summary["recall@2[source_uri]"].mean == 1.0
    # Reusing the k=1 outcome would score 0.0: it only ever held page 'first'.
    message = f"{path}:1: written with top_k=1, this run asks for top_k=2; use a new results_path or resume=False"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(TwoPages(), SECOND, [Recall(k=2, key="source_uri")], results_path=path)
    assert path.read_text(encoding="utf-8") == before  # refused before anything ran or was written
    retriever = TwoPages()
    result = run(retriever, SECOND, [Recall(k=2, key="source_uri")], results_path=path, resume=False)
    assert (retriever.calls, result.summary["recall@2[source_uri]"].mean) == (1, 1.0)


def test_resume_with_the_same_top_k_keeps_the_outcomes(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(TwoPages(), SECOND, [Recall(k=1, key="source_uri")], top_k=2, results_path=path)
    retriever = TwoPages()
    result = run(retriever, SECOND, [Recall(k=2, key="source_uri")], results_path=path)
    assert (retriever.calls, result.summary["recall@2[source_uri]"].mean) == (0, 1.0)


def test_resume_refuses_outcomes_of_another_kind_of_target(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(TwoPages(), SECOND, [Recall(k=2)], results_path=path, run_name="two pages")
    message = (
        f"{path}:1: written with target=retriever, this run asks for target=pipeline; "
        "use a new results_path or resume=False"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(TwoPagesPipeline(), SECOND, [Recall(k=2), ExactMatch()], results_path=path, run_name="two pages")
    message = (
        f"{path}:1: written with top_k=2 and target=retriever, this run asks for top_k=5 and target=pipeline; "
        "use a new results_path or resume=False"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(TwoPagesPipeline(), SECOND, [Recall(k=5)], results_path=path, run_name="two pages")


def test_resume_refuses_a_file_without_a_header(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    outcome = QueryOutcome("q0", "query 0", (page("first"),), latency_ms=1.0)
    path.write_text(json.dumps(outcome.to_dict()) + "\n", encoding="utf-8")  # the format before headers
    assert [o for _, o in read_outcomes(path)] == [outcome]  # still readable
    message = (
        f"{path}:1: no header line says which top_k and target this outcome was run with "
        "(a file from an older fastrag?); use a new results_path or resume=False"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(TwoPages(), SECOND, [Recall(k=2)], results_path=path)


def test_every_header_in_the_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    run(TwoPages(), SECOND, [Recall(k=2)], results_path=path)
    other = tmp_path / "other.jsonl"
    run(TwoPages(), [EvalSample("q1", "query 1", ["second"])], [Recall(k=1)], results_path=other)
    path.write_text(path.read_text(encoding="utf-8") + other.read_text(encoding="utf-8"), encoding="utf-8")
    message = f"{path}:3: written with top_k=1, this run asks for top_k=2; use a new results_path or resume=False"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run(TwoPages(), [*SECOND, EvalSample("q1", "query 1")], [Recall(k=2)], results_path=path)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (
            {"fastrag_outcomes": 2, "top_k": 2, "target": "retriever"},
            "header has format version 2; this fastrag reads version 1",
        ),
        (
            {"fastrag_outcomes": 1, "top_k": 0, "target": "retriever"},
            "'top_k' must be a positive integer (got 0)",
        ),
        (
            {"fastrag_outcomes": 1, "top_k": 2, "target": "agent"},
            "'target' must be one of 'retriever', 'pipeline' (got 'agent')",
        ),
        ({"fastrag_outcomes": 1, "top_k": 2}, "header is missing 'target'"),
    ],
)
def test_a_bad_header_names_the_line(tmp_path: Path, header: dict[str, object], reason: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}:1: {reason}')}$"):
        run(TwoPages(), SECOND, [Recall(k=2)], results_path=path)


@pytest.mark.parametrize("content", ["", "\n\n", '{"fastrag_outcomes": 1, "top'])
def test_an_empty_or_torn_file_gets_this_runs_header(tmp_path: Path, content: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(content, encoding="utf-8")
    run(TwoPages(), SECOND, [Recall(k=2)], results_path=path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert records[0] == {
        "fastrag_outcomes": 1, "top_k": 2, "target": "retriever", "run_name": "test_fastrag_harness.TwoPages"
    }
    assert [r["sample_id"] for r in records[1:]] == ["q0"]
    retriever = TwoPages()
    run(retriever, SECOND, [Recall(k=2)], results_path=path)
    assert retriever.calls == 0


def test_save_jsonl_is_atomic_and_names_the_bad_record(tmp_path: Path) -> None:
    class NanScore:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            chunk = Chunk("p" + query.split()[-1], 0, "text", {"score": 0.5})
            if query == "query 1":  # a Chunk refuses NaN metadata; a caller mutating its dict is caught at save
                chunk.metadata["score"] = float("nan")  # type: ignore[index]
            return [chunk]

    result = run(NanScore(), samples(3), [Recall(key="source_uri")])
    path = tmp_path / "result.jsonl"
    path.write_text("the previous result\n", encoding="utf-8")
    message = f"{path}: record 1 (sample 'q1'): Out of range float values are not JSON compliant"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        result.save_jsonl(path)
    assert path.read_text(encoding="utf-8") == "the previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.jsonl"]  # no temporary file left


def test_a_chunk_with_nan_metadata_is_that_samples_error(tmp_path: Path) -> None:
    class NanScore:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            score = float("nan") if query == "query 1" else 0.5
            return [Chunk("p" + query.split()[-1], 0, "text", {"score": score})]

    result = run(NanScore(), samples(3), [Recall(key="source_uri")], results_path=tmp_path / "out.jsonl")
    errors = [o.error for o in result.outcomes]
    assert errors[0] is None
    assert errors[2] is None
    assert errors[1] is not None
    assert "metadata['score'] is nan, which JSON cannot hold" in errors[1]
    assert result.summary["recall@5[source_uri]"].missing == 1
