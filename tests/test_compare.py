"""ef.compare: paired tests against scipy, exact enumeration and hand-written references; reports."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ef.cli import main
from ef.compare import SCHEMA, compare
from ef.comparison._stats import _bootstrap_counts, _t_p, adjust_p_values, paired_statistics
from ef.evaluation import RunEvalReport


def _report(values: dict[str, list[float]]) -> RunEvalReport:
    """A report holding per-query values, as evaluate_run returns it: measure -> values by query."""
    n = len(next(iter(values.values())))
    per_query = {f"q{i:04d}": {m: v[i] for m, v in values.items()} for i in range(n)}
    return RunEvalReport(metrics={}, per_query=per_query, n_queries=n)


def _pair(a: list[float], b: list[float], **options: object) -> object:
    report = compare({"a": _report({"m": a}), "b": _report({"m": b})}, None, ["m"], **options)  # type: ignore[arg-type]
    return report.get("b", "m")


# --- the tests against scipy and references ---------------------------------------------------


@pytest.mark.parametrize(("seed", "n"), [(1, 5), (2, 30), (3, 200), (4, 2000)])
def test_t_test_equals_scipy_ttest_rel(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n) + 0.05
    c = _pair(a.tolist(), b.tolist(), resamples=200)
    expected = stats.ttest_rel(b, a).pvalue
    assert abs(c.p_value - expected) <= 1e-12
    assert c.p_adjusted == c.p_value  # one comparison: Holm changes nothing


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 400),
    st.integers(1, 5),
    st.sampled_from(["normal", "rounded", "small integers", "offset"]),
    st.floats(-8, 2),
    st.integers(0, 2**32 - 1),
)
def test_t_test_p_values_are_scipys_to_the_bit(n: int, columns: int, kind: str, scale: float, seed: int) -> None:
    # _t_p repeats ttest_1samp's arithmetic with scipy.special alone: equal, not close.
    rng = np.random.default_rng(seed)
    d = rng.normal(size=(n, columns)) * 10**scale
    if kind == "rounded":
        d = d.round(2)
    elif kind == "small integers":
        d = rng.integers(-3, 4, size=(n, columns)) / 10
    elif kind == "offset":
        d = d + 1e3
    constant = (d == d[0]).all(axis=0)
    expected = np.where(d[0] == 0.0, 1.0, 0.0)
    if (~constant).any():
        with warnings.catch_warnings():  # scipy warns of precision loss on near-constant columns
            warnings.simplefilter("ignore")
            expected[~constant] = stats.ttest_1samp(d[:, ~constant], 0.0, axis=0).pvalue
    assert _t_p(d, constant).tolist() == expected.tolist()


def test_a_variance_that_underflows_warns_no_more_than_scipy() -> None:
    d = np.array([[1e-300, 5e-324], [2e-300, 0.0], [1e-300, 5e-324]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy is silent here; numpy's divide-by-zero must not show
        got = _t_p(d, np.array([False, False]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got.tolist() == stats.ttest_1samp(d, 0.0, axis=0).pvalue.tolist()


def test_a_t_test_comparison_does_not_import_scipy_stats() -> None:
    # scipy.stats takes about a second to import: most of a small `ef compare`.
    code = (
        "import sys\n"
        "from ef.compare import compare\n"
        "from ef.evaluation import RunEvalReport\n"
        "r = lambda v: RunEvalReport(metrics={}, per_query={f'q{i}': {'m': x} for i, x in enumerate(v)}, n_queries=4)\n"
        "c = compare({'a': r([0.1, 0.2, 0.3, 0.4]), 'b': r([0.3, 0.1, 0.6, 0.9])}, None, ['m'], test='t')\n"
        "print(round(c.get('b', 'm').p_value, 6), 'scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    expected = stats.ttest_rel([0.3, 0.1, 0.6, 0.9], [0.1, 0.2, 0.3, 0.4]).pvalue
    assert out == f"{round(expected, 6)} False\n"


@pytest.mark.parametrize(("seed", "n", "rounding"), [(5, 12, None), (6, 40, 1), (7, 300, 2), (8, 60, None)])
def test_wilcoxon_equals_scipy(seed: int, n: int, rounding: int | None) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n) + 0.1
    if rounding is not None:  # ties and zero differences: scipy's normal approximation path
        a, b = a.round(rounding), b.round(rounding)
    c = _pair(a.tolist(), b.tolist(), test="wilcoxon")
    assert abs(c.p_value - stats.wilcoxon(b, a).pvalue) <= 1e-12


def _exact_randomization(d: np.ndarray) -> float:
    """Every sign flip, one by one."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    hits = int((np.abs(signs @ d) >= abs(d.sum()) - 1e-9).sum())
    return hits / 2 ** len(d)


@pytest.mark.parametrize(
    ("seed", "n", "rounding"),
    [(9, 6, None), (10, 10, None), (11, 12, 1), (12, 13, 2), (23, 18, 1)],  # 2**18 flips: two blocks of rows
)
def test_randomization_equals_exact_enumeration(seed: int, n: int, rounding: int | None) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n) + 0.2
    if rounding is not None:  # ties among the flipped sums
        a, b = a.round(rounding), b.round(rounding)
    report = compare({"a": _report({"m": a.tolist()}), "b": _report({"m": b.tolist()})}, None, ["m"],
                     test="randomization", resamples=2**n)
    assert report.exact
    assert report.get("b", "m").p_value == _exact_randomization(b - a)


def test_sampled_randomization_p_is_b_plus_one_over_resamples_plus_one() -> None:
    rng = np.random.default_rng(13)
    a = rng.random(40)
    c = _pair(a.tolist(), (a + 1.0).tolist(), test="randomization", resamples=999)
    assert c.p_value == 1 / 1000  # no flip reaches the observed sum, yet p is not 0
    d = rng.normal(0.05, 0.3, 16)
    p = _pair([0.0] * 16, d.tolist(), test="randomization", resamples=4000).p_value
    assert round(p * 4001) == pytest.approx(p * 4001, abs=1e-9)
    exact = _exact_randomization(d)
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1 / 4001


def test_bootstrap_matches_a_loop_over_the_same_resamples() -> None:
    rng = np.random.default_rng(14)
    d = rng.normal(0.03, 0.2, size=(50, 3))
    got = paired_statistics(d, test="bootstrap", resamples=500, seed=7, confidence=0.9)
    counts = np.concatenate(list(_bootstrap_counts(50, 500, 7)))
    assert counts.shape == (500, 50)
    assert (counts.sum(axis=1) == 50).all()
    for column in range(3):
        x = d[:, column]
        means = np.array([np.repeat(x, row.astype(int)).mean() for row in counts])
        hits = sum(1 for m in means if abs(m - x.mean()) >= abs(x.mean()) - 1e-9 * np.abs(x).mean())
        assert got.p_value[column] == (hits + 1) / 501
        assert got.ci_low[column] == pytest.approx(np.quantile(means, 0.05), abs=1e-12)
        assert got.ci_high[column] == pytest.approx(np.quantile(means, 0.95), abs=1e-12)


def _holm(p: list[float]) -> list[float]:
    m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh(p: list[float]) -> list[float]:
    m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        out[i] = min(running, 1.0)
    return out


@pytest.mark.parametrize("seed", [15, 16, 17])
def test_corrections_equal_hand_written_references(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.random(20) ** 3, [0.01, 0.01, 0.5, 1.0]])  # ties and a 1
    assert adjust_p_values(p, "holm").tolist() == pytest.approx(_holm(p.tolist()), abs=1e-15)
    assert adjust_p_values(p, "bh").tolist() == pytest.approx(_bh(p.tolist()), abs=1e-15)
    assert adjust_p_values(p, "bh") == pytest.approx(stats.false_discovery_control(p), abs=1e-15)
    assert adjust_p_values(p, "bonferroni").tolist() == [min(1.0, x * len(p)) for x in p]
    assert adjust_p_values(p, "none").tolist() == p.tolist()


@pytest.mark.slow  # ranx's numba JIT warm-up: about 25 s
def test_t_test_equals_ranx_on_the_same_runs() -> None:
    ranx = pytest.importorskip(
        "ranx", reason="ranx is not installed: pip install 'ef-eval[test]' (the ranx parity test)"
    )
    rng = np.random.default_rng(18)
    qrels = {f"q{i}": {f"d{j}": 1 for j in rng.choice(50, 4, replace=False)} for i in range(60)}

    def run(shift: float) -> dict[str, dict[str, float]]:
        return {q: {f"d{j}": float(s) for j, s in enumerate(rng.random(50) + shift * (np.arange(50) < 10))}
                for q in qrels}

    runs = {"a": run(0.0), "b": run(0.3), "c": run(0.1)}
    ours = compare(runs, qrels, ["ndcg@10", "precision@10", "mrr"], correction="none")
    theirs = ranx.compare(
        ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()],
        ["ndcg@10", "precision@10", "mrr"], stat_test="student",
    )
    for c in ours.comparisons:
        ranx_name = {"precision@10": "precision@10"}.get(c.measure, c.measure)
        expected = theirs.comparisons[frozenset([c.baseline, c.system])][ranx_name]["p_value"]
        assert abs(c.p_value - expected) <= 1e-12, c


# --- compare(): inputs, missing queries, order, options ----------------------------------------

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
RUN_A = {"q1": {"d1": 0.5, "x": 0.9}, "q2": {"d2": 0.9}, "q3": {"d3": 0.1, "x": 0.5}, "q4": {"x": 1.0}}
RUN_B = {"q1": {"d1": 0.9, "x": 0.2}, "q2": {"d2": 0.9}, "q3": {"d3": 0.6, "x": 0.5}}  # lacks q4


def test_missing_zero_scores_a_lacking_query_zero_and_counts_it() -> None:
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"])
    assert report.lacked == {"a": 0, "b": 1}
    assert report.queries == ("q1", "q2", "q3", "q4")
    assert report.scores["b"]["mrr"] == (1.0, 1.0, 1.0, 0.0)
    assert report.scores["a"]["mrr"] == (0.5, 1.0, 0.5, 0.0)
    c = report.get("b", "mrr")
    assert (c.wins, c.ties, c.losses, c.n_queries) == (2, 2, 0, 4)
    assert "warning: 'b' lacked 1 of the 4 queries: scored 0 (missing='zero')" in str(report)


def test_missing_skip_keeps_the_queries_every_run_has() -> None:
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], missing="skip")
    assert report.queries == ("q1", "q2", "q3")
    assert report.lacked == {"a": 0, "b": 1}
    assert report.get("b", "mrr").baseline_mean == pytest.approx(2 / 3)


def test_run_files_and_reports_are_accepted(tmp_path: object) -> None:
    path = tmp_path / "a.trec"  # type: ignore[operator]
    path.write_text("".join(f"{q} Q0 {d} 1 {s} a\n" for q, r in RUN_A.items() for d, s in r.items()))
    from ef.evaluation import evaluate_run

    as_report = evaluate_run(RUN_B, QRELS, ["mrr"], missing="skip")
    report = compare({"a": str(path), "b": as_report}, QRELS, ["mrr"])
    assert report.scores == compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"]).scores


def _values(seed: int, n: int = 40) -> dict[str, RunEvalReport]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return {name: _report({"m1": (base + shift * rng.random(n)).tolist(), "m2": rng.random(n).tolist()})
            for name, shift in (("s1", 0.0), ("s2", 0.2), ("s3", 0.1), ("s4", 0.05))}


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_p_values_do_not_depend_on_run_order_or_the_other_runs(test: str) -> None:
    runs = _values(19)
    forward = compare(runs, None, ["m1", "m2"], test=test, resamples=2000, seed=3)
    backward = compare(dict(reversed(runs.items())), None, ["m1", "m2"], test=test, resamples=2000, seed=3)
    alone = compare({"s1": runs["s1"], "s2": runs["s2"]}, None, ["m1", "m2"], test=test, resamples=2000, seed=3)
    for c in forward.comparisons:
        turned = backward.get(c.baseline, c.measure, c.system)  # the same pair, the other way round
        assert turned.p_value == c.p_value
        assert (turned.ci_low, turned.ci_high) == pytest.approx((-c.ci_high, -c.ci_low), abs=1e-12)
    pair = forward.get("s2", "m1", "s1")
    assert alone.get("s2", "m1").p_value == pair.p_value
    assert (alone.get("s2", "m1").ci_low, alone.get("s2", "m1").ci_high) == pytest.approx(
        (pair.ci_low, pair.ci_high), abs=1e-12
    )  # the same resamples; the matrix product of another width may differ in the last bit
    assert compare(runs, None, ["m1", "m2"], test=test, resamples=2000, seed=3) == forward
    assert compare(runs, None, ["m1", "m2"], test=test, resamples=2000, seed=4) != forward


def test_p_values_do_not_depend_on_the_number_of_blas_threads() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    runs = _values(24, n=300)
    many = compare(runs, None, ["m1", "m2"], test="randomization", resamples=3000)
    with threadpoolctl.threadpool_limits(limits=1):
        one = compare(runs, None, ["m1", "m2"], test="randomization", resamples=3000)
    assert [c.p_value for c in one.comparisons] == [c.p_value for c in many.comparisons]
    assert [c.ci_low for c in one.comparisons] == pytest.approx([c.ci_low for c in many.comparisons], abs=1e-12)


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_p_values_do_not_depend_on_how_many_threads_draw_the_blocks(test: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import ef.comparison._stats as core

    rng = np.random.default_rng(25)
    d = rng.normal(0.01, 0.2, size=(3000, 6))  # 3000 x 3000 resamples: several blocks of rows
    assert len(core._blocks(3000, 3000)) > 2
    monkeypatch.setattr(core, "_WORKERS", 4)
    four = paired_statistics(d, test=test, resamples=3000, seed=1, confidence=0.95)  # type: ignore[arg-type]
    monkeypatch.setattr(core, "_WORKERS", 1)
    one = paired_statistics(d, test=test, resamples=3000, seed=1, confidence=0.95)  # type: ignore[arg-type]
    assert one.p_value.tolist() == four.p_value.tolist()
    assert one.ci_low == pytest.approx(four.ci_low, abs=1e-12)


def test_family_is_every_pair_and_measure_and_holm_is_applied_over_it() -> None:
    runs = _values(20)
    report = compare(runs, None, ["m1", "m2"])
    assert report.family_size == 12  # 6 pairs x 2 measures
    assert report.family == "every (system, measure) comparison: 6 pairs of systems x 2 measures = 12"
    raw = [c.p_value for c in report.comparisons]
    assert [c.p_adjusted for c in report.comparisons] == pytest.approx(_holm(raw), abs=1e-15)
    assert [c.significant for c in report.comparisons] == [c.p_adjusted < 0.05 for c in report.comparisons]
    against = compare(runs, None, ["m1"], baseline="s1", correction="bonferroni")
    assert [(c.baseline, c.system) for c in against.comparisons] == [("s1", "s2"), ("s1", "s3"), ("s1", "s4")]
    assert against.family == "every (system, measure) comparison: 3 systems against the baseline 's1' x 1 measure = 3"
    assert [c.p_adjusted for c in against.comparisons] == [min(1.0, 3 * c.p_value) for c in against.comparisons]


def test_each_comparison_holds_means_diff_interval_and_effect_size() -> None:
    rng = np.random.default_rng(21)
    a, b = rng.random(60), rng.random(60) + 0.1
    c = _pair(a.tolist(), b.tolist())
    d = b - a
    assert (c.baseline_mean, c.system_mean) == pytest.approx((a.mean(), b.mean()), abs=1e-15)
    assert c.diff == pytest.approx(d.mean(), abs=1e-15)
    assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert c.ci_low < c.diff < c.ci_high
    assert (c.wins, c.ties, c.losses) == (int((d > 0).sum()), 0, int((d < 0).sum()))


def test_identical_and_constant_differences_are_defined_not_nan() -> None:
    same = _pair([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert (same.p_value, same.effect_size, same.diff, same.ties, same.verdict) == (1.0, 0.0, 0.0, 3, "not significant")
    shifted = _pair([0.25, 0.5, 0.75], [0.5, 0.75, 1.0])
    assert (shifted.p_value, shifted.effect_size, shifted.ci_low, shifted.ci_high) == (0.0, None, 0.25, 0.25)
    assert _pair([0.0] * 5, [0.0] * 5, test="wilcoxon").p_value == 1.0


def test_warnings_for_few_and_for_very_many_queries() -> None:
    few = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"])
    assert few.warnings[0] == (
        "only 4 queries: a paired test this small has low power, so a real difference can easily come out "
        "not significant; look at the confidence intervals"
    )
    rng = np.random.default_rng(22)
    a = rng.random(3000)
    b = a + 0.005 + rng.normal(0, 0.05, 3000)
    report = compare({"a": _report({"m": a.tolist()}), "b": _report({"m": b.tolist()})}, None, ["m"], resamples=500)
    assert report.warnings == (
        "3000 queries: with this many even a tiny difference comes out significant; judge it by the effect "
        "size d and the confidence interval (1 significant comparison with |d| < 0.2)",
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "fisher"}, "'test' must be one of t, randomization, bootstrap, wilcoxon (got 'fisher')"),
        ({"correction": "sidak"}, "'correction' must be one of holm, bh, bonferroni, none (got 'sidak')"),
        ({"alpha": 1.5}, "'alpha' must be a number between 0 and 1, exclusive (got 1.5)"),
        ({"confidence": 0}, "'confidence' must be a number between 0 and 1, exclusive (got 0)"),
        ({"resamples": 0}, "'resamples' must be a positive integer (got 0)"),
        ({"seed": -1}, "'seed' must be a non-negative integer (got -1)"),
        ({"missing": "drop"}, "'missing' must be one of 'zero', 'skip' (got 'drop')"),
        ({"baseline": "c"}, "'baseline' 'c' is not one of the runs ('a', 'b')"),
        ({"measures": ["num_rel"]}, "'measures': 'num_rel' is summarised as a sum, not a mean over queries"),
        ({"measures": ["mrr", "mrr"]}, "'measures' lists 'mrr' twice"),
    ],
)
def test_bad_options_are_named(kwargs: dict[str, object], message: str) -> None:
    options = {"measures": ["mrr"], **kwargs}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        compare({"a": RUN_A, "b": RUN_B}, QRELS, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # issue 10: a value of the wrong type is a TypeError (ef._validate's template)
        ({"seed": True}, "'seed' must be a non-negative integer (got True)"),
        ({"seed": 1.0}, "'seed' must be a non-negative integer (got 1.0)"),
        ({"alpha": "0.05"}, "'alpha' must be a number between 0 and 1, exclusive (got '0.05')"),
        ({"resamples": 100.0}, "'resamples' must be a positive integer (got 100.0)"),
        ({"test": 1}, "'test' must be one of t, randomization, bootstrap, wilcoxon (got 1)"),
    ],
)
def test_options_of_a_wrong_type_are_type_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], **kwargs)  # type: ignore[arg-type]


def test_numpy_numbers_are_accepted_as_options() -> None:
    options = {"resamples": np.int64(200), "seed": np.int64(3), "alpha": np.float64(0.05), "test": "randomization"}
    plain = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], resamples=200, seed=3, alpha=0.05, test="randomization")
    assert compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], **options).to_dict() == plain.to_dict()  # type: ignore[arg-type]


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ValueError, match=r"'runs' must hold at least 2 runs to compare \(got 1\)"):
        compare({"a": RUN_A}, QRELS, ["mrr"])
    with pytest.raises(TypeError, match=r"'runs' must be a mapping of name -> run \(got list\)"):
        compare([RUN_A, RUN_B], QRELS, ["mrr"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'qrels' is None but run 'a' is a run, not a report"):
        compare({"a": RUN_A, "b": RUN_B}, None, ["mrr"])
    with pytest.raises(ValueError, match=r"run 'b': score of doc 'd1' in query 'q1' is NaN"):
        compare({"a": RUN_A, "b": {"q1": {"d1": float("nan")}}}, QRELS, ["mrr"])
    with pytest.raises(ValueError, match=r"^run 'b': no query of the run is judged in 'qrels'$"):
        compare({"a": RUN_A, "b": {"x1": {"d1": 1.0}}}, QRELS, ["mrr"])
    bad = RunEvalReport({}, {"q1": {"m": 0.5}, "q2": {"m": float("inf")}}, 2)
    with pytest.raises(ValueError, match=r"run 'b': 'm' of query 'q2' is not a finite number \(got inf\)"):
        compare({"a": _report({"m": [0.1, 0.2]}), "b": bad}, None, ["m"])
    with pytest.raises(ValueError, match=r"run 'a': query 'q0000' has no value for 'x' \(it has 'm'\)"):
        compare({"a": _report({"m": [0.1, 0.2]}), "b": _report({"m": [0.1, 0.2]})}, None, ["x"])
    with pytest.raises(ValueError, match=r"only 1 queries to compare \(missing='skip'\): a paired test needs"):
        compare({"a": RUN_A, "b": {"q1": {"d1": 1.0}}}, QRELS, ["mrr"], missing="skip")


# --- renderings --------------------------------------------------------------------------------

def _small() -> object:
    a = [0.2, 0.4, 0.5, 0.1, 0.3, 0.6, 0.2, 0.4]
    b = [0.6, 0.5, 0.9, 0.4, 0.3, 0.8, 0.7, 0.5]
    return compare({"base": _report({"ndcg@10": a}), "new_one": _report({"ndcg@10": b})}, None, ["ndcg@10"],
                   baseline="base", test="randomization")


def test_terminal_table_with_markers_legend_and_warnings() -> None:
    assert str(_small()) == "\n".join([
        "paired randomization test (all 256 sign flips) over 8 queries; Holm correction over 1 comparison, alpha 0.05",
        "system   vs    measure    mean  vs mean     diff              95% CI     d       p  p (holm)  W/T/L  sig",
        "-------  ----  -------  ------  -------  -------  ------------------  ----  ------  --------  -----  ---",
        "new_one  base  ndcg@10  0.5875   0.3375  +0.2500  [+0.1375, +0.3625]  1.41  0.0156    0.0156  7/1/0    ▲",
        "▲ / ▼: system significantly better / worse than 'vs' (Holm-adjusted p < 0.05); family: every (system, "
        "measure) comparison: 1 system against the baseline 'base' x 1 measure = 1",
        "diff: system - vs; CI: paired bootstrap, 10000 resamples, seed 0; d: paired Cohen's d; W/T/L: queries "
        "won / tied / lost",
        "warning: only 8 queries: a paired test this small has low power, so a real difference can easily come "
        "out not significant; look at the confidence intervals",
    ])


def test_markdown_latex_and_csv() -> None:
    report = _small()
    md = report.to_markdown().splitlines()
    assert md[2] == "| system | vs | measure | mean | vs mean | diff | 95% CI | d | p | p (holm) | W/T/L | sig |"
    assert md[3] == "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|"
    assert md[4] == (
        "| new_one | base | ndcg@10 | 0.5875 | 0.3375 | +0.2500 | [+0.1375, +0.3625] | 1.41 | 0.0156 | 0.0156 "
        "| 7/1/0 | ▲ |"
    )
    tex = report.to_latex().splitlines()
    assert tex[2:5] == [
        r"\begin{tabular}{lllrrrrrrrr}",
        r"\toprule",
        r"System & vs & Measure & Mean & vs mean & $\Delta$ & 95\% CI & $d$ & $p$ & p (holm) & W/T/L \\",
    ]
    assert tex[6] == (r"new\_one & base & ndcg@10 & 0.5875 & 0.3375 & +0.2500$^{\blacktriangle}$ & "
                      r"[+0.1375, +0.3625] & 1.41 & 0.0156 & 0.0156 & 7/1/0 \\")
    assert tex[7:9] == [r"\bottomrule", r"\end{tabular}"]
    rows = list(csv.DictReader(io.StringIO(report.to_csv())))
    c = report.get("new_one", "ndcg@10")
    assert rows == [{
        "system": "new_one", "baseline": "base", "measure": "ndcg@10", "higher_is_better": "True", "n_queries": "8",
        "system_mean": repr(c.system_mean), "baseline_mean": repr(c.baseline_mean), "diff": repr(c.diff),
        "ci_low": repr(c.ci_low), "ci_high": repr(c.ci_high), "effect_size": repr(c.effect_size),
        "p_value": "0.015625", "p_adjusted": "0.015625", "significant": "True", "verdict": "better",
        "wins": "7", "ties": "1", "losses": "0",
    }]


def test_json_has_a_schema_version_and_per_query_differences() -> None:
    report = _small()
    data = json.loads(report.to_json())
    assert data["schema"] == SCHEMA == "ef.compare/1"
    assert data["family"] == {"description": report.family, "size": 1}
    assert data["queries"] == [f"q{i:04d}" for i in range(8)]
    diffs = data["comparisons"][0]["per_query_diff"]
    assert diffs == pytest.approx([0.4, 0.1, 0.4, 0.3, 0.0, 0.2, 0.5, 0.1], abs=1e-12)
    assert data["comparisons"][0]["p_value"] == 4 / 256  # +-(all signs) x the zero difference's two signs
    assert data["per_query"]["base"]["ndcg@10"][0] == 0.2
    assert data["comparisons"][0]["verdict"] == "better"
    assert "per_query" not in report.to_dict(per_query=False)


def test_dataframes() -> None:
    pandas = pytest.importorskip("pandas", reason="pandas is not installed: pip install 'ef-eval[pandas]'")
    frame = _small().to_dataframe()
    assert isinstance(frame, pandas.DataFrame)
    assert frame.loc[0, "p_value"] == 0.015625  # 4 of the 2**8 sign flips
    polars = pytest.importorskip("polars", reason="polars is not installed: pip install 'ef-eval[polars]'")
    assert _small().to_dataframe("polars")["verdict"].to_list() == ["better"]
    assert isinstance(_small().to_dataframe("polars"), polars.DataFrame)
    with pytest.raises(ValueError, match=r"'library' must be 'pandas' or 'polars' \(got 'arrow'\)"):
        _small().to_dataframe("arrow")


# --- the command line --------------------------------------------------------------------------

def _files(tmp_path: object) -> tuple[str, str, str]:
    qrels = tmp_path / "qrels.txt"  # type: ignore[operator]
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in QRELS.items() for d, g in judged.items()))
    paths = []
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        path = tmp_path / f"{name}.trec"  # type: ignore[operator]
        path.write_text("".join(f"{q} Q0 {d} 1 {s} {name}\n" for q, r in run.items() for d, s in r.items()))
        paths.append(str(path))
    return str(qrels), paths[0], paths[1]


def test_cli_prints_the_table_and_writes_json(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = _files(tmp_path)
    assert main(["compare", qrels, a, f"new={b}", "--baseline", "a", "-m", "mrr,P_1", "--test", "bootstrap"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "paired bootstrap test (shift method) over 4 queries; Holm correction over 2 comparisons, alpha 0.05"
    )
    assert out.splitlines()[3].split()[:3] == ["new", "a", "mrr"]
    target = tmp_path / "report.json"  # type: ignore[operator]
    assert main(["compare", qrels, a, b, "--format", "json", "--output", str(target), "--seed", "5"]) == 0
    data = json.loads(target.read_text())
    assert (data["seed"], data["systems"], data["lacked"]) == (5, ["a", "b"], {"a": 0, "b": 1})
    assert [m["name"] for m in data["measures"]] == ["ndcg@10", "recall@100", "map", "mrr"]
    assert capsys.readouterr().out == ""


def test_cli_errors_are_one_line(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, a, b = _files(tmp_path)
    assert main(["compare", qrels, a, a]) == 2
    assert capsys.readouterr().err == (
        f"ef compare: error: two runs are named 'a' ({a} and {a}): name them with NAME=PATH\n"
    )
    assert main(["compare", qrels, a, b, "--baseline", "z"]) == 2
    assert capsys.readouterr().err == "ef compare: error: --baseline 'z' is not one of the runs ('a', 'b')\n"
    assert main(["compare", qrels, a, str(tmp_path / "none.trec")]) == 2  # type: ignore[operator]
    assert capsys.readouterr().err.endswith("none.trec: no such file\n")
    with pytest.raises(SystemExit):
        main(["compare", qrels, a, b, "--alpha", "2"])
    assert "expected a number between 0 and 1, exclusive (got '2')" in capsys.readouterr().err


def test_a_query_with_empty_judgements_is_not_lacked_by_any_run() -> None:
    # {'q2': {}} (qrels filtered to grade > 0) is judged by nothing and evaluate_run leaves it out
    # (c939d8e); compare counted it as lacked by every run and asked evaluate_run for its zeros:
    # "no query to evaluate: 'qrels' holds no judgement (every query's mapping is empty)".
    qrels = {"q1": {"d1": 1}, "q2": {}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    a = {"q1": {"d1": 1.0}, "q3": {"d3": 1.0}, "q4": {"d9": 1.0}}
    b = {"q1": {"d1": 1.0}, "q3": {"d9": 1.0}}
    report = compare({"a": a, "b": b}, qrels, measures=["ndcg@10"])
    assert (report.queries, dict(report.lacked)) == (("q1", "q3", "q4"), {"a": 0, "b": 1})
    assert report.warnings[-1] == "'b' lacked 1 of the 3 queries: scored 0 (missing='zero')"
