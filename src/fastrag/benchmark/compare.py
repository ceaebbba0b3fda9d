"""A/B benchmark results: is B better than A, by how much, how sure?

:func:`compare_results` pairs two or more :class:`~fastrag.benchmark.BenchmarkResult` s by sample
id and runs ef's paired comparison on every metric (``ef.compare``: the same tests, corrections,
intervals and report), each metric in its own direction: latency and cost are lower-is-better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ef._validate import finite_float
from ef.compare import Correction, Test, check_options
from fastrag.benchmark.result import BenchmarkResult

if TYPE_CHECKING:
    from ef.compare import ComparisonReport

__all__ = ["compare_results"]


def _directions(
    results: Mapping[str, BenchmarkResult], metrics: Sequence[str], given: Mapping[str, bool] | None
) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for m in metrics:
        if given is not None and m in given:
            if not isinstance(given[m], bool):
                raise TypeError(f"'higher_is_better'[{m!r}] must be a bool (got {given[m]!r})")
            out[m] = given[m]
            continue
        seen = {name: r.higher_is_better[m] for name, r in results.items() if m in r.higher_is_better}
        if not seen:
            raise ValueError(
                f"no result records whether higher is better for {m!r}: pass higher_is_better={{{m!r}: ...}}"
            )
        if len(set(seen.values())) > 1:
            raise ValueError(f"the results disagree on whether higher is better for {m!r}: {seen}")
        out[m] = next(iter(seen.values()))
    return out


def _metrics(results: Mapping[str, BenchmarkResult], metrics: Sequence[str] | None) -> list[str]:
    first = next(iter(results.values()))
    if metrics is None:
        shared = [m for m in first.scores if all(m in r.scores for r in results.values())]
        if not shared:
            raise ValueError("the results share no metric")
        return shared
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        raise TypeError(f"'metrics' must be a sequence of metric names (got {metrics!r})")
    names = list(metrics)
    if not names:
        raise ValueError("'metrics' must name at least one metric")
    repeated = [m for i, m in enumerate(names) if m in names[:i]]
    if repeated:
        raise ValueError(f"'metrics' lists {repeated[0]!r} twice")
    for name, result in results.items():
        for m in names:
            if m not in result.scores:
                raise ValueError(f"result {name!r} has no metric {m!r} (it has {', '.join(map(repr, result.scores))})")
    return names


def _per_sample(name: str, result: BenchmarkResult, metrics: Sequence[str]) -> dict[str, list[float | None]]:
    """Sample id -> the scores of `metrics` (``None`` = not measured), checked."""
    out: dict[str, list[float | None]] = {}
    for position, outcome in enumerate(result.outcomes):
        if outcome.sample_id in out:
            raise ValueError(f"result {name!r} holds sample {outcome.sample_id!r} twice: cannot pair it")
        row: list[float | None] = []
        for m in metrics:
            value = result.scores[m][position]
            if value is not None and (
                finite_float(value) is None
            ):
                raise ValueError(
                    f"result {name!r}: {m!r} of sample {outcome.sample_id!r} is not a finite number (got {value!r})"
                )
            row.append(None if value is None else float(value))
        out[outcome.sample_id] = row
    return out


def compare_results(
    results: Mapping[str, BenchmarkResult],
    metrics: Sequence[str] | None = None,
    *,
    baseline: str | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    higher_is_better: Mapping[str, bool] | None = None,
) -> ComparisonReport:
    """Compare benchmark results sample by sample, every metric in its own direction.

    Samples are paired by :attr:`~fastrag.benchmark.QueryOutcome.sample_id`. Each metric
    compares the samples that every result scored (a failed sample, or a score of ``None``, is
    left out of that metric for every result); ``report.lacked`` counts, per result, the samples
    it has no successful outcome for. Directions come from the results' ``higher_is_better``
    (the harness records every metric's), or from `higher_is_better`, which overrides them; a
    "better" latency or cost is a lower one. The options are :func:`ef.compare.compare`'s.

    Parameters
    ----------
    results
        Name -> :class:`~fastrag.benchmark.BenchmarkResult`, at least two.
    metrics
        The metrics to compare; ``None``: every metric all results have.
    baseline
        Compare every other result with this one; ``None`` compares all pairs.
    higher_is_better
        Metric -> direction, for results that do not record it (loaded from JSONL, say).

    Returns
    -------
    ComparisonReport
        With ``unit="samples"`` and ``missing="skip"``.

    Raises
    ------
    ValueError
        For a bad option, a metric a result lacks or whose direction is unknown or disputed, a
        sample held twice, a score that is not finite, or fewer than 2 samples to pair.

    Examples
    --------
    >>> from fastrag.benchmark import QueryOutcome
    >>> from fastrag.benchmark.summary import DistributionSummary
    >>> def result(latencies):
    ...     outcomes = tuple(QueryOutcome(f"s{i}", "q", latency_ms=v) for i, v in enumerate(latencies))
    ...     return BenchmarkResult({"latency_ms": DistributionSummary.from_scores(latencies)}, outcomes,
    ...                            {"latency_ms": tuple(latencies)}, {"latency_ms": False})
    >>> old, new = result([30.0, 32.0, 29.0, 35.0, 31.0]), result([20.0, 22.0, 21.0, 24.0, 30.0])
    >>> c = compare_results({"old": old, "new": new}, baseline="old").get("new", "latency_ms")
    >>> c.diff, (c.wins, c.ties, c.losses), c.verdict  # lower latency wins
    (-8.0, (5, 0, 0), 'better')
    """
    if not isinstance(results, Mapping):
        raise TypeError(f"'results' must be a mapping of name -> BenchmarkResult (got {type(results).__name__})")
    systems = list(results)
    for name in systems:
        if not isinstance(name, str):
            raise TypeError(f"'results': every name must be a non-empty str (got {name!r})")
        if not name:
            raise ValueError(f"'results': every name must be a non-empty str (got {name!r})")
        if not isinstance(results[name], BenchmarkResult):
            raise TypeError(f"'results'[{name!r}] must be a BenchmarkResult (got {type(results[name]).__name__})")
    if len(systems) < 2:
        raise ValueError(f"'results' must hold at least 2 results to compare (got {len(systems)})")
    if baseline is not None and baseline not in results:
        raise ValueError(f"'baseline' {baseline!r} is not one of the results ({', '.join(map(repr, systems))})")
    check_options(test, correction, alpha, confidence, resamples, seed)
    names = _metrics(results, metrics)
    direction = _directions(results, names, higher_is_better)
    rows = {s: _per_sample(s, results[s], names) for s in systems}
    samples = sorted(set().union(*rows.values()))
    ok = {s: {o.sample_id for o in results[s].outcomes if o.error is None} for s in systems}
    lacked = {s: sum(1 for q in samples if q not in ok[s]) for s in systems}
    scores = {
        s: {m: [rows[s][q][j] if q in rows[s] else None for q in samples] for j, m in enumerate(names)}
        for s in systems
    }
    from ef.compare import build_report  # the statistics (numpy, scipy) load when a comparison is made

    return build_report(
        systems=systems,
        measures=names,
        higher_is_better=direction,
        queries=samples,
        scores=scores,
        lacked=lacked,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        missing="skip",
        unit="samples",
    )
