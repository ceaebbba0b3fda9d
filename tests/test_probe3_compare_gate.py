"""Found by probing ``ef compare``, ``ef report``, ``ef gate`` and ``ef.testing`` on SciFact:

- ``missing="skip"`` warned "'half' lacked 153 of the 147 queries": the count was of the queries
  compared, not of the judged ones the lack is counted against;
- ``ef report`` of an ``ef gate --json`` file said "'report' has no 'metrics' (or 'measures')
  mapping" (its list of verdicts read as an evaluation's measures);
- ``ef_baseline.check(..., dataset=...)`` recorded the dataset's checksum with
  ``--ef-update-baseline`` and ignored it when checking: a result on another dataset passed;
- ``ef gate -m nDCG@10`` (or ``ndcg_cut_10``) of an ``ef eval --json`` baseline was refused ("has no
  value for 'nDCG@10'"), though the gate reads "-m in any spelling ef trec-eval reads";
- ``ef gate`` of a run lacking judged queries (half of SciFact's, or all: the wrong qrels) scored them
  0 without a word, where ``ef compare`` warns;
- an inconclusive verdict said "the interval [+0.0000, +0.5000] holds the margin -0.0100" when the
  bounds cleared the margin and the p-value (4 queries: at best 1/16) did not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.compare import compare
from ef.datasets import demo_dataset
from ef.gate import dataset_checksum, gate, save_result
from ef.testing import Baseline

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
RUN_A = {"q1": {"d1": 0.5, "x": 0.9}, "q2": {"d2": 0.9}, "q3": {"d3": 0.1, "x": 0.5}, "q4": {"x": 1.0}}
RUN_B = {"q1": {"d1": 0.9, "x": 0.2}, "q2": {"d2": 0.9}, "q3": {"d3": 0.6, "x": 0.5}}  # lacks q4


def test_missing_skip_counts_a_lack_against_the_judged_queries() -> None:
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], missing="skip")
    assert report.queries == ("q1", "q2", "q3")
    assert report.warnings[-1] == "'b' lacked 1 of the 4 queries: left out for every system"


def _values(shift: float) -> dict[str, dict[str, dict[str, float]]]:
    return {"per_query": {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 7) + shift} for i in range(40)}}


def test_ef_report_names_a_gate_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("altair")
    saved = tmp_path / "gate.json"
    saved.write_text(gate(_values(0.0), _values(0.0), margin=0.01).to_json())
    page = tmp_path / "r.html"
    assert main(["report", str(saved), "--html", str(page)]) == 2
    assert capsys.readouterr() == ("", (
        f"ef report: error: {saved}: an ef gate report (schema 'ef.gate/1'), which ef report does not render: "
        "ef gate --html FILE writes its page\n"
    ))
    assert not page.exists()


def test_ef_baseline_check_refuses_another_dataset(tmp_path: Path) -> None:
    demo = demo_dataset()
    other = tmp_path / "copy" / "demo"  # the same name, one document changed
    shutil.copytree(demo, other)
    corpus = other / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("a", "b", 1), encoding="utf-8")
    baseline = tmp_path / "base.json"
    result = _values(0.0)
    Baseline(update=True).check(result, baseline, dataset=demo)
    assert Baseline(update=False).check(result, baseline, margin=0.01, dataset=demo) is not None  # the same: gated
    with pytest.raises(ValueError) as error:
        Baseline(update=False).check(result, baseline, margin=0.01, dataset=other)
    assert str(error.value) == (
        f"the baseline ({baseline}) and the candidate (dataset {other}) are not comparable: dataset checksum: "
        f"{dataset_checksum(demo)!r} in the baseline, {dataset_checksum(other)!r} in the candidate"
    )


@pytest.mark.parametrize("spelling", ["nDCG@10", "ndcg_cut_10", "ndcg_cut.10"])
def test_gate_reads_a_saved_measure_in_another_spelling(tmp_path: Path, spelling: str) -> None:
    saved = tmp_path / "base.json"
    save_result(_values(0.0), saved)  # its key: ndcg@10, as ef eval --json writes it
    candidate = {"per_query": {q: {"ndcg_cut_10": v["ndcg@10"] - 0.001} for q, v in _values(0.0)["per_query"].items()}}
    report = gate(saved, candidate, [spelling], margin=0.01)
    name = spelling.replace(".", "_")
    verdict = report.get(name)
    assert (verdict.baseline_mean, verdict.candidate_mean) == pytest.approx((0.52875, 0.52775), abs=1e-12)
    assert report.outcome == "pass"


def test_gate_warns_of_the_judged_queries_a_run_lacks() -> None:
    # A run of other query ids (or the wrong qrels) was a FAIL with no word of why.
    report = gate(RUN_A, RUN_B, ["mrr"], qrels=QRELS, margin=0.01)
    assert report.warnings == ("the candidate run lacked 1 of the 4 judged queries: scored 0 (missing='zero')",)
    assert (report.get("mrr").baseline_mean, report.get("mrr").candidate_mean) == (0.5, 0.75)  # q4: 0 for both


def test_an_inconclusive_line_does_not_say_the_interval_holds_a_margin_it_clears() -> None:
    # 4 queries: no sign-flip p-value gets below 1/16, so bounds that clear the margin are inconclusive.
    report = gate(RUN_A, RUN_B, ["mrr"], qrels=QRELS, margin=0.01)
    assert report.get("mrr").line == (
        "INCONCLUSIVE mrr: candidate 0.7500 vs baseline 0.5000 (+0.2500); worst case +0.0000 is above the margin "
        "-0.0100 (0.01), but p 0.0625 (Holm) that it is worse by the margin or more is not below alpha; with 4 "
        "queries the gate detects a difference of 0.3589 from the margin (80% power); about 8 queries would settle "
        "a difference of +0.2500"
    )
    base = {"per_query": {f"q{i}": {"latency_ms": 100.0 + i} for i in range(4)}}
    slow = {"per_query": {f"q{i}": {"latency_ms": 150.0 + i} for i in range(4)}}
    line = gate(base, slow, margin=1, higher_is_better={"latency_ms": False}).get("latency_ms").line
    assert line.startswith(
        "INCONCLUSIVE latency_ms (lower is better): candidate 151.5000 vs baseline 101.5000 (+50.0000); the best "
        "case +50.0000 is above the margin +1.0000 (1), but p 0.0625 (Holm) that it is within the margin is not "
        "below alpha; "
    )
