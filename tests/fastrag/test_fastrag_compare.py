"""fastrag.benchmark.compare_results: pairing by sample id, metric directions, the shared core."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ef.compare import compare
from ef.evaluation import RunEvalReport
from fastrag.benchmark import BenchmarkResult, QueryOutcome, compare_results
from fastrag.benchmark.summary import DistributionSummary


def _result(
    scores: dict[str, list[float | None]],
    directions: dict[str, bool] | None = None,
    *,
    ids: list[str] | None = None,
    errors: dict[str, str] | None = None,
) -> BenchmarkResult:
    n = len(next(iter(scores.values())))
    ids = ids or [f"s{i}" for i in range(n)]
    errors = errors or {}
    outcomes = tuple(QueryOutcome(i, "query", latency_ms=1.0, error=errors.get(i)) for i in ids)
    return BenchmarkResult(
        summary={m: DistributionSummary.from_scores(v) for m, v in scores.items()},
        outcomes=outcomes,
        scores={m: tuple(v) for m, v in scores.items()},
        higher_is_better=directions if directions is not None else {m: m != "latency_ms" for m in scores},
    )


def test_samples_are_paired_by_id_not_by_position() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30) + 0.2
    order = list(rng.permutation(30))
    base = _result({"recall@10": a.tolist()})
    shuffled = _result({"recall@10": [float(b[i]) for i in order]}, ids=[f"s{i}" for i in order])
    c = compare_results({"base": base, "new": shuffled}, baseline="base").get("new", "recall@10")
    assert abs(c.p_value - stats.ttest_rel(b, a).pvalue) <= 1e-12
    assert c.diff == pytest.approx((b - a).mean(), abs=1e-15)


def test_lower_latency_is_better() -> None:
    slow = _result({"latency_ms": [30.0, 32.0, 29.0, 35.0, 31.0, 33.0], "ndcg@10": [0.5] * 6})
    fast = _result({"latency_ms": [20.0, 22.0, 21.0, 24.0, 30.0, 29.0], "ndcg@10": [0.4] * 6})
    report = compare_results({"slow": slow, "fast": fast}, baseline="slow")
    latency, ndcg = report.get("fast", "latency_ms"), report.get("fast", "ndcg@10")
    assert (latency.wins, latency.ties, latency.losses, latency.verdict) == (6, 0, 0, "better")
    assert latency.diff == pytest.approx(-44 / 6)
    assert (ndcg.wins, ndcg.losses, ndcg.verdict) == (0, 6, "worse")
    assert report.higher_is_better == {"latency_ms": False, "ndcg@10": True}
    assert report.unit == "samples"
    lines = str(report).splitlines()
    assert lines[3].split()[:4] == ["fast", "slow", "latency_ms", "↓"]
    assert lines[-2].endswith("W/T/L: samples won / tied / lost; ↓: lower is better")
    assert repr(report) == "ComparisonReport(2 systems, 2 measures, 6 samples, 2 comparisons, test='t')"


def test_failed_and_unscored_samples_are_left_out_for_every_result() -> None:
    a = _result({"m": [0.1, 0.2, 0.3, 0.4, None]}, errors={"s4": "TimeoutError: 1 s"})
    b = _result({"m": [0.2, None, 0.5, 0.6, 0.7]})
    report = compare_results({"a": a, "b": b})
    c = report.get("b", "m")
    assert c.n_queries == 3  # s1 unscored by b, s4 failed in a
    assert (c.baseline_mean, c.system_mean) == pytest.approx((0.8 / 3, 1.3 / 3))
    assert report.lacked == {"a": 1, "b": 0}
    assert report.per_query_diff(c) == pytest.approx({"s0": 0.1, "s2": 0.2, "s3": 0.2})
    assert report.warnings[1] == "'a' lacked 1 of the 5 samples: left out for every system"


def test_the_same_values_give_the_same_report_as_ef_compare() -> None:
    rng = np.random.default_rng(1)
    values = {name: rng.random(40).tolist() for name in ("x", "y", "z")}
    ours = compare_results({n: _result({"m": v}) for n, v in values.items()}, test="randomization", resamples=500)
    reports = {
        n: RunEvalReport({}, {f"s{i}": {"m": x} for i, x in enumerate(v)}, len(v)) for n, v in values.items()
    }
    theirs = compare(reports, None, ["m"], test="randomization", resamples=500)
    assert ours.comparisons == theirs.comparisons


def test_directions_must_be_known_and_agree() -> None:
    a = _result({"m": [0.1, 0.2, 0.3]}, directions={})
    b = _result({"m": [0.2, 0.2, 0.4]}, directions={})
    with pytest.raises(ValueError, match=r"no result records whether higher is better for 'm': pass higher_is_better"):
        compare_results({"a": a, "b": b})
    assert compare_results({"a": a, "b": b}, higher_is_better={"m": False}).get("b", "m").losses == 2
    c = _result({"m": [0.2, 0.2, 0.4]}, directions={"m": False})
    d = _result({"m": [0.2, 0.2, 0.4]}, directions={"m": True})
    with pytest.raises(ValueError, match=r"the results disagree on whether higher is better for 'm'"):
        compare_results({"c": c, "d": d})


def test_bad_input_is_named() -> None:
    a = _result({"m": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match=r"result 'b' has no metric 'm' \(it has 'k'\)"):
        compare_results({"a": a, "b": _result({"k": [0.1, 0.2, 0.3]})}, ["m"])
    with pytest.raises(TypeError, match=r"'results'\['b'\] must be a BenchmarkResult \(got dict\)"):
        compare_results({"a": a, "b": {}})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"'results' must hold at least 2 results to compare \(got 1\)"):
        compare_results({"a": a})
    with pytest.raises(ValueError, match=r"'baseline' 'z' is not one of the results \('a', 'b'\)"):
        compare_results({"a": a, "b": a}, baseline="z")
    with pytest.raises(ValueError, match=r"only 1 samples scored by every system on 'm': a paired test needs"):
        compare_results({"a": a, "b": _result({"m": [0.1, None, None]})})
    with pytest.raises(ValueError, match=r"'test' must be one of t, randomization, bootstrap, wilcoxon"):
        compare_results({"a": a, "b": a}, test="z")  # type: ignore[arg-type]


def test_wrong_types_are_type_errors_and_wrong_values_value_errors() -> None:
    # issue 10: ef._validate's template, TypeError for a wrong type
    a, b = _result({"recall@10": [0.1, 0.5, 0.2]}), _result({"recall@10": [0.3, 0.5, 0.4]})
    with pytest.raises(TypeError, match=r"^'higher_is_better'\['recall@10'\] must be a bool \(got 1\)$"):
        compare_results({"a": a, "b": b}, higher_is_better={"recall@10": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"^'results': every name must be a non-empty str \(got 1\)$"):
        compare_results({1: a, "b": b})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"^'results': every name must be a non-empty str \(got ''\)$"):
        compare_results({"": a, "b": b})
    with pytest.raises(TypeError, match=r"^'seed' must be a non-negative integer \(got True\)$"):
        compare_results({"a": a, "b": b}, seed=True)
    with pytest.raises(TypeError, match=r"^'runs': every name must be a non-empty str \(got 1\)$"):
        compare({1: {"q1": {"d1": 1.0}}, "b": {"q1": {"d1": 1.0}}}, {"q1": {"d1": 1}}, ["mrr"])  # type: ignore[dict-item]
