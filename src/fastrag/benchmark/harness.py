r"""Run a retriever or a RAG pipeline over evaluation samples, concurrently, and measure it.

The target is either a :class:`Retriever` — ``retrieve(query, k)`` returning chunks or ef
``SearchHit``\ s, the one retriever protocol of :mod:`ef.retrieval`, so an ef index or
``SourceManager`` runs as it is — or a
:class:`Pipeline` — ``answer(query, k)`` returning a :class:`PipelineResponse` with the answer,
the chunks it used and its token usage and cost. Either method may be sync or async: async ones
run on the event loop, sync ones in a thread pool of `concurrency` threads so they overlap too
and a timeout can fire while they block.

At most `concurrency` samples are in flight at once. The harness times each call itself, from
when it starts; a call that raises or exceeds `timeout_s` becomes an outcome with its ``error``
set, whose scores are all missing, and the run goes on. A target that cannot be called as
``retrieve(query, k)`` is refused before anything runs, and one that returns the wrong type
stops the run with a ``TypeError`` naming the target, the query and what came back: that is a
bug to fix, not a flaky answer.
With `results_path`, each outcome is appended to that JSONL file as soon as it finishes, so an
interrupted run loses nothing; rerunning with ``resume=True`` keeps
the successful outcomes recorded there and runs only the rest (failed samples are retried). The
file starts with a header line recording ``top_k``, the kind of target and a run name, since the
recorded chunks depend on all three; resuming with a different one is a ``ValueError``, not a
silent rescore.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Real
from typing import Any, Protocol, TextIO, runtime_checkable

from ef._console import Progress
from ef._validate import (
    check_non_empty_str,
    check_non_negative_int,
    check_non_negative_number,
    check_positive_int,
    check_positive_number,
    check_str,
    describe,
)
from ef.retrieval import Retriever, as_chunks, check_retriever
from fastrag.benchmark._jsonl import dump_line
from fastrag.benchmark._results import default_run_name, open_results, start_results
from fastrag.benchmark.metrics import Metric, RetrievalMetric
from fastrag.benchmark.result import BenchmarkResult
from fastrag.benchmark.samples import EvalSample, OutcomesHeader, QueryOutcome
from fastrag.documents import Chunk

__all__ = ["Pipeline", "PipelineResponse", "Retriever", "run_benchmark", "run_benchmark_sync"]

_DEFAULT_TOP_K = 10


@dataclass(frozen=True, slots=True)
class PipelineResponse:
    """What a :class:`Pipeline` returns for one query.

    Parameters
    ----------
    answer
        The generated answer.
    retrieved
        The chunks the answer was grounded on, best first (for the retrieval metrics).
    total_tokens
        Tokens used (prompt plus completion), if known.
    cost_usd
        What the call cost in US dollars, if known.

    Examples
    --------
    >>> PipelineResponse("Paris", [Chunk("wiki/paris", 0, "Paris is...")], total_tokens=120).retrieved[0].chunk_index
    0
    """

    answer: str
    retrieved: Sequence[Chunk] = ()  # stored as a tuple; ef SearchHits and Segments are converted
    total_tokens: int | None = None
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        check_str(self.answer, "answer")
        object.__setattr__(self, "retrieved", as_chunks(self.retrieved, "'retrieved'"))
        if self.total_tokens is not None:
            object.__setattr__(self, "total_tokens", check_non_negative_int(self.total_tokens, "total_tokens"))
        if self.cost_usd is not None:
            object.__setattr__(self, "cost_usd", check_non_negative_number(self.cost_usd, "cost_usd"))


@runtime_checkable
class Pipeline(Protocol):
    """A whole RAG pipeline: ``answer(query, k)`` returns a :class:`PipelineResponse` (sync or async)."""

    def answer(self, query: str, k: int) -> PipelineResponse | Awaitable[PipelineResponse]:
        """Retrieve `k` chunks for `query` and answer it."""
        ...


def _check_arguments(
    target: object,
    samples: Sequence[EvalSample],
    metrics: Sequence[Metric],
    concurrency: int,
    timeout_s: float | None,
    top_k: int | None,
) -> tuple[bool, int]:
    """Validate everything before any sample runs; returns ``(is_pipeline, top_k)``."""
    is_pipeline = isinstance(target, Pipeline)
    if not is_pipeline and not isinstance(target, Retriever):
        raise TypeError(f"'target' must have retrieve(query, k) or answer(query, k) (got {describe(target)})")
    check_retriever(target, "answer" if is_pipeline else "retrieve")
    given: object = samples
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise TypeError(f"'samples' must be a non-empty sequence of EvalSample (got {describe(given)})")
    if not given:
        raise ValueError("'samples' must be a non-empty sequence of EvalSample (got an empty one)")
    seen: set[str] = set()
    for position, sample in enumerate(samples):
        if not isinstance(sample, EvalSample):
            raise TypeError(f"'samples'[{position}] must be an EvalSample (got {describe(sample)})")
        if sample.id in seen:
            raise ValueError(f"'samples' uses id {sample.id!r} more than once")
        seen.add(sample.id)
    if isinstance(metrics, Metric) or not isinstance(metrics, Sequence):
        raise TypeError(f"'metrics' must be a non-empty sequence of Metric (got {describe(metrics)})")
    if not metrics:
        raise ValueError("'metrics' must be a non-empty sequence of Metric (got an empty one)")
    names: set[str] = set()
    for position, metric in enumerate(metrics):
        if not isinstance(metric, Metric):
            raise TypeError(f"'metrics'[{position}] must be a Metric (got {describe(metric)})")
        if metric.name in names:
            raise ValueError(f"'metrics' has two metrics named {metric.name!r}")
        names.add(metric.name)
    needs_answer = [m.name for m in metrics if m.needs_answer]
    if needs_answer and not is_pipeline:
        raise ValueError(
            f"metric(s) {', '.join(needs_answer)} need an answer, but 'target' is a bare Retriever "
            f"({type(target).__name__} has no answer(query, k)); pass a Pipeline or drop them"
        )
    concurrency = check_positive_int(concurrency, "concurrency")
    if timeout_s is not None:  # numpy.float32(1) is 1 s
        check_positive_number(timeout_s, "timeout_s", what="a positive number of seconds or None")
    ks = [m.k for m in metrics if isinstance(m, RetrievalMetric)]
    if top_k is None:
        top_k = max(ks) if ks else _DEFAULT_TOP_K
    else:
        top_k = check_positive_int(top_k, "top_k", what="a positive integer or None")
        # A metric looking deeper than what is retrieved would score a window it can never fill.
        deeper = [m.name for m in metrics if isinstance(m, RetrievalMetric) and m.k > top_k]
        if deeper:
            raise ValueError(
                f"metric(s) {', '.join(deeper)} look deeper than 'top_k'={top_k} chunks; "
                f"raise top_k to at least {max(ks)} or lower their k"
            )
    return is_pipeline, top_k


class _NotRunError(Exception):
    """A sync call that got no thread in time: it never started, so the target did not fail."""


class _ExpiredError(TimeoutError):
    """The harness's deadline for a call in a thread; `started` is when the call started."""

    def __init__(self, started: float) -> None:
        super().__init__()
        self.started = started


class _CallState:
    """Whether a call in a thread has started, and whether its waiter gave up on it."""

    __slots__ = ("cancelled", "started")

    def __init__(self) -> None:
        self.cancelled = False
        self.started = False


class _Threads:
    """Runs a sync target's calls in a pool with room for the calls that timed out.

    A sync call that times out keeps its thread until it returns (Python cannot stop a thread).
    The pool has `concurrency` threads for the calls in flight plus as many for such abandoned
    calls, so a few slow calls do not starve the healthy ones; a call that still finds no free
    thread within the timeout is not started at all (:class:`_NotRunError`).
    """

    def __init__(self, concurrency: int) -> None:
        self.executor = ThreadPoolExecutor(max_workers=2 * concurrency, thread_name_prefix="fastrag-benchmark")
        self.abandoned = 0  # calls that timed out and still hold a thread
        self.lock = threading.Lock()

    async def call(
        self, method: Callable[[str, int], Any], query: str, k: int, timeout_s: float | None
    ) -> tuple[Any, float]:
        """Run ``method(query, k)`` in a thread; its deadline, `timeout_s`, starts when it starts.

        Returns the answer and when the call started (``time.monotonic()``).
        """
        loop = asyncio.get_running_loop()
        started: asyncio.Future[float] = loop.create_future()
        state = _CallState()

        def mark(at: float) -> None:
            if not started.done():
                started.set_result(at)

        def job() -> Any:
            with self.lock:  # decided once: either it runs, or the waiter gave up on it
                if state.cancelled:
                    return None
                state.started = True
            loop.call_soon_threadsafe(mark, time.monotonic())  # loop.time() is time.monotonic()
            try:
                return method(query, k)
            finally:
                self._finished(state)

        future = loop.run_in_executor(self.executor, job)
        try:
            at = await asyncio.wait_for(asyncio.shield(started), timeout_s)
        except TimeoutError:
            with self.lock:
                if not state.started:
                    state.cancelled = True
                    future.cancel()
                    raise _NotRunError(
                        f"not run: no thread came free within {timeout_s} s ({self.abandoned} calls that "
                        "timed out still hold theirs)"
                    ) from None
            at = await started  # it started just now: its own deadline applies
        limit = asyncio.timeout_at(None if timeout_s is None else at + timeout_s)
        try:
            async with limit:
                result = await asyncio.shield(future)
        except TimeoutError:
            if not limit.expired():
                raise  # the target's own TimeoutError (a socket read, say)
            with self.lock:
                if not future.done():
                    state.cancelled = True  # the thread is left to finish; job() counts it back
                    self.abandoned += 1
            raise _ExpiredError(at) from None
        # A sync method may still hand back an awaitable (e.g. a wrapped coroutine function).
        return (await result if inspect.isawaitable(result) else result), at

    def _finished(self, state: _CallState) -> None:
        """A call's thread is free again: an abandoned call no longer holds one."""
        with self.lock:
            if state.cancelled:
                self.abandoned -= 1

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _call_target(
    target: Any, is_pipeline: bool, threads: _Threads, timeout_s: float | None
) -> tuple[Callable[[str, int], Awaitable[tuple[Any, float]]], bool]:
    """A coroutine function running the target's method, on the loop or in `threads`, returning
    the answer and when the call started; and whether it runs in threads (its call then enforces
    `timeout_s` itself, from the moment a thread takes it)."""
    method = target.answer if is_pipeline else target.retrieve
    if inspect.iscoroutinefunction(method):

        async def on_loop(query: str, k: int) -> tuple[Any, float]:
            return await method(query, k), time.monotonic()  # the tuple is built after the await: see _run_one

        return on_loop, False

    async def in_thread(query: str, k: int) -> tuple[Any, float]:
        return await threads.call(method, query, k, timeout_s)

    return in_thread, True


def _outcome(
    target: object, sample: EvalSample, response: Any, is_pipeline: bool, latency_ms: float
) -> QueryOutcome:
    method = "answer" if is_pipeline else "retrieve"
    call = f"{type(target).__name__}.{method}({sample.query!r:.60}, k) for sample {sample.id!r}"
    if is_pipeline:
        if not isinstance(response, PipelineResponse):
            raise TypeError(f"{call} must return a PipelineResponse (got {type(response).__name__})")
        return QueryOutcome(
            sample.id,
            sample.query,
            tuple(response.retrieved),
            response.answer,
            latency_ms,
            response.total_tokens,
            response.cost_usd,
        )
    return QueryOutcome(sample.id, sample.query, as_chunks(response, f"the result of {call}"), latency_ms=latency_ms)


async def run_benchmark(
    target: Retriever | Pipeline,
    samples: Sequence[EvalSample],
    metrics: Sequence[Metric],
    *,
    concurrency: int = 8,
    timeout_s: float | None = 60.0,
    top_k: int | None = None,
    results_path: str | os.PathLike[str] | None = None,
    resume: bool = True,
    run_name: str | None = None,
    show_progress: bool = True,
) -> BenchmarkResult:
    """Run `target` on every sample, score each outcome with every metric, summarise.

    Parameters
    ----------
    target
        A :class:`Retriever` or a :class:`Pipeline` (a target with both is run as a Pipeline).
    samples
        The evaluation samples, with distinct ids.
    metrics
        The metrics to compute, with distinct names.
    concurrency
        Most samples in flight at once (and the thread-pool size for a sync target).
    timeout_s
        Seconds one call may take before it is recorded as failed, counted from when the call
        starts; ``None`` waits forever. A sync call that times out keeps its thread until it
        returns (Python cannot stop it); the pool holds `concurrency` more threads for such
        calls, so that the samples behind them still run. A sample that finds no free thread
        within `timeout_s` is recorded as not run (its ``error`` starts ``"not run: "``; a
        resumed run runs it again).
    top_k
        How many chunks to ask the target for. ``None`` uses the largest ``k`` among the
        retrieval metrics (10 when there is none); raise it for ``key="source_uri"`` metrics
        when several chunks of a page tend to come back together.
    results_path
        A JSONL file to append each outcome to as it finishes (one :meth:`QueryOutcome.to_dict`
        per line), after a header line recording `top_k`, whether the target is a retriever or a
        pipeline, and `run_name` (see :class:`~fastrag.benchmark.samples.OutcomesHeader`).
        Missing, it is created. A file that is not a results file (it does not start with such
        a header) is refused and left untouched, with `resume` or without.
    resume
        With `results_path`: keep the successful outcomes already recorded there and run only
        the other samples. The file's header must match this run's `top_k`, kind of target and
        `run_name`, else the recorded chunks would be scored as if this run had retrieved them.
        ``False`` starts the file over.
    run_name
        What produced the outcomes, recorded in the results file's header so that a resumed
        run never scores another target's outcomes. ``None`` derives it from the target: its
        class, a dataclass target's scalar fields and an ef index's embedder and corpus
        fingerprint (:func:`~fastrag.benchmark._results.default_run_name`); name your runs when
        one class runs with settings it does not expose that way.
    show_progress
        Draw a progress bar on stderr.

    Returns
    -------
    BenchmarkResult
        Outcomes in sample order, each metric's scores and their :class:`DistributionSummary`.

    Raises
    ------
    TypeError
        Before anything runs: if `target` has neither ``retrieve`` nor ``answer``, or its method
        cannot take ``(query, k)`` by position, or a sample, a metric or an option has the wrong
        type. While running: if the target returns something other than a sequence of ``Chunk``,
        ``SearchHit`` or ``Segment`` (or a :class:`PipelineResponse`), naming the sample and rank.
    ValueError
        Before anything runs: for a metric that needs an answer with a bare Retriever, empty or
        duplicate samples or metric names, a bad `concurrency`, `timeout_s` or `top_k`, or a
        `results_path` to resume whose lines do not match `samples`, whose header records another
        `top_k`, kind of target or `run_name`, or that has no header, and for a `results_path`
        that is not a results file at all (reported as ``path:line``; the file is not changed).

    Notes
    -----
    The metrics of one sample are awaited in turn, in the task that ran it, so deterministic
    metrics add no scheduling overhead. A metric that raises stops the run: that is a bug in
    the metric, not a flaky target (the outcomes recorded so far stay in `results_path`).

    Examples
    --------
    >>> import asyncio
    >>> from fastrag.benchmark.metrics import HitRate, Latency
    >>> class Echo:
    ...     def retrieve(self, query, k):
    ...         return [Chunk(query, 0, query)][:k]
    >>> samples = [EvalSample("q1", "a", ["a"]), EvalSample("q2", "b", ["z"])]
    >>> result = asyncio.run(run_benchmark(Echo(), samples,
    ...     [HitRate(key="source_uri"), Latency()], show_progress=False))
    >>> result.summary["hit_rate@5[source_uri]"].mean
    0.5
    >>> result.summary["latency_ms"].count
    2
    """
    is_pipeline, k = _check_arguments(target, samples, metrics, concurrency, timeout_s, top_k)
    concurrency = int(concurrency)  # numpy numbers passed the checks; compute with Python's
    timeout_s = None if timeout_s is None else float(timeout_s)
    done: dict[str, QueryOutcome] = {}
    if run_name is not None:
        check_non_empty_str(run_name, "run_name", what="a non-empty str or None")
    sink: TextIO | None = None  # closed in the finally below (or here, on a refusal)
    if results_path is not None:
        name = default_run_name(target) if run_name is None else run_name
        header = OutcomesHeader(k, "pipeline" if is_pipeline else "retriever", name)
        sink = open_results(results_path)  # locked until the run ends
        try:
            done = start_results(results_path, samples, header, resume=resume, stream=sink)
        except BaseException:
            sink.close()
            raise

    outcomes: list[QueryOutcome | None] = [done.get(sample.id) for sample in samples]
    scores: dict[str, list[float | None]] = {metric.name: [None] * len(samples) for metric in metrics}
    columns = [(metric, scores[metric.name]) for metric in metrics]
    positions = iter(range(len(samples)))
    threads = _Threads(concurrency)
    call, in_threads = _call_target(target, is_pipeline, threads, timeout_s)
    bar = Progress(len(samples), "benchmark", enabled=show_progress)

    async def worker() -> None:
        # Workers pull from one shared iterator: `concurrency` tasks in all, not one per sample.
        for position in positions:
            sample = samples[position]
            outcome = outcomes[position]
            if outcome is None:  # not recovered from results_path: run it
                outcome = await _run_one(target, call, sample, k, is_pipeline, timeout_s, in_threads)
                outcomes[position] = outcome
                if sink is not None:
                    sink.write(dump_line(outcome.to_dict()))
                    sink.flush()
            if outcome.ok:
                # Awaited in this task, one after another: no extra task per metric.
                for metric, column in columns:
                    column[position] = _checked_score(metric, sample, await metric.score(sample, outcome))
            bar.update()

    try:
        workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, len(samples)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
    finally:
        threads.shutdown()
        bar.close()
        if sink is not None:
            sink.close()

    return BenchmarkResult(
        summary={metric.name: metric.aggregate(column) for metric, column in columns},
        outcomes=tuple(o for o in outcomes if o is not None),
        scores={name: tuple(column) for name, column in scores.items()},
        higher_is_better={metric.name: metric.higher_is_better for metric in metrics},
    )


async def _run_one(
    target: object,
    call: Callable[[str, int], Awaitable[Any]],
    sample: EvalSample,
    k: int,
    is_pipeline: bool,
    timeout_s: float | None,
    in_threads: bool,
) -> QueryOutcome:
    """Call the target for one sample and time it; a raise or a timeout becomes the outcome's error.

    The latency and the deadline count from the moment the call starts: a sync call waiting for a
    thread is not yet running (``in_threads``: the call enforces the deadline itself).
    """
    deadline = asyncio.timeout(None if in_threads else timeout_s)
    start = time.monotonic()  # an async call starts now; a call in a thread says when it started
    try:
        async with deadline:
            response, started = await call(sample.query, k)
        if not in_threads:
            started = start
        elapsed = time.monotonic() - started
        if timeout_s is not None and elapsed > timeout_s and not in_threads:
            # An async target that blocks the event loop (time.sleep in a coroutine) keeps the
            # deadline from firing; it still answered too late, so it did not answer in time.
            error = (
                f"TimeoutError: no answer within {timeout_s} s (the call blocked the event loop for {elapsed:.3f} s)"
            )
            return QueryOutcome(sample.id, sample.query, latency_ms=elapsed * 1000, error=error)
    except _NotRunError as exc:
        return QueryOutcome(sample.id, sample.query, error=str(exc))
    except _ExpiredError as exc:
        start = exc.started
        error = f"TimeoutError: no answer within {timeout_s} s"
    except TimeoutError as exc:
        # The target's own TimeoutError (a socket read, say) keeps its message; ours says the limit.
        error = f"TimeoutError: no answer within {timeout_s} s" if deadline.expired() else f"TimeoutError: {exc}"
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the run itself is being cancelled
        # The target raised CancelledError on its own (a cancelled inner request): its failure only.
        error = f"CancelledError: {exc}" if str(exc) else "CancelledError: the call was cancelled"
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    else:
        # Outside the try: a wrong return type is the target's bug and stops the run, named.
        return _outcome(target, sample, response, is_pipeline, elapsed * 1000)
    return QueryOutcome(sample.id, sample.query, latency_ms=(time.monotonic() - start) * 1000, error=error)


def _checked_score(metric: Metric, sample: EvalSample, value: object) -> float | None:
    """A metric's score as a float, or ``None``; NaN, inf or a non-number stops the run now, named."""
    if value is None:
        return None
    if type(value) is float and math.isfinite(value):  # the common case, without the ABC check
        return value
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(
            f"metric {metric.name!r} scored sample {sample.id!r} as {value!r}; a score must be a finite "
            "number, or None when the sample cannot be measured"
        )
    return float(value)


def run_benchmark_sync(
    target: Retriever | Pipeline,
    samples: Sequence[EvalSample],
    metrics: Sequence[Metric],
    **options: Any,
) -> BenchmarkResult:
    """:func:`run_benchmark` for code without an event loop; same arguments, same result.

    Raises
    ------
    RuntimeError
        When called from inside a running event loop — ``await run_benchmark(...)`` there.

    Examples
    --------
    >>> from fastrag.benchmark.metrics import Recall
    >>> class Fixed:
    ...     def retrieve(self, query, k):
    ...         return [Chunk("a", 0, "x"), Chunk("b", 0, "y")]
    >>> result = run_benchmark_sync(Fixed(), [EvalSample("q1", "?", ["b"])],
    ...     [Recall(k=1, key="source_uri"), Recall(k=2, key="source_uri")], show_progress=False)
    >>> [s.mean for s in result.summary.values()]
    [0.0, 1.0]
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_benchmark(target, samples, metrics, **options))
    raise RuntimeError("run_benchmark_sync() cannot run inside an event loop; use 'await run_benchmark(...)'")
