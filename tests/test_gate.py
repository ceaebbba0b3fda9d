"""ef.gate: the non-inferiority test (simulated error rates and power against the analytic paired
test, Holm against closed testing), the verdicts, the refusals, saved results and ``ef gate``."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
import threading
from pathlib import Path
from statistics import NormalDist
from xml.etree import ElementTree

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats  # type: ignore[import-untyped, unused-ignore]

from ef.cli import main
from ef.evaluation import RunEvalReport
from ef.gate import GateReport, Margin, gate, load_result, parse_margin, qrels_hash, save_result
from ef.gate._stats import decide, holm, holm_levels, one_sided_tests

ALPHA = 0.05


def _analytic_power(shift: float, sd: float, n: int, alpha: float = ALPHA) -> float:
    """One-sided paired t-test power for a true mean `shift` beyond the margin (noncentral t)."""
    df = n - 1
    return float(1.0 - stats.nct.cdf(stats.t.ppf(1.0 - alpha, df), df, shift / (sd / math.sqrt(n))))


def _mc_tolerance(rate: float, replications: int) -> float:
    return 4.0 * math.sqrt(max(rate * (1.0 - rate), 1e-4) / replications)  # 4 Monte Carlo standard errors


# --- simulations: error rates at the margin, power against a real regression ---------------------

R = 2000  # replications, one column each, tested at once (each its own family of one measure)


@pytest.mark.parametrize(("n", "sd", "delta"), [(50, 0.15, 0.02), (200, 0.15, 0.02), (12, 0.3, 0.05)])
def test_false_fail_and_false_pass_rates_at_the_margin_are_at_most_alpha(n: int, sd: float, delta: float) -> None:
    # The true mean difference is exactly -margin: neither "fail" nor "pass" is true.
    rng = np.random.default_rng(n)
    diffs = rng.normal(-delta, sd, size=(n, R))
    verdict = decide(diffs, np.full(R, delta), alpha=ALPHA, resamples=2000, seed=1, correct=False).verdict
    for outcome in ("fail", "pass"):
        rate = float((verdict == outcome).mean())
        assert rate <= ALPHA + _mc_tolerance(ALPHA, R), (outcome, rate)


@pytest.mark.parametrize(("n", "sd", "delta", "true"), [(50, 0.15, 0.02, -0.08), (30, 0.2, 0.02, -0.12)])
def test_power_against_a_real_regression_matches_the_paired_t_test(
    n: int, sd: float, delta: float, true: float
) -> None:
    rng = np.random.default_rng(7)
    diffs = rng.normal(true, sd, size=(n, R))
    verdict = decide(diffs, np.full(R, delta), alpha=ALPHA, resamples=2000, seed=1, correct=False).verdict
    expected = _analytic_power(-(true + delta), sd, n)  # 0.874 and 0.848
    assert abs(float((verdict == "fail").mean()) - expected) <= _mc_tolerance(expected, R)
    assert float((verdict == "pass").mean()) == 0.0


def test_power_to_pass_an_unchanged_system_matches_the_paired_t_test() -> None:
    n, sd, delta = 200, 0.15, 0.02
    diffs = np.random.default_rng(3).normal(0.0, sd, size=(n, R))
    verdict = decide(diffs, np.full(R, delta), alpha=ALPHA, resamples=2000, seed=1, correct=False).verdict
    expected = _analytic_power(delta, sd, n)  # 0.593
    assert abs(float((verdict == "pass").mean()) - expected) <= _mc_tolerance(expected, R)


def test_holm_keeps_the_family_wise_false_fail_rate_across_three_measures() -> None:
    rng = np.random.default_rng(11)
    families, n, delta = 300, 40, 0.02
    failed = 0
    for _ in range(families):  # every measure exactly at its margin, correlated across measures
        common = rng.normal(0, 0.1, size=(n, 1))
        diffs = -delta + common + rng.normal(0, 0.1, size=(n, 3))
        failed += "fail" in decide(diffs, np.full(3, delta), alpha=ALPHA, resamples=1000, seed=2).verdict
    assert failed / families <= ALPHA + _mc_tolerance(ALPHA, families)


def test_the_gate_of_one_measure_is_the_simulated_kernel() -> None:
    # gate() on one replication gives the verdict decide() gave that column.
    rng = np.random.default_rng(5)
    diffs = rng.normal(-0.05, 0.15, size=(40, 30))
    kernel = decide(diffs, np.full(30, 0.02), alpha=ALPHA, resamples=500, seed=4, correct=False)
    base = rng.random(40)
    for j in range(30):
        report = gate(
            {"per_query": {f"q{i:02d}": {"ndcg@10": base[i]} for i in range(40)}},
            {"per_query": {f"q{i:02d}": {"ndcg@10": base[i] + diffs[i, j]} for i in range(40)}},
            margin=0.02, resamples=500, seed=4,
        )
        assert report.get("ndcg@10").verdict == kernel.verdict[j]


# --- the randomization test by hand, Holm against closed testing ---------------------------------


def test_one_sided_p_values_enumerate_every_sign_flip() -> None:
    d = np.array([0.3, -0.1, 0.2, 0.05, -0.02, 0.4])
    margin = 0.1
    e = d + margin
    flips = np.array(list(itertools.product((1.0, -1.0), repeat=len(d)))) @ e
    result = one_sided_tests(d[:, None], np.array([margin]), resamples=100, seed=0)
    assert result.exact
    assert result.p_pass[0] == pytest.approx((flips >= e.sum() - 1e-12).mean())
    assert result.p_fail[0] == pytest.approx((flips <= e.sum() + 1e-12).mean())


def _closed_testing_holm(p: list[float]) -> list[float]:
    """Holm's adjusted p-values by their definition: closed testing with Bonferroni local tests."""
    k = len(p)
    out = []
    for i in range(k):
        worst = 0.0
        for size in range(1, k + 1):
            for subset in itertools.combinations(range(k), size):
                if i in subset:
                    worst = max(worst, min(1.0, size * min(p[j] for j in subset)))
        out.append(worst)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=7))
def test_holm_is_closed_testing_exactly(p: list[float]) -> None:
    assert holm(np.array(p)).tolist() == _closed_testing_holm(p)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=7))
def test_holm_levels_reject_what_the_adjusted_p_values_reject(p: list[float]) -> None:
    array = np.array(p)
    levels, adjusted = holm_levels(array, ALPHA), holm(array)
    order = np.argsort(array, kind="stable")
    for rank, i in enumerate(order):
        # step-down: rejected when it and every smaller p-value clear their own Holm level
        steps = all(array[order[r]] < levels[order[r]] for r in range(rank + 1))
        assert (adjusted[i] < ALPHA) == steps or math.isclose(adjusted[i], ALPHA)


# --- verdicts on hand-made results ---------------------------------------------------------------


def _result(values: dict[str, list[float]], **extra: object) -> dict[str, object]:
    n = len(next(iter(values.values())))
    return {"per_query": {f"q{i:03d}": {m: v[i] for m, v in values.items()} for i in range(n)}, **extra}


def test_an_unchanged_result_passes_only_with_enough_queries() -> None:
    same5 = _result({"ndcg@10": [0.5, 0.6, 0.7, 0.2, 0.9]})
    assert gate(same5, same5, margin=0.01).outcome == "pass"  # every flip but one: p = 1/32
    same4 = _result({"ndcg@10": [0.5, 0.6, 0.7, 0.2]})
    report = gate(same4, same4, margin=0.01)
    v = report.get("ndcg@10")
    assert (report.outcome, report.exit_code, v.p_pass) == ("inconclusive", 3, 1 / 16)
    # all differences equal (sd 0): 2**n flips must reach below alpha: 5 queries
    assert v.queries_needed == 5


def test_differences_equal_but_for_rounding_are_read_as_equal() -> None:
    # 0.6 - 0.5, 0.7 - 0.6, 0.8 - 0.7 and 0.9 - 0.8 differ in the 17th digit: the line said "the gate
    # detects a difference of 0.0000 ... about 2 queries would settle", where 2 queries give no sign-flip
    # p below 1/4; read as equal differences, as ef compare's Cohen's d reads them.
    base = _result({"ndcg@10": [0.5, 0.6, 0.7, 0.8]})
    cand = _result({"ndcg@10": [0.6, 0.7, 0.8, 0.9]})
    v = gate(base, cand).get("ndcg@10")
    assert (v.verdict, v.sd, v.queries_needed) == ("inconclusive", 0.0, 5)
    assert v.line.endswith(
        "every query differs by the same amount, and with 4 queries no sign-flip p falls below alpha; about 5 "
        "queries would settle a difference of +0.1000"
    )


def test_differences_all_on_a_margin_of_0_no_number_of_queries_settles() -> None:
    # A relative margin of a baseline that scores 0 everywhere (say -l above every grade) is 0, and
    # so is every difference: it said "about 301 queries would settle a difference of +0.0000".
    zeros = _result({"map": [0.0] * 300})
    v = gate(zeros, zeros, margin="2%").get("map")
    assert (v.verdict, v.threshold, v.queries_needed) == ("inconclusive", 0.0, None)
    assert v.line == (
        "INCONCLUSIVE map: candidate 0.0000 vs baseline 0.0000 (+0.0000); the interval [+0.0000, +0.0000] holds "
        "the margin +0.0000 (2% of the baseline mean); every query differs by the same amount, which sits on the "
        "margin: no number of queries settles it"
    )


def test_margins_absolute_relative_and_per_measure() -> None:
    base = _result({"ndcg@10": [0.4, 0.6] * 10, "mrr": [0.8, 1.0] * 10})
    report = gate(base, base, margin={"ndcg@10": "2%", "*": 0.05})
    assert report.get("ndcg@10").margin == pytest.approx(0.01)  # 2% of 0.5
    assert report.get("ndcg@10").margin_text == "2% of the baseline mean"
    assert report.get("mrr").margin == 0.05
    assert report.default_margin == "0.05"
    assert gate(base, base).default_margin == "2% of the baseline mean"
    assert parse_margin(" 1.5% ") == Margin(0.015, relative=True)
    with pytest.raises(ValueError, match=r"a margin is a number >= 0, or a percentage such as 2% \(got '-1'\)"):
        parse_margin("-1")
    with pytest.raises(ValueError, match=r"'margin' names 'map', which is not gated \(gated: ndcg@10, mrr\)"):
        gate(base, base, margin={"map": 0.1})


def test_direction_is_respected_for_lower_is_better() -> None:
    fast = [10.0 + (i % 5) for i in range(40)]
    slow = [v + 5.0 for v in fast]
    quick = [v - 5.0 for v in fast]
    lower = {"latency_ms": False}
    slower = gate(_result({"latency_ms": fast}), _result({"latency_ms": slow}), margin="10%", higher_is_better=lower)
    v = slower.get("latency_ms")
    assert (slower.outcome, v.diff) == ("fail", 5.0)
    assert v.threshold == pytest.approx(1.2)
    assert v.line.startswith("FAIL latency_ms (lower is better): candidate 17.0000 vs baseline 12.0000 (+5.0000); "
                             "even the best case +5.0000 is above the margin +1.2000 (10% of the baseline mean)")
    quicker = gate(_result({"latency_ms": fast}), _result({"latency_ms": quick}), margin=1.0, higher_is_better=lower)
    assert quicker.outcome == "pass"
    with pytest.raises(ValueError, match=(
        r"whether higher 'latency_ms' is better is not known: say it \(higher_is_better=\{'latency_ms': False\}, "
        r"ef gate --lower-is-better latency_ms\)"
    )):
        gate(_result({"latency_ms": fast}), _result({"latency_ms": slow}))


def test_inconclusive_states_the_detectable_difference_and_the_queries_needed() -> None:
    rng = np.random.default_rng(2)
    base = rng.random(20)
    cand = base + rng.normal(-0.01, 0.1, 20)
    report = gate(_result({"ndcg@10": list(base)}), _result({"ndcg@10": list(cand)}), margin=0.01)
    v = report.get("ndcg@10")
    assert v.verdict == "inconclusive"
    d = cand - base
    z = NormalDist().inv_cdf
    assert v.detectable == pytest.approx((z(0.95) + z(0.8)) * d.std(ddof=1) / math.sqrt(20))
    assert v.queries_needed == math.ceil(((z(0.95) + z(0.8)) * d.std(ddof=1) / abs(d.mean() + 0.01)) ** 2)
    assert f"with 20 queries the gate detects a difference of {v.detectable:.4f} from the margin (80% power); " \
           f"about {v.queries_needed:,} queries would settle a difference of {v.diff:+.4f}" in v.line


def test_a_difference_on_the_margin_says_so_beside_its_huge_query_count() -> None:
    base = np.linspace(0.2, 0.8, 30)
    cand = base - 0.0501 + np.tile([0.05, -0.05], 15)  # a mean difference 0.0001 from the margin 0.05
    v = gate(_result({"ndcg@10": list(base)}), _result({"ndcg@10": list(cand)}), margin=0.05).get("ndcg@10")
    d = cand - base
    z = NormalDist().inv_cdf
    needed = math.ceil(((z(0.95) + z(0.8)) * d.std(ddof=1) / abs(d.mean() + 0.05)) ** 2)
    assert v.verdict == "inconclusive"
    assert v.queries_needed == needed > 100 * 30
    assert v.line.endswith(
        f"about {needed:,} queries would settle a difference of {d.mean():+.4f} "
        f"({needed / 30:,.0f}x this query set: it sits {abs(d.mean() + 0.05):.4f} from the margin)"
    )


def test_holm_corrects_across_measures() -> None:
    rng = np.random.default_rng(8)
    base = rng.random(60)
    values = {"ndcg@10": list(base), "mrr": list(base), "map": list(base)}
    cand = {m: list(base + rng.normal(0.0, 0.1, 60)) for m in values}
    report = gate(_result(values), _result(cand), margin=0.02)
    raw = np.array([v.p_pass for v in report.verdicts])
    assert [v.p_pass_holm for v in report.verdicts] == holm(raw).tolist()
    assert sorted(v.level_pass for v in report.verdicts) == pytest.approx([0.05 / 3, 0.05 / 2, 0.05])


def test_seeds_are_averaged_per_query_and_their_spread_reported() -> None:
    base = _result({"ndcg@10": [0.5] * 10})
    seed1 = _result({"ndcg@10": [0.4] * 10})
    seed2 = _result({"ndcg@10": [0.6, 0.5] * 5})
    report = gate(base, [seed1, seed2], margin=0.1)
    v = report.get("ndcg@10")
    assert v.candidate_mean == pytest.approx(0.475)
    assert report.spread == {"candidate": {"ndcg@10": pytest.approx((0.4, 0.55))}}
    assert "candidate: 2 seeds averaged per query; ndcg@10 per seed 0.4000 to 0.5500 (sd 0.1061)" in report.lines()


def test_seeds_equal_to_the_baseline_average_to_its_values() -> None:
    base = _result({"P_5": [0.2, 0.6] * 5})
    report = gate(base, [base, base, base], margin=0.01)
    v = report.get("P_5")
    assert (v.candidate_mean, v.diff) == (v.baseline_mean, 0.0)


def test_a_direction_against_what_the_results_record_is_refused() -> None:
    # ef gate --lower-is-better ndcg@10 passed a run whose ndcg@10 fell from 0.68 to 0 (exit 0).
    base = _result({"ndcg@10": [0.7, 0.6] * 5})
    worse = _result({"ndcg@10": [0.0] * 10})
    with pytest.raises(ValueError) as info:
        gate(base, worse, higher_is_better={"ndcg@10": False})
    assert str(info.value) == ("'ndcg@10' is given as lower-is-better, but the results record that higher is "
                               "better: a gate the wrong way round would pass a regression")
    assert gate(base, worse, higher_is_better={"ndcg@10": True}).outcome == "fail"  # saying what is known is fine


# --- refusals ------------------------------------------------------------------------------------


def test_refuses_different_queries_measures_qrels_datasets_and_options() -> None:
    base = _result({"ndcg@10": [0.5, 0.6, 0.7]})
    other = {"per_query": {"q000": {"ndcg@10": 0.5}, "q001": {"ndcg@10": 0.5}, "q999": {"ndcg@10": 0.5}}}
    with pytest.raises(ValueError, match=(
        r"the baseline \(result\) and the candidate \(result\) hold different queries: 1 only in the baseline "
        r"\(first 'q002'\), 1 only in the candidate \(first 'q999'\)"
    )):
        gate(base, other)
    with pytest.raises(ValueError, match=(
        r"the baseline and the candidate hold different measures \(only in the candidate: mrr\): choose with -m"
    )):
        gate(base, _result({"ndcg@10": [0.5, 0.6, 0.7], "mrr": [1, 1, 1]}))
    with pytest.raises(ValueError, match=r"result: query 'q000' has no value for 'mrr' \(it has 'ndcg@10'\)"):
        gate(_result({"ndcg@10": [0.5, 0.6, 0.7], "mrr": [1, 1, 1]}), base, ["ndcg@10", "mrr"])
    h1, h2 = qrels_hash({"q": {"d": 1}}), qrels_hash({"q": {"d": 2}})
    with pytest.raises(ValueError, match=rf"were judged with different qrels: {h1} against {h2}"):
        gate({**base, "qrels_hash": h1}, {**base, "qrels_hash": h2})
    with pytest.raises(ValueError, match=(
        r"are not comparable: dataset checksum: 'sha256:a' in the baseline, 'sha256:b' in the candidate"
    )):
        gate({**base, "dataset": "scifact", "dataset_checksum": "sha256:a"},
             {**base, "dataset": "scifact", "dataset_checksum": "sha256:b"})
    with pytest.raises(ValueError, match=r"comparable: dataset split: 'dev' in the baseline, 'test' in the candidate"):
        gate({**base, "dataset": "data/scifact", "split": "dev"}, {**base, "dataset": "scifact", "split": "test"})
    with pytest.raises(ValueError, match=r"comparable: option relevance_level: 1 in the baseline, 2 in the candidate$"):
        gate({**base, "options": {"relevance_level": 1}}, {**base, "options": {"relevance_level": 2}})


# --- saved results, readers and renderings -------------------------------------------------------

QRELS = {f"q{i}": {f"d{i}": 1, f"e{i}": 2} for i in range(30)}


def _run(bad: int = 0) -> dict[str, dict[str, float]]:
    """d_i first for every query but the first `bad`, where a miss comes first."""
    return {q: {f"d{i}": 0.9 if i >= bad else 0.1, "x": 0.5} for i, q in enumerate(QRELS)}


def test_save_result_records_the_metadata_and_reads_back(tmp_path: Path) -> None:
    from ef.evaluation import evaluate_run

    report = evaluate_run(_run(), QRELS, ["ndcg@10", "P.5,10"])
    path = save_result(report, tmp_path / "base.json", qrels=QRELS, dataset=Path(__file__), missing="zero",
                       relevance_level=1, pipeline_id="bm25-v1")
    data = json.loads(path.read_text())
    assert data["schema"] == "ef.result/1"
    assert data["qrels_hash"] == qrels_hash(QRELS)
    assert data["dataset"] == "test_gate.py"
    assert data["dataset_checksum"].startswith("sha256:")
    assert data["options"] == {"missing": "zero", "relevance_level": 1, "ignore_identical_ids": None,
                               "judged_docs_only": None, "max_docs": None}
    assert data["pipeline_id"] == "bm25-v1"
    assert [m["name"] for m in data["measures"]] == ["ndcg@10", "P_5", "P_10"]
    assert data["per_query"]["q3"] == report.per_query["q3"]
    loaded = load_result(path)
    assert loaded.higher_is_better == {"ndcg@10": True, "P_5": True, "P_10": True}
    assert loaded.metadata["pipeline_id"] == "bm25-v1"


def test_qrels_hash_is_the_same_for_a_trec_and_a_beir_file(tmp_path: Path) -> None:
    trec, beir = tmp_path / "q.txt", tmp_path / "q.tsv"
    trec.write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n")
    beir.write_text("query-id\tcorpus-id\tscore\nq2\td3\t1\nq1\td2\t2\nq1\td1\t1\n")
    assert qrels_hash(trec) == qrels_hash(beir) == qrels_hash({"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}})


def test_a_run_from_standard_input_or_a_pipe_is_scored_as_a_file_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 0 d1 1 0.9 r\nq1 0 d2 2 0.8 r\nq2 0 d3 1 0.5 r\n")
    qrels = {"q1": {"d2": 1}, "q2": {"d3": 1}}
    expected = load_result(run, qrels=qrels, measures=["mrr"]).per_query
    assert expected == {"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}}
    with open(run, "rb") as stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(stdin))
        assert load_result("-", qrels=qrels, measures=["mrr"]).per_query == expected
    saved = save_result(load_result(run, qrels=qrels, measures=["mrr"]), tmp_path / "saved.json")
    with open(saved, "rb") as stdin:  # a saved result (JSON) on standard input, as ef gate reads '-'
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(stdin)))
        from_stdin = load_result("-")
    assert (from_stdin.per_query, from_stdin.source) == (expected, "<stdin>")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(run.read_bytes()))
    writer.start()
    assert load_result(fifo, qrels=qrels, measures=["mrr"]).per_query == expected
    writer.join()
    fifo.unlink()
    os.mkfifo(fifo)  # a saved result through a pipe, as <(ef eval --json -): told by its '{' as '-' is
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"\n  " + saved.read_bytes()))
    writer.start()
    from_pipe = load_result(fifo)
    writer.join()
    assert (from_pipe.per_query, from_pipe.source) == (expected, str(fifo))
    with pytest.raises(IsADirectoryError, match=f"^{re.escape(str(tmp_path))}: a folder, not a result$"):
        load_result(tmp_path, qrels=qrels)
    with pytest.raises(FileNotFoundError, match=f"^{re.escape(str(tmp_path / 'nope.trec'))}: no such file$"):
        load_result(tmp_path / "nope.trec", qrels=qrels)


def test_a_result_saved_by_ef_trec_eval_records_what_gate_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It recorded no qrels hash, level or depth: 'ef gate -l 2 --qrels Q RUN saved.json' compared a
    # run scored at -l 2 with one scored at -l 1 and passed.
    qrels, run, other = tmp_path / "q.txt", tmp_path / "a.trec", tmp_path / "b.trec"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 2\nq3 0 d4 1\n")
    run.write_text("q1 Q0 d1 1 0.9 a\nq1 Q0 d2 2 0.8 a\nq2 Q0 d3 1 0.5 a\n")  # q3 is absent
    other.write_text("q1 Q0 d2 1 0.9 b\nq1 Q0 d1 2 0.8 b\nq2 Q0 d3 1 0.5 b\n")
    saved = tmp_path / "saved.json"
    assert main(["trec-eval", "-q", "--json", str(saved), "-m", "map", str(qrels), str(run)]) == 0
    document = json.loads(saved.read_text())
    assert document["qrels_hash"] == qrels_hash(qrels)
    assert document["options"] == {"missing": "skip", "relevance_level": 1, "ignore_identical_ids": False,
                                   "judged_docs_only": False, "max_docs": None}
    capsys.readouterr()
    assert main(["gate", "-l", "2", "--missing", "skip", "--qrels", str(qrels), str(other), str(saved)]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({other}) and the candidate ({saved}) are not comparable: option "
        "relevance_level: 2 in the baseline, 1 in the candidate\n"
    )
    complete = tmp_path / "complete.json"  # every judged query in the run: the convention changes nothing
    whole = tmp_path / "whole.trec"
    whole.write_text(other.read_text() + "q3 Q0 d4 1 0.2 b\n")
    assert main(["trec-eval", "-q", "--json", str(complete), "-m", "map", str(qrels), str(whole)]) == 0
    assert json.loads(complete.read_text())["options"]["missing"] is None


def test_reads_trec_eval_json_benchmark_results_and_refuses_nan(tmp_path: Path) -> None:
    trec_json = tmp_path / "t.json"
    trec_json.write_text(json.dumps({"run_id": "r", "measures": {"P_5": 0.2}, "per_query": {"a": {"P_5": 0.2}}}))
    assert load_result(trec_json).per_query == {"a": {"P_5": 0.2}}
    bad = tmp_path / "bad.json"
    bad.write_text('{"per_query": {"a": {"P_5": NaN}}}')
    with pytest.raises(ValueError, match=r"bad.json: NaN is not valid JSON \(JSON has no NaN or infinity\)$"):
        load_result(bad)
    twice = tmp_path / "twice.json"
    twice.write_text('{"per_query": {"a": {"P_5": 0.1}}, "per_query": {}}')
    with pytest.raises(ValueError, match=r"twice.json: key 'per_query' appears twice in one object$"):
        load_result(twice)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")  # ef report's and ef.io's words for it (was 'a result is a JSON object (got list)')
    with pytest.raises(ValueError, match=f"^{re.escape(str(listed))}: expected a JSON object, got array$"):
        load_result(listed)
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"sample_id": "s1", "scores": {"x": 1.0}}\n[1]\n')  # was "sample 2 has no 'sample_id'"
    with pytest.raises(ValueError, match=f"^{re.escape(str(lines))}:2: expected a JSON object, got array$"):
        load_result(lines)
    from fastrag.benchmark import BenchmarkResult
    from fastrag.benchmark.samples import QueryOutcome
    from fastrag.benchmark.summary import DistributionSummary

    outcomes = (QueryOutcome("s1", "a", latency_ms=2.0), QueryOutcome("s2", "b", latency_ms=4.0))
    result = BenchmarkResult({"latency_ms": DistributionSummary.from_scores([2.0, 4.0])}, outcomes,
                             {"latency_ms": (2.0, 4.0)}, {"latency_ms": False})
    loaded = load_result(result)
    assert (loaded.per_query, loaded.higher_is_better) == ({"s1": {"latency_ms": 2.0}, "s2": {"latency_ms": 4.0}},
                                                          {"latency_ms": False})
    result.save_jsonl(tmp_path / "b.jsonl")
    from_file = load_result(tmp_path / "b.jsonl")
    assert (from_file.per_query, from_file.higher_is_better) == (loaded.per_query, {"latency_ms": False})


def test_renderings() -> None:
    rng = np.random.default_rng(1)
    base = rng.random(40)
    report = gate(_result({"ndcg@10": list(base), "mrr": list(base)}),
                  _result({"ndcg@10": list(base - 0.2), "mrr": list(base)}), margin=0.01)
    assert isinstance(report, GateReport)
    assert (report.outcome, [v.verdict for v in report.verdicts]) == ("fail", ["fail", "pass"])
    assert report.to_markdown().startswith("### ❌ ef gate: FAIL\n")
    suite = ElementTree.fromstring(report.to_junit().split("\n", 1)[1])
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "0")
    assert suite.find("testcase[@name='ndcg@10']/failure") is not None
    assert suite.find("testcase[@name='mrr']/failure") is None
    data = json.loads(report.to_json())
    assert (data["schema"], data["outcome"], data["exit_code"]) == ("ef.gate/1", "fail", 1)
    assert data["exit_codes"] == {"pass": 0, "fail": 1, "usage": 2, "inconclusive": 3}
    page = report.to_html()
    assert "<script" not in page
    assert "<h1 class='fail'>ef gate: FAIL</h1>" in page


# --- ef gate -------------------------------------------------------------------------------------


def _trec(path: Path, run: dict[str, dict[str, float]]) -> str:
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    return str(path)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    base, same, worse = _trec(tmp_path / "b.run", _run()), _trec(tmp_path / "s.run", _run()), \
        _trec(tmp_path / "w.run", _run(bad=20))
    saved = tmp_path / "base.json"
    save_result(base, saved, qrels=str(qrels), measures=["mrr"])
    assert main(["gate", str(saved), same, "--qrels", str(qrels)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("PASS mrr: candidate 1.0000 vs baseline 1.0000 (+0.0000); worst case")
    assert out.splitlines()[-1] == "outcome: PASS (exit 0)"
    assert main(["gate", str(saved), worse, "--qrels", str(qrels), "--junit", str(tmp_path / "j.xml"),
                 "--markdown", "-", "--json", str(tmp_path / "g.json"), "--html", str(tmp_path / "g.html")]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("### ❌ ef gate: FAIL\n")
    assert captured.err.splitlines()[-1] == "outcome: FAIL (exit 1)"
    assert json.loads((tmp_path / "g.json").read_text())["outcome"] == "fail"
    assert "failures=\"1\"" in (tmp_path / "j.xml").read_text()
    few = {q: QRELS[q] for q in list(QRELS)[:3]}
    few_qrels = tmp_path / "few.txt"
    few_qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in few.items() for d, g in docs.items()))
    assert main(["gate", base, same, "--qrels", str(few_qrels), "-m", "mrr"]) == 3
    assert "INCONCLUSIVE mrr" in capsys.readouterr().out
    other = tmp_path / "other.txt"
    other.write_text(qrels.read_text().replace("q0 0 d0 1", "q0 0 d0 2"))
    assert main(["gate", str(saved), same, "--qrels", str(other)]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({saved}) and the candidate ({same}) were judged with different qrels: "
        f"{qrels_hash(str(qrels))} against {qrels_hash(str(other))}\n"
    )
    assert main(["gate", str(saved), same]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: {same}: a TREC run is gated against qrels: give them (--qrels)\n"
    )


def test_cli_margins_and_directions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "b.json"
    cand = tmp_path / "c.json"
    base.write_text(json.dumps(_result({"latency_ms": [10.0 + i % 3 for i in range(30)]})))
    cand.write_text(json.dumps(_result({"latency_ms": [10.5 + i % 3 for i in range(30)]})))
    assert main(["gate", str(base), str(cand), "--lower-is-better", "latency_ms", "--margin", "latency_ms=1"]) == 0
    assert main(["gate", str(base), str(cand), "--lower-is-better", "latency_ms", "--margin", "1%"]) == 1
    capsys.readouterr()
    assert main(["gate", str(base), str(cand), "--margin", "1", "--margin", "2"]) == 2
    assert capsys.readouterr().err == "ef gate: error: --margin is given twice for every measure\n"
    assert main(["gate", str(base), str(cand), "--json", "-", "--markdown", "-"]) == 2
    assert capsys.readouterr().err == (
        "ef gate: error: --markdown and --json cannot both write to standard output ('-')\n"
    )


def test_scoring_options_without_a_run_are_refused() -> None:
    base = _result({"mrr": [0.5, 0.6, 0.7]})
    with pytest.raises(ValueError, match=(
        r"'missing', 'relevance_level', 'max_docs' and 'ignore_identical_ids' score TREC runs, and both sides are "
        r"saved results"
    )):
        gate(base, base, relevance_level=2)


def test_gate_of_reports_in_memory() -> None:
    per_query = {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 4)} for i in range(30)}
    report = RunEvalReport({}, per_query, 30)
    assert gate(report, report, margin=0.01).outcome == "pass"


# --- the pytest plugin ---------------------------------------------------------------------------


def test_the_plugin_is_registered_and_loads_no_numpy() -> None:
    import subprocess
    import sys
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {"ef.testing": "ef.testing"}
    done = subprocess.run([sys.executable, "-c", "import sys, ef.testing; print(sorted(m for m in sys.modules "
                           "if m.split('.')[0] in ('numpy', 'scipy')))"], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_assert_no_regression_outcomes(tmp_path: Path) -> None:
    from ef.testing import Baseline, GateInconclusive, assert_no_regression

    rng = np.random.default_rng(4)
    base = rng.random(40)
    saved = tmp_path / "base.json"
    saved.write_text(json.dumps(_result({"ndcg@10": list(base)})))
    assert assert_no_regression(_result({"ndcg@10": list(base)}), saved, 0.01).outcome == "pass"
    with pytest.raises(AssertionError, match=r"(?s)retrieval quality regressed against .*base.json:\n.*\nFAIL ndcg@10"):
        assert_no_regression(_result({"ndcg@10": list(base - 0.3)}), saved, 0.01)
    noisy = _result({"ndcg@10": list(base + rng.normal(-0.01, 0.2, 40))})
    with pytest.raises(GateInconclusive, match=r"(?s)cannot show the result is no worse than .*\nINCONCLUSIVE ndcg@10"):
        assert_no_regression(noisy, saved, 0.01)
    assert assert_no_regression(noisy, saved, 0.01, inconclusive="pass").outcome == "inconclusive"
    with pytest.raises(pytest.skip.Exception, match="gate inconclusive against"):
        assert_no_regression(noisy, saved, 0.01, inconclusive="skip")
    with pytest.raises(ValueError, match=r"'inconclusive' must be 'fail', 'skip' or 'pass' \(got 'maybe'\)"):
        assert_no_regression(noisy, saved, 0.01, inconclusive="maybe")  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match=r"no baseline at .*none.json: record one with pytest --ef-update-bas"):
        assert_no_regression(noisy, tmp_path / "none.json")
    recorded = tmp_path / "sub" / "new.json"
    assert Baseline(update=True).check(noisy, recorded, pipeline_id="p1") is None
    assert json.loads(recorded.read_text())["pipeline_id"] == "p1"
    checked = Baseline(update=False).check(noisy, recorded, 0.01)
    assert checked is not None
    assert checked.outcome == "pass"


def test_ef_eval_json_carries_what_a_gate_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.json"
    assert main(["eval", "--json", str(out), "-q", "--k", "10", "--metrics", "ndcg,recall"]) == 0
    data = json.loads(out.read_text())
    from ef.cli.eval import DEMO_DATASET
    from ef.evaluation import read_beir
    from ef.gate import dataset_checksum

    _, _, qrels = read_beir(DEMO_DATASET)
    assert (data["schema"], data["qrels_hash"], data["dataset_checksum"]) == (
        "ef.result/1", qrels_hash(qrels), dataset_checksum(DEMO_DATASET)
    )
    assert data["options"] == {"missing": None, "relevance_level": 1, "ignore_identical_ids": False,
                               "judged_docs_only": False, "max_docs": None}
    capsys.readouterr()
    assert main(["gate", str(out), str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[1:3] == str(gate(out, out)).splitlines()[1:3]


def test_cli_seeds_on_both_sides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {}
    for name, shift in (("b1", 0.0), ("b2", 0.02), ("c1", 0.01), ("c2", 0.03)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(_result({"mrr": [0.5 + shift + 0.1 * (i % 4) for i in range(30)]})))
    argv = ["gate", str(paths["b1"]), str(paths["c1"]), str(paths["c2"]), "--baseline-seed", str(paths["b2"]),
            "--margin", "0.01"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    # mean of 0.1 * (i % 4) over 30 queries: 4.3 / 30 = 0.1433
    assert lines[1].startswith("PASS mrr: candidate 0.6633 vs baseline 0.6533 (+0.0100)")
    assert lines[2:4] == [
        "baseline: 2 seeds averaged per query; mrr per seed 0.6433 to 0.6633 (sd 0.0141)",
        "candidate: 2 seeds averaged per query; mrr per seed 0.6533 to 0.6733 (sd 0.0141)",
    ]
    assert lines[0].startswith(f"ef gate: {paths['c1']} and 1 more seeds against {paths['b1']} and 1 more seeds")


@pytest.mark.parametrize(("argv", "said"), [
    (["-l", "2"], "--missing, -l, -M and --ignore-identical-ids score TREC runs, and both sides are saved results "
                  "(their options are in their metadata)"),
    (["--margin", "nope=0.1"], "--margin names 'nope', which is not gated (gated: mrr)"),
    (["--lower-is-better", "mrr"], "'mrr' is given as lower-is-better, but the results record that higher is "
                                   "better: a gate the wrong way round would pass a regression"),
])
def test_cli_errors_name_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                   said: str) -> None:
    # ef.gate's messages name its keywords ('missing', 'relevance_level', 'margin'); ef gate's say its flags.
    path = tmp_path / "b.json"
    path.write_text(json.dumps(_result({"mrr": [0.5 + 0.1 * (i % 4) for i in range(10)]})))
    assert main(["gate", str(path), str(path), *argv]) == 2
    assert capsys.readouterr().err == f"ef gate: error: {said}\n"


def test_a_saved_result_on_standard_input_or_a_pipe_gives_its_measures_as_a_json_file_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gate took '-' and a pipe for a TREC run until it had read them: a saved result there was loaded with
    # evaluate_run's default measures ("<stdin>: query 'q1' has no value for 'ndcg@10' (it has 'mrr')"),
    # and its options went unrefused where both sides are saved results.
    run = tmp_path / "run.trec"
    run.write_text("q1 0 d1 1 0.9 r\nq1 0 d2 2 0.8 r\nq2 0 d3 1 0.5 r\nq2 0 d4 2 0.4 r\n")
    qrels = {"q1": {"d2": 1}, "q2": {"d3": 1}}
    saved = save_result(load_result(run, qrels=qrels, measures=["mrr"]), tmp_path / "saved.json")
    with open(saved, "rb") as stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(stdin)))
        report = gate("-", run, qrels=qrels, margin=0.0)
    assert (report.baseline, report.candidate, [v.measure for v in report.verdicts]) == ("-", str(run), ["mrr"])
    assert report.get("mrr").baseline_mean == report.get("mrr").candidate_mean == 0.75
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b" \n" + saved.read_bytes()), daemon=True)
    writer.start()
    with pytest.raises(ValueError, match=r"^'missing', 'relevance_level', 'max_docs' and 'ignore_identical_ids' "):
        gate(fifo, saved, relevance_level=2)
    writer.join(timeout=10)


def test_a_saved_result_is_told_by_its_name_in_any_case_and_gzip_compressed(tmp_path: Path) -> None:
    # 'BASE.JSON' (as Windows tools write it) and 'base.json.gz' were read as TREC runs:
    # "BASE.JSON:1: expected 6 columns 'query_id iter doc_id rank score run_id', got 1".
    import gzip

    run = tmp_path / "run.trec"
    run.write_text("q1 0 d1 1 0.9 r\nq1 0 d2 2 0.8 r\nq2 0 d3 1 0.5 r\nq2 0 d4 2 0.4 r\n")
    qrels = {"q1": {"d2": 1}, "q2": {"d3": 1}}
    saved = save_result(load_result(run, qrels=qrels, measures=["mrr"]), tmp_path / "BASE.JSON")
    (tmp_path / "base.json.gz").write_bytes(gzip.compress(saved.read_bytes()))
    for path in (saved, tmp_path / "base.json.gz"):
        assert load_result(path).per_query == {"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}}
        report = gate(path, run, qrels=qrels, margin=0.0)
        assert ([v.measure for v in report.verdicts], report.get("mrr").baseline_mean) == (["mrr"], 0.75)


def test_json_lines_on_standard_input_or_a_pipe_are_read_as_a_jsonl_file_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BenchmarkResult.save_jsonl's lines through a pipe were one malformed JSON document:
    # "<stdin>:2: malformed JSON: Extra data (column 1)".
    lines = tmp_path / "b.jsonl"
    lines.write_text('{"sample_id": "s1", "scores": {"latency_ms": 2.0}, "higher_is_better": {"latency_ms": false}}\n'
                     '\n{"sample_id": "s2", "scores": {"latency_ms": 4.0}}\n')
    from_file = load_result(lines)
    assert (from_file.per_query, from_file.higher_is_better) == (
        {"s1": {"latency_ms": 2.0}, "s2": {"latency_ms": 4.0}}, {"latency_ms": False})
    with open(lines, "rb") as stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(stdin)))
        from_stdin = load_result("-")
    assert (from_stdin.per_query, from_stdin.higher_is_better, from_stdin.source) == (
        from_file.per_query, from_file.higher_is_better, "<stdin>")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sample_id": "s1", "scores": {"x": 1.0}}\n[1]\n')
    with open(bad, "rb") as stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(stdin)))
        with pytest.raises(ValueError, match=r"^<stdin>:2: expected a JSON object, got array$"):
            load_result("-")


def test_a_lower_is_better_interval_of_0_prints_plus_0() -> None:
    # worst and best are turned to the measure's direction by a sign: -1 * 0.0 printed [-0.0000, -0.0000].
    zeros = _result({"latency_ms": [0.0] * 30})
    v = gate(zeros, zeros, margin=0.0, higher_is_better={"latency_ms": False}).get("latency_ms")
    assert [math.copysign(1.0, x) for x in (v.worst, v.best, v.threshold)] == [1.0, 1.0, 1.0]
    assert "the interval [+0.0000, +0.0000] holds the margin +0.0000 (0)" in v.line


@pytest.mark.parametrize(
    ("flag", "option"), [("--ignore-identical-ids", "ignore_identical_ids"), ("-J", "judged_docs_only")]
)
def test_a_result_saved_with_a_flag_that_changes_the_numbers_is_not_gated_against_a_run_scored_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, option: str
) -> None:
    # Both flags raise map here (a self-match or an unjudged doc drops out); the gate scores a run with
    # every retrieved doc, so it compared a map of 1.0 with one of 0.5417 as if alike.
    qrels, run, saved = tmp_path / "qrels", tmp_path / "run", tmp_path / "saved.json"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n")
    run.write_text("q1 Q0 q1 1 0.95 a\nq1 Q0 d1 2 0.9 a\nq1 Q0 d2 3 0.8 a\nq2 Q0 q2 1 0.6 a\nq2 Q0 d3 2 0.5 a\n")
    assert main(["trec-eval", flag, "-q", "--json", str(saved), "-m", "map", str(qrels), str(run)]) == 0
    assert json.loads(saved.read_text())["options"][option] is True
    capsys.readouterr()
    assert main(["gate", "-m", "map", "--qrels", str(qrels), str(run), str(saved)]) == 2
    way = (
        "gate a TREC run with --ignore-identical-ids, to drop its self-matches" if flag == "--ignore-identical-ids"
        else f"to gate a TREC run so scored, save its result with 'ef trec-eval {flag} -q --json FILE QRELS RUN' "
        "and gate FILE"
    )
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({run}) and the candidate ({saved}) are not comparable: option "
        f"{option}: False in the baseline, True in the candidate ({way})\n"
    )
    # So saved, the run is gated against the result: the same numbers, every query tied
    other = tmp_path / "other.json"
    assert main(["trec-eval", flag, "-q", "--json", str(other), "-m", "map", str(qrels), str(run)]) == 0
    capsys.readouterr()
    assert main(["gate", "-m", "map", str(other), str(saved)]) == 3
    assert capsys.readouterr().out.splitlines()[1].startswith(
        "INCONCLUSIVE map: candidate 1.0000 vs baseline 1.0000 (+0.0000)"
    )
    if flag == "--ignore-identical-ids":  # the gate drops the self-matches itself: map 1.0 as ef trec-eval's
        assert main(["gate", "-m", "map", "--ignore-identical-ids", "--qrels", str(qrels), str(run), str(saved)]) == 3
        assert capsys.readouterr().out.splitlines()[1].startswith(
            "INCONCLUSIVE map: candidate 1.0000 vs baseline 1.0000 (+0.0000)"
        )
        assert main(["gate", "-m", "map", "--ignore-identical-ids", str(other), str(saved)]) == 2
        assert capsys.readouterr().err == (
            "ef gate: error: --missing, -l, -M and --ignore-identical-ids score TREC runs, and both sides are "
            "saved results (their options are in their metadata)\n"
        )


def test_without_m_the_counts_of_a_trec_eval_result_are_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'ef trec-eval -q --json' saves num_ret, num_rel and num_rel_ret per query: gated as means they
    # passed (num_rel always does) where '-m num_ret' is refused.
    qrels, run, other, saved = tmp_path / "qrels", tmp_path / "run", tmp_path / "other", tmp_path / "saved.json"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    run.write_text("q1 Q0 d1 1 0.9 a\nq2 Q0 d2 1 0.9 a\nq3 Q0 d3 1 0.9 a\n")
    other.write_text("q1 Q0 d1 1 0.9 b\nq2 Q0 d2 1 0.9 b\nq3 Q0 d3 1 0.9 b\n")
    assert main(["trec-eval", "-q", "--json", str(saved), "-m", "map", "-m", "num_ret", "-m", "P.5", str(qrels),
                 str(run)]) == 0
    capsys.readouterr()
    assert main(["gate", "--qrels", str(qrels), str(saved), str(other)]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[1:]] == [
        "INCONCLUSIVE map", "INCONCLUSIVE P_5", "warning", "outcome"
    ]
    assert lines[1].endswith(  # no spread: the sign flips' resolution, not a "detectable difference of 0.0000"
        "every query differs by the same amount, and with 3 queries no sign-flip p falls below alpha; about 6 "
        "queries would settle a difference of +0.0000"
    )
    assert lines[3] == "warning: not gated, as they are no per-query means: num_ret"
    assert main(["gate", "-m", "num_ret", "--qrels", str(qrels), str(saved), str(other)]) == 2
    assert capsys.readouterr().err == (
        "ef gate: error: 'measures': 'num_ret' is summarised as a sum, not a mean over queries; paired tests "
        "compare mean differences, so pick a per-query score\n"
    )


def test_a_run_lacking_the_queries_that_reach_the_level_is_not_warned_of_an_unreached_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The runs lack q2, the one query graded 2: scored with missing='skip' to count what they lack, the
    # gate warned '-l 2: no judgement reaches it (the highest grade is 1)' of qrels that hold a 2.
    qrels, base, cand = tmp_path / "qrels", tmp_path / "base", tmp_path / "cand"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 2\nq3 0 d3 1\n")
    base.write_text("q1 Q0 d1 1 0.9 a\nq3 Q0 d3 1 0.9 a\n")
    cand.write_text("q1 Q0 d1 1 0.9 b\nq3 Q0 d9 1 0.9 b\n")
    assert main(["gate", "--qrels", str(qrels), "-l", "2", "-m", "ndcg@10", str(base), str(cand)]) == 3
    assert capsys.readouterr().err == ""
    assert main(["gate", "--qrels", str(qrels), "-l", "3", "-m", "ndcg@10", str(base), str(cand)]) == 3
    assert capsys.readouterr().err == (  # said once, of every judged query's grades
        "ef gate: warning: -l 3: no judgement reaches it (the highest grade is 2), so no document counts as "
        "relevant: P, recall, map, recip_rank and every other measure that counts relevant documents is 0 on "
        "every query\n"
    )


def test_a_query_with_empty_judgements_is_not_lacked_by_a_run_the_gate_scores(tmp_path: Path) -> None:
    # {'q2': {}} (qrels filtered to grade > 0) is judged by nothing and evaluate_run leaves it out; the
    # gate counted it as lacked and looked for its zeros: KeyError 'q2' (lacked alone, evaluate_run's
    # "no query to evaluate: 'qrels' holds no judgement (every query's mapping is empty)").
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.9 a\nq3 Q0 d3 1 0.9 a\n")
    qrels = {"q1": {"d1": 1}, "q2": {}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    result = load_result(str(run), qrels=qrels, measures=["ndcg_cut_10"])
    assert (result.lacked, {q: dict(v) for q, v in result.per_query.items()}) == (
        1, {"q1": {"ndcg_cut_10": 1.0}, "q3": {"ndcg_cut_10": 1.0}, "q4": {"ndcg_cut_10": 0.0}}
    )


def test_queries_needed_is_never_fewer_than_the_sign_flips_need() -> None:
    # The normal approximation said "about 2 queries would settle a difference of -0.1750" of 4 queries
    # that did not settle it: no sign-flip p falls below 2**-n, so 5 at alpha 0.05 (one measure), 6 at
    # alpha 0.05 over two measures (Holm's strictest level, 0.025).
    base = _result({"lat": [1.0, 2.0, 3.0, 4.0]})
    cand = _result({"lat": [0.9, 1.8, 2.9, 3.7]})
    v = gate(base, cand, higher_is_better={"lat": False}).get("lat")
    assert (v.verdict, v.queries_needed) == ("inconclusive", 5)
    assert v.line.endswith("about 5 queries would settle a difference of -0.1750")
    two = gate(_result({"ndcg@10": [0.5, 0.6, 0.7, 0.8], "map": [0.5, 0.6, 0.7, 0.8]}),
               _result({"ndcg@10": [0.52, 0.63, 0.71, 0.84], "map": [0.52, 0.63, 0.71, 0.84]}))
    assert [v.queries_needed for v in two.verdicts] == [6, 6]


def test_a_result_of_counts_alone_is_refused_as_minus_m_of_a_count_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without -m, counts beside per-query scores are left out (7876bca); a result holding counts alone
    # kept them and gated num_rel_ret's "mean" (the demo's BM25 runs: PASS, exit 0), where -m num_rel_ret is refused.
    qrels, base, cand = tmp_path / "qrels", tmp_path / "base.json", tmp_path / "cand.json"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    for path, doc in ((base, "d"), (cand, "x")):
        run = tmp_path / f"{path.stem}.run"
        run.write_text(f"q1 Q0 d1 1 0.9 a\nq2 Q0 d2 1 0.9 a\nq3 Q0 {doc}3 1 0.9 a\n")
        assert main(["trec-eval", "-q", "--json", str(path), "-m", "num_rel_ret", str(qrels), str(run)]) == 0
    capsys.readouterr()
    assert main(["gate", str(base), str(cand)]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({base}) holds no per-query score to gate: num_rel_ret is no per-query "
        "mean; paired tests compare mean differences, so give a result with a per-query score\n"
    )


def test_different_queries_from_a_run_scored_here_say_how_ef_eval_chose_its_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ef eval --json scores the queries with a relevant judgement; its --run-out, gated, was scored on
    # every judged query (q3: judged non-relevant only) and refused with no way named.
    positive, qrels, run, saved = tmp_path / "positive", tmp_path / "qrels", tmp_path / "run", tmp_path / "s.json"
    positive.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d9 0\n")
    run.write_text("q1 Q0 d1 1 0.9 a\nq2 Q0 d2 1 0.9 a\n")
    assert main(["trec-eval", "-q", "--json", str(saved), "-m", "map", str(positive), str(run)]) == 0
    capsys.readouterr()
    assert main(["gate", "-m", "map", "--qrels", str(qrels), str(saved), str(run)]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({saved}) and the candidate ({run}) hold different queries: 1 only in the "
        "candidate (first 'q3') (a TREC run is scored here on every judged query, as trec_eval scores it, where ef "
        "eval scores only those with a relevant judgement and a text: --missing skip scores the run on its own "
        "queries)\n"
    )


def test_save_result_of_a_run_scores_it_as_its_metadata_says(tmp_path: Path) -> None:
    # save_result(run, ignore_identical_ids=True) recorded True and scored the run with its self-match.
    run = {"q1": {"q1": 0.95, "d1": 0.9}, "q2": {"q2": 0.6, "d3": 0.5}}
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 1}}
    path = save_result(run, tmp_path / "s.json", qrels=qrels, measures=["map"], ignore_identical_ids=True)
    data = json.loads(path.read_text())
    assert data["options"]["ignore_identical_ids"] is True
    assert data["per_query"] == {"q1": {"map": 1.0}, "q2": {"map": 1.0}}
    assert list(load_result(run, qrels=qrels, measures=["map"]).values("map", ["q1", "q2"])) == [0.5, 0.5]
    with pytest.raises(TypeError, match=r"^'ignore_identical_ids' must be a bool \(got 'yes'\)$"):
        load_result(run, qrels=qrels, ignore_identical_ids="yes")  # type: ignore[arg-type]
